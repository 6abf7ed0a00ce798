/*
 * test_policy.c - the menu greedy and the selection policies against
 * references computed here: brute force for the menu's extremes and an
 * independent greedy, the batch-size tables' entries and nearest-entry
 * lookups, the per-GPU table, the oracle, the cost model equal to the oracle
 * on noiseless linear truth, no policy ever beating the oracle, and fits that
 * never read the times of loads outside their training mask.
 */
#include "eval_util.h"

/* ---- menu ------------------------------------------------------------------- */

static double total_of(const ramp_timing *t, const uint8_t *mask, const int *set, int n) {
    double total = 0;
    for (int64_t i = 0; i < t->nloads; i++) {
        if (mask && !mask[i]) continue;
        double best = INFINITY;
        for (int j = 0; j < n; j++) best = fmin(best, t->times_us[i * t->nconfigs + set[j]]);
        total += best;
    }
    return total;
}

/* Reference greedy, written independently: recomputes totals from scratch. */
static void greedy_ref(const ramp_timing *t, const uint8_t *mask, int cls, int size, int *out,
                       int *count) {
    int n = 0;
    for (int s = 0; s < size; s++) {
        int best = -1;
        double bt = INFINITY;
        for (int c = 0; c < t->nconfigs; c++) {
            if (t->blocks_per_sm[c] != cls) continue;
            int used = 0;
            for (int j = 0; j < n; j++) used |= out[j] == c;
            if (used) continue;
            out[n] = c;
            double v = total_of(t, mask, out, n + 1);
            if (v < bt) { bt = v; best = c; }
        }
        if (best < 0) break;
        out[n++] = best;
    }
    *count = n;
}

