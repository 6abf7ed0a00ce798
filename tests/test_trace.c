/*
 * test_trace.c - routing traces: random round trips (with and without top-k
 * ids) checked element by element, validation on append, corrupt files
 * refused with RAMP_ERR_FORMAT, atomic writes, append_file, aggregate traces
 * and the statistics (against values computed here independently).
 */
#include "check.h"
#include "internal.h"
#include "safetensors.h"
#include "st_util.h"

#include <unistd.h>

static ramp_rng rng;

/* Draws k distinct experts for one token (partial Fisher-Yates). */
static void draw_ids(int E, int k, int *perm, int32_t *ids) {
    for (int e = 0; e < E; e++) perm[e] = e;
    for (int j = 0; j < k; j++) {
        int r = j + (int)ramp_rng_below(&rng, (uint32_t)(E - j));
        int tmp = perm[j];
        perm[j] = perm[r];
        perm[r] = tmp;
        ids[j] = perm[j];
    }
}

typedef struct {
    int E, k, R;
    int32_t *step, *layer, *tokens, *counts, *ids;
    int64_t rows;
} ref_trace;

static void ref_free(ref_trace *r) {
    free(r->step);
    free(r->layer);
    free(r->tokens);
    free(r->counts);
    free(r->ids);
}

/* A random per-batch trace kept aside as the reference. */
static ref_trace ref_random(int E, int k, int R, int max_tokens) {
    ref_trace r = {E, k, R, NULL, NULL, NULL, NULL, NULL, 0};
    r.step = calloc((size_t)R, 4);
    r.layer = calloc((size_t)R, 4);
    r.tokens = calloc((size_t)R, 4);
    r.counts = calloc((size_t)R * (size_t)E, 4);
    int64_t total = 0;
    for (int i = 0; i < R; i++) {
        r.step[i] = i / 3;
        r.layer[i] = (int32_t)ramp_rng_below(&rng, 60);
        /* Some empty batches. */
        r.tokens[i] = ramp_rng_below(&rng, 6) == 0
                          ? 0
                          : (int32_t)ramp_rng_below(&rng, (uint32_t)max_tokens + 1);
        total += r.tokens[i];
    }
    r.ids = calloc((size_t)(total ? total : 1) * (size_t)k, 4);
    int *perm = calloc((size_t)E, sizeof *perm);
    int64_t row = 0;
    for (int i = 0; i < R; i++) {
        for (int t = 0; t < r.tokens[i]; t++, row++) {
            draw_ids(E, k, perm, r.ids + row * k);
            for (int j = 0; j < k; j++) r.counts[(int64_t)i * E + r.ids[row * k + j]]++;
        }
    }
    r.rows = row;
    free(perm);
    return r;
}

static ramp_trace *trace_from_ref(const ref_trace *r, int with_ids) {
    ramp_trace *t = NULL;
    CHECK_OK(ramp_trace_create("test-model", "code", "unit test", r->E, r->k, &t));
    if (!t) return NULL;
    int64_t row = 0;
    for (int i = 0; i < r->R; i++) {
        CHECK_OK(ramp_trace_append(t, r->step[i], r->layer[i], r->tokens[i],
                                   r->counts + (int64_t)i * r->E,
                                   with_ids ? r->ids + row * r->k : NULL));
        row += r->tokens[i];
    }
    return t;
}

