/*
 * fuzz_trace.c - libFuzzer target for the trace reader: any bytes must be
 * refused cleanly or read into a trace that writes back, reads again to the
 * same records, and summarises (stats) without fault. Aborts on a mismatch.
 */
#include "ramp.h"
#include "safetensors.h"

#include <stdlib.h>
#include <string.h>

static void same_or_abort(const ramp_trace *a, const ramp_trace *b) {
    if (a->experts != b->experts || a->topk != b->topk ||
        a->records != b->records || a->aggregate != b->aggregate ||
        a->topk_rows != b->topk_rows || !a->topk_ids != !b->topk_ids ||
        strcmp(a->model, b->model) || strcmp(a->domain, b->domain) ||
        strcmp(a->source, b->source))
        abort();
    size_t r = (size_t)a->records;
    if (r && (memcmp(a->step, b->step, r * 4) || memcmp(a->layer, b->layer, r * 4) ||
              memcmp(a->tokens, b->tokens, r * 4) ||
              memcmp(a->counts, b->counts, r * (size_t)a->experts * 4)))
        abort();
    if (a->topk_ids && a->topk_rows &&
        memcmp(a->topk_ids, b->topk_ids, (size_t)a->topk_rows * (size_t)a->topk * 4))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ramp_trace *t = NULL;
    if (ramp_trace_read_memory(data, size, "fuzz", &t) != RAMP_OK) {
        if (ramp_last_error()[0] == '\0') abort(); /* errors carry a message */
        return 0;
    }
    void *bytes = NULL;
    size_t n = 0;
    if (ramp_trace_write_memory(t, &bytes, &n) != RAMP_OK) abort();
    ramp_trace *u = NULL;
    if (ramp_trace_read_memory(bytes, n, "fuzz-again", &u) != RAMP_OK) abort();
    same_or_abort(t, u);
    if (t->experts >= 2) {
        ramp_layout lay = {RAMP_EP, 2};
        ramp_placement *p = NULL;
        ramp_trace_stats st;
        if (ramp_placement_contiguous(t->experts, lay, &p) == RAMP_OK &&
            ramp_trace_stats_compute(t, p, 1, 0, &st) != RAMP_OK)
            abort();
        ramp_placement_free(p);
    }
    free(bytes);
    ramp_trace_free(u);
    ramp_trace_free(t);
    return 0;
}
