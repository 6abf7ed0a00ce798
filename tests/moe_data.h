/*
 * moe_data.h - random MoE layers and batches for the tests and the
 * benchmark (header-only): FP8 weights with per-128x128-block scales (block
 * magnitudes vary by 4x so a wrong scale index shows), BF16 weights, hidden
 * states with per-token and per-group magnitudes that vary, and routings of
 * several shapes (skewed, empty experts, one expert taking every token, a
 * single token). Expert ids are global; this GPU holds experts
 * [0, local_experts), as GPU 0 of a contiguous EP placement.
 */
#ifndef RAMP_MOE_DATA_H
#define RAMP_MOE_DATA_H

#include "fp8.h"
#include "internal.h"
#include "moe_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int experts, topk, inter, hidden, bf16;
    void *w13, *w2;          /* uint8 codes or uint16 bf16 */
    float *w13_scale, *w2_scale;
} moe_weights;

/* Fills a [rows, cols] block-quantized matrix (FP8) or bf16 matrix with
 * N(0, sigma^2) entries, sigma varying per 128x128 block by 2^U(-1,1). */
static inline int moe_fill_matrix(ramp_rng *r, int bf16, int rows, int cols, double sigma,
                           void *w, float *scale) {
    const int G = 128;
    float *blk = malloc((size_t)G * G * sizeof *blk);
    if (!blk) return -1;
    for (int rb = 0; rb < (rows + G - 1) / G; rb++)
        for (int cb = 0; cb < (cols + G - 1) / G; cb++) {
            double s = sigma * pow(2.0, 2 * ramp_rng_uniform(r) - 1);
            int nr = rows - rb * G < G ? rows - rb * G : G;
            int nc = cols - cb * G < G ? cols - cb * G : G;
            float amax = 0;
            for (int i = 0; i < nr * nc; i++) {
                blk[i] = (float)(ramp_rng_normal(r) * s);
                amax = fmaxf(amax, fabsf(blk[i]));
            }
            float sc = fmaxf(amax, RAMP_FP8_AMAX_MIN) / RAMP_E4M3_MAX;
            if (!bf16) scale[(size_t)rb * ((cols + G - 1) / G) + cb] = sc;
            for (int i = 0; i < nr; i++)
                for (int j = 0; j < nc; j++) {
                    size_t at = (size_t)(rb * G + i) * cols + cb * G + j;
                    if (bf16) ((uint16_t *)w)[at] = ramp_bf16_encode(blk[i * nc + j]);
                    else ((uint8_t *)w)[at] = ramp_e4m3_encode(blk[i * nc + j] / sc);
                }
        }
    free(blk);
    return 0;
}

static inline void moe_weights_free(moe_weights *w) {
    if (!w) return;
    free(w->w13); free(w->w2); free(w->w13_scale); free(w->w2_scale);
    memset(w, 0, sizeof *w);
}

static inline int moe_weights_make(ramp_rng *r, int experts, int topk, int inter, int hidden,
                            int bf16, moe_weights *w) {
    memset(w, 0, sizeof *w);
    w->experts = experts; w->topk = topk; w->inter = inter; w->hidden = hidden; w->bf16 = bf16;
    size_t el = bf16 ? 2 : 1;
    size_t n13 = (size_t)experts * 2 * inter * hidden, n2 = (size_t)experts * hidden * inter;
    w->w13 = malloc(n13 * el);
    w->w2 = malloc(n2 * el);
    size_t s13 = (size_t)experts * (2 * inter / 128) * (hidden / 128);
    size_t s2 = (size_t)experts * (hidden / 128) * (inter / 128);
    w->w13_scale = malloc((s13 ? s13 : 1) * sizeof(float));
    w->w2_scale = malloc((s2 ? s2 : 1) * sizeof(float));
    if (!w->w13 || !w->w2 || !w->w13_scale || !w->w2_scale) { moe_weights_free(w); return -1; }
    for (int e = 0; e < experts; e++) {
        if (moe_fill_matrix(r, bf16, 2 * inter, hidden, 1.0 / sqrt(hidden),
                            (char *)w->w13 + (size_t)e * 2 * inter * hidden * el,
                            w->w13_scale + (size_t)e * (2 * inter / 128) * (hidden / 128)) ||
            moe_fill_matrix(r, bf16, hidden, inter, 2.0 / sqrt(inter),
                            (char *)w->w2 + (size_t)e * hidden * inter * el,
                            w->w2_scale + (size_t)e * (hidden / 128) * (inter / 128))) {
            moe_weights_free(w);
            return -1;
        }
    }
    return 0;
}


