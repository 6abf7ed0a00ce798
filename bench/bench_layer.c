/*
 * bench_layer.c - the MoE layer (selection + polymorphic kernel, one
 * captured CUDA graph) against what it replaces, on the same loads:
 *
 *   ramp        the layer's graph: selection kernel + polymorphic kernel
 *               (programmatic dependent launch, ramp_layer_desc's
 *               automatic mode; ramp-serial: without; menus with two-phase
 *               entries: ramp-pdl1 the first kernel with it, their second
 *               kernel after the first ends, ramp-pdl2 both with it),
 *               captured for the batch's size (grid sized for it), and
 *               ramp-anysize: one graph for every size (token count read
 *               on device, grid sized for max_tokens); select: a graph of
 *               the layer's selection kernel alone (a selector built from
 *               the same plan), so that ramp - select - poly[chosen] is
 *               what the two launches cost together beyond their parts
 *   alone       the chosen entry compiled alone, tokens grouped beforehand,
 *               grid = the load's exact tile count (the target: ramp <=
 *               alone + 2 us)
 *   vllm        a vLLM-style layer on our kernel: a graph of the group-and-
 *               pad kernel for one tile size and the v1 kernel of the
 *               configuration vLLM's batch-size table picks (tuned on the
 *               dataset's uniform batches), grid sized for the batch
 *   poly[i] / alone[i]   every menu entry forced inside the polymorphic
 *               kernel (its grid as in the layer) and alone (exact grid):
 *               the polymorphic overhead (target: median within 1%); also
 *               alone-cap (alone, grid sized for the batch's bound) and poly-sm,
 *               poly-w1, poly-w8 (the polymorphic kernel's grid capped at
 *               one block per SM, 1 and 8 waves instead of RAMP_POLY_WAVES);
 *               v2: poly-pdl (forced, both kernels with PDL as in the
 *               layer), poly-k1 (the first kernel only, no phase-2 launch),
 *               poly-d1 (the phase-2 kernel with one block), alone+d (the
 *               entry alone, then the phase-2 kernel) and poly-exact (the
 *               grid the entry alone runs), poly-k1+sel / alone+sel (then the
 *               selection kernel: whether the next kernel pays)
 *   read        the measured floor (kernels/read_floor.cuh): a kernel that
 *               only reads the load's active experts' weights and scales
 *               (what the layer must stream), alone; select+read: after the
 *               layer's selection kernel, with programmatic dependent
 *               launch, as the layer runs its expert kernel; -bulk: the
 *               same read by the TMA unit's bulk copies. Before the loads,
 *               both kernels on 0 MiB .. 1 GiB, and the bulk one with
 *               each block on a contiguous region of its own and with
 *               requests of 16-64 KB, 2-12 in flight a block
 *               (OUTDIR/read-sweep.csv)
 *
 * --kernel v2: the layer's polymorphic kernel holds Hopper kernel v2 entries
 * (kernels/moe_poly_v2.cuh); "alone" is then each entry's standalone v2
 * kernel (moe_v2.cuh, grid min(tiles, SMs)); the v1 layer of the same plan
 * is timed beside it as ramp-v1 (its batch-size graph); vllm stays the
 * vLLM-style layer on the v1 kernel. A plan entry v2 cannot run
 * (persistent, grouped, split-K) is replaced by its plain form for the v2
 * layer (another stage count where that would repeat an entry), printed;
 * the plan's coefficients are kept. No poly-sm / -w1 / -w8 rows for v2 (its
 * grid is one wave at most).
 *
 * Loads: batches of --tokens (default 64..4096) tokens routed over all E
 * experts, uniformly and Zipf-skewed (moe_data.h), seen by GPU 0 of the
 * plan's layout. Every timing: L2 evicted by a 512 MiB write, then the
 * launch or replay between two events; median of --reps.
 * The layer's variants (rows ramp-pdl1/-pdl2 and those of --l2pf,
 * --bf16-pipe, --wide, --det, --split, --top-wait, --units, --one-shape,
 * --one-menu, --jit-ab) are each timed in alternation with the layer's graph
 * (time_pair), and the layer's time from that alternation is the row
 * ramp@<variant>: an A/B in which neither runs first. ramp-units-jit (--jit-ab
 * with --units 1) alternates with the stage-unit layer instead
 * (ramp-units@ramp-units-jit).
 *
 * --bf16 1: a BF16 layer served the plan's menu (a stand-in, see USAGE).
 *
 * Writes OUTDIR/layer-<model>-<layout>.csv (-v2.csv with --kernel v2, -bf16 with --bf16 1), and (--loads-json) the
 * per-expert counts of every load for bench/peer_torch.py.
 */
#include "internal.h"
#include "bench_args.h"
#include "bench_read.h"
#include "moe_poly.h"
#include "moe_v2.h"
#include "select_cpu.h"

#include "bench_timeline.h" /* --timeline */

#include "../tests/moe_data.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define DIE(...)                                                  \
    do {                                                          \
        fprintf(stderr, "bench_layer: " __VA_ARGS__);             \
        fprintf(stderr, " (%s)\n", ramp_last_error());            \
        exit(1);                                                  \
    } while (0)
#define TRY(expr)                                                 \
    do {                                                          \
        if ((expr) != RAMP_OK) DIE("%s:%d: %s", __FILE__, __LINE__, #expr); \
    } while (0)

static const char *USAGE =
    "usage: bench_layer --plan PLAN.json --dataset TIMES.safetensors --out-dir DIR\n"
    "                   [--tokens 64,128,...] [--reps N] [--loads-json FILE] [--seed S]\n"
    "                   [--kernel v1|v2] [--red4 0|1] [--bf16 0|1] [--l2pf MB]\n"
    "                   [--bf16-pipe 0|1] [--flush write|read] [--wide tx,mc,mctx]\n"
    "                   [--det 0|1] [--split 1,2,3,4,5] [--top-wait 0|1] [--units 0|1]\n"
    "                   [--timeline 0|1] [--one-shape 0|1] [--one-menu 0|1] [--jit-ab DEFS]\n"
    "\n"
    "Times RaMP's layer (selection + polymorphic kernel in one CUDA graph)\n"
    "against the chosen entry alone, a vLLM-style layer (batch-size table from\n"
    "the dataset's uniform batches, group-and-pad + v1 kernel), and every menu\n"
    "entry inside and outside the polymorphic kernel. GPU 0 of the plan's\n"
    "layout; uniform and Zipf-skewed routings. Needs a GPU.\n"
    "--kernel v2: the layer on the Hopper kernel v2 (entries alone: v2), with\n"
    "the v1 layer of the same plan timed beside it (ramp-v1).\n"
    "--red4 1 (with --kernel v2): every v2 path (the layer, its entries forced\n"
    "and alone) reads W2 in the float4-output row order and adds its output as\n"
    "float4s (ramp_layer_desc.w2_red4); the v1 and vLLM-style paths keep the\n"
    "row-major W2.\n"
    "--bf16 1: every path on a BF16 layer (bf16 weights and hidden states), the\n"
    "plan's menu and coefficients kept: an FP8 plan served to a BF16 layer, a\n"
    "stand-in until a BF16 dataset is measured (its choices rank by FP8 times);\n"
    "the vLLM-style table keeps the configurations v1 runs in BF16.\n"
    "--l2pf MB (with --kernel v2): also the layer with ramp_layer_desc.l2_prefetch_mb\n"
    "= MB (up to MB of the local weights prefetched into L2 under the selection), timed\n"
    "beside it in the same graph kind (impl ramp-l2pf).\n"
    "--bf16-pipe 1 (with --kernel v2 --bf16 1): also the layer whose wide entries\n"
    "keep one stage's wgmmas in flight (ramp_layer_desc.bf16_pipe; impl ramp-pipe).\n"
    "--wide LIST (with --kernel v2): also the layer whose wide entries (rows 128,\n"
    "no split-K) take token rows by TMA (tx: \".tx\", impl ramp-tx), weights by\n"
    "TMA multicast (mc: \".mc\", ramp-mc) or both (mctx: ramp-mctx); same plan,\n"
    "same choices, so each row is an A/B of one option on the same entry.\n"
    "--det 1 (with --kernel v2, a plan of two-phase entries: `ramp fit\n"
    "--deterministic`): also the layer with deterministic output\n"
    "(ramp_layer_desc.deterministic: per-slot rows and the combining kernel\n"
    "instead of reductions; impl ramp-det), same plan, same choices; its output\n"
    "is checked against the reductions' (1e-4 of the largest |out|) and two of\n"
    "its replays bit for bit: exit 1 if not.\n"
    "--split LIST (with --kernel v2, a menu of fused and two-phase entries): also\n"
    "the layer whose polymorphic kernel is split (ramp_layer_desc.poly_split 1:\n"
    "phase 1 first, then fused entries and phase 2; 2: fused, phase 1, phase 2 in\n"
    "three kernels; 3: by cluster size; 4: by tile width; 5: a kernel per entry,\n"
    "the chosen one's run by a graph switch node; impl ramp-split1..5),\n"
    "same plan, same choices; its output is checked against the plain layer's\n"
    "(1e-4 of the largest |out|): exit 1 if not.\n"
    "--top-wait 1 (with --kernel v2, a menu with a two-phase entry): also the\n"
    "layer whose phase-2 kernel waits for phase 1 at its top, as before session\n"
    "25 (ramp_layer_desc.poly_top_wait 1), in the default launch mode (impl\n"
    "ramp-topwait) and with both kernels by programmatic dependent launch\n"
    "(ramp-pdl2-topwait, beside ramp-pdl2); outputs checked as --split's.\n"
    "--units 1 (with --kernel v2): also the layer on weights in stage units\n"
    "(ramp_layer_desc.weight_units, packed by ramp_weights_to_units; impl\n"
    "ramp-units), on the plan's menu, and with a two-phase entry in the menu\n"
    "also with both kernels by PDL (ramp-units-pdl2, as ramp-pdl2); outputs\n"
    "checked against the layer's as --split's: exit 1 if not.\n"
    "--jit-ab DEFS: also the layer whose kernels are compiled with these extra\n"
    "defines (RAMP_JIT_DEFINES during its creation, e.g. RAMP_FAST_SILU=0; impl\n"
    "ramp-jit), an A/B of a kernel's compile-time option; output checked as\n"
    "--split's. With --units 1 also the stage-unit layer so compiled (impl\n"
    "ramp-units-jit), timed in alternation with ramp-units. Not with --timeline.\n"
    "--one-shape 1: also the layer whose selection kernel runs in the one launch\n"
    "shape sized for max_tokens, as before session 33 (ramp_layer_desc.\n"
    "select_one_shape 1; impl ramp-oneshape); output checked as --split's.\n"
    "--one-menu 1 (with --kernel v2): also the layer whose one polymorphic kernel\n"
    "serves every batch, as before session 34 (ramp_layer_desc.one_menu 1; impl\n"
    "ramp-onemenu, and ramp-units-onemenu with --units 1), against the layer's\n"
    "kernels per batch-size class (printed at creation; where it has none, no\n"
    "rows); output checked as --split's.\n"
    "--timeline 1 (with --kernel v2): every kernel is compiled with\n"
    "kernels/timeline.cuh's %globaltimer stamps (RAMP_JIT_DEFINES), and per load\n"
    "the layer (with --units 1 the stage-unit layer too, \"units\"), its selection\n"
    "alone, the chosen entry alone and forced in the\n"
    "polymorphic kernel, and either followed by the selection run three more\n"
    "times each with them on: when every\n"
    "block of each kernel starts, passes its wait and ends, relative to the\n"
    "first stamp (log lines `timeline`; every block in OUTDIR/timeline.csv).\n"
    "Diagnostic only: the stamps change the kernels' code.\n"
    "--flush: how L2 is emptied before each timing: write (the default) a 512 MiB\n"
    "buffer, which leaves L2 full of dirty lines that drain to HBM while the timed\n"
    "work reads; read: the TMA unit reads it (kernels/read_floor.cuh), leaving L2\n"
    "clean. The CSV header records it.\n";

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    ramp_gpu *gpu;
    ramp_stream st;
    ramp_devptr flush;
    size_t flush_bytes;
    ramp_event *e0, *e1;
    int reps;
    double *samples;
    void *flush_graph; /* --flush read: a graph reading the flush buffer */
} timer;

