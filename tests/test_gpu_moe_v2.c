/*
 * test_gpu_moe_v2.c - the Hopper fused MoE kernel v2 (kernels/moe_v2.cuh)
 * on a GPU against the CPU reference (src/moe_ref.c) and against the v1
 * kernel (kernels/moe_v1.cuh) on the same inputs, for every configuration v2
 * supports (tests/moe_v2_util.h) on Qwen3-30B-A3B, DeepSeek-V3, OLMoE,
 * Phi-3.5-MoE and Mixtral-8x22B EP8, FP8 layer with FP8 hidden states + 1x128 scales.
 *
 * The bound. Hopper's FP8 tensor core does not sum in full f32 (measured by
 * test_gpu_wgmma on the H200: max |error| / sum|products| ~1e-3 on
 * full-range e4m3), far outside moe_ref.h's RAMP_MOE_SUM_EPS (2^-18) that
 * v1's exact f16 products meet. So v2 is checked against
 * ramp_moe_reference_tc's bound: the same reference values, the bound
 * widened by the accumulator model test_gpu_wgmma validated (33 * 2^-12 of
 * the largest addend per 32-product instruction, within each 128-wide K
 * block). How many elements would fail test_gpu_moe's plain bound is
 * printed too ("over plain"), as information.
 *
 * Each configuration runs on four routings of fresh random data: skewed
 * (Zipf), half the local experts empty, one expert in every token's top-k,
 * a single token; token slots grouped and padded by the selection kernel's
 * CPU twin for the configuration's rows. Before each launch the output is
 * filled with fresh random values (the kernel adds into it) and two guard
 * rows past it with a NaN pattern; every element is checked as
 * test_gpu_moe.c does: |out - (base + ref)| <= bound + 2^-16 (|base| +
 * |ref|), bound the reference's per-element bound (moe_ref.h), tokens
 * without a local expert bit-identical, guard rows untouched. Then v1 runs
 * the same configuration (plain launch) on the same base, and every element
 * of the two outputs must agree within the sum of both allowances (2 x the
 * tolerance above). A launch captured in a CUDA graph is replayed twice on
 * another routing (once per model). The skewed routing runs a second time
 * on a grid of 7 blocks, so that every block strides over several tiles
 * (the ring's phases, tok/rw and the intermediate carried across tiles).
 * RAMP_MOE_V2_PLAIN_BOUND=1 makes test_gpu_moe.c's plain bound (not the
 * tensor-core one, see below) the pass criterion.
 *
 * RAMP_MOE_V2_LIST=1 prints the configurations the run would test (by the
 * names RAMP_MOE_CONFIGS takes) and exits, on any machine, GPU or not: a
 * device script's lists checked before device time is spent.
 * Environment: RAMP_MOE_V2_MODELS (default all five, e.g. qwen3-30b,olmoe), RAMP_MOE_CONFIGS
 * (comma list of configuration names, e.g. r2.w128.s4), RAMP_MOE_TOKENS
 * (tokens per routing), RAMP_MOE_V2_NO_V1=1 (skip the v1 comparison: for
 * sanitizer runs), RAMP_MOE_THREADS (compile and reference threads),
 * RAMP_MOE_V2_TILED=1 (v2 compiled for pre-tiled weights, RAMP_MV2_TILED:
 * the weights it reads are packed by ramp_moe_v2_tile_weights, v1 keeps a
 * row-major copy; the same reference, bounds and comparisons),
 * RAMP_MOE_V2_RED4=1 (v2 compiled to add its output as float4s,
 * RAMP_MV2_RED4: it reads W2 permuted by ramp_moe_v2_permute_w2, v1 the
 * row-major copy; with TILED the permuted W2 is then tiled),
 * RAMP_MOE_V2_STREAMK=1 (with SPLIT: the narrow tiles only, their phase 2 as
 * stream-K, RAMP_MV2_STREAMK; P2K ignored),
 * RAMP_MOE_V2_CGATHER=C (2, 4, 8: the narrow fused FP8 tiles whose slices
 * and down chunks C divides, each run by a cluster of C CTAs sharing their
 * intermediates, RAMP_MV2_CGATHER; the 7-block run is then one cluster
 * striding over every tile), RAMP_MOE_V2_GGATHER=G (the same gather through
 * global memory in groups of G blocks, no cluster, RAMP_MV2_GGATHER),
 * RAMP_MOE_V2_PDL=1 (with SPLIT: phase 2 by programmatic dependent launch,
 * its producers waiting after their first weights, ramp_moe_v2_opts.pdl),
 * RAMP_MOE_V2_SPLIT=1 (wide tiles, and narrow FP8 tiles without split-K,
 * in two launches: the up projection
 * storing the intermediate into a workspace poisoned with NaNs before every
 * launch, then the down projection over all of h; RAMP_MOE_V2_P2K=2, 4 (or 8, narrow):
 * its K in that many parts, tiles of their own; run as the configuration
 * space holds them, ramp_config.two_phase = the parts, e.g.
 * r128.w512.s3.ph2.dk2, with default options and the workspace that
 * ramp_moe_v2_ws_bytes asks for), RAMP_MOE_V2_GROUP=G (v2 compiled with
 * its tiles in groups of G row tiles, RAMP_MV2_GROUP: the grouped order of
 * ramp_mv2_tile_of; the 7-block run then strides over groups),
 * RAMP_MOE_V2_BF16=1 (a BF16 layer: BF16 weights and hidden states, no
 * scales, v2 built with RAMP_MV2_BF16 (wgmma m64nNk16), rows 1..64; the
 * reference's BF16 bound, which has no tensor-core widening, and v1's BF16
 * kernel of the same configuration; with SPLIT too (the workspace's 0xFFFF
 * poison is a bf16 NaN), not with TILED or RED4), RAMP_MOE_V2_BULKRED=1 (v2
 * compiled to add its output by bulk reductions, RAMP_MV2_BULKRED: only the
 * configurations ramp_moe_v2_bulkred_check accepts; the same reference and
 * comparisons), RAMP_MOE_V2_MCAST=1 (session 15: wide tiles only, in clusters
 * of two sharing each weight stage by TMA multicast, RAMP_MV2_MCAST),
 * RAMP_MOE_V2_STAGES=N (session 46: the narrow tiles, split-K included,
 * with rings of N stages, 2..6, where they fit; no wide tile),
 * RAMP_MOE_V2_PIPE=N (ramp_moe_v2_opts.pipe; with BF16 the wide tiles only,
 * one stage's wgmmas kept in flight), RAMP_MOE_V2_TMA_X=1 or 2 (session 17:
 * wide tiles only, their token rows by TMA, from a copy of x in tile order or
 * a box per row, RAMP_MV2_TMA_X), RAMP_MOE_V2_W2BOX=1 (session 29: narrow FP8
 * tiles without split-K, W2 in boxes of 256 rows, RAMP_MV2_W2BOX256), and
 * RAMP_MOE_V2_TILED=2 (pre-tiled K block-major) or 3 (each ring stage's
 * weights one contiguous unit read by a bulk copy). Prints
 * one line per configuration and a total. Exit 77 without a GPU.
 */
