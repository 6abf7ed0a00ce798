/*
 * moe_v2_params.h - the Hopper fused MoE kernel's (v2, moe_v2.cuh) launch
 * shape and shared-memory layout, shared by the host (src/moe_v2.c, C11)
 * and the device (NVRTC), so that both size the launch from one formula.
 *
 * v2 takes the v1 parameter block (ramp_moe_params, moe_v1_params.h: the
 * same input contract) unchanged as its first parameter and the two weight
 * tensor maps as a second, `const __grid_constant__` one (ramp_moe_v2_maps:
 * hop_tensormap on the device, CUtensorMap in src/moe_v2.h on the host; two
 * 128-byte maps, and two that only RAMP_MV2_TMA_X programs read, the token
 * rows and the workspace's intermediate: 512 bytes). Growing ramp_moe_params cost v1 registers, so
 * the maps stay out of it.
 *
 * Block: 384 threads = producer warpgroup (TMA + cp.async) and two consumer
 * warpgroups (wgmma). A ring of `stages` slots, each:
 *   a    32 KB: four 64-row x 128-byte SW128 tiles of weights. Up stage:
 *        gate rows [128][128 B] then up rows [128][128 B] of one 128-column
 *        pass (consumer c owns rows 64c..64c+63 of each). Down stage: 256
 *        rows of W2 (consumer c owns rows 128c..128c+127, two m-tiles).
 *   b    npad x 128 B: the tile's token rows of this K block (up stages only)
 *   xs   f32 [npad]: the tokens' x_scale of this K block (up stages)
 *   wsc  f32 [2]: weight block scales (up: gate, up; down: consumer 0, 1)
 *   (the slot padded to 1024 B, the SW128 atom)
 * Per block:
 *   inter   the FP8 intermediate: width/128 SW128 tiles of npad x 128 B
 *   iscale  f32 [npad][width/128] its per-token group scales
 *   amax    f32 [npad][8 consumer warps] scratch for the group maxima (none
 *           in a wide tile: a thread holds whole token rows there)
 *   tok,rw  i32 / f32 [npad] the tile's slot ids (-1: padding), router weights
 *   bars    u64 full[stages], empty[stages]
 *   head    i32 [4]: the block's tile count and its first tile's expert,
 *           parked there at the start (moe_v2.cuh, v2_first_tile, v2_init)
 *   xbuf    split-K over a cluster of 2 only (ramp_config.splitk = 2,
 *           RAMP_MV2_KSPLIT): f32 [npad / 4][256 consumer threads][4], the
 *           partner CTA's partial gate and up sums of one pass, which it
 *           writes here through distributed shared memory
 *   xbars   u64 xfull, xempty: the exchange's two mbarriers (split-K, and
 *           the cluster gather's gfull, gempty)
 * With the cluster gather (cgather C > 1, RAMP_MV2_CGATHER) inter and iscale
 * hold C blocks, block k the intermediate of the cluster's CTA of rank k
 * (its own written in place, the others copied in by their CTAs).
 * plus 1024 B of slack: the kernel rounds the dynamic base up to 1024.
 */
#ifndef RAMP_MOE_V2_PARAMS_H
#define RAMP_MOE_V2_PARAMS_H

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define RAMP_MV2_INLINE static __host__ __device__ __forceinline__
#else
#define RAMP_MV2_INLINE static inline
#endif

