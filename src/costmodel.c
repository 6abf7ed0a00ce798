/*
 * costmodel.c - the paper's cost model (Section 3.1): the per-load features
 * of Equation 1 (tiles T_c, waves W_c, active experts A), the solvers that fit
 * it (Lawson-Hanson NNLS, pivoted-QR least squares), the per-configuration
 * fit on relative error, prediction and picking, Spearman's rank correlation
 * and the diagnostics the paper reports (rank correlation between predicted
 * and measured order, error of the picked configuration's prediction).
 *
 * The wave size S_c of W = ceil(T / S_c) is fit per configuration: each
 * multiple of the SM count up to sms * blocks_per_sm is tried, and the one
 * with the lowest RMS relative error kept (bench/results/eval-2026-11-30.md:
 * v1's second resident block adds little, so its time steps at sms tiles).
 * Also here: the fit that transfers to a model never timed (load terms
 * scaled by the hidden size, fit on other models' datasets), and the
 * evaluation-only fifth term, the load's token-expert pairs (EQ3_PAIRS):
 * a model's theta has ramp_costmodel_nterms(kind) values per configuration.
 *
 * Solvers work on small n (<= 16 terms) and possibly many rows. Both first
 * reduce [A | b] by a Householder QR to an n x n triangle, which keeps the
 * residual's gradient exact (A^T r = R^T (c - R x)) and makes the
 * active-set iterations of NNLS independent of the number of loads.
 */
#include "eval.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define MAX_N 16

/* ---- features ------------------------------------------------------------ */

/* q_c: column slices of the intermediate (a partial slice is still a tile)
 * times the split of the up projection. */
static double q_of(const ramp_config *c, const ramp_geometry *g) {
    int w = c->width > 0 ? c->width : 1;
    int h = g->inter > 0 ? g->inter : 1;
    double q = (double)((h + w - 1) / w);
    return q * (c->splitk > 1 ? c->splitk : 1);
}

/* T_c: the tiles a launch covers. A multicast entry runs row tiles in pairs
 * (clusters of two CTAs, ramp_mv2_pairs), so an odd count leaves one CTA of
 * a pair idle: the time steps at the pair, not the tile (Mixtral FP8,
 * s18-run4: 2 row tiles ~183 us, 3 row tiles ~322 us with .dk2.mc.tx). */
static double tiles_of(const ramp_config *c, const ramp_geometry *g, double rowtiles) {
    if (c->mcast) rowtiles = ceil(rowtiles / 2) * 2;
    return q_of(c, g) * rowtiles;
}

static double slots_of(int sms, int blocks_per_sm) {
    return (double)(sms > 0 ? sms : 1) * (double)(blocks_per_sm > 0 ? blocks_per_sm : 1);
}

/* sum_e ceil(n_e / b), the active experts and the token-expert pairs
 * sum_e n_e of a load (pairs may be NULL). */
static void rowtiles_of(int nexp, const int32_t *load, int b, double *rowtiles,
                        double *active, double *pairs) {
    int64_t rt = 0, act = 0, np = 0;
    if (b < 1) b = 1;
    for (int e = 0; load && e < nexp; e++) {
        int64_t n = load[e];
        if (n <= 0) continue;
        act++;
        np += n;
        rt += (n + b - 1) / b;
    }
    *rowtiles = (double)rt;
    *active = (double)act;
    if (pairs) *pairs = (double)np;
}

void ramp_features_compute(const ramp_config *c, const ramp_geometry *g,
                           int sms, int blocks_per_sm, int nexp,
                           const int32_t *load, ramp_features *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!c || !g) return;
    double rt, act;
    rowtiles_of(nexp, load, c->rows, &rt, &act, NULL);
    out->tiles = tiles_of(c, g, rt);
    out->waves = ceil(out->tiles / slots_of(sms, blocks_per_sm));
    out->active = act;
}

int ramp_costmodel_nterms(ramp_costmodel_kind kind) {
    switch (kind) {
    case RAMP_COSTMODEL_EQ3:
    case RAMP_COSTMODEL_TILECOUNT: return 4;
    case RAMP_COSTMODEL_EQ3_PAIRS: return 5;
    }
    return 0;
}

const char *ramp_costmodel_kind_name(ramp_costmodel_kind kind) {
    switch (kind) {
    case RAMP_COSTMODEL_EQ3: return "eq3";
    case RAMP_COSTMODEL_TILECOUNT: return "tilecount";
    case RAMP_COSTMODEL_EQ3_PAIRS: return "eq3+pairs";
    }
    return "?";
}

