/*
 * test_timing.c - timing datasets: random round trips checked element by
 * element (NaN positions included), argument validation, corrupt files
 * refused with RAMP_ERR_FORMAT, and failed writes that leave no file.
 */
#include "check.h"
#include "internal.h"
#include "safetensors.h"
#include "st_util.h"
#include "moe_v2.h" /* ramp_moe_v2_check, ramp_moe_v1_check: the wide tiles are v2 only */

#include <unistd.h>

static ramp_rng rng;

static const int ROWS[] = {2, 4, 6, 8, 12, 16, 24, 32, 48, 64};

/* n distinct random valid configurations. */
static int random_configs(ramp_config *out, int n) {
    int have = 0, tries = 0;
    while (have < n && tries++ < 10000) {
        ramp_config c;
        c.rows = ROWS[ramp_rng_below(&rng, 10)];
        c.width = 128 << ramp_rng_below(&rng, 3);
        c.stages = 2 + (int)ramp_rng_below(&rng, 3);
        c.persistent = (int)ramp_rng_below(&rng, 2);
        c.grouped = c.persistent ? (int)ramp_rng_below(&rng, 2) : 0;
        c.splitk = 1 << ramp_rng_below(&rng, 3);
        c.two_phase = 0; /* v1 datasets: no wide tile (test_kernel has those) */
        c.mcast = 0;
        c.tma_x = 0;
        c.ggather = 0;
        int dup = 0;
        for (int i = 0; i < have; i++) dup |= ramp_config_equal(&out[i], &c);
        if (!dup) out[have++] = c;
    }
    return have;
}

typedef struct {
    ramp_geometry g;
    int C, L;
    ramp_config *cfg;
    int *bps;
    int32_t *loads, *nexp, *batch, *gpu, *dom, *btok;
    float *times;
} ref_timing;

static void ref_free(ref_timing *r) {
    free(r->cfg);
    free(r->bps);
    free(r->loads);
    free(r->nexp);
    free(r->batch);
    free(r->gpu);
    free(r->dom);
    free(r->btok);
    free(r->times);
}

static const char *DOMS[] = {"chat", "math", "code"};

/* Builds a random dataset through the API and keeps the reference. */
static ramp_timing *make_random(ref_timing *r, int with_nan) {
    memset(r, 0, sizeof *r);
    r->g.experts = 1 + (int)ramp_rng_below(&rng, 40);
    r->g.topk = 1 + (int)ramp_rng_below(&rng, 8);
    r->g.inter = 128 * (1 + (int)ramp_rng_below(&rng, 16));
    r->g.hidden = 1024 * (1 + (int)ramp_rng_below(&rng, 7));
    r->g.bf16 = (int)ramp_rng_below(&rng, 2);
    r->C = 1 + (int)ramp_rng_below(&rng, 30);
    r->cfg = calloc((size_t)r->C, sizeof *r->cfg);
    r->bps = calloc((size_t)r->C, sizeof *r->bps);
    r->C = random_configs(r->cfg, r->C);
    for (int c = 0; c < r->C; c++) r->bps[c] = 1 + (int)ramp_rng_below(&rng, 4);
    r->L = (int)ramp_rng_below(&rng, 60);
    int X = r->g.experts, L = r->L;
    r->loads = calloc((size_t)(L ? L : 1) * (size_t)X, 4);
    r->nexp = calloc((size_t)(L ? L : 1), 4);
    r->batch = calloc((size_t)(L ? L : 1), 4);
    r->gpu = calloc((size_t)(L ? L : 1), 4);
    r->dom = calloc((size_t)(L ? L : 1), 4);
    r->btok = calloc((size_t)(L ? L : 1), 4);
    r->times = calloc((size_t)(L ? L : 1) * (size_t)r->C, 4);
    ramp_timing *t = NULL;
    CHECK_OK(ramp_timing_create("Qwen3-30B-A3B", "ep8", &r->g, 132, r->cfg,
                                r->bps, r->C, &t));
    if (!t) return NULL;
    CHECK(strcmp(t->layout, "EP8") == 0);
    snprintf(t->device, sizeof t->device, "NVIDIA H200");
    snprintf(t->command, sizeof t->command, "ramp time --model qwen3 \"q\", x");
    snprintf(t->date, sizeof t->date, "2025-01-02T03:04:05Z");
    for (int i = 0; i < L; i++) {
        r->nexp[i] = (int32_t)ramp_rng_below(&rng, (uint32_t)X + 1);
        for (int j = 0; j < r->nexp[i]; j++)
            r->loads[(int64_t)i * X + j] = (int32_t)ramp_rng_below(&rng, 500);
        r->batch[i] = i / 8;
        r->gpu[i] = i % 8;
        const char *dn = DOMS[ramp_rng_below(&rng, 3)];
        r->dom[i] = ramp_timing_domain_index(t, dn);
        CHECK(r->dom[i] >= 0 && strcmp(t->domains[r->dom[i]], dn) == 0);
        r->btok[i] = (int32_t)ramp_rng_below(&rng, 5000);
        int64_t idx = -1;
        CHECK_OK(ramp_timing_add_load(t, r->batch[i], r->gpu[i], r->dom[i],
                                      r->btok[i], r->nexp[i],
                                      r->loads + (int64_t)i * X, &idx));
        CHECK_EQ_INT(idx, i);
        for (int c = 0; c < r->C; c++) {
            /* Freshly added loads are unmeasured. */
            CHECK(isnan(t->times_us[(int64_t)i * r->C + c]));
            float v = (float)(ramp_rng_uniform(&rng) * 1000.0);
            if (with_nan && ramp_rng_below(&rng, 5) == 0) v = NAN;
            if (ramp_rng_below(&rng, 50) == 0) v = 0.0f;
            r->times[(int64_t)i * r->C + c] = v;
            t->times_us[(int64_t)i * r->C + c] = v;
        }
    }
    return t;
}

