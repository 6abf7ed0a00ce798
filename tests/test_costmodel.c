/*
 * test_costmodel.c - the cost model's pieces against known answers: the
 * features on hand-computed loads (the paper's Section 2.3 example), NNLS
 * against a brute force over every active set, OLS against exact and
 * reference solutions, Spearman with ties, and the per-configuration fit
 * recovering a known truth from synthetic timing datasets.
 */
#include "eval_util.h"
#include "select_cpu.h"

/* ---- references ---------------------------------------------------------- */

/* Solves the s x s system M z = v by Gaussian elimination with partial
 * pivoting; returns 0 if singular. */
static int gauss(long double *M, long double *v, int s, double *z) {
    for (int k = 0; k < s; k++) {
        int p = k;
        for (int i = k + 1; i < s; i++)
            if (fabsl(M[i * s + k]) > fabsl(M[p * s + k])) p = i;
        if (fabsl(M[p * s + k]) < 1e-13L) return 0;
        if (p != k) {
            for (int j = 0; j < s; j++) {
                long double tmp = M[k * s + j]; M[k * s + j] = M[p * s + j]; M[p * s + j] = tmp;
            }
            long double tmp = v[k]; v[k] = v[p]; v[p] = tmp;
        }
        for (int i = k + 1; i < s; i++) {
            long double f = M[i * s + k] / M[k * s + k];
            for (int j = k; j < s; j++) M[i * s + j] -= f * M[k * s + j];
            v[i] -= f * v[k];
        }
    }
    for (int k = s - 1; k >= 0; k--) {
        long double acc = v[k];
        for (int j = k + 1; j < s; j++) acc -= M[k * s + j] * z[j];
        z[k] = (double)(acc / M[k * s + k]);
    }
    return 1;
}

/* Least squares on the columns in `set` by normal equations; x zero
 * elsewhere. Returns 0 if singular. */
static int ls_subset(const double *A, int m, int n, const double *b, unsigned set, double *x) {
    int cols[16], s = 0;
    for (int j = 0; j < n; j++) {
        x[j] = 0;
        if (set >> j & 1u) cols[s++] = j;
    }
    if (s == 0) return 1;
    long double M[256], v[16];
    for (int a = 0; a < s; a++) {
        v[a] = 0;
        for (int i = 0; i < m; i++) v[a] += (long double)A[i * n + cols[a]] * b[i];
        for (int c = 0; c < s; c++) {
            long double acc = 0;
            for (int i = 0; i < m; i++)
                acc += (long double)A[i * n + cols[a]] * A[i * n + cols[c]];
            M[a * s + c] = acc;
        }
    }
    double z[16];
    if (!gauss(M, v, s, z)) return 0;
    for (int a = 0; a < s; a++) x[cols[a]] = z[a];
    return 1;
}

static double resid2(const double *A, int m, int n, const double *b, const double *x) {
    double r2 = 0;
    for (int i = 0; i < m; i++) {
        double r = b[i];
        for (int j = 0; j < n; j++) r -= A[i * n + j] * x[j];
        r2 += r * r;
    }
    return r2;
}

/* NNLS optimum by brute force: the best feasible (all > 0) LS solution over
 * every subset of columns; the NNLS optimum is one of them. */
static double nnls_brute(const double *A, int m, int n, const double *b, double *best) {
    double br = INFINITY, x[16];
    for (unsigned set = 0; set < (1u << n); set++) {
        if (!ls_subset(A, m, n, b, set, x)) continue;
        int feasible = 1;
        for (int j = 0; j < n; j++)
            if ((set >> j & 1u) && !(x[j] > 0)) feasible = 0;
        if (!feasible) continue;
        double r = resid2(A, m, n, b, x);
        if (r < br) {
            br = r;
            memcpy(best, x, (size_t)n * sizeof *x);
        }
    }
    return br;
}

/* ---- features ---------------------------------------------------------------- */

static void test_features(ramp_rng *rng) {
    /* Section 2.3: 16 experts, 128 tokens. Balanced: 8 each. Skewed: four
     * experts with 30, eight with 1, four with none. */
    ramp_geometry g = {16, 8, 768, 2048, 0};
    int32_t balanced[16], skewed[16];
    for (int e = 0; e < 16; e++) {
        balanced[e] = 8;
        skewed[e] = e < 4 ? 30 : e < 12 ? 1 : 0;
    }
    ramp_config r8 = {8, 768, 2, 0, 0, 1, 0, 0, 0, 0}, r32 = {32, 768, 2, 0, 0, 1, 0, 0, 0, 0};
    ramp_features f;
    /* q = h / w = 1: T is the row-tile count of the paper's example. */
    ramp_features_compute(&r8, &g, 132, 2, 16, balanced, &f);
    CHECK_NEAR(f.tiles, 16, 0);
    CHECK_NEAR(f.active, 16, 0);
    CHECK_NEAR(f.waves, 1, 0);
    ramp_features_compute(&r8, &g, 132, 2, 16, skewed, &f);
    CHECK_NEAR(f.tiles, 24, 0);
    CHECK_NEAR(f.active, 12, 0);
    ramp_features_compute(&r32, &g, 132, 2, 16, balanced, &f);
    CHECK_NEAR(f.tiles, 16, 0);
    ramp_features_compute(&r32, &g, 132, 2, 16, skewed, &f);
    CHECK_NEAR(f.tiles, 12, 0);
    /* q = 768 / 256 = 3; W = ceil(T / (sms * blocks)). */
    ramp_config r8w = {8, 256, 4, 1, 0, 1, 0, 0, 0, 0};
    ramp_features_compute(&r8w, &g, 10, 1, 16, skewed, &f);
    CHECK_NEAR(f.tiles, 72, 0);
    CHECK_NEAR(f.waves, 8, 0);
    ramp_features_compute(&r8w, &g, 10, 3, 16, skewed, &f);
    CHECK_NEAR(f.waves, 3, 0);
    /* split-K doubles the tiles; a partial slice (h = 640, w = 256) counts. */
    ramp_config k2 = {8, 256, 4, 0, 0, 2, 0, 0, 0, 0};
    ramp_features_compute(&k2, &g, 10, 1, 16, skewed, &f);
    CHECK_NEAR(f.tiles, 144, 0);
    ramp_geometry g640 = {16, 8, 640, 2048, 0};
    ramp_features_compute(&r8w, &g640, 10, 1, 16, skewed, &f);
    CHECK_NEAR(f.tiles, 72, 0);
    /* Empty load: nothing. */
    int32_t zero[16] = {0};
    ramp_features_compute(&r8w, &g, 132, 1, 16, zero, &f);
    CHECK(f.tiles == 0 && f.waves == 0 && f.active == 0);

    /* Random loads against a direct count. */
    static const int rows[] = {2, 4, 6, 8, 12, 16, 24, 32, 48, 64};
    for (int trial = 0; trial < 200; trial++) {
        int32_t load[16];
        int nexp = 1 + (int)ramp_rng_below(rng, 16);
        int64_t act = 0;
        for (int e = 0; e < nexp; e++) {
            load[e] = ramp_rng_below(rng, 3) == 0 ? 0 : (int32_t)ramp_rng_below(rng, 700);
            act += load[e] > 0;
        }
        ramp_config c = {rows[ramp_rng_below(rng, 10)], 128 << ramp_rng_below(rng, 2), 3, 0, 0,
                         1 + (int)ramp_rng_below(rng, 2), 0, 0, 0, 0};
        int sms = 1 + (int)ramp_rng_below(rng, 140), bps = 1 + (int)ramp_rng_below(rng, 4);
        int64_t tiles = 0;
        for (int e = 0; e < nexp; e++) {
            int64_t n = load[e];
            while (n > 0) { tiles++; n -= c.rows; } /* one tile per started run */
        }
        tiles *= (768 / c.width) * c.splitk;
        int64_t waves = 0, left = tiles;
        while (left > 0) { waves++; left -= (int64_t)sms * bps; }
        ramp_features_compute(&c, &g, sms, bps, nexp, load, &f);
        CHECK_NEAR(f.tiles, (double)tiles, 0);
        CHECK_NEAR(f.waves, (double)waves, 0);
        CHECK_NEAR(f.active, (double)act, 0);
        double terms[4];
        ramp_costmodel_terms(RAMP_COSTMODEL_EQ3, &c, &g, sms, bps, nexp, load, terms);
        CHECK(terms[0] == 1 && terms[1] == waves && terms[2] == tiles && terms[3] == act);
        ramp_costmodel_terms(RAMP_COSTMODEL_TILECOUNT, &c, &g, sms, bps, nexp, load, terms);
        CHECK(terms[0] == 1 && terms[1] == tiles);
        CHECK_NEAR(terms[2], (double)tiles / sms, 1e-12);
        CHECK_NEAR(terms[3], log(1.0 + tiles), 1e-12);
    }
}

