/*
 * bench_stack.c - the MoE layer as a forward pass runs it: many layers back
 * to back in one CUDA graph, each reading its own weights, against the same
 * stack of pure weight reads.
 *
 * bench_layer times one layer's graph after emptying L2. That time holds
 * the graph launch and the events around it (3-4 us in which no kernel runs,
 * kernels/moe_v2.md session 26) and the drain of the flush; a serving
 * engine captures the whole forward pass as one graph and pays neither per
 * layer. On loads whose weights stream in 8-20 us (Qwen3-30B, OLMoE) those
 * microseconds are most of the distance to issue #5's 1.2x. Here:
 *
 *   ramp-stack   what one more layer adds to a stack: graphs of N and 2N
 *                layers (layer i reads weight set i mod S, S copies of the
 *                local experts, so a layer's weights were last read S - 1
 *                layers earlier and are not in L2), replayed back to back in
 *                alternation; (median(2N) - median(N)) / N
 *   ramp-stack-avg   median(2N) / 2N (the launch spread over 2N layers)
 *   select+read-bulk-stack / read-bulk-stack   the same for the measured
 *                floor (bench_layer's select+read-bulk: the layer's
 *                selection kernel, then a kernel reading the load's active
 *                weights and scales by TMA bulk copies, by PDL) and for the
 *                read alone
 *   ramp-stack-selpdl (--select-pdl 1)   ramp-stack for layers whose
 *                selection kernel is a programmatic dependent of the kernel
 *                before it (ramp_layer_desc.select_pdl): its launch overlaps
 *                the previous layer's last blocks
 *   ramp-stack-onemenu (--one-menu 1)   ramp-stack for layers without size
 *                classes (ramp_layer_desc.one_menu 1): the whole menu's kernel
 *                for every batch, what size classes are measured against
 *   ramp / ramp-units, select+read-bulk   one layer's (one floor's) graph after L2 is
 *                emptied by a 512 MiB read: bench_layer --flush read's ramp
 *                (ramp-units with --units 1) and select+read-bulk rows,
 *                measured in the same process
 *
 * The copy rate (bench_common.h) is measured in the same process; every
 * load's floor is its active experts' bytes (3 h d + scales each) at that
 * rate, as bench/targets.py's. Loads: bench_layer's (same seed, same draw
 * order), so --tokens 64,128,... gives bench_layer's first loads.
 *
 * Checked on every load: the N-layer graph adds N times what one layer adds
 * (the output of a stack run once against N times a single layer's, 1e-3
 * of the largest value): a stack that skipped a layer fails the run (exit
 * 1, no files written).
 *
 * Writes OUTDIR/stack-<model>-<layout>.csv (bench_layer's columns) and
 * OUTDIR/stack-<model>-<layout>.md (the table against the copy floor), each
 * written to a temporary name and renamed when complete.
 */
#include "bench_common.h"
#include "bench_args.h"
#include "bench_read.h"
#include "bench_timeline.h"
#include "select_cpu.h"

#include "../tests/moe_data.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

#undef DIE /* bench_common.h's returns from main; helpers here exit */
#define DIE(...)                                                  \
    do {                                                          \
        fprintf(stderr, "bench_stack: " __VA_ARGS__);             \
        fprintf(stderr, " (%s)\n", ramp_last_error());            \
        exit(1);                                                  \
    } while (0)

static const char *USAGE =
    "usage: bench_stack --plan PLAN.json --out-dir DIR [--tokens 64,128,256,512]\n"
    "                   [--layers N] [--sets S] [--reps R] [--seed S] [--units 0|1]\n"
    "                   [--select-pdl 0|1] [--one-menu 0|1] [--many-classes 0|1]\n"
    "                   [--check 0|1] [--l2pf MB] [--timeline 0|1]\n"
    "\n"
    "Times RaMP's FP8 layer (kernel v2) as a forward pass runs it: N and 2N\n"
    "layers back to back in one CUDA graph, each on its own copy of the local\n"
    "experts' weights (S copies, reused in turn), and reports what one more\n"
    "layer adds, beside the same stack of the measured floor (the selection,\n"
    "then a kernel that only reads the active weights) and one layer's graph\n"
    "after L2 is emptied by a read (bench_layer --flush read's figure). GPU 0\n"
    "of the plan's layout; uniform and Zipf-skewed routings of each token count\n"
    "(bench_layer's loads for the same seed). Needs a GPU.\n"
    "  --layers N   the shorter stack (default 8; the longer is 2N)\n"
    "  --sets S     weight copies (default 8, at least 2): S x the active weights\n"
    "               should exceed the 50 MB L2 a few times over\n"
    "  --reps R     timed replays of each graph (default 20, after 3 warm-ups)\n"
    "  --units 1    weights in stage units (ramp_layer_desc.weight_units), as\n"
    "               bench_layer --units 1; the plan should be fit on a units dataset\n"
    "  --select-pdl 1  also the stacks of layers whose selection kernel is a\n"
    "               programmatic dependent of the kernel before it\n"
    "               (ramp_layer_desc.select_pdl; rows ramp-stack-selpdl, checked as\n"
    "               the plain stacks)\n"
    "  --one-menu 1 also the stacks of layers without size classes\n"
    "               (ramp_layer_desc.one_menu 1: the whole menu's kernel for every\n"
    "               batch; rows ramp-stack-onemenu, checked as the plain stacks)\n"
    "  --many-classes 1  the layers make size classes with several local experts\n"
    "               too (ramp_layer_desc.many_expert_classes)\n"
    "  --l2pf MB    every layer asks L2 for up to MB of its local experts'\n"
    "               weights under its selection (ramp_layer_desc.l2_prefetch_mb,\n"
    "               an experiment; not with --units 1)\n"
    "  --timeline 1 every kernel stamps kernels/timeline.cuh's %globaltimer events\n"
    "               (with a diagnostic's defines too); per load, after the timings,\n"
    "               one replay of the N-layer stack (the stamps left are its last\n"
    "               layer's) and one of the single layer after the read flush:\n"
    "               log lines `timeline`, every block in\n"
    "               DIR/timeline-<model>-<layout>.csv\n"
    "  --check 0    do not compare a stack's output with N x one layer's: for\n"
    "               timing diagnostics, whose outputs are wrong by design\n"
    "               (RAMP_JIT_DEFINES=RAMP_MV2_DIAG=N, kernels/moe_v2.cuh); the\n"
    "               tables then say the check was skipped\n"
    "Writes DIR/stack-<model>-<layout>.csv and .md.\n";