typedef ramp_status (*launch_fn)(void *arg, ramp_stream st);

typedef struct {
    double med, p10, p90;
} stat3;

/* One timed launch after an L2-evicting write or read (r: the rep, which
 * the write's pattern varies with), in us. */
static double timed_once(timer *T, launch_fn fn, void *arg, int r) {
    if (T->flush_graph) TRY(ramp_graph_replay(T->flush_graph, T->st));
    else TRY(ramp_gpu_fill32_async(T->gpu, T->flush, (uint32_t)r, T->flush_bytes / 4, T->st));
    TRY(ramp_event_record(T->e0, T->st));
    TRY(fn(arg, T->st));
    TRY(ramp_event_record(T->e1, T->st));
    double us;
    TRY(ramp_event_elapsed_us(T->e0, T->e1, &us));
    return us;
}

static stat3 stat_of(double *x, int n) {
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return (stat3){x[n / 2], x[n / 10], x[(n * 9) / 10]};
}

/* Median of reps launches, each after an L2-evicting write or read (3
 * warm-ups). */
static stat3 time_it(timer *T, launch_fn fn, void *arg) {
    int n = 0;
    for (int r = -3; r < T->reps; r++) {
        const double us = timed_once(T, fn, arg, r);
        if (r >= 0) T->samples[n++] = us;
    }
    return stat_of(T->samples, n);
}

static ramp_status replay(void *g, ramp_stream st) { return ramp_graph_replay(g, st); }

/* Two graphs timed in alternation, the order swapped every rep (A B, B A,
 * ...), each run after its own flush: an A/B of one option. Timed one after
 * the other instead, the later graph read 0.3-2.6 us faster on loads where
 * both do the same work (sessions 25 and 33), which is the size of what
 * these A/Bs measure. */
static void time_pair(timer *T, ramp_graph *a, ramp_graph *b, stat3 *sa, stat3 *sb) {
    double *xa = malloc(sizeof(double) * (size_t)(T->reps > 0 ? T->reps : 1));
    if (!xa) DIE("out of memory");
    int n = 0;
    for (int r = -3; r < T->reps; r++)
        for (int j = 0; j < 2; j++) {
            ramp_graph *g = (j == 0) == ((r & 1) == 0) ? a : b;
            const double us = timed_once(T, replay, g, r);
            if (r < 0) continue;
            if (g == a) xa[n] = us;
            else T->samples[n] = us;
            if (j == 1) n++;
        }
    *sa = stat_of(xa, n);
    *sb = stat_of(T->samples, n);
    free(xa);
}

/* Three runs of fn, each after time_it's flush with the stamps zeroed: per
 * kernel, when its blocks start, pass the wait and end (min/median/max over
 * the blocks, us after the run's first stamp); every block to the CSV. */
static void tl_run(timer *T, tl_state *tl, launch_fn fn, void *arg, const char *what,
                   int tokens, const char *routing, const ramp_config *c) {
    char cfg[64] = "-"; /* the selection alone: no entry */
    if (c) ramp_config_name(c, cfg, sizeof cfg);
    for (int run = 0; run < 3; run++) {
        TRY(tl_zero(tl, T->gpu, T->st));
        if (T->flush_graph) TRY(ramp_graph_replay(T->flush_graph, T->st));
        else TRY(ramp_gpu_fill32_async(T->gpu, T->flush, (uint32_t)run, T->flush_bytes / 4, T->st));
        TRY(fn(arg, T->st));
        TRY(ramp_stream_sync(T->gpu, T->st));
        TRY(tl_report(tl, T->gpu, what, tokens, routing, cfg, run));
    }
}

/* A variant layer's output against the plain layer's on the same batch (out
 * zeroed, one replay each): the same sums in another order, so within 1e-4
 * of the largest |out| (f32 reassociation); --det 1 (bits = 1): two of its
 * replays the same bits too. Returns 1 when a check fails. */
static int out_agree(timer *T, ramp_graph *g_ref, ramp_graph *g_var, ramp_devptr out, size_t n,
                     const char *name, int bits) {
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    if (!a || !b || !c) DIE("det check: out of memory for %zu floats", n);
    float *dst[3] = {a, b, c};
    ramp_graph *run[3] = {g_ref, g_var, g_var};
    for (int r = 0; r < 3; r++) {
        TRY(ramp_gpu_fill32_async(T->gpu, out, 0u, n, T->st));
        TRY(ramp_graph_replay(run[r], T->st));
        TRY(ramp_stream_sync(T->gpu, T->st));
        TRY(ramp_gpu_download(T->gpu, dst[r], out, n * sizeof *a));
    }
    double amax = 0, dmax = 0;
    size_t differ = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (fabs(a[i]) > amax) amax = fabs(a[i]);
        differ += memcmp(&b[i], &c[i], sizeof b[i]) != 0;
        if (!isfinite(a[i]) || !isfinite(b[i])) bad++;
    }
    for (size_t i = 0; i < n; i++) {
        const double e = fabs((double)a[i] - b[i]);
        if (e > dmax) dmax = e;
        if (e > 1e-4 * amax) bad++;
    }
    printf("       %s check: %zu elements, max |%s - ramp| %.3g (max |ramp| %.3g), %zu beyond "
           "1e-4 of it or not finite, %zu differ between two of its replays\n",
           name, n, name, dmax, amax, bad, differ);
    free(a);
    free(b);
    free(c);
    return bad || (bits && differ) || amax == 0;
}

/* Where the block scheduler puts blocks 0..n-1 when two fit per SM (100 KB
 * of shared memory each): prints how many SMs the first `sms` blocks cover
 * and how often blocks 2i and 2i+1 share one, the evidence for the
 * polymorphic kernel's first-tile order (kernels/moe_poly.cuh). */
static const char *PROBE_SRC =
    "extern \"C\" __global__ void ramp_probe_smid(int *out) {\n"
    "  extern __shared__ int s[];\n"
    "  unsigned id; asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(id));\n"
    "  unsigned long long t0 = clock64();\n"
    "  while (clock64() - t0 < 40000) { s[threadIdx.x] = (int)id; }\n"
    "  if (threadIdx.x == 0) out[blockIdx.x] = (int)id + s[0] * 0;\n"
    "}\n";

static void probe_placement(ramp_gpu *gpu, ramp_stream st, int sms) {
    ramp_jit_request rq;
    memset(&rq, 0, sizeof rq);
    rq.name = "probe-smid";
    rq.source = PROBE_SRC;
    ramp_jit_result *r = NULL;
    ramp_module *m = NULL;
    ramp_kernel *k = NULL;
    ramp_devptr out = 0;
    const int n = 2 * sms, smem = 100 * 1024;
    int *h = malloc(sizeof(int) * (size_t)n);
    if (h && ramp_jit_compile(&rq, &r) == RAMP_OK &&
        ramp_module_load(gpu, r->cubin, r->cubin_size, &m) == RAMP_OK &&
        ramp_module_kernel(m, "ramp_probe_smid", smem, &k) == RAMP_OK &&
        ramp_gpu_alloc(gpu, sizeof(int) * (size_t)n, &out) == RAMP_OK) {
        unsigned grid[3] = {(unsigned)n, 1, 1}, block[3] = {128, 1, 1};
        void *args[1] = {&out};
        if (ramp_kernel_launch(k, grid, block, smem, st, args) == RAMP_OK &&
            ramp_stream_sync(gpu, st) == RAMP_OK &&
            ramp_gpu_download(gpu, h, out, sizeof(int) * (size_t)n) == RAMP_OK) {
            int seen[1024] = {0}, distinct = 0, pairs = 0;
            for (int b = 0; b < sms; b++)
                if (h[b] >= 0 && h[b] < 1024 && !seen[h[b]]++) distinct++;
            for (int b = 0; b + 1 < n; b += 2) pairs += h[b] == h[b + 1];
            printf("block placement (2 blocks/SM, grid %d): blocks 0..%d on %d distinct SMs; "
                   "blocks 2i, 2i+1 on the same SM for %d of %d pairs; first 8: %d %d %d %d %d %d %d %d\n",
                   n, sms - 1, distinct, pairs, n / 2, h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]);
        }
    }
    ramp_gpu_free(gpu, out);
    ramp_module_free(m);
    ramp_jit_result_free(r);
    free(h);
}

typedef struct {
    void *k; /* ramp_moe_kernel, ramp_moe_v2_kernel or ramp_moe_poly */
    int poly, v2;
    int mode; /* the polymorphic kernel's ramp_moe_poly_launch_mode bits */
    ramp_moe_params p;
    ramp_devptr choice, sched; /* the polymorphic kernel's */
} kernel_call;

static ramp_status launch_call(void *arg, ramp_stream st) {
    kernel_call *c = arg;
    return c->poly ? ramp_moe_poly_launch_mode(c->k, &c->p, c->choice, c->sched, st, c->mode)
           : c->v2 ? ramp_moe_v2_launch(c->k, &c->p, st)
                   : ramp_moe_kernel_launch(c->k, &c->p, st);
}

static ramp_status launch_two(void *arg, ramp_stream st) {
    kernel_call *c = arg;
    ramp_status s = launch_call(&c[0], st);
    return s == RAMP_OK ? launch_call(&c[1], st) : s;
}

typedef struct {
    kernel_call c;
    ramp_selector *sel;
    ramp_devptr ids;
    int tokens;
} sel_after;
static ramp_status launch_then_select(void *arg, ramp_stream st) {
    sel_after *a = arg;
    ramp_status s = launch_call(&a->c, st);
    return s == RAMP_OK ? ramp_selector_launch(a->sel, a->ids, a->tokens, 0, st) : s;
}

/* Compiles variants on threads so that the later creates hit the cache. */
typedef struct {
    ramp_moe_variant v;
    const ramp_poly_desc *poly;
    int v2;
    ramp_moe_v2_opts o; /* v2 */
} cjob;
static void *compile_one(void *arg) {
    cjob *j = arg;
    ramp_jit_result *r = NULL;
    if (j->poly) ramp_moe_poly_compile(j->poly, &r);
    else if (j->v2) ramp_moe_v2_compile_opts(&j->v, &j->o, &r);
    else ramp_moe_v1_compile(&j->v, &r);
    ramp_jit_result_free(r);
    return NULL;
}

static ramp_status read_floor_replay(void *f, ramp_stream st) { return ramp_graph_replay(f, st); }

/* Reorders f's pieces (whole, equal ones) so that block b of a grid of g
 * reads pieces b q .. b q + q - 1 in turn (q = n / g; the last n % g
 * dropped, *bytes reduced to match). */
