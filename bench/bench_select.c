/*
 * bench_select.c - time of the selection kernel in a CUDA-graph replay, and
 * of the plain group-and-pad kernel (one fixed tile size) it replaces.
 *
 * Sizes of the issue: 8, 64, 512 and 4,096 token-expert pairs on this GPU,
 * 8, 16 and 32 local experts, a menu of six. Two routings of those pairs:
 *   ep8:   E = 8 x local experts, k = 8, `pairs` tokens routed uniformly:
 *          the kernel reads pairs x 8 ids and keeps about `pairs` of them
 *          (what a GPU under EP8 sees);
 *   local: E = local experts, k = 8, pairs / 8 tokens: every id is local.
 * Method: one graph holds REPS back-to-back launches (the kernel's time in a
 * replayed forward pass, launch gaps included); each graph replay is timed
 * with events; the per-launch time is the replay's time / REPS; we report
 * the median (and p10/p90) over many replays after a warm-up. A second
 * graph with a single launch gives the time of one replay, graph launch
 * included. Every configuration's output is checked against the CPU twin
 * once before timing.
 *
 * Also, timed the same way: floors (an empty kernel of 1024 and 32
 * threads; an empty cluster of 8 blocks, and one with a cluster barrier;
 * one and two dependent L2 round trips; straight-line code of 16 and 64 KB
 * against the same instructions in a loop, which prices cold instruction
 * fetch), and for 32 local experts the kernel with 32, 16 and 8 warps a
 * block (RAMP_SELECT_WARPS) beside the selector's own launch shape.
 *
 * Environment: RAMP_BENCH_WARPS (default "0,32,16,8"; 0 = the selector's
 * own shape, every size; others forced, 32 local experts only),
 * RAMP_BENCH_CTAS (e.g. "1,8": extra rows with the cluster size forced),
 * RAMP_BENCH_PROFILE=1 (after each row of the selector's own block size,
 * the profiling build: where a launch's time goes, phase by phase, cold and
 * warm; see kernels/select_params.h), RAMP_BENCH_FLOORS=0 (skip the
 * floors).
 *
 * Usage: bench_select [out.csv] [replays] [profile.csv]
 *        (defaults bench_select.csv, 300, bench_select_profile.csv)
 */
#include "bench_args.h"
#include "internal.h"
#include "ramp.h"
#include "select_cpu.h"

#include "../kernels/select_params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 20

