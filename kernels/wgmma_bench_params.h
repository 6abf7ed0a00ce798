/*
 * wgmma_bench_params.h - the shared-memory layout and launch shape of the
 * wgmma throughput benchmark (kernels/wgmma_bench.cuh), shared by the device
 * (NVRTC) and the host (bench/bench_wgmma.c, tests/test_wgmma_bench_compile.c)
 * so both size a launch from the same formula.
 *
 * Layout (after rounding the dynamic base up to 1024 B): one A tile of 64
 * rows x 128 B (8 KB, SW128) per (warpgroup, accumulator set), warpgroup
 * major, then the one B tile of N rows x 128 B that every warpgroup reads
 * (v2's consumers share the token tile the same way).
 */
#ifndef RAMP_WGMMA_BENCH_PARAMS_H
#define RAMP_WGMMA_BENCH_PARAMS_H

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define RAMP_WB_INLINE static __host__ __device__ __forceinline__
#else
#define RAMP_WB_INLINE static inline
#endif

#define RAMP_WB_WG_THREADS 128   /* threads per warpgroup */
#define RAMP_WB_ROW_BYTES 128    /* bytes of K per tile row: one SW128 row */
#define RAMP_WB_A_TILE 8192      /* 64 rows x 128 B */
#define RAMP_WB_ALIGN 1024       /* SW128 tiles start on 1024-byte atoms */
#define RAMP_WB_KSTEPS 4         /* k32 wgmmas per iteration per set: K = 128 */
#define RAMP_WB_MAX_ACC_REGS 128 /* accumulator floats per thread we allow */

/* Bytes of the tiles (without the alignment slack). */
RAMP_WB_INLINE int ramp_wb_tile_bytes(int w, int accs, int n) {
    return w * accs * RAMP_WB_A_TILE + n * RAMP_WB_ROW_BYTES;
}

/* Dynamic shared memory of a launch: alignment slack plus the tiles. */
RAMP_WB_INLINE int ramp_wb_smem_bytes(int w, int accs, int n) {
    return RAMP_WB_ALIGN + ramp_wb_tile_bytes(w, accs, n);
}

/* RAMP_WB_TMA (the .t forms): a producer warp beside the warpgroups fills
 * a ring of RAMP_WB_TMA_SLOTS x RAMP_WB_TMA_PIECE bytes after the tiles by
 * TMA bulk copies, RAMP_WB_TMA_BPI bytes per consumer iteration (kernel
 * v2's wide stage: 32 KB of weights and 16 KB of token rows per K block of
 * gate and up), its mbarriers and the consumers' progress word after the
 * ring. */
#define RAMP_WB_TMA_PIECE 16384
#define RAMP_WB_TMA_SLOTS 8
#define RAMP_WB_TMA_BPI 49152
#define RAMP_WB_TMA_SMEM (RAMP_WB_TMA_SLOTS * RAMP_WB_TMA_PIECE + 128)
/* the .h forms (weights from HBM): a deeper ring, so that two iterations'
 * 64 KB of weights are in flight beside the one computed (v2's three-stage
 * ring); 10 x 16 KB + the tiles fit the 227 KB of a block at N = 128 */
#define RAMP_WB_TMA_SLOTS_H 10
#define RAMP_WB_TMA_SMEM_H (RAMP_WB_TMA_SLOTS_H * RAMP_WB_TMA_PIECE + 128)

/* FLOPs of one wgmma m64nNk32: 2 x 64 x N x 32. */
RAMP_WB_INLINE double ramp_wb_wgmma_flop(int n) {
    return 2.0 * 64.0 * (double)n * 32.0;
}

#endif /* RAMP_WGMMA_BENCH_PARAMS_H */