#define RAMP_MV2_THREADS 384       /* producer + 2 consumer warpgroups */
#define RAMP_MV2_REGS 168          /* registers at entry: 65536 / 384, rounded to 8 */
#define RAMP_MV2_PRODUCER_REGS 56
#define RAMP_MV2_CONSUMER_REGS 224
#define RAMP_MV2_KB 128            /* bytes (= e4m3 elements) of K per stage */
#define RAMP_MV2_A_BYTES 32768     /* weights per stage: 256 rows x 128 B */
#define RAMP_MV2_BOX_ROWS 128      /* rows per TMA box (two per stage) */
#define RAMP_MV2_CHUNK 256         /* rows of d per down chunk */
#define RAMP_MV2_ALIGN 1024        /* SW128 tiles start on 1024-byte atoms */
#define RAMP_MV2_PF_DEFAULT 0      /* L2 prefetch distance in stages: off, it cost 10-40% (moe_v2.md) */
#define RAMP_MV2_PIPE_DEFAULT 0    /* consumer ping-pong: off, 3% slower on Qwen3 at 4 stages (moe_v2.md) */
#define RAMP_MV2_XT_THREADS 256    /* moe_v2_xtile.cuh's block: a warp per row */

typedef struct {
    int npad, stages, passes;
    long long slot_a, slot_b, slot_xs, slot_wsc, slot_bytes;
    long long inter, iscale, amax, tok, rw, bars, head, total;
    long long xbuf, xbars; /* split-K's exchange (ramp_moe_v2_layout_ks) */
    long long ostage; /* split phase 2 only: output staging (ramp_moe_v2_layout_down) */
} ramp_moe_v2_layout;

RAMP_MV2_INLINE long long ramp_mv2_align(long long x, long long a) { return (x + a - 1) / a * a; }

/* Output staging rows (the wide tiles' phase 2, RAMP_MV2_BULKRED): 128 f32
 * and 16 B of padding, so that rows fall in distinct banks. */
#define RAMP_MV2_OSTAGE_STRIDE 528

/* rows b (1..64: npad = ceil8(b); 65..128: a wide tile, npad = 128, no amax
 * scratch), width w (128, 256, 512), stages, bf16 (1: BF16 weights, tokens
 * and intermediate, rows 1..64 only: no scales, so no xs, wsc, iscale or
 * amax; the intermediate holds 2 bytes per column), ksplit (1, or 2: the
 * up projection's K split over a cluster of two CTAs, rows 1..64, which
 * adds the exchange buffer and its barriers), bulkred (1: the output
 * staging of RAMP_MV2_BULKRED, 4 x npad rows of RAMP_MV2_OSTAGE_STRIDE),
 * cgather (1, or C: the cluster gather's C blocks of inter and iscale and
 * its two barriers). total is the dynamic shared memory of a launch, slack
 * included. */
