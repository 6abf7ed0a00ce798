/*
 * policy.c - the ways of choosing a configuration for a per-GPU load that
 * the paper compares (Section 4 "Baselines", Table 3; Appendix A.2, Table 4;
 * A.5, Table 9): vLLM's batch-size table tuned on uniformly random routing,
 * the same table tuned on recorded traffic, per-GPU tables keyed on the
 * GPU's token count and on a measure of its balance, k nearest neighbours,
 * the cost model (RaMP), the tile-count formula, exhaustive search, and the
 * menu-restricted variants.
 *
 * Every learning policy is fit on a mask of training loads and reads no
 * other load's times. Tables keep, per cell, the candidate with the least
 * summed time over the cell's training loads (batch tables: summed layer
 * time, the slowest GPU's) and fall back to the nearest non-empty cell.
 *
 * Also here: grouping a dataset's loads into batches and the per-load
 * statistics (token count, active experts, padding, max/mean, CV) that the
 * tables and the k-NN policy are keyed on.
 */
#include "eval.h"

#include <ctype.h>
#include <math.h>
#include <string.h>
#include <strings.h>

const int ramp_vllm_batch_sizes[RAMP_VLLM_SIZES] = {
    1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 1536, 2048, 3072, 4096};

/* ---- batches --------------------------------------------------------------- */

typedef struct { int32_t id; int64_t idx; } batch_key;

