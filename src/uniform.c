/*
 * uniform.c - the workload vLLM's tuner times on: batches of fixed sizes whose
 * tokens each pick k distinct experts uniformly at random (random router
 * scores make every expert equally likely).
 */
#include "internal.h"

#include <string.h>

ramp_status ramp_trace_uniform_batches(const ramp_model *m, const int *sizes,
                                       int nsizes, int repeats, uint64_t seed,
                                       ramp_trace **out) {
    RAMP_CHECK(m && sizes && out, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    RAMP_CHECK(nsizes >= 1 && repeats >= 1, RAMP_ERR_INVALID_ARGUMENT,
               "need >= 1 size and >= 1 repeat (got %d, %d)", nsizes, repeats);
    for (int i = 0; i < nsizes; i++)
        RAMP_CHECK(sizes[i] >= 1 && sizes[i] <= (1 << 20), RAMP_ERR_INVALID_ARGUMENT,
                   "batch size %d at position %d: must be in [1, 2^20]", sizes[i], i);
    ramp_trace *t = NULL;
    RAMP_TRY(ramp_trace_create(m->name, "uniform", "ramp uniform routing (vLLM tuner's workload)",
                               m->experts, m->topk, &t));
    int32_t *counts = ramp_calloc((size_t)m->experts, sizeof *counts);
    int *perm = ramp_calloc((size_t)m->experts, sizeof *perm);
    if (!counts || !perm) {
        free(counts); free(perm); ramp_trace_free(t);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    ramp_rng rng;
    ramp_rng_seed(&rng, seed);
    ramp_status s = RAMP_OK;
    int32_t step = 0;
    for (int rep = 0; rep < repeats && s == RAMP_OK; rep++)
        for (int i = 0; i < nsizes && s == RAMP_OK; i++, step++) {
            memset(counts, 0, (size_t)m->experts * sizeof *counts);
            for (int e = 0; e < m->experts; e++) perm[e] = e;
            for (int tok = 0; tok < sizes[i]; tok++)
                /* k distinct experts: a partial Fisher-Yates shuffle. */
                for (int j = 0; j < m->topk; j++) {
                    int r = j + (int)ramp_rng_below(&rng, (uint32_t)(m->experts - j));
                    int tmp = perm[j]; perm[j] = perm[r]; perm[r] = tmp;
                    counts[perm[j]]++;
                }
            s = ramp_trace_append(t, step, rep, sizes[i], counts, NULL);
        }
    free(counts);
    free(perm);
    if (s != RAMP_OK) { ramp_trace_free(t); return s; }
    *out = t;
    return RAMP_OK;
}