/* Element-by-element comparison with the reference. */
static void check_same(const ramp_trace *t, const ref_trace *r, int with_ids) {
    CHECK_EQ_INT(t->experts, r->E);
    CHECK_EQ_INT(t->topk, r->k);
    CHECK_EQ_INT(t->records, r->R);
    CHECK(strcmp(t->model, "test-model") == 0);
    CHECK(strcmp(t->domain, "code") == 0);
    CHECK(strcmp(t->source, "unit test") == 0);
    CHECK_EQ_INT(t->aggregate, 0);
    if (t->records != r->R) return;
    int bad = 0;
    for (int i = 0; i < r->R; i++) {
        bad += t->step[i] != r->step[i];
        bad += t->layer[i] != r->layer[i];
        bad += t->tokens[i] != r->tokens[i];
        for (int e = 0; e < r->E; e++)
            bad += t->counts[(int64_t)i * r->E + e] != r->counts[(int64_t)i * r->E + e];
    }
    CHECK_EQ_INT(bad, 0);
    if (with_ids && r->R > 0) { /* with no record there is nothing to say */
        CHECK(t->topk_ids != NULL);
        CHECK_EQ_INT(t->topk_rows, r->rows);
        if (t->topk_ids && t->topk_rows == r->rows)
            for (int64_t i = 0; i < r->rows * r->k; i++)
                bad += t->topk_ids[i] != r->ids[i];
        CHECK_EQ_INT(bad, 0);
    } else {
        CHECK(t->topk_ids == NULL);
    }
}

static void path_in_tmp(char *buf, size_t n, const char *name) {
    snprintf(buf, n, "%s/%s-%ld.safetensors", check_tmpdir(), name,
             (long)getpid());
}

static void test_round_trip(void) {
    char path[512];
    path_in_tmp(path, sizeof path, "trace-rt");
    for (int iter = 0; iter < 8; iter++) {
        int E = 1 + (int)ramp_rng_below(&rng, 300);
        int k = 1 + (int)ramp_rng_below(&rng, (uint32_t)(E < 8 ? E : 8));
        int R = (int)ramp_rng_below(&rng, 40); /* sometimes 0 records */
        ref_trace r = ref_random(E, k, R, 200);
        for (int with_ids = 0; with_ids < 2; with_ids++) {
            ramp_trace *t = trace_from_ref(&r, with_ids);
            if (!t) continue;
            check_same(t, &r, with_ids);
            CHECK_OK(ramp_trace_write(t, path));
            ramp_trace *back = NULL;
            CHECK_OK(ramp_trace_read(path, &back));
            if (back) check_same(back, &r, with_ids);
            /* Memory image equals the file. */
            void *mem = NULL;
            size_t msize = 0, fsize = 0;
            CHECK_OK(ramp_trace_write_memory(t, &mem, &msize));
            void *file = st_slurp(path, &fsize);
            CHECK(file && fsize == msize && memcmp(file, mem, msize) == 0);
            free(file);
            free(mem);
            ramp_trace_free(back);
            ramp_trace_free(t);
        }
        ref_free(&r);
    }
    remove(path);
}

