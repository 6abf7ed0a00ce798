/*
 * trace.c - routing traces: per forward pass (step) and MoE layer, the tokens
 * in the batch and the tokens routed to each expert, optionally with the
 * router's top-k expert ids. Stored as safetensors (docs/formats.md).
 *
 * Every record is checked when appended, written and read, with one checker
 * (trace_check_record), so a file libramp writes always reads back and a
 * corrupt file is refused with the record, field and value in the message.
 */
#include "internal.h"
#include "safetensors.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define TRACE_MAX_EXPERTS (1 << 20)

static const char *const trace_tensors[] = {"step", "layer", "tokens",
                                            "counts", "topk_ids"};

void ramp_trace_free(ramp_trace *t) {
    if (!t) return;
    free(t->step);
    free(t->layer);
    free(t->tokens);
    free(t->counts);
    free(t->topk_ids);
    free(t);
}

static ramp_status copy_name(char *dst, size_t size, const char *src,
                             const char *what) {
    if (!src) src = "";
    size_t n = strlen(src);
    RAMP_CHECK(n < size, RAMP_ERR_INVALID_ARGUMENT,
               "trace %s '%.64s...' is %zu characters, at most %zu allowed",
               what, src, n, size - 1);
    memcpy(dst, src, n + 1);
    return RAMP_OK;
}

ramp_status ramp_trace_create(const char *model, const char *domain,
                              const char *source, int experts, int topk,
                              ramp_trace **out) {
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "ramp_trace_create: out is NULL");
    RAMP_CHECK(model && model[0], RAMP_ERR_INVALID_ARGUMENT,
               "ramp_trace_create: model name is NULL or empty");
    RAMP_CHECK(experts >= 1 && experts <= TRACE_MAX_EXPERTS,
               RAMP_ERR_INVALID_ARGUMENT,
               "ramp_trace_create: experts = %d outside [1, %d]", experts,
               TRACE_MAX_EXPERTS);
    RAMP_CHECK(topk >= 1 && topk <= experts, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_trace_create: topk = %d outside [1, experts = %d]", topk,
               experts);
    ramp_trace *t = ramp_calloc(1, sizeof *t);
    if (!t) return RAMP_ERR_OUT_OF_MEMORY;
    ramp_status s;
    if ((s = copy_name(t->model, sizeof t->model, model, "model")) ||
        (s = copy_name(t->domain, sizeof t->domain, domain, "domain")) ||
        (s = copy_name(t->source, sizeof t->source, source, "source"))) {
        free(t);
        return s;
    }
    t->experts = experts;
    t->topk = topk;
    *out = t;
    return RAMP_OK;
}

/* Makes room for `records` records and `rows` id rows. On failure the trace
 * is unchanged apart from possibly larger arrays. */
static ramp_status trace_reserve(ramp_trace *t, int64_t records, int64_t rows,
                                 int want_ids) {
    if (records > t->capacity) {
        int64_t cap = t->capacity ? t->capacity : 16;
        while (cap < records) cap *= 2;
        RAMP_CHECK((uint64_t)cap <= SIZE_MAX / 4 / (size_t)t->experts,
                   RAMP_ERR_OUT_OF_MEMORY, "trace of %lld records is too big",
                   (long long)cap);
        size_t n = (size_t)cap;
        int32_t *p;
        if (!(p = realloc(t->step, n * 4))) goto oom;
        t->step = p;
        if (!(p = realloc(t->layer, n * 4))) goto oom;
        t->layer = p;
        if (!(p = realloc(t->tokens, n * 4))) goto oom;
        t->tokens = p;
        if (!(p = realloc(t->counts, n * (size_t)t->experts * 4))) goto oom;
        t->counts = p;
        t->capacity = cap;
    }
    if (want_ids && (rows > t->topk_capacity || !t->topk_ids)) {
        int64_t cap = t->topk_capacity ? t->topk_capacity : 256;
        while (cap < rows) cap *= 2;
        RAMP_CHECK((uint64_t)cap <= SIZE_MAX / 4 / (size_t)t->topk,
                   RAMP_ERR_OUT_OF_MEMORY, "trace of %lld id rows is too big",
                   (long long)cap);
        int32_t *p = realloc(t->topk_ids, (size_t)cap * (size_t)t->topk * 4);
        if (!p) goto oom;
        t->topk_ids = p;
        t->topk_capacity = cap;
    }
    return RAMP_OK;
oom:
    RAMP_FAIL(RAMP_ERR_OUT_OF_MEMORY, "out of memory growing a trace to %lld "
              "records", (long long)records);
}

