/*
 * test_gpu_layer.c - the polymorphic kernel and the MoE layer on a GPU,
 * against the CPU reference (src/moe_ref.c) and the selection kernel's CPU
 * twin (src/select_cpu.c). Qwen3-30B EP8, GPU 0's 16 experts.
 *
 * 1. Every entry of a six-entry polymorphic kernel (128- and 256-thread
 *    entries, plain, persistent with grouped order, split-K), forced by
 *    writing its index into the choice buffer, on four routings (skewed,
 *    half the experts empty, one expert in every top-k, a single token), in
 *    three kinds (FP8, FP8 with BF16 input, BF16). Tokens are grouped for
 *    the entry's rows by the CPU twin.
 * 2. A layer made from a plan (Equation 3; then, on a quarter as many
 *    routings, a five-term Equation 3 + pairs plan), captured ONCE in a CUDA graph (selection +
 *    polymorphic kernel, token count read from device memory), replayed on
 *    RAMP_LAYER_ROUTINGS (default 1000) routings of fresh random ids,
 *    weights, hidden states and sizes, some with -1 and out-of-range ids.
 *    After each replay: the selection's meta (chosen entry, tiles, local
 *    pairs, bad ids) and grouped slots equal the CPU twin's, and every
 *    output element is within the reference's bound. The plan's
 *    coefficients make small loads pick small tiles and large loads large
 *    ones, and the test requires that at least three entries were chosen.
 * 3. Bad input: a plan that does not match the weights, the precision, the
 *    expert count or the layer's size fails at creation; a NULL stream or
 *    too many tokens fails before any launch.
 * 2b. The layer run twice in one captured graph on two routings adding into
 *    one output, its selection a programmatic dependent of the kernel
 *    before it (ramp_layer_desc.select_pdl): the second selection must not
 *    overwrite the grouped slots while the first run's kernel reads them.
 * 4. (kernel v2) Size classes (ramp_layer_desc.one_menu 0) on a GPU
 *    holding one expert, FP8 and (without RED4) BF16, and holding 16 (FP8;
 *    classes searched over every count vector): direct runs and
 *    graphs captured for a batch size through the smallest class covering
 *    it, against the twin restricted to the class, the whole menu's choice
 *    and the reference; a graph with the count on the device through the
 *    whole menu (test_size_classes).
 * Outputs are poisoned before each run (fresh random base values, which the
 * kernel adds into, and NaN-pattern guard rows past the batch).
 * Environment (for compute-sanitizer runs): RAMP_LAYER_ROUTINGS (replays in
 * part 2), RAMP_LAYER_KINDS (comma list of fp8,fp8x16,bf16 for parts 1 and 4),
 * RAMP_LAYER_SHAPES (1-4: the first routings of part 1), RAMP_LAYER_ENTRIES
 * (comma list of menu indices forced in part 1; default all six).
 *
 * RAMP_LAYER_KERNEL=v2: the same with the Hopper kernel v2's polymorphic
 * kernel (kernels/moe_poly_v2.cuh; ramp_layer_desc.kernel): a menu of six
 * v2 entries (N = 8 .. 64, both widths, 2-4 stages, one split-K over a
 * cluster of two CTAs), FP8 and BF16 (v2 runs
 * no BF16 hidden states into an FP8 layer, and BF16 without RED4), each
 * entry forced on every routing both with the default grid and
 * with 7 blocks (every block then runs several tiles through its ring), the
 * captured-graph replays, and, in part 3, the refusals of menus v2 cannot
 * run. Against the tensor-core bound (ramp_moe_reference_tc, as
 * test_gpu_moe_v2.c: the FP8 tensor core's accumulator is not exact f32).
 * RAMP_LAYER_RED4=1 (with v2): W2 uploaded in the float4-output row order
 * (ramp_w2_to_red4), the polymorphic kernel and the layer told so
 * (ramp_poly_desc.red4, ramp_layer_desc.w2_red4); the CPU reference keeps
 * the row-major W2, so every check above holds unchanged.
 * RAMP_LAYER_UNITS=1 (with v2): both weight tensors uploaded in stage units
 * (ramp_weights_to_units), the polymorphic kernel and the layer told so
 * (ramp_poly_desc.units, ramp_layer_desc.weight_units); the CPU reference
 * keeps the row-major weights, so every check holds unchanged.
 * RAMP_LAYER_L2PF=MB (with v2): the polymorphic kernel prefetches the
 * weights' first MB into L2 before its griddepcontrol.wait
 * (ramp_layer_desc.l2_prefetch_mb); a hint, so every check holds unchanged.
 * RAMP_LAYER_BF16_PIPE=1 (with v2): the BF16 kind's wide entries keep one
 * stage's wgmmas in flight (ramp_layer_desc.bf16_pipe); every check holds.
 * RAMP_LAYER_DET=1 (with v2 and a RAMP_LAYER_MENU of two-phase entries):
 * deterministic output (ramp_layer_desc.deterministic, ramp_poly_desc.det):
 * phase 2 stores per-slot rows, poisoned with NaN before every run, and
 * the combining kernel adds them; every forced run and every replay runs
 * twice from the same base and the two outputs must be the same bits, and
 * each within the reference's bound as always.
 * RAMP_LAYER_POLY_SPLIT=1|2 (with v2 and a RAMP_LAYER_MENU of fused and
 * two-phase entries): the polymorphic kernel split into a chain of kernels
 * (ramp_poly_desc.split, ramp_layer_desc.poly_split: phase 1 first, then
 * fused entries and phase 2; or fused, phase 1, phase 2; 3: by cluster size;
 * 4: by tile width; 5: by entry, the captured graph's switch node running
 * the chosen entry's kernels, every entry's kernels in turn outside it);
 * every check holds.
 * RAMP_LAYER_SERIAL=0..3: the layer's launch mode (ramp_layer_desc.
 * serial_launch; 3: both kernels of a two-phase menu by programmatic
 * dependent launch, so that phase 2's blocks run beside phase 1's tail and
 * wait for it inside the kernel, session 25); every check holds.
 * RAMP_LAYER_MENU=a,b,c,d,e,f: six configurations replacing the menu, e.g.
 * v2's wide tiles, fused and two-phase (r128.w256.s3.ph2: the polymorphic
 * kernel's second launch runs their phase 2; their workspace is poisoned
 * with NaNs before every forced run of part 1).
 * Exit 77 without a GPU.
 */
#include "check.h"
#include "moe_data.h"
#include "moe_poly.h"
#include "moe_v2.h"
#include "select_cpu.h"

#include <unistd.h>

#define E_ALL 128
#define E_LOC 16
#define TOPK 8
#define INTER 768
#define HIDDEN 2048

static const char *const MENU_V1[] = {"r4.w128.s4",          "r8.w256.s3",
                                      "r16.w256.s4.persist", "r32.w256.s2",
                                      "r64.w128.s3.persist.grp", "r8.w256.s2.k2"};
/* entry 5 is a split-K one (a cluster of two CTAs per tile), so the whole
 * polymorphic kernel is launched in clusters of two and every entry runs so */
static const char *const MENU_V2[] = {"r4.w128.s4",  "r8.w256.s3", "r16.w256.s4",
                                      "r32.w256.s2", "r64.w128.s3", "r16.w128.s4.k2"};
#define NMENU 6
/* RAMP_LAYER_KERNEL: which polymorphic kernel every part runs */
static int g_kernel = RAMP_KERNEL_V1;
static const char *const *MENU = MENU_V1;
static int g_entries[NMENU] = {1, 1, 1, 1, 1, 1}; /* RAMP_LAYER_ENTRIES */
static int g_nentries = NMENU;
static int g_red4; /* RAMP_LAYER_RED4 */
static int g_units; /* RAMP_LAYER_UNITS */
static int g_l2pf; /* RAMP_LAYER_L2PF: MB prefetched into L2 under the selection (v2) */
static int g_bf16_pipe; /* RAMP_LAYER_BF16_PIPE: BF16 wide entries pipelined (v2, BF16 kinds) */
static int g_det; /* RAMP_LAYER_DET: deterministic output (v2, two-phase menus) */
static int g_split; /* RAMP_LAYER_POLY_SPLIT: the polymorphic kernel as a chain (v2) */
static int g_serial; /* RAMP_LAYER_SERIAL: ramp_layer_desc.serial_launch (0..3) */
static char g_menu_text[NMENU][48]; /* RAMP_LAYER_MENU */
static const char *g_menu[NMENU];

/* The CPU reference; for v2 with the tensor core's accumulator bound. */
static ramp_status reference(const ramp_moe_layer *L, const ramp_moe_batch *B, int threads,
                             float *ref, float *bnd) {
    return ramp_moe_reference_tc(L, B, threads, g_kernel == RAMP_KERNEL_V2, ref, bnd);
}

typedef struct {
    ramp_gpu *gpu;
    ramp_stream st;
    ramp_rng rng;
    int threads;
} ctx;

typedef struct {
    moe_weights w;
    ramp_devptr w13, w13s, w2, w2s;
} dev_weights;

