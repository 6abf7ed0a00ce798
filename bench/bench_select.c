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
 * Also: the floor (an empty kernel of 1024, 512, 256, 32 threads timed the
 * same way), and for 32 local experts the kernel built with 16 and 8 warps
 * (RAMP_SELECT_WARPS) beside the default 32.
 *
 * Usage: bench_select [out.csv] [replays]   (default bench_select.csv, 300)
 */
#include "internal.h"
#include "ramp.h"

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

typedef struct {
    double med, p10, p90, single;
} timing;

/* What one launch is: a selector launch or a bare kernel. */
typedef struct {
    ramp_selector *sel;
    ramp_devptr ids;
    int tokens;
    const ramp_kernel *kernel;
    unsigned threads;
} launch;

static void do_launch(const launch *l, ramp_stream st) {
    if (l->sel) {
        TRY(ramp_selector_launch(l->sel, l->ids, l->tokens, 0, st));
    } else {
        const unsigned g[3] = {1, 1, 1}, b[3] = {l->threads, 1, 1};
        TRY(ramp_kernel_launch(l->kernel, g, b, 0, st, NULL));
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
    ramp_jit_request req = {
        .name = "bench-clock",
        .source =
            "extern \"C\" __global__ void ramp_clock(unsigned long long *out, long long spin) {\n"
            "  unsigned long long g0, g1;\n"
            "  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(g0));\n"
            "  long long t0 = clock64(), t1 = t0;\n"
            "  while (t1 - t0 < spin) t1 = clock64();\n"
            "  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(g1));\n"
            "  out[0] = (unsigned long long)(t1 - t0); out[1] = g1 - g0;\n"
            "}\n"};
    ramp_jit_result *jr;
    TRY(ramp_jit_compile(&req, &jr));
    TRY(ramp_module_load(gpu, jr->cubin, jr->cubin_size, &cp->m));
    TRY(ramp_module_kernel(cp->m, "ramp_clock", 0, &cp->k));
    ramp_jit_result_free(jr);
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

/* The floor: an empty kernel of the same launch shape. */
static timing time_empty(ramp_gpu *gpu, ramp_stream st, unsigned threads,
                         int replays) {
    ramp_jit_request req = {.name = "bench-empty",
                            .source = "extern \"C\" __global__ void ramp_empty() {}\n"};
    ramp_jit_result *jr;
    TRY(ramp_jit_compile(&req, &jr));
    ramp_module *m;
    ramp_kernel *k;
    TRY(ramp_module_load(gpu, jr->cubin, jr->cubin_size, &m));
    TRY(ramp_module_kernel(m, "ramp_empty", 0, &k));
    launch l = {.kernel = k, .threads = threads};
    timing t = time_launch(gpu, st, &l, replays);
    ramp_module_free(m);
    ramp_jit_result_free(jr);
    return t;
}

int main(int argc, char **argv) {
    const char *csv_path = argc > 1 ? argv[1] : "bench_select.csv";
    int replays = argc > 2 ? atoi(argv[2]) : 300;
    if (replays < 10) replays = 10;
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
    if (!csv) {
        fprintf(stderr, "bench_select: cannot write %s\n", csv_path);
        return 1;
    }
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(csv, "# bench_select %s replays=%d reps_per_graph=%d gpu=\"%s\" sms=%d driver=%d date=%s\n",
            csv_path, replays, REPS, info.limits.name, info.limits.sms,
            info.driver_version, date);
    fprintf(csv, "warps,routing,local_experts,pairs,tokens,k,experts,local_pairs,chosen_rows,"
                 "select_us,select_p10_us,select_p90_us,select_single_replay_us,"
                 "group_us,group_p10_us,group_p90_us,group_single_replay_us,diff_us,sm_mhz\n");
    printf("GPU: %s (%d SMs, driver %d), %s\n", info.limits.name, info.limits.sms,
           info.driver_version, date);
    printf("per-launch time in a graph of %d launches, median of %d replays (us)\n",
           REPS, replays);
    clock_probe cp;
    clock_probe_init(gpu, &cp);
    printf("SM clock before: %.0f MHz\n", clock_mhz(gpu, st, &cp));
    static const unsigned floors[] = {1024, 512, 256, 32};
    for (int i = 0; i < 4; i++) {
        timing tf = time_empty(gpu, st, floors[i], replays);
        printf("floor: empty kernel, 1 block of %4u threads: %.2f us per launch, "
               "%.2f us per 1-launch replay\n", floors[i], tf.med, tf.single);
        fprintf(csv, "# floor threads=%u per_launch_us=%.3f single_replay_us=%.3f\n",
                floors[i], tf.med, tf.single);
    }
    printf("%5s %-6s %3s %6s %6s %6s %5s | %8s %8s | %8s %8s | %6s %5s\n", "warps", "route",
           "EL", "pairs", "tokens", "local", "rows", "select", "1-launch", "group",
           "1-launch", "diff", "MHz");

    static const int locals[] = {8, 16, 32};
    static const int sizes[] = {8, 64, 512, 4096};
    static const int menu_rows[] = {2, 4, 8, 16, 32, 64};
    static const int warp_set[] = {32, 16, 8};
    ramp_rng rng;
    ramp_rng_seed(&rng, 20251130);
    double worst_select = 0, worst_diff = -1e9;
    int mismatches = 0;
    for (int wi = 0; wi < 3; wi++)
    for (int route = 0; route < 2; route++)
        for (int li = 0; li < 3; li++)
            for (int si = 0; si < 4; si++) {
                const int warps = warp_set[wi];
                if (warps != 32 && locals[li] != 32) continue; /* variants: EL 32 only */
                char wenv[8];
                snprintf(wenv, sizeof wenv, "%d", warps);
                setenv("RAMP_SELECT_WARPS", wenv, 1);
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
                if (warps == 32) {
                    if (ts.med > worst_select) worst_select = ts.med;
                    if (diff > worst_diff) worst_diff = diff;
                }
                const char *rname = route == 0 ? "ep8" : "local";
                printf("%5d %-6s %3d %6d %6d %6d %5d | %8.2f %8.2f | %8.2f %8.2f | %+6.2f %5.0f\n",
                       warps, rname, EL, pairs, tokens, local, rows, ts.med, ts.single,
                       tg.med, tg.single, diff, mhz);
                fprintf(csv, "%d,%s,%d,%d,%d,%d,%d,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.0f\n",
                        warps, rname, EL, pairs, tokens, k, E, local, rows, ts.med, ts.p10,
                        ts.p90, ts.single, tg.med, tg.p10, tg.p90, tg.single, diff, mhz);
                ramp_selector_free(sel);
                ramp_selector_free(grp);
                TRY(ramp_gpu_free(gpu, dids));
                free(ids);
            }
    unsetenv("RAMP_SELECT_WARPS");
    printf("SM clock after: %.0f MHz\n", clock_mhz(gpu, st, &cp));
    TRY(ramp_gpu_free(gpu, cp.out));
    ramp_module_free(cp.m);
    fclose(csv);
    printf("worst (32 warps): selection %.2f us (target < 4); excess over group-only "
           "%.2f us (target < 1); %d output mismatches\n", worst_select, worst_diff,
           mismatches);
    TRY(ramp_stream_destroy(gpu, st));
    ramp_gpu_close(gpu);
    return mismatches ? 1 : 0;
}
