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

/* SiLU(g) = g / (1 + e^-g). RAMP_FAST_SILU 1 (the default): the fast
 * exponential and division (two MUFU operations, ex2 and rcp; a few ulp
 * from the IEEE form, inside the tests' error bounds). The IEEE division's
 * check and slow path cost ~22 instructions an element, unrolled over
 * every accumulator: about a third of an entry's per-tile code, which the
 * polymorphic kernel pays in instruction-cache misses (kernels/moe_v2.md,
 * session 27). 0: the reference's exact operations (src/moe_ref.c). */
#ifndef RAMP_FAST_SILU
#define RAMP_FAST_SILU 1
#endif
static __forceinline__ float ramp_silu(float g) {
#if RAMP_FAST_SILU
    /* __expf's exponential with subnormals flushed: without -ftz, __expf
     * scales subnormal results in and out (a compare and two predicated
     * multiplies an element); such an e^-g vanishes in 1 + e^-g either way,
     * so the result is the same float */
    float e;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(g * -1.44269504088896341f));
    return __fdividef(g, 1.0f + e);
#else
    return g / (1.0f + expf(-g));
#endif
}

#endif /* RAMP_COMMON_CUH */
