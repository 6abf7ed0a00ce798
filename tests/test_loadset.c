/*
 * test_loadset.c - the pieces between traces and timing datasets: vLLM's
 * uniform tuning batches, per-layer balanced placements, the median
 * imbalance, and turning trace records into per-GPU loads. Each is checked
 * against a direct recomputation here.
 */
#include "check.h"
#include "internal.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_uniform_batches(uint64_t seed) {
    ramp_model m;
    CHECK_OK(ramp_model_lookup("qwen3-30b", &m));
    const int sizes[] = {1, 7, 64, 4096};
    ramp_trace *a = NULL, *b = NULL, *c = NULL;
    CHECK_OK(ramp_trace_uniform_batches(&m, sizes, 4, 3, seed, &a));
    CHECK_OK(ramp_trace_uniform_batches(&m, sizes, 4, 3, seed, &b));
    CHECK_OK(ramp_trace_uniform_batches(&m, sizes, 4, 3, seed + 1, &c));
    if (!a || !b || !c) goto out;
    CHECK_EQ_INT(a->records, 12);
    CHECK(strcmp(a->domain, "uniform") == 0);
    for (int64_t r = 0; r < a->records; r++) {
        CHECK_EQ_INT(a->tokens[r], sizes[r % 4]);
        CHECK_EQ_INT(a->layer[r], r / 4);
        long sum = 0;
        for (int e = 0; e < m.experts; e++) {
            int32_t n = a->counts[r * m.experts + e];
            sum += n;
            CHECK(n >= 0 && n <= a->tokens[r]); /* k distinct experts per token */
        }
        CHECK_EQ_INT(sum, (long)a->tokens[r] * m.topk);
    }
    /* Seeded: the same seed gives the same counts, another seed others. */
    CHECK(memcmp(a->counts, b->counts, sizeof(int32_t) * (size_t)(a->records * m.experts)) == 0);
    CHECK(memcmp(a->counts, c->counts, sizeof(int32_t) * (size_t)(a->records * m.experts)) != 0);
    /* Uniform: over the 4096-token batches every expert gets 3 * 4096 * 8 /
     * 128 = 768 on average; a binomial's sd is ~27, so all within +-25%. */
    for (int e = 0; e < m.experts; e++) {
        long n = 0;
        for (int64_t r = 3; r < a->records; r += 4) n += a->counts[r * m.experts + e];
        CHECK(n > 576 && n < 960);
    }
    int bad[] = {0};
    CHECK_ERR(ramp_trace_uniform_batches(&m, bad, 1, 1, seed, &b), RAMP_ERR_INVALID_ARGUMENT);
out:
    ramp_trace_free(a);
    ramp_trace_free(b);
    ramp_trace_free(c);
}

/* A trace whose two layers have different hot experts. */
static ramp_trace *two_layer_trace(ramp_rng *rng, int E, int k, int records) {
    ramp_trace *t = NULL;
    if (ramp_trace_create("custom", "test", "test_loadset", E, k, &t) != RAMP_OK) return NULL;
    int32_t *counts = calloc((size_t)E, sizeof *counts);
    for (int r = 0; r < records; r++) {
        int layer = r % 2, tokens = 1 + (int)ramp_rng_below(rng, 400);
        memset(counts, 0, (size_t)E * sizeof *counts);
        for (int tok = 0; tok < tokens; tok++) {
            int used[64] = {0};
            for (int j = 0; j < k; j++) {
                int e;
                do {
                    /* layer 0 favours low ids, layer 1 high ids */
                    double u = ramp_rng_uniform(rng);
                    e = (int)(u * u * u * E);
                    if (layer) e = E - 1 - e;
                } while (used[e]);
                used[e] = 1;
                counts[e]++;
            }
        }
        if (ramp_trace_append(t, r / 2, layer, tokens, counts, NULL) != RAMP_OK) {
            ramp_trace_free(t);
            t = NULL;
            break;
        }
    }
    free(counts);
    return t;
}

static void test_balanced_and_median(ramp_rng *rng) {
    const int E = 32, k = 4, G = 8;
    ramp_layout L = {RAMP_EP, G};
    ramp_trace *t = two_layer_trace(rng, E, k, 200);
    CHECK(t != NULL);
    if (!t) return;
    ramp_placement **bal = NULL, *contig = NULL;
    CHECK_OK(ramp_placements_balanced_on(t, L, 2, &bal));
    CHECK_OK(ramp_placement_contiguous(E, L, &contig));
    if (!bal || !contig) goto out;
    /* Each layer's placement balances that layer's expected load: it equals
     * ramp_placement_balanced on the layer's summed counts. */
    for (int l = 0; l < 2; l++) {
        double expected[32] = {0};
        for (int64_t r = 0; r < t->records; r++)
            if (t->layer[r] == l)
                for (int e = 0; e < E; e++) expected[e] += t->counts[r * E + e];
        ramp_placement *ref = NULL;
        CHECK_OK(ramp_placement_balanced(E, L, expected, &ref));
        if (ref) CHECK(memcmp(ref->members, bal[l]->members, sizeof(int) * E) == 0);
        ramp_placement_free(ref);
    }
    CHECK(memcmp(bal[0]->members, bal[1]->members, sizeof(int) * E) != 0);
    /* The median by hand, per layer's own placement, over 100..300 tokens. */
    double v[200], med = 0, med_c = 0;
    int n = 0;
    for (int64_t r = 0; r < t->records; r++)
        if (t->tokens[r] >= 100 && t->tokens[r] <= 300)
            v[n++] = ramp_imbalance(bal[t->layer[r]], t->counts + r * E);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double want = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    int64_t got_n = 0;
    CHECK_OK(ramp_imbalance_median(t, bal, 2, 100, 300, &med, &got_n));
    CHECK_EQ_INT(got_n, n);
    CHECK_NEAR(med, want, 1e-12);
    /* On the data it was balanced on, balanced beats contiguous blocks,
     * since both layers put their hot experts in one block. */
    CHECK_OK(ramp_imbalance_median(t, &contig, 1, 0, 0, &med_c, NULL));
    CHECK_OK(ramp_imbalance_median(t, bal, 2, 0, 0, &med, NULL));
    CHECK(med < med_c);
    /* All 200 records: an even count, so the median is a mean of two. */
    for (int64_t r = 0; r < t->records; r++) v[r] = ramp_imbalance(bal[t->layer[r]], t->counts + r * E);
    qsort(v, (size_t)t->records, sizeof *v, cmp_double);
    CHECK_NEAR(med, 0.5 * (v[99] + v[100]), 1e-12);
out:
    if (bal) {
        ramp_placement_free(bal[0]);
        ramp_placement_free(bal[1]);
        free(bal);
    }
    ramp_placement_free(contig);
    ramp_trace_free(t);
}