static void check_same(const ramp_timing *t, const ref_timing *r,
                       const ramp_timing *orig) {
    CHECK(strcmp(t->model, "Qwen3-30B-A3B") == 0);
    CHECK(strcmp(t->layout, "EP8") == 0);
    CHECK(strcmp(t->device, "NVIDIA H200") == 0);
    CHECK(strcmp(t->command, orig->command) == 0);
    CHECK(strcmp(t->date, orig->date) == 0);
    CHECK(memcmp(&t->geom, &r->g, sizeof r->g) == 0);
    CHECK_EQ_INT(t->sms, 132);
    CHECK_EQ_INT(t->nconfigs, r->C);
    CHECK_EQ_INT(t->max_experts, r->g.experts);
    CHECK_EQ_INT(t->nloads, r->L);
    CHECK_EQ_INT(t->ndomains, orig->ndomains);
    for (int d = 0; d < t->ndomains && d < orig->ndomains; d++)
        CHECK(strcmp(t->domains[d], orig->domains[d]) == 0);
    if (t->nconfigs != r->C || t->nloads != r->L) return;
    int bad = 0;
    for (int c = 0; c < r->C; c++) {
        bad += !ramp_config_equal(&t->configs[c], &r->cfg[c]);
        bad += t->blocks_per_sm[c] != r->bps[c];
    }
    int X = r->g.experts;
    for (int i = 0; i < r->L; i++) {
        bad += t->nexp[i] != r->nexp[i];
        bad += t->batch[i] != r->batch[i];
        bad += t->gpu[i] != r->gpu[i];
        bad += t->domain[i] != r->dom[i];
        bad += t->batch_tokens[i] != r->btok[i];
        for (int j = 0; j < X; j++)
            bad += t->loads[(int64_t)i * X + j] != r->loads[(int64_t)i * X + j];
        for (int c = 0; c < r->C; c++) {
            float a = t->times_us[(int64_t)i * r->C + c];
            float b = r->times[(int64_t)i * r->C + c];
            bad += isnan(b) ? !isnan(a) : memcmp(&a, &b, 4) != 0;
        }
    }
    CHECK_EQ_INT(bad, 0);
}

static void path_in_tmp(char *buf, size_t n, const char *name) {
    snprintf(buf, n, "%s/%s-%ld.safetensors", check_tmpdir(), name,
             (long)getpid());
}

static void test_round_trip(void) {
    char path[512];
    path_in_tmp(path, sizeof path, "timing-rt");
    for (int iter = 0; iter < 10; iter++) {
        ref_timing r;
        int with_nan = iter % 2;
        ramp_timing *t = make_random(&r, with_nan);
        if (!t) {
            ref_free(&r);
            continue;
        }
        CHECK_OK(ramp_timing_write(t, path));
        ramp_timing *back = NULL;
        CHECK_OK(ramp_timing_read(path, 1, &back));
        if (back) check_same(back, &r, t);
        ramp_timing_free(back);
        back = NULL;
        /* Without allow_missing, NaN is refused; with none, it reads. */
        int any_nan = 0;
        for (int64_t i = 0; i < (int64_t)r.L * r.C; i++) any_nan |= isnan(r.times[i]);
        if (any_nan) {
            CHECK_ERR(ramp_timing_read(path, 0, &back), RAMP_ERR_FORMAT);
            CHECK(strstr(ramp_last_error(), "NaN") &&
                  strstr(ramp_last_error(), "times_us"));
        } else {
            CHECK_OK(ramp_timing_read(path, 0, &back));
            if (back) check_same(back, &r, t);
            ramp_timing_free(back);
        }
        ramp_timing_free(t);
        ref_free(&r);
    }
    remove(path);
}

static void test_arguments(void) {
    ramp_geometry g = {.experts = 16, .topk = 8, .inter = 768, .hidden = 2048, .bf16 = 0};
    ramp_config cfg[2];
    CHECK_OK(ramp_config_parse("r16.w256.s4", &cfg[0]));
    CHECK_OK(ramp_config_parse("r2.w128.s2.persist.grp.k2", &cfg[1]));
    int bps[2] = {1, 2};
    ramp_timing *t = NULL;
    CHECK_ERR(ramp_timing_create("m", "XP8", &g, 132, cfg, bps, 2, &t), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_timing_create("", "EP8", &g, 132, cfg, bps, 2, &t), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_timing_create("m", "EP8", &g, 0, cfg, bps, 2, &t), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_timing_create("m", "EP8", &g, 132, cfg, bps, 0, &t), RAMP_ERR_INVALID_ARGUMENT);
    ramp_geometry g0 = g;
    g0.inter = 0;
    CHECK_ERR(ramp_timing_create("m", "EP8", &g0, 132, cfg, bps, 2, &t), RAMP_ERR_INVALID_ARGUMENT);
    g0 = g;
    g0.bf16 = 2;
    CHECK_ERR(ramp_timing_create("m", "EP8", &g0, 132, cfg, bps, 2, &t), RAMP_ERR_INVALID_ARGUMENT);
    int bps0[2] = {1, 0};
    CHECK_ERR(ramp_timing_create("m", "EP8", &g, 132, cfg, bps0, 2, &t), RAMP_ERR_INVALID_ARGUMENT);
    ramp_config dup[2] = {cfg[0], cfg[0]};
    CHECK_ERR(ramp_timing_create("m", "EP8", &g, 132, dup, bps, 2, &t), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "twice") != NULL);
    ramp_config badc = cfg[0];
    badc.rows = 5;
    CHECK_ERR(ramp_timing_create("m", "EP8", &g, 132, &badc, bps, 1, &t), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_OK(ramp_timing_create("m", "EP8", &g, 132, cfg, bps, 2, &t));
    if (!t) return;
    CHECK_EQ_INT(ramp_timing_domain_index(t, "chat"), 0);
    CHECK_EQ_INT(ramp_timing_domain_index(t, "math"), 1);
    CHECK_EQ_INT(ramp_timing_domain_index(t, "chat"), 0);
    CHECK_EQ_INT(ramp_timing_domain_index(t, "a,b"), -1);
    CHECK(ramp_last_error()[0] != '\0');
    CHECK_EQ_INT(ramp_timing_domain_index(t, ""), -1);
    CHECK_EQ_INT(t->ndomains, 2);
    int32_t load[16] = {5, 0, 3};
    int64_t idx;
    CHECK_ERR(ramp_timing_add_load(t, 0, 0, 2, 10, 3, load, &idx), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_timing_add_load(t, 0, 0, -1, 10, 3, load, &idx), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_timing_add_load(t, 0, 8, 0, 10, 3, load, &idx), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_timing_add_load(t, 0, -1, 0, 10, 3, load, &idx), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_timing_add_load(t, -1, 0, 0, 10, 3, load, &idx), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_timing_add_load(t, 0, 0, 0, -10, 3, load, &idx), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_timing_add_load(t, 0, 0, 0, 10, 17, load, &idx), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "nexp = 17") != NULL);
    CHECK_ERR(ramp_timing_add_load(t, 0, 0, 0, 10, -1, load, &idx), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_timing_add_load(t, 0, 0, 0, 10, 3, NULL, &idx), RAMP_ERR_INVALID_ARGUMENT);
    load[1] = -1;
    CHECK_ERR(ramp_timing_add_load(t, 0, 0, 0, 10, 3, load, &idx), RAMP_ERR_INVALID_ARGUMENT);
    load[1] = 0;
    CHECK_EQ_INT(t->nloads, 0);
    /* Only nexp values are read; the rest of the row is stored as zeros. */
    load[5] = 99;
    CHECK_OK(ramp_timing_add_load(t, 0, 7, 1, 10, 3, load, &idx));
    CHECK_EQ_INT(idx, 0);
    CHECK(t->loads[0] == 5 && t->loads[2] == 3 && t->loads[5] == 0);
    /* Bad times are refused at write time and no file appears. */
    char path[512];
    path_in_tmp(path, sizeof path, "timing-badtime");
    t->times_us[1] = INFINITY;
    CHECK_ERR(ramp_timing_write(t, path), RAMP_ERR_NUMERIC);
    t->times_us[1] = -1.0f;
    CHECK_ERR(ramp_timing_write(t, path), RAMP_ERR_NUMERIC);
    CHECK(!st_exists(path));
    t->times_us[1] = 3.0f;
    /* Loads changed by hand past nexp are refused too. */
    t->loads[5] = 1;
    CHECK_ERR(ramp_timing_write(t, path), RAMP_ERR_INVALID_ARGUMENT);
    t->loads[5] = 0;
    CHECK_OK(ramp_timing_write(t, path));
    remove(path);
    /* Non-existent directory; target that is a directory. */
    char bad[512];
    snprintf(bad, sizeof bad, "%s/no-such-dir-%ld/t.safetensors",
             check_tmpdir(), (long)getpid());
    CHECK_ERR(ramp_timing_write(t, bad), RAMP_ERR_IO);
    CHECK(!st_exists(bad));
    snprintf(bad, sizeof bad, "%s/timing-isdir-%ld", check_tmpdir(),
             (long)getpid());
    mkdir(bad, 0700);
    CHECK_ERR(ramp_timing_write(t, bad), RAMP_ERR_IO);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "timing-isdir-%ld.tmp", (long)getpid());
    CHECK_EQ_INT(st_count_prefix(check_tmpdir(), prefix), 0);
    rmdir(bad);
    ramp_timing_free(t);
}

