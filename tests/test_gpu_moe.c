/*
 * test_gpu_moe.c - the fused MoE kernel v1 on a GPU against the CPU
 * reference (src/moe_ref.c), for every configuration of the configuration
 * space of OLMoE, Qwen3-30B, DeepSeek-V3 and Mixtral-8x22B on EP8 (GPU 0's
 * experts), in three kinds: FP8 layer with FP8 hidden states + scales, FP8
 * layer with BF16 hidden states quantized inside, and BF16 layer.
 *
 * Every configuration runs on four routings of fresh random data: skewed
 * (Zipf), half the local experts empty, one expert in every token's top-k,
 * a single token. Token slots are grouped and padded by the selection
 * kernel's CPU twin (ramp_select_cpu) for the configuration's rows. Before
 * each run the output is filled with fresh random values (the kernel adds
 * into it) and two guard rows past it with a NaN pattern; every element is
 * then checked: |out - (base + ref)| <= bound + 2^-16 (|base| + |ref|),
 * bound being the reference's per-element bound (moe_ref.h: f32 summation
 * order, and the intermediates a correct kernel may round the other way),
 * the second term the f32 additions into the base; tokens without a local
 * expert must come back bit-identical, the guard rows too. The split-K
 * counters must be zero after every launch, and a launch captured in a CUDA
 * graph must give the right result when replayed on other routings.
 *
 * Environment: RAMP_MOE_MODELS (comma list of model names, default all
 * four), RAMP_MOE_KINDS (fp8,fp8x16,bf16), RAMP_MOE_STRIDE=N (every N-th
 * configuration) or RAMP_MOE_CONFIGS (comma list of configuration names)
 * and RAMP_MOE_TOKENS (tokens per routing) for sanitizer runs,
 * RAMP_MOE_THREADS (compile and reference threads, default: online CPUs).
 * Exit 77 without a GPU.
 */
#include "check.h"
#include "moe_data.h"
#include "moe_gpu.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define NSHAPES 4

typedef struct {
    const char *name;
    int tokens;
} model_case;
static const model_case MODELS[] = {
    {"olmoe", 64}, {"qwen3-30b", 64}, {"deepseek-v3", 48}, {"mixtral-8x22b", 40}};

/* ---------------------------------------------------------------- compiles */

typedef struct {
    ramp_moe_variant v; /* persistent = 0: plain and persistent share it */
    ramp_jit_result *r;
    ramp_status s;
    char err[1024];
    int done;
} cjob;

static cjob *cjobs;
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
        ramp_status s = ramp_moe_v1_compile(&cjobs[i].v, &r);
        pthread_mutex_lock(&cmu);
        cjobs[i].r = r;
        cjobs[i].s = s;
        if (s != RAMP_OK) snprintf(cjobs[i].err, sizeof cjobs[i].err, "%s", ramp_last_error());
        cjobs[i].done = 1;
        pthread_cond_broadcast(&ccv);
        pthread_mutex_unlock(&cmu);
    }
}

static int same_binary(const ramp_moe_variant *a, const ramp_moe_variant *b) {
    return a->cfg.rows == b->cfg.rows && a->cfg.width == b->cfg.width &&
           a->cfg.stages == b->cfg.stages && a->cfg.grouped == b->cfg.grouped &&
           a->cfg.splitk == b->cfg.splitk && a->geom.hidden == b->geom.hidden &&
           a->geom.inter == b->geom.inter && a->geom.topk == b->geom.topk &&
           a->geom.experts == b->geom.experts && a->geom.bf16 == b->geom.bf16 &&
           a->xbf16 == b->xbf16;
}

static int add_cjob(const ramp_moe_variant *v) {
    for (int i = ncjobs - 1; i >= 0 && i >= ncjobs - 2000; i--)
        if (same_binary(&cjobs[i].v, v)) return i;
    cjobs[ncjobs].v = *v;
    cjobs[ncjobs].v.cfg.persistent = 0;
    return ncjobs++;
}

static cjob *wait_cjob(int i) {
    pthread_mutex_lock(&cmu);
    while (!cjobs[i].done) pthread_cond_wait(&ccv, &cmu);
    pthread_mutex_unlock(&cmu);
    return &cjobs[i];
}

