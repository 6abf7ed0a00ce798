/*
 * test_eval.c - the held-out evaluation: layer times recomputed from the
 * recorded choices, exhaustive search never beaten, RaMP equal to it on
 * noiseless linear truth, ratios and bootstrap intervals recomputed here,
 * held-out times that cannot change any learning policy's choice, the
 * reports, and the CSV and SVG files (atomic, parseable, one row a batch);
 * each batch's imbalance recomputed; Tables 8 (balanced placement, paired
 * batches) and 11 (every GPU holding every expert) against values worked
 * out by hand on tiny hand-made results.
 */
#include "eval_util.h"

#include <dirent.h>
#include <sys/stat.h>

#define NP RAMP_POLICY_COUNT

static void check_consistent(const ramp_timing *t, const ramp_eval_result *r) {
    int uni = -1;
    for (int d = 0; d < t->ndomains; d++)
        if (strcmp(t->domains[d], "uniform") == 0) uni = d;
    /* every scored batch once, no uniform batch scored */
    int64_t expect = 0;
    for (int64_t i = 0; i < t->nloads; i++) {
        int scored = 0;
        for (int f = 0; f < r->nfolds; f++)
            scored |= strcmp(r->folds[f].domain, t->domains[t->domain[i]]) == 0;
        expect += t->gpu[i] == 0 && t->domain[i] != uni && scored;
    }
    CHECK_EQ_INT(r->nbatches, expect);
    int64_t ge = 0;
    for (int64_t b = 0; b < r->nbatches; b++) {
        ge += r->batch_tokens[b] >= r->min_tokens;
        int gpus = 0;
        double exh = 0;
        for (int k = 0; k < NP; k++) {
            if (!r->policy[k].ran) {
                CHECK(isnan(r->layer_us[b * NP + k]));
                continue;
            }
            double layer = 0;
            gpus = 0;
            for (int64_t i = 0; i < t->nloads; i++) {
                if (t->batch[i] != r->batch_id[b]) continue;
                CHECK(t->domain[i] != uni);
                CHECK(strcmp(t->domains[t->domain[i]], r->folds[r->batch_fold[b]].domain) == 0);
                int c = r->choice[i * NP + k];
                CHECK(c >= 0 && c < t->nconfigs);
                if (c < 0 || c >= t->nconfigs) continue;
                layer = fmax(layer, t->times_us[i * t->nconfigs + c]);
                gpus++;
            }
            CHECK_NEAR(r->layer_us[b * NP + k], layer, 0);
            if (k == RAMP_POLICY_EXHAUSTIVE) exh = layer;
        }
        CHECK_EQ_INT(r->batch_gpus[b], gpus);
        /* no policy beats exhaustive search on any batch */
        for (int k = 0; k < NP; k++)
            if (r->policy[k].ran) CHECK(r->layer_us[b * NP + k] >= exh);
    }
    CHECK_EQ_INT(r->nbatches_ge, ge);
    /* Each batch's imbalance, recomputed: most loaded GPU's tokens over the
     * mean of the batch's GPUs; its median over the >= batches. */
    double *imb = calloc((size_t)(r->nbatches + 1), sizeof *imb);
    int64_t nimb = 0;
    for (int64_t b = 0; imb && b < r->nbatches; b++) {
        double tot = 0, most = 0;
        int g = 0;
        for (int64_t i = 0; i < t->nloads; i++) {
            if (t->batch[i] != r->batch_id[b]) continue;
            double sum = 0;
            for (int e = 0; e < t->max_experts; e++) sum += t->loads[i * t->max_experts + e];
            tot += sum;
            most = fmax(most, sum);
            g++;
        }
        double want = g > 1 && tot > 0 ? most * g / tot : 1.0;
        CHECK_NEAR(r->batch_imbalance[b], want, 1e-12 * want);
        if (r->batch_tokens[b] >= r->min_tokens) imb[nimb++] = want;
    }
    if (imb && nimb > 0) {
        for (int64_t a = 0; a < nimb; a++) /* insertion sort: few batches */
            for (int64_t c = a; c > 0 && imb[c] < imb[c - 1]; c--) {
                double x = imb[c]; imb[c] = imb[c - 1]; imb[c - 1] = x;
            }
        double med = nimb % 2 ? imb[nimb / 2] : 0.5 * (imb[nimb / 2 - 1] + imb[nimb / 2]);
        CHECK_NEAR(r->imbalance_ge, med, 1e-12 * med);
    } else {
        CHECK(isnan(r->imbalance_ge));
    }
    free(imb);
    /* uniform loads are never scored */
    for (int64_t i = 0; i < t->nloads; i++)
        if (t->domain[i] == uni)
            for (int k = 0; k < NP; k++) CHECK_EQ_INT(r->choice[i * NP + k], -1);
    /* the reported ratios, recomputed */
    for (int k = 0; k < NP; k++) {
        if (!r->policy[k].ran) continue;
        for (int ge_only = 0; ge_only < 2; ge_only++) {
            double ls = 0, lg = 0, tot = 0;
            int64_t n = 0;
            for (int64_t b = 0; b < r->nbatches; b++) {
                if (!ge_only) tot += r->layer_us[b * NP + k];
                if (ge_only && r->batch_tokens[b] < r->min_tokens) continue;
                ls += log(r->layer_us[b * NP + k] / r->layer_us[b * NP + RAMP_POLICY_COSTMODEL]);
                lg += log(r->layer_us[b * NP + k] / r->layer_us[b * NP + RAMP_POLICY_EXHAUSTIVE]);
                n++;
            }
            const ramp_eval_ratio *q = ge_only ? &r->policy[k].speedup_ge : &r->policy[k].speedup_all;
            CHECK_EQ_INT(q->batches, n);
            if (!n) continue;
            CHECK_NEAR(q->geomean, exp(ls / n), 1e-12);
            CHECK_NEAR(ge_only ? r->policy[k].gap_ge_pct : r->policy[k].gap_all_pct,
                       (exp(lg / n) - 1) * 100, 1e-9);
            if (r->bootstrap > 0 && n > 1) CHECK(q->lo <= q->geomean * (1 + 1e-12) && q->geomean <= q->hi * (1 + 1e-12));
            if (!ge_only) CHECK_NEAR(r->policy[k].total_us, tot, 1e-9 * tot);
        }
    }
}

/* RaMP equals exhaustive search on every batch (float rounding aside): the
 * synthetic truths are exactly the cost model's form. */
static void check_ramp_is_exhaustive(const ramp_eval_result *r) {
    for (int64_t b = 0; b < r->nbatches; b++)
        CHECK_NEAR(r->layer_us[b * NP + RAMP_POLICY_COSTMODEL],
                   r->layer_us[b * NP + RAMP_POLICY_EXHAUSTIVE],
                   1e-5 * r->layer_us[b * NP + RAMP_POLICY_EXHAUSTIVE]);
    CHECK(fabs(r->policy[RAMP_POLICY_COSTMODEL].gap_all_pct) < 1e-3);
}

