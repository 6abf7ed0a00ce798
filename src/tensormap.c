/*
 * tensormap.c - 2-D and pre-tiled (4-D) TMA descriptors with the 128-byte
 * swizzle (tensormap.h):
 * the argument rules checked on the CPU with messages that say which one
 * failed, then cuTensorMapEncodeTiled through the dlopen'd driver.
 */
#include "tensormap.h"

#include <string.h>

#define SWIZZLE_SPAN 128 /* bytes: CU_TENSOR_MAP_SWIZZLE_128B */
#define TILE 128         /* rows and bytes of a pre-tiled block */

ramp_status ramp_tmap_2d_check(const ramp_tmap_2d *t) {
    RAMP_CHECK(t, RAMP_ERR_INVALID_ARGUMENT, "tensor map: NULL description");
    RAMP_CHECK(t->elem_bytes == 1 || t->elem_bytes == 2, RAMP_ERR_INVALID_ARGUMENT,
               "tensor map: elem_bytes = %d, expected 1 (e4m3) or 2 (bf16)", t->elem_bytes);
    RAMP_CHECK(t->base != 0, RAMP_ERR_INVALID_ARGUMENT, "tensor map: base address is 0");
    RAMP_CHECK(t->base % 16 == 0, RAMP_ERR_INVALID_ARGUMENT,
               "tensor map: base address 0x%llx is not 16-byte aligned (TMA reads from "
               "16-byte aligned addresses only)",
               (unsigned long long)t->base);
    RAMP_CHECK(t->rows >= 1 && t->rows <= (1ull << 32) && t->cols >= 1 && t->cols <= (1ull << 32),
               RAMP_ERR_INVALID_ARGUMENT,
               "tensor map: %llu x %llu elements; each dimension must be 1 .. 2^32",
               (unsigned long long)t->rows, (unsigned long long)t->cols);
    const uint64_t row_bytes = t->cols * (uint64_t)t->elem_bytes;
    RAMP_CHECK(t->row_stride % 16 == 0, RAMP_ERR_INVALID_ARGUMENT,
               "tensor map: row stride %llu B is not a multiple of 16 B (TMA's rule; "
               "for a dense matrix: cols * elem_bytes = %llu)",
               (unsigned long long)t->row_stride, (unsigned long long)row_bytes);
    RAMP_CHECK(t->row_stride >= row_bytes, RAMP_ERR_INVALID_ARGUMENT,
               "tensor map: row stride %llu B is shorter than a row (%llu x %d B)",
               (unsigned long long)t->row_stride, (unsigned long long)t->cols, t->elem_bytes);
    RAMP_CHECK(t->row_stride < (1ull << 40), RAMP_ERR_INVALID_ARGUMENT,
               "tensor map: row stride %llu B is not below 2^40",
               (unsigned long long)t->row_stride);
    RAMP_CHECK(t->box_rows >= 1 && t->box_rows <= 256 && t->box_cols >= 1 && t->box_cols <= 256,
               RAMP_ERR_INVALID_ARGUMENT,
               "tensor map: box %u rows x %u elements; each box dimension must be 1 .. 256",
               t->box_rows, t->box_cols);
    const uint32_t box_bytes = t->box_cols * (uint32_t)t->elem_bytes;
    RAMP_CHECK(box_bytes % 16 == 0, RAMP_ERR_INVALID_ARGUMENT,
               "tensor map: inner box %u x %d B = %u B is not a multiple of 16 B", t->box_cols,
               t->elem_bytes, box_bytes);
    RAMP_CHECK(box_bytes <= SWIZZLE_SPAN, RAMP_ERR_INVALID_ARGUMENT,
               "tensor map: inner box %u x %d B = %u B exceeds the %d-byte swizzle span "
               "(128-byte swizzle: at most %d elements)",
               t->box_cols, t->elem_bytes, box_bytes, SWIZZLE_SPAN, SWIZZLE_SPAN / t->elem_bytes);
    if (t->planes == 0) return RAMP_OK;
    RAMP_CHECK(t->planes <= (1ull << 32), RAMP_ERR_INVALID_ARGUMENT,
               "tensor map: %llu planes; the third dimension must be 1 .. 2^32",
               (unsigned long long)t->planes);
    RAMP_CHECK(t->plane_stride % 16 == 0 && t->plane_stride < (1ull << 40), RAMP_ERR_INVALID_ARGUMENT,
               "tensor map: plane stride %llu B is not a multiple of 16 B below 2^40",
               (unsigned long long)t->plane_stride);
    RAMP_CHECK(t->plane_stride >= t->rows * t->row_stride, RAMP_ERR_INVALID_ARGUMENT,
               "tensor map: plane stride %llu B is shorter than a plane (%llu rows x %llu B)",
               (unsigned long long)t->plane_stride, (unsigned long long)t->rows,
               (unsigned long long)t->row_stride);
    return RAMP_OK;
}

