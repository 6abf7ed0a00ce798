/*
 * test_moe_compile.c - compiles the fused MoE kernel v1 with NVRTC for
 * sm_90a (no GPU needed) and checks ptxas's report of every compiled
 * variant: no spills, no stack frame, <= 255 registers, no static shared
 * memory (all of it is the dynamic layout the host sizes launches with),
 * the layout within the per-block limit, at least one block per SM; and
 * that the measured resources (ramp_moe_v1_resources, measured = 1) agree.
 * Prints each variant's registers and shared memory against config.c's
 * estimate.
 *
 * Scope. By default (CI: 2 cores, a few minutes) a documented stratified
 * subset, chosen because resources depend on the rows class (n-tiles, warp
 * layout), the width (passes), the precision and input kind, split-K and the
 * stage count (shared memory), while d, h, k and E only change loop bounds:
 *   DeepSeek-V3 EP8 FP8: rows {2,24,32,64} (one n-tile; the most n-tiles
 *     with 4 m-tiles per warp; the fewest and most with 2) x every width,
 *     at the deepest pipeline the space allows; split-K 2 at r8.w512;
 *     one grouped-order variant;
 *   DeepSeek-V3 EP8 BF16: r2.w128, r64.w128, r64.w512; FP8 with BF16
 *     input (the most registers): r24.w128, r64.w128, r64.w256;
 *   OLMoE r64.w128, Qwen3-30B r4.w256, Mixtral-8x22B r32.w512 (EP8, FP8).
 * About 23 compiles: ~25 s on 2 cores (NVRTC runs ~3x slower under ASan).
 * RAMP_MOE_COMPILE_ALL=three compiles every configuration of DeepSeek-V3,
 * OLMoE and Qwen3-30B on EP8 in FP8, FP8 with BF16 input and BF16
 * (tools/run-tests does, in a release build).
 * RAMP_MOE_COMPILE_ALL=1 compiles every configuration of the four models'
 * spaces in all three kinds (tools/gpu-check runs that on the GPU machine,
 * and test_gpu_moe compiles every configuration it runs). Compiles run on
 * RAMP_MOE_COMPILE_THREADS threads (default: 2). Exit 77 without NVRTC.
 */
#include "check.h"
#include "compile_pool.h"
#include "moe_gpu.h"

typedef struct {
    ramp_moe_variant v;
    ramp_resources est;   /* config.c's estimate */
    ramp_resources meas;  /* from ptxas */
    ramp_kernel_report rep;
    ramp_status status;
    char err[512];
    int cached;
} job;

static job *jobs;
static int njobs;
static ramp_device_limits lim;

/* One job of the compile pool (compile_pool.h). */
static void compile_one(int i, void *ctx) {
    job *j = (job *)ctx + i;
    ramp_jit_result *r = NULL;
    j->status = ramp_moe_v1_compile(&j->v, &r);
    if (j->status == RAMP_OK) {
        const ramp_kernel_report *k = ramp_jit_kernel(r, "ramp_moe_v1");
        if (k) j->rep = *k;
        else j->status = RAMP_ERR_INTERNAL;
        j->cached = r->from_cache;
        ramp_jit_result_free(r);
    }
    if (j->status == RAMP_OK) j->status = ramp_moe_v1_resources(&j->v, &lim, &j->meas);
    if (j->status != RAMP_OK) snprintf(j->err, sizeof j->err, "%s", ramp_last_error());
}

static int in(int v, const int *list, int n) {
    for (int i = 0; i < n; i++)
        if (list[i] == v) return 1;
    return 0;
}

/* Adds the variants of one model/kind: all (all = 1) or the stratum given by
 * `rows` (deepest pipeline per rows x width; split-K and grouped only when
 * asked). */
static void add_model(const char *model, int bf16, int xbf16, int all, const int *rows,
                      int nrows, int with_split, int width) {
    ramp_model m;
    ramp_layout L;
    ramp_geometry g;
    if (ramp_model_lookup(model, &m) != RAMP_OK || ramp_layout_parse("EP8", &L) != RAMP_OK ||
        ramp_geometry_for(&m, L, &g) != RAMP_OK) {
        fprintf(stderr, "model %s: %s\n", model, ramp_last_error());
        check_failures++;
        return;
    }
    g.bf16 = bf16;
    ramp_config *c = NULL;
    int n = 0;
    CHECK_OK(ramp_config_space(&g, &lim, &c, &n));
    for (int i = 0; i < n; i++) {
        ramp_config cf = c[i];
        if (!all) {
            if (!in(cf.rows, rows, nrows) || cf.persistent) continue;
            if (width && cf.width != width) continue;
            if (cf.splitk > 1 && !(with_split && cf.rows == 8 && cf.width == 512)) continue;
            /* deepest pipeline of this rows x width x split in the space */
            int deeper = 0;
            for (int k = 0; k < n; k++)
                deeper |= c[k].rows == cf.rows && c[k].width == cf.width &&
                          c[k].splitk == cf.splitk && c[k].stages > cf.stages;
            if (deeper) continue;
        }
        /* plain and persistent share one binary (moe_gpu.h): compile once */
        if (cf.persistent && !cf.grouped) continue;
        job *j = &jobs[njobs++];
        memset(j, 0, sizeof *j);
        j->v.cfg = cf;
        j->v.geom = g;
        j->v.xbf16 = xbf16;
        CHECK_OK(ramp_config_resources(&cf, &g, &lim, &j->est));
    }
    if (!all && with_split) { /* one grouped-order variant */
        for (int i = 0; i < n; i++)
            if (c[i].grouped && c[i].rows == 16 && c[i].splitk == 1 && c[i].stages == 4) {
                job *j = &jobs[njobs++];
                memset(j, 0, sizeof *j);
                j->v.cfg = c[i];
                j->v.geom = g;
                CHECK_OK(ramp_config_resources(&c[i], &g, &lim, &j->est));
                break;
            }
    }
    free(c);
}

