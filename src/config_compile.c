/*
 * config_compile.c - what the compiler says about one configuration, or
 * about the polymorphic kernel of a plan's menu: the program(s) built with
 * NVRTC for sm_90a as the GPU path builds them (no GPU needed; the JIT
 * cache makes a second call cheap), ptxas's report of each kernel and the
 * launch shape, so that `ramp configs --ptxas` prints measured registers,
 * spills and shared memory instead of estimates, and the cubins can be
 * disassembled (tools/sass-check).
 */
#include "internal.h"
#include "moe_gpu.h"
#include "moe_poly.h"
#include "moe_v2.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Writes r's cubin to path through a temporary file of its own (two
 * configurations may share a program, and threads may write it at once),
 * so that a failed write leaves nothing behind. */
static ramp_status save_cubin(const char *path, const ramp_jit_result *r) {
    char tmp[1300];
    static atomic_uint seq;
    int n = snprintf(tmp, sizeof tmp, "%s.tmp%ld.%u", path, (long)getpid(),
                     atomic_fetch_add(&seq, 1u));
    RAMP_CHECK(n > 0 && (size_t)n < sizeof tmp, RAMP_ERR_INVALID_ARGUMENT,
               "cubin path too long: %.64s...", path);
    FILE *f = fopen(tmp, "wb");
    RAMP_CHECK(f, RAMP_ERR_IO, "cannot write %s (does the folder exist?)", tmp);
    int ok = fwrite(r->cubin, 1, r->cubin_size, f) == r->cubin_size;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        RAMP_FAIL(RAMP_ERR_IO, "cannot write %s", path);
    }
    return RAMP_OK;
}

/* res takes b's larger registers and shared memory, its lower occupancy,
 * and its reason (prefixed by label) if it cannot run: two programs or
 * kernels that must both run. */
static void merge_resources(ramp_resources *res, const ramp_resources *b, const char *label) {
    if (b->smem_bytes > res->smem_bytes) res->smem_bytes = b->smem_bytes;
    if (b->regs_per_thread > res->regs_per_thread) res->regs_per_thread = b->regs_per_thread;
    if (b->blocks_per_sm < res->blocks_per_sm) res->blocks_per_sm = b->blocks_per_sm;
    if (res->valid && !b->valid) {
        res->valid = 0;
        snprintf(res->why, sizeof res->why, "%s: %s", label, b->why);
    }
}

/* A stack frame in these kernels is local memory on the hot path: valid =
 * 0, naming the first report (labels[i]) that has one. */
static void refuse_stack(ramp_resources *res, const ramp_kernel_report *rep, int n,
                         const char *const *labels) {
    for (int i = 0; i < n && res->valid; i++)
        if (rep[i].stack_bytes > 0) {
            res->valid = 0;
            snprintf(res->why, sizeof res->why, "%s%sstack frame of %d B", labels[i],
                     *labels[i] ? ": " : "", rep[i].stack_bytes);
        }
}

/* Program i of the configuration: its name, compile and launch shape. */
static ramp_status compile_program(ramp_kernel_version kernel, const ramp_moe_variant *v,
                                   int units, int i, ramp_config_compiled *out,
                                   ramp_jit_result **r) {
    if (kernel == RAMP_KERNEL_V1) {
        ramp_moe_v1_program_name(v, out->program[i], sizeof out->program[i]);
        out->threads = ramp_moe_v1_layout_for(v).threads;
        out->dynamic_smem[i] = (int)ramp_moe_v1_layout_for(v).total;
        return ramp_moe_v1_compile(v, r);
    }
    const int phase = out->nprograms == 2 ? i + 1 : 0;
    const ramp_moe_v2_opts o = ramp_moe_v2_weight_opts(units);
    ramp_moe_v2_program_name_phase(v, &o, phase, out->program[i], sizeof out->program[i]);
    out->threads = RAMP_MV2_THREADS;
    const ramp_moe_v2_layout l =
        phase == 2 ? ramp_moe_v2_layout_down_bf(v->cfg.rows, v->cfg.stages, v->geom.bf16)
                   : ramp_moe_v2_layout_for(v);
    out->dynamic_smem[i] = (int)l.total;
    return ramp_moe_v2_compile_phase(v, &o, phase, r);
}

ramp_status ramp_config_compile(ramp_kernel_version kernel, const ramp_config *c,
                                const ramp_geometry *g, const ramp_device_limits *lim,
                                const char *cubin_dir, ramp_config_compiled *out) {
    return ramp_config_compile_weights(kernel, c, g, 0, lim, cubin_dir, out);
}