/* What both encoders need first: an output the driver accepts and the
 * driver's encoder. what names the map in the messages. */
static ramp_status encoder_ready(CUtensorMap *out, const char *what, const ramp_cuda_api **cu) {
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "%s: NULL output", what);
    RAMP_CHECK((uintptr_t)out % 64 == 0, RAMP_ERR_INVALID_ARGUMENT,
               "%s: output at %p is not 64-byte aligned (the driver's rule)", what, (void *)out);
    RAMP_TRY(ramp_cuda_load(cu));
    RAMP_CHECK((*cu)->TensorMapEncodeTiled, RAMP_ERR_UNSUPPORTED,
               "the CUDA driver lacks cuTensorMapEncodeTiled (TMA needs a CUDA 12.0 or "
               "newer driver)");
    return RAMP_OK;
}

ramp_status ramp_tmap_2d_encode(const ramp_tmap_2d *t, CUtensorMap *out) {
    const ramp_cuda_api *cu;
    RAMP_TRY(ramp_tmap_2d_check(t));
    RAMP_TRY(encoder_ready(out, "tensor map", &cu));
    /* Dimension 0 is the contiguous one (columns). */
    const uint64_t dims[3] = {t->cols, t->rows, t->planes};
    const uint64_t strides[2] = {t->row_stride, t->plane_stride};
    const uint32_t box[3] = {t->box_cols, t->box_rows, 1};
    const uint32_t elem_strides[3] = {1, 1, 1};
    memset(out, 0, sizeof *out);
    CUresult r = cu->TensorMapEncodeTiled(
        out,
        t->elem_bytes == 1 ? RAMP_CU_TENSOR_MAP_DATA_TYPE_UINT8
                           : RAMP_CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        t->planes ? 3 : 2, (void *)(uintptr_t)t->base, dims, strides, box, elem_strides,
        RAMP_CU_TENSOR_MAP_INTERLEAVE_NONE, RAMP_CU_TENSOR_MAP_SWIZZLE_128B,
        RAMP_CU_TENSOR_MAP_L2_PROMOTION_L2_256B, RAMP_CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != RAMP_CUDA_SUCCESS) {
        ramp_cu_fail(r, "cuTensorMapEncodeTiled", __FILE__, __LINE__);
        RAMP_FAIL(RAMP_ERR_CUDA,
                  "cuTensorMapEncodeTiled refused %llu x %llu elements of %d B at 0x%llx, "
                  "row stride %llu B, box %u x %u, 128-byte swizzle: %s",
                  (unsigned long long)t->rows, (unsigned long long)t->cols, t->elem_bytes,
                  (unsigned long long)t->base, (unsigned long long)t->row_stride, t->box_rows,
                  t->box_cols, ramp_cu_error_name(r));
    }
    return RAMP_OK;
}