static ramp_status upload_weights(ctx *C, int bf16, dev_weights *D) {
    memset(D, 0, sizeof *D);
    if (moe_weights_make_fast(&C->rng, E_LOC, TOPK, INTER, HIDDEN, bf16, &D->w))
        return RAMP_ERR_OUT_OF_MEMORY;
    size_t el = bf16 ? 2 : 1;
    size_t n13 = (size_t)E_LOC * 2 * INTER * HIDDEN * el, n2 = (size_t)E_LOC * HIDDEN * INTER * el;
    size_t s13 = (size_t)E_LOC * (2 * INTER / 128) * (HIDDEN / 128) * 4;
    size_t s2 = (size_t)E_LOC * (HIDDEN / 128) * (INTER / 128) * 4;
    RAMP_TRY(ramp_gpu_alloc(C->gpu, n13, &D->w13));
    RAMP_TRY(ramp_gpu_alloc(C->gpu, n2, &D->w2));
    if (g_units) { /* both tensors in stage units; the CPU reference keeps the row-major ones */
        const int64_t sh13[3] = {E_LOC, 2 * INTER, HIDDEN}, sh2[3] = {E_LOC, HIDDEN, INTER};
        uint8_t *u13 = malloc(n13), *u2 = malloc(n2);
        ramp_status s = u13 && u2 ? ramp_weights_to_units(sh13, sh2, (int)el, D->w.w13, D->w.w2,
                                                          u13, u2)
                                  : RAMP_ERR_OUT_OF_MEMORY;
        if (s == RAMP_OK) s = ramp_gpu_upload(C->gpu, D->w13, u13, n13);
        if (s == RAMP_OK) s = ramp_gpu_upload(C->gpu, D->w2, u2, n2);
        free(u13);
        free(u2);
        RAMP_TRY(s);
    } else if (g_red4 && !bf16) {
        RAMP_TRY(ramp_gpu_upload(C->gpu, D->w13, D->w.w13, n13));
        const int64_t shape[3] = {E_LOC, HIDDEN, INTER};
        uint8_t *p2 = malloc(n2);
        if (!p2) return RAMP_ERR_OUT_OF_MEMORY;
        ramp_status s = ramp_w2_to_red4(shape, D->w.w2, p2);
        if (s == RAMP_OK) s = ramp_gpu_upload(C->gpu, D->w2, p2, n2);
        free(p2);
        RAMP_TRY(s);
    } else {
        RAMP_TRY(ramp_gpu_upload(C->gpu, D->w13, D->w.w13, n13));
        RAMP_TRY(ramp_gpu_upload(C->gpu, D->w2, D->w.w2, n2));
    }
    if (!bf16) {
        RAMP_TRY(ramp_gpu_alloc(C->gpu, s13, &D->w13s));
        RAMP_TRY(ramp_gpu_alloc(C->gpu, s2, &D->w2s));
        RAMP_TRY(ramp_gpu_upload(C->gpu, D->w13s, D->w.w13_scale, s13));
        RAMP_TRY(ramp_gpu_upload(C->gpu, D->w2s, D->w.w2_scale, s2));
    }
    return RAMP_OK;
}

static void free_weights(ctx *C, dev_weights *D) {
    ramp_gpu_free(C->gpu, D->w13);
    ramp_gpu_free(C->gpu, D->w2);
    ramp_gpu_free(C->gpu, D->w13s);
    ramp_gpu_free(C->gpu, D->w2s);
    moe_weights_free(&D->w);
}

/* Device copies of one batch: FP8 codes + scales, BF16, ids, weights. */
typedef struct {
    ramp_devptr x, xs, xb, ids, tw, out, ntok;
    int cap_tokens;
    float *base, *host;
} dev_batch;

static ramp_status batch_alloc(ctx *C, int cap, dev_batch *B) {
    memset(B, 0, sizeof *B);
    B->cap_tokens = cap;
    size_t rows = (size_t)cap + 2;
    RAMP_TRY(ramp_gpu_alloc(C->gpu, rows * HIDDEN, &B->x));
    RAMP_TRY(ramp_gpu_alloc(C->gpu, rows * (HIDDEN / 128) * 4, &B->xs));
    RAMP_TRY(ramp_gpu_alloc(C->gpu, rows * HIDDEN * 2, &B->xb));
    RAMP_TRY(ramp_gpu_alloc(C->gpu, rows * TOPK * 4, &B->ids));
    RAMP_TRY(ramp_gpu_alloc(C->gpu, rows * TOPK * 4, &B->tw));
    RAMP_TRY(ramp_gpu_alloc(C->gpu, rows * HIDDEN * 4, &B->out));
    RAMP_TRY(ramp_gpu_alloc(C->gpu, 4, &B->ntok));
    B->base = malloc(rows * HIDDEN * 4);
    B->host = malloc(rows * HIDDEN * 4);
    return B->base && B->host ? RAMP_OK : RAMP_ERR_OUT_OF_MEMORY;
}

static void batch_free(ctx *C, dev_batch *B) {
    ramp_devptr *p[] = {&B->x, &B->xs, &B->xb, &B->ids, &B->tw, &B->out, &B->ntok};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) ramp_gpu_free(C->gpu, *p[i]);
    free(B->base);
    free(B->host);
}

/* Uploads the batch's inputs and a poisoned output: random base values
 * over the batch's rows (the kernel adds into them) and NaN-pattern guard
 * values over every row past them. */
static const uint32_t GUARD = 0x7FC0DEADu;

static ramp_status batch_upload(ctx *C, const moe_batch *b, dev_batch *B, double rms) {
    const int M = b->tokens;
    for (size_t i = 0; i < (size_t)M * HIDDEN; i++)
        B->base[i] = (float)(ramp_rng_normal(&C->rng) * rms);
    for (size_t i = (size_t)M * HIDDEN; i < (size_t)(B->cap_tokens + 2) * HIDDEN; i++)
        memcpy(&B->base[i], &GUARD, 4);
    if (M > 0) {
        RAMP_TRY(ramp_gpu_upload(C->gpu, B->x, b->x, (size_t)M * HIDDEN));
        RAMP_TRY(ramp_gpu_upload(C->gpu, B->xs, b->x_scale, (size_t)M * (HIDDEN / 128) * 4));
        RAMP_TRY(ramp_gpu_upload(C->gpu, B->xb, b->x_bf16, (size_t)M * HIDDEN * 2));
        RAMP_TRY(ramp_gpu_upload(C->gpu, B->ids, b->ids, (size_t)M * TOPK * 4));
        RAMP_TRY(ramp_gpu_upload(C->gpu, B->tw, b->weights, (size_t)M * TOPK * 4));
    }
    int32_t m = M;
    RAMP_TRY(ramp_gpu_upload(C->gpu, B->ntok, &m, 4));
    return ramp_gpu_upload(C->gpu, B->out, B->base, (size_t)(B->cap_tokens + 2) * HIDDEN * 4);
}

/* Checks every element of the downloaded output; returns violations. */
static int check_output(ctx *C, const dev_batch *B, int M, const float *ref, const float *bnd,
                        const char *label, double *worst) {
    if (ramp_gpu_download(C->gpu, B->host, B->out, (size_t)(B->cap_tokens + 2) * HIDDEN * 4) !=
        RAMP_OK) {
        fprintf(stderr, "%s: download failed: %s\n", label, ramp_last_error());
        return 1;
    }
    int viol = 0;
    for (size_t i = 0; i < (size_t)M * HIDDEN; i++) {
        double expv = (double)B->base[i] + ref[i];
        double tol = bnd[i] + (fabs(B->base[i]) + fabs(ref[i])) / 65536.0;
        if (ref[i] == 0 && bnd[i] < 1e-20) tol = 0; /* no local expert: untouched */
        double err = fabs((double)B->host[i] - expv);
        double r = tol > 0 ? err / tol : (err > 0 ? INFINITY : 0);
        if (!(r <= *worst)) *worst = r;
        if (!(err <= tol) && viol++ < 3)
            fprintf(stderr, "%s: token %zu col %zu: out %.9g expected %.9g tol %.3g\n", label,
                    i / HIDDEN, i % HIDDEN, B->host[i], expv, tol);
    }
    for (size_t i = (size_t)M * HIDDEN; i < (size_t)(B->cap_tokens + 2) * HIDDEN; i++)
        if (memcmp(&B->host[i], &GUARD, 4) != 0 && viol++ < 3)
            fprintf(stderr, "%s: row %zu past the batch was written\n", label, i / HIDDEN);
    return viol;
}

static double ref_rms(const float *ref, int M) {
    double s = 0;
    for (size_t i = 0; i < (size_t)M * HIDDEN; i++) s += (double)ref[i] * ref[i];
    return M > 0 ? sqrt(s / ((double)M * HIDDEN)) + 1e-3 : 1.0;
}

static ramp_select_desc one_entry_desc(const ramp_config *c, int max_tokens) {
    ramp_select_desc d;
    memset(&d, 0, sizeof d);
    d.experts = E_ALL;
    d.topk = TOPK;
    d.max_tokens = max_tokens;
    d.local_experts = E_LOC;
    d.nentries = 1;
    d.entries[0].rows = c->rows;
    d.entries[0].slices = INTER / c->width * c->splitk;
    d.entries[0].slots = 132;
    return d;
}

/* ------------------------------------------------ 1. every entry, forced */