static ramp_eval_result *run(const ramp_timing *t, const ramp_eval_options *o) {
    ramp_eval_result *r = NULL;
    CHECK_OK(ramp_eval_run(t, o, &r));
    return r;
}

static void test_noiseless(ramp_rng *rng) {
    syn_params sp;
    syn_defaults(&sp);
    sp.batches = 10;
    double theta[48];
    ramp_timing *t = syn_dataset(rng, &sp, theta);
    if (!t) return;
    ramp_eval_options o;
    ramp_eval_defaults(&o);
    o.bootstrap = 200;
    o.policy.fit.wave = RAMP_WAVE_RMSE; /* the synthetic truth's wave is the capacity */
    o.policy.fit.intercept_free = 1;
    ramp_eval_result *r = run(t, &o);
    if (!r) { ramp_timing_free(t); return; }
    CHECK_EQ_INT(r->nfolds, 4);
    for (int k = 0; k < NP; k++) CHECK(r->policy[k].ran);
    check_consistent(t, r);
    check_ramp_is_exhaustive(r);
    CHECK_NEAR(r->policy[RAMP_POLICY_COSTMODEL].speedup_all.geomean, 1.0, 0);
    CHECK(r->spearman_median > 0.999999);
    CHECK(r->pick_err_median < 1e-5);
    CHECK(r->nscatter == o.scatter_max || r->nscatter > 0);
    for (int64_t j = 0; j < r->nscatter; j++)
        CHECK_NEAR(r->scatter_pred[j], r->scatter_meas[j], 1e-5 * r->scatter_meas[j]);
    /* compare() and its errors */
    ramp_eval_ratio q;
    CHECK_OK(ramp_eval_compare(r, RAMP_POLICY_VLLM, RAMP_POLICY_COSTMODEL, 0, &q));
    CHECK_NEAR(q.geomean, r->policy[RAMP_POLICY_VLLM].speedup_all.geomean, 1e-12);
    CHECK_NEAR(q.lo, r->policy[RAMP_POLICY_VLLM].speedup_all.lo, 1e-12);
    CHECK_ERR(ramp_eval_compare(r, RAMP_POLICY_COUNT, RAMP_POLICY_COSTMODEL, 0, &q),
              RAMP_ERR_INVALID_ARGUMENT);
    /* Deterministic: the same options give the same numbers. */
    ramp_eval_result *r2 = run(t, &o);
    if (r2) {
        CHECK(memcmp(r->layer_us, r2->layer_us, (size_t)r->nbatches * NP * sizeof(double)) == 0);
        CHECK(r->policy[RAMP_POLICY_VLLM].speedup_ge.lo == r2->policy[RAMP_POLICY_VLLM].speedup_ge.lo);
        ramp_eval_free(r2);
    }
    ramp_eval_free(r);
    ramp_timing_free(t);
}

/* The held-out domain's times can change nothing a learning policy picks. */
static void test_held_out_unseen(ramp_rng *rng) {
    syn_params sp;
    syn_defaults(&sp);
    sp.batches = 10;
    sp.noise = 0.03;
    double theta[48];
    ramp_timing *t = syn_dataset(rng, &sp, theta);
    if (!t) return;
    ramp_eval_options o;
    ramp_eval_defaults(&o);
    o.bootstrap = 0;
    o.holdout = "code";
    ramp_eval_result *a = run(t, &o);
    int code = ramp_timing_domain_index(t, "code");
    for (int64_t i = 0; i < t->nloads; i++)
        if (t->domain[i] == code)
            for (int c = 0; c < t->nconfigs; c++)
                t->times_us[i * t->nconfigs + c] *= (float)(0.3 + 3 * ramp_rng_uniform(rng));
    ramp_eval_result *b = run(t, &o);
    if (a && b) {
        CHECK_EQ_INT(a->nfolds, 1);
        CHECK(strcmp(a->folds[0].domain, "code") == 0);
        CHECK(memcmp(&a->folds[0].menu, &b->folds[0].menu, sizeof a->folds[0].menu) == 0);
        int oracle_changed = 0;
        for (int k = 0; k < NP; k++)
            for (int64_t i = 0; i < t->nloads; i++) {
                int same = a->choice[i * NP + k] == b->choice[i * NP + k];
                if (ramp_policy_is_oracle((ramp_policy_kind)k)) oracle_changed |= !same;
                else CHECK(same);
            }
        CHECK(oracle_changed); /* the perturbation was real */
        check_consistent(t, b);
    }
    ramp_eval_free(a);
    ramp_eval_free(b);
    /* Poisoning every other domain's times changes the fit (sanity of the
     * test above: the choices do depend on training times). */
    ramp_eval_result *c = run(t, &o);
    for (int64_t i = 0; i < t->nloads; i++)
        if (t->domain[i] != code)
            for (int j = 0; j < t->nconfigs; j++)
                t->times_us[i * t->nconfigs + j] = (float)(1 + 100 * ramp_rng_uniform(rng));
    ramp_eval_result *d = run(t, &o);
    if (c && d) {
        int changed = 0;
        for (int64_t i = 0; i < t->nloads; i++)
            changed |= c->choice[i * NP + RAMP_POLICY_COSTMODEL] != d->choice[i * NP + RAMP_POLICY_COSTMODEL];
        CHECK(changed);
    }
    ramp_eval_free(c);
    ramp_eval_free(d);
    ramp_timing_free(t);
}

