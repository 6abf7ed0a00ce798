/*
 * ramp.h - RaMP: routing-aware MoE kernel selection.
 *
 * The one public header of libramp. It reads top to bottom as a manual:
 *   1. errors            - every function returns a ramp_status
 *   2. models, layouts   - MoE geometry and how it is spread over GPUs
 *   3. routing traces    - per forward pass and layer, tokens per expert
 *   4. traffic           - a seeded serving-traffic routing generator
 *   5. configurations    - the fused kernel's configuration space
 *   6. timing datasets   - measured time per (per-GPU load, configuration);
 *                          6a: timing sweeps on the GPU (`ramp bench`)
 *   7. cost model        - Equation 3's terms, NNLS, OLS, rank correlation
 *   8. fitted models, menu, policies, evaluation, plots, plans
 *   9. GPU runtime       - (advanced) driver/NVRTC loaded at run time, the
 *                          selection kernel
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
 * expert counts as the contiguous split. Where that greedy result's busiest
 * GPU would carry more of expected_load than the contiguous split's, the
 * contiguous split is returned. expected_load: [E], >= 0. */
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
 * "topk","domain","source","aggregate":"0"|"1"}. numpy/safetensors read it
 * without libramp. Readers check every record: counts >= 0 and (per-batch
 * traces) each <= tokens and summing to tokens*topk; ids in [0, E), distinct
 * within a token, and their histogram equal to the record's counts.
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
    int aggregate;      /* 1: records are totals over many batches (imported,
                           metadata aggregate="1"): counts need only sum to
                           within topk-1 of tokens*topk, and hold no ids.
                           Set it right after create, before appending. */
} ramp_trace;

ramp_status ramp_trace_create(const char *model, const char *domain,
                              const char *source, int experts, int topk,
                              ramp_trace **out);
/* Appends one record. counts: [E], must sum to tokens*topk unless the trace
 * holds aggregates (tokens may then be the sum / k rounded). ids: NULL or
 * [tokens * topk] expert ids in [0, E), k distinct per token, matching
 * counts; either every record has ids or none (the first decides).
 * RAMP_ERR_INVALID_ARGUMENT (trace unchanged) if any check fails. */
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

/* [src/layout.c] */
/* One balanced placement per MoE layer (EPLB-style, per layer), the expected
 * load of layer l being its experts' total counts over the records of `on`
 * with layer l. out: [layers] placements; free each, then the array. */
ramp_status ramp_placements_balanced_on(const ramp_trace *on, ramp_layout layout,
                                        int layers, ramp_placement ***out);
/* The same over several traces: layer l's expected load is the sum of its
 * experts' counts over the records with layer l of every trace on[0..n)
 * (NULL entries skipped; at least one trace; all of one expert count).
 * The paper's Table 8 balances each domain on the other domains' traffic. */
ramp_status ramp_placements_balanced_on_traces(const ramp_trace *const *on, int n,
                                               ramp_layout layout, int layers,
                                               ramp_placement ***out);
/* Median imbalance over records with min_tokens <= tokens <= max_tokens
 * (max_tokens <= 0: none), record r using placements[layer % n]. */
ramp_status ramp_imbalance_median(const ramp_trace *t,
                                  ramp_placement *const *placements, int n,
                                  int min_tokens, int max_tokens,
                                  double *median, int64_t *records);

/* [src/uniform.c] vLLM's tuning workload: `repeats` batches of each size whose
 * tokens pick k distinct experts uniformly at random; domain "uniform",
 * record layer = repeat index. */
ramp_status ramp_trace_uniform_batches(const ramp_model *m, const int *sizes,
                                       int nsizes, int repeats, uint64_t seed,
                                       ramp_trace **out);

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
 * cover all records. Token percentiles are nearest-rank (sorted[ceil(qn)-1]);
 * imbalance quantiles interpolate linearly (numpy's default). With no record
 * (in range) the mean/fraction (imbalance) figures are NaN. p->experts must
 * equal t->experts. */
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

const char *ramp_domain_name(int domain); /* "chat", ..., "mixed", "uniform";
                                             "unknown" for other values */
/* Case-insensitive; RAMP_ERR_NOT_FOUND for an unknown name. */
ramp_status ramp_domain_parse(const char *text, int *domain);

typedef enum { RAMP_ARRIVAL_CONCURRENCY = 0, RAMP_ARRIVAL_RATE = 1 } ramp_arrival;

/* The generator simulates continuous batching: every pass carries one decode
 * token per generating request, then prompt chunks (of running requests,
 * then of newly admitted ones) up to token_budget. Each request routes its
 * tokens around its domain's per-layer expert popularity (built from the
 * real counts in data/routing and scaled to model.experts) times an
 * affinity of its own, so its tokens keep choosing similar experts. */
typedef struct {
    ramp_model model;
    int domain;           /* ramp_domain; MIXED: each request draws one of
                             the four; UNIFORM: uniform routing (no data
                             files needed) */
    ramp_arrival arrival;
    int concurrency;      /* CONCURRENCY: requests in the system; a finished
                             one is replaced at once */
    double rate;          /* RATE: Poisson arrivals, requests per second */
    double step_seconds;  /* RATE: simulated time per forward pass ... */
    double seconds_per_token; /* ... plus this per token of the pass */
    int token_budget;     /* max tokens per forward pass (>= 1) */
    int max_running;      /* cap on admitted requests (both arrival kinds) */
    int steps;            /* forward passes to record (>= 1) */
    int warmup_steps;     /* forward passes simulated before recording */
    int layers;           /* MoE layers recorded per pass, 1..model.layers,
                             spread evenly over the model's depth: recorded
                             layer i is model layer round(i*(L-1)/(layers-1))
                             and records carry the model layer index */
    int record_ids;       /* also store every token's top-k ids */
    uint64_t seed;        /* traffic: requests, lengths, affinities, choices */
    uint64_t popularity_seed; /* which experts are hot; 0: derived from the
                                 model's name, so traces of one model agree */
    const char *routing_dir; /* folder with the real counts; NULL:
                                $RAMP_DATA_DIR/routing, else the data/routing
                                folder of the source tree */
} ramp_traffic_params;

/* Fills defaults: mixed domains, concurrency 64 (rate 8/s when switched to
 * RATE, 20 ms + 10 us per token per pass), token budget 2048, max_running
 * 256, 1000 recorded passes after 200 warm-up passes, every layer of the
 * model, no ids, seed 1. model may be NULL (fill p->model afterwards). */
void ramp_traffic_defaults(ramp_traffic_params *p, const ramp_model *model);
/* Generates a trace: steps * layers records in pass order, each pass's
 * layers in increasing order; counts of a record sum to tokens * topk.
 * Deterministic: the same params give the same trace on every platform.
 * Errors: RAMP_ERR_INVALID_ARGUMENT naming the bad field; RAMP_ERR_IO or
 * RAMP_ERR_FORMAT naming the routing data file that is missing or bad.
 * progress: optional callback (fraction of recorded passes done, user). */
ramp_status ramp_traffic_generate(const ramp_traffic_params *p,
                                  void (*progress)(double, void *), void *user,
                                  ramp_trace **out);

/* ======================================================================
 * 5. Kernel configurations
 * ==================================================================== */

/* One configuration of the fused kernel (DESIGN.md, "The kernel"). */
typedef struct {
    int rows;       /* b: token rows per tile {2,4,6,8,12,16,24,32,48,64}, and 128
                       for kernel v2's wide tiles */
    int width;      /* w: intermediate columns per tile {128,256,512} */
    int stages;     /* pipeline depth {2,3,4} */
    int persistent; /* 0 plain grid, 1 persistent grid + tile scheduler */
    int grouped;    /* 1: grouped tile order for L2 reuse */
    int splitk;     /* split of the up projection's K = d: 1, 2, 4 */
    int two_phase;  /* kernel v2 only: 0 one fused launch; 1, 2, 4 (wide tiles,
                       rows 128) or 4, 8 (FP8 rows 16, 32, 64; parts divide h/128):
                       two launches, the up projection storing the FP8
                       intermediate to a workspace, then the down projection
                       over all of h, its K in that many parts (kernels/moe_v2.md,
                       "The split", session 14). Those are the space's; v2 also
                       runs 1..5 (wide) and 1..6, 8 (narrow) parts of unequal
                       length where they do not divide h/128 (session 35) */
    int mcast;      /* kernel v2 wide tiles only: 1 = clusters of two CTAs running two
                       row tiles of a slice, each weight stage read from L2 once and
                       written into both by TMA multicast (".mc"; kernels/moe_v2.md,
                       session 15); in v2's space only with .tx (".mc.tx") */
    int tma_x;      /* kernel v2 wide tiles only: 1 = the up stages' 128 token rows as one
                       TMA box of a copy of x in tile order (written before the MoE work:
                       by a small kernel for the kernel alone, by the polymorphic kernel
                       itself in the layer), and a two-phase entry's intermediate rows
                       as one box (".tx"; kernels/moe_v2.md, sessions 17-18). In v2's
                       space on every wide tile, alone and with .mc */
    int ggather;    /* kernel v2 narrow fused FP8 tiles only: 0 none; 2, 4, 8 = groups of
                       that many blocks on as many slices of a row tile exchange their
                       FP8 intermediates through global memory (the layer's ws and
                       ws_count), each then projecting down 1/G of d over the G slices,
                       so an output element takes h / (w G) adds in one launch
                       (".gg8"; kernels/moe_v2.md, session 36). Not in v2's space */
} ramp_config;

/* Stable readable names: "r16.w256.s4", with ".persist", ".grp", ".k2"
 * suffixes in that order when set; a two-phase v2 configuration ends in
 * ".ph2" (two_phase 1) or ".ph2.dk2" / ".ph2.dk4" / ".ph2.dk8" (its down
 * projection's K in 2, 4 or 8 parts; ".dk3", ".dk5", ".dk6" parse too):
 * "r128.w512.s3.ph2.dk2",
 * "r16.w128.s4.ph2.dk4"; a multicast one ends in ".mc" after those:
 * "r128.w256.s3.ph2.dk2.mc"; one with token rows by TMA in ".tx" after
 * those: "r128.w256.s3.ph2.dk2.mc.tx"; a narrow fused tile gathering its
 * intermediates over G blocks ends in ".gg<G>": "r16.w128.s4.gg8". */
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

/* Upper bound of the v1 kernel's registers per thread for a configuration
 * (measured with ptxas; see src/config.c). */
int ramp_config_register_bound(const ramp_config *c);

ramp_status ramp_config_resources(const ramp_config *c, const ramp_geometry *g,
                                  const ramp_device_limits *lim,
                                  ramp_resources *out);

/* Every candidate of the grid for a geometry, valid or not (for listings
 * that show why one does not fit). *out is malloc'd; free with free(). */
ramp_status ramp_config_candidates(const ramp_geometry *g, ramp_config **out,
                                   int *count);

/* Every valid configuration for a geometry, in a stable order. *out is
 * malloc'd; free with free(). */
ramp_status ramp_config_space(const ramp_geometry *g,
                              const ramp_device_limits *lim,
                              ramp_config **out, int *count);

/* The fused kernel a dataset's times or a plan's choice are for: v1
 * (kernels/moe_v1.cuh, the whole space above) or the Hopper kernel v2
 * (kernels/moe_v2.cuh), which runs plain launch, no grouped order, no
 * split-K, d a multiple of 256, with its wide tiles of 128 rows (fused or in
 * two launches), FP8 and BF16 layers but not FP8 layers taking BF16 hidden
 * states (src/moe_v2.h). Datasets and plans
 * record it (metadata / JSON "kernel", written only when not v1). */
typedef enum { RAMP_KERNEL_V1 = 0, RAMP_KERNEL_V2 = 1 } ramp_kernel_version;

/* "v1", "v2"; "?" out of range. */
const char *ramp_kernel_version_name(ramp_kernel_version k);
/* "v1" or "v2"; RAMP_ERR_NOT_FOUND naming the text otherwise. */
ramp_status ramp_kernel_version_parse(const char *text, ramp_kernel_version *out);
/* RAMP_OK when kernel k runs configuration c on geometry g, else
 * RAMP_ERR_UNSUPPORTED saying why (RAMP_ERR_INVALID_ARGUMENT: bad k). */
ramp_status ramp_kernel_version_check(ramp_kernel_version k, const ramp_config *c,
                                      const ramp_geometry *g);
/* Kernel k's configuration space on g: v1's is ramp_config_space; v2's is
 * the part of it that v2 runs (for Qwen3-30B EP8 97 of 180, DeepSeek-V3 EP8
 * 154 of 378 in session 41; it grew with the kernel, so older datasets time
 * less of it: `ramp dataset info` says how much), in ramp_config_space's
 * order; *out malloc'd (free()). */
ramp_status ramp_config_space_for(ramp_kernel_version k, const ramp_geometry *g,
                                  const ramp_device_limits *lim,
                                  ramp_config **out, int *count);
/* Resources of configuration c under kernel k: v1's estimate
 * (ramp_config_resources); v2's own layout (kernels/moe_v2_params.h; a
 * two-phase configuration's larger phase), 384 threads, 168 registers at
 * entry, one block per SM, valid when v2 runs c on g (why otherwise). */
ramp_status ramp_config_resources_for(ramp_kernel_version k, const ramp_config *c,
                                      const ramp_geometry *g, const ramp_device_limits *lim,
                                      ramp_resources *out);
/* Occupancy class (blocks per SM) of configuration c under kernel k: v1's
 * estimate (ramp_config_resources); v2: 1, its grid is min(tiles, SMs)
 * blocks striding over the tiles. 0 if it cannot run. */
int ramp_config_occupancy(ramp_kernel_version k, const ramp_config *c,
                          const ramp_geometry *g, const ramp_device_limits *lim);

/* ======================================================================
 * 6. Timing datasets
 *
 * safetensors (docs/formats.md): "loads" I32 [L, X] tokens per local expert,
 * "nexp" I32 [L], "batch" I32 [L], "gpu" I32 [L], "domain" I32 [L],
 * "batch_tokens" I32 [L], "times_us" F32 [L, C] (NaN: not measured yet);
 * __metadata__ holds format, version, model, layout, geometry (experts, topk,
 * inter, hidden, bf16), sms, the configuration names and their blocks_per_sm
 * (comma separated), domain names, device, command, date. Set device,
 * command, date and times_us directly; ramp_timing_write refuses Inf or
 * negative times (RAMP_ERR_NUMERIC) and anything the reader would refuse.
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
    int checksum;            /* set by the reader: 1 if the file carried a
                                sha256 checksum and it matched (files are
                                written with one; older files have none) */
    char placement[64];      /* how experts were placed on GPUs for the
                                loads: "" (not recorded: contiguous),
                                "contiguous", "balanced" or
                                "balanced:<source>" (metadata "placement",
                                written when not empty) */
    int kernel;              /* ramp_kernel_version the times are of
                                (metadata "kernel", written when not v1);
                                a v2 dataset holds only configurations v2
                                runs (checked on write and read) */
    int weight_units;        /* the weight layout the times are of: 0
                                row-major (metadata "weights" absent or
                                "rows"), 1 stage units (ramp_layer_desc.
                                weight_units; "weights": "units"; kernel v2,
                                d a multiple of 256, every configuration
                                one units run). `ramp bench --weights`
                                sets it on a dataset with no times */
} ramp_timing;

