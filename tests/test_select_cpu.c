/*
 * test_select_cpu.c - the selection kernel's CPU twin (ramp_select_cpu)
 * against the definition (select_check.h): grouping is a stable sort by
 * (expert, pair index), padding is -1, tile counts follow Equation 1 as
 * ramp_features_compute computes it, predictions follow Equation 3, the
 * choice is the argmin with ties to the lowest index, foreign and -1 ids are
 * skipped, out-of-range ids are counted and never written. Plus a worked
 * example by hand, the descriptor checks and bad calls, and the pairs term
 * (Equation 3 + pairs): absent (0) it leaves every prediction bit for bit
 * as the four-term chain computed it; present, it is one more fmaf.
 */
#include "check.h"
#include "select_check.h"
#include "select_cpu.h"

#include <limits.h>

static void worked_example(void) {
    /* E = 8, k = 2, this GPU holds experts 4..7 (local 0..3).
     * ids: token 0 -> 4, 5; token 1 -> 5, 0 (foreign); token 2 -> 7, -1 */
    ramp_select_desc d = {.experts = 8, .topk = 2, .max_tokens = 4,
                          .local_experts = 4, .first_expert = 4, .nentries = 2};
    d.entries[0] = (ramp_select_entry){.rows = 2, .slices = 1, .slots = 2,
                                       .theta = {1, 10, 0, 0}};
    d.entries[1] = (ramp_select_entry){.rows = 4, .slices = 1, .slots = 2,
                                       .theta = {0, 10, 0, 1}};
    const int32_t ids[] = {4, 5, 5, 0, 7, -1};
    ramp_select_result *r = NULL;
    CHECK_OK(ramp_select_result_create(&d, &r));
    if (!r) return;
    sel_poison(r);
    CHECK_OK(ramp_select_cpu(&d, 3, ids, r));
    /* counts 1,2,0,1. Entry 0 (b=2): T = 1+1+0+1 = 3, W = 2, t = 1 + 20 = 21.
     * Entry 1 (b=4): T = 3, W = 2, A = 3, t = 20 + 3 = 23. Entry 0 wins. */
    CHECK(r->pred[0] == 21.0f);
    CHECK(r->pred[1] == 23.0f);
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_CHOSEN], 0);
    const int32_t want_sorted[] = {0, -1, 1, 2, 4, -1};
    for (int i = 0; i < 6; i++) CHECK_EQ_INT(r->sorted_ids[i], want_sorted[i]);
    const int32_t want_start[] = {0, 1, 2, 2, 3};
    for (int i = 0; i < 5; i++) CHECK_EQ_INT(r->tile_start[i], want_start[i]);
    const int32_t want_tiles[] = {0, 1, 3};
    for (int i = 0; i < 3; i++) CHECK_EQ_INT(r->tile_expert[i], want_tiles[i]);
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_TILES], 3);
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_SLOTS], 6);
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_LOCAL], 4);
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_BAD_IDS], 0);
    CHECK_EQ_INT(r->sorted_ids[6], SEL_POISON);

    /* A tie: identical predictions pick the lower index. */
    d.entries[1] = d.entries[0];
    d.entries[1].rows = 3; /* same T here: ceil(1/3)+ceil(2/3)+ceil(1/3) = 3 */
    sel_poison(r);
    CHECK_OK(ramp_select_cpu(&d, 3, ids, r));
    CHECK(r->pred[0] == r->pred[1]);
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_CHOSEN], 0);
    d.entries[0].theta[0] = 1.5f; /* now entry 1 is strictly better */
    CHECK_OK(ramp_select_cpu(&d, 3, ids, r));
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_CHOSEN], 1);
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_SLOTS], 9);

    /* Out-of-range ids: skipped, counted, never written. */
    const int32_t wild[] = {8, -2, INT_MAX, INT_MIN, 65535, 4};
    sel_poison(r);
    CHECK_OK(ramp_select_cpu(&d, 3, wild, r));
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_BAD_IDS], 5);
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_LOCAL], 1);
    CHECK_EQ_INT(r->sorted_ids[0], 5);
    sel_check(&d, 3, wild, r, "wild ids");

    /* The pairs term: the ids hold P = 4 local pairs. Entry 1 (21 us) beats
     * entry 0 (21.5 us); theta[4] = 1 on entry 1 adds 4 us and flips it. */
    sel_poison(r);
    CHECK_OK(ramp_select_cpu(&d, 3, ids, r));
    const float p0 = r->pred[0], p1 = r->pred[1];
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_CHOSEN], 1);
    d.entries[1].theta[4] = 1.0f;
    sel_poison(r);
    CHECK_OK(ramp_select_cpu(&d, 3, ids, r));
    CHECK(r->pred[0] == p0 && r->pred[1] == p1 + 4.0f);
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_CHOSEN], 0);
    sel_check(&d, 3, ids, r, "pairs term");
    ramp_select_result_free(r);
}

/* Equation 3 exactly as the kernel evaluated it before the pairs term. */
static float predict_four_terms(const ramp_select_entry *e, int n, const int32_t *counts) {
    int tiles = 0, active = 0;
    for (int i = 0; i < n; i++) {
        tiles += (counts[i] + e->rows - 1) / e->rows;
        active += counts[i] > 0;
    }
    if (e->pair_tiles && tiles % 2) tiles++; /* (pairs since session 19) */
    const int T = tiles * e->slices, W = (T + e->slots - 1) / e->slots;
    float t = e->theta[0];
    t = fmaf(e->theta[1], (float)W, t);
    t = fmaf(e->theta[2], (float)T, t);
    return fmaf(e->theta[3], (float)active, t);
}