static void test_errors_and_options(ramp_rng *rng) {
    syn_params sp;
    syn_defaults(&sp);
    sp.batches = 6;
    sp.ndomains = 2;
    sp.uniform_repeats = 0;
    sp.noise = 0.02;
    double theta[48];
    ramp_timing *t = syn_dataset(rng, &sp, theta);
    if (!t) return;
    ramp_eval_options o;
    ramp_eval_defaults(&o);
    o.bootstrap = 50;
    /* No uniform domain: VLLM does not run, says why; the rest does. */
    ramp_eval_result *r = run(t, &o);
    if (r) {
        CHECK(!r->policy[RAMP_POLICY_VLLM].ran);
        CHECK(strstr(r->policy[RAMP_POLICY_VLLM].why, "uniform") != NULL);
        CHECK(r->policy[RAMP_POLICY_TRACE_TABLE].ran);
        check_consistent(t, r);
        ramp_eval_ratio q;
        CHECK_ERR(ramp_eval_compare(r, RAMP_POLICY_VLLM, RAMP_POLICY_COSTMODEL, 0, &q),
                  RAMP_ERR_INVALID_ARGUMENT);
        ramp_eval_free(r);
    }
    /* A policy subset; COSTMODEL and EXHAUSTIVE always run; no menu. */
    o.policies = 1u << RAMP_POLICY_PER_GPU_TABLE;
    o.menu_size = 0;
    r = run(t, &o);
    if (r) {
        for (int k = 0; k < NP; k++)
            CHECK_EQ_INT(r->policy[k].ran, k == RAMP_POLICY_PER_GPU_TABLE ||
                                               k == RAMP_POLICY_COSTMODEL ||
                                               k == RAMP_POLICY_EXHAUSTIVE);
        CHECK_EQ_INT(r->folds[0].menu.count, 0);
        check_consistent(t, r);
        ramp_eval_free(r);
    }
    ramp_eval_defaults(&o);
    o.holdout = "nowhere";
    CHECK_ERR(ramp_eval_run(t, &o, &r), RAMP_ERR_INVALID_ARGUMENT);
    o.holdout = NULL;
    o.menu_size = RAMP_MENU_MAX + 1;
    CHECK_ERR(ramp_eval_run(t, &o, &r), RAMP_ERR_INVALID_ARGUMENT);
    ramp_eval_defaults(&o);
    float saved = t->times_us[5];
    t->times_us[5] = NAN;
    CHECK_ERR(ramp_eval_run(t, &o, &r), RAMP_ERR_NUMERIC);
    CHECK(strstr(ramp_last_error(), "load 0") != NULL);
    t->times_us[5] = saved;
    ramp_timing_free(t);
    /* One traffic domain: nothing to train on. */
    sp.ndomains = 1;
    t = syn_dataset(rng, &sp, theta);
    CHECK_ERR(ramp_eval_run(t, &o, &r), RAMP_ERR_INVALID_ARGUMENT);
    ramp_timing_free(t);
}

/* ---- reports and files ------------------------------------------------------- */

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    if (fread(buf, 1, (size_t)len, f) != (size_t)len) len = 0;
    buf[len] = 0;
    fclose(f);
    if (n) *n = (size_t)len;
    return buf;
}

static int no_temp_files(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    int ok = 1;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp.")) ok = 0;
    closedir(d);
    return ok;
}

static void test_reports(ramp_rng *rng) {
    syn_params sp;
    syn_defaults(&sp);
    sp.batches = 8;
    sp.noise = 0.03;
    double theta[48];
    ramp_timing *t = syn_dataset(rng, &sp, theta);
    if (!t) return;
    ramp_eval_options o;
    ramp_eval_defaults(&o);
    o.bootstrap = 100;
    o.scatter_max = 300;
    ramp_eval_result *r = run(t, &o);
    if (!r) { ramp_timing_free(t); return; }
    CHECK_EQ_INT(r->nscatter, 300);

    /* Tables: printed numbers are the result's. */
    char path[1200];
    snprintf(path, sizeof path, "%s/eval_report.txt", check_tmpdir());
    FILE *f = fopen(path, "w");
    const ramp_eval_result *list[2] = {r, r};
    CHECK_OK(ramp_eval_print_table3(f, list, 2));
    CHECK_OK(ramp_eval_print_table4(f, list, 2));
    CHECK_OK(ramp_eval_print_table9(f, list, 1));
    CHECK_OK(ramp_eval_print_table5(f, list, 2));
    CHECK_OK(ramp_eval_print_summary(f, r));
    fclose(f);
    char *text = slurp(path, NULL);
    if (text) {
        char want[128];
        /* Table 5: RaMP over vLLM's tuning on >= 128 batches, with its
         * interval, as ramp_eval_compare computes it. */
        ramp_eval_ratio q;
        CHECK_OK(ramp_eval_compare(r, RAMP_POLICY_VLLM, RAMP_POLICY_COSTMODEL, r->min_tokens, &q));
        snprintf(want, sizeof want, "%.2f [%.2f, %.2f]", q.geomean, q.lo, q.hi);
        CHECK(strstr(text, "Table 5") && strstr(text, want));
        CHECK_OK(ramp_eval_compare(r, RAMP_POLICY_TRACE_TABLE, RAMP_POLICY_COSTMODEL, r->min_tokens, &q));
        snprintf(want, sizeof want, "%.2f [%.2f, %.2f]", q.geomean, q.lo, q.hi);
        CHECK(strstr(text, want) != NULL);
        snprintf(want, sizeof want, "%.2fx", r->policy[RAMP_POLICY_VLLM].speedup_ge.geomean);
        CHECK(strstr(text, want) != NULL);
        CHECK(strstr(text, "Table 3") && strstr(text, "Table 4") && strstr(text, "Table 9"));
        CHECK(strstr(text, "synthetic") != NULL && strstr(text, "EP8") != NULL);
        snprintf(want, sizeof want, "%.1f", r->policy[RAMP_POLICY_TABLE_PADDING].gap_ge_pct);
        CHECK(strstr(text, want) != NULL);
        CHECK(strstr(text, "held out math") != NULL);
        free(text);
    }
    CHECK_ERR(ramp_eval_print_table3(NULL, list, 1), RAMP_ERR_INVALID_ARGUMENT);

    /* CSV: one row per batch, values round-trip. */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/eval_out", check_tmpdir());
    mkdir(dir, 0755);
    CHECK_OK(ramp_eval_write_csv(r, dir));
    snprintf(path, sizeof path, "%s/batches.csv", dir);
    text = slurp(path, NULL);
    if (text) {
        int rows = -1, cols0 = 0;
        char *save = NULL;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            int cols = 1;
            for (char *c = line; *c; c++) cols += *c == ',';
            if (rows < 0) {
                cols0 = cols;
                CHECK(strncmp(line, "domain,batch,batch_tokens,gpus,vllm_us", 38) == 0);
            } else {
                CHECK_EQ_INT(cols, cols0);
                char dom[64];
                int id, tok, gpus, pos;
                CHECK(sscanf(line, "%63[^,],%d,%d,%d%n", dom, &id, &tok, &gpus, &pos) == 4);
                CHECK_EQ_INT(id, r->batch_id[rows]);
                CHECK_EQ_INT(tok, r->batch_tokens[rows]);
                double v = strtod(line + pos + 1, NULL); /* vllm_us */
                CHECK_NEAR(v, r->layer_us[rows * NP + RAMP_POLICY_VLLM], 1e-6 * v);
                const char *last = strrchr(line, ','); /* imbalance */
                CHECK_NEAR(strtod(last + 1, NULL), r->batch_imbalance[rows], 1e-6);
            }
            rows++;
        }
        CHECK_EQ_INT(rows, r->nbatches);
        CHECK_EQ_INT(cols0, 4 + NP + 1); /* ..., <policy>_us..., imbalance */
        free(text);
    }
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    text = slurp(path, NULL);
    if (text) {
        int lines = 0;
        for (char *c = text; *c; c++) lines += *c == '\n';
        CHECK_EQ_INT(lines, 1 + NP);
        CHECK(strstr(text, "\nramp,\"RaMP (cost model)\",1,") != NULL);
        free(text);
    }
    /* SVG */
    CHECK_OK(ramp_eval_write_plots(r, dir));
    const char *svgs[2] = {"predicted_vs_measured.svg", "speedup.svg"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, svgs[i]);
        size_t n = 0;
        text = slurp(path, &n);
        CHECK(text != NULL);
        if (!text) continue;
        CHECK(strncmp(text, "<?xml", 5) == 0);
        CHECK(strstr(text, "<svg xmlns=\"http://www.w3.org/2000/svg\"") != NULL);
        CHECK(n > 7 && strcmp(text + n - 7, "</svg>\n") == 0);
        /* balanced text elements, and no raw '<' inside any text */
        int open = 0, close = 0;
        for (char *p = text; (p = strstr(p, "<text")); p++) open++;
        for (char *p = text; (p = strstr(p, "</text>")); p++) close++;
        CHECK_EQ_INT(open, close);
        CHECK(open > 8); /* title, ticks, labels, legend */
        if (i == 0) {
            int circles = 0;
            for (char *p = text; (p = strstr(p, "<circle")); p++) circles++;
            CHECK_EQ_INT(circles, r->nscatter + 1); /* points + legend marker */
        } else {
            CHECK(strstr(text, "&gt;= 128 tokens") != NULL); /* escaped */
            int rects = 0;
            for (char *p = text; (p = strstr(p, "<rect")); p++) rects++;
            CHECK(rects >= 2 * (NP - 1)); /* bars (+ frame, background, legend) */
        }
        free(text);
    }
    CHECK(no_temp_files(dir));
    /* A directory that does not exist: an error, no file. */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no/such/dir", check_tmpdir());
    CHECK_ERR(ramp_eval_write_csv(r, bad), RAMP_ERR_IO);
    CHECK_ERR(ramp_eval_write_plots(r, bad), RAMP_ERR_IO);
    snprintf(path, sizeof path, "%s/no/such/dir/x.svg", check_tmpdir());
    double xs[2] = {1, 2};
    CHECK_ERR(ramp_svg_scatter(path, "t", "x", "y", xs, xs, 2, 1, 1), RAMP_ERR_IO);
    /* Generic charts: linear scatter, empty data, NaN bars. */
    snprintf(path, sizeof path, "%s/lin.svg", dir);
    double ys[2] = {-3, 5};
    CHECK_OK(ramp_svg_scatter(path, "a <b> & \"c\"", "x", "y", xs, ys, 2, 0, 0));
    text = slurp(path, NULL);
    if (text) {
        CHECK(strstr(text, "a &lt;b&gt; &amp; &quot;c&quot;") != NULL);
        free(text);
    }
    CHECK_OK(ramp_svg_scatter(path, "empty", "x", "y", NULL, NULL, 0, 1, 1));
    const char *g[2] = {"a", "b"}, *s[1] = {"s"};
    double v[2] = {NAN, 0.8};
    CHECK_OK(ramp_svg_bars(path, "bars", "y", 2, g, 1, s, v, NAN));
    CHECK(no_temp_files(dir));
    ramp_eval_free(r);
    ramp_timing_free(t);
}

