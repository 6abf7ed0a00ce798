/*
 * moe_ref.c - CPU reference of one GPU's MoE layer (see moe_ref.h): the
 * fused kernel's arithmetic with FP8 rounding at the same points, plus a
 * per-element bound on how far a correct GPU result may lie from it.
 *
 * Work is split over tokens (each token's row of the output depends on that
 * token alone), so threads need no synchronisation beyond the join.
 */
#include "moe_ref.h"

#include "fp8.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const ramp_moe_layer *L;
    const ramp_moe_batch *B;
    float *out;
    float *bound[2]; /* [0]: the FP8 tensor core's accumulator modelled; [1]: plain */
    int first, step;
    int failed;
} ref_job;

static float silu_f(float g) { return g / (1.0f + expf(-g)); }

/* Hopper's FP8 tensor core (wgmma m64nNk32 e4m3) does not accumulate in
 * full f32. The model test_gpu_wgmma validated on the H200 (2026-11-30: max
 * error / this bound 0.05 on full-range e4m3): each instruction adds its 32
 * products to the accumulator after aligning all 33 addends to the largest
 * magnitude among them (the running sum and the products) and keeping 13
 * fraction bits, so it errs by at most 33 * 2^-12 * that magnitude. tc_acc
 * feeds one product of a 128-wide K block (t = 0..127, summed from zero as
 * the kernel's promotion restarts it) and returns the bound so far. */
typedef struct {
    float sum, m;
    double err;
} tc_acc;

static inline void tc_add(tc_acc *a, int t, float p) {
    if (t % 32 == 0) a->m = fabsf(a->sum);
    a->m = fmaxf(a->m, fabsf(p));
    a->sum += p;
    if (t % 32 == 31) a->err += 33.0 * ldexp((double)a->m, -12);
}

/* Weight element (i, k) of a row-major [rows, cols] matrix as float. */
static inline float wval(const ramp_moe_layer *L, const void *w, size_t idx,
                         const float *lut) {
    return L->bf16 ? ramp_bf16_decode(((const uint16_t *)w)[idx])
                   : lut[((const uint8_t *)w)[idx]];
}

void ramp_moe_quantize_tokens(const uint16_t *x_bf16, int tokens, int hidden,
                              uint8_t *codes, float *scales) {
    float buf[RAMP_FP8_GROUP];
    for (int m = 0; m < tokens; m++)
        for (int g = 0; g < hidden / RAMP_FP8_GROUP; g++) {
            for (int i = 0; i < RAMP_FP8_GROUP; i++)
                buf[i] = ramp_bf16_decode(x_bf16[(size_t)m * hidden + g * RAMP_FP8_GROUP + i]);
            scales[(size_t)m * (hidden / RAMP_FP8_GROUP) + g] =
                ramp_fp8_quant_group(buf, RAMP_FP8_GROUP,
                                     codes + (size_t)m * hidden + g * RAMP_FP8_GROUP);
        }
}

/* The bound of one kind through the activation and the intermediate's
 * rounding: from gabs (the gate/up sums' |addends|, an accumulator's error
 * folded in) to c, the bound on each rounded intermediate's change as the
 * down projection sees it. a, q, s: the values (q and s rounded, as the
 * kernel rounds them); ds: scratch [h/128]. */
static void inter_bound(int fp8, int h, float rw, const float *gu, const float *gabs,
                        const float *a, const float *q, const float *s, float *c, float *ds) {
    const int G = RAMP_FP8_GROUP;
    const double eps = RAMP_MOE_SUM_EPS;
    for (int i = 0; i < h; i++) {
        /* how far the kernel's a may be from ours: gate/up sums, SiLU
         * (expf differs by a few ulp; |SiLU'| <= 1.1), products. */
        double u = gu[h + i];
        double sg = fabs((double)silu_f(gu[i]));
        double dg = eps * gabs[i], du = eps * gabs[h + i];
        c[i] = (float)((1.1 * dg * fabs(u) + sg * du + dg * du) * fabs(rw) +
                       1e-6 * fabs(sg * u * rw) + 1e-30);
    }
    if (!fp8) {
        for (int i = 0; i < h; i++)
            c[i] = ramp_bf16_margin(a[i]) <= c[i]
                       ? fmaxf(ramp_bf16_spacing(q[i]), ramp_bf16_spacing(a[i])) * 1.001f
                       : 0.0f;
        return;
    }
    for (int gb = 0; gb < h / G; gb++) {
        float amax = 0.0f, dmax = 0.0f;
        for (int t = 0; t < G; t++) {
            amax = fmaxf(amax, fabsf(a[gb * G + t]));
            dmax = fmaxf(dmax, c[gb * G + t]);
        }
        /* the kernel's group amax may differ by the largest perturbation;
         * its scale then by that / 448, plus rounding */
        ds[gb] = (amax > RAMP_FP8_AMAX_MIN ? dmax : 0.0f) / RAMP_E4M3_MAX + 4e-7f * s[gb];
        float rel = ds[gb] / s[gb];
        for (int t = 0; t < G; t++) {
            int i = gb * G + t;
            float y = a[i] / s[gb];
            /* perturbation of the quantizer's input y = a / s */
            float dy = c[i] / s[gb] + fabsf(y) * rel * 1.01f + 4e-7f * fabsf(y);
            float spacing = fmaxf(ramp_e4m3_spacing(q[i]), ramp_e4m3_spacing(y));
            /* c[i] becomes: |change of q * s| bound, ambiguity included */
            float flip = ramp_e4m3_margin(y) <= dy ? spacing * s[gb] * 1.001f : 0.0f;
            c[i] = flip + fabsf(q[i]) * ds[gb];
        }
    }
}