/* ---- NNLS ------------------------------------------------------------------- */

static void test_nnls_known(void) {
    /* Identity: the negative component is clamped to zero. */
    double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, b[3] = {1, -2, 3}, x[3] = {-7, -7, -7};
    CHECK_OK(ramp_nnls(I, 3, 3, b, x));
    CHECK_NEAR(x[0], 1, 1e-14);
    CHECK_NEAR(x[1], 0, 0);
    CHECK_NEAR(x[2], 3, 1e-14);

    /* Correlated columns where unconstrained LS goes negative:
     * b = 2 a1 - 1 a2 exactly; NNLS keeps only a1. */
    double A[4 * 2] = {1, 1, 1, 0.9, 1, 1.1, 1, 1.0};
    double bb[4];
    for (int i = 0; i < 4; i++) bb[i] = 2 * A[i * 2] - A[i * 2 + 1];
    double ols[2], nn[2], brute[2];
    CHECK_OK(ramp_ols(A, 4, 2, bb, ols));
    CHECK_NEAR(ols[0], 2, 1e-12);
    CHECK_NEAR(ols[1], -1, 1e-12);
    CHECK_OK(ramp_nnls(A, 4, 2, bb, nn));
    CHECK(nn[0] >= 0 && nn[1] >= 0);
    double br = nnls_brute(A, 4, 2, bb, brute);
    CHECK_NEAR(resid2(A, 4, 2, bb, nn), br, 1e-12);
    CHECK_NEAR(nn[0], brute[0], 1e-10);
    CHECK_NEAR(nn[1], 0, 0);

    /* A zero column gets zero; all-negative target gives zero. */
    double Z[3 * 2] = {0, 1, 0, 2, 0, 3}, bz[3] = {1, 2, 3}, xz[2];
    CHECK_OK(ramp_nnls(Z, 3, 2, bz, xz));
    CHECK_NEAR(xz[0], 0, 0);
    CHECK_NEAR(xz[1], 1, 1e-14);
    double bneg[3] = {-1, -2, -3};
    CHECK_OK(ramp_nnls(Z, 3, 2, bneg, xz));
    CHECK(xz[0] == 0 && xz[1] == 0);

    /* Errors. */
    double nan_a[2] = {NAN, 1}, one[2] = {1, 1}, xe[2];
    CHECK_ERR(ramp_nnls(nan_a, 2, 1, one, xe), RAMP_ERR_NUMERIC);
    CHECK_ERR(ramp_nnls(one, 2, 1, nan_a, xe), RAMP_ERR_NUMERIC);
    CHECK_ERR(ramp_nnls(one, 0, 1, one, xe), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_nnls(one, 1, 17, one, xe), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_nnls(NULL, 1, 1, one, xe), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_ols(nan_a, 2, 1, one, xe), RAMP_ERR_NUMERIC);
}

static void test_nnls_random(ramp_rng *rng) {
    int negative_cases = 0;
    for (int trial = 0; trial < 300; trial++) {
        int n = 1 + (int)ramp_rng_below(rng, 7);
        int m = (trial % 5 == 0) ? 1 + (int)ramp_rng_below(rng, (uint32_t)n) /* m <= n */
                                 : n + (int)ramp_rng_below(rng, 25);
        if (trial % 50 == 7) m = 3000; /* the QR-reduction path with many rows */
        double *A = malloc((size_t)m * n * sizeof *A), *b = malloc((size_t)m * sizeof *b);
        /* Correlated columns and a target with mixed-sign truth, so that
         * many active sets are visited. */
        double xt[16];
        for (int j = 0; j < n; j++) xt[j] = ramp_rng_normal(rng);
        for (int i = 0; i < m; i++) {
            double common = ramp_rng_normal(rng);
            b[i] = 0.3 * ramp_rng_normal(rng);
            for (int j = 0; j < n; j++) {
                A[i * n + j] = common + 0.5 * ramp_rng_normal(rng);
                b[i] += A[i * n + j] * xt[j];
            }
        }
        double x[16], brute[16], ols[16];
        for (int j = 0; j < n; j++) x[j] = NAN;
        CHECK_OK(ramp_nnls(A, m, n, b, x));
        double br = nnls_brute(A, m, n, b, brute);
        double r = resid2(A, m, n, b, x);
        for (int j = 0; j < n; j++) CHECK(x[j] >= 0);
        CHECK(r <= br * (1 + 1e-9) + 1e-12);
        if (m >= n + 2) { /* unique optimum: the coefficients agree too */
            for (int j = 0; j < n; j++) CHECK_NEAR(x[j], brute[j], 1e-7 * (1 + fabs(brute[j])));
            CHECK_OK(ramp_ols(A, m, n, b, ols));
            int neg = 0;
            for (int j = 0; j < n; j++) neg |= ols[j] < 0;
            negative_cases += neg;
        }
        free(A);
        free(b);
    }
    CHECK(negative_cases > 30); /* the active-set cases really were exercised */
}

/* ---- OLS --------------------------------------------------------------------- */

static void test_ols(ramp_rng *rng) {
    for (int trial = 0; trial < 100; trial++) {
        int n = 1 + (int)ramp_rng_below(rng, 6), m = n + (int)ramp_rng_below(rng, 20);
        double A[30 * 6], b[30], xt[6], x[6], ref[6];
        for (int j = 0; j < n; j++) xt[j] = 10 * ramp_rng_normal(rng);
        for (int i = 0; i < m; i++) {
            b[i] = 0;
            for (int j = 0; j < n; j++) {
                A[i * n + j] = ramp_rng_normal(rng);
                b[i] += A[i * n + j] * xt[j];
            }
        }
        CHECK_OK(ramp_ols(A, m, n, b, x)); /* exact data: exact answer */
        for (int j = 0; j < n; j++) CHECK_NEAR(x[j], xt[j], 1e-9 * (1 + fabs(xt[j])));
        for (int i = 0; i < m; i++) b[i] += ramp_rng_normal(rng);
        CHECK_OK(ramp_ols(A, m, n, b, x)); /* noisy: the normal equations' answer */
        if (ls_subset(A, m, n, b, (1u << n) - 1, ref))
            for (int j = 0; j < n; j++) CHECK_NEAR(x[j], ref[j], 1e-8 * (1 + fabs(ref[j])));
    }
    /* Rank-deficient: a repeated column. The fit equals the fit without it. */
    double A[20 * 3], A2[20 * 2], b[20], x[3], ref[2];
    for (int i = 0; i < 20; i++) {
        A[i * 3] = A2[i * 2] = ramp_rng_normal(rng);
        A[i * 3 + 1] = A2[i * 2 + 1] = ramp_rng_normal(rng);
        A[i * 3 + 2] = A[i * 3];
        b[i] = ramp_rng_normal(rng);
    }
    CHECK_OK(ramp_ols(A, 20, 3, b, x));
    CHECK(ls_subset(A2, 20, 2, b, 3, ref));
    CHECK_NEAR(resid2(A, 20, 3, b, x), resid2(A2, 20, 2, b, ref), 1e-9);
    CHECK(x[0] == 0 || x[2] == 0); /* one of the twins dropped */
    CHECK_NEAR(x[0] + x[2], ref[0], 1e-9);
    /* Underdetermined: an exact fit. */
    double U[2 * 4] = {1, 2, 3, 4, 2, 1, 0, 5}, bu[2] = {3, -1}, xu[4];
    CHECK_OK(ramp_ols(U, 2, 4, bu, xu));
    CHECK_NEAR(resid2(U, 2, 4, bu, xu), 0, 1e-20);
}

/* ---- Spearman ----------------------------------------------------------------- */

static double spearman_ref(const double *a, const double *b, int n) {
    double ra[64], rb[64];
    for (int i = 0; i < n; i++) {
        int lt = 0, eq = 0, lt2 = 0, eq2 = 0;
        for (int j = 0; j < n; j++) {
            lt += a[j] < a[i]; eq += a[j] == a[i];
            lt2 += b[j] < b[i]; eq2 += b[j] == b[i];
        }
        ra[i] = lt + (eq + 1) / 2.0;
        rb[i] = lt2 + (eq2 + 1) / 2.0;
    }
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (int i = 0; i < n; i++) { ma += ra[i] / n; mb += rb[i] / n; }
    for (int i = 0; i < n; i++) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    return sab / sqrt(saa * sbb);
}

