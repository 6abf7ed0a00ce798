/*
 * moe_poly.cuh - the polymorphic fused MoE kernel (paper Section 3.3,
 * Appendix A.8): one kernel holding a menu of v1 configurations, running the
 * one whose index the selection kernel wrote to device memory. So one CUDA
 * graph, captured once, serves every choice.
 *
 * The host (src/moe_poly.c) generates the translation unit:
 *
 *   #include "moe_poly.cuh"                 this prelude
 *   #define RAMP_ROWS 16 ... (entry 0)
 *   namespace ramp_poly_e0 {
 *   #include "moe_v1.cuh"                   entry 0's kernel as v1_body()
 *   }
 *   #undef RAMP_ROWS ...
 *   ... one namespace per entry ...
 *   RAMP_POLY_KERNEL_BEGIN
 *   RAMP_POLY_CASE(0, ramp_poly_e0, persistent_0)
 *   ...
 *   RAMP_POLY_KERNEL_END
 *
 * with the layer's geometry (RAMP_HIDDEN, RAMP_INTER, RAMP_TOPK,
 * RAMP_EXPERTS, RAMP_BF16, RAMP_XBF16) and RAMP_POLY_THREADS (the widest
 * entry's block) as -D options. Why a generated unit and not templates: the
 * v1 kernel is specialised by macros (C-style CUDA), and re-including it in a
 * namespace per entry keeps one source of truth for both builds.
 *
 * Launch: block = RAMP_POLY_THREADS, dynamic shared memory = the largest
 * entry's layout, grid = the largest grid any entry can need for the call's
 * token count (max over entries of its row-tile bound * Q), capped at a few
 * waves (src/moe_poly.h, RAMP_POLY_WAVES: surplus blocks are not free).
 * Each entry's body is a separate, non-inlined function: inlined into one
 * switch, the compiler allocates registers across all bodies and spills
 * where no entry alone would. Per launch:
 *   - threads past the chosen entry's block size return at once (the body's
 *     barriers are named and count only the entry's threads);
 *   - every block takes its first tile by its index and the next ones from
 *     a tile counter (pp.sched; reset by the last block to finish), so
 *     blocks that finish early take more, as the hardware's scheduler does
 *     for a plain grid. With half a wave to a wave of tiles (sms/2 < tiles
 *     <= sms), only the first block to start on each SM works, and it takes
 *     every tile from the counter (a per-SM counter in pp.sched says who is
 *     first): the hardware puts a few of a large grid's first 132 blocks
 *     two to an SM, and a tile sharing its SM ran up to 1.3x slower
 *     (bench_layer on the H200, Qwen3-30B EP8, about 90 tiles: the entry
 *     inside the polymorphic kernel 1.26-1.42x its time alone before,
 *     1.06-1.14x with it). It costs two dependent atomics before a block's
 *     first tile and gains nothing where nothing collides (about 45 tiles:
 *     1.05-1.19x either way, up to 4 us more on some entries), nor with
 *     more tiles than SMs, where every SM gets work anyway: hence the
 *     window;
 *   - a plain entry uses the whole grid; a persistent entry uses the first
 *     pp.persist_grid blocks (sms * blocks per SM of THIS kernel, whose
 *     registers and shared memory are the menu's maxima) and the rest exit;
 *   - a choice outside the menu runs nothing (the selection kernel never
 *     writes one; the layer checks its inputs instead);
 *   - with programmatic dependent launch (the layer's default) the blocks
 *     are scheduled while the selection kernel still runs and wait at
 *     griddepcontrol.wait for its outputs; without it that is a no-op.
 * The register budget is the kernel's: the most any entry needs.
 * A menu of Hopper kernel v2 entries has its own prelude, moe_poly_v2.cuh
 * (same contract; v1 and v2 entries are not mixed in one kernel).
 */
#ifndef RAMP_MOE_POLY_CUH
#define RAMP_MOE_POLY_CUH

#include "fp8.cuh"
#include "moe_v1_params.h"