/* 1 when a dataset's placement text says balanced ("balanced" or
 * "balanced:..."), 0 for contiguous or not recorded. */
int ramp_placement_is_balanced(const char *placement);

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

/* [src/loadset.c] An empty dataset over the whole configuration space of a
 * geometry, each configuration with its occupancy class. */
ramp_status ramp_timing_create_space(const ramp_model *m, const char *layout,
                                     const ramp_geometry *g,
                                     const ramp_device_limits *lim,
                                     ramp_timing **out);
/* The same over kernel k's space (ramp_config_space_for), t->kernel = k. */
ramp_status ramp_timing_create_space_for(ramp_kernel_version k, const ramp_model *m,
                                         const char *layout, const ramp_geometry *g,
                                         const ramp_device_limits *lim,
                                         ramp_timing **out);

/* [src/loadset.c] Adds the per-GPU loads of a trace's records to a dataset (times NaN, to be
 * filled by `ramp bench` on a GPU or by the simulator). Every `stride`-th
 * record with min_tokens <= tokens is taken, at most max_batches (<= 0: no
 * limit); each record becomes one batch of per-GPU loads. Record r uses
 * placements[layer % nplacements] (one for all, or one per layer). */
ramp_status ramp_timing_add_trace(ramp_timing *t, const ramp_trace *trace,
                                  ramp_placement *const *placements,
                                  int nplacements, int stride, int min_tokens,
                                  int64_t max_batches);

/* [src/simulate.c] A stand-in for H200 measurements until real ones exist: an analytic model
 * of the fused kernel (waves of tiles sharing HBM bandwidth, pipeline depth
 * bounding each block's bytes in flight, MMA rate, padding, L2 reuse under
 * grouped order, split-K partial sums, launch and per-expert costs) plus
 * seeded multiplicative noise. Datasets it fills say device "simulated".
 * Never report a speed from it. */
typedef struct {
    double hbm_bytes_per_us;   /* 4.2e6: the H200's measured copy rate */
    double mma_flops_per_us;   /* per SM: 4.0e6 (mma.sync FP8, estimate) */
    double latency_us;         /* one pipeline stage's load latency: 1.0 */
    double launch_us;          /* fixed cost of a launch: 3.0 */
    double noise;              /* relative sd of the noise: 0.01 */
    uint64_t seed;
} ramp_sim_params;

void ramp_sim_defaults(ramp_sim_params *p);
ramp_status ramp_sim_time(const ramp_sim_params *sp, const ramp_config *c,
                          const ramp_geometry *g, const ramp_device_limits *lim,
                          int nexp, const int32_t *load, double *time_us);
/* One cell of a dataset, noise included: a pure function of (seed, load i,
 * configuration c), so any subset in any order reproduces ramp_sim_fill. */
ramp_status ramp_sim_cell(const ramp_sim_params *sp, const ramp_device_limits *lim,
                          const ramp_timing *t, int64_t i, int c, double *time_us);
/* Fills every time of a dataset (device becomes "simulated"). */
ramp_status ramp_sim_fill(const ramp_sim_params *sp, const ramp_device_limits *lim,
                          ramp_timing *t);

/* ---- 6a. Timing sweeps (bench.c; `ramp bench`) ---------------------------
 *
 * Fills the missing (NaN) times of a dataset by timing every configuration
 * on every load, configuration by configuration (each compiled once), in
 * chunks that survive a lost machine: the sweep stops cleanly before a
 * deadline, checkpoints its file every few seconds, and the file always holds
 * a valid dataset of whole measured cells (NaN: still to do), written
 * atomically. Running the sweep again on that file resumes it.
 *
 * Backends:
 *  GPU  the fused kernel of the dataset (t->kernel: v1, kernels/moe_v1.cuh,
 *       or v2, kernels/moe_v2.cuh, with the same method) on one GPU. Weights: random
 *       FP8 e4m3 with 128x128 block scales (BF16 when geom.bf16) for the
 *       dataset's max_experts local experts, made and uploaded once. Router
 *       output, per load (the same for every configuration): P = the load's
 *       token-expert pairs are dealt to M tokens,
 *         M = batch_tokens clamped to [max(max_e n_e, ceil(P / min(k, nexp))), P]
 *       (under TP: the batch, k local choices per token; under EP with
 *       k <= G: about one local choice per token, as a GPU receives them;
 *       the other choices name experts held elsewhere), expert by expert,
 *       round robin over the tokens in a seeded random order, so every
 *       expert's tokens are distinct and its count is the load's exactly.
 *       Hidden states (FP8 with 1x128 scales) and router weights random. The
 *       selection kernel's CPU twin groups and pads the slots into the
 *       configuration's row tiles; the grid is sized for the load's own
 *       tiles (a direct launch). Each run: a write of flush_bytes evicts L2,
 *       then the launch between two events on one stream; `warmup` runs
 *       are discarded and the median of `repeats` is the time. EP16/EP32
 *       loads are replayed on the one GPU (no token exchange), as the paper.
 *       The measured occupancy (ptxas) replaces each configuration's
 *       blocks_per_sm estimate (v2: stays 1, its grid is at most one block
 *       per SM), and the device's SM count the dataset's sms.
 *  SIM  ramp_sim_time with ramp_sim_fill's noise (the same numbers for the
 *       same sim params), device "simulated": for tests and dry runs.
 *  CUSTOM  callbacks (ramp_bench_ops): tests, other kernels.
 * A dataset whose filled times come from another device is refused (one
 * dataset, one device). */

typedef enum {
    RAMP_BENCH_GPU = 0,
    RAMP_BENCH_SIM = 1,
    RAMP_BENCH_CUSTOM = 2
} ramp_bench_backend;

/* "gpu", "sim", "custom"; "?" out of range. */
const char *ramp_bench_backend_name(ramp_bench_backend b);
/* "gpu" or "sim" (case-insensitive); RAMP_ERR_NOT_FOUND otherwise. */
ramp_status ramp_bench_backend_parse(const char *text, ramp_bench_backend *out);

typedef struct {
    const char *device;   /* recorded as the dataset's device; non-empty */
    void *user;
    /* Before a configuration's first cell in a call; NULL: nothing. */
    ramp_status (*begin_config)(void *user, const ramp_timing *t, int config);
    /* The time of `config` on load `load` (finite, >= 0, microseconds). */
    ramp_status (*time_cell)(void *user, const ramp_timing *t, int config,
                             int64_t load, double *time_us);
    /* After its last cell in this call; NULL: nothing. */
    void (*end_config)(void *user, const ramp_timing *t, int config);
} ramp_bench_ops;

typedef struct {
    ramp_bench_backend backend;  /* GPU */
    const ramp_bench_ops *ops;   /* CUSTOM only */
    int gpu;                     /* device ordinal (0) */
    int repeats;                 /* timed runs per cell (5), 1..1000 */
    int warmup;                  /* discarded runs before them (1), 0..100 */
    double max_seconds;          /* stop before this long (240); 0: no limit */
    double checkpoint_seconds;   /* write the file this often (60); 0: only
                                    at the end */
    int64_t max_cells;           /* stop after this many cells; 0: no limit */
    uint64_t seed;               /* GPU: weights, hidden states, routing (1) */
    size_t flush_bytes;          /* GPU: L2-evicting write; 0: 512 MiB, at
                                    least 8x the device's L2 */
    int compile_threads;         /* GPU: compiles ahead; 0: CPUs - 1 (<= 32) */
    ramp_sim_params sim;         /* SIM (ramp_sim_defaults) */
    const char *command;         /* recorded as the dataset's command; NULL:
                                    left as it is */
    void (*progress)(double fraction_filled, void *user);
    void *progress_user;
} ramp_bench_options;

void ramp_bench_defaults(ramp_bench_options *o);

typedef enum {
    RAMP_BENCH_DONE = 0,       /* every cell is filled */
    RAMP_BENCH_DEADLINE = 1,   /* stopped before max_seconds */
    RAMP_BENCH_MAX_CELLS = 2   /* stopped after max_cells */
} ramp_bench_stop;

typedef struct {
    int64_t cells;          /* nloads * nconfigs */
    int64_t filled_before;  /* cells filled when the call began */
    int64_t measured;       /* cells this call measured */
    int64_t filled;         /* cells filled now */
    int complete;           /* filled == cells */
    ramp_bench_stop stopped;
    int checkpoints;        /* writes of the file before the final one */
    double seconds;         /* wall time of the call */
    char device[64];
} ramp_bench_report;

/* Checks that the kernel can run every configuration of t on its geometry
 * (RAMP_ERR_UNSUPPORTED naming the configuration and why). */
ramp_status ramp_bench_check(const ramp_timing *t);

/* Times t's NaN cells (ordered by configuration, then load; filled cells are
 * skipped) and writes t to `path` atomically every checkpoint_seconds and at
 * the end (path NULL: nothing is written). Stops cleanly when the next cell
 * (and the write after it) would pass max_seconds, or after max_cells; at
 * least one cell is measured per call, so repeated calls always finish.
 * Sets t's device, date (UTC) and command. Returns RAMP_OK also when
 * stopped early (report->complete says which). Errors: bad options or
 * geometry (before anything is timed or written), RAMP_ERR_NO_GPU, a
 * device or compile failure; t then holds the cells measured so far and
 * `path` its last checkpoint (nothing if none). */
ramp_status ramp_bench_run(ramp_timing *t, const char *path,
                           const ramp_bench_options *opt,
                           ramp_bench_report *report);

/* Resuming: if `path` exists it must hold t's loads and configurations (a
 * sweep's earlier output); its times, device, sms and blocks_per_sm are
 * copied into t and *taken says how many times were filled
 * (RAMP_ERR_FORMAT naming the first difference otherwise). A missing file:
 * t unchanged, *taken = -1. */
ramp_status ramp_bench_resume(ramp_timing *t, const char *path,
                              int64_t *taken);

/* A dataset with the same loads and only configurations idx[0..n-1] (in
 * that order, distinct), their times copied. */
ramp_status ramp_timing_select_configs(const ramp_timing *t, const int *idx,
                                       int n, ramp_timing **out);
/* A dataset of t's loads for kernel k: t's configurations that k runs (in
 * t's order), each with k's occupancy class, t->kernel = k; *dropped says
 * how many were left out. Refused (RAMP_ERR_INVALID_ARGUMENT, saying why)
 * when t holds measured times of another kernel, or k runs none of them. */
ramp_status ramp_timing_select_kernel(const ramp_timing *t, ramp_kernel_version k,
                                      ramp_timing **out, int *dropped);

/* ======================================================================
 * 7. Cost model (paper Section 3.1, Equations 1-3)
 * ==================================================================== */

typedef struct {
    double waves;   /* W_c = ceil(T_c / S_c) */
    double tiles;   /* T_c = q_c * sum_e ceil(n_e / b_c) (q_c = h/w * splitk);
                       a multicast entry's row tiles rounded up to even
                       (it runs them in pairs) */
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
 * 8. Fitted cost models, the menu, policies, held-out evaluation, plots
 *    and plans
 * ==================================================================== */

/* ---- 8a. The fitted cost model (costmodel.c) ---------------------------
 *
 * One coefficient vector per configuration. RAMP_COSTMODEL_EQ3 is the
 * paper's Equation 3, t = th0 + th1*W + th2*T + th3*A, fit by NNLS on the
 * relative error: min sum_i (t_hat(n_i)/t(n_i) - 1)^2, i.e. rows scaled by
 * 1/t_i and target 1. RAMP_COSTMODEL_TILECOUNT is Appendix A.2's
 * alternative, t = th0 + th1*T + th2*T/sms + th3*log(1+T), fit by ordinary
 * least squares on the same relative error (only the terms and the sign
 * constraint differ; T and T/sms are collinear within one configuration,
 * and the pivoted OLS then gives one of them a zero coefficient).
 * RAMP_COSTMODEL_EQ3_PAIRS is Equation 3 plus a fifth term, the load's
 * token-expert pairs P = sum_e n_e: t = th0 + th1*W + th2*T + th3*A + th4*P,
 * fit exactly as EQ3 (NNLS, S_c, the intercept penalty). Kernel v2 does
 * per-pair work (token gathers, f32 output reductions per slice) that T, W
 * and A do not see when every expert fits in one row tile
 * (eval-2026-11-30-kernel-v2.md). The default of ramp_policy_defaults and
 * the CLI since eval-2026-11-30-pairs.md: `ramp fit` writes a plan of five
 * terms (8f), which the selection kernel evaluates with a fifth FMA (9.4);
 * an EQ3 plan (`--cost-model eq3`) is served exactly as before. */

#define RAMP_COST_TERMS 4      /* Equation 3's terms (an EQ3 plan's) */
#define RAMP_COST_TERMS_MAX 5  /* the most terms of any kind (EQ3_PAIRS; a
                                  plan holds this many per entry) */