static void test_menu(ramp_rng *rng) {
    syn_params sp;
    syn_defaults(&sp);
    sp.batches = 6;
    sp.noise = 0.05;
    double theta[48];
    ramp_timing *t = syn_dataset(rng, &sp, theta);
    if (!t) return;
    /* Random times make the greedy's choices less structured. */
    for (int64_t i = 0; i < t->nloads * t->nconfigs; i++)
        if (ramp_rng_below(rng, 2)) t->times_us[i] *= (float)(0.5 + ramp_rng_uniform(rng));
    uint8_t *mask = calloc((size_t)t->nloads, 1);
    for (int64_t i = 0; i < t->nloads; i++) mask[i] = ramp_rng_below(rng, 4) != 0;

    ramp_menu m;
    double prev = INFINITY;
    for (int size = 1; size <= 8; size++) {
        CHECK_OK(ramp_menu_greedy(t, mask, size, 0, NULL, &m));
        int cls = m.blocks_per_sm, clsize = 0;
        for (int c = 0; c < t->nconfigs; c++) clsize += t->blocks_per_sm[c] == cls;
        CHECK_EQ_INT(m.count, size < clsize ? size : clsize);
        for (int j = 0; j < m.count; j++) {
            CHECK(t->blocks_per_sm[m.config[j]] == cls);
            for (int l = 0; l < j; l++) CHECK(m.config[l] != m.config[j]);
            /* total_us[j] is the workload's total with the first j+1 */
            CHECK_NEAR(m.total_us[j], total_of(t, mask, m.config, j + 1), 1e-9 * m.total_us[j]);
            if (j) CHECK(m.total_us[j] <= m.total_us[j - 1]);
        }
        double final = m.total_us[m.count - 1];
        CHECK(final <= prev * (1 + 1e-12)); /* non-increasing in N */
        prev = final;
        /* Same as the independent greedy in that class. */
        int ref[16], nref;
        greedy_ref(t, mask, cls, size, ref, &nref);
        CHECK_EQ_INT(nref, m.count);
        for (int j = 0; j < nref && j < m.count; j++) CHECK_EQ_INT(ref[j], m.config[j]);
        /* The winning class beats every other class's greedy menu. */
        for (int other = 1; other <= 2; other++) {
            int o2[16], no;
            greedy_ref(t, mask, other, size, o2, &no);
            if (no) CHECK(final <= total_of(t, mask, o2, no) * (1 + 1e-12));
        }
        /* Brute force over every subset of the class of this size: the
         * greedy is never better than the optimum; exact at 1 and at the
         * class size. */
        int members[12], nm = 0;
        for (int c = 0; c < t->nconfigs; c++)
            if (t->blocks_per_sm[c] == cls) members[nm++] = c;
        double opt = INFINITY;
        for (unsigned set = 0; set < (1u << nm); set++) {
            if (__builtin_popcount(set) != m.count) continue;
            int pick[16], np = 0;
            for (int j = 0; j < nm; j++)
                if (set >> j & 1u) pick[np++] = members[j];
            opt = fmin(opt, total_of(t, mask, pick, np));
        }
        CHECK(final >= opt * (1 - 1e-12));
        if (m.count == 1 || m.count == nm) CHECK_NEAR(final, opt, 1e-9 * opt);
    }
    /* occupancy restricts the class. */
    CHECK_OK(ramp_menu_greedy(t, mask, 3, 2, NULL, &m));
    CHECK_EQ_INT(m.blocks_per_sm, 2);
    CHECK_OK(ramp_menu_greedy(t, mask, 3, 1, NULL, &m));
    CHECK_EQ_INT(m.blocks_per_sm, 1);
    CHECK_ERR(ramp_menu_greedy(t, mask, 3, 3, NULL, &m), RAMP_ERR_NOT_FOUND);
    CHECK_ERR(ramp_menu_greedy(t, mask, 0, 0, NULL, &m), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_menu_greedy(t, mask, RAMP_MENU_MAX + 1, 0, NULL, &m), RAMP_ERR_INVALID_ARGUMENT);
    /* A configuration not timed on a workload load is no candidate. */
    int64_t first = 0;
    while (!mask[first]) first++;
    CHECK_OK(ramp_menu_greedy(t, mask, 1, 0, NULL, &m));
    int top = m.config[0];
    float saved = t->times_us[first * t->nconfigs + top];
    t->times_us[first * t->nconfigs + top] = NAN;
    CHECK_OK(ramp_menu_greedy(t, mask, 6, 0, NULL, &m));
    for (int j = 0; j < m.count; j++) CHECK(m.config[j] != top);
    t->times_us[first * t->nconfigs + top] = saved;
    /* Loads outside the workload mask do not matter. */
    ramp_menu before;
    CHECK_OK(ramp_menu_greedy(t, mask, 4, 0, NULL, &before));
    for (int64_t i = 0; i < t->nloads; i++)
        if (!mask[i])
            for (int c = 0; c < t->nconfigs; c++) t->times_us[i * t->nconfigs + c] = NAN;
    CHECK_OK(ramp_menu_greedy(t, mask, 4, 0, NULL, &m));
    CHECK(memcmp(m.config, before.config, sizeof m.config) == 0);
    free(mask);
    ramp_timing_free(t);

    /* With a cost model on noiseless truth, the predicted objective gives the
     * measured one's menu. */
    sp.noise = 0;
    t = syn_dataset(rng, &sp, theta);
    ramp_costmodel *cm = NULL;
    ramp_costmodel_fit_options rmse_fit = {RAMP_WAVE_RMSE, 1}; /* the truth's wave: capacity */
    CHECK_OK(ramp_costmodel_fit_opt(t, NULL, RAMP_COSTMODEL_EQ3, &rmse_fit, &cm));
    if (cm) {
        ramp_menu a, b;
        CHECK_OK(ramp_menu_greedy(t, NULL, 6, 0, NULL, &a));
        CHECK_OK(ramp_menu_greedy(t, NULL, 6, 0, cm, &b));
        CHECK_EQ_INT(a.blocks_per_sm, b.blocks_per_sm);
        for (int j = 0; j < 6; j++) CHECK_NEAR(a.total_us[j], b.total_us[j], 1e-5 * a.total_us[j]);
        ramp_costmodel_free(cm);
    }
    ramp_timing_free(t);
}

/* ---- tables ------------------------------------------------------------------- */

static int nearest18_ref(double v, const int *nonempty) {
    int best = -1;
    for (int j = 0; j < RAMP_VLLM_SIZES; j++) {
        if (nonempty && !nonempty[j]) continue;
        if (best < 0 || fabs(ramp_vllm_batch_sizes[j] - v) < fabs(ramp_vllm_batch_sizes[best] - v))
            best = j;
    }
    return best;
}

