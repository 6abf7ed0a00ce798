/*
 * eval.c - held-out evaluation of the choice (paper Section 4.2, Table 3;
 * Appendix A.2 Table 4, A.3 Table 5, A.5 Table 9) and its reports.
 *
 * For each held-out domain, every learning policy and the menu are fit on a
 * copy of the dataset in which the held-out domain's times are NaN, with a
 * training mask that excludes that domain, and then scored on the held-out
 * batches with the real times: a batch's layer time is the slowest GPU's
 * measured time under the configuration the policy picked for that GPU.
 * Speedups are geometric means of per-batch time ratios, with percentile
 * bootstrap intervals over batches.
 *
 * Also here: the report printers (Tables 3, 4, 9 and a summary), CSV
 * output, and the small shared helpers of eval.h (atomic files, medians).
 */
#include "eval.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- shared helpers ------------------------------------------------------- */

ramp_status ramp_outfile_open(ramp_outfile *o, const char *path) {
    RAMP_CHECK(o && path && *path, RAMP_ERR_INVALID_ARGUMENT, "output path is empty");
    memset(o, 0, sizeof *o);
    int n = snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", path, (long)getpid());
    RAMP_CHECK(n > 0 && (size_t)n < sizeof o->tmp, RAMP_ERR_INVALID_ARGUMENT,
               "output path too long: %s", path);
    o->f = fopen(o->tmp, "wb");
    RAMP_CHECK(o->f, RAMP_ERR_IO, "cannot create %s: %s", o->tmp, strerror(errno));
    o->path = path;
    return RAMP_OK;
}

ramp_status ramp_outfile_commit(ramp_outfile *o) {
    int bad = ferror(o->f);
    int closed = fclose(o->f);
    o->f = NULL;
    if (bad || closed != 0) {
        int e = errno;
        remove(o->tmp);
        RAMP_FAIL(RAMP_ERR_IO, "write to %s failed: %s", o->tmp, strerror(e));
    }
    if (rename(o->tmp, o->path) != 0) {
        int e = errno;
        remove(o->tmp);
        RAMP_FAIL(RAMP_ERR_IO, "rename %s -> %s failed: %s", o->tmp, o->path, strerror(e));
    }
    return RAMP_OK;
}

void ramp_outfile_abort(ramp_outfile *o) {
    if (o->f) fclose(o->f);
    o->f = NULL;
    remove(o->tmp);
}

ramp_status ramp_path_join(char *buf, size_t size, const char *dir, const char *name) {
    RAMP_CHECK(dir && *dir && name, RAMP_ERR_INVALID_ARGUMENT, "output directory is empty");
    size_t l = strlen(dir);
    int n = snprintf(buf, size, "%s%s%s", dir, dir[l - 1] == '/' ? "" : "/", name);
    RAMP_CHECK(n > 0 && (size_t)n < size, RAMP_ERR_INVALID_ARGUMENT,
               "path %s/%s too long", dir, name);
    return RAMP_OK;
}