typedef enum {
    RAMP_COSTMODEL_EQ3 = 0,
    RAMP_COSTMODEL_TILECOUNT = 1,
    RAMP_COSTMODEL_EQ3_PAIRS = 2
} ramp_costmodel_kind;

/* Terms of a kind: 4 (EQ3, TILECOUNT), 5 (EQ3_PAIRS); 0 if unknown. */
int ramp_costmodel_nterms(ramp_costmodel_kind kind);
/* "eq3", "tilecount", "eq3+pairs"; "?" out of range. */
const char *ramp_costmodel_kind_name(ramp_costmodel_kind kind);
/* Parses a name of ramp_costmodel_kind_name (also "eq3-pairs"). */
ramp_status ramp_costmodel_kind_parse(const char *text, ramp_costmodel_kind *out);

typedef struct {
    ramp_costmodel_kind kind;
    int kernel;             /* ramp_kernel_version of the dataset it was fit
                               on (ramp_config_max_waves's rule) */
    ramp_geometry geom;
    int sms;
    int nconfigs;
    ramp_config *configs;   /* [nconfigs] copies of the dataset's */
    int *blocks_per_sm;     /* [nconfigs] occupancy class of each */
    double *theta;          /* [nconfigs * ramp_costmodel_nterms(kind)],
                               microseconds */
    int64_t *rows;          /* [nconfigs] loads the fit used; 0: unfit, and
                               its prediction is +INFINITY */
    double *rel_rmse;       /* [nconfigs] fit's RMS relative error (NaN unfit) */
    int *slots;             /* [nconfigs] S_c, tiles per wave of the W term:
                               an EQ3 fit's choice among sms * j, j = 1 ..
                               blocks_per_sm (ramp_wave_fit below); else
                               sms * blocks_per_sm. NULL (a model built by
                               hand): sms * bps */
} ramp_costmodel;

/* The terms of load `load` under configuration c (EQ3: 1, W, T, A;
 * TILECOUNT: 1, T, T/sms, log(1+T); EQ3_PAIRS: 1, W, T, A, P) into
 * terms[ramp_costmodel_nterms(kind)]. */
void ramp_costmodel_terms(ramp_costmodel_kind kind, const ramp_config *c,
                          const ramp_geometry *g, int sms, int blocks_per_sm,
                          int nexp, const int32_t *load, double *terms);

/* The same with S_c given directly (W = ceil(T / slots); slots < 1 counts
 * as 1): what a fitted model and a plan use. */
void ramp_costmodel_terms_slots(ramp_costmodel_kind kind, const ramp_config *c,
                                const ramp_geometry *g, int sms, int slots,
                                int nexp, const int32_t *load, double *terms);
/* S_c of configuration `config` in a fitted model (0 if out of range). */
int ramp_costmodel_slots(const ramp_costmodel *m, int config);

/* How an EQ3 (or EQ3_PAIRS) fit chooses S_c, the tiles per wave of W = ceil(T / S_c); the
 * candidates are sms * j for j = 1 .. blocks_per_sm (the form of Equation 3
 * is the same under all four; bench/results/eval-2026-11-30-gap.md).
 *   PICKS (default): S_c = sms for every configuration, then a coordinate
 *     descent over the configurations (at most 3 passes, in index order)
 *     moves one to a larger candidate only where that strictly lowers the
 *     training loads' sum of t(pick) / t(best), the picks' regret (pick:
 *     argmin of the predictions over the fitted runnable configurations,
 *     ties to the lower index; loads where one of them is unmeasured are
 *     not counted). v1's time steps at every multiple of the SM count, with
 *     unequal steps, and the RMS error below weighs the many one-wave loads
 *     and the tail, not the loads where configurations compete.
 *   RMSE: the lowest RMS relative error on the training loads, ties to the
 *     larger (eval-2026-11-30-v2).
 *   CAPACITY: sms * blocks_per_sm, the paper's wave.
 *   SMS: sms for every configuration.
 * intercept_free = 0 (default) adds to each EQ3 fit one row penalising
 * theta_0: sqrt(1e-6 * rows) * mean(1 / t) * theta_0 = 0 (target 0), which
 * changes a fit only where theta_0 and the W term are (nearly) collinear,
 * i.e. every training load is one wave: the fixed cost is then put on W,
 * so a load of two waves is predicted to cost two, not one. 1: the paper's
 * plain NNLS. A zeroed struct is the default. */
typedef enum {
    RAMP_WAVE_PICKS = 0,
    RAMP_WAVE_RMSE = 1,
    RAMP_WAVE_CAPACITY = 2,
    RAMP_WAVE_SMS = 3
} ramp_wave_fit;

typedef struct {
    ramp_wave_fit wave;
    int intercept_free;
} ramp_costmodel_fit_options;

/* "picks", "rmse", "capacity", "sms"; "?" out of range. */
const char *ramp_wave_fit_name(ramp_wave_fit w);
ramp_status ramp_wave_fit_parse(const char *text, ramp_wave_fit *out);

/* Fits every configuration of t on the loads where mask[i] != 0 (mask NULL:
 * all loads). A configuration's rows are the masked loads with a finite
 * time for it (NaN = not measured is skipped); a time <= 0 or infinite is
 * RAMP_ERR_NUMERIC naming the load and configuration. RAMP_ERR_INVALID_
 * ARGUMENT if no configuration has a single row. ramp_costmodel_fit uses
 * the default options; opt NULL is the default too. */
ramp_status ramp_costmodel_fit(const ramp_timing *t, const uint8_t *mask,
                               ramp_costmodel_kind kind, ramp_costmodel **out);
ramp_status ramp_costmodel_fit_opt(const ramp_timing *t, const uint8_t *mask,
                                   ramp_costmodel_kind kind,
                                   const ramp_costmodel_fit_options *opt,
                                   ramp_costmodel **out);
void ramp_costmodel_free(ramp_costmodel *m);

/* Transfer to a model never timed (paper Section 4.2: "with the layer's
 * dimensions added to its terms and fit on seven models"): each of the
 * target's configurations is fit, by the same NNLS on relative error, on
 * every load of the training datasets (other models, any layouts) that
 * timed a configuration of the same name, with Equation 3's three load
 * terms multiplied by ramp_costmodel_transfer_scale (hidden / 2048: every
 * tile and wave reduces over, and writes, the hidden dimension), each
 * dataset at its own sms * blocks_per_sm. The result is a plain EQ3 model
 * of the target's configurations (the target's scale folded into theta,
 * S_c = sms * blocks_per_sm); a configuration no training dataset timed is
 * unfit. The target's times are not read. */
double ramp_costmodel_transfer_scale(const ramp_geometry *g);
ramp_status ramp_costmodel_fit_transfer(const ramp_timing *const *train, int ntrain,
                                        const ramp_timing *target,
                                        ramp_costmodel **out);
/* The same for kind EQ3 or EQ3_PAIRS (P is a load term: scaled as T and A;
 * the result is a model of that kind); other kinds RAMP_ERR_INVALID_ARGUMENT. */
ramp_status ramp_costmodel_fit_transfer_kind(const ramp_timing *const *train, int ntrain,
                                             const ramp_timing *target,
                                             ramp_costmodel_kind kind,
                                             ramp_costmodel **out);

/* Predicted time (us) of configuration `config` on a load. */
double ramp_costmodel_predict(const ramp_costmodel *m, int config, int nexp,
                              const int32_t *load);
/* Predictions of every configuration into out[nconfigs]. */
void ramp_costmodel_predict_all(const ramp_costmodel *m, int nexp,
                                const int32_t *load, double *out);
/* argmin of the prediction over candidates (NULL: all configurations);
 * ties go to the earliest candidate. RAMP_ERR_NUMERIC if no candidate has a
 * finite prediction. */
ramp_status ramp_costmodel_pick(const ramp_costmodel *m, int nexp,
                                const int32_t *load, const int *candidates,
                                int ncandidates, int *config);

typedef struct {
    int64_t loads;            /* loads with a defined rank correlation */
    double spearman_median;   /* per load: predicted vs measured order */
    double spearman_p10;
    double pick_err_median;   /* |predicted/measured - 1| of the pick */
    double pick_err_p90;
    double pick_gap_mean;     /* mean of t(pick)/t(best) - 1 */
} ramp_costmodel_diag;

/* Diagnostics over masked loads of t (which must have m's configurations),
 * ranking the candidates (NULL: all) with a finite measured time. */
ramp_status ramp_costmodel_diagnose(const ramp_costmodel *m,
                                    const ramp_timing *t, const uint8_t *mask,
                                    const int *candidates, int ncandidates,
                                    ramp_costmodel_diag *out);

/* ---- 8b. The menu (menu.c) ----------------------------------------------
 *
 * Greedy top-N from one occupancy class (blocks_per_sm): repeatedly add the
 * configuration that most lowers the workload's total, sum over loads of the
 * minimum over the menu of the time (measured, or predicted by a cost
 * model). Each class with a valid configuration gets its own greedy menu; the
 * class whose menu has the lowest total wins.
 * Tie-breaks: between configurations, the lower index in the dataset; between
 * classes, the lower blocks_per_sm. A menu always gets min(size, class size)
 * entries, even when a later entry no longer lowers the total. A
 * configuration is a candidate only if its time (or prediction) is finite on
 * every load of the workload and its blocks_per_sm is >= 1. */

#define RAMP_MENU_MAX 16

typedef struct {
    int count;
    int blocks_per_sm;               /* the occupancy class */
    int config[RAMP_MENU_MAX];       /* indices into the dataset's configs,
                                        in the order the greedy added them */
    double total_us[RAMP_MENU_MAX];  /* workload total with entries 0..i */
    int64_t loads;                   /* loads in the workload */
} ramp_menu;

/* size: 1..RAMP_MENU_MAX (6 in the paper). occupancy: 0 tries every class,
 * else only that class. model: NULL for measured times, else predicted.
 * mask: the workload's loads (NULL: all). */
ramp_status ramp_menu_greedy(const ramp_timing *t, const uint8_t *mask,
                             int size, int occupancy,
                             const ramp_costmodel *model, ramp_menu *out);

/* The greedy's objective: the paper's sum over loads of the best menu time
 * (PER_LOAD, what ramp_menu_greedy uses), or the layer time (LAYER): sum
 * over batches whose every load is in the mask of the slowest GPU's best
 * menu time (total_us and loads then count those batches' loads). */
typedef enum {
    RAMP_MENU_PER_LOAD = 0,
    RAMP_MENU_LAYER = 1
} ramp_menu_objective;

ramp_status ramp_menu_greedy_objective(const ramp_timing *t, const uint8_t *mask,
                                       int size, int occupancy,
                                       const ramp_costmodel *model,
                                       ramp_menu_objective objective,
                                       ramp_menu *out);

/* The same greedy with entries the caller puts on the menu: include[0 ..
 * ninclude - 1] (indices into t's configurations, distinct, ninclude <=
 * size) are entries 0 .. ninclude - 1, in that order, and the greedy adds
 * the rest up to size from their occupancy class (occupancy, when not 0,
 * must be theirs). For a menu the per-load greedy would not reach, e.g. a
 * configuration that serves loads the workload holds few of. Each must be
 * runnable and timed (predicted) on every load of the workload. */
ramp_status ramp_menu_greedy_include(const ramp_timing *t, const uint8_t *mask, int size,
                                     int occupancy, const ramp_costmodel *model,
                                     ramp_menu_objective objective, const int *include,
                                     int ninclude, ramp_menu *out);

/* ---- 8c. Policies (policy.c) --------------------------------------------
 *
 * A policy picks a configuration index for each per-GPU load. Those that
 * learn are fit on a training mask of loads and never see any other load's
 * times. Table policies key a table on some statistic, keep in each cell the
 * configuration with the least summed measured time over the cell's training
 * loads (batch tables: the least summed layer time, slowest GPU), and fall
 * back to the nearest non-empty cell (token axis first, then the others;
 * ties to the lower cell; on the 18-size axes "nearest" is by token count,
 * ties to the smaller size, as vLLM).
 * Keys: the GPU's token count is the sum of its load (token-expert pairs);
 * padding is the padded rows' share, sum_e ceil(n_e/b)*b - sum_e n_e over
 * sum_e ceil(n_e/b)*b, averaged over the dataset's distinct tile rows b;
 * max/mean and CV are over the GPU's experts (empty experts included). The
 * balance axes use quantile buckets of the training loads. k-NN measures
 * distance on (log2(1 + tokens), active, padding, max/mean) standardised on
 * the training loads, and picks the configuration with the least summed
 * time-over-best across the k neighbours.
 * Candidates: the menu for MENU_* kinds, else every configuration; a
 * configuration with blocks_per_sm < 1, or (tables, k-NN) without a finite
 * time on every training load, is not a candidate. */