static void test_append_validation(void) {
    ramp_trace *t = NULL;
    CHECK_ERR(ramp_trace_create("m", "d", "s", 0, 1, &t), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_trace_create("m", "d", "s", 4, 5, &t), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_trace_create("m", "d", "s", 4, 0, &t), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_trace_create("", "d", "s", 4, 2, &t), RAMP_ERR_INVALID_ARGUMENT);
    char longname[100];
    memset(longname, 'x', sizeof longname - 1);
    longname[99] = 0;
    CHECK_ERR(ramp_trace_create(longname, "d", "s", 4, 2, &t),
              RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_trace_create("m", longname, "s", 4, 2, &t),
              RAMP_ERR_INVALID_ARGUMENT);
    CHECK_OK(ramp_trace_create("m", NULL, NULL, 4, 2, &t));
    if (!t) return;
    int32_t ok_counts[4] = {1, 2, 0, 1};       /* 2 tokens x 2 */
    int32_t ok_ids[4] = {0, 1, 1, 3};
    CHECK_OK(ramp_trace_append(t, 0, 0, 2, ok_counts, ok_ids));
    int32_t c_sum[4] = {1, 2, 0, 0};
    CHECK_ERR(ramp_trace_append(t, 0, 1, 2, c_sum, NULL), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_trace_append(t, 0, 1, 2, c_sum, ok_ids), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "sum to 3") != NULL);
    int32_t c_neg[4] = {3, 2, -1, 0};
    CHECK_ERR(ramp_trace_append(t, 0, 1, 2, c_neg, ok_ids), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "expert 0") || strstr(ramp_last_error(), "expert 2"));
    int32_t c_big[4] = {3, 1, 0, 0}; /* sums right but 3 > 2 tokens */
    CHECK_ERR(ramp_trace_append(t, 0, 1, 2, c_big, NULL), RAMP_ERR_INVALID_ARGUMENT);
    int32_t ids_range[4] = {0, 4, 1, 3};
    CHECK_ERR(ramp_trace_append(t, 0, 1, 2, ok_counts, ids_range), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "expert id 4") != NULL);
    int32_t ids_neg[4] = {0, -1, 1, 3};
    CHECK_ERR(ramp_trace_append(t, 0, 1, 2, ok_counts, ids_neg), RAMP_ERR_INVALID_ARGUMENT);
    int32_t ids_dup[4] = {1, 1, 0, 3};
    int32_t c_dup[4] = {1, 2, 0, 1};
    CHECK_ERR(ramp_trace_append(t, 0, 1, 2, c_dup, ids_dup), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "twice") != NULL);
    int32_t ids_hist[4] = {0, 2, 1, 3}; /* histogram 1,1,1,1 != counts */
    CHECK_ERR(ramp_trace_append(t, 0, 1, 2, ok_counts, ids_hist), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_trace_append(t, 0, 1, -1, ok_counts, NULL), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_trace_append(t, -1, 1, 2, ok_counts, ok_ids), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_trace_append(t, 0, -1, 2, ok_counts, ok_ids), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_trace_append(t, 0, 1, 2, NULL, ok_ids), RAMP_ERR_INVALID_ARGUMENT);
    /* Mixing records with and without ids. */
    CHECK_ERR(ramp_trace_append(t, 0, 1, 2, ok_counts, NULL), RAMP_ERR_INVALID_ARGUMENT);
    /* Nothing was added by the failures. */
    CHECK_EQ_INT(t->records, 1);
    CHECK_EQ_INT(t->topk_rows, 2);
    CHECK_OK(ramp_trace_append(t, 1, 0, 0, (int32_t[4]){0, 0, 0, 0}, ok_ids));
    CHECK_EQ_INT(t->records, 2);
    /* Aggregate traces hold no ids. */
    ramp_trace *a = NULL;
    CHECK_OK(ramp_trace_create("m", "d", "s", 4, 2, &a));
    if (a) {
        a->aggregate = 1;
        CHECK_ERR(ramp_trace_append(a, 0, 0, 2, ok_counts, ok_ids), RAMP_ERR_INVALID_ARGUMENT);
        ramp_trace_free(a);
    }
    ramp_trace_free(t);
}

/* Writes a small valid trace with ids into memory. */
static void *valid_bytes(size_t *size, ref_trace *r) {
    *r = ref_random(6, 2, 5, 4);
    /* Make sure record 0 has tokens so that its ids exist. */
    if (r->tokens[0] == 0) {
        ref_free(r);
        return valid_bytes(size, r);
    }
    ramp_trace *t = trace_from_ref(r, 1);
    void *mem = NULL;
    CHECK_OK(ramp_trace_write_memory(t, &mem, size));
    ramp_trace_free(t);
    return mem;
}

static void expect_format(void *bytes, size_t size, const char *needle,
                          int line) {
    ramp_trace *t = NULL;
    ramp_status s = ramp_trace_read_memory(bytes, size, "bad.trace", &t);
    const char *msg = ramp_last_error();
    if (s != RAMP_ERR_FORMAT || !strstr(msg, "bad.trace") ||
        (needle && !strstr(msg, needle))) {
        fprintf(stderr, "line %d: got %s '%s', wanted FORMAT with '%s'\n",
                line, ramp_status_name(s), msg, needle ? needle : "");
        check_failures++;
    }
    ramp_trace_free(t);
}
#define EXPECT_FORMAT(b, n, needle) expect_format(b, n, needle, __LINE__)

