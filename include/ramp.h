/*
 * ramp.h - RaMP: routing-aware MoE kernel selection.
 *
 * The one public header of libramp. It reads top to bottom as a manual:
 *   1. errors            - every function returns a ramp_status
 *   2. models, layouts   - MoE geometry and how it is spread over GPUs
 *   3. routing traces    - per forward pass and layer, tokens per expert
 *   4. traffic           - a seeded serving-traffic routing generator
 *   5. configurations    - the fused kernel's configuration space
 *   6. timing datasets   - measured time per (per-GPU load, configuration)
 *   7. cost model        - Equation 3 of the paper, fit by NNLS
 *   8. menu, policies, evaluation
 *   9. GPU runtime       - (advanced) driver/NVRTC loaded at run time
 *
 * Conventions: functions return RAMP_OK or an error status; on error,
 * ramp_last_error() gives a message saying what was wrong and where, and
 * outputs are left untouched (no partial files). Objects are opaque or plain
 * structs with a create/free pair; every free function accepts NULL.
 * The library never exits and never prints unless asked to.
 */
#ifndef RAMP_H
#define RAMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RAMP_VERSION_MAJOR 0
#define RAMP_VERSION_MINOR 1
#define RAMP_VERSION_PATCH 0
#define RAMP_VERSION_STRING "0.1.0"

/* ======================================================================
 * 1. Errors
 * ==================================================================== */

/* Values are pinned: they never change between versions. */
typedef enum {
    RAMP_OK = 0,
    RAMP_ERR_INVALID_ARGUMENT = 1, /* a parameter is out of range or NULL */
    RAMP_ERR_OUT_OF_MEMORY = 2,
    RAMP_ERR_IO = 3,           /* open/read/write/rename failed */
    RAMP_ERR_FORMAT = 4,       /* a file is truncated, corrupt or mismatched */
    RAMP_ERR_NOT_FOUND = 5,    /* unknown model, config, layout, name */
    RAMP_ERR_UNSUPPORTED = 6,  /* valid request we do not implement */
    RAMP_ERR_NO_GPU = 7,       /* no CUDA driver, NVRTC or device */
    RAMP_ERR_CUDA = 8,         /* a driver API call failed */
    RAMP_ERR_COMPILE = 9,      /* NVRTC failed; the log is in the message */
    RAMP_ERR_NUMERIC = 10,     /* NaN/Inf or a fit that cannot be solved */
    RAMP_ERR_INTERNAL = 11     /* a bug in libramp */
} ramp_status;

/* Short stable name of a status ("RAMP_ERR_FORMAT"); never NULL. */
const char *ramp_status_name(ramp_status s);

/* Message of the last failure on this thread ("" if none). Valid until the
 * next libramp call on this thread. */
const char *ramp_last_error(void);

/* ======================================================================
 * 2. Models, layouts, placements, per-GPU loads
 * ==================================================================== */

#define RAMP_NAME_MAX 48

/* One MoE layer's geometry (paper Table 1 plus the hidden size d). */
typedef struct {
    char name[RAMP_NAME_MAX];
    int experts;  /* E */
    int topk;     /* k */
    int inter;    /* h: expert intermediate size */
    int hidden;   /* d: model hidden size */
    int layers;   /* MoE layers */
} ramp_model;

/* The built-in models: the eight of the paper's Table 1 plus Qwen1.5-MoE. */
int ramp_model_count(void);
const ramp_model *ramp_model_at(int i);
/* Case-insensitive lookup by name or alias ("qwen3-30b", "Qwen3-30B-A3B").
 * RAMP_ERR_NOT_FOUND lists nothing; the message names the bad input. */
ramp_status ramp_model_lookup(const char *name, ramp_model *out);
/* A custom geometry; checks every field (E>=1, 1<=k<=E, h,d>=1, layers>=1). */
ramp_status ramp_model_custom(const char *name, int experts, int topk, int inter,
                              int hidden, int layers, ramp_model *out);

typedef enum { RAMP_TP = 0, RAMP_EP = 1 } ramp_parallel;

typedef struct {
    ramp_parallel kind;
    int gpus; /* TP1..TP8, EP2..EP64 */
} ramp_layout;

/* Parses "TP1".."TP8", "EP2".."EP64" (case-insensitive). */
ramp_status ramp_layout_parse(const char *text, ramp_layout *out);
/* Writes "EP8" etc. into buf; returns buf. */
char *ramp_layout_name(ramp_layout layout, char *buf, size_t size);

/* Which GPU holds which expert. Under TP every GPU holds all experts (at width
 * h/G), so there is one distinct GPU. Under EP each expert lives on one GPU. */
