/*
 * test_wgmma_bench_compile.c - the wgmma throughput benchmark's kernel
 * (kernels/wgmma_bench.cuh, timed by bench/bench_wgmma.c) compiled with
 * NVRTC for sm_90a, no GPU needed (CI): every variant of
 * tests/wgmma_bench_util.h (6 forms x N in {8, 16, 32, 64, 128, 256} x W in
 * {1, 2}, less the two-set forms at N = 256: 68 programs), and ptxas's
 * report of each must show no spills, no stack frame (no local memory), no
 * static shared memory, <= 255 registers, no warning, and no info line
 * saying the wgmmas were serialised or a wait injected (the timing would
 * then measure something else than the instruction form); the dynamic
 * shared memory within the 227 KB of a block. Prints registers, shared
 * memory and the blocks per SM the measured resources allow (H200 limits).
 *
 * RAMP_WGMMA_BENCH_CUBIN_DIR=dir writes each cubin there (tools/gpu-check
 * step wgmma_bench disassembles them: QGMMA present, no LDL/STL).
 * RAMP_WGMMA_BENCH_COMPILE_THREADS threads (default 2). RAMP_WGMMA_BENCH_FORMS
 * = a comma list of forms (e.g. ss.a1,rs.a1) keeps only those. Exit 77
 * without NVRTC.
 */
#include "check.h"
#include "compile_pool.h"
#include "wgmma_bench_util.h"

#include <stdlib.h>

typedef struct {
    wb_variant v;
    ramp_status status;
    ramp_kernel_report rep;
    int found, warnings, serialised, cached;
    char err[2048];
} job;

#define MAXJOBS (WB_NFORMS * WB_NN * 2 + 2) /* + two .h intensities */
static job jobs[MAXJOBS];
static int njobs;

/* One job of the compile pool (compile_pool.h). */
static void compile_one(int i, void *ctx) {
    job *j = (job *)ctx + i;
    ramp_jit_result *r = NULL;
    j->status = wb_compile(&j->v, &r);
    if (j->status != RAMP_OK) {
        snprintf(j->err, sizeof j->err, "%s", ramp_last_error());
        return;
    }
    const ramp_kernel_report *k = ramp_jit_kernel(r, WB_KERNEL);
    if (k) {
        j->rep = *k;
        j->found = 1;
    }
    j->warnings = r->ptxas_warnings;
    j->serialised = wb_log_serialised(r);
    j->cached = r->from_cache;
    if (j->warnings || j->serialised) snprintf(j->err, sizeof j->err, "%s", r->log);
    char name[64], file[96];
    wb_variant_name(&j->v, name, sizeof name);
    snprintf(file, sizeof file, "wgmma-bench-%s.cubin", name);
    compile_pool_save_cubin("RAMP_WGMMA_BENCH_CUBIN_DIR", file, r);
    ramp_jit_result_free(r);
}

/* Variant names are what the form table says they are. */
static void table_checks(void) {
    CHECK(wb_form_find("ss.a1") == &WB_FORMS[0]);
    CHECK(wb_form_find("rs.a1.p") != NULL);
    CHECK(wb_form_find("ss.a3") == NULL);
    CHECK(wb_form_find("") == NULL);
    const wb_form *a2 = wb_form_find("ss.a2");
    CHECK(wb_variant_valid(a2, 128, 2));
    CHECK(!wb_variant_valid(a2, 256, 1));
    CHECK(!wb_variant_valid(WB_FORMS, 64, 3));
    /* .h: a 16 KB weight piece is 64 gate rows and 64 up rows: N >= 64 */
    const wb_form *h = wb_form_find("ss.a2.pr.h");
    CHECK(h != NULL && h->tma == 3);
    CHECK(wb_variant_valid(h, 64, 2) && wb_variant_valid(h, 128, 2));
    CHECK(!wb_variant_valid(h, 32, 2));
    CHECK(!wb_variant_valid(wb_form_find("ss.a2.pp.h"), 128, 2)); /* temporaries */
    wb_variant v = {a2, 64, 2, 0};
    char name[64];
    wb_variant_name(&v, name, sizeof name);
    CHECK(strcmp(name, "ss.a2-n64-w2") == 0);
    /* two A tiles per warpgroup (8 KB each) and the 64-row B tile, after
     * the 1 KB alignment slack */
    CHECK_EQ_INT(wb_smem(&v), 1024 + 2 * 2 * 8192 + 64 * 128);
    /* intensities: two warpgroups' gate and up at N 128 are 8 x 524,288
     * FLOP an iteration, over 2 pieces (the form's own) or 4 of 16 KB */
    wb_variant hv = {h, 128, 2, 0};
    CHECK(wb_hbm_pieces(&hv) == 2 && wb_flop_per_hbm_byte(&hv) == 256.0);
    hv.hbm = 4;
    CHECK(wb_hbm_pieces(&hv) == 4 && wb_flop_per_hbm_byte(&hv) == 128.0);
    wb_variant_name(&hv, name, sizeof name);
    CHECK(strcmp(name, "ss.a2.pr.h-n128-w2-h4") == 0);
    hv.hbm = 2; /* the form's own: the plain name */
    wb_variant_name(&hv, name, sizeof name);
    CHECK(strcmp(name, "ss.a2.pr.h-n128-w2") == 0);
    CHECK(wb_hbm_pieces(&v) == 0 && wb_flop_per_hbm_byte(&v) == 0.0); /* not .h */
}