/* theta[4] = 0: every prediction bit for bit the four-term one (so EQ3
 * plans pick and pad as before); theta[4] != 0: that plus one fmaf of the
 * GPU's pairs, and ramp_select_entry_make_terms carries it. */
static void pairs_term_bits(unsigned long long seed) {
    ramp_rng rng;
    ramp_rng_seed(&rng, seed ^ 0x9a125);
    static int32_t local_of[4096];
    int32_t counts[256];
    int checked = 0;
    for (int it = 0; it < 300; it++) {
        ramp_select_desc d;
        gen_desc(&rng, &d, local_of, 0);
        const int n = d.local_experts;
        const int big = (int)ramp_rng_below(&rng, 3);
        int32_t pairs = 0;
        for (int i = 0; i < n; i++) {
            counts[i] = ramp_rng_below(&rng, 4) == 0 ? 0
                        : (int32_t)ramp_rng_below(&rng, big ? 3000 : 40);
            pairs += counts[i];
        }
        for (int c = 0; c < d.nentries; c++, checked++) {
            ramp_select_entry e = d.entries[c];
            e.max_waves = 0; /* the wave limit: checked below */
            const float old = predict_four_terms(&e, n, counts);
            float got = ramp_select_predict(&e, n, counts);
            CHECK(memcmp(&got, &old, sizeof got) == 0);
            e.theta[4] = (float)(0.02 * ramp_rng_uniform(&rng));
            got = ramp_select_predict(&e, n, counts);
            const float want = fmaf(e.theta[4], (float)pairs, old);
            CHECK(memcmp(&got, &want, sizeof got) == 0);
            /* a wave limit adds (float)RAMP_PAST_WAVES_US past it, nothing else */
            int64_t tiles = 0;
            for (int i = 0; i < n; i++) tiles += (counts[i] + e.rows - 1) / e.rows;
            if (e.pair_tiles) tiles += tiles & 1;
            const int64_t W = (tiles * e.slices + e.slots - 1) / e.slots;
            e.max_waves = 1 + (int)ramp_rng_below(&rng, 3);
            got = ramp_select_predict(&e, n, counts);
            const float past = W > e.max_waves ? want + 1e6f : want;
            CHECK(memcmp(&got, &past, sizeof got) == 0);
        }
    }
    printf("%d predictions: theta4 = 0 bit-identical to Equation 3's four terms\n", checked);

    ramp_config c = {.rows = 8, .width = 256, .stages = 2, .splitk = 1};
    ramp_geometry g = {.experts = 8, .topk = 2, .inter = 768, .hidden = 2048};
    double th[5] = {1, 2, 0.5, 0.25, 0.125};
    ramp_select_entry e;
    memset(&e, 0x5a, sizeof e);
    CHECK_OK(ramp_select_entry_make_terms(&c, &g, 132, 1, th, 5, &e));
    CHECK(e.theta[4] == 0.125f && e.theta[3] == 0.25f);
    CHECK_OK(ramp_select_entry_make_terms(&c, &g, 132, 1, th, 4, &e));
    CHECK(e.theta[4] == 0.0f && e.theta[3] == 0.25f);
    CHECK_OK(ramp_select_entry_make(&c, &g, 132, 1, th, &e));
    CHECK(e.theta[4] == 0.0f);
    CHECK_ERR(ramp_select_entry_make_terms(&c, &g, 132, 1, th, 3, &e), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "3 cost terms") != NULL);
    th[4] = NAN;
    CHECK_ERR(ramp_select_entry_make_terms(&c, &g, 132, 1, th, 5, &e), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "theta[4]") != NULL);
    th[4] = 1e30;
    CHECK_ERR(ramp_select_entry_make_terms(&c, &g, 132, 1, th, 5, &e), RAMP_ERR_INVALID_ARGUMENT);
}

