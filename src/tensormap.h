/*
 * tensormap.h - TMA descriptors (CUtensorMap) for the Hopper kernel's
 * operands: a 2-D row-major e4m3 or bf16 matrix in device memory, read in
 * boxes of box_rows x box_cols elements into shared memory in the 128-byte
 * swizzle that kernels/hopper.cuh's wgmma descriptors expect; or an e4m3
 * matrix stored pre-tiled in 128 x 128-byte blocks (a 4-D map).
 *
 * The driver's cuTensorMapEncodeTiled answers a bad argument with a bare
 * CUDA_ERROR_INVALID_VALUE; ramp_tmap_2d_check says which rule failed, and
 * needs no GPU. Private to libramp (and its tests).
 */
#ifndef RAMP_TENSORMAP_H
#define RAMP_TENSORMAP_H

#include "cuda_loader.h"
#include "internal.h"

/* A matrix [rows][cols], cols contiguous (K-major operands: cols = K). A
 * whole weight tensor [E, R, K] is the 2-D [E * R][K]: one map per layer. */
typedef struct {
    ramp_devptr base;     /* element [0][0]: 16-byte aligned */
    int elem_bytes;       /* 1: e4m3 (loaded as UINT8), 2: bf16 */
    uint64_t rows, cols;  /* 1 .. 2^32 each */
    uint64_t row_stride;  /* bytes between rows: multiple of 16, >= cols *
                             elem_bytes, < 2^40 */
    uint32_t box_rows;    /* rows per load: 1..256 */
    uint32_t box_cols;    /* elements per row per load: box_cols * elem_bytes
                             a multiple of 16 and <= 128 (the swizzle span) */
    uint64_t planes;      /* 0: 2-D. Else a third, outermost dimension of that
                             many [rows][cols] planes, 1 .. 2^32, plane_stride
                             bytes apart (a multiple of 16, >= rows *
                             row_stride, < 2^40); a box is one plane's */
    uint64_t plane_stride;
} ramp_tmap_2d;

/* The rules of cuTensorMapEncodeTiled (CUDA 13 driver API documentation)
 * for this use (rank 2, no interleave, 128-byte swizzle), checked on the
 * CPU: RAMP_ERR_INVALID_ARGUMENT naming the field, its value and the rule. */
ramp_status ramp_tmap_2d_check(const ramp_tmap_2d *t);

/* Checks t, then fills *out (64-byte aligned; a CUtensorMap on the stack or
 * in a struct is 128-aligned, malloc'd memory may not be) with the driver:
 * 128-byte swizzle, L2 promotion of 256 bytes, out-of-bounds elements read
 * as zero. RAMP_ERR_NO_GPU when there is no driver, RAMP_ERR_UNSUPPORTED when
 * the driver predates CUDA 12.0, RAMP_ERR_CUDA when it refuses the map. The
 * map holds the address: rebuild it when the buffer moves. */
ramp_status ramp_tmap_2d_encode(const ramp_tmap_2d *t, CUtensorMap *out);

/* A [rows][cols] byte matrix (e4m3 weights) stored pre-tiled in blocks of
 * 128 rows x 128 bytes: [rows / 128][cols / 128][128][128], each block one
 * contiguous 16 KB run (moe_v2.md, "Pre-tiled weights"). Its map is 4-D,
 * inner to outer: byte in the block's row, row in the block, K block, row
 * block; box {128, 128, 1, 1}, 128-byte swizzle, so a box's shared-memory
 * image is the 2-D map's box of 128 rows x 128 bytes at the same block. */
typedef struct {
    ramp_devptr base;    /* block (0, 0): 16-byte aligned */
    uint64_t rows, cols; /* of the row-major matrix: multiples of 128 */
    int kmajor;          /* 1: the blocks stored K block-major, [cols / 128][rows / 128]
                            [128][128]; the map's two outer dimensions are then row block,
                            K block (coordinates (0, 0, row block, K block)) */
} ramp_tmap_tiled;

/* The rules for this use, checked on the CPU (RAMP_ERR_INVALID_ARGUMENT
 * naming the field, its value and the rule). */
ramp_status ramp_tmap_tiled_check(const ramp_tmap_tiled *t);

/* As ramp_tmap_2d_encode, for the pre-tiled layout. */
ramp_status ramp_tmap_tiled_encode(const ramp_tmap_tiled *t, CUtensorMap *out);

#endif /* RAMP_TENSORMAP_H */