RAMP_MV2_INLINE ramp_moe_v2_layout ramp_moe_v2_layout_cg(int rows, int width, int stages,
                                                         int bf16, int ksplit, int bulkred,
                                                         int cgather) {
    ramp_moe_v2_layout l;
    const int cg = cgather > 1 ? cgather : 1;
    const int fp8 = !bf16;
    l.npad = rows > 64 ? 128 : (rows + 7) / 8 * 8; /* > 64: a wide tile, moe_v2_wide.cuh */
    l.stages = stages;
    l.passes = width / 128;
    long long o = 0;
    l.slot_a = o;   o += RAMP_MV2_A_BYTES;
    l.slot_b = o;   o += (long long)l.npad * RAMP_MV2_KB;
    l.slot_xs = o;  o += fp8 ? 4LL * l.npad : 0;
    l.slot_wsc = o; o += fp8 ? 16 : 0;
    l.slot_bytes = ramp_mv2_align(o, RAMP_MV2_ALIGN);
    o = (long long)stages * l.slot_bytes;
    /* npad * 128 per 128-byte K tile: 1024-aligned */
    l.inter = o;    o += (long long)cg * l.npad * width * (fp8 ? 1 : 2);
    l.iscale = o;   o = ramp_mv2_align(o + (fp8 ? 4LL * cg * l.npad * (width / 128) : 0), 16);
    l.amax = o;     o = ramp_mv2_align(o + (rows > 64 || !fp8 ? 0 : 4LL * 8 * l.npad), 16);
    l.tok = o;      o = ramp_mv2_align(o + 4LL * l.npad, 16);
    l.rw = o;       o = ramp_mv2_align(o + 4LL * l.npad, 16);
    l.bars = o;     o = ramp_mv2_align(o + 16LL * stages, 16);
    l.head = o;     o += 16;
    l.xbuf = o;     o += ksplit > 1 ? 4LL * l.npad * 256 : 0; /* npad f32 per consumer thread */
    l.xbars = o;    o += ksplit > 1 || cg > 1 ? 16 : 0;
    /* bulkred (RAMP_MV2_BULKRED, narrow tiles): two buffers x two consumers
     * of npad token rows of a consumer's 128 output rows, staged for the TMA
     * unit's bulk reductions (two, so that a chunk's staging does not wait
     * for the previous chunk's reductions to have read theirs) */
    l.ostage = bulkred && rows <= 64 ? o : 0;
    o += bulkred && rows <= 64 ? 4LL * l.npad * RAMP_MV2_OSTAGE_STRIDE : 0;
    l.total = o + RAMP_MV2_ALIGN;
    return l;
}
RAMP_MV2_INLINE ramp_moe_v2_layout ramp_moe_v2_layout_opt(int rows, int width, int stages,
                                                          int bf16, int ksplit, int bulkred) {
    return ramp_moe_v2_layout_cg(rows, width, stages, bf16, ksplit, bulkred, 1);
}
RAMP_MV2_INLINE ramp_moe_v2_layout ramp_moe_v2_layout_ks(int rows, int width, int stages,
                                                         int bf16, int ksplit) {
    return ramp_moe_v2_layout_opt(rows, width, stages, bf16, ksplit, 0);
}
RAMP_MV2_INLINE ramp_moe_v2_layout ramp_moe_v2_layout_bf(int rows, int width, int stages,
                                                         int bf16) {
    return ramp_moe_v2_layout_ks(rows, width, stages, bf16, 1);
}
/* The FP8 layout (every kernel but v2's BF16 one). */
RAMP_MV2_INLINE ramp_moe_v2_layout ramp_moe_v2_layout_of(int rows, int width, int stages) {
    return ramp_moe_v2_layout_bf(rows, width, stages, 0);
}

/* Split phase 2 (the down projection, RAMP_MV2_PHASE 2) of a wide tile: the
 * ring of ramp_moe_v2_layout_of without the intermediate (it is read from
 * the workspace) and with at most RAMP_MV2_DOWN_STAGES stages, plus the
 * output staging: per consumer 64 token rows of 128 f32 with a row stride
 * of RAMP_MV2_OSTAGE_STRIDE bytes (16 B of padding: the rows' float4
 * stores fall in distinct banks), from which one bulk reduction per row
 * adds into out. */
#define RAMP_MV2_DOWN_STAGES 3
RAMP_MV2_INLINE int ramp_moe_v2_down_stages(int stages) {
    return stages < RAMP_MV2_DOWN_STAGES ? stages : RAMP_MV2_DOWN_STAGES;
}
RAMP_MV2_INLINE ramp_moe_v2_layout ramp_moe_v2_layout_down_bf(int rows, int stages, int bf16) {
    /* a narrow tile (session 14): the fused layout of width 128, all its
     * stages (the memory-bound loads want the deep ring), the threads' own
     * reductions (no staging); its intermediate, iscale and amax go unused */
    if (rows <= 64) return ramp_moe_v2_layout_bf(rows, 128, stages, bf16);
    ramp_moe_v2_layout l =
        ramp_moe_v2_layout_bf(rows, 128, ramp_moe_v2_down_stages(stages), bf16);
    long long o = (long long)l.stages * l.slot_bytes; /* the ring as phase 1's */
    l.inter = l.iscale = l.amax = o;                  /* none */
    l.tok = o;      o = ramp_mv2_align(o + 4LL * l.npad, 16);
    l.rw = o;       o = ramp_mv2_align(o + 4LL * l.npad, 16);
    l.bars = o;     o = ramp_mv2_align(o + 16LL * l.stages, 16);
    l.head = o;     o += 16;
    l.xbuf = l.xbars = o; /* none */
    l.ostage = o;   o += 2LL * 64 * RAMP_MV2_OSTAGE_STRIDE;
    l.total = o + RAMP_MV2_ALIGN;
    return l;
}
/* The FP8 layout of phase 2. */
RAMP_MV2_INLINE ramp_moe_v2_layout ramp_moe_v2_layout_down(int rows, int stages) {
    return ramp_moe_v2_layout_down_bf(rows, stages, 0);
}