static int cmp_d(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

double ramp_quantile_sorted(const double *v, int64_t n, double q) {
    if (n <= 0) return NAN;
    double pos = q * (double)(n - 1);
    int64_t i = (int64_t)floor(pos);
    if (i < 0) return v[0];
    if (i >= n - 1) return v[n - 1];
    double f = pos - (double)i;
    return v[i] + f * (v[i + 1] - v[i]);
}

double ramp_median_inplace(double *v, int64_t n) {
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return ramp_quantile_sorted(v, n, 0.5);
}

/* ---- options and result ------------------------------------------------------ */

void ramp_eval_defaults(ramp_eval_options *o) {
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->bootstrap = 1000;
    o->min_tokens = 128;
    o->menu_size = 6;
    o->scatter_max = 4000;
    ramp_policy_defaults(&o->policy);
}

void ramp_eval_free(ramp_eval_result *r) {
    if (!r) return;
    free(r->folds);
    free(r->configs);
    free(r->batch_id);
    free(r->batch_tokens);
    free(r->batch_fold);
    free(r->batch_gpus);
    free(r->layer_us);
    free(r->choice);
    free(r->scatter_pred);
    free(r->scatter_meas);
    free(r->batch_imbalance);
    free(r);
}

#define NP RAMP_POLICY_COUNT

/* Geometric mean of exp(lr[0..n)) into out, with a percentile bootstrap
 * interval over the n values when boot > 0. Frees nothing. */
static ramp_status geomean_boot(const double *lr, int64_t n, int boot, uint64_t seed,
                                ramp_eval_ratio *out) {
    out->batches = n;
    out->geomean = out->lo = out->hi = NAN;
    double sum = 0;
    for (int64_t j = 0; j < n; j++) sum += lr[j];
    if (n > 0) {
        out->geomean = exp(sum / (double)n);
        if (boot > 0) {
            double *means = ramp_calloc((size_t)boot, sizeof *means);
            if (!means) return RAMP_ERR_OUT_OF_MEMORY;
            /* The same seed for every comparison: identical resamples, so
             * intervals of different policies are comparable. */
            ramp_rng rng;
            ramp_rng_seed(&rng, seed);
            for (int s = 0; s < boot; s++) {
                double acc = 0;
                for (int64_t j = 0; j < n; j++)
                    acc += lr[ramp_rng_below(&rng, (uint32_t)n)];
                means[s] = acc / (double)n;
            }
            qsort(means, (size_t)boot, sizeof *means, cmp_d);
            out->lo = exp(ramp_quantile_sorted(means, boot, 0.025));
            out->hi = exp(ramp_quantile_sorted(means, boot, 0.975));
            free(means);
        }
    }
    return RAMP_OK;
}

/* Geometric mean of layer(num)/layer(den) over batches >= min_tokens, with
 * a bootstrap interval when boot > 0. */
static ramp_status ratio_of(const ramp_eval_result *r, int num, int den, int min_tokens,
                            int boot, ramp_eval_ratio *out) {
    out->batches = 0;
    out->geomean = out->lo = out->hi = NAN;
    double *lr = ramp_calloc((size_t)(r->nbatches ? r->nbatches : 1), sizeof *lr);
    if (!lr) return RAMP_ERR_OUT_OF_MEMORY;
    int64_t n = 0;
    for (int64_t b = 0; b < r->nbatches; b++) {
        if (r->batch_tokens[b] < min_tokens) continue;
        double a = r->layer_us[b * NP + num], d = r->layer_us[b * NP + den];
        lr[n++] = log(a / d);
    }
    ramp_status st = geomean_boot(lr, n, boot, r->seed, out);
    free(lr);
    return st;
}

ramp_status ramp_eval_compare(const ramp_eval_result *r, ramp_policy_kind num,
                              ramp_policy_kind den, int min_tokens,
                              ramp_eval_ratio *out) {
    RAMP_CHECK(r && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_eval_compare: NULL argument");
    RAMP_CHECK((int)num >= 0 && num < NP && (int)den >= 0 && den < NP,
               RAMP_ERR_INVALID_ARGUMENT, "policy kind out of range (%d, %d)", (int)num,
               (int)den);
    RAMP_CHECK(r->policy[num].ran, RAMP_ERR_INVALID_ARGUMENT, "policy %s did not run%s%s",
               ramp_policy_name(num), r->policy[num].why[0] ? ": " : "", r->policy[num].why);
    RAMP_CHECK(r->policy[den].ran, RAMP_ERR_INVALID_ARGUMENT, "policy %s did not run%s%s",
               ramp_policy_name(den), r->policy[den].why[0] ? ": " : "", r->policy[den].why);
    return ratio_of(r, num, den, min_tokens, r->bootstrap, out);
}

/* ---- the run ------------------------------------------------------------------- */

static ramp_status check_times(const ramp_timing *t) {
    for (int64_t i = 0; i < t->nloads; i++) {
        const float *tm = ramp_times_of(t, i);
        for (int c = 0; c < t->nconfigs; c++) {
            if (t->blocks_per_sm[c] < 1) continue; /* not runnable: never picked */
            if (!(isfinite(tm[c]) && tm[c] > 0)) {
                char name[64];
                RAMP_FAIL(RAMP_ERR_NUMERIC,
                          "timing load %lld (batch %d, domain %s), config %s: time %g us; "
                          "evaluation needs every runnable configuration timed (> 0)",
                          (long long)i, t->batch[i],
                          t->domain[i] >= 0 && t->domain[i] < t->ndomains
                              ? t->domains[t->domain[i]] : "?",
                          ramp_config_name(&t->configs[c], name, sizeof name), (double)tm[c]);
            }
        }
    }
    return RAMP_OK;
}

typedef struct {
    ramp_eval_result *r;
    ramp_rng rng;
    int64_t seen;     /* pairs offered to the reservoir */
    int64_t cap;
} scatter_state;

static void scatter_offer(scatter_state *s, double pred, double meas) {
    ramp_eval_result *r = s->r;
    if (s->cap <= 0) return;
    s->seen++;
    if (r->nscatter < s->cap) {
        r->scatter_pred[r->nscatter] = pred;
        r->scatter_meas[r->nscatter] = meas;
        r->nscatter++;
        return;
    }
    uint64_t j = ramp_rng_next(&s->rng) % (uint64_t)s->seen;
    if (j < (uint64_t)s->cap) {
        r->scatter_pred[j] = pred;
        r->scatter_meas[j] = meas;
    }
}

static ramp_status alloc_result(const ramp_timing *t, int64_t nbatches, int nfolds,
                                int64_t scatter, ramp_eval_result **out) {
    ramp_eval_result *r = ramp_calloc(1, sizeof *r);
    if (!r) return RAMP_ERR_OUT_OF_MEMORY;
    size_t nb = (size_t)(nbatches ? nbatches : 1), nl = (size_t)(t->nloads ? t->nloads : 1);
    r->folds = ramp_calloc((size_t)(nfolds ? nfolds : 1), sizeof *r->folds);
    r->batch_id = ramp_calloc(nb, sizeof *r->batch_id);
    r->batch_tokens = ramp_calloc(nb, sizeof *r->batch_tokens);
    r->batch_fold = ramp_calloc(nb, sizeof *r->batch_fold);
    r->batch_gpus = ramp_calloc(nb, sizeof *r->batch_gpus);
    r->batch_imbalance = ramp_calloc(nb, sizeof *r->batch_imbalance);
    r->layer_us = ramp_calloc(nb * NP, sizeof *r->layer_us);
    r->choice = ramp_calloc(nl * NP, sizeof *r->choice);
    r->scatter_pred = ramp_calloc((size_t)(scatter ? scatter : 1), sizeof *r->scatter_pred);
    r->scatter_meas = ramp_calloc((size_t)(scatter ? scatter : 1), sizeof *r->scatter_meas);
    r->configs = ramp_calloc((size_t)t->nconfigs, sizeof *r->configs);
    if (!r->configs || !r->folds || !r->batch_id || !r->batch_tokens || !r->batch_fold || !r->batch_gpus ||
        !r->batch_imbalance || !r->layer_us || !r->choice || !r->scatter_pred || !r->scatter_meas) {
        ramp_eval_free(r);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < nl * NP; i++) r->choice[i] = -1;
    for (size_t i = 0; i < nb * NP; i++) r->layer_us[i] = NAN;
    *out = r;
    return RAMP_OK;
}

/* Most loaded GPU's tokens over the mean of batch b's GPUs (Table 6's
 * measure; 1 with one GPU or no tokens). */
static double batch_imbalance(const ramp_timing *t, const ramp_batches *bt, int64_t b) {
    double total = 0, most = 0;
    int64_t gpus = bt->first[b + 1] - bt->first[b];
    for (int64_t j = bt->first[b]; j < bt->first[b + 1]; j++) {
        int64_t i = bt->loads[j];
        const int32_t *ld = ramp_load_of(t, i);
        double s = 0;
        for (int e = 0; e < t->nexp[i]; e++) s += ld[e];
        total += s;
        if (s > most) most = s;
    }
    return gpus > 1 && total > 0 ? most / (total / (double)gpus) : 1.0;
}

ramp_status ramp_eval_run(const ramp_timing *t, const ramp_eval_options *opt,
                          ramp_eval_result **out) {
    RAMP_CHECK(t && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_eval_run: NULL argument");
    ramp_eval_options defaults;
    ramp_eval_defaults(&defaults);
    const ramp_eval_options *o = opt ? opt : &defaults;
    RAMP_CHECK(o->bootstrap >= 0 && o->bootstrap <= 1000000, RAMP_ERR_INVALID_ARGUMENT,
               "bootstrap %d: must be 0..1000000", o->bootstrap);
    RAMP_CHECK(o->min_tokens >= 0, RAMP_ERR_INVALID_ARGUMENT, "min_tokens %d < 0", o->min_tokens);
    RAMP_CHECK(o->menu_size >= 0 && o->menu_size <= RAMP_MENU_MAX, RAMP_ERR_INVALID_ARGUMENT,
               "menu_size %d: must be 0..%d", o->menu_size, RAMP_MENU_MAX);
    RAMP_CHECK(o->scatter_max >= 0, RAMP_ERR_INVALID_ARGUMENT, "scatter_max %d < 0",
               o->scatter_max);
    RAMP_CHECK(t->nconfigs >= 1 && t->configs && t->blocks_per_sm, RAMP_ERR_INVALID_ARGUMENT,
               "timing dataset has no configurations");
    RAMP_CHECK(t->nloads >= 1, RAMP_ERR_INVALID_ARGUMENT, "timing dataset has no loads");
    RAMP_TRY(check_times(t));

    ramp_batches bt;
    RAMP_TRY(ramp_batches_build(t, &bt));
    int uniform = -1;
    for (int d = 0; d < t->ndomains; d++)
        if (strcmp(t->domains[d], "uniform") == 0) uniform = d;
    /* Domains with batches; the folds are the traffic ones. */
    int *has = ramp_calloc((size_t)(t->ndomains ? t->ndomains : 1), sizeof *has);
    int *folds = ramp_calloc((size_t)(t->ndomains ? t->ndomains : 1), sizeof *folds);
    if (!has || !folds) {
        free(has); free(folds); ramp_batches_free(&bt);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    for (int64_t i = 0; i < t->nloads; i++) has[t->domain[i]] = 1;
    int ntraffic = 0, nfolds = 0;
    for (int d = 0; d < t->ndomains; d++)
        if (has[d] && d != uniform) {
            ntraffic++;
            if (!o->holdout || strcmp(o->holdout, t->domains[d]) == 0) folds[nfolds++] = d;
        }
    ramp_status st = RAMP_OK;
    if (ntraffic < 2)
        st = ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                            "held-out evaluation needs at least two traffic domains "
                            "(besides 'uniform'); the dataset has %d", ntraffic);
    else if (nfolds == 0)
        st = ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                            "holdout domain '%s' is not a traffic domain of the dataset",
                            o->holdout ? o->holdout : "");
    if (st != RAMP_OK) {
        free(has); free(folds); ramp_batches_free(&bt);
        return st;
    }
    int64_t ntest = 0;
    for (int64_t b = 0; b < bt.count; b++) {
        int d = t->domain[bt.loads[bt.first[b]]];
        for (int f = 0; f < nfolds; f++)
            if (folds[f] == d) ntest++;
    }

    ramp_eval_result *r = NULL;
    st = alloc_result(t, ntest, nfolds, o->scatter_max, &r);
    uint8_t *train_all = ramp_calloc((size_t)t->nloads, 1);
    uint8_t *traffic = ramp_calloc((size_t)t->nloads, 1);
    float *view_times = ramp_calloc((size_t)t->nloads * (size_t)t->nconfigs, sizeof *view_times);
    double *scratch = ramp_calloc((size_t)t->nconfigs * 3, sizeof *scratch);
    double *pred = ramp_calloc((size_t)t->nconfigs, sizeof *pred);
    double *rhos = ramp_calloc((size_t)t->nloads, sizeof *rhos);
    double *errs = ramp_calloc((size_t)t->nloads, sizeof *errs);
    double *frho = ramp_calloc((size_t)t->nloads, sizeof *frho);
    double *ferr = ramp_calloc((size_t)t->nloads, sizeof *ferr);
    int *runnable = ramp_calloc((size_t)t->nconfigs, sizeof *runnable);
    if (st == RAMP_OK && (!train_all || !traffic || !view_times || !scratch || !pred ||
                          !rhos || !errs || !frho || !ferr || !runnable))
        st = RAMP_ERR_OUT_OF_MEMORY;
    ramp_policy *pol[NP] = {0};
    int64_t nrho = 0, nerr = 0;
    scatter_state sc;
    int nrun = 0;
    if (st != RAMP_OK) goto done;

    snprintf(r->model, sizeof r->model, "%s", t->model);
    snprintf(r->layout, sizeof r->layout, "%s", t->layout);
    snprintf(r->device, sizeof r->device, "%s", t->device);
    snprintf(r->placement, sizeof r->placement, "%s", t->placement);
    {
        ramp_layout lay;
        r->every_expert = ramp_layout_parse(t->layout, &lay) == RAMP_OK && lay.kind == RAMP_TP;
    }
    r->nconfigs = t->nconfigs;
    memcpy(r->configs, t->configs, (size_t)t->nconfigs * sizeof *r->configs);
    r->min_tokens = o->min_tokens;
    r->bootstrap = o->bootstrap;
    r->seed = o->seed;
    r->menu_size = o->menu_size;
    r->nloads = t->nloads;
    r->nfolds = nfolds;
    for (int c = 0; c < t->nconfigs; c++)
        if (t->blocks_per_sm[c] >= 1) runnable[nrun++] = c;

    uint32_t want = o->policies ? o->policies : 0xffffffffu;
    want |= (1u << RAMP_POLICY_COSTMODEL) | (1u << RAMP_POLICY_EXHAUSTIVE);
    for (int k = 0; k < NP; k++) {
        r->policy[k].ran = (want >> k) & 1u;
        if (o->menu_size == 0 && ramp_policy_needs_menu((ramp_policy_kind)k)) r->policy[k].ran = 0;
    }
    sc.r = r;
    sc.seen = 0;
    sc.cap = o->scatter_max;
    ramp_rng_seed(&sc.rng, o->seed ^ 0x5ca77e5ull);

    /* The fitting view: same loads, held-out times NaN (set per fold). */
    ramp_timing view = *t;
    view.times_us = view_times;
    int64_t row = 0;
    for (int f = 0; f < nfolds && st == RAMP_OK; f++) {
        int d = folds[f];
        ramp_eval_fold *fold = &r->folds[f];
        snprintf(fold->domain, sizeof fold->domain, "%s", t->domains[d]);
        memcpy(view_times, t->times_us, (size_t)t->nloads * t->nconfigs * sizeof *view_times);
        for (int64_t i = 0; i < t->nloads; i++) {
            int dom = t->domain[i];
            train_all[i] = dom != d;
            traffic[i] = dom != d && (o->train_uniform || dom != uniform);
            fold->train_loads += traffic[i];
            if (dom == d)
                for (int c = 0; c < t->nconfigs; c++)
                    view_times[(size_t)i * t->nconfigs + c] = NAN;
        }
        if (o->menu_size > 0) {
            st = ramp_menu_greedy_objective(&view, traffic, o->menu_size, 0, NULL,
                                            o->menu_objective, &fold->menu);
            if (st != RAMP_OK) break;
        }
        ramp_policy_options po = o->policy;
        po.menu = fold->menu.config;
        po.menu_count = fold->menu.count;
        for (int k = 0; k < NP && st == RAMP_OK; k++) {
            if (!r->policy[k].ran) continue;
            st = ramp_policy_fit((ramp_policy_kind)k, &view,
                                 k == RAMP_POLICY_VLLM ? train_all : traffic, &po, &pol[k]);
            if (st == RAMP_ERR_NOT_FOUND && k == RAMP_POLICY_VLLM) {
                /* No uniformly random routing in the dataset: report, go on. */
                r->policy[k].ran = 0;
                snprintf(r->policy[k].why, sizeof r->policy[k].why, "%s", ramp_last_error());
                st = RAMP_OK;
            }
        }
        if (st != RAMP_OK) break;
        /* Score the held-out batches with the real times. */
        for (int64_t b = 0; b < bt.count && st == RAMP_OK; b++) {
            int64_t first = bt.loads[bt.first[b]];
            if (t->domain[first] != d) continue;
            r->batch_id[row] = bt.id[b];
            r->batch_tokens[row] = t->batch_tokens[first];
            r->batch_fold[row] = f;
            r->batch_gpus[row] = (int32_t)(bt.first[b + 1] - bt.first[b]);
            r->batch_imbalance[row] = batch_imbalance(t, &bt, b);
            for (int k = 0; k < NP && st == RAMP_OK; k++) {
                if (!r->policy[k].ran) continue;
                double layer = 0;
                for (int64_t j = bt.first[b]; j < bt.first[b + 1]; j++) {
                    int64_t i = bt.loads[j];
                    int c;
                    st = ramp_policy_choose(pol[k], t, i, &c);
                    if (st != RAMP_OK) break;
                    r->choice[(size_t)i * NP + k] = c;
                    double v = ramp_times_of(t, i)[c];
                    if (v > layer) layer = v;
                }
                r->layer_us[row * NP + k] = layer;
            }
            row++;
            fold->test_batches++;
            fold->test_loads += bt.first[b + 1] - bt.first[b];
        }
        if (st != RAMP_OK) break;
        /* The cost model on the held-out loads (Figure 6, Section 3.1). */
        const ramp_costmodel *cm = ramp_policy_costmodel(pol[RAMP_POLICY_COSTMODEL]);
        int64_t fr = 0, fe = 0;
        for (int64_t i = 0; i < t->nloads; i++) {
            if (t->domain[i] != d) continue;
            double rho, err;
            ramp_costmodel_load_diag(cm, t, i, runnable, nrun, scratch, &rho, &err, pred);
            if (!isnan(rho)) { rhos[nrho++] = rho; frho[fr++] = rho; }
            if (!isnan(err)) { errs[nerr++] = err; ferr[fe++] = err; }
            const float *tm = ramp_times_of(t, i);
            for (int j = 0; j < nrun; j++)
                if (isfinite(pred[runnable[j]]))
                    scatter_offer(&sc, pred[runnable[j]], tm[runnable[j]]);
        }
        fold->spearman_median = ramp_median_inplace(frho, fr);
        fold->pick_err_median = ramp_median_inplace(ferr, fe);
        for (int k = 0; k < NP; k++) {
            ramp_policy_free(pol[k]);
            pol[k] = NULL;
        }
    }
    if (st != RAMP_OK) goto done;
    r->nbatches = row;
    for (int64_t b = 0; b < row; b++) r->nbatches_ge += r->batch_tokens[b] >= o->min_tokens;
    r->spearman_median = ramp_median_inplace(rhos, nrho);
    r->pick_err_median = ramp_median_inplace(errs, nerr);
    {
        /* rhos is free now: the imbalance's median over the >= batches. */
        int64_t m = 0;
        for (int64_t b = 0; b < row && m < t->nloads; b++)
            if (r->batch_tokens[b] >= o->min_tokens) rhos[m++] = r->batch_imbalance[b];
        r->imbalance_ge = ramp_median_inplace(rhos, m);
    }
    for (int k = 0; k < NP && st == RAMP_OK; k++) {
        ramp_eval_policy_stats *ps = &r->policy[k];
        if (!ps->ran) {
            if (!ps->why[0] && ((want >> k) & 1u))
                snprintf(ps->why, sizeof ps->why, "%s", o->menu_size == 0 ? "menu_size is 0" : "");
            for (int64_t b = 0; b < row; b++) r->layer_us[b * NP + k] = NAN;
            for (int64_t i = 0; i < t->nloads; i++) r->choice[(size_t)i * NP + k] = -1;
            ps->speedup_all.geomean = ps->speedup_ge.geomean = NAN;
            ps->speedup_all.lo = ps->speedup_all.hi = ps->speedup_ge.lo = ps->speedup_ge.hi = NAN;
            ps->gap_all_pct = ps->gap_ge_pct = NAN;
            continue;
        }
        for (int64_t b = 0; b < row; b++) ps->total_us += r->layer_us[b * NP + k];
        ramp_eval_ratio g = {0, NAN, NAN, NAN};
        st = ratio_of(r, k, RAMP_POLICY_COSTMODEL, 0, o->bootstrap, &ps->speedup_all);
        if (st == RAMP_OK)
            st = ratio_of(r, k, RAMP_POLICY_COSTMODEL, o->min_tokens, o->bootstrap, &ps->speedup_ge);
        if (st == RAMP_OK) st = ratio_of(r, k, RAMP_POLICY_EXHAUSTIVE, 0, 0, &g);
        ps->gap_all_pct = (g.geomean - 1.0) * 100.0;
        if (st == RAMP_OK) st = ratio_of(r, k, RAMP_POLICY_EXHAUSTIVE, o->min_tokens, 0, &g);
        ps->gap_ge_pct = (g.geomean - 1.0) * 100.0;
    }
done:
    for (int k = 0; k < NP; k++) ramp_policy_free(pol[k]);
    free(train_all);
    free(traffic);
    free(view_times);
    free(scratch);
    free(pred);
    free(rhos);
    free(errs);
    free(frho);
    free(ferr);
    free(runnable);
    free(has);
    free(folds);
    ramp_batches_free(&bt);
    if (st != RAMP_OK) {
        ramp_eval_free(r);
        return st;
    }
    *out = r;
    return RAMP_OK;
}

/* ---- reports --------------------------------------------------------------------- */

static void put_x(FILE *f, int width, double v) {
    if (isfinite(v)) fprintf(f, " %*.2fx", width - 1, v);
    else fprintf(f, " %*s", width, "-");
}

static void put_pct(FILE *f, int width, double v) {
    if (isfinite(v)) fprintf(f, " %*.1f", width, v);
    else fprintf(f, " %*s", width, "-");
}

static double speedup_of(const ramp_eval_result *r, ramp_policy_kind k, int ge) {
    if (!r->policy[k].ran || !r->policy[RAMP_POLICY_COSTMODEL].ran) return NAN;
    return ge ? r->policy[k].speedup_ge.geomean : r->policy[k].speedup_all.geomean;
}

static ramp_status check_results(FILE *f, const ramp_eval_result *const *r, int n) {
    RAMP_CHECK(f && (r || n == 0) && n >= 0, RAMP_ERR_INVALID_ARGUMENT,
               "report: NULL file or results");
    for (int i = 0; i < n; i++)
        RAMP_CHECK(r[i], RAMP_ERR_INVALID_ARGUMENT, "report: result %d is NULL", i);
    return RAMP_OK;
}

static ramp_status finish_print(FILE *f) {
    RAMP_CHECK(!ferror(f), RAMP_ERR_IO, "report: write failed");
    return RAMP_OK;
}

/* The layout column: "EP8", or "EP8 bal" for a balanced placement. */
static const char *layout_label(const ramp_eval_result *x, char *buf, size_t size) {
    snprintf(buf, size, "%s%s", x->layout, ramp_placement_is_balanced(x->placement) ? " bal" : "");
    return buf;
}

ramp_status ramp_eval_print_table3(FILE *f, const ramp_eval_result *const *r, int n) {
    RAMP_TRY(check_results(f, r, n));
    char lab[32];
    int mt = n > 0 ? r[0]->min_tokens : 128;
    fprintf(f, "Table 3: RaMP's speedup over each policy (held-out batches; times of the "
               "expert kernel)\n");
    fprintf(f, "%-20s %-8s %21s %12s %12s %8s\n", "", "", "vLLM's tuning", "Trace-tuned",
            "Per-GPU", "Gap");
    fprintf(f, "%-20s %-8s %10s %9s%d %12s %12s %8s\n", "Model", "Layout", "All", ">=", mt,
            "All", "All", "(%)");
    for (int i = 0; i < n; i++) {
        const ramp_eval_result *x = r[i];
        fprintf(f, "%-20.20s %-8.8s", x->model, layout_label(x, lab, sizeof lab));
        put_x(f, 10, speedup_of(x, RAMP_POLICY_VLLM, 0));
        put_x(f, 11, speedup_of(x, RAMP_POLICY_VLLM, 1));
        put_x(f, 12, speedup_of(x, RAMP_POLICY_TRACE_TABLE, 0));
        put_x(f, 12, speedup_of(x, RAMP_POLICY_PER_GPU_TABLE, 0));
        put_pct(f, 8, x->policy[RAMP_POLICY_COSTMODEL].gap_all_pct);
        fprintf(f, "\n");
    }
    fprintf(f, "Gap: RaMP's time over exhaustive search, all batches (geometric mean).\n");
    return finish_print(f);
}

/* ---- transfer to a new model ------------------------------------------------ */

/* A balanced-placement dataset whose contiguous twin (same model, layout and
 * kernel) is also given: the same traffic placed differently (Table 8's
 * pair), so training on both would count that model's traffic twice. */
static int has_contiguous_twin(const ramp_timing *const *ts, int n, const ramp_timing *b) {
    if (!ramp_placement_is_balanced(b->placement)) return 0;
    for (int j = 0; j < n; j++)
        if (ts[j] && ts[j] != b && !ramp_placement_is_balanced(ts[j]->placement) &&
            ts[j]->kernel == b->kernel && strcmp(ts[j]->model, b->model) == 0 &&
            strcmp(ts[j]->layout, b->layout) == 0)
            return 1;
    return 0;
}

ramp_status ramp_eval_transfer_run(const ramp_timing *const *ts, int n, int target,
                                   int min_tokens, ramp_eval_transfer *out) {
    return ramp_eval_transfer_run_kind(ts, n, target, min_tokens, RAMP_COSTMODEL_EQ3, out);
}

ramp_status ramp_eval_transfer_run_kind(const ramp_timing *const *ts, int n, int target,
                                        int min_tokens, ramp_costmodel_kind kind,
                                        ramp_eval_transfer *out) {
    RAMP_CHECK(ts && out && n >= 1 && target >= 0 && target < n, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_eval_transfer_run: bad arguments (n = %d, target = %d)", n, target);
    const ramp_timing *t = ts[target];
    RAMP_CHECK(t && t->nloads >= 1, RAMP_ERR_INVALID_ARGUMENT, "target dataset is empty");
    RAMP_TRY(check_times(t));
    memset(out, 0, sizeof *out);
    snprintf(out->model, sizeof out->model, "%s", t->model);
    snprintf(out->layout, sizeof out->layout, "%s", t->layout);
    const ramp_timing **train = ramp_calloc((size_t)n, sizeof *train);
    if (!train) return RAMP_ERR_OUT_OF_MEMORY;
    size_t used = 0;
    for (int k = 0; k < n; k++) {
        /* Another model's times of the same kernel and weight layout only. */
        if (!ts[k] || strcmp(ts[k]->model, t->model) == 0 || ts[k]->kernel != t->kernel ||
            ts[k]->weight_units != t->weight_units)
            continue;
        if (has_contiguous_twin(ts, n, ts[k])) continue;
        train[out->ntrain++] = ts[k];
        out->train_loads += ts[k]->nloads;
        int w = snprintf(out->trained_on + used, sizeof out->trained_on - used, "%s%s %s",
                         used ? ", " : "", ts[k]->model, ts[k]->layout);
        if (w > 0 && used + (size_t)w < sizeof out->trained_on) used += (size_t)w;
    }
    if (out->ntrain == 0) {
        free(train);
        RAMP_FAIL(RAMP_ERR_NOT_FOUND, "transfer to %s %s: no dataset of another model and "
                  "kernel %s", t->model, t->layout,
                  ramp_kernel_version_name((ramp_kernel_version)t->kernel));
    }
    ramp_costmodel *m = NULL;
    ramp_status st = ramp_costmodel_fit_transfer_kind(train, out->ntrain, t, kind, &m);
    free(train);
    if (st != RAMP_OK) return st;
    out->nconfigs = t->nconfigs;
    for (int c = 0; c < t->nconfigs; c++) out->fitted += m->rows[c] > 0;
    ramp_batches bt;
    st = ramp_batches_build(t, &bt);
    if (st != RAMP_OK) {
        ramp_costmodel_free(m);
        return st;
    }
    int uniform = -1;
    for (int d = 0; d < t->ndomains; d++)
        if (strcmp(t->domains[d], "uniform") == 0) uniform = d;
    int nc = t->nconfigs;
    int *cands = ramp_calloc((size_t)nc, sizeof *cands);
    double *pred = ramp_calloc((size_t)nc, sizeof *pred);
    double *scratch = ramp_calloc((size_t)nc * 3, sizeof *scratch);
    double *rhos = ramp_calloc((size_t)t->nloads, sizeof *rhos);
    double *errs = ramp_calloc((size_t)t->nloads, sizeof *errs);
    if (!cands || !pred || !scratch || !rhos || !errs) st = RAMP_ERR_OUT_OF_MEMORY;
    int ncand = 0;
    for (int c = 0; c < nc; c++)
        if (t->blocks_per_sm[c] >= 1 && m->rows[c] > 0) cands[ncand++] = c;
    if (st == RAMP_OK && ncand == 0)
        st = ramp_set_error(RAMP_ERR_NOT_FOUND, __FILE__, __LINE__,
                            "transfer to %s %s: no runnable configuration has a fit", t->model,
                            t->layout);
    double lall = 0, lge = 0;
    int64_t nr = 0, ne = 0;
    for (int64_t b = 0; b < bt.count && st == RAMP_OK; b++) {
        int64_t first = bt.loads[bt.first[b]];
        if (t->domain[first] == uniform) continue;
        double lr = 0, lx = 0;
        for (int64_t j = bt.first[b]; j < bt.first[b + 1] && st == RAMP_OK; j++) {
            int64_t i = bt.loads[j];
            int c = -1;
            st = ramp_costmodel_pick(m, t->nexp[i], ramp_load_of(t, i), cands, ncand, &c);
            if (st != RAMP_OK) break;
            const float *tm = ramp_times_of(t, i);
            double best = INFINITY;
            for (int k = 0; k < nc; k++)
                if (t->blocks_per_sm[k] >= 1 && tm[k] < best) best = tm[k];
            if (tm[c] > lr) lr = tm[c];
            if (best > lx) lx = best;
            double rho, err;
            ramp_costmodel_load_diag(m, t, i, cands, ncand, scratch, &rho, &err, pred);
            if (!isnan(rho)) rhos[nr++] = rho;
            if (!isnan(err)) errs[ne++] = err;
        }
        if (st != RAMP_OK) break;
        out->batches++;
        lall += log(lr / lx);
        if (t->batch_tokens[first] >= min_tokens) {
            out->batches_ge++;
            lge += log(lr / lx);
        }
    }
    if (st == RAMP_OK) {
        out->gap_all_pct = out->batches ? (exp(lall / (double)out->batches) - 1) * 100 : NAN;
        out->gap_ge_pct = out->batches_ge ? (exp(lge / (double)out->batches_ge) - 1) * 100 : NAN;
        out->spearman_median = ramp_median_inplace(rhos, nr);
        out->pick_err_median = ramp_median_inplace(errs, ne);
    }
    free(cands);
    free(pred);
    free(scratch);
    free(rhos);
    free(errs);
    ramp_batches_free(&bt);
    ramp_costmodel_free(m);
    return st;
}

ramp_status ramp_eval_print_transfer(FILE *f, const ramp_eval_transfer *x, int n,
                                     const ramp_eval_result *const *r) {
    RAMP_CHECK(f && (x || n == 0) && n >= 0, RAMP_ERR_INVALID_ARGUMENT,
               "report: NULL file or transfers");
    fprintf(f, "Transfer: the cost model fit on the other models' datasets (load terms scaled by "
               "hidden/2048), scored on every traffic batch of the one left out\n");
    fprintf(f, "%-20s %-7s %7s %9s %9s %9s %9s %8s %8s  %s\n", "Model", "Layout", "Batches",
            "Gap all", "Gap >=", "In-model", "In-model", "Spearman", "Pick err", "Fit on");
    fprintf(f, "%-20s %-7s %7s %9s %9s %9s %9s %8s %8s\n", "", "", "", "(%)", "(%)", "all (%)",
            ">= (%)", "median", "median");
    for (int i = 0; i < n; i++) {
        const ramp_eval_transfer *t = &x[i];
        double ia = NAN, ig = NAN;
        if (r && r[i]) {
            ia = r[i]->policy[RAMP_POLICY_COSTMODEL].gap_all_pct;
            ig = r[i]->policy[RAMP_POLICY_COSTMODEL].gap_ge_pct;
        }
        fprintf(f, "%-20.20s %-7.7s %7lld", t->model, t->layout, (long long)t->batches);
        put_pct(f, 9, t->gap_all_pct);
        put_pct(f, 9, t->gap_ge_pct);
        put_pct(f, 9, ia);
        put_pct(f, 9, ig);
        fprintf(f, " %8.3f %7.1f%%  %s (%d of %d configurations fit)\n", t->spearman_median,
                100 * t->pick_err_median, t->trained_on, t->fitted, t->nconfigs);
    }
    fprintf(f, "In-model: RaMP fit on the same layout's other domains (Table 3's gap).\n");
    return finish_print(f);
}

/* "1.23 [1.10, 1.40]" into buf, or "-" when the ratio is undefined. */
static void ci_text(char *buf, size_t size, const ramp_eval_ratio *q) {
    if (!isfinite(q->geomean)) snprintf(buf, size, "-");
    else if (isfinite(q->lo) && isfinite(q->hi))
        snprintf(buf, size, "%.2f [%.2f, %.2f]", q->geomean, q->lo, q->hi);
    else snprintf(buf, size, "%.2f", q->geomean);
}

ramp_status ramp_eval_print_table5(FILE *f, const ramp_eval_result *const *r, int n) {
    RAMP_TRY(check_results(f, r, n));
    char lab[32];
    int mt = n > 0 ? r[0]->min_tokens : 128;
    fprintf(f, "Table 5: held-out domains, batches of >= %d tokens: speedup over vLLM's tuning and "
               "over the trace-tuned table\n(geometric means over batches; brackets: 95%% "
               "bootstrap interval over batches)\n", mt);
    fprintf(f, "%-20s %-8s %7s | %-52s | %-31s\n", "", "", "", "Over vLLM's tuning",
            "Over the trace-tuned table");
    fprintf(f, "%-20s %-8s %7s | %11s %8s %20s %10s | %20s %10s\n", "Model", "Layout", "Batches",
            "Trace-tuned", "Per-GPU", "RaMP", "Exhaustive", "RaMP", "Exhaustive");
    for (int i = 0; i < n; i++) {
        const ramp_eval_result *x = r[i];
        ramp_eval_ratio q[6];
        const int pairs[6][2] = {{RAMP_POLICY_VLLM, RAMP_POLICY_TRACE_TABLE},
                                 {RAMP_POLICY_VLLM, RAMP_POLICY_PER_GPU_TABLE},
                                 {RAMP_POLICY_VLLM, RAMP_POLICY_COSTMODEL},
                                 {RAMP_POLICY_VLLM, RAMP_POLICY_EXHAUSTIVE},
                                 {RAMP_POLICY_TRACE_TABLE, RAMP_POLICY_COSTMODEL},
                                 {RAMP_POLICY_TRACE_TABLE, RAMP_POLICY_EXHAUSTIVE}};
        for (int j = 0; j < 6; j++) {
            q[j].batches = 0;
            q[j].geomean = q[j].lo = q[j].hi = NAN;
            if (x->policy[pairs[j][0]].ran && x->policy[pairs[j][1]].ran)
                RAMP_TRY(ratio_of(x, pairs[j][0], pairs[j][1], mt,
                                  j == 2 || j == 4 ? x->bootstrap : 0, &q[j]));
        }
        char c[6][40];
        for (int j = 0; j < 6; j++) ci_text(c[j], sizeof c[j], &q[j]);
        fprintf(f, "%-20.20s %-8.8s %7lld | %11s %8s %20s %10s | %20s %10s\n", x->model, layout_label(x, lab, sizeof lab),
                (long long)x->nbatches_ge, c[0], c[1], c[2], c[3], c[4], c[5]);
    }
    return finish_print(f);
}

ramp_status ramp_eval_print_table4(FILE *f, const ramp_eval_result *const *r, int n) {
    RAMP_TRY(check_results(f, r, n));
    static const struct { ramp_policy_kind k; const char *key; } rows[] = {
        {RAMP_POLICY_PER_GPU_TABLE, "token count"},
        {RAMP_POLICY_TABLE_PADDING, "token count x padding"},
        {RAMP_POLICY_TABLE_ACTIVE, "token count x active experts"},
        {RAMP_POLICY_TABLE_MAXMEAN, "token count x largest load over mean"},
        {RAMP_POLICY_TABLE_CV, "token count x coefficient of variation"},
        {RAMP_POLICY_TABLE_3D, "token count x active x padding"},
        {RAMP_POLICY_KNN, "tokens, active, padding, largest/mean"},
        {RAMP_POLICY_TILECOUNT_OLS, "tiles, tiles per SM, log tiles"},
        {RAMP_POLICY_COSTMODEL, "the GPU's tokens per expert"},
    };
    int mt = n > 0 ? r[0]->min_tokens : 128;
    fprintf(f, "Table 4: gap of each per-GPU policy to exhaustive search on batches of >= %d "
               "tokens (%%; geometric mean over %d result(s), and the worst)\n", mt, n);
    fprintf(f, "%-38s %-40s %7s %7s\n", "Policy", "Keyed on", "Gap", "Worst");
    for (size_t j = 0; j < sizeof rows / sizeof rows[0]; j++) {
        double lsum = 0, worst = -INFINITY;
        int m = 0;
        for (int i = 0; i < n; i++) {
            double g = r[i]->policy[rows[j].k].ran ? r[i]->policy[rows[j].k].gap_ge_pct : NAN;
            if (!isfinite(g)) continue;
            lsum += log1p(g / 100.0);
            if (g > worst) worst = g;
            m++;
        }
        fprintf(f, "%-38s %-40s", ramp_policy_label(rows[j].k), rows[j].key);
        put_pct(f, 7, m ? expm1(lsum / m) * 100.0 : NAN);
        put_pct(f, 7, m ? worst : NAN);
        fprintf(f, "\n");
    }
    return finish_print(f);
}

static double ratio_or_nan(const ramp_eval_result *r, ramp_policy_kind a, ramp_policy_kind b,
                           int mt) {
    if (!r->policy[a].ran || !r->policy[b].ran) return NAN;
    ramp_eval_ratio q;
    if (ratio_of(r, a, b, mt, 0, &q) != RAMP_OK) return NAN;
    return q.geomean;
}

ramp_status ramp_eval_print_table9(FILE *f, const ramp_eval_result *const *r, int n) {
    RAMP_TRY(check_results(f, r, n));
    char lab[32];
    int mt = n > 0 ? r[0]->min_tokens : 128;
    fprintf(f, "Table 9: choosing among the served configurations (menu), batches of >= %d "
               "tokens\n", mt);
    fprintf(f, "%-20s %-8s %5s %16s %12s %16s %14s\n", "", "", "", "Among the menu", "",
            "Against the full", "space");
    fprintf(f, "%-20s %-8s %5s %16s %12s %16s %14s\n", "Model", "Layout", "Size",
            "RaMP over table", "Gap best(%)", "over vLLM", "Gap exh.(%)");
    for (int i = 0; i < n; i++) {
        const ramp_eval_result *x = r[i];
        fprintf(f, "%-20.20s %-8.8s %5d", x->model, layout_label(x, lab, sizeof lab), x->menu_size);
        put_x(f, 16, ratio_or_nan(x, RAMP_POLICY_MENU_TABLE, RAMP_POLICY_MENU_COSTMODEL, mt));
        put_pct(f, 12, (ratio_or_nan(x, RAMP_POLICY_MENU_COSTMODEL, RAMP_POLICY_MENU_BEST, mt) - 1) * 100);
        put_x(f, 16, ratio_or_nan(x, RAMP_POLICY_VLLM, RAMP_POLICY_MENU_COSTMODEL, mt));
        put_pct(f, 14, (ratio_or_nan(x, RAMP_POLICY_MENU_COSTMODEL, RAMP_POLICY_EXHAUSTIVE, mt) - 1) * 100);
        fprintf(f, "\n");
    }
    return finish_print(f);
}

/* ---- Table 8: balanced expert placement ------------------------------------------ */

static void nan_ratio(ramp_eval_ratio *q) {
    q->batches = 0;
    q->geomean = q->lo = q->hi = NAN;
}

/* ratio_of when both policies ran, else NaN. */
static ramp_status ratio_if(const ramp_eval_result *r, int num, int den, int mt,
                            ramp_eval_ratio *out) {
    nan_ratio(out);
    if (!r || !r->policy[num].ran || !r->policy[den].ran) return RAMP_OK;
    return ratio_of(r, num, den, mt, r->bootstrap, out);
}

/* Paired over the batches both results scored with >= mt tokens: geomean
 * of a's layer time under policy k over b's. */
static ramp_status paired_ratio(const ramp_eval_result *a, const ramp_eval_result *b, int k,
                                int mt, ramp_eval_ratio *out) {
    nan_ratio(out);
    if (!a->policy[k].ran || !b->policy[k].ran) return RAMP_OK;
    double *lr = ramp_calloc((size_t)(a->nbatches ? a->nbatches : 1), sizeof *lr);
    if (!lr) return RAMP_ERR_OUT_OF_MEMORY;
    int64_t n = 0;
    for (int64_t i = 0; i < a->nbatches; i++) {
        if (a->batch_tokens[i] < mt) continue;
        for (int64_t j = 0; j < b->nbatches; j++) {
            if (b->batch_id[j] != a->batch_id[i]) continue;
            if (b->batch_tokens[j] != a->batch_tokens[i]) {
                free(lr);
                RAMP_FAIL(RAMP_ERR_INVALID_ARGUMENT,
                          "%s %s: batch %d has %d tokens under one placement and %d under the "
                          "other: the two datasets were not built from the same traces and "
                          "options", a->model, a->layout, (int)a->batch_id[i],
                          (int)a->batch_tokens[i], (int)b->batch_tokens[j]);
            }
            lr[n++] = log(a->layer_us[i * NP + k] / b->layer_us[j * NP + k]);
            break;
        }
    }
    ramp_status st = geomean_boot(lr, n, a->bootstrap, a->seed, out);
    free(lr);
    return st;
}

ramp_status ramp_eval_placement_compare(const ramp_eval_result *contig,
                                        const ramp_eval_result *bal, int min_tokens,
                                        ramp_eval_placement_row *out) {
    RAMP_CHECK(out && (contig || bal), RAMP_ERR_INVALID_ARGUMENT,
               "ramp_eval_placement_compare: no result or no output");
    RAMP_CHECK(!contig || !bal || (strcmp(contig->model, bal->model) == 0 &&
                                   strcmp(contig->layout, bal->layout) == 0),
               RAMP_ERR_INVALID_ARGUMENT, "placement comparison of %s %s with %s %s: not one "
               "model and layout", contig ? contig->model : "", contig ? contig->layout : "",
               bal ? bal->model : "", bal ? bal->layout : "");
    memset(out, 0, sizeof *out);
    const ramp_eval_result *any = bal ? bal : contig;
    snprintf(out->model, sizeof out->model, "%s", any->model);
    snprintf(out->layout, sizeof out->layout, "%s", any->layout);
    if (bal) snprintf(out->placement, sizeof out->placement, "%s", bal->placement);
    out->imbalance_contig = contig ? contig->imbalance_ge : NAN;
    out->imbalance_bal = bal ? bal->imbalance_ge : NAN;
    for (int side = 0; side < 2; side++) {
        const ramp_eval_result *x = side ? bal : contig;
        int64_t ge = 0;
        for (int64_t b = 0; x && b < x->nbatches; b++) ge += x->batch_tokens[b] >= min_tokens;
        *(side ? &out->batches_bal : &out->batches_contig) = ge;
        RAMP_TRY(ratio_if(x, RAMP_POLICY_TRACE_TABLE, RAMP_POLICY_COSTMODEL, min_tokens,
                          side ? &out->ramp_over_trace_bal : &out->ramp_over_trace_contig));
        RAMP_TRY(ratio_if(x, RAMP_POLICY_VLLM, RAMP_POLICY_COSTMODEL, min_tokens,
                          side ? &out->ramp_over_vllm_bal : &out->ramp_over_vllm_contig));
    }
    nan_ratio(&out->balancing_ramp);
    nan_ratio(&out->balancing_vllm);
    if (contig && bal) {
        RAMP_TRY(paired_ratio(contig, bal, RAMP_POLICY_COSTMODEL, min_tokens, &out->balancing_ramp));
        RAMP_TRY(paired_ratio(contig, bal, RAMP_POLICY_VLLM, min_tokens, &out->balancing_vllm));
        out->batches_paired = out->balancing_ramp.batches;
    }
    return RAMP_OK;
}

/* " 1.23 [1.10, 1.40]" in a field of `width`, "-" when undefined. */
static void put_cix(FILE *f, int width, const ramp_eval_ratio *q) {
    char buf[48];
    if (!isfinite(q->geomean)) snprintf(buf, sizeof buf, "-");
    else if (isfinite(q->lo) && isfinite(q->hi))
        snprintf(buf, sizeof buf, "%.2f [%.2f, %.2f]", q->geomean, q->lo, q->hi);
    else snprintf(buf, sizeof buf, "%.2f", q->geomean);
    fprintf(f, " %*s", width, buf);
}

static void put_num(FILE *f, int width, double v) {
    if (isfinite(v)) fprintf(f, " %*.2f", width, v);
    else fprintf(f, " %*s", width, "-");
}

ramp_status ramp_eval_print_table8(FILE *f, const ramp_eval_result *const *r, int n) {
    RAMP_TRY(check_results(f, r, n));
    int mt = n > 0 ? r[0]->min_tokens : 128;
    fprintf(f, "Table 8: RaMP on balanced expert placement, batches of >= %d tokens (brackets: "
               "95%% bootstrap interval)\n", mt);
    fprintf(f, "%-20s %-7s %11s |%-14s |%-40s |%-40s |%s\n", "", "", "Batches", " Imbalance",
            " RaMP over the trace-tuned table", " RaMP over vLLM's tuning",
            " Balancing: contiguous / balanced time");
    fprintf(f, "%-20s %-7s %11s |%7s%7s |%20s%20s |%20s%20s |%20s%20s\n", "Model", "Layout",
            "c/b/pair", "Contig", "Bal.", "Contiguous", "Balanced", "Contiguous", "Balanced", "RaMP",
            "vLLM's tuning");
    for (int i = 0; i < n; i++) {
        if (!ramp_placement_is_balanced(r[i]->placement)) continue;
        const ramp_eval_result *c = NULL;
        for (int j = 0; j < n && !c; j++)
            if (!ramp_placement_is_balanced(r[j]->placement) && !strcmp(r[j]->model, r[i]->model) &&
                !strcmp(r[j]->layout, r[i]->layout))
                c = r[j];
        ramp_eval_placement_row row;
        RAMP_TRY(ramp_eval_placement_compare(c, r[i], mt, &row));
        char nb[48];
        snprintf(nb, sizeof nb, "%lld/%lld/%lld", (long long)row.batches_contig,
                 (long long)row.batches_bal, (long long)row.batches_paired);
        fprintf(f, "%-20.20s %-7.7s %11s |", row.model, row.layout, c ? nb : "-");
        put_num(f, 6, row.imbalance_contig);
        put_num(f, 6, row.imbalance_bal);
        fprintf(f, " |");
        put_cix(f, 19, &row.ramp_over_trace_contig);
        put_cix(f, 19, &row.ramp_over_trace_bal);
        fprintf(f, " |");
        put_cix(f, 19, &row.ramp_over_vllm_contig);
        put_cix(f, 19, &row.ramp_over_vllm_bal);
        fprintf(f, " |");
        put_cix(f, 19, &row.balancing_ramp);
        put_cix(f, 19, &row.balancing_vllm);
        fprintf(f, "\n");
        if (!c) fprintf(f, "  (no contiguous dataset of %s %s given: its columns are '-')\n", row.model, row.layout);
        else if (strcmp(c->device, r[i]->device) != 0)
            fprintf(f, "  (WARNING: times from different devices, '%s' (contiguous) and '%s' (balanced): the "
                       "balancing columns compare them anyway)\n", c->device, r[i]->device);
    }
    fprintf(f, "Imbalance: most loaded GPU's tokens over the mean (median). Batches: scored >= %d "
               "under contiguous / balanced placement / in both (the balancing columns).\n", mt);
    return finish_print(f);
}

/* ---- Table 11: every GPU holding every expert ------------------------------------ */

ramp_status ramp_eval_print_table11(FILE *f, const ramp_eval_result *const *r, int n) {
    RAMP_TRY(check_results(f, r, n));
    fprintf(f, "Table 11: every GPU holding every expert (TPn: each expert split over n GPUs); "
               "MoE layer speedup, one change per column, all batches\n");
    fprintf(f, "%-20s %-7s %7s %7s %12s %20s %12s %11s\n", "Model", "Layout", "Batches", "Kernel",
            "Trace-tuned", "RaMP", "Total", "Exhaustive");
    for (int i = 0; i < n; i++) {
        const ramp_eval_result *x = r[i];
        if (!x->every_expert) continue;
        ramp_eval_ratio q[4];
        RAMP_TRY(ratio_if(x, RAMP_POLICY_VLLM, RAMP_POLICY_TRACE_TABLE, 0, &q[0]));
        RAMP_TRY(ratio_if(x, RAMP_POLICY_TRACE_TABLE, RAMP_POLICY_COSTMODEL, 0, &q[1]));
        RAMP_TRY(ratio_if(x, RAMP_POLICY_VLLM, RAMP_POLICY_COSTMODEL, 0, &q[2]));
        RAMP_TRY(ratio_if(x, RAMP_POLICY_VLLM, RAMP_POLICY_EXHAUSTIVE, 0, &q[3]));
        q[0].lo = q[0].hi = q[3].lo = q[3].hi = NAN; /* intervals for RaMP's columns only */
        fprintf(f, "%-20.20s %-7.7s %7lld %7s", x->model, x->layout, (long long)x->nbatches, "-");
        put_cix(f, 12, &q[0]);
        put_cix(f, 20, &q[1]);
        put_cix(f, 12, &(ramp_eval_ratio){q[2].batches, q[2].geomean, NAN, NAN});
        put_cix(f, 11, &q[3]);
        fprintf(f, "\n");
    }
    fprintf(f, "Kernel: vLLM's Triton MoE -> RaMP's kernel under vLLM's tuning (not measured: no Triton "
               "baseline here). Trace-tuned: vLLM's tuning -> the trace-tuned table. RaMP: the "
               "trace-tuned table -> RaMP (interval). Total: vLLM's tuning -> RaMP, the choice's "
               "part only. Exhaustive: vLLM's tuning -> exhaustive search (the ceiling).\n");
    return finish_print(f);
}

static void put_ci(FILE *f, const ramp_eval_ratio *q) {
    if (!isfinite(q->geomean)) { fprintf(f, " %22s", "-"); return; }
    if (isfinite(q->lo))
        fprintf(f, " %6.3fx [%5.3f, %5.3f]", q->geomean, q->lo, q->hi);
    else
        fprintf(f, " %6.3fx %14s", q->geomean, "");
}

ramp_status ramp_eval_print_summary(FILE *f, const ramp_eval_result *r) {
    RAMP_CHECK(f && r, RAMP_ERR_INVALID_ARGUMENT, "report: NULL file or result");
    fprintf(f, "Held-out evaluation: %s %s, device %s, %d configurations, placement %s\n",
            r->model, r->layout, r->device[0] ? r->device : "?", r->nconfigs,
            r->every_expert ? "none (every GPU holds every expert)"
                            : r->placement[0] ? r->placement : "contiguous (not recorded)");
    if (isfinite(r->imbalance_ge))
        fprintf(f, "Imbalance (most loaded GPU over the mean, median over batches >= %d): %.2f\n",
                r->min_tokens, r->imbalance_ge);
    fprintf(f, "Scored batches: %lld (%lld with >= %d tokens); bootstrap %d resamples, seed %llu\n",
            (long long)r->nbatches, (long long)r->nbatches_ge, r->min_tokens, r->bootstrap,
            (unsigned long long)r->seed);
    fprintf(f, "%-38s %12s %24s %24s %8s %8s\n", "Policy", "Total (ms)", "RaMP over it: all",
            "RaMP over it: >=min", "Gap all", "Gap >=");
    for (int k = 0; k < NP; k++) {
        const ramp_eval_policy_stats *p = &r->policy[k];
        if (!p->ran) {
            if (p->why[0])
                fprintf(f, "%-38s not run: %s\n", ramp_policy_label((ramp_policy_kind)k), p->why);
            continue;
        }
        fprintf(f, "%-38s %12.3f", ramp_policy_label((ramp_policy_kind)k), p->total_us / 1000.0);
        put_ci(f, &p->speedup_all);
        put_ci(f, &p->speedup_ge);
        put_pct(f, 7, p->gap_all_pct);
        fprintf(f, "%%");
        put_pct(f, 7, p->gap_ge_pct);
        fprintf(f, "%%\n");
    }
    fprintf(f, "Cost model on held-out loads: Spearman median %.3f, picked configuration's "
               "prediction error median %.1f%%\n", r->spearman_median, r->pick_err_median * 100);
    for (int i = 0; i < r->nfolds; i++) {
        const ramp_eval_fold *fo = &r->folds[i];
        fprintf(f, "  held out %-12s: %lld batches, %lld loads; trained on %lld loads; Spearman "
                   "%.3f, pick error %.1f%%", fo->domain, (long long)fo->test_batches,
                (long long)fo->test_loads, (long long)fo->train_loads, fo->spearman_median,
                fo->pick_err_median * 100);
        if (fo->menu.count) fprintf(f, "; menu (class %d):", fo->menu.blocks_per_sm);
        for (int j = 0; j < fo->menu.count; j++) {
            char name[64];
            int c = fo->menu.config[j];
            fprintf(f, " %s", c >= 0 && c < r->nconfigs
                                  ? ramp_config_name(&r->configs[c], name, sizeof name) : "?");
        }
        fprintf(f, "\n");
    }
    return finish_print(f);
}

/* ---- CSV ----------------------------------------------------------------------------- */

static void csv_num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, ",%.9g", v);
    else fprintf(f, ",");
}

ramp_status ramp_eval_write_csv(const ramp_eval_result *r, const char *dir) {
    RAMP_CHECK(r && dir, RAMP_ERR_INVALID_ARGUMENT, "ramp_eval_write_csv: NULL argument");
    struct stat sb;
    RAMP_CHECK(stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode), RAMP_ERR_IO,
               "output directory %s does not exist", dir);
    char path[4096];
    ramp_outfile o;
    RAMP_TRY(ramp_path_join(path, sizeof path, dir, "batches.csv"));
    RAMP_TRY(ramp_outfile_open(&o, path));
    fprintf(o.f, "domain,batch,batch_tokens,gpus");
    for (int k = 0; k < NP; k++)
        if (r->policy[k].ran) fprintf(o.f, ",%s_us", ramp_policy_name((ramp_policy_kind)k));
    fprintf(o.f, ",imbalance\n");
    for (int64_t b = 0; b < r->nbatches; b++) {
        fprintf(o.f, "%s,%d,%d,%d", r->folds[r->batch_fold[b]].domain, r->batch_id[b],
                r->batch_tokens[b], r->batch_gpus[b]);
        for (int k = 0; k < NP; k++)
            if (r->policy[k].ran) csv_num(o.f, r->layer_us[b * NP + k]);
        csv_num(o.f, r->batch_imbalance[b]);
        fprintf(o.f, "\n");
    }
    RAMP_TRY(ramp_outfile_commit(&o));

    RAMP_TRY(ramp_path_join(path, sizeof path, dir, "summary.csv"));
    RAMP_TRY(ramp_outfile_open(&o, path));
    fprintf(o.f, "policy,label,ran,batches,batches_ge,total_us,speedup_all,speedup_all_lo,"
                 "speedup_all_hi,speedup_ge,speedup_ge_lo,speedup_ge_hi,gap_all_pct,"
                 "gap_ge_pct\n");
    for (int k = 0; k < NP; k++) {
        const ramp_eval_policy_stats *p = &r->policy[k];
        fprintf(o.f, "%s,\"%s\",%d,%lld,%lld", ramp_policy_name((ramp_policy_kind)k),
                ramp_policy_label((ramp_policy_kind)k), p->ran, (long long)r->nbatches,
                (long long)r->nbatches_ge);
        csv_num(o.f, p->ran ? p->total_us : NAN);
        csv_num(o.f, p->speedup_all.geomean);
        csv_num(o.f, p->speedup_all.lo);
        csv_num(o.f, p->speedup_all.hi);
        csv_num(o.f, p->speedup_ge.geomean);
        csv_num(o.f, p->speedup_ge.lo);
        csv_num(o.f, p->speedup_ge.hi);
        csv_num(o.f, p->gap_all_pct);
        csv_num(o.f, p->gap_ge_pct);
        fprintf(o.f, "\n");
    }
    return ramp_outfile_commit(&o);
}