static void expect_format(const void *bytes, size_t size, int allow_missing,
                          const char *needle, int line) {
    ramp_timing *t = NULL;
    ramp_status s = ramp_timing_read_memory(bytes, size, "bad.timing",
                                            allow_missing, &t);
    const char *msg = ramp_last_error();
    if (s != RAMP_ERR_FORMAT || !strstr(msg, "bad.timing") ||
        (needle && !strstr(msg, needle))) {
        fprintf(stderr, "line %d: got %s '%s', wanted FORMAT with '%s'\n",
                line, ramp_status_name(s), msg, needle ? needle : "");
        check_failures++;
    }
    ramp_timing_free(t);
}

static void test_corrupt(void) {
    /* A small fixed dataset: 2 configs, X = 4, 3 loads. */
    ramp_geometry g = {.experts = 4, .topk = 2, .inter = 256, .hidden = 1024, .bf16 = 1};
    ramp_config cfg[2];
    CHECK_OK(ramp_config_parse("r8.w128.s3", &cfg[0]));
    CHECK_OK(ramp_config_parse("r32.w256.s2.persist", &cfg[1]));
    int bps[2] = {2, 1};
    ramp_timing *t = NULL;
    CHECK_OK(ramp_timing_create("m", "EP4", &g, 132, cfg, bps, 2, &t));
    if (!t) return;
    int d = ramp_timing_domain_index(t, "chat");
    int32_t l0[4] = {3, 1, 0, 2}, l1[2] = {7, 7}, l2[1] = {1};
    CHECK_OK(ramp_timing_add_load(t, 0, 0, d, 6, 4, l0, NULL));
    CHECK_OK(ramp_timing_add_load(t, 0, 1, d, 6, 2, l1, NULL));
    CHECK_OK(ramp_timing_add_load(t, 1, 3, d, 1, 1, l2, NULL));
    for (int i = 0; i < 6; i++) t->times_us[i] = 10.0f + (float)i;
    void *good = NULL;
    size_t size = 0;
    CHECK_OK(ramp_timing_write_memory(t, &good, &size));
    ramp_timing_free(t);
    t = NULL;
    CHECK_OK(ramp_timing_read_memory(good, size, "good", 0, &t));
    ramp_timing_free(t);

    int bad = 0;
    for (size_t n = 0; n < size; n++) {
        uint8_t *c = malloc(n ? n : 1);
        memcpy(c, good, n);
        t = NULL;
        if (ramp_timing_read_memory(c, n, "cut", 1, &t) != RAMP_ERR_FORMAT) bad++;
        ramp_timing_free(t);
        free(c);
    }
    CHECK_EQ_INT(bad, 0);

    uint8_t *c = malloc(size);
    struct {
        const char *tensor;
        int64_t index;
        int32_t ival;
        int is_float;
        float fval;
        const char *needle;
    } patches[] = {
        {"times_us", 3, 0, 1, -1.0f, "load 1, configuration 1"},
        {"times_us", 0, 0, 1, INFINITY, "not finite"},
        {"times_us", 5, 0, 1, NAN, "NaN"},
        {"nexp", 1, 5, 0, 0, "nexp = 5"},
        {"nexp", 1, -1, 0, 0, "nexp = -1"},
        {"nexp", 1, 1, 0, 0, "zero past nexp"},
        {"loads", 2, -4, 0, 0, "negative"},
        {"loads", 4 + 3, 9, 0, 0, "zero past nexp"},
        {"domain", 2, 1, 0, 0, "domain = 1"},
        {"gpu", 0, 4, 0, 0, "gpu = 4"},
        {"batch", 0, -1, 0, 0, "batch"},
        {"batch_tokens", 0, -1, 0, 0, "batch_tokens"},
    };
    for (size_t i = 0; i < sizeof patches / sizeof patches[0]; i++) {
        memcpy(c, good, size);
        int ok = patches[i].is_float
                     ? st_patch_f32(c, size, patches[i].tensor, patches[i].index,
                                    patches[i].fval)
                     : st_patch_i32(c, size, patches[i].tensor, patches[i].index,
                                    patches[i].ival);
        CHECK(ok);
        /* NaN is refused only without allow_missing. */
        int allow = !(patches[i].is_float && isnan(patches[i].fval));
        expect_format(c, size, allow, patches[i].needle, 1000 + (int)i);
    }
    free(c);

    float f64buf[64] = {0};
    int32_t i32buf[64] = {0};
    struct {
        st_edit ed;
        const char *needle;
    } edits[] = {
        {{.set_key = "format", .set_value = "ramp-trace"}, "ramp-timing"},
        {{.set_key = "configs", .set_value = "r8.w128.s3,r7.w128.s3"}, "item 1"},
        {{.set_key = "configs", .set_value = "r8.w128.s3,r8.w128.s3"}, "twice"},
        {{.set_key = "configs", .set_value = "r8.w128.s3"}, "blocks_per_sm"},
        {{.set_key = "configs", .set_value = ""}, "no configuration"},
        {{.set_key = "configs", .set_value = NULL}, "configs"},
        {{.set_key = "blocks_per_sm", .set_value = "2"}, "blocks_per_sm"},
        {{.set_key = "blocks_per_sm", .set_value = "2,0"}, "blocks_per_sm"},
        {{.set_key = "blocks_per_sm", .set_value = "2,x"}, "blocks_per_sm"},
        {{.set_key = "domains", .set_value = ""}, "domain = 0"},
        {{.set_key = "domains", .set_value = "chat,chat"}, "twice"},
        {{.set_key = "domains", .set_value = NULL}, "domains"},
        {{.set_key = "layout", .set_value = "EP99"}, "layout"},
        {{.set_key = "layout", .set_value = "EP2"}, "gpu = 3"},
        {{.set_key = "experts", .set_value = "5"}, "'loads'"},
        {{.set_key = "experts", .set_value = "-4"}, "experts"},
        {{.set_key = "sms", .set_value = "0"}, "sms"},
        {{.set_key = "hidden", .set_value = NULL}, "hidden"},
        {{.set_key = "bf16", .set_value = "2"}, "bf16"},
        {{.set_key = "bf16", .set_value = NULL}, "bf16"},
        {{.set_key = "model", .set_value = NULL}, "model"},
        {{.drop = "times_us"}, "'times_us' is missing"},
        {{.drop = "nexp"}, "'nexp' is missing"},
        {{.add = "junk"}, "unexpected tensor 'junk'"},
        {{.replace = "times_us", .dtype = RAMP_ST_F64, .ndim = 2,
          .shape = {3, 2}, .data = f64buf}, "dtype F64"},
        {{.replace = "times_us", .dtype = RAMP_ST_F32, .ndim = 2,
          .shape = {3, 3}, .data = f64buf}, "shape[1] = 3"},
        {{.replace = "loads", .dtype = RAMP_ST_I32, .ndim = 2,
          .shape = {2, 4}, .data = i32buf}, "shape[0] = 2"},
        {{.replace = "gpu", .dtype = RAMP_ST_I64, .ndim = 1,
          .shape = {3}, .data = i32buf}, "dtype I64"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        size_t n;
        void *b = st_rebuild(good, size, &edits[i].ed, &n);
        CHECK(b != NULL);
        if (b) expect_format(b, n, 1, edits[i].needle, 2000 + (int)i);
        free(b);
    }
    {
        st_edit ed = {.set_key = "version", .set_value = "7"};
        size_t n;
        void *b = st_rebuild(good, size, &ed, &n);
        t = NULL;
        CHECK_ERR(ramp_timing_read_memory(b, n, "v7", 1, &t), RAMP_ERR_UNSUPPORTED);
        free(b);
    }
    free(good);
}

/* Checksums (issue #4: a corrupted dataset in data/ is caught): a written
 * dataset carries one and reads back verified; every single changed byte of
 * the file is refused, data or header (a changed key name too: unknown keys
 * are refused), with the file named; a file written without one (before
 * checksums) still reads; dataset files are sealed on every write. */
static void test_checksum(void) {
    ref_timing r;
    ramp_timing *t = make_random(&r, 0);
    if (!t) return;
    char path[512];
    path_in_tmp(path, sizeof path, "checksum.safetensors");
    CHECK_OK(ramp_timing_write(t, path));
    ramp_timing *back = NULL;
    CHECK_OK(ramp_timing_read(path, 0, &back));
    CHECK(back && back->checksum == 1);
    if (back) check_same(back, &r, t);
    ramp_timing_free(back);
    size_t size = 0;
    uint8_t *good = st_slurp(path, &size);
    CHECK(good != NULL);
    /* One flipped byte in the times, through the file reader. */
    ramp_st_file *f = NULL;
    CHECK_OK(ramp_st_parse(good, size, "x", &f));
    const ramp_st_tensor *tt = f ? ramp_st_find(f, "times_us") : NULL;
    size_t at = tt ? (size_t)((const uint8_t *)tt->data - good) : size - 1;
    ramp_st_close(f);
    uint8_t *c = malloc(size);
    memcpy(c, good, size);
    /* A random dataset may have no times (zero loads): then any byte. */
    if (at >= size) at = 0;
    c[at + ramp_rng_below(&rng, (uint32_t)(size - at))] ^= 0x04;
    CHECK(st_spit(path, c, size));
    back = NULL;
    CHECK_ERR(ramp_timing_read(path, 0, &back), RAMP_ERR_FORMAT);
    CHECK(strstr(ramp_last_error(), path) != NULL);
    CHECK(strstr(ramp_last_error(), "checksum") != NULL);
    /* Every single byte, anywhere (times valid after the flip or not). A
     * bounded random sample on large files keeps the test quick. */
    int missed = 0;
    size_t step = size > 4000 ? size / 2000 : 1;
    for (size_t i = ramp_rng_below(&rng, (uint32_t)step); i < size; i += step) {
        memcpy(c, good, size);
        c[i] ^= (uint8_t)(1 + ramp_rng_below(&rng, 255));
        back = NULL;
        ramp_status s = ramp_timing_read_memory(c, size, "flip", 1, &back);
        if (s == RAMP_OK) {
            missed++;
            fprintf(stderr, "byte %zu of %zu changed and accepted\n", i, size);
        }
        ramp_timing_free(back);
    }
    CHECK_EQ_INT(missed, 0);
    /* The key's own name: refused as an unknown key. */
    const char *k = NULL;
    for (size_t i = 8; i + 8 <= size && !k; i++)
        if (memcmp(good + i, "\"sha256\"", 8) == 0) k = (const char *)good + i;
    CHECK(k != NULL);
    if (k) {
        memcpy(c, good, size);
        c[(size_t)(k - (const char *)good) + 3] ^= 0x01;
        back = NULL;
        CHECK_ERR(ramp_timing_read_memory(c, size, "key.safetensors", 1, &back), RAMP_ERR_FORMAT);
        CHECK(strstr(ramp_last_error(), "unknown __metadata__ key") != NULL);
    }
    /* Written before checksums: rebuilt without the key, still read. */
    st_edit ed = {.set_key = RAMP_ST_CHECKSUM_KEY, .set_value = NULL};
    size_t n = 0;
    void *old = st_rebuild(good, size, &ed, &n);
    CHECK(old != NULL);
    if (old) {
        /* st_rebuild reseals a file that had one: strip it by hand. */
        ramp_st_writer *w = NULL;
        ramp_st_file *of = NULL;
        void *plain = NULL;
        size_t pn = 0;
        CHECK_OK(ramp_st_parse(old, n, "old", &of));
        CHECK_OK(ramp_st_writer_create(&w));
        for (int i = 0; of && w && i < ramp_st_meta_count(of); i++) {
            const char *key = ramp_st_meta_key(of, i);
            if (strcmp(key, RAMP_ST_CHECKSUM_KEY) != 0)
                CHECK_OK(ramp_st_writer_meta(w, key, ramp_st_meta(of, key)));
        }
        for (int i = 0; of && w && i < ramp_st_count(of); i++) {
            const ramp_st_tensor *x = ramp_st_at(of, i);
            CHECK_OK(ramp_st_writer_add(w, x->name, x->dtype, x->ndim, x->shape, x->data));
        }
        CHECK_OK(ramp_st_writer_to_memory(w, &plain, &pn));
        back = NULL;
        CHECK_OK(ramp_timing_read_memory(plain, pn, "old", 0, &back));
        CHECK(back && back->checksum == 0);
        if (back) check_same(back, &r, t);
        ramp_timing_free(back);
        ramp_st_writer_free(w);
        ramp_st_close(of);
        free(plain);
        free(old);
    }
    remove(path);
    free(c);
    free(good);
    ref_free(&r);
    ramp_timing_free(t);
}

/* The placement key: written when set, read back; absent in files that
 * never set it (so older files and their checksums are unchanged); any
 * other value refused on writing, naming it. */
static void test_placement(void) {
    char path[512];
    path_in_tmp(path, sizeof path, "timing-placement");
    ref_timing r;
    ramp_timing *t = make_random(&r, 0);
    if (!t) { ref_free(&r); return; }
    static const char *const good[3] = {"contiguous", "balanced", "balanced:others"};
    for (int i = 0; i < 3; i++) {
        snprintf(t->placement, sizeof t->placement, "%s", good[i]);
        CHECK_OK(ramp_timing_write(t, path));
        ramp_timing *back = NULL;
        CHECK_OK(ramp_timing_read(path, 0, &back));
        if (back) {
            CHECK(strcmp(back->placement, good[i]) == 0);
            CHECK_EQ_INT(ramp_placement_is_balanced(back->placement), i > 0);
            check_same(back, &r, t);
        }
        ramp_timing_free(back);
    }
    t->placement[0] = 0;
    CHECK_OK(ramp_timing_write(t, path));
    ramp_timing *back = NULL;
    CHECK_OK(ramp_timing_read(path, 0, &back));
    if (back) CHECK(back->placement[0] == 0);
    ramp_timing_free(back);
    FILE *f = fopen(path, "rb");
    char head[4096] = {0};
    if (f) {
        CHECK(fread(head, 1, sizeof head - 1, f) > 8);
        fclose(f);
    }
    CHECK(strstr(head + 8, "placement") == NULL);
    static const char *const bad[3] = {"balancedx", "random", "Balanced"};
    for (int i = 0; i < 3; i++) {
        snprintf(t->placement, sizeof t->placement, "%s", bad[i]);
        CHECK_ERR(ramp_timing_write(t, path), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), bad[i]) && strstr(ramp_last_error(), "placement"));
    }
    CHECK(!ramp_placement_is_balanced(NULL) && !ramp_placement_is_balanced("balance"));
    ramp_timing_free(t);
    ref_free(&r);
    remove(path);
}