ramp_status ramp_costmodel_kind_parse(const char *text, ramp_costmodel_kind *out) {
    RAMP_CHECK(text && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_costmodel_kind_parse: NULL argument");
    for (int k = RAMP_COSTMODEL_EQ3; k <= RAMP_COSTMODEL_EQ3_PAIRS; k++)
        if (strcmp(text, ramp_costmodel_kind_name((ramp_costmodel_kind)k)) == 0) {
            *out = (ramp_costmodel_kind)k;
            return RAMP_OK;
        }
    /* '+' is awkward in some shells' completion and file names. */
    if (strcmp(text, "eq3-pairs") == 0) {
        *out = RAMP_COSTMODEL_EQ3_PAIRS;
        return RAMP_OK;
    }
    RAMP_FAIL(RAMP_ERR_INVALID_ARGUMENT,
              "cost model '%s': expected eq3, eq3+pairs or tilecount", text);
}

/* Equation 3's form (a wave term, NNLS, S_c and the intercept penalty). */
static int is_eq3(ramp_costmodel_kind kind) {
    return kind == RAMP_COSTMODEL_EQ3 || kind == RAMP_COSTMODEL_EQ3_PAIRS;
}

static void terms_from(ramp_costmodel_kind kind, double tiles, double slots,
                       int sms, double active, double pairs, double *terms) {
    terms[0] = 1.0;
    if (kind == RAMP_COSTMODEL_TILECOUNT) {
        terms[1] = tiles;
        terms[2] = tiles / (double)(sms > 0 ? sms : 1);
        terms[3] = log1p(tiles);
    } else {
        terms[1] = ceil(tiles / slots);
        terms[2] = tiles;
        terms[3] = active;
        if (kind == RAMP_COSTMODEL_EQ3_PAIRS) terms[4] = pairs;
    }
}

void ramp_costmodel_terms(ramp_costmodel_kind kind, const ramp_config *c,
                          const ramp_geometry *g, int sms, int blocks_per_sm,
                          int nexp, const int32_t *load, double *terms) {
    ramp_costmodel_terms_slots(kind, c, g, sms, (int)slots_of(sms, blocks_per_sm), nexp, load,
                               terms);
}

void ramp_costmodel_terms_slots(ramp_costmodel_kind kind, const ramp_config *c,
                                const ramp_geometry *g, int sms, int slots, int nexp,
                                const int32_t *load, double *terms) {
    double rt = 0, act = 0, pairs = 0;
    if (c && g) rowtiles_of(nexp, load, c->rows, &rt, &act, &pairs);
    terms_from(kind, c && g ? tiles_of(c, g, rt) : 0, slots > 0 ? (double)slots : 1.0, sms, act,
               pairs, terms);
}

/* RAMP_PAST_WAVES_US when a load of `tiles` tiles at S_c = slots is past
 * c's max_waves (ramp_config_max_waves), else 0: added to every prediction
 * below and in plan.c, as the selection kernel and its twin add it. */
double ramp_past_waves_us(int kernel, const ramp_config *c, double tiles, double slots) {
    const int mw = ramp_config_max_waves((ramp_kernel_version)kernel, c);
    return mw > 0 && ceil(tiles / (slots > 0 ? slots : 1.0)) > mw ? RAMP_PAST_WAVES_US : 0.0;
}

/* ---- Householder QR ------------------------------------------------------ */

/* Factors the first nf columns of the m x nc row-major matrix a in place
 * (R in the upper triangle; zeros are not written below it), applying the
 * same reflections to the remaining columns (right-hand sides). With perm,
 * columns are pivoted by largest remaining norm and perm[j] = original
 * column at position j. v: scratch of m doubles. */
static void householder(double *a, int m, int nc, int nf, int *perm, double *v) {
    int steps = m < nf ? m : nf;
    if (perm)
        for (int j = 0; j < nf; j++) perm[j] = j;
    for (int k = 0; k < steps; k++) {
        if (perm) {
            int best = k;
            double bestn = -1;
            for (int j = k; j < nf; j++) {
                double s = 0;
                for (int i = k; i < m; i++) s += a[(size_t)i * nc + j] * a[(size_t)i * nc + j];
                if (s > bestn) { bestn = s; best = j; }
            }
            if (best != k) {
                for (int i = 0; i < m; i++) {
                    double tmp = a[(size_t)i * nc + k];
                    a[(size_t)i * nc + k] = a[(size_t)i * nc + best];
                    a[(size_t)i * nc + best] = tmp;
                }
                int tp = perm[k]; perm[k] = perm[best]; perm[best] = tp;
            }
        }
        double norm = 0, scale = 0;
        for (int i = k; i < m; i++) {
            double x = fabs(a[(size_t)i * nc + k]);
            if (x > scale) scale = x;
        }
        if (scale == 0) continue; /* column already zero below the diagonal */
        for (int i = k; i < m; i++) {
            double x = a[(size_t)i * nc + k] / scale;
            norm += x * x;
        }
        norm = scale * sqrt(norm);
        double akk = a[(size_t)k * nc + k];
        double alpha = akk > 0 ? -norm : norm;
        double vn = 0;
        for (int i = k; i < m; i++) {
            v[i] = a[(size_t)i * nc + k];
            if (i == k) v[i] -= alpha;
            vn += v[i] * v[i];
        }
        if (vn == 0) continue;
        for (int j = k + 1; j < nc; j++) {
            double s = 0;
            for (int i = k; i < m; i++) s += v[i] * a[(size_t)i * nc + j];
            s *= 2.0 / vn;
            for (int i = k; i < m; i++) a[(size_t)i * nc + j] -= s * v[i];
        }
        a[(size_t)k * nc + k] = alpha;
        for (int i = k + 1; i < m; i++) a[(size_t)i * nc + k] = 0;
    }
}

static int all_finite(const double *v, size_t n, size_t *where) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) { *where = i; return 0; }
    return 1;
}

/* Pivoted-QR least squares on a copy: x = basic solution, zero for columns
 * found dependent. w: (m * (n + 1)) + m doubles of scratch. */
static void ols_core(const double *A, int m, int n, const double *b, double *x,
                     double *w) {
    double *a = w, *v = w + (size_t)m * (n + 1);
    int perm[MAX_N];
    for (int i = 0; i < m; i++) {
        memcpy(a + (size_t)i * (n + 1), A + (size_t)i * n, (size_t)n * sizeof *a);
        a[(size_t)i * (n + 1) + n] = b[i];
    }
    householder(a, m, n + 1, n, perm, v);
    int steps = m < n ? m : n, rank = 0;
    double r00 = steps > 0 ? fabs(a[0]) : 0;
    double tol = (double)(m > n ? m : n) * DBL_EPSILON * r00;
    while (rank < steps && fabs(a[(size_t)rank * (n + 1) + rank]) > tol) rank++;
    double z[MAX_N];
    for (int j = rank - 1; j >= 0; j--) {
        double s = a[(size_t)j * (n + 1) + n];
        for (int l = j + 1; l < rank; l++) s -= a[(size_t)j * (n + 1) + l] * z[l];
        z[j] = s / a[(size_t)j * (n + 1) + j];
    }
    for (int j = 0; j < n; j++) x[j] = 0;
    for (int j = 0; j < rank; j++) x[perm[j]] = z[j];
}

