/*
 * moe_poly_v2.cuh - the polymorphic fused MoE kernel with Hopper (v2)
 * entries (paper Section 3.3, Appendix A.8; issue #5): one kernel holding a
 * menu of moe_v2.cuh configurations, running the one whose index the
 * selection kernel wrote to device memory. Same contract as moe_poly.cuh's
 * v1 kernel (ramp_poly_params, the choice in device memory, the selection's
 * grouping), plus the weights' tensor maps as a second parameter.
 *
 * The host (src/moe_poly.c, kernel v2) generates the translation unit:
 *
 *   #include "moe_poly_v2.cuh"              this prelude
 *   #define RAMP_ROWS 16 ... (entry 0: rows, width, stages)
 *   namespace ramp_poly_e0 {
 *   #include "moe_v2.cuh"                   entry 0 with RAMP_V2_BODY_ONLY
 *   }
 *   #undef RAMP_ROWS ...
 *   ... one namespace per entry ...
 *   RAMP_POLY_V2_BEGIN(ramp_moe_poly_v2, ;, ;)
 *   RAMP_POLY_V2_SETUP(0, ramp_poly_e0)     ... one per entry
 *   RAMP_POLY_V2_PRODUCERS
 *   RAMP_POLY_V2_PRODUCER(0, ramp_poly_e0)  ...
 *   RAMP_POLY_V2_CONSUMERS
 *   RAMP_POLY_V2_CONSUMER(0, ramp_poly_e0)  ...
 *   RAMP_POLY_V2_END
 *
 * with the layer's geometry (RAMP_HIDDEN, RAMP_INTER, RAMP_TOPK,
 * RAMP_EXPERTS) and v2's options (RAMP_MV2_PF, RAMP_MV2_PIPE) as -D options.
 *
 * Two-phase entries (ramp_config.two_phase, wide tiles): their namespace in
 * the first kernel is phase 1 (RAMP_MV2_PHASE 1, the up projection storing
 * the intermediate to prm.ws); a second kernel, ramp_moe_poly_v2_down, of
 * the same shape holds their phase 2 (RAMP_MV2_PHASE 2, RAMP_MV2_P2K) in
 * namespaces ramp_poly_d<i>, with case i for each. The host launches it
 * after the first when the menu has such an entry, with programmatic
 * dependent launch when the first had it. Then the first kernel lets it
 * start at once (griddepcontrol.launch_dependents right after its own
 * wait), so that the second kernel's launch may overlap the first; the
 * second launch still costs about 2.5 us on DeepSeek-V3 and 10 us on
 * Mixtral's small loads when another entry is chosen, with or without the
 * trigger (moe_v2.md, session 7). Every block of the second kernel waits
 * (griddepcontrol.wait) before it reads the intermediate, and a block with
 * nothing to run before it returns: its completion then implies the first
 * kernel's, which is what the work after the layer on the stream relies
 * on. Since session 25 it waits after its first weights are requested,
 * not at its top (RAMP_POLY_V2_TOP_WAIT, below).
 *
 * Split (ramp_poly_desc.split, session 22; an experiment, 0 by default): the
 * same macros make a chain of up to four kernels, each holding a part of
 * the menu (src/moe_poly.c, chain_of): 1, the two-phase entries' phase 1
 * (ramp_moe_poly_v2_up), then the fused entries and phase 2 (_down); 2,
 * fused entries, phase 1, phase 2; 3, by cluster size, what runs on one CTA
 * apart from split-K and multicast entries (_v2, _v2_c2, _down,
 * _down_c2). Each kernel but the last triggers the next right after its
 * wait; the first does the L2 prefetch and the copy of x. A kernel whose
 * part does not hold the choice returns after reading it. Measured in
 * moe_v2.md, session 22: no split was faster in the layer. 5 (session 23):
 * one kernel per entry, ramp_moe_poly_v2_e<i> and for a two-phase entry
 * ramp_moe_poly_v2_down_e<i>, each with the entry's own shared memory and
 * grid; in a captured graph the layer puts them in the bodies of a switch
 * node that the selection kernel sets (select.cuh, RAMP_SELECT_SWITCH), so
 * only the chosen entry's run (moe_v2.md, session 23: the node costs 4-9 us,
 * more than per-entry kernels win).
 *
 * The kernel, per block (384 threads: every v2 entry's block):
 *   1. griddepcontrol.wait (programmatic dependent launch: the blocks start
 *      while the selection kernel runs), then the choice and num_tiles (the
 *      phase-2 kernel: no wait here, its producers wait inside the roles);
 *   2. switch (choice): the entry's tile count (row tiles x slices); a block
 *      past it, or a choice outside the menu, returns; else its first tile's
 *      expert and slots are loaded and thread 0 initialises the entry's
 *      mbarrier ring (its stages, its layout);
 *   3. __syncthreads, then the role split ABOVE the switch: warpgroup 0
 *      setmaxnreg.dec and switch (choice) to the entry's producer, the
 *      others setmaxnreg.inc and switch to its consumer. setmaxnreg has to
 *      stay in this uniform top-level branch (ptxas ignores it elsewhere,
 *      warning C7508). The roles are inlined into the switches (moe_v2.cuh's
 *      V2_ROLE): as separate functions, v1's cure for shared register
 *      allocation, ptxas 13.0 serialised every wgmma ("pipeline crossing
 *      function boundary", C7510); inlined, the six-entry menus need 168
 *      registers, as each entry alone, with no spills. RAMP_V2_ROLE_CALLS=1
 *      brings the functions back, for experiments.
 * Parameters: ramp_poly_params, the maps, and for ".tx" entries the copy of x
 * in tile order (xt, xt_rows rows; 0 and 0 without one; RAMP_POLY_TX_MASK
 * below). Launch: block 384, dynamic shared memory = the largest entry's layout
 * (ramp_moe_v2_layout_of(...).total, its 1024 B of slack included), grid =
 * min(the most tiles any entry can have for the call's token count, SMs):
 * blocks stride over the tiles (tt = blockIdx.x + i * gridDim.x), v2's own
 * scheme, so nothing is left in device memory between launches (pp.sched
 * and pp.persist_grid are not used; a graph replays as it was captured).
 * The maps (W13 [E * 2h][d] and W2 [E * d][h], 128 B x 128-row boxes,
 * 128-byte swizzle) are built once per layer on the host.
 */