/* Checks one record. `where` starts each message (a file name or function);
 * `status` is the error returned (FORMAT for files, INVALID_ARGUMENT for
 * callers). row0: index of the record's first id row. scratch: [2E] int64. */
static ramp_status trace_check_record(ramp_status status, const char *where,
                                      const ramp_trace *t, int64_t r,
                                      int32_t step, int32_t layer,
                                      int32_t tokens, const int32_t *counts,
                                      const int32_t *ids, int64_t row0,
                                      int64_t *scratch) {
    const int E = t->experts, k = t->topk;
#define REC "%s: record %lld (step %d, layer %d): "
#define RECARGS where, (long long)r, (int)step, (int)layer
    RAMP_CHECK(step >= 0, status, REC "step is negative (tensor 'step')",
               RECARGS);
    RAMP_CHECK(layer >= 0, status, REC "layer is negative (tensor 'layer')",
               RECARGS);
    RAMP_CHECK(tokens >= 0, status, REC "tokens = %d is negative (tensor "
               "'tokens')", RECARGS, (int)tokens);
    int64_t sum = 0;
    for (int e = 0; e < E; e++) {
        int32_t c = counts[e];
        RAMP_CHECK(c >= 0, status, REC "count of expert %d is %d, negative "
                   "(tensor 'counts')", RECARGS, e, (int)c);
        /* A token picks k distinct experts, so no expert gets more tokens
         * than the batch has. */
        RAMP_CHECK(t->aggregate || c <= tokens, status,
                   REC "count of expert %d is %d, more than the batch's %d "
                   "tokens (tensor 'counts')", RECARGS, e, (int)c,
                   (int)tokens);
        sum += c;
    }
    int64_t want = (int64_t)tokens * k;
    if (t->aggregate) {
        int64_t diff = sum > want ? sum - want : want - sum;
        RAMP_CHECK(diff < k, status,
                   REC "counts sum to %lld, but tokens = %d is not that sum "
                   "/ topk = %d rounded (aggregate trace)", RECARGS,
                   (long long)sum, (int)tokens, k);
    } else {
        RAMP_CHECK(sum == want, status,
                   REC "counts sum to %lld, expected tokens * topk = %d * %d "
                   "= %lld (tensor 'counts')", RECARGS, (long long)sum,
                   (int)tokens, k, (long long)want);
    }
    if (!ids) return RAMP_OK;
    int64_t *hist = scratch, *seen = scratch + E;
    for (int e = 0; e < E; e++) {
        hist[e] = 0;
        seen[e] = -1;
    }
    for (int64_t i = 0; i < tokens; i++) {
        for (int j = 0; j < k; j++) {
            int32_t id = ids[i * k + j];
            RAMP_CHECK(id >= 0 && id < E, status,
                       REC "topk_ids row %lld (token %lld), slot %d: expert id "
                       "%d outside [0, %d)", RECARGS, (long long)(row0 + i),
                       (long long)i, j, (int)id, E);
            RAMP_CHECK(seen[id] != i, status,
                       REC "topk_ids row %lld (token %lld) names expert %d "
                       "twice", RECARGS, (long long)(row0 + i), (long long)i,
                       (int)id);
            seen[id] = i;
            hist[id]++;
        }
    }
    for (int e = 0; e < E; e++)
        RAMP_CHECK(hist[e] == counts[e], status,
                   REC "topk_ids send %lld tokens to expert %d but counts say "
                   "%d", RECARGS, (long long)hist[e], e, (int)counts[e]);
#undef REC
#undef RECARGS
    return RAMP_OK;
}