/* Inverse of the standard normal CDF (Acklam's rational approximation,
 * relative error < 1.2e-9): turns uniform bytes into normal samples. */
static inline double moe_norm_quantile(double p) {
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549671010229732e+00,
                               4.374664141464968e+00, 2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                               2.445134137142996e+00, 3.754408661907416e+00};
    double q, r;
    if (p < 0.02425) {
        q = sqrt(-2 * log(p));
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    if (p > 1 - 0.02425) return -moe_norm_quantile(1 - p);
    q = p - 0.5;
    r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/* Fast weights for the big models (DeepSeek-V3 EP8 holds 1.4 G of them):
 * every element drawn from a 256-entry (FP8) or 65536-entry (BF16) table of
 * normal quantiles, 8 or 4 per RNG call; FP8 codes span about +-4.2 sigma of
 * the e4m3 range, so a block's scale maps sigma to the wanted size; block
 * magnitudes still vary by 2^{-1,0,1}. */
static inline void moe_fill_fast(ramp_rng *r, int bf16, int rows, int cols, double sigma, void *w,
                          float *scale) {
    static uint8_t t8[256];
    static uint16_t t16[65536];
    static int ready;
    const double code_sigma = 448.0 / 4.2;
    if (!ready) {
        for (int i = 0; i < 256; i++)
            t8[i] = ramp_e4m3_encode((float)(moe_norm_quantile((i + 0.5) / 256) * code_sigma));
        for (int i = 0; i < 65536; i++)
            t16[i] = ramp_bf16_encode((float)moe_norm_quantile((i + 0.5) / 65536));
        ready = 1;
    }
    const int G = 128, cb_n = (cols + G - 1) / G;
    for (int rb = 0; rb < (rows + G - 1) / G; rb++)
        for (int cb = 0; cb < cb_n; cb++) {
            int pw = (int)ramp_rng_below(r, 3) - 1; /* block magnitude 2^pw */
            double s = sigma * ldexp(1.0, pw);
            if (!bf16) scale[(size_t)rb * cb_n + cb] = (float)(s / code_sigma);
            int nr = rows - rb * G < G ? rows - rb * G : G;
            int nc = cols - cb * G < G ? cols - cb * G : G;
            for (int i = 0; i < nr; i++) {
                size_t at = (size_t)(rb * G + i) * cols + cb * G;
                if (!bf16) {
                    uint8_t *o = (uint8_t *)w + at;
                    for (int j = 0; j < nc; j += 8) {
                        uint64_t v = ramp_rng_next(r);
                        for (int t = 0; t < 8 && j + t < nc; t++) o[j + t] = t8[(v >> (8 * t)) & 255];
                    }
                } else {
                    uint16_t *o = (uint16_t *)w + at;
                    float f = (float)s;
                    for (int j = 0; j < nc; j += 4) {
                        uint64_t v = ramp_rng_next(r);
                        for (int t = 0; t < 4 && j + t < nc; t++)
                            o[j + t] = ramp_bf16_encode(ramp_bf16_decode(t16[(v >> (16 * t)) & 65535]) * f);
                    }
                }
            }
        }
}

static inline int moe_weights_make_fast(ramp_rng *r, int experts, int topk, int inter, int hidden,
                                 int bf16, moe_weights *w) {
    memset(w, 0, sizeof *w);
    w->experts = experts; w->topk = topk; w->inter = inter; w->hidden = hidden; w->bf16 = bf16;
    size_t el = bf16 ? 2 : 1;
    size_t n13 = (size_t)experts * 2 * inter * hidden, n2 = (size_t)experts * hidden * inter;
    size_t s13 = (size_t)experts * (2 * inter / 128) * (hidden / 128);
    size_t s2 = (size_t)experts * (hidden / 128) * (inter / 128);
    w->w13 = malloc(n13 * el);
    w->w2 = malloc(n2 * el);
    w->w13_scale = malloc((s13 ? s13 : 1) * sizeof(float));
    w->w2_scale = malloc((s2 ? s2 : 1) * sizeof(float));
    if (!w->w13 || !w->w2 || !w->w13_scale || !w->w2_scale) { moe_weights_free(w); return -1; }
    for (int e = 0; e < experts; e++) {
        moe_fill_fast(r, bf16, 2 * inter, hidden, 1.0 / sqrt(hidden),
                      (char *)w->w13 + (size_t)e * 2 * inter * hidden * el,
                      w->w13_scale + (size_t)e * (2 * inter / 128) * (hidden / 128));
        moe_fill_fast(r, bf16, hidden, inter, 2.0 / sqrt(inter),
                      (char *)w->w2 + (size_t)e * hidden * inter * el,
                      w->w2_scale + (size_t)e * (hidden / 128) * (inter / 128));
    }
    return 0;
}

static inline ramp_moe_layer moe_layer_of(const moe_weights *w) {
    ramp_moe_layer L = {w->experts, w->topk, w->inter, w->hidden, w->bf16,
                        w->w13, w->w13_scale, w->w2, w->w2_scale};
    return L;
}

typedef enum {
    MOE_SKEWED = 0,    /* Zipf(1.2) over all experts, random ranks */
    MOE_HALF_EMPTY,    /* only even local experts get tokens (+ remote) */
    MOE_ONE_EXPERT,    /* local expert 0 in every token's top-k */
    MOE_SINGLE_TOKEN,  /* one token */
    MOE_UNIFORM,       /* uniform over all experts (the balanced case) */
    MOE_SHAPES
} moe_shape;

static inline const char *moe_shape_name(int s) {
    static const char *n[] = {"skewed", "half-empty", "one-expert", "single-token", "uniform"};
    return s >= 0 && s < MOE_SHAPES ? n[s] : "?";
}

typedef struct {
    int tokens, topk, hidden;
    uint16_t *x_bf16;  /* [M, d] */
    uint8_t *x;        /* [M, d] codes of x_bf16 quantized 1x128 */
    float *x_scale;    /* [M, d/128] */
    int32_t *ids;      /* [M, k] global expert ids */
    float *weights;    /* [M, k] */
} moe_batch;

static inline void moe_batch_free(moe_batch *b) {
    if (!b) return;
    free(b->x_bf16); free(b->x); free(b->x_scale); free(b->ids); free(b->weights);
    memset(b, 0, sizeof *b);
}

/* tokens (forced to 1 for MOE_SINGLE_TOKEN), k distinct experts of `global`
 * per token, of which [0, local) live here. */
static inline int moe_batch_make(ramp_rng *r, int shape, int tokens, int topk, int global,
                          int local, int hidden, moe_batch *b) {
    memset(b, 0, sizeof *b);
    if (shape == MOE_SINGLE_TOKEN) tokens = 1;
    b->tokens = tokens; b->topk = topk; b->hidden = hidden;
    size_t n = (size_t)tokens * hidden;
    b->x_bf16 = calloc(n ? n : 1, 2); /* calloc: GCC's -Wmaybe-uninitialized below */
    b->x = malloc(n ? n : 1);
    b->x_scale = malloc(((size_t)tokens * (hidden / 128) + 1) * sizeof(float));
    b->ids = malloc(((size_t)tokens * topk + 1) * sizeof(int32_t));
    b->weights = malloc(((size_t)tokens * topk + 1) * sizeof(float));
    double *p = malloc((size_t)global * sizeof *p);
    int *perm = malloc((size_t)global * sizeof *perm);
    if (!b->x_bf16 || !b->x || !b->x_scale || !b->ids || !b->weights || !p || !perm) {
        free(p); free(perm); moe_batch_free(b); return -1;
    }
    for (int m = 0; m < tokens; m++) {
        double tm = pow(2.0, 3 * ramp_rng_uniform(r) - 1.5);
        for (int g = 0; g < hidden / 128; g++) {
            double gm = tm * pow(2.0, 2 * ramp_rng_uniform(r) - 1);
            for (int i = 0; i < 128; i++)
                b->x_bf16[(size_t)m * hidden + g * 128 + i] =
                    ramp_bf16_encode((float)(ramp_rng_normal(r) * gm));
        }
    }
    ramp_moe_quantize_tokens(b->x_bf16, tokens, hidden, b->x, b->x_scale);
    /* expert popularity */
    for (int e = 0; e < global; e++) perm[e] = e;
    for (int e = global - 1; e > 0; e--) {
        int j = (int)ramp_rng_below(r, (uint32_t)e + 1), t = perm[e];
        perm[e] = perm[j]; perm[j] = t;
    }
    for (int e = 0; e < global; e++) {
        p[perm[e]] = shape == MOE_UNIFORM ? 1.0 : 1.0 / pow(e + 1, 1.2);
        if (shape == MOE_HALF_EMPTY && perm[e] < local && perm[e] % 2) p[perm[e]] = 0;
        if (shape == MOE_ONE_EXPERT && perm[e] < local) p[perm[e]] = 0;
    }
    for (int m = 0; m < tokens; m++) {
        int32_t *id = b->ids + (size_t)m * topk;
        int have = 0;
        if (shape == MOE_ONE_EXPERT) id[have++] = 0;
        if (shape == MOE_SINGLE_TOKEN && local > 0) id[have++] = (int)ramp_rng_below(r, (uint32_t)local);
        while (have < topk) {
            double tot = 0;
            for (int e = 0; e < global; e++) tot += p[e];
            int pick = 0;
            if (tot > 0) {
                double u = ramp_rng_uniform(r) * tot, acc = 0;
                for (pick = 0; pick < global - 1; pick++) {
                    acc += p[pick];
                    if (u < acc) break;
                }
            } else {
                pick = (int)ramp_rng_below(r, (uint32_t)global);
            }
            int dup = 0;
            for (int j = 0; j < have; j++) dup |= id[j] == pick;
            if (dup) { /* fall back to any unused expert, remote first */
                for (int e = global - 1; e >= 0 && dup; e--) {
                    int used = 0;
                    for (int j = 0; j < have; j++) used |= id[j] == e;
                    if (!used && (shape != MOE_ONE_EXPERT || e >= local)) { pick = e; dup = 0; }
                }
            }
            id[have++] = pick;
        }
        double tot = 0, w[64];
        for (int j = 0; j < topk; j++) { w[j] = exp(2 * ramp_rng_normal(r)); tot += w[j]; }
        for (int j = 0; j < topk; j++) b->weights[(size_t)m * topk + j] = (float)(w[j] / tot);
    }
    free(p); free(perm);
    return 0;
}

static inline ramp_moe_batch moe_batch_fp8(const moe_batch *b) {
    ramp_moe_batch B = {b->tokens, b->x, b->x_scale, NULL, b->ids, b->weights};
    return B;
}
static inline ramp_moe_batch moe_batch_bf16(const moe_batch *b) {
    ramp_moe_batch B = {b->tokens, NULL, NULL, b->x_bf16, b->ids, b->weights};
    return B;
}

#endif /* RAMP_MOE_DATA_H */