#ifndef RAMP_POLY_THREADS
#error "moe_poly.cuh: define RAMP_POLY_THREADS (the widest entry's block)"
#endif

#define RAMP_V1_BODY_ONLY 1

/* Work tiles of this launch for an entry with q tiles per row tile. */
static __device__ __forceinline__ int ramp_poly_total(const ramp_poly_params &pp, int q) {
    int rtiles = *(const volatile int *)pp.moe.num_tiles;
    if (rtiles > pp.moe.max_tiles) rtiles = pp.moe.max_tiles;
    if (rtiles < 0) rtiles = 0;
    return rtiles * q;
}

/* This block's first tile from the counter, or -1 when it is not the first
 * block on its SM and there are no more tiles than SMs. Every thread of the
 * block calls it; thread 0 does the atomics (the per-SM one first: a tile
 * once claimed must be run). */
static __device__ __forceinline__ int ramp_poly_first_tile(const ramp_poly_params &pp, int total,
                                                           int *bcast) {
    if (threadIdx.x == 0) {
        int *s = (int *)pp.sched;
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        const int tier = smid < RAMP_POLY_MAX_SMS ? atomicAdd(s + 2 + smid, 1) : 0;
        *bcast = tier > 0 && total <= pp.sms ? -1 : atomicAdd(s, 1);
    }
    __syncthreads();
    return *bcast;
}

/* The last block to finish resets the tile scheduler's counters, so the
 * next launch (the next graph replay) starts from zero. Every block has
 * claimed its last tile before it counts itself finished. */
static __device__ __forceinline__ void ramp_poly_block_done(const ramp_poly_params &pp) {
    int *s = (int *)pp.sched;
    int last = 0;
    /* thread 0 claims, so its body's end is the block's last claim; the
     * fence orders that claim before the count */
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(s + 1, 1) == (int)gridDim.x - 1;
    }
    if (__syncthreads_or(last))
        for (int i = threadIdx.x; i < RAMP_POLY_SCHED_WORDS; i += blockDim.x) s[i] = 0;
}

#define RAMP_POLY_KERNEL_BEGIN                                                 \
    extern "C" __global__ void __launch_bounds__(RAMP_POLY_THREADS, 1)       \
    ramp_moe_poly(const ramp_poly_params pp) {                                \
        extern __shared__ __align__(128) unsigned char ramp_poly_smem[];      \
        __shared__ int ramp_poly_bcast;                                       \
        /* launched with programmatic dependent launch, the blocks start    \
         * while the selection kernel runs; wait for its outputs here */     \
        asm volatile("griddepcontrol.wait;\n" ::: "memory");                 \
        const int choice = *(const volatile int *)pp.choice;                  \
        const int pgrid = pp.persist_grid > 0 && pp.persist_grid < (int)gridDim.x \
                              ? pp.persist_grid : (int)gridDim.x;             \
        switch (choice) {

#define RAMP_POLY_CASE(index, ns, persistent)                                 \
        case index: {                                                         \
            const int grid = (persistent) ? pgrid : (int)gridDim.x;           \
            if ((int)blockIdx.x >= grid) break;                               \
            const int total = ramp_poly_total(pp, ns::v1_q);                  \
            /* half a wave to a wave of tiles: one block per SM, all tiles \
             * from the counter; else the first tile by block index, then   \
             * tiles grid, grid + 1, ... from the counter */                \
            const bool few = 2 * total > pp.sms && total <= pp.sms;           \
            const int first = few ? ramp_poly_first_tile(pp, total, &ramp_poly_bcast) \
                                  : (int)blockIdx.x;                          \
            if (first >= 0 && (int)threadIdx.x < ns::v1_threads)              \
                ns::v1_body(pp.moe, ramp_poly_smem, first, few ? 0 : grid,    \
                            (int *)pp.sched);                                 \
            break;                                                            \
        }

#define RAMP_POLY_KERNEL_END                                                  \
        default:                                                              \
            break;                                                            \
        }                                                                     \
        ramp_poly_block_done(pp);                                             \
    }

#endif /* RAMP_MOE_POLY_CUH */