static void entry_matches_features(unsigned long long seed) {
    /* ramp_select_entry_make's b, q, S give the same T and W as
     * ramp_features_compute on the real configuration and geometry. */
    ramp_rng rng;
    ramp_rng_seed(&rng, seed ^ 0xfeed);
    static const int widths[] = {128, 256, 512}, splits[] = {1, 2, 4};
    static const int inters[] = {512, 768, 1024, 1408, 2048, 2560, 6400};
    for (int it = 0; it < 200; it++) {
        ramp_config c = {.rows = 1 + (int)ramp_rng_below(&rng, 64),
                         .width = widths[ramp_rng_below(&rng, 3)], .stages = 3,
                         .splitk = splits[ramp_rng_below(&rng, 3)]};
        ramp_geometry g = {.experts = 16, .topk = 8,
                           .inter = inters[ramp_rng_below(&rng, 7)], .hidden = 2048};
        int bps = 1 + (int)ramp_rng_below(&rng, 3);
        const double theta[4] = {3.5, 2.25, 0.125, 0.5};
        ramp_select_entry e;
        CHECK_OK(ramp_select_entry_make(&c, &g, 132, bps, theta, &e));
        int32_t load[16];
        for (int i = 0; i < 16; i++)
            load[i] = ramp_rng_below(&rng, 3) ? (int32_t)ramp_rng_below(&rng, 300) : 0;
        ramp_features f;
        ramp_features_compute(&c, &g, 132, bps, 16, load, &f);
        float t = ramp_select_predict(&e, 16, load);
        double want = theta[0] + theta[1] * f.waves + theta[2] * f.tiles + theta[3] * f.active;
        CHECK_EQ_INT(e.max_waves, 0); /* a plan's entries set it (test_costmodel) */
        CHECK_NEAR(t, want, 1e-6 * want);
    }
    ramp_config c = {.rows = 8, .width = 256, .stages = 2, .splitk = 1};
    ramp_geometry g = {.experts = 8, .topk = 2, .inter = 768, .hidden = 2048};
    double bad[4] = {1, NAN, 0, 0};
    ramp_select_entry e;
    CHECK_ERR(ramp_select_entry_make(&c, &g, 132, 1, bad, &e), RAMP_ERR_INVALID_ARGUMENT);
    bad[1] = 1e30;
    CHECK_ERR(ramp_select_entry_make(&c, &g, 132, 1, bad, &e), RAMP_ERR_INVALID_ARGUMENT);
    bad[1] = 1;
    CHECK_ERR(ramp_select_entry_make(&c, &g, 0, 1, bad, &e), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_OK(ramp_select_entry_make(&c, &g, 132, 2, bad, &e));
    CHECK_EQ_INT(e.slices, 3);
    CHECK_EQ_INT(e.slots, 264);
}

static void bad_descriptors(void) {
    ramp_select_desc d = {.experts = 8, .topk = 2, .max_tokens = 16,
                          .local_experts = 4, .first_expert = 0, .nentries = 1};
    d.entries[0] = (ramp_select_entry){.rows = 8, .slices = 1, .slots = 132,
                                       .theta = {1, 1, 1, 1}};
    CHECK_OK(ramp_select_desc_check(&d));
    ramp_select_desc b = d;
    b.topk = 9; /* k larger than E */
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "topk = 9") != NULL);
    b = d; b.topk = 0;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    b = d; b.experts = 0;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    b = d; b.experts = 70000; b.local_experts = 4;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    b = d; b.max_tokens = 0;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    b = d; b.max_tokens = 1 << 20; /* 2M pairs */
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    b = d; b.local_experts = 9;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    b = d; b.first_expert = 5;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    b = d; b.nentries = 0;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    b = d; b.nentries = RAMP_SELECT_MAX_ENTRIES + 1;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    b = d; b.entries[0].rows = 0;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    b = d; b.entries[0].slots = 0;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    b = d; b.entries[0].theta[2] = INFINITY;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    b = d; b.entries[0].theta[4] = NAN;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "entries[0].theta[4]") != NULL);
    b = d; b.entries[0].theta[4] = -2e20f;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    b = d; b.group_only = 2;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    b = d; b.one_shape = 2;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "one_shape") != NULL);
    b = d; b.one_shape = 1;
    CHECK_OK(ramp_select_desc_check(&b));
    b = d; b.pdl_wait = -1;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "pdl_wait") != NULL);
    b = d; b.pdl_wait = 1;
    CHECK_OK(ramp_select_desc_check(&b));
    b = d; b.entry_mask = 2; /* entry 1 of a menu of one */
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "entry_mask") != NULL);
    b = d; b.entry_mask = 1;
    CHECK_OK(ramp_select_desc_check(&b));
    int32_t map[8] = {-1, 0, 1, -1, 2, 3, -1, -1};
    b = d; b.local_of = map;
    CHECK_OK(ramp_select_desc_check(&b));
    map[6] = 2; /* local index 2 given twice */
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    map[6] = 4; /* past local_experts */
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    map[6] = -3;
    CHECK_ERR(ramp_select_desc_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_select_desc_check(NULL), RAMP_ERR_INVALID_ARGUMENT);

    /* bad calls */
    ramp_select_result *r = NULL;
    CHECK_OK(ramp_select_result_create(&d, &r));
    int32_t ids[34] = {0};
    CHECK_ERR(ramp_select_cpu(&d, 17, ids, r), RAMP_ERR_INVALID_ARGUMENT); /* > max_tokens */
    CHECK_ERR(ramp_select_cpu(&d, -1, ids, r), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_select_cpu(&d, 2, NULL, r), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_OK(ramp_select_cpu(&d, 0, NULL, r));
    ramp_select_desc bigger = d;
    bigger.max_tokens = 1000;
    CHECK_ERR(ramp_select_cpu(&bigger, 1, ids, r), RAMP_ERR_INVALID_ARGUMENT);
    ramp_select_result_free(r);
    ramp_select_result_free(NULL);
}

/* The launch-shape rule (select_gpu.c): each warp at most one row of 32
 * pairs, 16 warps a block up to 4,096 pairs, clusters of at most 8. */