static void test_entries(ctx *C, int kind, int nshapes) {
    static const char *kinds[] = {"fp8", "fp8x16", "bf16"};
    const int bf16 = kind == 2, xbf16 = kind == 1;
    const int max_tokens = 64;
    ramp_poly_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.geom = (ramp_geometry){E_LOC, TOPK, INTER, HIDDEN, bf16};
    pd.xbf16 = xbf16;
    pd.kernel = g_kernel;
    pd.red4 = g_red4;
    pd.units = g_units;
    pd.l2pf_mb = g_l2pf;
    pd.bf16_pipe = bf16 ? g_bf16_pipe : 0;
    pd.det = g_det;
    pd.split = g_split;
    pd.count = NMENU;
    for (int i = 0; i < NMENU; i++) CHECK_OK(ramp_config_parse(MENU[i], &pd.cfgs[i]));
    ramp_moe_poly *K = NULL;
    ramp_devptr pws = 0; /* det: the per-slot rows phase 2 stores */
    size_t pwsb = 0;
    float *again = NULL; /* det: the first run's output, compared with the second's */
    dev_weights W;
    dev_batch B;
    ramp_devptr sorted = 0, texp = 0, ntiles = 0, choice = 0, ws = 0, cnt = 0, sched = 0;
    ramp_select_result *sel = NULL;
    float *ref = malloc((size_t)max_tokens * HIDDEN * 4), *bnd = malloc((size_t)max_tokens * HIDDEN * 4);
    ramp_status s = ref && bnd ? RAMP_OK : RAMP_ERR_OUT_OF_MEMORY;
    if (s == RAMP_OK) s = ramp_moe_poly_create(C->gpu, &pd, (int64_t)max_tokens * TOPK, &K);
    if (s == RAMP_OK) s = upload_weights(C, bf16, &W);
    if (s == RAMP_OK) s = batch_alloc(C, max_tokens, &B);
    /* capacity for every entry's grouping: the most tiles (the smallest
     * rows) and the most slots (a wide tile pads an expert to 128) */
    int64_t max_slots = 0, max_tiles = 0;
    for (int i = 0; s == RAMP_OK && i < NMENU; i++) {
        ramp_select_desc di = one_entry_desc(&pd.cfgs[i], max_tokens);
        int64_t sl = 0, ti = 0;
        s = ramp_select_capacity(&di, &sl, &ti);
        max_slots = sl > max_slots ? sl : max_slots;
        max_tiles = ti > max_tiles ? ti : max_tiles;
    }
    size_t cb = 0, wsb = 0;
    if (s == RAMP_OK) {
        cb = ramp_moe_poly_counter_bytes(K, (int)max_tiles);
        wsb = ramp_moe_poly_ws_bytes(K, (int)max_tiles);
        cb = cb ? cb : 4; /* v2: no split-K, nothing to hold */
        wsb = wsb ? wsb : 4;
        s = ramp_gpu_alloc(C->gpu, (size_t)max_slots * 4 * 2, &sorted);
    }
    if (s == RAMP_OK) s = ramp_gpu_alloc(C->gpu, (size_t)max_tiles * 4, &texp);
    if (s == RAMP_OK) s = ramp_gpu_alloc(C->gpu, 4, &ntiles);
    if (s == RAMP_OK) s = ramp_gpu_alloc(C->gpu, 4, &choice);
    if (s == RAMP_OK) s = ramp_gpu_alloc(C->gpu, wsb, &ws);
    if (s == RAMP_OK) s = ramp_gpu_alloc(C->gpu, cb, &cnt);
    if (s == RAMP_OK) s = ramp_gpu_fill32_async(C->gpu, cnt, 0, cb / 4, C->st);
    if (s == RAMP_OK) s = ramp_gpu_alloc(C->gpu, RAMP_POLY_SCHED_BYTES, &sched);
    if (s == RAMP_OK)
        s = ramp_gpu_fill32_async(C->gpu, sched, 0, RAMP_POLY_SCHED_WORDS, C->st);
    if (s == RAMP_OK && g_det) {
        pwsb = ramp_moe_poly_pair_ws_bytes(K, (int64_t)max_tokens * TOPK);
        s = pwsb ? ramp_gpu_alloc(C->gpu, pwsb, &pws) : RAMP_ERR_INTERNAL;
        again = malloc((size_t)(max_tokens + 2) * HIDDEN * 4);
        if (s == RAMP_OK && !again) s = RAMP_ERR_OUT_OF_MEMORY;
    }
    if (s == RAMP_OK) s = ramp_stream_sync(C->gpu, C->st);
    CHECK_OK(s);
    int runs = 0, viol = 0, det_diff = 0;
    const ramp_poly_locality loc = {0, 0, E_LOC, E_ALL}; /* experts 0 .. E_LOC - 1 */
    double worst = 0;
    /* v2: each entry also with a grid of 7 blocks, several tiles each */
    const int grids = g_kernel == RAMP_KERNEL_V2 ? 2 : 1;
    for (int shape = 0; s == RAMP_OK && shape < nshapes; shape++) {
        moe_batch b;
        if (moe_batch_make(&C->rng, shape, max_tokens, TOPK, E_ALL, E_LOC, HIDDEN, &b)) {
            s = RAMP_ERR_OUT_OF_MEMORY;
            break;
        }
        ramp_moe_layer L = moe_layer_of(&W.w);
        ramp_moe_batch rb = kind == 0 ? moe_batch_fp8(&b) : moe_batch_bf16(&b);
        s = reference(&L, &rb, C->threads, ref, bnd);
        for (int run = 0; s == RAMP_OK && run < NMENU * grids; run++) {
            const int e = run % NMENU, capped = run >= NMENU;
            if (!g_entries[e]) continue;
            ramp_select_desc d = one_entry_desc(&pd.cfgs[e], max_tokens);
            ramp_select_result_free(sel);
            sel = NULL;
            s = ramp_select_result_create(&d, &sel);
            if (s == RAMP_OK) s = ramp_select_cpu(&d, b.tokens, b.ids, sel);
            if (s != RAMP_OK) break;
            int32_t tiles = sel->meta[RAMP_SELECT_META_TILES], idx = e;
            s = ramp_gpu_upload(C->gpu, sorted, sel->sorted_ids,
                                (size_t)(tiles > 0 ? tiles : 1) * pd.cfgs[e].rows * 4);
            if (s == RAMP_OK)
                s = ramp_gpu_upload(C->gpu, texp, sel->tile_expert, (size_t)(tiles > 0 ? tiles : 1) * 4);
            if (s == RAMP_OK) s = ramp_gpu_upload(C->gpu, ntiles, &tiles, 4);
            if (s == RAMP_OK) s = ramp_gpu_upload(C->gpu, choice, &idx, 4);
            /* a two-phase entry's intermediate (a ".gg" entry's exchanged
             * blocks): poisoned, as a row its phase 2 (a peer) read but its
             * phase 1 (its block's owner) did not write shows as NaN */
            if (s == RAMP_OK && (pd.cfgs[e].two_phase || pd.cfgs[e].ggather))
                s = ramp_gpu_fill32_async(C->gpu, ws, 0xFFFFFFFFu, wsb / 4, C->st);
            if (s == RAMP_OK) s = batch_upload(C, &b, &B, ref_rms(ref, b.tokens));
            ramp_moe_params p;
            memset(&p, 0, sizeof p);
            p.x = kind == 0 ? B.x : B.xb;
            p.x_scale = kind == 0 ? B.xs : 0;
            p.w13 = W.w13; p.w13_scale = W.w13s; p.w2 = W.w2; p.w2_scale = W.w2s;
            p.topk_weights = B.tw;
            p.sorted_ids = sorted; p.tile_expert = texp; p.num_tiles = ntiles;
            p.out = g_det ? pws : B.out; p.ws = ws; p.ws_count = cnt;
            p.num_tokens = b.tokens;
            p.max_tiles = (int)max_tiles;
            ramp_moe_poly_set_grid(K, capped ? 7 : 0);
            /* det: run twice from the same base, the slots' rows poisoned
             * (NaN) before each: a row the combine reads but phase 2 did
             * not write shows; the two outputs must be the same bits */
            for (int rep = 0; rep < 1 + g_det && s == RAMP_OK; rep++) {
                if (rep) s = ramp_gpu_upload(C->gpu, B.out, B.base,
                                             (size_t)(B.cap_tokens + 2) * HIDDEN * 4);
                if (s == RAMP_OK && g_det)
                    s = ramp_gpu_fill32_async(C->gpu, pws, 0xFFFFFFFFu, pwsb / 4, C->st);
                if (s == RAMP_OK) s = ramp_moe_poly_launch(K, &p, choice, sched, C->st);
                if (s == RAMP_OK && g_det)
                    s = ramp_moe_poly_combine(K, B.out, pws, B.ids, choice, B.ntok, &loc,
                                              (int64_t)b.tokens * TOPK, max_tokens, capped, C->st);
                if (s == RAMP_OK) s = ramp_stream_sync(C->gpu, C->st);
                if (s == RAMP_OK && rep == 0 && g_det)
                    s = ramp_gpu_download(C->gpu, again, B.out,
                                          (size_t)(B.cap_tokens + 2) * HIDDEN * 4);
            }
            if (s != RAMP_OK) break;
            char label[96];
            snprintf(label, sizeof label, "poly%s %s entry %d %s %s%s",
                     g_kernel == RAMP_KERNEL_V2 ? " v2" : "", kinds[kind], e, MENU[e],
                     moe_shape_name(shape), capped ? " grid 7" : "");
            int v = check_output(C, &B, b.tokens, ref, bnd, label, &worst);
            if (g_det && memcmp(again, B.host, (size_t)(B.cap_tokens + 2) * HIDDEN * 4) != 0) {
                if (det_diff++ < 3)
                    fprintf(stderr, "%s: deterministic output differs between two runs\n",
                            label);
                v++;
            }
            if (pd.cfgs[e].splitk > 1) { /* counters back at zero */
                int32_t *h = malloc(cb);
                if (h && ramp_gpu_download(C->gpu, h, cnt, cb) == RAMP_OK)
                    for (size_t i = 0; i < cb / 4; i++) v += h[i] != 0;
                free(h);
            }
            int32_t sc[RAMP_POLY_SCHED_WORDS]; /* the tile scheduler's too */
            int nz = ramp_gpu_download(C->gpu, sc, sched, sizeof sc) != RAMP_OK;
            for (int w = 0; w < RAMP_POLY_SCHED_WORDS; w++) nz += sc[w] != 0;
            if (nz) {
                fprintf(stderr, "%s: %d scheduler counters not zero after the launch\n", label,
                        nz);
                v++;
            }
            viol += v;
            runs++;
        }
        moe_batch_free(&b);
    }
    CHECK_OK(s);
    if (K) ramp_moe_poly_set_grid(K, 0);
    CHECK_EQ_INT(viol, 0);
    CHECK_EQ_INT(det_diff, 0);
    CHECK_EQ_INT(runs, nshapes * g_nentries * grids);
    const ramp_resources *res = K ? ramp_moe_poly_resources(K) : NULL;
    printf("polymorphic%s%s %s: %d runs (%d entries x %d routings%s), %d violations%s, worst "
           "error/bound %.3f; kernel %d registers, %lld B shared, %d block(s)/SM, grid %u\n",
           g_kernel == RAMP_KERNEL_V2 ? " v2" : "", g_det ? " (deterministic)" : "",
           kinds[kind], runs, g_nentries, nshapes, grids > 1 ? " x 2 grids" : "", viol,
           g_det ? ", each run twice: the same bits" : "", worst,
           res ? res->regs_per_thread : 0,
           res ? (long long)res->smem_bytes : 0, res ? res->blocks_per_sm : 0,
           K ? ramp_moe_poly_grid(K) : 0);
    ramp_select_result_free(sel);
    free(again);
    ramp_devptr bufs[] = {sorted, texp, ntiles, choice, ws, cnt, sched, pws};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) ramp_gpu_free(C->gpu, bufs[i]);
    if (K) {
        batch_free(C, &B);
        free_weights(C, &W);
    }
    ramp_moe_poly_free(K);
    free(ref);
    free(bnd);
}

