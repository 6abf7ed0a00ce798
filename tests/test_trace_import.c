/*
 * test_trace_import.c - SGLang expert-distribution import: every real dump in
 * data/routing/deepseek-v3-sglang is imported and compared with values read
 * here from the JSON by an independent scanner (no cJSON), plus figures
 * computed once with Python; then bad dumps are refused with messages naming
 * the layer and expert.
 */
#include "check.h"
#include "safetensors.h"
#include "st_util.h"

#include <dirent.h>
#include <unistd.h>

/* Reads {"logical_count": [[n, ...], ...]} with strtod; returns rows. */
static double *scan_dump(const char *text, int *nrows, int *ncols) {
    const char *p = strstr(text, "\"logical_count\"");
    if (!p) return NULL;
    p = strchr(p, '[');
    if (!p) return NULL;
    p++;
    size_t cap = 1 << 16, n = 0;
    double *v = malloc(cap * sizeof *v);
    int rows = 0, cols = -1;
    for (;;) {
        while (*p == ' ' || *p == ',' || *p == '\n') p++;
        if (*p == ']') break;
        if (*p != '[') {
            free(v);
            return NULL;
        }
        p++;
        int c = 0;
        for (;;) {
            while (*p == ' ' || *p == ',' || *p == '\n') p++;
            if (*p == ']') {
                p++;
                break;
            }
            char *end;
            double x = strtod(p, &end);
            if (end == p) {
                free(v);
                return NULL;
            }
            p = end;
            if (n == cap) v = realloc(v, (cap *= 2) * sizeof *v);
            v[n++] = x;
            c++;
        }
        if (cols >= 0 && c != cols) {
            free(v);
            return NULL;
        }
        cols = c;
        rows++;
    }
    *nrows = rows;
    *ncols = cols;
    return v;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_real_dumps(void) {
    const char *data = getenv("RAMP_DATA_DIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/routing/deepseek-v3-sglang",
             data && *data ? data : "data");
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d) return;
    char *names[64];
    int nfiles = 0;
    struct dirent *e;
    while ((e = readdir(d)) && nfiles < 64) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".json") == 0)
            names[nfiles++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)nfiles, sizeof *names, cmp_str);
    CHECK_EQ_INT(nfiles, 12);
    ramp_model ds;
    CHECK_OK(ramp_model_lookup("deepseek-v3", &ds));
    char out[512];
    snprintf(out, sizeof out, "%s/import-%ld.safetensors", check_tmpdir(),
             (long)getpid());
    for (int f = 0; f < nfiles; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        size_t size;
        char *text = st_slurp(path, &size);
        CHECK(text != NULL);
        if (!text) continue;
        text = realloc(text, size + 1);
        text[size] = 0;
        int rows = 0, cols = 0;
        double *v = scan_dump(text, &rows, &cols);
        CHECK(v != NULL);
        CHECK_EQ_INT(rows, 61);
        CHECK_EQ_INT(cols, 256);
        ramp_trace *t = NULL;
        CHECK_OK(ramp_trace_import_sglang(path, &ds, "serving", &t));
        if (!t || !v) {
            free(v);
            free(text);
            continue;
        }
        CHECK_EQ_INT(t->records, 58);
        CHECK_EQ_INT(t->experts, 256);
        CHECK_EQ_INT(t->topk, 8);
        CHECK_EQ_INT(t->aggregate, 1);
        CHECK(t->topk_ids == NULL);
        CHECK(strcmp(t->model, "DeepSeek-V3") == 0);
        CHECK(strcmp(t->domain, "serving") == 0);
        CHECK(strstr(t->source, names[f]) != NULL);
        /* Reference: nonzero rows in order, tokens = sum / 8 rounded. */
        int rec = 0, bad = 0;
        for (int l = 0; l < rows; l++) {
            double sum = 0;
            for (int x = 0; x < cols; x++) sum += v[l * cols + x];
            if (sum == 0) {
                CHECK(l < 3); /* DeepSeek-V3's dense layers */
                continue;
            }
            if (rec >= t->records) {
                bad++;
                break;
            }
            bad += t->layer[rec] != rec;
            bad += t->step[rec] != 0;
            bad += t->tokens[rec] != (int32_t)floor(sum / 8 + 0.5);
            for (int x = 0; x < cols; x++)
                bad += t->counts[(int64_t)rec * 256 + x] != (int32_t)v[l * cols + x];
            rec++;
        }
        CHECK_EQ_INT(rec, 58);
        CHECK_EQ_INT(bad, 0);
        /* Figures computed once with Python's json module. */
        if (strcmp(names[f], "prefill_in512.json") == 0) {
            CHECK_EQ_INT(t->counts[0], 386816);
            CHECK_EQ_INT(t->counts[4], 924779);
            CHECK_EQ_INT(t->tokens[0], 67108864 / 8);
            CHECK_EQ_INT(t->counts[57 * 256 + 255], 68690);
        }
        if (strcmp(names[f], "prefill_in2000out100.json") == 0) {
            CHECK_EQ_INT(t->tokens[0], 61379536);
            CHECK_EQ_INT(t->tokens[1], 61381872);
            CHECK_EQ_INT(t->tokens[2], 61380688);
            CHECK_EQ_INT(t->counts[10 * 256 + 100], 1303040);
        }
        /* It writes and reads back as the same aggregate trace. */
        CHECK_OK(ramp_trace_write(t, out));
        ramp_trace *back = NULL;
        CHECK_OK(ramp_trace_read(out, &back));
        if (back) {
            CHECK_EQ_INT(back->aggregate, 1);
            CHECK_EQ_INT(back->records, 58);
            CHECK(memcmp(back->counts, t->counts, 58 * 256 * 4) == 0);
            CHECK(memcmp(back->tokens, t->tokens, 58 * 4) == 0);
        }
        ramp_trace_free(back);
        ramp_trace_free(t);
        free(v);
        free(text);
        /* The wrong model (E = 128) is refused. */
        if (f == 0) {
            ramp_model q;
            CHECK_OK(ramp_model_lookup("qwen3-30b", &q));
            CHECK_ERR(ramp_trace_import_sglang(path, &q, NULL, &t), RAMP_ERR_FORMAT);
            CHECK(strstr(ramp_last_error(), "256 experts") != NULL);
        }
    }
    remove(out);
    for (int f = 0; f < nfiles; f++) free(names[f]);
}