static void launch_shapes(void) {
    static const struct { long long pairs; int warps, ctas; } want[] = {
        {0, 16, 1},     {1, 16, 1},     {512, 16, 1},   {513, 16, 2},  {1024, 16, 2},
        {1025, 16, 4},  {2048, 16, 4},  {2049, 16, 8},  {4096, 16, 8}, {4097, 32, 8},
        {32768, 32, 8}, {1LL << 40, 32, 8}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int w = -1, c = -1;
        ramp_select_shape_for(want[i].pairs, &w, &c);
        if (w != want[i].warps || c != want[i].ctas)
            fprintf(stderr, "  shape for %lld pairs: %d warps x %d blocks, want %d x %d\n",
                    want[i].pairs, w, c, want[i].warps, want[i].ctas);
        CHECK_EQ_INT(w, want[i].warps);
        CHECK_EQ_INT(c, want[i].ctas);
        /* the rule's invariant: one row a warp, or the largest shape */
        CHECK(want[i].pairs <= (long long)w * 32 * c || (w == 32 && c == 8));
    }
}

/* Classes as ramp_select_size_classes promises them: nonempty proper
 * subsets of the menu, growing with increasing batch bounds in 1..max_tokens. */
static void check_class_shape(const ramp_select_desc *d, int n, const int *tokens,
                              const unsigned *masks) {
    const unsigned all = (unsigned)((1u << d->nentries) - 1);
    for (int c = 0; c < n; c++) {
        CHECK(masks[c] && masks[c] != all && (masks[c] & ~all) == 0);
        CHECK(tokens[c] >= 1 && tokens[c] <= d->max_tokens);
        if (c) CHECK(tokens[c] > tokens[c - 1] && (masks[c - 1] & ~masks[c]) == 0 &&
                     masks[c] != masks[c - 1]);
    }
}

/* The layer's size classes (ramp_select_size_classes) on random menus for
 * one local expert, against the twin itself: for every batch size T, every
 * routing of T tokens with distinct ids gives the local expert n <= T pairs;
 * the twin's choice over the whole menu for each n must lie in the class
 * that serves T, the class's entries must be exactly the choices of n <=
 * its last size (nothing unreachable compiled in), and the twin restricted
 * to the class's entries (entry_mask) must choose the same entry. */
static void size_classes(unsigned long long seed) {
    ramp_rng rng;
    ramp_rng_seed(&rng, seed ^ 0x5151);
    static const int rows[] = {4, 8, 16, 32, 64, 128};
    int listed = 0;
    for (int it = 0; it < 60; it++) {
        ramp_select_desc d = {.experts = 8, .topk = 2, .local_experts = 1, .first_expert = 3};
        d.max_tokens = 1 + (int)ramp_rng_below(&rng, 300);
        d.nentries = 1 + (int)ramp_rng_below(&rng, 8);
        for (int c = 0; c < d.nentries; c++) {
            ramp_select_entry *e = &d.entries[c];
            e->rows = rows[ramp_rng_below(&rng, 6)];
            e->slices = 1 + (int)ramp_rng_below(&rng, 64);
            e->slots = 132;
            e->max_waves = ramp_rng_below(&rng, 4) == 0;
            e->pair_tiles = ramp_rng_below(&rng, 4) == 0;
            /* fixed cost against per-wave and per-pair costs: small tiles
             * win small loads, so classes form */
            e->theta[0] = (float)(20.0 * ramp_rng_uniform(&rng));
            e->theta[1] = (float)(1.0 + 20.0 * ramp_rng_uniform(&rng));
            e->theta[2] = (float)(0.05 * ramp_rng_uniform(&rng));
            e->theta[4] = (float)(0.2 * ramp_rng_uniform(&rng) / e->rows);
            if (c > 0 && ramp_rng_below(&rng, 8) == 0) *e = d.entries[c - 1]; /* a tie */
        }
        CHECK_OK(ramp_select_desc_check(&d));
        int tokens[RAMP_SELECT_MAX_ENTRIES];
        unsigned masks[RAMP_SELECT_MAX_ENTRIES];
        const int n = ramp_select_size_classes(&d, tokens, masks);
        const unsigned all = (unsigned)((1u << d.nentries) - 1);
        check_class_shape(&d, n, tokens, masks);
        listed += n;
        /* the whole menu's choice for n pairs: n tokens on the local expert
         * (their second id foreign), the rest of the batch elsewhere */
        ramp_select_result *r = NULL;
        CHECK_OK(ramp_select_result_create(&d, &r));
        int32_t *ids = malloc(sizeof(int32_t) * 2 * (size_t)d.max_tokens + 2);
        int *pick = malloc(sizeof(int) * ((size_t)d.max_tokens + 1));
        if (!r || !ids || !pick) break;
        for (int np = 0; np <= d.max_tokens; np++) {
            for (int t = 0; t < d.max_tokens; t++) {
                ids[2 * t] = t < np ? 3 : 5;
                ids[2 * t + 1] = 7 - (t % 2);
            }
            CHECK_OK(ramp_select_cpu(&d, d.max_tokens, ids, r));
            CHECK_EQ_INT(r->counts[0], np);
            pick[np] = r->meta[RAMP_SELECT_META_CHOSEN];
            /* restricted to the class serving np tokens: the same entry */
            for (int c = 0; c < n; c++) {
                if (np > tokens[c]) continue;
                CHECK((masks[c] >> pick[np]) & 1u);
                ramp_select_desc m = d;
                m.entry_mask = masks[c];
                CHECK_OK(ramp_select_cpu(&m, d.max_tokens, ids, r));
                CHECK_EQ_INT(r->meta[RAMP_SELECT_META_CHOSEN], pick[np]);
            }
        }
        unsigned reach = 0; /* exactly the choices of n <= a class's size */
        for (int T = 0, c = 0; T <= d.max_tokens; T++) {
            reach |= 1u << pick[T];
            if (c < n && T == tokens[c]) CHECK_EQ_INT(masks[c++], reach);
        }
        /* no class: max_tokens reaches the whole menu; past the last class
         * too (the whole menu's kernel serves it) */
        if (!n || tokens[n - 1] < d.max_tokens) CHECK_EQ_INT(reach, all);
        free(ids);
        free(pick);
        ramp_select_result_free(r);
        /* group-only: no classes */
        ramp_select_desc two = d;
        two.group_only = 1;
        CHECK_EQ_INT(ramp_select_size_classes(&two, tokens, masks), 0);
    }
    CHECK(listed > 20); /* the generator does make classes */
    /* the public form on a plan: bad arguments */
    int t[RAMP_MENU_MAX];
    unsigned m[RAMP_MENU_MAX];
    ramp_plan empty;
    memset(&empty, 0, sizeof empty);
    CHECK_EQ_INT(ramp_plan_size_classes(NULL, 64, t, m), -1);
    CHECK_EQ_INT(ramp_plan_size_classes(&empty, 64, t, m), -1); /* no menu */
    empty.count = 1; /* more pairs than a layer takes: refused before the menu is read */
    empty.geom.topk = 8;
    CHECK_EQ_INT(ramp_plan_size_classes(&empty, (1 << 20) / 8 + 1, t, m), -1);
    printf("size classes: %d listed over 60 menus\n", listed);
}