/* The kernel key (metadata "kernel"): a v2 dataset reads back as v2, a v1
 * one has no key (older files and their checksums unchanged); an unknown
 * value is refused on reading, and a v2 dataset must hold only
 * configurations v2 runs (FP8, plain launch, no grouped order, no split-K,
 * d a multiple of 256), on writing and on reading. */
static int header_has(const void *bytes, size_t size, const char *needle) {
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | ((const uint8_t *)bytes)[i];
    if (size < 8 || n > size - 8) return 0;
    char *h = malloc(n + 1);
    if (!h) return 0;
    memcpy(h, (const char *)bytes + 8, n);
    h[n] = 0;
    int found = strstr(h, needle) != NULL;
    free(h);
    return found;
}

static ramp_timing *small_dataset(const ramp_geometry *g, const char *const *names, int n) {
    ramp_config cfg[4];
    int bps[4] = {1, 1, 1, 1};
    for (int i = 0; i < n; i++) CHECK_OK(ramp_config_parse(names[i], &cfg[i]));
    ramp_timing *t = NULL;
    CHECK_OK(ramp_timing_create("m", "EP4", g, 132, cfg, bps, n, &t));
    if (!t) return NULL;
    int d = ramp_timing_domain_index(t, "chat");
    int32_t l0[4] = {3, 1, 0, 2}, l1[2] = {7, 7};
    CHECK_OK(ramp_timing_add_load(t, 0, 0, d, 6, 4, l0, NULL));
    CHECK_OK(ramp_timing_add_load(t, 0, 1, d, 6, 2, l1, NULL));
    for (int i = 0; i < 2 * n; i++) t->times_us[i] = (float)(1.0 + ramp_rng_uniform(&rng) * 100);
    return t;
}

