/*
 * wgmma_bench.cuh - tensor-core throughput of the FP8 wgmma forms kernel v2
 * uses (m64nNk32 e4m3, N = 8..64, both operands in shared memory) against
 * larger N and against A from registers (hopper.md, "Unknowns the first
 * runs must measure": wgmma issue cost at small N). Timed by
 * bench/bench_wgmma.c; compiled without a GPU by
 * tests/test_wgmma_bench_compile.c. Layout: wgmma_bench_params.h.
 *
 * The operands are filled once per block with e4m3 bytes of magnitude
 * 0.5-2 and random signs (real data toggles the multipliers as a real GEMM
 * does; zeros might let the clock run higher than it would), then never
 * written again: the timed loop has no global or shared-memory traffic but
 * the wgmmas' own operand reads. Each of the W warpgroups runs `iters`
 * iterations of
 *
 *     wgmma.fence
 *     for each accumulator set a (ACCS of them; v2: gate and up = 2):
 *         4 x wgmma m64nNk32 into acc[a], K = 128 (one SW128 row), A = the
 *         warpgroup's own 64-row tile of set a, B = the shared N-row tile
 *     commit
 *     wait_group PIPE
 *
 * so every iteration is one commit group of 4 x ACCS wgmmas. PIPE = 0 waits
 * for it before the next is issued, as v2's consumers do (they promote the
 * group's sums before issuing the next K block); PIPE = 1 keeps one group
 * in flight while the next is issued (a pipelined GEMM mainloop: the
 * ceiling of the instruction form). The accumulators always add (scale-d
 * = 1); the sums are meaningless and only written out so that nothing is
 * optimised away.
 *
 * Specialisation (-D):
 *   RAMP_WB_N     8, 16, 32, 64, 128, 256: the instruction's N
 *   RAMP_WB_W     1 or 2: warpgroups per block (128 or 256 threads)
 *   RAMP_WB_ACCS  1 or 2: independent accumulator sets per warpgroup
 *                 (ACCS x N / 2 accumulator registers per thread, at most
 *                 128: ACCS = 2 stops at N = 128)
 *   RAMP_WB_PIPE  0 or 1: groups left pending at each wait (see above)
 *   RAMP_WB_RS    0: both operands from shared memory (SS, v2's form);
 *                 1: A from registers (RS: 4 x .b32 of e4m3 per thread,
 *                 fixed for the whole loop), B from shared memory
 *   RAMP_WB_PROMO 0: none (above); 1: FP8 block-scale promotion as v2's
 *                 wide consumers do it (moe_v2_wide.cuh v2w_slot_stage):
 *                 per set, its 4 wgmmas into a temporary T (the first
 *                 overwriting), commit, wait 0, acc[set] += T x scale;
 *                 2: the same pipelined, two temporaries alternating: the
 *                 next group (next set, or set 0 of the next iteration) is
 *                 issued before this one is waited for (wait 1) and
 *                 promoted, so a group is in flight during each promotion,
 *                 in unrolled runs of 4 iterations drained at their end
 *                 (SS, two sets, wait 0 only: PIPE = 0)
 *   RAMP_WB_TMA   0, or 1: one more warpgroup issues TMA bulk copies into a ring
 *                 of shared memory beside the tiles while the warpgroups
 *                 run, RAMP_WB_TMA_BPI bytes per iteration of warpgroup 0
 *                 (paced by its progress word, at most two iterations
 *                 ahead): the shared-memory writes kernel v2's producer
 *                 adds to its consumers' wgmma reads. The copies read the
 *                 first 64 KB of `out` (L2-resident: a float per thread of
 *                 at least 132 blocks of 256 threads, 135 KB; their bytes
 *                 are never used). SS, two sets, PIPE 0. RAMP_WB_TMA_IDLE = 1: the
 *                 same warpgroup and setmaxnreg, no copies (the block's
 *                 shape without its writes).
 *                 RAMP_WB_TMA = 2 (the .h forms): the same, but of each
 *                 iteration's pieces N / 64 (2 N rows x 128 B: the gate and
 *                 up weights of v2's wide stage at this N) come from `src`,
 *                 a buffer far larger than the L2 (src_pieces pieces of 16
 *                 KB), each block round and round its own contiguous
 *                 share (src_pieces / gridDim pieces), so they come from
 *                 HBM; the one further piece (the token rows) from
 *                 `out` as above. N >= 64. Every weight byte then feeds
 *                 2 x 128 FLOP (two warpgroups of 64 rows): the intensity of
 *                 v2's wide tile on a full row tile, DeepSeek-V3's balanced
 *                 4,096 pairs. RAMP_WB_HBM_PIECES = P (1..4) streams P
 *                 pieces an iteration instead (the same math over more or
 *                 fewer weight bytes: other intensities). The consumers
 *                 wait for each iteration's pieces (WB_GATE), so the rate
 *                 is what the tensor cores and HBM give together, under
 *                 one power budget.
 *
 * Kernel ramp_wgmma_bench(float *out, long long *stats, int iters, const
 * unsigned char *src, unsigned long long src_pieces) (src only read by the
 * .h forms; others may pass 0, 0): block
 * = 128 x W threads, dynamic shared memory ramp_wb_smem_bytes(W, ACCS, N);
 * out[block * threads + thread] = the sum of the thread's accumulators;
 * stats[2 x block] = clock64 cycles of the block's timed loop (thread 0,
 * from the barrier before the loop to the one after every warpgroup's last
 * wait), stats[2 x block + 1] = the SM it ran on (%smid), so the host can
 * tell the blocks per SM and turn cycles into MACs per SM per clock.
 */
