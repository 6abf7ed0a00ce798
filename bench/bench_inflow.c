/*
 * bench_inflow.c - how fast bytes get into the SMs (kernels/inflow.cuh):
 * the rate at which blocks that do nothing else fill shared memory by the
 * TMA unit's bulk copies (alone, and multicast in clusters of two) or
 * registers by their threads' 16-byte loads, from a window of global memory
 * that L2 holds (8 or 24 MiB, read over and over) or cannot (1 GiB), on
 * grids of every SM down to one. It tells a limit of one SM's intake (the
 * per-SM rate stays when the grid shrinks) from one of L2 or HBM shared by
 * all (it rises), and what multicast adds: the ceiling of any kernel whose
 * tiles stream their operands through shared memory (moe_v2.md session 38).
 *
 * Each row: one (kind, window, grid); every block (cluster, for multicast)
 * reads 8 MiB (RAMP_INFLOW_MIB); one warm-up launch, then the median of REPS launches timed
 * between events. Bytes per SM clock use the clock the driver reports.
 * The window holds a pattern of its word indices and every block of every
 * launch checks the last piece it took in, word by word: a kind with a
 * mismatch fails the run (exit 1, no CSV), its rates not trusted.
 */
#include "bench_args.h"
#include "bench_common.h"

#include <time.h>

static const char *USAGE =
    "usage: bench_inflow [OUT.csv] [REPS]\n"
    "\n"
    "Measures how fast the SMs take bytes in: blocks that only fill shared\n"
    "memory by TMA bulk copies (a ring of 8-64 KB requests, as kernel v2's\n"
    "producer; also multicast in clusters of two, one L2 read landing in two\n"
    "SMs) or registers by their threads' loads, from a window that L2 holds\n"
    "(8 or 24 MiB) or that it cannot (1 GiB), on grids from every SM down to\n"
    "one. Writes OUT.csv (default bench_inflow.csv; one row per kind, window\n"
    "and grid: median of REPS launches, default 10, at most 64) and prints a summary:\n"
    "TB/s in all, GB/s and bytes per clock per SM. Each block (cluster of two\n"
    "for multicast) reads RAMP_INFLOW_MIB MiB (default 8; 1 under\n"
    "compute-sanitizer). Every launch checks the bytes that landed against the\n"
    "window's pattern: exit 1 on a mismatch, 77 without a GPU.\n";

typedef enum { BULK, MC, LOADS } inflow_kind;

static const struct {
    const char *name;
    inflow_kind kind;
    int piece, stages;
} KINDS[] = {
    {"bulk8k-s16", BULK, 8192, 16},  {"bulk16k-s8", BULK, 16384, 8},
    {"bulk32k-s2", BULK, 32768, 2}, {"bulk32k-s3", BULK, 32768, 3},
    {"bulk32k-s4", BULK, 32768, 4},
    {"bulk32k-s6", BULK, 32768, 6}, {"bulk64k-s2", BULK, 65536, 2},
    {"mc32k-s4", MC, 32768, 4},     {"mc64k-s3", MC, 65536, 3},
    {"loads", LOADS, 131072, 1},
};
#define NKINDS (int)(sizeof KINDS / sizeof KINDS[0])

typedef struct {
    ramp_jit_result *jit;
    ramp_module *mod;
    ramp_kernel *k;
} program;

static ramp_status program_build(ramp_gpu *gpu, int i, program *p) {
    char d0[48], d1[48], name[64];
    snprintf(d0, sizeof d0, "RAMP_INFLOW_PIECE=%d", KINDS[i].piece);
    snprintf(d1, sizeof d1, "RAMP_INFLOW_STAGES=%d", KINDS[i].stages);
    snprintf(name, sizeof name, "inflow-%d-%d", KINDS[i].piece, KINDS[i].stages);
    const char *defs[2] = {d0, d1};
    ramp_jit_request rq;
    memset(&rq, 0, sizeof rq);
    rq.name = name;
    rq.source = "#include \"inflow.cuh\"\n";
    rq.defines = defs;
    rq.ndefines = 2;
    memset(p, 0, sizeof *p);
    const char *fn = KINDS[i].kind == BULK ? "ramp_inflow_bulk"
                     : KINDS[i].kind == MC ? "ramp_inflow_mc"
                                           : "ramp_inflow_loads";
    const int smem = KINDS[i].kind == LOADS ? 0 : KINDS[i].piece * KINDS[i].stages;
    ramp_status s = ramp_jit_compile(&rq, &p->jit);
    if (s == RAMP_OK) s = ramp_module_load(gpu, p->jit->cubin, p->jit->cubin_size, &p->mod);
    if (s == RAMP_OK) s = ramp_module_kernel(p->mod, fn, smem, &p->k);
    return s;
}

static void program_free(program *p) {
    ramp_module_free(p->mod);
    ramp_jit_result_free(p->jit);
    memset(p, 0, sizeof *p);
}