/* The order of a launch's work tiles: rtiles row tiles of tpr work tiles
 * each (slices, or phase 2's chunks x K parts), numbered tt = 0 ..
 * rtiles * tpr - 1, which the blocks stride over (block b runs tt = b, b +
 * grid, ...), so tiles with close numbers run at the same time. group 1:
 * row-major, a row tile's slices consecutive (every block of a wave on a
 * different slice of the weights). group G > 1 (RAMP_MV2_GROUP, issue #5's
 * grouped order): row tiles in groups of G, slice-major inside a group, so
 * the G row tiles of one slice are consecutive and read that slice's weights
 * from L2 after the first; the last group holds the rtiles % G rows left,
 * so every tt < rtiles * tpr names one (row, slice) and each pair once
 * (tests/test_moe_v2_tile.c). */
RAMP_MV2_INLINE void ramp_mv2_tile_of(int tt, int rtiles, int tpr, int group, int *row,
                                      int *slice) {
    const int full = rtiles / group * group; /* rows in whole groups */
    if (tt < full * tpr) {
        const int g = tt / (group * tpr), rem = tt - g * group * tpr;
        *row = g * group + rem % group;
        *slice = rem / group;
    } else {
        const int left = rtiles - full, rem = tt - full * tpr;
        *row = full + rem % left;
        *slice = rem / left;
    }
}

/* Multicast pairs (RAMP_MV2_MCAST, session 15): a launch of rtiles row
 * tiles has ramp_mv2_pairs(rtiles) * tpr pair tiles; pair tile tt is
 * slice tt % tpr of row tiles 2p and 2p + 1 (p = tt / tpr), the CTA of
 * cluster rank k running 2p + k. ramp_mv2_pair_expert decides both CTAs'
 * tile from the two experts (each -1 when its row tile has none or is past
 * the load), the same way on both sides: the expert whose weights the CTA
 * streams (-1: neither has one, both skip), whether its own row tile is
 * real (*own_rows = 0: a phantom, no tokens, the partner's expert, so
 * that both walk the same stages) and whether the two share each stage's
 * weights (*mc: one expert, or a phantom). tests/test_moe_v2_tile.c walks
 * every CTA of a cluster through a launch and checks it. */
RAMP_MV2_INLINE int ramp_mv2_pairs(int rtiles) { return (rtiles + 1) / 2; }
RAMP_MV2_INLINE void ramp_mv2_pair_of(int tt, int tpr, int rank, int *row, int *partner,
                                      int *slice) {
    const int p = tt / tpr;
    *slice = tt - p * tpr;
    *row = 2 * p + rank;
    *partner = 2 * p + (rank ^ 1);
}
RAMP_MV2_INLINE int ramp_mv2_pair_expert(int own, int other, int experts, int *own_rows, int *mc) {
    if (own >= experts) own = -1;
    if (other >= experts) other = -1;
    *own_rows = own >= 0;
    *mc = own < 0 || other < 0 || own == other;
    return own >= 0 ? own : other >= 0 ? other : -1;
}

/* The workspace of the two-phase wide kernel (ramp_moe_v2_opts.split,
 * RAMP_MV2_PHASE): phase 1 stores row tile r's FP8 intermediate and its
 * per-token scales at prm.ws + r * tile, phase 2 reads them back:
 * [128][h] bytes (token row n, column j at n * h + j), then at iscale
 * [128][h / 128] f32; BF16 (bf16 = 1): [128][h] bf16 (column j at 2 (n h + j)),
 * no scales. One block per row tile, so that the bytes needed
 * follow the tiles of the entry that runs, not the capacity of a layer
 * whose menu also holds smaller tiles. Offsets in bytes (256-byte aligned);
 * total = the bytes to allocate for max_tiles row tiles. A narrow tile of
 * `rows` 1..64 (session 14, ramp_moe_v2_ws_layout_rows) holds its npad rows
 * instead of 128. */