#ifndef RAMP_MOE_POLY_V2_CUH
#define RAMP_MOE_POLY_V2_CUH

#include "common.cuh" /* ramp_silu, once for every entry */
#include "fp8.cuh"
#include "hopper.cuh"
#include "moe_v1_params.h"
#include "moe_v2_params.h" /* ramp_moe_v2_maps, once for every entry */
#include "timeline.cuh"

/* this kernel's index in timeline.cuh's stamps: the generator sets it
 * before each kernel of the chain */
#ifndef RAMP_TL_K
#define RAMP_TL_K 1
#endif

#define RAMP_V2_BODY_ONLY 1

/* RAMP_POLY_L2PF_BYTES > 0 (ramp_layer_desc.l2_prefetch_mb; moe_v2.md,
 * sessions 11 and 24): before griddepcontrol.wait, while the selection kernel
 * still runs, the blocks ask L2 for up to that many bytes of the local
 * experts' weights. The weights do not depend on the routing, so this starts
 * the weight stream before the choice is known; it is a hint (no result
 * depends on it). When W13 fits, all of it and then W2's first bytes. When
 * it does not, a strip: the same first bytes of every W13 row (a multiple
 * of 128, the K box), because every up tile, whatever its width, starts at
 * K 0 of its rows: each block finds its first stages in L2. W13's first
 * bytes (session 11's form) would help only the few blocks whose rows they
 * hold, and so not the kernel's end. A load that leaves experts idle pays
 * for their bytes. */