ramp_status ramp_trace_append(ramp_trace *t, int32_t step, int32_t layer,
                              int32_t tokens, const int32_t *counts,
                              const int32_t *ids) {
    RAMP_CHECK(t && counts, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_trace_append: NULL trace or counts");
    RAMP_CHECK(!(ids && t->aggregate), RAMP_ERR_INVALID_ARGUMENT,
               "ramp_trace_append: an aggregate trace holds no top-k ids");
    if (t->records > 0) {
        RAMP_CHECK(!ids == !t->topk_ids, RAMP_ERR_INVALID_ARGUMENT,
                   "ramp_trace_append: record %lld %s top-k ids but the "
                   "trace's earlier records %s", (long long)t->records,
                   ids ? "has" : "lacks", ids ? "do not" : "do");
    } else if (!ids && t->topk_ids) {
        /* The first record decides whether the trace carries ids. */
        free(t->topk_ids);
        t->topk_ids = NULL;
        t->topk_rows = t->topk_capacity = 0;
    }
    int64_t *scratch = ramp_calloc(2 * (size_t)t->experts, sizeof *scratch);
    if (!scratch) return RAMP_ERR_OUT_OF_MEMORY;
    ramp_status s = trace_check_record(RAMP_ERR_INVALID_ARGUMENT,
                                       "ramp_trace_append", t, t->records,
                                       step, layer, tokens, counts, ids,
                                       t->topk_rows, scratch);
    free(scratch);
    RAMP_TRY(s);
    RAMP_TRY(trace_reserve(t, t->records + 1,
                           t->topk_rows + (ids ? tokens : 0), ids != NULL));
    int64_t r = t->records;
    t->step[r] = step;
    t->layer[r] = layer;
    t->tokens[r] = tokens;
    memcpy(t->counts + r * t->experts, counts, (size_t)t->experts * 4);
    if (ids) {
        if (tokens > 0)
            memcpy(t->topk_ids + t->topk_rows * t->topk, ids,
                   (size_t)tokens * (size_t)t->topk * 4);
        t->topk_rows += tokens;
    }
    t->records++;
    return RAMP_OK;
}

/* Checks a whole trace (fields may have been set by hand) before writing. */
static ramp_status trace_check_all(ramp_status status, const char *where,
                                   const ramp_trace *t) {
    RAMP_CHECK(t->experts >= 1 && t->experts <= TRACE_MAX_EXPERTS &&
                   t->topk >= 1 && t->topk <= t->experts,
               status, "%s: bad experts = %d / topk = %d", where, t->experts,
               t->topk);
    RAMP_CHECK(memchr(t->model, 0, sizeof t->model) && t->model[0] &&
                   memchr(t->domain, 0, sizeof t->domain) &&
                   memchr(t->source, 0, sizeof t->source),
               status, "%s: model/domain/source not NUL-terminated or model "
               "empty", where);
    RAMP_CHECK(t->records >= 0 && (t->records == 0 ||
                                   (t->step && t->layer && t->tokens &&
                                    t->counts)),
               status, "%s: %lld records but no arrays", where,
               (long long)t->records);
    RAMP_CHECK(t->aggregate == 0 || t->aggregate == 1, status,
               "%s: aggregate = %d, expected 0 or 1", where, t->aggregate);
    RAMP_CHECK(!(t->aggregate && t->topk_ids), status,
               "%s: an aggregate trace holds no top-k ids", where);
    int64_t rows = 0;
    for (int64_t r = 0; r < t->records; r++) rows += t->tokens[r] > 0 ? t->tokens[r] : 0;
    RAMP_CHECK(!t->topk_ids || rows == t->topk_rows, status,
               "%s: records hold %lld tokens but topk_rows = %lld", where,
               (long long)rows, (long long)t->topk_rows);
    int64_t *scratch = ramp_calloc(2 * (size_t)t->experts, sizeof *scratch);
    if (!scratch) return RAMP_ERR_OUT_OF_MEMORY;
    int64_t row = 0;
    for (int64_t r = 0; r < t->records; r++) {
        ramp_status s = trace_check_record(
            status, where, t, r, t->step[r], t->layer[r], t->tokens[r],
            t->counts + r * t->experts,
            t->topk_ids ? t->topk_ids + row * t->topk : NULL, row, scratch);
        if (s != RAMP_OK) {
            free(scratch);
            return s;
        }
        row += t->tokens[r];
    }
    free(scratch);
    return RAMP_OK;
}

static ramp_status trace_writer(const ramp_trace *t, const char *where,
                                ramp_st_writer **out) {
    RAMP_TRY(trace_check_all(RAMP_ERR_INVALID_ARGUMENT, where, t));
    ramp_st_writer *w;
    RAMP_TRY(ramp_st_writer_create(&w));
    int64_t r = t->records;
    int64_t shape_re[2] = {r, t->experts};
    int64_t shape_ids[2] = {t->topk_rows, t->topk};
    ramp_status s;
    if ((s = ramp_st_writer_meta(w, "format", "ramp-trace")) ||
        (s = ramp_st_writer_meta(w, "version", "1")) ||
        (s = ramp_st_writer_meta(w, "model", t->model)) ||
        (s = ramp_st_writer_meta_int(w, "experts", t->experts)) ||
        (s = ramp_st_writer_meta_int(w, "topk", t->topk)) ||
        (s = ramp_st_writer_meta(w, "domain", t->domain)) ||
        (s = ramp_st_writer_meta(w, "source", t->source)) ||
        (s = ramp_st_writer_meta(w, "aggregate", t->aggregate ? "1" : "0")) ||
        (s = ramp_st_writer_add(w, "step", RAMP_ST_I32, 1, &r, t->step)) ||
        (s = ramp_st_writer_add(w, "layer", RAMP_ST_I32, 1, &r, t->layer)) ||
        (s = ramp_st_writer_add(w, "tokens", RAMP_ST_I32, 1, &r, t->tokens)) ||
        (s = ramp_st_writer_add(w, "counts", RAMP_ST_I32, 2, shape_re,
                                t->counts)) ||
        (t->topk_ids && (s = ramp_st_writer_add(w, "topk_ids", RAMP_ST_I32, 2,
                                                shape_ids, t->topk_ids)))) {
        ramp_st_writer_free(w);
        return s;
    }
    *out = w;
    return RAMP_OK;
}

ramp_status ramp_trace_write(const ramp_trace *t, const char *path) {
    RAMP_CHECK(t && path, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_trace_write: NULL trace or path");
    ramp_st_writer *w;
    RAMP_TRY(trace_writer(t, path, &w));
    ramp_status s = ramp_st_writer_write(w, path);
    ramp_st_writer_free(w);
    return s;
}

ramp_status ramp_trace_write_memory(const ramp_trace *t, void **bytes,
                                    size_t *size) {
    RAMP_CHECK(t && bytes && size, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_trace_write_memory: NULL argument");
    ramp_st_writer *w;
    RAMP_TRY(trace_writer(t, "ramp_trace_write_memory", &w));
    ramp_status s = ramp_st_writer_to_memory(w, bytes, size);
    ramp_st_writer_free(w);
    return s;
}

static ramp_status trace_from_st(const ramp_st_file *f, ramp_trace **out) {
    const char *L = ramp_st_label(f);
    const char *fmt = ramp_st_meta(f, "format");
    RAMP_CHECK(fmt && strcmp(fmt, "ramp-trace") == 0, RAMP_ERR_FORMAT,
               "%s: __metadata__ 'format' is %s%.32s%s, expected 'ramp-trace'",
               L, fmt ? "'" : "", fmt ? fmt : "missing", fmt ? "'" : "");
    const char *ver = ramp_st_meta(f, "version");
    RAMP_CHECK(ver, RAMP_ERR_FORMAT, "%s: __metadata__ has no 'version'", L);
    RAMP_CHECK(strcmp(ver, "1") == 0, RAMP_ERR_UNSUPPORTED,
               "%s: trace format version '%.16s' is not supported (only 1)",
               L, ver);
    char model[RAMP_NAME_MAX], domain[RAMP_NAME_MAX], source[256];
    RAMP_TRY(ramp_st_meta_string(f, "model", 1, model, sizeof model));
    RAMP_CHECK(model[0], RAMP_ERR_FORMAT, "%s: __metadata__ 'model' is empty",
               L);
    RAMP_TRY(ramp_st_meta_string(f, "domain", 0, domain, sizeof domain));
    RAMP_TRY(ramp_st_meta_string(f, "source", 0, source, sizeof source));
    int64_t E, k, agg = 0;
    RAMP_TRY(ramp_st_meta_int(f, "experts", 1, TRACE_MAX_EXPERTS, &E));
    RAMP_TRY(ramp_st_meta_int(f, "topk", 1, E, &k));
    if (ramp_st_meta(f, "aggregate"))
        RAMP_TRY(ramp_st_meta_int(f, "aggregate", 0, 1, &agg));

    RAMP_TRY(ramp_st_only(f, trace_tensors, 5));
    const ramp_st_tensor *ts, *tl, *tt, *tc, *ti = NULL;
    RAMP_TRY(ramp_st_expect(f, "step", RAMP_ST_I32, 1, NULL, &ts));
    int64_t R = ts->shape[0];
    int64_t shape_r[1] = {R}, shape_re[2] = {R, E};
    RAMP_TRY(ramp_st_expect(f, "layer", RAMP_ST_I32, 1, shape_r, &tl));
    RAMP_TRY(ramp_st_expect(f, "tokens", RAMP_ST_I32, 1, shape_r, &tt));
    RAMP_TRY(ramp_st_expect(f, "counts", RAMP_ST_I32, 2, shape_re, &tc));
    if (ramp_st_find(f, "topk_ids")) {
        int64_t shape_ids[2] = {-1, k};
        RAMP_TRY(ramp_st_expect(f, "topk_ids", RAMP_ST_I32, 2, shape_ids, &ti));
        RAMP_CHECK(!agg, RAMP_ERR_FORMAT,
                   "%s: aggregate trace holds a 'topk_ids' tensor", L);
    }

    ramp_trace *t;
    ramp_status s = ramp_trace_create(model, domain, source, (int)E, (int)k,
                                      &t);
    if (s != RAMP_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", ramp_last_error());
        RAMP_FAIL(RAMP_ERR_FORMAT, "%s: %s", L, why);
    }
    t->aggregate = (int)agg;
    int64_t rows = ti ? ti->shape[0] : 0;
    s = trace_reserve(t, R, rows, ti != NULL);
    if (s != RAMP_OK) goto fail;
    ramp_st_copy(ts, t->step);
    ramp_st_copy(tl, t->layer);
    ramp_st_copy(tt, t->tokens);
    ramp_st_copy(tc, t->counts);
    if (ti) ramp_st_copy(ti, t->topk_ids);
    t->records = R;
    t->topk_rows = rows;
    if (ti) {
        int64_t sum = 0;
        for (int64_t r = 0; r < R; r++) sum += t->tokens[r] > 0 ? t->tokens[r] : 0;
        if (sum != rows) {
            s = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                               "%s: tensor 'topk_ids' has %lld rows but the "
                               "records' tokens sum to %lld", L,
                               (long long)rows, (long long)sum);
            goto fail;
        }
    }
    s = trace_check_all(RAMP_ERR_FORMAT, L, t);
    if (s != RAMP_OK) goto fail;
    *out = t;
    return RAMP_OK;
fail:
    ramp_trace_free(t);
    return s;
}

ramp_status ramp_trace_read_memory(const void *bytes, size_t size,
                                   const char *label, ramp_trace **out) {
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "ramp_trace_read_memory: NULL");
    ramp_st_file *f;
    RAMP_TRY(ramp_st_parse(bytes, size, label, &f));
    ramp_status s = trace_from_st(f, out);
    ramp_st_close(f);
    return s;
}

ramp_status ramp_trace_read(const char *path, ramp_trace **out) {
    RAMP_CHECK(path && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_trace_read: NULL path or out");
    ramp_st_file *f;
    RAMP_TRY(ramp_st_open(path, &f));
    ramp_status s = trace_from_st(f, out);
    ramp_st_close(f);
    return s;
}

ramp_status ramp_trace_append_file(const char *path, const ramp_trace *more) {
    RAMP_CHECK(path && more, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_trace_append_file: NULL path or trace");
    struct stat st;
    if (stat(path, &st) != 0) {
        RAMP_CHECK(errno == ENOENT, RAMP_ERR_IO, "%s: cannot stat: %s", path,
                   strerror(errno));
        return ramp_trace_write(more, path);
    }
    ramp_trace *base;
    RAMP_TRY(ramp_trace_read(path, &base));
    ramp_status s = RAMP_OK;
    if (base->experts != more->experts || base->topk != more->topk) {
        s = ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                           "%s: file has experts = %d, topk = %d but the "
                           "trace to append has %d, %d", path, base->experts,
                           base->topk, more->experts, more->topk);
        goto out;
    }
    if (base->aggregate != more->aggregate) {
        s = ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                           "%s: cannot mix aggregate and per-batch records "
                           "(file aggregate = %d, appended %d)", path,
                           base->aggregate, more->aggregate);
        goto out;
    }
    int64_t row = 0;
    for (int64_t r = 0; r < more->records && s == RAMP_OK; r++) {
        const int32_t *ids =
            more->topk_ids ? more->topk_ids + row * more->topk : NULL;
        s = ramp_trace_append(base, more->step[r], more->layer[r],
                              more->tokens[r],
                              more->counts + r * more->experts, ids);
        row += more->tokens[r];
    }
    if (s == RAMP_OK) s = ramp_trace_write(base, path);
out:
    ramp_trace_free(base);
    return s;
}
