/*
 * test_fp8.c - FP8 e4m3 and BF16 conversions (src/fp8.c) against known
 * values, against independent brute-force rounding over all 256 codes (e4m3)
 * or both bf16 neighbours, and the 1x128 group quantizer's contract.
 */
#include "check.h"
#include "fp8.h"
#include "internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* Value of a code from the format's definition, in double. */
static double e4m3_value(int c) {
    int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
    double v = e == 0 ? m / 8.0 * pow(2, -6) : (1 + m / 8.0) * pow(2, e - 7);
    return s ? -v : v;
}

/* Nearest finite code by scanning every code; ties to the even code (the
 * code's last bit is the mantissa's); beyond 448 saturate. */
static int e4m3_brute(float x) {
    if (isnan(x)) return 0x7F;
    int best = -1;
    double bd = INFINITY;
    for (int c = 0; c < 256; c++) {
        if ((c & 0x7F) == 0x7F) continue;
        if ((signbit(x) != 0) != (c >> 7)) continue; /* same sign (zero keeps it) */
        double dd = fabs(e4m3_value(c) - (double)x);
        if (dd < bd || (dd == bd && (c & 1) == 0)) {
            bd = dd;
            best = c;
        }
    }
    if (fabs((double)x) > 448) best = signbit(x) ? 0xFE : 0x7E;
    return best;
}

static uint16_t bf16_brute(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    uint16_t lo = (uint16_t)(u >> 16), hi = (uint16_t)(lo + 1);
    double dl = fabs((double)ramp_bf16_decode(lo) - x);
    double dh = fabs((double)ramp_bf16_decode(hi) - x);
    if (isinf(ramp_bf16_decode(hi)) && !isinf(x)) {
        /* rounding up overflows to Inf only past the midpoint to 2^128 */
        double top = ldexp(1.0, 128);
        dh = fabs(top - fabs((double)x));
    }
    if (dl < dh) return lo;
    if (dh < dl) return hi;
    return (lo & 1) ? hi : lo;
}

static float rand_float(ramp_rng *r) {
    /* wide range of magnitudes, both signs, some exact grid points */
    double e = -14 + 26 * ramp_rng_uniform(r);
    double v = pow(2, e) * (1 + ramp_rng_uniform(r));
    if (ramp_rng_below(r, 2)) v = -v;
    return (float)v;
}