static void test_spearman(ramp_rng *rng) {
    double a[5] = {1, 2, 3, 4, 5}, b[5] = {5, 6, 7, 8, 7}, rev[5] = {9, 7, 5, 3, 1};
    CHECK_NEAR(ramp_spearman(a, b, 5), 8.0 / sqrt(95.0), 1e-12);
    CHECK_NEAR(ramp_spearman(a, a, 5), 1.0, 1e-15);
    CHECK_NEAR(ramp_spearman(a, rev, 5), -1.0, 1e-15);
    double c[4] = {1, 1, 2, 3}, d[4] = {1, 2, 2, 3};
    CHECK_NEAR(ramp_spearman(c, d, 4), 3.75 / 4.5, 1e-12);
    double k[3] = {2, 2, 2};
    CHECK(isnan(ramp_spearman(k, a, 3)));
    CHECK(isnan(ramp_spearman(a, b, 1)));
    double withnan[3] = {1, NAN, 2};
    CHECK(isnan(ramp_spearman(withnan, a, 3)));
    for (int trial = 0; trial < 200; trial++) {
        int n = 2 + (int)ramp_rng_below(rng, 40);
        double x[64], y[64];
        for (int i = 0; i < n; i++) {
            x[i] = (double)ramp_rng_below(rng, 8); /* many ties */
            y[i] = x[i] + (double)ramp_rng_below(rng, 5);
        }
        double ref = spearman_ref(x, y, n), got = ramp_spearman(x, y, n);
        if (isnan(ref)) CHECK(isnan(got));
        else CHECK_NEAR(got, ref, 1e-12);
    }
}

/* ---- the fit on synthetic datasets -------------------------------------------- */

/* The fits below recover a truth whose wave is sms * blocks_per_sm (or sms)
 * exactly: the RMS-error choice of S_c and the plain NNLS of eval v2 (the
 * default starts every S_c at sms and moves it only for the picks, which a
 * noiseless capacity-step truth does not always reach: test_fit_wave_picks). */
static const ramp_costmodel_fit_options RMSE_FIT = {RAMP_WAVE_RMSE, 1};

static void test_fit_recovers_truth(ramp_rng *rng) {
    syn_params sp;
    syn_defaults(&sp);
    sp.batches = 12;
    double theta[48];
    ramp_timing *t = syn_dataset(rng, &sp, theta);
    if (!t) return;
    /* Noiseless: theta recovered (up to the float rounding of the times). */
    ramp_costmodel *m = NULL;
    CHECK_OK(ramp_costmodel_fit_opt(t, NULL, RAMP_COSTMODEL_EQ3, &RMSE_FIT, &m));
    if (m) {
        for (int c = 0; c < t->nconfigs; c++) {
            CHECK_EQ_INT(m->rows[c], t->nloads);
            CHECK(m->rel_rmse[c] < 1e-6);
            for (int k = 0; k < 4; k++)
                CHECK_NEAR(m->theta[c * 4 + k], theta[c * 4 + k], 1e-4 * theta[c * 4 + k] + 1e-7);
        }
        ramp_costmodel_diag dg;
        CHECK_OK(ramp_costmodel_diagnose(m, t, NULL, NULL, 0, &dg));
        CHECK_EQ_INT(dg.loads, t->nloads);
        CHECK_NEAR(dg.spearman_median, 1.0, 1e-12);
        CHECK(dg.pick_err_median < 1e-6);
        CHECK(dg.pick_gap_mean < 1e-6);
        /* Predictions: one config and all configs agree with the truth. */
        double pred[12];
        for (int64_t i = 0; i < t->nloads; i += 7) {
            const int32_t *ld = t->loads + i * t->max_experts;
            ramp_costmodel_predict_all(m, t->nexp[i], ld, pred);
            for (int c = 0; c < t->nconfigs; c++) {
                double truth = syn_time(t, theta, c, t->nexp[i], ld, 0);
                CHECK_NEAR(pred[c], truth, 1e-5 * truth);
                CHECK_NEAR(ramp_costmodel_predict(m, c, t->nexp[i], ld), pred[c], 1e-9 * pred[c]);
            }
            int pick = -1, cand[3] = {11, 3, 5};
            CHECK_OK(ramp_costmodel_pick(m, t->nexp[i], ld, cand, 3, &pick));
            CHECK(pick == 11 || pick == 3 || pick == 5);
            for (int j = 0; j < 3; j++) CHECK(pred[pick] <= pred[cand[j]]);
        }
        ramp_costmodel_free(m);
    }

    /* Noisy and with a training mask: theta near the truth; the fit is the
     * NNLS of the rows scaled by 1/t (relative error), recomputed here. */
    for (int64_t i = 0; i < t->nloads; i++)
        for (int c = 0; c < t->nconfigs; c++)
            t->times_us[i * t->nconfigs + c] *= (float)(1.0 + 0.01 * ramp_rng_normal(rng));
    uint8_t *mask = calloc((size_t)t->nloads, 1);
    int64_t nm = 0;
    for (int64_t i = 0; i < t->nloads; i++) nm += mask[i] = (i % 3) != 0;
    /* Times outside the mask must not matter: poison them. */
    for (int64_t i = 0; i < t->nloads; i++)
        if (!mask[i])
            for (int c = 0; c < t->nconfigs; c++) t->times_us[i * t->nconfigs + c] = 1e30f;
    CHECK_OK(ramp_costmodel_fit_opt(t, mask, RAMP_COSTMODEL_EQ3, &RMSE_FIT, &m));
    if (m) {
        double *A = malloc((size_t)nm * 4 * sizeof *A), *one = malloc((size_t)nm * sizeof *one);
        for (int c = 0; c < t->nconfigs; c++) {
            CHECK_EQ_INT(m->rows[c], nm);
            /* 1% noise does not hide a wrong wave size: the true S_c wins. */
            CHECK_EQ_INT(m->slots[c], t->sms * t->blocks_per_sm[c]);
            int64_t r = 0;
            for (int64_t i = 0; i < t->nloads; i++) {
                if (!mask[i]) continue;
                double terms[4];
                ramp_costmodel_terms_slots(RAMP_COSTMODEL_EQ3, &t->configs[c], &t->geom, t->sms,
                                           m->slots[c], t->nexp[i],
                                           t->loads + i * t->max_experts, terms);
                for (int k = 0; k < 4; k++) A[r * 4 + k] = terms[k] / t->times_us[i * t->nconfigs + c];
                one[r++] = 1.0;
            }
            double x[4];
            CHECK_OK(ramp_nnls(A, (int)nm, 4, one, x));
            for (int k = 0; k < 4; k++) {
                CHECK_NEAR(m->theta[c * 4 + k], x[k], 1e-9 * (1 + x[k]));
                CHECK(m->theta[c * 4 + k] >= 0);
            }
            /* Near the truth in prediction (1% noise -> a few % at most). */
            double worst = 0;
            for (int64_t i = 0; i < t->nloads; i += 5) {
                const int32_t *ld = t->loads + i * t->max_experts;
                double truth = syn_time(t, theta, c, t->nexp[i], ld, 0);
                worst = fmax(worst, fabs(ramp_costmodel_predict(m, c, t->nexp[i], ld) / truth - 1));
            }
            CHECK(worst < 0.03);
        }
        free(A);
        free(one);
        ramp_costmodel_free(m);
    }
    free(mask);

    /* A configuration never timed (NaN) stays unfit and is never picked. */
    for (int64_t i = 0; i < t->nloads; i++) t->times_us[i * t->nconfigs + 4] = NAN;
    CHECK_OK(ramp_costmodel_fit_opt(t, NULL, RAMP_COSTMODEL_EQ3, &RMSE_FIT, &m));
    if (m) {
        CHECK_EQ_INT(m->rows[4], 0);
        CHECK(isinf(ramp_costmodel_predict(m, 4, t->nexp[0], t->loads)));
        int only4 = 4, pick;
        CHECK_ERR(ramp_costmodel_pick(m, t->nexp[0], t->loads, &only4, 1, &pick), RAMP_ERR_NUMERIC);
        ramp_costmodel_free(m);
    }
    /* Bad times and masks. */
    t->times_us[3] = -1.0f;
    CHECK_ERR(ramp_costmodel_fit(t, NULL, RAMP_COSTMODEL_EQ3, &m), RAMP_ERR_NUMERIC);
    CHECK(strstr(ramp_last_error(), "load 0") != NULL);
    t->times_us[3] = INFINITY;
    CHECK_ERR(ramp_costmodel_fit(t, NULL, RAMP_COSTMODEL_EQ3, &m), RAMP_ERR_NUMERIC);
    uint8_t *none = calloc((size_t)t->nloads, 1);
    CHECK_ERR(ramp_costmodel_fit(t, none, RAMP_COSTMODEL_EQ3, &m), RAMP_ERR_INVALID_ARGUMENT);
    free(none);
    CHECK_ERR(ramp_costmodel_fit(NULL, NULL, RAMP_COSTMODEL_EQ3, &m), RAMP_ERR_INVALID_ARGUMENT);
    ramp_timing_free(t);
}