#ifndef RAMP_POLY_L2PF_BYTES
#define RAMP_POLY_L2PF_BYTES 0
#endif
#if RAMP_POLY_L2PF_BYTES > 0
static __device__ __forceinline__ void ramp_poly_l2pf_range(const void *a, unsigned bytes) {
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(a), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void ramp_poly_l2pf(const ramp_moe_params &p) {
#if defined(RAMP_MV2_BF16) && RAMP_MV2_BF16
    const unsigned long long eb = 2;
#else
    const unsigned long long eb = 1;
#endif
    const unsigned long long row = (unsigned long long)RAMP_HIDDEN * eb; /* a W13 row's bytes */
    const unsigned long long rows13 = 2ull * RAMP_EXPERTS * RAMP_INTER;
    const unsigned long long w13 = rows13 * row, w2 = w13 / 2;
    const unsigned long long cap = RAMP_POLY_L2PF_BYTES, chunk = 65536;
    const unsigned long long lane = blockIdx.x * 32ull + threadIdx.x, lanes = gridDim.x * 32ull;
    if (threadIdx.x >= 32) return;
    if (w13 > cap) {
        const unsigned long long strip = cap / rows13 / 128 * 128;
        /* sizes are multiples of 16 bytes, as the instruction needs (d % 256 == 0) */
        for (unsigned long long r = lane; strip && r < rows13; r += lanes)
            for (unsigned long long o = 0; o < strip; o += chunk)
                ramp_poly_l2pf_range((const unsigned char *)p.w13 + r * row + o,
                                     (unsigned)(strip - o < chunk ? strip - o : chunk));
        return;
    }
    const unsigned long long n2 = w2 < cap - w13 ? w2 : cap - w13;
    const unsigned long long c13 = (w13 + chunk - 1) / chunk, c2 = (n2 + chunk - 1) / chunk;
    for (unsigned long long c = lane; c < c13 + c2; c += lanes) {
        const int in13 = c < c13;
        const unsigned long long off = (in13 ? c : c - c13) * chunk, n = in13 ? w13 : n2;
        ramp_poly_l2pf_range((const unsigned char *)(in13 ? p.w13 : p.w2) + off,
                             (unsigned)(n - off < chunk ? n - off : chunk));
    }
}
#define RAMP_POLY_V2_L2PF(p) ramp_poly_l2pf(p)
#else
#define RAMP_POLY_V2_L2PF(p) ((void)0)
#endif

/* RAMP_POLY_TX_MASK (src/moe_poly.c defines it for a menu with ".tx"
 * entries; session 18): bit i for entry i, whose up stages load their
 * 128 token rows as one TMA box of a copy of x in tile order (moe_v2.cuh's
 * RAMP_MV2_TMA_X 1). When the choice is one of them, every block of the
 * first kernel, right after its griddepcontrol.wait, copies a share of the
 * rows (a warp per row, striding over the grid; row 128 r + n is the token
 * of row tile r's slot n of RAMP_POLY_TX_SLOTS, zeros for padding) into xt
 * (xt_rows rows of RAMP_POLY_TX_ROW_BYTES), and the grid then meets at a
 * barrier in
 * pp.sched's words 0 and 1 (the v1 tile scheduler's, which v2 does not use
 * otherwise; the last block out sets both back to zero, so the contract
 * "left zero" holds) before any block's TMA reads the copy. Every block is
 * resident (grid <= one wave, one block per SM; the second kernel's blocks
 * launch only after all of the first's have triggered), so the barrier
 * cannot wait on a block that has not started. Another choice costs one
 * read of it: the layer's graph has no extra kernel (a copy kernel of its
 * own cost 3-6 us on every load where another entry was chosen, s18-run2). */
#ifndef RAMP_POLY_TX_MASK
#define RAMP_POLY_TX_MASK 0u
#endif
#if RAMP_POLY_TX_MASK
static __device__ __forceinline__ void ramp_poly_xcopy(const ramp_poly_params &pp, int c,
                                                       int rows, unsigned long long xt,
                                                       int xt_rows) {
    if (c < 0 || c > 31 || !((RAMP_POLY_TX_MASK >> c) & 1u)) return;
    rows = rows < 0 ? 0 : rows > xt_rows / 128 ? xt_rows / 128 : rows;
    rows *= 128;
    const int warps = blockDim.x >> 5, lane = threadIdx.x & 31;
    for (int row = blockIdx.x * warps + (threadIdx.x >> 5); row < rows;
         row += gridDim.x * warps) {
        const int r = row >> 7, n = row & 127; /* RAMP_POLY_TX_SLOTS slots a row tile */
        int sl = n < RAMP_POLY_TX_SLOTS
                     ? ((const int *)pp.moe.sorted_ids)[(size_t)r * RAMP_POLY_TX_SLOTS + n]
                     : -1;
        if (sl >= pp.moe.num_tokens * RAMP_TOPK) sl = -1;
        const uint4 *src = (const uint4 *)((const unsigned char *)pp.moe.x +
                                           (size_t)(sl < 0 ? 0 : sl / RAMP_TOPK) *
                                               RAMP_POLY_TX_ROW_BYTES);
        uint4 *dst = (uint4 *)((unsigned char *)xt + (size_t)row * RAMP_POLY_TX_ROW_BYTES);
#pragma unroll 4
        for (int i = lane; i < RAMP_POLY_TX_ROW_BYTES / 16; i += 32)
            dst[i] = sl < 0 ? make_uint4(0u, 0u, 0u, 0u) : src[i];
    }
    /* the copy, written by the generic proxy, is read by other blocks' TMA
     * (the async proxy): each writer fences the proxies; thread 0 releases
     * the block's writes at GPU scope, arrives, and acquires everyone's */
    asm volatile("fence.proxy.async.global;\n" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned *w = (unsigned *)pp.sched;
        const unsigned n = gridDim.x;
        __threadfence();
        atomicAdd(&w[0], 1u);
        for (;;) {
            unsigned seen;
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(seen) : "l"(w) : "memory");
            if (seen >= n) break;
            __nanosleep(64);
        }
        if (atomicAdd(&w[1], 1u) == n - 1) { /* the last out: every block saw n */
            atomicExch(&w[0], 0u);
            atomicExch(&w[1], 0u);
        }
        __threadfence();
    }
    __syncthreads();
    asm volatile("fence.proxy.async.global;\n" ::: "memory");
}
#define RAMP_POLY_V2_XCOPY() ramp_poly_xcopy(pp, choice, ramp_poly_tiles, ramp_poly_xt, ramp_poly_xt_rows)
#else
#define RAMP_POLY_V2_XCOPY() ((void)0)
#endif

