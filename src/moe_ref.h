/*
 * moe_ref.h - the CPU reference of one GPU's MoE layer, with FP8 rounding
 * emulated at the same points as the fused kernel (kernels/moe_v1.cuh):
 *   1. hidden states: FP8 e4m3 with 1x128 per-token scales as given, or BF16
 *      quantized here 1x128 per token (ramp_fp8_quant_group), as the kernel;
 *   2. gate/up: f32 sums per 128-block of K, scaled by the 128x128 weight
 *      block scale times the token's group scale, summed in f32;
 *   3. a = SiLU(gate) * up * router weight (f32, in that order);
 *   4. a quantized per token per 128 columns (FP8) or rounded to BF16;
 *   5. down: f32 sums per 128-block of h, scaled, summed; summed over the
 *      token's local experts in top-k order.
 * BF16 layers skip the scales: f32 sums of bf16 products.
 */
#ifndef RAMP_MOE_REF_H
#define RAMP_MOE_REF_H

#include "internal.h"

#include <stdint.h>

/* One GPU's experts. FP8: e4m3 codes with f32 block scales; BF16: bf16 bits,
 * scales unused. Layouts as vLLM's block_shape=[128,128] FP8 MoE. */
typedef struct {
    int experts; /* local experts E */
    int topk;    /* k */
    int inter;   /* h */
    int hidden;  /* d */
    int bf16;
    const void *w13;        /* [E, 2h, d] gate rows then up rows */
    const float *w13_scale; /* [E, 2h/128, d/128] */
    const void *w2;         /* [E, d, h] */
    const float *w2_scale;  /* [E, d/128, h/128] */
} ramp_moe_layer;

/* One batch. Exactly one of x (FP8 codes + x_scale, FP8 layers only) and
 * x_bf16 is set. topk_ids are LOCAL expert indices: entries outside [0, E)
 * (experts on other GPUs) contribute nothing. */
typedef struct {
    int tokens;
    const uint8_t *x;          /* [M, d] */
    const float *x_scale;      /* [M, d/128] */
    const uint16_t *x_bf16;    /* [M, d] */
    const int32_t *topk_ids;   /* [M * k] */
    const float *topk_weights; /* [M * k] */
} ramp_moe_batch;

/* Relative size, against the sum of |terms|, of the difference between two
 * f32 summations of the same exact products in different orders that the
 * bound allows: 2^-18 = 64 u. Typical differences are ~1 u (random walk of
 * roundings of partial sums no larger than the sum of |terms|), so this is
 * far out in the tail, yet a 16x tighter figure than worst-case n*u for
 * n = 7168 terms, which would flag most intermediates as ambiguous. */
#define RAMP_MOE_SUM_EPS (1.0 / 262144.0)

/* out [M, d]: the layer's output (written, not added). bound: NULL or
 * [M, d]: per element, how far a correct kernel may be from `out`. It sums
 *  - RAMP_MOE_SUM_EPS * (sum of |terms| of the down projection and of the
 *    additions over slices and experts);
 *  - for every intermediate whose quantization input lies within its own
 *    possible perturbation (from the gate/up sums' RAMP_MOE_SUM_EPS, SiLU's
 *    expf, and its group scale's change) of a rounding boundary: one grid
 *    spacing times its scale times |W2| (the kernel may round it the other
 *    way);
 *  - every intermediate's |q| times the possible change of its group scale
 *    times |W2|.
 * threads: worker threads (<= 1: this thread). */
ramp_status ramp_moe_reference(const ramp_moe_layer *L, const ramp_moe_batch *B,
                               int threads, float *out, float *bound);

/* The same, with the bound widened for a kernel whose FP8 products are
 * summed by Hopper's FP8 tensor core (wgmma e4m3, the v2 kernel) when tc = 1
 * (FP8 layers only; out is identical): every 128-wide K block of the gate,
 * up and down sums may err by 33 * 2^-12 times the largest addend of each
 * 32-product instruction (the accumulator model tests/test_gpu_wgmma.c
 * checks), scaled by the block's scales; the gate/up part also widens the
 * intermediates' rounding ambiguity. tc = 0 is ramp_moe_reference. */
ramp_status ramp_moe_reference_tc(const ramp_moe_layer *L, const ramp_moe_batch *B,
                                  int threads, int tc, float *out, float *bound);

/* Both in one pass (the values once; each bound NULL or [tokens, d]):
 * bound_tc as ramp_moe_reference_tc's with tc = 1 (for a BF16 layer, whose
 * sums have no tensor-core model, the plain bound), bound as
 * ramp_moe_reference's. The values and each bound are bitwise those of the
 * separate calls, for about the cost of one of them. The two bounds must be
 * different buffers. */
ramp_status ramp_moe_reference2(const ramp_moe_layer *L, const ramp_moe_batch *B, int threads,
                                float *out, float *bound_tc, float *bound);

/* Quantizes BF16 hidden states 1x128 per token, as the kernel does with
 * RAMP_XBF16=1: codes [M, d], scales [M, d/128]. */
void ramp_moe_quantize_tokens(const uint16_t *x_bf16, int tokens, int hidden,
                              uint8_t *codes, float *scales);

#endif /* RAMP_MOE_REF_H */
