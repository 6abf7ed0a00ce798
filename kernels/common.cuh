/*
 * common.cuh - small device helpers shared by libramp's kernels.
 *
 * Kernels are compiled by NVRTC with -default-device and no standard
 * headers, so everything here is plain CUDA built-ins and inline PTX.
 */
#ifndef RAMP_COMMON_CUH
#define RAMP_COMMON_CUH

#define RAMP_FULL_MASK 0xffffffffu

/* Bits of the lanes below this one. */
static __forceinline__ unsigned ramp_lanemask_lt() {
    unsigned m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}

/* Integer ceil(a / b) for a >= 0, b >= 1. */
static __forceinline__ int ramp_ceil_div(int a, int b) { return (a + b - 1) / b; }

static __forceinline__ float ramp_pos_inf() { return __int_as_float(0x7f800000); }

#endif /* RAMP_COMMON_CUH */