/* ------------------------------------------------------------- test state */

typedef struct {
    ramp_gpu *gpu;
    ramp_stream st;
    int threads;
} ctx;

typedef struct { /* one routing, on host and device */
    moe_batch b;
    float *ref_fp8, *bound_fp8, *ref_bf16, *bound_bf16; /* [M, d] */
    ramp_devptr x, xs, xb, tw;
} shape_data;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

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
    int runs, configs, violations;
    double worst_ratio, worst_rel;
} stats;

/* Runs one launch (direct or graph replay) and checks it. */
typedef struct {
    ctx *c;
    ramp_moe_kernel *k;
    const ramp_moe_variant *v;
    int M, d, E, k_top;
    ramp_devptr sorted, texp, ntiles, out, ws, cnt, w13, w13s, w2, w2s;
    int max_tiles;
    size_t cnt_bytes;
    ramp_rng *rng;
    float *host_out, *base;
} runner;

static ramp_status run_check(runner *R, shape_data *sd, ramp_select_desc *desc,
                             ramp_select_result *sel, stats *S,
                             const char *label) {
    const ramp_moe_variant *v = R->v;
    const int M = sd->b.tokens, d = R->d;
    RAMP_TRY(ramp_select_cpu(desc, M, sd->b.ids, sel));
    int tiles = sel->meta[RAMP_SELECT_META_TILES];
    RAMP_CHECK(tiles <= R->max_tiles, RAMP_ERR_INTERNAL, "tiles %d > capacity %d", tiles,
               R->max_tiles);
    RAMP_TRY(ramp_gpu_upload(R->c->gpu, R->sorted, sel->sorted_ids,
                             (size_t)(tiles > 0 ? tiles : 1) * v->cfg.rows * 4));
    RAMP_TRY(ramp_gpu_upload(R->c->gpu, R->texp, sel->tile_expert, (size_t)(tiles > 0 ? tiles : 1) * 4));
    int32_t nt = tiles;
    RAMP_TRY(ramp_gpu_upload(R->c->gpu, R->ntiles, &nt, 4));
    /* poison: fresh random base values, guard rows of NaN pattern */
    const float *ref = v->geom.bf16 ? sd->ref_bf16 : sd->ref_fp8;
    const float *bnd = v->geom.bf16 ? sd->bound_bf16 : sd->bound_fp8;
    double rms = 0;
    for (size_t i = 0; i < (size_t)M * d; i++) rms += (double)ref[i] * ref[i];
    rms = sqrt(rms / ((double)M * d)) + 1e-3;
    for (size_t i = 0; i < (size_t)M * d; i++) R->base[i] = (float)(ramp_rng_normal(R->rng) * rms);
    uint32_t guard = 0x7FC0DEADu;
    for (size_t i = (size_t)M * d; i < (size_t)(M + 2) * d; i++) memcpy(&R->base[i], &guard, 4);
    RAMP_TRY(ramp_gpu_upload(R->c->gpu, R->out, R->base, (size_t)(M + 2) * d * 4));
    ramp_moe_params p;
    memset(&p, 0, sizeof p);
    p.x = v->xbf16 || v->geom.bf16 ? sd->xb : sd->x;
    p.x_scale = v->xbf16 || v->geom.bf16 ? 0 : sd->xs;
    p.w13 = R->w13; p.w13_scale = R->w13s; p.w2 = R->w2; p.w2_scale = R->w2s;
    p.topk_weights = sd->tw;
    p.sorted_ids = R->sorted; p.tile_expert = R->texp; p.num_tiles = R->ntiles;
    p.out = R->out; p.ws = R->ws; p.ws_count = R->cnt;
    p.num_tokens = M;
    p.max_tiles = R->max_tiles;
    RAMP_TRY(ramp_moe_kernel_launch(R->k, &p, R->c->st));
    RAMP_TRY(ramp_stream_sync(R->c->gpu, R->c->st));
    RAMP_TRY(ramp_gpu_download(R->c->gpu, R->host_out, R->out, (size_t)(M + 2) * d * 4));
    int viol = 0;
    double worst = 0, num = 0, den = 0;
    for (size_t i = 0; i < (size_t)M * d; i++) {
        double expv = (double)R->base[i] + ref[i];
        double tol = bnd[i] + (fabs(R->base[i]) + fabs(ref[i])) / 65536.0;
        double err = fabs((double)R->host_out[i] - expv);
        if (ref[i] == 0 && bnd[i] < 1e-20) tol = 0; /* token with no local expert */
        if (!(err <= tol)) {
            if (viol < 3) {
                char name[64];
                ramp_config_name(&v->cfg, name, sizeof name);
                fprintf(stderr, "%s %s: token %zu row %zu: out %.9g expected %.9g (base %.9g + ref %.9g) tol %.3g\n",
                        label, name, i / d, i % d, R->host_out[i], expv, R->base[i], ref[i], tol);
            }
            viol++;
        }
        double r = tol > 0 ? err / tol : (err > 0 ? INFINITY : 0);
        if (r > worst || isnan(r)) worst = r;
        num += err * err;
        den += (double)ref[i] * ref[i];
    }
    for (size_t i = (size_t)M * d; i < (size_t)(M + 2) * d; i++)
        if (memcmp(&R->host_out[i], &guard, 4) != 0) {
            if (viol++ < 3) fprintf(stderr, "%s: guard row written at %zu\n", label, i);
        }
    if (v->cfg.splitk > 1) { /* counters back at zero */
        size_t n = R->cnt_bytes / 4;
        int32_t *cnt = malloc(R->cnt_bytes);
        RAMP_CHECK(cnt, RAMP_ERR_OUT_OF_MEMORY, "out of memory");
        ramp_status s = ramp_gpu_download(R->c->gpu, cnt, R->cnt, R->cnt_bytes);
        for (size_t i = 0; s == RAMP_OK && i < n; i++)
            if (cnt[i] != 0) {
                if (viol++ < 3) fprintf(stderr, "%s: split-K counter %zu = %d after the launch\n", label, i, cnt[i]);
                break;
            }
        free(cnt);
        RAMP_TRY(s);
    }
    double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    S->runs++;
    S->violations += viol;
    if (worst > S->worst_ratio) S->worst_ratio = worst;
    if (rel > S->worst_rel) S->worst_rel = rel;
    if (viol) check_failures++;
    return RAMP_OK;
}

