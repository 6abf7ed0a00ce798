/*
 * wgmma_test.cuh - test kernels of hopper.cuh: TMA into SW128 tiles, cp.async
 * into the same layout by hand, mbarrier rings, wgmma (FP8 e4m3 m64nNk32 or
 * BF16 m64nNk16) and the accumulator layout, the pieces the v2 MoE kernel
 * (hopper.md) is made of, checked alone against a CPU reference by
 * tests/test_gpu_wgmma.c. Shapes and shared-memory sizes:
 * wgmma_test_params.h.
 *
 *   C[M x N] (f32, row-major) = A[M x K] . B[N x K]^T
 *
 * in the swap-AB form: A = weights (the wgmma A operand, 64 rows per
 * instruction), loaded by TMA through the tensor map tmap_a (2-D, inner
 * dimension K, box = 128 bytes of K x 64 rows, 128-byte swizzle); B = tokens
 * (the B operand, N rows), loaded with cp.async into the same swizzled
 * layout by hand (the v2 kernel gathers token rows this way). K is a
 * multiple of 128 elements; M a multiple of the block's rows.
 *
 * Specialisation (-D): RAMP_WG_N (8, 16, 24, 32, 48, 64: the instruction's
 * N), RAMP_WG_BF16 (0: e4m3, 1: bf16; default 0).
 *
 * Kernels (parameters: tmap_a by value, b [N][K], c [M][N], k = K):
 *   ramp_wgmma_test     128 threads, block b computes rows 64b..64b+63.
 *   ramp_wgmma_test_ws  384 threads, block b computes rows 128b..128b+127.
 */
#include "hopper.cuh"
#include "wgmma_test_params.h"

#ifndef RAMP_WG_N
#error "wgmma_test.cuh: define RAMP_WG_N (8, 16, 24, 32, 48 or 64)"
#endif
#ifndef RAMP_WG_BF16
#define RAMP_WG_BF16 0
#endif
#if RAMP_WG_N != 8 && RAMP_WG_N != 16 && RAMP_WG_N != 24 && RAMP_WG_N != 32 && \
    RAMP_WG_N != 48 && RAMP_WG_N != 64
#error "RAMP_WG_N must be 8, 16, 24, 32, 48 or 64"
#endif

#define WGT_N RAMP_WG_N
#define WGT_ACC (WGT_N / 2)                /* accumulators per thread */
#define WGT_EB (RAMP_WG_BF16 ? 2 : 1)      /* bytes per element */
#define WGT_KS (RAMP_WGT_K_BYTES / WGT_EB) /* K elements per stage */
#define WGT_A_BYTES (64 * RAMP_WGT_K_BYTES) /* one 64-row A box */
#if RAMP_WG_BF16
#define WGT_MMA HOP_WGMMA_BF16(RAMP_WG_N)
#else
#define WGT_MMA HOP_WGMMA_E4M3(RAMP_WG_N)
#endif

/* The dynamic shared memory rounded up to the 1024-byte swizzle atom (the
 * host adds RAMP_WGT_ALIGN bytes of slack for this). */
static __device__ __forceinline__ unsigned char *wgt_smem_base(unsigned char *dyn) {
    unsigned a = hop_smem(dyn);
    return dyn + (((a + RAMP_WGT_ALIGN - 1) & ~(unsigned)(RAMP_WGT_ALIGN - 1)) - a);
}

/* B's 128-byte K block kb (N rows) into the SW128 tile at sb: 16-byte
 * chunks spread over `threads` threads starting at thread t. */
static __device__ __forceinline__ void wgt_load_b(unsigned sb, const unsigned char *b, int k,
                                                  int kb, int t, int threads) {
    const size_t row_bytes = (size_t)k * WGT_EB;
    for (int i = t; i < WGT_N * 8; i += threads) {
        const int n = i >> 3, ch = i & 7;
        const unsigned char *src = b + n * row_bytes + (size_t)kb * RAMP_WGT_K_BYTES + ch * 16;
        hop_cp16(sb + hop_swz128(n, ch), src, 16);
    }
}

/* acc += the stage's A rows (SW128 tile at sa) . its B tile (sb)^T over the
 * stage's 128 bytes of K: four wgmmas, each 32 bytes further along the row
 * (hop_desc_sw128 says why that is just +32 on the address). overwrite: the
 * first of them ignores acc (scale-d = 0), as v2's promotion will use it. */