int main(int argc, char **argv) {
    int rc = bench_args(argc, argv, "bench_inflow", USAGE, 0, 2);
    if (rc >= 0) return rc;
    const char *csv_path = argc > 1 ? argv[1] : "bench_inflow.csv";
    int reps = 10, mib = 8;
    if (argc > 2 && !bench_int_arg("bench_inflow", "reps", argv[2], 1, &reps)) return 2;
    if (reps > 64) {
        fprintf(stderr, "bench_inflow: reps %d: at most 64\n", reps);
        return 2;
    }
    const char *me = getenv("RAMP_INFLOW_MIB"); /* smaller for compute-sanitizer */
    if (me && !bench_int_arg("bench_inflow", "RAMP_INFLOW_MIB", me, 1, &mib)) return 2;
    if (mib > 64) {
        fprintf(stderr, "bench_inflow: RAMP_INFLOW_MIB %d: at most 64\n", mib);
        return 2;
    }
    const size_t per_block = (size_t)mib << 20;
    ramp_gpu *gpu = NULL;
    ramp_status st0 = ramp_gpu_open(0, &gpu);
    if (st0 == RAMP_ERR_NO_GPU) {
        fprintf(stderr, "bench_inflow: %s\n", ramp_last_error());
        return 77;
    }
    TRY(st0);
    ramp_gpu_info info;
    TRY(ramp_gpu_get_info(gpu, &info));
    ramp_stream st;
    TRY(ramp_stream_create(gpu, &st));
    ramp_event *e0 = NULL, *e1 = NULL;
    TRY(ramp_event_create(gpu, &e0));
    TRY(ramp_event_create(gpu, &e1));
    const size_t big = (size_t)1 << 30;
    ramp_devptr buf = 0, bad = 0;
    TRY(ramp_gpu_alloc(gpu, big, &buf));
    TRY(ramp_gpu_alloc(gpu, 8, &bad)); /* [0] mismatches, [1] a sink */
    {   /* the window's pattern (inflow_word), by the first program's fill kernel */
        program p0;
        ramp_kernel *fill = NULL;
        TRY(program_build(gpu, 0, &p0));
        TRY(ramp_module_kernel(p0.mod, "ramp_inflow_fill", 0, &fill));
        long long words = (long long)(big / 4);
        void *fa[2] = {&buf, &words};
        unsigned fg[3] = {(unsigned)info.limits.sms * 8, 1, 1}, fb[3] = {512, 1, 1};
        TRY(ramp_kernel_launch(fill, fg, fb, 0, st, fa));
        /* RAMP_INFLOW_BREAK=1: the window zeroed instead, so that every kind's
         * check must fail (tools/gpu-check's inflow step runs it once) */
        const char *be = getenv("RAMP_INFLOW_BREAK");
        if (be && be[0] == '1') TRY(ramp_gpu_fill32_async(gpu, buf, 0, big / 4, st));
        TRY(ramp_stream_sync(gpu, st));
        program_free(&p0);
    }
    int failed = 0;

    const int sms = info.limits.sms;
    const double hz = info.clock_khz > 0 ? info.clock_khz * 1e3 : 0;
    const size_t windows[3] = {(size_t)8 << 20, (size_t)24 << 20, big};
    int grids[6] = {sms & ~1, (sms / 2) & ~1, (sms / 4) & ~1, 8, 2, 1};

    /* the rows are kept and the CSV written once every kind has run and
     * checked out: a failed call or a mismatch leaves no file */
    static struct {
        int kind, grid;
        size_t mib;
        double med, p10, p90, in_tb, rd_tb, per_sm_gb, clk;
    } out[NKINDS * 3 * 6];
    int nout = 0;

    /* summary[kind][window]: per-SM bytes per clock at the full grid, at one block */
    double full_tb[NKINDS][3], full_clk[NKINDS][3], one_clk[NKINDS][3];
    for (int i = 0; i < NKINDS; i++) {
        program p;
        TRY(program_build(gpu, i, &p));
        const int smem = KINDS[i].kind == LOADS ? 0 : KINDS[i].piece * KINDS[i].stages;
        long long pieces = (long long)(per_block / (size_t)KINDS[i].piece);
        printf("%s:", KINDS[i].name);
        TRY(ramp_gpu_fill32_async(gpu, bad, 0, 1, st));
        for (int w = 0; w < 3; w++) {
            full_tb[i][w] = full_clk[i][w] = one_clk[i][w] = 0;
            long long window_pieces = (long long)(windows[w] / (size_t)KINDS[i].piece);
            for (int g = 0; g < 6; g++) {
                const int grid = grids[g];
                if (KINDS[i].kind == MC && grid < 2) continue;
                const long long groups = KINDS[i].kind == MC ? grid / 2 : grid;
                double t[64];
                const int n = reps < 64 ? reps : 64;
                for (int r = -1; r < n; r++) {
                    /* each launch on bytes the last one did not read (matters for 1 GiB) */
                    long long first = ((long long)(r + 1) * groups * pieces) % window_pieces;
                    void *args[5] = {&buf, &window_pieces, &pieces, &first, &bad};
                    unsigned gd[3] = {(unsigned)grid, 1, 1};
                    unsigned bd[3] = {KINDS[i].kind == LOADS ? 1024u : 32u, 1, 1};
                    double us = 0;
                    TRY(ramp_event_record(e0, st));
                    TRY(ramp_kernel_launch_ex(p.k, gd, bd, smem, st, args, 0,
                                              KINDS[i].kind == MC ? 2 : 1));
                    TRY(ramp_event_record(e1, st));
                    TRY(ramp_event_elapsed_us(e0, e1, &us));
                    if (r >= 0) t[r] = us;
                }
                qsort(t, (size_t)n, sizeof t[0], bench_cmp_double);
                const double med = t[n / 2], p10 = t[n / 10], p90 = t[(9 * n) / 10 < n ? (9 * n) / 10 : n - 1];
                const double in = (double)grid * (double)per_block; /* bytes landed in SMs */
                const double rd = (double)groups * (double)per_block; /* bytes read */
                const double per_sm = (double)per_block / (med * 1e-6);
                const double clk = hz > 0 ? per_sm / hz : 0;
                out[nout].kind = i;
                out[nout].grid = grid;
                out[nout].mib = windows[w] >> 20;
                out[nout].med = med;
                out[nout].p10 = p10;
                out[nout].p90 = p90;
                out[nout].in_tb = in / (med * 1e-6) / 1e12;
                out[nout].rd_tb = rd / (med * 1e-6) / 1e12;
                out[nout].per_sm_gb = per_sm / 1e9;
                out[nout].clk = clk;
                nout++;
                if (g == 0) {
                    full_tb[i][w] = in / (med * 1e-6) / 1e12;
                    full_clk[i][w] = clk;
                }
                if (grid == (KINDS[i].kind == MC ? 2 : 1)) one_clk[i][w] = clk;
                printf(" %zuMiB/%d %.1f GB/s/SM;", windows[w] >> 20, grid, per_sm / 1e9);
                fflush(stdout);
            }
        }
        unsigned miss = 0;
        TRY(ramp_stream_sync(gpu, st));
        TRY(ramp_gpu_download(gpu, &miss, bad, 4));
        printf(miss ? "\n  %u words landed wrong: %s's rates are not trusted\n"
                    : "\n  every launch's checked words landed right (%u wrong)\n",
               miss, KINDS[i].name);
        failed |= miss != 0;
        program_free(&p);
    }
    if (failed) {
        fprintf(stderr, "bench_inflow: bytes landed wrong (above): no %s written, exit 1\n",
                csv_path);
        return 1;
    }
    /* written to a temporary name, renamed once complete: no partial file */
    char tmp_path[1100];
    snprintf(tmp_path, sizeof tmp_path, "%s.part", csv_path);
    FILE *csv = fopen(tmp_path, "w");
    if (!csv) DIE("bench_inflow: cannot write %s", tmp_path);
    char date[32];
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(csv, "# bench_inflow reps=%d gpu=\"%s\" sms=%d l2_bytes=%d clock_khz=%d driver=%d date=%s; "
                 "each block (cluster for mc) reads %zu MiB; median of reps launches; every "
                 "block's last piece checked\n",
            reps, info.limits.name, sms, info.l2_bytes, info.clock_khz, info.driver_version, date,
            per_block >> 20);
    fprintf(csv, "kind,window_mib,grid,us_median,us_p10,us_p90,in_tb_s,read_tb_s,per_sm_gb_s,"
                 "per_sm_bytes_per_clk\n");
    for (int k = 0; k < nout; k++)
        fprintf(csv, "%s,%zu,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.2f,%.2f\n", KINDS[out[k].kind].name,
                out[k].mib, out[k].grid, out[k].med, out[k].p10, out[k].p90, out[k].in_tb,
                out[k].rd_tb, out[k].per_sm_gb, out[k].clk);
    if (fclose(csv) != 0 || rename(tmp_path, csv_path) != 0) {
        remove(tmp_path);
        DIE("bench_inflow: cannot write %s", csv_path);
    }
    printf("\ninto the SMs, %d blocks (%s, %d SMs, %.0f MHz reported): TB/s in all | bytes per SM "
           "clock; last column: one block (a cluster of two for mc)\n",
           grids[0], info.limits.name, sms, hz / 1e6);
    printf("%-12s %22s %22s %22s %12s\n", "kind", "L2 8 MiB", "L2 24 MiB", "HBM 1 GiB", "1 blk, L2 8");
    for (int i = 0; i < NKINDS; i++) {
        printf("%-12s", KINDS[i].name);
        for (int w = 0; w < 3; w++) printf("   %8.2f | %6.1f B/clk", full_tb[i][w], full_clk[i][w]);
        printf("   %6.1f B/clk\n", one_clk[i][0]);
    }
    printf("wrote %s\n", csv_path);
    ramp_gpu_free(gpu, buf);
    ramp_gpu_free(gpu, bad);
    ramp_event_free(e0);
    ramp_event_free(e1);
    return 0;
}
