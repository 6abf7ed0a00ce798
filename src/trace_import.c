/*
 * trace_import.c - imports SGLang's expert-distribution dump,
 * {"logical_count": [L][E]}: tokens routed to each expert of each layer,
 * summed over a whole serving run (data/routing/README.md). Each layer with a
 * nonzero row becomes one record of an aggregate trace (dense layers, whose
 * rows are all zero, are skipped); its layer index is the MoE layer's ordinal
 * among the nonzero rows and tokens = row sum / topk rounded half up.
 *
 * SGLang writes the counts as floats ("12.0"), so each value is checked to
 * be a finite, non-negative integer that fits int32; a bad value is refused
 * with its layer and expert in the message.
 */
#include "internal.h"
#include "safetensors.h"

#include <cjson/cJSON.h>  /* the dump is JSON */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Dumps are a few hundred KB; refuse anything absurd before reading it. */
#define SGLANG_MAX_BYTES ((size_t)1 << 30)

static ramp_status import_rows(const char *L, const cJSON *rows,
                               const ramp_model *model, ramp_trace *t) {
    const int E = model->experts, k = model->topk;
    int32_t *counts = ramp_calloc((size_t)E, sizeof *counts);
    if (!counts) return RAMP_ERR_OUT_OF_MEMORY;
    ramp_status s = RAMP_OK;
    int layer = 0, moe = 0;
    for (const cJSON *row = rows->child; row; row = row->next, layer++) {
        if (!cJSON_IsArray(row)) {
            s = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                               "%s: logical_count[%d] is not an array", L,
                               layer);
            break;
        }
        int n = cJSON_GetArraySize(row);
        if (n != E) {
            s = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                               "%s: logical_count[%d] has %d experts but "
                               "model %s has %d", L, layer, n, model->name, E);
            break;
        }
        int64_t sum = 0;
        int e = 0;
        for (const cJSON *c = row->child; c; c = c->next, e++) {
            if (!cJSON_IsNumber(c)) {
                s = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                                   "%s: layer %d, expert %d "
                                   "(logical_count[%d][%d]) is not a number",
                                   L, layer, e, layer, e);
                goto done;
            }
            double v = c->valuedouble;
            if (!isfinite(v) || v < 0 || v != floor(v) ||
                v > (double)INT32_MAX) {
                s = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                                   "%s: layer %d, expert %d "
                                   "(logical_count[%d][%d]) is %.17g; expected "
                                   "a non-negative integer count below 2^31",
                                   L, layer, e, layer, e, v);
                goto done;
            }
            counts[e] = (int32_t)v;
            sum += counts[e];
        }
        if (sum == 0) continue; /* a dense layer */
        int64_t tokens = (sum + k / 2) / k;
        if (tokens > INT32_MAX) {
            s = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                               "%s: layer %d sums to %lld assignments, more "
                               "than 2^31 tokens", L, layer, (long long)sum);
            break;
        }
        if (moe >= model->layers) {
            s = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                               "%s: layer %d is MoE layer %d but model %s has "
                               "%d MoE layers", L, layer, moe + 1, model->name,
                               model->layers);
            break;
        }
        s = ramp_trace_append(t, 0, moe, (int32_t)tokens, counts, NULL);
        if (s != RAMP_OK) break;
        moe++;
    }
done:
    free(counts);
    return s;
}

ramp_status ramp_trace_import_sglang_memory(const void *bytes, size_t size,
                                            const char *label,
                                            const ramp_model *model,
                                            const char *domain,
                                            ramp_trace **out) {
    RAMP_CHECK((bytes || size == 0) && model && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_trace_import_sglang: NULL argument");
    const char *L = label ? label : "(memory)";
    RAMP_CHECK(model->experts >= 1 && model->topk >= 1 &&
                   model->topk <= model->experts && model->layers >= 1,
               RAMP_ERR_INVALID_ARGUMENT,
               "ramp_trace_import_sglang: model %.48s has a bad geometry "
               "(experts %d, topk %d, layers %d)", model->name, model->experts,
               model->topk, model->layers);
    RAMP_CHECK(size > 0 && !memchr(bytes, 0, size), RAMP_ERR_FORMAT,
               "%s: %s", L, size ? "NUL byte in a JSON file" : "file is empty");
    /* cJSON wants the terminating NUL within the length it is given. */
    char *text = ramp_calloc(size + 1, 1);
    if (!text) return RAMP_ERR_OUT_OF_MEMORY;
    memcpy(text, bytes, size);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, size + 1, &end, 1);
    size_t at = end ? (size_t)(end - text) : 0;
    free(text);
    RAMP_CHECK(root, RAMP_ERR_FORMAT,
               "%s: not valid JSON (error near byte offset %zu)", L, at);
    ramp_status s = RAMP_OK;
    ramp_trace *t = NULL;
    const cJSON *rows = cJSON_IsObject(root)
                            ? cJSON_GetObjectItemCaseSensitive(root,
                                                               "logical_count")
                            : NULL;
    if (!rows || !cJSON_IsArray(rows)) {
        s = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                           "%s: expected an object with a 'logical_count' "
                           "array of per-layer expert counts", L);
        goto out;
    }
    /* Source: the file's base name, which is what identifies the workload. */
    const char *base = strrchr(L, '/');
    base = base ? base + 1 : L;
    char source[256];
    snprintf(source, sizeof source, "sglang:%s", base);
    s = ramp_trace_create(model->name, domain, source, model->experts,
                          model->topk, &t);
    if (s != RAMP_OK) goto out;
    t->aggregate = 1;
    s = import_rows(L, rows, model, t);
    if (s == RAMP_OK && t->records == 0)
        s = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                           "%s: every layer's counts are zero", L);
out:
    cJSON_Delete(root);
    if (s != RAMP_OK) {
        ramp_trace_free(t);
        return s;
    }
    *out = t;
    return RAMP_OK;
}

ramp_status ramp_trace_import_sglang(const char *path, const ramp_model *model,
                                     const char *domain, ramp_trace **out) {
    RAMP_CHECK(path && model && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_trace_import_sglang: NULL argument");
    FILE *fp = fopen(path, "rb");
    RAMP_CHECK(fp, RAMP_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    ramp_status s = RAMP_OK;
    for (;;) {
        if (!buf) {
            s = ramp_set_error(RAMP_ERR_OUT_OF_MEMORY, __FILE__, __LINE__,
                               "%s: out of memory reading the file", path);
            break;
        }
        n += fread(buf + n, 1, cap - n, fp);
        if (n < cap) break;
        if (cap >= SGLANG_MAX_BYTES) {
            s = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                               "%s: larger than %zu bytes; not an SGLang "
                               "expert-distribution dump", path,
                               SGLANG_MAX_BYTES);
            break;
        }
        cap *= 2;
        char *p = realloc(buf, cap);
        if (!p) free(buf);
        buf = p;
    }
    if (s == RAMP_OK && ferror(fp))
        s = ramp_set_error(RAMP_ERR_IO, __FILE__, __LINE__,
                           "%s: read failed: %s", path, strerror(errno));
    fclose(fp);
    if (s == RAMP_OK)
        s = ramp_trace_import_sglang_memory(buf, n, path, model, domain, out);
    free(buf);
    return s;
}