#define TRY(expr)                                                            \
    do {                                                                     \
        ramp_status s_ = (expr);                                             \
        if (s_ != RAMP_OK) {                                                 \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr,    \
                    ramp_last_error());                                      \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    if (n <= 0) return 0.0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

typedef struct {
    double med, p10, p90, single;
} timing;

/* What one launch is: a selector launch or a bare kernel. */
typedef struct {
    ramp_selector *sel;
    ramp_devptr ids;
    int tokens;
    const ramp_kernel *kernel;
    unsigned blocks, threads;
    void **args;
} launch;

static void do_launch(const launch *l, ramp_stream st) {
    if (l->sel) {
        TRY(ramp_selector_launch(l->sel, l->ids, l->tokens, 0, st));
    } else {
        const unsigned g[3] = {l->blocks ? l->blocks : 1, 1, 1}, b[3] = {l->threads, 1, 1};
        TRY(ramp_kernel_launch(l->kernel, g, b, 0, st, l->args));
    }
}

/* Times REPS launches captured into one graph, replayed `replays` times
 * (median per launch), and a one-launch graph (median per replay). */
static timing time_launch(ramp_gpu *gpu, ramp_stream st, const launch *l,
                          int replays) {
    ramp_graph *g = NULL, *g1 = NULL;
    TRY(ramp_graph_capture_begin(gpu, st));
    for (int i = 0; i < REPS; i++) do_launch(l, st);
    TRY(ramp_graph_capture_end(gpu, st, &g));
    TRY(ramp_graph_capture_begin(gpu, st));
    do_launch(l, st);
    TRY(ramp_graph_capture_end(gpu, st, &g1));
    ramp_event *a, *b;
    TRY(ramp_event_create(gpu, &a));
    TRY(ramp_event_create(gpu, &b));
    for (int i = 0; i < 30; i++) TRY(ramp_graph_replay(g, st));
    TRY(ramp_stream_sync(gpu, st));
    double *t = malloc(sizeof(double) * (size_t)replays);
    double *t1 = malloc(sizeof(double) * (size_t)replays);
    for (int i = 0; i < replays; i++) {
        TRY(ramp_event_record(a, st));
        TRY(ramp_graph_replay(g, st));
        TRY(ramp_event_record(b, st));
        TRY(ramp_event_elapsed_us(a, b, &t[i]));
        t[i] /= REPS;
    }
    for (int i = 0; i < replays; i++) {
        TRY(ramp_event_record(a, st));
        TRY(ramp_graph_replay(g1, st));
        TRY(ramp_event_record(b, st));
        TRY(ramp_event_elapsed_us(a, b, &t1[i]));
    }
    qsort(t, (size_t)replays, sizeof *t, cmp_double);
    qsort(t1, (size_t)replays, sizeof *t1, cmp_double);
    timing r = {t[replays / 2], t[replays / 10], t[replays * 9 / 10], t1[replays / 2]};
    free(t);
    free(t1);
    ramp_event_free(a);
    ramp_event_free(b);
    ramp_graph_free(g);
    ramp_graph_free(g1);
    return r;
}

static timing time_selector(ramp_gpu *gpu, ramp_stream st, ramp_selector *s,
                            ramp_devptr ids, int tokens, int replays) {
    launch l = {.sel = s, .ids = ids, .tokens = tokens};
    return time_launch(gpu, st, &l, replays);
}

static void jit_kernel(ramp_gpu *gpu, const char *name, const char *source,
                       const char *entry, ramp_module **m, ramp_kernel **k) {
    ramp_jit_request req = {.name = name, .source = source};
    ramp_jit_result *jr;
    TRY(ramp_jit_compile(&req, &jr));
    TRY(ramp_module_load(gpu, jr->cubin, jr->cubin_size, m));
    TRY(ramp_module_kernel(*m, entry, 0, k));
    ramp_jit_result_free(jr);
}

/* The SM clock right now: a one-thread kernel spins for `cycles` clock64
 * cycles and reads %globaltimer (ns) around them. Small single-block
 * kernels leave the GPU mostly idle, and its clock may not boost: every
 * timing row reports the clock measured just after it. */
typedef struct {
    ramp_module *m;
    ramp_kernel *k;
    ramp_devptr out;
} clock_probe;

static void clock_probe_init(ramp_gpu *gpu, clock_probe *cp) {
    jit_kernel(gpu, "bench-clock",
               "extern \"C\" __global__ void ramp_clock(unsigned long long *out, long long spin) {\n"
               "  unsigned long long g0, g1;\n"
               "  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(g0));\n"
               "  long long t0 = clock64(), t1 = t0;\n"
               "  while (t1 - t0 < spin) t1 = clock64();\n"
               "  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(g1));\n"
               "  out[0] = (unsigned long long)(t1 - t0); out[1] = g1 - g0;\n"
               "}\n",
               "ramp_clock", &cp->m, &cp->k);
    TRY(ramp_gpu_alloc(gpu, 16, &cp->out));
}

static double clock_mhz(ramp_gpu *gpu, ramp_stream st, clock_probe *cp) {
    long long spin = 400000; /* 0.2 ms at 2 GHz */
    void *args[] = {&cp->out, &spin};
    const unsigned g[3] = {1, 1, 1}, b[3] = {1, 1, 1};
    TRY(ramp_kernel_launch(cp->k, g, b, 0, st, args));
    TRY(ramp_stream_sync(gpu, st));
    unsigned long long v[2];
    TRY(ramp_gpu_download(gpu, v, cp->out, sizeof v));
    return v[1] ? (double)v[0] / (double)v[1] * 1000.0 : 0.0;
}

/* The floors: what a launch of a given shape costs doing (almost) nothing,
 * and the price of the pieces every selection kernel pays. */
static const char floor_src[] =
    "#define R4(x) x x x x\n"
    "#define R16(x) R4(R4(x))\n"
    "#define R64(x) R16(R4(x))\n"
    "#define STEP asm volatile(\"mad.lo.s32 %0, %0, %0, %4; mad.lo.s32 %1, %1, %1, %4;\"\\\n"
    "  \" mad.lo.s32 %2, %2, %2, %4; mad.lo.s32 %3, %3, %3, %4;\"\\\n"
    "  : \"+r\"(a), \"+r\"(b), \"+r\"(c), \"+r\"(d) : \"r\"(s));\n"
    "extern \"C\" __global__ void ramp_empty() {}\n"
    "extern \"C\" __global__ void __cluster_dims__(8, 1, 1) ramp_empty8() {}\n"
    "extern \"C\" __global__ void __cluster_dims__(8, 1, 1) ramp_csync8() {\n"
    "  asm volatile(\"barrier.cluster.arrive.release.aligned;\\n\\t\"\n"
    "               \"barrier.cluster.wait.acquire.aligned;\" ::: \"memory\");\n"
    "}\n"
    "extern \"C\" __global__ void ramp_load1(const int *in, int *out) {\n"
    "  if (threadIdx.x == 0) out[0] = __ldg(in) + 1;\n"
    "}\n"
    "extern \"C\" __global__ void ramp_load2(const int *in, int *out) {\n"
    "  if (threadIdx.x == 0) out[0] = __ldg(in + 64 + __ldg(in)) + 1; /* another line */\n"
    "}\n"
    "extern \"C\" __global__ void ramp_straight16(int *out, int s) {\n"
    "  int a = s, b = s + 1, c = s + 2, d = s + 3;\n"
    "  R64(R4(STEP))\n"
    "  if (a + b + c + d == 7) out[0] = a;\n"
    "}\n"
    "extern \"C\" __global__ void ramp_straight64(int *out, int s) {\n"
    "  int a = s, b = s + 1, c = s + 2, d = s + 3;\n"
    "  R64(R16(STEP))\n"
    "  if (a + b + c + d == 7) out[0] = a;\n"
    "}\n"
    "extern \"C\" __global__ void ramp_looped(int *out, int s, int n) {\n"
    "  int a = s, b = s + 1, c = s + 2, d = s + 3;\n"
    "  for (int i = 0; i < n; i++) { R16(STEP) }\n"
    "  if (a + b + c + d == 7) out[0] = a;\n"
    "}\n";

static void floors(ramp_gpu *gpu, ramp_stream st, int replays, FILE *csv) {
    ramp_jit_request req = {.name = "bench-floors", .source = floor_src};
    ramp_jit_result *jr;
    TRY(ramp_jit_compile(&req, &jr));
    ramp_module *m;
    TRY(ramp_module_load(gpu, jr->cubin, jr->cubin_size, &m));
    ramp_jit_result_free(jr);
    ramp_devptr buf;
    TRY(ramp_gpu_alloc(gpu, 1024, &buf));
    TRY(ramp_gpu_fill32_async(gpu, buf, 0, 256, st));
    ramp_devptr out = buf + 512;
    int seed = 3, n16 = 16, n64 = 64;
    void *a_io[] = {&buf, &out};
    void *a_s[] = {&out, &seed};
    void *a_l16[] = {&out, &seed, &n16};
    void *a_l64[] = {&out, &seed, &n64};
    struct {
        const char *entry, *what;
        unsigned blocks, threads;
        void **args;
    } f[] = {
        {"ramp_empty", "empty, 1 block of 1024 threads", 1, 1024, NULL},
        {"ramp_empty", "empty, 1 block of 32 threads", 1, 32, NULL},
        {"ramp_empty8", "empty, cluster of 8 blocks of 1024", 8, 1024, NULL},
        {"ramp_csync8", "cluster of 8 x 1024, one cluster barrier", 8, 1024, NULL},
        {"ramp_load1", "1 block of 1024, one L2 round trip", 1, 1024, a_io},
        {"ramp_load2", "1 block of 1024, two dependent L2 round trips", 1, 1024, a_io},
        {"ramp_straight16", "1 warp, 1024 IMAD straight (16 KB of code)", 1, 32, a_s},
        {"ramp_looped", "1 warp, 1024 IMAD in a 3 KB loop", 1, 32, a_l16},
        {"ramp_straight64", "1 warp, 4096 IMAD straight (64 KB of code)", 1, 32, a_s},
        {"ramp_looped", "1 warp, 4096 IMAD in a 3 KB loop", 1, 32, a_l64},
        {"ramp_straight16", "4 warps, 1024 IMAD straight (16 KB of code)", 1, 128, a_s},
        {"ramp_looped", "4 warps, 1024 IMAD in a 3 KB loop", 1, 128, a_l16},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        ramp_kernel *k;
        TRY(ramp_module_kernel(m, f[i].entry, 0, &k));
        launch l = {.kernel = k, .blocks = f[i].blocks, .threads = f[i].threads,
                    .args = f[i].args};
        timing t = time_launch(gpu, st, &l, replays);
        printf("floor: %-46s %6.2f us per launch, %5.2f us per 1-launch replay\n",
               f[i].what, t.med, t.single);
        fprintf(csv, "# floor \"%s\" per_launch_us=%.3f single_replay_us=%.3f\n", f[i].what,
                t.med, t.single);
    }
    TRY(ramp_gpu_free(gpu, buf));
    ramp_module_free(m);
}

/* Where one launch's time goes: the profiling build of the same selector,
 * REPS launches in a graph, one replay recorded. Prints and writes the
 * median over the launches of each step's cycles, cold (first pass) and
 * warm (the same work again on the same SM), the gap between consecutive
 * launches (%globaltimer) and how many distinct SMs ran them. */
static void profile_row(ramp_gpu *gpu, ramp_stream st, const ramp_select_desc *d,
                        ramp_devptr ids, int tokens, double mhz, const char *label,
                        FILE *pcsv) {
    setenv("RAMP_SELECT_PROFILE", "1", 1);
    ramp_selector *s;
    TRY(ramp_selector_create(gpu, d, &s));
    unsetenv("RAMP_SELECT_PROFILE");
    ramp_graph *g;
    TRY(ramp_graph_capture_begin(gpu, st));
    for (int i = 0; i < REPS; i++) TRY(ramp_selector_launch(s, ids, tokens, 0, st));
    TRY(ramp_graph_capture_end(gpu, st, &g));
    for (int i = 0; i < 5; i++) TRY(ramp_graph_replay(g, st));
    int n = 0;
    enum { W = RAMP_SEL_PROF_WORDS, K = RAMP_SEL_PROF_MARKS };
    static uint64_t rec[RAMP_SEL_PROF_RECORDS * RAMP_SEL_PROF_WORDS];
    TRY(ramp_selector_profile(s, st, rec, RAMP_SEL_PROF_RECORDS, &n)); /* clears */
    TRY(ramp_graph_replay(g, st));
    TRY(ramp_selector_profile(s, st, rec, RAMP_SEL_PROF_RECORDS, &n));
    double d_[2][K][RAMP_SEL_PROF_RECORDS], tot[2][RAMP_SEL_PROF_RECORDS];
    double gap[RAMP_SEL_PROF_RECORDS];
    int sms = 0, same = 0;
    uint64_t seen[RAMP_SEL_PROF_RECORDS];
    for (int i = 0; i < n; i++) {
        const uint64_t *r = rec + (size_t)i * W;
        int dup = 0;
        for (int j = 0; j < sms; j++) dup |= seen[j] == r[0];
        if (!dup) seen[sms++] = r[0];
        if (i > 0) {
            same += r[0] == rec[(size_t)(i - 1) * W];
            gap[i - 1] = (double)(int64_t)(r[1] - rec[(size_t)(i - 1) * W + 2]);
        }
        for (int pass = 0; pass < 2; pass++) {
            uint64_t prev = pass == 0 ? r[3] : r[8 + K - 1];
            for (int k = 0; k < K; k++) {
                uint64_t m = r[8 + pass * K + k];
                d_[pass][k][i] = (double)(int64_t)(m - prev);
                prev = m;
            }
            const uint64_t start = pass ? r[8 + K - 1] : r[3];
            tot[pass][i] = (double)(int64_t)(r[8 + pass * K + K - 1] - start);
        }
    }
    printf("  profile %-22s %2d launches on %2d SMs (%d repeats), gap %5.0f ns | cold", label,
           n, sms, same, median(gap, n - 1));
    fprintf(pcsv, "%s,%d,%d,%d,%.0f,%.0f", label, n, sms, same, median(gap, n - 1), mhz);
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < K; k++) {
            double v = median(d_[pass][k], n);
            printf(" %5.0f", v);
            fprintf(pcsv, ",%.0f", v);
        }
        double t = median(tot[pass], n);
        printf(" = %5.0f (%.2f us)%s", t, mhz > 0 ? t / mhz : 0.0, pass ? "\n" : " | warm");
        fprintf(pcsv, ",%.0f", t);
    }
    fprintf(pcsv, "\n");
    ramp_graph_free(g);
    ramp_selector_free(s);
}

