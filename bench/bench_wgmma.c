/*
 * bench_wgmma.c - the tensor-core throughput ceiling of the FP8 wgmma forms
 * kernel v2's consumers issue (m64nNk32 e4m3, both operands in shared
 * memory, N = 8..64, two consumer warpgroups) against larger N (128, 256)
 * and against A from registers, so v2's compute roofline is a measurement
 * (hopper.md, "Unknowns the first runs must measure": wgmma issue cost at
 * small N; moe_v2.md, Session 4).
 *
 * Kernel: kernels/wgmma_bench.cuh (operands resident in shared memory, no
 * global traffic in the timed loop; per iteration and warpgroup one commit
 * group of 4 x ACCS wgmmas, K = 128 per set). Variants (tests/
 * wgmma_bench_util.h): form x N x W, form one of
 *   ss.a1    SS, one accumulator set, wait 0 after each group
 *   ss.a2    SS, two sets (gate and up: 8 wgmmas per group), wait 0 (v2)
 *   ss.a1.p  SS, one set, one group left in flight (pipelined)
 *   ss.a2.p  SS, two sets, pipelined
 *   rs.a1    A from registers, one set, wait 0
 *   rs.a1.p  A from registers, one set, pipelined
 *   ss.a2.pr SS, two sets, each set's group into a temporary, wait 0, then
 *            promoted (acc += T x scale): v2's wide consumer's rhythm
 *   ss.a2.pp the same with two temporaries alternating: the next group is
 *            issued before this one is waited for (wait 1) and promoted
 *   ss.a2.t, ss.a2.pr.t, ss.a2.pp.t  the same with one more warpgroup writing 48
 *            KB into shared memory by TMA per iteration (v2's stage)
 *   ss.a2.pr.i, ss.a2.pp.i  that warpgroup idle: the block's shape alone
 *   ss.a2.h, ss.a2.pr.h, ss.a2.pp.h  as .t with the weight pieces (2 N rows
 *            x 128 B an iteration, N >= 64) streamed from a 2 GiB buffer
 *            (each block its own share), i.e. from HBM: 256 FLOP a weight
 *            byte, v2's wide tile on full row tiles; the tensor cores and
 *            HBM busy together, the consumers waiting for each stage.
 *            --hbm-pieces 1..4 streams that many 16 KB pieces an iteration
 *            instead: the same math at other intensities
 * N in {8, 16, 32, 64, 128, 256} (two-set forms up to 128), W in {1, 2}
 * warpgroups per block. Each is launched on a grid of one block per SM
 * and, when the measured resources let two blocks share an SM, of two.
 *
 * Method: every variant compiled first (NVRTC, in parallel; ptxas's
 * registers, spills and any "wgmmas serialised" line reported); per launch
 * shape, `iters` calibrated so one launch takes about --target-ms (two
 * calibration launches), 3 warm-up launches, then --reps launches each
 * between two events: the median. The kernel also returns each block's
 * clock64 cycles over its timed loop and its SM id.
 *
 * Printed per (form, N, W, grid) and written to the CSV:
 *   tflops          2 x 64 x N x 32 x wgmmas of the launch / median time,
 *                   whole GPU
 *   clock_mhz       mean block cycles / median time: the SM clock the
 *                   launch ran at (the time includes the launch and the
 *                   operand fill, < 1% at ~2 ms)
 *   mac_per_clk_sm  MACs per SM per cycle from the cycles alone (blocks
 *                   on the busiest SM x MACs per block / mean cycles):
 *                   clock-independent
 *   pct_peak_clk    mac_per_clk_sm / 4096, the dense FP8 peak per SM per
 *                   cycle (1,979 TFLOP/s = 132 SMs x 1.83 GHz x 8192 FLOP)
 *   pct_spec        tflops / 1979
 *   hbm_tb_s        (.h forms) bytes read from the 2 GiB buffer / median time
 *   t_start, t_end  wall-clock seconds (CLOCK_REALTIME, Unix epoch) around
 *                   the timed launches, to line up power and clock samples
 *                   taken beside the run (nvidia-smi --query-gpu ... -lms;
 *                   bench/power_join.py)
 *   hbm_pieces, flop_per_hbm_byte  (.h) the pieces an iteration and the
 *                   intensity they make (bench/power_roofline.py)
 * --warmup-s S runs the first shape untimed for S seconds first (the power
 * takes ~1 s to reach its cap).
 *
 * Usage: bench_wgmma [options] [CSV]   (see --help). Exit 0 on success, 1
 * when a compile or launch fails, 2 on a bad argument, 77 without a GPU
 * (or on a GPU other than sm_90).
 */
