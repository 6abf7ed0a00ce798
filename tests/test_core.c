/*
 * test_core.c - models, layouts, placements, per-GPU loads and the
 * configuration space, each checked against values computed here by hand or
 * by an independent brute force; and the GPU tests' model selection
 * (check.h's check_listed, check_list_unknown), which no CPU test runs
 * otherwise.
 */
#include "check.h"
#include "internal.h"

static void test_models(void) {
    CHECK(ramp_model_count() >= 8);
    ramp_model m;
    CHECK_OK(ramp_model_lookup("qwen3-30b", &m));
    CHECK_EQ_INT(m.experts, 128);
    CHECK_EQ_INT(m.topk, 8);
    CHECK_EQ_INT(m.inter, 768);
    CHECK_EQ_INT(m.hidden, 2048);
    CHECK_OK(ramp_model_lookup("DEEPSEEK-V3", &m));
    CHECK_EQ_INT(m.experts, 256);
    CHECK_EQ_INT(m.hidden, 7168);
    CHECK_OK(ramp_model_lookup("Mixtral-8x22B", &m));
    CHECK_EQ_INT(m.inter, 16384);
    CHECK_ERR(ramp_model_lookup("qwen3-30", &m), RAMP_ERR_NOT_FOUND);
    CHECK(strstr(ramp_last_error(), "qwen3-30") != NULL);
    CHECK_ERR(ramp_model_lookup("", &m), RAMP_ERR_NOT_FOUND);
    for (int i = 0; i < ramp_model_count(); i++) {
        ramp_model back;
        CHECK_OK(ramp_model_lookup(ramp_model_at(i)->name, &back));
        CHECK(memcmp(&back, ramp_model_at(i), sizeof back) == 0);
    }
    CHECK_OK(ramp_model_custom("mine", 32, 4, 1024, 4096, 10, &m));
    CHECK_ERR(ramp_model_custom("bad", 8, 9, 1024, 4096, 10, &m), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "topk") != NULL);
    CHECK_ERR(ramp_model_custom("bad", 0, 1, 1024, 4096, 10, &m), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_model_custom("bad", 8, 2, 0, 4096, 10, &m), RAMP_ERR_INVALID_ARGUMENT);
}

static void test_layouts(void) {
    ramp_layout l;
    char buf[16];
    const char *good[] = {"TP1", "tp8", "EP2", "ep64", "EP8"};
    for (int i = 0; i < 5; i++) {
        CHECK_OK(ramp_layout_parse(good[i], &l));
        ramp_layout back;
        CHECK_OK(ramp_layout_parse(ramp_layout_name(l, buf, sizeof buf), &back));
        CHECK(back.kind == l.kind && back.gpus == l.gpus);
    }
    CHECK_OK(ramp_layout_parse("EP16", &l));
    CHECK(l.kind == RAMP_EP && l.gpus == 16);
    const char *bad[] = {"EP1", "EP65", "TP9", "TP0", "XP8", "EP", "EP8x", "", "EP-4"};
    for (int i = 0; i < 9; i++) CHECK_ERR(ramp_layout_parse(bad[i], &l), RAMP_ERR_INVALID_ARGUMENT);
}

