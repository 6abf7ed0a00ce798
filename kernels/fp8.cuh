/*
 * fp8.cuh - FP8 e4m3 and BF16 conversions on the device (sm_89+ PTX).
 *
 * The CPU twin is src/fp8.c: both round to nearest even and saturate to
 * +-448 (e4m3 "satfinite"), so a value quantized here and there gives the
 * same byte. Used by the fused MoE kernel (moe_v1.cuh) for the in-kernel
 * quantization of BF16 hidden states and of the intermediate, and by the
 * GPU tests to check the conversions bit for bit. No headers: NVRTC-clean.
 */
#ifndef RAMP_FP8_CUH
#define RAMP_FP8_CUH

#define RAMP_E4M3_MAX 448.0f
/* Smallest amax a 1x128 group's scale is computed from (as vLLM/DeepGEMM):
 * keeps an all-zero group's scale finite and non-zero. Same in src/fp8.h. */
#define RAMP_FP8_AMAX_MIN 1e-10f

/* The FP8 scale of a group whose amax is m (m >= RAMP_FP8_AMAX_MIN, so
 * neither it nor its reciprocal is subnormal): returns m / 448 and sets
 * *inv to its reciprocal, which the group is multiplied by before
 * rounding. RAMP_FAST_QSCALE 1 (the default): a multiply by the rounded
 * 1/448 and rcp.approx (1 ulp), within 2 ulp of the IEEE forms together;
 * the CPU reference allows 4e-7 relative for each (src/moe_ref.c). The
 * IEEE divisions cost an FCHK and a slow-path branch each, unrolled per
 * token of a tile: the last FCHK in kernel v2's code (kernels/moe_v2.md,
 * session 28). 0: the divisions, as kernel v1 keeps them. */
#ifndef RAMP_FAST_QSCALE
#define RAMP_FAST_QSCALE 1
#endif
static __device__ __forceinline__ float ramp_fp8_scale(float m, float *inv) {
#if RAMP_FAST_QSCALE
    const float s = m * (1.0f / RAMP_E4M3_MAX);
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(*inv) : "f"(s));
    return s;
#else
    const float s = m / RAMP_E4M3_MAX;
    *inv = 1.0f / s;
    return s;
#endif
}

/* Two floats -> two e4m3 bytes (lo in bits 0-7), RNE, saturating. */
static __device__ __forceinline__ unsigned ramp_e4m3x2(float lo, float hi) {
    unsigned short r;
    /* cvt packs its first source into the upper byte. */
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
    return (unsigned)r;
}

/* Four floats -> four e4m3 bytes, v0 in bits 0-7. */
static __device__ __forceinline__ unsigned ramp_e4m3x4(float v0, float v1,
                                                       float v2, float v3) {
    return ramp_e4m3x2(v0, v1) | (ramp_e4m3x2(v2, v3) << 16);
}

/* One e4m3 byte -> float (exact). */
static __device__ __forceinline__ float ramp_e4m3_to_f32(unsigned char b) {
    unsigned short in = b, h2;
    unsigned out;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(out) : "h"(in));
    h2 = (unsigned short)(out & 0xFFFFu);
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h2));
    return f;
}

/* Two floats -> two bf16 (lo in bits 0-15), RNE. */
static __device__ __forceinline__ unsigned ramp_bf16x2(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

static __device__ __forceinline__ float ramp_bf16_lo(unsigned v) {
    return __uint_as_float(v << 16);
}
static __device__ __forceinline__ float ramp_bf16_hi(unsigned v) {
    return __uint_as_float(v & 0xFFFF0000u);
}

#endif /* RAMP_FP8_CUH */