typedef struct {
    ramp_layout layout;
    int experts;        /* E */
    int gpus;           /* distinct per-GPU loads: 1 under TP, G under EP */
    int max_local;      /* most experts any GPU holds */
    int *gpu_of;        /* [E] GPU of each expert (0 under TP) */
    int *local_of;      /* [E] index of the expert on its GPU */
    int *first;         /* [gpus+1] offsets into members */
    int *members;       /* [E] experts grouped by GPU, in local order */
} ramp_placement;

/* Contiguous blocks, as vLLM: when G does not divide E the first E%G GPUs
 * hold one expert more (Qwen1.5-MoE, 60 experts, EP8: 8,8,8,8,7,7,7,7). */
ramp_status ramp_placement_contiguous(int experts, ramp_layout layout,
                                      ramp_placement **out);
/* Balanced (EPLB-style, no replication): experts sorted by expected load,
 * each given to the least loaded GPU that still has room; GPUs keep the same
 * expert counts as the contiguous split. expected_load: [E], >= 0. */
ramp_status ramp_placement_balanced(int experts, ramp_layout layout,
                                    const double *expected_load,
                                    ramp_placement **out);
void ramp_placement_free(ramp_placement *p);

/* The per-GPU geometry a kernel sees. */
typedef struct {
    int experts;  /* experts on this GPU (max over GPUs) */
    int topk;
    int inter;    /* h under EP, h/G under TP */
    int hidden;   /* d */
    int bf16;     /* 0: FP8 e4m3 with 128x128 block scales (default); 1: BF16 */
} ramp_geometry;

/* FP8 geometry of one GPU; fails (RAMP_ERR_UNSUPPORTED) when the layout
 * cannot hold the model: EP degree above E, or TP width h/G not a multiple of
 * 128 (FP8 blocks need it). */
ramp_status ramp_geometry_for(const ramp_model *model, ramp_layout layout,
                              ramp_geometry *out);

/* Per-GPU loads of one batch and layer: loads[g * max_local + j] = tokens
 * routed to local expert j of GPU g (zero past the GPU's expert count).
 * counts: [E] tokens per expert. loads: [gpus * max_local]. */
ramp_status ramp_gpu_loads(const ramp_placement *p, const int32_t *counts,
                           int32_t *loads);
/* Number of experts GPU g holds. */
int ramp_placement_local_count(const ramp_placement *p, int g);

/* Most loaded GPU's tokens over the mean GPU's (the paper's imbalance).
 * Returns 1.0 for an empty batch. */
double ramp_imbalance(const ramp_placement *p, const int32_t *counts);

/* ======================================================================
 * 3. Routing traces
 *
 * File format (docs/formats.md): safetensors. Tensors
 *   "step"   I32 [R]      forward pass index
 *   "layer"  I32 [R]      MoE layer index
 *   "tokens" I32 [R]      tokens in the batch
 *   "counts" I32 [R, E]   token-expert assignments per expert
 *   "topk_ids" I32 [N, k] optional: router's expert ids, records' rows in
 *                         order (N = sum of tokens)
 * and __metadata__ {"format":"ramp-trace","version":"1","model","experts",
 * "topk","domain","source"}. numpy/safetensors read it without libramp.
 * ==================================================================== */

typedef struct {
    char model[RAMP_NAME_MAX];
    char domain[RAMP_NAME_MAX];
    char source[256];
    int experts;
    int topk;
    int64_t records;
    int64_t capacity;
    int32_t *step;      /* [records] */
    int32_t *layer;     /* [records] */
    int32_t *tokens;    /* [records] */
    int32_t *counts;    /* [records * experts] */
    int32_t *topk_ids;  /* NULL, or [topk_rows * topk] */
    int64_t topk_rows;
    int64_t topk_capacity;
} ramp_trace;

ramp_status ramp_trace_create(const char *model, const char *domain,
                              const char *source, int experts, int topk,
                              ramp_trace **out);
/* Appends one record. counts: [E], must sum to tokens*topk unless the trace
 * holds aggregates (tokens may then be the sum / k rounded). ids: NULL or
 * [tokens * topk] expert ids in [0, E). */
ramp_status ramp_trace_append(ramp_trace *t, int32_t step, int32_t layer,
                              int32_t tokens, const int32_t *counts,
                              const int32_t *ids);
/* Writes atomically (temporary file, then rename). */
ramp_status ramp_trace_write(const ramp_trace *t, const char *path);
ramp_status ramp_trace_read(const char *path, ramp_trace **out);
/* Reads `path` if it exists (must match E and k), appends every record of
 * `more`, writes back atomically. */
ramp_status ramp_trace_append_file(const char *path, const ramp_trace *more);
void ramp_trace_free(ramp_trace *t);

/* Imports SGLang's expert-distribution dump {"logical_count": [L][E]}: one
 * record per layer with a nonzero row (dense layers skipped), tokens = row
 * sum / topk rounded. */
ramp_status ramp_trace_import_sglang(const char *path, const ramp_model *model,
                                     const char *domain, ramp_trace **out);