typedef enum {
    RAMP_POLICY_VLLM = 0,        /* batch-size table tuned on uniformly
                                    random routing; whole batch's tokens */
    RAMP_POLICY_TRACE_TABLE,     /* same lookup tuned on training traffic */
    RAMP_POLICY_PER_GPU_TABLE,   /* keyed on the GPU's own token count */
    RAMP_POLICY_TABLE_PADDING,   /* 2-D: tokens x padding (8 buckets) */
    RAMP_POLICY_TABLE_ACTIVE,    /* 2-D: tokens x active experts */
    RAMP_POLICY_TABLE_MAXMEAN,   /* 2-D: tokens x largest load / mean */
    RAMP_POLICY_TABLE_CV,        /* 2-D: tokens x coefficient of variation */
    RAMP_POLICY_TABLE_3D,        /* tokens x active x padding (quartiles) */
    RAMP_POLICY_KNN,             /* k nearest training loads */
    RAMP_POLICY_EXHAUSTIVE,      /* oracle: argmin of the measured times */
    RAMP_POLICY_COSTMODEL,       /* RaMP: argmin of Equation 3 */
    RAMP_POLICY_TILECOUNT_OLS,   /* argmin of Appendix A.2's tile formula */
    RAMP_POLICY_MENU_TABLE,      /* trace-tuned batch-size table on the menu */
    RAMP_POLICY_MENU_COSTMODEL,  /* RaMP on the menu: what is served */
    RAMP_POLICY_MENU_BEST,       /* oracle on the menu */
    RAMP_POLICY_COUNT
} ramp_policy_kind;

/* Stable short names ("vllm", "trace-table", "per-gpu-table",
 * "table-padding", "table-active", "table-maxmean", "table-cv", "table-3d",
 * "knn", "exhaustive", "ramp", "tilecount-ols", "menu-table", "menu-ramp",
 * "menu-best"); "?" out of range. */
const char *ramp_policy_name(ramp_policy_kind k);
/* Human label ("vLLM's tuning"); "?" out of range. */
const char *ramp_policy_label(ramp_policy_kind k);
/* Parses a short name (case-insensitive); also "costmodel" for "ramp". */
ramp_status ramp_policy_parse(const char *text, ramp_policy_kind *out);
/* 1 if the policy reads the measured times of the load it chooses for
 * (EXHAUSTIVE, MENU_BEST): an oracle, not a policy one can deploy. */
int ramp_policy_is_oracle(ramp_policy_kind k);
/* 1 for MENU_TABLE, MENU_COSTMODEL, MENU_BEST. */
int ramp_policy_needs_menu(ramp_policy_kind k);

typedef enum {
    RAMP_BUCKETS_POW2 = 0,   /* 0, 1, 2-3, 4-7, ... */
    RAMP_BUCKETS_VLLM18 = 1  /* nearest of vLLM's 18 batch sizes */
} ramp_token_buckets;

/* vLLM's tuned batch sizes. */
#define RAMP_VLLM_SIZES 18
extern const int ramp_vllm_batch_sizes[RAMP_VLLM_SIZES];

typedef struct {
    const int *menu;             /* candidates of the MENU_* kinds */
    int menu_count;
    const char *tune_domain;     /* VLLM tunes on this domain: "uniform" */
    ramp_token_buckets gpu_buckets; /* per-GPU token axis: POW2 */
    int pad_buckets;             /* 8 */
    int aux_buckets;             /* 4: active / max-over-mean / CV axes */
    int cube_buckets;            /* 4: the 3-D table's quartiles */
    int knn_k;                   /* 8 */
    ramp_costmodel_fit_options fit; /* COSTMODEL, MENU_COSTMODEL: how
                                       Equation 3 is fit (zero: default) */
    ramp_costmodel_kind cost_model; /* COSTMODEL, MENU_COSTMODEL: EQ3_PAIRS
                                       (ramp_policy_defaults) or EQ3 (zero:
                                       the paper's Equation 3) */
} ramp_policy_options;

void ramp_policy_defaults(ramp_policy_options *o);

typedef struct ramp_policy ramp_policy;

/* Fits `kind` on the loads with train_mask[i] != 0 (NULL: all). VLLM keeps
 * only masked loads of options->tune_domain and fails with RAMP_ERR_NOT_FOUND
 * if there are none. Batch tables use the batches all of whose loads are
 * masked. RAMP_ERR_INVALID_ARGUMENT when no training data or no candidate
 * remains. opt NULL: defaults. */
ramp_status ramp_policy_fit(ramp_policy_kind kind, const ramp_timing *t,
                            const uint8_t *train_mask,
                            const ramp_policy_options *opt, ramp_policy **out);
/* Chooses for load i of t (t must have the fitted dataset's configurations;
 * oracles read t's measured times of load i). */
ramp_status ramp_policy_choose(const ramp_policy *p, const ramp_timing *t,
                               int64_t i, int *config);
/* Chooses for a raw load (not for oracles: RAMP_ERR_UNSUPPORTED). */
ramp_status ramp_policy_choose_load(const ramp_policy *p, int nexp,
                                    const int32_t *load, int32_t batch_tokens,
                                    int *config);
ramp_policy_kind ramp_policy_kind_of(const ramp_policy *p);
/* The fitted cost model of COSTMODEL, MENU_COSTMODEL, TILECOUNT_OLS; else
 * NULL. Owned by the policy. */
const ramp_costmodel *ramp_policy_costmodel(const ramp_policy *p);
void ramp_policy_free(ramp_policy *p);

/* ---- 8d. Held-out evaluation (eval.c) -----------------------------------
 *
 * For each held-out domain d (every domain of the dataset except "uniform"
 * that has batches): every learning policy, and the menu, are fit on the
 * other domains' loads (VLLM on the "uniform" loads; the others on the
 * traffic domains, "uniform" excluded unless train_uniform), from a copy of
 * the dataset whose held-out times are NaN, and scored on d's batches. A
 * batch's layer time under a policy is the max over its GPUs of the measured
 * time of the configuration the policy picked for that GPU. The reference,
 * "RaMP", is COSTMODEL over the full space. All times must be finite and > 0.
 * Ratios are geometric means over batches; intervals are percentile
 * bootstraps over batches (seeded). */

typedef struct {
    uint64_t seed;          /* bootstrap seed (1) */
    int bootstrap;          /* resamples (1000); 0: no intervals */
    int min_tokens;         /* the ">= 128" subset's threshold (128) */
    int menu_size;          /* 6; 0: no menu policies */
    int train_uniform;      /* 1: "uniform" loads also train the others */
    const char *holdout;    /* NULL: every domain in turn; else only this */
    uint32_t policies;      /* bit (1u << kind) per policy; 0: all.
                               COSTMODEL and EXHAUSTIVE always run */
    int scatter_max;        /* predicted-vs-measured points kept (4000) */
    ramp_policy_options policy;
    ramp_menu_objective menu_objective; /* the menu greedy's objective */
} ramp_eval_options;

void ramp_eval_defaults(ramp_eval_options *o);

/* A ratio over batches: geometric mean of t_num / t_den and its interval. */
typedef struct {
    int64_t batches;
    double geomean, lo, hi;  /* NaN when batches == 0 */
} ramp_eval_ratio;

typedef struct {
    int ran;                 /* requested and fit in every fold */
    char why[160];           /* why not, when requested but !ran */
    double total_us;         /* sum of layer times over scored batches */
    ramp_eval_ratio speedup_all; /* RaMP over this policy, all batches */
    ramp_eval_ratio speedup_ge;  /* ... on batches >= min_tokens */
    double gap_all_pct;      /* this policy's gap to exhaustive:         */
    double gap_ge_pct;       /* (geomean t / t_exhaustive - 1) * 100     */
} ramp_eval_policy_stats;

typedef struct {
    char domain[RAMP_NAME_MAX];
    int64_t train_loads;     /* traffic loads the fold was fit on */
    int64_t test_batches;
    int64_t test_loads;
    ramp_menu menu;          /* count 0 when menu_size == 0 */
    double spearman_median;  /* cost model on the held-out loads */
    double pick_err_median;
} ramp_eval_fold;

typedef struct {
    char model[RAMP_NAME_MAX];
    char layout[16];
    char device[64];
    int nconfigs;
    ramp_config *configs;         /* [nconfigs] the dataset's */
    int min_tokens;
    int bootstrap;
    uint64_t seed;
    int menu_size;
    ramp_eval_policy_stats policy[RAMP_POLICY_COUNT];
    int nfolds;
    ramp_eval_fold *folds;        /* [nfolds] */
    int64_t nbatches;             /* scored batches */
    int64_t nbatches_ge;          /* of which >= min_tokens */
    int32_t *batch_id;            /* [nbatches] */
    int32_t *batch_tokens;        /* [nbatches] */
    int32_t *batch_fold;          /* [nbatches] index into folds */
    int32_t *batch_gpus;          /* [nbatches] loads in the batch */
    double *layer_us;             /* [nbatches * RAMP_POLICY_COUNT]; NaN
                                     where the policy did not run */
    int64_t nloads;               /* the dataset's loads */
    int32_t *choice;              /* [nloads * RAMP_POLICY_COUNT]; -1 where
                                     not scored */
    double spearman_median;       /* over every held-out load */
    double pick_err_median;
    int64_t nscatter;             /* sample of (predicted, measured) */
    double *scatter_pred;         /* [nscatter] */
    double *scatter_meas;         /* [nscatter] */
    char placement[64];           /* the dataset's ("" not recorded) */
    int every_expert;             /* 1: every GPU holds every expert (TP) */
    double *batch_imbalance;      /* [nbatches] most loaded GPU's tokens
                                     over the mean of the batch's GPUs (1
                                     with one GPU or no tokens) */
    double imbalance_ge;          /* its median over batches >= min_tokens
                                     (NaN when none): Tables 6 and 8 */
} ramp_eval_result;

/* Runs the held-out evaluation. RAMP_ERR_INVALID_ARGUMENT when fewer than
 * two traffic domains (nothing to train on) or the holdout is unknown. */
ramp_status ramp_eval_run(const ramp_timing *t, const ramp_eval_options *opt,
                          ramp_eval_result **out);
void ramp_eval_free(ramp_eval_result *r);

/* Geometric mean over scored batches with batch_tokens >= min_tokens of
 * layer(num) / layer(den), with the result's bootstrap interval.
 * RAMP_ERR_INVALID_ARGUMENT if either policy did not run. */
ramp_status ramp_eval_compare(const ramp_eval_result *r, ramp_policy_kind num,
                              ramp_policy_kind den, int min_tokens,
                              ramp_eval_ratio *out);

/* Reports (paper layout; one row per result, e.g. per layout):
 * Table 3: RaMP over vLLM's tuning (all, >= min_tokens), over the
 *          trace-tuned and per-GPU tables (all), RaMP's gap (all, %).
 * Table 4: each per-GPU policy's gap to exhaustive on >= min_tokens
 *          batches: geometric mean over the results and the worst.
 * Table 9: on >= min_tokens batches, RaMP-on-menu over the table on the
 *          menu, its gap to the best of the menu, and against the full
 *          space its speedup over vLLM's tuning and gap to exhaustive.
 * Summary: every policy of one result with intervals and diagnostics. */
ramp_status ramp_eval_print_table3(FILE *f, const ramp_eval_result *const *r,
                                   int n);
ramp_status ramp_eval_print_table4(FILE *f, const ramp_eval_result *const *r,
                                   int n);
ramp_status ramp_eval_print_table9(FILE *f, const ramp_eval_result *const *r,
                                   int n);
/* Table 5 (Appendix A.3): on held-out batches of >= min_tokens, the
 * speedup of the trace-tuned table, the per-GPU table, RaMP and exhaustive
 * search over vLLM's tuning, and of RaMP and exhaustive search over the
 * trace-tuned table; RaMP's with bootstrap intervals. */
ramp_status ramp_eval_print_table5(FILE *f, const ramp_eval_result *const *r,
                                   int n);
ramp_status ramp_eval_print_summary(FILE *f, const ramp_eval_result *r);

/* Table 8 (Appendix A.4): one layout under contiguous and balanced expert
 * placement. Per result, on its scored batches >= min_tokens: the median
 * imbalance and RaMP's speedup over the trace-tuned table and over vLLM's
 * tuning (bootstrap intervals). The effect of balancing is paired: on the
 * batches both results scored (same batch id; their batch_tokens must
 * agree, else RAMP_ERR_INVALID_ARGUMENT naming the batch), the geometric
 * mean of the contiguous layer time over the balanced one under RaMP and
 * under vLLM's tuning (> 1: balancing made the layer faster). */
typedef struct {
    char model[RAMP_NAME_MAX];
    char layout[16];
    char placement[64];          /* the balanced result's */
    int64_t batches_contig, batches_bal; /* scored, >= min_tokens */
    int64_t batches_paired;      /* >= min_tokens, in both */
    double imbalance_contig, imbalance_bal;
    ramp_eval_ratio ramp_over_trace_contig, ramp_over_trace_bal;
    ramp_eval_ratio ramp_over_vllm_contig, ramp_over_vllm_bal;
    ramp_eval_ratio balancing_ramp;  /* t_contig / t_bal under RaMP */
    ramp_eval_ratio balancing_vllm;  /* ... under vLLM's tuning */
} ramp_eval_placement_row;

/* contig or bal may be NULL (that side's columns NaN); when both are given
 * they must be of one model and layout. */