ramp_status ramp_ols(const double *A, int m, int n, const double *b, double *x) {
    RAMP_CHECK(A && b && x, RAMP_ERR_INVALID_ARGUMENT, "ramp_ols: NULL argument");
    RAMP_CHECK(m >= 1 && n >= 1 && n <= MAX_N, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_ols: m = %d, n = %d (need m >= 1, 1 <= n <= %d)", m, n, MAX_N);
    size_t where;
    RAMP_CHECK(all_finite(A, (size_t)m * n, &where), RAMP_ERR_NUMERIC,
               "ramp_ols: A[%zu][%zu] is not finite", where / n, where % n);
    RAMP_CHECK(all_finite(b, (size_t)m, &where), RAMP_ERR_NUMERIC,
               "ramp_ols: b[%zu] is not finite", where);
    double *w = ramp_calloc((size_t)m * (n + 2), sizeof *w);
    if (!w) return RAMP_ERR_OUT_OF_MEMORY;
    ols_core(A, m, n, b, x, w);
    free(w);
    for (int j = 0; j < n; j++)
        RAMP_CHECK(isfinite(x[j]), RAMP_ERR_NUMERIC, "ramp_ols: x[%d] overflowed", j);
    return RAMP_OK;
}

/* ---- NNLS (Lawson and Hanson 1974, chapter 23) ---------------------------- */

/* Least squares on the columns in P of the k x n matrix M; z zero elsewhere. */
static void solve_passive(const double *M, int k, int n, const double *d,
                          const int *P, double *z, double *w) {
    double sub[MAX_N * MAX_N], zs[MAX_N];
    int cols[MAX_N], p = 0;
    for (int j = 0; j < n; j++)
        if (P[j]) cols[p++] = j;
    for (int i = 0; i < k; i++)
        for (int l = 0; l < p; l++) sub[i * p + l] = M[i * n + cols[l]];
    for (int j = 0; j < n; j++) z[j] = 0;
    if (p == 0) return;
    ols_core(sub, k, p, d, zs, w);
    for (int l = 0; l < p; l++) z[cols[l]] = zs[l];
}

/* Lawson-Hanson on a k x n system (k <= n here, unit-norm columns). */
static ramp_status lawson_hanson(const double *M, int k, int n, const double *d,
                                 const int *usable, double *x) {
    int P[MAX_N] = {0}, blocked[MAX_N] = {0};
    double z[MAX_N], r[MAX_N];
    double work[MAX_N * (MAX_N + 1) + MAX_N];
    double dn = 0;
    for (int i = 0; i < k; i++) dn += d[i] * d[i];
    dn = sqrt(dn);
    double tol = 64.0 * DBL_EPSILON * (double)n * (dn > 0 ? dn : 1.0);
    for (int j = 0; j < n; j++) x[j] = 0;
    for (int outer = 0;; outer++) {
        if (outer > 30 * n + 30)
            RAMP_FAIL(RAMP_ERR_NUMERIC, "ramp_nnls: no convergence after %d iterations", outer);
        for (int i = 0; i < k; i++) {
            double s = d[i];
            for (int j = 0; j < n; j++) s -= M[i * n + j] * x[j];
            r[i] = s;
        }
        int t = -1;
        double best = tol;
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int i = 0; i < k; i++) s += M[i * n + j] * r[i];
            if (!P[j] && usable[j] && !blocked[j] && s > best) { best = s; t = j; }
        }
        if (t < 0) break;
        P[t] = 1;
        for (int inner = 0; inner <= n; inner++) {
            solve_passive(M, k, n, d, P, z, work);
            if (inner == 0 && !(z[t] > 0)) {
                /* Rounding made the new column useless: leave it out until x
                 * moves (Lawson-Hanson's safeguard against cycling). */
                P[t] = 0;
                blocked[t] = 1;
                break;
            }
            int ok = 1;
            for (int j = 0; j < n; j++)
                if (P[j] && !(z[j] > 0)) ok = 0;
            if (ok) {
                for (int j = 0; j < n; j++) x[j] = P[j] ? z[j] : 0;
                memset(blocked, 0, sizeof blocked);
                break;
            }
            double alpha = 2.0;
            int jmin = -1;
            for (int j = 0; j < n; j++)
                if (P[j] && !(z[j] > 0)) {
                    double a = x[j] / (x[j] - z[j]);
                    if (a < alpha) { alpha = a; jmin = j; }
                }
            for (int j = 0; j < n; j++)
                if (P[j]) x[j] += alpha * (z[j] - x[j]);
            if (jmin >= 0) x[jmin] = 0;
            for (int j = 0; j < n; j++)
                if (P[j] && !(x[j] > 0)) { P[j] = 0; x[j] = 0; }
            memset(blocked, 0, sizeof blocked);
        }
    }
    return RAMP_OK;
}

ramp_status ramp_nnls(const double *A, int m, int n, const double *b, double *x) {
    RAMP_CHECK(A && b && x, RAMP_ERR_INVALID_ARGUMENT, "ramp_nnls: NULL argument");
    RAMP_CHECK(m >= 1 && n >= 1 && n <= MAX_N, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_nnls: m = %d, n = %d (need m >= 1, 1 <= n <= %d)", m, n, MAX_N);
    size_t where;
    RAMP_CHECK(all_finite(A, (size_t)m * n, &where), RAMP_ERR_NUMERIC,
               "ramp_nnls: A[%zu][%zu] is not finite", where / n, where % n);
    RAMP_CHECK(all_finite(b, (size_t)m, &where), RAMP_ERR_NUMERIC,
               "ramp_nnls: b[%zu] is not finite", where);
    /* Unit-norm columns: the constraint x >= 0 is unchanged by positive
     * scaling, and the multiplier test compares like with like. */
    double scale[MAX_N];
    int usable[MAX_N];
    for (int j = 0; j < n; j++) {
        double mx = 0, s = 0;
        for (int i = 0; i < m; i++) mx = fmax(mx, fabs(A[(size_t)i * n + j]));
        if (mx > 0)
            for (int i = 0; i < m; i++) {
                double v = A[(size_t)i * n + j] / mx;
                s += v * v;
            }
        usable[j] = mx > 0;
        scale[j] = mx > 0 ? 1.0 / (mx * sqrt(s)) : 0;
    }
    int k = m < n ? m : n;
    double *a = ramp_calloc((size_t)m * (n + 1) + (size_t)m, sizeof *a);
    if (!a) return RAMP_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++)
            a[(size_t)i * (n + 1) + j] = A[(size_t)i * n + j] * scale[j];
        a[(size_t)i * (n + 1) + n] = b[i];
    }
    double M[MAX_N * MAX_N], d[MAX_N];
    if (m > n) {
        householder(a, m, n + 1, n, NULL, a + (size_t)m * (n + 1));
        k = n;
    }
    for (int i = 0; i < k; i++) {
        for (int j = 0; j < n; j++) M[i * n + j] = a[(size_t)i * (n + 1) + j];
        d[i] = a[(size_t)i * (n + 1) + n];
    }
    free(a);
    ramp_status s = lawson_hanson(M, k, n, d, usable, x);
    if (s != RAMP_OK) return s;
    for (int j = 0; j < n; j++) {
        x[j] *= scale[j];
        RAMP_CHECK(isfinite(x[j]), RAMP_ERR_NUMERIC, "ramp_nnls: x[%d] overflowed", j);
    }
    return RAMP_OK;
}

/* ---- Spearman ------------------------------------------------------------ */

typedef struct { double v; int i; } ranked;

static int by_value(const void *pa, const void *pb) {
    const ranked *a = pa, *b = pb;
    if (a->v < b->v) return -1;
    if (a->v > b->v) return 1;
    return a->i - b->i;
}

/* Average ranks (1-based) of v into r; returns 0 if out of memory. */
static int ranks_of(const double *v, int n, double *r, ranked *tmp) {
    for (int i = 0; i < n; i++) { tmp[i].v = v[i]; tmp[i].i = i; }
    qsort(tmp, (size_t)n, sizeof *tmp, by_value);
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && tmp[j + 1].v == tmp[i].v) j++;
        double avg = 0.5 * (double)(i + j) + 1.0;
        for (int l = i; l <= j; l++) r[tmp[l].i] = avg;
        i = j + 1;
    }
    return 1;
}

static double pearson(const double *a, const double *b, int n) {
    double ma = 0, mb = 0;
    for (int i = 0; i < n; i++) { ma += a[i]; mb += b[i]; }
    ma /= n;
    mb /= n;
    double sab = 0, saa = 0, sbb = 0;
    for (int i = 0; i < n; i++) {
        double da = a[i] - ma, db = b[i] - mb;
        sab += da * db;
        saa += da * da;
        sbb += db * db;
    }
    if (saa <= 0 || sbb <= 0) return NAN;
    double r = sab / sqrt(saa * sbb);
    return r > 1 ? 1 : r < -1 ? -1 : r;
}