/* The wave size S_c (Equation 3's W = ceil(T / S_c)): times that step every
 * sms tiles although two blocks fit per SM (a kernel whose second resident
 * block adds nothing, as v1 on the H200). The fit must choose S_c = sms for
 * those configurations and then predict exactly; with S_c = sms * 2, the
 * assumption before, it cannot. Plans carry S_c to the CPU pick and the
 * selection kernel's entries. */
static void test_fit_wave_size(ramp_rng *rng) {
    syn_params sp;
    syn_defaults(&sp);
    sp.batches = 12;
    sp.wave_sms = 1;
    double theta[48];
    ramp_timing *t = syn_dataset(rng, &sp, theta);
    if (!t) return;
    int two = 0;
    for (int c = 0; c < t->nconfigs; c++) two += t->blocks_per_sm[c] == 2;
    CHECK(two > 0); /* the test needs configurations where the two differ */
    /* Loads whose tiles fall between sms and 2 sms exist for every
     * configuration: there the two wave sizes disagree. */
    for (int c = 0; c < t->nconfigs; c++) {
        int between = 0;
        for (int64_t i = 0; i < t->nloads; i++) {
            ramp_features f;
            ramp_features_compute(&t->configs[c], &t->geom, t->sms, 1, t->nexp[i],
                                  t->loads + i * t->max_experts, &f);
            between += f.tiles > t->sms && f.tiles <= 2 * t->sms;
        }
        CHECK(between > 0);
    }
    ramp_costmodel *m = NULL;
    CHECK_OK(ramp_costmodel_fit_opt(t, NULL, RAMP_COSTMODEL_EQ3, &RMSE_FIT, &m));
    if (!m) { ramp_timing_free(t); return; }
    for (int c = 0; c < t->nconfigs; c++) {
        CHECK_EQ_INT(m->slots[c], t->sms);
        CHECK_EQ_INT(ramp_costmodel_slots(m, c), t->sms);
        CHECK(m->rel_rmse[c] < 1e-6);
        for (int k = 0; k < 4; k++)
            CHECK_NEAR(m->theta[c * 4 + k], theta[c * 4 + k], 1e-4 * theta[c * 4 + k] + 1e-7);
    }
    double worst_default = 0;
    for (int64_t i = 0; i < t->nloads; i++) {
        const int32_t *ld = t->loads + i * t->max_experts;
        for (int c = 0; c < t->nconfigs; c++) {
            double truth = syn_time_w(t, theta, c, t->nexp[i], ld, 0, 1);
            CHECK_NEAR(ramp_costmodel_predict(m, c, t->nexp[i], ld), truth, 1e-5 * truth);
            /* The old assumption, sms * blocks_per_sm, with the true theta. */
            double old = syn_time_w(t, theta, c, t->nexp[i], ld, 0, 0);
            worst_default = fmax(worst_default, fabs(old / truth - 1));
        }
    }
    CHECK(worst_default > 0.05); /* the wrong wave size is visibly wrong */
    ramp_costmodel_free(m);

    /* The plan carries S_c: written, read back, used by the CPU pick and in
     * the selection kernel's entries. */
    CHECK_OK(ramp_costmodel_fit_opt(t, NULL, RAMP_COSTMODEL_EQ3, &RMSE_FIT, &m));
    ramp_menu menu;
    CHECK_OK(ramp_menu_greedy(t, NULL, 6, 2, NULL, &menu));
    ramp_plan plan, back;
    CHECK_OK(ramp_plan_make(t, &menu, m, &plan));
    for (int i = 0; i < plan.count; i++) {
        CHECK_EQ_INT(plan.slots[i], t->sms);
        CHECK_EQ_INT(ramp_plan_slots(&plan, i), t->sms);
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/plan_wave.json", check_tmpdir());
    CHECK_OK(ramp_plan_write(&plan, path));
    CHECK_OK(ramp_plan_read(path, &back));
    for (int i = 0; i < plan.count; i++) CHECK_EQ_INT(back.slots[i], t->sms);
    remove(path);
    for (int64_t i = 0; i < t->nloads; i++) {
        const int32_t *ld = t->loads + i * t->max_experts;
        int c = -1;
        CHECK_OK(ramp_costmodel_pick(m, t->nexp[i], ld, menu.config, menu.count, &c));
        int p = ramp_plan_pick(&back, t->nexp[i], ld);
        /* Same pick, or a tie in prediction. */
        CHECK(menu.config[p] == c ||
              ramp_costmodel_predict(m, menu.config[p], t->nexp[i], ld) ==
                  ramp_costmodel_predict(m, c, t->nexp[i], ld));
        for (int e = 0; e < back.count; e++) {
            ramp_select_entry se;
            CHECK_OK(ramp_select_entry_from_plan(&back, e, &se));
            CHECK_EQ_INT(se.slots, t->sms);
            double want = ramp_costmodel_predict(m, menu.config[e], t->nexp[i], ld);
            float got = ramp_select_predict(&se, t->nexp[i], ld);
            CHECK_NEAR((double)got, want, 1e-4 * want + 1e-4);
        }
    }
    /* A plan without "slots" (before S_c was fit) uses sms * occupancy. */
    ramp_plan old = back;
    for (int i = 0; i < old.count; i++) old.slots[i] = 0;
    for (int i = 0; i < old.count; i++)
        CHECK_EQ_INT(ramp_plan_slots(&old, i), old.sms * old.blocks_per_sm);
    ramp_select_entry se0;
    CHECK_OK(ramp_select_entry_from_plan(&old, 0, &se0));
    CHECK_EQ_INT(se0.slots, old.sms * old.blocks_per_sm);
    /* Written without "slots", read back the same (and checksummed). */
    old.checksum = 0;
    CHECK_OK(ramp_plan_write(&old, path));
    ramp_plan old_back;
    CHECK_OK(ramp_plan_read(path, &old_back));
    CHECK(old_back.checksum == 1);
    old_back.checksum = 0;
    CHECK(memcmp(&old_back, &old, sizeof old) == 0);
    remove(path);
    /* Out of range: more than the resident capacity. */
    old.slots[0] = old.sms * old.blocks_per_sm + 1;
    CHECK_ERR(ramp_plan_validate(&old), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "slots") != NULL);
    ramp_costmodel_free(m);
    ramp_timing_free(t);
}

static void test_fit_tilecount(ramp_rng *rng) {
    syn_params sp;
    syn_defaults(&sp);
    sp.batches = 8;
    sp.ndomains = 2;
    sp.tilecount_truth = 1;
    double theta[48];
    ramp_timing *t = syn_dataset(rng, &sp, theta);
    if (!t) return;
    ramp_costmodel *m = NULL;
    CHECK_OK(ramp_costmodel_fit(t, NULL, RAMP_COSTMODEL_TILECOUNT, &m));
    if (m) {
        /* T and T/sms are collinear: the coefficients are not unique, the
         * predictions are. */
        for (int64_t i = 0; i < t->nloads; i += 3)
            for (int c = 0; c < t->nconfigs; c++) {
                const int32_t *ld = t->loads + i * t->max_experts;
                double truth = syn_time(t, theta, c, t->nexp[i], ld, 1);
                CHECK_NEAR(ramp_costmodel_predict(m, c, t->nexp[i], ld), truth, 1e-5 * truth);
            }
        ramp_costmodel_free(m);
    }
    ramp_timing_free(t);
}

/* A tiny dataset for the two fit choices of eval-2026-11-30-gap.md, every
 * value by hand. sms = 4, two experts, inter = width = 128 (q = 1).
 *   A: 2-row tiles (T = n_0/2 + n_1/2), 2 blocks/SM: S_c is 4 or 8. Loads
 *      (4,0) (6,6) (10,10) (14,14): T = 2, 6, 10, 14; its time steps at 8
 *      tiles: 10, 10, 20, 20 us (= 10 * ceil(T / 8)).
 *   B: 16-row tiles (T = active experts <= 2, one wave), 1 block/SM: 16.5
 *      us on every load.
 * Best: A, A, B, B. */