typedef struct {
    int64_t records;          /* records considered */
    int64_t batches_ge128;    /* records with tokens >= 128 */
    double tokens_mean;
    int32_t tokens_min, tokens_p50, tokens_p90, tokens_p99, tokens_max;
    double frac_ge128;        /* share of records with >= 128 tokens */
    double imbalance_median;  /* median most-loaded GPU / mean, >= min_tokens */
    double imbalance_p90;
    int64_t histogram[16];    /* records per power-of-two token bucket:
                                 [0]=0, [1]=1, [2]=2-3, [3]=4-7 ... [15]=>=16384 */
} ramp_trace_stats;

/* Statistics over the records with min_tokens <= tokens <= max_tokens
 * (max_tokens <= 0: no upper bound) for the imbalance; batch-size figures
 * cover all records. */
ramp_status ramp_trace_stats_compute(const ramp_trace *t,
                                     const ramp_placement *p, int min_tokens,
                                     int max_tokens, ramp_trace_stats *out);

/* ======================================================================
 * 4. Serving-traffic routing generator (see docs/traffic.md)
 * ==================================================================== */

typedef enum {
    RAMP_DOMAIN_CHAT = 0,
    RAMP_DOMAIN_MATH = 1,
    RAMP_DOMAIN_CODE = 2,
    RAMP_DOMAIN_KNOWLEDGE = 3,
    RAMP_DOMAIN_COUNT = 4,
    RAMP_DOMAIN_MIXED = -1,   /* requests drawn from all four */
    RAMP_DOMAIN_UNIFORM = -2  /* uniformly random routing, no popularity */
} ramp_domain;

const char *ramp_domain_name(int domain); /* "chat", ..., "mixed", "uniform" */
ramp_status ramp_domain_parse(const char *text, int *domain);

typedef enum { RAMP_ARRIVAL_CONCURRENCY = 0, RAMP_ARRIVAL_RATE = 1 } ramp_arrival;

typedef struct {
    ramp_model model;
    int domain;           /* ramp_domain */
    ramp_arrival arrival;
    int concurrency;      /* requests held running (CONCURRENCY) */
    double rate;          /* requests per second (RATE) */
    double step_seconds;  /* simulated time per forward pass (RATE) */
    int token_budget;     /* max tokens per forward pass */
    int max_running;      /* cap on running requests (RATE) */
    int steps;            /* forward passes to record */
    int warmup_steps;     /* forward passes simulated before recording */
    int layers;           /* MoE layers recorded per pass (<= model.layers) */
    int record_ids;       /* also store top-k ids */
    uint64_t seed;
    const char *routing_dir; /* folder with the real counts (data/routing) */
} ramp_traffic_params;

/* Fills defaults (concurrency 64, budget 2048 tokens, ...). */
void ramp_traffic_defaults(ramp_traffic_params *p, const ramp_model *model);
/* Generates a trace; deterministic for a given seed. progress: optional
 * callback (fraction done, user). */
ramp_status ramp_traffic_generate(const ramp_traffic_params *p,
                                  void (*progress)(double, void *), void *user,
                                  ramp_trace **out);

/* ======================================================================
 * 5. Kernel configurations
 * ==================================================================== */

/* One configuration of the fused kernel (DESIGN.md, "The kernel"). */
typedef struct {
    int rows;       /* b: token rows per tile {2,4,6,8,12,16,24,32,48,64} */
    int width;      /* w: intermediate columns per tile {128,256,512} */
    int stages;     /* pipeline depth {2,3,4} */
    int persistent; /* 0 plain grid, 1 persistent grid + tile scheduler */
    int grouped;    /* 1: grouped tile order for L2 reuse */
    int splitk;     /* split of the up projection's K = d: 1, 2, 4 */
} ramp_config;

/* Stable readable names: "r16.w256.s4", with ".persist", ".grp", ".k2"
 * suffixes in that order when set. */
ramp_status ramp_config_parse(const char *text, ramp_config *out);
char *ramp_config_name(const ramp_config *c, char *buf, size_t size);
int ramp_config_equal(const ramp_config *a, const ramp_config *b);

/* Device limits the estimates are checked against. */
typedef struct {
    char name[64];
    int sms;                  /* 132 on H200 */
    int smem_per_block;       /* bytes, opt-in max: 232448 */
    int smem_per_sm;          /* bytes: 233472 */
    int regs_per_sm;          /* 65536 */
    int max_threads_per_sm;   /* 2048 */
    int max_blocks_per_sm;    /* 32 */
} ramp_device_limits;

void ramp_device_limits_h200(ramp_device_limits *out);

/* Resources of one configuration on one geometry. Estimates until the GPU
 * runtime replaces them with the compiler's report (ramp_resources.source). */