/* Size classes for several local experts, against every count vector: on
 * random menus over 2-5 local experts and small batches (row counts that do
 * not divide each other, some coefficients negative), each vector c (c_e <=
 * T, sum <= min(k, EL) T) is dealt to T = max(max c_e, ceil(sum / min(k,
 * EL))) tokens round robin (distinct ids per token; the twin must count c
 * back), and the whole menu's choice for it must lie in every class serving
 * T, where the twin restricted to that class chooses the same; no class may
 * hold an entry that is not within float noise of the minimum on some
 * vector of its batch sizes; and the classes may end short of max_tokens
 * only where the next batch size searched reaches every entry. The same for
 * the search under limits small enough to stop it (its classes: a prefix of
 * the whole search's, none stretched past where it stopped). */
static int next_vector(int32_t *c, int n, int top) { /* odometer over 0..top */
    for (int i = 0; i < n; i++) {
        if (++c[i] <= top) return 1;
        c[i] = 0;
    }
    return 0;
}

/* the batch sizes the search checks: 1, 2, 3, 4, 6, 8, 12, ... */
static int next_walk_size(int T) {
    int w = 1;
    while (w <= T) w = (w & (w - 1)) == 0 && w >= 2 ? w + w / 2 : w == 1 ? 2 : (w / 3) * 4;
    return w;
}

typedef struct {
    int n, tokens[RAMP_SELECT_MAX_ENTRIES];
    unsigned masks[RAMP_SELECT_MAX_ENTRIES];
    unsigned near[RAMP_SELECT_MAX_ENTRIES]; /* entries near the minimum in class c's sizes */
} class_set;

/* vector dealt to T tokens (ids), whole-menu choice pick: inside every
 * class of cs serving T, and the class's own choice the same */
static int check_vector_classes(const ramp_select_desc *d, class_set *cs, int T,
                                const int32_t *ids, int pick, unsigned close) {
    int checks = 0;
    for (int cl = 0; cl < cs->n; cl++) {
        if (T > cs->tokens[cl]) continue;
        cs->near[cl] |= close;
        CHECK((cs->masks[cl] >> pick) & 1u);
        ramp_select_desc m = *d;
        m.entry_mask = cs->masks[cl];
        ramp_select_result *rm = NULL;
        CHECK_OK(ramp_select_result_create(&m, &rm));
        if (!rm) break;
        CHECK_OK(ramp_select_cpu(&m, T, ids, rm));
        CHECK_EQ_INT(rm->meta[RAMP_SELECT_META_CHOSEN], pick);
        ramp_select_result_free(rm);
        checks++;
    }
    return checks;
}

/* The process-wide cache: every field the search reads is in its key. A
 * variant of d in one field must get the uncached search's answer, not d's;
 * returns 1 when the variant's answer differs from d's (so a key without the
 * field would have failed). */
static int cache_key_variant(const ramp_select_desc *d, const ramp_select_desc *v) {
    int t[RAMP_SELECT_MAX_ENTRIES], vt[RAMP_SELECT_MAX_ENTRIES], st[RAMP_SELECT_MAX_ENTRIES];
    unsigned m[RAMP_SELECT_MAX_ENTRIES], vm[RAMP_SELECT_MAX_ENTRIES], sm[RAMP_SELECT_MAX_ENTRIES];
    const int n = ramp_select_size_classes(d, t, m);
    const int vn = ramp_select_size_classes(v, vt, vm);
    CHECK_EQ_INT(ramp_select_size_classes_search(v, st, sm), vn);
    for (int c = 0; c < vn; c++) CHECK(st[c] == vt[c] && sm[c] == vm[c]);
    if (n != vn) return 1;
    for (int c = 0; c < n; c++)
        if (t[c] != vt[c] || m[c] != vm[c]) return 1;
    return 0;
}

