/*
 * test_moe_ref.c - the CPU reference of the MoE layer (src/moe_ref.c)
 * against an independent naive computation in double precision.
 *
 * Two comparisons, each with a bound derived, not tuned:
 *  1. "same points": the naive version quantizes the intermediate exactly
 *     as specified (group amax, scale = amax/448, e4m3 of a/scale; or bf16),
 *     in double. The reference sums in f32, so its pre-quantization values
 *     differ by at most gamma * sum|terms| (gamma = (n_inner + n_outer + 4)u,
 *     the standard bound for blocked recursive summation, u = 2^-24). Only
 *     intermediates within that distance (plus the scale's change) of a
 *     rounding boundary may round differently; each such flip moves the
 *     output by one grid spacing * scale * |W2|. Everything else agrees to
 *     the down projection's own gamma * sum|terms|.
 *  2. "exact": the naive version keeps the intermediate unrounded; then the
 *     difference is at most half a spacing per intermediate (2^-4 |a| for
 *     normal e4m3 values, 2^-10 * scale below 2^-6) times |W2|, plus the
 *     f32 terms: a looser but independent check of the quantization itself.
 * Negative controls show the bound of (1) is tight enough to fail on a
 * router weight off by 0.5, swapped gate/up rows or a wrong block scale. Also:
 * BF16 hidden states quantized inside equal FP8 inputs quantized outside bit
 * for bit, threads do not change a bit, both bounds in one pass
 * (ramp_moe_reference2) equal each computed alone, and bad arguments are
 * refused.
 */
#include "check.h"
#include "moe_data.h"

#include <math.h>

#define U32 (1.0 / 16777216.0)

enum { FLAW_NONE = 0, FLAW_NO_ROUTER, FLAW_SWAP_GATE_UP, FLAW_SCALE, FLAW_COUNT };

/* Naive layer in double. quant: round the intermediate as specified (1) or
 * not (0). Fills out [M, d] and bound [M, d] (see the file comment). */
