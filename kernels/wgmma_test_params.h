/*
 * wgmma_test_params.h - shapes and shared-memory sizes of the wgmma test
 * kernels (wgmma_test.cuh), shared by the device (NVRTC) and the host tests
 * (tests/test_hopper_compile.c, tests/test_gpu_wgmma.c), so both size the
 * launch from the same formula.
 *
 * Two kernels per (N, precision):
 *   ramp_wgmma_test     one warpgroup (128 threads) per block, 64 rows of A,
 *                       a 2-stage ring; the thread that issues the TMA also
 *                       computes.
 *   ramp_wgmma_test_ws  warp-specialised, the v2 kernel's skeleton: one
 *                       producer warpgroup (TMA + cp.async, setmaxnreg down)
 *                       and two consumer warpgroups (wgmma, setmaxnreg up),
 *                       128 rows of A (64 per consumer), a 4-stage ring with
 *                       full and empty barriers.
 * Both compute C[M x N] (f32, row-major) = A[M x K] . B[N x K]^T with A and
 * B K-major (row-major [rows][K]), K a multiple of 128 elements.
 */
#ifndef RAMP_WGMMA_TEST_PARAMS_H
#define RAMP_WGMMA_TEST_PARAMS_H

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define RAMP_WGT_INLINE static __host__ __device__ __forceinline__
#else
#define RAMP_WGT_INLINE static inline
#endif

#define RAMP_WGT_THREADS 128     /* ramp_wgmma_test */
#define RAMP_WGT_STAGES 2
#define RAMP_WGT_ROWS 64         /* A rows per block */
#define RAMP_WGT_WS_THREADS 384  /* ramp_wgmma_test_ws: producer + 2 consumers */
#define RAMP_WGT_WS_STAGES 4
#define RAMP_WGT_WS_ROWS 128     /* A rows per block, 64 per consumer */
#define RAMP_WGT_WS_REGS 168     /* registers at entry: 65536 / 384, rounded to 8 */
#define RAMP_WGT_WS_PRODUCER_REGS 40
#define RAMP_WGT_WS_CONSUMER_REGS 232
#define RAMP_WGT_K_BYTES 128     /* bytes of K per stage and row (one SW128 row) */
#define RAMP_WGT_ALIGN 1024      /* SW128 tiles start on 1024-byte atoms */

/* Bytes of one stage: the A tile, then the B tile (n rows, n a multiple of 8,
 * so n * 128 keeps the next tile 1024-aligned). */
RAMP_WGT_INLINE int ramp_wgt_stage_bytes(int a_rows, int n) {
    return (a_rows + n) * RAMP_WGT_K_BYTES;
}

/* Dynamic shared memory of a launch: alignment slack (the kernel rounds its
 * base up to 1024 B), the stages, then 8-byte mbarriers (full[], and empty[]
 * for the warp-specialised kernel), padded to 64 B. */
RAMP_WGT_INLINE int ramp_wgt_smem_bytes(int ws, int n) {
    int stages = ws ? RAMP_WGT_WS_STAGES : RAMP_WGT_STAGES;
    int rows = ws ? RAMP_WGT_WS_ROWS : RAMP_WGT_ROWS;
    return RAMP_WGT_ALIGN + stages * ramp_wgt_stage_bytes(rows, n) + 64;
}

#endif /* RAMP_WGMMA_TEST_PARAMS_H */