static void test_placements(ramp_rng *rng) {
    /* Qwen1.5-MoE: 60 experts on EP8 -> 8,8,8,8,7,7,7,7 as vLLM splits. */
    ramp_layout ep8 = {RAMP_EP, 8};
    ramp_placement *p = NULL;
    CHECK_OK(ramp_placement_contiguous(60, ep8, &p));
    if (p) {
        int expect[8] = {8, 8, 8, 8, 7, 7, 7, 7}, next = 0;
        for (int g = 0; g < 8; g++) {
            CHECK_EQ_INT(ramp_placement_local_count(p, g), expect[g]);
            for (int j = 0; j < expect[g]; j++, next++) {
                CHECK_EQ_INT(p->gpu_of[next], g);
                CHECK_EQ_INT(p->local_of[next], j);
            }
        }
        CHECK_EQ_INT(p->max_local, 8);
        /* Loads: each GPU's vector is its experts' counts in order. */
        int32_t counts[60], loads[64];
        for (int e = 0; e < 60; e++) counts[e] = (int32_t)ramp_rng_below(rng, 50);
        CHECK_OK(ramp_gpu_loads(p, counts, loads));
        for (int e = 0; e < 60; e++)
            CHECK_EQ_INT(loads[p->gpu_of[e] * 8 + p->local_of[e]], counts[e]);
        for (int g = 4; g < 8; g++) CHECK_EQ_INT(loads[g * 8 + 7], 0);
        /* Imbalance by hand. */
        double most = 0, total = 0;
        for (int g = 0; g < 8; g++) {
            double s = 0;
            for (int j = 0; j < 8; j++) s += loads[g * 8 + j];
            total += s;
            if (s > most) most = s;
        }
        CHECK_NEAR(ramp_imbalance(p, counts), total > 0 ? most / (total / 8) : 1.0, 1e-12);
    }
    ramp_placement_free(p);

    /* TP: one distinct GPU holding every expert. */
    CHECK_OK(ramp_placement_contiguous(128, (ramp_layout){RAMP_TP, 4}, &p));
    if (p) {
        CHECK_EQ_INT(p->gpus, 1);
        CHECK_EQ_INT(p->max_local, 128);
    }
    ramp_placement_free(p);
    CHECK_ERR(ramp_placement_contiguous(8, (ramp_layout){RAMP_EP, 16}, &p), RAMP_ERR_UNSUPPORTED);

    /* Balanced: a permutation with the same per-GPU counts, whose most loaded
     * GPU (on the expected load) is no worse than contiguous, and within the
     * LPT bound (4/3 of optimal >= mean) of the mean. */
    for (int trial = 0; trial < 50; trial++) {
        int E = 16 + (int)ramp_rng_below(rng, 240), G = 2 << ramp_rng_below(rng, 4);
        if (G > E) G = E;
        double *w = calloc((size_t)E, sizeof *w);
        int32_t *counts = calloc((size_t)E, sizeof *counts);
        for (int e = 0; e < E; e++) {
            double u = ramp_rng_uniform(rng);
            counts[e] = (int32_t)(u * u * u * 1000);
            w[e] = counts[e]; /* balanced on exactly the load it is scored on */
        }
        ramp_placement *c = NULL, *b = NULL;
        CHECK_OK(ramp_placement_contiguous(E, (ramp_layout){RAMP_EP, G}, &c));
        CHECK_OK(ramp_placement_balanced(E, (ramp_layout){RAMP_EP, G}, w, &b));
        if (b && c) {
            int *seen = calloc((size_t)E, sizeof *seen);
            for (int e = 0; e < E; e++) seen[b->members[e]]++;
            for (int e = 0; e < E; e++) CHECK_EQ_INT(seen[e], 1);
            for (int g = 0; g < G; g++)
                CHECK_EQ_INT(ramp_placement_local_count(b, g), ramp_placement_local_count(c, g));
            CHECK(ramp_imbalance(b, counts) <= ramp_imbalance(c, counts) + 1e-9);
            free(seen);
        }
        ramp_placement_free(c);
        ramp_placement_free(b);
        free(w);
        free(counts);
    }
    double badw[4] = {1, -1, 2, 3};
    CHECK_ERR(ramp_placement_balanced(4, (ramp_layout){RAMP_EP, 2}, badw, &p), RAMP_ERR_INVALID_ARGUMENT);
}

static void test_geometry(void) {
    ramp_model m;
    ramp_geometry g;
    CHECK_OK(ramp_model_lookup("qwen3-30b", &m));
    CHECK_OK(ramp_geometry_for(&m, (ramp_layout){RAMP_EP, 8}, &g));
    CHECK_EQ_INT(g.experts, 16);
    CHECK_EQ_INT(g.inter, 768);
    CHECK_OK(ramp_geometry_for(&m, (ramp_layout){RAMP_TP, 2}, &g));
    CHECK_EQ_INT(g.experts, 128);
    CHECK_EQ_INT(g.inter, 384);
    /* 768 / 8 = 96 is not a multiple of 128. */
    CHECK_ERR(ramp_geometry_for(&m, (ramp_layout){RAMP_TP, 8}, &g), RAMP_ERR_UNSUPPORTED);
    CHECK_OK(ramp_model_lookup("qwen1.5-moe", &m));
    CHECK_OK(ramp_geometry_for(&m, (ramp_layout){RAMP_EP, 8}, &g));
    CHECK_EQ_INT(g.experts, 8); /* max over GPUs of 8,8,8,8,7,7,7,7 */
}