static ramp_timing *tiny_two(void) {
    ramp_config cfg[2] = {{2, 128, 2, 0, 0, 1, 0, 0, 0, 0}, {16, 128, 2, 0, 0, 1, 0, 0, 0, 0}};
    int bps[2] = {2, 1};
    ramp_geometry g = {2, 1, 128, 2048, 0};
    ramp_timing *t = NULL;
    CHECK_OK(ramp_timing_create("tiny", "EP2", &g, 4, cfg, bps, 2, &t));
    if (!t) return NULL;
    int dom = ramp_timing_domain_index(t, "chat");
    const int32_t loads[4][2] = {{4, 0}, {6, 6}, {10, 10}, {14, 14}};
    const float ta[4] = {10, 10, 20, 20};
    for (int i = 0; i < 4; i++) {
        int64_t idx;
        CHECK_OK(ramp_timing_add_load(t, i, 0, dom, loads[i][0] + loads[i][1], 2, loads[i], &idx));
        t->times_us[idx * 2 + 0] = ta[i];
        t->times_us[idx * 2 + 1] = 16.5f;
    }
    return t;
}

/* theta_0 and the W term: B's loads are all one wave, so 1 and W are the
 * same column. The penalised fit (default) puts B's 16.5 us on W: theta_B =
 * (0, 16.5, 0, 0), so two waves are predicted 2 * 16.5 = 33 us (the plain
 * NNLS may put it all on theta_0 and predict 16.5: DeepSeek-V3's knowledge
 * batch in eval-2026-11-30-gap.md). */
static void test_fit_intercept(void) {
    ramp_timing *t = tiny_two();
    if (!t) return;
    ramp_costmodel *m = NULL;
    CHECK_OK(ramp_costmodel_fit(t, NULL, RAMP_COSTMODEL_EQ3, &m));
    if (m) {
        CHECK(m->theta[4 + 0] == 0.0);
        CHECK_NEAR(m->theta[4 + 1], 16.5, 1e-6 * 16.5);
        CHECK_NEAR(m->theta[4 + 2], 0.0, 1e-9);
        CHECK_NEAR(m->theta[4 + 3], 0.0, 1e-9);
        CHECK_EQ_INT(m->slots[1], 4);
        /* Two waves (T = 2 tiles at S_c = 1): 33 us. */
        double terms[4];
        const int32_t ld[2] = {1, 1};
        ramp_costmodel_terms_slots(RAMP_COSTMODEL_EQ3, &t->configs[1], &t->geom, t->sms, 1, 2, ld,
                                   terms);
        CHECK_NEAR(terms[1], 2.0, 0);
        double p = 0;
        for (int k = 0; k < 4; k++) p += m->theta[4 + k] * terms[k];
        CHECK_NEAR(p, 33.0, 1e-6 * 33);
        ramp_costmodel_free(m);
    }
    /* The paper's plain NNLS: the same fit (16.5 on every load), the split
     * between theta_0 and theta_1 left to the solver. */
    ramp_costmodel_fit_options free_fit = {RAMP_WAVE_PICKS, 1};
    CHECK_OK(ramp_costmodel_fit_opt(t, NULL, RAMP_COSTMODEL_EQ3, &free_fit, &m));
    if (m) {
        CHECK_NEAR(m->theta[4 + 0] + m->theta[4 + 1], 16.5, 1e-6 * 16.5);
        ramp_costmodel_free(m);
    }
    ramp_timing_free(t);
}

/* S_c by the picks (default) against the others, on tiny_two. At S_c = 4
 * A's penalised NNLS is theta = (5.16851581, 3.59551555, 0, 0) (computed by
 * enumerating the supports): predictions 8.764, 12.360, 15.955, 19.551 us,
 * so load 2 picks A (20 us) over B (16.5): a mispick. At S_c = 8 the fit is
 * exact, theta = (0, 10, 0, 0), and every pick is the best. PICKS starts
 * at 4 and must move A to 8; SMS keeps 4; CAPACITY and RMSE take 8. */
static void test_fit_wave_picks(void) {
    ramp_timing *t = tiny_two();
    if (!t) return;
    static const struct { ramp_wave_fit w; int slots_a; } cases[] = {
        {RAMP_WAVE_PICKS, 8}, {RAMP_WAVE_SMS, 4}, {RAMP_WAVE_CAPACITY, 8}, {RAMP_WAVE_RMSE, 8}};
    for (int k = 0; k < 4; k++) {
        ramp_costmodel_fit_options fo = {cases[k].w, 0};
        ramp_costmodel *m = NULL;
        CHECK_OK(ramp_costmodel_fit_opt(t, NULL, RAMP_COSTMODEL_EQ3, &fo, &m));
        if (!m) continue;
        CHECK_EQ_INT(m->slots[0], cases[k].slots_a);
        CHECK_EQ_INT(m->slots[1], 4);
        const double want8[4] = {0, 10, 0, 0}, want4[4] = {5.16851581, 3.59551555, 0, 0};
        const double *w = cases[k].slots_a == 8 ? want8 : want4;
        for (int j = 0; j < 4; j++) CHECK_NEAR(m->theta[j], w[j], 1e-6 * (1 + w[j]));
        const int want_pick[4] = {0, 0, cases[k].slots_a == 8 ? 1 : 0, 1};
        for (int64_t i = 0; i < 4; i++) {
            int c = -1;
            CHECK_OK(ramp_costmodel_pick(m, 2, t->loads + i * t->max_experts, NULL, 0, &c));
            CHECK_EQ_INT(c, want_pick[i]);
        }
        ramp_costmodel_free(m);
    }
    CHECK_EQ_INT(strcmp(ramp_wave_fit_name(RAMP_WAVE_PICKS), "picks"), 0);
    ramp_wave_fit w;
    CHECK_OK(ramp_wave_fit_parse("capacity", &w));
    CHECK_EQ_INT(w, RAMP_WAVE_CAPACITY);
    CHECK_ERR(ramp_wave_fit_parse("waves", &w), RAMP_ERR_INVALID_ARGUMENT);
    ramp_timing_free(t);
}

/* ---- Equation 3 + pairs (RAMP_COSTMODEL_EQ3_PAIRS) ----------------------------- */

#define PAIRS_CONFIGS 6
#define PAIRS_EXPERTS 16

/* Times that follow theta . (1, W, T, A, P) with a real pairs coefficient.
 * Six configurations, rows {16, 32, 64} x width {128, 256} (q = 6 or 3),
 * one block per SM, 16 SMs. The first nflat loads are "flat": all 16
 * experts hold 1..16 tokens, so every expert is one row tile under every
 * configuration and T = 16 q, W = ceil(T / 16), A = 16 on each of them,
 * while P runs from 16 (load 0) to 256 (load 1): kernel v2's case where
 * Equation 3 sees nothing change. The nmixed loads after them (empty experts,
 * up to 200 tokens) make W, T and A vary, so all five terms are
 * identifiable. theta: [PAIRS_CONFIGS * 5] out. */
static ramp_timing *pairs_dataset(ramp_rng *rng, int nflat, int nmixed, double *theta) {
    ramp_config cfg[PAIRS_CONFIGS];
    int bps[PAIRS_CONFIGS];
    static const int rows[3] = {16, 32, 64}, widths[2] = {128, 256};
    for (int r = 0; r < 3; r++)
        for (int w = 0; w < 2; w++) {
            ramp_config x = {rows[r], widths[w], 4, 1, 0, 1, 0, 0, 0, 0};
            cfg[r * 2 + w] = x;
            bps[r * 2 + w] = 1;
        }
    ramp_geometry g = {PAIRS_EXPERTS, 8, 768, 2048, 0};
    ramp_timing *t = NULL;
    CHECK_OK(ramp_timing_create("pairs", "EP8", &g, 16, cfg, bps, PAIRS_CONFIGS, &t));
    if (!t) return NULL;
    for (int c = 0; c < PAIRS_CONFIGS; c++) {
        double b = cfg[c].rows, *th = theta + c * 5;
        th[0] = 2.0 + ramp_rng_uniform(rng);
        th[1] = (1.0 + 0.01 * b) * (0.8 + 0.4 * ramp_rng_uniform(rng));
        th[2] = 0.0005 * b * (0.8 + 0.4 * ramp_rng_uniform(rng));
        th[3] = 0.05 * (0.5 + ramp_rng_uniform(rng));
        th[4] = 0.04 * (0.75 + 0.5 * ramp_rng_uniform(rng)); /* >= 0.03 us per pair */
    }
    int dom = ramp_timing_domain_index(t, "chat");
    for (int i = 0; i < nflat + nmixed; i++) {
        int32_t load[PAIRS_EXPERTS];
        /* Flat: a per-load cap so that P spans its range, not just its mean. */
        int cap = i == 0 ? 1 : i == 1 ? 16 : 1 + (int)ramp_rng_below(rng, 16);
        int32_t tokens = 0;
        for (int e = 0; e < PAIRS_EXPERTS; e++) {
            if (i < nflat) load[e] = 1 + (int32_t)ramp_rng_below(rng, (uint64_t)cap);
            else load[e] = ramp_rng_below(rng, 10) < 3 ? 0 : 1 + (int32_t)ramp_rng_below(rng, 200);
            tokens += load[e];
        }
        int64_t idx = -1;
        CHECK_OK(ramp_timing_add_load(t, i, 0, dom, tokens, PAIRS_EXPERTS, load, &idx));
        if (idx < 0) continue;
        for (int c = 0; c < PAIRS_CONFIGS; c++) {
            double terms[RAMP_COST_TERMS_MAX], v = 0;
            ramp_costmodel_terms(RAMP_COSTMODEL_EQ3_PAIRS, &cfg[c], &g, 16, 1, PAIRS_EXPERTS,
                                 load, terms);
            for (int k = 0; k < 5; k++) v += theta[c * 5 + k] * terms[k];
            t->times_us[idx * PAIRS_CONFIGS + c] = (float)v;
        }
    }
    return t;
}