static void test_kernel(void) {
    ramp_geometry g = {.experts = 4, .topk = 2, .inter = 256, .hidden = 1024, .bf16 = 0};
    static const char *const plain[2] = {"r8.w128.s3", "r32.w256.s2"};
    ramp_timing *t = small_dataset(&g, plain, 2);
    if (!t) return;
    void *bytes = NULL;
    size_t size = 0;
    /* v1 (the default of ramp_timing_create): no key */
    CHECK_EQ_INT(t->kernel, RAMP_KERNEL_V1);
    CHECK_OK(ramp_timing_write_memory(t, &bytes, &size));
    CHECK(bytes && !header_has(bytes, size, "\"kernel\""));
    free(bytes);
    /* v2: written, read back with every value */
    t->kernel = RAMP_KERNEL_V2;
    CHECK_OK(ramp_timing_write_memory(t, &bytes, &size));
    CHECK(bytes && header_has(bytes, size, "\"kernel\":\"v2\""));
    ramp_timing *back = NULL;
    CHECK_OK(ramp_timing_read_memory(bytes, size, "v2", 0, &back));
    if (back) {
        CHECK_EQ_INT(back->kernel, RAMP_KERNEL_V2);
        CHECK_EQ_INT(back->nconfigs, 2);
        CHECK(back->checksum == 1);
        for (int i = 0; i < 4; i++) CHECK(back->times_us[i] == t->times_us[i]);
    }
    ramp_timing_free(back);
    /* unknown values refused on reading, naming the key and the value */
    static const char *const bad[4] = {"v3", "", "V2", "v2 "};
    for (int i = 0; i < 4; i++) {
        st_edit ed = {0};
        ed.set_key = "kernel";
        ed.set_value = bad[i];
        size_t n = 0;
        void *b = st_rebuild(bytes, size, &ed, &n);
        CHECK(b != NULL);
        if (b) expect_format(b, n, 0, "'kernel'", __LINE__);
        if (b && bad[i][0]) CHECK(strstr(ramp_last_error(), bad[i]) != NULL);
        free(b);
    }
    /* "v1" said explicitly reads as v1; the key removed reads as v1 */
    static const char *const as_v1[2] = {"v1", NULL};
    for (int i = 0; i < 2; i++) {
        st_edit ed = {0};
        ed.set_key = "kernel";
        ed.set_value = as_v1[i];
        size_t n = 0;
        void *b = st_rebuild(bytes, size, &ed, &n);
        back = NULL;
        if (b) CHECK_OK(ramp_timing_read_memory(b, n, "v1", 0, &back));
        if (back) CHECK_EQ_INT(back->kernel, RAMP_KERNEL_V1);
        ramp_timing_free(back);
        free(b);
    }
    free(bytes);
    ramp_timing_free(t);

    /* A v2 dataset with a configuration v2 does not run: refused on writing
     * (naming it) and, made by relabelling a v1 file, on reading. */
    static const char *const mixed[3][2] = {{"r8.w128.s3", "r32.w256.s2.persist"},
                                            {"r8.w128.s3", "r4.w128.s2.k4"},
                                            {"r8.w128.s3", "r16.w256.s4.persist.grp"}};
    for (int i = 0; i < 3; i++) {
        t = small_dataset(&g, mixed[i], 2);
        if (!t) continue;
        t->kernel = RAMP_KERNEL_V2;
        CHECK_ERR(ramp_timing_write_memory(t, &bytes, &size), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), mixed[i][1]) && strstr(ramp_last_error(), "v2"));
        t->kernel = RAMP_KERNEL_V1;
        bytes = NULL;
        CHECK_OK(ramp_timing_write_memory(t, &bytes, &size));
        st_edit ed = {0};
        ed.set_key = "kernel";
        ed.set_value = "v2";
        size_t n = 0;
        void *b = bytes ? st_rebuild(bytes, size, &ed, &n) : NULL;
        if (b) expect_format(b, n, 0, mixed[i][1], __LINE__);
        free(b);
        free(bytes);
        ramp_timing_free(t);
    }
    /* v2's wide tiles, fused and two-phase: a v2 dataset holds them (round
     * trip); a v1 dataset does not (refused on writing and, relabelled, on
     * reading, naming the configuration) */
    static const char *const wide[3] = {"r8.w128.s3", "r128.w256.s3", "r128.w128.s4.ph2.dk2"};
    t = small_dataset(&g, wide, 3);
    if (t) {
        t->kernel = RAMP_KERNEL_V2;
        bytes = NULL;
        CHECK_OK(ramp_timing_write_memory(t, &bytes, &size));
        ramp_timing *wb = NULL;
        if (bytes) CHECK_OK(ramp_timing_read_memory(bytes, size, "wide", 0, &wb));
        if (wb) {
            CHECK_EQ_INT(wb->nconfigs, 3);
            for (int c = 0; c < 3; c++) CHECK(ramp_config_equal(&wb->configs[c], &t->configs[c]));
            CHECK_EQ_INT(wb->configs[2].two_phase, 2);
        }
        ramp_timing_free(wb);
        st_edit ed = {0};
        ed.set_key = "kernel";
        ed.set_value = "v1";
        size_t n = 0;
        void *b = bytes ? st_rebuild(bytes, size, &ed, &n) : NULL;
        if (b) expect_format(b, n, 0, "r128.w256.s3", __LINE__);
        free(b);
        free(bytes);
        t->kernel = RAMP_KERNEL_V1;
        CHECK_ERR(ramp_timing_write_memory(t, &bytes, &size), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "r128.w256.s3") && strstr(ramp_last_error(), "v1"));
        ramp_timing_free(t);
    }
    /* v2 and BF16: every tile written, wide and two-phase ones too; v2 and d
     * not a multiple of 256; a kernel out of range */
    ramp_geometry gb = g, gd = g;
    gb.bf16 = 1;
    gd.hidden = 1152;
    t = small_dataset(&gb, wide, 3);
    if (t) {
        t->kernel = RAMP_KERNEL_V2;
        bytes = NULL;
        CHECK_OK(ramp_timing_write_memory(t, &bytes, &size));
        free(bytes);
        ramp_timing_free(t);
    }
    t = small_dataset(&gd, plain, 2);
    if (t) {
        t->kernel = RAMP_KERNEL_V2;
        CHECK_ERR(ramp_timing_write_memory(t, &bytes, &size), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "1152") != NULL);
        ramp_timing_free(t);
    }
    t = small_dataset(&g, plain, 2);
    if (t) {
        t->kernel = 2;
        CHECK_ERR(ramp_timing_write_memory(t, &bytes, &size), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "kernel = 2") != NULL);
        t->kernel = -1;
        CHECK_ERR(ramp_timing_write_memory(t, &bytes, &size), RAMP_ERR_INVALID_ARGUMENT);
    }
    ramp_timing_free(t);

    ramp_kernel_version k = RAMP_KERNEL_V1;
    CHECK_OK(ramp_kernel_version_parse("v2", &k));
    CHECK_EQ_INT(k, RAMP_KERNEL_V2);
    CHECK_ERR(ramp_kernel_version_parse("v3", &k), RAMP_ERR_NOT_FOUND);
    CHECK(strstr(ramp_last_error(), "v3") != NULL);
    CHECK(strcmp(ramp_kernel_version_name(RAMP_KERNEL_V1), "v1") == 0 &&
          strcmp(ramp_kernel_version_name(RAMP_KERNEL_V2), "v2") == 0 &&
          strcmp(ramp_kernel_version_name((ramp_kernel_version)7), "?") == 0);
}

