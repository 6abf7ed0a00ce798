/*
 * bench.c - timing sweeps (`ramp bench`): fills the missing times of a timing
 * dataset by timing every configuration on every per-GPU load, with the
 * fused MoE kernel the dataset is for (t->kernel: v1, kernels/moe_v1.cuh, or
 * the Hopper kernel v2, kernels/moe_v2.cuh) on a GPU (L2 flushed before each
 * run, CUDA events, median of repeated runs; one method for both kernels)
 * or with the analytic simulator (tests, dry runs), or with callbacks. A
 * sweep works in chunks: it stops cleanly before a deadline, checkpoints its
 * file atomically, and a later call on the same file resumes it, so a long
 * sweep survives a lost machine; one file holds one kernel's times. The method of
 * the GPU backend is bench/bench_moe.c's, moved here. Public API: ramp.h 6a.
 */
#include "bench.h"

#include "fp8.h"
#include "moe_gpu.h"
#include "moe_v2.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define BENCH_MAX_THREADS 32
/* The selection twin's limits (select_cpu.h): pairs per call, local experts,
 * global expert ids. */
#define BENCH_MAX_PAIRS (1 << 20)
#define BENCH_MAX_LOCAL 1024
#define BENCH_MAX_EXPERT_IDS 65535

/* ---------------------------------------------------------------- small parts */

const char *ramp_bench_backend_name(ramp_bench_backend b) {
    switch (b) {
    case RAMP_BENCH_GPU: return "gpu";
    case RAMP_BENCH_SIM: return "sim";
    case RAMP_BENCH_CUSTOM: return "custom";
    }
    return "?";
}