static __device__ __forceinline__ void wgt_mma_stage(float *acc, unsigned sa, unsigned sb,
                                                     int overwrite) {
    hop_wgmma_fence();
#pragma unroll
    for (int k4 = 0; k4 < RAMP_WGT_K_BYTES / HOP_WGMMA_K_BYTES; k4++)
        WGT_MMA(acc, hop_desc_sw128(sa + k4 * HOP_WGMMA_K_BYTES),
                hop_desc_sw128(sb + k4 * HOP_WGMMA_K_BYTES), k4 == 0 && overwrite ? 0 : 1);
    hop_wgmma_commit();
    HOP_WGMMA_WAIT(0);
    HOP_ACC_FENCE(acc, WGT_ACC);
}

/* Writes a warpgroup's accumulators (64 rows from row0) into c [M][N], in
 * the layout documented at HOP_DEFINE_WGMMA. */
static __device__ __forceinline__ void wgt_store(float *c, const float *acc, int row0) {
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) & 3;
    const int g = lane >> 2, t = lane & 3;
    float *r0 = c + (size_t)(row0 + 16 * w + g) * WGT_N;
    float *r8 = r0 + 8 * WGT_N;
#pragma unroll
    for (int j = 0; j < WGT_N / 8; j++) {
        float2 lo, hi;
        lo.x = acc[4 * j];
        lo.y = acc[4 * j + 1];
        hi.x = acc[4 * j + 2];
        hi.y = acc[4 * j + 3];
        *(float2 *)(r0 + 8 * j + 2 * t) = lo;
        *(float2 *)(r8 + 8 * j + 2 * t) = hi;
    }
}

/* ------------------------------------------------ one warpgroup, 2 stages */

/* Issues the loads of K block kb into stage slot s: thread 0 the A box by
 * TMA (announcing its bytes on full[s]), every thread its share of B by
 * cp.async and an arrival that fires when its copies have landed. full[s]
 * expects 1 + 128 arrivals. */
static __device__ __forceinline__ void wgt_issue(unsigned char *sm, const hop_tensormap *tmap,
                                                 const unsigned char *b, int k, int kb, int s,
                                                 int m0) {
    const int stage = ramp_wgt_stage_bytes(RAMP_WGT_ROWS, WGT_N);
    const unsigned st = hop_smem(sm) + s * stage;
    const unsigned full = hop_smem(sm) + RAMP_WGT_STAGES * stage + 8 * s; /* after the stages */
    if (threadIdx.x == 0) {
        hop_mbar_arrive_expect_tx(full, WGT_A_BYTES);
        hop_tma_load_2d(st, tmap, full, kb * WGT_KS, m0);
    }
    wgt_load_b(st + WGT_A_BYTES, b, k, kb, threadIdx.x, RAMP_WGT_THREADS);
    hop_cp_arrive_noinc(full);
}

extern "C" __global__ void __launch_bounds__(RAMP_WGT_THREADS, 1)
ramp_wgmma_test(const __grid_constant__ hop_tensormap tmap_a, const unsigned char *b, float *c,
                int k) {
    extern __shared__ __align__(1024) unsigned char wgt_dyn[];
    unsigned char *sm = wgt_smem_base(wgt_dyn);
    const int stage = ramp_wgt_stage_bytes(RAMP_WGT_ROWS, WGT_N);
    const unsigned bars = hop_smem(sm) + RAMP_WGT_STAGES * stage;
    const int m0 = blockIdx.x * RAMP_WGT_ROWS;
    const int kblocks = k / WGT_KS;

    if (threadIdx.x == 0) {
        for (int s = 0; s < RAMP_WGT_STAGES; s++) hop_mbar_init(bars + 8 * s, 1 + RAMP_WGT_THREADS);
        hop_mbar_init_fence();
        hop_tma_prefetch_map(&tmap_a);
    }
    __syncthreads();

    /* NaN: the first wgmma's scale-d = 0 must discard it (tests that path;
     * the ws kernel tests zeroed accumulators and scale-d = 1) */
    float acc[WGT_ACC];
#pragma unroll
    for (int i = 0; i < WGT_ACC; i++) acc[i] = __int_as_float(0x7fc00000);

    for (int s = 0; s < RAMP_WGT_STAGES && s < kblocks; s++) wgt_issue(sm, &tmap_a, b, k, s, s, m0);
    for (int kb = 0; kb < kblocks; kb++) {
        const int s = kb % RAMP_WGT_STAGES;
        hop_mbar_wait(bars + 8 * s, (kb / RAMP_WGT_STAGES) & 1);
        /* B arrived through cp.async, a generic-proxy write that wgmma (async
         * proxy) reads: the writers never see their copies land (the
         * mbarrier does), so each reader fences after its acquire. */
        hop_fence_proxy_async();
        const unsigned st = hop_smem(sm) + s * stage;
        wgt_mma_stage(acc, st, st + WGT_A_BYTES, kb == 0);
        /* every warp's wgmmas have read slot s before anyone refills it */
        __syncthreads();
        if (kb + RAMP_WGT_STAGES < kblocks)
            wgt_issue(sm, &tmap_a, b, k, kb + RAMP_WGT_STAGES, s, m0);
    }
    wgt_store(c, acc, m0);
}