/* The weight layout (metadata "weights"): stage units read back as units,
 * row-major has no key (older files and their checksums unchanged), "rows"
 * said explicitly reads as row-major; an unknown value is refused on
 * reading, naming the key; units are kernel v2's (a v1 dataset with units
 * is refused on writing and, relabelled, on reading). */
static void test_weights(void) {
    ramp_geometry g = {.experts = 4, .topk = 2, .inter = 256, .hidden = 1024, .bf16 = 0};
    static const char *const cfgs[3] = {"r8.w128.s3", "r128.w256.s3", "r128.w128.s4.ph2.dk2"};
    ramp_timing *t = small_dataset(&g, cfgs, 3);
    if (!t) return;
    void *bytes = NULL, *rows = NULL;
    size_t size = 0, rsize = 0;
    t->kernel = RAMP_KERNEL_V2;
    CHECK_EQ_INT(t->weight_units, 0); /* ramp_timing_create's default */
    CHECK_OK(ramp_timing_write_memory(t, &rows, &rsize));
    CHECK(rows && !header_has(rows, rsize, "\"weights\""));
    t->weight_units = 1;
    CHECK_OK(ramp_timing_write_memory(t, &bytes, &size));
    CHECK(bytes && header_has(bytes, size, "\"weights\":\"units\""));
    ramp_timing *back = NULL;
    if (bytes) CHECK_OK(ramp_timing_read_memory(bytes, size, "units", 0, &back));
    if (back) {
        CHECK_EQ_INT(back->weight_units, 1);
        CHECK_EQ_INT(back->kernel, RAMP_KERNEL_V2);
        CHECK(back->checksum == 1);
        for (int i = 0; i < 6; i++) CHECK(back->times_us[i] == t->times_us[i]);
    }
    ramp_timing_free(back);
    back = NULL;
    if (rows) CHECK_OK(ramp_timing_read_memory(rows, rsize, "rows", 0, &back));
    if (back) CHECK_EQ_INT(back->weight_units, 0);
    ramp_timing_free(back);
    static const char *const bad[4] = {"tiles", "", "Units", "units "};
    for (int i = 0; i < 4 && bytes; i++) {
        st_edit ed = {0};
        ed.set_key = "weights";
        ed.set_value = bad[i];
        size_t n = 0;
        void *b = st_rebuild(bytes, size, &ed, &n);
        CHECK(b != NULL);
        if (b) expect_format(b, n, 0, "'weights'", __LINE__);
        if (b && bad[i][0]) CHECK(strstr(ramp_last_error(), bad[i]) != NULL);
        free(b);
    }
    if (bytes) {
        st_edit ed = {0};
        ed.set_key = "weights";
        ed.set_value = "rows";
        size_t n = 0;
        void *b = st_rebuild(bytes, size, &ed, &n);
        back = NULL;
        if (b) CHECK_OK(ramp_timing_read_memory(b, n, "rows", 0, &back));
        if (back) CHECK_EQ_INT(back->weight_units, 0);
        ramp_timing_free(back);
        free(b);
    }
    free(bytes);
    free(rows);
    /* kernel v1 with units, and a value out of range: refused on writing */
    static const char *const plain[2] = {"r8.w128.s3", "r32.w256.s2"};
    ramp_timing *t1 = small_dataset(&g, plain, 2);
    if (t1) {
        t1->weight_units = 1;
        CHECK_ERR(ramp_timing_write_memory(t1, &bytes, &size), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "stage units") && strstr(ramp_last_error(), "v1"));
        /* written as v2, relabelled v1 (key removed): refused on reading */
        t1->kernel = RAMP_KERNEL_V2;
        bytes = NULL;
        CHECK_OK(ramp_timing_write_memory(t1, &bytes, &size));
        st_edit ed = {0};
        ed.set_key = "kernel";
        size_t n = 0;
        void *b = bytes ? st_rebuild(bytes, size, &ed, &n) : NULL;
        if (b) expect_format(b, n, 0, "stage units", __LINE__);
        free(b);
        free(bytes);
        t1->kernel = RAMP_KERNEL_V2;
        t1->weight_units = 2;
        CHECK_ERR(ramp_timing_write_memory(t1, &bytes, &size), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "weight_units = 2") != NULL);
    }
    ramp_timing_free(t1);
    ramp_timing_free(t);
}