static double pairs_truth(const ramp_timing *t, const double *theta, int c, int64_t i) {
    double terms[RAMP_COST_TERMS_MAX], v = 0;
    ramp_costmodel_terms(RAMP_COSTMODEL_EQ3_PAIRS, &t->configs[c], &t->geom, t->sms, 1,
                         t->nexp[i], t->loads + i * t->max_experts, terms);
    for (int k = 0; k < 5; k++) v += theta[c * 5 + k] * terms[k];
    return v;
}

/* The twin's pick on one load against the model's pick over the menu:
 * 1 if the twin picked what the model picks (or a configuration whose
 * double prediction ties it to float rounding), else 0 and a message. */
static int twin_agrees(const ramp_costmodel *m, const ramp_menu *menu,
                       const ramp_select_desc *d, int nexp, const int32_t *load,
                       const char *what, int64_t i) {
    /* ids: one token per pair, k = 1, so the twin's counts are the load */
    int tokens = 0;
    for (int e = 0; e < nexp; e++) tokens += load[e];
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)(tokens ? tokens : 1));
    ramp_select_result *r = NULL;
    int ok = 0;
    CHECK_OK(ramp_select_result_create(d, &r));
    if (ids && r) {
        int n = 0;
        for (int e = 0; e < nexp; e++)
            for (int j = 0; j < load[e]; j++) ids[n++] = e;
        CHECK_OK(ramp_select_cpu(d, tokens, ids, r));
        CHECK_EQ_INT(r->meta[RAMP_SELECT_META_LOCAL], tokens);
        int want = -1;
        CHECK_OK(ramp_costmodel_pick(m, nexp, load, menu->config, menu->count, &want));
        const int got = menu->config[r->meta[RAMP_SELECT_META_CHOSEN]];
        const double pg = ramp_costmodel_predict(m, got, nexp, load);
        const double pw = ramp_costmodel_predict(m, want, nexp, load);
        ok = got == want || fabs(pg - pw) <= 1e-6 * pw;
        if (!ok)
            fprintf(stderr, "%s load %lld: twin picks config %d (%.9g us), the model %d (%.9g)\n",
                    what, (long long)i, got, pg, want, pw);
    }
    CHECK(ok);
    ramp_select_result_free(r);
    free(ids);
    return ok;
}

/* Serving Equation 3 + pairs: the plan carries the fifth term, and the
 * selection kernel's CPU twin, given the plan's entries, picks what the
 * five-term model picks over the menu on every load of the dataset and on
 * random ones; and the five-term plan reads back exactly. */
static void pairs_served(ramp_rng *rng, const ramp_timing *t, const ramp_costmodel *m) {
    ramp_menu menu;
    ramp_plan plan;
    CHECK_OK(ramp_menu_greedy(t, NULL, PAIRS_CONFIGS, 1, NULL, &menu));
    CHECK_OK(ramp_plan_make(t, &menu, m, &plan));
    CHECK_EQ_INT(plan.cost_model, RAMP_COSTMODEL_EQ3_PAIRS);
    ramp_select_desc d = {.experts = PAIRS_EXPERTS, .topk = 1, .max_tokens = PAIRS_EXPERTS * 200,
                          .local_experts = PAIRS_EXPERTS, .first_expert = 0,
                          .nentries = plan.count};
    ramp_select_desc d4;
    int pairs_coef = 0;
    for (int e = 0; e < plan.count; e++) {
        const int c = menu.config[e];
        for (int k = 0; k < 5; k++) CHECK(plan.theta[e][k] == m->theta[c * 5 + k]);
        pairs_coef += plan.theta[e][4] > 0;
        CHECK_OK(ramp_select_entry_from_plan(&plan, e, &d.entries[e]));
        CHECK(d.entries[e].theta[4] == (float)plan.theta[e][4]);
    }
    CHECK(pairs_coef > 0);
    d4 = d;
    for (int e = 0; e < plan.count; e++) d4.entries[e].theta[4] = 0;
    int agree = 0, differs4 = 0;
    int32_t load[PAIRS_EXPERTS];
    for (int64_t i = 0; i < t->nloads + 300; i++) {
        const int32_t *ld = t->loads + (i < t->nloads ? i : 0) * t->max_experts;
        if (i >= t->nloads) { /* random loads: flat ones, then with empty experts */
            const int cap = 1 + (int)ramp_rng_below(rng, 16);
            for (int e = 0; e < PAIRS_EXPERTS; e++)
                load[e] = i < t->nloads + 150 ? 1 + (int32_t)ramp_rng_below(rng, (uint64_t)cap)
                          : ramp_rng_below(rng, 4) == 0 ? 0 : (int32_t)ramp_rng_below(rng, 200);
            ld = load;
        }
        agree += twin_agrees(m, &menu, &d, PAIRS_EXPERTS, ld, "eq3+pairs twin", i);
        /* the plan's own CPU pick (double) agrees with the model's too */
        int want = -1;
        CHECK_OK(ramp_costmodel_pick(m, PAIRS_EXPERTS, ld, menu.config, menu.count, &want));
        CHECK_EQ_INT(menu.config[ramp_plan_pick(&plan, PAIRS_EXPERTS, ld)], want);
        /* what the kernel picked before the fifth term */
        int32_t cnt[PAIRS_EXPERTS];
        memcpy(cnt, ld, sizeof cnt);
        float best4 = INFINITY, best5 = INFINITY;
        int p4 = 0, p5 = 0;
        for (int e = 0; e < plan.count; e++) {
            const float v4 = ramp_select_predict(&d4.entries[e], PAIRS_EXPERTS, cnt);
            const float v5 = ramp_select_predict(&d.entries[e], PAIRS_EXPERTS, cnt);
            if (v4 < best4) { best4 = v4; p4 = e; }
            if (v5 < best5) { best5 = v5; p5 = e; }
        }
        differs4 += p4 != p5;
    }
    CHECK_EQ_INT(agree, t->nloads + 300);
    /* how often the fifth term changes the pick depends on the seed's fit
     * (0 to every load); test_select_cpu's worked example pins one case */
    printf("eq3+pairs served: the twin agrees with the model on %d of %lld loads; "
           "without theta4 it would pick otherwise on %d\n", agree, (long long)t->nloads + 300,
           differs4);

    /* The five-term plan round trip: file, checksum, every field. */
    char path[1024];
    snprintf(path, sizeof path, "%s/plan_pairs.json", check_tmpdir());
    CHECK_OK(ramp_plan_write(&plan, path));
    ramp_plan back;
    memset(&back, 0, sizeof back);
    CHECK_OK(ramp_plan_read(path, &back));
    CHECK(back.checksum == 1);
    back.checksum = 0;
    CHECK(memcmp(&back, &plan, sizeof plan) == 0);
    remove(path);
}