/* before_wait / after_wait: statements run right before / after
 * griddepcontrol.wait (the first kernel's L2 prefetch, above, and its
 * trigger of the second, file comment). RAMP_POLY_V2_TOP_WAIT 0 (set by the
 * generator before the phase-2 kernel, with RAMP_MV2_LATE_WAIT for its
 * entries; session 25): no wait at the top, the entries' producers wait
 * after their first weights are requested (moe_v2.cuh), and a block that
 * leaves early waits first, so that the kernel's completion still implies
 * phase 1's. Reading the choice and the selection's outputs before the wait
 * is safe: the selection completed before phase 1 passed its own wait, and
 * phase 1 let this kernel start only after that. */
#ifndef RAMP_POLY_V2_TOP_WAIT
#define RAMP_POLY_V2_TOP_WAIT 1
#endif
#define RAMP_POLY_V2_BEGIN(kernel_name, before_wait, after_wait)              \
    extern "C" __global__ void __launch_bounds__(RAMP_MV2_THREADS, 1)        \
    kernel_name(const __grid_constant__ ramp_poly_params pp,                 \
                     const __grid_constant__ ramp_moe_v2_maps maps,          \
                     const unsigned long long ramp_poly_xt,                   \
                     const int ramp_poly_xt_rows) {                           \
        extern __shared__ __align__(1024) unsigned char ramp_poly_dyn[];     \
        const unsigned ramp_poly_a = hop_smem(ramp_poly_dyn);                \
        unsigned char *sm = ramp_poly_dyn +                                  \
            (((ramp_poly_a + RAMP_MV2_ALIGN - 1) & ~(unsigned)(RAMP_MV2_ALIGN - 1)) - \
             ramp_poly_a);                                                   \
        /* launched with programmatic dependent launch, the blocks start    \
         * while the previous kernel runs; wait for its outputs here */      \
        RAMP_TL(0, RAMP_TL_K, 0);                                             \
        before_wait;                                                          \
        if (RAMP_POLY_V2_TOP_WAIT)                                            \
            asm volatile("griddepcontrol.wait;\n" ::: "memory");             \
        RAMP_TL(0, RAMP_TL_K, 1);                                             \
        /* read once, the x copy's too: its own reads cost the first        \
         * weights an L2 round trip (session 46's timeline) */               \
        const int choice = *(const volatile int *)pp.choice;                 \
        const int ramp_poly_tiles = *(const volatile int *)pp.moe.num_tiles; \
        RAMP_TL_AFTER(0, RAMP_TL_K, 8, choice + ramp_poly_tiles);             \
        after_wait;                                                           \
        int rtiles = ramp_poly_tiles;                                         \
        if (rtiles > pp.moe.max_tiles) rtiles = pp.moe.max_tiles;            \
        if (rtiles < 0) rtiles = 0;                                          \
        int total = 0, ks = 1, cl = 1; /* its tiles; CTAs per tile, cluster */ \
        switch (choice) {

/* The entry's tiles; for a block that has one, its first tile's expert and
 * slots (in bounds: blockIdx.x / ks < total <= max_tiles * slices) and the
 * entry's barriers. A split-K entry (ks = cl = 2) runs each tile on the two
 * CTAs of a cluster, a multicast entry (.mc, ks = cl = 2) each pair of row
 * tiles: a menu holding one is launched with cluster dimension 2 (both
 * kernels, when the entry is two-phase), which entries with cl = 1 ignore.
 * A ".gg" entry runs a tile on ks = G blocks that are no cluster (cl = 1). */
#define RAMP_POLY_V2_SETUP(index, ns)                                         \
        case index:                                                           \
            total = ns::v2_total(rtiles);                                     \
            ks = ns::v2_ks;                                                   \
            cl = ns::v2_cl;                                                   \
            if ((int)blockIdx.x / ks < total) {                               \
                ns::v2_first_tile(pp.moe, sm, rtiles);                        \
                if (threadIdx.x == 0) {                                       \
                    ns::v2_init(sm, maps, total, rtiles);                     \
                    ns::v2_early_head(pp.moe, maps, sm, total);               \
                }                                                             \
            }                                                                 \
            break;

#define RAMP_POLY_V2_PRODUCERS                                                \
        default:                                                              \
            break;                                                            \
        }                                                                     \
        RAMP_TL(0, RAMP_TL_K, 9); /* (after thread 0 stored the expert) */   \
        /* uniform per block, and per cluster for a split-K entry */        \
        if ((int)blockIdx.x / ks >= total) {                                  \
            if (!RAMP_POLY_V2_TOP_WAIT)                                       \
                asm volatile("griddepcontrol.wait;\n" ::: "memory");         \
            RAMP_TL(0, RAMP_TL_K, 5);                                         \
            return;                                                           \
        }                                                                     \
        if (cl > 1)                                                           \
            hop_cluster_sync(); /* its partner's barriers initialised */     \
        else                                                                  \
            __syncthreads();                                                  \
        RAMP_TL(0, RAMP_TL_K, 10);                                            \
        const int wg = hop_warpgroup();                                       \
        if (wg == 0) {                                                        \
            HOP_SETMAXNREG_DEC(RAMP_MV2_PRODUCER_REGS);                       \
            RAMP_TL(0, RAMP_TL_K, 11);                                        \
            switch (choice) {

#define RAMP_POLY_V2_PRODUCER(index, ns)                                      \
            case index:                                                       \
                /* (RAMP_MV2_DYN's counters: sched[2..5]; [0..1] the x copy's) */ \
                ns::v2_producer_role(pp.moe, maps, sm, (unsigned *)pp.sched + 2); \
                break;

#define RAMP_POLY_V2_CONSUMERS                                                \
            default:                                                          \
                break;                                                        \
            }                                                                 \
            RAMP_TL(0, RAMP_TL_K, 2);                                         \
        } else {                                                              \
            HOP_SETMAXNREG_INC(RAMP_MV2_CONSUMER_REGS);                       \
            switch (choice) {

#define RAMP_POLY_V2_CONSUMER(index, ns)                                      \
            case index:                                                       \
                ns::v2_consumer_role(pp.moe, sm, wg);                         \
                break;

#define RAMP_POLY_V2_END                                                      \
            default:                                                          \
                break;                                                        \
            }                                                                 \
            RAMP_TL(128, RAMP_TL_K, 3);                                       \
            RAMP_TL(256, RAMP_TL_K, 4);                                       \
        }                                                                     \
    }

#endif /* RAMP_MOE_POLY_V2_CUH */