int main(void) {
    /* a misspelt model fails here, on any machine, before the GPU check */
    const char *models_env = getenv("RAMP_MOE_MODELS");
    {
        const char *names[sizeof MODELS / sizeof MODELS[0]];
        const int n = (int)(sizeof MODELS / sizeof MODELS[0]);
        for (int i = 0; i < n; i++) names[i] = MODELS[i].name;
        if (models_env && check_list_unknown("RAMP_MOE_MODELS", models_env, names, n)) return 1;
    }
    int ngpu = 0;
    if (ramp_gpu_count(&ngpu) != RAMP_OK || ngpu < 1) {
        printf("test_gpu_moe: no GPU (%s): skipped\n", ramp_last_error());
        return 77;
    }
    unsigned long long seed = check_seed();
    ramp_rng rng;
    ramp_rng_seed(&rng, seed);
    ctx C;
    memset(&C, 0, sizeof C);
    const char *t_env = getenv("RAMP_MOE_THREADS");
    C.threads = t_env && atoi(t_env) > 0 ? atoi(t_env) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (C.threads < 1) C.threads = 1;
    if (C.threads > 64) C.threads = 64;
    const char *kinds_env = getenv("RAMP_MOE_KINDS");
    const char *stride_env = getenv("RAMP_MOE_STRIDE");
    int stride = stride_env && atoi(stride_env) > 0 ? atoi(stride_env) : 1;
    const char *configs_env = getenv("RAMP_MOE_CONFIGS");
    const char *tokens_env = getenv("RAMP_MOE_TOKENS");
    int tokens_override = tokens_env && atoi(tokens_env) > 0 ? atoi(tokens_env) : 0;
    int kinds_on[3] = {1, 1, 1}; /* fp8, fp8x16, bf16 */
    if (kinds_env) {
        char buf[256];
        snprintf(buf, sizeof buf, ",%s,", kinds_env);
        kinds_on[0] = strstr(buf, ",fp8,") != NULL;
        kinds_on[1] = strstr(buf, ",fp8x16,") != NULL;
        kinds_on[2] = strstr(buf, ",bf16,") != NULL;
    }
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    GPU_OK(ramp_gpu_open(0, &C.gpu));
    GPU_OK(ramp_stream_create(C.gpu, &C.st));
    ramp_gpu_info info;
    GPU_OK(ramp_gpu_get_info(C.gpu, &info));
    printf("GPU %s, %d SMs; %d threads; seed %llu\n", info.limits.name, info.limits.sms, C.threads, seed);

    /* every variant to compile, all models, in test order */
    int nm = (int)(sizeof MODELS / sizeof MODELS[0]);
    ramp_geometry geoms[8];
    int model_on[8] = {0}, global_e[8];
    cjobs = calloc(20000, sizeof *cjobs);
    int **var_job = calloc((size_t)nm * 3, sizeof *var_job);
    ramp_config **spaces = calloc((size_t)nm * 3, sizeof *spaces);
    int *space_n = calloc((size_t)nm * 3, sizeof *space_n);
    if (!cjobs || !var_job || !spaces || !space_n) return 1;
    for (int mi = 0; mi < nm; mi++) {
        ramp_model m;
        ramp_layout L;
        if (models_env && !check_listed(models_env, MODELS[mi].name)) continue;
        GPU_OK(ramp_model_lookup(MODELS[mi].name, &m));
        GPU_OK(ramp_layout_parse("EP8", &L));
        GPU_OK(ramp_geometry_for(&m, L, &geoms[mi]));
        global_e[mi] = m.experts;
        model_on[mi] = 1;
        for (int kind = 0; kind < 3; kind++) {
            if (!kinds_on[kind]) continue;
            ramp_geometry g = geoms[mi];
            g.bf16 = kind == 2;
            ramp_config *c;
            int n;
            GPU_OK(ramp_config_space(&g, &lim, &c, &n));
            int keep = 0;
            for (int i = 0; i < n; i += stride) {
                if (configs_env) {
                    char name[64], list[1024];
                    ramp_config_name(&c[i], name, sizeof name);
                    snprintf(list, sizeof list, ",%s,", configs_env);
                    char key[80];
                    snprintf(key, sizeof key, ",%s,", name);
                    if (!strstr(list, key)) continue;
                }
                c[keep++] = c[i];
            }
            spaces[mi * 3 + kind] = c;
            space_n[mi * 3 + kind] = keep;
            var_job[mi * 3 + kind] = calloc((size_t)keep + 1, sizeof(int));
            for (int i = 0; i < keep; i++) {
                ramp_moe_variant v = {c[i], g, kind == 1};
                var_job[mi * 3 + kind][i] = add_cjob(&v);
            }
        }
    }
    printf("%d kernels to compile\n", ncjobs);
    double t_start = now_s();
    int ncomp = C.threads;
    pthread_t cth[64];
    for (int t = 0; t < ncomp; t++) pthread_create(&cth[t], NULL, compile_worker, NULL);

    stats total[3];
    memset(total, 0, sizeof total);
    for (int mi = 0; mi < nm; mi++) {
        if (!model_on[mi]) continue;
        ramp_geometry g = geoms[mi];
        const int M = tokens_override ? tokens_override : MODELS[mi].tokens, d = g.hidden, h = g.inter, E = g.experts, k = g.topk;
        shape_data sd[NSHAPES];
        memset(sd, 0, sizeof sd);
        moe_weights W8, W16;
        memset(&W8, 0, sizeof W8);
        memset(&W16, 0, sizeof W16);
        double t0 = now_s();
        int need8 = kinds_on[0] || kinds_on[1], need16 = kinds_on[2];
        if ((need8 && moe_weights_make_fast(&rng, E, k, h, d, 0, &W8)) ||
            (need16 && moe_weights_make_fast(&rng, E, k, h, d, 1, &W16))) {
            fprintf(stderr, "out of host memory for %s\n", MODELS[mi].name);
            return 1;
        }
        ramp_moe_layer L8 = moe_layer_of(&W8), L16 = moe_layer_of(&W16);
        for (int s = 0; s < NSHAPES; s++) {
            if (moe_batch_make(&rng, s, M, k, global_e[mi], E, d, &sd[s].b)) return 1;
            size_t n = (size_t)sd[s].b.tokens * d;
            if (need8) {
                sd[s].ref_fp8 = malloc(n * 4);
                sd[s].bound_fp8 = malloc(n * 4);
                ramp_moe_batch B = moe_batch_fp8(&sd[s].b);
                GPU_OK(ramp_moe_reference(&L8, &B, C.threads, sd[s].ref_fp8, sd[s].bound_fp8));
            }
            if (need16) {
                sd[s].ref_bf16 = malloc(n * 4);
                sd[s].bound_bf16 = malloc(n * 4);
                ramp_moe_batch B = moe_batch_bf16(&sd[s].b);
                GPU_OK(ramp_moe_reference(&L16, &B, C.threads, sd[s].ref_bf16, sd[s].bound_bf16));
            }
        }
        printf("%s: E=%d k=%d h=%d d=%d, %d tokens; data and reference in %.1f s\n",
               MODELS[mi].name, E, k, h, d, M, now_s() - t0);
        /* device buffers */
        runner R;
        memset(&R, 0, sizeof R);
        R.c = &C; R.d = d; R.E = E; R.k_top = k; R.rng = &rng;
        size_t e8 = (size_t)E * 3 * h * d;
        size_t s13 = (size_t)E * (2 * h / 128) * (d / 128) * 4, s2 = (size_t)E * (d / 128) * (h / 128) * 4;
        ramp_devptr w8a = 0, w8b = 0, w16a = 0, w16b = 0, ws13 = 0, ws2 = 0;
        if (need8) {
            GPU_OK(ramp_gpu_alloc(C.gpu, e8 / 3 * 2, &w8a));
            GPU_OK(ramp_gpu_alloc(C.gpu, e8 / 3, &w8b));
            GPU_OK(ramp_gpu_upload(C.gpu, w8a, W8.w13, e8 / 3 * 2));
            GPU_OK(ramp_gpu_upload(C.gpu, w8b, W8.w2, e8 / 3));
        }
        if (need16) {
            GPU_OK(ramp_gpu_alloc(C.gpu, e8 / 3 * 4, &w16a));
            GPU_OK(ramp_gpu_alloc(C.gpu, e8 / 3 * 2, &w16b));
            GPU_OK(ramp_gpu_upload(C.gpu, w16a, W16.w13, e8 / 3 * 4));
            GPU_OK(ramp_gpu_upload(C.gpu, w16b, W16.w2, e8 / 3 * 2));
        }
        GPU_OK(ramp_gpu_alloc(C.gpu, s13, &ws13));
        GPU_OK(ramp_gpu_alloc(C.gpu, s2, &ws2));
        if (need8) {
            GPU_OK(ramp_gpu_upload(C.gpu, ws13, W8.w13_scale, s13));
            GPU_OK(ramp_gpu_upload(C.gpu, ws2, W8.w2_scale, s2));
        }
        for (int s = 0; s < NSHAPES; s++) {
            size_t n = (size_t)sd[s].b.tokens * d;
            GPU_OK(ramp_gpu_alloc(C.gpu, n + 16, &sd[s].x));
            GPU_OK(ramp_gpu_alloc(C.gpu, n / 128 * 4 + 16, &sd[s].xs));
            GPU_OK(ramp_gpu_alloc(C.gpu, n * 2 + 16, &sd[s].xb));
            GPU_OK(ramp_gpu_alloc(C.gpu, (size_t)sd[s].b.tokens * k * 4 + 16, &sd[s].tw));
            GPU_OK(ramp_gpu_upload(C.gpu, sd[s].x, sd[s].b.x, n));
            GPU_OK(ramp_gpu_upload(C.gpu, sd[s].xs, sd[s].b.x_scale, n / 128 * 4));
            GPU_OK(ramp_gpu_upload(C.gpu, sd[s].xb, sd[s].b.x_bf16, n * 2));
            GPU_OK(ramp_gpu_upload(C.gpu, sd[s].tw, sd[s].b.weights, (size_t)sd[s].b.tokens * k * 4));
        }
        /* selection capacity over every rows value */
        ramp_select_desc desc;
        memset(&desc, 0, sizeof desc);
        desc.experts = global_e[mi];
        desc.topk = k;
        desc.max_tokens = M;
        desc.local_experts = E;
        desc.first_expert = 0;
        desc.nentries = 1;
        desc.group_only = 1;
        int64_t cap_slots = 0, cap_tiles = 0;
        const int rows_all[] = {2, 4, 6, 8, 12, 16, 24, 32, 48, 64};
        for (int i = 0; i < 10; i++) {
            desc.entries[0] = (ramp_select_entry){rows_all[i], h / 128, 132, {0, 0, 0, 0}, 0, 0};
            int64_t ms, mt;
            GPU_OK(ramp_select_capacity(&desc, &ms, &mt));
            if (ms > cap_slots) cap_slots = ms;
            if (mt > cap_tiles) cap_tiles = mt;
        }
        GPU_OK(ramp_gpu_alloc(C.gpu, (size_t)cap_slots * 4 + 64, &R.sorted));
        GPU_OK(ramp_gpu_alloc(C.gpu, (size_t)cap_tiles * 4 + 64, &R.texp));
        GPU_OK(ramp_gpu_alloc(C.gpu, 64, &R.ntiles));
        GPU_OK(ramp_gpu_alloc(C.gpu, (size_t)(M + 2) * d * 4, &R.out));
        R.host_out = malloc((size_t)(M + 2) * d * 4);
        R.base = malloc((size_t)(M + 2) * d * 4);
        size_t ws_cap = 0, cnt_cap = 0;

        for (int kind = 0; kind < 3; kind++) {
            if (!kinds_on[kind]) continue;
            const char *kname[] = {"fp8", "fp8/bf16-in", "bf16"};
            stats S;
            memset(&S, 0, sizeof S);
            double tk = now_s();
            R.w13 = kind == 2 ? w16a : w8a;
            R.w2 = kind == 2 ? w16b : w8b;
            R.w13s = kind == 2 ? 0 : ws13;
            R.w2s = kind == 2 ? 0 : ws2;
            ramp_config *space = spaces[mi * 3 + kind];
            int nsp = space_n[mi * 3 + kind];
            for (int ci = 0; ci < nsp; ci++) {
                ramp_geometry gk = g;
                gk.bf16 = kind == 2;
                ramp_moe_variant v = {space[ci], gk, kind == 1};
                char name[64], label[128];
                ramp_config_name(&v.cfg, name, sizeof name);
                snprintf(label, sizeof label, "%s %s", MODELS[mi].name, kname[kind]);
                cjob *J = wait_cjob(var_job[mi * 3 + kind][ci]);
                if (J->s != RAMP_OK) {
                    fprintf(stderr, "%s %s: compile failed: %s\n", label, name, J->err);
                    check_failures++;
                    continue;
                }
                ramp_moe_kernel *K = NULL;
                ramp_status s = ramp_moe_kernel_create_from(C.gpu, &v, J->r, &K);
                if (s != RAMP_OK) {
                    fprintf(stderr, "%s %s: %s\n", label, name, ramp_last_error());
                    check_failures++;
                    continue;
                }
                const ramp_resources *res = ramp_moe_kernel_resources(K);
                if (!res->valid || res->regs_per_thread > 255) {
                    fprintf(stderr, "%s %s: resources invalid: %s\n", label, name, res->why);
                    check_failures++;
                }
                desc.entries[0] = (ramp_select_entry){v.cfg.rows, h / v.cfg.width * v.cfg.splitk, 132, {0, 0, 0, 0}, 0, 0};
                int64_t ms, mt;
                GPU_OK(ramp_select_capacity(&desc, &ms, &mt));
                R.max_tiles = (int)mt;
                size_t wsb = ramp_moe_v1_ws_bytes(&v, R.max_tiles);
                size_t cb = ramp_moe_v1_counter_bytes(&v, R.max_tiles);
                if (wsb > ws_cap) {
                    ramp_gpu_free(C.gpu, R.ws);
                    R.ws = 0;
                    GPU_OK(ramp_gpu_alloc(C.gpu, wsb, &R.ws));
                    ws_cap = wsb;
                }
                if (cb > cnt_cap) {
                    ramp_gpu_free(C.gpu, R.cnt);
                    R.cnt = 0;
                    GPU_OK(ramp_gpu_alloc(C.gpu, cb, &R.cnt));
                    GPU_OK(ramp_gpu_fill32_async(C.gpu, R.cnt, 0, cb / 4, C.st));
                    GPU_OK(ramp_stream_sync(C.gpu, C.st));
                    cnt_cap = cb;
                }
                R.cnt_bytes = cb;
                R.k = K;
                R.v = &v;
                ramp_select_result *sel = NULL;
                GPU_OK(ramp_select_result_create(&desc, &sel));
                for (int sh = 0; sh < NSHAPES; sh++) {
                    ramp_status rs = run_check(&R, &sd[sh], &desc, sel, &S, label);
                    if (rs != RAMP_OK) {
                        fprintf(stderr, "%s %s %s: %s\n", label, name, moe_shape_name(sh), ramp_last_error());
                        check_failures++;
                        if (rs == RAMP_ERR_CUDA) { ramp_select_result_free(sel); ramp_moe_kernel_free(K); goto fail; }
                    }
                }
                /* graph capture once per kind: capture on routing 0, replay
                 * after the selection outputs changed to routing 2 */
                if (ci == 0 || (v.cfg.splitk > 1 && ci == nsp - 1)) {
                    ramp_moe_params p;
                    memset(&p, 0, sizeof p);
                    p.x = kind ? sd[2].xb : sd[2].x;
                    p.x_scale = kind ? 0 : sd[2].xs;
                    p.w13 = R.w13; p.w13_scale = R.w13s; p.w2 = R.w2; p.w2_scale = R.w2s;
                    p.topk_weights = sd[2].tw;
                    p.sorted_ids = R.sorted; p.tile_expert = R.texp; p.num_tiles = R.ntiles;
                    p.out = R.out; p.ws = R.ws; p.ws_count = R.cnt;
                    p.num_tokens = sd[2].b.tokens;
                    p.max_tiles = R.max_tiles;
                    ramp_graph *gr = NULL;
                    int32_t zero = 0;
                    GPU_OK(ramp_gpu_upload(C.gpu, R.ntiles, &zero, 4));
                    GPU_OK(ramp_graph_capture_begin(C.gpu, C.st));
                    ramp_status cs = ramp_moe_kernel_launch(K, &p, C.st);
                    ramp_status ce = ramp_graph_capture_end(C.gpu, C.st, &gr);
                    GPU_OK(cs);
                    GPU_OK(ce);
                    /* run_check uploads routing 2's selection and base, then
                     * launches directly; replaying the graph over the same
                     * inputs must give the same check result: do both */
                    ramp_status rs = ramp_select_cpu(&desc, sd[2].b.tokens, sd[2].b.ids, sel);
                    if (rs == RAMP_OK) {
                        int tiles = sel->meta[RAMP_SELECT_META_TILES];
                        GPU_OK(ramp_gpu_upload(C.gpu, R.sorted, sel->sorted_ids, (size_t)(tiles > 0 ? tiles : 1) * v.cfg.rows * 4));
                        GPU_OK(ramp_gpu_upload(C.gpu, R.texp, sel->tile_expert, (size_t)(tiles > 0 ? tiles : 1) * 4));
                        int32_t ntl = tiles;
                        GPU_OK(ramp_gpu_upload(C.gpu, R.ntiles, &ntl, 4));
                        size_t n = (size_t)sd[2].b.tokens * d;
                        for (size_t i = 0; i < n; i++) R.base[i] = (float)ramp_rng_normal(&rng);
                        GPU_OK(ramp_gpu_upload(C.gpu, R.out, R.base, n * 4));
                        GPU_OK(ramp_graph_replay(gr, C.st));
                        GPU_OK(ramp_graph_replay(gr, C.st)); /* twice: adds twice */
                        GPU_OK(ramp_stream_sync(C.gpu, C.st));
                        GPU_OK(ramp_gpu_download(C.gpu, R.host_out, R.out, n * 4));
                        const float *ref = kind == 2 ? sd[2].ref_bf16 : sd[2].ref_fp8;
                        const float *bnd = kind == 2 ? sd[2].bound_bf16 : sd[2].bound_fp8;
                        int gv = 0;
                        for (size_t i = 0; i < n; i++) {
                            double expv = (double)R.base[i] + 2.0 * ref[i];
                            double tol = 2 * bnd[i] + (fabs(R.base[i]) + 2 * fabs(ref[i])) / 65536.0;
                            if (!(fabs(R.host_out[i] - expv) <= tol) && gv++ < 3)
                                fprintf(stderr, "%s %s graph replay: element %zu: %g vs %g\n", label, name, i, R.host_out[i], expv);
                        }
                        if (gv) check_failures++;
                        S.runs++;
                    }
                    ramp_graph_free(gr);
                }
                ramp_select_result_free(sel);
                ramp_moe_kernel_free(K);
                S.configs++;
            }
            printf("  %-12s %4d configurations, %5d runs: violations %d, max err/bound %.3f, "
                   "max |out-ref|/|ref| %.2e (%.1f s)\n",
                   kname[kind], S.configs, S.runs, S.violations, S.worst_ratio, S.worst_rel,
                   now_s() - tk);
            fflush(stdout);
            total[kind].configs += S.configs;
            total[kind].runs += S.runs;
            total[kind].violations += S.violations;
            if (S.worst_ratio > total[kind].worst_ratio) total[kind].worst_ratio = S.worst_ratio;
            if (S.worst_rel > total[kind].worst_rel) total[kind].worst_rel = S.worst_rel;
        }
        ramp_gpu_free(C.gpu, w8a); ramp_gpu_free(C.gpu, w8b);
        ramp_gpu_free(C.gpu, w16a); ramp_gpu_free(C.gpu, w16b);
        ramp_gpu_free(C.gpu, ws13); ramp_gpu_free(C.gpu, ws2);
        ramp_gpu_free(C.gpu, R.sorted); ramp_gpu_free(C.gpu, R.texp); ramp_gpu_free(C.gpu, R.ntiles);
        ramp_gpu_free(C.gpu, R.out); ramp_gpu_free(C.gpu, R.ws); ramp_gpu_free(C.gpu, R.cnt);
        free(R.host_out); free(R.base);
        for (int s = 0; s < NSHAPES; s++) {
            ramp_gpu_free(C.gpu, sd[s].x); ramp_gpu_free(C.gpu, sd[s].xs);
            ramp_gpu_free(C.gpu, sd[s].xb); ramp_gpu_free(C.gpu, sd[s].tw);
            free(sd[s].ref_fp8); free(sd[s].bound_fp8); free(sd[s].ref_bf16); free(sd[s].bound_bf16);
            moe_batch_free(&sd[s].b);
        }
        moe_weights_free(&W8);
        moe_weights_free(&W16);
    }
    for (int t = 0; t < ncomp; t++) pthread_join(cth[t], NULL);
    printf("total (%.1f s):", now_s() - t_start);
    const char *kname[] = {"fp8", "fp8/bf16-in", "bf16"};
    for (int kind = 0; kind < 3; kind++)
        if (kinds_on[kind])
            printf(" %s %d configs %d runs %d violations, max err/bound %.3f, max rel %.2e;",
                   kname[kind], total[kind].configs, total[kind].runs, total[kind].violations,
                   total[kind].worst_ratio, total[kind].worst_rel);
    printf("\n");
    for (int i = 0; i < ncjobs; i++) ramp_jit_result_free(cjobs[i].r);
    ramp_stream_destroy(C.gpu, C.st);
    ramp_gpu_close(C.gpu);
    return check_finish("test_gpu_moe");
fail:
    return check_finish("test_gpu_moe");
}