ramp_status ramp_eval_placement_compare(const ramp_eval_result *contig,
                                        const ramp_eval_result *bal, int min_tokens,
                                        ramp_eval_placement_row *out);
/* Pairs the results by model and layout (a balanced one with the
 * contiguous one of the same model and layout, when given) and prints one
 * row per balanced result; nothing but the title when none is balanced. */
ramp_status ramp_eval_print_table8(FILE *f, const ramp_eval_result *const *r, int n);
/* Table 11 (Appendix A.7): the results whose layout puts every expert on
 * every GPU (TP), over all scored batches: vLLM's tuning over the
 * trace-tuned table, the trace-tuned table over RaMP, vLLM's tuning over
 * RaMP (the choice's total) with its interval, and vLLM's tuning over
 * exhaustive search. The paper's first column (vLLM's Triton MoE -> RaMP's
 * kernel under vLLM's tuning) needs a Triton baseline and is printed "-". */
ramp_status ramp_eval_print_table11(FILE *f, const ramp_eval_result *const *r, int n);

/* The cost model's transfer to a new model: the target dataset's
 * configurations fit by ramp_costmodel_fit_transfer on every dataset of
 * another model, then scored on all of the target's traffic batches (none
 * of them seen: "uniform" excluded, as in Table 3): RaMP-transferred's gap
 * to exhaustive search, and the model's rank correlation and pick error on
 * the target's loads. */
typedef struct {
    char model[RAMP_NAME_MAX];
    char layout[16];
    char trained_on[256];    /* "Qwen3-30B-A3B EP8, DeepSeek-V3 EP8" */
    int ntrain;              /* training datasets */
    int64_t train_loads;
    int fitted, nconfigs;    /* target configurations with a fit */
    int64_t batches, batches_ge;
    double gap_all_pct, gap_ge_pct;   /* geomean layer time over exhaustive */
    double spearman_median, pick_err_median;
} ramp_eval_transfer;

/* target: index into ts; datasets of the target's model, or of another
 * kernel (ramp_timing.kernel), are not used. RAMP_ERR_NOT_FOUND if no
 * dataset of another model and the same kernel exists. */
ramp_status ramp_eval_transfer_run(const ramp_timing *const *ts, int n, int target,
                                   int min_tokens, ramp_eval_transfer *out);
/* The same with the cost model's kind (EQ3 or EQ3_PAIRS). */
ramp_status ramp_eval_transfer_run_kind(const ramp_timing *const *ts, int n, int target,
                                        int min_tokens, ramp_costmodel_kind kind,
                                        ramp_eval_transfer *out);
/* One row per transfer, with the same layout's in-model (held-out domain)
 * gap from r[i] when r is given (r[i] for x[i]; NULL entries skipped). */
ramp_status ramp_eval_print_transfer(FILE *f, const ramp_eval_transfer *x, int n,
                                     const ramp_eval_result *const *r);

/* Writes dir/batches.csv (one row per scored batch: domain, batch,
 * batch_tokens, gpus, then <policy>_us per policy that ran) and
 * dir/summary.csv (one row per policy), each atomically. dir must exist. */
ramp_status ramp_eval_write_csv(const ramp_eval_result *r, const char *dir);
/* Writes dir/loads.csv atomically: one row per scored load of t, the
 * dataset r was run on (domain, batch, gpu, batch_tokens, pairs, active,
 * then <policy>_config and <policy>_us per policy that ran: what each chose
 * for that GPU and its measured time), so that where a policy loses can be
 * read per GPU. */
ramp_status ramp_eval_write_loads(const ramp_eval_result *r, const ramp_timing *t,
                                  const char *dir);
/* Writes dir/predicted_vs_measured.svg and dir/speedup.svg atomically. */
ramp_status ramp_eval_write_plots(const ramp_eval_result *r, const char *dir);

/* ---- 8e. Plain SVG plots (plot_svg.c) ----------------------------------- */

/* Scatter of (x, y), log-log when loglog (non-positive points dropped),
 * with the line y = x when diagonal. Written atomically. */
ramp_status ramp_svg_scatter(const char *path, const char *title,
                             const char *xlabel, const char *ylabel,
                             const double *x, const double *y, int64_t n,
                             int loglog, int diagonal);
/* Grouped bars: values[g * nseries + s] (NaN: no bar), a dashed line at
 * `reference` (NaN: none), a legend of the series. Written atomically. */
ramp_status ramp_svg_bars(const char *path, const char *title,
                          const char *ylabel, int ngroups,
                          const char *const *groups, int nseries,
                          const char *const *series, const double *values,
                          double reference);

/* ---- 8f. Plans (plan.c) --------------------------------------------------
 *
 * What the GPU layer serves: the menu's configurations in their order, each
 * with its Equation 3 coefficients, for one model, layout and geometry. JSON:
 *   {"format": "ramp-plan", "version": 1, "libramp": "0.1.0",
 *    "model": "...", "layout": "EP8", "device": "...", "sms": 132,
 *    "geometry": {"experts", "topk", "inter", "hidden", "bf16"},
 *    "occupancy": 2, "cost_terms": ["1", "waves", "tiles", "active"],
 *    "menu": [{"config": "r16.w256.s4", "theta": [t0, t1, t2, t3],
 *              "slots": 132}, ...],
 *    "checksum": "sha256:<64 hex digits>"}
 * "slots" (S_c, optional: sms * occupancy) and "checksum" (optional; over
 * the plan's canonical content, docs/formats.md; a mismatch is
 * RAMP_ERR_FORMAT) came after the first plans, which still read.
 * A plan of an EQ3_PAIRS model has five terms, "cost_terms": ["1", "waves",
 * "tiles", "active", "pairs"], and five theta per entry (t4 per token-expert
 * pair of the GPU); the reader takes either form (four: pairs coefficient
 * 0) and refuses any other. An EQ3 plan is written in the four-term form, so
 * its file and checksum are what they were before the fifth term existed.
 *
 * Changed with the fifth term (source-compatible): theta has
 * RAMP_COST_TERMS_MAX (5) slots per entry, theta[i][4] the pairs
 * coefficient; cost_model (new, last) says which form the plan has. A plan
 * built field by field from a zeroed struct is an EQ3 plan, as before. */

typedef struct {
    char model[RAMP_NAME_MAX];
    char layout[16];
    char device[64];
    char libramp[16];                 /* version that wrote it */
    ramp_geometry geom;
    int sms;
    int blocks_per_sm;                /* occupancy class of the menu */
    int count;
    ramp_config configs[RAMP_MENU_MAX];
    double theta[RAMP_MENU_MAX][RAMP_COST_TERMS_MAX]; /* 1, W, T, A, P;
                                         theta[i][4] is 0 in an EQ3 plan */
    int slots[RAMP_MENU_MAX];         /* S_c of each entry, the tiles per
                                         wave of its W term (JSON "slots");
                                         0: sms * blocks_per_sm, as in plans
                                         written before the fit chose it */
    int checksum;                     /* set by the reader: 1 if the file
                                         carried a checksum and it matched */
    int kernel;                       /* ramp_kernel_version the plan was fit
                                         for (JSON "kernel", written when not
                                         v1); every entry one it runs */
    ramp_costmodel_kind cost_model;   /* RAMP_COSTMODEL_EQ3 (0: four terms)
                                         or RAMP_COSTMODEL_EQ3_PAIRS (five:
                                         "pairs" in cost_terms) */
    int weight_units;                 /* the dataset's weight layout (JSON
                                         "weights": "units", absent: 0,
                                         row-major): the layer to serve it
                                         is best created with the same
                                         ramp_layer_desc.weight_units
                                         (ramp_layer_info.warning says when
                                         not) */
} ramp_plan;

/* A plan from a dataset's menu and an EQ3 or EQ3_PAIRS model fit on the
 * same dataset's configurations (RAMP_ERR_INVALID_ARGUMENT if an entry is
 * unfit or the model of another kind); the plan takes the model's kind. */
ramp_status ramp_plan_make(const ramp_timing *t, const ramp_menu *menu,
                           const ramp_costmodel *m, ramp_plan *out);
/* Checks a plan: geometry, layout, sms, 1..RAMP_MENU_MAX distinct valid
 * configurations, finite non-negative coefficients, cost_model EQ3 (then
 * every theta[i][4] is 0) or EQ3_PAIRS. */
ramp_status ramp_plan_validate(const ramp_plan *p);
/* Writes JSON atomically; validates first. */
ramp_status ramp_plan_write(const ramp_plan *p, const char *path);
/* Reads and validates; RAMP_ERR_FORMAT names the file and field. */
ramp_status ramp_plan_read(const char *path, ramp_plan *out);
/* Same from bytes in memory (for fuzzing); label names the source. */
ramp_status ramp_plan_parse(const char *text, size_t size, const char *label,
                            ramp_plan *out);
/* The plan's pick for a load: argmin over its entries of Equation 3 (with
 * the pairs term in an EQ3_PAIRS plan), in double, ties to the earlier
 * entry; ramp_costmodel_pick's choice over the menu. */
int ramp_plan_pick(const ramp_plan *p, int nexp, const int32_t *load);
/* S_c of entry i: slots[i], or sms * blocks_per_sm where it is 0. */
int ramp_plan_slots(const ramp_plan *p, int i);
/* What differs between the GPU whose timings a plan was fit on (p->device,
 * p->sms) and a GPU of gpu_name with gpu_sms SMs, as the text
 * ramp_layer_info.warning carries: their SM counts, or else their names (a
 * plan fit on another GPU's timings chooses less well: an H200 plan on an
 * H100 costs 1-3% of the batch time, bench/results/s51-run1). Writes "" when
 * both agree, or when the plan names no GPU (device ""). Returns the text's
 * full length, as snprintf does (size or more: it was truncated to size -
 * 1), or -1 for a NULL argument or size 0. */
int ramp_plan_gpu_mismatch(const ramp_plan *p, const char *gpu_name, int gpu_sms, char *buf,
                           size_t size);
/* The size classes a kernel v2 layer serving p on a GPU of the plan's
 * experts (p->geom.experts) makes for batches of up to max_tokens
 * (ramp_layer_desc.one_menu 0): class c serves host token counts up to
 * tokens[c] (increasing) with the menu entries of masks[c] (bit i: entry i),
 * the whole menu above the last. For several experts these are the classes
 * a layer makes with ramp_layer_desc.many_expert_classes = 1 (a layer of
 * several local experts makes none without it). Returns how many (0: the
 * whole menu serves every batch size), or -1 for a NULL argument, an empty
 * menu, max_tokens < 1 or more pairs (max_tokens x k) than a layer takes. */
int ramp_plan_size_classes(const ramp_plan *p, int max_tokens, int tokens[RAMP_MENU_MAX],
                           unsigned masks[RAMP_MENU_MAX]);

/* ======================================================================
 * 9. GPU runtime (advanced): driver API and NVRTC loaded with dlopen.
 * ==================================================================== */

/* Nothing in this section needs the CUDA toolkit to build. The driver
 * (libcuda.so.1) is loaded on the first GPU call, NVRTC (libnvrtc.so) on the
 * first compile; on a machine without them every GPU entry point returns
 * RAMP_ERR_NO_GPU with a message saying what was tried, and the rest of
 * libramp works. Compiling (9.2) needs NVRTC but no GPU. Environment:
 *   RAMP_CUDA_DRIVER  path of libcuda.so.1 (default: the loader's search)
 *   RAMP_NVRTC_LIB    path of libnvrtc (default: libnvrtc.so.13, .12, .so,
 *                     $CUDA_HOME/lib64, /usr/local/cuda/lib64)
 *   RAMP_KERNEL_DIR   folder of the kernel sources (default: the source tree)
 *   RAMP_CACHE_DIR    cubin cache (default $XDG_CACHE_HOME/ramp, else
 *                     ~/.cache/ramp); RAMP_JIT_CACHE=0 turns the cache off
 *   RAMP_JIT_DUMP=1   writes source, PTX and compiler log beside the cache */

/* ---- 9.1 Devices, memory, streams, events, graphs ---------------------- */

/* One GPU: the driver's primary context of a device, which the CUDA runtime
 * (and PyTorch) share, so device pointers and streams pass both ways. */
typedef struct ramp_gpu ramp_gpu;
/* A device address (CUdeviceptr / a cudaMalloc pointer). */
typedef uint64_t ramp_devptr;
/* A CUDA stream (CUstream, the same object as cudaStream_t). Functions that
 * launch work need one the caller created: NULL (the legacy default stream,
 * which a CUDA graph cannot capture) is refused before anything is queued. */
typedef void *ramp_stream;

typedef struct {
    ramp_device_limits limits; /* from the device's attributes */
    int ordinal;
    int cc_major, cc_minor;    /* 9, 0 on H100/H200 */
    int l2_bytes;              /* L2 cache size */
    int max_threads_per_block;
    int clock_khz;             /* SM clock the driver reports (0: unknown) */
    size_t global_bytes;       /* device memory */
    int driver_version;        /* e.g. 13000 for CUDA 13.0 */
} ramp_gpu_info;

/* Devices the driver sees. RAMP_ERR_NO_GPU when there is no driver or none. */
ramp_status ramp_gpu_count(int *count);
/* Opens device `ordinal` (0-based) and makes its primary context current on
 * the calling thread. RAMP_ERR_NO_GPU (no driver, no device, ordinal past the
 * count), RAMP_ERR_CUDA for other driver failures. */