ramp_status ramp_eval_write_loads(const ramp_eval_result *r, const ramp_timing *t,
                                  const char *dir) {
    RAMP_CHECK(r && t && dir, RAMP_ERR_INVALID_ARGUMENT, "ramp_eval_write_loads: NULL argument");
    RAMP_CHECK(r->nloads == t->nloads && r->nconfigs == t->nconfigs, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_eval_write_loads: the result is of %lld loads x %d configurations, the "
               "dataset %lld x %d: not the dataset it was run on",
               (long long)r->nloads, r->nconfigs, (long long)t->nloads, t->nconfigs);
    char path[4096];
    ramp_outfile o;
    RAMP_TRY(ramp_path_join(path, sizeof path, dir, "loads.csv"));
    RAMP_TRY(ramp_outfile_open(&o, path));
    fprintf(o.f, "domain,batch,gpu,batch_tokens,pairs,active");
    for (int k = 0; k < NP; k++)
        if (r->policy[k].ran)
            fprintf(o.f, ",%s_config,%s_us", ramp_policy_name((ramp_policy_kind)k),
                    ramp_policy_name((ramp_policy_kind)k));
    fprintf(o.f, "\n");
    for (int64_t i = 0; i < t->nloads; i++) {
        if (r->choice[(size_t)i * NP + RAMP_POLICY_COSTMODEL] < 0) continue; /* not scored */
        const int32_t *load = t->loads + (size_t)i * (size_t)t->max_experts;
        long long pairs = 0;
        int active = 0;
        for (int e = 0; e < t->nexp[i]; e++) {
            pairs += load[e] > 0 ? load[e] : 0;
            active += load[e] > 0;
        }
        fprintf(o.f, "%s,%d,%d,%d,%lld,%d", t->domains[t->domain[i]], t->batch[i], t->gpu[i],
                t->batch_tokens[i], pairs, active);
        for (int k = 0; k < NP; k++) {
            if (!r->policy[k].ran) continue;
            const int c = r->choice[(size_t)i * NP + k];
            char name[64] = "";
            if (c >= 0) ramp_config_name(&t->configs[c], name, sizeof name);
            fprintf(o.f, ",%s", name);
            csv_num(o.f, c >= 0 ? ramp_times_of(t, i)[c] : NAN);
        }
        fprintf(o.f, "\n");
    }
    return ramp_outfile_commit(&o);
}