typedef struct {
    int smem_bytes;
    int threads;
    int regs_per_thread;
    int blocks_per_sm;   /* occupancy class; 0 if it cannot run */
    int valid;
    int measured;        /* 1: from ptxas, 0: estimate */
    char why[96];        /* reason when !valid */
} ramp_resources;

ramp_status ramp_config_resources(const ramp_config *c, const ramp_geometry *g,
                                  const ramp_device_limits *lim,
                                  ramp_resources *out);

/* Every valid configuration for a geometry, in a stable order. *out is
 * malloc'd; free with free(). */
ramp_status ramp_config_space(const ramp_geometry *g,
                              const ramp_device_limits *lim,
                              ramp_config **out, int *count);

/* ======================================================================
 * 6. Timing datasets
 *
 * safetensors (docs/formats.md): "loads" I32 [L, X] tokens per local expert,
 * "nexp" I32 [L], "batch" I32 [L], "gpu" I32 [L], "domain" I32 [L],
 * "batch_tokens" I32 [L], "times_us" F32 [L, C] (NaN: not measured yet);
 * __metadata__ holds format, version, model, layout, geometry, the
 * configuration names (comma separated), domain names, device, command, date.
 * ==================================================================== */

typedef struct {
    char model[RAMP_NAME_MAX];
    char layout[16];
    char device[64];
    char command[512];
    char date[32];
    ramp_geometry geom;
    int sms;                 /* SM count of the device the times come from */
    int nconfigs;
    ramp_config *configs;    /* [nconfigs] */
    int *blocks_per_sm;      /* [nconfigs] occupancy class of each */
    int ndomains;
    char (*domains)[RAMP_NAME_MAX]; /* [ndomains] */
    int64_t nloads;
    int64_t capacity;
    int max_experts;         /* X */
    int32_t *loads;          /* [nloads * max_experts] */
    int32_t *nexp;           /* [nloads] experts in this load */
    int32_t *batch;          /* [nloads] batch id; a batch's GPUs share it */
    int32_t *gpu;            /* [nloads] */
    int32_t *domain;         /* [nloads] index into domains */
    int32_t *batch_tokens;   /* [nloads] tokens in the whole batch */
    float *times_us;         /* [nloads * nconfigs] */
} ramp_timing;

ramp_status ramp_timing_create(const char *model, const char *layout,
                               const ramp_geometry *g, int sms,
                               const ramp_config *configs,
                               const int *blocks_per_sm, int nconfigs,
                               ramp_timing **out);
/* Returns the domain's index, adding it if new. */
int ramp_timing_domain_index(ramp_timing *t, const char *name);
/* Appends one load (times set to NaN); returns its index in *index. */
ramp_status ramp_timing_add_load(ramp_timing *t, int32_t batch, int32_t gpu,
                                 int domain, int32_t batch_tokens, int nexp,
                                 const int32_t *load, int64_t *index);
ramp_status ramp_timing_write(const ramp_timing *t, const char *path);
/* Reads and checks: shapes, finite non-negative times (NaN allowed only
 * when allow_missing), configuration names, counts. */
ramp_status ramp_timing_read(const char *path, int allow_missing,
                             ramp_timing **out);
void ramp_timing_free(ramp_timing *t);

/* ======================================================================
 * 7. Cost model (paper Section 3.1, Equations 1-3)
 * ==================================================================== */

typedef struct {
    double waves;   /* W_c = ceil(T_c / S_c) */
    double tiles;   /* T_c = q_c * sum_e ceil(n_e / b_c) (q_c = h/w * splitk) */
    double active;  /* A   = experts with n_e > 0 */
} ramp_features;

/* S_c = sms * blocks_per_sm. */
void ramp_features_compute(const ramp_config *c, const ramp_geometry *g,
                           int sms, int blocks_per_sm, int nexp,
                           const int32_t *load, ramp_features *out);

/* Non-negative least squares, Lawson-Hanson: min ||A x - b|| s.t. x >= 0.
 * A: row-major [m][n], n <= 16. */
ramp_status ramp_nnls(const double *A, int m, int n, const double *b,
                      double *x);
/* Ordinary least squares (QR / normal equations with pivoting). */
ramp_status ramp_ols(const double *A, int m, int n, const double *b, double *x);

/* Spearman rank correlation of two vectors (average ranks for ties). */
double ramp_spearman(const double *a, const double *b, int n);

/* ======================================================================
 * 8. Menu, policies, evaluation: declared in the sections below by their
 *    modules (menu.c, policy.c, eval.c).
 * ==================================================================== */

/* @@MENU_POLICY_EVAL@@ */

/* ======================================================================
 * 9. GPU runtime (advanced): driver API and NVRTC loaded with dlopen.
 * ==================================================================== */

/* @@GPU@@ */

#ifdef __cplusplus
}
#endif
#endif /* RAMP_H */