ramp_status ramp_gpu_open(int ordinal, ramp_gpu **out);
void ramp_gpu_close(ramp_gpu *gpu);
ramp_status ramp_gpu_get_info(const ramp_gpu *gpu, ramp_gpu_info *out);
/* Waits for all work on the device (cuCtxSynchronize). */
ramp_status ramp_gpu_sync(ramp_gpu *gpu);

/* Device memory. ramp_gpu_free accepts 0. The synchronous copies wait for
 * all work on the device, copy, and return when the bytes have landed (so
 * they are ordered with every stream, at the cost of a device-wide sync);
 * the async ones queue the copy on a (non-NULL) stream. */
ramp_status ramp_gpu_alloc(ramp_gpu *gpu, size_t bytes, ramp_devptr *out);
ramp_status ramp_gpu_free(ramp_gpu *gpu, ramp_devptr ptr);
ramp_status ramp_gpu_upload(ramp_gpu *gpu, ramp_devptr dst, const void *src,
                            size_t bytes);
ramp_status ramp_gpu_download(ramp_gpu *gpu, void *dst, ramp_devptr src,
                              size_t bytes);
ramp_status ramp_gpu_upload_async(ramp_gpu *gpu, ramp_devptr dst,
                                  const void *src, size_t bytes,
                                  ramp_stream stream);
ramp_status ramp_gpu_download_async(ramp_gpu *gpu, void *dst, ramp_devptr src,
                                    size_t bytes, ramp_stream stream);
/* Sets `count` 32-bit words at dst to value. */
ramp_status ramp_gpu_fill32_async(ramp_gpu *gpu, ramp_devptr dst,
                                  uint32_t value, size_t count,
                                  ramp_stream stream);

/* A non-blocking stream (does not wait on the legacy default stream). */
ramp_status ramp_stream_create(ramp_gpu *gpu, ramp_stream *out);
ramp_status ramp_stream_destroy(ramp_gpu *gpu, ramp_stream stream);
ramp_status ramp_stream_sync(ramp_gpu *gpu, ramp_stream stream);

/* Events for timing: record two on a stream, then read the time between. */
typedef struct ramp_event ramp_event;
ramp_status ramp_event_create(ramp_gpu *gpu, ramp_event **out);
ramp_status ramp_event_record(ramp_event *ev, ramp_stream stream);
/* Waits for `end`, then gives end - start in microseconds. */
ramp_status ramp_event_elapsed_us(ramp_event *start, ramp_event *end,
                                  double *us);
void ramp_event_free(ramp_event *ev);

/* CUDA graphs: everything queued on `stream` between begin and end (thread-
 * local capture mode) is recorded, not run; end instantiates it. A replay
 * runs the recorded launches with the recorded arguments; device memory they
 * read may change between replays. */
typedef struct ramp_graph ramp_graph;
ramp_status ramp_graph_capture_begin(ramp_gpu *gpu, ramp_stream stream);
ramp_status ramp_graph_capture_end(ramp_gpu *gpu, ramp_stream stream,
                                   ramp_graph **out);
ramp_status ramp_graph_replay(ramp_graph *graph, ramp_stream stream);
void ramp_graph_free(ramp_graph *graph);

/* ---- 9.2 Run-time compilation (NVRTC, no GPU needed) ------------------- */

/* What ptxas reported for one entry function ("-v"). */
typedef struct {
    char name[128];        /* entry function (extern "C" kernels: plain name) */
    int registers;         /* per thread */
    int smem_bytes;        /* static shared memory */
    int cmem_bytes;        /* constant bank 0 */
    int stack_bytes;       /* stack frame */
    int spill_store_bytes;
    int spill_load_bytes;
    int barriers;
} ramp_kernel_report;

typedef struct {
    const char *name;      /* program name: messages, cache and dump files;
                              letters, digits, '.', '_', '-' (max 64) */
    const char *source;    /* CUDA source text; #include "x" is looked up in
                              kernel_dir (C-style CUDA, no std headers) */
    const char *const *defines; /* "NAME" or "NAME=VALUE", passed as -D */
    int ndefines;
    const char *const *options; /* extra NVRTC options, e.g. "-maxrregcount=128" */
    int noptions;
    const char *kernel_dir; /* NULL: $RAMP_KERNEL_DIR, else the source tree */
    const char *arch;       /* NULL: "sm_90a" */
} ramp_jit_request;

typedef struct {
    void *cubin;
    size_t cubin_size;
    char *log;             /* NVRTC's log with ptxas's -v report */
    int nkernels;
    ramp_kernel_report *kernels; /* [nkernels] one per entry function */
    int ptxas_warnings;    /* "ptxas warning" lines in the log */
    uint64_t key;          /* cache key: hash of source, headers, options,
                              NVRTC version */
    int from_cache;        /* 1: read from the disk cache, not compiled */
    int nvrtc_major, nvrtc_minor;
} ramp_jit_result;

/* Compiles with "-arch=sm_90a --std=c++17 -default-device -lineinfo
 * --ptxas-options=-v" plus the request's defines and options, or reads the
 * cubin from the disk cache. RAMP_ERR_COMPILE with the compiler's log in the
 * message when compilation fails; RAMP_ERR_NOT_FOUND for a missing include;
 * RAMP_ERR_NO_GPU when NVRTC cannot be loaded. A cache that cannot be written
 * is not an error (the result is simply not cached). */
ramp_status ramp_jit_compile(const ramp_jit_request *req, ramp_jit_result **out);
void ramp_jit_result_free(ramp_jit_result *r);
/* The report of entry function `name`, or NULL. */
const ramp_kernel_report *ramp_jit_kernel(const ramp_jit_result *r,
                                          const char *name);
/* NVRTC's version; RAMP_ERR_NO_GPU when it cannot be loaded. */
ramp_status ramp_jit_version(int *major, int *minor);
/* Parses ptxas -v output (as found in NVRTC's log). *out is malloc'd (free
 * with free()); RAMP_ERR_FORMAT on a line it cannot read. */
ramp_status ramp_ptxas_parse(const char *log, ramp_kernel_report **out,
                             int *count);
/* Fills `out` from a compiled kernel's report (measured = 1): blocks_per_sm
 * by the occupancy rules of sm_90 (registers allocated per warp in units of
 * 256 over 4 sub-partitions, 1 KB of shared memory reserved per block),
 * valid = 0 with the reason if the kernel cannot launch with `threads`
 * threads and `dynamic_smem` bytes, or if it spills. */
ramp_status ramp_resources_from_report(const ramp_kernel_report *k,
                                       int threads, int dynamic_smem,
                                       const ramp_device_limits *lim,
                                       ramp_resources *out);

/* What the compiler says about one configuration of a kernel: its
 * program(s) built for sm_90a as the GPU path builds them. */
typedef struct {
    int nprograms;                 /* 1; 2 for a v2 two-phase configuration:
                                      the up, then the down projection */
    char program[2][96];           /* JIT program names; a cubin written to
                                      cubin_dir is <program>.cubin */
    ramp_kernel_report report[2];  /* ptxas's report of each program */
    int dynamic_smem[2];           /* bytes each program launches with */
    int threads;                   /* per block */
    int ptxas_warnings;            /* over all programs */
    int from_cache;                /* programs read from the JIT cache */
    ramp_resources res;            /* measured = 1; two programs: the larger
                                      registers and shared memory, the lower
                                      occupancy; valid = 0 with why when a
                                      program spills, has a stack frame or
                                      cannot launch */
} ramp_config_compiled;

/* Compiles configuration c of `kernel` on g with NVRTC (no GPU needed) or
 * reads it from the JIT cache; cubin_dir (NULL: none) receives each
 * program's cubin. RAMP_ERR_UNSUPPORTED when the kernel does not run c,
 * RAMP_ERR_NO_GPU when NVRTC cannot be loaded, RAMP_ERR_IO when a cubin
 * cannot be written (none is left half-written). */
ramp_status ramp_config_compile(ramp_kernel_version kernel, const ramp_config *c,
                                const ramp_geometry *g, const ramp_device_limits *lim,
                                const char *cubin_dir, ramp_config_compiled *out);
/* The same for a weight layout: weight_units 1 compiles the programs that
 * read weights in stage units (kernel v2; ramp_layer_desc.weight_units),
 * 0 is ramp_config_compile. */
ramp_status ramp_config_compile_weights(ramp_kernel_version kernel, const ramp_config *c,
                                        const ramp_geometry *g, int weight_units,
                                        const ramp_device_limits *lim, const char *cubin_dir,
                                        ramp_config_compiled *out);

/* What the compiler says about the polymorphic kernel a plan's layer runs
 * (its menu compiled into one kernel as ramp_layer_create compiles it, for
 * a GPU holding the plan's geom.experts experts). */
typedef struct {
    int nkernels;                  /* 1; 2 when a v2 menu holds a two-phase
                                      entry, whose phase 2 runs in a second
                                      kernel of the same module */
    char kernel[2][32];            /* entry names in the module */
    ramp_kernel_report report[2];  /* ptxas's report of each */
    int dynamic_smem[2];           /* bytes each launches with */
    int threads;                   /* per block */
    int ptxas_warnings;            /* in the compile log */
    int from_cache;                /* 1: read from the JIT cache */
    ramp_resources res;            /* as ramp_config_compiled's, over the
                                      kernels */
} ramp_plan_compiled;

/* Compiles the polymorphic kernel of plan p (red4: the layer's w2_red4, v2
 * plans only; a plan of stage units, weight_units 1, as a layer reading
 * them, not with red4) with NVRTC (no GPU needed) or reads it from the JIT cache;
 * cubin_path (NULL: none) receives the module's cubin, written atomically.
 * The errors of ramp_config_compile, and those of ramp_plan_validate. */
ramp_status ramp_plan_compile(const ramp_plan *p, int red4, const ramp_device_limits *lim,
                              const char *cubin_path, ramp_plan_compiled *out);

/* ---- 9.3 Modules and launches -------------------------------------------- */

typedef struct ramp_module ramp_module;
typedef struct ramp_kernel ramp_kernel; /* owned by its module */

ramp_status ramp_module_load(ramp_gpu *gpu, const void *cubin, size_t size,
                             ramp_module **out);
void ramp_module_free(ramp_module *m);
/* Looks up an entry function and allows it `max_dynamic_smem` bytes of
 * dynamic shared memory (raising the 48 KB default when needed). */
ramp_status ramp_module_kernel(ramp_module *m, const char *name,
                               int max_dynamic_smem, ramp_kernel **out);
/* Registers, static shared memory and stack the driver reports for it. */
ramp_status ramp_kernel_attributes(const ramp_kernel *k,
                                   ramp_kernel_report *out);
/* Queues one launch (cuLaunchKernel). args: one pointer per kernel parameter.
 * Checks the shape (block <= 1024 threads, dynamic_smem <= the kernel's
 * allowance) and the stream (non-NULL) before launching. */
ramp_status ramp_kernel_launch(const ramp_kernel *k, const unsigned grid[3],
                               const unsigned block[3], int dynamic_smem,
                               ramp_stream stream, void **args);
/* The same with programmatic dependent launch (Hopper): the kernel may start
 * while the previous kernel on the stream is still running, so it must run
 * `griddepcontrol.wait` before it reads that kernel's outputs (which then
 * waits for it to finish and its writes to be visible). A plain launch on
 * drivers without cuLaunchKernelEx. */
ramp_status ramp_kernel_launch_pdl(const ramp_kernel *k, const unsigned grid[3],
                                   const unsigned block[3], int dynamic_smem,
                                   ramp_stream stream, void **args);
/* The general launch: pdl as ramp_kernel_launch_pdl (0: off), cluster = CTAs
 * per thread-block cluster along x (1: no cluster; 2..8 need grid[0] a
 * multiple of it and cuLaunchKernelEx, RAMP_ERR_UNSUPPORTED without). */
ramp_status ramp_kernel_launch_ex(const ramp_kernel *k, const unsigned grid[3],
                                  const unsigned block[3], int dynamic_smem,
                                  ramp_stream stream, void **args, int pdl, int cluster);
/* How many clusters of `cluster` CTAs of `block` threads and dynamic_smem
 * bytes can be resident at once (cuOccupancyMaxActiveClusters): a
 * persistent grid of more would wait for a second wave. 0 with an error
 * when the driver cannot say. */
ramp_status ramp_kernel_max_active_clusters(const ramp_kernel *k, const unsigned block[3],
                                            int dynamic_smem, int cluster, int *out);

/* ---- 9.4 The selection kernel (Section 3.2, Algorithm 1) ----------------- */

#define RAMP_SELECT_MAX_ENTRIES 16

/* One menu entry as the selection kernel sees it: Equation 1's tile sizes and
 * Equation 3's coefficients (in microseconds, float32), plus the optional
 * pairs term (theta[4], 0 for Equation 3: a fifth element since the pairs
 * term; initialisers of four still compile and leave it 0). */
typedef struct {
    int rows;        /* b_c: token rows per tile (1..1024) */
    int slices;      /* q_c = ceil(h / w) * splitk: tiles per row-tile */
    int slots;       /* S_c = sms * blocks_per_sm: tiles per wave (1..65535) */
    float theta[5];  /* fixed, per wave, per tile, per active expert, per
                        token-expert pair on this GPU; finite,
                        |theta| <= 1e20 (so no prediction overflows) */
    int max_waves;   /* 0: any load; n (1..32767): past n waves (W > n) the
                        prediction carries RAMP_PAST_WAVES_US, so the entry
                        is chosen only when every entry is past its limit
                        (ramp_config_max_waves: 1 for v2's split-K) */
    int pair_tiles;  /* 0, or 1: the launch runs row tiles in pairs (v2's
                        multicast, ramp_config.mcast), so T counts the row
                        tiles rounded up to even: ceil(tiles / 2) * 2 * slices */
} ramp_select_entry;