static void block_order(read_floor *f, int g, size_t *bytes) {
    const int q = f->n / g;
    uint64_t *tmp = malloc(sizeof(uint64_t) * 2 * (size_t)q * g);
    if (!tmp) DIE("out of memory");
    for (int b = 0; b < g; b++)
        for (int i = 0; i < q; i++) {
            tmp[2 * (b + (size_t)i * g)] = f->host[2 * ((size_t)b * q + i)];
            tmp[2 * (b + (size_t)i * g) + 1] = f->host[2 * ((size_t)b * q + i) + 1];
        }
    memcpy(f->host, tmp, sizeof(uint64_t) * 2 * (size_t)q * g);
    free(tmp);
    f->n = q * g;
    *bytes = (size_t)f->n * (size_t)f->piece;
}

/* The read floor's kernel on contiguous ranges of 4 MiB .. 1 GiB, in the
 * layer's harness (flushed L2, one graph per size, median of reps): that
 * its rate on large ranges is the copy rate's (the kernel is not the
 * limit), and its fixed cost, the intercept of t = a + bytes / rate fit on
 * the sizes up to 64 MiB, where the layers' weights lie. Writes
 * OUTDIR/read-sweep.csv and prints both. */
static void read_sweep(read_floor *f0, timer *T, const char *outdir) {
    ramp_devptr buf = 0;
    const size_t max = (size_t)1 << 30;
    TRY(ramp_gpu_alloc(T->gpu, max, &buf));
    TRY(ramp_gpu_fill32_async(T->gpu, buf, 7, max / 4, T->st));
    char path[1024];
    snprintf(path, sizeof path, "%s/read-sweep.csv", outdir);
    FILE *out = fopen(path, "w");
    if (!out) DIE("cannot write %s", path);
    fprintf(out, "# bench_layer read sweep: kernels/read_floor.cuh on one contiguous range, flushed L2, "
                 "graph replay, median of %d, flush=%s; 0 MiB: the empty kernel\n"
                 "kernel,mib,us_median,us_p10,us_p90,tb_s\n",
            T->reps, T->flush_graph ? "read" : "write");
    /* bulk-blocked: the bulk kernel with the pieces ordered so that each block
     * reads one contiguous region (kernel v2's blocks each stream their own
     * rows), where the others sweep the range together (block b takes
     * pieces b, b + grid, ...). bulkNk-sS: the bulk kernel with requests of
     * N KB and S of them in flight a block (kernel v2 streams 32 KB stages as
     * two 16 KB boxes, 4 stages deep: 128 KB; the read floor 3 x 64 KB). */
    static const struct {
        const char *name;
        int bulk, blocked, piece, stages;
    } kinds[] = {{"loads", 0, 0, READ_PIECE, 3},    {"bulk", 1, 0, READ_PIECE, 3},
                 {"bulk-blocked", 1, 1, READ_PIECE, 3}, {"bulk16k-s8", 1, 0, 16384, 8},
                 {"bulk16k-s12", 1, 0, 16384, 12},   {"bulk32k-s4", 1, 0, 32768, 4},
                 {"bulk64k-s2", 1, 0, 65536, 2}};
    ramp_gpu_info gi;
    TRY(ramp_gpu_get_info(T->gpu, &gi));
    for (int kind = 0; kind < (int)(sizeof kinds / sizeof kinds[0]); kind++) {
        const int bulk = kinds[kind].bulk;
        read_floor own, *f = f0;
        if (kinds[kind].piece != READ_PIECE || kinds[kind].stages != 3) {
            TRY(read_floor_init_ring(&own, T->gpu, max / (size_t)kinds[kind].piece + 1,
                                     kinds[kind].piece, kinds[kind].stages));
            f = &own;
        }
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        int n = 0;
        printf("read sweep, %s (the read floor's kernel on contiguous ranges):", kinds[kind].name);
        for (size_t mib = 0; mib <= 1024; mib = mib ? 2 * mib : 4) {
            f->n = 0;
            if (mib) TRY(read_floor_add(f, buf, mib << 20));
            size_t bytes = mib << 20;
            if (kinds[kind].blocked && f->n > gi.limits.sms) block_order(f, gi.limits.sms, &bytes);
            TRY(read_floor_upload(f, T->gpu));
            ramp_graph *G = NULL;
            TRY(ramp_graph_capture_begin(T->gpu, T->st));
            TRY(read_floor_launch(f, T->gpu, T->st, 0, bulk));
            TRY(ramp_graph_capture_end(T->gpu, T->st, &G));
            stat3 s = time_it(T, read_floor_replay, G);
            ramp_graph_free(G);
            const double tb = (double)bytes / (s.med * 1e-6) / 1e12;
            fprintf(out, "%s,%zu,%.3f,%.3f,%.3f,%.3f\n", kinds[kind].name, mib, s.med, s.p10,
                    s.p90, tb);
            printf(" %zu MiB %.2f us (%.2f TB/s);", mib, s.med, tb);
            if (mib >= 4 && mib <= 64) {
                const double x = (double)(mib << 20) / 1e12; /* TB: slope in us per TB */
                sx += x; sy += s.med; sxx += x * x; sxy += x * s.med; n++;
            }
        }
        const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx), a = (sy - slope * sx) / n;
        printf("\n  fit on 4-64 MiB, %s: t = %.2f us + bytes at %.2f TB/s\n", kinds[kind].name, a,
               1e6 / slope);
        if (f == &own) read_floor_free(&own, T->gpu);
    }
    fclose(out);
    ramp_gpu_free(T->gpu, buf);
}

/* The v2 layer's menu: each entry v2 cannot run replaced by its plain form
 * (persistent and grouped off, split-K 1), with another stage count of the
 * configuration space (2..4) where that would repeat an entry. */
static void v2_menu_of(ramp_plan *p) {
    for (int i = 0; i < p->count; i++) {
        ramp_moe_variant v;
        memset(&v, 0, sizeof v);
        v.cfg = p->configs[i];
        v.geom = p->geom;
        if (ramp_moe_v2_check(&v) == RAMP_OK) continue;
        char was[64], now[64];
        ramp_config_name(&p->configs[i], was, sizeof was);
        ramp_config c = p->configs[i];
        c.persistent = 0;
        c.grouped = 0;
        c.splitk = 1;
        const int tries[4] = {c.stages, 4, 3, 2};
        int ok = 0;
        for (int t = 0; t < 4 && !ok; t++) {
            c.stages = tries[t];
            v.cfg = c;
            ok = ramp_moe_v2_check(&v) == RAMP_OK;
            for (int j = 0; ok && j < p->count; j++)
                ok = j == i || !ramp_config_equal(&c, &p->configs[j]);
        }
        if (!ok) DIE("menu entry %d (%s): no plain configuration kernel v2 runs in its place", i, was);
        p->configs[i] = c;
        ramp_config_name(&c, now, sizeof now);
        printf("v2 layer: menu entry %d %s -> %s\n", i, was, now);
    }
}

/* A vLLM-style layer for one configuration: group-only selection + v1. */
typedef struct {
    ramp_config cfg;
    ramp_selector *sel;
    ramp_moe_kernel *k;
    ramp_graph *g;
} vllm_path;