typedef struct {
    double med, p10, p90;
} stat3;

static stat3 stat_of(double *x, int n) {
    qsort(x, (size_t)n, sizeof *x, bench_cmp_double);
    return (stat3){x[n / 2], x[n / 10], x[(n * 9) / 10]};
}

typedef struct {
    ramp_gpu *gpu;
    ramp_stream st;
    ramp_event *e0, *e1;
    ramp_graph *flush; /* a 512 MiB read: leaves L2 clean */
    int reps;
    int check; /* 0: stacks' outputs not compared (--check 0, timing diagnostics) */
    double *a, *b; /* [reps] samples */
} timer;

static double replay_us(timer *T, ramp_graph *g) {
    double us;
    if (ramp_event_record(T->e0, T->st) != RAMP_OK || ramp_graph_replay(g, T->st) != RAMP_OK ||
        ramp_event_record(T->e1, T->st) != RAMP_OK || ramp_event_elapsed_us(T->e0, T->e1, &us) != RAMP_OK)
        DIE("timing a graph replay");
    return us;
}

/* One graph, each replay after the L2 flush. */
static stat3 time_flushed(timer *T, ramp_graph *g) {
    int n = 0;
    for (int r = -3; r < T->reps; r++) {
        if (ramp_graph_replay(T->flush, T->st) != RAMP_OK) DIE("the L2 flush");
        const double us = replay_us(T, g);
        if (r >= 0) T->a[n++] = us;
    }
    return stat_of(T->a, n);
}

/* Two stacks replayed back to back, no flush (each layer's weights are cold
 * by construction), alternating A B, B A, ... so neither always runs first. */
static void time_stacks(timer *T, ramp_graph *ga, ramp_graph *gb, stat3 *sa, stat3 *sb) {
    int n = 0;
    for (int r = -3; r < T->reps; r++) {
        for (int j = 0; j < 2; j++) {
            const int first_a = (r & 1) == 0;
            ramp_graph *g = (j == 0) == first_a ? ga : gb;
            const double us = replay_us(T, g);
            if (r < 0) continue;
            if (g == ga) T->a[n] = us;
            else T->b[n] = us;
        }
        if (r >= 0) n++;
    }
    *sa = stat_of(T->a, n);
    *sb = stat_of(T->b, n);
}

/* What one more layer adds: the difference of the two stacks' medians over
 * the N layers between them (p10 and p90 the same of theirs). */
static stat3 per_layer(stat3 n1, stat3 n2, int layers) {
    return (stat3){(n2.med - n1.med) / layers, (n2.p10 - n1.p10) / layers,
                   (n2.p90 - n1.p90) / layers};
}

static ramp_graph *capture_layers(timer *T, ramp_layer **L, int sets, int layers,
                                  const ramp_layer_io *io) {
    ramp_graph *g = NULL;
    if (ramp_graph_capture_begin(T->gpu, T->st) != RAMP_OK) DIE("capture");
    for (int i = 0; i < layers; i++)
        if (ramp_layer_run(L[i % sets], io, T->st) != RAMP_OK) DIE("layer %d of %d", i, layers);
    if (ramp_graph_capture_end(T->gpu, T->st, &g) != RAMP_OK) DIE("capture of %d layers", layers);
    return g;
}

/* with_select: each read after the selection (by PDL, as bench_layer's
 * select+read-bulk). */
static ramp_graph *capture_reads(timer *T, read_floor *rf, ramp_selector *sel, ramp_devptr ids,
                                 int tokens, int sets, int layers, int with_select) {
    ramp_graph *g = NULL;
    if (ramp_graph_capture_begin(T->gpu, T->st) != RAMP_OK) DIE("capture");
    for (int i = 0; i < layers; i++) {
        if (with_select && ramp_selector_launch(sel, ids, tokens, 0, T->st) != RAMP_OK)
            DIE("selection %d", i);
        if (read_floor_launch(&rf[i % sets], T->gpu, T->st, with_select, 1) != RAMP_OK)
            DIE("read %d", i);
    }
    if (ramp_graph_capture_end(T->gpu, T->st, &g) != RAMP_OK) DIE("capture of %d reads", layers);
    return g;
}