#include "hopper.cuh"
#include "wgmma_bench_params.h"

#ifndef RAMP_WB_N
#error "wgmma_bench.cuh: define RAMP_WB_N (8, 16, 32, 64, 128 or 256)"
#endif
#if RAMP_WB_N != 8 && RAMP_WB_N != 16 && RAMP_WB_N != 32 && RAMP_WB_N != 64 && \
    RAMP_WB_N != 128 && RAMP_WB_N != 256
#error "RAMP_WB_N must be 8, 16, 32, 64, 128 or 256"
#endif
#ifndef RAMP_WB_W
#define RAMP_WB_W 1
#endif
#ifndef RAMP_WB_ACCS
#define RAMP_WB_ACCS 1
#endif
#ifndef RAMP_WB_PIPE
#define RAMP_WB_PIPE 0
#endif
#ifndef RAMP_WB_RS
#define RAMP_WB_RS 0
#endif
#if RAMP_WB_W != 1 && RAMP_WB_W != 2
#error "RAMP_WB_W must be 1 or 2"
#endif
#if RAMP_WB_ACCS != 1 && RAMP_WB_ACCS != 2
#error "RAMP_WB_ACCS must be 1 or 2"
#endif
#if RAMP_WB_PIPE != 0 && RAMP_WB_PIPE != 1
#error "RAMP_WB_PIPE must be 0 or 1"
#endif
#if RAMP_WB_RS != 0 && RAMP_WB_RS != 1
#error "RAMP_WB_RS must be 0 or 1"
#endif
#ifndef RAMP_WB_PROMO
#define RAMP_WB_PROMO 0
#endif
#if RAMP_WB_PROMO < 0 || RAMP_WB_PROMO > 2 || \
    (RAMP_WB_PROMO && (RAMP_WB_RS || RAMP_WB_PIPE || RAMP_WB_ACCS != 2))