/* ramp_menu_greedy_include: fresh random included entries from one class go
 * on first, in the given order; the rest is the per-load greedy from that
 * class, checked against a direct greedy; every prefix total recomputed
 * from the times; and each bad list refused. */
static void test_menu_include(ramp_rng *rng) {
    syn_params sp;
    syn_defaults(&sp);
    sp.noise = 0.05;
    double theta[48];
    ramp_timing *t = syn_dataset(rng, &sp, theta);
    if (!t) return;
    const int nc = t->nconfigs;
    for (int trial = 0; trial < 8; trial++) {
        const int cls = t->blocks_per_sm[ramp_rng_below(rng, (uint32_t)nc)];
        int members[64], nm = 0;
        for (int c = 0; c < nc && nm < 64; c++)
            if (t->blocks_per_sm[c] == cls) members[nm++] = c;
        const int size = nm < 4 ? nm : 4;
        const int ninc = 1 + (int)ramp_rng_below(rng, (uint32_t)size);
        int inc[4];
        for (int j = 0; j < ninc; j++) { /* distinct, random order */
            int dup;
            do {
                inc[j] = members[ramp_rng_below(rng, (uint32_t)nm)];
                dup = 0;
                for (int l = 0; l < j; l++) dup |= inc[l] == inc[j];
            } while (dup);
        }
        ramp_menu m;
        CHECK_OK(ramp_menu_greedy_include(t, NULL, size, 0, NULL, RAMP_MENU_PER_LOAD, inc, ninc, &m));
        CHECK_EQ_INT(m.count, size);
        CHECK_EQ_INT(m.blocks_per_sm, cls);
        int chosen[4], nch = 0;
        for (int step = 0; step < size; step++) {
            int pick = step < ninc ? inc[step] : -1;
            double pt = INFINITY;
            for (int j = 0; j < nm; j++) {
                const int c = step < ninc ? pick : members[j];
                int dup = 0;
                for (int l = 0; l < nch; l++) dup |= chosen[l] == c;
                if (dup && step >= ninc) continue;
                double sum = 0;
                for (int64_t i = 0; i < t->nloads; i++) {
                    double v = t->times_us[i * nc + c];
                    for (int l = 0; l < nch; l++) v = fmin(v, t->times_us[i * nc + chosen[l]]);
                    sum += v;
                }
                if (step < ninc) { pt = sum; break; }
                if (sum < pt) { pt = sum; pick = c; }
            }
            chosen[nch++] = pick;
            CHECK_EQ_INT(m.config[step], pick);
            CHECK_NEAR(m.total_us[step], pt, 1e-6 * pt);
        }
        /* the class fixed by the entries, so asking for it changes nothing */
        ramp_menu m2;
        CHECK_OK(ramp_menu_greedy_include(t, NULL, size, cls, NULL, RAMP_MENU_PER_LOAD, inc, ninc, &m2));
        CHECK(memcmp(&m, &m2, sizeof m) == 0);
    }
    /* none included: the plain greedy */
    ramp_menu a, b;
    CHECK_OK(ramp_menu_greedy(t, NULL, 3, 0, NULL, &a));
    CHECK_OK(ramp_menu_greedy_include(t, NULL, 3, 0, NULL, RAMP_MENU_PER_LOAD, NULL, 0, &b));
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    /* refusals: two classes, a repeat, an index out of range, more than the
     * size, a class other than the one asked for */
    int c1 = -1, c2 = -1;
    for (int c = 0; c < nc; c++) {
        if (c1 < 0) c1 = c;
        else if (c2 < 0 && t->blocks_per_sm[c] != t->blocks_per_sm[c1]) c2 = c;
    }
    ramp_menu m;
    if (c2 >= 0) {
        int two[2] = {c1, c2};
        CHECK_ERR(ramp_menu_greedy_include(t, NULL, 3, 0, NULL, RAMP_MENU_PER_LOAD, two, 2, &m),
                  RAMP_ERR_INVALID_ARGUMENT);
        CHECK_ERR(ramp_menu_greedy_include(t, NULL, 3, t->blocks_per_sm[c2], NULL,
                                           RAMP_MENU_PER_LOAD, &c1, 1, &m),
                  RAMP_ERR_INVALID_ARGUMENT);
    }
    int rep[2] = {c1, c1}, bad = nc;
    CHECK_ERR(ramp_menu_greedy_include(t, NULL, 3, 0, NULL, RAMP_MENU_PER_LOAD, rep, 2, &m),
              RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_menu_greedy_include(t, NULL, 3, 0, NULL, RAMP_MENU_PER_LOAD, &bad, 1, &m),
              RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_menu_greedy_include(t, NULL, 1, 0, NULL, RAMP_MENU_PER_LOAD, rep, 2, &m),
              RAMP_ERR_INVALID_ARGUMENT);
    /* an entry not timed on every load */
    int untimed = c1;
    float keep = t->times_us[untimed];
    t->times_us[untimed] = INFINITY; /* load 0 */
    CHECK_ERR(ramp_menu_greedy_include(t, NULL, 3, 0, NULL, RAMP_MENU_PER_LOAD, &untimed, 1, &m),
              RAMP_ERR_INVALID_ARGUMENT);
    t->times_us[untimed] = keep;
    ramp_timing_free(t);
}

