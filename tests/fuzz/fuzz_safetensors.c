/*
 * fuzz_safetensors.c - libFuzzer target for the generic safetensors parser:
 * any bytes must be refused cleanly or parse into tensors that lie inside
 * the input, and that the writer turns back into a file that parses to the
 * same names, dtypes, shapes, bytes and metadata.
 */
#include "ramp.h"
#include "safetensors.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ramp_st_file *f = NULL;
    if (ramp_st_parse(data, size, "fuzz", &f) != RAMP_OK) {
        if (ramp_last_error()[0] == '\0') abort();
        return 0;
    }
    ramp_st_writer *w = NULL;
    if (ramp_st_writer_create(&w) != RAMP_OK) abort();
    for (int i = 0; i < ramp_st_meta_count(f); i++) {
        const char *k = ramp_st_meta_key(f, i);
        if (ramp_st_writer_meta(w, k, ramp_st_meta(f, k)) != RAMP_OK) abort();
    }
    for (int i = 0; i < ramp_st_count(f); i++) {
        const ramp_st_tensor *t = ramp_st_at(f, i);
        const uint8_t *p = t->data;
        if (p < data || p + (t->end - t->begin) > data + size) abort();
        if (ramp_st_writer_add(w, t->name, t->dtype, t->ndim, t->shape, t->data) != RAMP_OK)
            abort();
    }
    void *bytes = NULL;
    size_t n = 0;
    if (ramp_st_writer_to_memory(w, &bytes, &n) != RAMP_OK) abort();
    ramp_st_file *g = NULL;
    if (ramp_st_parse(bytes, n, "fuzz-again", &g) != RAMP_OK) abort();
    if (ramp_st_count(g) != ramp_st_count(f) || ramp_st_meta_count(g) != ramp_st_meta_count(f))
        abort();
    for (int i = 0; i < ramp_st_count(f); i++) {
        const ramp_st_tensor *a = ramp_st_at(f, i), *b = ramp_st_find(g, a->name);
        if (!b || a->dtype != b->dtype || a->ndim != b->ndim ||
            memcmp(a->shape, b->shape, sizeof a->shape[0] * (size_t)a->ndim) ||
            b->end - b->begin != a->end - a->begin ||
            memcmp(a->data, b->data, (size_t)(a->end - a->begin)))
            abort();
    }
    for (int i = 0; i < ramp_st_meta_count(f); i++) {
        const char *k = ramp_st_meta_key(f, i), *v = ramp_st_meta(g, k);
        if (!v || strcmp(v, ramp_st_meta(f, k))) abort();
    }
    ramp_st_close(g);
    free(bytes);
    ramp_st_writer_free(w);
    ramp_st_close(f);
    return 0;
}
