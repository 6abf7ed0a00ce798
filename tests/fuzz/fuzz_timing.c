/*
 * fuzz_timing.c - libFuzzer target for the timing-dataset reader: any bytes
 * must be refused cleanly or read into a dataset that writes back and reads
 * again to the same contents. Aborts on a mismatch.
 */
#include "ramp.h"
#include "safetensors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void same_or_abort(const ramp_timing *a, const ramp_timing *b) {
    if (strcmp(a->model, b->model) || strcmp(a->layout, b->layout) ||
        strcmp(a->device, b->device) || strcmp(a->command, b->command) ||
        strcmp(a->date, b->date) || memcmp(&a->geom, &b->geom, sizeof a->geom) ||
        a->sms != b->sms || a->nconfigs != b->nconfigs ||
        a->ndomains != b->ndomains || a->nloads != b->nloads ||
        a->max_experts != b->max_experts)
        abort();
    for (int c = 0; c < a->nconfigs; c++)
        if (!ramp_config_equal(&a->configs[c], &b->configs[c]) ||
            a->blocks_per_sm[c] != b->blocks_per_sm[c])
            abort();
    for (int d = 0; d < a->ndomains; d++)
        if (strcmp(a->domains[d], b->domains[d])) abort();
    size_t L = (size_t)a->nloads;
    if (L && (memcmp(a->loads, b->loads, L * (size_t)a->max_experts * 4) ||
              memcmp(a->nexp, b->nexp, L * 4) || memcmp(a->batch, b->batch, L * 4) ||
              memcmp(a->gpu, b->gpu, L * 4) || memcmp(a->domain, b->domain, L * 4) ||
              memcmp(a->batch_tokens, b->batch_tokens, L * 4)))
        abort();
    for (size_t i = 0; i < L * (size_t)a->nconfigs; i++) {
        float x = a->times_us[i], y = b->times_us[i];
        if (isnan(x) ? !isnan(y) : x != y) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ramp_timing *t = NULL;
    /* Strict first; a file that passes strict reading passes lenient. */
    int strict_ok = ramp_timing_read_memory(data, size, "fuzz", 0, &t) == RAMP_OK;
    ramp_timing_free(t);
    t = NULL;
    if (ramp_timing_read_memory(data, size, "fuzz", 1, &t) != RAMP_OK) {
        if (strict_ok || ramp_last_error()[0] == '\0') abort();
        return 0;
    }
    void *bytes = NULL;
    size_t n = 0;
    if (ramp_timing_write_memory(t, &bytes, &n) != RAMP_OK) abort();
    ramp_timing *u = NULL;
    if (ramp_timing_read_memory(bytes, n, "fuzz-again", 1, &u) != RAMP_OK) abort();
    same_or_abort(t, u);
    free(bytes);
    ramp_timing_free(u);
    ramp_timing_free(t);
    return 0;
}