#include "check.h"
#include "moe_data.h"
#include "moe_v2_util.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define NSHAPES 4
#define MAXV MV2_MAXV

typedef struct {
    const char *name;
    int tokens;
} model_case;
/* Every model the datasets time on v2 (data/timing/README.md), so no
 * geometry reaches the timing sweep untested. */
static const model_case MODELS[] = {{"qwen3-30b", 64},   {"deepseek-v3", 48},   {"olmoe", 64},
                                    {"phi-3.5-moe", 48}, {"mixtral-8x22b", 32}};
#define NMODELS 5

/* ------------------------------------------------------- compile pool */

typedef struct {
    ramp_moe_variant v;
    ramp_moe_v2_opts o; /* v2's options */
    int v1; /* 1: the v1 kernel of the same configuration */
    ramp_jit_result *r;
    ramp_status s;
    char err[1024];
    int done;
} cjob;

static cjob cjobs[NMODELS * MAXV * 2];
static int ncjobs, cnext;
static pthread_mutex_t cmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ccv = PTHREAD_COND_INITIALIZER;

static void *compile_worker(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&cmu);
        int i = cnext++;
        pthread_mutex_unlock(&cmu);
        if (i >= ncjobs) return NULL;
        ramp_jit_result *r = NULL;
        ramp_status s = cjobs[i].v1 ? ramp_moe_v1_compile(&cjobs[i].v, &r)
                                    : ramp_moe_v2_compile_opts(&cjobs[i].v, &cjobs[i].o, &r);
        pthread_mutex_lock(&cmu);
        cjobs[i].r = r;
        cjobs[i].s = s;
        if (s != RAMP_OK) snprintf(cjobs[i].err, sizeof cjobs[i].err, "%s", ramp_last_error());
        cjobs[i].done = 1;
        pthread_cond_broadcast(&ccv);
        pthread_mutex_unlock(&cmu);
    }
}

static cjob *wait_cjob(int i) {
    pthread_mutex_lock(&cmu);
    while (!cjobs[i].done) pthread_cond_wait(&ccv, &cmu);
    pthread_mutex_unlock(&cmu);
    return &cjobs[i];
}

/* ---------------------------------------------------------------- state */

#define GPU_OK(expr)                                                              \
    do {                                                                          \
        ramp_status s_ = (expr);                                                  \
        if (s_ != RAMP_OK) {                                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr,         \
                    ramp_last_error());                                           \
            check_failures++;                                                     \
            goto fail;                                                            \
        }                                                                         \
    } while (0)

typedef struct {
    moe_batch b;
    float *ref, *bound, *bound_plain;
    ramp_devptr x, xs, tw;
} shape_data;

typedef struct {
    int runs, violations, v1_runs, v1_diffs;
    long long over_plain, elements;
    double worst_ratio, worst_rel, worst_v1, worst_plain;
} stats;

typedef struct {
    ramp_gpu *gpu;
    ramp_stream st;
    ramp_rng *rng;
    int d, max_tiles;
    ramp_devptr ws; /* split programs' intermediate (0: none) */
    size_t ws_bytes;
    ramp_devptr sorted, texp, ntiles, out, w13, w13s, w2, w2s;
    ramp_devptr w13_v1, w2_v1; /* v1's row-major weights: w13, w2 unless v2's are tiled */
    int bf16;                  /* a BF16 layer: x is bf16, no scales */
    float *host_out, *host_v1, *base;
    int plain_bound; /* 1: the plain (v1) bound is the criterion */
} runner;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static ramp_moe_params params_of(const runner *R, const shape_data *sd) {
    ramp_moe_params p;
    memset(&p, 0, sizeof p);
    p.x = sd->x;
    p.x_scale = R->bf16 ? 0 : sd->xs;
    p.w13 = R->w13; p.w2 = R->w2;
    p.w13_scale = R->bf16 ? 0 : R->w13s;
    p.w2_scale = R->bf16 ? 0 : R->w2s;
    p.topk_weights = sd->tw;
    p.sorted_ids = R->sorted; p.tile_expert = R->texp; p.num_tiles = R->ntiles;
    p.out = R->out;
    p.num_tokens = sd->b.tokens;
    p.max_tiles = R->max_tiles;
    p.ws = R->ws;
    return p;
}

/* Uploads routing sd's selection for the configuration's rows. */
static ramp_status upload_selection(runner *R, shape_data *sd, ramp_select_desc *desc,
                                    ramp_select_result *sel, int rows) {
    RAMP_TRY(ramp_select_cpu(desc, sd->b.tokens, sd->b.ids, sel));
    int tiles = sel->meta[RAMP_SELECT_META_TILES];
    RAMP_CHECK(tiles <= R->max_tiles, RAMP_ERR_INTERNAL, "tiles %d > capacity %d", tiles,
               R->max_tiles);
    RAMP_TRY(ramp_gpu_upload(R->gpu, R->sorted, sel->sorted_ids,
                             (size_t)(tiles > 0 ? tiles : 1) * rows * 4));
    RAMP_TRY(ramp_gpu_upload(R->gpu, R->texp, sel->tile_expert, (size_t)(tiles > 0 ? tiles : 1) * 4));
    int32_t nt = tiles;
    return ramp_gpu_upload(R->gpu, R->ntiles, &nt, 4);
}

/* v2 on routing sd, checked against the reference; then v1 (k1, may be
 * NULL) on the same base, compared with v2. */