/* Kernel v2's space against a count made by hand: the v1 space's plain,
 * ungrouped, split-K-1 configurations whose width divides h (rows 10 x
 * stages 3 x widths; the largest, r64.w512.s4, needs 205,376 B of shared
 * memory, under the 232,448 B a block may have). Qwen3-30B EP8 (h = 768:
 * widths 128, 256): 60 of 180; DeepSeek-V3 EP8 (h = 2048, d = 7168: all
 * three widths): 90 of 378 (its split-K ones, rows <= 8, left out too).
 * Then v2's wide tiles (rows 128), fused or in two launches with 1, 2 or 4
 * K parts dividing h / 128, at stages 3 and 4 where they fit (4 only at
 * w = 128: 3 x 48.5 KB slots at w 256 / 512): Qwen3 (h / 128 = 6: parts
 * 1, 2) w128 2 x 3 + w256 1 x 3 = 9; DeepSeek-V3 (16: parts 1, 2, 4)
 * w128 2 x 4 + w256 4 + w512 4 = 16; each plain, with token rows by TMA
 * (.tx) and with weight multicast too (.mc.tx): 27 and 48. Then v2's
 * split-K over a cluster of two: rows {4, 8, 16, 24, 32} x widths
 * {128, 256} x 4 stages = 10 on both. Last the narrow two-phase tiles,
 * rows {16, 32, 64} x width 128 x 4 stages with 4 or 8 K parts where they
 * divide h / 128: none on Qwen3 (6), 6 on DeepSeek-V3 (16). */