static void size_classes_many(unsigned long long seed) {
    ramp_rng rng;
    ramp_rng_seed(&rng, seed ^ 0x5eed);
    static const int rows[] = {3, 4, 6, 8, 12, 16, 24, 32};
    static const int top_of[] = {0, 0, 40, 16, 8, 6}; /* batch bound by local experts */
    /* limits that stop the search early: few histograms or buckets; few
     * steps along the envelopes */
    static const ramp_class_limits small[2] = {{30.0, 4, 1e9}, {1e9, 256, 12.0}};
    int listed = 0, vectors = 0, strict = 0, first_n = -1, capped[2] = {0, 0}, keyed = 0;
    ramp_select_desc first;
    memset(&first, 0, sizeof first);
    int first_t[RAMP_SELECT_MAX_ENTRIES] = {0};
    unsigned first_m[RAMP_SELECT_MAX_ENTRIES] = {0};
    for (int it = 0; it < 64; it++) {
        const int EL = 2 + (int)ramp_rng_below(&rng, 4);
        ramp_select_desc d = {.experts = 12, .local_experts = EL, .first_expert = 2};
        d.topk = 1 + (int)ramp_rng_below(&rng, 4);
        d.max_tokens = 1 + (int)ramp_rng_below(&rng, (uint32_t)top_of[EL]);
        d.nentries = 2 + (int)ramp_rng_below(&rng, 5);
        const int negative = it % 4 == 3; /* signs the fits never give, the search must not assume */
        for (int c = 0; c < d.nentries; c++) {
            ramp_select_entry *e = &d.entries[c];
            e->rows = rows[ramp_rng_below(&rng, 8)];
            e->slices = 1 + (int)ramp_rng_below(&rng, 16);
            e->slots = 1 + (int)ramp_rng_below(&rng, 40);
            e->max_waves = ramp_rng_below(&rng, 4) == 0 ? 2 : 0;
            e->pair_tiles = ramp_rng_below(&rng, 4) == 0;
            e->theta[0] = (float)(20.0 * ramp_rng_uniform(&rng));
            e->theta[1] = (float)(1.0 + 20.0 * ramp_rng_uniform(&rng));
            e->theta[2] = (float)(0.05 * ramp_rng_uniform(&rng));
            e->theta[3] = (float)(0.5 * (ramp_rng_uniform(&rng) - (negative ? 0.5 : 0.0)));
            /* a third of the menus priced mostly by pairs: the choice then
             * turns inside one histogram's range of P */
            e->theta[4] = (float)((it % 3 ? 0.2 / e->rows : 2.0) *
                                  (ramp_rng_uniform(&rng) - (negative ? 0.5 : 0.0)));
            if (c > 0 && ramp_rng_below(&rng, 8) == 0) *e = d.entries[c - 1]; /* a tie */
        }
        CHECK_OK(ramp_select_desc_check(&d));
        class_set whole, stop[2];
        memset(&whole, 0, sizeof whole);
        memset(stop, 0, sizeof stop);
        whole.n = ramp_select_size_classes(&d, whole.tokens, whole.masks);
        check_class_shape(&d, whole.n, whole.tokens, whole.masks);
        listed += whole.n;
        for (int l = 0; l < 2; l++) {
            class_set *st = &stop[l];
            st->n = ramp_select_size_classes_limited(&d, &small[l], st->tokens, st->masks);
            check_class_shape(&d, st->n, st->tokens, st->masks);
            CHECK(st->n <= whole.n);
            for (int c = 0; c < st->n; c++) {
                CHECK_EQ_INT(st->masks[c], whole.masks[c]);
                CHECK(st->tokens[c] <= whole.tokens[c]);
                if (c < st->n - 1) CHECK_EQ_INT(st->tokens[c], whole.tokens[c]);
            }
            capped[l] += st->n < whole.n ||
                         (st->n && st->tokens[st->n - 1] < whole.tokens[st->n - 1]);
        }
        /* the process-wide cache: the search's own answer, answered from
         * the cache the second time, and for the first menu after 8 others
         * have passed through it */
        int st[RAMP_SELECT_MAX_ENTRIES];
        unsigned sm[RAMP_SELECT_MAX_ENTRIES];
        CHECK_EQ_INT(ramp_select_size_classes_search(&d, st, sm), whole.n);
        for (int c = 0; c < whole.n; c++) CHECK(st[c] == whole.tokens[c] && sm[c] == whole.masks[c]);
        const long long hits = ramp_select_size_classes_hits();
        CHECK_EQ_INT(ramp_select_size_classes(&d, st, sm), whole.n);
        for (int c = 0; c < whole.n; c++) CHECK(st[c] == whole.tokens[c] && sm[c] == whole.masks[c]);
        CHECK(ramp_select_size_classes_hits() == hits + 1);
        if (it == 0) {
            first = d;
            first_n = whole.n;
            memcpy(first_t, whole.tokens, sizeof first_t);
            memcpy(first_m, whole.masks, sizeof first_m);
        }
        if (it == 20) {
            CHECK_EQ_INT(ramp_select_size_classes(&first, st, sm), first_n);
            for (int c = 0; c < first_n; c++) CHECK(st[c] == first_t[c] && sm[c] == first_m[c]);
        }
        {
            ramp_select_desc v = d;
            v.max_tokens = d.max_tokens > 1 ? d.max_tokens / 2 : 2;
            keyed += cache_key_variant(&d, &v);
            v = d;
            v.topk = d.topk % 4 + 1;
            keyed += cache_key_variant(&d, &v);
            v = d;
            v.local_experts = EL == 2 ? 3 : EL - 1;
            keyed += cache_key_variant(&d, &v);
            v = d;
            v.entries[ramp_rng_below(&rng, (uint32_t)d.nentries)].rows += 1;
            keyed += cache_key_variant(&d, &v);
        }
        const int k = d.topk < EL ? d.topk : EL;
        /* every entry near the minimum among batches of up to T tokens */
        unsigned *upto = calloc((size_t)d.max_tokens + 1, sizeof(unsigned));
        ramp_select_result *r = NULL;
        CHECK_OK(ramp_select_result_create(&d, &r));
        int32_t *ids = malloc(sizeof(int32_t) * (size_t)d.max_tokens * (size_t)d.topk);
        if (!r || !ids || !upto) break;
        int32_t c[5] = {0, 0, 0, 0, 0};
        do {
            int sum = 0, big = 0;
            for (int e = 0; e < EL; e++) {
                sum += c[e];
                if (c[e] > big) big = c[e];
            }
            int T = big > (sum + k - 1) / k ? big : (sum + k - 1) / k;
            if (T < 1) T = 1; /* no local pair: a token of foreign ids */
            if (T > d.max_tokens) continue;
            /* deal: pair s of the sequence to token s mod T; foreign ids fill
             * each token's other slots (experts 0, 1, 10, 11: >= k of them) */
            int *fill = calloc((size_t)T, sizeof(int));
            if (!fill) break;
            for (int e = 0, s = 0; e < EL; e++)
                for (int j = 0; j < c[e]; j++, s++) {
                    const int t = s % T;
                    ids[t * d.topk + fill[t]++] = d.first_expert + e;
                }
            static const int foreign[] = {0, 1, 10, 11};
            for (int t = 0; t < T; t++)
                for (int f = 0; fill[t] < d.topk; f++) ids[t * d.topk + fill[t]++] = foreign[f];
            free(fill);
            CHECK_OK(ramp_select_cpu(&d, T, ids, r));
            for (int e = 0; e < EL; e++) CHECK_EQ_INT(r->counts[e], c[e]);
            const int pick = r->meta[RAMP_SELECT_META_CHOSEN];
            const float best = r->pred[pick];
            unsigned close = 0;
            for (int j = 0; j < d.nentries; j++)
                if (r->pred[j] <= best + 2e-5f * fabsf(best) + 2e-6f) close |= 1u << j;
            for (int t = T; t <= d.max_tokens; t++) upto[t] |= close;
            vectors++;
            strict += check_vector_classes(&d, &whole, T, ids, pick, close);
            for (int l = 0; l < 2; l++) strict += check_vector_classes(&d, &stop[l], T, ids, pick, close);
        } while (next_vector(c, EL, d.max_tokens));
        const unsigned all = (unsigned)((1u << d.nentries) - 1);
        for (int cl = 0; cl < whole.n; cl++) CHECK_EQ_INT(whole.masks[cl] & ~whole.near[cl], 0u);
        for (int l = 0; l < 2; l++)
            for (int cl = 0; cl < stop[l].n; cl++) CHECK_EQ_INT(stop[l].masks[cl] & ~stop[l].near[cl], 0u);
        /* not ended early: where the classes stop short of max_tokens, the
         * next size searched already reaches every entry */
        const int last = whole.n ? whole.tokens[whole.n - 1] : 0;
        if (last < d.max_tokens) {
            int next = next_walk_size(last);
            if (next > d.max_tokens) next = d.max_tokens;
            CHECK_EQ_INT(upto[next], all);
        }
        free(upto);
        free(ids);
        ramp_select_result_free(r);
    }
    CHECK(listed > 10); /* the generator does make classes */
    CHECK(capped[0] > 5 && capped[1] > 5); /* the small limits do stop the search */
    CHECK(keyed > 20);  /* the variants change the answer: each key field is tested */
    /* An entry that is the minimum only inside a histogram's range of P:
     * A = 2P, B = 8.5 + P, C = 20 (D never): A up to 8 pairs, B on 9-11, C
     * from 12. No range's end (1, 2, T or 2T at T = 1, 2, 3, 4, 6, 8, 12,
     * ...) falls in 9-11, so only the walk along the envelope finds B. */
    {
        ramp_select_desc d = {.experts = 8, .topk = 2, .local_experts = 2, .first_expert = 0,
                              .max_tokens = 20, .nentries = 4};
        static const float th[4][2] = {{0, 2}, {8.5f, 1}, {20, 0}, {100, 0}};
        for (int c = 0; c < 4; c++) {
            d.entries[c].rows = 32;
            d.entries[c].slices = 1;
            d.entries[c].slots = 132;
            d.entries[c].theta[0] = th[c][0];
            d.entries[c].theta[4] = th[c][1];
        }
        CHECK_OK(ramp_select_desc_check(&d));
        int tokens[RAMP_SELECT_MAX_ENTRIES];
        unsigned masks[RAMP_SELECT_MAX_ENTRIES];
        CHECK_EQ_INT(ramp_select_size_classes(&d, tokens, masks), 2);
        CHECK_EQ_INT(tokens[0], 4); /* T = 6 reaches 12 pairs */
        CHECK_EQ_INT(masks[0], 0x1u);
        CHECK_EQ_INT(tokens[1], 20);
        CHECK_EQ_INT(masks[1], 0x7u);
    }
    /* An entry that wins only on counts that are multiples of its rows (5),
     * where no other entry's rows (3) put a bucket end: A = 0.6 - 0.4 W +
     * 5 tiles - P is 0.2 on counts 5 and 10, >= 1.2 elsewhere; B = 0.5; C
     * never. Batches of 6 tokens (c = 5, 0) first reach A, so the classes
     * are {B} up to 4 tokens, {A, B} up to 12. A search whose buckets end at
     * the smallest rows' multiples only never sees a count of 5 alone. */
    {
        ramp_select_desc d = {.experts = 8, .topk = 1, .local_experts = 2, .first_expert = 0,
                              .max_tokens = 12, .nentries = 3};
        static const int rw[3] = {5, 3, 3};
        static const float th[3][5] = {{0.6f, -0.4f, 5, 0, -1}, {0.5f, 0, 0, 0, 0},
                                       {100, 0, 0, 0, 0}};
        for (int c = 0; c < 3; c++) {
            d.entries[c].rows = rw[c];
            d.entries[c].slices = 1;
            d.entries[c].slots = 1000;
            memcpy(d.entries[c].theta, th[c], sizeof th[c]);
        }
        CHECK_OK(ramp_select_desc_check(&d));
        int tokens[RAMP_SELECT_MAX_ENTRIES];
        unsigned masks[RAMP_SELECT_MAX_ENTRIES];
        CHECK_EQ_INT(ramp_select_size_classes(&d, tokens, masks), 2);
        CHECK_EQ_INT(tokens[0], 4);
        CHECK_EQ_INT(masks[0], 0x2u);
        CHECK_EQ_INT(tokens[1], 12);
        CHECK_EQ_INT(masks[1], 0x3u);
    }
    printf("size classes, several local experts: %d listed over 64 menus (%d / %d stopped early "
           "by few histograms / steps), %d count vectors, %d class checks, %d cache-key variants "
           "answered differently\n", listed, capped[0], capped[1], vectors, strict, keyed);
}