double ramp_spearman(const double *a, const double *b, int n) {
    if (!a || !b || n < 2) return NAN;
    for (int i = 0; i < n; i++)
        if (!isfinite(a[i]) || !isfinite(b[i])) return NAN;
    double *ra = malloc((size_t)n * 2 * sizeof *ra);
    ranked *tmp = malloc((size_t)n * sizeof *tmp);
    double r = NAN;
    if (ra && tmp) {
        ranks_of(a, n, ra, tmp);
        ranks_of(b, n, ra + n, tmp);
        r = pearson(ra, ra + n, n);
    }
    free(ra);
    free(tmp);
    return r;
}

/* ---- the fitted model ---------------------------------------------------- */

void ramp_costmodel_free(ramp_costmodel *m) {
    if (!m) return;
    free(m->configs);
    free(m->blocks_per_sm);
    free(m->theta);
    free(m->rows);
    free(m->rel_rmse);
    free(m->slots);
    free(m);
}

static ramp_status costmodel_alloc(const ramp_timing *t, ramp_costmodel_kind kind,
                                   ramp_costmodel **out) {
    ramp_costmodel *m = ramp_calloc(1, sizeof *m);
    if (!m) return RAMP_ERR_OUT_OF_MEMORY;
    int nc = t->nconfigs;
    m->kind = kind;
    m->kernel = t->kernel;
    m->geom = t->geom;
    m->sms = t->sms;
    m->nconfigs = nc;
    m->configs = ramp_calloc((size_t)nc, sizeof *m->configs);
    m->blocks_per_sm = ramp_calloc((size_t)nc, sizeof *m->blocks_per_sm);
    m->theta = ramp_calloc((size_t)nc * (size_t)ramp_costmodel_nterms(kind), sizeof *m->theta);
    m->rows = ramp_calloc((size_t)nc, sizeof *m->rows);
    m->rel_rmse = ramp_calloc((size_t)nc, sizeof *m->rel_rmse);
    m->slots = ramp_calloc((size_t)nc, sizeof *m->slots);
    if (!m->configs || !m->blocks_per_sm || !m->theta || !m->rows || !m->rel_rmse || !m->slots) {
        ramp_costmodel_free(m);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    memcpy(m->configs, t->configs, (size_t)nc * sizeof *m->configs);
    memcpy(m->blocks_per_sm, t->blocks_per_sm, (size_t)nc * sizeof *m->blocks_per_sm);
    for (int c = 0; c < nc; c++) m->slots[c] = (int)slots_of(t->sms, t->blocks_per_sm[c]);
    *out = m;
    return RAMP_OK;
}

int ramp_distinct_rows(const ramp_config *configs, int nconfigs, int *rows, int cap) {
    int n = 0;
    for (int c = 0; c < nconfigs; c++) {
        int b = configs[c].rows > 0 ? configs[c].rows : 1, seen = 0;
        for (int i = 0; i < n; i++)
            if (rows[i] == b) seen = 1;
        if (!seen && n < cap) rows[n++] = b;
    }
    for (int i = 1; i < n; i++) /* insertion sort: n is small */
        for (int j = i; j > 0 && rows[j - 1] > rows[j]; j--) {
            int tmp = rows[j]; rows[j] = rows[j - 1]; rows[j - 1] = tmp;
        }
    return n;
}

static int rows_slot(const int *rows, int nrows, int b) {
    if (b < 1) b = 1;
    for (int i = 0; i < nrows; i++)
        if (rows[i] == b) return i;
    return -1;
}

static ramp_status check_timing(const ramp_timing *t) {
    RAMP_CHECK(t, RAMP_ERR_INVALID_ARGUMENT, "timing dataset is NULL");
    RAMP_CHECK(t->nconfigs >= 1 && t->configs && t->blocks_per_sm,
               RAMP_ERR_INVALID_ARGUMENT, "timing dataset has no configurations");
    RAMP_CHECK(t->nloads >= 0 && (t->nloads == 0 || (t->loads && t->nexp && t->times_us)),
               RAMP_ERR_INVALID_ARGUMENT, "timing dataset has no load arrays");
    return RAMP_OK;
}

const char *ramp_wave_fit_name(ramp_wave_fit w) {
    switch (w) {
    case RAMP_WAVE_PICKS: return "picks";
    case RAMP_WAVE_RMSE: return "rmse";
    case RAMP_WAVE_CAPACITY: return "capacity";
    case RAMP_WAVE_SMS: return "sms";
    }
    return "?";
}

ramp_status ramp_wave_fit_parse(const char *text, ramp_wave_fit *out) {
    RAMP_CHECK(text && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_wave_fit_parse: NULL argument");
    for (int w = RAMP_WAVE_PICKS; w <= RAMP_WAVE_SMS; w++)
        if (strcmp(text, ramp_wave_fit_name((ramp_wave_fit)w)) == 0) {
            *out = (ramp_wave_fit)w;
            return RAMP_OK;
        }
    RAMP_FAIL(RAMP_ERR_INVALID_ARGUMENT, "wave fit '%s': expected picks, rmse, capacity or sms",
              text);
}

/* Weight of the row that penalises theta_0 (ramp.h: intercept_free). Small
 * enough to leave an identifiable fit unchanged (on the four H200 datasets
 * no fit with a varying W moves), large enough to break the tie between
 * theta_0 and a W term that is 1 on every training load. */
#define INTERCEPT_PENALTY 1e-6

/* One fit of a configuration's nr rows at wave size S: A and bvec hold
 * nr + 1 rows of scratch (nterms(kind) columns). Writes theta and the RMS
 * relative error over the nr loads (the penalty row excluded). */
static ramp_status fit_at(ramp_costmodel_kind kind, const double *tiles, const double *act,
                          const double *pairs, const double *tm, int64_t nr, double S, int sms,
                          int penalise, double *A, double *bvec, double *theta, double *rms) {
    const int nt = ramp_costmodel_nterms(kind);
    double inv = 0;
    for (int64_t j = 0; j < nr; j++) {
        double terms[RAMP_COST_TERMS_MAX];
        terms_from(kind, tiles[j], S, sms, act[j], pairs[j], terms);
        for (int l = 0; l < nt; l++) A[j * nt + l] = terms[l] / tm[j];
        bvec[j] = 1.0;
        inv += 1.0 / tm[j];
    }
    int64_t m = nr;
    if (penalise) {
        A[nr * nt] = sqrt(INTERCEPT_PENALTY * (double)nr) * inv / (double)nr;
        for (int l = 1; l < nt; l++) A[nr * nt + l] = 0;
        bvec[nr] = 0;
        m++;
    }
    ramp_status st = is_eq3(kind) ? ramp_nnls(A, (int)m, nt, bvec, theta)
                                  : ramp_ols(A, (int)m, nt, bvec, theta);
    if (st != RAMP_OK) return st;
    double ss = 0;
    for (int64_t j = 0; j < nr; j++) {
        double p = 0;
        for (int l = 0; l < nt; l++) p += A[j * nt + l] * theta[l];
        ss += (p - 1) * (p - 1);
    }
    *rms = sqrt(ss / (double)nr);
    return RAMP_OK;
}

/* The best two configurations of cl by (prediction, index) on one load. */
typedef struct { double v1, v2; int i1, i2; } best_two;

/* Under the chosen candidates jsel: each load's best two configurations
 * (bt[l]) and the regret of the picks, sum over loads of the pick's
 * measured time over the load's best. pred as in wave_descent. */
static double picks_regret(const ramp_timing *t, const int64_t *sel, int64_t nsel,
                           const double *pred, int maxc, const int *cl, int n,
                           const int *jsel, const int64_t *ld, int64_t nl,
                           const double *best, best_two *bt) {
    double cur = 0;
    for (int64_t l = 0; l < nl; l++) {
        best_two b = {INFINITY, INFINITY, -1, -1};
        for (int j = 0; j < n; j++) {
            int c = cl[j];
            double v = pred[((size_t)c * (size_t)maxc + (size_t)jsel[c]) * (size_t)nsel +
                            (size_t)ld[l]];
            if (v < b.v1 || b.i1 < 0) { b.v2 = b.v1; b.i2 = b.i1; b.v1 = v; b.i1 = c; }
            else if (v < b.v2 || b.i2 < 0) { b.v2 = v; b.i2 = c; }
        }
        bt[l] = b;
        cur += (double)ramp_times_of(t, sel[ld[l]])[b.i1] / best[l];
    }
    return cur;
}

/* RAMP_WAVE_PICKS' coordinate descent (ramp.h). pred[(c * maxc + j) * nsel
 * + k]: configuration c's prediction on selected load k with candidate j;
 * jsel[c]: the chosen candidate, updated. */
static ramp_status wave_descent(const ramp_timing *t, const int64_t *sel, int64_t nsel,
                                const double *pred, int maxc, const int *ncand,
                                const int64_t *fitrows, int *jsel) {
    int nc = t->nconfigs, n = 0;
    int *cl = ramp_calloc((size_t)nc, sizeof *cl);
    int64_t *ld = ramp_calloc((size_t)(nsel ? nsel : 1), sizeof *ld);
    double *best = ramp_calloc((size_t)(nsel ? nsel : 1), sizeof *best);
    best_two *bt = ramp_calloc((size_t)(nsel ? nsel : 1), sizeof *bt);
    if (!cl || !ld || !best || !bt) {
        free(cl); free(ld); free(best); free(bt);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    for (int c = 0; c < nc; c++)
        if (fitrows[c] > 0 && t->blocks_per_sm[c] >= 1) cl[n++] = c;
    /* The loads where every candidate is measured, and their best time. */
    int64_t nl = 0;
    for (int64_t k = 0; k < nsel && n >= 2; k++) {
        const float *tm = ramp_times_of(t, sel[k]);
        double b = INFINITY;
        int ok = 1;
        for (int j = 0; j < n && ok; j++) {
            double v = tm[cl[j]];
            if (!(isfinite(v) && v > 0)) ok = 0;
            else if (v < b) b = v;
        }
        if (!ok) continue;
        ld[nl] = k;
        best[nl++] = b;
    }
#define PRED(c, j, k) pred[((size_t)(c) * (size_t)maxc + (size_t)(j)) * (size_t)nsel + (size_t)(k)]
    double cur = 0;
    for (int pass = 0; pass < 3 && nl > 0; pass++) {
        /* The picks under the current choice, and the regret. */
        cur = picks_regret(t, sel, nsel, pred, maxc, cl, n, jsel, ld, nl, best, bt);
        int changed = 0;
        for (int j = 0; j < n; j++) {
            int c = cl[j];
            for (int cj = 0; cj < ncand[c]; cj++) {
                if (cj == jsel[c]) continue;
                double sum = 0;
                for (int64_t l = 0; l < nl; l++) {
                    const best_two *b = &bt[l];
                    double ov = b->i1 == c ? b->v2 : b->v1;
                    int oi = b->i1 == c ? b->i2 : b->i1;
                    double v = PRED(c, cj, ld[l]);
                    int pick = v < ov || (v == ov && c < oi) ? c : oi;
                    sum += (double)ramp_times_of(t, sel[ld[l]])[pick] / best[l];
                }
                if (sum < cur * (1.0 - 1e-12)) {
                    jsel[c] = cj;
                    changed = 1;
                    /* Refresh the best two and the regret for the next trial. */
                    cur = picks_regret(t, sel, nsel, pred, maxc, cl, n, jsel, ld, nl, best, bt);
                }
            }
        }
        if (!changed) break;
    }
#undef PRED
    free(cl);
    free(ld);
    free(best);
    free(bt);
    return RAMP_OK;
}

ramp_status ramp_costmodel_fit(const ramp_timing *t, const uint8_t *mask,
                               ramp_costmodel_kind kind, ramp_costmodel **out) {
    return ramp_costmodel_fit_opt(t, mask, kind, NULL, out);
}

ramp_status ramp_costmodel_fit_opt(const ramp_timing *t, const uint8_t *mask,
                                   ramp_costmodel_kind kind,
                                   const ramp_costmodel_fit_options *opt,
                                   ramp_costmodel **out) {
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "ramp_costmodel_fit: out is NULL");
    RAMP_TRY(check_timing(t));
    RAMP_CHECK(ramp_costmodel_nterms(kind) > 0, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_costmodel_fit: cost model kind %d unknown (expected %d..%d)", (int)kind,
               (int)RAMP_COSTMODEL_EQ3, (int)RAMP_COSTMODEL_EQ3_PAIRS);
    ramp_costmodel_fit_options defaults = {RAMP_WAVE_PICKS, 0};
    const ramp_costmodel_fit_options *o = opt ? opt : &defaults;
    RAMP_CHECK((int)o->wave >= RAMP_WAVE_PICKS && o->wave <= RAMP_WAVE_SMS,
               RAMP_ERR_INVALID_ARGUMENT, "wave fit %d unknown", (int)o->wave);
    RAMP_CHECK(t->nloads <= INT32_MAX - 1, RAMP_ERR_UNSUPPORTED,
               "%lld loads: at most 2^31-2 per fit", (long long)t->nloads);
    int nc = t->nconfigs, rows[64];
    int nrows = ramp_distinct_rows(t->configs, nc, rows, 64);
    int64_t nsel = 0;
    for (int64_t i = 0; i < t->nloads; i++)
        if (!mask || mask[i]) nsel++;
    RAMP_CHECK(nsel > 0, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_costmodel_fit: the mask selects none of %lld loads",
               (long long)t->nloads);
    int sms = t->sms > 0 ? t->sms : 1;
    /* Wave-size candidates per configuration: sms * j, j = 1 .. bps (EQ3;
     * capped at 64), else the one sms * bps. */
    const int eq3 = is_eq3(kind), nt = ramp_costmodel_nterms(kind);
    int maxc = 1;
    for (int c = 0; eq3 && c < nc; c++) {
        int b = t->blocks_per_sm[c] > 0 ? t->blocks_per_sm[c] : 1;
        if (b > maxc) maxc = b > 64 ? 64 : b;
    }
    int descent = eq3 && o->wave == RAMP_WAVE_PICKS;
    int penalise = eq3 && !o->intercept_free;
    /* rt's row per selected load: row tiles at each distinct rows value,
     * then the active experts and the pairs. */
    const int rw = nrows + 2;

    ramp_costmodel *m = NULL;
    RAMP_TRY(costmodel_alloc(t, kind, &m));
    /* Per selected load: row tiles at each distinct rows value, then A. */
    int64_t *sel = ramp_calloc((size_t)nsel, sizeof *sel);
    double *rt = ramp_calloc((size_t)nsel * rw, sizeof *rt);
    double *A = ramp_calloc((size_t)(nsel + 1) * nt, sizeof *A);
    double *bvec = ramp_calloc((size_t)nsel + 1, sizeof *bvec);
    double *tiles = ramp_calloc((size_t)nsel * 4, sizeof *tiles);
    double *act = tiles ? tiles + nsel : NULL, *tm = tiles ? tiles + 2 * nsel : NULL;
    double *prs = tiles ? tiles + 3 * nsel : NULL;
    double *ctheta = ramp_calloc((size_t)nc * maxc * nt, sizeof *ctheta);
    double *crms = ramp_calloc((size_t)nc * maxc, sizeof *crms);
    int *ncand = ramp_calloc((size_t)nc, sizeof *ncand);
    int *jsel = ramp_calloc((size_t)nc, sizeof *jsel);
    double *pred = descent ? ramp_calloc((size_t)nc * maxc * (size_t)nsel, sizeof *pred) : NULL;
    ramp_status st = RAMP_OK;
    if (!sel || !rt || !A || !bvec || !tiles || !ctheta || !crms || !ncand || !jsel ||
        (descent && !pred)) {
        st = RAMP_ERR_OUT_OF_MEMORY;
        goto done;
    }
    int64_t k = 0;
    for (int64_t i = 0; i < t->nloads; i++) {
        if (mask && !mask[i]) continue;
        sel[k] = i;
        const int32_t *ld = ramp_load_of(t, i);
        for (int r = 0; r < nrows; r++)
            rowtiles_of(t->nexp[i], ld, rows[r], &rt[k * rw + r], &rt[k * rw + nrows],
                        &rt[k * rw + nrows + 1]);
        k++;
    }
    int fitted = 0;
    for (int c = 0; c < nc && st == RAMP_OK; c++) {
        const ramp_config *cfg = &t->configs[c];
        int slot = rows_slot(rows, nrows, cfg->rows);
        int64_t nr = 0;
        for (int64_t j = 0; j < nsel; j++) {
            double time = t->times_us[(size_t)sel[j] * nc + c];
            if (isnan(time)) continue; /* not measured */
            if (!(time > 0) || !isfinite(time)) {
                char name[64];
                st = ramp_set_error(RAMP_ERR_NUMERIC, __FILE__, __LINE__,
                                    "timing load %lld, config %s: time %g us "
                                    "(need finite and > 0 to fit)",
                                    (long long)sel[j],
                                    ramp_config_name(cfg, name, sizeof name), time);
                break;
            }
            tiles[nr] = tiles_of(cfg, &t->geom, rt[j * rw + slot]);
            act[nr] = rt[j * rw + nrows];
            prs[nr] = rt[j * rw + nrows + 1];
            tm[nr] = time;
            nr++;
        }
        if (st != RAMP_OK) break;
        m->rows[c] = nr;
        m->rel_rmse[c] = NAN;
        if (nr == 0) continue;
        /* S_c candidates (only Equation 3 has a wave term): sms * j for j
         * = 1 .. blocks_per_sm; each fit on its own, chosen below. */
        int bps = t->blocks_per_sm[c] > 0 ? t->blocks_per_sm[c] : 1;
        ncand[c] = eq3 ? (bps < maxc ? bps : maxc) : 1;
        for (int cj = 0; cj < ncand[c] && st == RAMP_OK; cj++) {
            double S = eq3 ? (double)sms * (cj + 1) : slots_of(sms, bps);
            double *th = &ctheta[((size_t)c * maxc + cj) * nt];
            st = fit_at(kind, tiles, act, prs, tm, nr, S, t->sms, penalise, A, bvec, th,
                        &crms[(size_t)c * maxc + cj]);
            if (st != RAMP_OK || !descent) continue;
            for (int64_t j = 0; j < nsel; j++) {
                double terms[RAMP_COST_TERMS_MAX], p = 0;
                const double tj = tiles_of(cfg, &t->geom, rt[j * rw + slot]);
                terms_from(kind, tj, S, t->sms, rt[j * rw + nrows], rt[j * rw + nrows + 1], terms);
                for (int l = 0; l < nt; l++) p += th[l] * terms[l];
                p += ramp_past_waves_us(t->kernel, cfg, tj, S);
                pred[((size_t)c * maxc + cj) * (size_t)nsel + (size_t)j] = p;
            }
        }
        if (st != RAMP_OK) break;
        const double *e = &crms[(size_t)c * maxc];
        int last = ncand[c] - 1;
        switch (eq3 ? o->wave : RAMP_WAVE_CAPACITY) {
        case RAMP_WAVE_RMSE:
            /* The lowest RMS error; a smaller wave must fit clearly better,
             * not by rounding. */
            jsel[c] = last;
            for (int cj = last - 1; cj >= 0; cj--)
                if (e[cj] < e[jsel[c]] * (1.0 - 1e-9)) jsel[c] = cj;
            break;
        case RAMP_WAVE_CAPACITY: jsel[c] = last; break;
        case RAMP_WAVE_SMS:
        case RAMP_WAVE_PICKS: jsel[c] = 0; break;
        }
        fitted++;
    }
    if (st == RAMP_OK && fitted == 0)
        st = ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                            "ramp_costmodel_fit: no configuration has a measured "
                            "time on the %lld selected loads", (long long)nsel);
    if (st == RAMP_OK && descent)
        st = wave_descent(t, sel, nsel, pred, maxc, ncand, m->rows, jsel);
    for (int c = 0; c < nc && st == RAMP_OK; c++) {
        if (m->rows[c] == 0) continue;
        memcpy(&m->theta[(size_t)c * nt], &ctheta[((size_t)c * maxc + jsel[c]) * nt],
               (size_t)nt * sizeof *ctheta);
        m->rel_rmse[c] = crms[(size_t)c * maxc + jsel[c]];
        if (eq3) m->slots[c] = sms * (jsel[c] + 1);
    }
done:
    free(sel);
    free(rt);
    free(A);
    free(bvec);
    free(tiles);
    free(ctheta);
    free(crms);
    free(ncand);
    free(jsel);
    free(pred);
    if (st != RAMP_OK) {
        ramp_costmodel_free(m);
        return st;
    }
    *out = m;
    return RAMP_OK;
}

/* S_c of a fitted model: the fit's choice, or sms * blocks_per_sm. */
static double model_slots(const ramp_costmodel *m, int c) {
    if (m->slots && m->slots[c] > 0) return (double)m->slots[c];
    return slots_of(m->sms, m->blocks_per_sm[c]);
}

int ramp_costmodel_slots(const ramp_costmodel *m, int config) {
    if (!m || config < 0 || config >= m->nconfigs) return 0;
    return (int)model_slots(m, config);
}

/* ---- transfer to a new model ------------------------------------------------ */

double ramp_costmodel_transfer_scale(const ramp_geometry *g) {
    return g && g->hidden > 0 ? (double)g->hidden / 2048.0 : 1.0;
}

ramp_status ramp_costmodel_fit_transfer(const ramp_timing *const *train, int ntrain,
                                        const ramp_timing *target, ramp_costmodel **out) {
    return ramp_costmodel_fit_transfer_kind(train, ntrain, target, RAMP_COSTMODEL_EQ3, out);
}

ramp_status ramp_costmodel_fit_transfer_kind(const ramp_timing *const *train, int ntrain,
                                             const ramp_timing *target,
                                             ramp_costmodel_kind kind, ramp_costmodel **out) {
    RAMP_CHECK(out && train && ntrain >= 1, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_costmodel_fit_transfer: NULL argument or no training dataset");
    RAMP_CHECK(is_eq3(kind), RAMP_ERR_INVALID_ARGUMENT,
               "ramp_costmodel_fit_transfer: cost model %s (%d): the transfer fits eq3 or "
               "eq3+pairs", ramp_costmodel_kind_name(kind), (int)kind);
    const int nt = ramp_costmodel_nterms(kind);
    RAMP_TRY(check_timing(target));
    int64_t total = 0;
    for (int k = 0; k < ntrain; k++) {
        RAMP_TRY(check_timing(train[k]));
        total += train[k]->nloads;
    }
    RAMP_CHECK(total >= 1 && total <= INT32_MAX, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_costmodel_fit_transfer: %lld training loads", (long long)total);
    ramp_costmodel *m = NULL;
    RAMP_TRY(costmodel_alloc(target, kind, &m));
    double *A = ramp_calloc((size_t)total * nt, sizeof *A);
    double *bvec = ramp_calloc((size_t)total, sizeof *bvec);
    int *col = ramp_calloc((size_t)ntrain, sizeof *col);
    ramp_status st = A && bvec && col ? RAMP_OK : RAMP_ERR_OUT_OF_MEMORY;
    int fitted = 0;
    double st_target = ramp_costmodel_transfer_scale(&target->geom);
    for (int c = 0; c < target->nconfigs && st == RAMP_OK; c++) {
        const ramp_config *cfg = &target->configs[c];
        m->rows[c] = 0;
        m->rel_rmse[c] = NAN;
        int64_t nr = 0;
        for (int k = 0; k < ntrain; k++) {
            const ramp_timing *t = train[k];
            col[k] = -1;
            for (int j = 0; j < t->nconfigs; j++)
                if (ramp_config_equal(&t->configs[j], cfg)) col[k] = j;
            if (col[k] < 0) continue;
            double sc = ramp_costmodel_transfer_scale(&t->geom);
            for (int64_t i = 0; i < t->nloads; i++) {
                double time = t->times_us[(size_t)i * t->nconfigs + col[k]];
                if (!(time > 0) || !isfinite(time)) continue; /* unmeasured */
                double terms[RAMP_COST_TERMS_MAX];
                ramp_costmodel_terms(kind, cfg, &t->geom, t->sms, t->blocks_per_sm[col[k]],
                                     t->nexp[i], ramp_load_of(t, i), terms);
                for (int l = 1; l < nt; l++) terms[l] *= sc;
                for (int l = 0; l < nt; l++) A[nr * nt + l] = terms[l] / time;
                bvec[nr++] = 1.0;
            }
        }
        if (nr == 0) continue;
        double *th = &m->theta[(size_t)c * nt];
        st = ramp_nnls(A, (int)nr, nt, bvec, th);
        if (st != RAMP_OK) break;
        double ss = 0;
        for (int64_t j = 0; j < nr; j++) {
            double p = 0;
            for (int l = 0; l < nt; l++) p += A[j * nt + l] * th[l];
            ss += (p - 1) * (p - 1);
        }
        m->rel_rmse[c] = sqrt(ss / (double)nr);
        /* Fold the target's scale into the coefficients: a plain EQ3 model
         * of the target's configurations, at its own sms * blocks_per_sm. */
        for (int l = 1; l < nt; l++) th[l] *= st_target;
        m->rows[c] = nr;
        fitted++;
    }
    if (st == RAMP_OK && fitted == 0)
        st = ramp_set_error(RAMP_ERR_NOT_FOUND, __FILE__, __LINE__,
                            "ramp_costmodel_fit_transfer: no configuration of the target is "
                            "timed in the training datasets");
    free(A);
    free(bvec);
    free(col);
    if (st != RAMP_OK) {
        ramp_costmodel_free(m);
        return st;
    }
    *out = m;
    return RAMP_OK;
}

void ramp_costmodel_predict_all(const ramp_costmodel *m, int nexp,
                                const int32_t *load, double *out) {
    if (!m || !out) return;
    /* Row tiles depend on the configuration only through b: compute once per
     * distinct b. */
    const int nt = ramp_costmodel_nterms(m->kind);
    int seen_b[64], nseen = 0;
    double seen_rt[64], active = 0, pairs = 0;
    for (int c = 0; c < m->nconfigs; c++) {
        if (m->rows[c] == 0) { out[c] = INFINITY; continue; }
        const ramp_config *cfg = &m->configs[c];
        int b = cfg->rows > 0 ? cfg->rows : 1, s = -1;
        for (int i = 0; i < nseen; i++)
            if (seen_b[i] == b) s = i;
        double rt;
        if (s >= 0) rt = seen_rt[s];
        else {
            rowtiles_of(nexp, load, b, &rt, &active, &pairs);
            if (nseen < 64) { seen_b[nseen] = b; seen_rt[nseen++] = rt; }
        }
        double terms[RAMP_COST_TERMS_MAX];
        const double tiles = tiles_of(cfg, &m->geom, rt);
        terms_from(m->kind, tiles, model_slots(m, c), m->sms, active, pairs, terms);
        const double *th = &m->theta[(size_t)c * nt];
        double p = 0;
        for (int l = 0; l < nt; l++) p += th[l] * terms[l];
        out[c] = p + ramp_past_waves_us(m->kernel, cfg, tiles, model_slots(m, c));
    }
}

/* The past-wave penalty of configuration c of model m on a load. */
static double model_past_waves(const ramp_costmodel *m, int c, int nexp, const int32_t *load) {
    const ramp_config *cfg = &m->configs[c];
    if (ramp_config_max_waves((ramp_kernel_version)m->kernel, cfg) == 0) return 0.0;
    double rt = 0, act = 0;
    rowtiles_of(nexp, load, cfg->rows, &rt, &act, NULL);
    return ramp_past_waves_us(m->kernel, cfg, tiles_of(cfg, &m->geom, rt), model_slots(m, c));
}

double ramp_costmodel_predict(const ramp_costmodel *m, int config, int nexp,
                              const int32_t *load) {
    if (!m || config < 0 || config >= m->nconfigs) return NAN;
    if (m->rows[config] == 0) return INFINITY;
    const int nt = ramp_costmodel_nterms(m->kind);
    double terms[RAMP_COST_TERMS_MAX];
    ramp_costmodel_terms_slots(m->kind, &m->configs[config], &m->geom, m->sms,
                               (int)model_slots(m, config), nexp, load, terms);
    const double *th = &m->theta[(size_t)config * nt];
    double p = 0;
    for (int l = 0; l < nt; l++) p += th[l] * terms[l];
    return p + model_past_waves(m, config, nexp, load);
}

ramp_status ramp_costmodel_pick(const ramp_costmodel *m, int nexp,
                                const int32_t *load, const int *candidates,
                                int ncandidates, int *config) {
    RAMP_CHECK(m && config && (load || nexp == 0), RAMP_ERR_INVALID_ARGUMENT,
               "ramp_costmodel_pick: NULL argument");
    int n = candidates ? ncandidates : m->nconfigs;
    RAMP_CHECK(n >= 1, RAMP_ERR_INVALID_ARGUMENT, "ramp_costmodel_pick: no candidates");
    double *pred = ramp_calloc((size_t)m->nconfigs, sizeof *pred);
    if (!pred) return RAMP_ERR_OUT_OF_MEMORY;
    ramp_costmodel_predict_all(m, nexp, load, pred);
    int best = -1;
    double bv = INFINITY;
    for (int i = 0; i < n; i++) {
        int c = candidates ? candidates[i] : i;
        if (c < 0 || c >= m->nconfigs) {
            free(pred);
            RAMP_FAIL(RAMP_ERR_INVALID_ARGUMENT, "candidate %d: config index %d out of [0, %d)",
                      i, c, m->nconfigs);
        }
        if (pred[c] < bv) { bv = pred[c]; best = c; }
    }
    free(pred);
    RAMP_CHECK(best >= 0, RAMP_ERR_NUMERIC,
               "ramp_costmodel_pick: no candidate has a finite prediction (unfit)");
    *config = best;
    return RAMP_OK;
}

/* ---- diagnostics --------------------------------------------------------- */

void ramp_costmodel_load_diag(const ramp_costmodel *m, const ramp_timing *t,
                              int64_t i, const int *cands, int ncand,
                              double *scratch, double *rho, double *pick_err,
                              double *pred_out) {
    int nc = m->nconfigs;
    double *pred = pred_out ? pred_out : scratch;
    double *pv = scratch + nc, *mv = scratch + 2 * (size_t)nc;
    const int32_t *load = ramp_load_of(t, i);
    ramp_costmodel_predict_all(m, t->nexp[i], load, pred);
    const float *tm = ramp_times_of(t, i);
    int n = 0, best = -1;
    double best_v = INFINITY;
    int total = cands ? ncand : nc;
    /* The pick as served (past-wave penalty included); the ranking and the
     * error of Equation 3 itself, over the configurations the load may
     * choose; pred_out gets Equation 3 without the penalty. */
    for (int j = 0; j < total; j++) {
        int c = cands ? cands[j] : j;
        const double pen = model_past_waves(m, c, t->nexp[i], load);
        const int ok = isfinite(tm[c]) && isfinite(pred[c]);
        if (ok && (best < 0 || pred[c] < best_v)) { best_v = pred[c]; best = c; }
        pred[c] -= pen;
        if (!ok || pen > 0) continue;
        pv[n] = pred[c];
        mv[n] = tm[c];
        n++;
    }
    *rho = ramp_spearman(pv, mv, n);
    *pick_err = best >= 0 ? fabs(pred[best] / tm[best] - 1.0) : NAN;
}

ramp_status ramp_costmodel_diagnose(const ramp_costmodel *m,
                                    const ramp_timing *t, const uint8_t *mask,
                                    const int *candidates, int ncandidates,
                                    ramp_costmodel_diag *out) {
    RAMP_CHECK(m && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_costmodel_diagnose: NULL argument");
    RAMP_TRY(check_timing(t));
    RAMP_CHECK(t->nconfigs == m->nconfigs, RAMP_ERR_INVALID_ARGUMENT,
               "dataset has %d configurations, the model %d", t->nconfigs, m->nconfigs);
    for (int j = 0; candidates && j < ncandidates; j++)
        RAMP_CHECK(candidates[j] >= 0 && candidates[j] < m->nconfigs,
                   RAMP_ERR_INVALID_ARGUMENT, "candidate %d: index %d out of range", j,
                   candidates[j]);
    memset(out, 0, sizeof *out);
    int nc = m->nconfigs;
    double *scratch = ramp_calloc((size_t)nc * 3, sizeof *scratch);
    double *rhos = ramp_calloc((size_t)(t->nloads ? t->nloads : 1), sizeof *rhos);
    double *errs = ramp_calloc((size_t)(t->nloads ? t->nloads : 1), sizeof *errs);
    if (!scratch || !rhos || !errs) {
        free(scratch); free(rhos); free(errs);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    int64_t nr = 0, ne = 0, ng = 0;
    double gap = 0;
    for (int64_t i = 0; i < t->nloads; i++) {
        if (mask && !mask[i]) continue;
        double rho, err;
        ramp_costmodel_load_diag(m, t, i, candidates, ncandidates, scratch, &rho, &err, NULL);
        if (!isnan(rho)) rhos[nr++] = rho;
        if (!isnan(err)) {
            errs[ne++] = err;
            /* gap of the pick to the best measured among the candidates */
            const float *tm = ramp_times_of(t, i);
            int total = candidates ? ncandidates : nc, pick = -1, best = -1;
            for (int j = 0; j < total; j++) {
                int c = candidates ? candidates[j] : j;
                if (!isfinite(tm[c]) || !isfinite(scratch[c])) continue;
                if (pick < 0 || scratch[c] < scratch[pick]) pick = c;
                if (best < 0 || tm[c] < tm[best]) best = c;
            }
            gap += (double)tm[pick] / (double)tm[best] - 1.0;
            ng++;
        }
    }
    out->loads = nr;
    out->spearman_median = ramp_median_inplace(rhos, nr);
    out->spearman_p10 = nr ? ramp_quantile_sorted(rhos, nr, 0.10) : NAN;
    out->pick_err_median = ramp_median_inplace(errs, ne);
    out->pick_err_p90 = ne ? ramp_quantile_sorted(errs, ne, 0.90) : NAN;
    out->pick_gap_mean = ng ? gap / (double)ng : NAN;
    free(scratch);
    free(rhos);
    free(errs);
    return RAMP_OK;
}