#error "RAMP_WB_PROMO 1 or 2: SS, two sets, PIPE 0"
#endif
#ifndef RAMP_WB_TMA
#define RAMP_WB_TMA 0
#endif
#ifndef RAMP_WB_TMA_IDLE
#define RAMP_WB_TMA_IDLE 0
#endif
#if RAMP_WB_TMA && (RAMP_WB_RS || RAMP_WB_PIPE || RAMP_WB_ACCS != 2)
#error "RAMP_WB_TMA 1, 2: SS, two sets, PIPE 0"
#endif
#if RAMP_WB_TMA < 0 || RAMP_WB_TMA > 2 || (RAMP_WB_TMA == 2 && (RAMP_WB_N < 64 || RAMP_WB_TMA_IDLE))
#error "RAMP_WB_TMA 0, 1 or 2 (2: N >= 64, not idle)"
#endif
/* pieces of an iteration read from src (.h): 2 N rows x 128 B in 16 KB pieces */
#if RAMP_WB_TMA == 2
#ifdef RAMP_WB_HBM_PIECES /* another intensity: 2 x W x 64 x N x 128 FLOP over P x 16 KB */
#if RAMP_WB_HBM_PIECES < 1 || RAMP_WB_HBM_PIECES > 4
#error "RAMP_WB_HBM_PIECES must be in 1..4 (two iterations ahead in the ring of 10)"
#endif
#define WB_HBM_PER RAMP_WB_HBM_PIECES
#else
#define WB_HBM_PER (RAMP_WB_N / 64)
#endif
#define WB_SLOTS RAMP_WB_TMA_SLOTS_H
#else
#define WB_HBM_PER 0
#define WB_SLOTS RAMP_WB_TMA_SLOTS
#endif
#if RAMP_WB_ACCS * RAMP_WB_N / 2 > RAMP_WB_MAX_ACC_REGS
#error "RAMP_WB_ACCS x RAMP_WB_N / 2 accumulators exceed RAMP_WB_MAX_ACC_REGS"
#endif

#define WB_N RAMP_WB_N
#define WB_ACC (WB_N / 2) /* accumulator floats per thread per set */
/* RAMP_WB_TMA: the copies come from a warpgroup of their own (its warp 0,
 * lane 0), which with two consumer warpgroups gives its registers to them
 * by setmaxnreg as v2's producer does (168 at entry: 40 + 2 x 232) */
#define WB_THREADS ((RAMP_WB_W + (RAMP_WB_TMA ? 1 : 0)) * RAMP_WB_WG_THREADS)
#define WB_SETMAXNREG (RAMP_WB_TMA && RAMP_WB_W == 2)
/* each warpgroup's thread 0 after each iteration (or run of them): how far
 * it is, for the TMA warpgroup's pacing (by the slowest) */
#if RAMP_WB_TMA
#define WB_PROGRESS(done) \
    do { if ((threadIdx.x & (RAMP_WB_WG_THREADS - 1)) == 0) wb_prog[wg] = (done); } while (0)
#else
#define WB_PROGRESS(done) ((void)0)
#endif
/* .h: the consumers wait for each iteration's pieces to land before its
 * wgmmas (they never read them: the gate only makes the math wait for the
 * stream, as v2's consumers wait for their stage), so neither runs ahead of
 * the other. The producer stays at most WB_AHEAD iterations ahead of the
 * slowest warpgroup's posted progress, as many as the ring of WB_SLOTS
 * (10) pieces holds: at the forms' own pieces 3 at N = 128 (two
 * iterations, 64 KB of weights, in flight beside the one computed, as v2's
 * three-stage ring), 5 at N = 64; with RAMP_WB_HBM_PIECES 3 or 4, 2.
 * A slot is then never re-armed twice while a consumer waits on it, so the
 * parity wait is exact. (Call 2 of s39-run1 ran them with 8 slots and 2
 * iterations ahead: one in flight, too shallow for HBM.) */
#if RAMP_WB_TMA == 2
#define WB_AHEAD (WB_SLOTS / (WB_HBM_PER + 1))
#define WB_GATE(it0, n_it)                                                                    \
    do {                                                                                      \
        for (long long q_ = (long long)(it0) * (WB_HBM_PER + 1);                              \
             q_ < (long long)((it0) + (n_it)) * (WB_HBM_PER + 1); q_++)                       \
            hop_mbar_wait(hop_smem(&tbar[q_ % WB_SLOTS]), (unsigned)((q_ / WB_SLOTS) & 1));   \
    } while (0)
