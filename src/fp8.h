/*
 * fp8.h - FP8 e4m3 and BF16 on the CPU, bit-compatible with the device
 * conversions in kernels/fp8.cuh (PTX cvt.rn.satfinite.e4m3x2.f32 and
 * cvt.rn.bf16x2.f32): round to nearest, ties to even; e4m3 saturates to
 * +-448 (Inf too) and keeps NaN as 0x7F/0xFF.
 *
 * e4m3 ("fn" variant, as DeepSeek-V3 / vLLM / PyTorch float8_e4m3fn): 1 sign,
 * 4 exponent bits (bias 7), 3 mantissa bits, no infinities, NaN = S.1111.111,
 * largest finite 448, smallest normal 2^-6, smallest subnormal 2^-9.
 */
#ifndef RAMP_FP8_H
#define RAMP_FP8_H

#include <stdint.h>

#define RAMP_E4M3_MAX 448.0f
/* Group amax floor (as vLLM's and DeepGEMM's quantizers); = kernels/fp8.cuh. */
#define RAMP_FP8_AMAX_MIN 1e-10f
#define RAMP_FP8_GROUP 128

uint8_t ramp_e4m3_encode(float x);
float ramp_e4m3_decode(uint8_t code);
/* Decode table of all 256 codes (NaN for 0x7F, 0xFF). */
const float *ramp_e4m3_table(void);
/* Distance from the finite e4m3 value v (|v| <= 448) to its neighbour away
 * from zero (towards zero for 448): the spacing of the grid at v. */
float ramp_e4m3_spacing(float v);
/* Distance from y (|y| <= 448) to the nearest rounding boundary (midpoint of
 * two neighbouring e4m3 values) of the grid: values closer than this to y
 * round to the same code. */
float ramp_e4m3_margin(float y);

uint16_t ramp_bf16_encode(float x);
float ramp_bf16_decode(uint16_t b);
static inline float ramp_bf16_round(float x) {
    return ramp_bf16_decode(ramp_bf16_encode(x));
}
/* As the e4m3 pair, for BF16's grid (finite x). */
float ramp_bf16_spacing(float v);
float ramp_bf16_margin(float y);

/* Quantizes n values (one 1x128 group, n <= 128) exactly as the kernel:
 * amax = max(max |x|, 1e-10), scale = amax / 448 (f32 division),
 * inv = 1 / scale, q = e4m3(x * inv). Returns the scale. */
float ramp_fp8_quant_group(const float *x, int n, uint8_t *q);

#endif /* RAMP_FP8_H */