/* The layer-time menu objective against a direct greedy: per step, the
 * candidate minimising sum over whole masked batches of the slowest GPU's
 * best time over the menu so far plus the candidate. */
static void test_menu_layer(ramp_rng *rng) {
    syn_params sp;
    syn_defaults(&sp);
    sp.batches = 10;
    sp.noise = 0.05;
    double theta[48];
    ramp_timing *t = syn_dataset(rng, &sp, theta);
    if (!t) return;
    uint8_t *mask = calloc((size_t)t->nloads, 1);
    int skip = t->domain[0];
    for (int64_t i = 0; i < t->nloads; i++) mask[i] = t->domain[i] != skip;
    for (int size = 1; size <= 4; size++) {
        ramp_menu menu;
        CHECK_OK(ramp_menu_greedy_objective(t, mask, size, 0, NULL, RAMP_MENU_LAYER, &menu));
        /* Direct: every class, greedy, layer objective. */
        double best_total = INFINITY;
        int best_cfg[4] = {0}, best_n = 0, best_cls = 0;
        for (int cls = 1; cls <= 2; cls++) {
            int chosen[4], nch = 0;
            double total = INFINITY;
            for (int step = 0; step < size; step++) {
                int pick = -1;
                double pt = INFINITY;
                for (int c = 0; c < t->nconfigs; c++) {
                    if (t->blocks_per_sm[c] != cls) continue;
                    int dup = 0;
                    for (int j = 0; j < nch; j++) dup |= chosen[j] == c;
                    if (dup) continue;
                    double sum = 0;
                    for (int32_t b = 0; b <= t->batch[t->nloads - 1]; b++) {
                        double mx = 0;
                        int all = 1, any = 0;
                        for (int64_t i = 0; i < t->nloads; i++) {
                            if (t->batch[i] != b) continue;
                            any = 1;
                            if (!mask[i]) { all = 0; continue; }
                            double v = t->times_us[i * t->nconfigs + c];
                            for (int j = 0; j < nch; j++)
                                v = fmin(v, t->times_us[i * t->nconfigs + chosen[j]]);
                            mx = fmax(mx, v);
                        }
                        if (any && all) sum += mx;
                    }
                    if (sum < pt) { pt = sum; pick = c; }
                }
                if (pick < 0) break;
                chosen[nch++] = pick;
                total = pt;
            }
            if (nch > 0 && total < best_total) {
                best_total = total;
                best_n = nch;
                best_cls = cls;
                memcpy(best_cfg, chosen, sizeof chosen);
            }
        }
        CHECK_EQ_INT(menu.count, best_n);
        CHECK_EQ_INT(menu.blocks_per_sm, best_cls);
        for (int j = 0; j < best_n && j < menu.count; j++) CHECK_EQ_INT(menu.config[j], best_cfg[j]);
        CHECK_NEAR(menu.total_us[menu.count - 1], best_total, 1e-9 * best_total);
        /* The per-load objective is what ramp_menu_greedy does. */
        ramp_menu a, b;
        CHECK_OK(ramp_menu_greedy(t, mask, size, 0, NULL, &a));
        CHECK_OK(ramp_menu_greedy_objective(t, mask, size, 0, NULL, RAMP_MENU_PER_LOAD, &b));
        CHECK(memcmp(&a, &b, sizeof a) == 0);
    }
    /* No whole batch in the mask: an error. */
    memset(mask, 0, (size_t)t->nloads);
    mask[0] = 1;
    ramp_menu m1;
    if (t->batch[1] == t->batch[0])
        CHECK_ERR(ramp_menu_greedy_objective(t, mask, 2, 0, NULL, RAMP_MENU_LAYER, &m1),
                  RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_menu_greedy_objective(t, NULL, 2, 0, NULL, (ramp_menu_objective)7, &m1),
              RAMP_ERR_INVALID_ARGUMENT);
    free(mask);
    ramp_timing_free(t);
}

/* Transfer: two "models" (hidden 2048 and 4096) and a third (hidden 1024)
 * whose times all follow theta_0 + (hidden/2048) (theta_1 W + theta_2 T +
 * theta_3 A) with the same theta per configuration: fit on the first two,
 * the third is predicted exactly, without reading its times, and the
 * transferred choice is exhaustive search's (gap 0). */
static void fill_scaled(ramp_timing *t, const double *theta, int poison) {
    double sc = t->geom.hidden / 2048.0;
    for (int64_t i = 0; i < t->nloads; i++)
        for (int c = 0; c < t->nconfigs; c++) {
            double terms[4];
            ramp_costmodel_terms(RAMP_COSTMODEL_EQ3, &t->configs[c], &t->geom, t->sms,
                                 t->blocks_per_sm[c], t->nexp[i], t->loads + i * t->max_experts,
                                 terms);
            const double *th = theta + c * 4;
            double v = th[0] + sc * (th[1] * terms[1] + th[2] * terms[2] + th[3] * terms[3]);
            t->times_us[i * t->nconfigs + c] = poison ? NAN : (float)v;
        }
}