static int by_batch(const void *pa, const void *pb) {
    const batch_key *a = pa, *b = pb;
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

void ramp_batches_free(ramp_batches *b) {
    if (!b) return;
    free(b->id);
    free(b->first);
    free(b->loads);
    memset(b, 0, sizeof *b);
}

ramp_status ramp_batches_build(const ramp_timing *t, ramp_batches *out) {
    RAMP_CHECK(t && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_batches_build: NULL argument");
    memset(out, 0, sizeof *out);
    int64_t n = t->nloads;
    batch_key *keys = ramp_calloc((size_t)(n ? n : 1), sizeof *keys);
    out->loads = ramp_calloc((size_t)(n ? n : 1), sizeof *out->loads);
    out->id = ramp_calloc((size_t)(n ? n : 1), sizeof *out->id);
    out->first = ramp_calloc((size_t)n + 1, sizeof *out->first);
    if (!keys || !out->loads || !out->id || !out->first) {
        free(keys);
        ramp_batches_free(out);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    for (int64_t i = 0; i < n; i++) {
        if (t->domain[i] < 0 || t->domain[i] >= t->ndomains) {
            free(keys);
            ramp_batches_free(out);
            RAMP_FAIL(RAMP_ERR_FORMAT, "timing load %lld: domain index %d out of [0, %d)",
                      (long long)i, t->domain[i], t->ndomains);
        }
        keys[i].id = t->batch[i];
        keys[i].idx = i;
    }
    qsort(keys, (size_t)n, sizeof *keys, by_batch);
    int64_t nb = 0;
    for (int64_t j = 0; j < n; j++) {
        int64_t i = keys[j].idx;
        if (j == 0 || keys[j].id != keys[j - 1].id) {
            out->id[nb] = keys[j].id;
            out->first[nb] = j;
            nb++;
        } else {
            int64_t f = keys[out->first[nb - 1]].idx;
            if (t->domain[i] != t->domain[f] || t->batch_tokens[i] != t->batch_tokens[f]) {
                int32_t bid = keys[j].id;
                free(keys);
                ramp_batches_free(out);
                RAMP_FAIL(RAMP_ERR_FORMAT,
                          "timing batch %d: load %lld has domain %d, batch_tokens %d but "
                          "load %lld has domain %d, batch_tokens %d",
                          bid, (long long)i, t->domain[i], t->batch_tokens[i],
                          (long long)f, t->domain[f], t->batch_tokens[f]);
            }
        }
        out->loads[j] = i;
    }
    out->first[nb] = n;
    out->count = nb;
    free(keys);
    return RAMP_OK;
}

/* ---- per-load statistics ---------------------------------------------------- */

void ramp_load_stats_compute(int nexp, const int32_t *load, const int *rows,
                             int nrows, ramp_load_stats *out) {
    double tokens = 0, active = 0, mx = 0, ss = 0;
    for (int e = 0; e < nexp; e++) {
        double n = load[e] > 0 ? load[e] : 0;
        tokens += n;
        if (n > 0) active++;
        if (n > mx) mx = n;
        ss += n * n;
    }
    out->tokens = tokens;
    out->active = active;
    out->padding = 0;
    out->maxmean = 1;
    out->cv = 0;
    if (tokens <= 0 || nexp <= 0) return;
    double mean = tokens / nexp;
    out->maxmean = mx / mean;
    double var = ss / nexp - mean * mean;
    out->cv = var > 0 ? sqrt(var) / mean : 0;
    double pad = 0;
    for (int r = 0; r < nrows; r++) {
        int64_t padded = 0, b = rows[r];
        for (int e = 0; e < nexp; e++)
            if (load[e] > 0) padded += ((int64_t)load[e] + b - 1) / b * b;
        pad += (double)(padded - (int64_t)tokens) / (double)padded;
    }
    out->padding = nrows ? pad / nrows : 0;
}

/* ---- names ------------------------------------------------------------------ */

static const char *const NAMES[RAMP_POLICY_COUNT] = {
    "vllm", "trace-table", "per-gpu-table", "table-padding", "table-active",
    "table-maxmean", "table-cv", "table-3d", "knn", "exhaustive", "ramp",
    "tilecount-ols", "menu-table", "menu-ramp", "menu-best"};

static const char *const LABELS[RAMP_POLICY_COUNT] = {
    "vLLM's tuning", "Trace-tuned table", "Per-GPU table",
    "2-D table: tokens x padding", "2-D table: tokens x active experts",
    "2-D table: tokens x max/mean", "2-D table: tokens x CV",
    "3-D table: tokens x active x padding", "k nearest neighbours",
    "Exhaustive search", "RaMP (cost model)", "Tile-count formula (OLS)",
    "Table on the menu", "RaMP on the menu", "Best of the menu"};

const char *ramp_policy_name(ramp_policy_kind k) {
    return (int)k >= 0 && k < RAMP_POLICY_COUNT ? NAMES[k] : "?";
}

const char *ramp_policy_label(ramp_policy_kind k) {
    return (int)k >= 0 && k < RAMP_POLICY_COUNT ? LABELS[k] : "?";
}

ramp_status ramp_policy_parse(const char *text, ramp_policy_kind *out) {
    RAMP_CHECK(text && out, RAMP_ERR_INVALID_ARGUMENT, "policy name is NULL");
    for (int k = 0; k < RAMP_POLICY_COUNT; k++)
        if (strcasecmp(text, NAMES[k]) == 0) { *out = (ramp_policy_kind)k; return RAMP_OK; }
    if (strcasecmp(text, "costmodel") == 0) { *out = RAMP_POLICY_COSTMODEL; return RAMP_OK; }
    RAMP_FAIL(RAMP_ERR_NOT_FOUND,
              "policy '%s' unknown; known: vllm, trace-table, per-gpu-table, table-padding, "
              "table-active, table-maxmean, table-cv, table-3d, knn, exhaustive, ramp, "
              "tilecount-ols, menu-table, menu-ramp, menu-best", text);
}

int ramp_policy_is_oracle(ramp_policy_kind k) {
    return k == RAMP_POLICY_EXHAUSTIVE || k == RAMP_POLICY_MENU_BEST;
}

int ramp_policy_needs_menu(ramp_policy_kind k) {
    return k == RAMP_POLICY_MENU_TABLE || k == RAMP_POLICY_MENU_COSTMODEL ||
           k == RAMP_POLICY_MENU_BEST;
}

void ramp_policy_defaults(ramp_policy_options *o) {
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->tune_domain = "uniform";
    o->gpu_buckets = RAMP_BUCKETS_POW2;
    o->pad_buckets = 8;
    o->aux_buckets = 4;
    o->cube_buckets = 4;
    o->knn_k = 8;
    /* Equation 3 + pairs: closes most of kernel v2's gap on DeepSeek-V3 and
     * Phi-3.5 and is neutral elsewhere (eval-2026-11-30-kernel-v2.md); the
     * zero value stays the paper's Equation 3 */
    o->cost_model = RAMP_COSTMODEL_EQ3_PAIRS;
}

/* ---- the policy object ------------------------------------------------------- */

typedef enum { BASE_BATCH_TABLE, BASE_LOAD_TABLE, BASE_KNN, BASE_ORACLE, BASE_MODEL } base_kind;

typedef enum {
    AX_BATCH18,   /* whole batch's tokens, nearest of the 18 sizes */
    AX_GPU_POW2,  /* GPU's tokens, power-of-two buckets */
    AX_GPU_18,    /* GPU's tokens, nearest of the 18 sizes */
    AX_PADDING,   /* the others: quantile buckets of the training loads */
    AX_ACTIVE,
    AX_MAXMEAN,
    AX_CV
} axis_kind;

#define MAX_AXES 3
#define POW2_BUCKETS 33
#define KNN_DIMS 4

struct ramp_policy {
    ramp_policy_kind kind;
    base_kind base;
    int nconfigs;
    int ncand;
    int *cand;                 /* [ncand] candidate config indices, ascending */
    int rows[64];              /* distinct tile rows (padding statistic) */
    int nrows;
    /* tables */
    int naxes;
    axis_kind axis[MAX_AXES];
    int nb[MAX_AXES];          /* buckets per axis */
    double edges[MAX_AXES][64];/* quantile edges (nb - 1 of them) */
    int64_t ncells;
    int *cell;                 /* [ncells] config index, -1 empty */
    /* k-NN */
    int k;
    int64_t ntrain;
    double mean[KNN_DIMS], sd[KNN_DIMS];
    double *feat;              /* [ntrain * KNN_DIMS] standardised */
    float *rel;                /* [ntrain * ncand] time / best time */
    /* cost models */
    ramp_costmodel *model;
};

ramp_policy_kind ramp_policy_kind_of(const ramp_policy *p) { return p->kind; }

const ramp_costmodel *ramp_policy_costmodel(const ramp_policy *p) {
    return p ? p->model : NULL;
}

void ramp_policy_free(ramp_policy *p) {
    if (!p) return;
    free(p->cand);
    free(p->cell);
    free(p->feat);
    free(p->rel);
    ramp_costmodel_free(p->model);
    free(p);
}

static int nearest18(double tokens) {
    int best = 0;
    double bd = fabs(ramp_vllm_batch_sizes[0] - tokens);
    for (int j = 1; j < RAMP_VLLM_SIZES; j++) {
        double d = fabs(ramp_vllm_batch_sizes[j] - tokens);
        if (d < bd) { bd = d; best = j; } /* ties: the smaller size, as vLLM */
    }
    return best;
}

static int pow2_bucket(double tokens) {
    if (tokens < 1) return 0;
    int b = 1;
    while (b < POW2_BUCKETS - 1 && tokens >= 2.0 * pow(2.0, b - 1)) b++;
    return b; /* 1: [1,2), 2: [2,4), ... */
}

static double stat_of(axis_kind a, const ramp_load_stats *s, int32_t batch_tokens) {
    switch (a) {
    case AX_BATCH18: return batch_tokens;
    case AX_GPU_POW2:
    case AX_GPU_18: return s->tokens;
    case AX_PADDING: return s->padding;
    case AX_ACTIVE: return s->active;
    case AX_MAXMEAN: return s->maxmean;
    case AX_CV: return s->cv;
    }
    return 0;
}

static int bucket_of(const ramp_policy *p, int ax, double v) {
    switch (p->axis[ax]) {
    case AX_BATCH18:
    case AX_GPU_18: return nearest18(v);
    case AX_GPU_POW2: return pow2_bucket(v);
    default: {
        int b = 0; /* edges at or below v */
        while (b < p->nb[ax] - 1 && v >= p->edges[ax][b]) b++;
        return b;
    }
    }
}

/* Distance along the token axis: by token count for the 18 sizes (vLLM's
 * nearest entry), by bucket index otherwise. */
static double axis0_distance(const ramp_policy *p, int j, int b, double v) {
    if (p->axis[0] == AX_BATCH18 || p->axis[0] == AX_GPU_18)
        return fabs(ramp_vllm_batch_sizes[j] - v);
    return fabs((double)(j - b));
}

static int table_lookup(const ramp_policy *p, const double *v) {
    int b[MAX_AXES] = {0, 0, 0};
    for (int a = 0; a < p->naxes; a++) b[a] = bucket_of(p, a, v[a]);
    int64_t idx = 0;
    for (int a = 0; a < p->naxes; a++) idx = idx * p->nb[a] + b[a];
    if (p->cell[idx] >= 0) return p->cell[idx];
    /* Nearest non-empty cell: token axis first, then the rest (L1 in
     * bucket index); ties to the first cell in index order. */
    int best = -1;
    double bd0 = INFINITY, bd1 = INFINITY;
    for (int64_t c = 0; c < p->ncells; c++) {
        if (p->cell[c] < 0) continue;
        int j[MAX_AXES] = {0, 0, 0};
        int64_t rest = c;
        for (int a = p->naxes - 1; a >= 0; a--) { j[a] = (int)(rest % p->nb[a]); rest /= p->nb[a]; }
        double d0 = axis0_distance(p, j[0], b[0], v[0]), d1 = 0;
        for (int a = 1; a < p->naxes; a++) d1 += abs(j[a] - b[a]);
        if (d0 < bd0 || (d0 == bd0 && d1 < bd1)) { bd0 = d0; bd1 = d1; best = p->cell[c]; }
    }
    return best;
}

static int cmp_double(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* Candidates: the menu for MENU_* kinds, else every configuration; both
 * keep only the runnable ones (blocks_per_sm >= 1) that have a finite time
 * on every training load (batch tables and VLLM: on their loads). */
static ramp_status set_candidates(ramp_policy *p, const ramp_timing *t,
                                  const uint8_t *train, const ramp_policy_options *o,
                                  int need_times) {
    int nc = t->nconfigs;
    int *use = ramp_calloc((size_t)nc, sizeof *use);
    if (!use) return RAMP_ERR_OUT_OF_MEMORY;
    if (ramp_policy_needs_menu(p->kind)) {
        if (!o->menu || o->menu_count < 1) {
            free(use);
            RAMP_FAIL(RAMP_ERR_INVALID_ARGUMENT, "policy %s needs a menu (options.menu)",
                      ramp_policy_name(p->kind));
        }
        for (int j = 0; j < o->menu_count; j++) {
            int c = o->menu[j];
            if (c < 0 || c >= nc || use[c]) {
                free(use);
                RAMP_FAIL(RAMP_ERR_INVALID_ARGUMENT,
                          "menu entry %d: config index %d out of [0, %d) or repeated", j, c, nc);
            }
            use[c] = 1;
        }
    } else {
        for (int c = 0; c < nc; c++) use[c] = 1;
    }
    for (int c = 0; c < nc; c++)
        if (t->blocks_per_sm[c] < 1) use[c] = 0;
    if (need_times)
        for (int64_t i = 0; i < t->nloads; i++) {
            if (!train[i]) continue;
            const float *tm = ramp_times_of(t, i);
            for (int c = 0; c < nc; c++)
                if (use[c] && !isfinite(tm[c])) use[c] = 0;
        }
    p->cand = ramp_calloc((size_t)nc, sizeof *p->cand);
    if (!p->cand) { free(use); return RAMP_ERR_OUT_OF_MEMORY; }
    p->ncand = 0;
    for (int c = 0; c < nc; c++)
        if (use[c]) p->cand[p->ncand++] = c;
    free(use);
    RAMP_CHECK(p->ncand > 0, RAMP_ERR_INVALID_ARGUMENT,
               "policy %s: no candidate configuration is runnable%s",
               ramp_policy_name(p->kind), need_times ? " and timed on every training load" : "");
    return RAMP_OK;
}

/* Sums per cell and candidate -> each cell's argmin. */
static ramp_status finish_table(ramp_policy *p, const double *sum, const int64_t *count) {
    p->cell = ramp_calloc((size_t)p->ncells, sizeof *p->cell);
    if (!p->cell) return RAMP_ERR_OUT_OF_MEMORY;
    int64_t filled = 0;
    for (int64_t c = 0; c < p->ncells; c++) {
        p->cell[c] = -1;
        if (!count[c]) continue;
        int best = 0;
        for (int j = 1; j < p->ncand; j++)
            if (sum[c * p->ncand + j] < sum[c * p->ncand + best]) best = j;
        p->cell[c] = p->cand[best];
        filled++;
    }
    RAMP_CHECK(filled > 0, RAMP_ERR_INVALID_ARGUMENT, "policy %s: no training data",
               ramp_policy_name(p->kind));
    return RAMP_OK;
}

static ramp_status fit_batch_table(ramp_policy *p, const ramp_timing *t, uint8_t *train,
                                   const ramp_policy_options *o) {
    ramp_batches bt;
    RAMP_TRY(ramp_batches_build(t, &bt));
    p->naxes = 1;
    p->axis[0] = AX_BATCH18;
    p->nb[0] = RAMP_VLLM_SIZES;
    p->ncells = RAMP_VLLM_SIZES;
    /* A batch trains only if all its loads are training loads. */
    for (int64_t b = 0; b < bt.count; b++) {
        int all = 1;
        for (int64_t j = bt.first[b]; j < bt.first[b + 1]; j++)
            if (!train[bt.loads[j]]) all = 0;
        if (!all)
            for (int64_t j = bt.first[b]; j < bt.first[b + 1]; j++) train[bt.loads[j]] = 0;
    }
    ramp_status st = set_candidates(p, t, train, o, 1);
    double *sum = NULL;
    int64_t *count = NULL;
    if (st == RAMP_OK) {
        sum = ramp_calloc((size_t)p->ncells * p->ncand, sizeof *sum);
        count = ramp_calloc((size_t)p->ncells, sizeof *count);
        if (!sum || !count) st = RAMP_ERR_OUT_OF_MEMORY;
    }
    for (int64_t b = 0; st == RAMP_OK && b < bt.count; b++) {
        int64_t f = bt.loads[bt.first[b]];
        if (!train[f]) continue;
        int cell = nearest18(t->batch_tokens[f]);
        count[cell]++;
        for (int j = 0; j < p->ncand; j++) {
            double layer = 0;
            for (int64_t l = bt.first[b]; l < bt.first[b + 1]; l++) {
                double v = ramp_times_of(t, bt.loads[l])[p->cand[j]];
                if (v > layer) layer = v;
            }
            sum[cell * p->ncand + j] += layer;
        }
    }
    if (st == RAMP_OK) st = finish_table(p, sum, count);
    free(sum);
    free(count);
    ramp_batches_free(&bt);
    return st;
}

static ramp_status fit_load_table(ramp_policy *p, const ramp_timing *t,
                                  const uint8_t *train, const ramp_policy_options *o) {
    RAMP_TRY(set_candidates(p, t, train, o, 1));
    int64_t ntr = 0;
    for (int64_t i = 0; i < t->nloads; i++) ntr += train[i] != 0;
    RAMP_CHECK(ntr > 0, RAMP_ERR_INVALID_ARGUMENT, "policy %s: no training loads",
               ramp_policy_name(p->kind));
    ramp_load_stats *st = ramp_calloc((size_t)ntr, sizeof *st);
    double *vals = ramp_calloc((size_t)ntr, sizeof *vals);
    if (!st || !vals) { free(st); free(vals); return RAMP_ERR_OUT_OF_MEMORY; }
    int64_t k = 0;
    for (int64_t i = 0; i < t->nloads; i++)
        if (train[i])
            ramp_load_stats_compute(t->nexp[i], ramp_load_of(t, i), p->rows, p->nrows, &st[k++]);
    /* Quantile edges of the balance axes, from the training loads. */
    for (int a = 1; a < p->naxes; a++) {
        for (int64_t j = 0; j < ntr; j++) vals[j] = stat_of(p->axis[a], &st[j], 0);
        qsort(vals, (size_t)ntr, sizeof *vals, cmp_double);
        for (int e = 0; e < p->nb[a] - 1; e++)
            p->edges[a][e] = ramp_quantile_sorted(vals, ntr, (double)(e + 1) / p->nb[a]);
    }
    p->ncells = 1;
    for (int a = 0; a < p->naxes; a++) p->ncells *= p->nb[a];
    double *sum = ramp_calloc((size_t)p->ncells * p->ncand, sizeof *sum);
    int64_t *count = ramp_calloc((size_t)p->ncells, sizeof *count);
    ramp_status s = RAMP_OK;
    if (!sum || !count) s = RAMP_ERR_OUT_OF_MEMORY;
    k = 0;
    for (int64_t i = 0; s == RAMP_OK && i < t->nloads; i++) {
        if (!train[i]) continue;
        int64_t idx = 0;
        for (int a = 0; a < p->naxes; a++)
            idx = idx * p->nb[a] + bucket_of(p, a, stat_of(p->axis[a], &st[k], t->batch_tokens[i]));
        k++;
        count[idx]++;
        const float *tm = ramp_times_of(t, i);
        for (int j = 0; j < p->ncand; j++) sum[idx * p->ncand + j] += tm[p->cand[j]];
    }
    if (s == RAMP_OK) s = finish_table(p, sum, count);
    free(sum);
    free(count);
    free(st);
    free(vals);
    return s;
}

static void knn_features(const ramp_policy *p, const ramp_load_stats *s, double *f) {
    /* Token counts span four orders of magnitude: log before standardising,
     * so that "near" means a similar relative size. */
    f[0] = log2(1.0 + s->tokens);
    f[1] = s->active;
    f[2] = s->padding;
    f[3] = s->maxmean;
    for (int d = 0; d < KNN_DIMS; d++) f[d] = (f[d] - p->mean[d]) / p->sd[d];
}

static ramp_status fit_knn(ramp_policy *p, const ramp_timing *t, const uint8_t *train,
                           const ramp_policy_options *o) {
    RAMP_TRY(set_candidates(p, t, train, o, 1));
    int64_t ntr = 0;
    for (int64_t i = 0; i < t->nloads; i++) ntr += train[i] != 0;
    RAMP_CHECK(ntr > 0, RAMP_ERR_INVALID_ARGUMENT, "policy knn: no training loads");
    p->k = o->knn_k;
    p->ntrain = ntr;
    p->feat = ramp_calloc((size_t)ntr * KNN_DIMS, sizeof *p->feat);
    p->rel = ramp_calloc((size_t)ntr * p->ncand, sizeof *p->rel);
    if (!p->feat || !p->rel) return RAMP_ERR_OUT_OF_MEMORY;
    for (int d = 0; d < KNN_DIMS; d++) { p->mean[d] = 0; p->sd[d] = 1; }
    int64_t k = 0;
    for (int64_t i = 0; i < t->nloads; i++) {
        if (!train[i]) continue;
        ramp_load_stats s;
        ramp_load_stats_compute(t->nexp[i], ramp_load_of(t, i), p->rows, p->nrows, &s);
        knn_features(p, &s, &p->feat[k * KNN_DIMS]); /* raw: mean 0, sd 1 */
        const float *tm = ramp_times_of(t, i);
        double best = INFINITY;
        for (int j = 0; j < p->ncand; j++) best = fmin(best, tm[p->cand[j]]);
        for (int j = 0; j < p->ncand; j++)
            p->rel[k * p->ncand + j] = best > 0 ? (float)(tm[p->cand[j]] / best) : 1.0f;
        k++;
    }
    for (int d = 0; d < KNN_DIMS; d++) {
        double m = 0, v = 0;
        for (int64_t j = 0; j < ntr; j++) m += p->feat[j * KNN_DIMS + d];
        m /= (double)ntr;
        for (int64_t j = 0; j < ntr; j++) {
            double x = p->feat[j * KNN_DIMS + d] - m;
            v += x * x;
        }
        double sd = sqrt(v / (double)ntr);
        p->mean[d] = m;
        p->sd[d] = sd > 0 ? sd : 1;
        for (int64_t j = 0; j < ntr; j++)
            p->feat[j * KNN_DIMS + d] = (p->feat[j * KNN_DIMS + d] - m) / p->sd[d];
    }
    return RAMP_OK;
}

static ramp_status check_options(const ramp_policy_options *o) {
    RAMP_CHECK(o->pad_buckets >= 1 && o->pad_buckets <= 64, RAMP_ERR_INVALID_ARGUMENT,
               "pad_buckets %d: must be 1..64", o->pad_buckets);
    RAMP_CHECK(o->aux_buckets >= 1 && o->aux_buckets <= 64, RAMP_ERR_INVALID_ARGUMENT,
               "aux_buckets %d: must be 1..64", o->aux_buckets);
    RAMP_CHECK(o->cube_buckets >= 1 && o->cube_buckets <= 16, RAMP_ERR_INVALID_ARGUMENT,
               "cube_buckets %d: must be 1..16", o->cube_buckets);
    RAMP_CHECK(o->knn_k >= 1 && o->knn_k <= 256, RAMP_ERR_INVALID_ARGUMENT,
               "knn_k %d: must be 1..256", o->knn_k);
    RAMP_CHECK(o->gpu_buckets == RAMP_BUCKETS_POW2 || o->gpu_buckets == RAMP_BUCKETS_VLLM18,
               RAMP_ERR_INVALID_ARGUMENT, "gpu_buckets %d unknown", (int)o->gpu_buckets);
    RAMP_CHECK(o->tune_domain && *o->tune_domain, RAMP_ERR_INVALID_ARGUMENT,
               "tune_domain is empty");
    /* RaMP's model is Equation 3 in either form; the tile-count formula is
     * its own policy (TILECOUNT_OLS). */
    RAMP_CHECK(o->cost_model == RAMP_COSTMODEL_EQ3 || o->cost_model == RAMP_COSTMODEL_EQ3_PAIRS,
               RAMP_ERR_INVALID_ARGUMENT,
               "policy options: cost_model %s (%d): expected eq3 or eq3+pairs",
               ramp_costmodel_kind_name(o->cost_model), (int)o->cost_model);
    return RAMP_OK;
}

ramp_status ramp_policy_fit(ramp_policy_kind kind, const ramp_timing *t,
                            const uint8_t *train_mask,
                            const ramp_policy_options *opt, ramp_policy **out) {
    RAMP_CHECK(t && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_policy_fit: NULL argument");
    RAMP_CHECK((int)kind >= 0 && kind < RAMP_POLICY_COUNT, RAMP_ERR_INVALID_ARGUMENT,
               "policy kind %d unknown", (int)kind);
    RAMP_CHECK(t->nconfigs >= 1 && t->configs && t->blocks_per_sm,
               RAMP_ERR_INVALID_ARGUMENT, "timing dataset has no configurations");
    ramp_policy_options defaults;
    ramp_policy_defaults(&defaults);
    const ramp_policy_options *o = opt ? opt : &defaults;
    RAMP_TRY(check_options(o));

    ramp_policy *p = ramp_calloc(1, sizeof *p);
    uint8_t *train = ramp_calloc((size_t)(t->nloads ? t->nloads : 1), 1);
    if (!p || !train) { free(p); free(train); return RAMP_ERR_OUT_OF_MEMORY; }
    p->kind = kind;
    p->nconfigs = t->nconfigs;
    p->nrows = ramp_distinct_rows(t->configs, t->nconfigs, p->rows, 64);
    for (int64_t i = 0; i < t->nloads; i++) train[i] = !train_mask || train_mask[i];

    ramp_status st = RAMP_OK;
    switch (kind) {
    case RAMP_POLICY_VLLM: {
        int dom = -1;
        for (int d = 0; d < t->ndomains; d++)
            if (strcmp(t->domains[d], o->tune_domain) == 0) dom = d;
        int64_t n = 0;
        for (int64_t i = 0; i < t->nloads; i++) {
            if (t->domain[i] != dom) train[i] = 0;
            n += train[i];
        }
        if (n == 0) {
            st = ramp_set_error(RAMP_ERR_NOT_FOUND, __FILE__, __LINE__,
                                "policy vllm: no training loads of domain '%s' (the "
                                "uniformly random routing it is tuned on)", o->tune_domain);
            break;
        }
        p->base = BASE_BATCH_TABLE;
        st = fit_batch_table(p, t, train, o);
        break;
    }
    case RAMP_POLICY_TRACE_TABLE:
    case RAMP_POLICY_MENU_TABLE:
        p->base = BASE_BATCH_TABLE;
        st = fit_batch_table(p, t, train, o);
        break;
    case RAMP_POLICY_PER_GPU_TABLE:
    case RAMP_POLICY_TABLE_PADDING:
    case RAMP_POLICY_TABLE_ACTIVE:
    case RAMP_POLICY_TABLE_MAXMEAN:
    case RAMP_POLICY_TABLE_CV:
    case RAMP_POLICY_TABLE_3D:
        p->base = BASE_LOAD_TABLE;
        p->axis[0] = o->gpu_buckets == RAMP_BUCKETS_VLLM18 ? AX_GPU_18 : AX_GPU_POW2;
        p->nb[0] = o->gpu_buckets == RAMP_BUCKETS_VLLM18 ? RAMP_VLLM_SIZES : POW2_BUCKETS;
        p->naxes = kind == RAMP_POLICY_PER_GPU_TABLE ? 1 : kind == RAMP_POLICY_TABLE_3D ? 3 : 2;
        if (kind == RAMP_POLICY_TABLE_PADDING) { p->axis[1] = AX_PADDING; p->nb[1] = o->pad_buckets; }
        if (kind == RAMP_POLICY_TABLE_ACTIVE) { p->axis[1] = AX_ACTIVE; p->nb[1] = o->aux_buckets; }
        if (kind == RAMP_POLICY_TABLE_MAXMEAN) { p->axis[1] = AX_MAXMEAN; p->nb[1] = o->aux_buckets; }
        if (kind == RAMP_POLICY_TABLE_CV) { p->axis[1] = AX_CV; p->nb[1] = o->aux_buckets; }
        if (kind == RAMP_POLICY_TABLE_3D) {
            p->axis[1] = AX_ACTIVE;
            p->axis[2] = AX_PADDING;
            p->nb[1] = p->nb[2] = o->cube_buckets;
        }
        st = fit_load_table(p, t, train, o);
        break;
    case RAMP_POLICY_KNN:
        p->base = BASE_KNN;
        st = fit_knn(p, t, train, o);
        break;
    case RAMP_POLICY_EXHAUSTIVE:
    case RAMP_POLICY_MENU_BEST:
        p->base = BASE_ORACLE;
        st = set_candidates(p, t, train, o, 0);
        break;
    case RAMP_POLICY_COSTMODEL:
    case RAMP_POLICY_MENU_COSTMODEL:
    case RAMP_POLICY_TILECOUNT_OLS:
        p->base = BASE_MODEL;
        st = set_candidates(p, t, train, o, 0);
        if (st == RAMP_OK)
            st = ramp_costmodel_fit_opt(t, train,
                                        kind == RAMP_POLICY_TILECOUNT_OLS ? RAMP_COSTMODEL_TILECOUNT
                                                                          : o->cost_model,
                                        &o->fit, &p->model);
        if (st == RAMP_OK) {
            /* Only configurations the fit saw can be picked. */
            int n = 0;
            for (int j = 0; j < p->ncand; j++)
                if (p->model->rows[p->cand[j]] > 0) p->cand[n++] = p->cand[j];
            p->ncand = n;
            if (n == 0)
                st = ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                                    "policy %s: no candidate was timed on a training load",
                                    ramp_policy_name(kind));
        }
        break;
    default:
        st = ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                            "policy kind %d unknown", (int)kind);
    }
    free(train);
    if (st != RAMP_OK) {
        ramp_policy_free(p);
        return st;
    }
    *out = p;
    return RAMP_OK;
}

static int knn_choose(const ramp_policy *p, const ramp_load_stats *s) {
    double q[KNN_DIMS];
    knn_features(p, s, q);
    int k = p->k < p->ntrain ? p->k : (int)p->ntrain;
    double bd[256];
    int64_t bi[256];
    int have = 0;
    for (int64_t j = 0; j < p->ntrain; j++) {
        const double *f = &p->feat[j * KNN_DIMS];
        double d = 0;
        for (int l = 0; l < KNN_DIMS; l++) d += (f[l] - q[l]) * (f[l] - q[l]);
        if (have == k && !(d < bd[k - 1])) continue; /* ties keep the earlier */
        int pos = have < k ? have++ : k - 1;
        while (pos > 0 && d < bd[pos - 1]) {
            bd[pos] = bd[pos - 1];
            bi[pos] = bi[pos - 1];
            pos--;
        }
        bd[pos] = d;
        bi[pos] = j;
    }
    int best = 0;
    double bsum = INFINITY;
    for (int c = 0; c < p->ncand; c++) {
        double sum = 0;
        for (int l = 0; l < have; l++) sum += p->rel[bi[l] * p->ncand + c];
        if (sum < bsum) { bsum = sum; best = c; }
    }
    return p->cand[best];
}

ramp_status ramp_policy_choose_load(const ramp_policy *p, int nexp,
                                    const int32_t *load, int32_t batch_tokens,
                                    int *config) {
    RAMP_CHECK(p && config && (load || nexp == 0) && nexp >= 0, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_policy_choose_load: NULL argument or nexp %d < 0", nexp);
    switch (p->base) {
    case BASE_ORACLE:
        RAMP_FAIL(RAMP_ERR_UNSUPPORTED, "policy %s reads measured times: use "
                  "ramp_policy_choose with a timing dataset", ramp_policy_name(p->kind));
    case BASE_MODEL:
        return ramp_costmodel_pick(p->model, nexp, load, p->cand, p->ncand, config);
    case BASE_KNN: {
        ramp_load_stats s;
        ramp_load_stats_compute(nexp, load, p->rows, p->nrows, &s);
        *config = knn_choose(p, &s);
        return RAMP_OK;
    }
    case BASE_BATCH_TABLE:
    case BASE_LOAD_TABLE: {
        ramp_load_stats s;
        ramp_load_stats_compute(nexp, load, p->rows, p->nrows, &s);
        double v[MAX_AXES];
        for (int a = 0; a < p->naxes; a++) v[a] = stat_of(p->axis[a], &s, batch_tokens);
        *config = table_lookup(p, v);
        RAMP_CHECK(*config >= 0, RAMP_ERR_INTERNAL, "policy %s: empty table",
                   ramp_policy_name(p->kind));
        return RAMP_OK;
    }
    }
    RAMP_FAIL(RAMP_ERR_INTERNAL, "policy %s: unknown base %d", ramp_policy_name(p->kind),
              (int)p->base);
}

ramp_status ramp_policy_choose(const ramp_policy *p, const ramp_timing *t,
                               int64_t i, int *config) {
    RAMP_CHECK(p && t && config, RAMP_ERR_INVALID_ARGUMENT, "ramp_policy_choose: NULL argument");
    RAMP_CHECK(t->nconfigs == p->nconfigs, RAMP_ERR_INVALID_ARGUMENT,
               "policy %s was fit on %d configurations, the dataset has %d",
               ramp_policy_name(p->kind), p->nconfigs, t->nconfigs);
    RAMP_CHECK(i >= 0 && i < t->nloads, RAMP_ERR_INVALID_ARGUMENT,
               "load %lld out of [0, %lld)", (long long)i, (long long)t->nloads);
    if (p->base != BASE_ORACLE)
        return ramp_policy_choose_load(p, t->nexp[i], ramp_load_of(t, i), t->batch_tokens[i],
                                       config);
    const float *tm = ramp_times_of(t, i);
    int best = -1;
    for (int j = 0; j < p->ncand; j++) {
        int c = p->cand[j];
        if (isfinite(tm[c]) && (best < 0 || tm[c] < tm[best])) best = c;
    }
    RAMP_CHECK(best >= 0, RAMP_ERR_NUMERIC,
               "policy %s: load %lld has no finite time on any candidate",
               ramp_policy_name(p->kind), (long long)i);
    *config = best;
    return RAMP_OK;
}