static ramp_status run_check(runner *R, ramp_moe_v2_kernel *k2, ramp_moe_kernel *k1,
                             const ramp_moe_variant *v, shape_data *sd,
                             ramp_select_desc *desc, ramp_select_result *sel, stats *S,
                             const char *label) {
    const int M = sd->b.tokens, d = R->d;
    char name[64];
    ramp_config_name(&v->cfg, name, sizeof name);
    RAMP_TRY(upload_selection(R, sd, desc, sel, v->cfg.rows));
    double rms = 0;
    for (size_t i = 0; i < (size_t)M * d; i++) rms += (double)sd->ref[i] * sd->ref[i];
    rms = sqrt(rms / ((double)M * d)) + 1e-3;
    for (size_t i = 0; i < (size_t)M * d; i++) R->base[i] = (float)(ramp_rng_normal(R->rng) * rms);
    uint32_t guard = 0x7FC0DEADu;
    for (size_t i = (size_t)M * d; i < (size_t)(M + 2) * d; i++) memcpy(&R->base[i], &guard, 4);
    const size_t bytes = (size_t)(M + 2) * d * 4;
    ramp_moe_params p = params_of(R, sd);
    RAMP_TRY(ramp_gpu_upload(R->gpu, R->out, R->base, bytes));
    /* split: the intermediate poisoned (0xFF: e4m3 NaN, f32 NaN scales), so
     * that a row phase 2 reads and phase 1 did not write shows as NaN */
    if (R->ws) RAMP_TRY(ramp_gpu_fill32_async(R->gpu, R->ws, 0xFFFFFFFFu, R->ws_bytes / 4, R->st));
    RAMP_TRY(ramp_moe_v2_launch(k2, &p, R->st));
    RAMP_TRY(ramp_stream_sync(R->gpu, R->st));
    RAMP_TRY(ramp_gpu_download(R->gpu, R->host_out, R->out, bytes));
    int viol = 0;
    double worst = 0, num = 0, den = 0;
    for (size_t i = 0; i < (size_t)M * d; i++) {
        double expv = (double)R->base[i] + sd->ref[i];
        double tol = sd->bound[i] + (fabs(R->base[i]) + fabs(sd->ref[i])) / 65536.0;
        double err = fabs((double)R->host_out[i] - expv);
        if (sd->ref[i] == 0 && sd->bound[i] < 1e-20) tol = 0; /* token with no local expert */
        if (R->plain_bound) {
            tol = sd->bound_plain[i] + (fabs(R->base[i]) + fabs(sd->ref[i])) / 65536.0;
            if (sd->ref[i] == 0 && sd->bound_plain[i] < 1e-20) tol = 0;
        }
        if (!(err <= tol)) {
            if (viol < 3)
                fprintf(stderr, "%s %s: token %zu row %zu: out %.9g expected %.9g (base %.9g + ref %.9g) tol %.3g\n",
                        label, name, i / d, i % d,
                        R->host_out[i], expv, R->base[i], sd->ref[i], tol);
            viol++;
        }
        double r = tol > 0 ? err / tol : (err > 0 ? INFINITY : 0);
        if (r > worst || isnan(r)) worst = r;
        double tp = sd->bound_plain[i] + (fabs(R->base[i]) + fabs(sd->ref[i])) / 65536.0;
        if (sd->ref[i] == 0 && sd->bound_plain[i] < 1e-20) tp = 0;
        double rp = tp > 0 ? err / tp : (err > 0 ? INFINITY : 0);
        if (rp > S->worst_plain || isnan(rp)) S->worst_plain = rp;
        S->over_plain += !(err <= tp);
        S->elements++;
        num += err * err;
        den += (double)sd->ref[i] * sd->ref[i];
    }
    for (size_t i = (size_t)M * d; i < (size_t)(M + 2) * d; i++)
        if (memcmp(&R->host_out[i], &guard, 4) != 0) {
            if (viol++ < 3) fprintf(stderr, "%s %s: guard row written at %zu\n", label, name, i);
            break;
        }
    double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    S->runs++;
    S->violations += viol;
    if (worst > S->worst_ratio) S->worst_ratio = worst;
    if (rel > S->worst_rel) S->worst_rel = rel;
    if (viol) check_failures++;
    if (!k1) return RAMP_OK;

    /* v1 on the same inputs and base */
    p.w13 = R->w13_v1;
    p.w2 = R->w2_v1;
    RAMP_TRY(ramp_gpu_upload(R->gpu, R->out, R->base, bytes));
    RAMP_TRY(ramp_moe_kernel_launch(k1, &p, R->st));
    RAMP_TRY(ramp_stream_sync(R->gpu, R->st));
    RAMP_TRY(ramp_gpu_download(R->gpu, R->host_v1, R->out, bytes));
    int diff = 0;
    double w1 = 0;
    for (size_t i = 0; i < (size_t)M * d; i++) {
        /* v2's allowance plus v1's (the plain bound) */
        double tol = sd->bound[i] + sd->bound_plain[i] +
                     2 * (fabs(R->base[i]) + fabs(sd->ref[i])) / 65536.0;
        double err = fabs((double)R->host_out[i] - R->host_v1[i]);
        if (!(err <= tol)) {
            if (diff < 3)
                fprintf(stderr, "%s %s: v2 and v1 differ at token %zu row %zu: %.9g vs %.9g (tol %.3g)\n",
                        label, name, i / d, i % d, R->host_out[i], R->host_v1[i], tol);
            diff++;
        }
        double r = tol > 0 ? err / tol : (err > 0 ? INFINITY : 0);
        if (r > w1 || isnan(r)) w1 = r;
    }
    S->v1_runs++;
    S->v1_diffs += diff;
    if (w1 > S->worst_v1) S->worst_v1 = w1;
    if (diff) check_failures++;
    return RAMP_OK;
}

/* Captures one v2 launch on routing sd in a graph, replays it twice: the
 * output must hold base + 2 ref. */
