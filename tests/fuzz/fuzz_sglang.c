/*
 * fuzz_sglang.c - libFuzzer target for the SGLang dump importer. The first
 * three bytes choose the model (experts 1-256, topk, MoE layers 1-64); the
 * rest is the JSON. An imported trace must write and read back.
 */
#include "ramp.h"
#include "safetensors.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3) return 0;
    int experts = 1 + data[0];
    int topk = 1 + data[1] % experts;
    int layers = 1 + data[2] % 64;
    ramp_model m;
    if (ramp_model_custom("fuzz", experts, topk, 128, 128, layers, &m) != RAMP_OK)
        return 0;
    ramp_trace *t = NULL;
    if (ramp_trace_import_sglang_memory(data + 3, size - 3, "fuzz.json", &m,
                                        "fuzz", &t) != RAMP_OK) {
        if (ramp_last_error()[0] == '\0') abort();
        return 0;
    }
    if (!t->aggregate || t->records < 1 || t->records > layers) abort();
    void *bytes = NULL;
    size_t n = 0;
    if (ramp_trace_write_memory(t, &bytes, &n) != RAMP_OK) abort();
    ramp_trace *u = NULL;
    if (ramp_trace_read_memory(bytes, n, "fuzz-again", &u) != RAMP_OK) abort();
    if (u->records != t->records ||
        memcmp(u->counts, t->counts, (size_t)t->records * (size_t)experts * 4) ||
        memcmp(u->tokens, t->tokens, (size_t)t->records * 4))
        abort();
    free(bytes);
    ramp_trace_free(u);
    ramp_trace_free(t);
    return 0;
}