#include "bench_common.h"
#include "bench_args.h"

#include "../tests/wgmma_bench_util.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#define PEAK_MAC_PER_CLK 4096.0 /* dense FP8 MACs per SM per cycle, Hopper */
#define SPEC_TFLOPS 1979.0      /* H100/H200 SXM dense FP8 */
#define MAXV 512 /* variants: forms x N x W, the .h ones once per --hbm-pieces value */
#define MAXREPS 1000
#define SRC_BYTES (2ull << 30) /* the .h forms' stream: 40x the L2 */

static const char *USAGE =
    "usage: bench_wgmma [options] [CSV]\n"
    "\n"
    "Times FP8 e4m3 wgmma m64nNk32 with operands resident in shared memory\n"
    "(kernels/wgmma_bench.cuh) and prints TFLOP/s over the whole GPU per\n"
    "form, N, warpgroups per block (W) and grid (1 or 2 blocks per SM).\n"
    "Needs an sm_90 GPU (exit 77 without one).\n"
    "\n"
    "options:\n"
    "  --csv PATH        write one row per launch shape (also: a lone CSV argument)\n"
    "  --forms LIST      comma list of ss.a1, ss.a2, ss.a1.p, ss.a2.p, rs.a1, rs.a1.p,\n"
    "                    ss.a2.pr, ss.a2.pp, ss.a2.t, ss.a2.pr.t, ss.a2.pp.t,\n"
    "                    ss.a2.pr.i, ss.a2.pp.i, ss.a2.h, ss.a2.pr.h, ss.a2.pp.h\n"
    "                    (default: all)\n"
    "  --n LIST          comma list of N from 8, 16, 32, 64, 128, 256 (default: all)\n"
    "  --w LIST          comma list of warpgroups per block, 1 and/or 2 (default: 1,2)\n"
    "  --grids LIST      blocks per SM, 1 and/or 2 (default: 1,2; 2 only where two\n"
    "                    blocks fit on an SM)\n"
    "  --reps R          timed launches per shape, median reported (1..1000, default 20)\n"
    "  --target-ms T     time of one launch the iterations are sized for\n"
    "                    (0.1..100, default 2)\n"
    "  --hbm-pieces LIST (.h forms) comma list of 16 KB weight pieces an iteration\n"
    "                    streams from HBM, 1..4 (default: N / 64, i.e. 256 FLOP a\n"
    "                    byte with two warpgroups): the same math at other\n"
    "                    intensities; each .h shape runs once per value\n"
    "  --warmup-s S      run the first shape untimed for about S seconds first\n"
    "                    (0..10, default 0): the GPU's power climbs to its cap\n"
    "                    over ~1 s, which the first timed shape would hold\n"
    "  -h, --help        this text\n"
    "\n"
    "forms: ss = both operands in shared memory (v2's), rs = A from registers;\n"
    "a1/a2 = one or two accumulator sets per warpgroup (a2: gate and up, as v2);\n"
    ".p = one commit group left in flight at each wait (pipelined), else every\n"
    "group of 4 x sets wgmmas is waited for; .pr = FP8 block-scale promotion\n"
    "as v2's wide consumers: each set's group into a temporary, waited for,\n"
    "then added with a scale (v2's rhythm); .pp = the same with two temporaries\n"
    "alternating, the next group issued before this one is promoted; .t = one\n"
    "more warpgroup writes 48 KB a block into shared memory by TMA per iteration\n"
    "meanwhile (kernel v2's producer beside its consumers); .i = that\n"
    "warpgroup idle (the block's shape without the writes); .h = as .t with the\n"
    "weight bytes (2 x N rows x 128 B an iteration, N >= 64) read from a 2 GiB\n"
    "buffer, i.e. from HBM, while the tensor cores run (256 FLOP a weight byte).\n"
    "The CSV's t_start/t_end (Unix seconds) bracket each shape's timed launches.\n";