static void test_fit_pairs(ramp_rng *rng) {
    const int nflat = 60, nmixed = 40;
    double theta[PAIRS_CONFIGS * 5];
    ramp_timing *t = pairs_dataset(rng, nflat, nmixed, theta);
    if (!t) return;
    CHECK_EQ_INT(ramp_costmodel_nterms(RAMP_COSTMODEL_EQ3), 4);
    CHECK_EQ_INT(ramp_costmodel_nterms(RAMP_COSTMODEL_TILECOUNT), 4);
    CHECK_EQ_INT(ramp_costmodel_nterms(RAMP_COSTMODEL_EQ3_PAIRS), 5);
    CHECK_EQ_INT(ramp_costmodel_nterms((ramp_costmodel_kind)9), 0);
    /* The terms: Equation 3's four, then P = sum of the counts. */
    for (int64_t i = 0; i < t->nloads; i += 9) {
        const int32_t *ld = t->loads + i * t->max_experts;
        double t4[RAMP_COST_TERMS], t5[RAMP_COST_TERMS_MAX], pairs = 0;
        for (int e = 0; e < t->nexp[i]; e++) pairs += ld[e];
        /* configs[3]: rows 32, width 256 (q = 3) */
        ramp_costmodel_terms(RAMP_COSTMODEL_EQ3, &t->configs[3], &t->geom, t->sms, 1, t->nexp[i], ld, t4);
        ramp_costmodel_terms(RAMP_COSTMODEL_EQ3_PAIRS, &t->configs[3], &t->geom, t->sms, 1, t->nexp[i], ld, t5);
        for (int k = 0; k < 4; k++) CHECK(t4[k] == t5[k]);
        CHECK(t5[4] == pairs);
        /* The flat loads' T, W and A are the same for every load. */
        if (i < nflat) {
            CHECK_NEAR(t5[2], 16.0 * 3, 0); /* q = 768 / 256 */
            CHECK_NEAR(t5[1], 3, 0);
            CHECK_NEAR(t5[3], 16, 0);
        }
    }
    /* Both wave fits and both intercepts: the five-term fit predicts the
     * truth on every load and configuration: to the float rounding of the
     * times with a free intercept; the default's penalty row pulls theta_0
     * by ~1e-5 of a time on this noiseless data. */
    static const ramp_costmodel_fit_options fits[2] = {{RAMP_WAVE_PICKS, 0}, {RAMP_WAVE_RMSE, 1}};
    for (int f = 0; f < 2; f++) {
        const double tol = f == 0 ? 1e-4 : 1e-5;
        ramp_costmodel *m = NULL;
        CHECK_OK(ramp_costmodel_fit_opt(t, NULL, RAMP_COSTMODEL_EQ3_PAIRS, &fits[f], &m));
        if (!m) continue;
        CHECK_EQ_INT(m->kind, RAMP_COSTMODEL_EQ3_PAIRS);
        double pred[PAIRS_CONFIGS];
        for (int c = 0; c < PAIRS_CONFIGS; c++) {
            CHECK_EQ_INT(m->rows[c], t->nloads);
            CHECK_EQ_INT(m->slots[c], t->sms);
            CHECK(m->rel_rmse[c] < (f == 0 ? 5e-5 : 1e-6));
            for (int k = 0; k < 5; k++) CHECK(m->theta[c * 5 + k] >= 0);
            /* Free intercept: every coefficient, the pairs one included. */
            if (f == 1)
                for (int k = 0; k < 5; k++)
                    CHECK_NEAR(m->theta[c * 5 + k], theta[c * 5 + k], 1e-4 * theta[c * 5 + k] + 1e-7);
        }
        for (int64_t i = 0; i < t->nloads; i++) {
            const int32_t *ld = t->loads + i * t->max_experts;
            ramp_costmodel_predict_all(m, t->nexp[i], ld, pred);
            for (int c = 0; c < PAIRS_CONFIGS; c++) {
                double truth = pairs_truth(t, theta, c, i);
                CHECK_NEAR(pred[c], truth, tol * truth);
                CHECK_NEAR(ramp_costmodel_predict(m, c, t->nexp[i], ld), pred[c], 1e-12 * pred[c]);
            }
        }
        ramp_costmodel_diag dg;
        CHECK_OK(ramp_costmodel_diagnose(m, t, NULL, NULL, 0, &dg));
        CHECK(dg.pick_gap_mean < 1e-6);
        pairs_served(rng, t, m);
        ramp_costmodel_free(m);
    }
    /* Equation 3 on the same data cannot follow P: its prediction is the
     * same on every flat load, the truth is not (>= 10% off somewhere for
     * every configuration). Its fit is still exactly the four-column NNLS
     * (the option off changes nothing). */
    ramp_costmodel *m4 = NULL;
    CHECK_OK(ramp_costmodel_fit_opt(t, NULL, RAMP_COSTMODEL_EQ3, &RMSE_FIT, &m4));
    if (m4) {
        double *A = malloc((size_t)t->nloads * 4 * sizeof *A), *one = malloc((size_t)t->nloads * sizeof *one);
        for (int c = 0; A && one && c < PAIRS_CONFIGS; c++) {
            double worst = 0, first = ramp_costmodel_predict(m4, c, t->nexp[0], t->loads);
            for (int64_t i = 0; i < nflat; i++) {
                const int32_t *ld = t->loads + i * t->max_experts;
                double p = ramp_costmodel_predict(m4, c, t->nexp[i], ld);
                CHECK_NEAR(p, first, 1e-9 * first);
                worst = fmax(worst, fabs(p / pairs_truth(t, theta, c, i) - 1));
            }
            CHECK(worst > 0.10);
            for (int64_t i = 0; i < t->nloads; i++) {
                double terms[4];
                ramp_costmodel_terms_slots(RAMP_COSTMODEL_EQ3, &t->configs[c], &t->geom, t->sms,
                                           m4->slots[c], t->nexp[i], t->loads + i * t->max_experts,
                                           terms);
                for (int k = 0; k < 4; k++) A[i * 4 + k] = terms[k] / t->times_us[i * PAIRS_CONFIGS + c];
                one[i] = 1.0;
            }
            double x[4];
            CHECK_OK(ramp_nnls(A, (int)t->nloads, 4, one, x));
            for (int k = 0; k < 4; k++) CHECK_NEAR(m4->theta[c * 4 + k], x[k], 1e-12 * (1 + x[k]));
        }
        free(A);
        free(one);
        ramp_costmodel_free(m4);
    }
    /* The transfer fits P as a load term: trained on this dataset alone
     * (hidden 2048: scale 1) it predicts the truth too. */
    ramp_costmodel *mt = NULL;
    const ramp_timing *train[1] = {t};
    CHECK_OK(ramp_costmodel_fit_transfer_kind(train, 1, t, RAMP_COSTMODEL_EQ3_PAIRS, &mt));
    if (mt) {
        CHECK_EQ_INT(mt->kind, RAMP_COSTMODEL_EQ3_PAIRS);
        for (int64_t i = 0; i < t->nloads; i += 3)
            for (int c = 0; c < PAIRS_CONFIGS; c++) {
                double truth = pairs_truth(t, theta, c, i);
                CHECK_NEAR(ramp_costmodel_predict(mt, c, t->nexp[i], t->loads + i * t->max_experts),
                           truth, 1e-5 * truth);
            }
        ramp_costmodel_free(mt);
    }
    /* Bad kinds, refused with what and where. */
    ramp_costmodel *bad = NULL;
    CHECK_ERR(ramp_costmodel_fit(t, NULL, (ramp_costmodel_kind)7, &bad), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "kind 7") != NULL);
    CHECK_ERR(ramp_costmodel_fit_transfer_kind(train, 1, t, RAMP_COSTMODEL_TILECOUNT, &bad),
              RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "tilecount") != NULL);
    CHECK(bad == NULL);
    ramp_costmodel_kind k;
    CHECK_OK(ramp_costmodel_kind_parse("eq3+pairs", &k));
    CHECK_EQ_INT(k, RAMP_COSTMODEL_EQ3_PAIRS);
    CHECK_OK(ramp_costmodel_kind_parse("eq3", &k));
    CHECK_EQ_INT(k, RAMP_COSTMODEL_EQ3);
    CHECK_ERR(ramp_costmodel_kind_parse("eq4", &k), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "'eq4'") != NULL);
    CHECK_EQ_INT(strcmp(ramp_costmodel_kind_name(RAMP_COSTMODEL_EQ3_PAIRS), "eq3+pairs"), 0);
    CHECK_EQ_INT(strcmp(ramp_costmodel_kind_name((ramp_costmodel_kind)9), "?"), 0);
    ramp_timing_free(t);
}

/* Two hand-made v2 Equation 3 models of configurations cfg[0..1] (theta:
 * four per configuration, S_c = 132) as a cost model m and as the plan a
 * layer would serve, for the rules every evaluation path must share. */
typedef struct {
    int bps[2];
    int64_t rows[2];
    ramp_costmodel m;
    ramp_plan plan;
} hand_models;