static ramp_status graph_check(runner *R, ramp_moe_v2_kernel *k2, const ramp_moe_variant *v,
                               shape_data *sd, ramp_select_desc *desc, ramp_select_result *sel,
                               const char *label) {
    ramp_moe_params p = params_of(R, sd);
    int32_t zero = 0;
    RAMP_TRY(ramp_gpu_upload(R->gpu, R->ntiles, &zero, 4));
    ramp_graph *gr = NULL;
    RAMP_TRY(ramp_graph_capture_begin(R->gpu, R->st));
    ramp_status cs = ramp_moe_v2_launch(k2, &p, R->st);
    ramp_status ce = ramp_graph_capture_end(R->gpu, R->st, &gr);
    RAMP_TRY(cs);
    RAMP_TRY(ce);
    ramp_status s = upload_selection(R, sd, desc, sel, v->cfg.rows);
    const size_t n = (size_t)sd->b.tokens * R->d;
    for (size_t i = 0; i < n; i++) R->base[i] = (float)ramp_rng_normal(R->rng);
    if (s == RAMP_OK) s = ramp_gpu_upload(R->gpu, R->out, R->base, n * 4);
    if (s == RAMP_OK) s = ramp_graph_replay(gr, R->st);
    if (s == RAMP_OK) s = ramp_graph_replay(gr, R->st);
    if (s == RAMP_OK) s = ramp_stream_sync(R->gpu, R->st);
    if (s == RAMP_OK) s = ramp_gpu_download(R->gpu, R->host_out, R->out, n * 4);
    ramp_graph_free(gr);
    RAMP_TRY(s);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double expv = (double)R->base[i] + 2.0 * sd->ref[i];
        double tol = 2 * sd->bound[i] + (fabs(R->base[i]) + 2 * fabs(sd->ref[i])) / 65536.0;
        if (!(fabs(R->host_out[i] - expv) <= tol) && bad++ < 3)
            fprintf(stderr, "%s graph replay: element %zu: %g vs %g\n", label, i, R->host_out[i], expv);
    }
    if (bad) check_failures++;
    printf("  graph capture + 2 replays: %s\n", bad ? "WRONG" : "ok");
    return RAMP_OK;
}

static int wanted(const char *list, const ramp_config *c) {
    if (!list || !*list) return 1;
    char name[64], buf[1100], key[80];
    ramp_config_name(c, name, sizeof name);
    snprintf(buf, sizeof buf, ",%s,", list);
    snprintf(key, sizeof key, ",%s,", name);
    return strstr(buf, key) != NULL;
}