/* A comma list of integers, each one of `allowed` (n_allowed of them), into
 * out (at most max, no duplicates); 0 if malformed. */
static int parse_int_list(const char *text, const int *allowed, int n_allowed, int *out, int max,
                          int *count) {
    int k = 0;
    const char *p = text;
    if (!*p) return 0;
    for (;;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || (*end != ',' && *end != '\0')) return 0;
        int ok = 0;
        for (int i = 0; i < n_allowed; i++) ok |= allowed[i] == v;
        for (int i = 0; i < k; i++) ok &= out[i] != v;
        if (!ok || k >= max) return 0;
        out[k++] = (int)v;
        if (*end == '\0') break;
        p = end + 1;
    }
    *count = k;
    return 1;
}

/* A comma list of form names into out; 0 with the bad item in bad. */
static int parse_forms(const char *text, const wb_form **out, int *count, char *bad, size_t bsize) {
    char buf[256];
    int k = 0;
    if (strlen(text) >= sizeof buf || !*text) {
        snprintf(bad, bsize, "%.64s", text);
        return 0;
    }
    snprintf(buf, sizeof buf, "%s", text);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const wb_form *f = wb_form_find(tok);
        int dup = 0;
        for (int i = 0; i < k; i++) dup |= out[i] == f;
        if (!f || dup || k >= WB_NFORMS) {
            snprintf(bad, bsize, "%s%s", tok, dup ? " (twice)" : "");
            return 0;
        }
        out[k++] = f;
    }
    if (k == 0 || text[strlen(text) - 1] == ',' || text[0] == ',' || strstr(text, ",,")) {
        snprintf(bad, bsize, "%.64s", text);
        return 0;
    }
    *count = k;
    return 1;
}

/* ------------------------------------------------------------ compiles */

typedef struct {
    wb_variant v;
    ramp_jit_result *jit;
    ramp_status status;
    char err[1024];
} cjob;

static cjob cjobs[MAXV];
static int ncjobs, next_cjob;
static pthread_mutex_t cjob_lock = PTHREAD_MUTEX_INITIALIZER;

static void *compile_worker(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&cjob_lock);
        int i = next_cjob++;
        pthread_mutex_unlock(&cjob_lock);
        if (i >= ncjobs) return NULL;
        cjob *j = &cjobs[i];
        j->status = wb_compile(&j->v, &j->jit);
        if (j->status != RAMP_OK) snprintf(j->err, sizeof j->err, "%s", ramp_last_error());
    }
}

/* ------------------------------------------------------------- timing */

typedef struct {
    ramp_gpu *gpu;
    ramp_stream st;
    ramp_event *e0, *e1;
    ramp_devptr out, stats;
    ramp_devptr src;              /* the .h forms' HBM stream (0: none) */
    unsigned long long src_pieces; /* of RAMP_WB_TMA_PIECE bytes */
    double target_us;
    int reps;
    double samples[MAXREPS];
} timer;

/* One launch between the events: its time in us. */
static ramp_status launch_once(timer *T, const ramp_kernel *k, const wb_variant *v, int grid,
                               int iters, double *us) {
    ramp_devptr out = T->out, stats = T->stats, src = T->src;
    unsigned long long pieces = T->src_pieces;
    void *args[5] = {&out, &stats, &iters, &src, &pieces};
    unsigned g3[3] = {(unsigned)grid, 1, 1}, b3[3] = {(unsigned)wb_threads(v), 1, 1};
    RAMP_TRY(ramp_event_record(T->e0, T->st));
    RAMP_TRY(ramp_kernel_launch(k, g3, b3, wb_smem(v), T->st, args));
    RAMP_TRY(ramp_event_record(T->e1, T->st));
    return ramp_event_elapsed_us(T->e0, T->e1, us);
}