ramp_status ramp_config_compile_weights(ramp_kernel_version kernel, const ramp_config *c,
                                        const ramp_geometry *g, int weight_units,
                                        const ramp_device_limits *lim, const char *cubin_dir,
                                        ramp_config_compiled *out) {
    RAMP_CHECK(c && g && lim && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_config_compile: NULL argument");
    RAMP_CHECK(kernel == RAMP_KERNEL_V1 || kernel == RAMP_KERNEL_V2, RAMP_ERR_INVALID_ARGUMENT,
               "kernel = %d: not v1 (0) or v2 (1)", (int)kernel);
    RAMP_CHECK(weight_units == 0 || (weight_units == 1 && kernel == RAMP_KERNEL_V2),
               RAMP_ERR_INVALID_ARGUMENT,
               "weight_units = %d: 0, or 1 (stage units) with kernel v2 (kernel %s)", weight_units,
               ramp_kernel_version_name(kernel));
    memset(out, 0, sizeof *out);
    ramp_moe_variant v;
    memset(&v, 0, sizeof v);
    v.cfg = *c;
    v.geom = *g;
    RAMP_TRY(kernel == RAMP_KERNEL_V1 ? ramp_moe_v1_check(&v) : ramp_moe_v2_check(&v));
    out->nprograms = kernel == RAMP_KERNEL_V2 && c->two_phase ? 2 : 1;
    const char *entry = kernel == RAMP_KERNEL_V1 ? "ramp_moe_v1" : "ramp_moe_v2";
    for (int i = 0; i < out->nprograms; i++) {
        ramp_jit_result *r = NULL;
        RAMP_TRY(compile_program(kernel, &v, weight_units, i, out, &r));
        const ramp_kernel_report *k = ramp_jit_kernel(r, entry);
        ramp_status s = RAMP_OK;
        if (!k)
            s = ramp_set_error(RAMP_ERR_INTERNAL, __FILE__, __LINE__,
                               "no ptxas report for %s in the log of %s", entry, out->program[i]);
        ramp_resources res;
        if (s == RAMP_OK) {
            out->report[i] = *k;
            out->ptxas_warnings += r->ptxas_warnings;
            out->from_cache += r->from_cache;
            s = ramp_resources_from_report(k, out->threads, out->dynamic_smem[i], lim, &res);
        }
        if (s == RAMP_OK && cubin_dir) {
            char path[1200];
            int n = snprintf(path, sizeof path, "%s/%s.cubin", cubin_dir, out->program[i]);
            if (n < 0 || (size_t)n >= sizeof path)
                s = ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                                   "cubin folder path too long: %.64s...", cubin_dir);
            else
                s = save_cubin(path, r);
        }
        ramp_jit_result_free(r);
        RAMP_TRY(s);
        if (i == 0) out->res = res;
        else merge_resources(&out->res, &res, "down program");
    }
    static const char *const labels[2] = {"", "down program"};
    refuse_stack(&out->res, out->report, out->nprograms, labels);
    return RAMP_OK;
}

ramp_status ramp_plan_compile(const ramp_plan *p, int red4, const ramp_device_limits *lim,
                              const char *cubin_path, ramp_plan_compiled *out) {
    RAMP_CHECK(p && lim && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_plan_compile: NULL argument");
    RAMP_CHECK(red4 == 0 || red4 == 1, RAMP_ERR_INVALID_ARGUMENT, "red4 = %d: 0 or 1", red4);
    RAMP_CHECK(!red4 || p->kernel == RAMP_KERNEL_V2, RAMP_ERR_INVALID_ARGUMENT,
               "red4 (W2 permuted for float4 output) is a kernel v2 option; the plan is for %s",
               ramp_kernel_version_name((ramp_kernel_version)p->kernel));
    RAMP_TRY(ramp_plan_validate(p));
    RAMP_CHECK(!red4 || !p->weight_units, RAMP_ERR_INVALID_ARGUMENT,
               "red4 (W2 permuted for float4 output) reads row-major W2; the plan is for "
               "weights in stage units");
    memset(out, 0, sizeof *out);
    /* the menu as ramp_layer_create compiles it, for a GPU holding the
     * plan's experts (src/layer.c) */
    ramp_poly_desc d;
    memset(&d, 0, sizeof d);
    d.geom = p->geom;
    d.kernel = p->kernel;
    d.red4 = red4;
    d.units = p->weight_units; /* the layout the plan's times are of */
    d.count = p->count;
    memcpy(d.cfgs, p->configs, sizeof(ramp_config) * (size_t)p->count);
    RAMP_TRY(ramp_moe_poly_check(&d));
    ramp_jit_result *r = NULL;
    RAMP_TRY(ramp_moe_poly_compile(&d, &r));
    ramp_resources res_down;
    long long smem_down = 0;
    ramp_status s = ramp_moe_poly_resources_of(&d, r, lim, &out->res, &res_down, &smem_down);
    if (s == RAMP_OK) {
        long long smem;
        ramp_moe_poly_shape(&d, &out->threads, &smem);
        out->nkernels = smem_down > 0 ? 2 : 1;
        snprintf(out->kernel[0], sizeof out->kernel[0], "%s", ramp_moe_poly_kernel_name(&d));
        out->dynamic_smem[0] = (int)smem;
        if (smem_down > 0) {
            snprintf(out->kernel[1], sizeof out->kernel[1], "%s", RAMP_POLY_V2_DOWN_KERNEL);
            out->dynamic_smem[1] = (int)smem_down;
        }
        for (int i = 0; i < out->nkernels; i++) out->report[i] = *ramp_jit_kernel(r, out->kernel[i]);
        out->ptxas_warnings = r->ptxas_warnings;
        out->from_cache = r->from_cache;
        if (out->nkernels == 2) merge_resources(&out->res, &res_down, "phase-2 kernel");
        const char *labels[2] = {out->kernel[0], out->kernel[1]};
        refuse_stack(&out->res, out->report, out->nkernels, labels);
    }
    if (s == RAMP_OK && cubin_path) s = save_cubin(cubin_path, r);
    ramp_jit_result_free(r);
    return s;
}
