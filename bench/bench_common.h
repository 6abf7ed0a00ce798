/*
 * bench_common.h - what the kernel benchmarks share (bench_moe.c,
 * bench_moe_v2.c): error exits for main(), a double comparison for medians,
 * and the device-to-device copy rate that the HBM floors are measured
 * against. Header-only: each bench is one executable.
 */
#ifndef RAMP_BENCH_COMMON_H
#define RAMP_BENCH_COMMON_H

#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In main(): print the failed call with the library's last error, exit 1. */
#define DIE(...)                                                  \
    do {                                                          \
        fprintf(stderr, __VA_ARGS__);                             \
        fprintf(stderr, " (%s)\n", ramp_last_error());            \
        return 1;                                                 \
    } while (0)
#define TRY(expr)                                                 \
    do {                                                          \
        if ((expr) != RAMP_OK) DIE("%s:%d: %s", __FILE__, __LINE__, #expr); \
    } while (0)

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The copy rate in bytes per second (read + written, as DESIGN.md's 4.2
 * TB/s): a 1 GiB float4 copy over sms * 8 blocks, median of 10 timed
 * launches after 2 warm-ups, between events e0 and e1 on stream st. */
static inline ramp_status bench_copy_rate(ramp_gpu *gpu, ramp_stream st, int sms,
                                          ramp_event *e0, ramp_event *e1, double *rate) {
    static const char *src =
        "extern \"C\" __global__ void ramp_copy(const float4 *a, float4 *b, long long n) {\n"
        "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;\n"
        "       i += (long long)gridDim.x * blockDim.x) b[i] = a[i];\n"
        "}\n";
    const size_t bytes = (size_t)1 << 30;
    ramp_devptr a = 0, b = 0;
    ramp_jit_result *jit = NULL;
    ramp_module *mod = NULL;
    ramp_kernel *k = NULL;
    ramp_jit_request rq;
    memset(&rq, 0, sizeof rq);
    rq.name = "bench-copy";
    rq.source = src;
    double t[10];
    ramp_status s = ramp_gpu_alloc(gpu, bytes, &a);
    if (s == RAMP_OK) s = ramp_gpu_alloc(gpu, bytes, &b);
    if (s == RAMP_OK) s = ramp_gpu_fill32_async(gpu, a, 0x3f800000u, bytes / 4, st);
    if (s == RAMP_OK) s = ramp_jit_compile(&rq, &jit);
    if (s == RAMP_OK) s = ramp_module_load(gpu, jit->cubin, jit->cubin_size, &mod);
    if (s == RAMP_OK) s = ramp_module_kernel(mod, "ramp_copy", 0, &k);
    for (int i = 0; i < 12 && s == RAMP_OK; i++) {
        long long n4 = (long long)(bytes / 16);
        void *args[3] = {&a, &b, &n4};
        unsigned grid[3] = {(unsigned)sms * 8, 1, 1}, block[3] = {512, 1, 1};
        double us = 0;
        s = ramp_event_record(e0, st);
        if (s == RAMP_OK) s = ramp_kernel_launch(k, grid, block, 0, st, args);
        if (s == RAMP_OK) s = ramp_event_record(e1, st);
        if (s == RAMP_OK) s = ramp_event_elapsed_us(e0, e1, &us);
        if (i >= 2) t[i - 2] = us;
    }
    if (s == RAMP_OK) {
        qsort(t, 10, sizeof t[0], bench_cmp_double);
        *rate = 2.0 * (double)bytes / (t[5] * 1e-6);
    }
    ramp_module_free(mod);
    ramp_jit_result_free(jit);
    ramp_gpu_free(gpu, a);
    ramp_gpu_free(gpu, b);
    return s;
}

#endif /* RAMP_BENCH_COMMON_H */