static void test_transfer(ramp_rng *rng) {
    syn_params sp;
    syn_defaults(&sp);
    sp.batches = 6;
    double theta[48], unused[48];
    ramp_timing *ts[3] = {NULL, NULL, NULL};
    static const int hidden[3] = {2048, 4096, 1024};
    static const char *const names[3] = {"model-a", "model-b", "model-c"};
    for (int k = 0; k < 3; k++) {
        ts[k] = syn_dataset(rng, &sp, k == 0 ? theta : unused);
        if (!ts[k]) goto out;
        ts[k]->geom.hidden = hidden[k];
        snprintf(ts[k]->model, sizeof ts[k]->model, "%s", names[k]);
    }
    /* Same configurations in all three (syn_configs): the last one is left
     * out of training by dropping its times in both training sets. */
    fill_scaled(ts[0], theta, 0);
    fill_scaled(ts[1], theta, 0);
    int last = ts[2]->nconfigs - 1;
    for (int k = 0; k < 2; k++)
        for (int64_t i = 0; i < ts[k]->nloads; i++) ts[k]->times_us[i * ts[k]->nconfigs + last] = NAN;
    fill_scaled(ts[2], theta, 1); /* the target's times: never read */
    ramp_costmodel *m = NULL;
    CHECK_OK(ramp_costmodel_fit_transfer((const ramp_timing *const *)ts, 2, ts[2], &m));
    if (m) {
        CHECK_EQ_INT(m->rows[last], 0);
        fill_scaled(ts[2], theta, 0);
        for (int64_t i = 0; i < ts[2]->nloads; i += 3)
            for (int c = 0; c < last; c++) {
                CHECK_EQ_INT(m->rows[c], ts[0]->nloads + ts[1]->nloads);
                const int32_t *ld = ts[2]->loads + i * ts[2]->max_experts;
                double want = ts[2]->times_us[i * ts[2]->nconfigs + c];
                CHECK_NEAR(ramp_costmodel_predict(m, c, ts[2]->nexp[i], ld), want, 1e-5 * want);
            }
        ramp_costmodel_free(m);
    }
    /* The evaluation: target c from a and b (datasets of c's own model are
     * skipped), gap 0 to exhaustive among the fit configurations, rank
     * correlation 1. Make the unfit configuration never the best. */
    for (int64_t i = 0; i < ts[2]->nloads; i++) ts[2]->times_us[i * ts[2]->nconfigs + last] = 1e6f;
    ramp_eval_transfer x;
    CHECK_OK(ramp_eval_transfer_run((const ramp_timing *const *)ts, 3, 2, 128, &x));
    CHECK_EQ_INT(x.ntrain, 2);
    CHECK_EQ_INT(x.fitted, ts[2]->nconfigs - 1);
    CHECK(x.batches > 0);
    CHECK_NEAR(x.gap_all_pct, 0, 1e-4);
    CHECK(x.spearman_median > 0.999);
    CHECK(x.pick_err_median < 1e-5);
    CHECK(strstr(x.trained_on, "model-a EP8") && strstr(x.trained_on, "model-b EP8"));
    /* A balanced twin of a training dataset (same model, layout, kernel) is
     * the same traffic placed differently: not trained on a second time;
     * alone (no contiguous twin) it is. */
    snprintf(ts[1]->model, sizeof ts[1]->model, "model-a");
    snprintf(ts[1]->placement, sizeof ts[1]->placement, "balanced:others");
    CHECK_OK(ramp_eval_transfer_run((const ramp_timing *const *)ts, 3, 2, 128, &x));
    CHECK_EQ_INT(x.ntrain, 1);
    CHECK_EQ_INT(x.train_loads, ts[0]->nloads);
    snprintf(ts[0]->model, sizeof ts[0]->model, "model-d");
    CHECK_OK(ramp_eval_transfer_run((const ramp_timing *const *)ts, 3, 2, 128, &x));
    CHECK_EQ_INT(x.ntrain, 2);
    /* One model only: nothing to transfer from. */
    snprintf(ts[0]->model, sizeof ts[0]->model, "model-c");
    snprintf(ts[1]->model, sizeof ts[1]->model, "model-c");
    CHECK_ERR(ramp_eval_transfer_run((const ramp_timing *const *)ts, 3, 2, 128, &x), RAMP_ERR_NOT_FOUND);
out:
    for (int k = 0; k < 3; k++) ramp_timing_free(ts[k]);
}

/* ---- Tables 8 and 11 on hand-made results --------------------------------------- */

/* A result of nb batches where only VLLM, TRACE_TABLE, COSTMODEL and
 * EXHAUSTIVE ran; times[b][0..3] are their layer times. */
static ramp_eval_result *hand_result(const char *layout, const char *placement, int nb,
                                     const int32_t *ids, const int32_t *tokens,
                                     const double (*times)[4], const double *imbalance,
                                     double imbalance_ge) {
    static const ramp_policy_kind kinds[4] = {RAMP_POLICY_VLLM, RAMP_POLICY_TRACE_TABLE,
                                              RAMP_POLICY_COSTMODEL, RAMP_POLICY_EXHAUSTIVE};
    ramp_eval_result *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    snprintf(r->model, sizeof r->model, "Hand-MoE");
    snprintf(r->layout, sizeof r->layout, "%s", layout);
    snprintf(r->placement, sizeof r->placement, "%s", placement);
    snprintf(r->device, sizeof r->device, "hand");
    r->every_expert = layout[0] == 'T';
    r->min_tokens = 128;
    r->bootstrap = 0;
    r->seed = 1;
    r->nbatches = nb;
    r->batch_id = calloc((size_t)nb, sizeof *r->batch_id);
    r->batch_tokens = calloc((size_t)nb, sizeof *r->batch_tokens);
    r->batch_imbalance = calloc((size_t)nb, sizeof *r->batch_imbalance);
    r->layer_us = calloc((size_t)nb * NP, sizeof *r->layer_us);
    for (int b = 0; b < nb; b++) {
        r->batch_id[b] = ids[b];
        r->batch_tokens[b] = tokens[b];
        r->batch_imbalance[b] = imbalance[b];
        r->nbatches_ge += tokens[b] >= 128;
        for (int k = 0; k < NP; k++) r->layer_us[b * NP + k] = NAN;
        for (int j = 0; j < 4; j++) r->layer_us[b * NP + kinds[j]] = times[b][j];
    }
    for (int j = 0; j < 4; j++) r->policy[kinds[j]].ran = 1;
    r->imbalance_ge = imbalance_ge;
    return r;
}