/* The penalty, in microseconds, added to a prediction past an entry's
 * max_waves: larger than any real layer's time, small enough that float32
 * still orders the penalised predictions to 0.07 us. */
#define RAMP_PAST_WAVES_US 1e6

/* The waves past which configuration c of kernel k is not chosen (0: no
 * limit). Kernel v2's split-K (splitk > 1, a tile on a cluster of two CTAs,
 * the grid capped at the resident clusters) gains only while its tiles fit
 * one wave: past it, the second wave of split tiles costs more than the
 * unsplit configuration's whole load (v2's datasets: 1.1-1.3x faster than
 * unsplit at one wave, 0.74-0.87x at two; kernels/moe_v2.md, session 13),
 * and the fit of its wave term sees too few such loads to learn it. So 1
 * for v2's split-K, else 0 (v1's split-K, two independent blocks, is as
 * often faster as slower past one wave: no rule). Applied the same way by
 * the cost model's predictions, the menu, the plan's pick, the selection
 * kernel and its CPU twin. */
int ramp_config_max_waves(ramp_kernel_version k, const ramp_config *c);

/* From a configuration and a fitted model: rows = c->rows, slices =
 * ceil(g->inter / c->width) * c->splitk, slots = sms * blocks_per_sm,
 * pair_tiles = c->mcast,
 * max_waves 0 (a kernel v2 split-K entry wants ramp_config_max_waves; the
 * plan's entries, ramp_layer's, have it); theta: Equation 3's four
 * (theta[4] = 0). */
ramp_status ramp_select_entry_make(const ramp_config *c, const ramp_geometry *g,
                                   int sms, int blocks_per_sm,
                                   const double theta[4],
                                   ramp_select_entry *out);
/* The same with nterms (4 or 5) coefficients: 5 adds the pairs term. */
ramp_status ramp_select_entry_make_terms(const ramp_config *c, const ramp_geometry *g,
                                         int sms, int blocks_per_sm, const double *theta,
                                         int nterms, ramp_select_entry *out);

typedef struct {
    int experts;          /* E: ids in [0, E) are valid (1..65535) */
    int topk;             /* k (1..E) */
    int max_tokens;       /* most tokens one call may carry (>= 1) */
    int local_experts;    /* experts on this GPU (1..1024) */
    const int32_t *local_of; /* [E] local index of each expert on this GPU,
                                -1 for experts held elsewhere; NULL: experts
                                first_expert .. first_expert+local_experts-1 */
    int first_expert;
    int nentries;         /* menu size, 1..RAMP_SELECT_MAX_ENTRIES */
    ramp_select_entry entries[RAMP_SELECT_MAX_ENTRIES];
    int group_only;       /* 1: skip Equation 3, always entry 0 (the plain
                             group-and-pad kernel that RaMP replaces) */
    int one_shape;        /* 1: every launch in the shape sized for
                             max_tokens (before session 33); 0: a launch
                             whose token count the host passes runs the
                             smallest shape that covers it */
    unsigned entry_mask;  /* 0: choose among every entry; else only among
                             entries i with bit i set (a layer's size
                             class, ramp_layer_desc.one_menu, holds
                             only those); no bit at or past nentries */
    int pdl_wait;         /* 1: every launch is a programmatic dependent
                             of the kernel before it on the stream and
                             waits for it before touching global memory
                             (griddepcontrol.wait), so its launch overlaps
                             that kernel's end (session 40; measured by
                             bench_stack --select-pdl). 0 (the default):
                             an ordinary launch, after it ends. */
} ramp_select_desc;

/* Checks every field: RAMP_ERR_INVALID_ARGUMENT naming the field and value
 * (k > E, a local_of entry out of range or repeated, ...). */
ramp_status ramp_select_desc_check(const ramp_select_desc *d);
/* Output capacities: *max_slots >= padded token slots and *max_tiles >= row
 * tiles any routing of max_tokens tokens can produce with any entry. */
ramp_status ramp_select_capacity(const ramp_select_desc *d, int64_t *max_slots,
                                 int64_t *max_tiles);

/* Indices into the selection's int32 meta array. */
enum {
    RAMP_SELECT_META_CHOSEN = 0,   /* chosen menu index */
    RAMP_SELECT_META_TILES = 1,    /* row tiles of the chosen entry */
    RAMP_SELECT_META_SLOTS = 2,    /* padded slots = tiles * rows */
    RAMP_SELECT_META_LOCAL = 3,    /* token-expert pairs on this GPU */
    RAMP_SELECT_META_BAD_IDS = 4,  /* ids < -1 or >= E: skipped, counted */
    RAMP_SELECT_META_TOKENS = 5,   /* tokens processed */
    RAMP_SELECT_META_CLAMPED = 6,  /* 1: a device-side token count was out of
                                      [0, max_tokens] and was clamped */
    RAMP_SELECT_META_COUNT = 8
};

/* Result of one selection, on the host. Output layout (same on the GPU):
 *   sorted_ids[slots]: token-slot ids (token * k + j) grouped by local expert
 *     (expert 0 first) and, within an expert, by increasing id; each expert's
 *     run padded with -1 to a multiple of the chosen entry's rows.
 *   tile_expert[tiles]: local expert of each row tile.
 *   tile_start[local_experts + 1]: first tile of each expert; slot of a tile
 *     = tile * rows.
 *   counts[local_experts]: pairs per local expert.
 *   pred[nentries]: Equation 3 per entry (float32; all 0 under group_only),
 *     plus RAMP_PAST_WAVES_US where the load is past the entry's max_waves.
 * Choice: lowest predicted time among the entries entry_mask allows, ties to
 * the lowest menu index; pred is written for every entry. Entries past
 * slots / tiles are left untouched. */
typedef struct {
    int32_t meta[RAMP_SELECT_META_COUNT];
    float pred[RAMP_SELECT_MAX_ENTRIES];
    int local_experts;
    int64_t max_slots, max_tiles;
    int32_t *counts;      /* [local_experts] */
    int32_t *tile_start;  /* [local_experts + 1] */
    int32_t *sorted_ids;  /* [max_slots] */
    int32_t *tile_expert; /* [max_tiles] */
} ramp_select_result;

ramp_status ramp_select_result_create(const ramp_select_desc *d,
                                      ramp_select_result **out);
void ramp_select_result_free(ramp_select_result *r);

/* The CPU twin: what the kernel computes, bit for bit (Equation 3 is
 * evaluated as fmaf(th4, P, fmaf(th3, A, fmaf(th2, T, fmaf(th1, W, th0))))
 * in float32 on both, P the token-expert pairs on this GPU; with th4 = 0
 * the last step returns its addend exactly (unless it is -0, which becomes
 * +0 and compares equal), so a four-term entry predicts as before), then
 * + (float)RAMP_PAST_WAVES_US when W > max_waves > 0. ids: [tokens * k] int32. RAMP_ERR_INVALID_ARGUMENT when tokens is
 * outside [0, max_tokens] or ids is NULL with tokens > 0. Bad ids are not an
 * error: they are skipped and counted in meta. */
ramp_status ramp_select_cpu(const ramp_select_desc *d, int tokens,
                            const int32_t *ids, ramp_select_result *out);

/* The selection kernel on a GPU: compiled (cached) and loaded at create, with
 * device buffers for its outputs. A launch is one kernel of one of up to
 * five shapes compiled at create (16 or 32 warps per block, one cluster of
 * 1, 2, 4 or 8 blocks, by the pairs tokens * k it covers, up to max_tokens *
 * k): a launch with a host token count runs the smallest shape that covers
 * it (a graph captured for a batch size keeps that shape), one with a device
 * count the largest (RAMP_SELECT_WARPS and RAMP_SELECT_CTAS override the
 * rule, a tuning experiment; ramp_select_desc.one_shape keeps the largest
 * only); no host synchronisation: safe to capture. */
typedef struct ramp_selector ramp_selector;

/* Device addresses of a selector's outputs (layout as ramp_select_result). */
typedef struct {
    ramp_devptr meta, pred, counts, tile_start, sorted_ids, tile_expert;
    int64_t max_slots, max_tiles;
} ramp_select_device;

ramp_status ramp_selector_create(ramp_gpu *gpu, const ramp_select_desc *d,
                                 ramp_selector **out);
/* topk_ids: device int32 [tokens, k] (16-byte alignment makes loads wider).
 * tokens_dev: 0, or a device int32 holding the token count, read by the
 * kernel instead of `tokens` (a captured graph then serves any batch up to
 * max_tokens; a value out of range is clamped and flagged in meta).
 * Fails before launching on tokens outside [0, max_tokens], a NULL stream or
 * a zero topk_ids with tokens > 0. */
ramp_status ramp_selector_launch(ramp_selector *s, ramp_devptr topk_ids,
                                 int tokens, ramp_devptr tokens_dev,
                                 ramp_stream stream);
ramp_status ramp_selector_device(const ramp_selector *s,
                                 ramp_select_device *out);
/* Copies the outputs of the last launch on `stream` into `out` (waits). */
ramp_status ramp_selector_download(ramp_selector *s, ramp_stream stream,
                                   ramp_select_result *out);
/* Shared memory per block the kernel uses for this descriptor (bytes), in
 * its largest shape (max_tokens'; the smaller ones use less): per warp
 * counts, the id map and the menu; it does not grow with the batch. */
int64_t ramp_select_smem_bytes(const ramp_select_desc *d);
void ramp_selector_free(ramp_selector *s);

/* ======================================================================
 * 10. The MoE layer: selection kernel + polymorphic kernel (Section 3.3)
 * ==================================================================== */

/* One MoE layer on one GPU, served from a plan: every call runs the
 * selection kernel (which picks the menu entry from the routing and groups
 * the tokens) and then the polymorphic kernel (which runs that entry): two
 * launches, no host synchronisation, no allocation after creation, so a
 * call can be captured in a CUDA graph once and replayed for any routing. */
typedef struct ramp_layer ramp_layer;