static void hand_models_make(hand_models *h, ramp_config *cfg, double *theta, ramp_geometry g) {
    memset(h, 0, sizeof *h);
    h->bps[0] = h->bps[1] = 1;
    h->rows[0] = h->rows[1] = 1;
    h->m = (ramp_costmodel){.kind = RAMP_COSTMODEL_EQ3, .kernel = RAMP_KERNEL_V2, .sms = 132,
                            .nconfigs = 2, .configs = cfg, .blocks_per_sm = h->bps,
                            .theta = theta, .rows = h->rows, .geom = g};
    h->plan = (ramp_plan){.geom = g, .sms = 132, .blocks_per_sm = 1, .count = 2,
                          .kernel = RAMP_KERNEL_V2, .cost_model = RAMP_COSTMODEL_EQ3};
    for (int c = 0; c < 2; c++) {
        h->plan.configs[c] = cfg[c];
        for (int k = 0; k < 4; k++) h->plan.theta[c][k] = theta[c * 4 + k];
    }
}

/* A multicast entry (v2 .mc) runs its row tiles in pairs, so an odd count
 * costs what the next even one does: T_c counts row tiles rounded up to
 * even in the features, the model's prediction and the selection kernel's
 * CPU twin alike (Mixtral FP8 .dk2.mc.tx, s18-run4: 2 row tiles ~183 us, 3
 * ~322). Fresh random loads; the same entry without .mc counts them as
 * they are. */
static void test_pair_tiles(ramp_rng *rng) {
    enum { NE = 8 };
    ramp_config cfg[2] = {{.rows = 128, .width = 128, .stages = 4, .splitk = 1, .two_phase = 1,
                           .mcast = 1, .tma_x = 1},
                          {.rows = 128, .width = 128, .stages = 4, .splitk = 1, .two_phase = 1,
                           .tma_x = 1}};
    double theta[2 * 4] = {6, 40, 0.5, 20, 6, 40, 0.5, 20};
    hand_models h;
    hand_models_make(&h, cfg, theta,
                     (ramp_geometry){.experts = NE, .topk = 2, .inter = 1024, .hidden = 2048});
    const ramp_costmodel m = h.m;
    ramp_select_entry se[2];
    for (int c = 0; c < 2; c++) {
        CHECK_OK(ramp_select_entry_from_plan(&h.plan, c, &se[c]));
        CHECK_EQ_INT(se[c].pair_tiles, c == 0);
    }
    int odd = 0, even = 0;
    int32_t load[NE];
    for (int it = 0; it < 300; it++) {
        int64_t rt = 0;
        for (int e = 0; e < NE; e++) {
            load[e] = ramp_rng_below(rng, 3) == 0 ? 0 : (int32_t)ramp_rng_below(rng, 400);
            rt += (load[e] + 127) / 128;
        }
        if (rt % 2) odd++;
        else even++;
        for (int c = 0; c < 2; c++) {
            const int64_t prt = c == 0 ? (rt + 1) / 2 * 2 : rt;
            ramp_features f;
            ramp_features_compute(&cfg[c], &m.geom, 132, 1, NE, load, &f);
            CHECK_NEAR(f.tiles, 8.0 * (double)prt, 0);
            CHECK_NEAR(f.waves, (double)((8 * prt + 131) / 132), 0);
            const double want = ramp_costmodel_predict(&m, c, NE, load);
            CHECK_NEAR(want, 6 + 40 * f.waves + 0.5 * f.tiles + 20 * f.active, 1e-9);
            CHECK_NEAR((double)ramp_select_predict(&se[c], NE, load), want, 1e-4 * want);
        }
    }
    CHECK(odd > 20 && even > 20);
}

/* v2's split-K is chosen for one wave only (ramp_config_max_waves): the model's
 * predictions, its pick, the plan's pick and the selection kernel's CPU
 * twin all add RAMP_PAST_WAVES_US past one wave, so on a load where the
 * split configuration's tiles need two waves the unsplit one wins although
 * the split one's Equation 3 alone is lower; alone on the menu it still
 * runs. Hand-made coefficients: the split one's Equation 3 is lower on
 * every load (-5 + W_split - 5 W_unsplit us, W_split <= 2 W_unsplit). The
 * same model of kernel v1 has no rule. */
static void test_split_waves(ramp_rng *rng) {
    enum { NE = 8 };
    ramp_config cfg[2] = {{.rows = 8, .width = 128, .stages = 4, .splitk = 1},
                          {.rows = 8, .width = 128, .stages = 4, .splitk = 2}};
    CHECK_EQ_INT(ramp_config_max_waves(RAMP_KERNEL_V2, &cfg[0]), 0);
    CHECK_EQ_INT(ramp_config_max_waves(RAMP_KERNEL_V2, &cfg[1]), 1);
    CHECK_EQ_INT(ramp_config_max_waves(RAMP_KERNEL_V1, &cfg[1]), 0);
    double theta[2 * 4] = {10, 5, 0.2, 0.5, 5, 1, 0.1, 0.5};
    hand_models h;
    hand_models_make(&h, cfg, theta,
                     (ramp_geometry){.experts = NE, .topk = 1, .inter = 768, .hidden = 2048});
    ramp_costmodel m = h.m;
    ramp_plan plan = h.plan;
    ramp_select_desc d = {.experts = NE, .topk = 1, .max_tokens = NE * 200,
                          .local_experts = NE, .first_expert = 0, .nentries = 2};
    for (int c = 0; c < 2; c++) {
        CHECK_OK(ramp_select_entry_from_plan(&plan, c, &d.entries[c]));
    }
    CHECK_EQ_INT(d.entries[1].max_waves, 1);
    ramp_menu menu = {.count = 2, .config = {0, 1}};
    int past = 0, within = 0;
    int32_t load[NE];
    for (int it = 0; it < 400; it++) {
        /* up to 200 pairs per expert: split tiles 12 per row tile of 8 */
        const int cap = 1 + (int)ramp_rng_below(rng, it < 200 ? 24 : 200);
        int64_t rt = 0;
        for (int e = 0; e < NE; e++) {
            load[e] = ramp_rng_below(rng, 5) == 0 ? 0 : (int32_t)ramp_rng_below(rng, (uint64_t)cap);
            rt += (load[e] + 7) / 8;
        }
        const int is_past = rt * 12 > 132; /* the split one's CTAs past one wave */
        past += is_past;
        within += !is_past && rt > 0;
        double p[2];
        ramp_costmodel_predict_all(&m, NE, load, p);
        for (int c = 0; c < 2; c++) {
            double terms[RAMP_COST_TERMS_MAX], v = 0;
            ramp_costmodel_terms(RAMP_COSTMODEL_EQ3, &cfg[c], &m.geom, 132, 1, NE, load, terms);
            for (int k = 0; k < 4; k++) v += theta[c * 4 + k] * terms[k];
            if (c == 1 && is_past) v += 1e6;
            CHECK_NEAR(p[c], v, 1e-9 * v);
            CHECK(ramp_costmodel_predict(&m, c, NE, load) == p[c]);
        }
        int pick = -1, only = -1;
        CHECK_OK(ramp_costmodel_pick(&m, NE, load, NULL, 0, &pick));
        CHECK_EQ_INT(pick, is_past ? 0 : 1);
        CHECK_EQ_INT(ramp_plan_pick(&plan, NE, load), pick);
        const int one[1] = {1};
        CHECK_OK(ramp_costmodel_pick(&m, NE, load, one, 1, &only));
        CHECK_EQ_INT(only, 1);
        twin_agrees(&m, &menu, &d, NE, load, "split-K waves twin", it);
        /* kernel v1: Equation 3 alone picks the split configuration */
        ramp_costmodel m1 = m;
        m1.kernel = RAMP_KERNEL_V1;
        CHECK_OK(ramp_costmodel_pick(&m1, NE, load, NULL, 0, &pick));
        CHECK_EQ_INT(pick, 1);
    }
    /* both sides of the rule were exercised */
    CHECK(past > 50 && within > 50);
    printf("split-K one-wave rule: %d loads past one wave, %d within\n", past, within);
}

int main(void) {
    ramp_rng rng;
    ramp_rng_seed(&rng, check_seed());
    test_features(&rng);
    test_nnls_known();
    test_nnls_random(&rng);
    test_ols(&rng);
    test_spearman(&rng);
    test_fit_recovers_truth(&rng);
    test_fit_wave_size(&rng);
    test_fit_tilecount(&rng);
    test_fit_intercept();
    test_fit_wave_picks();
    test_fit_pairs(&rng);
    test_split_waves(&rng);
    test_pair_tiles(&rng);
    return check_finish("test_costmodel");
}
