/*
 * fp8.c - FP8 e4m3 and BF16 conversions on the CPU: the twin of
 * kernels/fp8.cuh (see fp8.h for the formats). Used by the CPU reference of
 * the MoE layer (moe_ref.c) and by the GPU tests to make FP8 data.
 *
 * Encoding works on exact arithmetic: scaling by a power of two is exact in
 * float, and nearbyintf rounds to nearest even in the default rounding mode,
 * so each step is exact but the one rounding the format requires.
 */
#include "fp8.h"

#include <math.h>
#include <string.h>

uint8_t ramp_e4m3_encode(float x) {
    if (isnan(x)) return 0x7F;
    uint8_t sign = signbit(x) ? 0x80 : 0x00;
    float a = fabsf(x);
    /* satfinite: anything above the largest finite value (Inf too) -> 448.
     * Values in (448, 464) would round to 448 anyway. */
    if (a >= RAMP_E4M3_MAX) return (uint8_t)(sign | 0x7E);
    if (a < 0.015625f) { /* below 2^-6: subnormal grid of step 2^-9 */
        float q = nearbyintf(a * 512.0f); /* exact scaling, then RNE */
        /* q == 8 is 2^-6, code 0x08: the smallest normal, continuous. */
        return (uint8_t)(sign | (uint8_t)q);
    }
    int e;
    (void)frexpf(a, &e); /* a = f * 2^e, f in [0.5, 1) -> a in [2^(e-1), 2^e) */
    e -= 1;              /* a in [2^e, 2^(e+1)) */
    float q = nearbyintf(ldexpf(a, 3 - e)); /* in [8, 16] */
    if (q >= 16.0f) {
        q = 8.0f;
        e += 1;
    }
    int code = ((e + 7) << 3) | ((int)q - 8);
    if (code > 0x7E) code = 0x7E; /* cannot happen below 448; belt and braces */
    return (uint8_t)(sign | code);
}

float ramp_e4m3_decode(uint8_t code) {
    int exp = (code >> 3) & 15, man = code & 7;
    float sign = (code & 0x80) ? -1.0f : 1.0f;
    if ((code & 0x7F) == 0x7F) return NAN;
    if (exp == 0) return sign * ldexpf((float)man, -9);
    return sign * ldexpf((float)(8 + man), exp - 10);
}

static float e4m3_table[256];
static int e4m3_table_ready;

const float *ramp_e4m3_table(void) {
    if (!e4m3_table_ready) { /* idempotent: racing threads write the same values */
        for (int i = 0; i < 256; i++) e4m3_table[i] = ramp_e4m3_decode((uint8_t)i);
        e4m3_table_ready = 1;
    }
    return e4m3_table;
}

float ramp_e4m3_spacing(float v) {
    float a = fabsf(v);
    if (a < 0.015625f) return 0.001953125f; /* 2^-9 */
    int e;
    (void)frexpf(a, &e);
    return ldexpf(1.0f, e - 4); /* 2^(e-1-3) */
}

float ramp_e4m3_margin(float y) {
    float a = fabsf(y);
    if (a >= RAMP_E4M3_MAX) return 0.0f;
    float q = fabsf(ramp_e4m3_decode(ramp_e4m3_encode(a)));
    /* Boundaries around q: halfway to the neighbours below and above (the
     * grid is finer just below a power of two). */
    float sp_dn = q > 0 ? ramp_e4m3_spacing(nextafterf(q, 0.0f)) : ramp_e4m3_spacing(0);
    float sp_up = ramp_e4m3_spacing(q);
    float lo = q - 0.5f * sp_dn, hi = q + 0.5f * sp_up;
    float d1 = a - lo, d2 = hi - a;
    float m = d1 < d2 ? d1 : d2;
    return m < 0 ? 0 : m;
}

uint16_t ramp_bf16_encode(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if (isnan(x)) return (uint16_t)((u >> 16) | 0x0040); /* quiet NaN */
    u += 0x7FFFu + ((u >> 16) & 1u);                     /* RNE; overflow -> Inf */
    return (uint16_t)(u >> 16);
}

float ramp_bf16_decode(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float ramp_bf16_spacing(float v) {
    float a = fabsf(v);
    if (a < 1.17549435e-38f) return ldexpf(1.0f, -133); /* subnormal step */
    int e;
    (void)frexpf(a, &e);
    return ldexpf(1.0f, e - 8); /* 2^(e-1-7) */
}

float ramp_bf16_margin(float y) {
    float a = fabsf(y);
    float q = fabsf(ramp_bf16_round(a));
    float sp_dn = q > 0 ? ramp_bf16_spacing(nextafterf(q, 0.0f)) : ramp_bf16_spacing(0);
    float sp_up = ramp_bf16_spacing(q);
    float lo = q - 0.5f * sp_dn, hi = q + 0.5f * sp_up;
    float d1 = a - lo, d2 = hi - a;
    float m = d1 < d2 ? d1 : d2;
    return m < 0 ? 0 : m;
}

float ramp_fp8_quant_group(const float *x, int n, uint8_t *q) {
    float amax = 0.0f;
    for (int i = 0; i < n; i++) amax = fmaxf(amax, fabsf(x[i]));
    amax = fmaxf(amax, RAMP_FP8_AMAX_MIN);
    float s = amax / RAMP_E4M3_MAX; /* f32 division, as the kernel */
    float inv = 1.0f / s;
    for (int i = 0; i < n; i++) q[i] = ramp_e4m3_encode(x[i] * inv);
    return s;
}