/* Reference batch-size table: per size, the config with least summed layer
 * time over the training batches bucketed there. */
static void batch_table_ref(const ramp_timing *t, const uint8_t *train, int *table) {
    double sum[RAMP_VLLM_SIZES][12];
    int have[RAMP_VLLM_SIZES] = {0};
    memset(sum, 0, sizeof sum);
    for (int64_t i = 0; i < t->nloads; i++) {
        if (!train[i] || t->gpu[i] != 0) continue; /* once per batch */
        int s = nearest18_ref(t->batch_tokens[i], NULL);
        have[s] = 1;
        for (int c = 0; c < t->nconfigs; c++) {
            double layer = 0;
            for (int64_t j = 0; j < t->nloads; j++)
                if (t->batch[j] == t->batch[i])
                    layer = fmax(layer, t->times_us[j * t->nconfigs + c]);
            sum[s][c] += layer;
        }
    }
    for (int s = 0; s < RAMP_VLLM_SIZES; s++) {
        table[s] = -1;
        if (!have[s]) continue;
        int best = 0;
        for (int c = 1; c < t->nconfigs; c++)
            if (sum[s][c] < sum[s][best]) best = c;
        table[s] = best;
    }
}

static void test_batch_tables(ramp_rng *rng) {
    syn_params sp;
    syn_defaults(&sp);
    sp.batches = 15;
    sp.noise = 0.02;
    sp.uniform_repeats = 2;
    double theta[48];
    ramp_timing *t = syn_dataset(rng, &sp, theta);
    if (!t) return;
    int uni = ramp_timing_domain_index(t, "uniform");
    uint8_t *all = calloc((size_t)t->nloads, 1), *uonly = calloc((size_t)t->nloads, 1);
    uint8_t *traffic = calloc((size_t)t->nloads, 1);
    for (int64_t i = 0; i < t->nloads; i++) {
        all[i] = 1;
        uonly[i] = t->domain[i] == uni;
        traffic[i] = t->domain[i] != uni;
    }
    int ref[RAMP_VLLM_SIZES], nonempty[RAMP_VLLM_SIZES];
    ramp_policy *p = NULL;
    /* VLLM: tuned on the uniform batches only (the mask offers all). */
    batch_table_ref(t, uonly, ref);
    CHECK_OK(ramp_policy_fit(RAMP_POLICY_VLLM, t, all, NULL, &p));
    if (p) {
        for (int s = 0; s < RAMP_VLLM_SIZES; s++) nonempty[s] = ref[s] >= 0;
        for (int64_t i = 0; i < t->nloads; i++) {
            int c = -1;
            CHECK_OK(ramp_policy_choose(p, t, i, &c));
            CHECK_EQ_INT(c, ref[nearest18_ref(t->batch_tokens[i], nonempty)]);
        }
        /* Raw loads: by the whole batch's tokens, not the GPU's. */
        int32_t tiny[16] = {1};
        int c1, c2;
        CHECK_OK(ramp_policy_choose_load(p, 16, tiny, 4096, &c1));
        CHECK_EQ_INT(c1, ref[RAMP_VLLM_SIZES - 1]);
        CHECK_OK(ramp_policy_choose_load(p, 16, tiny, 3, &c2)); /* 3: tie 2|4 -> 2 */
        CHECK_EQ_INT(c2, ref[1]);
        ramp_policy_free(p);
    }
    /* Fallback to the nearest non-empty entry: train on only a few sizes. */
    uint8_t *few = calloc((size_t)t->nloads, 1);
    for (int64_t i = 0; i < t->nloads; i++)
        few[i] = uonly[i] && (t->batch_tokens[i] == 16 || t->batch_tokens[i] == 512);
    batch_table_ref(t, few, ref);
    CHECK_OK(ramp_policy_fit(RAMP_POLICY_VLLM, t, few, NULL, &p));
    if (p) {
        int32_t z[16] = {0};
        int c;
        CHECK_OK(ramp_policy_choose_load(p, 16, z, 200, &c)); /* |200-16| < |200-512| */
        CHECK_EQ_INT(c, ref[4]);
        CHECK_OK(ramp_policy_choose_load(p, 16, z, 300, &c));
        CHECK_EQ_INT(c, ref[12]);
        CHECK_OK(ramp_policy_choose_load(p, 16, z, 264, &c)); /* tie: the smaller size */
        CHECK_EQ_INT(c, ref[4]);
        ramp_policy_free(p);
    }
    free(few);
    /* TRACE_TABLE on the traffic, sizes bucketed to the nearest of 18. */
    batch_table_ref(t, traffic, ref);
    for (int s = 0; s < RAMP_VLLM_SIZES; s++) nonempty[s] = ref[s] >= 0;
    CHECK_OK(ramp_policy_fit(RAMP_POLICY_TRACE_TABLE, t, traffic, NULL, &p));
    if (p) {
        for (int64_t i = 0; i < t->nloads; i++) {
            int c = -1;
            CHECK_OK(ramp_policy_choose(p, t, i, &c));
            CHECK_EQ_INT(c, ref[nearest18_ref(t->batch_tokens[i], nonempty)]);
        }
        ramp_policy_free(p);
    }
    /* No uniform loads in the mask: VLLM is not found. */
    CHECK_ERR(ramp_policy_fit(RAMP_POLICY_VLLM, t, traffic, NULL, &p), RAMP_ERR_NOT_FOUND);
    free(all);
    free(uonly);
    free(traffic);
    ramp_timing_free(t);
}