ramp_status ramp_eval_write_plots(const ramp_eval_result *r, const char *dir) {
    RAMP_CHECK(r && dir, RAMP_ERR_INVALID_ARGUMENT, "ramp_eval_write_plots: NULL argument");
    struct stat sb;
    RAMP_CHECK(stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode), RAMP_ERR_IO,
               "output directory %s does not exist", dir);
    char path[4096], title[256];
    RAMP_TRY(ramp_path_join(path, sizeof path, dir, "predicted_vs_measured.svg"));
    /* A plot travels without its CSV: say in it where the times came from. */
    const char *sim = strcmp(r->device, "simulated") == 0 ? " [SIMULATED times]" : "";
    const char *bal = ramp_placement_is_balanced(r->placement) ? " balanced" : "";
    snprintf(title, sizeof title, "Cost model on held-out loads: %s %s%s (Spearman median %.3f)%s",
             r->model, r->layout, bal, r->spearman_median, sim);
    RAMP_TRY(ramp_svg_scatter(path, title, "measured time (us)", "predicted time (us)",
                              r->scatter_meas, r->scatter_pred, r->nscatter, 1, 1));

    const char *groups[NP];
    double values[NP * 2];
    int ng = 0;
    for (int k = 0; k < NP; k++) {
        if (!r->policy[k].ran || k == RAMP_POLICY_COSTMODEL) continue;
        groups[ng] = ramp_policy_name((ramp_policy_kind)k);
        values[ng * 2] = r->policy[k].speedup_all.geomean;
        values[ng * 2 + 1] = r->policy[k].speedup_ge.geomean;
        ng++;
    }
    char ge[32];
    snprintf(ge, sizeof ge, ">= %d tokens", r->min_tokens);
    const char *series[2] = {"all batches", ge};
    RAMP_TRY(ramp_path_join(path, sizeof path, dir, "speedup.svg"));
    snprintf(title, sizeof title, "RaMP's speedup over each policy: %s %s%s (held-out batches)%s",
             r->model, r->layout, bal, sim);
    return ramp_svg_bars(path, title, "RaMP's speedup (geometric mean)", ng, groups, 2, series,
                         values, 1.0);
}