/* "32,16" -> {32, 16}; NULL or empty -> the defaults. */
static int parse_list(const char *env, const int *defaults, int ndef, int *out, int max) {
    const char *v = getenv(env);
    if (!v || !*v) {
        for (int i = 0; i < ndef; i++) out[i] = defaults[i];
        return ndef;
    }
    int n = 0;
    for (const char *q = v; *q && n < max;) {
        out[n++] = atoi(q);
        while (*q && *q != ',') q++;
        if (*q == ',') q++;
    }
    return n;
}

static const char USAGE[] =
    "usage: bench_select [out.csv] [replays] [profile.csv]\n"
    "\n"
    "Times the selection kernel in CUDA-graph replays (8-4,096 token-expert\n"
    "pairs, 8-32 local experts, a menu of six) against the plain group-and-pad\n"
    "kernel it replaces, plus launch floors; every configuration checked\n"
    "against the CPU twin first. Defaults: bench_select.csv, 300 replays (at\n"
    "least 10), bench_select_profile.csv (RAMP_BENCH_PROFILE=1). Environment:\n"
    "RAMP_BENCH_WARPS, RAMP_BENCH_CTAS, RAMP_BENCH_PROFILE, RAMP_BENCH_FLOORS\n"
    "(the file's comment). Needs a GPU (exit 77 without one).\n";