static void expect_bad(const char *json, const char *n1, const char *n2,
                       int line) {
    ramp_model m;
    CHECK_OK(ramp_model_custom("tiny", 4, 2, 64, 64, 3, &m));
    ramp_trace *t = NULL;
    ramp_status s = ramp_trace_import_sglang_memory(json, strlen(json),
                                                    "dump.json", &m, NULL, &t);
    const char *msg = ramp_last_error();
    if (s != RAMP_ERR_FORMAT || !strstr(msg, "dump.json") ||
        (n1 && !strstr(msg, n1)) || (n2 && !strstr(msg, n2))) {
        fprintf(stderr, "line %d: %s: got %s '%s'\n", line, json,
                ramp_status_name(s), msg);
        check_failures++;
    }
    ramp_trace_free(t);
}
#define BAD(j, a, b) expect_bad(j, a, b, __LINE__)

static void test_bad_dumps(void) {
    ramp_model m;
    CHECK_OK(ramp_model_custom("tiny", 4, 2, 64, 64, 3, &m));
    /* A good one: a dense layer, then two MoE layers; floats and ints. */
    const char *good = "{\"logical_count\": [[0, 0.0, 0, 0], [1.0, 2, 3, 4],"
                       " [10, 0, 0, 1]], \"other\": 1}";
    ramp_trace *t = NULL;
    CHECK_OK(ramp_trace_import_sglang_memory(good, strlen(good), "g.json", &m,
                                             "chat", &t));
    if (t) {
        CHECK_EQ_INT(t->records, 2);
        CHECK_EQ_INT(t->tokens[0], 5);  /* 10 / 2 */
        CHECK_EQ_INT(t->tokens[1], 6);  /* 11 / 2 = 5.5 -> 6 */
        CHECK_EQ_INT(t->counts[4], 10);
        CHECK_EQ_INT(t->layer[1], 1);
        CHECK(strcmp(t->source, "sglang:g.json") == 0);
    }
    ramp_trace_free(t);
    BAD("{\"logical_count\": [[0, 0, 0, 0], [1, 2.5, 3, 4]]}", "layer 1, expert 1", "2.5");
    BAD("{\"logical_count\": [[1, 2, -3, 4]]}", "layer 0, expert 2", "-3");
    BAD("{\"logical_count\": [[1, 2, 3, 4], [1, 2, 3, \"4\"]]}", "layer 1, expert 3", "not a number");
    BAD("{\"logical_count\": [[1, 2, 3, 4], [1, 2, 3, null]]}", "layer 1, expert 3", NULL);
    BAD("{\"logical_count\": [[1, 2, 3, 1e300]]}", "layer 0, expert 3", NULL);
    BAD("{\"logical_count\": [[1, 2, 3, 3000000000]]}", "layer 0, expert 3", NULL);
    BAD("{\"logical_count\": [[1, 2, 3, NaN]]}", "JSON", NULL);
    BAD("{\"logical_count\": [[1, 2, 3]]}", "3 experts", "4");
    BAD("{\"logical_count\": [[1, 2, 3, 4, 5]]}", "5 experts", NULL);
    BAD("{\"logical_count\": [[1, 2, 3, 4], 7]}", "logical_count[1]", NULL);
    BAD("{\"logical_count\": [[0, 0, 0, 0]]}", "zero", NULL);
    BAD("{\"logical_count\": []}", "zero", NULL);
    BAD("{\"logical_count\": [[1,1,1,1],[1,1,1,1],[1,1,1,1],[1,1,1,1]]}", "3 MoE layers", NULL);
    BAD("{\"logical_count\": {}}", "logical_count", NULL);
    BAD("{\"counts\": [[1, 2, 3, 4]]}", "logical_count", NULL);
    BAD("[[1, 2, 3, 4]]", "logical_count", NULL);
    BAD("{\"logical_count\": [[1, 2, 3, 4]]", "JSON", NULL);
    BAD("", "empty", NULL);
    /* A NUL byte inside. */
    {
        ramp_model mm;
        CHECK_OK(ramp_model_custom("tiny", 4, 2, 64, 64, 3, &mm));
        const char raw[] = "{\"logical_count\": [[1, 2, 3, 4]]}\0 ";
        CHECK_ERR(ramp_trace_import_sglang_memory(raw, sizeof raw - 1, "n.json", &mm, NULL, &t),
                  RAMP_ERR_FORMAT);
    }
    /* Files: missing is IO. */
    CHECK_ERR(ramp_trace_import_sglang("/nonexistent/dump.json", &m, NULL, &t), RAMP_ERR_IO);
}

int main(void) {
    test_real_dumps();
    test_bad_dumps();
    return check_finish("test_trace_import");
}