int main(int argc, char **argv) {
    const char *plan_path = NULL, *data_path = NULL, *outdir = NULL, *loads_json = NULL;
    const char *tokens_arg = "64,128,256,512,1024,2048,4096";
    int reps = 30;
    unsigned long long seed = 1;
    ramp_kernel_version kernel = RAMP_KERNEL_V1;
    int red4 = 0, bf16 = 0, l2pf = 0, flush_read = 0, bf16_pipe = 0;
    int wide_mask = 0; /* --wide: bit 0 tx, 1 mc, 2 mctx */
    int det = 0;
    int split_mask = 0; /* --split: bit q poly_split q + 1 */
    int top_wait = 0;   /* --top-wait 1: the layer with poly_top_wait 1 beside */
    int timeline = 0;   /* --timeline 1: kernels/timeline.cuh's stamps */
    int units = 0;      /* --units 1: the layer on weights in stage units beside */
    int one_shape = 0;  /* --one-shape 1: the layer with select_one_shape 1 beside */
    int one_menu = 0;   /* --one-menu 1: the layer with one_menu 1 beside */
    const char *jit_ab = NULL; /* --jit-ab DEFS: the layer compiled with these defines beside */
    for (int i = 1; i < argc; i += 2) { /* every option but --help takes a value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(USAGE, stdout);
            return 0;
        }
        static const char *const known[] = {"--plan", "--dataset", "--out-dir", "--tokens",
                                            "--reps", "--loads-json", "--seed", "--kernel",
                                            "--red4", "--bf16", "--l2pf", "--flush",
                                            "--bf16-pipe", "--wide", "--det", "--split",
                                            "--top-wait", "--timeline", "--units", "--one-shape",
                                            "--one-menu", "--jit-ab"};
        const int rc = bench_option("bench_layer", USAGE, a, v, known, sizeof known / sizeof *known);
        if (rc >= 0) return rc;
        if (!strcmp(a, "--plan")) plan_path = v;
        else if (!strcmp(a, "--dataset")) data_path = v;
        else if (!strcmp(a, "--out-dir")) outdir = v;
        else if (!strcmp(a, "--tokens")) tokens_arg = v;
        else if (!strcmp(a, "--reps")) reps = atoi(v);
        else if (!strcmp(a, "--loads-json")) loads_json = v;
        else if (!strcmp(a, "--seed")) seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--red4")) {
            if (strcmp(v, "0") && strcmp(v, "1")) {
                fprintf(stderr, "bench_layer: --red4 %s: 0 or 1\n%s", v, USAGE);
                return 2;
            }
            red4 = v[0] == '1';
        }
        else if (!strcmp(a, "--units")) {
            if (strcmp(v, "0") && strcmp(v, "1")) {
                fprintf(stderr, "bench_layer: --units %s: 0 or 1\n%s", v, USAGE);
                return 2;
            }
            units = v[0] == '1';
        }
        else if (!strcmp(a, "--jit-ab")) {
            if (!v || !*v || strlen(v) > 400) {
                fprintf(stderr, "bench_layer: --jit-ab needs defines (e.g. RAMP_FAST_SILU=0), "
                                "at most 400 characters\n%s", USAGE);
                return 2;
            }
            jit_ab = v;
        }
        else if (!strcmp(a, "--one-menu")) {
            if (strcmp(v, "0") && strcmp(v, "1")) {
                fprintf(stderr, "bench_layer: --one-menu %s: 0 or 1\n%s", v, USAGE);
                return 2;
            }
            one_menu = v[0] == '1';
        }
        else if (!strcmp(a, "--one-shape")) {
            if (strcmp(v, "0") && strcmp(v, "1")) {
                fprintf(stderr, "bench_layer: --one-shape %s: 0 or 1\n%s", v, USAGE);
                return 2;
            }
            one_shape = v[0] == '1';
        }
        else if (!strcmp(a, "--timeline")) {
            if (strcmp(v, "0") && strcmp(v, "1")) {
                fprintf(stderr, "bench_layer: --timeline %s: 0 or 1\n%s", v, USAGE);
                return 2;
            }
            timeline = v[0] == '1';
        }
        else if (!strcmp(a, "--top-wait")) {
            if (strcmp(v, "0") && strcmp(v, "1")) {
                fprintf(stderr, "bench_layer: --top-wait %s: 0 or 1\n%s", v, USAGE);
                return 2;
            }
            top_wait = v[0] == '1';
        }
        else if (!strcmp(a, "--flush")) {
            if (strcmp(v, "write") && strcmp(v, "read")) {
                fprintf(stderr, "bench_layer: --flush %s: write or read\n%s", v, USAGE);
                return 2;
            }
            flush_read = v[0] == 'r';
        }
        else if (!strcmp(a, "--l2pf")) {
            char *end = NULL;
            long mb = strtol(v, &end, 10);
            if (end == v || *end || mb < 1 || mb > RAMP_L2PF_MAX_MB) {
                fprintf(stderr, "bench_layer: --l2pf %s: MB, 1..%d\n%s", v, RAMP_L2PF_MAX_MB,
                        USAGE);
                return 2;
            }
            l2pf = (int)mb;
        }
        else if (!strcmp(a, "--wide")) {
            static const char *const names[3] = {"tx", "mc", "mctx"};
            for (const char *q = v; *q;) {
                size_t len = strcspn(q, ",");
                int hit = -1;
                for (int j = 0; j < 3; j++)
                    if (len == strlen(names[j]) && !strncmp(q, names[j], len)) hit = j;
                if (hit < 0) {
                    fprintf(stderr, "bench_layer: --wide %s: a comma list of tx, mc, mctx\n%s", v,
                            USAGE);
                    return 2;
                }
                wide_mask |= 1 << hit;
                q += len + (q[len] == ',');
            }
        }
        else if (!strcmp(a, "--split")) {
            for (const char *q = v; *q;) {
                size_t len = strcspn(q, ",");
                if (len != 1 || q[0] < '1' || q[0] > '5') {
                    fprintf(stderr, "bench_layer: --split %s: a comma list of 1..5\n%s", v, USAGE);
                    return 2;
                }
                split_mask |= 1 << (q[0] - '1');
                q += len + (q[len] == ',');
            }
        }
        else if (!strcmp(a, "--det")) {
            if (strcmp(v, "0") && strcmp(v, "1")) {
                fprintf(stderr, "bench_layer: --det %s: 0 or 1\n%s", v, USAGE);
                return 2;
            }
            det = v[0] == '1';
        }
        else if (!strcmp(a, "--bf16-pipe")) {
            if (strcmp(v, "0") && strcmp(v, "1")) {
                fprintf(stderr, "bench_layer: --bf16-pipe %s: 0 or 1\n%s", v, USAGE);
                return 2;
            }
            bf16_pipe = v[0] == '1';
        }
        else if (!strcmp(a, "--bf16")) {
            if (strcmp(v, "0") && strcmp(v, "1")) {
                fprintf(stderr, "bench_layer: --bf16 %s: 0 or 1\n%s", v, USAGE);
                return 2;
            }
            bf16 = v[0] == '1';
        }
        else if (!strcmp(a, "--kernel")) {
            if (ramp_kernel_version_parse(v, &kernel) != RAMP_OK) {
                fprintf(stderr, "bench_layer: --kernel %s: v1 or v2\n%s", v, USAGE);
                return 2;
            }
        } else {
            fprintf(stderr, "bench_layer: unknown option %s\n%s", a, USAGE);
            return 2;
        }
    }
    if (red4 && kernel != RAMP_KERNEL_V2) {
        fprintf(stderr, "bench_layer: --red4 1 needs --kernel v2\n%s", USAGE);
        return 2;
    }
    if (bf16_pipe && (kernel != RAMP_KERNEL_V2 || !bf16)) {
        fprintf(stderr, "bench_layer: --bf16-pipe 1 needs --kernel v2 --bf16 1\n%s", USAGE);
        return 2;
    }
    if (det && kernel != RAMP_KERNEL_V2) {
        fprintf(stderr, "bench_layer: --det 1 needs --kernel v2\n%s", USAGE);
        return 2;
    }
    if (split_mask && kernel != RAMP_KERNEL_V2) {
        fprintf(stderr, "bench_layer: --split needs --kernel v2\n%s", USAGE);
        return 2;
    }
    if (wide_mask && kernel != RAMP_KERNEL_V2) {
        fprintf(stderr, "bench_layer: --wide needs --kernel v2\n%s", USAGE);
        return 2;
    }
    if (jit_ab && timeline) {
        fprintf(stderr, "bench_layer: --jit-ab and --timeline both set RAMP_JIT_DEFINES\n%s", USAGE);
        return 2;
    }
    if (timeline && kernel != RAMP_KERNEL_V2) {
        fprintf(stderr, "bench_layer: --timeline needs --kernel v2\n%s", USAGE);
        return 2;
    }
    if (one_menu && kernel != RAMP_KERNEL_V2) {
        fprintf(stderr, "bench_layer: --one-menu needs --kernel v2\n%s", USAGE);
        return 2;
    }
    if (top_wait && kernel != RAMP_KERNEL_V2) {
        fprintf(stderr, "bench_layer: --top-wait needs --kernel v2\n%s", USAGE);
        return 2;
    }
    if (l2pf && kernel != RAMP_KERNEL_V2) {
        fprintf(stderr, "bench_layer: --l2pf needs --kernel v2\n%s", USAGE);
        return 2;
    }
    if (units && (kernel != RAMP_KERNEL_V2 || red4)) {
        fprintf(stderr, "bench_layer: --units 1 needs --kernel v2, without --red4\n%s", USAGE);
        return 2;
    }
    if (red4 && bf16) {
        fprintf(stderr, "bench_layer: --red4 1 is for FP8 layers (v2 reads a BF16 W2 row-major)\n%s",
                USAGE);
        return 2;
    }
    if (!plan_path || !data_path || !outdir || reps < 1) {
        fprintf(stderr, "bench_layer: --plan, --dataset and --out-dir are required, --reps >= 1\n%s",
                USAGE);
        return 2;
    }
    int tokens_list[32], ntok = 0;
    for (const char *p = tokens_arg; *p && ntok < 32;) {
        char *end;
        long t = strtol(p, &end, 10);
        if (end == p || t < 1 || t > 65536) {
            fprintf(stderr, "bench_layer: --tokens: bad list '%s'\n", tokens_arg);
            return 2;
        }
        tokens_list[ntok++] = (int)t;
        p = *end == ',' ? end + 1 : end;
    }
    int max_tokens = 0;
    for (int i = 0; i < ntok; i++) max_tokens = tokens_list[i] > max_tokens ? tokens_list[i] : max_tokens;

    ramp_plan plan;
    TRY(ramp_plan_read(plan_path, &plan));
    if (bf16) plan.geom.bf16 = 1; /* the stand-in: the same menu, a BF16 layer */
    ramp_timing *ds = NULL;
    TRY(ramp_timing_read(data_path, 0, &ds));
    if (strcmp(ds->model, plan.model) || strcmp(ds->layout, plan.layout))
        DIE("plan is for %s %s, dataset for %s %s", plan.model, plan.layout, ds->model, ds->layout);
    ramp_model model;
    TRY(ramp_model_lookup(plan.model, &model));
    /* the vLLM-style table runs our v1 kernel: tuned on the dataset's times
     * of the configurations v1 runs (a v2 dataset also holds v2's wide tiles) */
    ramp_timing *ds1 = NULL;
    {
        int *idx = malloc(sizeof(int) * (size_t)ds->nconfigs), n = 0;
        if (!idx) DIE("out of memory");
        ramp_geometry gv = ds->geom; /* in the layer's precision */
        gv.bf16 = plan.geom.bf16;
        for (int c = 0; c < ds->nconfigs; c++)
            if (ramp_kernel_version_check(RAMP_KERNEL_V1, &ds->configs[c], &gv) == RAMP_OK)
                idx[n++] = c;
        if (n == 0) DIE("the dataset holds no configuration kernel v1 runs (the vLLM-style table's)");
        TRY(ramp_timing_select_configs(ds, idx, n, &ds1));
        free(idx);
    }
    ramp_policy *table = NULL;
    TRY(ramp_policy_fit(RAMP_POLICY_VLLM, ds1, NULL, NULL, &table));
    const ramp_geometry g = plan.geom;
    const int EL = g.experts, E = model.experts, k = g.topk, d = g.hidden, h = g.inter;
    const int is2 = kernel == RAMP_KERNEL_V2;
    const ramp_plan plan1 = plan; /* the v1 layer's menu, as read */
    if (is2) v2_menu_of(&plan);
    /* --kernel v2: the v1 layer of the same plan, when v1 runs every entry
     * (a menu with v2's wide tiles has none) */
    int with_v1 = is2;
    for (int i = 0; i < plan1.count; i++) {
        ramp_moe_variant v = {plan1.configs[i], plan1.geom, 0};
        if (with_v1 && ramp_moe_v1_check(&v) != RAMP_OK) {
            char nm[64];
            printf("v1 layer: not timed (menu entry %d, %s, is kernel v2's only)\n", i,
                   ramp_config_name(&plan1.configs[i], nm, sizeof nm));
            with_v1 = 0;
        }
    }


    /* every configuration any path may run: the menu, and the table's picks
     * for every batch size (the table is keyed on batch tokens) */
    ramp_config cfgs[64];
    int ncfg = 0;
    for (int i = 0; i < plan.count; i++) cfgs[ncfg++] = plan.configs[i];
    int table_pick[32];
    for (int t = 0; t < ntok; t++) {
        int32_t zero[1] = {0};
        int c;
        TRY(ramp_policy_choose_load(table, 1, zero, tokens_list[t], &c));
        table_pick[t] = c;
        int have = 0;
        for (int i = 0; i < ncfg; i++) have |= ramp_config_equal(&cfgs[i], &ds1->configs[c]);
        if (!have) cfgs[ncfg++] = ds1->configs[c];
    }
    ramp_poly_desc pd;
    memset(&pd, 0, sizeof pd);
    pd.geom = g;
    pd.kernel = kernel;
    pd.red4 = red4;
    pd.count = plan.count;
    memcpy(pd.cfgs, plan.configs, sizeof(ramp_config) * (size_t)plan.count);
    ramp_poly_desc pd1 = pd; /* --kernel v2: the v1 layer's kernel */
    pd1.kernel = RAMP_KERNEL_V1;
    pd1.red4 = 0;
    ramp_moe_v2_opts o2 = ramp_moe_v2_default_opts(); /* the v2 entries alone */
    o2.red4 = red4;
    memcpy(pd1.cfgs, plan1.configs, sizeof(ramp_config) * (size_t)plan1.count);
    /* the GPU, opened before compiling: with --timeline every program is
     * compiled with the stamps' device address */
    timer T;
    memset(&T, 0, sizeof T);
    T.reps = reps;
    T.samples = malloc(sizeof(double) * (size_t)(reps + 3));
    T.flush_bytes = 512u << 20;
    TRY(ramp_gpu_open(0, &T.gpu));
    tl_state TL;
    memset(&TL, 0, sizeof TL);
    if (timeline) {
        char path[1200];
        const char *why = NULL;
        snprintf(path, sizeof path, "%s/timeline.csv", outdir);
        if (tl_open(&TL, T.gpu, path, &why)) DIE("--timeline: %s (%s)", why, path);
    }
    {
        cjob jobs[65 + 1 + RAMP_MENU_MAX];
        pthread_t th[65 + 1 + RAMP_MENU_MAX];
        int nj = 0;
        memset(jobs, 0, sizeof jobs);
        jobs[nj++].poly = &pd;
        if (with_v1) jobs[nj++].poly = &pd1;
        if (is2) {
            for (int i = 0; i < plan.count; i++, nj++) {
                jobs[nj].v.cfg = plan.configs[i];
                jobs[nj].v.geom = g;
                jobs[nj].v2 = 1;
                jobs[nj].o = o2;
            }
        }
        for (int i = 0; i < ncfg; i++) {
            memset(&jobs[nj], 0, sizeof jobs[nj]);
            jobs[nj].v.cfg = cfgs[i];
            jobs[nj].v.cfg.persistent = 0;
            jobs[nj].v.geom = g;
            if (ramp_moe_v1_check(&jobs[nj].v) == RAMP_OK) nj++; /* v1's alone */
        }
        printf("compiling the polymorphic kernel%s and %d configurations%s...\n",
               is2 ? "s (v2 and v1)" : "", ncfg, is2 ? " (v1), the menu's v2 kernels" : "");
        fflush(stdout);
        for (int i = 0; i < nj; i++) pthread_create(&th[i], NULL, compile_one, &jobs[i]);
        for (int i = 0; i < nj; i++) pthread_join(th[i], NULL);
    }

    /* the GPU (compiling, above, needs none) */
    TRY(ramp_stream_create(T.gpu, &T.st));
    TRY(ramp_gpu_alloc(T.gpu, T.flush_bytes, &T.flush));
    TRY(ramp_event_create(T.gpu, &T.e0));
    TRY(ramp_event_create(T.gpu, &T.e1));
    ramp_gpu_info gi;
    TRY(ramp_gpu_get_info(T.gpu, &gi));
    probe_placement(T.gpu, T.st, gi.limits.sms);

    /* weights of GPU 0's experts */
    ramp_rng rng;
    ramp_rng_seed(&rng, seed);
    moe_weights W;
    if (moe_weights_make_fast(&rng, EL, k, h, d, g.bf16, &W)) DIE("out of memory");
    ramp_devptr w13, w2, w13s = 0, w2s = 0;
    size_t el = g.bf16 ? 2 : 1;
    size_t n13 = (size_t)EL * 2 * h * d * el, n2 = (size_t)EL * d * h * el;
    TRY(ramp_gpu_alloc(T.gpu, n13, &w13));
    TRY(ramp_gpu_alloc(T.gpu, n2, &w2));
    TRY(ramp_gpu_upload(T.gpu, w13, W.w13, n13));
    TRY(ramp_gpu_upload(T.gpu, w2, W.w2, n2));
    /* the W2 every v2 path reads: a float4-output copy under --red4 */
    ramp_devptr w2v = w2;
    if (red4) {
        const int64_t shape[3] = {EL, d, h};
        uint8_t *p2 = malloc(n2);
        if (!p2) DIE("out of memory");
        TRY(ramp_w2_to_red4(shape, W.w2, p2));
        TRY(ramp_gpu_alloc(T.gpu, n2, &w2v));
        TRY(ramp_gpu_upload(T.gpu, w2v, p2, n2));
        free(p2);
    }
    ramp_devptr w13u = 0, w2u = 0; /* --units: the same weights in stage units */
    if (units) {
        const int64_t s13[3] = {EL, 2 * (int64_t)h, d}, s2[3] = {EL, d, h};
        uint8_t *u13 = malloc(n13), *u2 = malloc(n2);
        if (!u13 || !u2) DIE("out of memory");
        TRY(ramp_weights_to_units(s13, s2, bf16 ? 2 : 1, W.w13, W.w2, u13, u2));
        TRY(ramp_gpu_alloc(T.gpu, n13, &w13u));
        TRY(ramp_gpu_alloc(T.gpu, n2, &w2u));
        TRY(ramp_gpu_upload(T.gpu, w13u, u13, n13));
        TRY(ramp_gpu_upload(T.gpu, w2u, u2, n2));
        free(u13);
        free(u2);
    }
    if (!g.bf16) {
        size_t s13 = (size_t)EL * (2 * h / 128) * (d / 128) * 4, s2 = (size_t)EL * (d / 128) * (h / 128) * 4;
        TRY(ramp_gpu_alloc(T.gpu, s13, &w13s));
        TRY(ramp_gpu_alloc(T.gpu, s2, &w2s));
        TRY(ramp_gpu_upload(T.gpu, w13s, W.w13_scale, s13));
        TRY(ramp_gpu_upload(T.gpu, w2s, W.w2_scale, s2));
    }

    /* the read floor's kernel and its piece list (at most every expert's
     * ranges, split into RAMP_READ_PIECE-byte pieces) */
    read_floor RF;
    {
        /* pieces: the sweep's 1 GiB or every expert's weights and scales */
        size_t all = n13 + n2 + (size_t)EL * ((2 * h / 128) * (d / 128) + (d / 128) * (h / 128)) * 4;
        if (all < ((size_t)1 << 30)) all = (size_t)1 << 30;
        TRY(read_floor_init(&RF, T.gpu, all / READ_PIECE + 4 * (size_t)EL + 4));
    }
    read_floor RFF; /* --flush read: the flush buffer read by bulk copies */
    ramp_graph *flush_g = NULL;
    if (flush_read) {
        TRY(ramp_gpu_fill32_async(T.gpu, T.flush, 3, T.flush_bytes / 4, T.st));
        TRY(read_flush_graph(&RFF, T.gpu, T.st, T.flush, T.flush_bytes, &flush_g));
        T.flush_graph = flush_g;
    }
    read_sweep(&RF, &T, outdir);

    /* the layer */
    ramp_layer_desc ld;
    memset(&ld, 0, sizeof ld);
    ld.w13 = w13; ld.w13_scale = w13s; ld.w2 = w2v; ld.w2_scale = w2s;
    ld.w13_shape[0] = EL; ld.w13_shape[1] = 2 * h; ld.w13_shape[2] = d;
    ld.w2_shape[0] = EL; ld.w2_shape[1] = d; ld.w2_shape[2] = h;
    ld.bf16 = g.bf16;
    ld.experts = E;
    ld.local_experts = EL;
    ld.max_tokens = max_tokens;
    ld.kernel = kernel;
    ld.w2_red4 = red4;
    ramp_layer *L = NULL, *Ls = NULL, *L1 = NULL; /* PDL (default), serial, v1 (--kernel v2) */
    ramp_layer *Lq[2] = {NULL, NULL}; /* two-phase entries: PDL for the first kernel, both */
    ramp_layer *Lp = NULL;                        /* --l2pf: PDL and the L2 prefetch */
    ramp_layer *Lpipe = NULL;                     /* --bf16-pipe: wide entries pipelined */
    ramp_layer *Lwide[3] = {NULL, NULL, NULL};    /* --wide: tx, mc, mctx */
    ramp_layer *Ldet = NULL;                      /* --det: deterministic output */
    ramp_layer *Lsplit[5] = {NULL, NULL, NULL, NULL, NULL}; /* --split: poly_split 1..5 */
    ramp_layer *Ltw[2] = {NULL, NULL}; /* --top-wait: default launch mode, both with PDL */
    ramp_layer *Lunits = NULL, *Lunits2 = NULL; /* --units: weights in stage units (PDL 2) */
    ramp_layer *Lshape = NULL; /* --one-shape: the selection in max_tokens' shape */
    ramp_layer *Ljit = NULL;   /* --jit-ab: its kernels compiled with more defines */
    ramp_layer *Lujit = NULL;  /* ... and with --units 1, the stage-unit layer so compiled */
    ramp_layer *Lone = NULL;   /* --one-menu: one kernel for every batch */
    ramp_layer *Luone = NULL;  /* --one-menu with --units: the same on stage units */
    int check_failed = 0;                         /* out_agree: det and split */
    TRY(ramp_layer_create(T.gpu, &plan, &ld, &L));
    int size_classes = 0; /* the layer's kernels by batch size (ramp_layer_desc.one_menu) */
    {
        ramp_layer_info zi;
        TRY(ramp_layer_get_info(L, &zi));
        size_classes = zi.size_classes;
        if (size_classes) printf("size classes:");
        for (int c = 0; c < zi.size_classes; c++) {
            printf(" <= %d tokens {", zi.class_tokens[c]);
            for (int i = 0, n = 0; i < plan.count; i++) {
                if (!((zi.class_entries[c] >> i) & 1u)) continue;
                char nm[64];
                ramp_config_name(&plan.configs[i], nm, sizeof nm);
                printf("%s%s", n++ ? " " : "", nm);
            }
            printf("}");
        }
        if (size_classes) printf("; the whole menu above\n");
    }
    for (int q = 0; q < 3; q++) {
        if (!(wide_mask >> q & 1)) continue;
        ramp_plan pw = plan; /* the same menu with the option on its wide entries */
        int any = 0;
        for (int i = 0; i < pw.count; i++) {
            ramp_config *c = &pw.configs[i];
            if (c->rows <= 64 || c->splitk > 1) continue;
            if (q != 1) c->tma_x = 1;
            if (q != 0) c->mcast = 1;
            any = 1;
        }
        const char *opt = q == 0 ? "tx" : q == 1 ? "mc" : "mctx";
        /* a plan can already hold both a tile and its variant: the A/B would
         * then be a menu with one entry twice, which plans refuse */
        int dup = -1;
        for (int i = 0; i < pw.count && dup < 0; i++)
            for (int j = i + 1; j < pw.count; j++)
                if (ramp_config_equal(&pw.configs[i], &pw.configs[j])) dup = i;
        if (!any) printf("--wide: the plan has no wide entry; no ramp-%s rows\n", opt);
        else if (dup >= 0) {
            char nm[64];
            ramp_config_name(&pw.configs[dup], nm, sizeof nm);
            printf("--wide: with %s on its wide entries the menu holds %s twice; no ramp-%s rows\n",
                   opt, nm, opt);
        } else
            TRY(ramp_layer_create(T.gpu, &pw, &ld, &Lwide[q]));
    }
    if (l2pf) {
        ld.l2_prefetch_mb = l2pf;
        TRY(ramp_layer_create(T.gpu, &plan, &ld, &Lp));
        ld.l2_prefetch_mb = 0;
    }
    if (bf16_pipe) {
        ld.bf16_pipe = 1;
        TRY(ramp_layer_create(T.gpu, &plan, &ld, &Lpipe));
        ld.bf16_pipe = 0;
    }
    if (det) { /* refused, with the entry named, unless every entry is two-phase */
        ld.deterministic = 1;
        TRY(ramp_layer_create(T.gpu, &plan, &ld, &Ldet));
        ld.deterministic = 0;
    }
    for (int q = 0; q < 5; q++) {
        if (!(split_mask >> q & 1)) continue;
        ld.poly_split = 1 + q;
        TRY(ramp_layer_create(T.gpu, &plan, &ld, &Lsplit[q]));
        ld.poly_split = 0;
    }
    int two_phase = 0;
    for (int i = 0; i < plan.count; i++) two_phase |= plan.configs[i].two_phase > 0;
    ramp_layer_desc lu = ld; /* the plan's menu on the same weights in stage units */
    lu.w13 = w13u;
    lu.w2 = w2u;
    lu.weight_units = 1;
    if (units) {
        TRY(ramp_layer_create(T.gpu, &plan, &lu, &Lunits));
        lu.serial_launch = 3; /* ... with both kernels by PDL, as ramp-pdl2 */
        if (two_phase) TRY(ramp_layer_create(T.gpu, &plan, &lu, &Lunits2));
        lu.serial_launch = ld.serial_launch;
        lu.one_menu = 1; /* ... and with one kernel for every batch */
        if (one_menu && size_classes) TRY(ramp_layer_create(T.gpu, &plan, &lu, &Luone));
        lu.one_menu = 0;
    }
    if (jit_ab) { /* RAMP_JIT_DEFINES is read by every compile, and is in the cache key */
        const char *prev = getenv("RAMP_JIT_DEFINES");
        char *saved = prev ? strdup(prev) : NULL;
        setenv("RAMP_JIT_DEFINES", jit_ab, 1);
        TRY(ramp_layer_create(T.gpu, &plan, &ld, &Ljit));
        if (units) TRY(ramp_layer_create(T.gpu, &plan, &lu, &Lujit));
        if (saved) setenv("RAMP_JIT_DEFINES", saved, 1);
        else unsetenv("RAMP_JIT_DEFINES");
        free(saved);
    }
    if (one_menu && size_classes) {
        ld.one_menu = 1;
        TRY(ramp_layer_create(T.gpu, &plan, &ld, &Lone));
        ld.one_menu = 0;
    } else if (one_menu)
        printf("--one-menu: the layer has no size classes (one local expert only, so far): no "
               "ramp-onemenu rows\n");
    if (one_shape) {
        ld.select_one_shape = 1;
        TRY(ramp_layer_create(T.gpu, &plan, &ld, &Lshape));
        ld.select_one_shape = 0;
    }
    if (top_wait && !two_phase) printf("--top-wait: the plan has no two-phase entry; no rows\n");
    for (int q = 0; q < 2 && top_wait && two_phase; q++) {
        ld.poly_top_wait = 1;
        ld.serial_launch = q ? 3 : 0;
        TRY(ramp_layer_create(T.gpu, &plan, &ld, &Ltw[q]));
        ld.poly_top_wait = 0;
        ld.serial_launch = 0;
    }
    ld.serial_launch = 1;
    TRY(ramp_layer_create(T.gpu, &plan, &ld, &Ls));
    for (int q = 0; q < 2 && two_phase; q++) {
        ld.serial_launch = 2 + q;
        TRY(ramp_layer_create(T.gpu, &plan, &ld, &Lq[q]));
        ld.serial_launch = 1;
    }
    if (with_v1) {
        ld.serial_launch = 0;
        ld.kernel = RAMP_KERNEL_V1;
        ld.w2 = w2;
        ld.w2_red4 = 0;
        TRY(ramp_layer_create(T.gpu, &plan1, &ld, &L1));
    }
    ramp_layer_info info;
    TRY(ramp_layer_get_info(L, &info));
    if (info.warning[0]) printf("warning: %s\n", info.warning);

    /* batch buffers (capacity max_tokens) and grouping buffers */
    size_t M = (size_t)max_tokens;
    ramp_devptr x, xs, ids, tw, out, ntok_dev, sorted, texp, ntiles, choice, ws, cnt;
    TRY(ramp_gpu_alloc(T.gpu, M * d * (g.bf16 ? 2 : 1), &x));
    TRY(ramp_gpu_alloc(T.gpu, M * (d / 128) * 4 + 4, &xs));
    TRY(ramp_gpu_alloc(T.gpu, M * k * 4, &ids));
    TRY(ramp_gpu_alloc(T.gpu, M * k * 4, &tw));
    TRY(ramp_gpu_alloc(T.gpu, M * d * 4, &out));
    TRY(ramp_gpu_alloc(T.gpu, 4, &ntok_dev));
    ramp_select_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.experts = E; sd.topk = k; sd.max_tokens = max_tokens; sd.local_experts = EL;
    sd.nentries = plan.count;
    for (int i = 0; i < plan.count; i++)
        TRY(ramp_select_entry_from_plan(&plan, i, &sd.entries[i]));
    ramp_select_result *twin = NULL, *grp = NULL, *twin1 = NULL;
    TRY(ramp_select_result_create(&sd, &twin));
    ramp_select_desc sd1 = sd; /* the v1 layer's twin (--kernel v2) */
    for (int i = 0; i < plan1.count; i++)
        TRY(ramp_select_entry_from_plan(&plan1, i, &sd1.entries[i]));
    TRY(ramp_select_result_create(&sd1, &twin1));
    /* a one-entry descriptor with rows 1 bounds every grouping's tiles */
    ramp_select_desc one = sd;
    one.nentries = 1;
    one.entries[0].rows = 1;
    int64_t cap_slots, cap_tiles, menu_slots, menu_tiles;
    TRY(ramp_select_capacity(&one, &cap_slots, &cap_tiles));
    /* ... and the menu's slots: a wide tile pads every expert to 128 */
    TRY(ramp_select_capacity(&sd, &menu_slots, &menu_tiles));
    if (menu_slots > cap_slots) cap_slots = menu_slots;
    TRY(ramp_gpu_alloc(T.gpu, (size_t)cap_slots * 4 * 2, &sorted));
    TRY(ramp_gpu_alloc(T.gpu, (size_t)cap_tiles * 4, &texp));
    TRY(ramp_gpu_alloc(T.gpu, 4, &ntiles));
    TRY(ramp_gpu_alloc(T.gpu, 4, &choice));
    size_t wsb = 0, cb = 0;
    for (int i = 0; i < ncfg; i++) {
        ramp_moe_variant v = {cfgs[i], g, 0};
        if (ramp_moe_v1_check(&v) != RAMP_OK) continue;
        size_t a = ramp_moe_v1_ws_bytes(&v, (int)cap_tiles), b = ramp_moe_v1_counter_bytes(&v, (int)cap_tiles);
        wsb = a > wsb ? a : wsb;
        cb = b > cb ? b : cb;
    }
    for (int i = 0; is2 && i < plan.count; i++) { /* two-phase entries' intermediate */
        ramp_moe_variant v = {plan.configs[i], g, 0};
        long long pk = (long long)max_tokens * k;
        size_t a = ramp_moe_v2_ws_bytes(&v, &o2, (int)(pk / v.cfg.rows + (pk < EL ? pk : EL)));
        wsb = a > wsb ? a : wsb;
    }
    TRY(ramp_gpu_alloc(T.gpu, wsb ? wsb : 4, &ws));
    TRY(ramp_gpu_alloc(T.gpu, cb ? cb : 4, &cnt));
    TRY(ramp_gpu_fill32_async(T.gpu, cnt, 0, (cb ? cb : 4) / 4, T.st));
    ramp_devptr sched;
    TRY(ramp_gpu_alloc(T.gpu, RAMP_POLY_SCHED_BYTES, &sched));
    TRY(ramp_gpu_fill32_async(T.gpu, sched, 0, RAMP_POLY_SCHED_WORDS, T.st));

    /* standalone kernels */
    ramp_moe_kernel *alone[64] = {0}; /* v1's (NULL: a configuration v1 does not run) */
    for (int i = 0; i < ncfg; i++) {
        ramp_moe_variant v = {cfgs[i], g, 0};
        if (ramp_moe_v1_check(&v) == RAMP_OK) TRY(ramp_moe_kernel_create(T.gpu, &v, &alone[i]));
    }
    ramp_moe_v2_kernel *alone2[RAMP_MENU_MAX] = {0}; /* --kernel v2: the menu's v2 kernels */
    for (int i = 0; is2 && i < plan.count; i++) {
        ramp_moe_variant v = {plan.configs[i], g, 0};
        TRY(ramp_moe_v2_create_opts(T.gpu, &v, &o2, &alone2[i]));
    }
    ramp_moe_poly *poly = NULL; /* the forced-entry copy of the layer's kernel */
    TRY(ramp_moe_poly_create(T.gpu, &pd, (int64_t)max_tokens * k, &poly));

    /* the layer's graph for any batch size, captured once: the token count
     * is read on device and the grid is sized for max_tokens */
    ramp_layer_io io;
    memset(&io, 0, sizeof io);
    io.x = x; io.x_scale = g.bf16 ? 0 : xs; io.topk_ids = ids; io.topk_weights = tw;
    io.out = out; io.tokens_dev = ntok_dev;
    ramp_graph *G_any = NULL;
    TRY(ramp_graph_capture_begin(T.gpu, T.st));
    TRY(ramp_layer_run(L, &io, T.st));
    TRY(ramp_graph_capture_end(T.gpu, T.st, &G_any));

    /* vLLM-style paths, one group-only selector per table configuration;
     * their graphs, like the layer's below, are captured per batch size (as
     * engines capture one graph per batch size) */
    vllm_path vp[32];
    int nvp = 0;
    /* the layer's selection alone (same descriptor as the layer's) */
    ramp_selector *sel_only = NULL;
    TRY(ramp_selector_create(T.gpu, &sd, &sel_only));

    char path[1024];
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    snprintf(path, sizeof path, "%s/layer-%s-%s%s%s%s.csv", outdir, plan.model, plan.layout,
             is2 ? "-v2" : "", red4 ? "-red4" : "", plan.geom.bf16 ? "-bf16" : "");
    FILE *csv = fopen(path, "w");
    if (!csv) DIE("cannot write %s", path);
    fprintf(csv, "# bench_layer plan=%s dataset=%s reps=%d kernel=%s red4=%d bf16=%d l2pf=%d bf16_pipe=%d "
                 "det=%d split=%d top_wait=%d units=%d wide=%s%s%s flush=%s gpu=\"%s\" sms=%d "
                 "driver=%d date=%s\n",
            plan_path, data_path, reps, ramp_kernel_version_name(kernel), red4, plan.geom.bf16, l2pf,
            bf16_pipe, det, split_mask, top_wait, units, wide_mask & 1 ? "tx," : "",
            wide_mask & 2 ? "mc," : "",
            wide_mask & 4 ? "mctx" : "", flush_read ? "read" : "write", gi.limits.name, gi.limits.sms,
            gi.driver_version, date);
    fprintf(csv, "model,layout,tokens,routing,local_pairs,active,impl,entry,config,us_median,us_p10,us_p90\n");
    FILE *lj = NULL;
    if (loads_json) {
        lj = fopen(loads_json, "w");
        if (!lj) DIE("cannot write %s", loads_json);
        fprintf(lj, "{\"model\": \"%s\", \"hidden\": %d, \"inter\": %d, \"topk\": %d, "
                    "\"local_experts\": %d, \"loads\": [",
                plan.model, d, h, k, EL);
    }
    int32_t *counts = malloc(sizeof(int32_t) * (size_t)EL);
    double over[RAMP_MENU_MAX][64];
    int nover = 0;
    printf("\n%-6s %-8s %6s %6s  %-24s %9s %9s %9s %9s  %-24s %9s %7s\n", "tokens", "routing",
           "pairs", "active", "chosen", "ramp_us", "serial_us", "alone_us", "diff_us", "vllm table",
           "vllm_us", "speedup");
    for (int t = 0; t < ntok; t++) {
        for (int shape = 0; shape < 2; shape++) {
            const int sh = shape ? MOE_SKEWED : MOE_UNIFORM;
            const char *rname = shape ? "skewed" : "uniform";
            moe_batch b;
            if (moe_batch_make(&rng, sh, tokens_list[t], k, E, EL, d, &b)) DIE("out of memory");
            const int Mt = b.tokens;
            TRY(ramp_gpu_upload(T.gpu, x, g.bf16 ? (const void *)b.x_bf16 : (const void *)b.x,
                                (size_t)Mt * d * (g.bf16 ? 2 : 1)));
            if (!g.bf16) TRY(ramp_gpu_upload(T.gpu, xs, b.x_scale, (size_t)Mt * (d / 128) * 4));
            TRY(ramp_gpu_upload(T.gpu, ids, b.ids, (size_t)Mt * k * 4));
            TRY(ramp_gpu_upload(T.gpu, tw, b.weights, (size_t)Mt * k * 4));
            int32_t mt = Mt;
            TRY(ramp_gpu_upload(T.gpu, ntok_dev, &mt, 4));
            TRY(ramp_select_cpu(&sd, Mt, b.ids, twin));
            const int chosen = twin->meta[RAMP_SELECT_META_CHOSEN];
            const int pairs = twin->meta[RAMP_SELECT_META_LOCAL];
            int active = 0;
            for (int e = 0; e < EL; e++) {
                counts[e] = twin->counts[e];
                active += counts[e] > 0;
            }
            if (lj)
                fprintf(lj, "%s\n  {\"name\": \"t%d-%s\", \"tokens\": %d, \"counts\": [", t || shape ? "," : "",
                        Mt, rname, Mt);
            for (int e = 0; lj && e < EL; e++) fprintf(lj, "%s%d", e ? ", " : "", counts[e]);
            if (lj) fprintf(lj, "]}");
#define ROW(impl, entry, cfgp, s)                                                          \
    do {                                                                                   \
        char cn_[64];                                                                      \
        ramp_config_name(cfgp, cn_, sizeof cn_);                                           \
        fprintf(csv, "%s,%s,%d,%s,%d,%d,%s,%d,%s,%.3f,%.3f,%.3f\n", plan.model, plan.layout, \
                Mt, rname, pairs, active, impl, entry, cn_, (s).med, (s).p10, (s).p90);    \
    } while (0)
            /* RaMP's layer: a graph for this batch size (the host knows
             * the token count, so the grid is sized for it), with and
             * without programmatic dependent launch, and the any-size graph */
            ramp_layer_io iob = io;
            iob.tokens_dev = 0;
            iob.tokens = Mt;
            ramp_graph *G = NULL, *Gs = NULL;
            TRY(ramp_graph_capture_begin(T.gpu, T.st));
            TRY(ramp_layer_run(L, &iob, T.st));
            TRY(ramp_graph_capture_end(T.gpu, T.st, &G));
            TRY(ramp_graph_capture_begin(T.gpu, T.st));
            TRY(ramp_layer_run(Ls, &iob, T.st));
            TRY(ramp_graph_capture_end(T.gpu, T.st, &Gs));
            stat3 s_ramp = time_it(&T, replay, G);
            ROW("ramp", chosen, &plan.configs[chosen], s_ramp);
            if (timeline)
                tl_run(&T, &TL, replay, G, "ramp", Mt, rname, &plan.configs[chosen]);
            stat3 s_serial = time_it(&T, replay, Gs);
            ROW("ramp-serial", chosen, &plan.configs[chosen], s_serial);
            /* the layer's variants, each captured and timed as the layer */
            enum { NVAR = 22 };
            ramp_layer *const variant[NVAR] = {Lq[0],     Lq[1],     Lp,        Lpipe,
                                               Lwide[0],  Lwide[1],  Lwide[2],  Ldet,
                                               Lsplit[0], Lsplit[1], Lsplit[2], Lsplit[3],
                                               Lsplit[4], Ltw[0],    Ltw[1],    Lunits,
                                               Lunits2,   Lshape,    Ljit,      Lone,
                                               Luone,     Lujit};
            static const char *const variant_row[NVAR] = {
                "ramp-pdl1",   "ramp-pdl2",   "ramp-l2pf",   "ramp-pipe",   "ramp-tx",
                "ramp-mc",     "ramp-mctx",   "ramp-det",    "ramp-split1", "ramp-split2",
                "ramp-split3", "ramp-split4", "ramp-split5", "ramp-topwait",
                "ramp-pdl2-topwait", "ramp-units", "ramp-units-pdl2", "ramp-oneshape", "ramp-jit",
                "ramp-onemenu", "ramp-units-onemenu", "ramp-units-jit"};
            /* ramp-units-jit is timed in alternation with the stage-unit
             * layer (its A), every other variant with the layer */
            ramp_graph *Gu = NULL;
            if (Lujit) {
                TRY(ramp_graph_capture_begin(T.gpu, T.st));
                TRY(ramp_layer_run(Lunits, &iob, T.st));
                TRY(ramp_graph_capture_end(T.gpu, T.st, &Gu));
            }
            for (int q = 0; q < NVAR; q++) {
                if (!variant[q]) continue;
                ramp_graph *Gq = NULL, *Ga = variant[q] == Lujit ? Gu : G;
                const char *aname = variant[q] == Lujit ? "ramp-units" : "ramp";
                TRY(ramp_graph_capture_begin(T.gpu, T.st));
                TRY(ramp_layer_run(variant[q], &iob, T.st));
                TRY(ramp_graph_capture_end(T.gpu, T.st, &Gq));
                stat3 s_q, s_r;
                time_pair(&T, Ga, Gq, &s_r, &s_q);
                ROW(variant_row[q], chosen, &plan.configs[chosen], s_q);
                char paired[48]; /* the A's own time from the alternation */
                snprintf(paired, sizeof paired, "%s@%s", aname, variant_row[q]);
                ROW(paired, chosen, &plan.configs[chosen], s_r);
                printf("       %-10s %9.2f us (%+.2f us against %s timed in alternation with it, "
                       "%.2f us)\n", variant_row[q], s_q.med, s_q.med - s_r.med, aname, s_r.med);
                if (variant[q] == Ldet)
                    check_failed |= out_agree(&T, G, Gq, out, (size_t)Mt * d, "det", 1);
                if ((q >= 8 && q < 15) || q < 2 || variant[q] == Lshape || variant[q] == Ljit ||
                    variant[q] == Lone)
                    /* a split, the wait at the top, a launch mode, the selection's shape, a
                     * compile-time option, size classes */
                    check_failed |= out_agree(&T, G, Gq, out, (size_t)Mt * d, variant_row[q] + 5, 0);
                if (variant[q] == Lunits || variant[q] == Lunits2 || variant[q] == Luone ||
                    variant[q] == Lujit)
                    /* the same menu, row-major */
                    check_failed |= out_agree(&T, G, Gq, out, (size_t)Mt * d, "units", 0);
                if (timeline && variant[q] == Lunits) /* the stage-unit layer too (session 36) */
                    tl_run(&T, &TL, replay, Gq, "units", Mt, rname, &plan.configs[chosen]);
                ramp_graph_free(Gq);
            }
            ramp_graph_free(Gu);
            stat3 s_any = time_it(&T, replay, G_any);
            ROW("ramp-anysize", chosen, &plan.configs[chosen], s_any);
            stat3 s_sel;
            {
                ramp_graph *Gsel = NULL;
                TRY(ramp_graph_capture_begin(T.gpu, T.st));
                TRY(ramp_selector_launch(sel_only, ids, Mt, 0, T.st));
                TRY(ramp_graph_capture_end(T.gpu, T.st, &Gsel));
                s_sel = time_it(&T, replay, Gsel);
                ROW("select", chosen, &plan.configs[chosen], s_sel);
                if (timeline) tl_run(&T, &TL, replay, Gsel, "select", Mt, rname, NULL);
                ramp_graph_free(Gsel);
            }
            /* the read floor: the active experts' bytes, alone and after the
             * selection */
            stat3 s_read = {0, 0, 0}, s_sread = {0, 0, 0};
            {
                const size_t e13 = (size_t)2 * h * d * el, e2 = (size_t)d * h * el;
                const size_t s13e = (size_t)(2 * h / 128) * (d / 128) * 4;
                const size_t s2e = (size_t)(d / 128) * (h / 128) * 4;
                RF.n = 0;
                for (int e = 0; e < EL; e++) {
                    if (counts[e] == 0) continue;
                    TRY(read_floor_add(&RF, w13 + e * e13, e13));
                    TRY(read_floor_add(&RF, (is2 ? w2v : w2) + e * e2, e2));
                    if (!g.bf16) {
                        TRY(read_floor_add(&RF, w13s + e * s13e, s13e));
                        TRY(read_floor_add(&RF, w2s + e * s2e, s2e));
                    }
                }
                TRY(read_floor_upload(&RF, T.gpu));
                static const char *const rn[2][2] = {{"read", "select+read"},
                                                     {"read-bulk", "select+read-bulk"}};
                for (int bulk = 0; bulk < 2; bulk++) {
                    ramp_graph *Gr = NULL, *Gsr = NULL;
                    TRY(ramp_graph_capture_begin(T.gpu, T.st));
                    TRY(read_floor_launch(&RF, T.gpu, T.st, 0, bulk));
                    TRY(ramp_graph_capture_end(T.gpu, T.st, &Gr));
                    TRY(ramp_graph_capture_begin(T.gpu, T.st));
                    TRY(ramp_selector_launch(sel_only, ids, Mt, 0, T.st));
                    TRY(read_floor_launch(&RF, T.gpu, T.st, 1, bulk));
                    TRY(ramp_graph_capture_end(T.gpu, T.st, &Gsr));
                    stat3 a = time_it(&T, replay, Gr), b2 = time_it(&T, replay, Gsr);
                    ROW(rn[bulk][0], -1, &plan.configs[chosen], a);
                    ROW(rn[bulk][1], -1, &plan.configs[chosen], b2);
                    /* the floor: the faster kernel */
                    if (!bulk || b2.med < s_sread.med) { s_read = a; s_sread = b2; }
                    ramp_graph_free(Gr);
                    ramp_graph_free(Gsr);
                }
            }
            ramp_graph_free(G);
            ramp_graph_free(Gs);
            stat3 s_v1 = {0, 0, 0}; /* --kernel v2: the v1 layer, same plan, same graph kind */
            int chosen1 = -1;
            if (with_v1) {
                TRY(ramp_select_cpu(&sd1, Mt, b.ids, twin1));
                chosen1 = twin1->meta[RAMP_SELECT_META_CHOSEN];
                ramp_graph *G1 = NULL;
                TRY(ramp_graph_capture_begin(T.gpu, T.st));
                TRY(ramp_layer_run(L1, &iob, T.st));
                TRY(ramp_graph_capture_end(T.gpu, T.st, &G1));
                s_v1 = time_it(&T, replay, G1);
                ROW("ramp-v1", chosen1, &plan1.configs[chosen1], s_v1);
                ramp_graph_free(G1);
            }
            /* every entry, forced in the polymorphic kernel and alone */
            stat3 s_alone_chosen = {0, 0, 0}, s_poly_chosen = {0, 0, 0};
            for (int i = 0; i < plan.count; i++) {
                ramp_select_desc di = sd;
                di.nentries = 1;
                di.entries[0] = sd.entries[i];
                ramp_select_result_free(grp);
                grp = NULL;
                TRY(ramp_select_result_create(&di, &grp));
                TRY(ramp_select_cpu(&di, Mt, b.ids, grp));
                int32_t tiles = grp->meta[RAMP_SELECT_META_TILES], idx = i;
                TRY(ramp_gpu_upload(T.gpu, sorted, grp->sorted_ids,
                                    (size_t)(tiles > 0 ? tiles : 1) * plan.configs[i].rows * 4));
                TRY(ramp_gpu_upload(T.gpu, texp, grp->tile_expert, (size_t)(tiles > 0 ? tiles : 1) * 4));
                TRY(ramp_gpu_upload(T.gpu, ntiles, &tiles, 4));
                TRY(ramp_gpu_upload(T.gpu, choice, &idx, 4));
                kernel_call c;
                memset(&c, 0, sizeof c);
                c.p.x = x; c.p.x_scale = g.bf16 ? 0 : xs;
                c.p.w13 = w13; c.p.w13_scale = w13s; c.p.w2 = is2 ? w2v : w2; c.p.w2_scale = w2s;
                c.p.topk_weights = tw; c.p.sorted_ids = sorted; c.p.tile_expert = texp;
                c.p.num_tiles = ntiles; c.p.out = out;
                c.choice = choice;
                c.p.ws = ws; c.p.ws_count = cnt; c.p.num_tokens = Mt;
                c.k = is2 ? (void *)alone2[i] : (void *)alone[i];
                c.v2 = is2;
                c.p.max_tiles = tiles > 0 ? tiles : 1;
                stat3 s_alone = time_it(&T, launch_call, &c);
                if (timeline && i == chosen)
                    tl_run(&T, &TL, launch_call, &c, "alone", Mt, rname, &plan.configs[i]);
                /* alone with the grid sized for the batch's bound, like
                 * the polymorphic kernel's: the cost of surplus blocks */
                {
                    long long pk = (long long)Mt * k;
                    c.p.max_tiles = (int)(pk / plan.configs[i].rows + (pk < EL ? pk : EL));
                }
                stat3 s_alone_cap = time_it(&T, launch_call, &c);
                c.k = poly;
                c.poly = 1;
                c.v2 = 0;
                c.sched = sched; /* the polymorphic kernel's tile scheduler */
                c.p.max_tiles = (int)info.select.max_tiles;
                stat3 s_poly = time_it(&T, launch_call, &c);
                if (timeline && i == chosen)
                    tl_run(&T, &TL, launch_call, &c, "poly", Mt, rname, &plan.configs[i]);
                ROW("alone", i, &plan.configs[i], s_alone);
                ROW("alone-cap", i, &plan.configs[i], s_alone_cap);
                ROW("poly", i, &plan.configs[i], s_poly);
                /* other grid caps: one block per SM, one wave, eight */
                const unsigned wave = (unsigned)(gi.limits.sms * info.blocks_per_sm);
                const unsigned caps[3] = {(unsigned)gi.limits.sms, wave, 8 * wave};
                static const char *const cap_names[3] = {"poly-sm", "poly-w1", "poly-w8"};
                for (int gc = 0; gc < (is2 ? 0 : 3); gc++) {
                    ramp_moe_poly_set_grid(poly, caps[gc]);
                    stat3 sg = time_it(&T, launch_call, &c);
                    ROW(cap_names[gc], i, &plan.configs[i], sg);
                }
                ramp_moe_poly_set_grid(poly, 0);
                if (is2) {
                    /* where the polymorphic overhead comes from (v2): poly-pdl
                     * forced with both kernels' PDL, as the layer launches
                     * them; poly-k1 the first kernel alone (no phase-2
                     * kernel: a fused entry's whole work, half a two-phase
                     * one's); poly-exact the grid the entry alone runs */
                    c.mode = 3;
                    stat3 sp = time_it(&T, launch_call, &c);
                    ROW("poly-pdl", i, &plan.configs[i], sp);
                    c.mode = 4;
                    sp = time_it(&T, launch_call, &c);
                    ROW("poly-k1", i, &plan.configs[i], sp);
                    c.mode = 8;
                    sp = time_it(&T, launch_call, &c);
                    ROW("poly-d1", i, &plan.configs[i], sp);
                    {
                        /* the entry alone, then the phase-2 kernel as the
                         * layer launches it (for this choice it returns) */
                        kernel_call a2[2] = {c, c};
                        a2[0].k = alone2[i];
                        a2[0].poly = 0;
                        a2[0].v2 = 1;
                        a2[0].p.max_tiles = tiles > 0 ? tiles : 1;
                        a2[1].mode = 16;
                        sp = time_it(&T, launch_two, a2);
                        ROW("alone+d", i, &plan.configs[i], sp);
                    }
                    {
                        /* the first kernel alone / the entry alone, then an
                         * unrelated kernel (the selection, into its own
                         * buffers): does the next kernel pay? */
                        sel_after sa = {c, sel_only, ids, Mt};
                        sa.c.mode = 4;
                        sp = time_it(&T, launch_then_select, &sa);
                        ROW("poly-k1+sel", i, &plan.configs[i], sp);
                        if (timeline && i == chosen)
                            tl_run(&T, &TL, launch_then_select, &sa, "k1+sel", Mt, rname, &plan.configs[i]);
                        sa.c.k = alone2[i];
                        sa.c.poly = 0;
                        sa.c.v2 = 1;
                        sa.c.p.max_tiles = tiles > 0 ? tiles : 1;
                        sp = time_it(&T, launch_then_select, &sa);
                        ROW("alone+sel", i, &plan.configs[i], sp);
                        if (timeline && i == chosen)
                            tl_run(&T, &TL, launch_then_select, &sa, "a+sel", Mt, rname, &plan.configs[i]);
                    }
                    c.mode = 0;
                    unsigned ge = ramp_moe_v2_grid(alone2[i], tiles > 0 ? tiles : 1);
                    ramp_moe_poly_set_grid(poly, ge);
                    sp = time_it(&T, launch_call, &c);
                    ROW("poly-exact", i, &plan.configs[i], sp);
                    ramp_moe_poly_set_grid(poly, 0);
                }
                if (nover < 64) over[i][nover] = s_poly.med / s_alone.med;
                if (i == chosen) {
                    s_alone_chosen = s_alone;
                    s_poly_chosen = s_poly;
                }
            }
            nover++;
            /* the vLLM-style layer on our kernel */
            const ramp_config *vc = &ds1->configs[table_pick[t]];
            int vi = -1;
            for (int i = 0; i < nvp; i++)
                if (ramp_config_equal(&vp[i].cfg, vc)) vi = i;
            if (vi < 0) {
                vllm_path *P = &vp[nvp];
                memset(P, 0, sizeof *P);
                P->cfg = *vc;
                ramp_select_desc gd = sd;
                gd.nentries = 1;
                gd.group_only = 1;
                TRY(ramp_select_entry_make(vc, &g, plan.sms, 1, plan.theta[0], &gd.entries[0]));
                TRY(ramp_selector_create(T.gpu, &gd, &P->sel));
                for (int i = 0; i < ncfg; i++)
                    if (ramp_config_equal(&cfgs[i], vc)) P->k = alone[i];
                vi = nvp++;
            }
            {
                /* the v1 kernel's grid sized for this batch, as vLLM sizes
                 * its grid from the batch's token count */
                vllm_path *P = &vp[vi];
                ramp_select_device sdv;
                TRY(ramp_selector_device(P->sel, &sdv));
                ramp_moe_params p;
                memset(&p, 0, sizeof p);
                p.x = x; p.x_scale = g.bf16 ? 0 : xs;
                p.w13 = w13; p.w13_scale = w13s; p.w2 = w2; p.w2_scale = w2s;
                p.topk_weights = tw; p.sorted_ids = sdv.sorted_ids; p.tile_expert = sdv.tile_expert;
                p.num_tiles = sdv.meta + 4 * RAMP_SELECT_META_TILES;
                p.out = out; p.ws = ws; p.ws_count = cnt;
                p.num_tokens = Mt;
                long long bt = (long long)Mt * k / vc->rows + (Mt * k < EL ? Mt * k : EL);
                p.max_tiles = (int)(bt < sdv.max_tiles ? bt : sdv.max_tiles);
                TRY(ramp_graph_capture_begin(T.gpu, T.st));
                TRY(ramp_selector_launch(P->sel, ids, Mt, 0, T.st));
                TRY(ramp_moe_kernel_launch(P->k, &p, T.st));
                TRY(ramp_graph_capture_end(T.gpu, T.st, &P->g));
            }
            stat3 s_vllm = time_it(&T, replay, vp[vi].g);
            ROW("vllm", -1, vc, s_vllm);
            ramp_graph_free(vp[vi].g);
            vp[vi].g = NULL;
            char cn[64], vn[64];
            ramp_config_name(&plan.configs[chosen], cn, sizeof cn);
            ramp_config_name(vc, vn, sizeof vn);
            printf("%-6d %-8s %6d %6d  %-24s %9.2f %9.2f %9.2f %+9.2f  %-24s %9.2f %6.2fx\n", Mt,
                   rname, pairs, active, cn, s_ramp.med, s_serial.med, s_alone_chosen.med,
                   s_ramp.med - s_alone_chosen.med, vn, s_vllm.med, s_vllm.med / s_ramp.med);
            printf("       select %.2f us + chosen entry in the polymorphic kernel %.2f us; layer - "
                   "both %+.2f us\n",
                   s_sel.med, s_poly_chosen.med, s_ramp.med - s_sel.med - s_poly_chosen.med);
            printf("       read floor (the faster read kernel): the active weights read alone %.2f us, after the selection "
                   "%.2f us; layer / that %.2fx\n",
                   s_read.med, s_sread.med, s_ramp.med / s_sread.med);
            if (with_v1) {
                char c1[64];
                ramp_config_name(&plan1.configs[chosen1], c1, sizeof c1);
                printf("       v1 layer (%s): %.2f us, v1 / v2 layer %.2fx\n", c1, s_v1.med,
                       s_v1.med / s_ramp.med);
            }
            fflush(stdout);
            moe_batch_free(&b);
        }
    }
    if (lj) {
        fprintf(lj, "\n]}\n");
        fclose(lj);
    }
    fclose(csv);
    tl_close(&TL, T.gpu);
    printf("\npolymorphic / alone per entry (median over %d loads; registers %d, smem %lld B, "
           "%d block(s)/SM, grid %u of %u):\n",
           nover, info.registers, info.smem_bytes, info.blocks_per_sm, info.grid,
           ramp_moe_poly_full_grid(poly));
    for (int i = 0; i < plan.count; i++) {
        double v[64];
        int n = nover < 64 ? nover : 64;
        memcpy(v, over[i], sizeof(double) * (size_t)n);
        qsort(v, (size_t)n, sizeof *v, cmp_double);
        char cn[64];
        ramp_config_name(&plan.configs[i], cn, sizeof cn);
        printf("  %-26s median %.4f  min %.4f  max %.4f\n", cn, v[n / 2], v[0], v[n - 1]);
    }
    printf("wrote %s\n", path);
    ramp_select_result_free(twin);
    ramp_select_result_free(twin1);
    ramp_select_result_free(grp);
    for (int i = 0; i < RAMP_MENU_MAX; i++) ramp_moe_v2_free(alone2[i]);
    ramp_layer_free(L1);
    free(counts);
    for (int i = 0; i < nvp; i++) {
        ramp_graph_free(vp[i].g);
        ramp_selector_free(vp[i].sel);
    }
    ramp_selector_free(sel_only);
    read_floor_free(&RF, T.gpu);
    if (flush_read) {
        ramp_graph_free(flush_g);
        read_floor_free(&RFF, T.gpu);
    }
    for (int i = 0; i < ncfg; i++) ramp_moe_kernel_free(alone[i]);
    ramp_moe_poly_free(poly);
    ramp_graph_free(G_any);
    ramp_layer_free(L);
    ramp_layer_free(Ls);
    ramp_layer_free(Ltw[0]);
    ramp_layer_free(Ltw[1]);
    ramp_layer_free(Lq[0]);
    ramp_layer_free(Lq[1]);
    ramp_layer_free(Lp);
    ramp_layer_free(Lpipe);
    ramp_layer_free(Ldet);
    ramp_layer_free(Lunits);
    ramp_layer_free(Lshape);
    ramp_layer_free(Ljit);
    ramp_layer_free(Lujit);
    ramp_layer_free(Lone);
    ramp_layer_free(Luone);
    ramp_layer_free(Lunits2);
    for (int q = 0; q < 5; q++) ramp_layer_free(Lsplit[q]);
    for (int q = 0; q < 3; q++) ramp_layer_free(Lwide[q]);
    ramp_policy_free(table);
    ramp_timing_free(ds1);
    ramp_timing_free(ds);
    moe_weights_free(&W);
    free(T.samples);
    ramp_gpu_close(T.gpu);
    if (check_failed)
        fprintf(stderr, "bench_layer: a variant's output (det, split, units) failed its check "
                        "(above)\n");
    return check_failed;
}