/* ------------------------------------------------ 2. the layer in a graph */

/* pairs: an Equation 3 + pairs plan (five terms, theta[i][4] > 0) */
/* The selection's outputs after a run against the CPU twin's: meta up to the
 * bad ids, and the grouped slots. Adds the mismatches to *count, printing
 * the first five. */
static void selection_mismatches(ctx *C, const ramp_layer_info *info,
                                 const ramp_select_result *twin, int32_t *slots,
                                 const char *label, int *count) {
    int32_t meta[RAMP_SELECT_META_COUNT];
    if (ramp_gpu_download(C->gpu, meta, info->select.meta, sizeof meta) != RAMP_OK) {
        fprintf(stderr, "%s: download failed: %s\n", label, ramp_last_error());
        (*count)++;
        return;
    }
    for (int m = 0; m <= RAMP_SELECT_META_BAD_IDS; m++)
        if (meta[m] != twin->meta[m] && (*count)++ < 5)
            fprintf(stderr, "%s: meta[%d] = %d, CPU twin %d\n", label, m, meta[m], twin->meta[m]);
    const int nslots = twin->meta[RAMP_SELECT_META_SLOTS];
    if (nslots > 0 &&
        ramp_gpu_download(C->gpu, slots, info->select.sorted_ids, (size_t)nslots * 4) == RAMP_OK &&
        memcmp(slots, twin->sorted_ids, (size_t)nslots * 4) != 0 && (*count)++ < 5)
        fprintf(stderr, "%s: grouped slots differ from the CPU twin\n", label);
}

static ramp_plan make_plan(int sms, int pairs) {
    ramp_plan p;
    memset(&p, 0, sizeof p);
    snprintf(p.model, sizeof p.model, "qwen3-30b");
    snprintf(p.layout, sizeof p.layout, "EP8");
    snprintf(p.device, sizeof p.device, "test");
    snprintf(p.libramp, sizeof p.libramp, "%s", RAMP_VERSION_STRING);
    p.geom = (ramp_geometry){E_LOC, TOPK, INTER, HIDDEN, 0};
    p.kernel = g_kernel; /* fit on this kernel's times, as far as the test cares */
    p.sms = sms;
    p.blocks_per_sm = 1;
    p.count = NMENU;
    for (int i = 0; i < NMENU; i++) {
        ramp_config_parse(MENU[i], &p.configs[i]);
        /* a fixed cost growing with the tile's rows, a per-wave cost, a
         * per-tile cost: small loads pick small tiles, large ones large */
        /* (v2's wide tiles priced as 16-row ones, so that the replays of a
         * menu holding them choose one at large loads) */
        const int rows = p.configs[i].rows > 64 ? 16 : p.configs[i].rows;
        p.theta[i][0] = 4.0 + 0.3 * i;
        p.theta[i][1] = 1.0 + 0.15 * rows;
        p.theta[i][2] = 0.02 + 0.002 * rows;
        p.theta[i][3] = 0.1;
        if (pairs) p.theta[i][4] = 0.001 * (1 + i); /* per token-expert pair */
    }
    if (pairs) p.cost_model = RAMP_COSTMODEL_EQ3_PAIRS;
    return p;
}

static ramp_layer_desc layer_desc(const dev_weights *W, int max_tokens) {
    ramp_layer_desc d;
    memset(&d, 0, sizeof d);
    d.w13 = W->w13; d.w13_scale = W->w13s; d.w2 = W->w2; d.w2_scale = W->w2s;
    d.w13_shape[0] = E_LOC; d.w13_shape[1] = 2 * INTER; d.w13_shape[2] = HIDDEN;
    d.w2_shape[0] = E_LOC; d.w2_shape[1] = HIDDEN; d.w2_shape[2] = INTER;
    d.experts = E_ALL;
    d.local_experts = E_LOC;
    d.max_tokens = max_tokens;
    d.kernel = g_kernel;
    d.w2_red4 = g_red4;
    d.weight_units = g_units;
    d.l2_prefetch_mb = g_l2pf;
    d.bf16_pipe = d.bf16 ? g_bf16_pipe : 0;
    d.deterministic = g_det;
    d.poly_split = g_split;
    d.serial_launch = g_serial;
    return d;
}

static void test_layer_graph(ctx *C, int routings, int pairs) {
    const int max_tokens = 384;
    ramp_gpu_info gi;
    CHECK_OK(ramp_gpu_get_info(C->gpu, &gi));
    ramp_plan plan = make_plan(gi.limits.sms, pairs);
    dev_weights W;
    dev_batch B;
    ramp_layer *L = NULL;
    ramp_graph *G = NULL;
    ramp_select_result *twin = NULL;
    float *ref = malloc((size_t)max_tokens * HIDDEN * 4), *bnd = malloc((size_t)max_tokens * HIDDEN * 4);
    int32_t *slots = NULL;
    ramp_status s = ref && bnd ? upload_weights(C, 0, &W) : RAMP_ERR_OUT_OF_MEMORY;
    if (s == RAMP_OK) s = batch_alloc(C, max_tokens, &B);
    ramp_layer_desc ld = layer_desc(&W, max_tokens);
    if (s == RAMP_OK) s = ramp_layer_create(C->gpu, &plan, &ld, &L);
    ramp_layer_info info;
    if (s == RAMP_OK) s = ramp_layer_get_info(L, &info);
    /* the twin's descriptor, as the layer builds it */
    ramp_select_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.experts = E_ALL; sd.topk = TOPK; sd.max_tokens = max_tokens; sd.local_experts = E_LOC;
    sd.nentries = NMENU;
    for (int i = 0; s == RAMP_OK && i < NMENU; i++)
        s = ramp_select_entry_from_plan(&plan, i, &sd.entries[i]);
    if (s == RAMP_OK) s = ramp_select_result_create(&sd, &twin);
    if (s == RAMP_OK) {
        slots = malloc((size_t)twin->max_slots * 4);
        if (!slots) s = RAMP_ERR_OUT_OF_MEMORY;
    }
    /* capture once: the layer reads the token count from device memory */
    ramp_layer_io io;
    memset(&io, 0, sizeof io);
    io.x = B.x; io.x_scale = B.xs; io.topk_ids = B.ids; io.topk_weights = B.tw;
    io.out = B.out; io.tokens_dev = B.ntok;
    if (s == RAMP_OK) s = ramp_graph_capture_begin(C->gpu, C->st);
    if (s == RAMP_OK) {
        ramp_status r = ramp_layer_run(L, &io, C->st);
        s = ramp_graph_capture_end(C->gpu, C->st, &G);
        if (r != RAMP_OK) s = r;
    }
    CHECK_OK(s);
    int hist[NMENU] = {0}, viol = 0, meta_bad = 0, done = 0, det_diff = 0;
    double worst = 0;
    for (int it = 0; s == RAMP_OK && it < routings; it++) {
        int shape = (int)ramp_rng_below(&C->rng, MOE_SHAPES);
        int tokens = (int)floor(exp(ramp_rng_uniform(&C->rng) * log((double)max_tokens))) ;
        tokens = tokens < 1 ? 1 : tokens > max_tokens ? max_tokens : tokens;
        moe_batch b;
        if (moe_batch_make(&C->rng, shape, tokens, TOPK, E_ALL, E_LOC, HIDDEN, &b)) {
            s = RAMP_ERR_OUT_OF_MEMORY;
            break;
        }
        if (it % 10 == 3) /* some skipped (-1) and bad (out of range) ids */
            for (int j = 0; j < b.tokens * TOPK; j += 7) b.ids[j] = j % 2 ? -1 : E_ALL + j;
        ramp_moe_layer RL = moe_layer_of(&W.w);
        ramp_moe_batch rb = moe_batch_fp8(&b);
        s = reference(&RL, &rb, C->threads, ref, bnd);
        if (s == RAMP_OK) s = ramp_select_cpu(&sd, b.tokens, b.ids, twin);
        if (s == RAMP_OK) s = batch_upload(C, &b, &B, ref_rms(ref, b.tokens));
        if (s == RAMP_OK && g_det) /* a row read but not written shows as NaN */
            s = ramp_gpu_fill32_async(C->gpu, info.pair_ws, 0xFFFFFFFFu,
                                      info.pair_ws_bytes / 4, C->st);
        /* every fourth routing run directly with the count on the host: the
         * selection then runs the smallest launch shape covering it (1 to 8
         * blocks over these 1..384 tokens), the graph's the largest */
        ramp_layer_io ioh = io;
        ioh.tokens_dev = 0;
        ioh.tokens = b.tokens;
        if (s == RAMP_OK) s = it % 4 == 1 ? ramp_layer_run(L, &ioh, C->st) : ramp_graph_replay(G, C->st);
        if (s == RAMP_OK) s = ramp_stream_sync(C->gpu, C->st);
        if (s != RAMP_OK) {
            moe_batch_free(&b);
            break;
        }
        char label[96];
        snprintf(label, sizeof label, "layer replay %d (%s, %d tokens)", it,
                 moe_shape_name(shape), b.tokens);
        selection_mismatches(C, &info, twin, slots, label, &meta_bad);
        int c = twin->meta[RAMP_SELECT_META_CHOSEN];
        if (c >= 0 && c < NMENU) hist[c]++;
        viol += check_output(C, &B, b.tokens, ref, bnd, label, &worst);
        if (g_det) { /* again from the same base, poisoned again: the same bits */
            const size_t ob = (size_t)(B.cap_tokens + 2) * HIDDEN * 4;
            float *first = malloc(ob);
            s = first ? RAMP_OK : RAMP_ERR_OUT_OF_MEMORY;
            if (s == RAMP_OK) memcpy(first, B.host, ob);
            if (s == RAMP_OK) s = ramp_gpu_upload(C->gpu, B.out, B.base, ob);
            if (s == RAMP_OK)
                s = ramp_gpu_fill32_async(C->gpu, info.pair_ws, 0xFFFFFFFFu,
                                          info.pair_ws_bytes / 4, C->st);
            if (s == RAMP_OK) s = ramp_graph_replay(G, C->st);
            if (s == RAMP_OK) s = ramp_stream_sync(C->gpu, C->st);
            if (s == RAMP_OK) s = ramp_gpu_download(C->gpu, B.host, B.out, ob);
            if (s == RAMP_OK && memcmp(first, B.host, ob) != 0 && det_diff++ < 3)
                fprintf(stderr, "%s: deterministic output differs between two replays\n", label);
            free(first);
        }
        done++;
        moe_batch_free(&b);
    }
    CHECK_OK(s);
    CHECK_EQ_INT(done, routings);
    CHECK_EQ_INT(meta_bad, 0);
    CHECK_EQ_INT(viol, 0);
    CHECK_EQ_INT(det_diff, 0);
    int distinct = 0;
    for (int i = 0; i < NMENU; i++) distinct += hist[i] > 0;
    /* the choice follows the routing (the default menu: a RAMP_LAYER_MENU
     * plan may rank one entry first on every load) */
    if (routings >= 200 && !pairs && MENU != g_menu) CHECK(distinct >= 3);
    printf("layer%s%s%s in one captured graph: %d routings replayed%s (a quarter run directly, "
           "the count on the host), %d meta/slot mismatches "
           "with the CPU twin, %d output violations, %d run-to-run differences, worst "
           "error/bound %.3f; choices:",
           g_kernel == RAMP_KERNEL_V2 ? " (kernel v2)" : "", pairs ? " (eq3+pairs plan)" : "",
           g_det ? " (deterministic)" : "", done, g_det ? " twice each" : "", meta_bad, viol,
           det_diff, worst);
    for (int i = 0; i < NMENU; i++) printf(" %s=%d", MENU[i], hist[i]);
    printf("\n");
    ramp_graph_free(G);
    ramp_layer_free(L);
    ramp_select_result_free(twin);
    free(slots);
    free(ref);
    free(bnd);
    batch_free(C, &B);
    free_weights(C, &W);
}