/* Runs g once on a zeroed output and downloads it. */
static void run_once(timer *T, ramp_graph *g, ramp_devptr out, float *host, size_t n) {
    if (ramp_gpu_fill32_async(T->gpu, out, 0, n, T->st) != RAMP_OK ||
        ramp_graph_replay(g, T->st) != RAMP_OK || ramp_stream_sync(T->gpu, T->st) != RAMP_OK ||
        ramp_gpu_download(T->gpu, host, out, n * 4) != RAMP_OK)
        DIE("running a graph once");
}

/* Runs the N-layer stack g once and checks that it added N times what one
 * layer adds (o1, from run_once on the one-layer graph): 1e-3 of the largest
 * value (the reductions' order differs), nothing where no pair is local.
 * Returns 1 if it does; says where it does not. */
static int stack_adds_up(timer *T, ramp_graph *g, int layers, ramp_devptr out, const float *o1,
                         float *oN, size_t n, int pairs, int tokens, const char *routing,
                         const char *what) {
    if (!T->check) return 1;
    run_once(T, g, out, oN, n);
    double big = 0, err = 0;
    for (size_t i = 0; i < n; i++) {
        const double want = (double)layers * o1[i];
        if (fabs(want) > big) big = fabs(want);
        const double e = fabs((double)oN[i] - want);
        if (!(e <= err)) err = e; /* NaN propagates */
    }
    const int ok = pairs == 0 ? big == 0 && err == 0 : big > 0 && err <= 1e-3 * big;
    if (!ok)
        fprintf(stderr, "bench_stack: %d tokens %s: %d layers'%s output differs from %d x one "
                        "layer's by %g (largest %g)\n", tokens, routing, layers, what, layers, err, big);
    return ok;
}

/* A variant of the layers (select_pdl, one_menu) in the same stacks: checked
 * as the plain ones (clears *ok on a mismatch), what one more layer adds. */
static stat3 variant_stack(timer *T, ramp_layer **Lv, int sets, int layers, const ramp_layer_io *io,
                           ramp_devptr out, const float *o1, float *oN, int tokens, int d, int pairs,
                           const char *routing, const char *what, int *ok) {
    ramp_graph *vN = capture_layers(T, Lv, sets, layers, io);
    ramp_graph *v2N = capture_layers(T, Lv, sets, 2 * layers, io);
    *ok &= stack_adds_up(T, vN, layers, out, o1, oN, (size_t)tokens * d, pairs, tokens, routing, what);
    stat3 a, b;
    time_stacks(T, vN, v2N, &a, &b);
    ramp_graph_free(vN);
    ramp_graph_free(v2N);
    return per_layer(a, b, layers);
}

static int parse_int(const char *opt, const char *v, int lo, int hi) {
    char *end = NULL;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < lo || x > hi) {
        fprintf(stderr, "bench_stack: %s %s: an integer in %d..%d\n%s", opt, v, lo, hi, USAGE);
        exit(2);
    }
    return (int)x;
}