/* ------------------------------------- producer + 2 consumers, 4 stages */

extern "C" __global__ void __launch_bounds__(RAMP_WGT_WS_THREADS, 1)
ramp_wgmma_test_ws(const __grid_constant__ hop_tensormap tmap_a, const unsigned char *b, float *c,
                   int k) {
    extern __shared__ __align__(1024) unsigned char wgt_dyn[];
    unsigned char *sm = wgt_smem_base(wgt_dyn);
    const int stage = ramp_wgt_stage_bytes(RAMP_WGT_WS_ROWS, WGT_N);
    const unsigned base = hop_smem(sm);
    const unsigned full = base + RAMP_WGT_WS_STAGES * stage; /* full[s] = full + 8s */
    const unsigned empty = full + 8 * RAMP_WGT_WS_STAGES;
    const int m0 = blockIdx.x * RAMP_WGT_WS_ROWS;
    const int kblocks = k / WGT_KS;
    const int wg = hop_warpgroup();

    if (threadIdx.x == 0) {
        for (int s = 0; s < RAMP_WGT_WS_STAGES; s++) {
            /* full: the TMA issuer's expect_tx + 128 producer threads */
            hop_mbar_init(full + 8 * s, 1 + 128);
            /* empty: every consumer thread, after its wgmmas read the slot */
            hop_mbar_init(empty + 8 * s, 256);
        }
        hop_mbar_init_fence();
        hop_tma_prefetch_map(&tmap_a);
    }
    __syncthreads();

    if (wg == 0) {
        /* Producer. B's copies are published one stage late: after issuing
         * stage kb, wait_group 1 means stage kb-1's have landed; fence them
         * for the async proxy, then arrive. (The writer fences its own
         * completed writes: the textbook order.) */
        HOP_SETMAXNREG_DEC(RAMP_WGT_WS_PRODUCER_REGS);
        const int t = threadIdx.x;
        for (int kb = 0; kb < kblocks; kb++) {
            const int s = kb % RAMP_WGT_WS_STAGES;
            if (kb >= RAMP_WGT_WS_STAGES)
                hop_mbar_wait(empty + 8 * s, (kb / RAMP_WGT_WS_STAGES - 1) & 1);
            const unsigned st = base + s * stage;
            if (t == 0) {
                hop_mbar_arrive_expect_tx(full + 8 * s, 2 * WGT_A_BYTES);
                hop_tma_load_2d(st, &tmap_a, full + 8 * s, kb * WGT_KS, m0);
                hop_tma_load_2d(st + WGT_A_BYTES, &tmap_a, full + 8 * s, kb * WGT_KS, m0 + 64);
            }
            wgt_load_b(st + 2 * WGT_A_BYTES, b, k, kb, t, 128);
            hop_cp_commit();
            if (kb > 0) {
                HOP_CP_WAIT(1);
                hop_fence_proxy_async();
                hop_mbar_arrive(full + 8 * ((kb - 1) % RAMP_WGT_WS_STAGES));
            }
        }
        if (kblocks > 0) {
            HOP_CP_WAIT(0);
            hop_fence_proxy_async();
            hop_mbar_arrive(full + 8 * ((kblocks - 1) % RAMP_WGT_WS_STAGES));
        }
    } else {
        /* Consumers: warpgroup 1 takes A rows 0-63 of the stage, 2 rows
         * 64-127; both read the same B tile. */
        HOP_SETMAXNREG_INC(RAMP_WGT_WS_CONSUMER_REGS);
        const int cw = wg - 1;
        float acc[WGT_ACC];
#pragma unroll
        for (int i = 0; i < WGT_ACC; i++) acc[i] = 0.f;
        for (int kb = 0; kb < kblocks; kb++) {
            const int s = kb % RAMP_WGT_WS_STAGES;
            hop_mbar_wait(full + 8 * s, (kb / RAMP_WGT_WS_STAGES) & 1);
            const unsigned st = base + s * stage;
            wgt_mma_stage(acc, st + cw * WGT_A_BYTES, st + 2 * WGT_A_BYTES, 0);
            hop_mbar_arrive(empty + 8 * s);
        }
        wgt_store(c, acc, m0 + 64 * cw);
    }
}