typedef struct {
    int iters;
    double med, lo, hi;        /* us */
    double mean_cycles;        /* per block, timed loop */
    int sms_used, max_per_sm;  /* from the blocks' SM ids */
    double t_start, t_end;     /* wall clock around the timed launches */
} result;

static double wall_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static ramp_status time_variant(timer *T, const ramp_kernel *k, const wb_variant *v, int grid,
                                int sms, result *r) {
    /* calibrate: iterations for target_us, from two launches (the first may
     * pay for loading the module) */
    double us = 0;
    int iters = 64;
    for (int c = 0; c < 2; c++) {
        RAMP_TRY(launch_once(T, k, v, grid, iters, &us));
        if (us <= 0) us = 1;
        double want = (double)iters * T->target_us / us;
        if (want > 1000.0 * iters) want = 1000.0 * iters; /* a bogus time: grow step by step */
        if (want > 1 << 30) want = 1 << 30;
        iters = want < 1 ? 1 : (int)want;
    }
    for (int w = 0; w < 3; w++) RAMP_TRY(launch_once(T, k, v, grid, iters, &us));
    r->t_start = wall_seconds();
    for (int i = 0; i < T->reps; i++) RAMP_TRY(launch_once(T, k, v, grid, iters, &T->samples[i]));
    r->t_end = wall_seconds();
    qsort(T->samples, (size_t)T->reps, sizeof T->samples[0], bench_cmp_double);
    r->iters = iters;
    r->med = T->reps % 2 ? T->samples[T->reps / 2]
                         : 0.5 * (T->samples[T->reps / 2 - 1] + T->samples[T->reps / 2]);
    r->lo = T->samples[0];
    r->hi = T->samples[T->reps - 1];

    /* the last launch's cycles and SM ids */
    long long *st = malloc((size_t)grid * 2 * sizeof *st);
    int *per_sm = calloc((size_t)(sms > 0 ? sms : 1) + 1024, sizeof *per_sm);
    if (!st || !per_sm) {
        free(st);
        free(per_sm);
        RAMP_FAIL(RAMP_ERR_OUT_OF_MEMORY, "bench_wgmma: out of memory");
    }
    ramp_status s = ramp_gpu_download(T->gpu, st, T->stats, (size_t)grid * 2 * sizeof *st);
    if (s == RAMP_OK) {
        double sum = 0;
        r->sms_used = r->max_per_sm = 0;
        for (int b = 0; b < grid; b++) {
            sum += (double)st[2 * b];
            long long id = st[2 * b + 1];
            if (id < 0 || id >= sms + 1024) continue;
            if (per_sm[id]++ == 0) r->sms_used++;
            if (per_sm[id] > r->max_per_sm) r->max_per_sm = per_sm[id];
        }
        r->mean_cycles = sum / grid;
    }
    free(st);
    free(per_sm);
    return s;
}

/* --------------------------------------------------------------- main */