int main(int argc, char **argv) {
    int rc = bench_args(argc, argv, "bench_select", USAGE, 0, 3);
    if (rc >= 0) return rc;
    const char *csv_path = argc > 1 ? argv[1] : "bench_select.csv";
    int replays = 300;
    if (argc > 2 && !bench_int_arg("bench_select", "replays", argv[2], 1, &replays)) return 2;
    const char *pcsv_path = argc > 3 ? argv[3] : "bench_select_profile.csv";
    if (replays < 10) replays = 10;
    const char *pe = getenv("RAMP_BENCH_PROFILE"), *fe = getenv("RAMP_BENCH_FLOORS");
    const int profile = pe && pe[0] == '1', do_floors = !(fe && fe[0] == '0');
    ramp_gpu *gpu = NULL;
    ramp_status st0 = ramp_gpu_open(0, &gpu);
    if (st0 == RAMP_ERR_NO_GPU) {
        fprintf(stderr, "bench_select: %s\n", ramp_last_error());
        return 77;
    }
    TRY(st0);
    ramp_gpu_info info;
    TRY(ramp_gpu_get_info(gpu, &info));
    ramp_stream st;
    TRY(ramp_stream_create(gpu, &st));
    FILE *csv = fopen(csv_path, "w");
    FILE *pcsv = profile ? fopen(pcsv_path, "w") : NULL;
    if (!csv || (profile && !pcsv)) {
        fprintf(stderr, "bench_select: cannot write %s or %s\n", csv_path, pcsv_path);
        return 1;
    }
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(csv, "# bench_select %s replays=%d reps_per_graph=%d gpu=\"%s\" sms=%d driver=%d date=%s\n",
            csv_path, replays, REPS, info.limits.name, info.limits.sms,
            info.driver_version, date);
    fprintf(csv, "warps,ctas,routing,local_experts,pairs,tokens,k,experts,local_pairs,chosen_rows,"
                 "select_us,select_p10_us,select_p90_us,select_single_replay_us,"
                 "group_us,group_p10_us,group_p90_us,group_single_replay_us,diff_us,sm_mhz\n");
    if (pcsv) {
        fprintf(pcsv, "# bench_select profile, %s, gpu=\"%s\"; cycles per step, median over "
                      "the %d launches of one graph replay\n", date, info.limits.name, REPS);
        fprintf(pcsv, "row,launches,sms,same_sm_repeats,gap_ns,sm_mhz");
        for (int pass = 0; pass < 2; pass++) {
            for (int k = 0; k < RAMP_SEL_PROF_MARKS; k++)
                fprintf(pcsv, ",%s%d", pass ? "warm" : "cold", k);
            fprintf(pcsv, ",%s_total", pass ? "warm" : "cold");
        }
        fprintf(pcsv, "\n");
    }
    printf("GPU: %s (%d SMs, driver %d), %s\n", info.limits.name, info.limits.sms,
           info.driver_version, date);
    printf("per-launch time in a graph of %d launches, median of %d replays (us)\n",
           REPS, replays);
    clock_probe cp;
    clock_probe_init(gpu, &cp);
    printf("SM clock before: %.0f MHz\n", clock_mhz(gpu, st, &cp));
    if (do_floors) floors(gpu, st, replays, csv);
    printf("%5s %4s %-6s %3s %6s %6s %6s %5s | %8s %8s | %8s %8s | %6s %5s\n", "warps",
           "ctas", "route", "EL", "pairs", "tokens", "local", "rows", "select", "1-launch",
           "group", "1-launch", "diff", "MHz");

    static const int locals[] = {8, 16, 32};
    static const int sizes[] = {8, 64, 512, 4096};
    static const int menu_rows[] = {2, 4, 8, 16, 32, 64};
    static const int warp_def[] = {0, 32, 16, 8};
    int warp_set[4], ctas_extra[4];
    const int nwarps = parse_list("RAMP_BENCH_WARPS", warp_def, 4, warp_set, 4);
    const int nctas = parse_list("RAMP_BENCH_CTAS", NULL, 0, ctas_extra, 4);
    ramp_rng rng;
    ramp_rng_seed(&rng, 20251130);
    double worst_select = 0, worst_diff = -1e9;
    int mismatches = 0;
    for (int wi = 0; wi < nwarps; wi++)
    for (int ci = -1; ci < nctas; ci++)
    for (int route = 0; route < 2; route++)
        for (int li = 0; li < 3; li++)
            for (int si = 0; si < 4; si++) {
                const int forced = warp_set[wi]; /* 0: the selector's own shape */
                if (forced && (locals[li] != 32 || ci >= 0)) continue; /* EL 32 only */
                char wenv[8], cenv[8];
                snprintf(wenv, sizeof wenv, "%d", forced);
                if (forced) setenv("RAMP_SELECT_WARPS", wenv, 1);
                else unsetenv("RAMP_SELECT_WARPS");
                if (ci >= 0) {
                    snprintf(cenv, sizeof cenv, "%d", ctas_extra[ci]);
                    setenv("RAMP_SELECT_CTAS", cenv, 1);
                } else {
                    unsetenv("RAMP_SELECT_CTAS");
                }
                const int EL = locals[li], pairs = sizes[si], k = 8;
                const int E = route == 0 ? 8 * EL : EL;
                const int tokens = route == 0 ? pairs : (pairs + k - 1) / k;
                ramp_select_desc d = {.experts = E, .topk = k, .max_tokens = tokens,
                                      .local_experts = EL, .first_expert = 0,
                                      .nentries = 6};
                for (int c = 0; c < 6; c++)
                    d.entries[c] = (ramp_select_entry){
                        .rows = menu_rows[c], .slices = 6, .slots = 132,
                        .theta = {3.0f + 0.5f * c, 6.0f, 0.02f * (6 - c), 0.25f}};
                ramp_select_desc dg = d;
                dg.group_only = 1;
                dg.nentries = 1;
                dg.entries[0].rows = 16;
                /* uniform routing, k distinct experts per token */
                int32_t *ids = malloc(sizeof(int32_t) * (size_t)tokens * k);
                for (int t = 0; t < tokens; t++)
                    for (int j = 0; j < k; j++) {
                        int32_t id;
                        int dup;
                        do {
                            id = (int32_t)ramp_rng_below(&rng, (uint32_t)E);
                            dup = 0;
                            for (int i = 0; i < j; i++) dup |= ids[t * k + i] == id;
                        } while (dup);
                        ids[t * k + j] = id;
                    }
                ramp_devptr dids;
                TRY(ramp_gpu_alloc(gpu, sizeof(int32_t) * (size_t)tokens * k, &dids));
                TRY(ramp_gpu_upload(gpu, dids, ids, sizeof(int32_t) * (size_t)tokens * k));
                ramp_selector *sel, *grp;
                TRY(ramp_selector_create(gpu, &d, &sel));
                TRY(ramp_selector_create(gpu, &dg, &grp));
                const int ctas = ramp_selector_ctas(sel), warps = ramp_selector_warps(sel);
                /* correctness once: GPU = CPU twin */
                ramp_select_result *gr, *cr;
                TRY(ramp_select_result_create(&d, &gr));
                TRY(ramp_select_result_create(&d, &cr));
                TRY(ramp_selector_launch(sel, dids, tokens, 0, st));
                TRY(ramp_selector_download(sel, st, gr));
                TRY(ramp_select_cpu(&d, tokens, ids, cr));
                int slots = cr->meta[RAMP_SELECT_META_SLOTS];
                if (memcmp(gr->meta, cr->meta, sizeof gr->meta) ||
                    memcmp(gr->sorted_ids, cr->sorted_ids, (size_t)slots * 4))
                    mismatches++;
                const int local = cr->meta[RAMP_SELECT_META_LOCAL];
                const int rows = d.entries[cr->meta[RAMP_SELECT_META_CHOSEN]].rows;
                ramp_select_result_free(gr);
                ramp_select_result_free(cr);

                timing ts = time_selector(gpu, st, sel, dids, tokens, replays);
                timing tg = time_selector(gpu, st, grp, dids, tokens, replays);
                double mhz = clock_mhz(gpu, st, &cp);
                double diff = ts.med - tg.med;
                if (!forced && ci < 0) {
                    if (ts.med > worst_select) worst_select = ts.med;
                    if (diff > worst_diff) worst_diff = diff;
                }
                const char *rname = route == 0 ? "ep8" : "local";
                printf("%5d %4d %-6s %3d %6d %6d %6d %5d | %8.2f %8.2f | %8.2f %8.2f | %+6.2f %5.0f\n",
                       warps, ctas, rname, EL, pairs, tokens, local, rows, ts.med, ts.single,
                       tg.med, tg.single, diff, mhz);
                fprintf(csv, "%d,%d,%s,%d,%d,%d,%d,%d,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.0f\n",
                        warps, ctas, rname, EL, pairs, tokens, k, E, local, rows, ts.med, ts.p10,
                        ts.p90, ts.single, tg.med, tg.p10, tg.p90, tg.single, diff, mhz);
                if (profile && !forced) {
                    char label[64];
                    snprintf(label, sizeof label, "%s/EL%d/%d/w%dc%d", rname, EL, pairs, warps,
                             ctas);
                    profile_row(gpu, st, &d, dids, tokens, mhz, label, pcsv);
                }
                ramp_selector_free(sel);
                ramp_selector_free(grp);
                TRY(ramp_gpu_free(gpu, dids));
                free(ids);
            }
    unsetenv("RAMP_SELECT_WARPS");
    unsetenv("RAMP_SELECT_CTAS");
    printf("SM clock after: %.0f MHz\n", clock_mhz(gpu, st, &cp));
    TRY(ramp_gpu_free(gpu, cp.out));
    ramp_module_free(cp.m);
    fclose(csv);
    if (pcsv) fclose(pcsv);
    printf("worst (the selectors' own shapes): selection %.2f us (target < 4); excess over "
           "group-only %.2f us (target < 1); %d output mismatches\n", worst_select, worst_diff,
           mismatches);
    TRY(ramp_stream_destroy(gpu, st));
    ramp_gpu_close(gpu);
    return mismatches ? 1 : 0;
}