ramp_status ramp_tmap_tiled_check(const ramp_tmap_tiled *t) {
    RAMP_CHECK(t, RAMP_ERR_INVALID_ARGUMENT, "tiled tensor map: NULL description");
    RAMP_CHECK(t->base != 0, RAMP_ERR_INVALID_ARGUMENT, "tiled tensor map: base address is 0");
    RAMP_CHECK(t->base % 16 == 0, RAMP_ERR_INVALID_ARGUMENT,
               "tiled tensor map: base address 0x%llx is not 16-byte aligned (TMA reads "
               "from 16-byte aligned addresses only)",
               (unsigned long long)t->base);
    RAMP_CHECK(t->rows >= TILE && t->cols >= TILE && t->rows % TILE == 0 && t->cols % TILE == 0,
               RAMP_ERR_INVALID_ARGUMENT,
               "tiled tensor map: %llu x %llu bytes; both must be positive multiples of %d "
               "(whole 128-row x 128-byte blocks)",
               (unsigned long long)t->rows, (unsigned long long)t->cols, TILE);
    RAMP_CHECK(t->rows / TILE <= (1ull << 32) && t->cols / TILE <= (1ull << 32),
               RAMP_ERR_INVALID_ARGUMENT,
               "tiled tensor map: %llu row blocks x %llu K blocks; each must be at most 2^32",
               (unsigned long long)(t->rows / TILE), (unsigned long long)(t->cols / TILE));
    /* the outermost stride, one row block (K block-major: one K block) of
     * 16 KB blocks */
    const uint64_t outer = t->kmajor ? t->rows * TILE : t->cols * TILE;
    RAMP_CHECK(outer < (1ull << 40), RAMP_ERR_INVALID_ARGUMENT,
               "tiled tensor map: a %s block of %llu B is not below 2^40 (TMA's stride limit)",
               t->kmajor ? "K" : "row", (unsigned long long)outer);
    return RAMP_OK;
}

ramp_status ramp_tmap_tiled_encode(const ramp_tmap_tiled *t, CUtensorMap *out) {
    const ramp_cuda_api *cu;
    RAMP_TRY(ramp_tmap_tiled_check(t));
    RAMP_TRY(encoder_ready(out, "tiled tensor map", &cu));
    /* inner to outer: byte in a block's row, row in the block, K block, row
     * block (K block-major: row block, K block) */
    const uint64_t kb = t->cols / TILE, rb = t->rows / TILE;
    const uint64_t dims[4] = {TILE, TILE, t->kmajor ? rb : kb, t->kmajor ? kb : rb};
    const uint64_t strides[3] = {TILE, (uint64_t)TILE * TILE, (t->kmajor ? t->rows : t->cols) * TILE};
    const uint32_t box[4] = {TILE, TILE, 1, 1};
    const uint32_t elem_strides[4] = {1, 1, 1, 1};
    memset(out, 0, sizeof *out);
    CUresult r = cu->TensorMapEncodeTiled(
        out, RAMP_CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, (void *)(uintptr_t)t->base, dims, strides,
        box, elem_strides, RAMP_CU_TENSOR_MAP_INTERLEAVE_NONE, RAMP_CU_TENSOR_MAP_SWIZZLE_128B,
        RAMP_CU_TENSOR_MAP_L2_PROMOTION_L2_256B, RAMP_CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != RAMP_CUDA_SUCCESS) {
        ramp_cu_fail(r, "cuTensorMapEncodeTiled", __FILE__, __LINE__);
        RAMP_FAIL(RAMP_ERR_CUDA,
                  "cuTensorMapEncodeTiled refused the pre-tiled %llu x %llu bytes at 0x%llx "
                  "(4-D: 128 x 128 x %llu x %llu, box 128 x 128 x 1 x 1, 128-byte swizzle): %s",
                  (unsigned long long)t->rows, (unsigned long long)t->cols,
                  (unsigned long long)t->base, (unsigned long long)dims[2],
                  (unsigned long long)dims[3], ramp_cu_error_name(r));
    }
    return RAMP_OK;
}