ramp_status ramp_bench_backend_parse(const char *text, ramp_bench_backend *out) {
    RAMP_CHECK(text && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_bench_backend_parse: NULL argument");
    if (!strcasecmp(text, "gpu")) *out = RAMP_BENCH_GPU;
    else if (!strcasecmp(text, "sim")) *out = RAMP_BENCH_SIM;
    else RAMP_FAIL(RAMP_ERR_NOT_FOUND, "unknown backend '%.64s' (expected gpu or sim)", text);
    return RAMP_OK;
}

void ramp_bench_defaults(ramp_bench_options *o) {
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->backend = RAMP_BENCH_GPU;
    o->repeats = 5;
    o->warmup = 1;
    o->max_seconds = 240;
    o->checkpoint_seconds = 60;
    o->seed = 1;
    ramp_sim_defaults(&o->sim);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Re-records the current message with a prefix (the cell or configuration
 * it happened in), keeping the status. */
static ramp_status with_context(ramp_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static ramp_status with_context(ramp_status s, const char *fmt, ...) {
    char prefix[256], msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    snprintf(msg, sizeof msg, "%s", ramp_last_error());
    return ramp_set_error(s, __FILE__, __LINE__, "%s: %s", prefix, msg);
}

/* ---------------------------------------------------------------- routing */

int64_t ramp_bench_tokens(int topk, int nexp, const int32_t *load,
                          int32_t batch_tokens) {
    int64_t P = 0, most = 0;
    for (int e = 0; e < nexp; e++) {
        P += load[e];
        if (load[e] > most) most = load[e];
    }
    if (P <= 0) return 1;
    int64_t j = topk < nexp ? topk : nexp; /* local choices a token can make */
    int64_t lo = (P + j - 1) / j;
    if (most > lo) lo = most;
    int64_t M = batch_tokens;
    if (M < lo) M = lo;
    if (M > P) M = P;
    return M;
}

ramp_status ramp_bench_route(uint64_t seed, int64_t load_index, int topk,
                             int local_experts, int nexp, const int32_t *load,
                             int64_t M, int32_t *ids, int32_t *scratch) {
    RAMP_CHECK(load && ids && scratch && topk >= 1 && nexp >= 0 &&
                   nexp <= local_experts && M >= 1 && M <= INT32_MAX,
               RAMP_ERR_INVALID_ARGUMENT,
               "ramp_bench_route: bad arguments (topk %d, nexp %d, local %d, M %lld)",
               topk, nexp, local_experts, (long long)M);
    int64_t P = 0;
    int j = topk < nexp ? topk : nexp;
    for (int e = 0; e < nexp; e++) {
        RAMP_CHECK(load[e] >= 0 && load[e] <= M, RAMP_ERR_INVALID_ARGUMENT,
                   "load %lld: local expert %d has %d pairs, more than the %lld tokens",
                   (long long)load_index, e, (int)load[e], (long long)M);
        P += load[e];
    }
    RAMP_CHECK(j > 0 ? P <= M * j : P == 0, RAMP_ERR_INVALID_ARGUMENT,
               "load %lld: %lld pairs do not fit %lld tokens of %d local choices",
               (long long)load_index, (long long)P, (long long)M, j);
    int32_t *order = scratch, *used = scratch + M;
    ramp_rng rng;
    ramp_rng_seed(&rng, ramp_mix64(seed ^ ramp_mix64(0x62656e6368ull + (uint64_t)load_index)));
    for (int64_t m = 0; m < M; m++) {
        order[m] = (int32_t)m;
        used[m] = 0;
    }
    for (int64_t m = M - 1; m > 0; m--) { /* Fisher-Yates */
        int64_t r = ramp_rng_below(&rng, (uint32_t)(m + 1));
        int32_t tmp = order[m];
        order[m] = order[r];
        order[r] = tmp;
    }
    /* Pair p (expert by expert) goes to token order[p mod M]: an expert's
     * n_e <= M pairs land on distinct tokens, each token gets at most
     * ceil(P / M) <= j of them. */
    int64_t p = 0;
    for (int e = 0; e < nexp; e++)
        for (int32_t n = 0; n < load[e]; n++, p++) {
            int32_t tok = order[p % M];
            ids[(int64_t)tok * topk + used[tok]++] = e;
        }
    for (int64_t m = 0; m < M; m++)
        for (int s = used[m]; s < topk; s++) ids[m * topk + s] = local_experts + s;
    return RAMP_OK;
}

/* ---------------------------------------------------------------- checks */

ramp_status ramp_bench_check(const ramp_timing *t) {
    RAMP_CHECK(t, RAMP_ERR_INVALID_ARGUMENT, "ramp_bench_check: NULL dataset");
    for (int c = 0; c < t->nconfigs; c++) {
        ramp_status s = ramp_kernel_version_check((ramp_kernel_version)t->kernel,
                                                  &t->configs[c], &t->geom);
        if (s != RAMP_OK)
            return with_context(s, "dataset configuration %d on its geometry (E=%d k=%d h=%d "
                                "d=%d%s): kernel %s cannot run it", c, t->geom.experts,
                                t->geom.topk, t->geom.inter, t->geom.hidden,
                                t->geom.bf16 ? " bf16" : "",
                                ramp_kernel_version_name((ramp_kernel_version)t->kernel));
    }
    RAMP_CHECK(!t->weight_units || t->kernel == RAMP_KERNEL_V2, RAMP_ERR_INVALID_ARGUMENT,
               "the dataset is for weights in stage units, which kernel %s does not read "
               "(kernel v2 does)", ramp_kernel_version_name((ramp_kernel_version)t->kernel));
    for (int c = 0; t->weight_units && c < t->nconfigs; c++) {
        ramp_status s = ramp_moe_v2_units_check(&t->configs[c], &t->geom);
        if (s != RAMP_OK)
            return with_context(s, "dataset configuration %d on weights in stage units", c);
    }
    return RAMP_OK;
}

static int64_t count_filled(const ramp_timing *t) {
    int64_t n = 0, all = t->nloads * t->nconfigs;
    for (int64_t i = 0; i < all; i++) n += !isnan(t->times_us[i]);
    return n;
}

static ramp_status check_options(const ramp_bench_options *o) {
    RAMP_CHECK(o->backend == RAMP_BENCH_GPU || o->backend == RAMP_BENCH_SIM ||
                   o->backend == RAMP_BENCH_CUSTOM,
               RAMP_ERR_INVALID_ARGUMENT, "backend = %d: not gpu (0), sim (1) or custom (2)",
               (int)o->backend);
    RAMP_CHECK(o->backend != RAMP_BENCH_CUSTOM ||
                   (o->ops && o->ops->time_cell && o->ops->device && o->ops->device[0]),
               RAMP_ERR_INVALID_ARGUMENT,
               "custom backend: ops, ops->time_cell and a non-empty ops->device are needed");
    RAMP_CHECK(o->repeats >= 1 && o->repeats <= 1000, RAMP_ERR_INVALID_ARGUMENT,
               "repeats = %d: expected 1..1000", o->repeats);
    RAMP_CHECK(o->warmup >= 0 && o->warmup <= 100, RAMP_ERR_INVALID_ARGUMENT,
               "warmup = %d: expected 0..100", o->warmup);
    RAMP_CHECK(isfinite(o->max_seconds) && o->max_seconds >= 0, RAMP_ERR_INVALID_ARGUMENT,
               "max_seconds = %g: expected a finite number >= 0 (0: no limit)", o->max_seconds);
    RAMP_CHECK(isfinite(o->checkpoint_seconds) && o->checkpoint_seconds >= 0,
               RAMP_ERR_INVALID_ARGUMENT,
               "checkpoint_seconds = %g: expected a finite number >= 0 (0: only at the end)",
               o->checkpoint_seconds);
    RAMP_CHECK(o->max_cells >= 0, RAMP_ERR_INVALID_ARGUMENT,
               "max_cells = %lld: expected >= 0 (0: no limit)", (long long)o->max_cells);
    RAMP_CHECK(o->compile_threads >= 0 && o->compile_threads <= BENCH_MAX_THREADS,
               RAMP_ERR_INVALID_ARGUMENT, "compile_threads = %d: expected 0..%d",
               o->compile_threads, BENCH_MAX_THREADS);
    RAMP_CHECK(o->gpu >= 0, RAMP_ERR_INVALID_ARGUMENT, "gpu = %d: expected >= 0", o->gpu);
    return RAMP_OK;
}

/* One dataset, one device: times already in t must come from this one. */
static ramp_status check_device(const ramp_timing *t, int64_t filled, const char *device,
                                int sms) {
    RAMP_CHECK(filled == 0 || strcmp(t->device, device) == 0, RAMP_ERR_INVALID_ARGUMENT,
               "the dataset holds %lld times measured on '%s'; this sweep times on '%s', "
               "and one dataset must not mix devices", (long long)filled, t->device, device);
    RAMP_CHECK(filled == 0 || sms <= 0 || t->sms == sms, RAMP_ERR_INVALID_ARGUMENT,
               "the dataset's times come from %d SMs, this device has %d", t->sms, sms);
    return RAMP_OK;
}

/* ---------------------------------------------------------------- backends */

typedef struct bench_backend bench_backend;
struct bench_backend {
    char device[64];
    int sms; /* the device's SMs; 0: keep the dataset's */
    /* until: give up waiting (set *ready = 0) past this time (now_s()). */
    ramp_status (*begin)(bench_backend *b, ramp_timing *t, int config, double until,
                         int *ready);
    ramp_status (*time)(bench_backend *b, const ramp_timing *t, int config, int64_t load,
                        double *us);
    void (*end)(bench_backend *b, const ramp_timing *t, int config);
    void (*stop)(bench_backend *b);     /* stop background work (may be NULL) */
    void (*destroy)(bench_backend *b);
};

/* ---- SIM */

typedef struct {
    bench_backend base;
    ramp_sim_params sp;
    ramp_device_limits lim;
} sim_backend;

static ramp_status sim_begin(bench_backend *b, ramp_timing *t, int config, double until,
                             int *ready) {
    sim_backend *s = (sim_backend *)b;
    ramp_resources r;
    RAMP_TRY(ramp_config_resources(&t->configs[config], &t->geom, &s->lim, &r));
    char name[64];
    RAMP_CHECK(r.valid, RAMP_ERR_UNSUPPORTED, "configuration %s cannot run on %s: %s",
               ramp_config_name(&t->configs[config], name, sizeof name), s->lim.name, r.why);
    *ready = 1;
    return RAMP_OK;
}

static ramp_status sim_time(bench_backend *b, const ramp_timing *t, int c, int64_t i,
                            double *us) {
    sim_backend *s = (sim_backend *)b;
    /* The same cell as ramp_sim_fill's, so a sweep in any number of chunks
     * gives ramp_sim_fill's numbers. */
    return ramp_sim_cell(&s->sp, &s->lim, t, i, c, us);
}

static void sim_destroy(bench_backend *b) { free(b); }

static ramp_status sim_create(const ramp_bench_options *o, bench_backend **out) {
    sim_backend *s = ramp_calloc(1, sizeof *s);
    if (!s) return RAMP_ERR_OUT_OF_MEMORY;
    s->sp = o->sim;
    ramp_device_limits_h200(&s->lim);
    snprintf(s->base.device, sizeof s->base.device, "simulated");
    s->base.begin = sim_begin;
    s->base.time = sim_time;
    s->base.destroy = sim_destroy;
    *out = &s->base;
    return RAMP_OK;
}

/* ---- CUSTOM */

typedef struct {
    bench_backend base;
    const ramp_bench_ops *ops;
} custom_backend;

static ramp_status custom_begin(bench_backend *b, ramp_timing *t, int config, double until,
                                int *ready) {
    custom_backend *c = (custom_backend *)b;
    *ready = 1;
    return c->ops->begin_config ? c->ops->begin_config(c->ops->user, t, config) : RAMP_OK;
}

static ramp_status custom_time(bench_backend *b, const ramp_timing *t, int config,
                               int64_t load, double *us) {
    custom_backend *c = (custom_backend *)b;
    return c->ops->time_cell(c->ops->user, t, config, load, us);
}

static void custom_end(bench_backend *b, const ramp_timing *t, int config) {
    custom_backend *c = (custom_backend *)b;
    if (c->ops->end_config) c->ops->end_config(c->ops->user, t, config);
}

static ramp_status custom_create(const ramp_bench_options *o, bench_backend **out) {
    custom_backend *c = ramp_calloc(1, sizeof *c);
    if (!c) return RAMP_ERR_OUT_OF_MEMORY;
    c->ops = o->ops;
    snprintf(c->base.device, sizeof c->base.device, "%s", o->ops->device);
    c->base.begin = custom_begin;
    c->base.time = custom_time;
    c->base.end = custom_end;
    c->base.destroy = sim_destroy;
    *out = &c->base;
    return RAMP_OK;
}

/* ---- GPU */

typedef struct {
    ramp_moe_variant v; /* persistent 0: plain and persistent share a binary */
    int kernel;         /* ramp_kernel_version to compile */
    int units;          /* v2: weights in stage units (ramp_moe_v2_weight_opts) */
    ramp_jit_result *r;
    ramp_status s;
    char msg[1024];
    int done;
} bench_cjob;

typedef struct {
    bench_backend base;
    const ramp_bench_options *o;
    ramp_gpu *gpu;
    ramp_stream st;
    ramp_gpu_info info;
    int X, k, h, d, bf16;
    int kernel;      /* ramp_kernel_version: t->kernel */
    int units;       /* t->weight_units: w13, w2 hold stage units */
    int64_t *M;      /* [nloads] tokens of each load */
    int64_t Mmax;
    ramp_devptr w13, w2, w13s, w2s, x, xs, tw, out, sorted, texp, ntiles, flush, ws, wsc;
    size_t flush_bytes;
    ramp_event **ev;
    int nev;
    double *samples;
    int32_t *ids, *scratch;
    /* the configuration being timed: K (v1) or K2 (v2) */
    ramp_moe_kernel *K;
    ramp_moe_v2_kernel *K2;
    ramp_select_desc desc;
    ramp_select_result *sel;
    ramp_moe_variant v;
    /* compiles run ahead on worker threads, in the sweep's order */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int sync_ok;
    pthread_t th[BENCH_MAX_THREADS];
    int nth;
    bench_cjob *jobs;
    int njobs, next, stop;
    int *job_of; /* [nconfigs] job of each configuration, -1: none */
} gpu_backend;

static void *gpu_compile_worker(void *arg) {
    gpu_backend *g = arg;
    for (;;) {
        pthread_mutex_lock(&g->mu);
        int i = g->stop || g->next >= g->njobs ? -1 : g->next++;
        pthread_mutex_unlock(&g->mu);
        if (i < 0) return NULL;
        bench_cjob *j = &g->jobs[i];
        ramp_jit_result *r = NULL;
        const ramp_moe_v2_opts o2 = ramp_moe_v2_weight_opts(j->units);
        ramp_status s = j->kernel == RAMP_KERNEL_V2 ? ramp_moe_v2_compile_opts(&j->v, &o2, &r)
                                                    : ramp_moe_v1_compile(&j->v, &r);
        pthread_mutex_lock(&g->mu);
        j->r = r;
        j->s = s;
        if (s != RAMP_OK) snprintf(j->msg, sizeof j->msg, "%s", ramp_last_error());
        j->done = 1;
        pthread_cond_broadcast(&g->cv);
        pthread_mutex_unlock(&g->mu);
    }
}

static void gpu_stop(bench_backend *b) {
    gpu_backend *g = (gpu_backend *)b;
    if (!g->sync_ok) return;
    pthread_mutex_lock(&g->mu);
    g->stop = 1;
    pthread_mutex_unlock(&g->mu);
}

static void gpu_destroy(bench_backend *b) {
    gpu_backend *g = (gpu_backend *)b;
    if (!g) return;
    gpu_stop(b);
    for (int i = 0; i < g->nth; i++) pthread_join(g->th[i], NULL);
    if (g->sync_ok) {
        pthread_mutex_destroy(&g->mu);
        pthread_cond_destroy(&g->cv);
    }
    for (int i = 0; i < g->njobs; i++) ramp_jit_result_free(g->jobs[i].r);
    free(g->jobs);
    free(g->job_of);
    ramp_moe_kernel_free(g->K);
    ramp_moe_v2_free(g->K2);
    ramp_select_result_free(g->sel);
    if (g->gpu) {
        if (g->st) ramp_stream_sync(g->gpu, g->st);
        ramp_devptr *bufs[] = {&g->w13, &g->w2, &g->w13s, &g->w2s, &g->x, &g->xs, &g->tw,
                               &g->out, &g->sorted, &g->texp, &g->ntiles, &g->flush, &g->ws,
                               &g->wsc};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) ramp_gpu_free(g->gpu, *bufs[i]);
        for (int i = 0; i < g->nev; i++) ramp_event_free(g->ev[i]);
        if (g->st) ramp_stream_destroy(g->gpu, g->st);
        ramp_gpu_close(g->gpu);
    }
    free(g->ev);
    free(g->samples);
    free(g->ids);
    free(g->scratch);
    free(g->M);
    free(g);
}

/* FP8 codes span about +-4.2 sigma of e4m3's range (bench_moe's data). */
#define BENCH_CODE_SIGMA (448.0 / 4.2)

typedef struct {
    uint8_t fp8[256];   /* e4m3 codes of N(0,1) draws times BENCH_CODE_SIGMA */
    float normal[256];  /* the draws */
} bench_table;

static void table_make(ramp_rng *r, bench_table *tb) {
    for (int i = 0; i < 256; i++) {
        tb->normal[i] = (float)ramp_rng_normal(r);
        tb->fp8[i] = ramp_e4m3_encode(tb->normal[i] * (float)BENCH_CODE_SIGMA);
    }
}

/* A [rows, cols] matrix of N(0, s^2) entries, s = sigma * 2^{-1,0,1} per
 * 128x128 block (so a wrong scale index would matter), elements drawn 8 per
 * RNG call from the table: FP8 codes with block scales, or BF16. */
static void fill_matrix(ramp_rng *r, const bench_table *tb, int bf16, int rows, int cols,
                        double sigma, void *w, float *scale) {
    const int cbn = cols / 128;
    for (int rb = 0; rb < rows / 128; rb++)
        for (int cb = 0; cb < cbn; cb++) {
            double s = sigma * ldexp(1.0, (int)ramp_rng_below(r, 3) - 1);
            if (!bf16) scale[(size_t)rb * cbn + cb] = (float)(s / BENCH_CODE_SIGMA);
            for (int i = 0; i < 128; i++) {
                size_t at = (size_t)(rb * 128 + i) * cols + (size_t)cb * 128;
                for (int j = 0; j < 128; j += 8) {
                    uint64_t v = ramp_rng_next(r);
                    for (int q = 0; q < 8; q++) {
                        int idx = (int)((v >> (8 * q)) & 255);
                        if (bf16)
                            ((uint16_t *)w)[at + j + q] =
                                ramp_bf16_encode(tb->normal[idx] * (float)s);
                        else
                            ((uint8_t *)w)[at + j + q] = tb->fp8[idx];
                    }
                }
            }
        }
}

static ramp_status gpu_alloc(gpu_backend *g, size_t bytes, ramp_devptr *p) {
    return ramp_gpu_alloc(g->gpu, bytes ? bytes : 16, p);
}

/* Weights of X experts: made one expert at a time, packed into stage units
 * when the dataset's times are of them (units are expert-major, so an
 * expert's units are its own bytes), and uploaded. */
static ramp_status gpu_make_weights(gpu_backend *g, ramp_rng *r, const bench_table *tb) {
    const int X = g->X, h = g->h, d = g->d;
    const size_t el = g->bf16 ? 2 : 1;
    const size_t n13 = (size_t)2 * h * d, n2 = (size_t)d * h;
    const size_t s13 = (size_t)(2 * h / 128) * (d / 128), s2 = (size_t)(d / 128) * (h / 128);
    ramp_geometry one; /* one expert's weights */
    memset(&one, 0, sizeof one);
    one.experts = 1;
    one.inter = h;
    one.hidden = d;
    one.bf16 = g->bf16;
    RAMP_TRY(gpu_alloc(g, (size_t)X * n13 * el, &g->w13));
    RAMP_TRY(gpu_alloc(g, (size_t)X * n2 * el, &g->w2));
    if (!g->bf16) {
        RAMP_TRY(gpu_alloc(g, (size_t)X * s13 * 4, &g->w13s));
        RAMP_TRY(gpu_alloc(g, (size_t)X * s2 * 4, &g->w2s));
    }
    void *buf = malloc(n13 * el), *packed = g->units ? malloc(n13 * el) : NULL;
    float *sc = malloc((s13 + s2) * sizeof *sc);
    ramp_status s = buf && sc && (packed || !g->units)
                        ? RAMP_OK
                        : ramp_set_error(RAMP_ERR_OUT_OF_MEMORY, __FILE__, __LINE__,
                                         "out of memory for weights");
    const void *up = g->units ? packed : buf;
    for (int e = 0; e < X && s == RAMP_OK; e++) {
        fill_matrix(r, tb, g->bf16, 2 * h, d, 1.0 / sqrt(d), buf, sc);
        if (g->units) s = ramp_moe_v2_tile_weights_order(&one, 3, buf, NULL, packed, NULL);
        if (s == RAMP_OK)
            s = ramp_gpu_upload(g->gpu, g->w13 + (ramp_devptr)(e * n13 * el), up, n13 * el);
        if (s == RAMP_OK && !g->bf16)
            s = ramp_gpu_upload(g->gpu, g->w13s + (ramp_devptr)(e * s13 * 4), sc, s13 * 4);
        if (s != RAMP_OK) break;
        fill_matrix(r, tb, g->bf16, d, h, 2.0 / sqrt(h), buf, sc);
        if (g->units) s = ramp_moe_v2_tile_weights_order(&one, 3, NULL, buf, NULL, packed);
        if (s == RAMP_OK)
            s = ramp_gpu_upload(g->gpu, g->w2 + (ramp_devptr)(e * n2 * el), up, n2 * el);
        if (s == RAMP_OK && !g->bf16)
            s = ramp_gpu_upload(g->gpu, g->w2s + (ramp_devptr)(e * s2 * 4), sc, s2 * 4);
    }
    free(buf);
    free(packed);
    free(sc);
    return s;
}

/* Hidden states of Mmax tokens (FP8 with 1x128 scales of varying size, or
 * BF16) and router weights (k per token, positive, summing to 1). */
static ramp_status gpu_make_tokens(gpu_backend *g, ramp_rng *r, const bench_table *tb) {
    const size_t M = (size_t)g->Mmax, d = (size_t)g->d, k = (size_t)g->k;
    const size_t el = g->bf16 ? 2 : 1;
    uint8_t *x = malloc(M * d * el);
    float *xs = malloc(M * (d / 128) * sizeof *xs), *tw = malloc(M * k * sizeof *tw);
    ramp_status s = x && xs && tw ? RAMP_OK : ramp_set_error(RAMP_ERR_OUT_OF_MEMORY, __FILE__,
                                                           __LINE__, "out of memory for tokens");
    if (s == RAMP_OK) {
        for (size_t i = 0; i < M * d; i += 8) {
            uint64_t v = ramp_rng_next(r);
            for (size_t q = 0; q < 8 && i + q < M * d; q++) {
                int idx = (int)((v >> (8 * q)) & 255);
                if (g->bf16) ((uint16_t *)x)[i + q] = ramp_bf16_encode(tb->normal[idx]);
                else x[i + q] = tb->fp8[idx];
            }
        }
        for (size_t i = 0; i < M * (d / 128); i++)
            xs[i] = (float)(pow(2.0, 3 * ramp_rng_uniform(r) - 1.5) / BENCH_CODE_SIGMA);
        for (size_t m = 0; m < M; m++) {
            double tot = 0;
            for (size_t j = 0; j < k; j++) tot += tw[m * k + j] = (float)exp(2 * ramp_rng_normal(r));
            for (size_t j = 0; j < k; j++) tw[m * k + j] = (float)(tw[m * k + j] / tot);
        }
        if (!(s = gpu_alloc(g, M * d * el, &g->x)) && !(s = gpu_alloc(g, M * k * 4, &g->tw)))
            s = ramp_gpu_upload(g->gpu, g->x, x, M * d * el);
        if (s == RAMP_OK) s = ramp_gpu_upload(g->gpu, g->tw, tw, M * k * 4);
        if (s == RAMP_OK && !g->bf16 && !(s = gpu_alloc(g, M * (d / 128) * 4, &g->xs)))
            s = ramp_gpu_upload(g->gpu, g->xs, xs, M * (d / 128) * 4);
    }
    free(x);
    free(xs);
    free(tw);
    return s;
}

static int column_open(const ramp_timing *t, int c) {
    for (int64_t i = 0; i < t->nloads; i++)
        if (isnan(t->times_us[i * t->nconfigs + c])) return 1;
    return 0;
}

static ramp_status gpu_setup(gpu_backend *g, ramp_timing *t, int64_t filled) {
    const ramp_bench_options *o = g->o;
    RAMP_TRY(ramp_gpu_open(o->gpu, &g->gpu));
    RAMP_TRY(ramp_gpu_get_info(g->gpu, &g->info));
    snprintf(g->base.device, sizeof g->base.device, "%s", g->info.limits.name);
    g->base.sms = g->info.limits.sms;
    RAMP_TRY(check_device(t, filled, g->base.device, g->base.sms));
    RAMP_TRY(ramp_stream_create(g->gpu, &g->st));
    g->X = t->max_experts;
    g->k = t->geom.topk;
    g->h = t->geom.inter;
    g->d = t->geom.hidden;
    g->bf16 = t->geom.bf16;
    g->kernel = t->kernel;
    g->units = t->weight_units;
    RAMP_CHECK(g->X <= BENCH_MAX_LOCAL && g->X + g->k <= BENCH_MAX_EXPERT_IDS,
               RAMP_ERR_UNSUPPORTED, "%d local experts with top-%d: the selection twin takes "
               "at most %d local experts and %d expert ids", g->X, g->k, BENCH_MAX_LOCAL,
               BENCH_MAX_EXPERT_IDS);

    /* Tokens of each load, and the most tiles any configuration needs. */
    g->M = ramp_calloc((size_t)(t->nloads ? t->nloads : 1), sizeof *g->M);
    if (!g->M) return RAMP_ERR_OUT_OF_MEMORY;
    g->Mmax = 1;
    for (int64_t i = 0; i < t->nloads; i++) {
        g->M[i] = ramp_bench_tokens(g->k, t->nexp[i], t->loads + i * g->X, t->batch_tokens[i]);
        if (g->M[i] > g->Mmax) g->Mmax = g->M[i];
    }
    RAMP_CHECK(g->Mmax * g->k <= BENCH_MAX_PAIRS, RAMP_ERR_UNSUPPORTED,
               "a load needs %lld tokens x top-%d = %lld slots; the selection twin takes at "
               "most %d", (long long)g->Mmax, g->k, (long long)g->Mmax * g->k, BENCH_MAX_PAIRS);
    size_t max_tiles = 1, max_slots = 1, ws = 0, wsc = 0;
    for (int c = 0; c < t->nconfigs; c++) {
        if (!column_open(t, c)) continue;
        int b = t->configs[c].rows;
        int64_t most = 1;
        for (int64_t i = 0; i < t->nloads; i++) {
            int64_t tiles = 0;
            for (int e = 0; e < t->nexp[i]; e++) tiles += (t->loads[i * g->X + e] + b - 1) / b;
            if (tiles > most) most = tiles;
        }
        ramp_moe_variant v = {t->configs[c], t->geom, 0};
        if ((size_t)most > max_tiles) max_tiles = (size_t)most;
        if ((size_t)(most * b) > max_slots) max_slots = (size_t)(most * b);
        /* v2: a two-phase configuration's intermediate; v1: split-K partials */
        size_t a = g->kernel == RAMP_KERNEL_V2 ? ramp_moe_v2_ws_bytes(&v, NULL, (int)most)
                                              : ramp_moe_v1_ws_bytes(&v, (int)most);
        size_t cnt = g->kernel == RAMP_KERNEL_V2 ? 0 : ramp_moe_v1_counter_bytes(&v, (int)most);
        if (a > ws) ws = a;
        if (cnt > wsc) wsc = cnt;
    }

    /* v2 loads the first tile's expert and slots before it reads num_tiles
     * (moe_v2.cuh), also on an empty load: keep a tile of slots in bounds. */
    if (max_slots < 64) max_slots = 64;

    /* Data: fresh random weights and tokens (never zeros). */
    ramp_rng r;
    ramp_rng_seed(&r, ramp_mix64(o->seed ^ 0x7765696768747321ull));
    bench_table tb;
    table_make(&r, &tb);
    RAMP_TRY(gpu_make_weights(g, &r, &tb));
    RAMP_TRY(gpu_make_tokens(g, &r, &tb));
    RAMP_TRY(gpu_alloc(g, (size_t)g->Mmax * g->d * 4, &g->out));
    RAMP_TRY(gpu_alloc(g, max_slots * 4, &g->sorted));
    RAMP_TRY(gpu_alloc(g, max_tiles * 4, &g->texp));
    RAMP_TRY(gpu_alloc(g, 16, &g->ntiles));
    if (ws) RAMP_TRY(gpu_alloc(g, ws, &g->ws));
    if (wsc) {
        RAMP_TRY(gpu_alloc(g, wsc, &g->wsc));
        RAMP_TRY(ramp_gpu_fill32_async(g->gpu, g->wsc, 0, wsc / 4, g->st));
    }
    g->flush_bytes = o->flush_bytes;
    if (!g->flush_bytes) {
        g->flush_bytes = (size_t)512 << 20;
        if (g->flush_bytes < (size_t)8 * (size_t)g->info.l2_bytes)
            g->flush_bytes = (size_t)8 * (size_t)g->info.l2_bytes;
    }
    g->flush_bytes = (g->flush_bytes + 3) / 4 * 4;
    RAMP_TRY(gpu_alloc(g, g->flush_bytes, &g->flush));
    RAMP_TRY(ramp_stream_sync(g->gpu, g->st));

    int runs = o->warmup + o->repeats;
    g->ev = ramp_calloc((size_t)2 * runs, sizeof *g->ev);
    g->samples = ramp_calloc((size_t)o->repeats, sizeof *g->samples);
    g->ids = ramp_calloc((size_t)(g->Mmax * g->k), sizeof *g->ids);
    g->scratch = ramp_calloc((size_t)(2 * g->Mmax), sizeof *g->scratch);
    if (!g->ev || !g->samples || !g->ids || !g->scratch) return RAMP_ERR_OUT_OF_MEMORY;
    for (; g->nev < 2 * runs; g->nev++) RAMP_TRY(ramp_event_create(g->gpu, &g->ev[g->nev]));

    /* Compile jobs: one binary per configuration still to time (persistent
     * variants share the plain one's), in the sweep's order. */
    g->job_of = ramp_calloc((size_t)t->nconfigs, sizeof *g->job_of);
    g->jobs = ramp_calloc((size_t)t->nconfigs, sizeof *g->jobs);
    if (!g->job_of || !g->jobs) return RAMP_ERR_OUT_OF_MEMORY;
    for (int c = 0; c < t->nconfigs; c++) {
        g->job_of[c] = -1;
        if (!column_open(t, c)) continue;
        ramp_moe_variant v = {t->configs[c], t->geom, 0};
        v.cfg.persistent = 0;
        int j;
        for (j = 0; j < g->njobs; j++)
            if (ramp_config_equal(&g->jobs[j].v.cfg, &v.cfg)) break;
        if (j == g->njobs) {
            g->jobs[g->njobs].v = v;
            g->jobs[g->njobs].units = g->units;
            g->jobs[g->njobs++].kernel = g->kernel;
        }
        g->job_of[c] = j;
    }
    RAMP_CHECK(pthread_mutex_init(&g->mu, NULL) == 0, RAMP_ERR_INTERNAL, "pthread_mutex_init failed");
    if (pthread_cond_init(&g->cv, NULL) != 0) {
        pthread_mutex_destroy(&g->mu);
        RAMP_FAIL(RAMP_ERR_INTERNAL, "pthread_cond_init failed");
    }
    g->sync_ok = 1;
    int want = o->compile_threads;
    if (want <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        want = n > 1 ? (int)(n - 1) : 1;
    }
    if (want > BENCH_MAX_THREADS) want = BENCH_MAX_THREADS;
    if (want > g->njobs) want = g->njobs;
    for (; g->nth < want; g->nth++)
        if (pthread_create(&g->th[g->nth], NULL, gpu_compile_worker, g) != 0) break;
    RAMP_CHECK(g->nth > 0 || g->njobs == 0, RAMP_ERR_INTERNAL,
               "could not start a compile thread");
    return RAMP_OK;
}

static ramp_status gpu_begin(bench_backend *b, ramp_timing *t, int c, double until,
                             int *ready) {
    gpu_backend *g = (gpu_backend *)b;
    char name[64];
    ramp_config_name(&t->configs[c], name, sizeof name);
    int j = g->job_of[c];
    RAMP_CHECK(j >= 0, RAMP_ERR_INTERNAL, "configuration %s has no compile job", name);
    bench_cjob *job = &g->jobs[j];
    pthread_mutex_lock(&g->mu);
    while (!job->done) {
        if (isinf(until)) {
            pthread_cond_wait(&g->cv, &g->mu);
            continue;
        }
        double left = until - now_s();
        if (left <= 0) break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double whole = floor(left);
        ts.tv_sec += (time_t)whole;
        ts.tv_nsec += (long)((left - whole) * 1e9);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&g->cv, &g->mu, &ts);
    }
    int done = job->done;
    pthread_mutex_unlock(&g->mu);
    *ready = done;
    if (!done) return RAMP_OK;
    RAMP_CHECK(job->s == RAMP_OK, job->s, "compiling configuration %s failed: %s", name,
               job->msg);
    g->v = (ramp_moe_variant){t->configs[c], t->geom, 0};
    if (g->kernel == RAMP_KERNEL_V2) {
        /* v2 launches at most one block per SM (the blocks stride over the
         * tiles), whatever the compiler's occupancy: its class stays 1. The
         * create refuses a compile that cannot run (spills, no fit). */
        const ramp_moe_v2_opts o2 = ramp_moe_v2_weight_opts(g->units);
        ramp_status s = ramp_moe_v2_create_from_opts(g->gpu, &g->v, &o2, job->r, &g->K2);
        if (s != RAMP_OK) return with_context(s, "kernel v2, configuration %s", name);
        t->blocks_per_sm[c] = 1;
    } else {
        ramp_status s = ramp_moe_kernel_create_from(g->gpu, &g->v, job->r, &g->K);
        if (s != RAMP_OK) return with_context(s, "configuration %s", name);
        /* The compiler's occupancy replaces the estimate. */
        t->blocks_per_sm[c] = ramp_moe_kernel_resources(g->K)->blocks_per_sm;
    }
    memset(&g->desc, 0, sizeof g->desc);
    g->desc.experts = g->X + g->k;
    g->desc.topk = g->k;
    g->desc.max_tokens = (int)g->Mmax;
    g->desc.local_experts = g->X;
    g->desc.nentries = 1;
    g->desc.group_only = 1;
    g->desc.entries[0].rows = t->configs[c].rows;
    g->desc.entries[0].slices = g->h / t->configs[c].width * t->configs[c].splitk;
    g->desc.entries[0].slots = g->info.limits.sms * t->blocks_per_sm[c];
    return ramp_select_result_create(&g->desc, &g->sel);
}

static void gpu_end(bench_backend *b, const ramp_timing *t, int c) {
    gpu_backend *g = (gpu_backend *)b;
    ramp_moe_kernel_free(g->K);
    g->K = NULL;
    ramp_moe_v2_free(g->K2);
    g->K2 = NULL;
    ramp_select_result_free(g->sel);
    g->sel = NULL;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static ramp_status gpu_time(bench_backend *b, const ramp_timing *t, int c, int64_t i,
                            double *us) {
    gpu_backend *g = (gpu_backend *)b;
    const ramp_bench_options *o = g->o;
    const int32_t *load = t->loads + i * g->X;
    const int64_t M = g->M[i];
    const int rows = t->configs[c].rows;
    RAMP_TRY(ramp_bench_route(o->seed, i, g->k, g->X, t->nexp[i], load, M, g->ids, g->scratch));
    RAMP_TRY(ramp_select_cpu(&g->desc, (int)M, g->ids, g->sel));
    for (int e = 0; e < g->X; e++)
        RAMP_CHECK(g->sel->counts[e] == load[e], RAMP_ERR_INTERNAL,
                   "synthesized routing gives local expert %d %d pairs, the load %d", e,
                   (int)g->sel->counts[e], (int)load[e]);
    int32_t tiles = g->sel->meta[RAMP_SELECT_META_TILES];
    if (tiles > 0) {
        RAMP_TRY(ramp_gpu_upload(g->gpu, g->sorted, g->sel->sorted_ids, (size_t)tiles * rows * 4));
        RAMP_TRY(ramp_gpu_upload(g->gpu, g->texp, g->sel->tile_expert, (size_t)tiles * 4));
    }
    RAMP_TRY(ramp_gpu_upload(g->gpu, g->ntiles, &tiles, 4));
    RAMP_TRY(ramp_gpu_fill32_async(g->gpu, g->out, 0, (size_t)M * g->d, g->st));
    ramp_moe_params p;
    memset(&p, 0, sizeof p);
    p.x = g->x;
    p.x_scale = g->xs;
    p.w13 = g->w13;
    p.w13_scale = g->w13s;
    p.w2 = g->w2;
    p.w2_scale = g->w2s;
    p.topk_weights = g->tw;
    p.sorted_ids = g->sorted;
    p.tile_expert = g->texp;
    p.num_tiles = g->ntiles;
    p.out = g->out;
    p.ws = g->ws;
    p.ws_count = g->wsc;
    p.num_tokens = (int)M;
    p.max_tiles = tiles; /* a direct launch: the grid of this load's tiles */
    const int runs = o->warmup + o->repeats;
    for (int r = 0; r < runs; r++) {
        /* A write larger than L2 evicts the weights the last run left. */
        RAMP_TRY(ramp_gpu_fill32_async(g->gpu, g->flush, (uint32_t)r * 2654435761u,
                                       g->flush_bytes / 4, g->st));
        RAMP_TRY(ramp_event_record(g->ev[2 * r], g->st));
        RAMP_TRY(g->K2 ? ramp_moe_v2_launch(g->K2, &p, g->st)
                       : ramp_moe_kernel_launch(g->K, &p, g->st));
        RAMP_TRY(ramp_event_record(g->ev[2 * r + 1], g->st));
    }
    for (int r = 0; r < runs; r++) {
        double e;
        RAMP_TRY(ramp_event_elapsed_us(g->ev[2 * r], g->ev[2 * r + 1], &e));
        if (r >= o->warmup) g->samples[r - o->warmup] = e;
    }
    qsort(g->samples, (size_t)o->repeats, sizeof *g->samples, cmp_double);
    int n = o->repeats;
    *us = n % 2 ? g->samples[n / 2] : 0.5 * (g->samples[n / 2 - 1] + g->samples[n / 2]);
    return RAMP_OK;
}

static ramp_status gpu_create(const ramp_bench_options *o, ramp_timing *t, int64_t filled,
                              bench_backend **out) {
    gpu_backend *g = ramp_calloc(1, sizeof *g);
    if (!g) return RAMP_ERR_OUT_OF_MEMORY;
    g->o = o;
    g->base.begin = gpu_begin;
    g->base.time = gpu_time;
    g->base.end = gpu_end;
    g->base.stop = gpu_stop;
    g->base.destroy = gpu_destroy;
    ramp_status s = gpu_setup(g, t, filled);
    if (s != RAMP_OK) {
        char msg[1536];
        snprintf(msg, sizeof msg, "%s", ramp_last_error());
        gpu_destroy(&g->base);
        return ramp_set_error(s, __FILE__, __LINE__, "GPU backend: %s", msg);
    }
    *out = &g->base;
    return RAMP_OK;
}

/* ---------------------------------------------------------------- the sweep */

static ramp_status save(ramp_timing *t, const char *path, int stamp) {
    if (stamp) {
        time_t now = time(NULL);
        struct tm tmv;
        gmtime_r(&now, &tmv);
        strftime(t->date, sizeof t->date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    }
    return ramp_timing_write(t, path);
}

ramp_status ramp_bench_run(ramp_timing *t, const char *path, const ramp_bench_options *opt,
                           ramp_bench_report *report) {
    const double t0 = now_s();
    RAMP_CHECK(t && opt, RAMP_ERR_INVALID_ARGUMENT, "ramp_bench_run: NULL dataset or options");
    RAMP_CHECK(!path || path[0], RAMP_ERR_INVALID_ARGUMENT, "ramp_bench_run: empty path");
    RAMP_TRY(check_options(opt));
    RAMP_CHECK(t->nconfigs >= 1 && t->configs && t->blocks_per_sm && t->max_experts >= 1 &&
                   (t->nloads == 0 || (t->times_us && t->loads && t->nexp)),
               RAMP_ERR_INVALID_ARGUMENT, "ramp_bench_run: the dataset has no configurations "
               "or arrays");
    if (opt->backend != RAMP_BENCH_CUSTOM) RAMP_TRY(ramp_bench_check(t));
    ramp_bench_report rep;
    memset(&rep, 0, sizeof rep);
    rep.cells = t->nloads * t->nconfigs;
    rep.filled_before = rep.filled = count_filled(t);

    bench_backend *be = NULL;
    if (rep.filled < rep.cells) {
        switch (opt->backend) {
        case RAMP_BENCH_SIM: RAMP_TRY(sim_create(opt, &be)); break;
        case RAMP_BENCH_CUSTOM: RAMP_TRY(custom_create(opt, &be)); break;
        default: RAMP_TRY(gpu_create(opt, t, rep.filled, &be)); break;
        }
        ramp_status s = check_device(t, rep.filled, be->device, be->sms);
        if (s != RAMP_OK) {
            be->destroy(be);
            return s;
        }
        snprintf(rep.device, sizeof rep.device, "%s", be->device);
    } else {
        snprintf(rep.device, sizeof rep.device, "%s", t->device);
    }

    /* Everything below may have measured cells: t's provenance is this run's. */
    const double deadline = opt->max_seconds > 0 ? t0 + opt->max_seconds : INFINITY;
    const double margin = opt->max_seconds > 0 ? fmin(5.0, 0.05 * opt->max_seconds) : 0;
    double est_cell = 0, est_write = 0, last_save = t0;
    ramp_status s = RAMP_OK;
    int stop = 0;
    if (be) {
        snprintf(t->device, sizeof t->device, "%s", be->device);
        if (be->sms > 0) t->sms = be->sms;
        if (opt->command) snprintf(t->command, sizeof t->command, "%s", opt->command);
    }
    if (opt->progress && rep.cells > 0)
        opt->progress((double)rep.filled / (double)rep.cells, opt->progress_user);
    for (int c = 0; be && c < t->nconfigs && !stop && s == RAMP_OK; c++) {
        if (!column_open(t, c)) continue;
        char name[64];
        ramp_config_name(&t->configs[c], name, sizeof name);
        if (opt->max_cells > 0 && rep.measured >= opt->max_cells) {
            stop = RAMP_BENCH_MAX_CELLS;
            break;
        }
        /* Waiting for a configuration's compile ends in time for one cell
         * and the final write (after the first cell of the call). */
        double until = rep.measured > 0 ? deadline - margin - est_cell - est_write : INFINITY;
        if (until <= now_s()) {
            stop = RAMP_BENCH_DEADLINE;
            break;
        }
        int ready = 1;
        s = be->begin(be, t, c, until, &ready);
        if (s != RAMP_OK) {
            s = with_context(s, "%s backend, configuration %d (%s)", be->device, c, name);
            break;
        }
        if (!ready) {
            stop = RAMP_BENCH_DEADLINE;
            break;
        }
        for (int64_t i = 0; i < t->nloads; i++) {
            float *cell = &t->times_us[i * t->nconfigs + c];
            if (!isnan(*cell)) continue;
            if (opt->max_cells > 0 && rep.measured >= opt->max_cells) {
                stop = RAMP_BENCH_MAX_CELLS;
                break;
            }
            double c0 = now_s();
            if (rep.measured > 0 && c0 + est_cell + est_write + margin > deadline) {
                stop = RAMP_BENCH_DEADLINE;
                break;
            }
            double us = NAN;
            s = be->time(be, t, c, i, &us);
            if (s == RAMP_OK && !(isfinite(us) && us >= 0 && us < 3e38))
                s = ramp_set_error(RAMP_ERR_NUMERIC, __FILE__, __LINE__,
                                   "the backend gave %g us", us);
            if (s != RAMP_OK) {
                s = with_context(s, "%s backend, configuration %d (%s), load %lld", be->device,
                                 c, name, (long long)i);
                break;
            }
            *cell = (float)us;
            rep.measured++;
            rep.filled++;
            double c1 = now_s();
            if (c1 - c0 > est_cell) est_cell = c1 - c0;
            if (opt->progress) opt->progress((double)rep.filled / (double)rep.cells, opt->progress_user);
            if (path && opt->checkpoint_seconds > 0 && c1 - last_save >= opt->checkpoint_seconds) {
                s = save(t, path, 1);
                if (s != RAMP_OK) break;
                last_save = now_s();
                if (last_save - c1 > est_write) est_write = last_save - c1;
                rep.checkpoints++;
            }
        }
        if (be->end) be->end(be, t, c);
    }
    /* Stop compiles ahead before writing; join them after. */
    if (be && be->stop) be->stop(be);
    if (s == RAMP_OK && path) s = save(t, path, rep.measured > 0);
    if (be) be->destroy(be);
    if (s != RAMP_OK) return s;
    rep.complete = rep.filled == rep.cells;
    rep.stopped = rep.complete ? RAMP_BENCH_DONE : stop ? (ramp_bench_stop)stop : RAMP_BENCH_DEADLINE;
    rep.seconds = now_s() - t0;
    if (report) *report = rep;
    return RAMP_OK;
}

/* ---------------------------------------------------------------- resume, subsets */

/* Same loads and configurations (times aside)? RAMP_ERR_FORMAT naming the
 * first difference. */
static ramp_status same_cells(const ramp_timing *t, const ramp_timing *o, const char *path) {
#define DIFF(cond, ...)                                                                \
    RAMP_CHECK(!(cond), RAMP_ERR_FORMAT, "%s is not an earlier output of this sweep: " \
               __VA_ARGS__)
    DIFF(strcmp(t->model, o->model), "model %s, the sweep's %s", path, o->model, t->model);
    DIFF(strcmp(t->layout, o->layout), "layout %s, the sweep's %s", path, o->layout, t->layout);
    DIFF(memcmp(&t->geom, &o->geom, sizeof t->geom),
         "geometry E=%d k=%d h=%d d=%d bf16=%d, the sweep's E=%d k=%d h=%d d=%d bf16=%d", path,
         o->geom.experts, o->geom.topk, o->geom.inter, o->geom.hidden, o->geom.bf16,
         t->geom.experts, t->geom.topk, t->geom.inter, t->geom.hidden, t->geom.bf16);
    /* "" (written before placements were recorded) is contiguous. */
    const char *pt = t->placement[0] ? t->placement : "contiguous";
    const char *po = o->placement[0] ? o->placement : "contiguous";
    DIFF(strcmp(pt, po), "placement '%s', the sweep's '%s'", path, po, pt);
    DIFF(t->kernel != o->kernel, "its times are of kernel %s, the sweep's kernel %s (one "
         "dataset, one kernel: write the sweep to another file)", path,
         ramp_kernel_version_name((ramp_kernel_version)o->kernel),
         ramp_kernel_version_name((ramp_kernel_version)t->kernel));
    DIFF(t->weight_units != o->weight_units, "its times are of weights %s, the sweep's %s (one "
         "dataset, one weight layout: write the sweep to another file)", path,
         o->weight_units ? "in stage units" : "row-major",
         t->weight_units ? "in stage units" : "row-major");
    DIFF(t->nconfigs != o->nconfigs, "%d configurations, the sweep %d", path, o->nconfigs,
         t->nconfigs);
    for (int c = 0; c < t->nconfigs; c++) {
        char a[64], b[64];
        DIFF(!ramp_config_equal(&t->configs[c], &o->configs[c]),
             "configuration %d is %s, the sweep's %s", path, c,
             ramp_config_name(&o->configs[c], a, sizeof a),
             ramp_config_name(&t->configs[c], b, sizeof b));
    }
    DIFF(t->nloads != o->nloads, "%lld loads, the sweep %lld", path, (long long)o->nloads,
         (long long)t->nloads);
    for (int64_t i = 0; i < t->nloads; i++) {
        DIFF(t->nexp[i] != o->nexp[i] || t->batch[i] != o->batch[i] || t->gpu[i] != o->gpu[i] ||
                 t->batch_tokens[i] != o->batch_tokens[i] ||
                 strcmp(t->domains[t->domain[i]], o->domains[o->domain[i]]) ||
                 memcmp(t->loads + i * t->max_experts, o->loads + i * o->max_experts,
                        (size_t)t->max_experts * sizeof *t->loads),
             "load %lld differs (batch %d gpu %d domain %s, the sweep's batch %d gpu %d "
             "domain %s)", path, (long long)i, (int)o->batch[i], (int)o->gpu[i],
             o->domains[o->domain[i]], (int)t->batch[i], (int)t->gpu[i],
             t->domains[t->domain[i]]);
    }
#undef DIFF
    return RAMP_OK;
}

ramp_status ramp_bench_resume(ramp_timing *t, const char *path, int64_t *taken) {
    RAMP_CHECK(t && path && taken, RAMP_ERR_INVALID_ARGUMENT, "ramp_bench_resume: NULL argument");
    if (access(path, F_OK) != 0 && errno == ENOENT) {
        *taken = -1;
        return RAMP_OK;
    }
    ramp_timing *o = NULL;
    RAMP_TRY(ramp_timing_read(path, 1, &o));
    ramp_status s = same_cells(t, o, path);
    if (s == RAMP_OK) {
        int64_t n = 0;
        for (int64_t i = 0; i < t->nloads * t->nconfigs; i++)
            if (!isnan(o->times_us[i])) {
                t->times_us[i] = o->times_us[i];
                n++;
            }
        memcpy(t->blocks_per_sm, o->blocks_per_sm, (size_t)t->nconfigs * sizeof *t->blocks_per_sm);
        t->sms = o->sms;
        memcpy(t->device, o->device, sizeof t->device);
        memcpy(t->date, o->date, sizeof t->date);
        memcpy(t->command, o->command, sizeof t->command);
        *taken = n;
    }
    ramp_timing_free(o);
    return s;
}

ramp_status ramp_timing_select_configs(const ramp_timing *t, const int *idx, int n,
                                       ramp_timing **out) {
    RAMP_CHECK(t && idx && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_timing_select_configs: NULL argument");
    RAMP_CHECK(n >= 1 && n <= t->nconfigs, RAMP_ERR_INVALID_ARGUMENT,
               "%d configurations selected; expected 1..%d", n, t->nconfigs);
    ramp_config *cfg = ramp_calloc((size_t)n, sizeof *cfg);
    int *bps = ramp_calloc((size_t)n, sizeof *bps);
    ramp_status s = cfg && bps ? RAMP_OK : RAMP_ERR_OUT_OF_MEMORY;
    for (int j = 0; j < n && s == RAMP_OK; j++) {
        if (idx[j] < 0 || idx[j] >= t->nconfigs) {
            s = ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                               "selected configuration %d: index %d outside [0, %d)", j, idx[j],
                               t->nconfigs);
            break;
        }
        for (int q = 0; q < j; q++)
            if (idx[q] == idx[j]) {
                s = ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                                   "configuration %d selected twice", idx[j]);
                break;
            }
        cfg[j] = t->configs[idx[j]];
        bps[j] = t->blocks_per_sm[idx[j]];
    }
    ramp_timing *o = NULL;
    if (s == RAMP_OK)
        s = ramp_timing_create(t->model, t->layout, &t->geom, t->sms, cfg, bps, n, &o);
    free(cfg);
    free(bps);
    for (int d = 0; d < t->ndomains && s == RAMP_OK; d++)
        if (ramp_timing_domain_index(o, t->domains[d]) != d) s = RAMP_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; i < t->nloads && s == RAMP_OK; i++) {
        s = ramp_timing_add_load(o, t->batch[i], t->gpu[i], t->domain[i], t->batch_tokens[i],
                                 t->nexp[i], t->loads + i * t->max_experts, NULL);
        for (int j = 0; j < n && s == RAMP_OK; j++)
            o->times_us[i * n + j] = t->times_us[i * t->nconfigs + idx[j]];
    }
    if (s != RAMP_OK) {
        ramp_timing_free(o);
        return s;
    }
    memcpy(o->device, t->device, sizeof o->device);
    memcpy(o->command, t->command, sizeof o->command);
    memcpy(o->date, t->date, sizeof o->date);
    memcpy(o->placement, t->placement, sizeof o->placement);
    o->kernel = t->kernel;
    o->weight_units = t->weight_units;
    *out = o;
    return RAMP_OK;
}

ramp_status ramp_timing_select_kernel(const ramp_timing *t, ramp_kernel_version k,
                                      ramp_timing **out, int *dropped) {
    RAMP_CHECK(t && out && dropped, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_timing_select_kernel: NULL argument");
    RAMP_CHECK(k == RAMP_KERNEL_V1 || k == RAMP_KERNEL_V2, RAMP_ERR_INVALID_ARGUMENT,
               "kernel = %d: not v1 (0) or v2 (1)", (int)k);
    const char *kn = ramp_kernel_version_name(k);
    const char *tn = ramp_kernel_version_name((ramp_kernel_version)t->kernel);
    int64_t filled = count_filled(t);
    RAMP_CHECK(filled == 0 || t->kernel == (int)k, RAMP_ERR_INVALID_ARGUMENT,
               "the dataset holds %lld times of kernel %s; kernel %s must not add times to it "
               "(one dataset, one kernel: start from loads with no times, e.g. `ramp dataset "
               "build --kernel %s`)", (long long)filled, tn, kn, kn);
    RAMP_CHECK(!t->weight_units || k == RAMP_KERNEL_V2, RAMP_ERR_INVALID_ARGUMENT,
               "the dataset is for weights in stage units, which kernel %s does not read (kernel "
               "v2 does)", kn);
    int *idx = ramp_calloc((size_t)t->nconfigs, sizeof *idx);
    if (!idx) return RAMP_ERR_OUT_OF_MEMORY;
    int n = 0;
    for (int c = 0; c < t->nconfigs; c++)
        if (ramp_kernel_version_check(k, &t->configs[c], &t->geom) == RAMP_OK) idx[n++] = c;
    ramp_status s = RAMP_OK;
    if (n == 0)
        s = ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                           "kernel %s runs none of the dataset's %d configurations (%s %s, "
                           "h = %d, d = %d)", kn, t->nconfigs, t->model, t->layout,
                           t->geom.inter, t->geom.hidden);
    ramp_timing *o = NULL;
    if (s == RAMP_OK) s = ramp_timing_select_configs(t, idx, n, &o);
    free(idx);
    if (s != RAMP_OK) return s;
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    lim.sms = t->sms;
    for (int c = 0; c < o->nconfigs; c++) {
        int occ = ramp_config_occupancy(k, &o->configs[c], &o->geom, &lim);
        /* A configuration the estimate rejects but the kernel's check allows
         * keeps the dataset's class (>= 1, as the format wants). */
        if (occ >= 1 && k != (ramp_kernel_version)t->kernel) o->blocks_per_sm[c] = occ;
    }
    o->kernel = (int)k;
    *dropped = t->nconfigs - n;
    *out = o;
    return RAMP_OK;
}