static void test_kernel_space(void) {
    static const struct { const char *model; int v1, v2, widths, wide, ks, ns; } want[2] = {
        {"qwen3-30b", 180, 97, 2, 27, 10, 0}, {"deepseek-v3", 378, 154, 3, 48, 10, 6}};
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    for (int m = 0; m < 2; m++) {
        ramp_model md;
        ramp_layout L;
        ramp_geometry g;
        CHECK_OK(ramp_model_lookup(want[m].model, &md));
        CHECK_OK(ramp_layout_parse("EP8", &L));
        CHECK_OK(ramp_geometry_for(&md, L, &g));
        g.bf16 = 0;
        ramp_config *s1 = NULL, *s2 = NULL;
        int n1 = 0, n2 = 0;
        CHECK_OK(ramp_config_space_for(RAMP_KERNEL_V1, &g, &lim, &s1, &n1));
        CHECK_OK(ramp_config_space_for(RAMP_KERNEL_V2, &g, &lim, &s2, &n2));
        CHECK_EQ_INT(n1, want[m].v1);
        CHECK_EQ_INT(n2, want[m].v2);
        const int tail = want[m].wide + want[m].ks + want[m].ns; /* after v1's */
        CHECK_EQ_INT(n2, 10 * 3 * want[m].widths + tail);
        /* exactly v1's plain, ungrouped, split-K-1 configurations, in order */
        int j = 0;
        for (int i = 0; i < n1 && s1 && s2; i++) {
            const ramp_config *c = &s1[i];
            if (c->persistent || c->grouped || c->splitk != 1) continue;
            CHECK(j < n2 && ramp_config_equal(c, &s2[j]));
            j++;
        }
        CHECK_EQ_INT(j, n2 - tail);
        for (; j < n2 - want[m].ks - want[m].ns && s2; j++) { /* the wide tiles, each one v2 runs */
            ramp_moe_variant v;
            memset(&v, 0, sizeof v);
            v.cfg = s2[j];
            v.geom = g;
            CHECK(s2[j].rows == 128 && !s2[j].persistent && s2[j].splitk == 1);
            /* in threes: plain, .tx, .mc.tx of one tile */
            const int vi = (j - (n2 - tail)) % 3;
            CHECK(s2[j].tma_x == (vi >= 1) && s2[j].mcast == (vi == 2));
            CHECK(s2[j].stages == 3 || s2[j].stages == 4);
            CHECK_OK(ramp_moe_v2_check(&v));
            CHECK(ramp_moe_v1_check(&v) != RAMP_OK);
            ramp_resources r;
            CHECK_OK(ramp_config_resources(&s2[j], &g, &lim, &r));
            CHECK(r.valid && r.blocks_per_sm == 1 && r.threads == 384);
        }
        for (; j < n2 - want[m].ns && s2; j++) { /* then split-K, which only v2 runs so */
            ramp_moe_variant v;
            memset(&v, 0, sizeof v);
            v.cfg = s2[j];
            v.geom = g;
            CHECK(s2[j].rows <= 32 && s2[j].splitk == 2 && s2[j].stages == 4 &&
                  !s2[j].persistent && !s2[j].two_phase);
            CHECK_OK(ramp_moe_v2_check(&v));
            ramp_resources r;
            CHECK_OK(ramp_config_resources_for(RAMP_KERNEL_V2, &s2[j], &g, &lim, &r));
            CHECK(r.valid && r.blocks_per_sm == 1 && r.threads == 384);
            CHECK_EQ_INT(r.smem_bytes, (int)ramp_moe_v2_layout_for(&v).total);
        }
        for (; j < n2 && s2; j++) { /* last the narrow two-phase tiles */
            ramp_moe_variant v;
            memset(&v, 0, sizeof v);
            v.cfg = s2[j];
            v.geom = g;
            CHECK((s2[j].rows == 16 || s2[j].rows == 32 || s2[j].rows == 64) &&
                  s2[j].width == 128 && s2[j].stages == 4 && s2[j].splitk == 1 &&
                  !s2[j].persistent && !s2[j].tma_x && !s2[j].mcast);
            CHECK((s2[j].two_phase == 4 || s2[j].two_phase == 8) &&
                  (g.inter / 128) % s2[j].two_phase == 0);
            CHECK_OK(ramp_moe_v2_check(&v));
            ramp_resources r;
            CHECK_OK(ramp_config_resources_for(RAMP_KERNEL_V2, &s2[j], &g, &lim, &r));
            CHECK(r.valid && r.blocks_per_sm == 1 && r.threads == 384);
        }
        ramp_timing *t = NULL;
        CHECK_OK(ramp_timing_create_space_for(RAMP_KERNEL_V2, &md, "EP8", &g, &lim, &t));
        if (t) {
            CHECK_EQ_INT(t->kernel, RAMP_KERNEL_V2);
            CHECK_EQ_INT(t->nconfigs, want[m].v2);
            for (int c = 0; c < t->nconfigs; c++) CHECK_EQ_INT(t->blocks_per_sm[c], 1);
        }
        ramp_timing_free(t);
        /* BF16: v2's space is its FP8 space less what a 2-byte
         * intermediate or v1's BF16 space leaves out, wide tiles included */
        free(s2);
        s2 = NULL;
        g.bf16 = 1;
        CHECK_OK(ramp_config_space_for(RAMP_KERNEL_V2, &g, &lim, &s2, &n2));
        CHECK(n2 > 0 && n2 <= want[m].v2);
        int two = 0;
        for (int c = 0; c < n2; c++) two += s2[c].two_phase > 0;
        CHECK(two > 0);
        free(s1);
        free(s2);
    }
}

int main(void) {
    ramp_rng_seed(&rng, check_seed());
    test_placement();
    test_kernel();
    test_weights();
    test_kernel_space();
    test_round_trip();
    test_arguments();
    test_corrupt();
    test_checksum();
    return check_finish("test_timing");
}