/* Two runs of one layer in one captured graph, on two batches of the same
 * size adding into one output, the selection launched as a programmatic
 * dependent (ramp_layer_desc.select_pdl 1): the second run's selection may
 * start while the first run's MoE kernel still reads the grouped slots the
 * selection writes, and must wait before it writes them (a stack of layers,
 * bench_stack, runs this way). Output: base + ref(A) + ref(B) within the
 * sum of their bounds, every element; guard rows untouched. */
static void test_layer_twice(ctx *C, int routings, int pairs) {
    const int max_tokens = 384;
    ramp_gpu_info gi;
    CHECK_OK(ramp_gpu_get_info(C->gpu, &gi));
    ramp_plan plan = make_plan(gi.limits.sms, pairs);
    dev_weights W;
    dev_batch BA, BB;
    ramp_layer *L = NULL;
    ramp_graph *G = NULL;
    const size_t n = (size_t)max_tokens * HIDDEN;
    float *ra = malloc(n * 4), *ba = malloc(n * 4), *rb = malloc(n * 4), *bb = malloc(n * 4);
    ramp_status s = ra && ba && rb && bb ? upload_weights(C, 0, &W) : RAMP_ERR_OUT_OF_MEMORY;
    if (s == RAMP_OK) s = batch_alloc(C, max_tokens, &BA);
    if (s == RAMP_OK) s = batch_alloc(C, max_tokens, &BB);
    ramp_layer_desc ld = layer_desc(&W, max_tokens);
    ld.select_pdl = 1;
    if (s == RAMP_OK) s = ramp_layer_create(C->gpu, &plan, &ld, &L);
    ramp_layer_io ia, ib;
    memset(&ia, 0, sizeof ia);
    ia.x = BA.x; ia.x_scale = BA.xs; ia.topk_ids = BA.ids; ia.topk_weights = BA.tw;
    ia.out = BA.out; ia.tokens_dev = BA.ntok;
    ib = ia;
    ib.x = BB.x; ib.x_scale = BB.xs; ib.topk_ids = BB.ids; ib.topk_weights = BB.tw;
    ib.tokens_dev = BB.ntok; /* the same output: the two runs add into it */
    if (s == RAMP_OK) s = ramp_graph_capture_begin(C->gpu, C->st);
    if (s == RAMP_OK) {
        ramp_status r = ramp_layer_run(L, &ia, C->st);
        if (r == RAMP_OK) r = ramp_layer_run(L, &ib, C->st);
        s = ramp_graph_capture_end(C->gpu, C->st, &G);
        if (r != RAMP_OK) s = r;
    }
    CHECK_OK(s);
    int viol = 0, done = 0;
    double worst = 0;
    for (int it = 0; s == RAMP_OK && it < routings; it++) {
        int tokens = 1 + (int)ramp_rng_below(&C->rng, (uint32_t)max_tokens);
        moe_batch a, b;
        const int sa = (int)ramp_rng_below(&C->rng, MOE_SHAPES);
        const int sb = (int)ramp_rng_below(&C->rng, MOE_SHAPES);
        if (sa == MOE_SINGLE_TOKEN || sb == MOE_SINGLE_TOKEN) tokens = 1; /* same size both */
        if (moe_batch_make(&C->rng, sa, tokens, TOPK, E_ALL, E_LOC, HIDDEN, &a)) {
            s = RAMP_ERR_OUT_OF_MEMORY;
            break;
        }
        if (moe_batch_make(&C->rng, sb, tokens, TOPK, E_ALL, E_LOC, HIDDEN, &b)) {
            moe_batch_free(&a);
            s = RAMP_ERR_OUT_OF_MEMORY;
            break;
        }
        ramp_moe_layer RL = moe_layer_of(&W.w);
        ramp_moe_batch xa = moe_batch_fp8(&a), xb = moe_batch_fp8(&b);
        s = reference(&RL, &xa, C->threads, ra, ba);
        if (s == RAMP_OK) s = reference(&RL, &xb, C->threads, rb, bb);
        for (size_t i = 0; s == RAMP_OK && i < (size_t)tokens * HIDDEN; i++) {
            ra[i] += rb[i];
            ba[i] += bb[i];
        }
        if (s == RAMP_OK) s = batch_upload(C, &b, &BB, 1.0);
        if (s == RAMP_OK) s = batch_upload(C, &a, &BA, ref_rms(ra, tokens)); /* BA.out: the base */
        if (s == RAMP_OK) s = ramp_graph_replay(G, C->st);
        if (s == RAMP_OK) s = ramp_stream_sync(C->gpu, C->st);
        if (s == RAMP_OK) {
            char label[96];
            snprintf(label, sizeof label, "layer twice in one graph, replay %d (%s + %s, %d tokens)",
                     it, moe_shape_name(sa), moe_shape_name(sb), tokens);
            viol += check_output(C, &BA, tokens, ra, ba, label, &worst);
            done++;
        }
        moe_batch_free(&a);
        moe_batch_free(&b);
    }
    CHECK_OK(s);
    CHECK_EQ_INT(done, routings);
    CHECK_EQ_INT(viol, 0);
    printf("layer%s run twice in one captured graph, the selection a programmatic dependent "
           "(select_pdl): %d replays on two fresh routings each, %d output violations, worst "
           "error/bound %.3f\n", g_kernel == RAMP_KERNEL_V2 ? " (kernel v2)" : "", done, viol,
           worst);
    ramp_graph_free(G);
    ramp_layer_free(L);
    free(ra); free(ba); free(rb); free(bb);
    batch_free(C, &BA);
    batch_free(C, &BB);
    free_weights(C, &W);
}

/* ------------------------------------------------ 4. size classes */

/* Size classes (kernel v2, one_menu 0) on a GPU holding `local` experts: 1
 * (expert 0 of the weights, so the plan's 16-expert geometry and the
 * reference with one local expert serve it) or all 16 (the classes then
 * searched over every count vector): the layer's classes must be the selection twin's
 * (ramp_select_size_classes); every run with a host count goes through the
 * smallest class covering it, and its meta and grouped slots must equal the
 * twin's restricted to that class (entry_mask), its choice the whole
 * menu's when the batch's ids are distinct per token, and its output the
 * reference's; graphs captured for one batch size replay fresh routings of
 * that size; a graph with the count on the device runs the whole menu;
 * one_menu 1 makes none. */