static void naive(const moe_weights *W, const moe_batch *b, int use_bf16_x, int quant,
                  int flaw, double *out, double *bound) {
    const int d = W->hidden, h = W->inter, k = W->topk, G = 128, fp8 = !W->bf16;
    const float *lut = ramp_e4m3_table();
    double *x = malloc(sizeof(double) * d), *g = malloc(sizeof(double) * 2 * h),
           *ga = malloc(sizeof(double) * 2 * h), *a = malloc(sizeof(double) * h),
           *qv = malloc(sizeof(double) * h), *c = malloc(sizeof(double) * h),
           *sc = malloc(sizeof(double) * (h / G + 1));
    const double gup = (G + d / G + 4) * U32, gdown = (G + h / G + k + 4) * U32;
    for (int m = 0; m < b->tokens; m++) {
        for (int i = 0; i < d; i++) {
            if (fp8)
                x[i] = (double)lut[b->x[(size_t)m * d + i]] * b->x_scale[(size_t)m * (d / G) + i / G];
            else
                x[i] = ramp_bf16_decode(b->x_bf16[(size_t)m * d + i]);
        }
        (void)use_bf16_x;
        for (int r = 0; r < d; r++) out[(size_t)m * d + r] = bound[(size_t)m * d + r] = 0;
        for (int j = 0; j < k; j++) {
            int e = b->ids[(size_t)m * k + j];
            if (e < 0 || e >= W->experts) continue;
            double rw = b->weights[(size_t)m * k + j];
            /* a mishandled router weight: off by 0.5 (dropping it, rw -> 1,
             * is invisible when the token's one local weight is near 1, as
             * the one-expert shape drew with seed 11156294533417145613) */
            if (flaw == FLAW_NO_ROUTER && m == 0) rw = rw > 0.5 ? rw - 0.5 : rw + 0.5;
            for (int i = 0; i < 2 * h; i++) {
                double s = 0, sa = 0;
                for (int t = 0; t < d; t++) {
                    size_t at = ((size_t)e * 2 * h + i) * d + t;
                    double wv = fp8 ? (double)lut[((uint8_t *)W->w13)[at]] *
                                          W->w13_scale[((size_t)e * (2 * h / G) + i / G) * (d / G) + t / G]
                                    : ramp_bf16_decode(((uint16_t *)W->w13)[at]);
                    s += wv * x[t];
                    sa += fabs(wv * x[t]);
                }
                g[i] = s;
                ga[i] = sa;
            }
            if (flaw == FLAW_SWAP_GATE_UP && m == 0)
                for (int i = 0; i < h; i++) { double t = g[i]; g[i] = g[h + i]; g[h + i] = t; }
            double dmax[64] = {0};
            for (int i = 0; i < h; i++) {
                double sg = g[i] / (1 + exp(-g[i]));
                a[i] = sg * g[h + i] * rw;
                /* reference's f32 error in a: sums, SiLU (|SiLU'| <= 1.1, expf
                 * and division a few ulp), two products */
                c[i] = (1.1 * gup * ga[i] * fabs(g[h + i]) + fabs(sg) * gup * ga[h + i] +
                        gup * gup * ga[i] * ga[h + i]) * fabs(rw) + 8 * U32 * fabs(a[i]);
                if (fp8 && c[i] > dmax[i / G]) dmax[i / G] = c[i];
            }
            /* intermediate and the per-intermediate bound weights c[i] */
            for (int gb = 0; gb < (fp8 ? h / G : 1); gb++) {
                double amax = 0;
                if (fp8)
                    for (int t = 0; t < G; t++) amax = fmax(amax, fabs(a[gb * G + t]));
                double s = fp8 ? (double)(float)(fmax(amax, RAMP_FP8_AMAX_MIN) / 448.0) : 1.0;
                double ds = fp8 ? dmax[gb] / 448.0 + 2 * U32 * s : 0; /* scale's change */
                sc[gb] = s;
                for (int t = 0; t < (fp8 ? G : h); t++) {
                    int i = gb * G + t;
                    if (!quant) {
                        qv[i] = a[i] / s;
                        double half = fp8 ? fmax(fabs(a[i]) / 16, s / 1024) : fabs(a[i]) / 256;
                        c[i] = half * 1.01 + c[i] * 1.07;
                        continue;
                    }
                    double y = a[i] / s;
                    double dy = c[i] / s + fabs(y) * ds / s + 2 * U32 * fabs(y);
                    if (fp8) {
                        qv[i] = ramp_e4m3_decode(ramp_e4m3_encode((float)y));
                        int amb = ramp_e4m3_margin((float)y) <= dy * 1.01 + 1e-30;
                        c[i] = (amb ? fmax(ramp_e4m3_spacing((float)qv[i]), ramp_e4m3_spacing((float)y)) * s * 1.01 : 0) +
                               fabs(qv[i]) * ds;
                    } else {
                        qv[i] = ramp_bf16_round((float)y);
                        int amb = ramp_bf16_margin((float)y) <= dy * 1.01 + 1e-38;
                        c[i] = amb ? fmax(ramp_bf16_spacing((float)qv[i]), ramp_bf16_spacing((float)y)) * 1.01 : 0;
                    }
                }
            }
            for (int r = 0; r < d; r++) {
                double s = 0, sa = 0, sb = 0;
                for (int i = 0; i < h; i++) {
                    size_t at = ((size_t)e * d + r) * h + i;
                    double ws = fp8 ? W->w2_scale[((size_t)e * (d / G) + r / G) * (h / G) + i / G] : 1;
                    if (flaw == FLAW_SCALE && m == 0 && e == b->ids[0] && r < G && i < G) ws *= 1.5;
                    double wv = fp8 ? (double)lut[((uint8_t *)W->w2)[at]] * ws
                                    : ramp_bf16_decode(((uint16_t *)W->w2)[at]);
                    double v = qv[i] * (fp8 ? sc[i / G] : 1);
                    s += wv * v;
                    sa += fabs(wv * v);
                    sb += fabs(wv) * c[i];
                }
                out[(size_t)m * d + r] += s;
                bound[(size_t)m * d + r] += sb + gdown * sa * (quant ? 1 : 1.07);
            }
        }
    }
    free(x); free(g); free(ga); free(a); free(qv); free(c); free(sc);
}