int main(void) {
    unsigned long long seed = check_seed();
    size_classes(seed);
    size_classes_many(seed);
    launch_shapes();
    worked_example();
    entry_matches_features(seed);
    pairs_term_bits(seed);
    bad_descriptors();

    /* Random and skewed routings against the definition. */
    ramp_rng rng;
    ramp_rng_seed(&rng, seed);
    static int32_t local_of[4096];
    int32_t *ids = NULL;
    int cases = 0;
    for (int it = 0; it < 400 && check_failures == 0; it++) {
        ramp_select_desc d;
        gen_desc(&rng, &d, local_of, it % 50 == 0);
        const int pairs = (it / 2) % 2; /* half the descriptors: Equation 3 + pairs */
        if (pairs) gen_pairs_term(&rng, &d);
        CHECK_OK(ramp_select_desc_check(&d));
        ramp_select_result *r = NULL;
        CHECK_OK(ramp_select_result_create(&d, &r));
        if (!r) break;
        free(ids);
        ids = malloc(sizeof(int32_t) * (size_t)d.max_tokens * (size_t)d.topk + 4);
        for (int rep = 0; rep < 8; rep++, cases++) {
            int kind = (int)ramp_rng_below(&rng, GEN_KINDS);
            int tokens = rep == 0 ? 0 : rep == 1 ? d.max_tokens
                                               : (int)ramp_rng_below(&rng, (uint32_t)d.max_tokens + 1);
            gen_routing(&rng, &d, tokens, kind, ids);
            sel_poison(r);
            CHECK_OK(ramp_select_cpu(&d, tokens, ids, r));
            char what[64];
            snprintf(what, sizeof what, "case %d (%s%s)", cases, gen_kind_name(kind),
                     pairs ? ", pairs term" : "");
            sel_check(&d, tokens, ids, r, what);
        }
        ramp_select_result_free(r);
    }
    free(ids);
    printf("%d routings checked\n", cases);

    /* The largest size of the issue: 4,096 x 8 on 32 local experts. */
    ramp_select_desc d = {.experts = 256, .topk = 8, .max_tokens = 4096,
                          .local_experts = 32, .first_expert = 64, .nentries = 6};
    static const int rows[6] = {2, 4, 8, 16, 32, 64};
    for (int c = 0; c < 6; c++)
        d.entries[c] = (ramp_select_entry){.rows = rows[c], .slices = 6, .slots = 132,
                                           .theta = {5.0f, 4.0f + c, 0.01f * c, 0.1f}};
    ramp_select_result *r = NULL;
    CHECK_OK(ramp_select_result_create(&d, &r));
    ids = malloc(sizeof(int32_t) * 4096 * 8);
    for (int kind = 0; kind < GEN_KINDS && r; kind++) {
        gen_routing(&rng, &d, 4096, kind, ids);
        sel_poison(r);
        CHECK_OK(ramp_select_cpu(&d, 4096, ids, r));
        sel_check(&d, 4096, ids, r, gen_kind_name(kind));
    }
    free(ids);
    ramp_select_result_free(r);
    return check_finish("test_select_cpu");
}