static int pow2_ref(double n) {
    if (n < 1) return 0;
    int b = 1;
    while (n >= 2) { n /= 2; b++; }
    return b;
}

static void test_per_gpu_table(ramp_rng *rng) {
    syn_params sp;
    syn_defaults(&sp);
    sp.batches = 25;
    sp.noise = 0.02;
    double theta[48];
    ramp_timing *t = syn_dataset(rng, &sp, theta);
    if (!t) return;
    uint8_t *train = calloc((size_t)t->nloads, 1);
    for (int64_t i = 0; i < t->nloads; i++) train[i] = (i % 2) == 0;
    double sum[40][12];
    int have[40] = {0}, table[40];
    memset(sum, 0, sizeof sum);
    for (int64_t i = 0; i < t->nloads; i++) {
        if (!train[i]) continue;
        double tok = 0;
        for (int e = 0; e < t->nexp[i]; e++) tok += t->loads[i * t->max_experts + e];
        int b = pow2_ref(tok);
        have[b] = 1;
        for (int c = 0; c < t->nconfigs; c++) sum[b][c] += t->times_us[i * t->nconfigs + c];
    }
    for (int b = 0; b < 40; b++) {
        table[b] = -1;
        if (!have[b]) continue;
        table[b] = 0;
        for (int c = 1; c < t->nconfigs; c++)
            if (sum[b][c] < sum[b][table[b]]) table[b] = c;
    }
    ramp_policy *p = NULL;
    CHECK_OK(ramp_policy_fit(RAMP_POLICY_PER_GPU_TABLE, t, train, NULL, &p));
    if (p) {
        for (int64_t i = 0; i < t->nloads; i++) {
            double tok = 0;
            for (int e = 0; e < t->nexp[i]; e++) tok += t->loads[i * t->max_experts + e];
            int b = pow2_ref(tok), want = -1;
            /* nearest non-empty bucket; ties to the lower */
            for (int d = 0; d < 40 && want < 0; d++) {
                if (b - d >= 0 && table[b - d] >= 0) want = table[b - d];
                else if (b + d < 40 && table[b + d] >= 0) want = table[b + d];
            }
            int c = -1;
            CHECK_OK(ramp_policy_choose(p, t, i, &c));
            CHECK_EQ_INT(c, want);
        }
        ramp_policy_free(p);
    }
    free(train);
    ramp_timing_free(t);
}

/* Loads where the best configuration depends on the skew at a fixed token
 * count: the balance-aware tables and k-NN tell them apart, the per-GPU
 * table cannot. Times are synthetic: config 0 wins on balanced loads,
 * config 1 on skewed ones, regardless of size. */
