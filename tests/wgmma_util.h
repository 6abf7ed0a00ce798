/*
 * wgmma_util.h - compiling the wgmma test kernels (kernels/wgmma_test.cuh)
 * for the tests that use them: test_hopper_compile (CPU, ptxas report) and
 * test_gpu_wgmma (GPU, results). Header-only.
 */
#ifndef RAMP_WGMMA_UTIL_H
#define RAMP_WGMMA_UTIL_H

#include "ramp.h"

#include "../kernels/wgmma_test_params.h"

#include <stdio.h>
#include <string.h>

/* Every N the kernel is built for: the configuration space's rows per tile
 * rounded up to 8. */
static const int WGT_NS[] = {8, 16, 24, 32, 48, 64};
#define WGT_NN ((int)(sizeof WGT_NS / sizeof WGT_NS[0]))

static const char *const WGT_KERNELS[2] = {"ramp_wgmma_test", "ramp_wgmma_test_ws"};
static const int WGT_THREADS[2] = {RAMP_WGT_THREADS, RAMP_WGT_WS_THREADS};
static const int WGT_ROWS[2] = {RAMP_WGT_ROWS, RAMP_WGT_WS_ROWS};

/* Compiles wgmma_test.cuh for N = n, e4m3 (bf16 = 0) or bf16 (1). */
static inline ramp_status wgt_compile(int n, int bf16, ramp_jit_result **out) {
    char name[64], dn[32], db[32];
    snprintf(name, sizeof name, "wgmma-test-n%d-%s", n, bf16 ? "bf16" : "e4m3");
    snprintf(dn, sizeof dn, "RAMP_WG_N=%d", n);
    snprintf(db, sizeof db, "RAMP_WG_BF16=%d", bf16 ? 1 : 0);
    const char *defs[2] = {dn, db};
    ramp_jit_request rq;
    memset(&rq, 0, sizeof rq);
    rq.name = name;
    rq.source = "#include \"wgmma_test.cuh\"\n";
    rq.defines = defs;
    rq.ndefines = 2;
    return ramp_jit_compile(&rq, out);
}

#endif /* RAMP_WGMMA_UTIL_H */