/* Max |ref - naive| / bound over all elements; counts violations. */
static double compare(const float *ref, const double *nv, const double *bd, size_t n,
                      int *violations, double *rel_norm) {
    double worst = 0, num = 0, den = 0;
    *violations = 0;
    for (size_t i = 0; i < n; i++) {
        double err = fabs((double)ref[i] - nv[i]);
        double r = err / (bd[i] + 1e-300);
        if (!(err <= bd[i])) (*violations)++;
        if (r > worst || isnan(r)) worst = r;
        num += err * err;
        den += nv[i] * nv[i];
    }
    *rel_norm = den > 0 ? sqrt(num / den) : sqrt(num);
    return worst;
}

static void run_case(ramp_rng *rng, int bf16, int shape) {
    const int E = 3, global = 8, k = 3, h = 256, d = 384, M = 9;
    moe_weights W;
    moe_batch b;
    if (moe_weights_make(rng, E, k, h, d, bf16, &W) ||
        moe_batch_make(rng, shape, M, k, global, E, d, &b)) {
        CHECK(!"out of memory");
        return;
    }
    /* The scale-flaw control perturbs token 0's first expert: give that slot
     * the token's largest router weight (a permutation of its weights), so a
     * near-zero weight cannot hide the flaw under the rounding bound. */
    int jmax = 0;
    for (int j = 1; j < k; j++)
        if (b.weights[j] > b.weights[jmax]) jmax = j;
    float wswap = b.weights[0];
    b.weights[0] = b.weights[jmax];
    b.weights[jmax] = wswap;
    ramp_moe_layer L = moe_layer_of(&W);
    size_t n = (size_t)b.tokens * d;
    float *ref = malloc(n * sizeof *ref), *ref3 = malloc(n * sizeof *ref), *bd = malloc(n * sizeof *bd);
    double *nv = malloc(n * sizeof *nv), *nb = malloc(n * sizeof *nb);
    ramp_moe_batch B = bf16 ? moe_batch_bf16(&b) : moe_batch_fp8(&b);
    for (size_t i = 0; i < n; i++) ref[i] = ref3[i] = NAN; /* poison */
    CHECK_OK(ramp_moe_reference(&L, &B, 1, ref, bd));
    CHECK_OK(ramp_moe_reference(&L, &B, 3, ref3, NULL));
    CHECK(memcmp(ref, ref3, n * sizeof *ref) == 0);
    { /* both bounds in one pass == each alone, bit for bit (values too); the
       * tensor-core bound wider than the plain one (equal in BF16) */
        float *o2 = malloc(n * sizeof *o2), *btc = malloc(n * sizeof *btc),
              *btc2 = malloc(n * sizeof *btc2), *bp = malloc(n * sizeof *bp);
        if (o2 && btc && btc2 && bp) {
            for (size_t i = 0; i < n; i++) o2[i] = btc[i] = btc2[i] = bp[i] = NAN;
            CHECK_OK(ramp_moe_reference2(&L, &B, 2, o2, btc, bp));
            CHECK(memcmp(o2, ref, n * sizeof *ref) == 0);
            CHECK(memcmp(bp, bd, n * sizeof *bd) == 0);
            CHECK_OK(ramp_moe_reference_tc(&L, &B, 3, 1, ref3, btc2));
            CHECK(memcmp(ref3, ref, n * sizeof *ref) == 0);
            CHECK(memcmp(btc2, btc, n * sizeof *btc) == 0);
            size_t wider = 0, narrower = 0;
            for (size_t i = 0; i < n; i++) {
                wider += btc[i] > bd[i];
                narrower += !(btc[i] >= bd[i]);
            }
            CHECK_EQ_INT((int)narrower, 0);
            int any_local = 0; /* a token with no local expert has nothing to widen */
            for (int i = 0; i < b.tokens * k; i++) any_local |= b.ids[i] >= 0 && b.ids[i] < E;
            if (bf16) CHECK_EQ_INT((int)wider, 0);
            else if (any_local) CHECK(wider > 0);
        } else {
            CHECK(!"out of memory");
        }
        free(o2); free(btc); free(btc2); free(bp);
    }
    if (!bf16) { /* BF16 hidden states quantized inside == quantized outside */
        ramp_moe_batch Bx = moe_batch_bf16(&b);
        for (size_t i = 0; i < n; i++) ref3[i] = NAN;
        CHECK_OK(ramp_moe_reference(&L, &Bx, 2, ref3, NULL));
        CHECK(memcmp(ref, ref3, n * sizeof *ref) == 0);
    }
    int viol;
    double rel;
    naive(&W, &b, 0, 1, FLAW_NONE, nv, nb);
    double worst = compare(ref, nv, nb, n, &viol, &rel);
    printf("%s %-12s same points: max err/bound %.3f, |ref-naive|/|naive| %.2e\n",
           bf16 ? "bf16" : "fp8 ", moe_shape_name(shape), worst, rel);
    CHECK_EQ_INT(viol, 0);
    /* the reference's own bound: finite and non-negative everywhere (its
     * size is judged by the controls below, which it must catch) */
    double bsum = 0;
    for (size_t i = 0; i < n; i++) bsum += bd[i];
    CHECK(bsum >= 0 && isfinite(bsum));
    naive(&W, &b, 0, 0, FLAW_NONE, nv, nb);
    worst = compare(ref, nv, nb, n, &viol, &rel);
    printf("%s %-12s exact:       max err/bound %.3f, |ref-exact|/|exact| %.2e\n",
           bf16 ? "bf16" : "fp8 ", moe_shape_name(shape), worst, rel);
    CHECK_EQ_INT(viol, 0);
    /* negative controls: token 0 carries the flaw (it has a local expert in
     * these shapes); the bound of (1) must reject each */
    int token0_local = 0;
    for (int j = 0; j < k; j++) token0_local |= b.ids[j] >= 0 && b.ids[j] < E;
    if (token0_local) {
        for (int flaw = FLAW_NO_ROUTER; flaw < FLAW_COUNT; flaw++) {
            if (flaw == FLAW_SCALE && (bf16 || b.ids[0] >= E)) continue;
            naive(&W, &b, 0, 1, flaw, nv, nb);
            compare(ref, nv, nb, n, &viol, &rel);
            if (viol == 0) {
                fprintf(stderr, "negative control %d (%s) not detected\n", flaw, moe_shape_name(shape));
                check_failures++;
            }
        }
    }
    free(ref); free(ref3); free(bd); free(nv); free(nb);
    moe_weights_free(&W);
    moe_batch_free(&b);
}