#else
#define WB_AHEAD 2
#define WB_GATE(it0, n_it) ((void)0)
#endif

/* ------------------------------------------- wgmma forms hopper.cuh lacks */

/* SS m64n256k32 e4m3: hopper.cuh's wrapper and operand lists (hopper.cuh
 * itself instantiates N up to 128) */
HOP_DEFINE_WGMMA(256)

/* RS operand numbers after the accumulators: A's four registers, descriptor
 * B, scale-d. */
#define WB_RA8 "{%4, %5, %6, %7}, %8"
#define WB_RSD8 "%9"
#define WB_RA16 "{%8, %9, %10, %11}, %12"
#define WB_RSD16 "%13"
#define WB_RA32 "{%16, %17, %18, %19}, %20"
#define WB_RSD32 "%21"
#define WB_RA64 "{%32, %33, %34, %35}, %36"
#define WB_RSD64 "%37"
#define WB_RA128 "{%64, %65, %66, %67}, %68"
#define WB_RSD128 "%69"
#define WB_RA256 "{%128, %129, %130, %131}, %132"
#define WB_RSD256 "%133"

/* RS m64nNk32 e4m3: D[64 x N] (+)= A[64 x 32] . B[N x 32]^T with A in
 * registers, four .b32 per thread (16 e4m3 of the warpgroup's 64 x 32
 * fragment; the PTX ISA's "Register Fragments" layout, which a benchmark
 * of constant operands need not follow) and B an SW128 tile. FP8 takes no
 * transpose immediates; "1, 1" are the A and B scales. A's registers must
 * not change while the wgmma is in flight (here they never change). */
#define WB_DEFINE_RS(N)                                                                      \
    static __device__ __forceinline__ void wb_rs_n##N(float *d, const unsigned *a,           \
                                                      unsigned long long db, int scale_d) {  \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " WB_RSD##N ", 0;\n"                  \
                     "wgmma.mma_async.sync.aligned.m64n" #N "k32.f32.e4m3.e4m3 "             \
                     "{" HOP_D##N "}, " WB_RA##N ", p, 1, 1;\n}\n"                            \
                     : HOP_C##N(d)                                                           \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(scale_d)     \
                     : "memory");                                                            \
    }
WB_DEFINE_RS(8)
WB_DEFINE_RS(16)
WB_DEFINE_RS(32)
WB_DEFINE_RS(64)
WB_DEFINE_RS(128)
WB_DEFINE_RS(256)

#if RAMP_WB_RS
#define WB_MMA HOP_CAT(wb_rs_n, RAMP_WB_N)
#else
#define WB_MMA HOP_WGMMA_E4M3(RAMP_WB_N) /* hopper.cuh's wrapper, v2's up to N = 64 */
#endif

/* ---------------------------------------------------------------- kernel */

/* Four e4m3 bytes from word index i: sign random, exponent 6 or 7 (0.5 ..
 * 1.875), mantissa random; never NaN (S.1111.111). */
static __device__ __forceinline__ unsigned wb_pattern(unsigned i) {
    unsigned x = i * 0x9E3779B1u;
    x ^= x >> 15;
    x *= 0x85EBCA77u;
    x ^= x >> 13;
    return (x & 0x8F8F8F8Fu) | 0x30303030u;
}

