/*
 * moe_v1_params.h - the fused MoE kernel's (v1) parameter block and its
 * shared-memory layout, shared by the host (src/moe_gpu.c, C11) and the
 * device (kernels/moe_v1.cuh, NVRTC).
 *
 * The kernel takes ramp_moe_params by value as its only parameter, so both
 * sides must agree byte for byte: device addresses as 64-bit integers,
 * fixed-width ints, a size both sides assert. The shared-memory layout is
 * one inline function evaluated on both sides (with constants on the device,
 * so it folds away): the host sizes the launch from it and the resource
 * report (ramp_resources, measured = 1) quotes it.
 */
#ifndef RAMP_MOE_V1_PARAMS_H
#define RAMP_MOE_V1_PARAMS_H

#ifdef __CUDACC_RTC__
typedef int ramp_moe_i32;
typedef unsigned long long ramp_moe_u64;
#define RAMP_MOE_INLINE static __host__ __device__ __forceinline__
#elif defined(__CUDACC__)
typedef int ramp_moe_i32;
typedef unsigned long long ramp_moe_u64;
#define RAMP_MOE_INLINE static __host__ __device__ __forceinline__
#else
#include <stdint.h>
typedef int32_t ramp_moe_i32;
typedef uint64_t ramp_moe_u64;
#define RAMP_MOE_INLINE static inline
#endif

/* Inputs and outputs of one launch (see moe_v1.cuh for the full contract). */
typedef struct {
    ramp_moe_u64 x;            /* [M, d] e4m3 (x_scale != 0) or bf16 hidden states */
    ramp_moe_u64 x_scale;      /* [M, d/128] f32 per-token group scales, FP8 input */
    ramp_moe_u64 w13;          /* [E, 2h, d] gate rows then up rows */
    ramp_moe_u64 w13_scale;    /* [E, 2h/128, d/128] f32 (FP8) */
    ramp_moe_u64 w2;           /* [E, d, h] */
    ramp_moe_u64 w2_scale;     /* [E, d/128, h/128] f32 (FP8) */
    ramp_moe_u64 topk_weights; /* [M * k] f32 router weights per slot */
    ramp_moe_u64 sorted_ids;   /* [max_tiles * b] i32 slot ids, -1 = padding */
    ramp_moe_u64 tile_expert;  /* [max_tiles] i32 local expert of each row tile */
    ramp_moe_u64 num_tiles;    /* [1] i32 row tiles this launch (device memory) */
    ramp_moe_u64 out;          /* [M, d] f32, the layer's output: added into (float4s: 16-byte aligned) */
    ramp_moe_u64 ws;           /* split-K partials, ramp_moe_v1_ws_floats() */
    ramp_moe_u64 ws_count;     /* split-K arrival counters, ramp_moe_v1_ws_counters(),
                                  zero before the first launch; the kernel leaves
                                  them zero */
    ramp_moe_i32 num_tokens;   /* M: slot ids >= M * k are treated as padding */
    ramp_moe_i32 max_tiles;    /* capacity of sorted_ids / tile_expert, in row tiles */
} ramp_moe_params;

#define RAMP_MOE_PARAMS_BYTES (13 * 8 + 2 * 4)

/* The polymorphic kernel's parameters: the v1 block plus its own. (Kept out
 * of ramp_moe_params: growing that struct cost the single-configuration
 * kernels up to 17 registers per thread in ptxas 13.0.) */
typedef struct {
    ramp_moe_params moe;
    ramp_moe_u64 choice;       /* [1] i32 menu index to run (device memory,
                                  written by the selection kernel) */
    ramp_moe_u64 sched;        /* i32 [RAMP_POLY_SCHED_WORDS]: the tile
                                  scheduler's counters; zero before the
                                  first launch, and the kernel leaves them
                                  zero */
    ramp_moe_i32 persist_grid; /* blocks a persistent entry uses (sms * blocks
                                  per SM of the polymorphic kernel) */
    ramp_moe_i32 sms;          /* the GPU's SMs: with at most this many tiles,
                                  only the first block on each SM works */
} ramp_poly_params;

/* sched: [0] the tile counter, [1] the finished-block counter, [2 + s] the
 * blocks that started on SM s (%smid < RAMP_POLY_MAX_SMS). */
#define RAMP_POLY_MAX_SMS 256
#define RAMP_POLY_SCHED_WORDS (2 + RAMP_POLY_MAX_SMS)

#define RAMP_POLY_PARAMS_BYTES (RAMP_MOE_PARAMS_BYTES + 2 * 8 + 2 * 4)