int main(void) {
    table_checks();
    int major = 0, minor = 0;
    if (ramp_jit_version(&major, &minor) != RAMP_OK) {
        printf("test_wgmma_bench_compile: NVRTC not available (%s): compiles skipped\n",
               ramp_last_error());
        if (check_failures) return check_finish("test_wgmma_bench_compile");
        return 77;
    }
    printf("NVRTC %d.%d\n", major, minor);

    const wb_form *forms[WB_NFORMS];
    int nf = 0;
    const char *sel = getenv("RAMP_WGMMA_BENCH_FORMS");
    for (int i = 0; i < WB_NFORMS; i++) {
        if (sel && *sel) {
            /* exact items of the comma list */
            char buf[256];
            snprintf(buf, sizeof buf, ",%s,", sel);
            char item[32];
            snprintf(item, sizeof item, ",%s,", WB_FORMS[i].name);
            if (!strstr(buf, item)) continue;
        }
        forms[nf++] = &WB_FORMS[i];
    }
    const int ws[2] = {1, 2};
    wb_variant vs[MAXJOBS];
    njobs = wb_variants(forms, nf, WB_NS, WB_NN, ws, 2, vs, MAXJOBS);
    if (njobs == 0) {
        fprintf(stderr, "RAMP_WGMMA_BENCH_FORMS=%s names no form\n", sel ? sel : "");
        return 1;
    }
    for (int i = 0; i < njobs; i++) jobs[i].v = vs[i];
    if (!sel || !*sel) { /* RAMP_WB_HBM_PIECES compiled too: the two ends of the ring */
        static const int pieces[2] = {1, 4};
        for (int p = 0; p < 2; p++)
            jobs[njobs++].v = (wb_variant){wb_form_find("ss.a2.pr.h"), 128, 2, pieces[p]};
    }

    const int threads = compile_pool_threads("RAMP_WGMMA_BENCH_COMPILE_THREADS", 2, 64);
    double secs = compile_pool_run(njobs, threads, compile_one, jobs);

    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    int cached = 0;
    printf("%-8s %3s %1s  %4s %7s %6s\n", "form", "N", "W", "regs", "smem", "blk/SM");
    for (int i = 0; i < njobs; i++) {
        const job *j = &jobs[i];
        char name[64];
        wb_variant_name(&j->v, name, sizeof name);
        if (j->status != RAMP_OK) {
            fprintf(stderr, "%s: %s\n", name, j->err);
            check_failures++;
            continue;
        }
        cached += j->cached;
        const ramp_kernel_report *r = &j->rep;
        ramp_resources res;
        memset(&res, 0, sizeof res);
        ramp_status rs = j->found ? ramp_resources_from_report(r, wb_threads(&j->v),
                                                               wb_smem(&j->v), &lim, &res)
                                  : RAMP_ERR_INTERNAL;
        int bad = !j->found || j->warnings || j->serialised || r->spill_store_bytes ||
                  r->spill_load_bytes || r->stack_bytes || r->registers > 255 ||
                  r->registers < 1 || r->smem_bytes != 0 || wb_smem(&j->v) > 232448 ||
                  rs != RAMP_OK || !res.valid || res.blocks_per_sm < 1;
        printf("%-8s %3d %d  %4d %7d %6d%s\n", j->v.form->name, j->v.n, j->v.w, r->registers,
               wb_smem(&j->v), res.blocks_per_sm, bad ? "   BAD" : "");
        if (bad) {
            fprintf(stderr,
                    "  %s: found %d, spill %d/%d, stack %d, static smem %d, regs %d, "
                    "%d warning(s), serialised %d, resources %s (%s)\n",
                    name, j->found, r->spill_store_bytes, r->spill_load_bytes, r->stack_bytes,
                    r->smem_bytes, r->registers, j->warnings, j->serialised,
                    ramp_status_name(rs), res.why);
            if (j->warnings || j->serialised) fprintf(stderr, "%.3000s\n", j->err);
            check_failures++;
        }
    }
    printf("%d programs in %.1f s on %d threads, %d from the JIT cache\n", njobs, secs, threads,
           cached);
    return check_finish("test_wgmma_bench_compile");
}