static void test_size_classes(ctx *C, int routings, int bf16, int local) {
    const int max_tokens = 384;
    ramp_gpu_info gi;
    CHECK_OK(ramp_gpu_get_info(C->gpu, &gi));
    ramp_plan plan = make_plan(gi.limits.sms, 0);
    plan.geom.bf16 = bf16;
    dev_weights W;
    dev_batch B;
    ramp_layer *L = NULL;
    ramp_select_result *twin = NULL, *whole = NULL;
    float *ref = malloc((size_t)max_tokens * HIDDEN * 4), *bnd = malloc((size_t)max_tokens * HIDDEN * 4);
    int32_t *slots = NULL;
    ramp_status s = ref && bnd ? upload_weights(C, bf16, &W) : RAMP_ERR_OUT_OF_MEMORY;
    if (s == RAMP_OK) s = batch_alloc(C, max_tokens, &B);
    ramp_layer_desc ld = layer_desc(&W, max_tokens);
    ld.bf16 = bf16;
    ld.bf16_pipe = bf16 ? g_bf16_pipe : 0;
    ld.local_experts = local; /* expert 0's weights come first in every tensor */
    ld.many_expert_classes = local > 1; /* (one expert: made without it) */
    ld.w13_shape[0] = ld.w2_shape[0] = local;
    ramp_layer_info info;
    memset(&info, 0, sizeof info);
    ld.one_menu = 1;
    if (s == RAMP_OK) s = ramp_layer_create(C->gpu, &plan, &ld, &L);
    if (s == RAMP_OK) s = ramp_layer_get_info(L, &info);
    CHECK(s != RAMP_OK || info.size_classes == 0);
    ramp_layer_free(L);
    L = NULL;
    ld.one_menu = 0;
    if (local > 1) { /* several experts: none unless asked for */
        ld.many_expert_classes = 0;
        if (s == RAMP_OK) s = ramp_layer_create(C->gpu, &plan, &ld, &L);
        if (s == RAMP_OK) s = ramp_layer_get_info(L, &info);
        CHECK(s != RAMP_OK || info.size_classes == 0);
        ramp_layer_free(L);
        L = NULL;
        ld.many_expert_classes = 1;
    }
    if (s == RAMP_OK) s = ramp_layer_create(C->gpu, &plan, &ld, &L);
    if (s == RAMP_OK) s = ramp_layer_get_info(L, &info);
    ramp_select_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.experts = E_ALL; sd.topk = TOPK; sd.max_tokens = max_tokens; sd.local_experts = local;
    sd.nentries = NMENU;
    for (int i = 0; s == RAMP_OK && i < NMENU; i++)
        s = ramp_select_entry_from_plan(&plan, i, &sd.entries[i]);
    int tokens_of[RAMP_SELECT_MAX_ENTRIES];
    unsigned mask_of[RAMP_SELECT_MAX_ENTRIES];
    const int ncls = s == RAMP_OK ? ramp_select_size_classes(&sd, tokens_of, mask_of) : 0;
    /* the test's own menu makes small loads pick small tiles; a menu from
     * RAMP_LAYER_MENU (two-phase entries for RAMP_LAYER_DET) need not */
    CHECK(ncls >= (MENU == g_menu ? 1 : 2));
    CHECK_EQ_INT(info.size_classes, ncls);
    for (int c = 0; c < ncls && c < info.size_classes; c++) {
        CHECK_EQ_INT(info.class_tokens[c], tokens_of[c]);
        CHECK_EQ_INT(info.class_entries[c], mask_of[c]);
    }
    if (s == RAMP_OK) s = ramp_select_result_create(&sd, &twin);
    if (s == RAMP_OK) s = ramp_select_result_create(&sd, &whole);
    if (s == RAMP_OK) {
        slots = malloc((size_t)twin->max_slots * 4);
        if (!slots) s = RAMP_ERR_OUT_OF_MEMORY;
    }
    ramp_layer_io io;
    memset(&io, 0, sizeof io);
    io.x = bf16 ? B.xb : B.x; io.x_scale = bf16 ? 0 : B.xs;
    io.topk_ids = B.ids; io.topk_weights = B.tw;
    io.out = B.out;
    /* graphs: the count on the device (whole menu), and one captured for
     * each of two batch sizes, in the first class and past it */
    const int fixed[2] = {ncls ? tokens_of[0] : 1, ncls ? tokens_of[ncls - 1] : max_tokens};
    ramp_graph *G[3] = {NULL, NULL, NULL};
    for (int g = 0; g < 3 && s == RAMP_OK; g++) {
        ramp_layer_io gio = io;
        if (g == 0) gio.tokens_dev = B.ntok;
        else gio.tokens = fixed[g - 1];
        s = ramp_graph_capture_begin(C->gpu, C->st);
        if (s == RAMP_OK) {
            ramp_status r = ramp_layer_run(L, &gio, C->st);
            s = ramp_graph_capture_end(C->gpu, C->st, &G[g]);
            if (r != RAMP_OK) s = r;
        }
    }
    CHECK_OK(s);
    ramp_moe_layer RL = moe_layer_of(&W.w);
    RL.experts = local; /* with 1, ids 1..15 are other GPUs' experts here */
    int used[RAMP_MENU_MAX + 1] = {0}, hist[NMENU] = {0};
    int viol = 0, meta_bad = 0, differ = 0, done = 0;
    double worst = 0;
    for (int it = 0; s == RAMP_OK && it < routings; it++) {
        const int how = it % 4; /* 0, 1: direct with the count on the host; 2, 3: graphs */
        int shape = it % 3 == 0 ? MOE_ONE_EXPERT : (int)ramp_rng_below(&C->rng, MOE_SHAPES);
        int tokens = 1 + (int)ramp_rng_below(&C->rng, (uint32_t)max_tokens);
        if (how == 0 && ncls) /* within a class: up to the largest's bound */
            tokens = 1 + (int)ramp_rng_below(&C->rng, (uint32_t)tokens_of[ncls - 1]);
        const int gi_ = how == 3 ? 1 + (it / 4) % 2 : how == 2 ? 0 : -1;
        if (gi_ >= 1) tokens = fixed[gi_ - 1];
        if (shape == MOE_SINGLE_TOKEN && gi_ >= 1 && tokens != 1) shape = MOE_SKEWED;
        moe_batch b;
        if (moe_batch_make(&C->rng, shape, tokens, TOPK, E_ALL, E_LOC, HIDDEN, &b)) {
            s = RAMP_ERR_OUT_OF_MEMORY;
            break;
        }
        int distinct = 1;
        for (int m = 0; m < b.tokens; m++)
            for (int i = 0; i < TOPK; i++)
                for (int j = 0; j < i; j++)
                    distinct &= b.ids[m * TOPK + i] != b.ids[m * TOPK + j];
        /* the class a host count runs (none: the whole menu) */
        int cls = -1;
        for (int c = 0; gi_ != 0 && c < ncls && cls < 0; c++)
            if (b.tokens <= tokens_of[c]) cls = c;
        ramp_select_desc md = sd;
        md.entry_mask = cls >= 0 ? mask_of[cls] : 0;
        ramp_moe_batch rb = bf16 ? moe_batch_bf16(&b) : moe_batch_fp8(&b);
        s = reference(&RL, &rb, C->threads, ref, bnd);
        if (s == RAMP_OK) s = ramp_select_cpu(&md, b.tokens, b.ids, twin);
        if (s == RAMP_OK) s = ramp_select_cpu(&sd, b.tokens, b.ids, whole);
        if (s == RAMP_OK) s = batch_upload(C, &b, &B, ref_rms(ref, b.tokens));
        ramp_layer_io ioh = io;
        ioh.tokens = b.tokens;
        if (s == RAMP_OK) s = gi_ < 0 ? ramp_layer_run(L, &ioh, C->st) : ramp_graph_replay(G[gi_], C->st);
        if (s == RAMP_OK) s = ramp_stream_sync(C->gpu, C->st);
        if (s != RAMP_OK) {
            moe_batch_free(&b);
            break;
        }
        char label[128];
        snprintf(label, sizeof label, "size class %d, %s %d (%s, %d tokens)", cls,
                 gi_ < 0 ? "direct run" : "graph", it, moe_shape_name(shape), b.tokens);
        selection_mismatches(C, &info, twin, slots, label, &meta_bad);
        const int c = twin->meta[RAMP_SELECT_META_CHOSEN];
        if (distinct && c != whole->meta[RAMP_SELECT_META_CHOSEN] && differ++ < 5)
            fprintf(stderr, "%s: the class chose entry %d, the whole menu %d\n", label, c,
                    whole->meta[RAMP_SELECT_META_CHOSEN]);
        if (c >= 0 && c < NMENU) hist[c]++;
        used[cls + 1]++;
        viol += check_output(C, &B, b.tokens, ref, bnd, label, &worst);
        done++;
        moe_batch_free(&b);
    }
    CHECK_OK(s);
    CHECK_EQ_INT(done, routings);
    CHECK_EQ_INT(meta_bad, 0);
    CHECK_EQ_INT(differ, 0);
    CHECK_EQ_INT(viol, 0);
    int classes_used = 0;
    for (int c = 1; c <= ncls; c++) classes_used += used[c] > 0;
    if (routings >= 40) CHECK(classes_used >= 2 && used[0] > 0);
    printf("size classes (kernel v2, %d local expert%s, %s): %d classes (", local,
           local == 1 ? "" : "s", bf16 ? "BF16" : "FP8", ncls);
    for (int c = 0; c < ncls; c++)
        printf("%s<= %d tokens: 0x%x", c ? ", " : "", tokens_of[c], mask_of[c]);
    printf("); %d runs (whole menu %d", done, used[0]);
    for (int c = 0; c < ncls; c++) printf(", class %d: %d", c, used[c + 1]);
    printf("), %d meta/slot mismatches with the twin, %d choices unlike the whole menu's, %d "
           "output violations, worst error/bound %.3f; choices:", meta_bad, differ, viol, worst);
    for (int i = 0; i < NMENU; i++) printf(" %s=%d", MENU[i], hist[i]);
    printf("\n");
    for (int g = 0; g < 3; g++) ramp_graph_free(G[g]);
    ramp_layer_free(L);
    ramp_select_result_free(twin);
    ramp_select_result_free(whole);
    free(slots);
    free(ref);
    free(bnd);
    batch_free(C, &B);
    free_weights(C, &W);
}

/* ------------------------------------------------ 3. bad input */