int main(int argc, char **argv) {
    const char *plan_path = NULL, *outdir = NULL, *tokens_arg = "64,128,256,512";
    int layers = 8, sets = 8, reps = 20, units = 0, select_pdl = 0, one_menu = 0, many = 0, check = 1, l2pf = 0, timeline = 0;
    unsigned long long seed = 1;
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(USAGE, stdout);
            return 0;
        }
        static const char *const known[] = {"--plan", "--out-dir", "--tokens", "--layers",
                                            "--sets",  "--reps",    "--units",  "--seed",
                                            "--select-pdl", "--one-menu", "--many-classes", "--check", "--l2pf", "--timeline"};
        const int rc = bench_option("bench_stack", USAGE, a, v, known, sizeof known / sizeof *known);
        if (rc >= 0) return rc;
        if (!strcmp(a, "--plan")) plan_path = v;
        else if (!strcmp(a, "--out-dir")) outdir = v;
        else if (!strcmp(a, "--tokens")) tokens_arg = v;
        else if (!strcmp(a, "--layers")) layers = parse_int(a, v, 1, 256);
        else if (!strcmp(a, "--sets")) sets = parse_int(a, v, 2, 64);
        else if (!strcmp(a, "--reps")) reps = parse_int(a, v, 1, 100000);
        else if (!strcmp(a, "--units")) units = parse_int(a, v, 0, 1);
        else if (!strcmp(a, "--select-pdl")) select_pdl = parse_int(a, v, 0, 1);
        else if (!strcmp(a, "--one-menu")) one_menu = parse_int(a, v, 0, 1);
        else if (!strcmp(a, "--many-classes")) many = parse_int(a, v, 0, 1);
        else if (!strcmp(a, "--check")) check = parse_int(a, v, 0, 1);
        else if (!strcmp(a, "--l2pf")) l2pf = parse_int(a, v, 0, RAMP_L2PF_MAX_MB);
        else if (!strcmp(a, "--timeline")) timeline = parse_int(a, v, 0, 1);
        else { /* --seed */
            char *end = NULL;
            seed = strtoull(v, &end, 10);
            if (end == v || *end || v[0] == '-') {
                fprintf(stderr, "bench_stack: --seed %s: a non-negative integer\n%s", v, USAGE);
                return 2;
            }
        }
    }
    if (!plan_path || !outdir) {
        fprintf(stderr, "bench_stack: --plan and --out-dir are required\n%s", USAGE);
        return 2;
    }
    int tokens_list[32], ntok = 0, max_tokens = 0;
    for (const char *p = tokens_arg; *p;) {
        char *end;
        long t = strtol(p, &end, 10);
        if (end == p || t < 1 || t > 65536 || (*end && *end != ',') || ntok == 32) {
            fprintf(stderr, "bench_stack: --tokens %s: up to 32 counts in 1..65536, "
                            "comma-separated\n", tokens_arg);
            return 2;
        }
        tokens_list[ntok++] = (int)t;
        if ((int)t > max_tokens) max_tokens = (int)t;
        p = *end ? end + 1 : end;
    }

    ramp_plan plan;
    if (ramp_plan_read(plan_path, &plan) != RAMP_OK) DIE("reading %s", plan_path);
    if (plan.geom.bf16) DIE("%s: a BF16 plan; this bench serves FP8 layers", plan_path);
    ramp_model model;
    if (ramp_model_lookup(plan.model, &model) != RAMP_OK) DIE("%s: model %s", plan_path, plan.model);
    const ramp_geometry g = plan.geom;
    const int EL = g.experts, E = model.experts, k = g.topk, d = g.hidden, h = g.inter;

    timer T;
    memset(&T, 0, sizeof T);
    T.reps = reps;
    T.check = check;
    T.a = malloc(sizeof(double) * (size_t)reps);
    T.b = malloc(sizeof(double) * (size_t)reps);
    if (!T.a || !T.b) DIE("out of memory");
    if (ramp_gpu_open(0, &T.gpu) != RAMP_OK) DIE("opening GPU 0");
    if (ramp_stream_create(T.gpu, &T.st) != RAMP_OK || ramp_event_create(T.gpu, &T.e0) != RAMP_OK ||
        ramp_event_create(T.gpu, &T.e1) != RAMP_OK)
        DIE("a stream and events");
    ramp_gpu_info gi;
    if (ramp_gpu_get_info(T.gpu, &gi) != RAMP_OK) DIE("device info");
    double copy_rate = 0;
    if (bench_copy_rate(T.gpu, T.st, gi.limits.sms, T.e0, T.e1, &copy_rate) != RAMP_OK)
        DIE("the copy rate");
    printf("copy rate %.2f TB/s\n", copy_rate / 1e12);
    /* --timeline: the stamps' address must reach every compile, so before
     * the layers; the CSV under a temporary name until the run completes */
    tl_state TL;
    memset(&TL, 0, sizeof TL);
    char tl_path[1024], tl_tmp[1100];
    snprintf(tl_path, sizeof tl_path, "%s/timeline-%s-%s.csv", outdir, plan.model, plan.layout);
    snprintf(tl_tmp, sizeof tl_tmp, "%s.tmp", tl_path);
    if (timeline) {
        const char *why = NULL;
        if (tl_open(&TL, T.gpu, tl_tmp, &why)) DIE("--timeline: %s (%s)", why, tl_tmp);
    }
    const size_t flush_bytes = (size_t)512 << 20;
    ramp_devptr flush_buf;
    read_floor flush_rf;
    if (ramp_gpu_alloc(T.gpu, flush_bytes, &flush_buf) != RAMP_OK ||
        ramp_gpu_fill32_async(T.gpu, flush_buf, 3, flush_bytes / 4, T.st) != RAMP_OK ||
        read_flush_graph(&flush_rf, T.gpu, T.st, flush_buf, flush_bytes, &T.flush) != RAMP_OK)
        DIE("the L2 flush");

    /* the weights, drawn as bench_layer draws them (then its loads follow),
     * uploaded S times */
    ramp_rng rng;
    ramp_rng_seed(&rng, seed);
    moe_weights W;
    if (moe_weights_make_fast(&rng, EL, k, h, d, 0, &W)) DIE("out of memory");
    const size_t e13 = (size_t)2 * h * d, e2 = (size_t)d * h; /* bytes an expert, FP8 */
    const size_t s13e = (size_t)(2 * h / 128) * (d / 128) * 4, s2e = (size_t)(d / 128) * (h / 128) * 4;
    const size_t n13 = EL * e13, n2 = EL * e2;
    const void *src13 = W.w13, *src2 = W.w2;
    uint8_t *u13 = NULL, *u2 = NULL;
    if (units) {
        const int64_t sh13[3] = {EL, 2 * (int64_t)h, d}, sh2[3] = {EL, d, h};
        u13 = malloc(n13);
        u2 = malloc(n2);
        if (!u13 || !u2) DIE("out of memory");
        if (ramp_weights_to_units(sh13, sh2, 1, W.w13, W.w2, u13, u2) != RAMP_OK) DIE("stage units");
        src13 = u13;
        src2 = u2;
    }
    printf("%s %s: %d local experts, %d weight sets of %.1f MB, stacks of %d and %d layers%s\n",
           plan.model, plan.layout, EL, sets, (n13 + n2 + EL * (s13e + s2e)) / 1e6, layers,
           2 * layers, units ? ", stage units" : "");
    fflush(stdout);
    ramp_devptr *w13 = calloc((size_t)sets, sizeof *w13), *w2 = calloc((size_t)sets, sizeof *w2);
    ramp_devptr *w13s = calloc((size_t)sets, sizeof *w13s), *w2s = calloc((size_t)sets, sizeof *w2s);
    ramp_layer **L = calloc((size_t)sets, sizeof *L), **Lp = calloc((size_t)sets, sizeof *Lp),
               **Lo = calloc((size_t)sets, sizeof *Lo);
    read_floor *rf = calloc((size_t)sets, sizeof *rf);
    if (!w13 || !w2 || !w13s || !w2s || !L || !Lp || !Lo || !rf) DIE("out of memory");
    ramp_layer_desc ld;
    memset(&ld, 0, sizeof ld);
    ld.w13_shape[0] = EL; ld.w13_shape[1] = 2 * h; ld.w13_shape[2] = d;
    ld.w2_shape[0] = EL; ld.w2_shape[1] = d; ld.w2_shape[2] = h;
    ld.experts = E;
    ld.local_experts = EL;
    ld.max_tokens = max_tokens;
    ld.kernel = RAMP_KERNEL_V2;
    ld.weight_units = units;
    ld.many_expert_classes = many;
    ld.l2_prefetch_mb = l2pf;
    for (int s = 0; s < sets; s++) {
        if (ramp_gpu_alloc(T.gpu, n13, &w13[s]) != RAMP_OK || ramp_gpu_alloc(T.gpu, n2, &w2[s]) != RAMP_OK ||
            ramp_gpu_alloc(T.gpu, EL * s13e, &w13s[s]) != RAMP_OK ||
            ramp_gpu_alloc(T.gpu, EL * s2e, &w2s[s]) != RAMP_OK)
            DIE("weight set %d of %d (%.2f GB each)", s, sets, (n13 + n2) / 1e9);
        if (ramp_gpu_upload(T.gpu, w13[s], src13, n13) != RAMP_OK ||
            ramp_gpu_upload(T.gpu, w2[s], src2, n2) != RAMP_OK ||
            ramp_gpu_upload(T.gpu, w13s[s], W.w13_scale, EL * s13e) != RAMP_OK ||
            ramp_gpu_upload(T.gpu, w2s[s], W.w2_scale, EL * s2e) != RAMP_OK)
            DIE("uploading weight set %d", s);
        ld.w13 = w13[s]; ld.w2 = w2[s]; ld.w13_scale = w13s[s]; ld.w2_scale = w2s[s];
        if (ramp_layer_create(T.gpu, &plan, &ld, &L[s]) != RAMP_OK) DIE("the layer on set %d", s);
        ld.select_pdl = 1; /* the same weights, the selection a programmatic dependent */
        if (select_pdl && ramp_layer_create(T.gpu, &plan, &ld, &Lp[s]) != RAMP_OK)
            DIE("the select_pdl layer on set %d", s);
        ld.select_pdl = 0;
        ld.one_menu = 1; /* the same weights, no size classes */
        if (one_menu && ramp_layer_create(T.gpu, &plan, &ld, &Lo[s]) != RAMP_OK)
            DIE("the one_menu layer on set %d", s);
        ld.one_menu = 0;
        if (read_floor_init(&rf[s], T.gpu, 4 * (size_t)EL * (e13 / READ_PIECE + 4)) != RAMP_OK)
            DIE("the read floor");
    }
    free(u13);
    free(u2);
    moe_weights_free(&W);

    /* the batch and the selection (the floor's, and the CPU twin for the
     * load's pairs and active experts) */
    const size_t M = (size_t)max_tokens;
    ramp_devptr x, xs, ids, tw, out;
    if (ramp_gpu_alloc(T.gpu, M * d, &x) != RAMP_OK ||
        ramp_gpu_alloc(T.gpu, M * (d / 128) * 4 + 4, &xs) != RAMP_OK ||
        ramp_gpu_alloc(T.gpu, M * k * 4, &ids) != RAMP_OK || ramp_gpu_alloc(T.gpu, M * k * 4, &tw) != RAMP_OK ||
        ramp_gpu_alloc(T.gpu, M * d * 4, &out) != RAMP_OK)
        DIE("batch buffers");
    ramp_select_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.experts = E; sd.topk = k; sd.max_tokens = max_tokens; sd.local_experts = EL;
    sd.nentries = plan.count;
    for (int i = 0; i < plan.count; i++)
        if (ramp_select_entry_from_plan(&plan, i, &sd.entries[i]) != RAMP_OK) DIE("menu entry %d", i);
    ramp_select_result *twin = NULL;
    ramp_selector *sel = NULL;
    if (ramp_select_result_create(&sd, &twin) != RAMP_OK || ramp_selector_create(T.gpu, &sd, &sel) != RAMP_OK)
        DIE("the selection");
    float *o1 = malloc(M * d * 4), *oN = malloc(M * d * 4);
    if (!o1 || !oN) DIE("out of memory");

    /* outputs: temporary names, renamed when complete */
    char csv_path[1024], md_path[1024], csv_tmp[1100], md_tmp[1100];
    snprintf(csv_path, sizeof csv_path, "%s/stack-%s-%s.csv", outdir, plan.model, plan.layout);
    snprintf(md_path, sizeof md_path, "%s/stack-%s-%s.md", outdir, plan.model, plan.layout);
    snprintf(csv_tmp, sizeof csv_tmp, "%s.tmp", csv_path);
    snprintf(md_tmp, sizeof md_tmp, "%s.tmp", md_path);
    FILE *csv = fopen(csv_tmp, "w"), *md = csv ? fopen(md_tmp, "w") : NULL;
    if (!csv || !md) DIE("cannot write %s", csv ? md_tmp : csv_tmp);
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    /* diagnostics compiled into every kernel change what the rows mean: say so */
    const char *jit_defs = getenv("RAMP_JIT_DEFINES") ? getenv("RAMP_JIT_DEFINES") : "";
    fprintf(csv, "# bench_stack plan=%s layers=%d,%d sets=%d reps=%d units=%d seed=%llu copy_tb_s=%.3f "
                 "gpu=\"%s\" sms=%d driver=%d date=%s check=%d l2pf_mb=%d jit_defines=\"%s\"\n",
            plan_path, layers, 2 * layers, sets, reps, units, seed, copy_rate / 1e12, gi.limits.name,
            gi.limits.sms, gi.driver_version, date, check, l2pf, jit_defs);
    fprintf(csv, "model,layout,tokens,routing,local_pairs,active,impl,entry,config,us_median,us_p10,us_p90\n");
    fprintf(md, "# %s %s, FP8, kernel v2%s: the layer in a stack\n\n", plan.model, plan.layout,
            units ? " on stage units" : "");
    fprintf(md, "bench_stack, %s, %s (%d SMs), copy rate %.2f TB/s measured in the same process; "
                "stacks of %d and %d layers on %d weight sets, %d replays each; plan `%s`.\n\n",
            date, gi.limits.name, gi.limits.sms, copy_rate / 1e12, layers, 2 * layers, sets, reps,
            plan_path);
    if (l2pf)
        fprintf(md, "Every layer prefetches up to %d MB of its local weights into L2 under its "
                    "selection (ramp_layer_desc.l2_prefetch_mb).\n\n", l2pf);
    if (*jit_defs || !check)
        fprintf(md, "Kernels compiled with RAMP_JIT_DEFINES=`%s`; output check %s.\n\n", jit_defs,
                check ? "on (each stack adds N times one layer's output)"
                      : "skipped (--check 0: timing diagnostics, results wrong by design)");
    fprintf(md, "| tokens | routing | pairs | active | floor (us) | chosen | one layer, read flush (us) | "
                "over floor | in a stack (us) | over floor | stack avg (us) | select+read, one (us) | "
                "select+read in a stack (us) | over floor | read in a stack (us) | over floor |%s%s\n",
            select_pdl ? " select_pdl in a stack (us) |" : "",
            one_menu ? " one menu (no size classes) in a stack (us) |" : "");
    fprintf(md, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|%s%s\n",
            select_pdl ? "---|" : "", one_menu ? "---|" : "");
    int check_failed = 0, met = 0, loads = 0;
    double worst = 0, best = 1e30;
    printf("\n%-6s %-8s %6s %6s %9s  %-22s %9s %9s %9s %9s %9s\n", "tokens", "routing", "pairs",
           "active", "floor_us", "chosen", "one_us", "stack_us", "x_floor", "sread_st", "read_st");
    for (int t = 0; t < ntok; t++) {
        for (int shape = 0; shape < 2; shape++) {
            const int sh = shape ? MOE_SKEWED : MOE_UNIFORM;
            const char *rname = shape ? "skewed" : "uniform";
            moe_batch b;
            if (moe_batch_make(&rng, sh, tokens_list[t], k, E, EL, d, &b)) DIE("out of memory");
            const int Mt = b.tokens;
            if (ramp_gpu_upload(T.gpu, x, b.x, (size_t)Mt * d) != RAMP_OK ||
                ramp_gpu_upload(T.gpu, xs, b.x_scale, (size_t)Mt * (d / 128) * 4) != RAMP_OK ||
                ramp_gpu_upload(T.gpu, ids, b.ids, (size_t)Mt * k * 4) != RAMP_OK ||
                ramp_gpu_upload(T.gpu, tw, b.weights, (size_t)Mt * k * 4) != RAMP_OK)
                DIE("uploading the batch");
            if (ramp_select_cpu(&sd, Mt, b.ids, twin) != RAMP_OK) DIE("the CPU selection");
            const int chosen = twin->meta[RAMP_SELECT_META_CHOSEN];
            const int pairs = twin->meta[RAMP_SELECT_META_LOCAL];
            int active = 0;
            for (int s = 0; s < sets; s++) rf[s].n = 0;
            for (int e = 0; e < EL; e++) {
                if (twin->counts[e] == 0) continue;
                active++;
                for (int s = 0; s < sets; s++)
                    if (read_floor_add(&rf[s], w13[s] + e * e13, e13) != RAMP_OK ||
                        read_floor_add(&rf[s], w2[s] + e * e2, e2) != RAMP_OK ||
                        read_floor_add(&rf[s], w13s[s] + e * s13e, s13e) != RAMP_OK ||
                        read_floor_add(&rf[s], w2s[s] + e * s2e, s2e) != RAMP_OK)
                        DIE("the read floor's pieces");
            }
            for (int s = 0; s < sets; s++)
                if (read_floor_upload(&rf[s], T.gpu) != RAMP_OK) DIE("the read floor's pieces");
            const double floor_us = active * (double)(e13 + e2 + s13e + s2e) / copy_rate * 1e6;

            ramp_layer_io io;
            memset(&io, 0, sizeof io);
            io.x = x; io.x_scale = xs; io.topk_ids = ids; io.topk_weights = tw; io.out = out;
            io.tokens = Mt;
            ramp_graph *g1 = capture_layers(&T, L, sets, 1, &io);
            ramp_graph *gN = capture_layers(&T, L, sets, layers, &io);
            ramp_graph *g2N = capture_layers(&T, L, sets, 2 * layers, &io);
            /* the stack does N layers' work: N times one layer's output */
            run_once(&T, g1, out, o1, (size_t)Mt * d);
            int ok = stack_adds_up(&T, gN, layers, out, o1, oN, (size_t)Mt * d, pairs, Mt, rname, "");
            /* --select-pdl, --one-menu: the same stacks of the variant layers */
            const stat3 stack_p = select_pdl ? variant_stack(&T, Lp, sets, layers, &io, out, o1, oN, Mt, d,
                                                             pairs, rname, " (select_pdl)", &ok)
                                             : (stat3){0, 0, 0};
            const stat3 stack_o = one_menu ? variant_stack(&T, Lo, sets, layers, &io, out, o1, oN, Mt, d,
                                                           pairs, rname, " (one_menu)", &ok)
                                           : (stat3){0, 0, 0};
            check_failed |= !ok;
            stat3 one = time_flushed(&T, g1), sN, s2N;
            time_stacks(&T, gN, g2N, &sN, &s2N);
            const stat3 stack = per_layer(sN, s2N, layers);
            const stat3 avg = {s2N.med / (2 * layers), s2N.p10 / (2 * layers), s2N.p90 / (2 * layers)};

            ramp_graph *r1 = capture_reads(&T, rf, sel, ids, Mt, sets, 1, 1);
            ramp_graph *srN = capture_reads(&T, rf, sel, ids, Mt, sets, layers, 1);
            ramp_graph *sr2N = capture_reads(&T, rf, sel, ids, Mt, sets, 2 * layers, 1);
            ramp_graph *rN = capture_reads(&T, rf, sel, ids, Mt, sets, layers, 0);
            ramp_graph *r2N = capture_reads(&T, rf, sel, ids, Mt, sets, 2 * layers, 0);
            stat3 sread1 = time_flushed(&T, r1), a, c;
            time_stacks(&T, srN, sr2N, &a, &c);
            const stat3 sread = per_layer(a, c, layers);
            time_stacks(&T, rN, r2N, &a, &c);
            const stat3 read = per_layer(a, c, layers);

            char cn[64];
            ramp_config_name(&plan.configs[chosen], cn, sizeof cn);
            const char *layer_row = units ? "ramp-units" : "ramp";
            const struct {
                const char *impl;
                int entry;
                stat3 s;
            } rows[8] = {{layer_row, chosen, one},        {"ramp-stack", chosen, stack},
                         {"ramp-stack-avg", chosen, avg}, {"select+read-bulk", -1, sread1},
                         {"select+read-bulk-stack", -1, sread}, {"read-bulk-stack", -1, read},
                         {"ramp-stack-selpdl", chosen, stack_p}, {"ramp-stack-onemenu", chosen, stack_o}};
            for (int i = 0; i < 8; i++)
                if (i < 6 || (i == 6 && select_pdl) || (i == 7 && one_menu))
                fprintf(csv, "%s,%s,%d,%s,%d,%d,%s,%d,%s,%.3f,%.3f,%.3f\n", plan.model, plan.layout, Mt,
                        rname, pairs, active, rows[i].impl, rows[i].entry, cn, rows[i].s.med,
                        rows[i].s.p10, rows[i].s.p90);
            /* a load with no local expert active has no floor: its ratios are "-" */
            char r1s[16] = "-", rss[16] = "-", rsr[16] = "-", rrd[16] = "-";
            if (active > 0) {
                snprintf(r1s, sizeof r1s, "%.2fx", one.med / floor_us);
                snprintf(rss, sizeof rss, "%.2fx", stack.med / floor_us);
                snprintf(rsr, sizeof rsr, "%.2fx", sread.med / floor_us);
                snprintf(rrd, sizeof rrd, "%.2fx", read.med / floor_us);
            }
            char pcol[64] = "";
            if (select_pdl) snprintf(pcol, sizeof pcol, " %.1f |", stack_p.med);
            if (one_menu) snprintf(pcol + strlen(pcol), sizeof pcol - strlen(pcol), " %.1f |", stack_o.med);
            fprintf(md, "| %d | %s | %d | %d | %.1f | `%s` | %.1f | %s | %.1f | %s | %.1f | %.1f | "
                        "%.1f | %s | %.1f | %s |%s\n",
                    Mt, rname, pairs, active, floor_us, cn, one.med, r1s, stack.med, rss, avg.med,
                    sread1.med, sread.med, rsr, read.med, rrd, pcol);
            printf("%-6d %-8s %6d %6d %9.1f  %-22s %9.1f %9.1f %9s %9.1f %9.1f%s\n", Mt, rname, pairs,
                   active, floor_us, cn, one.med, stack.med, rss, sread.med, read.med,
                   ok ? "" : "  CHECK FAILED");
            if (select_pdl)
                printf("       select_pdl: %.2f us a layer in a stack (%+.2f us)\n", stack_p.med,
                       stack_p.med - stack.med);
            if (one_menu)
                printf("       one_menu: %.2f us a layer in a stack (size classes %+.2f us)\n",
                       stack_o.med, stack.med - stack_o.med);
            fflush(stdout);
            if (active > 0 && pairs <= 512) {
                loads++;
                met += stack.med <= 1.2 * floor_us;
                if (stack.med / floor_us > worst) worst = stack.med / floor_us;
                if (stack.med / floor_us < best) best = stack.med / floor_us;
            }
            if (timeline) { /* the stack's last layer, then the single layer after the flush */
                if (tl_zero(&TL, T.gpu, T.st) != RAMP_OK || ramp_graph_replay(gN, T.st) != RAMP_OK ||
                    ramp_stream_sync(T.gpu, T.st) != RAMP_OK ||
                    tl_report(&TL, T.gpu, "stack", Mt, rname, cn, 0) != RAMP_OK ||
                    tl_zero(&TL, T.gpu, T.st) != RAMP_OK || ramp_graph_replay(T.flush, T.st) != RAMP_OK ||
                    ramp_graph_replay(g1, T.st) != RAMP_OK || ramp_stream_sync(T.gpu, T.st) != RAMP_OK ||
                    tl_report(&TL, T.gpu, "one", Mt, rname, cn, 0) != RAMP_OK)
                    DIE("the timeline runs");
            }
            ramp_graph *all[8] = {g1, gN, g2N, r1, srN, sr2N, rN, r2N};
            for (int i = 0; i < 8; i++) ramp_graph_free(all[i]);
            moe_batch_free(&b);
        }
    }
    if (loads)
        fprintf(md, "\n- memory-bound loads (1-512 pairs): in a stack %.2f-%.2fx the copy floor; within 1.2x "
                    "on %d of %d\n", best, worst, met, loads);
    fprintf(md, "- *in a stack*: (median of %d layers - median of %d) / %d, graphs replayed back to back "
                "in alternation, each layer on its own weight set (cold in L2); *stack avg*: the %d-layer "
                "graph's median / %d. *select+read*: the layer's selection kernel, then a kernel that only "
                "reads the active weights by TMA bulk copies (PDL). *one layer*: one layer's graph after a "
                "512 MiB read emptied L2, events around the replay (bench_layer --flush read).\n",
            2 * layers, layers, layers, 2 * layers, 2 * layers);
    const int wrote = fclose(csv) == 0 && fclose(md) == 0;
    tl_close(&TL, T.gpu);
    if (check_failed) { /* timings of a stack that did not do its work: none kept */
        remove(csv_tmp);
        remove(md_tmp);
        if (timeline) remove(tl_tmp);
        fprintf(stderr, "bench_stack: a stack's output differed from N x one layer's: no files written\n");
        return 1;
    }
    if (!wrote || rename(csv_tmp, csv_path) || rename(md_tmp, md_path) ||
        (timeline && rename(tl_tmp, tl_path))) {
        remove(csv_tmp);
        remove(md_tmp);
        remove(csv_path);
        if (timeline) remove(tl_tmp);
        DIE("writing %s", csv_path);
    }
    printf("\nwrote %s and %s\n", csv_path, md_path);

    for (int s = 0; s < sets; s++) {
        ramp_layer_free(L[s]);
        ramp_layer_free(Lp[s]);
        ramp_layer_free(Lo[s]);
        read_floor_free(&rf[s], T.gpu);
        ramp_gpu_free(T.gpu, w13[s]);
        ramp_gpu_free(T.gpu, w2[s]);
        ramp_gpu_free(T.gpu, w13s[s]);
        ramp_gpu_free(T.gpu, w2s[s]);
    }
    ramp_selector_free(sel);
    ramp_select_result_free(twin);
    free(o1); free(oN); free(w13); free(w2); free(w13s); free(w2s); free(L); free(Lp); free(Lo); free(rf);
    free(T.a); free(T.b);
    return check_failed;
}