static void test_corrupt(void) {
    size_t size;
    ref_trace r;
    uint8_t *good = valid_bytes(&size, &r);
    ramp_trace *t = NULL;
    CHECK_OK(ramp_trace_read_memory(good, size, "good", &t));
    ramp_trace_free(t);

    /* Truncated at every length. */
    int bad = 0;
    for (size_t n = 0; n < size; n++) {
        uint8_t *c = malloc(n ? n : 1);
        memcpy(c, good, n);
        t = NULL;
        if (ramp_trace_read_memory(c, n, "cut", &t) != RAMP_ERR_FORMAT) bad++;
        ramp_trace_free(t);
        free(c);
    }
    CHECK_EQ_INT(bad, 0);

    uint8_t *c = malloc(size);
#define FRESH() memcpy(c, good, size)
    /* Counts that do not sum to tokens * topk. */
    FRESH();
    int32_t v0 = r.counts[0];
    CHECK(st_patch_i32(c, size, "counts", 0, v0 + 1));
    EXPECT_FORMAT(c, size, "record 0");
    /* A negative count. */
    FRESH();
    CHECK(st_patch_i32(c, size, "counts", 1, -5));
    EXPECT_FORMAT(c, size, "negative");
    /* Tokens changed: the sum no longer matches (and ids rows mismatch). */
    FRESH();
    CHECK(st_patch_i32(c, size, "tokens", 0, r.tokens[0] + 1));
    EXPECT_FORMAT(c, size, "topk_ids");
    FRESH();
    CHECK(st_patch_i32(c, size, "tokens", 0, -1));
    EXPECT_FORMAT(c, size, NULL);
    /* An id out of range, a negative one, a repeated one. */
    FRESH();
    CHECK(st_patch_i32(c, size, "topk_ids", 0, 6));
    EXPECT_FORMAT(c, size, "expert id 6");
    FRESH();
    CHECK(st_patch_i32(c, size, "topk_ids", 1, -1));
    EXPECT_FORMAT(c, size, "expert id -1");
    FRESH();
    {
        int32_t other = r.ids[0];
        CHECK(st_patch_i32(c, size, "topk_ids", 1, other));
        EXPECT_FORMAT(c, size, "twice");
    }
    FRESH();
    CHECK(st_patch_i32(c, size, "topk_ids", 0, (r.ids[0] + 1) % 6 == r.ids[1]
                                                    ? (r.ids[0] + 2) % 6
                                                    : (r.ids[0] + 1) % 6));
    EXPECT_FORMAT(c, size, "topk_ids send");
    FRESH();
    CHECK(st_patch_i32(c, size, "step", 0, -3));
    EXPECT_FORMAT(c, size, "step");
    /* A byte of the header changed into garbage. */
    FRESH();
    c[8] = 'x';
    EXPECT_FORMAT(c, size, "JSON");
#undef FRESH
    free(c);

    /* Edits that need the file rebuilt. */
    struct {
        st_edit ed;
        const char *needle;
    } edits[] = {
        {{.set_key = "format", .set_value = "ramp-timing"}, "ramp-trace"},
        {{.set_key = "format", .set_value = NULL}, "format"},
        {{.set_key = "experts", .set_value = "7"}, "counts"},
        {{.set_key = "experts", .set_value = "six"}, "experts"},
        {{.set_key = "experts", .set_value = "0"}, "experts"},
        {{.set_key = "experts", .set_value = NULL}, "experts"},
        {{.set_key = "topk", .set_value = "3"}, "topk_ids"},
        {{.set_key = "topk", .set_value = "7"}, "topk"},
        {{.set_key = "model", .set_value = NULL}, "model"},
        {{.set_key = "model", .set_value = ""}, "model"},
        {{.set_key = "model", .set_value = "0123456789012345678901234567890123456789012345678"}, "model"},
        {{.set_key = "aggregate", .set_value = "2"}, "aggregate"},
        {{.set_key = "aggregate", .set_value = "1"}, "aggregate"},
        {{.drop = "tokens"}, "'tokens' is missing"},
        {{.drop = "counts"}, "'counts' is missing"},
        {{.drop = "step"}, "'step' is missing"},
        {{.add = "extra"}, "unexpected tensor 'extra'"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        size_t n;
        void *b = st_rebuild(good, size, &edits[i].ed, &n);
        CHECK(b != NULL);
        if (b) expect_format(b, n, edits[i].needle, __LINE__ * 1000 + (int)i);
        free(b);
    }
    /* A newer version is unsupported, not corrupt. */
    {
        st_edit ed = {.set_key = "version", .set_value = "2"};
        size_t n;
        void *b = st_rebuild(good, size, &ed, &n);
        t = NULL;
        CHECK_ERR(ramp_trace_read_memory(b, n, "v2", &t), RAMP_ERR_UNSUPPORTED);
        free(b);
    }
    /* Wrong dtype and shapes of a tensor. */
    {
        int64_t data64[5 * 6] = {0};
        int32_t data32[5 * 7] = {0};
        struct {
            st_edit ed;
            const char *needle;
        } reps[] = {
            {{.replace = "counts", .dtype = RAMP_ST_I64, .ndim = 2,
              .shape = {5, 6}, .data = data64}, "dtype I64"},
            {{.replace = "counts", .dtype = RAMP_ST_F32, .ndim = 2,
              .shape = {5, 6}, .data = data32}, "dtype F32"},
            {{.replace = "counts", .dtype = RAMP_ST_I32, .ndim = 2,
              .shape = {5, 7}, .data = data32}, "shape[1] = 7"},
            {{.replace = "counts", .dtype = RAMP_ST_I32, .ndim = 1,
              .shape = {30}, .data = data32}, "dimensions"},
            {{.replace = "tokens", .dtype = RAMP_ST_I32, .ndim = 1,
              .shape = {4}, .data = data32}, "shape[0] = 4"},
            {{.replace = "topk_ids", .dtype = RAMP_ST_I32, .ndim = 2,
              .shape = {1, 2}, .data = data32}, "rows"},
        };
        for (size_t i = 0; i < sizeof reps / sizeof reps[0]; i++) {
            size_t n;
            void *b = st_rebuild(good, size, &reps[i].ed, &n);
            CHECK(b != NULL);
            if (b) expect_format(b, n, reps[i].needle, __LINE__ * 1000 + (int)i);
            free(b);
        }
    }
    ref_free(&r);
    free(good);
}

static void test_aggregate(void) {
    char path[512];
    path_in_tmp(path, sizeof path, "trace-agg");
    ramp_trace *t = NULL;
    CHECK_OK(ramp_trace_create("agg-model", "chat", "sums", 5, 3, &t));
    if (!t) return;
    t->aggregate = 1;
    /* sum 1000 = 333*3 + 1: tokens 333 is the rounded quotient. */
    int32_t c1[5] = {600, 100, 100, 100, 100};
    CHECK_OK(ramp_trace_append(t, 0, 0, 333, c1, NULL));
    /* sum 1001 -> 333.67 rounds to 334 (off by 1 < 3 either way). */
    int32_t c2[5] = {601, 100, 100, 100, 100};
    CHECK_OK(ramp_trace_append(t, 0, 1, 334, c2, NULL));
    /* Too far: 1000 vs 330*3 = 990. */
    CHECK_ERR(ramp_trace_append(t, 0, 2, 330, c1, NULL), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_OK(ramp_trace_write(t, path));
    ramp_trace *back = NULL;
    CHECK_OK(ramp_trace_read(path, &back));
    if (back) {
        CHECK_EQ_INT(back->aggregate, 1);
        CHECK_EQ_INT(back->records, 2);
        CHECK_EQ_INT(back->tokens[1], 334);
        CHECK_EQ_INT(back->counts[5], 601);
    }
    /* The same bytes marked per-batch are refused. */
    size_t n;
    void *bytes = st_slurp(path, &n);
    st_edit ed = {.set_key = "aggregate", .set_value = "0"};
    size_t n2;
    void *b2 = st_rebuild(bytes, n, &ed, &n2);
    ramp_trace *x = NULL;
    CHECK_ERR(ramp_trace_read_memory(b2, n2, "agg0", &x), RAMP_ERR_FORMAT);
    /* And a file without the key reads as per-batch (and so fails here). */
    st_edit ed2 = {.set_key = "aggregate", .set_value = NULL};
    free(b2);
    b2 = st_rebuild(bytes, n, &ed2, &n2);
    CHECK_ERR(ramp_trace_read_memory(b2, n2, "agg-none", &x), RAMP_ERR_FORMAT);
    free(b2);
    free(bytes);
    ramp_trace_free(back);
    ramp_trace_free(t);
    remove(path);
}

static void test_files(void) {
    char path[512], dirpath[512];
    path_in_tmp(path, sizeof path, "trace-af");
    remove(path);
    ref_trace a = ref_random(16, 4, 7, 50), b = ref_random(16, 4, 5, 50);
    ramp_trace *ta = trace_from_ref(&a, 1), *tb = trace_from_ref(&b, 1);
    /* append_file creates the file, then appends to it. */
    CHECK_OK(ramp_trace_append_file(path, ta));
    CHECK_OK(ramp_trace_append_file(path, tb));
    ramp_trace *back = NULL;
    CHECK_OK(ramp_trace_read(path, &back));
    if (back) {
        CHECK_EQ_INT(back->records, 12);
        CHECK_EQ_INT(back->topk_rows, a.rows + b.rows);
        int bad = 0;
        for (int i = 0; i < 12 && back->records == 12; i++) {
            const ref_trace *r = i < 7 ? &a : &b;
            int j = i < 7 ? i : i - 7;
            bad += back->tokens[i] != r->tokens[j];
            bad += back->layer[i] != r->layer[j];
            for (int e = 0; e < 16; e++)
                bad += back->counts[i * 16 + e] != r->counts[j * 16 + e];
        }
        for (int64_t i = 0; i < a.rows * 4 && back->topk_rows == a.rows + b.rows; i++)
            bad += back->topk_ids[i] != a.ids[i];
        for (int64_t i = 0; i < b.rows * 4 && back->topk_rows == a.rows + b.rows; i++)
            bad += back->topk_ids[a.rows * 4 + i] != b.ids[i];
        CHECK_EQ_INT(bad, 0);
    }
    ramp_trace_free(back);
    /* A trace of another geometry is refused and the file is untouched. */
    size_t n0, n1;
    void *before = st_slurp(path, &n0);
    ramp_trace *other = NULL;
    CHECK_OK(ramp_trace_create("m", "d", "s", 8, 4, &other));
    CHECK_ERR(ramp_trace_append_file(path, other), RAMP_ERR_INVALID_ARGUMENT);
    /* Records without ids cannot join records with ids. */
    ramp_trace *noids = trace_from_ref(&b, 0);
    CHECK_ERR(ramp_trace_append_file(path, noids), RAMP_ERR_INVALID_ARGUMENT);
    void *after = st_slurp(path, &n1);
    CHECK(before && after && n0 == n1 && memcmp(before, after, n0) == 0);
    free(before);
    free(after);
    /* A corrupt existing file is reported, not overwritten. */
    CHECK(st_spit(path, "not a trace at all", 18));
    CHECK_ERR(ramp_trace_append_file(path, ta), RAMP_ERR_FORMAT);
    after = st_slurp(path, &n1);
    CHECK(after && n1 == 18);
    free(after);
    remove(path);

    /* Writes that fail leave nothing behind. */
    snprintf(dirpath, sizeof dirpath, "%s/no-such-dir-%ld/t.safetensors",
             check_tmpdir(), (long)getpid());
    CHECK_ERR(ramp_trace_write(ta, dirpath), RAMP_ERR_IO);
    CHECK(!st_exists(dirpath));
    CHECK_ERR(ramp_trace_append_file(dirpath, ta), RAMP_ERR_IO);
    snprintf(dirpath, sizeof dirpath, "%s/trace-isdir-%ld", check_tmpdir(),
             (long)getpid());
    mkdir(dirpath, 0700);
    CHECK_ERR(ramp_trace_write(ta, dirpath), RAMP_ERR_IO);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "trace-isdir-%ld.tmp", (long)getpid());
    CHECK_EQ_INT(st_count_prefix(check_tmpdir(), prefix), 0);
    rmdir(dirpath);
    /* A trace corrupted in memory is refused by the writer. */
    path_in_tmp(path, sizeof path, "trace-badmem");
    if (ta && ta->records > 0) {
        ta->counts[0] += 1;
        CHECK_ERR(ramp_trace_write(ta, path), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(!st_exists(path));
        ta->counts[0] -= 1;
    }
    CHECK_ERR(ramp_trace_read(path, &back), RAMP_ERR_IO);
    ramp_trace_free(ta);
    ramp_trace_free(tb);
    ramp_trace_free(other);
    ramp_trace_free(noids);
    ref_free(&a);
    ref_free(&b);
}

static int cmp_int(const void *x, const void *y) {
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}
static int cmp_dbl(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void test_stats(void) {
    int E = 64, k = 4, G = 8, R = 301;
    ramp_trace *t = NULL;
    CHECK_OK(ramp_trace_create("m", "d", "s", E, k, &t));
    if (!t) return;
    int *tok = calloc((size_t)R, sizeof *tok);
    int32_t *counts = calloc((size_t)E, 4);
    int32_t *ids = calloc((size_t)20000 * (size_t)k, 4);
    int perm[64];
    for (int i = 0; i < R; i++) {
        uint32_t kind = ramp_rng_below(&rng, 4);
        tok[i] = kind == 0 ? (int)ramp_rng_below(&rng, 4)
                 : kind == 1 ? (int)ramp_rng_below(&rng, 200)
                 : kind == 2 ? 100 + (int)ramp_rng_below(&rng, 3000)
                             : (int)ramp_rng_below(&rng, 20000);
        memset(counts, 0, (size_t)E * 4);
        /* Skewed routing: a few hot experts. */
        for (int x = 0; x < tok[i]; x++) {
            draw_ids(E, k, perm, ids + x * k);
            if (ramp_rng_below(&rng, 2) == 0) {
                int hot = (int)ramp_rng_below(&rng, 4);
                int j, dup = 0;
                for (j = 0; j < k; j++) dup |= ids[x * k + j] == hot;
                if (!dup) ids[x * k] = hot;
            }
            for (int j = 0; j < k; j++) counts[ids[x * k + j]]++;
        }
        CHECK_OK(ramp_trace_append(t, i, 0, tok[i], counts, NULL));
    }
    ramp_layout lay = {RAMP_EP, G};
    ramp_placement *p = NULL;
    CHECK_OK(ramp_placement_contiguous(E, lay, &p));
    int min_tok = 128, max_tok = 4096;
    ramp_trace_stats st;
    memset(&st, 0xAB, sizeof st); /* poison */
    CHECK_OK(ramp_trace_stats_compute(t, p, min_tok, max_tok, &st));
    /* Independent reference. */
    int *sorted = calloc((size_t)R, sizeof *sorted);
    memcpy(sorted, tok, (size_t)R * sizeof *sorted);
    qsort(sorted, (size_t)R, sizeof *sorted, cmp_int);
    double mean = 0;
    int64_t ge = 0, hist[16] = {0};
    double *imb = calloc((size_t)R, sizeof *imb);
    int nimb = 0;
    for (int i = 0; i < R; i++) {
        mean += tok[i];
        ge += tok[i] >= 128;
        int b = 0;
        if (tok[i] > 0) {
            b = 1;
            while (b < 15 && tok[i] >= (1 << b)) b++;
        }
        /* Bucket bounds by the header's definition. */
        if (b >= 1 && b < 15)
            CHECK(tok[i] >= (1 << (b - 1)) && tok[i] <= (1 << b) - 1);
        hist[b]++;
        if (tok[i] >= min_tok && tok[i] <= max_tok) {
            double gsum[8] = {0}, most = 0, total = 0;
            for (int e = 0; e < E; e++)
                gsum[e / (E / G)] += t->counts[(int64_t)i * E + e];
            for (int g = 0; g < G; g++) {
                total += gsum[g];
                if (gsum[g] > most) most = gsum[g];
            }
            imb[nimb++] = total > 0 ? most / (total / G) : 1.0;
        }
    }
    mean /= R;
    CHECK_EQ_INT(st.records, R);
    CHECK_EQ_INT(st.batches_ge128, ge);
    CHECK_NEAR(st.frac_ge128, (double)ge / R, 1e-12);
    CHECK_NEAR(st.tokens_mean, mean, 1e-9);
    CHECK_EQ_INT(st.tokens_min, sorted[0]);
    CHECK_EQ_INT(st.tokens_max, sorted[R - 1]);
    /* Nearest rank: R = 301 -> p50 at rank 151, p90 at 271, p99 at 298. */
    CHECK_EQ_INT(st.tokens_p50, sorted[150]);
    CHECK_EQ_INT(st.tokens_p90, sorted[270]);
    CHECK_EQ_INT(st.tokens_p99, sorted[297]);
    for (int b = 0; b < 16; b++) CHECK_EQ_INT(st.histogram[b], hist[b]);
    qsort(imb, (size_t)nimb, sizeof *imb, cmp_dbl);
    CHECK(nimb > 10);
    double med = nimb % 2 ? imb[nimb / 2] : 0.5 * (imb[nimb / 2 - 1] + imb[nimb / 2]);
    double pos = 0.9 * (nimb - 1);
    int lo = (int)pos;
    double p90 = lo + 1 < nimb ? imb[lo] + (pos - lo) * (imb[lo + 1] - imb[lo]) : imb[lo];
    CHECK_NEAR(st.imbalance_median, med, 1e-12);
    CHECK_NEAR(st.imbalance_p90, p90, 1e-12);
    CHECK(st.imbalance_median > 1.0);

    /* No upper bound; nothing in range gives NaN imbalance. */
    CHECK_OK(ramp_trace_stats_compute(t, p, 1 << 30, 0, &st));
    CHECK(isnan(st.imbalance_median) && isnan(st.imbalance_p90));
    CHECK_EQ_INT(st.records, R);
    /* Mismatched placement. */
    ramp_placement *p2 = NULL;
    CHECK_OK(ramp_placement_contiguous(32, lay, &p2));
    CHECK_ERR(ramp_trace_stats_compute(t, p2, 0, 0, &st), RAMP_ERR_INVALID_ARGUMENT);
    /* Empty trace. */
    ramp_trace *empty = NULL;
    CHECK_OK(ramp_trace_create("m", "d", "s", E, k, &empty));
    CHECK_OK(ramp_trace_stats_compute(empty, p, 0, 0, &st));
    CHECK_EQ_INT(st.records, 0);
    for (int b = 0; b < 16; b++) CHECK_EQ_INT(st.histogram[b], 0);
    ramp_trace_free(empty);
    ramp_placement_free(p);
    ramp_placement_free(p2);
    free(imb);
    free(sorted);
    free(tok);
    free(counts);
    free(ids);
    ramp_trace_free(t);
}

int main(void) {
    ramp_rng_seed(&rng, check_seed());
    test_round_trip();
    test_append_validation();
    test_corrupt();
    test_aggregate();
    test_files();
    test_stats();
    return check_finish("test_trace");
}