static void test_configs(void) {
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    ramp_config c;
    char buf[64];
    CHECK_OK(ramp_config_parse("r16.w256.s4.persist", &c));
    CHECK(c.rows == 16 && c.width == 256 && c.stages == 4 && c.persistent && !c.grouped && c.splitk == 1);
    CHECK_OK(ramp_config_parse("r2.w128.s2.persist.grp.k2", &c));
    CHECK(c.grouped && c.splitk == 2);
    CHECK(strcmp(ramp_config_name(&c, buf, sizeof buf), "r2.w128.s2.persist.grp.k2") == 0);
    /* kernel v2's wide tiles: fused, and two-phase with 1, 2 or 4 K parts */
    CHECK_OK(ramp_config_parse("r128.w512.s3", &c));
    CHECK(c.rows == 128 && c.width == 512 && c.stages == 3 && c.two_phase == 0);
    CHECK_OK(ramp_config_parse("r128.w256.s3.ph2", &c));
    CHECK(c.rows == 128 && c.two_phase == 1 && c.splitk == 1 && !c.persistent);
    CHECK(strcmp(ramp_config_name(&c, buf, sizeof buf), "r128.w256.s3.ph2") == 0);
    CHECK_OK(ramp_config_parse("r128.w128.s4.ph2.dk4", &c));
    CHECK(c.two_phase == 4);
    CHECK(strcmp(ramp_config_name(&c, buf, sizeof buf), "r128.w128.s4.ph2.dk4") == 0);
    CHECK_OK(ramp_config_parse("r16.w128.s4.ph2.dk8", &c)); /* a narrow two-phase tile */
    CHECK(c.rows == 16 && c.two_phase == 8);
    CHECK(strcmp(ramp_config_name(&c, buf, sizeof buf), "r16.w128.s4.ph2.dk8") == 0);
    /* the wide tiles' weights by TMA multicast (session 15): last in the name */
    CHECK_OK(ramp_config_parse("r128.w256.s3.ph2.dk2.mc", &c));
    CHECK(c.rows == 128 && c.two_phase == 2 && c.mcast == 1);
    CHECK(strcmp(ramp_config_name(&c, buf, sizeof buf), "r128.w256.s3.ph2.dk2.mc") == 0);
    CHECK_OK(ramp_config_parse("r128.w512.s3.mc", &c));
    CHECK(c.mcast == 1 && c.two_phase == 0);
    {
        ramp_config plain;
        CHECK_OK(ramp_config_parse("r128.w512.s3", &plain));
        CHECK(plain.mcast == 0 && !ramp_config_equal(&plain, &c));
    }
    CHECK_ERR(ramp_config_parse("r64.w128.s4.mc", &c), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), ".mc") && strstr(ramp_last_error(), "wide tile"));
    /* token rows by TMA (".tx", after ".mc"): wide tiles, no split-K */
    CHECK_OK(ramp_config_parse("r128.w256.s3.ph2.dk2.mc.tx", &c));
    CHECK(c.tma_x == 1 && c.mcast == 1 && c.two_phase == 2);
    {
        char nm[64];
        CHECK(strcmp(ramp_config_name(&c, nm, sizeof nm), "r128.w256.s3.ph2.dk2.mc.tx") == 0);
        ramp_config plain;
        CHECK_OK(ramp_config_parse("r128.w256.s3.ph2.dk2.mc", &plain));
        CHECK(plain.tma_x == 0 && !ramp_config_equal(&plain, &c));
    }
    CHECK_ERR(ramp_config_parse("r64.w128.s4.tx", &c), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), ".tx") && strstr(ramp_last_error(), "wide tile"));
    CHECK_ERR(ramp_config_parse("r128.w128.s4.tx.mc", &c), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_OK(ramp_config_parse("r128.w128.s4.ph2.dk4", &c));
    CHECK_OK(ramp_config_parse("r8.w128.s6", &c)); /* deeper rings: named, not in the spaces */
    CHECK(c.stages == 6);
    {
        ramp_config one, two;
        CHECK_OK(ramp_config_parse("r128.w128.s4.ph2", &one));
        CHECK_OK(ramp_config_parse("r128.w128.s4.ph2.dk2", &two));
        CHECK(!ramp_config_equal(&one, &two) && !ramp_config_equal(&one, &c));
    }
    const char *bad[] = {"r16", "r16.w256", "r3.w256.s4", "r16.w200.s4", "r16.w256.s7", "r16.w256.s1",
                         "r16.w256.s4.grp", "r16.w256.s4.k3", "r16.w256.s4.foo",
                         "x16.w256.s4", "r16.w256.s4.persist.k", "",
                         "r96.w256.s3", "r48.w256.s3.ph2", "r128.w256.s3.ph2.dk7",
                         "r16.w128.s4.ph2.dk16",
                         "r128.w256.s3.ph2.dk1", "r128.w256.s3.dk2", "r128.w256.s3.ph2.dk",
                         "r128.w256.s3.ph3", "r128.w256.s3.ph2.k2",
                         "r128.w256.s3.mc.ph2", "r128.w256.s3.k2.mc", "r128.w256.s3.mc2",
                         "r128.w256.s3.mcast", "r32.w128.s4.ph2.mc"};
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++)
        CHECK_ERR(ramp_config_parse(bad[i], &c), RAMP_ERR_INVALID_ARGUMENT);

    /* Every model/layout the paper evaluates has a space near its 98-337,
     * every name round-trips, no duplicates, every entry is valid. */
    const char *pairs[][2] = {{"olmoe", "EP8"}, {"qwen3-30b", "EP8"}, {"qwen3-30b", "EP32"},
                              {"qwen3.5-35b", "EP8"}, {"deepseek-v3", "EP8"},
                              {"phi-3.5-moe", "EP8"}, {"mixtral-8x22b", "EP8"},
                              {"qwen2-57b", "EP16"}, {"qwen3-30b", "TP2"}};
    for (int i = 0; i < (int)(sizeof pairs / sizeof pairs[0]); i++) {
        ramp_model m;
        ramp_layout l;
        ramp_geometry g;
        CHECK_OK(ramp_model_lookup(pairs[i][0], &m));
        CHECK_OK(ramp_layout_parse(pairs[i][1], &l));
        CHECK_OK(ramp_geometry_for(&m, l, &g));
        ramp_config *space = NULL;
        int n = 0;
        CHECK_OK(ramp_config_space(&g, &lim, &space, &n));
        /* paper: 98-337; our kernel's real layout admits w = 512 at every depth */
        CHECK(n >= 90 && n <= 400);
        for (int j = 0; j < n; j++) {
            ramp_config back;
            CHECK_OK(ramp_config_parse(ramp_config_name(&space[j], buf, sizeof buf), &back));
            CHECK(ramp_config_equal(&back, &space[j]));
            for (int k = 0; k < j; k++) CHECK(!ramp_config_equal(&space[k], &space[j]));
            ramp_resources r;
            CHECK_OK(ramp_config_resources(&space[j], &g, &lim, &r));
            CHECK(r.valid && r.blocks_per_sm >= 1 && r.smem_bytes <= lim.smem_per_block);
            CHECK(g.inter % space[j].width == 0);
            /* Occupancy really fits: blocks x smem within the SM. */
            CHECK((long)r.blocks_per_sm * (r.smem_bytes + 1024) <= lim.smem_per_sm);
            CHECK(r.blocks_per_sm * r.threads <= lim.max_threads_per_sm);
        }
        free(space);
    }
    /* More stages never use less shared memory. */
    ramp_geometry g = {16, 8, 1024, 2048, 0};
    ramp_resources r2, r4;
    ramp_config a = {16, 256, 2, 0, 0, 1, 0, 0, 0, 0}, b = {16, 256, 4, 0, 0, 1, 0, 0, 0, 0};
    CHECK_OK(ramp_config_resources(&a, &g, &lim, &r2));
    CHECK_OK(ramp_config_resources(&b, &g, &lim, &r4));
    CHECK(r4.smem_bytes > r2.smem_bytes && r4.blocks_per_sm <= r2.blocks_per_sm);
    /* A width that does not divide h is not in the space, with a reason. */
    ramp_geometry q3 = {16, 8, 768, 2048, 0};
    ramp_config big = {64, 512, 4, 0, 0, 1, 0, 0, 0, 0};
    CHECK_OK(ramp_config_resources(&big, &q3, &lim, &r4));
    CHECK(!r4.valid && strstr(r4.why, "does not divide"));
    /* Occupancy follows the register bound: 3 blocks of 128 threads at
     * 168 registers (21504 per block), 1 block of 256 threads at 224. */
    ramp_config small = {2, 128, 2, 0, 0, 1, 0, 0, 0, 0};
    CHECK_OK(ramp_config_resources(&small, &g, &lim, &r2));
    CHECK_EQ_INT(r2.threads, 128);
    CHECK_EQ_INT(r2.blocks_per_sm, 3);
    CHECK_OK(ramp_config_resources(&big, &g, &lim, &r4));
    CHECK(r4.valid && r4.threads == 256 && r4.blocks_per_sm == 1);
}

