/*
 * config_compile.c - what the compiler says about one configuration: its
 * kernel's program(s) built with NVRTC for sm_90a (no GPU needed; the JIT
 * cache makes a second call cheap), ptxas's report of each and the launch
 * shape, so that `ramp configs --ptxas` prints measured registers, spills
 * and shared memory instead of estimates, and the cubins can be
 * disassembled (tools/sass-check).
 */
#include "internal.h"
#include "moe_gpu.h"
#include "moe_v2.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Writes r's cubin to dir/name.cubin through a temporary file of its own
 * (two configurations may share a program, and threads may write it at
 * once), so that a failed write leaves nothing behind. */
static ramp_status save_cubin(const char *dir, const char *name, const ramp_jit_result *r) {
    char path[1200], tmp[1220];
    int n = snprintf(path, sizeof path, "%s/%s.cubin", dir, name);
    RAMP_CHECK(n > 0 && (size_t)n < sizeof path, RAMP_ERR_INVALID_ARGUMENT,
               "cubin folder path too long: %.64s...", dir);
    static atomic_uint seq;
    snprintf(tmp, sizeof tmp, "%s.tmp%ld.%u", path, (long)getpid(), atomic_fetch_add(&seq, 1u));
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

/* Program i of the configuration: its name, compile and launch shape. */
static ramp_status compile_program(ramp_kernel_version kernel, const ramp_moe_variant *v,
                                   int i, ramp_config_compiled *out, ramp_jit_result **r) {
    if (kernel == RAMP_KERNEL_V1) {
        ramp_moe_v1_program_name(v, out->program[i], sizeof out->program[i]);
        out->threads = ramp_moe_v1_layout_for(v).threads;
        out->dynamic_smem[i] = (int)ramp_moe_v1_layout_for(v).total;
        return ramp_moe_v1_compile(v, r);
    }
    const int phase = out->nprograms == 2 ? i + 1 : 0;
    ramp_moe_v2_program_name_phase(v, NULL, phase, out->program[i], sizeof out->program[i]);
    out->threads = RAMP_MV2_THREADS;
    out->dynamic_smem[i] = (int)(phase == 2 ? ramp_moe_v2_layout_down(v->cfg.rows, v->cfg.stages)
                                            : ramp_moe_v2_layout_for(v))
                               .total;
    return ramp_moe_v2_compile_phase(v, NULL, phase, r);
}

ramp_status ramp_config_compile(ramp_kernel_version kernel, const ramp_config *c,
                                const ramp_geometry *g, const ramp_device_limits *lim,
                                const char *cubin_dir, ramp_config_compiled *out) {
    RAMP_CHECK(c && g && lim && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_config_compile: NULL argument");
    RAMP_CHECK(kernel == RAMP_KERNEL_V1 || kernel == RAMP_KERNEL_V2, RAMP_ERR_INVALID_ARGUMENT,
               "kernel = %d: not v1 (0) or v2 (1)", (int)kernel);
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
        RAMP_TRY(compile_program(kernel, &v, i, out, &r));
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
        if (s == RAMP_OK && cubin_dir) s = save_cubin(cubin_dir, out->program[i], r);
        ramp_jit_result_free(r);
        RAMP_TRY(s);
        /* Two programs: the larger shared memory, the lower occupancy, and
         * the first reason one of them cannot run. */
        if (i == 0) {
            out->res = res;
        } else {
            if (res.smem_bytes > out->res.smem_bytes) out->res.smem_bytes = res.smem_bytes;
            if (res.regs_per_thread > out->res.regs_per_thread)
                out->res.regs_per_thread = res.regs_per_thread;
            if (res.blocks_per_sm < out->res.blocks_per_sm)
                out->res.blocks_per_sm = res.blocks_per_sm;
            if (out->res.valid && !res.valid) {
                out->res.valid = 0;
                snprintf(out->res.why, sizeof out->res.why, "down program: %s", res.why);
            }
        }
    }
    /* A stack frame in these kernels is local memory on the hot path. */
    for (int i = 0; i < out->nprograms && out->res.valid; i++)
        if (out->report[i].stack_bytes > 0) {
            out->res.valid = 0;
            snprintf(out->res.why, sizeof out->res.why, "%sstack frame of %d B",
                     i ? "down program: " : "", out->report[i].stack_bytes);
        }
    return RAMP_OK;
}