static void test_bad_input(ctx *C) {
    ramp_gpu_info gi;
    CHECK_OK(ramp_gpu_get_info(C->gpu, &gi));
    ramp_plan plan = make_plan(gi.limits.sms, 0);
    /* fit on this GPU's timings: no warning (another name warns, below) */
    snprintf(plan.device, sizeof plan.device, "%s", gi.limits.name);
    dev_weights W;
    memset(&W, 0, sizeof W);
    W.w13 = W.w2 = W.w13s = W.w2s = 256; /* never dereferenced: creation fails first */
    ramp_layer *L = NULL;
    ramp_layer_desc d = layer_desc(&W, 64);
    d.w13_shape[2] = 4096; /* another model's d */
    CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "w13 shape") != NULL);
    d = layer_desc(&W, 64);
    d.w2_shape[2] = 1536; /* TP1's h */
    CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    d = layer_desc(&W, 64);
    d.bf16 = 1;
    CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    d = layer_desc(&W, 64);
    d.experts = 64; /* Qwen3-30B has 128 */
    CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    d = layer_desc(&W, 64);
    d.local_experts = 32;
    d.w13_shape[0] = d.w2_shape[0] = 32;
    CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    d = layer_desc(&W, 0);
    CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    d = layer_desc(&W, 64);
    d.w13_scale = 0;
    CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    /* W2 in the float4-output order is kernel v2's only */
    d = layer_desc(&W, 64);
    d.kernel = RAMP_KERNEL_V1;
    d.w2_red4 = 1;
    CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "w2_red4") != NULL);
    d.kernel = RAMP_KERNEL_V2;
    d.w2_red4 = 2;
    CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    /* weights in stage units: kernel v2's, 0 or 1, not with w2_red4 */
    static const int units_bad[][3] = {{RAMP_KERNEL_V1, 1, 0}, {RAMP_KERNEL_V2, 2, 0},
                                       {RAMP_KERNEL_V2, 1, 1}};
    for (int i = 0; i < 3; i++) {
        d = layer_desc(&W, 64);
        d.kernel = units_bad[i][0];
        d.weight_units = units_bad[i][1];
        d.w2_red4 = units_bad[i][2];
        CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "weight_units") != NULL);
    }
    /* the L2 prefetch under the selection: kernel v2's, 1..RAMP_L2PF_MAX_MB */
    static const int l2pf_bad[][2] = {{RAMP_KERNEL_V1, 8}, {RAMP_KERNEL_V2, -1},
                                      {RAMP_KERNEL_V2, RAMP_L2PF_MAX_MB + 1}};
    for (int i = 0; i < 3; i++) {
        d = layer_desc(&W, 64);
        d.w2_red4 = 0; /* its own check comes first (RAMP_LAYER_RED4=1 runs) */
        d.kernel = l2pf_bad[i][0];
        d.l2_prefetch_mb = l2pf_bad[i][1];
        CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "l2_prefetch_mb") != NULL);
    }
    /* BF16 ping-pong: kernel v2 and a BF16 layer only (this one is FP8) */
    for (int i = 0; i < 3; i++) {
        d = layer_desc(&W, 64);
        d.w2_red4 = 0;
        d.l2_prefetch_mb = 0; /* its own check comes first (RAMP_LAYER_L2PF runs) */
        d.kernel = i == 0 ? RAMP_KERNEL_V1 : RAMP_KERNEL_V2;
        d.bf16_pipe = i == 2 ? 2 : 1;
        CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "bf16_pipe") != NULL);
    }
    /* the polymorphic kernel's split: kernel v2's, 0..5; 5 (a switch node's
     * bodies) without the L2 prefetch under the selection */
    static const int split_bad[][3] = {{RAMP_KERNEL_V1, 1, 0}, {RAMP_KERNEL_V2, -1, 0},
                                       {RAMP_KERNEL_V2, 6, 0}, {RAMP_KERNEL_V2, 5, 16}};
    for (int i = 0; i < 4; i++) {
        d = layer_desc(&W, 64);
        d.w2_red4 = 0;
        d.deterministic = 0; /* (RAMP_LAYER_DET: checked before the split) */
        d.kernel = split_bad[i][0];
        d.poly_split = split_bad[i][1];
        d.l2_prefetch_mb = split_bad[i][2];
        CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "poly_split") != NULL);
    }
    /* the wait at phase 2's top: kernel v2's, 0 or 1 */
    for (int i = 0; i < 2; i++) {
        d = layer_desc(&W, 64);
        d.w2_red4 = 0;
        d.l2_prefetch_mb = 0;
        d.poly_split = 0;
        d.deterministic = 0;
        d.kernel = i ? RAMP_KERNEL_V2 : RAMP_KERNEL_V1;
        d.poly_top_wait = i ? 2 : 1;
        CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "poly_top_wait") != NULL);
    }
    /* the selection's launch shape: 0 or 1 */
    d = layer_desc(&W, 64);
    /* size classes: on (0) or one kernel (1) */
    d.one_menu = 2;
    CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "one_menu = 2") != NULL);
    d = layer_desc(&W, 64);
    d.many_expert_classes = 2;
    CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "many_expert_classes = 2") != NULL);
    d = layer_desc(&W, 64);
    d.select_one_shape = -1;
    CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "select_one_shape") != NULL);
    d = layer_desc(&W, 64);
    d.select_pdl = 2;
    CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "select_pdl = 2") != NULL);
    /* deterministic output: kernel v2's, and a menu of two-phase entries
     * only (MENU_V2's entry 0 runs fused: refused, named) */
    d = layer_desc(&W, 64);
    d.w2_red4 = 0;
    d.l2_prefetch_mb = 0;
    d.kernel = RAMP_KERNEL_V1;
    d.deterministic = 1;
    CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "deterministic") != NULL);
    d.kernel = RAMP_KERNEL_V2;
    d.deterministic = 2;
    CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    if (g_kernel == RAMP_KERNEL_V2) {
        ramp_plan fplan = plan;
        for (int i = 0; i < NMENU; i++) ramp_config_parse(MENU_V2[i], &fplan.configs[i]);
        d.deterministic = 1;
        d.w2_red4 = g_red4;
        CHECK_ERR(ramp_layer_create(C->gpu, &fplan, &d, &L), RAMP_ERR_UNSUPPORTED);
        CHECK(strstr(ramp_last_error(), "menu entry 0 (r4.w128.s4)") != NULL);
    }
    ramp_plan bad = plan;
    bad.theta[2][1] = -1;
    d = layer_desc(&W, 64);
    CHECK_ERR(ramp_layer_create(C->gpu, &bad, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    d.kernel = 5;
    CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(L == NULL);
    if (g_kernel == RAMP_KERNEL_V2) {
        /* a v1 plan whose menu holds what v2 cannot run: refused, naming
         * the entry (persistent, grouped, split-K) */
        ramp_plan v1plan = plan;
        v1plan.kernel = RAMP_KERNEL_V1;
        for (int i = 0; i < NMENU; i++) ramp_config_parse(MENU_V1[i], &v1plan.configs[i]);
        d = layer_desc(&W, 64);
        CHECK_ERR(ramp_layer_create(C->gpu, &v1plan, &d, &L), RAMP_ERR_UNSUPPORTED);
        CHECK(strstr(ramp_last_error(), "menu entry 2") != NULL);
        /* BF16 weights and a BF16 plan: v2 runs them (test_entries, kind
         * bf16), but not with W2 in the float4-output order. A menu given
         * by RAMP_LAYER_MENU may hold entries v2 runs in FP8 only (narrow
         * two-phase tiles, the gather through global memory): refused for
         * the first of those, the plan invalid */
        ramp_plan bplan = plan;
        bplan.geom.bf16 = 1;
        d = layer_desc(&W, 64);
        d.bf16 = 1;
        d.w2_red4 = 1;
        const char *fp8_only = NULL; /* what the refusal names */
        for (int i = 0; i < NMENU && !fp8_only; i++) {
            ramp_config c;
            if (ramp_config_parse(MENU[i], &c) != RAMP_OK) continue;
            if (c.two_phase && c.rows <= 64) fp8_only = "two_phase";
            if (c.ggather) fp8_only = "ggather";
        }
        CHECK_ERR(ramp_layer_create(C->gpu, &bplan, &d, &L),
                  fp8_only ? RAMP_ERR_INVALID_ARGUMENT : RAMP_ERR_UNSUPPORTED);
        CHECK(strstr(ramp_last_error(), fp8_only ? fp8_only : "BF16") != NULL);
        /* FP8 with BF16 hidden states: not in v2 yet */
        d = layer_desc(&W, 64);
        d.hidden_bf16 = 1;
        CHECK_ERR(ramp_layer_create(C->gpu, &plan, &d, &L), RAMP_ERR_UNSUPPORTED);
        CHECK(L == NULL);
    }

    /* a good layer: run-time checks before any launch */
    dev_weights RW;
    ramp_status s = upload_weights(C, 0, &RW);
    CHECK_OK(s);
    if (s != RAMP_OK) return;
    d = layer_desc(&RW, 64);
    d.local_experts = 16;
    CHECK_OK(ramp_layer_create(C->gpu, &plan, &d, &L));
    if (L) {
        ramp_layer_io io;
        memset(&io, 0, sizeof io);
        io.x = io.x_scale = io.topk_ids = io.topk_weights = io.out = 256;
        io.tokens = 65;
        CHECK_ERR(ramp_layer_run(L, &io, C->st), RAMP_ERR_INVALID_ARGUMENT);
        io.tokens = 8;
        CHECK_ERR(ramp_layer_run(L, &io, NULL), RAMP_ERR_INVALID_ARGUMENT);
        io.x_scale = 0;
        CHECK_ERR(ramp_layer_run(L, &io, C->st), RAMP_ERR_INVALID_ARGUMENT);
        io.x_scale = 256; /* both kernels add float4s into out */
        io.out = 260;
        CHECK_ERR(ramp_layer_run(L, &io, C->st), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "16-byte aligned") != NULL);
        ramp_layer_info info;
        CHECK_OK(ramp_layer_get_info(L, &info));
        CHECK_EQ_INT(info.entries, NMENU);
        CHECK_EQ_INT(info.warning[0], 0);
        CHECK_EQ_INT(info.kernel, g_kernel);
        if (g_kernel == RAMP_KERNEL_V2) CHECK_EQ_INT(info.threads, 384);
        ramp_layer_free(L);
        L = NULL;
    }
    /* another SM count: a warning, not an error */
    ramp_plan other = plan;
    other.sms = gi.limits.sms + 2;
    CHECK_OK(ramp_layer_create(C->gpu, &other, &d, &L));
    if (L) {
        ramp_layer_info info;
        CHECK_OK(ramp_layer_get_info(L, &info));
        CHECK(strstr(info.warning, "SMs") != NULL);
        ramp_layer_free(L);
    }
    /* another GPU's name, the same SM count: a warning naming both */
    other = plan;
    snprintf(other.device, sizeof other.device, "NVIDIA H0");
    L = NULL;
    CHECK_OK(ramp_layer_create(C->gpu, &other, &d, &L));
    if (L) {
        ramp_layer_info info;
        CHECK_OK(ramp_layer_get_info(L, &info));
        CHECK(strstr(info.warning, "timings of NVIDIA H0, this GPU is ") != NULL);
        CHECK(strstr(info.warning, gi.limits.name) != NULL);
        ramp_layer_free(L);
    }
    free_weights(C, &RW);
}

/* Whether RAMP_LAYER_KINDS (env, NULL: every kind) names this kind. */
static int kind_on(const char *env, const char *kind) {
    int on = !env;
    for (const char *p = env; p && (p = strstr(p, kind)); p++)
        on |= (p == env || p[-1] == ',') && (p[strlen(kind)] == ',' || p[strlen(kind)] == 0);
    return on;
}