int main(int argc, char **argv) {
    const char *csv_path = NULL;
    const wb_form *forms[WB_NFORMS];
    int nforms = 0, ns[WB_NN], nn = 0, ws[2] = {1, 2}, nw = 2, grids[2] = {1, 2}, ngrids = 2;
    int reps = 20;
    double target_ms = 2.0, warmup_s = 0.0;
    int hpieces[4] = {0}, nhp = 0; /* --hbm-pieces (none: each .h form's own) */
    for (int i = 0; i < WB_NFORMS; i++) forms[nforms++] = &WB_FORMS[i];
    for (int i = 0; i < WB_NN; i++) ns[nn++] = WB_NS[i];

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(USAGE, stdout);
            return 0;
        }
        if (a[0] != '-') { /* the lone positional argument: the CSV */
            if (csv_path) {
                fprintf(stderr, "bench_wgmma: more than one CSV path ('%s', '%s')\n%s", csv_path,
                        a, USAGE);
                return 2;
            }
            csv_path = a;
            continue;
        }
        static const char *const known[] = {"--csv", "--forms", "--n", "--w",
                                            "--grids", "--reps", "--target-ms", "--warmup-s",
                                            "--hbm-pieces"};
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        const int rc = bench_option("bench_wgmma", USAGE, a, v, known, sizeof known / sizeof *known);
        if (rc >= 0) return rc;
        i++;
        static const int wvals[2] = {1, 2};
        char bad[96];
        char *end = NULL;
        if (!strcmp(a, "--csv")) {
            if (csv_path) {
                fprintf(stderr, "bench_wgmma: more than one CSV path\n%s", USAGE);
                return 2;
            }
            csv_path = v;
        } else if (!strcmp(a, "--forms")) {
            if (!parse_forms(v, forms, &nforms, bad, sizeof bad)) {
                fprintf(stderr, "bench_wgmma: --forms %s: unknown or repeated form '%s'\n%s", v,
                        bad, USAGE);
                return 2;
            }
        } else if (!strcmp(a, "--n")) {
            if (!parse_int_list(v, WB_NS, WB_NN, ns, WB_NN, &nn)) {
                fprintf(stderr, "bench_wgmma: --n %s: expected a comma list of distinct "
                                "8, 16, 32, 64, 128, 256\n%s", v, USAGE);
                return 2;
            }
        } else if (!strcmp(a, "--w")) {
            if (!parse_int_list(v, wvals, 2, ws, 2, &nw)) {
                fprintf(stderr, "bench_wgmma: --w %s: expected 1, 2 or 1,2\n%s", v, USAGE);
                return 2;
            }
        } else if (!strcmp(a, "--grids")) {
            if (!parse_int_list(v, wvals, 2, grids, 2, &ngrids)) {
                fprintf(stderr, "bench_wgmma: --grids %s: expected 1, 2 or 1,2\n%s", v, USAGE);
                return 2;
            }
        } else if (!strcmp(a, "--reps")) {
            long r = strtol(v, &end, 10);
            if (end == v || *end || r < 1 || r > MAXREPS) {
                fprintf(stderr, "bench_wgmma: --reps %s: expected an integer 1..%d\n%s", v,
                        MAXREPS, USAGE);
                return 2;
            }
            reps = (int)r;
        } else if (!strcmp(a, "--target-ms")) {
            double t = strtod(v, &end);
            if (end == v || *end || !(t >= 0.1 && t <= 100)) {
                fprintf(stderr, "bench_wgmma: --target-ms %s: expected a number 0.1..100\n%s", v,
                        USAGE);
                return 2;
            }
            target_ms = t;
        } else if (!strcmp(a, "--hbm-pieces")) {
            static const int pvals[4] = {1, 2, 3, 4};
            if (!parse_int_list(v, pvals, 4, hpieces, 4, &nhp)) {
                fprintf(stderr, "bench_wgmma: --hbm-pieces %s: expected a comma list of distinct "
                                "1..4\n%s", v, USAGE);
                return 2;
            }
        } else if (!strcmp(a, "--warmup-s")) {
            double t = strtod(v, &end);
            if (end == v || *end || !(t >= 0 && t <= 10)) {
                fprintf(stderr, "bench_wgmma: --warmup-s %s: expected seconds 0..10\n%s", v, USAGE);
                return 2;
            }
            warmup_s = t;
        } else {
            fprintf(stderr, "bench_wgmma: unknown option %s\n%s", a, USAGE);
            return 2;
        }
    }
    wb_variant base[MAXV], vs[MAXV];
    const int nb = wb_variants(forms, nforms, ns, nn, ws, nw, base, MAXV);
    int nv = 0; /* the .h shapes once per --hbm-pieces value */
    for (int i = 0; i < nb; i++)
        for (int h = 0; h < (base[i].form->tma == 3 && nhp ? nhp : 1) && nv < MAXV; h++) {
            vs[nv] = base[i];
            if (base[i].form->tma == 3 && nhp) vs[nv].hbm = hpieces[h];
            nv++;
        }
    if (nv == 0) {
        fprintf(stderr, "bench_wgmma: the forms and N given leave no variant (two-set forms "
                        "stop at N = 128)\n");
        return 2;
    }

    /* the GPU first: without one there is nothing to do */
    ramp_gpu *gpu = NULL;
    ramp_status s = ramp_gpu_open(0, &gpu);
    if (s == RAMP_ERR_NO_GPU) {
        printf("bench_wgmma: no GPU (%s): skipped\n", ramp_last_error());
        return 77;
    }
    TRY(s);
    ramp_gpu_info info;
    TRY(ramp_gpu_get_info(gpu, &info));
    printf("GPU %s (sm_%d%d), %d SMs, driver %d, SM clock (driver) %d MHz\n", info.limits.name,
           info.cc_major, info.cc_minor, info.limits.sms, info.driver_version,
           info.clock_khz / 1000);
    if (info.cc_major != 9 || info.cc_minor != 0) {
        printf("bench_wgmma: the kernel is built for sm_90a; this GPU is sm_%d%d: skipped\n",
               info.cc_major, info.cc_minor);
        ramp_gpu_close(gpu);
        return 77;
    }
    const int sms = info.limits.sms;

    /* compile everything (in parallel), then time one variant at a time */
    ncjobs = nv;
    for (int i = 0; i < nv; i++) cjobs[i].v = vs[i];
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int nth = ncpu < 1 ? 1 : ncpu > 16 ? 16 : (int)ncpu;
    if (nth > nv) nth = nv;
    pthread_t th[16];
    for (int t = 0; t < nth; t++) pthread_create(&th[t], NULL, compile_worker, NULL);
    for (int t = 0; t < nth; t++) pthread_join(th[t], NULL);
    int failed = 0;
    for (int i = 0; i < nv; i++)
        if (cjobs[i].status != RAMP_OK) {
            char name[64];
            wb_variant_name(&cjobs[i].v, name, sizeof name);
            fprintf(stderr, "bench_wgmma: compiling %s failed: %s\n", name, cjobs[i].err);
            failed = 1;
        }
    if (failed) {
        for (int i = 0; i < nv; i++) ramp_jit_result_free(cjobs[i].jit);
        ramp_gpu_close(gpu);
        return 1;
    }
    printf("%d variants compiled on %d threads\n", nv, nth);

    FILE *csv = NULL;
    if (csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) {
            fprintf(stderr, "bench_wgmma: cannot write %s\n", csv_path);
            return 1;
        }
        fprintf(csv, "form,operands,accs,pipe,n,w,threads,regs,ptxas_regs,spill_bytes,"
                     "serialised,smem_bytes,max_blocks_per_sm,grid,blocks_per_sm,sms_used,"
                     "iters,wgmma_per_launch,flop_per_launch,median_us,min_us,max_us,tflops,"
                     "clock_mhz,mac_per_clk_sm,pct_peak_clk,pct_spec,hbm_tb_s,t_start,t_end,"
                     "hbm_pieces,flop_per_hbm_byte\n");
    }

    timer T;
    memset(&T, 0, sizeof T);
    T.gpu = gpu;
    T.reps = reps;
    T.target_us = target_ms * 1000.0;
    TRY(ramp_stream_create(gpu, &T.st));
    TRY(ramp_event_create(gpu, &T.e0));
    TRY(ramp_event_create(gpu, &T.e1));
    const int max_grid = 2 * sms;
    TRY(ramp_gpu_alloc(gpu, (size_t)max_grid * 256 * sizeof(float), &T.out));
    TRY(ramp_gpu_alloc(gpu, (size_t)max_grid * 2 * sizeof(long long), &T.stats));
    int any_hbm = 0;
    for (int i = 0; i < nv; i++) any_hbm |= vs[i].form->tma == 3;
    if (any_hbm) { /* zeroed once: the copies' bytes are never used, but defined */
        TRY(ramp_gpu_alloc(gpu, SRC_BYTES, &T.src));
        TRY(ramp_gpu_fill32_async(gpu, T.src, 0, SRC_BYTES / 4, T.st));
        TRY(ramp_stream_sync(gpu, T.st));
        T.src_pieces = SRC_BYTES / RAMP_WB_TMA_PIECE;
    }

    printf("%-8s %3s %1s %4s %8s %4s %8s %9s %8s %5s %9s %6s %s\n", "form", "N", "W", "regs",
           "grid", "SMs", "iters", "median_us", "TFLOP/s", "MHz", "MAC/clk", "%peak",
           "HBM TB/s@FLOP/B");
    int rc = 0;
    for (int i = 0; i < nv; i++) {
        const wb_variant *v = &cjobs[i].v;
        const ramp_jit_result *jit = cjobs[i].jit;
        char name[64];
        wb_variant_name(v, name, sizeof name);
        const ramp_kernel_report *rep = ramp_jit_kernel(jit, WB_KERNEL);
        const int serialised = wb_log_serialised(jit);
        ramp_module *mod = NULL;
        ramp_kernel *k = NULL;
        ramp_kernel_report attr;
        ramp_resources res;
        memset(&res, 0, sizeof res);
        if (!rep) {
            fprintf(stderr, "bench_wgmma: %s: no %s in the ptxas report\n", name, WB_KERNEL);
            rc = 1;
            continue;
        }
        if (serialised || rep->spill_load_bytes || rep->spill_store_bytes || rep->stack_bytes)
            printf("warning: %s: ptxas: serialised %d, spills %d/%d, stack %d: its timing is "
                   "not the instruction form's\n", name, serialised, rep->spill_store_bytes,
                   rep->spill_load_bytes, rep->stack_bytes);
        s = ramp_module_load(gpu, jit->cubin, jit->cubin_size, &mod);
        if (s == RAMP_OK) s = ramp_module_kernel(mod, WB_KERNEL, wb_smem(v), &k);
        if (s == RAMP_OK) s = ramp_kernel_attributes(k, &attr); /* cuFuncGetAttribute */
        if (s == RAMP_OK)
            s = ramp_resources_from_report(&attr, wb_threads(v), wb_smem(v), &info.limits, &res);
        if (s == RAMP_OK && (!res.valid || res.blocks_per_sm < 1))
            s = ramp_set_error(RAMP_ERR_UNSUPPORTED, __FILE__, __LINE__, "%s cannot launch: %s",
                               name, res.why);
        for (int gi = 0; gi < ngrids && s == RAMP_OK; gi++) {
            const int per_sm = grids[gi];
            if (per_sm > res.blocks_per_sm) {
                printf("%-8s %3d %d %4d %4dx/SM  skipped: %d block(s) per SM fit\n",
                       v->form->name, v->n, v->w, attr.registers, per_sm, res.blocks_per_sm);
                continue;
            }
            const int grid = per_sm * sms;
            result r;
            memset(&r, 0, sizeof r);
            if (warmup_s > 0 && i == 0 && gi == 0) { /* untimed: as many launches as fill S */
                const int keep = T.reps;
                T.reps = (int)(warmup_s * 1000.0 / target_ms);
                if (T.reps < 1) T.reps = 1;
                if (T.reps > MAXREPS) T.reps = MAXREPS;
                s = time_variant(&T, k, v, grid, sms, &r);
                T.reps = keep;
                if (s != RAMP_OK) break;
            }
            s = time_variant(&T, k, v, grid, sms, &r);
            if (s != RAMP_OK) break;
            const double wgmmas = (double)grid * v->w * r.iters * RAMP_WB_KSTEPS * v->form->accs;
            const double flop = wgmmas * ramp_wb_wgmma_flop(v->n);
            const double tflops = flop / (r.med * 1e-6) / 1e12;
            const double mhz = r.mean_cycles / r.med;
            /* MACs per SM per cycle: the blocks sharing the busiest SM ran
             * concurrently (grid <= blocks_per_sm x SMs) */
            const double block_macs = (double)v->w * r.iters * RAMP_WB_KSTEPS * v->form->accs *
                                      ramp_wb_wgmma_flop(v->n) / 2.0;
            const double mac_clk = r.mean_cycles > 0 ? r.max_per_sm * block_macs / r.mean_cycles
                                                     : 0.0;
            const double pct_clk = 100.0 * mac_clk / PEAK_MAC_PER_CLK;
            const double pct_spec = 100.0 * tflops / SPEC_TFLOPS;
            /* .h: bytes from the HBM stream (wb_hbm_pieces an iteration) */
            const double hbm_bytes =
                (double)grid * r.iters * wb_hbm_pieces(v) * RAMP_WB_TMA_PIECE;
            const double hbm_tbs = hbm_bytes / (r.med * 1e-6) / 1e12;
            char hbm_col[16] = "-";
            if (hbm_bytes > 0)
                snprintf(hbm_col, sizeof hbm_col, "%.2f@%.0f", hbm_tbs, wb_flop_per_hbm_byte(v));
            printf("%-8s %3d %d %4d %4d(%d) %4d %8d %9.1f %8.1f %5.0f %9.0f %5.1f%% %6s\n",
                   v->form->name, v->n, v->w, attr.registers, grid, per_sm, r.sms_used, r.iters,
                   r.med, tflops, mhz, mac_clk, pct_clk, hbm_col);
            if (r.sms_used != sms || r.max_per_sm != per_sm)
                printf("  note: %d blocks ran on %d SMs, up to %d on one (expected %d on each "
                       "of %d)\n", grid, r.sms_used, r.max_per_sm, per_sm, sms);
            if (csv)
                fprintf(csv,
                        "%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%.0f,%.6g,%.3f,%.3f,"
                        "%.3f,%.2f,%.1f,%.1f,%.2f,%.2f,%.3f,%.3f,%.3f,%d,%.1f\n",
                        v->form->name, v->form->rs ? "rs" : "ss", v->form->accs, v->form->pipe,
                        v->n, v->w, wb_threads(v), attr.registers, rep->registers,
                        rep->spill_store_bytes + rep->spill_load_bytes, serialised, wb_smem(v),
                        res.blocks_per_sm, grid, per_sm, r.sms_used, r.iters, wgmmas, flop, r.med,
                        r.lo, r.hi, tflops, mhz, mac_clk, pct_clk, pct_spec, hbm_tbs, r.t_start,
                        r.t_end, wb_hbm_pieces(v), wb_flop_per_hbm_byte(v));
            if (csv) fflush(csv); /* a run cut short keeps its rows */
        }
        if (s != RAMP_OK) {
            fprintf(stderr, "bench_wgmma: %s: %s\n", name, ramp_last_error());
            rc = 1;
        }
        ramp_module_free(mod);
    }
    if (csv) {
        if (fclose(csv) != 0) {
            fprintf(stderr, "bench_wgmma: writing %s failed\n", csv_path);
            rc = 1;
        } else {
            printf("wrote %s\n", csv_path);
        }
    }
    for (int i = 0; i < nv; i++) ramp_jit_result_free(cjobs[i].jit);
    ramp_event_free(T.e0);
    ramp_event_free(T.e1);
    ramp_gpu_free(gpu, T.out);
    ramp_gpu_free(gpu, T.stats);
    if (T.src) ramp_gpu_free(gpu, T.src);
    ramp_stream_destroy(gpu, T.st);
    ramp_gpu_close(gpu);
    return rc;
}
