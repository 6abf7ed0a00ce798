/*
 * loadset.c - turns routing traces into the per-GPU loads a timing dataset
 * holds: each sampled record (one batch in one layer) becomes one batch of
 * per-GPU loads under a layout and placement.
 */
#include "internal.h"

#include <string.h>

ramp_status ramp_timing_add_trace(ramp_timing *t, const ramp_trace *trace,
                                  ramp_placement *const *placements,
                                  int nplacements, int stride, int min_tokens,
                                  int64_t max_batches) {
    RAMP_CHECK(t && trace && placements && nplacements >= 1, RAMP_ERR_INVALID_ARGUMENT,
               "NULL argument or no placement");
    const ramp_placement *p = placements[0];
    for (int i = 1; i < nplacements; i++)
        RAMP_CHECK(placements[i]->gpus == p->gpus && placements[i]->max_local == p->max_local,
                   RAMP_ERR_INVALID_ARGUMENT, "placements differ in shape (%d vs %d)", i, 0);
    RAMP_CHECK(stride >= 1, RAMP_ERR_INVALID_ARGUMENT, "stride = %d: must be >= 1", stride);
    RAMP_CHECK(trace->experts == p->experts, RAMP_ERR_INVALID_ARGUMENT,
               "trace has %d experts but the placement %d", trace->experts, p->experts);
    RAMP_CHECK(p->max_local <= t->max_experts, RAMP_ERR_INVALID_ARGUMENT,
               "placement puts %d experts on a GPU, the dataset holds %d",
               p->max_local, t->max_experts);
    int domain = ramp_timing_domain_index(t, trace->domain[0] ? trace->domain : "unknown");
    RAMP_CHECK(domain >= 0, RAMP_ERR_OUT_OF_MEMORY, "cannot add domain '%s'", trace->domain);
    int32_t next_batch = 0;
    for (int64_t i = 0; i < t->nloads; i++)
        if (t->batch[i] >= next_batch) next_batch = t->batch[i] + 1;
    int32_t *loads = ramp_calloc((size_t)p->gpus * (size_t)p->max_local, sizeof *loads);
    if (!loads) return RAMP_ERR_OUT_OF_MEMORY;
    int64_t taken = 0;
    ramp_status s = RAMP_OK;
    for (int64_t r = 0; r < trace->records && s == RAMP_OK; r += stride) {
        if (trace->tokens[r] < min_tokens) continue;
        if (max_batches > 0 && taken >= max_batches) break;
        p = placements[trace->layer[r] % nplacements];
        s = ramp_gpu_loads(p, trace->counts + r * trace->experts, loads);
        for (int g = 0; g < p->gpus && s == RAMP_OK; g++)
            s = ramp_timing_add_load(t, next_batch, g, domain, trace->tokens[r],
                                     ramp_placement_local_count(p, g),
                                     loads + (size_t)g * (size_t)p->max_local, NULL);
        next_batch++;
        taken++;
    }
    free(loads);
    return s;
}

ramp_status ramp_timing_create_space_for(ramp_kernel_version k, const ramp_model *m,
                                         const char *layout, const ramp_geometry *g,
                                         const ramp_device_limits *lim,
                                         ramp_timing **out) {
    RAMP_CHECK(m && layout && g && lim && out, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    ramp_config *space = NULL;
    int n = 0;
    RAMP_TRY(ramp_config_space_for(k, g, lim, &space, &n));
    int *occ = ramp_calloc((size_t)n, sizeof *occ);
    ramp_status s = occ ? RAMP_OK : RAMP_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < n && s == RAMP_OK; i++) occ[i] = ramp_config_occupancy(k, &space[i], g, lim);
    if (s == RAMP_OK) s = ramp_timing_create(m->name, layout, g, lim->sms, space, occ, n, out);
    if (s == RAMP_OK) (*out)->kernel = (int)k;
    free(space);
    free(occ);
    return s;
}

ramp_status ramp_timing_create_space(const ramp_model *m, const char *layout,
                                     const ramp_geometry *g,
                                     const ramp_device_limits *lim,
                                     ramp_timing **out) {
    return ramp_timing_create_space_for(RAMP_KERNEL_V1, m, layout, g, lim, out);
}