static void test_balance_tables(ramp_rng *rng) {
    ramp_config cfg[3];
    int bps[3];
    ramp_config a = {8, 256, 2, 0, 0, 1, 0, 0, 0, 0}, b = {32, 256, 2, 0, 0, 1, 0, 0, 0, 0}, c = {64, 256, 4, 0, 0, 1, 0, 0, 0, 0};
    cfg[0] = a; cfg[1] = b; cfg[2] = c;
    bps[0] = bps[1] = bps[2] = 1;
    ramp_geometry g = {16, 8, 768, 2048, 0};
    ramp_timing *t = NULL;
    CHECK_OK(ramp_timing_create("skew", "EP8", &g, 132, cfg, bps, 3, &t));
    if (!t) return;
    int dom = ramp_timing_domain_index(t, "chat");
    for (int i = 0; i < 400; i++) {
        int skew = i % 2, tokens = 64 << ramp_rng_below(rng, 5);
        int32_t load[16] = {0};
        if (skew) {
            for (int j = 0; j < tokens; j++) load[ramp_rng_below(rng, 2)]++;
        } else {
            for (int j = 0; j < tokens; j++) load[ramp_rng_below(rng, 16)]++;
        }
        int64_t idx;
        CHECK_OK(ramp_timing_add_load(t, i, 0, dom, tokens, 16, load, &idx));
        double base = 10 + tokens * 0.01;
        t->times_us[idx * 3 + 0] = (float)(base * (skew ? 1.3 : 1.0));
        t->times_us[idx * 3 + 1] = (float)(base * (skew ? 1.0 : 1.3));
        t->times_us[idx * 3 + 2] = (float)(base * 1.2);
    }
    uint8_t *train = calloc((size_t)t->nloads, 1);
    for (int64_t i = 0; i < t->nloads; i++) train[i] = i < 300;
    ramp_policy_kind kinds[] = {RAMP_POLICY_TABLE_PADDING, RAMP_POLICY_TABLE_ACTIVE,
                                RAMP_POLICY_TABLE_MAXMEAN, RAMP_POLICY_TABLE_CV,
                                RAMP_POLICY_TABLE_3D, RAMP_POLICY_KNN, RAMP_POLICY_PER_GPU_TABLE};
    for (int k = 0; k < 7; k++) {
        ramp_policy *p = NULL;
        CHECK_OK(ramp_policy_fit(kinds[k], t, train, NULL, &p));
        if (!p) continue;
        int right = 0;
        for (int64_t i = 300; i < t->nloads; i++) {
            int ch = -1;
            CHECK_OK(ramp_policy_choose(p, t, i, &ch));
            right += ch == (int)(i % 2 ? 1 : 0);
        }
        if (kinds[k] == RAMP_POLICY_PER_GPU_TABLE) CHECK(right <= 70); /* blind to skew */
        else if (right < 98) {
            fprintf(stderr, "%s: %d of 100 right\n", ramp_policy_name(kinds[k]), right);
            CHECK(right >= 98);
        }
        ramp_policy_free(p);
    }
    /* k-NN with k = 1 on a training load returns that load's best. */
    ramp_policy_options o;
    ramp_policy_defaults(&o);
    o.knn_k = 1;
    ramp_policy *p = NULL;
    CHECK_OK(ramp_policy_fit(RAMP_POLICY_KNN, t, NULL, &o, &p));
    if (p) {
        for (int64_t i = 0; i < t->nloads; i += 13) {
            int ch;
            CHECK_OK(ramp_policy_choose(p, t, i, &ch));
            CHECK_EQ_INT(ch, i % 2);
        }
        ramp_policy_free(p);
    }
    free(train);
    ramp_timing_free(t);
}

/* ---- oracle, cost model, masks ---------------------------------------------------- */