typedef struct {
    /* This GPU's experts, in local order, in device memory; the layout of
     * kernels/moe_v1.cuh (vLLM's block_shape = [128, 128]):
     *   w13 [EL, 2h, d] gate rows then up rows, w2 [EL, d, h],
     *   FP8 e4m3 with f32 block scales w13_scale [EL, 2h/128, d/128] and
     *   w2_scale [EL, d/128, h/128], or BF16 with no scales. */
    ramp_devptr w13, w13_scale, w2, w2_scale;
    /* The shapes the engine holds them in ({EL, 2h, d} and {EL, d, h}),
     * checked against the plan so that a plan for another model or layout
     * fails here and not with a wrong answer. */
    int64_t w13_shape[3], w2_shape[3];
    int bf16;               /* 1: BF16 weights (must match the plan) */
    int experts;            /* E: router ids are in [0, E) */
    int first_expert;       /* this GPU holds first_expert .. +local_experts-1 */
    int local_experts;      /* EL (<= the plan's geometry.experts) */
    const int32_t *local_of;/* or [E]: local index of each expert, -1 held
                               elsewhere (NULL: the contiguous range above) */
    int max_tokens;         /* most tokens one call carries (>= 1) */
    int hidden_bf16;        /* FP8 layers: hidden states arrive as BF16 and
                               are quantized inside (0: FP8 with scales) */
    int serial_launch;      /* 0 (the default): the polymorphic kernel with
                               programmatic dependent launch (its blocks
                               start while the selection runs), and a
                               two-phase entry's second kernel with it too
                               (since session 34 also for narrow two-phase
                               entries, whose second kernel started after
                               the first before: bench/results/s34-run2);
                               1: each kernel after the previous ends; 2:
                               PDL for the first kernel only (the old rule
                               for narrow two-phase menus); 3: for both */
    int kernel;             /* ramp_kernel_version of the polymorphic
                               kernel's entries: RAMP_KERNEL_V1 (0, the
                               default; kernels/moe_v1.cuh, every
                               configuration) or RAMP_KERNEL_V2 (the Hopper
                               kernel, kernels/moe_poly_v2.cuh: FP8 and
                               BF16 layers, not FP8 ones taking BF16
                               hidden states; plain launches, no grouped
                               order, split-K only over a cluster of two,
                               2..6 stages; a menu
                               entry it cannot run fails creation, naming
                               the entry). Independent of the plan's kernel
                               (ramp_plan.kernel, what its times were
                               measured on): when they differ the layer
                               runs and ramp_layer_info.warning says so. */
    int w2_red4;            /* kernel v2 only. 1: w2 is stored in the
                               float4-output row order (ramp_w2_to_red4
                               makes it, once, when the weights are loaded;
                               scales unchanged): the kernel then adds its
                               output's float4s from a thread's own rows,
                               with no lane transpose (10% faster than the
                               scalar output on DeepSeek-V3's large loads,
                               bench/results/moe-v2-2026-11-30-red4.md,
                               before session 52 made the transposed float4
                               output the default). 0: row-major w2. */
    int l2_prefetch_mb;     /* kernel v2 only, an experiment (sessions 11,
                               24): the polymorphic kernel's blocks, started
                               early by programmatic dependent launch, ask
                               L2 for up to this many MB of the local
                               weights while the selection kernel runs: all
                               of W13 (then W2's first bytes) if it fits,
                               else the first bytes of every W13 row, where
                               every up tile starts. Measured slower
                               (sessions 12 and 24). 0 (the default): none;
                               at most RAMP_L2PF_MAX_MB. */
    int bf16_pipe;          /* kernel v2 with a BF16 layer only, an experiment:
                               1 = the menu's wide entries keep one stage's
                               wgmmas in flight (ramp_moe_v2_opts.pipe;
                               kernels/moe_v2.md). Measured 1-23% slower on
                               the H200 (bench/results/s16-run1). 0 (the
                               default): they wait for each stage. */
    int deterministic;      /* kernel v2 only. 1: the same inputs give the
                               same bits in out on every run. The expert
                               outputs are stored, one f32 row per
                               token-slot and K part, into a workspace
                               (K parts x max_tokens x k x h x 4 bytes,
                               allocated at creation) and a third kernel
                               adds each token's rows into out in slot
                               order, instead of reductions that land in
                               the order blocks finish. Every menu entry
                               must be two-phase (.ph2); creation names the
                               first that is not. 0 (the default):
                               reductions, bits may differ run to run in
                               the last places. Cost measured in
                               kernels/moe_v2.md, session 20. */
    int poly_split;         /* kernel v2, a menu of fused and two-phase
                               entries, an experiment (session 22): 0 (the
                               default) fused entries and the two-phase
                               entries' phase 1 in one kernel, then their
                               phase 2 in a second; 1: phase 1 first, then
                               one kernel of the fused entries and phase 2;
                               2: three kernels, fused entries, phase 1,
                               phase 2; 3: by cluster, entries that run on
                               one CTA apart from those on clusters of two
                               (split-K, multicast), whose launch caps the
                               grid at the resident clusters; 4: by width,
                               narrow entries (both phases) apart from wide
                               tiles, whose shared memory sets the
                               kernel's carve-out for every entry. Measured
                               (kernels/moe_v2.md, session 22): none is
                               faster in the layer on the shipped plans;
                               the idle kernels cost 1-5 us a layer, and
                               1 and 3 up to 11% on large two-phase loads.
                               5 (session 23): a kernel per entry (two for
                               a two-phase entry), each with its own grid
                               and shared memory; captured in a graph, a
                               switch node that the selection kernel sets
                               runs only the chosen entry's kernels
                               (CUDA 12.8+ driver); run outside a capture,
                               every entry's kernels in turn (correct,
                               slow). Not with l2_prefetch_mb. */
    int poly_top_wait;      /* kernel v2, a menu with a two-phase entry, for
                               A/B measurements (session 25): 0 (the
                               default) the kernel holding only phase 2
                               starts while phase 1 runs and its blocks
                               wait for phase 1 after requesting their
                               first W2 stages, which do not depend on
                               it; 1: they wait at the kernel's top, as
                               before session 25. */
    int weight_units;       /* kernel v2 (FP8 or BF16), sessions 29-30:
                               1 = w13 and w2 are stored in stage units
                               (ramp_weights_to_units makes them, once, when
                               the weights are loaded; scales unchanged):
                               every 32 KB ring stage of the kernel is one
                               contiguous run holding its shared-memory
                               image, read by one bulk copy instead of two
                               16 KB tensor boxes. Recommended for large
                               experts: faster on every load measured of
                               DeepSeek-V3 and Mixtral-8x22B EP8, FP8
                               (-3.6% and -1.3% over 14 loads) and BF16
                               (bench/results/s30-run3, s30-run4); Qwen3-30B
                               -0.8%, OLMoE +2.0% (its plan fit on row-major
                               timings). Not with w2_red4 or
                               l2_prefetch_mb. 0 (the default): row-major,
                               as engines hold weights. */
    int select_one_shape;   /* for A/B measurements (session 33): 1 = the
                               selection kernel runs in the one launch
                               shape sized for max_tokens, as before; 0
                               (the default): a call with a host token
                               count runs the smallest shape that covers
                               it (one block for up to 512 ids), ~0.8 us
                               less on small batches
                               (ramp_select_desc.one_shape). */
    int one_menu;           /* kernel v2, for A/B measurements (session
                               34): 1 = one polymorphic kernel of the whole
                               menu serves every batch, as before. 0 (the
                               default): size classes where they are exact:
                               besides the whole menu's kernel, kernels
                               holding only the entries the plan can choose
                               for batches up to a size, so that a small
                               batch's entry runs without the large
                               batches' code beside it (the polymorphic
                               overhead is instruction fetch,
                               kernels/moe_v2.md session 27; Mixtral-8x22B
                               EP8 at 64-128 tokens 3.2-3.9 us faster,
                               bench/results/s34-run1). A call with a host
                               token count T runs the smallest class
                               covering T, its selection choosing among
                               that class's entries only: the same choice
                               as the whole menu for every routing whose
                               tokens name distinct experts. A device
                               count runs the whole menu. With one local
                               expert the choice is a function of its pair
                               count (exact for every T); with several
                               (many_expert_classes 1), every count vector
                               a batch can give is
                               searched at T = 1, 2, 3, 4, 6, 8, 12, ...
                               up to the size where that passes ~10^6
                               histograms (Qwen3-30B EP8: 64 tokens), and
                               larger batches run the whole menu. None with
                               poly_split 5. Up to entries - 1 more
                               kernels compiled at creation. */
    int select_pdl;         /* 1: the selection kernel is launched as a
                               programmatic dependent of the kernel before
                               it (ramp_select_desc.pdl_wait): in a forward
                               pass captured as one graph, its launch
                               overlaps the router's or the previous
                               layer's last blocks. 0 (the default): after
                               that kernel ends. Session 40; measured in
                               session 42 (bench_stack, s40-run1): 0-0.5 us
                               a layer less, 5-16 us on Mixtral's mid
                               loads; recommended in a captured pass. */
    int many_expert_classes; /* 1: size classes (one_menu 0) also where the
                               GPU holds several experts, searched over
                               every count vector (session 43; Qwen3-30B
                               EP8's batches of <= 64 tokens then run a
                               kernel without its wide two-phase entries,
                               which slowed the narrow ones by 1-4 us in a
                               stack, bench/results/s42-run1). 0 (the
                               default): one local expert only. Measured
                               (session 45, an H100, s45-run1): OLMoE EP8
                               1.2-2.1 us a layer faster at 16-64 tokens,
                               Qwen3-30B EP8 -1.3 to +1.0 us; recommended
                               for OLMoE-like layers. */
} ramp_layer_desc;
#define RAMP_L2PF_MAX_MB 1024

/* W2 [EL, d, h] (FP8, row-major, host memory) into dst in the row order of
 * ramp_layer_desc.w2_red4: within every 128-row block of d, row s of dst is
 * row 4 (8 w + g) + 2 t + hh of the source, s = 64 t + 16 w + g + 8 hh. d a
 * multiple of 128; dst the same size, not overlapping. */
ramp_status ramp_w2_to_red4(const int64_t w2_shape[3], const void *w2, void *dst);

/* W13 [EL, 2h, d] and W2 [EL, d, h] (row-major, host memory; elem_bytes 1
 * for FP8, 2 for BF16) into w13_dst and w2_dst in
 * ramp_layer_desc.weight_units's stage units: W13 unit (e, row block rb of
 * h, K block kb) = the 128 x 128-byte blocks of gate rows 128 rb .. and of up
 * rows h + 128 rb .. at K bytes 128 kb ..; W2 unit (e, 256-row chunk c of d,
 * K block kb) = rows 256 c .. 256 c + 255; units ordered (e, rb or c, kb),
 * 32 KB each, every 128-byte row of a block stored with its 16-byte chunks
 * swizzled (chunk j of row r at j ^ (r % 8)). h and d multiples of 128 and
 * 256; destinations the same sizes, not overlapping. */
ramp_status ramp_weights_to_units(const int64_t w13_shape[3], const int64_t w2_shape[3],
                                  int elem_bytes, const void *w13, const void *w2,
                                  void *w13_dst, void *w2_dst);

/* Checks the plan (ramp_plan_validate) and the descriptor against it,
 * compiles (or reads from the cache) and loads both kernels, and allocates
 * every buffer a call needs (kernel v2: and builds the weights' tensor maps
 * once, so w13 and w2 must not move while the layer lives). Errors say
 * which field disagrees: weight shapes or precision that do not match the
 * plan's geometry, EL above the plan's, k > E, a menu too large for one
 * kernel, a menu entry kernel v2 cannot run. A device whose SM count
 * differs from the plan's is not an error (the layer runs; the choice was
 * tuned elsewhere): ramp_layer_info says so. */
ramp_status ramp_layer_create(ramp_gpu *gpu, const ramp_plan *plan,
                              const ramp_layer_desc *d, ramp_layer **out);
void ramp_layer_free(ramp_layer *layer);

/* One call's tensors, all device memory. */
typedef struct {
    ramp_devptr x;            /* [tokens, d]: FP8 e4m3, or BF16 if the layer
                                 was created with hidden_bf16 or is BF16 */
    ramp_devptr x_scale;      /* f32 [tokens, d/128] (FP8 input only) */
    ramp_devptr topk_ids;     /* int32 [tokens, k] router choices; ids of
                                 other GPUs' experts and -1 are skipped, ids
                                 outside [-1, E) skipped and counted */
    ramp_devptr topk_weights; /* f32 [tokens, k] router weights */
    ramp_devptr out;          /* f32 [tokens, d]: this GPU's experts'
                                 contributions are ADDED (zero it first);
                                 16-byte aligned (both kernels add
                                 float4s) */
    int tokens;               /* used when tokens_dev == 0 */
    ramp_devptr tokens_dev;   /* 0, or a device int32 token count read by the
                                 kernels (a graph then serves any batch size
                                 up to max_tokens; out of range: clamped; so
                                 every tensor above must hold max_tokens
                                 rows) */
} ramp_layer_io;

/* Queues the two launches on `stream` (not NULL). Fails before launching
 * on tokens outside [0, max_tokens] or a required pointer that is 0. A
 * layer has one workspace (the grouped ids, the schedule), so two runs of
 * one layer must not overlap on the GPU: queue them on one stream or order
 * them; for batches in flight on two streams, a layer each (the weights
 * may be shared). */
ramp_status ramp_layer_run(ramp_layer *layer, const ramp_layer_io *io,
                           ramp_stream stream);

typedef struct {
    int entries;              /* menu size */
    ramp_config configs[RAMP_MENU_MAX];
    int threads;              /* polymorphic kernel: block */
    long long smem_bytes;     /* dynamic shared memory (largest entry) */
    int registers;            /* per thread (the most any entry needs) */
    int blocks_per_sm;        /* its occupancy */
    int kernel;               /* ramp_kernel_version of its entries (v2:
                                 384 threads, grid at most one block per SM) */
    unsigned grid;            /* blocks per launch (largest entry's bound) */
    int plan_sms, device_sms; /* differ: the choice was tuned on another GPU */
    char warning[256];        /* empty, or what differs from the plan */
    ramp_select_device select;/* the selection's outputs (chosen index in
                                 meta[RAMP_SELECT_META_CHOSEN]) */
    ramp_devptr pair_ws;      /* deterministic: the per-slot output rows
                                 (f32 [K parts][tokens * k][h]; rows of
                                 slots not on this GPU are never read),
                                 for inspection; 0 otherwise */
    size_t pair_ws_bytes;
    int size_classes;         /* kernels besides the whole menu's, by
                                 batch size (ramp_layer_desc.one_menu; 0:
                                 none) */
    int class_tokens[RAMP_MENU_MAX];   /* class c serves host token counts
                                          up to this (increasing) */
    unsigned class_entries[RAMP_MENU_MAX]; /* its entries (bit i: entry i) */
} ramp_layer_info;

ramp_status ramp_layer_get_info(const ramp_layer *layer, ramp_layer_info *out);

/* What ramp_layer_create checks before it touches the GPU: the plan, the
 * descriptor against it, and whether the descriptor's kernel runs every
 * menu entry. Needs no GPU, so an engine can refuse a wrong plan or
 * option on a host with none; RAMP_OK means creation can only fail on the
 * device itself (driver, compile, memory). */
ramp_status ramp_layer_check(const ramp_plan *plan, const ramp_layer_desc *d);

/* ======================================================================
 * 11. For language bindings (python/ramp.py)
 * ==================================================================== */

/* The version of the library loaded (RAMP_VERSION_STRING when it was
 * built), for a binding to check against the header it expects. */
const char *ramp_version(void);

/* One field of a public struct. A binding with no C compiler (ctypes)
 * builds and reads the structs through these, by name, instead of through
 * a copy of their layout that could drift from this header. kind: 'i'
 * int, 'u' unsigned, 'q' 64-bit signed, 'Q' 64-bit unsigned (ramp_devptr,
 * size_t), 'f' float, 'd' double, 'p' a pointer, 'c' char[count] (a
 * NUL-terminated string), 'b' an array of count structs of size / count
 * bytes (ramp_config: ramp_config_name names one); count > 1 for arrays. */
typedef struct {
    const char *name; /* the C member, nested ones dotted ("geom.hidden") */
    size_t offset;    /* offsetof */
    size_t size;      /* sizeof the member (all count elements) */
    int count;        /* elements: 1 for a scalar */
    char kind;
} ramp_field;

/* The fields of public struct `type`: "ramp_layer_desc", "ramp_layer_io",
 * "ramp_layer_info", "ramp_plan" or "ramp_gpu_info". Returns the table
 * (*count entries, in offset order) and sets *size to sizeof(type); NULL
 * with RAMP_ERR_NOT_FOUND for any other name. Every member a caller sets
 * or reads is listed (ramp_layer_info's `select` and ramp_plan's theta and
 * slots are not: the binding has no use for them). */
const ramp_field *ramp_struct_fields(const char *type, size_t *size, int *count);

#ifdef __cplusplus
}
#endif
#endif /* RAMP_H */
