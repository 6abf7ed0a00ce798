/*
 * simulate.c - an analytic stand-in for the fused kernel's time on an H200,
 * so the offline pipeline (fit, menu, policies, evaluation) can run end to
 * end before GPU measurements exist, and tests have data with realistic
 * structure. It is NOT a measurement: datasets it fills say "simulated".
 *
 * Model, per per-GPU load:
 *   tiles are issued in waves of S = SMs x blocks-per-SM slots; within a
 *   wave every tile streams its weights (gate/up 2w x d/split and down
 *   d x w/split bytes in FP8, twice in BF16) and its token rows; a wave lasts
 *   as long as its slowest tile, whose rate is the least of its pipeline's
 *   bytes in flight over the load latency, its share of HBM bandwidth, and
 *   its MMA time on padded rows (b rounded up to 8). Tiles of the same
 *   (expert, slice) in one wave share weights through L2 (most of the
 *   re-read is served by L2; slightly more with grouped order). A persistent grid pays no wave quantisation but a
 *   small per-tile scheduling cost. Split-K adds FP32 partial sums. Each
 *   active expert adds a fixed set-up cost, each launch a fixed cost.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

void ramp_sim_defaults(ramp_sim_params *p) {
    memset(p, 0, sizeof *p);
    p->hbm_bytes_per_us = 4.2e6;
    p->mma_flops_per_us = 4.0e6;
    p->latency_us = 1.0;
    p->launch_us = 3.0;
    p->noise = 0.01;
    p->seed = 1;
}

ramp_status ramp_sim_time(const ramp_sim_params *sp, const ramp_config *c,
                          const ramp_geometry *g, const ramp_device_limits *lim,
                          int nexp, const int32_t *load, double *time_us) {
    RAMP_CHECK(sp && c && g && lim && load && time_us, RAMP_ERR_INVALID_ARGUMENT,
               "NULL argument");
    ramp_resources r;
    RAMP_TRY(ramp_config_resources(c, g, lim, &r));
    char name[64];
    RAMP_CHECK(r.valid, RAMP_ERR_INVALID_ARGUMENT, "config %s cannot run: %s",
               ramp_config_name(c, name, sizeof name), r.why);
    const double elem = g->bf16 ? 2.0 : 1.0;
    const int rows8 = (c->rows + 7) / 8 * 8;
    const int slices = g->inter / c->width;
    const double dk = (double)g->hidden / c->splitk;
    const double wbytes = (2.0 * c->width * dk + (double)g->hidden * c->width / c->splitk) * elem;
    const double tbytes = (double)c->rows * dk * elem + (c->splitk > 1 ? (double)c->rows * g->hidden * 4.0 : 0);
    const double flops = 2.0 * rows8 * 3.0 * c->width * dk;
    const double inflight = (double)c->stages * (2.0 * c->width + rows8) * 64.0;
    const int slots = lim->sms * r.blocks_per_sm;

    /* Tile list in launch order: expert-major, then row block, then slice
     * (split parts adjacent). Only the per-tile expert id matters here. */
    long tiles = 0;
    for (int e = 0; e < nexp; e++) {
        RAMP_CHECK(load[e] >= 0, RAMP_ERR_INVALID_ARGUMENT, "load[%d] = %d is negative", e, (int)load[e]);
        tiles += (long)((load[e] + c->rows - 1) / c->rows) * slices * c->splitk;
    }
    int active = 0;
    for (int e = 0; e < nexp; e++) active += load[e] > 0;
    double t = sp->launch_us + (c->persistent ? 1.0 : 0.0) + 0.15 * active;
    if (tiles == 0) { *time_us = t; return RAMP_OK; }

    /* Walk the tiles wave by wave. Row blocks of one expert share weights. */
    long done = 0;
    int e = 0, rb = 0;
    double total_bytes = 0, max_tile = 0;
    while (done < tiles) {
        long in_wave = tiles - done < slots ? tiles - done : slots;
        double bytes = 0, slowest = 0;
        long left = in_wave;
        while (left > 0) {
            while (e < nexp && load[e] == 0) e++;
            int blocks = (load[e] + c->rows - 1) / c->rows;
            int rows_last = load[e] - (blocks - 1) * c->rows;
            long per_block = (long)slices * c->splitk;
            long take = per_block < left ? per_block : left;
            int rows = rb == blocks - 1 ? rows_last : c->rows;
            /* Row blocks after an expert's first re-read its weights mostly from
             * L2; grouped order keeps them closer together in time. */
            double reuse = rb == 0 ? 1.0 : (c->grouped ? 0.08 : 0.15);
            bytes += take * (wbytes * reuse + (double)rows / c->rows * tbytes);
            double per_tile_mem = wbytes / (inflight / sp->latency_us);
            double per_tile_mma = flops / (sp->mma_flops_per_us / r.blocks_per_sm);
            double tt = per_tile_mem > per_tile_mma ? per_tile_mem : per_tile_mma;
            if (tt > slowest) slowest = tt;
            left -= take;
            if (++rb == blocks) { rb = 0; e++; }
        }
        double bw_time = bytes / sp->hbm_bytes_per_us;
        double wave = slowest > bw_time ? slowest : bw_time;
        total_bytes += bytes;
        if (slowest > max_tile) max_tile = slowest;
        if (!c->persistent) t += wave;
        done += in_wave;
    }
    if (c->persistent) {
        double busy = (double)tiles * max_tile / slots;
        double bw_time = total_bytes / sp->hbm_bytes_per_us;
        t += (busy > bw_time ? busy : bw_time) + max_tile * 0.5 + 0.02 * (double)tiles / slots;
    }
    *time_us = t;
    return RAMP_OK;
}

ramp_status ramp_sim_cell(const ramp_sim_params *sp, const ramp_device_limits *lim,
                          const ramp_timing *t, int64_t i, int c, double *time_us) {
    RAMP_CHECK(sp && lim && t && time_us && i >= 0 && i < t->nloads && c >= 0 && c < t->nconfigs,
               RAMP_ERR_INVALID_ARGUMENT, "bad argument (load %lld, config %d)", (long long)i, c);
    double us = 0;
    RAMP_TRY(ramp_sim_time(sp, &t->configs[c], &t->geom, lim, t->nexp[i],
                           t->loads + i * t->max_experts, &us));
    /* Seeded lognormal noise, a pure function of (seed, load, config), so
     * any subset of the dataset, in any order, is reproducible. */
    if (sp->noise > 0) {
        ramp_rng rng;
        ramp_rng_seed(&rng, ramp_mix64(sp->seed ^ ramp_mix64((uint64_t)i * 1000003u + (uint64_t)c)));
        us *= exp(sp->noise * ramp_rng_normal(&rng));
    }
    *time_us = us;
    return RAMP_OK;
}

ramp_status ramp_sim_fill(const ramp_sim_params *sp, const ramp_device_limits *lim,
                          ramp_timing *t) {
    RAMP_CHECK(sp && lim && t, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    for (int64_t i = 0; i < t->nloads; i++)
        for (int c = 0; c < t->nconfigs; c++) {
            double us = 0;
            RAMP_TRY(ramp_sim_cell(sp, lim, t, i, c, &us));
            t->times_us[i * t->nconfigs + c] = (float)us;
        }
    snprintf(t->device, sizeof t->device, "simulated");
    return RAMP_OK;
}