int main(void) {
    /* line by line into a log file too, so that a run killed by its timeout
     * still shows how far it got */
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* a misspelt model fails here, on any machine, before the GPU check */
    const char *models_env = getenv("RAMP_MOE_V2_MODELS");
    {
        const char *names[NMODELS];
        for (int i = 0; i < NMODELS; i++) names[i] = MODELS[i].name;
        if (models_env && check_list_unknown("RAMP_MOE_V2_MODELS", models_env, names, NMODELS))
            return 1;
    }
    unsigned long long seed = check_seed();
    ramp_rng rng;
    ramp_rng_seed(&rng, seed);
    const char *t_env = getenv("RAMP_MOE_THREADS");
    int threads = t_env && atoi(t_env) > 0 ? atoi(t_env) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    const char *configs_env = getenv("RAMP_MOE_CONFIGS");
    const char *tokens_env = getenv("RAMP_MOE_TOKENS");
    const char *nov1_env = getenv("RAMP_MOE_V2_NO_V1");
    const int tokens_override = tokens_env && atoi(tokens_env) > 0 ? atoi(tokens_env) : 0;
    const int with_v1 = !(nov1_env && atoi(nov1_env) > 0);
    const char *plain_env = getenv("RAMP_MOE_V2_PLAIN_BOUND");
    const char *tiled_env = getenv("RAMP_MOE_V2_TILED");
    const char *red4_env = getenv("RAMP_MOE_V2_RED4");
    const char *split_env = getenv("RAMP_MOE_V2_SPLIT");
    const char *bulkred_env = getenv("RAMP_MOE_V2_BULKRED");
    ramp_moe_v2_opts opts = ramp_moe_v2_default_opts();
    opts.bulkred = bulkred_env && atoi(bulkred_env) > 0;
    const char *mcast_env = getenv("RAMP_MOE_V2_MCAST");
    opts.mcast = mcast_env && atoi(mcast_env) > 0;
    const char *w2box_env = getenv("RAMP_MOE_V2_W2BOX");
    opts.w2box = w2box_env && atoi(w2box_env) > 0;
    const char *tma_x_env = getenv("RAMP_MOE_V2_TMA_X");
    opts.tma_x = tma_x_env ? atoi(tma_x_env) : 0;
    /* RAMP_MOE_V2_STAGES=N (session 46): the narrow tiles with rings of N
     * stages instead of the space's 4, where they fit; wide tiles left out */
    const char *stages_env = getenv("RAMP_MOE_V2_STAGES");
    const int deep_stages = stages_env ? atoi(stages_env) : 0;
    if (stages_env && (deep_stages < 2 || deep_stages > 6)) {
        fprintf(stderr, "RAMP_MOE_V2_STAGES=%s: a stage count in 2..6\n", stages_env);
        return 1;
    }
    const char *pipe_env = getenv("RAMP_MOE_V2_PIPE");
    if (pipe_env) opts.pipe = atoi(pipe_env);
    opts.tiled = tiled_env ? atoi(tiled_env) : 0; /* 1, 2: K block-major, 3: stage units */
    if (opts.tiled < 0 || opts.tiled > 3) {
        fprintf(stderr, "RAMP_MOE_V2_TILED=%s: 0, 1, 2 (K block-major) or 3 (stage units)\n",
                tiled_env);
        return 1;
    }
    opts.red4 = red4_env && atoi(red4_env) > 0;
    opts.split = split_env && atoi(split_env) > 0;
    const char *p2k_env = getenv("RAMP_MOE_V2_P2K");
    opts.p2k = p2k_env ? atoi(p2k_env) : 0;
    const char *sk_env = getenv("RAMP_MOE_V2_STREAMK");
    opts.streamk = sk_env && atoi(sk_env) > 0;
    if (opts.streamk && !opts.split) {
        fprintf(stderr, "RAMP_MOE_V2_STREAMK needs RAMP_MOE_V2_SPLIT=1 (stream-K is a narrow "
                        "split's phase 2)\n");
        return 1;
    }
    const char *pdl_env = getenv("RAMP_MOE_V2_PDL");
    opts.pdl = pdl_env && atoi(pdl_env) > 0;
    if (opts.pdl && !opts.split) {
        fprintf(stderr, "RAMP_MOE_V2_PDL needs RAMP_MOE_V2_SPLIT=1 (phase 2 by programmatic "
                        "dependent launch)\n");
        return 1;
    }
    const char *group_env = getenv("RAMP_MOE_V2_GROUP");
    opts.group = group_env ? atoi(group_env) : 1;
    const char *cg_env = getenv("RAMP_MOE_V2_CGATHER");
    opts.cgather = cg_env ? atoi(cg_env) : 0;
    if (opts.cgather != 0 && opts.cgather != 1 && opts.cgather != 2 && opts.cgather != 4 &&
        opts.cgather != 8) {
        fprintf(stderr, "RAMP_MOE_V2_CGATHER=%s: 0, 1 (none), 2, 4 or 8\n", cg_env);
        return 1;
    }
    const char *gg_env = getenv("RAMP_MOE_V2_GGATHER");
    opts.ggather = gg_env ? atoi(gg_env) : 0;
    if ((opts.ggather != 0 && opts.ggather != 1 && opts.ggather != 2 && opts.ggather != 4 &&
         opts.ggather != 8) || (opts.ggather > 1 && opts.cgather > 1)) {
        fprintf(stderr, "RAMP_MOE_V2_GGATHER=%s: 0, 1 (none), 2, 4 or 8, not with "
                        "RAMP_MOE_V2_CGATHER\n", gg_env);
        return 1;
    }
    const char *bf16_env = getenv("RAMP_MOE_V2_BF16");
    const int bf16 = bf16_env && atoi(bf16_env) > 0;
    if (bf16 && ((opts.tiled && opts.tiled != 3) || opts.red4)) {
        fprintf(stderr, "RAMP_MOE_V2_BF16 with TILED 1, 2 or RED4: v2 runs BF16 layers on "
                        "row-major or stage-unit, unpermuted weights only\n");
        return 1;
    }

    /* every variant to compile, both models, v2 and v1 interleaved */
    ramp_geometry geoms[NMODELS];
    ramp_moe_variant vars[NMODELS][MAXV];
    int nvar[NMODELS] = {0}, job2[NMODELS][MAXV], job1[NMODELS][MAXV], on[NMODELS] = {0};
    int global_e[NMODELS];
    for (int mi = 0; mi < NMODELS; mi++) {
        if (models_env && !check_listed(models_env, MODELS[mi].name)) continue;
        ramp_model m;
        GPU_OK(ramp_model_lookup(MODELS[mi].name, &m));
        global_e[mi] = m.experts;
        GPU_OK(mv2_geometry(MODELS[mi].name, &geoms[mi]));
        geoms[mi].bf16 = bf16; /* mv2_variants keeps what v2 runs for it */
        on[mi] = 1;
        ramp_moe_variant all[MAXV];
        int n = mv2_variants(&geoms[mi], all);
        for (int i = 0; i < n; i++) {
            if (deep_stages) {
                if (all[i].cfg.rows > 64) continue;
                all[i].cfg.stages = deep_stages;
                if (ramp_moe_v2_check(&all[i]) != RAMP_OK) { /* its ring does not fit */
                    ramp_clear_error();
                    continue;
                }
            }
            if (!wanted(configs_env, &all[i].cfg)) continue;
            /* split: wide tiles, and narrow FP8 tiles without split-K (session 14) */
            if (opts.split && all[i].cfg.rows <= 64 &&
                (bf16 || all[i].cfg.splitk > 1 || opts.red4 || opts.bulkred))
                continue;
            /* bulk reductions: where built (narrow FP8 unsplit tiles whose staging fits) */
            if (opts.bulkred && ramp_moe_v2_bulkred_check(&all[i], &opts) != RAMP_OK) continue;
            /* multicast: wide tiles and narrow fused FP8 ones (session 45) */
            if (opts.mcast && ramp_moe_v2_opts_check(&all[i], &opts) != RAMP_OK) {
                ramp_clear_error();
                continue;
            }
            if (opts.tma_x && all[i].cfg.rows <= 64) continue; /* token rows by TMA: wide */
            /* W2 in 256-row boxes: narrow FP8 tiles, no split-K */
            if (opts.w2box && (all[i].cfg.rows > 64 || bf16 || all[i].cfg.splitk > 1)) continue;
            if (opts.streamk && all[i].cfg.rows > 64) continue; /* stream-K: narrow splits */
            /* the cluster gather: where it is built and C divides the work */
            if ((opts.cgather > 1 || opts.ggather > 1) &&
                ramp_moe_v2_opts_check(&all[i], &opts) != RAMP_OK) {
                ramp_clear_error();
                continue;
            }
            /* BF16 ping-pong: wide tiles (session 15) */
            if (bf16 && opts.pipe && all[i].cfg.rows <= 64) continue;
            ramp_moe_v2_opts o = opts;
            if (opts.split) { /* the configuration's two phases, not an option */
                all[i].cfg.two_phase = opts.p2k > 1 ? opts.p2k : 1;
                o.split = o.p2k = 0;
            }
            int k = nvar[mi]++;
            vars[mi][k] = all[i];
            cjobs[ncjobs].v = all[i];
            cjobs[ncjobs].o = o;
            job2[mi][k] = ncjobs++;
            job1[mi][k] = -1;
            /* v1's split-K sums through a workspace; the same tile unsplit
             * computes the same function */
            ramp_moe_variant v1v = all[i];
            v1v.cfg.splitk = 1;
            v1v.cfg.two_phase = 0; /* and in one launch */
            if (with_v1 && ramp_moe_v1_check(&v1v) == RAMP_OK) {
                cjobs[ncjobs].v = v1v;
                cjobs[ncjobs].v1 = 1;
                job1[mi][k] = ncjobs++;
            }
        }
    }
    /* every configuration named must exist on some selected model: a
     * misspelt one must fail, not select nothing */
    for (const char *p = configs_env; p && *p;) {
        const char *end = strchr(p, ',');
        char item[64];
        snprintf(item, sizeof item, "%.*s", end ? (int)(end - p) : (int)strlen(p), p);
        int found = 0;
        for (int mi = 0; mi < NMODELS && !found; mi++)
            for (int k = 0; k < nvar[mi] && !found; k++) {
                ramp_config c = vars[mi][k].cfg;
                c.two_phase = 0; /* the names given are the fused ones */
                found = wanted(item, &c);
            }
        if (!found) {
            fprintf(stderr, "RAMP_MOE_CONFIGS: '%s' is no v2 configuration of the selected models%s "
                    "(RAMP_MOE_V2_LIST=1 lists the names this run takes)\n",
                    item, opts.split ? " (a split run takes no split-K, BF16 narrow tile, "
                                       "red4 or bulkred)" : "");
            check_failures++;
        }
        p = end ? end + 1 : NULL;
    }
    if (ncjobs == 0) {
        fprintf(stderr, "test_gpu_moe_v2: the selection leaves nothing to test\n");
        check_failures++;
    }
    if (check_failures) return check_finish("test_gpu_moe_v2");
    /* RAMP_MOE_V2_LIST=1: the configurations this run would test, on any
     * machine, so that a device script's lists can be checked before the
     * device time is spent */
    const char *list_env = getenv("RAMP_MOE_V2_LIST");
    if (list_env && atoi(list_env) > 0) {
        for (int mi = 0; mi < NMODELS; mi++) {
            if (!on[mi]) continue;
            printf("%s:", MODELS[mi].name);
            for (int k = 0; k < nvar[mi]; k++) {
                char name[64];
                ramp_config c = vars[mi][k].cfg;
                c.two_phase = 0; /* the name RAMP_MOE_CONFIGS takes */
                ramp_config_name(&c, name, sizeof name);
                printf(" %s", name);
            }
            printf("\n");
        }
        return check_finish("test_gpu_moe_v2");
    }
    int ngpu = 0;
    if (ramp_gpu_count(&ngpu) != RAMP_OK || ngpu < 1) {
        printf("test_gpu_moe_v2: no GPU (%s): skipped\n", ramp_last_error());
        return 77;
    }

    runner R;
    memset(&R, 0, sizeof R);
    R.rng = &rng;
    R.plain_bound = plain_env && atoi(plain_env) > 0;
    R.bf16 = bf16;
    GPU_OK(ramp_gpu_open(0, &R.gpu));
    GPU_OK(ramp_stream_create(R.gpu, &R.st));
    ramp_gpu_info info;
    GPU_OK(ramp_gpu_get_info(R.gpu, &info));
    printf("GPU %s (sm_%d%d), %d SMs; %d threads; seed %llu; v2 weights %s%s\n", info.limits.name,
           info.cc_major, info.cc_minor, info.limits.sms, threads, seed,
           opts.tiled == 3   ? "in stage units (RAMP_MOE_V2_TILED=3)"
           : opts.tiled == 2 ? "pre-tiled K block-major (RAMP_MOE_V2_TILED=2)"
           : opts.tiled == 1 ? "pre-tiled (RAMP_MOE_V2_TILED=1)"
                             : "row-major",
           opts.red4 ? ", W2 rows permuted, float4 output (RAMP_MOE_V2_RED4=1)" : "");
    if (bf16) printf("BF16 layer (RAMP_MOE_V2_BF16=1): bf16 weights and hidden states, no scales\n");
    if (opts.group > 1) printf("tile order: groups of %d row tiles (RAMP_MOE_V2_GROUP)\n", opts.group);
    if (opts.bulkred)
        printf("output by bulk reductions (RAMP_MOE_V2_BULKRED=1): the configurations that have them\n");
    if (opts.mcast)
        printf("weights by TMA multicast to pairs of row tiles (RAMP_MOE_V2_MCAST=1): wide tiles "
               "and narrow fused FP8 tiles\n");
    if (opts.cgather > 1)
        printf("intermediates gathered over clusters of %d CTAs (RAMP_MOE_V2_CGATHER): the "
               "narrow fused FP8 tiles it divides\n", opts.cgather);
    if (opts.ggather > 1)
        printf("intermediates gathered through global memory in groups of %d blocks "
               "(RAMP_MOE_V2_GGATHER): the narrow fused FP8 tiles it divides\n", opts.ggather);
    if (opts.pipe) printf("consumer ping-pong RAMP_MOE_V2_PIPE=%d%s\n", opts.pipe,
                          bf16 ? " (BF16: wide tiles only)" : "");
    if (info.cc_major != 9 || info.cc_minor != 0) {
        printf("test_gpu_moe_v2: v2 is built for sm_90a; this GPU is sm_%d%d: skipped\n",
               info.cc_major, info.cc_minor);
        ramp_stream_destroy(R.gpu, R.st);
        ramp_gpu_close(R.gpu);
        return 77;
    }

    printf("%d kernels to compile\n", ncjobs);
    const double t_start = now_s();
    int ncomp = threads;
    pthread_t cth[64];
    for (int t = 0; t < ncomp; t++) pthread_create(&cth[t], NULL, compile_worker, NULL);

    stats total;
    memset(&total, 0, sizeof total);
    int nconfigs = 0;
    for (int mi = 0; mi < NMODELS; mi++) {
        if (!on[mi]) continue;
        const ramp_geometry g = geoms[mi];
        const int M = tokens_override ? tokens_override : MODELS[mi].tokens;
        const int d = g.hidden, h = g.inter, E = g.experts, k = g.topk;
        shape_data sd[NSHAPES];
        memset(sd, 0, sizeof sd);
        moe_weights W;
        double t0 = now_s();
        if (moe_weights_make_fast(&rng, E, k, h, d, bf16, &W)) {
            fprintf(stderr, "out of host memory for %s\n", MODELS[mi].name);
            return 1;
        }
        ramp_moe_layer L = moe_layer_of(&W);
        for (int s = 0; s < NSHAPES; s++) {
            if (moe_batch_make(&rng, s, M, k, global_e[mi], E, d, &sd[s].b)) return 1;
            size_t n = (size_t)sd[s].b.tokens * d;
            sd[s].ref = malloc(n * 4);
            sd[s].bound = malloc(n * 4);
            sd[s].bound_plain = malloc(n * 4);
            ramp_moe_batch B = bf16 ? moe_batch_bf16(&sd[s].b) : moe_batch_fp8(&sd[s].b);
            /* both bounds in one pass (the values are the same) */
            GPU_OK(ramp_moe_reference2(&L, &B, threads, sd[s].ref, sd[s].bound, sd[s].bound_plain));
        }
        printf("%s: E=%d k=%d h=%d d=%d, %d tokens; data and reference in %.1f s\n",
               MODELS[mi].name, E, k, h, d, M, now_s() - t0);
        R.d = d;
        const size_t el = bf16 ? 2 : 1; /* bytes per weight and hidden-state element */
        const size_t e13 = (size_t)E * 2 * h * d * el, e2 = (size_t)E * h * d * el;
        const size_t s13 = (size_t)E * (2 * h / 128) * (d / 128) * 4, s2 = (size_t)E * (d / 128) * (h / 128) * 4;
        GPU_OK(ramp_gpu_alloc(R.gpu, e13, &R.w13));
        GPU_OK(ramp_gpu_alloc(R.gpu, e2, &R.w2));
        GPU_OK(ramp_gpu_alloc(R.gpu, s13, &R.w13s));
        GPU_OK(ramp_gpu_alloc(R.gpu, s2, &R.w2s));
        R.w13_v1 = R.w13;
        R.w2_v1 = R.w2;
        if (opts.tiled || opts.red4) {
            /* v2 reads the permuted and/or packed copy; v1 (if it runs)
             * the row-major one */
            uint8_t *t13 = malloc(e13), *t2 = malloc(e2), *p2 = malloc(e2);
            if (!t13 || !t2 || !p2) {
                fprintf(stderr, "out of host memory packing %s's weights\n", MODELS[mi].name);
                return 1;
            }
            memcpy(t13, W.w13, e13);
            memcpy(p2, W.w2, e2);
            if (opts.red4) GPU_OK(ramp_moe_v2_permute_w2(&g, W.w2, p2));
            if (opts.tiled)
                GPU_OK(ramp_moe_v2_tile_weights_order(&g, opts.tiled, W.w13, p2, t13, t2));
            else memcpy(t2, p2, e2);
            GPU_OK(ramp_gpu_upload(R.gpu, R.w13, t13, e13));
            GPU_OK(ramp_gpu_upload(R.gpu, R.w2, t2, e2));
            free(t13);
            free(t2);
            free(p2);
            if (with_v1) {
                GPU_OK(ramp_gpu_alloc(R.gpu, e13, &R.w13_v1));
                GPU_OK(ramp_gpu_alloc(R.gpu, e2, &R.w2_v1));
                GPU_OK(ramp_gpu_upload(R.gpu, R.w13_v1, W.w13, e13));
                GPU_OK(ramp_gpu_upload(R.gpu, R.w2_v1, W.w2, e2));
            }
        } else {
            GPU_OK(ramp_gpu_upload(R.gpu, R.w13, W.w13, e13));
            GPU_OK(ramp_gpu_upload(R.gpu, R.w2, W.w2, e2));
        }
        if (!bf16) { /* (a BF16 layer's are never written) */
            GPU_OK(ramp_gpu_upload(R.gpu, R.w13s, W.w13_scale, s13));
            GPU_OK(ramp_gpu_upload(R.gpu, R.w2s, W.w2_scale, s2));
        }
        for (int s = 0; s < NSHAPES; s++) {
            size_t n = (size_t)sd[s].b.tokens * d;
            GPU_OK(ramp_gpu_alloc(R.gpu, n * el + 16, &sd[s].x));
            GPU_OK(ramp_gpu_alloc(R.gpu, n / 128 * 4 + 16, &sd[s].xs));
            GPU_OK(ramp_gpu_alloc(R.gpu, (size_t)sd[s].b.tokens * k * 4 + 16, &sd[s].tw));
            if (bf16) GPU_OK(ramp_gpu_upload(R.gpu, sd[s].x, sd[s].b.x_bf16, n * 2));
            else GPU_OK(ramp_gpu_upload(R.gpu, sd[s].x, sd[s].b.x, n));
            GPU_OK(ramp_gpu_upload(R.gpu, sd[s].xs, sd[s].b.x_scale, n / 128 * 4));
            GPU_OK(ramp_gpu_upload(R.gpu, sd[s].tw, sd[s].b.weights, (size_t)sd[s].b.tokens * k * 4));
        }
        ramp_select_desc desc;
        memset(&desc, 0, sizeof desc);
        desc.experts = global_e[mi];
        desc.topk = k;
        desc.max_tokens = M;
        desc.local_experts = E;
        desc.nentries = 1;
        desc.group_only = 1;
        int64_t cap_slots = 0, cap_tiles = 0;
        for (int i = 0; i <= MV2_NROWS; i++) { /* and the wide tile */
            const int rows = i < MV2_NROWS ? MV2_ROWS[i] : MV2_WIDE_ROWS;
            desc.entries[0] = (ramp_select_entry){rows, h / 128, 132, {0, 0, 0, 0}, 0, 0};
            int64_t ms, mt;
            GPU_OK(ramp_select_capacity(&desc, &ms, &mt));
            if (ms > cap_slots) cap_slots = ms;
            if (mt > cap_tiles) cap_tiles = mt;
        }
        GPU_OK(ramp_gpu_alloc(R.gpu, (size_t)cap_slots * 4 + 64, &R.sorted));
        GPU_OK(ramp_gpu_alloc(R.gpu, (size_t)cap_tiles * 4 + 64, &R.texp));
        GPU_OK(ramp_gpu_alloc(R.gpu, 64, &R.ntiles));
        GPU_OK(ramp_gpu_alloc(R.gpu, (size_t)(M + 2) * d * 4, &R.out));
        R.host_out = malloc((size_t)(M + 2) * d * 4);
        R.host_v1 = malloc((size_t)(M + 2) * d * 4);
        R.base = malloc((size_t)(M + 2) * d * 4);

        printf("  %-14s %4s %8s  %-4s %-13s %-9s %-26s %s\n", "config", "regs", "smem", "runs",
               "max err/bound", "rel err", "over plain bound (max)", "v2 vs v1: max diff/tol");
        for (int ci = 0; ci < nvar[mi]; ci++) {
            const ramp_moe_variant *v = &vars[mi][ci];
            char name[64], label[96];
            ramp_config_name(&v->cfg, name, sizeof name);
            snprintf(label, sizeof label, "%s", MODELS[mi].name);
            cjob *J2 = wait_cjob(job2[mi][ci]);
            if (J2->s != RAMP_OK) {
                fprintf(stderr, "%s %s: v2 compile failed: %s\n", label, name, J2->err);
                check_failures++;
                continue;
            }
            ramp_moe_v2_kernel *K2 = NULL;
            ramp_moe_kernel *K1 = NULL;
            ramp_status s = ramp_moe_v2_create_from_opts(R.gpu, v, &J2->o, J2->r, &K2);
            if (s != RAMP_OK) {
                fprintf(stderr, "%s %s: %s\n", label, name, ramp_last_error());
                check_failures++;
                continue;
            }
            if (job1[mi][ci] >= 0) {
                cjob *J1 = wait_cjob(job1[mi][ci]);
                if (J1->s != RAMP_OK ||
                    ramp_moe_kernel_create_from(R.gpu, &J1->v, J1->r, &K1) != RAMP_OK) {
                    fprintf(stderr, "%s %s: v1 of the same configuration unavailable: %s\n", label,
                            name, J1->s != RAMP_OK ? J1->err : ramp_last_error());
                    check_failures++;
                    K1 = NULL;
                }
            }
            desc.entries[0] = (ramp_select_entry){v->cfg.rows, h / v->cfg.width, 132, {0, 0, 0, 0}, 0, 0};
            int64_t ms, mt;
            GPU_OK(ramp_select_capacity(&desc, &ms, &mt));
            R.max_tiles = (int)mt;
            R.ws = 0;
            R.ws_bytes = ramp_moe_v2_ws_bytes(v, &J2->o, R.max_tiles);
            if (opts.split && !R.ws_bytes) {
                fprintf(stderr, "%s %s: a two-phase configuration asks for no workspace\n",
                        label, name);
                check_failures++;
            }
            if (R.ws_bytes) GPU_OK(ramp_gpu_alloc(R.gpu, R.ws_bytes, &R.ws));
            ramp_select_result *sel = NULL;
            GPU_OK(ramp_select_result_create(&desc, &sel));
            stats S;
            memset(&S, 0, sizeof S);
            for (int sh = 0; sh <= NSHAPES; sh++) {
                /* the last run: skewed again, on 7 blocks striding over the tiles */
                const int shape = sh == NSHAPES ? 0 : sh;
                ramp_moe_v2_set_max_grid(K2, sh == NSHAPES ? 7 : 0);
                char lab[128];
                snprintf(lab, sizeof lab, "%s %s%s", label, moe_shape_name(shape),
                         sh == NSHAPES ? " (7 blocks)" : "");
                ramp_status rs = run_check(&R, K2, sh == NSHAPES ? NULL : K1, v, &sd[shape],
                                           &desc, sel, &S, lab);
                if (rs != RAMP_OK) {
                    fprintf(stderr, "%s %s %s: %s\n", label, name, lab, ramp_last_error());
                    check_failures++;
                    if (rs == RAMP_ERR_CUDA) {
                        ramp_select_result_free(sel);
                        ramp_moe_v2_free(K2);
                        ramp_moe_kernel_free(K1);
                        goto fail;
                    }
                }
            }
            ramp_moe_v2_set_max_grid(K2, 0);
            const ramp_resources *res = ramp_moe_v2_kernel_resources(K2);
            char v1s[48] = "(no v1)";
            if (K1) snprintf(v1s, sizeof v1s, "%.3f (%d differ)", S.worst_v1, S.v1_diffs);
            char plain[48];
            snprintf(plain, sizeof plain, "%lld/%lld (%.2f)", S.over_plain, S.elements, S.worst_plain);
            printf("  %-14s %4d %8d  %-4d %-13.3f %-9.2e %-26s %s%s\n", name, res->regs_per_thread,
                   res->smem_bytes, S.runs, S.worst_ratio, S.worst_rel, plain, v1s,
                   S.violations ? "   VIOLATIONS" : "");
            fflush(stdout);
            if (ci == 0) {
                ramp_status gs = graph_check(&R, K2, v, &sd[2], &desc, sel, label);
                if (gs != RAMP_OK) {
                    fprintf(stderr, "%s %s graph: %s\n", label, name, ramp_last_error());
                    check_failures++;
                }
            }
            total.runs += S.runs;
            total.violations += S.violations;
            total.v1_runs += S.v1_runs;
            total.v1_diffs += S.v1_diffs;
            total.over_plain += S.over_plain;
            total.elements += S.elements;
            if (S.worst_plain > total.worst_plain) total.worst_plain = S.worst_plain;
            if (S.worst_ratio > total.worst_ratio) total.worst_ratio = S.worst_ratio;
            if (S.worst_rel > total.worst_rel) total.worst_rel = S.worst_rel;
            if (S.worst_v1 > total.worst_v1) total.worst_v1 = S.worst_v1;
            nconfigs++;
            ramp_gpu_free(R.gpu, R.ws);
            R.ws = 0;
            ramp_select_result_free(sel);
            ramp_moe_v2_free(K2);
            ramp_moe_kernel_free(K1);
        }
        if (R.w13_v1 != R.w13) ramp_gpu_free(R.gpu, R.w13_v1);
        if (R.w2_v1 != R.w2) ramp_gpu_free(R.gpu, R.w2_v1);
        ramp_gpu_free(R.gpu, R.w13); ramp_gpu_free(R.gpu, R.w2);
        ramp_gpu_free(R.gpu, R.w13s); ramp_gpu_free(R.gpu, R.w2s);
        ramp_gpu_free(R.gpu, R.sorted); ramp_gpu_free(R.gpu, R.texp);
        ramp_gpu_free(R.gpu, R.ntiles); ramp_gpu_free(R.gpu, R.out);
        free(R.host_out); free(R.host_v1); free(R.base);
        for (int s = 0; s < NSHAPES; s++) {
            ramp_gpu_free(R.gpu, sd[s].x); ramp_gpu_free(R.gpu, sd[s].xs); ramp_gpu_free(R.gpu, sd[s].tw);
            free(sd[s].ref); free(sd[s].bound); free(sd[s].bound_plain);
            moe_batch_free(&sd[s].b);
        }
        moe_weights_free(&W);
    }
    for (int t = 0; t < ncomp; t++) pthread_join(cth[t], NULL);
    printf("test_gpu_moe_v2 total (%.1f s): %d configs, %d runs, %d violations, max err/bound "
           "%.3f, max rel %.2e; over the plain (v1) bound: %lld of %lld elements, max %.2f; "
           "v2 vs v1: %d runs, %d elements differ, max diff/tol %.3f\n",
           now_s() - t_start, nconfigs, total.runs, total.violations, total.worst_ratio,
           total.worst_rel, total.over_plain, total.elements, total.worst_plain, total.v1_runs,
           total.v1_diffs, total.worst_v1);
    for (int i = 0; i < ncjobs; i++) ramp_jit_result_free(cjobs[i].r);
    ramp_stream_destroy(R.gpu, R.st);
    ramp_gpu_close(R.gpu);
    return check_finish("test_gpu_moe_v2");
fail:
    return check_finish("test_gpu_moe_v2");
}