#if WB_SETMAXNREG
extern "C" __global__ void __launch_bounds__(WB_THREADS, 1)
#else
extern "C" __global__ void __launch_bounds__(WB_THREADS)
#endif
ramp_wgmma_bench(float *out, long long *stats, int iters, const unsigned char *src,
                 unsigned long long src_pieces) {
    extern __shared__ __align__(1024) unsigned char wb_dyn[];
    const unsigned raw = hop_smem(wb_dyn);
    unsigned char *sm =
        wb_dyn + (((raw + RAMP_WB_ALIGN - 1) & ~(unsigned)(RAMP_WB_ALIGN - 1)) - raw);
    const int tile_bytes = ramp_wb_tile_bytes(RAMP_WB_W, RAMP_WB_ACCS, WB_N);
    for (int i = threadIdx.x; i < tile_bytes / 4; i += WB_THREADS)
        ((unsigned *)sm)[i] = wb_pattern((unsigned)i + 7919u * blockIdx.x);
    hop_fence_proxy_async(); /* generic stores, read by wgmma (async proxy) */
#if RAMP_WB_TMA
    unsigned char *ring = sm + tile_bytes;
    unsigned long long *tbar =
        (unsigned long long *)(ring + WB_SLOTS * RAMP_WB_TMA_PIECE);
    volatile int *wb_prog = (volatile int *)(tbar + WB_SLOTS); /* one per warpgroup */
    if (threadIdx.x == RAMP_WB_W * RAMP_WB_WG_THREADS) {
        for (int i = 0; i < WB_SLOTS; i++) hop_mbar_init(hop_smem(&tbar[i]), 1);
        hop_mbar_init_fence();
        for (int i = 0; i < RAMP_WB_W; i++) wb_prog[i] = 0;
    }
#endif
    __syncthreads();

    const int wg = hop_warpgroup();
#if RAMP_WB_TMA
    if (wg == RAMP_WB_W) { /* the TMA warpgroup: one lane copies, paced by the consumers */
#if WB_SETMAXNREG
        HOP_SETMAXNREG_DEC(40);
#endif
        HOP_BAR_SYNC(1, WB_THREADS); /* the consumers' start */
        if (!RAMP_WB_TMA_IDLE && threadIdx.x == RAMP_WB_W * RAMP_WB_WG_THREADS) {
            const int per = WB_HBM_PER ? WB_HBM_PER + 1 : RAMP_WB_TMA_BPI / RAMP_WB_TMA_PIECE;
            long long k = 0; /* copies issued */
            /* each block streams its own contiguous share of src, round and
             * round (15.5 MB at 132 blocks, far more than its share of L2).
             * Not pieces interleaved over the blocks: there block b's k-th
             * piece, k x grid + b mod src_pieces, is block b + 4's (k -
             * 993)-th, and blocks that drift that far apart lock onto each
             * other's L2 fills (s39-run1 call 8: 5.56 TB/s "from HBM") */
            const unsigned long long share = src_pieces / gridDim.x;
            const unsigned long long h0 = blockIdx.x * share, h1 = h0 + share;
            unsigned long long hp = h0;
            for (int ahead = 0;;) {
                int done = wb_prog[0];
                for (int i = 1; i < RAMP_WB_W; i++) done = min(done, wb_prog[i]);
                if (done >= iters) break;
                if (ahead >= done + WB_AHEAD) continue;
                for (int c = 0; c < per; c++, k++) {
                    const int slot = (int)(k % WB_SLOTS);
                    const unsigned bar = hop_smem(&tbar[slot]);
                    if (k >= WB_SLOTS)
                        hop_mbar_wait(bar, (unsigned)((k / WB_SLOTS - 1) & 1));
                    hop_mbar_arrive_expect_tx(bar, RAMP_WB_TMA_PIECE);
                    unsigned long long from =
                        (unsigned long long)out + (k & 3) * RAMP_WB_TMA_PIECE;
                    if (c < WB_HBM_PER) {
                        from = (unsigned long long)src + hp * RAMP_WB_TMA_PIECE;
                        if (++hp == h1) hp = h0;
                    }
                    hop_bulk_load(hop_smem(ring + slot * RAMP_WB_TMA_PIECE), from,
                                  RAMP_WB_TMA_PIECE, bar);
                }
                ahead++;
            }
            for (long long j = k > WB_SLOTS ? k - WB_SLOTS : 0; j < k; j++)
                hop_mbar_wait(hop_smem(&tbar[j % WB_SLOTS]),
                              (unsigned)((j / WB_SLOTS) & 1));
        }
        HOP_BAR_SYNC(1, WB_THREADS); /* the consumers' end */
        return;
    }
#if WB_SETMAXNREG
    HOP_SETMAXNREG_INC(232); /* the consumers' state lives from here on */
#endif
#endif
    const unsigned base = hop_smem(sm);
    const unsigned sb = base + RAMP_WB_W * RAMP_WB_ACCS * RAMP_WB_A_TILE;
    /* descriptors of the K steps: +32 bytes of K = +2 in the address field */
    unsigned long long db[RAMP_WB_KSTEPS];
#pragma unroll
    for (int k4 = 0; k4 < RAMP_WB_KSTEPS; k4++)
        db[k4] = hop_desc_sw128(sb + k4 * HOP_WGMMA_K_BYTES);
#if RAMP_WB_RS
    unsigned a[RAMP_WB_ACCS][4];
#pragma unroll
    for (int s = 0; s < RAMP_WB_ACCS; s++)
#pragma unroll
        for (int j = 0; j < 4; j++)
            a[s][j] = wb_pattern(((blockIdx.x * WB_THREADS + threadIdx.x) * 2 + s) * 4 + j);
#else
    unsigned long long da[RAMP_WB_ACCS][RAMP_WB_KSTEPS];
#pragma unroll
    for (int s = 0; s < RAMP_WB_ACCS; s++)
#pragma unroll
        for (int k4 = 0; k4 < RAMP_WB_KSTEPS; k4++)
            da[s][k4] = hop_desc_sw128(base + (wg * RAMP_WB_ACCS + s) * RAMP_WB_A_TILE +
                                       k4 * HOP_WGMMA_K_BYTES);
#endif
    float acc[RAMP_WB_ACCS][WB_ACC];
#pragma unroll
    for (int s = 0; s < RAMP_WB_ACCS; s++)
#pragma unroll
        for (int i = 0; i < WB_ACC; i++) acc[s][i] = 0.f;

#if RAMP_WB_TMA
    HOP_BAR_SYNC(1, WB_THREADS); /* with the TMA warpgroup */
#else
    __syncthreads();
#endif
    const long long t0 = clock64();
#if RAMP_WB_PROMO
    /* per-row scales as a token's x scale times a block's weight scale:
     * two per thread (rows g and g + 8), never 0 or 1 */
    const float f0 = 1.0f + 1e-6f * threadIdx.x, f1 = 0.5f + 1e-6f * threadIdx.x;
#if RAMP_WB_PROMO == 1
    float T[WB_ACC];
#pragma unroll
    for (int i = 0; i < WB_ACC; i++) T[i] = 0.f;
    for (int it = 0; it < iters; it++) {
        WB_GATE(it, 1);
#pragma unroll
        for (int s = 0; s < RAMP_WB_ACCS; s++) {
            hop_wgmma_fence();
#pragma unroll
            for (int k4 = 0; k4 < RAMP_WB_KSTEPS; k4++) WB_MMA(T, da[s][k4], db[k4], k4 > 0);
            hop_wgmma_commit();
            HOP_WGMMA_WAIT(0);
            HOP_ACC_FENCE(T, WB_ACC);
#pragma unroll
            for (int i = 0; i < WB_ACC; i++) acc[s][i] += T[i] * ((i >> 1) & 1 ? f1 : f0);
        }
        WB_PROGRESS(it + 1);
    }
#else /* 2: T0 always holds set 0's group, T1 set 1's */
    float T0[WB_ACC], T1[WB_ACC];
#pragma unroll
    for (int i = 0; i < WB_ACC; i++) T0[i] = T1[i] = 0.f;
    /* groups of WB_PG iterations unrolled, the pipeline drained at each
     * group's end: ptxas cannot follow a group in flight around a loop's
     * back edge and would serialise every wgmma (C7514), as in v2's narrow
     * ping-pong (moe_v2.cuh, V2_PIPE_UP) */
#if RAMP_WB_TMA == 2
#define WB_PG 2 /* .h: the run's pieces are waited for at its start; 2 of 5 ahead */
#else
#define WB_PG 4
#endif
#define WB_ISSUE(j)                                                                           \
    do {                                                                                      \
        float *t_ = (j) & 1 ? T1 : T0;                                                        \
        HOP_ACC_FENCE(t_, WB_ACC);                                                            \
        hop_wgmma_fence();                                                                    \
        _Pragma("unroll") for (int k4 = 0; k4 < RAMP_WB_KSTEPS; k4++)                         \
            WB_MMA(t_, da[(j) & 1][k4], db[k4], k4 > 0);                                      \
        hop_wgmma_commit();                                                                   \
    } while (0)
#define WB_PROMOTE(j)                                                                         \
    do {                                                                                      \
        float *t_ = (j) & 1 ? T1 : T0;                                                        \
        HOP_ACC_FENCE(t_, WB_ACC);                                                            \
        _Pragma("unroll") for (int i = 0; i < WB_ACC; i++)                                    \
            acc[(j) & 1][i] += t_[i] * ((i >> 1) & 1 ? f1 : f0);                              \
    } while (0)
    int it = 0;
    for (; it + WB_PG <= iters; it += WB_PG) {
        WB_GATE(it, WB_PG);
        WB_ISSUE(0);
#pragma unroll
        for (int j = 1; j < 2 * WB_PG; j++) {
            WB_ISSUE(j);
            HOP_WGMMA_WAIT(1); /* group j - 1 done, group j in flight */
            WB_PROMOTE(j - 1);
        }
        HOP_WGMMA_WAIT(0);
        WB_PROMOTE(2 * WB_PG - 1);
        WB_PROGRESS(it + WB_PG);
    }
    for (; it < iters; it++) { /* the rest unpipelined: exactly `iters` iterations */
        WB_GATE(it, 1);
#pragma unroll
        for (int j = 0; j < 2; j++) {
            WB_ISSUE(j);
            HOP_WGMMA_WAIT(0);
            WB_PROMOTE(j);
        }
        WB_PROGRESS(it + 1);
    }
#undef WB_ISSUE
#undef WB_PROMOTE
#undef WB_PG
#endif
#else
    for (int it = 0; it < iters; it++) {
        WB_GATE(it, 1);
        hop_wgmma_fence();
#pragma unroll
        for (int s = 0; s < RAMP_WB_ACCS; s++)
#pragma unroll
            for (int k4 = 0; k4 < RAMP_WB_KSTEPS; k4++)
#if RAMP_WB_RS
                WB_MMA(acc[s], a[s], db[k4], 1);
#else
                WB_MMA(acc[s], da[s][k4], db[k4], 1);
#endif
        hop_wgmma_commit();
#if RAMP_WB_PIPE
        HOP_WGMMA_WAIT(1);
#else
        HOP_WGMMA_WAIT(0);
#pragma unroll
        for (int s = 0; s < RAMP_WB_ACCS; s++) HOP_ACC_FENCE(acc[s], WB_ACC);
#endif
        WB_PROGRESS(it + 1);
    }
#endif
    HOP_WGMMA_WAIT(0);
#pragma unroll
    for (int s = 0; s < RAMP_WB_ACCS; s++) HOP_ACC_FENCE(acc[s], WB_ACC);
#if RAMP_WB_TMA
    HOP_BAR_SYNC(1, WB_THREADS); /* with the TMA warpgroup */
#else
    __syncthreads();
#endif
    const long long t1 = clock64();

    float sum = 0.f;
#pragma unroll
    for (int s = 0; s < RAMP_WB_ACCS; s++)
#pragma unroll
        for (int i = 0; i < WB_ACC; i++) sum += acc[s][i];
    out[(size_t)blockIdx.x * WB_THREADS + threadIdx.x] = sum;
    if (threadIdx.x == 0) {
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;\n" : "=r"(smid));
        stats[2 * blockIdx.x] = t1 - t0;
        stats[2 * blockIdx.x + 1] = smid;
    }
}