int main(void) {
    ramp_rng rng;
    ramp_rng_seed(&rng, check_seed());

    /* decode: all 256 codes against the format's definition */
    const float *lut = ramp_e4m3_table();
    for (int c = 0; c < 256; c++) {
        float v = ramp_e4m3_decode((uint8_t)c);
        CHECK((lut[c] == v) || (isnan(lut[c]) && isnan(v)));
        if ((c & 0x7F) == 0x7F) {
            CHECK(isnan(v));
            continue;
        }
        if ((double)v != e4m3_value(c)) {
            fprintf(stderr, "code 0x%02x decodes to %g, expected %g\n", c, v, e4m3_value(c));
            check_failures++;
        }
        /* every finite code encodes back to itself (-0 stays -0) */
        CHECK_EQ_INT(ramp_e4m3_encode(v), c);
    }
    /* known values */
    CHECK_EQ_INT(ramp_e4m3_encode(448.0f), 0x7E);
    CHECK_EQ_INT(ramp_e4m3_encode(-448.0f), 0xFE);
    CHECK_EQ_INT(ramp_e4m3_encode(1.0f), 0x38);
    CHECK_EQ_INT(ramp_e4m3_encode(0.5f), 0x30);
    CHECK_EQ_INT(ramp_e4m3_encode(240.0f), 0x77);
    CHECK_EQ_INT(ramp_e4m3_encode(0.015625f), 0x08);    /* 2^-6, smallest normal */
    CHECK_EQ_INT(ramp_e4m3_encode(0.001953125f), 0x01); /* 2^-9 */
    CHECK_EQ_INT(ramp_e4m3_encode(0.0009765625f), 0x00); /* 2^-10: tie -> even (0) */
    CHECK_EQ_INT(ramp_e4m3_encode(0.0029296875f), 0x02); /* 1.5 * 2^-9: tie -> 2 */
    CHECK_EQ_INT(ramp_e4m3_encode(1.0625f), 0x38);      /* 1 + 1/16: tie -> even */
    CHECK_EQ_INT(ramp_e4m3_encode(1.1875f), 0x3A);      /* 1 + 3/16: tie -> 1.25 */
    CHECK_EQ_INT(ramp_e4m3_encode(450.0f), 0x7E);       /* saturate */
    CHECK_EQ_INT(ramp_e4m3_encode(1e30f), 0x7E);
    CHECK_EQ_INT(ramp_e4m3_encode(INFINITY), 0x7E);
    CHECK_EQ_INT(ramp_e4m3_encode(-INFINITY), 0xFE);
    CHECK_EQ_INT(ramp_e4m3_encode(NAN), 0x7F);
    CHECK(isnan(ramp_e4m3_decode(0xFF)));
    CHECK_NEAR(ramp_e4m3_decode(0x7E), 448.0, 0);

    /* every midpoint between neighbouring codes goes to the even code, and
     * values just off it to the nearer one */
    for (int c = 0; c < 0x7E; c++) {
        float lo = ramp_e4m3_decode((uint8_t)c), hi = ramp_e4m3_decode((uint8_t)(c + 1));
        float mid = (float)(((double)lo + hi) / 2);
        int even = (c & 1) ? c + 1 : c;
        CHECK_EQ_INT(ramp_e4m3_encode(mid), even);
        CHECK_EQ_INT(ramp_e4m3_encode(-mid), even | 0x80);
        CHECK_EQ_INT(ramp_e4m3_encode(nextafterf(mid, 0.0f)), c);
        CHECK_EQ_INT(ramp_e4m3_encode(nextafterf(mid, 1000.0f)), c + 1);
        /* spacing: the distance to the next code up */
        CHECK_NEAR(ramp_e4m3_spacing(lo), (double)hi - lo, 0);
    }

    /* random floats against the brute-force nearest code */
    int bad = 0;
    for (int i = 0; i < 200000; i++) {
        float x = rand_float(&rng);
        if (i % 7 == 0) x = ramp_e4m3_decode((uint8_t)ramp_rng_below(&rng, 127)) *
                            (ramp_rng_below(&rng, 2) ? 1.0f : -1.0f);
        int want = e4m3_brute(x), got = ramp_e4m3_encode(x);
        if (want != got && bad++ < 10)
            fprintf(stderr, "e4m3(%a) = 0x%02x, brute force 0x%02x\n", x, got, want);
    }
    CHECK_EQ_INT(bad, 0);

    /* margin: perturbations below it never change the code; just above it
     * one side does */
    bad = 0;
    for (int i = 0; i < 100000; i++) {
        float y = (float)((ramp_rng_uniform(&rng) * 2 - 1) * 448 *
                          pow(2, -12 * ramp_rng_uniform(&rng)));
        float m = ramp_e4m3_margin(y);
        /* compare values: +0 and -0 are one value */
#define E4(v) ramp_e4m3_decode(ramp_e4m3_encode(v))
        float c = E4(y);
        /* stay 2 float ulps clear of the boundary: y +- p itself rounds */
        float top = fabsf(y) + 2 * m; /* ulp at the largest magnitude touched */
        float ulp = nextafterf(top, INFINITY) - top;
        float p = m - 2 * ulp;
        if (p > 0 && (E4(y + p) != c || E4(y - p) != c)) {
            if (bad < 5) fprintf(stderr, "margin(%a) = %a: +-%a changes %g\n", y, m, p, c);
            bad++;
        }
        float p2 = m + 2 * ulp;
        if (fabsf(y) + p2 < 448 && E4(y + p2) == c && E4(y - p2) == c) {
            if (bad < 5) fprintf(stderr, "margin(%a) = %a: +-%a keeps %g\n", y, m, p2, c);
            bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);

    /* bf16 */
    CHECK_EQ_INT(ramp_bf16_encode(1.0f), 0x3F80);
    CHECK_EQ_INT(ramp_bf16_encode(-2.0f), 0xC000);
    CHECK_EQ_INT(ramp_bf16_encode(1.00390625f), 0x3F80); /* 1 + 2^-8: tie -> even */
    CHECK_EQ_INT(ramp_bf16_encode(1.01171875f), 0x3F82); /* 1 + 3*2^-8: tie -> up */
    CHECK_EQ_INT(ramp_bf16_encode(INFINITY), 0x7F80);
    CHECK_EQ_INT(ramp_bf16_encode(FLT_MAX), 0x7F80);     /* rounds up to Inf */
    CHECK(isnan(ramp_bf16_decode(ramp_bf16_encode(NAN))));
    bad = 0;
    for (int i = 0; i < 200000; i++) {
        uint32_t u = (uint32_t)ramp_rng_next(&rng);
        float x;
        memcpy(&x, &u, 4);
        if (!isfinite(x)) continue;
        if (ramp_bf16_encode(x) != bf16_brute(x) && bad++ < 10)
            fprintf(stderr, "bf16(%a) = 0x%04x, brute 0x%04x\n", x, ramp_bf16_encode(x),
                    bf16_brute(x));
        float m = ramp_bf16_margin(x);
        float q = ramp_bf16_round(x);
        float top = fabsf(x) + 2 * m;
        float ulp = nextafterf(top, INFINITY) - top;
        float p = m - 2 * ulp;
        if (fabsf(x) < 1e37f && fabsf(x) > 1e-37f && p > 0 &&
            (ramp_bf16_round(x + p) != q || ramp_bf16_round(x - p) != q)) {
            if (bad < 5) fprintf(stderr, "bf16 margin(%a) = %a\n", x, m);
            bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);

    /* 1x128 group quantizer: scale = amax / 448, the max element -> +-448,
     * every code is the rounding of x / scale (x * (1/scale)) */
    for (int trial = 0; trial < 200; trial++) {
        float x[128];
        uint8_t q[128];
        double mag = pow(2, -20 + 40 * ramp_rng_uniform(&rng));
        int imax = (int)ramp_rng_below(&rng, 128);
        float amax = 0;
        for (int i = 0; i < 128; i++) {
            x[i] = (float)(ramp_rng_normal(&rng) * mag);
            if (trial % 10 == 0 && i % 3 == 0) x[i] = 0.0f;
            if (fabsf(x[i]) > amax) { amax = fabsf(x[i]); imax = i; }
        }
        float s = ramp_fp8_quant_group(x, 128, q);
        CHECK(s == fmaxf(amax, RAMP_FP8_AMAX_MIN) / 448.0f);
        CHECK_EQ_INT(q[imax] & 0x7F, 0x7E);
        for (int i = 0; i < 128; i++) {
            CHECK_EQ_INT(q[i], ramp_e4m3_encode(x[i] * (1.0f / s)));
            /* dequantized within half a spacing (relative 2^-4) or 2^-10 s */
            double err = fabs((double)ramp_e4m3_decode(q[i]) * s - x[i]);
            CHECK(err <= fmax(fabs(x[i]) / 16, s / 1024.0) * 1.0001);
        }
    }
    float zeros[128] = {0};
    uint8_t qz[128];
    float sz = ramp_fp8_quant_group(zeros, 128, qz);
    CHECK(sz == RAMP_FP8_AMAX_MIN / 448.0f);
    for (int i = 0; i < 128; i++) CHECK_EQ_INT(qz[i], 0);
    return check_finish("test_fp8");
}