int main(void) {
    int major = 0, minor = 0;
    if (ramp_jit_version(&major, &minor) != RAMP_OK) {
        printf("test_moe_compile: NVRTC not available (%s): skipped\n", ramp_last_error());
        return 77;
    }
    ramp_device_limits_h200(&lim);
    const char *all_env = getenv("RAMP_MOE_COMPILE_ALL");
    /* "three": every configuration of three models in all three kinds
     * (CI's full sweep); a number > 0: the same for four models. */
    int three = all_env && strcmp(all_env, "three") == 0;
    int all = three || (all_env && atoi(all_env) > 0);
    jobs = calloc(20000, sizeof *jobs);
    if (!jobs) return 1;
    const char *models[] = {"deepseek-v3", "olmoe", "qwen3-30b", "mixtral-8x22b"};
    if (all) {
        for (int mi = 0; mi < (three ? 3 : 4); mi++)
            for (int kind = 0; kind < 3; kind++)
                add_model(models[mi], kind == 1, kind == 2, 1, NULL, 0, 0, 0);
    } else {
        const int r_ds[] = {2, 24, 32, 64}, r2[] = {2}, r4[] = {4}, r8[] = {8}, r24[] = {24},
                  r32[] = {32}, r64[] = {64};
        add_model("deepseek-v3", 0, 0, 0, r_ds, 4, 0, 0);
        add_model("deepseek-v3", 0, 0, 0, r8, 1, 1, 512); /* split-K + grouped */
        add_model("deepseek-v3", 1, 0, 0, r2, 1, 0, 128);
        add_model("deepseek-v3", 1, 0, 0, r64, 1, 0, 128);
        add_model("deepseek-v3", 1, 0, 0, r64, 1, 0, 512);
        add_model("deepseek-v3", 0, 1, 0, r24, 1, 0, 128);
        add_model("deepseek-v3", 0, 1, 0, r64, 1, 0, 128);
        add_model("deepseek-v3", 0, 1, 0, r64, 1, 0, 256);
        add_model("olmoe", 0, 0, 0, r64, 1, 0, 128);
        add_model("qwen3-30b", 0, 0, 0, r4, 1, 0, 256);
        add_model("mixtral-8x22b", 0, 0, 0, r32, 1, 0, 512);
    }
    int nthreads = compile_pool_threads("RAMP_MOE_COMPILE_THREADS", 2, 64);
    printf("NVRTC %d.%d, %d variants (%s), %d threads\n", major, minor, njobs,
           all ? "all configurations" : "stratified subset", nthreads);
    double secs = compile_pool_run(njobs, nthreads, compile_one, jobs);

    int over_est = 0, cached = 0, maxreg = 0;
    for (int i = 0; i < njobs; i++) {
        job *j = &jobs[i];
        char name[64];
        ramp_config_name(&j->v.cfg, name, sizeof name);
        const char *kind = j->v.geom.bf16 ? "bf16" : j->v.xbf16 ? "fp8/bf16-in" : "fp8";
        if (j->status != RAMP_OK) {
            fprintf(stderr, "d=%d h=%d %s %s: %s\n", j->v.geom.hidden, j->v.geom.inter, kind,
                    name, j->err);
            check_failures++;
            continue;
        }
        cached += j->cached;
        ramp_moe_v1_layout l = ramp_moe_v1_layout_for(&j->v);
        int bad = j->rep.spill_store_bytes || j->rep.spill_load_bytes || j->rep.stack_bytes ||
                  j->rep.registers > 255 || j->rep.smem_bytes != 0 || l.total > lim.smem_per_block ||
                  !j->meas.valid || !j->meas.measured || j->meas.blocks_per_sm < 1 ||
                  j->meas.smem_bytes != (int)l.total || j->meas.threads != l.threads;
        /* config.c's numbers for the FP8 space are the real ones: the exact
         * layout, and a register bound ptxas must stay within. */
        if (!j->v.geom.bf16 && !j->v.xbf16)
            bad |= j->rep.registers > ramp_config_register_bound(&j->v.cfg) ||
                   j->est.smem_bytes != (int)l.total || j->est.threads != l.threads;
        if (j->rep.registers > maxreg) maxreg = j->rep.registers;
        over_est += l.total > j->est.smem_bytes;
        if (bad || all == 0 || getenv("RAMP_MOE_COMPILE_PRINT"))
            printf("%s d=%-5d h=%-5d %-11s %-22s regs %3d spill %d/%d stack %d smem %6lld (est %6d) "
                   "threads %d blocks/SM %d%s%s\n",
                   bad ? "BAD" : "ok ", j->v.geom.hidden, j->v.geom.inter, kind, name,
                   j->rep.registers, j->rep.spill_store_bytes, j->rep.spill_load_bytes,
                   j->rep.stack_bytes, l.total, j->est.smem_bytes, l.threads,
                   j->meas.blocks_per_sm, j->meas.valid ? "" : " invalid: ",
                   j->meas.valid ? "" : j->meas.why);
        if (bad) check_failures++;
    }
    printf("%d variants in %.1f s (%d from the JIT cache); max registers %d; %d above "
           "config.c's shared-memory estimate (the kernel's layout is in "
           "kernels/moe_v1_params.h)\n",
           njobs, secs, cached, maxreg, over_est);
    free(jobs);
    return check_finish("test_moe_compile");
}