/* Whole items only: "mixtral" selected nothing in gpu-check's runs until
 * session 8, silently (substring matching). */
static void test_list_helpers(void) {
    CHECK(check_listed("qwen3-30b,mixtral-8x22b", "mixtral-8x22b"));
    CHECK(check_listed("qwen3-30b,mixtral-8x22b", "qwen3-30b"));
    CHECK(!check_listed("qwen3-30b,mixtral", "mixtral-8x22b"));
    CHECK(!check_listed("qwen3-30b-a3b", "qwen3-30b"));
    CHECK(!check_listed("", "olmoe"));
    CHECK(check_listed("olmoe", "olmoe"));
    const char *names[] = {"qwen3-30b", "mixtral-8x22b"};
    fprintf(stderr, "(two expected complaints follow)\n");
    CHECK_EQ_INT(check_list_unknown("X", "qwen3-30b,mixtral-8x22b", names, 2), 0);
    CHECK_EQ_INT(check_list_unknown("X", "qwen3-30b,mixtral,olmoe", names, 2), 2);
}

int main(void) {
    ramp_rng rng;
    ramp_rng_seed(&rng, check_seed());
    test_models();
    test_layouts();
    test_placements(&rng);
    test_geometry();
    test_configs();
    test_list_helpers();
    return check_finish("test_core");
}