/* One token: all its local experts, the values once and each bound asked
 * for (bound[0]: the tensor core's accumulator modelled, FP8 only;
 * bound[1]: plain). Scratch: REF_SCRATCH(d, h) floats. */
#define REF_SCRATCH(d, h) ((size_t)(d) * 2 + 11 * (size_t)(h) + 64)
static void ref_token(const ramp_moe_layer *L, const ramp_moe_batch *B, int m,
                      float *scratch, float *out, float *const bound[2]) {
    const int d = L->hidden, h = L->inter, k = L->topk;
    const int G = RAMP_FP8_GROUP, fp8 = !L->bf16;
    const float *lut = ramp_e4m3_table();
    float *x = scratch, *xs = x + d, *gu = xs + d / G + 1, *a = gu + 2 * h, *q = a + h,
          *s = q + h, *ds = s + h / G + 1, *gabs[2], *c[2];
    gabs[0] = ds + h / G + 1;
    gabs[1] = gabs[0] + 2 * h;
    c[0] = gabs[1] + 2 * h;
    c[1] = c[0] + h;
    uint8_t codes[RAMP_FP8_GROUP];
    const int tc = fp8 && bound[0]; /* the tensor core's accumulator, modelled */

    /* 1. the token's K operand */
    for (int kb = 0; kb < (fp8 ? d / G : 1); kb++) xs[kb] = 1.0f;
    if (fp8 && B->x) {
        for (int i = 0; i < d; i++) x[i] = lut[B->x[(size_t)m * d + i]];
        for (int kb = 0; kb < d / G; kb++) xs[kb] = B->x_scale[(size_t)m * (d / G) + kb];
    } else if (fp8) {
        for (int kb = 0; kb < d / G; kb++) {
            float buf[RAMP_FP8_GROUP];
            for (int i = 0; i < G; i++)
                buf[i] = ramp_bf16_decode(B->x_bf16[(size_t)m * d + kb * G + i]);
            xs[kb] = ramp_fp8_quant_group(buf, G, codes);
            for (int i = 0; i < G; i++) x[kb * G + i] = lut[codes[i]];
        }
    } else {
        for (int i = 0; i < d; i++) x[i] = ramp_bf16_decode(B->x_bf16[(size_t)m * d + i]);
    }
    float *orow = out + (size_t)m * d, *brow[2];
    for (int r = 0; r < d; r++) orow[r] = 0.0f;
    for (int l = 0; l < 2; l++) {
        brow[l] = bound[l] ? bound[l] + (size_t)m * d : NULL;
        if (brow[l])
            for (int r = 0; r < d; r++) brow[l][r] = 0.0f;
    }

    for (int j = 0; j < k; j++) {
        int e = B->topk_ids[(size_t)m * k + j];
        if (e < 0 || e >= L->experts) continue;
        float rw = B->topk_weights[(size_t)m * k + j];
        /* 2. gate and up */
        const size_t w13e = (size_t)e * 2 * h * d;
        for (int i = 0; i < 2 * h; i++) {
            float acc = 0.0f, aabs = 0.0f;
            double tcerr = 0.0;
            const size_t row = w13e + (size_t)i * d;
            if (fp8) {
                for (int kb = 0; kb < d / G; kb++) {
                    float blk = 0.0f, babs = 0.0f;
                    tc_acc ta = {0.0f, 0.0f, 0.0};
                    for (int t = 0; t < G; t++) {
                        float p = lut[((const uint8_t *)L->w13)[row + kb * G + t]] * x[kb * G + t];
                        blk += p;
                        babs += fabsf(p);
                        if (tc) tc_add(&ta, t, p);
                    }
                    float sc = L->w13_scale[((size_t)e * (2 * h / G) + i / G) * (d / G) + kb] * xs[kb];
                    acc += blk * sc;
                    aabs += babs * fabsf(sc);
                    tcerr += ta.err * fabsf(sc);
                }
            } else {
                for (int t = 0; t < d; t++) {
                    float p = wval(L, L->w13, row + t, lut) * x[t];
                    acc += p;
                    aabs += fabsf(p);
                }
            }
            gu[i] = acc;
            /* gabs feeds eps * gabs below: fold the accumulator's bound in */
            gabs[0][i] = aabs + (float)(tcerr / RAMP_MOE_SUM_EPS);
            gabs[1][i] = aabs;
        }
        /* 3. activation; 4. rounding of the intermediate (values, then each bound) */
        for (int i = 0; i < h; i++) a[i] = silu_f(gu[i]) * gu[h + i] * rw;
        if (fp8) {
            for (int gb = 0; gb < h / G; gb++) {
                s[gb] = ramp_fp8_quant_group(a + gb * G, G, codes);
                for (int t = 0; t < G; t++) q[gb * G + t] = lut[codes[t]];
            }
        } else {
            for (int i = 0; i < h; i++) q[i] = ramp_bf16_round(a[i]);
            s[0] = 1.0f;
        }
        for (int l = 0; l < 2; l++)
            if (brow[l]) inter_bound(fp8, h, rw, gu, gabs[l], a, q, s, c[l], ds);
        /* 5. down projection */
        const double eps = RAMP_MOE_SUM_EPS;
        const size_t w2e = (size_t)e * d * h;
        const int bounds = brow[0] || brow[1];
        for (int r = 0; r < d; r++) {
            const size_t row = w2e + (size_t)r * h;
            float acc = 0.0f;
            double babs = 0.0, bflip[2] = {0.0, 0.0};
            if (fp8) {
                for (int gb = 0; gb < h / G; gb++) {
                    float blk = 0.0f, sabs = 0.0f, sc_[2] = {0.0f, 0.0f};
                    tc_acc ta = {0.0f, 0.0f, 0.0};
                    for (int t = 0; t < G; t++) {
                        float wv = lut[((const uint8_t *)L->w2)[row + gb * G + t]];
                        float p = wv * q[gb * G + t];
                        blk += p;
                        if (bounds) {
                            sabs += fabsf(p);
                            if (brow[0]) {
                                sc_[0] += fabsf(wv) * c[0][gb * G + t];
                                tc_add(&ta, t, p);
                            }
                            if (brow[1]) sc_[1] += fabsf(wv) * c[1][gb * G + t];
                        }
                    }
                    float ws = L->w2_scale[((size_t)e * (d / G) + r / G) * (h / G) + gb];
                    acc += blk * (ws * s[gb]);
                    if (bounds) {
                        babs += (double)sabs * fabsf(ws * s[gb]);
                        bflip[0] += (double)sc_[0] * fabsf(ws) + ta.err * fabsf(ws * s[gb]);
                        bflip[1] += (double)sc_[1] * fabsf(ws);
                    }
                }
            } else {
                for (int i = 0; i < h; i++) {
                    float wv = wval(L, L->w2, row + i, lut);
                    float p = wv * q[i];
                    acc += p;
                    if (bounds) {
                        babs += fabsf(p);
                        for (int l = 0; l < 2; l++)
                            if (brow[l]) bflip[l] += fabsf(wv) * c[l][i];
                    }
                }
            }
            orow[r] += acc;
            for (int l = 0; l < 2; l++)
                if (brow[l]) brow[l][r] += (float)(eps * babs + bflip[l]);
        }
    }
    /* the final additions over experts and slices are in eps too */
    for (int l = 0; l < 2; l++)
        if (brow[l])
            for (int r = 0; r < d; r++) brow[l][r] = brow[l][r] * 1.0001f + 1e-30f;
}