static void test_table8_11(void) {
    /* Contiguous: batches 3 (64 tokens: not >= 128), 5 and 9. Balanced:
     * the same batches plus 11 (only there). Times: vLLM, trace, RaMP, exh. */
    const int32_t cid[3] = {3, 5, 9}, ctok[3] = {64, 200, 400};
    const double ct[3][4] = {{10, 10, 10, 10}, {150, 120, 100, 100}, {300, 270, 200, 180}};
    const double cimb[3] = {2.0, 1.5, 1.7};
    const int32_t bid[4] = {3, 5, 9, 11}, btok[4] = {64, 200, 400, 300};
    const double bt[4][4] = {{9, 9, 9, 9}, {100, 110, 100, 90}, {200, 200, 250, 250},
                             {50, 40, 40, 40}};
    const double bimb[4] = {1.9, 1.2, 1.3, 1.1};
    ramp_eval_result *c = hand_result("EP8", "contiguous", 3, cid, ctok, ct, cimb, 1.6);
    ramp_eval_result *b = hand_result("EP8", "balanced:others", 4, bid, btok, bt, bimb, 1.2);
    if (!c || !b) { ramp_eval_free(c); ramp_eval_free(b); return; }
    ramp_eval_placement_row row;
    CHECK_OK(ramp_eval_placement_compare(c, b, 128, &row));
    CHECK_EQ_INT(row.batches_contig, 2);
    CHECK_EQ_INT(row.batches_bal, 3);
    CHECK_EQ_INT(row.batches_paired, 2);
    CHECK_NEAR(row.imbalance_contig, 1.6, 0);
    CHECK_NEAR(row.imbalance_bal, 1.2, 0);
    /* By hand: contiguous, trace / RaMP on batches 5 and 9: 1.2 and 1.35. */
    CHECK_NEAR(row.ramp_over_trace_contig.geomean, sqrt(1.2 * 1.35), 1e-12);
    CHECK_NEAR(row.ramp_over_vllm_contig.geomean, sqrt(1.5 * 1.5), 1e-12);
    /* balanced, batches 5, 9, 11: 1.1, 0.8, 1.0 and 1.0, 0.8, 1.25 */
    CHECK_NEAR(row.ramp_over_trace_bal.geomean, cbrt(1.1 * 0.8 * 1.0), 1e-12);
    CHECK_NEAR(row.ramp_over_vllm_bal.geomean, 1.0, 1e-12);
    CHECK_EQ_INT(row.ramp_over_trace_bal.batches, 3);
    /* paired (5 and 9): RaMP 100/100, 200/250; vLLM 150/100, 300/200 */
    CHECK_NEAR(row.balancing_ramp.geomean, sqrt(0.8), 1e-12);
    CHECK_NEAR(row.balancing_vllm.geomean, 1.5, 1e-12);
    CHECK(isnan(row.balancing_ramp.lo)); /* bootstrap 0: no interval */
    /* With intervals: they hold the estimate. */
    c->bootstrap = b->bootstrap = 200;
    CHECK_OK(ramp_eval_placement_compare(c, b, 128, &row));
    CHECK(row.balancing_ramp.lo <= row.balancing_ramp.geomean + 1e-12 &&
          row.balancing_ramp.geomean <= row.balancing_ramp.hi + 1e-12);
    CHECK(row.ramp_over_trace_bal.lo < row.ramp_over_trace_bal.hi);
    c->bootstrap = b->bootstrap = 0;
    /* One side only: the other's columns NaN. */
    CHECK_OK(ramp_eval_placement_compare(NULL, b, 128, &row));
    CHECK(isnan(row.imbalance_contig) && isnan(row.balancing_ramp.geomean));
    CHECK_NEAR(row.imbalance_bal, 1.2, 0);
    /* The printed table carries these numbers. */
    char path[1200];
    snprintf(path, sizeof path, "%s/eval_table8.txt", check_tmpdir());
    FILE *f = fopen(path, "w");
    const ramp_eval_result *list[2] = {c, b};
    if (f) {
        CHECK_OK(ramp_eval_print_table8(f, list, 2));
        CHECK_OK(ramp_eval_print_table3(f, list, 2));
        fclose(f);
    }
    char *text = slurp(path, NULL);
    if (text) {
        CHECK(strstr(text, "Table 8") != NULL);
        CHECK(strstr(text, "2/3/2") != NULL);           /* batches */
        CHECK(strstr(text, "1.60   1.20") != NULL);     /* imbalance */
        CHECK(strstr(text, "1.27") != NULL);            /* sqrt(1.62) */
        CHECK(strstr(text, "0.89") != NULL);            /* sqrt(0.8) */
        CHECK(strstr(text, "EP8 bal") != NULL);         /* Table 3's label */
        free(text);
    }
    /* Batches that do not match (same id, other tokens): refused, named. */
    b->batch_tokens[1] = 201;
    CHECK_ERR(ramp_eval_placement_compare(c, b, 128, &row), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "batch 5") != NULL);
    b->batch_tokens[1] = 200;
    /* Another layout: refused. */
    snprintf(b->layout, sizeof b->layout, "EP16");
    CHECK_ERR(ramp_eval_placement_compare(c, b, 128, &row), RAMP_ERR_INVALID_ARGUMENT);

    /* Table 11: only the TP result prints; all batches. vLLM / trace:
     * 1.25, 1.0; trace / RaMP: 1.0, 1.6; total 1.25 * 1.6 = 2.0 -> sqrt 2. */
    const int32_t tid[2] = {0, 1}, ttok[2] = {16, 1000};
    const double tt[2][4] = {{125, 100, 100, 100}, {160, 160, 100, 80}};
    const double timb[2] = {1, 1};
    ramp_eval_result *tp = hand_result("TP2", "", 2, tid, ttok, tt, timb, 1.0);
    if (tp) {
        snprintf(path, sizeof path, "%s/eval_table11.txt", check_tmpdir());
        f = fopen(path, "w");
        const ramp_eval_result *l2[2] = {c, tp};
        if (f) {
            CHECK_OK(ramp_eval_print_table11(f, l2, 2));
            fclose(f);
        }
        text = slurp(path, NULL);
        if (text) {
            char want[160];
            /* Kernel -, trace-tuned sqrt(1.25), RaMP sqrt(1.6), total
             * sqrt(2), exhaustive sqrt(1.25 * 2) */
            snprintf(want, sizeof want, "TP2           2       - %12.2f %20.2f %12.2f %11.2f",
                     sqrt(1.25), sqrt(1.6), sqrt(2.0), sqrt(2.5));
            CHECK(strstr(text, want) != NULL);
            CHECK(strstr(text, "EP8 ") == NULL); /* EP rows are not in Table 11 */
            free(text);
        }
        ramp_eval_free(tp);
    }
    ramp_eval_free(c);
    ramp_eval_free(b);
}

/* A TP dataset through the evaluation: one load a batch, every expert on
 * the GPU, imbalance 1. */
