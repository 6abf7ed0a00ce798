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
 *     for a plain grid; blocks past the tile count exit at once;
 *   - a plain entry uses the whole grid; a persistent entry uses the first
 *     pp.persist_grid blocks (sms * blocks per SM of THIS kernel, whose
 *     registers and shared memory are the menu's maxima) and the rest exit;
 *   - a choice outside the menu runs nothing (the selection kernel never
 *     writes one; the layer checks its inputs instead);
 *   - with programmatic dependent launch (the layer's default) the blocks
 *     are scheduled while the selection kernel still runs and wait at
 *     griddepcontrol.wait for its outputs; without it that is a no-op.
 * The register budget is the kernel's: the most any entry needs.
 */
#ifndef RAMP_MOE_POLY_CUH
#define RAMP_MOE_POLY_CUH

#include "fp8.cuh"
#include "moe_v1_params.h"

#ifndef RAMP_POLY_THREADS
#error "moe_poly.cuh: define RAMP_POLY_THREADS (the widest entry's block)"
#endif

#define RAMP_V1_BODY_ONLY 1

/* The last block to finish resets the tile scheduler's counters, so the
 * next launch (the next graph replay) starts from zero. Every block has
 * claimed its last tile before it counts itself finished. */
static __device__ __forceinline__ void ramp_poly_block_done(const ramp_poly_params &pp) {
    if (threadIdx.x != 0) return;
    int *s = (int *)pp.sched;
    if (atomicAdd(s + 1, 1) == (int)gridDim.x - 1) {
        atomicExch(s, 0);
        atomicExch(s + 1, 0);
    }
}

#define RAMP_POLY_KERNEL_BEGIN                                                 \
    extern "C" __global__ void __launch_bounds__(RAMP_POLY_THREADS, 1)       \
    ramp_moe_poly(const ramp_poly_params pp) {                                \
        extern __shared__ __align__(128) unsigned char ramp_poly_smem[];      \
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
            if ((int)threadIdx.x < ns::v1_threads && (int)blockIdx.x < grid)  \
                ns::v1_body(pp.moe, ramp_poly_smem, blockIdx.x, grid,         \
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