static void *ref_worker(void *arg) {
    ref_job *job = arg;
    const ramp_moe_layer *L = job->L;
    float *scratch = malloc(REF_SCRATCH(L->hidden, L->inter) * sizeof *scratch);
    if (!scratch) {
        job->failed = 1;
        return NULL;
    }
    for (int m = job->first; m < job->B->tokens; m += job->step)
        ref_token(L, job->B, m, scratch, job->out, job->bound);
    free(scratch);
    return NULL;
}

ramp_status ramp_moe_reference(const ramp_moe_layer *L, const ramp_moe_batch *B,
                               int threads, float *out, float *bound) {
    return ramp_moe_reference2(L, B, threads, out, NULL, bound);
}

ramp_status ramp_moe_reference_tc(const ramp_moe_layer *L, const ramp_moe_batch *B,
                                  int threads, int tc, float *out, float *bound) {
    return ramp_moe_reference2(L, B, threads, out, tc ? bound : NULL, tc ? NULL : bound);
}

ramp_status ramp_moe_reference2(const ramp_moe_layer *L, const ramp_moe_batch *B, int threads,
                                float *out, float *bound_tc, float *bound) {
    RAMP_CHECK(L && B && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_moe_reference: NULL argument");
    RAMP_CHECK(!bound_tc || bound_tc != bound, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_moe_reference2: bound_tc and bound are the same buffer");
    RAMP_CHECK(L->experts >= 1 && L->topk >= 1 && L->inter >= 1 && L->hidden >= 1,
               RAMP_ERR_INVALID_ARGUMENT, "layer E=%d k=%d h=%d d=%d: all must be >= 1",
               L->experts, L->topk, L->inter, L->hidden);
    RAMP_CHECK(L->w13 && L->w2, RAMP_ERR_INVALID_ARGUMENT, "layer weights are NULL");
    if (!L->bf16) {
        RAMP_CHECK(L->inter % RAMP_FP8_GROUP == 0 && L->hidden % RAMP_FP8_GROUP == 0,
                   RAMP_ERR_INVALID_ARGUMENT,
                   "FP8 layer: h = %d and d = %d must be multiples of 128", L->inter,
                   L->hidden);
        RAMP_CHECK(L->w13_scale && L->w2_scale, RAMP_ERR_INVALID_ARGUMENT,
                   "FP8 layer: block scales are NULL");
        RAMP_CHECK((B->x && B->x_scale && !B->x_bf16) || (!B->x && B->x_bf16),
                   RAMP_ERR_INVALID_ARGUMENT,
                   "FP8 layer: give either x + x_scale or x_bf16");
    } else {
        RAMP_CHECK(B->x_bf16 && !B->x, RAMP_ERR_INVALID_ARGUMENT,
                   "BF16 layer: give x_bf16 (and no FP8 x)");
    }
    RAMP_CHECK(B->tokens >= 0, RAMP_ERR_INVALID_ARGUMENT, "tokens = %d", B->tokens);
    RAMP_CHECK(B->tokens == 0 || (B->topk_ids && B->topk_weights),
               RAMP_ERR_INVALID_ARGUMENT, "topk_ids / topk_weights are NULL");
    (void)ramp_e4m3_table();
    if (threads < 1) threads = 1;
    if (threads > 256) threads = 256;
    if (threads > B->tokens) threads = B->tokens > 0 ? B->tokens : 1;
    /* BF16 sums have no tensor-core model: its bound_tc is the plain bound */
    float *lane_tc = L->bf16 ? NULL : bound_tc, *lane = bound ? bound : L->bf16 ? bound_tc : NULL;
    ref_job jobs[256];
    pthread_t tid[256];
    int started = 0;
    for (int t = 0; t < threads; t++) {
        jobs[t] = (ref_job){L, B, out, {lane_tc, lane}, t, threads, 0};
        if (t > 0 && pthread_create(&tid[t], NULL, ref_worker, &jobs[t]) == 0) started++;
        else if (t > 0) jobs[t].failed = 2;
    }
    ref_worker(&jobs[0]);
    int failed = jobs[0].failed;
    for (int t = 1; t < threads; t++) {
        if (jobs[t].failed == 2) { /* could not start: run it here */
            jobs[t].failed = 0;
            ref_worker(&jobs[t]);
        } else {
            pthread_join(tid[t], NULL);
        }
        failed |= jobs[t].failed;
    }
    (void)started;
    RAMP_CHECK(!failed, RAMP_ERR_OUT_OF_MEMORY, "ramp_moe_reference: out of memory");
    if (L->bf16 && bound_tc && bound)
        memcpy(bound_tc, bound, (size_t)B->tokens * L->hidden * sizeof *bound);
    return RAMP_OK;
}