/* Launch shape and shared-memory regions (byte offsets, 16-byte aligned).
 * Per pipeline slot (stages of them):
 *   a    weight rows [arows][64 B], 16-byte chunks XOR-swizzled
 *   b    token rows  [npad][64 B], swizzled the same way (FP8 or BF16 K)
 *   xs   f32 [npad]  token scales of the slot's K block (FP8)
 *   wsc  f32 [2 * warps] weight block scales of the slot (FP8)
 *   raw  bf16 [npad][64] unquantized token K (FP8 with BF16 input only)
 * Per block:
 *   inter    intermediate [npad][w * elem + 16 B]
 *   iscale   f32 [npad][w / 128] its per-token group scales (FP8)
 *   amax     f32 [warps][npad] scratch for the group maxima (FP8)
 *   tok, rw  i32 / f32 [npad] the tile's slot ids and router weights
 *   flag     i32 split-K "last arrival" broadcast */
typedef struct {
    int threads, warps, npad, mtw, pass_width, passes, arows;
    long long slot_a, slot_b, slot_xs, slot_wsc, slot_raw, slot_bytes;
    long long inter, inter_stride, iscale, amax, tok, rw, flag, total;
} ramp_moe_v1_layout;

RAMP_MOE_INLINE long long ramp_moe_align16(long long x) { return (x + 15) / 16 * 16; }

/* rows b, width w, stages, bf16 (1: BF16 weights and activations), xbf16
 * (1: FP8 weights with BF16 hidden states quantized inside). */
RAMP_MOE_INLINE ramp_moe_v1_layout ramp_moe_v1_layout_of(int rows, int width,
                                                         int stages, int bf16,
                                                         int xbf16) {
    ramp_moe_v1_layout l;
    int elem = bf16 ? 2 : 1;
    int fp8 = !bf16;
    l.npad = (rows + 7) / 8 * 8;
    /* m16 tiles per warp: 4 (64 weight rows) for tiles of up to 24 rows, 2
     * for 32-64 rows, so that accumulators stay at <= 64 per thread. */
    l.mtw = l.npad >= 32 ? 2 : 4;
    l.threads = (width == 128 && l.mtw == 4) ? 128 : 256;
    l.warps = l.threads / 32;
    l.arows = 16 * l.mtw * l.warps;  /* weight rows per stage */
    l.pass_width = l.arows / 2;      /* intermediate columns per up pass */
    l.passes = width / l.pass_width;
    long long o = 0;
    l.slot_a = o;   o += (long long)l.arows * 64;
    l.slot_b = o;   o += (long long)l.npad * 64;
    l.slot_xs = o;  o = ramp_moe_align16(o + (fp8 ? 4LL * l.npad : 0));
    l.slot_wsc = o; o = ramp_moe_align16(o + (fp8 ? 8LL * l.warps : 0));
    l.slot_raw = o; o = ramp_moe_align16(o + ((fp8 && xbf16) ? 128LL * l.npad : 0));
    l.slot_bytes = ramp_moe_align16(o);
    o = (long long)stages * l.slot_bytes;
    l.inter_stride = (long long)width * elem + 16;
    l.inter = o;  o = ramp_moe_align16(o + (long long)l.npad * l.inter_stride);
    l.iscale = o; o = ramp_moe_align16(o + (fp8 ? 4LL * l.npad * (width / 128) : 0));
    l.amax = o;   o = ramp_moe_align16(o + (fp8 ? 4LL * l.warps * l.npad : 0));
    l.tok = o;    o = ramp_moe_align16(o + 4LL * l.npad);
    l.rw = o;     o = ramp_moe_align16(o + 4LL * l.npad);
    l.flag = o;   o = ramp_moe_align16(o + 16);
    l.total = o;
    return l;
}

/* Split-K workspace: f32 partials per (row tile, slice, split, pass). */
RAMP_MOE_INLINE long long ramp_moe_v1_ws_floats(int rows, int width, int splitk,
                                                int inter, int max_tiles) {
    if (splitk <= 1) return 0;
    ramp_moe_v1_layout l = ramp_moe_v1_layout_of(rows, width, 2, 0, 0);
    long long per_thread = 4LL * l.mtw * (l.npad / 8); /* accumulators per thread */
    return (long long)max_tiles * (inter / width) * splitk * l.passes *
           per_thread * l.threads;
}
RAMP_MOE_INLINE long long ramp_moe_v1_ws_counters(int width, int splitk,
                                                  int inter, int max_tiles) {
    return splitk <= 1 ? 0 : (long long)max_tiles * (inter / width);
}

#endif /* RAMP_MOE_V1_PARAMS_H */