static void test_add_trace(ramp_rng *rng) {
    const int E = 32, k = 4;
    ramp_trace *t = two_layer_trace(rng, E, k, 60);
    ramp_model m;
    ramp_geometry g;
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    CHECK_OK(ramp_model_custom("custom", E, k, 512, 1024, 2, &m));
    CHECK_OK(ramp_geometry_for(&m, (ramp_layout){RAMP_EP, 4}, &g));
    ramp_timing *d = NULL;
    ramp_placement *p = NULL, **bal = NULL;
    CHECK_OK(ramp_timing_create_space(&m, "EP4", &g, &lim, &d));
    CHECK_OK(ramp_placement_contiguous(E, (ramp_layout){RAMP_EP, 4}, &p));
    CHECK_OK(ramp_placements_balanced_on(t, (ramp_layout){RAMP_EP, 4}, 2, &bal));
    if (!t || !d || !p || !bal) goto out;
    /* Every configuration of the space, each with its occupancy class. */
    for (int c = 0; c < d->nconfigs; c++) {
        ramp_resources r;
        CHECK_OK(ramp_config_resources(&d->configs[c], &g, &lim, &r));
        CHECK(r.valid && r.blocks_per_sm == d->blocks_per_sm[c]);
    }
    /* Every 3rd record with >= 50 tokens, at most 7: contiguous; then all
     * records with per-layer placements. */
    CHECK_OK(ramp_timing_add_trace(d, t, &p, 1, 3, 50, 7));
    int64_t first = d->nloads;
    CHECK_OK(ramp_timing_add_trace(d, t, bal, 2, 1, 0, 0));
    int64_t want = 0;
    for (int64_t r = 0; r < t->records && want < 7; r += 3) want += t->tokens[r] >= 50;
    CHECK_EQ_INT(first, want * 4);
    CHECK_EQ_INT(d->nloads - first, t->records * 4);
    int32_t loads[4 * 8];
    int64_t i = 0, taken = 0;
    for (int64_t r = 0; r < t->records && taken < 7; r += 3) {
        if (t->tokens[r] < 50) continue;
        CHECK_OK(ramp_gpu_loads(p, t->counts + r * E, loads));
        for (int gi = 0; gi < 4; gi++, i++) {
            CHECK_EQ_INT(d->batch[i], taken);
            CHECK_EQ_INT(d->gpu[i], gi);
            CHECK_EQ_INT(d->batch_tokens[i], t->tokens[r]);
            CHECK_EQ_INT(d->nexp[i], 8);
            CHECK(memcmp(d->loads + i * d->max_experts, loads + gi * 8, 8 * sizeof(int32_t)) == 0);
            for (int c = 0; c < d->nconfigs; c++) CHECK(isnan(d->times_us[i * d->nconfigs + c]));
        }
        taken++;
    }
    for (int64_t r = 0; r < t->records; r++) {
        CHECK_OK(ramp_gpu_loads(bal[t->layer[r]], t->counts + r * E, loads));
        for (int gi = 0; gi < 4; gi++, i++) {
            CHECK_EQ_INT(d->batch[i], taken + r); /* ids continue after the first call's */
            CHECK(memcmp(d->loads + i * d->max_experts, loads + gi * 8, 8 * sizeof(int32_t)) == 0);
        }
    }
    CHECK_ERR(ramp_timing_add_trace(d, t, &p, 1, 0, 0, 0), RAMP_ERR_INVALID_ARGUMENT);
out:
    if (bal) {
        ramp_placement_free(bal[0]);
        ramp_placement_free(bal[1]);
        free(bal);
    }
    ramp_placement_free(p);
    ramp_timing_free(d);
    ramp_trace_free(t);
}

int main(void) {
    uint64_t seed = check_seed();
    ramp_rng rng;
    ramp_rng_seed(&rng, seed);
    test_uniform_batches(seed);
    test_balanced_and_median(&rng);
    test_add_trace(&rng);
    return check_finish("test_loadset");
}