int main(void) {
    /* line by line, so that a run killed by its timeout (1,000 routings by
     * default take minutes) still shows how far it got (session 46 lost two
     * such logs to the buffer) */
    setvbuf(stdout, NULL, _IOLBF, 0);
    int ngpu = 0;
    if (ramp_gpu_count(&ngpu) != RAMP_OK || ngpu < 1) {
        printf("test_gpu_layer: no GPU (%s): skipped\n", ramp_last_error());
        return 77;
    }
    ctx C;
    memset(&C, 0, sizeof C);
    ramp_rng_seed(&C.rng, check_seed());
    C.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (C.threads < 1) C.threads = 1;
    const char *r_env = getenv("RAMP_LAYER_ROUTINGS");
    int routings = r_env && atoi(r_env) > 0 ? atoi(r_env) : 1000;
    const char *kern_env = getenv("RAMP_LAYER_KERNEL");
    if (kern_env && *kern_env) {
        ramp_kernel_version kv;
        if (ramp_kernel_version_parse(kern_env, &kv) != RAMP_OK) {
            fprintf(stderr, "test_gpu_layer: RAMP_LAYER_KERNEL=%s: %s\n", kern_env,
                    ramp_last_error());
            return 2;
        }
        g_kernel = kv;
        MENU = kv == RAMP_KERNEL_V2 ? MENU_V2 : MENU_V1;
    }
    const char *ent_env = getenv("RAMP_LAYER_ENTRIES");
    if (ent_env && *ent_env) {
        memset(g_entries, 0, sizeof g_entries);
        g_nentries = 0;
        for (const char *q = ent_env; *q;) {
            char *end;
            long i = strtol(q, &end, 10);
            if (end == q || i < 0 || i >= NMENU) {
                fprintf(stderr, "test_gpu_layer: RAMP_LAYER_ENTRIES=%s: indices 0..%d\n",
                        ent_env, NMENU - 1);
                return 2;
            }
            g_nentries += !g_entries[i];
            g_entries[i] = 1;
            q = *end == ',' ? end + 1 : end;
        }
    }
    const char *menu_env = getenv("RAMP_LAYER_MENU");
    if (menu_env && *menu_env) {
        int n = 0;
        for (const char *q = menu_env; *q && n < NMENU; n++) {
            size_t len = strcspn(q, ",");
            ramp_config c;
            snprintf(g_menu_text[n], sizeof g_menu_text[n], "%.*s", (int)len, q);
            if (len >= sizeof g_menu_text[n] || ramp_config_parse(g_menu_text[n], &c) != RAMP_OK) {
                fprintf(stderr, "test_gpu_layer: RAMP_LAYER_MENU entry %d '%.*s': %s\n", n,
                        (int)len, q, ramp_last_error());
                return 2;
            }
            g_menu[n] = g_menu_text[n];
            q += len + (q[len] == ',');
        }
        if (n != NMENU) {
            fprintf(stderr, "test_gpu_layer: RAMP_LAYER_MENU=%s: expected %d configurations\n",
                    menu_env, NMENU);
            return 2;
        }
        MENU = g_menu;
    }
    const char *red4_env = getenv("RAMP_LAYER_RED4");
    g_red4 = red4_env && atoi(red4_env) > 0;
    if (g_red4 && g_kernel != RAMP_KERNEL_V2) {
        fprintf(stderr, "test_gpu_layer: RAMP_LAYER_RED4=1 needs RAMP_LAYER_KERNEL=v2\n");
        return 2;
    }
    const char *units_env = getenv("RAMP_LAYER_UNITS");
    g_units = units_env && atoi(units_env) > 0;
    if (g_units && (g_kernel != RAMP_KERNEL_V2 || g_red4)) {
        fprintf(stderr, "test_gpu_layer: RAMP_LAYER_UNITS=1 needs RAMP_LAYER_KERNEL=v2, without "
                        "RAMP_LAYER_RED4\n");
        return 2;
    }
    const char *l2pf_env = getenv("RAMP_LAYER_L2PF");
    g_l2pf = l2pf_env ? atoi(l2pf_env) : 0;
    if (g_l2pf && (g_kernel != RAMP_KERNEL_V2 || g_l2pf < 0 || g_l2pf > RAMP_L2PF_MAX_MB)) {
        fprintf(stderr, "test_gpu_layer: RAMP_LAYER_L2PF=%s: 1..%d MB, with RAMP_LAYER_KERNEL=v2\n",
                l2pf_env, RAMP_L2PF_MAX_MB);
        return 2;
    }
    const char *pipe_env = getenv("RAMP_LAYER_BF16_PIPE");
    g_bf16_pipe = pipe_env && atoi(pipe_env) > 0;
    if (g_bf16_pipe && g_kernel != RAMP_KERNEL_V2) {
        fprintf(stderr, "test_gpu_layer: RAMP_LAYER_BF16_PIPE=1 needs RAMP_LAYER_KERNEL=v2\n");
        return 2;
    }
    const char *det_env = getenv("RAMP_LAYER_DET");
    g_det = det_env && atoi(det_env) > 0;
    if (g_det && g_kernel != RAMP_KERNEL_V2) {
        fprintf(stderr, "test_gpu_layer: RAMP_LAYER_DET=1 needs RAMP_LAYER_KERNEL=v2 (and a "
                        "RAMP_LAYER_MENU of two-phase entries)\n");
        return 2;
    }
    const char *serial_env = getenv("RAMP_LAYER_SERIAL");
    g_serial = serial_env ? atoi(serial_env) : 0;
    if (g_serial < 0 || g_serial > 3) {
        fprintf(stderr, "test_gpu_layer: RAMP_LAYER_SERIAL=%s: 0..3 (ramp_layer_desc.serial_launch)\n",
                serial_env);
        return 2;
    }
    if (g_serial) printf("test_gpu_layer: launch mode RAMP_LAYER_SERIAL=%d\n", g_serial);
    const char *split_env = getenv("RAMP_LAYER_POLY_SPLIT");
    g_split = split_env ? atoi(split_env) : 0;
    if (g_split && (g_kernel != RAMP_KERNEL_V2 || g_split < 0 || g_split > 5)) {
        fprintf(stderr, "test_gpu_layer: RAMP_LAYER_POLY_SPLIT=%s: 1..5, with "
                        "RAMP_LAYER_KERNEL=v2\n", split_env);
        return 2;
    }
    if (g_split) printf("test_gpu_layer: the polymorphic kernel split (RAMP_LAYER_POLY_SPLIT=%d)\n",
                        g_split);
    if (g_det) printf("test_gpu_layer: deterministic output (RAMP_LAYER_DET=1): per-slot rows, "
                      "the combining kernel, every run twice\n");
    if (g_bf16_pipe) printf("test_gpu_layer: BF16 wide entries with one stage's wgmmas in flight "
                            "(RAMP_LAYER_BF16_PIPE=1)\n");
    printf("test_gpu_layer: polymorphic kernel %s%s%s\n",
           ramp_kernel_version_name((ramp_kernel_version)g_kernel),
           g_red4 ? ", W2 in the float4-output order (RAMP_LAYER_RED4=1)"
           : g_units ? ", weights in stage units (RAMP_LAYER_UNITS=1)" : "",
           g_l2pf ? ", up to RAMP_LAYER_L2PF MB of the weights prefetched into L2 under the selection" : "");
    CHECK_OK(ramp_gpu_open(0, &C.gpu));
    if (!C.gpu) return check_finish("test_gpu_layer");
    CHECK_OK(ramp_stream_create(C.gpu, &C.st));
    { /* the refusals are of row-major layers (their checks' order) */
        const int units = g_units;
        g_units = 0;
        test_bad_input(&C);
        g_units = units;
    }
    static const char *kinds[] = {"fp8", "fp8x16", "bf16"};
    const char *k_env = getenv("RAMP_LAYER_KINDS");
    const char *s_env = getenv("RAMP_LAYER_SHAPES");
    int nshapes = s_env && atoi(s_env) >= 1 && atoi(s_env) <= 4 ? atoi(s_env) : 4;
    for (int kind = 0; kind < 3; kind++) {
        int on = kind_on(k_env, kinds[kind]);
        if (on && g_kernel == RAMP_KERNEL_V2 && (kind == 1 || (kind == 2 && g_red4))) {
            printf("polymorphic v2 %s: skipped (v2 runs no BF16 hidden states into an FP8 layer, "
                   "and BF16 layers with W2 unpermuted)\n", kinds[kind]);
            on = 0;
        }
        if (on) test_entries(&C, kind, nshapes);
    }
    test_layer_graph(&C, routings, 0);
    /* a five-term plan: the selection kernel's fifth FMA against the twin */
    test_layer_graph(&C, routings >= 4 ? routings / 4 : 1, 1);
    if (g_split != 5) /* (a switch node per run: not what a stack of layers captures) */
        test_layer_twice(&C, routings >= 10 ? routings / 10 : 1, 0);
    if (g_kernel == RAMP_KERNEL_V2 && g_split != 5) { /* (split 5 makes no size classes) */
        /* the kinds RAMP_LAYER_KINDS names (fp8x16 has no layer of its own
         * here), BF16 where every menu entry runs BF16 and W2 is row-major */
        int bf16_menu = !g_red4;
        for (int i = 0; i < NMENU && bf16_menu; i++) {
            ramp_moe_variant v;
            memset(&v, 0, sizeof v);
            bf16_menu = ramp_config_parse(MENU[i], &v.cfg) == RAMP_OK;
            v.geom = (ramp_geometry){E_LOC, TOPK, INTER, HIDDEN, 1};
            bf16_menu = bf16_menu && ramp_moe_v2_check(&v) == RAMP_OK;
        }
        if (kind_on(k_env, "fp8")) {
            test_size_classes(&C, routings >= 4 ? routings / 4 : 1, 0, 1);
            test_size_classes(&C, routings >= 4 ? routings / 4 : 1, 0, E_LOC);
        }
        if (kind_on(k_env, "bf16") && bf16_menu)
            test_size_classes(&C, routings >= 8 ? routings / 8 : 1, 1, 1);
        else if (kind_on(k_env, "bf16"))
            printf("size classes, BF16: skipped (a menu entry kernel v2 runs in FP8 only, or "
                   "RAMP_LAYER_RED4)\n");
    }
    ramp_stream_destroy(C.gpu, C.st);
    ramp_gpu_close(C.gpu);
    return check_finish("test_gpu_layer");
}