typedef struct {
    long long tile, iscale, total;
} ramp_moe_v2_ws_layout;

RAMP_MV2_INLINE ramp_moe_v2_ws_layout ramp_moe_v2_ws_layout_rows(int max_tiles, int rows,
                                                                 int inter, int bf16) {
    ramp_moe_v2_ws_layout l;
    const long long n = rows > 64 ? 128 : (rows + 7) / 8 * 8;
    l.iscale = ramp_mv2_align(n * inter * (bf16 ? 2 : 1), 256);
    l.tile = ramp_mv2_align(l.iscale + (bf16 ? 0 : n * (inter / 128) * 4), 256);
    l.total = (long long)max_tiles * l.tile;
    return l;
}
RAMP_MV2_INLINE ramp_moe_v2_ws_layout ramp_moe_v2_ws_layout_bf(int max_tiles, int inter,
                                                               int bf16) {
    return ramp_moe_v2_ws_layout_rows(max_tiles, 128, inter, bf16);
}
RAMP_MV2_INLINE ramp_moe_v2_ws_layout ramp_moe_v2_ws_layout_of(int max_tiles, int inter) {
    return ramp_moe_v2_ws_layout_bf(max_tiles, inter, 0);
}

/* The workspace of the gather through global memory (ramp_moe_v2_opts.
 * ggather G, RAMP_MV2_GGATHER; session 36), npad = a narrow tile's rows
 * rounded up to 8, w its width: tile (row tile r, group q of G slices)
 * holds G blocks at (r h / (w G) + q) * group, each the FP8 intermediate
 * of one slice (w / 128 K tiles of npad x 128 bytes, SW128 as in shared
 * memory) then its npad x w / 128 f32 scales; the tile's two u32 counters
 * at 8 (r h / (w G) + q) of a buffer of their own (prm.ws_count; a kernel
 * object's launches: at `counters`, after every tile's blocks), zero
 * before the first launch (each launch leaves them zero). */
typedef struct {
    long long block, group, counters, total;
} ramp_moe_v2_gg_ws;

RAMP_MV2_INLINE ramp_moe_v2_gg_ws ramp_moe_v2_gg_ws_of(int max_tiles, int npad, int width,
                                                       int inter, int g) {
    ramp_moe_v2_gg_ws l;
    const long long tiles = (long long)max_tiles * (inter / width / g);
    l.block = (long long)npad * width + (long long)npad * (width / 128) * 4;
    l.group = (long long)g * l.block;
    l.counters = tiles * l.group;
    l.total = l.counters + 8 * tiles;
    return l;
}

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#include "hopper.cuh"
/* The kernel's second parameter, device side (src/moe_v2.h has the host's,
 * of CUtensorMap): defined here, behind this header's guard, so that a
 * polymorphic kernel including moe_v2.cuh once per entry in a namespace
 * (moe_poly_v2.cuh) has one type for every entry. */
typedef struct {
    hop_tensormap w13; /* [E * 2h][d], box 128 B x 128 rows (RAMP_MV2_TILED: 4-D, moe_v2.cuh) */
    hop_tensormap w2;  /* [E * d][h], box 128 B x 128 rows */
    hop_tensormap x;   /* RAMP_MV2_TMA_X only: the token rows (moe_v2.cuh) */
    hop_tensormap h;   /* RAMP_MV2_TMA_X, phase 2: the workspace's intermediate, 3-D */
} ramp_moe_v2_maps;
#endif

#endif /* RAMP_MOE_V2_PARAMS_H */