static void test_oracle_and_models(ramp_rng *rng) {
    syn_params sp;
    syn_defaults(&sp);
    sp.batches = 12;
    double theta[48];
    ramp_timing *t = syn_dataset(rng, &sp, theta);
    if (!t) return;
    int uni = ramp_timing_domain_index(t, "uniform");
    uint8_t *train = calloc((size_t)t->nloads, 1), *test = calloc((size_t)t->nloads, 1);
    for (int64_t i = 0; i < t->nloads; i++) {
        train[i] = t->domain[i] != 1; /* hold out "math" */
        test[i] = t->domain[i] == 1;
    }
    ramp_menu menu;
    uint8_t *traffic = calloc((size_t)t->nloads, 1);
    for (int64_t i = 0; i < t->nloads; i++) traffic[i] = train[i] && t->domain[i] != uni;
    CHECK_OK(ramp_menu_greedy(t, traffic, 6, 0, NULL, &menu));
    ramp_policy_options o;
    ramp_policy_defaults(&o);
    o.menu = menu.config;
    o.menu_count = menu.count;
    o.fit.wave = RAMP_WAVE_RMSE; /* the synthetic truth's wave is the capacity */
    o.fit.intercept_free = 1;

    ramp_policy *pol[RAMP_POLICY_COUNT] = {0};
    for (int k = 0; k < RAMP_POLICY_COUNT; k++)
        CHECK_OK(ramp_policy_fit((ramp_policy_kind)k, t, k == RAMP_POLICY_VLLM ? train : traffic,
                                 &o, &pol[k]));
    int nc = t->nconfigs;
    int *choice = calloc((size_t)t->nloads * RAMP_POLICY_COUNT, sizeof *choice);
    for (int64_t i = 0; i < t->nloads; i++) {
        const float *tm = t->times_us + i * nc;
        int best = 0, mbest = menu.config[0];
        for (int c = 1; c < nc; c++)
            if (tm[c] < tm[best]) best = c;
        for (int j = 1; j < menu.count; j++)
            if (tm[menu.config[j]] < tm[mbest]) mbest = menu.config[j];
        for (int k = 0; k < RAMP_POLICY_COUNT; k++) {
            int c = -1;
            if (!pol[k]) continue;
            CHECK_OK(ramp_policy_choose(pol[k], t, i, &c));
            choice[i * RAMP_POLICY_COUNT + k] = c;
            CHECK(c >= 0 && c < nc);
            /* nobody beats the oracle, on any load */
            CHECK(tm[c] >= tm[best]);
            if (ramp_policy_needs_menu((ramp_policy_kind)k)) {
                int in = 0;
                for (int j = 0; j < menu.count; j++) in |= menu.config[j] == c;
                CHECK(in);
                CHECK(tm[c] >= tm[mbest]);
            }
        }
        CHECK_EQ_INT(choice[i * RAMP_POLICY_COUNT + RAMP_POLICY_EXHAUSTIVE], best);
        CHECK_EQ_INT(choice[i * RAMP_POLICY_COUNT + RAMP_POLICY_MENU_BEST], mbest);
        /* Noiseless linear truth: RaMP's pick is the oracle's (up to times
         * equal within float rounding). */
        int r = choice[i * RAMP_POLICY_COUNT + RAMP_POLICY_COSTMODEL];
        if (r != best) CHECK_NEAR(tm[r], tm[best], 1e-5 * tm[best]);
        int mr = choice[i * RAMP_POLICY_COUNT + RAMP_POLICY_MENU_COSTMODEL];
        if (mr != mbest) CHECK_NEAR(tm[mr], tm[mbest], 1e-5 * tm[mbest]);
    }
    /* The batch policies give every GPU of a batch the same config. */
    for (int64_t i = 1; i < t->nloads; i++)
        if (t->batch[i] == t->batch[i - 1]) {
            CHECK_EQ_INT(choice[i * RAMP_POLICY_COUNT + RAMP_POLICY_VLLM],
                         choice[(i - 1) * RAMP_POLICY_COUNT + RAMP_POLICY_VLLM]);
            CHECK_EQ_INT(choice[i * RAMP_POLICY_COUNT + RAMP_POLICY_TRACE_TABLE],
                         choice[(i - 1) * RAMP_POLICY_COUNT + RAMP_POLICY_TRACE_TABLE]);
        }

    /* Fits never read times outside their mask: scramble the held-out times
     * (and poison them with NaN), refit, and every learning policy picks the
     * same on every load. */
    for (int64_t i = 0; i < t->nloads; i++)
        if (test[i])
            for (int c = 0; c < nc; c++)
                t->times_us[i * nc + c] = ramp_rng_below(rng, 3) == 0
                                              ? NAN : (float)(1 + 1000 * ramp_rng_uniform(rng));
    for (int k = 0; k < RAMP_POLICY_COUNT; k++) {
        if (ramp_policy_is_oracle((ramp_policy_kind)k) || !pol[k]) continue;
        ramp_policy *q = NULL;
        CHECK_OK(ramp_policy_fit((ramp_policy_kind)k, t, k == RAMP_POLICY_VLLM ? train : traffic,
                                 &o, &q));
        if (!q) continue;
        int same = 1;
        for (int64_t i = 0; i < t->nloads; i++) {
            int c = -1;
            CHECK_OK(ramp_policy_choose(q, t, i, &c));
            same &= c == choice[i * RAMP_POLICY_COUNT + k];
        }
        if (!same) fprintf(stderr, "policy %s changed with held-out times\n",
                           ramp_policy_name((ramp_policy_kind)k));
        CHECK(same);
        ramp_policy_free(q);
    }
    for (int k = 0; k < RAMP_POLICY_COUNT; k++) ramp_policy_free(pol[k]);

    /* Names, parsing, errors. */
    for (int k = 0; k < RAMP_POLICY_COUNT; k++) {
        ramp_policy_kind back;
        CHECK_OK(ramp_policy_parse(ramp_policy_name((ramp_policy_kind)k), &back));
        CHECK_EQ_INT(back, k);
        CHECK(strcmp(ramp_policy_label((ramp_policy_kind)k), "?") != 0);
    }
    ramp_policy_kind kk;
    CHECK_OK(ramp_policy_parse("COSTMODEL", &kk));
    CHECK_EQ_INT(kk, RAMP_POLICY_COSTMODEL);
    CHECK_ERR(ramp_policy_parse("fastest", &kk), RAMP_ERR_NOT_FOUND);
    CHECK(strcmp(ramp_policy_name(RAMP_POLICY_COUNT), "?") == 0);
    ramp_policy *p = NULL;
    CHECK_ERR(ramp_policy_fit(RAMP_POLICY_MENU_TABLE, t, traffic, NULL, &p), RAMP_ERR_INVALID_ARGUMENT);
    int badmenu[2] = {0, 99};
    o.menu = badmenu;
    o.menu_count = 2;
    CHECK_ERR(ramp_policy_fit(RAMP_POLICY_MENU_COSTMODEL, t, traffic, &o, &p), RAMP_ERR_INVALID_ARGUMENT);
    o.menu = menu.config;
    o.menu_count = menu.count;
    o.knn_k = 0;
    CHECK_ERR(ramp_policy_fit(RAMP_POLICY_KNN, t, traffic, &o, &p), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_OK(ramp_policy_fit(RAMP_POLICY_EXHAUSTIVE, t, NULL, NULL, &p));
    if (p) {
        int32_t z[16] = {0};
        int c;
        CHECK_ERR(ramp_policy_choose_load(p, 16, z, 1, &c), RAMP_ERR_UNSUPPORTED);
        CHECK_ERR(ramp_policy_choose(p, t, t->nloads, &c), RAMP_ERR_INVALID_ARGUMENT);
        ramp_policy_free(p);
    }
    uint8_t *none = calloc((size_t)t->nloads, 1);
    CHECK_ERR(ramp_policy_fit(RAMP_POLICY_PER_GPU_TABLE, t, none, NULL, &p), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_policy_fit(RAMP_POLICY_COSTMODEL, t, none, NULL, &p), RAMP_ERR_INVALID_ARGUMENT);
    free(none);
    free(choice);
    free(train);
    free(test);
    free(traffic);
    ramp_timing_free(t);
}

int main(void) {
    ramp_rng rng;
    ramp_rng_seed(&rng, check_seed());
    test_menu(&rng);
    test_batch_tables(&rng);
    test_per_gpu_table(&rng);
    test_balance_tables(&rng);
    test_oracle_and_models(&rng);
    return check_finish("test_policy");
}