static void test_every_expert(ramp_rng *rng) {
    syn_params sp;
    syn_defaults(&sp);
    sp.gpus = 2;
    sp.batches = 8;
    double theta[48];
    /* syn_dataset names the layout EP<gpus>: build EP2, keep GPU 0's loads
     * (one a batch), then call it TP2. */
    ramp_timing *t = syn_dataset(rng, &sp, theta);
    if (!t) return;
    int64_t w = 0;
    for (int64_t i = 0; i < t->nloads; i++) {
        if (t->gpu[i] != 0) continue;
        memmove(t->loads + w * t->max_experts, t->loads + i * t->max_experts,
                (size_t)t->max_experts * sizeof *t->loads);
        memmove(t->times_us + w * t->nconfigs, t->times_us + i * t->nconfigs,
                (size_t)t->nconfigs * sizeof *t->times_us);
        t->nexp[w] = t->nexp[i];
        t->batch[w] = t->batch[i];
        t->gpu[w] = 0;
        t->domain[w] = t->domain[i];
        t->batch_tokens[w] = t->batch_tokens[i];
        w++;
    }
    t->nloads = w;
    snprintf(t->layout, sizeof t->layout, "TP2");
    ramp_eval_options o;
    ramp_eval_defaults(&o);
    o.bootstrap = 0;
    ramp_eval_result *r = run(t, &o);
    if (r) {
        CHECK_EQ_INT(r->every_expert, 1);
        check_consistent(t, r);
        for (int64_t b = 0; b < r->nbatches; b++) {
            CHECK_EQ_INT(r->batch_gpus[b], 1);
            CHECK_NEAR(r->batch_imbalance[b], 1.0, 0);
        }
        ramp_eval_free(r);
    }
    ramp_timing_free(t);
}

/* ---- Equation 3 + pairs (ramp_policy_options.cost_model) ------------------------ */

/* The synthetic truth plus th4[c] * P, P the load's token-expert pairs. */
static void fill_pairs(ramp_timing *t, const double *theta, const double *th4) {
    for (int64_t i = 0; i < t->nloads; i++) {
        const int32_t *ld = t->loads + i * t->max_experts;
        double pairs = 0;
        for (int e = 0; e < t->nexp[i]; e++) pairs += ld[e];
        for (int c = 0; c < t->nconfigs; c++)
            t->times_us[i * t->nconfigs + c] =
                (float)(syn_time(t, theta, c, t->nexp[i], ld, 0) + th4[c] * pairs);
    }
}

/* With cost_model = EQ3_PAIRS, RaMP and RaMP on the menu fit the five-term
 * model: on times with a pairs term RaMP is exhaustive search; the default
 * is Equation 3; the transfer takes the kind too; other kinds are refused. */
static void test_eval_pairs(ramp_rng *rng) {
    syn_params sp;
    syn_defaults(&sp);
    sp.batches = 8;
    double theta[48], unused[48], th4[12];
    ramp_timing *t = syn_dataset(rng, &sp, theta);
    ramp_timing *other = syn_dataset(rng, &sp, unused);
    if (!t || !other) goto out;
    for (int c = 0; c < t->nconfigs; c++) th4[c] = 0.02 * (0.5 + ramp_rng_uniform(rng));
    fill_pairs(t, theta, th4);
    ramp_eval_options o;
    ramp_eval_defaults(&o);
    CHECK_EQ_INT(o.policy.cost_model, RAMP_COSTMODEL_EQ3_PAIRS); /* the default */
    o.bootstrap = 0;
    o.policy.fit.wave = RAMP_WAVE_RMSE; /* the synthetic truth's wave is the capacity */
    o.policy.fit.intercept_free = 1;
    o.policy.cost_model = RAMP_COSTMODEL_EQ3_PAIRS;
    ramp_eval_result *r = run(t, &o);
    if (r) {
        check_consistent(t, r);
        check_ramp_is_exhaustive(r);
        CHECK(r->spearman_median > 0.999999);
        CHECK(r->pick_err_median < 1e-5);
        /* RaMP on the menu is the best of the menu. */
        for (int64_t b = 0; b < r->nbatches; b++)
            CHECK_NEAR(r->layer_us[b * NP + RAMP_POLICY_MENU_COSTMODEL],
                       r->layer_us[b * NP + RAMP_POLICY_MENU_BEST],
                       1e-5 * r->layer_us[b * NP + RAMP_POLICY_MENU_BEST]);
        ramp_eval_free(r);
    }
    /* The policies' models are of the chosen kind (default: Equation 3). */
    ramp_menu menu;
    CHECK_OK(ramp_menu_greedy(t, NULL, 4, 0, NULL, &menu));
    ramp_policy_options po = o.policy;
    po.menu = menu.config;
    po.menu_count = menu.count;
    static const ramp_policy_kind model_kinds[2] = {RAMP_POLICY_COSTMODEL, RAMP_POLICY_MENU_COSTMODEL};
    for (int j = 0; j < 2; j++)
        for (int pairs = 0; pairs < 2; pairs++) {
            po.cost_model = pairs ? RAMP_COSTMODEL_EQ3_PAIRS : RAMP_COSTMODEL_EQ3;
            ramp_policy *p = NULL;
            CHECK_OK(ramp_policy_fit(model_kinds[j], t, NULL, &po, &p));
            if (!p) continue;
            CHECK_EQ_INT(ramp_policy_costmodel(p)->kind, po.cost_model);
            ramp_policy_free(p);
        }
    /* The tile-count policy keeps its own formula whatever cost_model says. */
    ramp_policy *tc = NULL;
    CHECK_OK(ramp_policy_fit(RAMP_POLICY_TILECOUNT_OLS, t, NULL, &po, &tc));
    if (tc) CHECK_EQ_INT(ramp_policy_costmodel(tc)->kind, RAMP_COSTMODEL_TILECOUNT);
    ramp_policy_free(tc);
    /* Bad kinds: refused, named. */
    static const ramp_costmodel_kind bad[2] = {RAMP_COSTMODEL_TILECOUNT, (ramp_costmodel_kind)9};
    for (int j = 0; j < 2; j++) {
        o.policy.cost_model = bad[j];
        CHECK_ERR(ramp_eval_run(t, &o, &r), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "cost_model") != NULL);
    }
    /* The transfer: "model-b" from "model-a" of the same truth (hidden 2048
     * in both: scale 1) is exhaustive search with the pairs term. */
    fill_pairs(other, theta, th4);
    snprintf(other->model, sizeof other->model, "model-b");
    const ramp_timing *ts[2] = {t, other};
    ramp_eval_transfer x;
    CHECK_OK(ramp_eval_transfer_run_kind(ts, 2, 1, 128, RAMP_COSTMODEL_EQ3_PAIRS, &x));
    CHECK_EQ_INT(x.ntrain, 1);
    CHECK_NEAR(x.gap_all_pct, 0, 1e-4);
    CHECK(x.pick_err_median < 1e-5);
    CHECK_ERR(ramp_eval_transfer_run_kind(ts, 2, 1, 128, RAMP_COSTMODEL_TILECOUNT, &x),
              RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "tilecount") != NULL);
out:
    ramp_timing_free(t);
    ramp_timing_free(other);
}

int main(void) {
    ramp_rng rng;
    ramp_rng_seed(&rng, check_seed());
    test_noiseless(&rng);
    test_held_out_unseen(&rng);
    test_errors_and_options(&rng);
    test_reports(&rng);
    test_menu_layer(&rng);
    test_menu_include(&rng);
    test_transfer(&rng);
    test_table8_11();
    test_every_expert(&rng);
    test_eval_pairs(&rng);
    return check_finish("test_eval");
}