int main(void) {
    ramp_rng rng;
    ramp_rng_seed(&rng, check_seed());
    for (int bf16 = 0; bf16 < 2; bf16++)
        for (int shape = 0; shape < MOE_SHAPES; shape++) run_case(&rng, bf16, shape);

    /* bad arguments */
    moe_weights W;
    moe_batch b;
    if (moe_weights_make(&rng, 2, 2, 128, 128, 0, &W) == 0 &&
        moe_batch_make(&rng, MOE_SKEWED, 3, 2, 4, 2, 128, &b) == 0) {
        ramp_moe_layer L = moe_layer_of(&W);
        ramp_moe_batch B = moe_batch_fp8(&b);
        float out[3 * 128];
        CHECK_ERR(ramp_moe_reference(NULL, &B, 1, out, NULL), RAMP_ERR_INVALID_ARGUMENT);
        CHECK_ERR(ramp_moe_reference(&L, &B, 1, NULL, NULL), RAMP_ERR_INVALID_ARGUMENT);
        ramp_moe_layer L2 = L;
        L2.inter = 100;
        CHECK_ERR(ramp_moe_reference(&L2, &B, 1, out, NULL), RAMP_ERR_INVALID_ARGUMENT);
        L2 = L;
        L2.w13_scale = NULL;
        CHECK_ERR(ramp_moe_reference(&L2, &B, 1, out, NULL), RAMP_ERR_INVALID_ARGUMENT);
        ramp_moe_batch B2 = B;
        B2.x_bf16 = b.x_bf16; /* both inputs given */
        CHECK_ERR(ramp_moe_reference(&L, &B2, 1, out, NULL), RAMP_ERR_INVALID_ARGUMENT);
        B2 = B;
        B2.topk_ids = NULL;
        CHECK_ERR(ramp_moe_reference(&L, &B2, 1, out, NULL), RAMP_ERR_INVALID_ARGUMENT);
        float bd2[3 * 128];
        CHECK_ERR(ramp_moe_reference2(&L, &B, 1, out, bd2, bd2), RAMP_ERR_INVALID_ARGUMENT);
        moe_weights_free(&W);
        moe_batch_free(&b);
    }
    return check_finish("test_moe_ref");
}
