/*
 * moe_v2.cuh - the fused MoE kernel, version 2, for Hopper (sm_90a): FP8
 * e4m3 wgmma with the weights as the A operand loaded by TMA, the tile's
 * tokens as the B operand gathered by cp.async, a producer warpgroup and two
 * consumer warpgroups on an mbarrier ring (the ramp_wgmma_test_ws skeleton
 * of wgmma_test.cuh). Structure and decisions: moe_v2.md beside this file;
 * the plan: hopper.md. Building blocks: hopper.cuh.
 *
 * Same function and input contract as v1 (moe_v1.cuh's header; the
 * parameter block ramp_moe_params of moe_v1_params.h), FP8 layers with FP8
 * hidden states + 1x128 scales only. Per tile (row tile r of b token slots,
 * slice of w intermediate columns; expert e = tile_expert[r]):
 *   gate|up = W13[e][slice rows] . X[tokens]^T   (K = d; per 128-wide K block
 *             summed by the tensor core, then scaled by the 128x128 weight
 *             block scale x the token's 1x128 scale and added in f32)
 *   a       = SiLU(gate) * up * router_weight(slot)
 *   q       = e4m3(a / s), s = max(amax, 1e-10) / 448 per token per 128
 *             columns (as src/fp8.c; moe_ref.c is the reference)
 *   out[token] += W2[e][:, slice] . q   (per 128 columns of the slice scaled
 *             by W2's block scale x s; red.global.add.v4.f32 after a
 *             lane transpose, RAMP_MV2_OUT4)
 *
 * Parameters: ramp_moe_params prm (v1's), ramp_moe_v2_maps maps (by value,
 * __grid_constant__): W13 as the 2-D e4m3 matrix [E * 2h][d], W2 as
 * [E * d][h], both with boxes of 128 bytes x 128 rows, 128-byte swizzle
 * (src/moe_v2.c builds them). Launch: 384 threads, dynamic shared memory
 * ramp_moe_v2_layout_of(...).total, grid = min(max_tiles * h / w, SMs): every
 * block strides over the tiles tt = blockIdx.x + i * gridDim.x < num_tiles *
 * h / w (one block per SM fits; a grid of all max_tiles * h / w blocks, most
 * of them returning at once, cost up to 2x at small loads, 2026-11-30).
 *
 * Specialisation (all required): RAMP_ROWS (b, 1..64 with ceil8(b) in
 * {8, 16, 24, 32, 48, 64}, or 65..128: a wide tile of 128 token rows whose
 * consumers are moe_v2_wide.cuh's, the wgmma roles swapped), RAMP_WIDTH (128, 256, 512), RAMP_STAGES (2..6),
 * RAMP_HIDDEN (d, a multiple of 256), RAMP_INTER (h, a multiple of w),
 * RAMP_TOPK, RAMP_EXPERTS.
 *
 * RAMP_MV2_TILED = 1 (moe_v2.md, "Pre-tiled weights"): the weights are
 * stored pre-tiled, W13 as [E * 2h / 128][d / 128][128 rows][128 bytes] and
 * W2 as [E * d / 128][h / 128][128][128] (ramp_moe_v2_tile_weights packs
 * them), each box one contiguous 16 KB run; the maps are 4-D (128 bytes,
 * 128 rows, K blocks, row blocks) with boxes {128, 128, 1, 1}, so a box
 * lands in shared memory exactly as the 2-D map's box does and only the
 * coordinates passed to TMA change. Scales are as without it.
 * RAMP_MV2_TILED = 2: the blocks stored K block-major ([K blocks][row
 * blocks][128][128]; ramp_moe_v2_tile_weights_order), the map's outer
 * dimensions swapped to (row block, K block): blocks that stream different
 * rows at the same K step read one contiguous range together.
 * RAMP_MV2_TILED = 3 (session 29): each ring stage's 32 KB of weights
 * stored as one contiguous unit holding its shared-memory image (the two
 * 128-row boxes, 128-byte swizzle applied), read by one bulk copy
 * (cp.async.bulk, no tensor map): W13 unit (e, row block rb of h, K block
 * kb) = gate rows e 2h + 128 rb .. +127, then the up rows h further;
 * W2 unit (e, 256-row chunk c of d, K block kb) = rows e d + 256 c ..
 * +255; units ordered (e, rb or c, kb). ramp_moe_v2_tile_weights_order
 * packs them. Not with the L2 prefetch. Session 30: with multicast CTA k
 * of the pair reads half k of the unit (box k's image) into both; BF16
 * layers too (a K block is 128 bytes, 64 elements, as in their boxes).
 *
 * RAMP_MV2_BF16 = 1 (moe_v2.md, session 9): a BF16 layer (ramp_geometry.bf16;
 * moe_v1.cuh's contract: x, W13, W2 bf16, no scales), fused (wide tiles:
 * moe_v2_wide.cuh's BF16 consumer):
 * wgmma m64nNk16 bf16, a stage still 128 bytes of K (64 elements) and the
 * same four instructions per 128-byte row, the sums kept in the
 * accumulators across K (no block scales, so no promotion), and
 * a = SiLU(gate) * up * rw rounded to bf16 into the intermediate, consumer c
 * of pass p writing its 64 columns as K tile 2p + c of the down projection.
 *
 * RAMP_MV2_RED4 = 1 (moe_v2.md, session 5, "Float4 output reductions"): W2's rows are
 * stored permuted within each 128-row block (ramp_moe_v2_permute_w2), so
 * that the four accumulators a consumer thread holds for one token (m-tile
 * rows r, r + 8, r + 64, r + 72) are four consecutive output rows, added
 * with one red.global.add.v4.f32 instead of four scalar reductions.
 *
 * RAMP_MV2_BULKRED = 1 (moe_v2.md, session 13): narrow FP8 tiles add their
 * output by the TMA unit's bulk reductions instead of the threads'
 * red.global.add: each consumer stages its 128 rows of a down chunk per
 * token in shared memory (ramp_moe_v2_layout_opt's ostage, two stagings
 * used in turn), then thread n adds token n's 512 bytes with one
 * cp.reduce.async.bulk (session 13: Mixtral at 16 pairs spends 33 of 112 us
 * in the threads' reductions; with this, 22).
 */
#include "common.cuh"
#include "fp8.cuh"
#include "hopper.cuh"
#include "moe_v1_params.h"
#include "moe_v2_params.h"
#include "timeline.cuh"

#if !defined(RAMP_ROWS) || !defined(RAMP_WIDTH) || !defined(RAMP_STAGES) || \
    !defined(RAMP_HIDDEN) || !defined(RAMP_INTER) || !defined(RAMP_TOPK) || \
    !defined(RAMP_EXPERTS)
#error "moe_v2.cuh: define RAMP_ROWS, RAMP_WIDTH, RAMP_STAGES, RAMP_HIDDEN, RAMP_INTER, RAMP_TOPK, RAMP_EXPERTS"
#endif
#if RAMP_WIDTH != 128 && RAMP_WIDTH != 256 && RAMP_WIDTH != 512
#error "RAMP_WIDTH must be 128, 256 or 512"
#endif
#if RAMP_STAGES < 2 || RAMP_STAGES > 6
#error "RAMP_STAGES must be in 2..6"
#endif
/* Options (moe_v2.h's ramp_moe_v2_opts): RAMP_MV2_PF = L2 prefetch distance
 * in stages (0: none); RAMP_MV2_PIPE = consumer ping-pong (below);
 * RAMP_MV2_DIAG = timing diagnostics with wrong results:
 * 1 the consumers only wait and release each stage (no wgmma, promotion,
 * epilogue, output), 2 as 1 and the producer loads the weights alone (no
 * token gather, no scales), 3 as 2 without the weights (the ring's
 * synchronisation and the launch alone), 4 everything but the output
 * reductions (the accumulators kept live by a test that never holds), 5
 * split-K without its exchange (each CTA quantizes its own partial sums), 6
 * the consumers' whole work on whatever the slots hold, the producer
 * arriving without loading (the math alone, beside 1's loads alone), 7 as
 * 6 with the weights loaded (no token gather), 8 as 6 with the tokens
 * gathered (no weights), 9 with RAMP_MV2_TMA_X: each up stage's token tile
 * as one TMA box of 128 rows (rows 0..127 of x, whatever the tile's tokens:
 * the bound of a tile-ordered copy of x). */
#ifndef RAMP_MV2_PF
#define RAMP_MV2_PF 0
#endif
#ifndef RAMP_MV2_DIAG
#define RAMP_MV2_DIAG 0
#endif
#define V2_DIAG_NO_LOADS (RAMP_MV2_DIAG == 3 || RAMP_MV2_DIAG == 6 || RAMP_MV2_DIAG == 8)
/* RAMP_MV2_TMA_X (ramp_moe_v2_opts.tma_x; session 17): a wide tile's up
 * stages take their token rows by TMA, so the consumers need no proxy fence
 * for them, and their bytes join the weights' on full[s]. 1: one box of 128
 * rows of maps.x, which then maps the copy of x in tile order that
 * moe_v2_xtile.cuh writes before the launch (row tile r at rows 128 r..).
 * 2: one box of 128 bytes x 1 row of x per token row, at row n's slot
 * address, where the TMA unit's 128-byte swizzle (a function of the
 * shared-memory address) places the chunks as hop_swz128 does; padding
 * rows load token 0 (finite values in rows nothing reads). Correct, and 20%
 * slower than cp.async (128 boxes a stage; s17-run4). */
#ifndef RAMP_MV2_TMA_X
#define RAMP_MV2_TMA_X 0
#endif
#define V2_DIAG_NO_GATHER \
    (RAMP_MV2_DIAG == 2 || RAMP_MV2_DIAG == 3 || RAMP_MV2_DIAG == 6 || RAMP_MV2_DIAG == 7)
#ifndef RAMP_MV2_PIPE
#define RAMP_MV2_PIPE RAMP_MV2_PIPE_DEFAULT
#endif
#ifndef RAMP_MV2_TILED
#define RAMP_MV2_TILED 0
#endif
/* RAMP_MV2_W2BOX256 (ramp_moe_v2_opts.w2box; session 29): a W2 stage's two
 * 128-row boxes (rows y0 and y0 + 128, adjacent in the slot as in W2) as
 * one box of 256 rows, the W2 map built with 256-row boxes: half the TMA
 * operations for the same bytes and the same shared-memory image. */
#ifndef RAMP_MV2_W2BOX256
#define RAMP_MV2_W2BOX256 0
#endif
#ifndef RAMP_MV2_RED4
#define RAMP_MV2_RED4 0
#endif
/* RAMP_MV2_OUT4 = 1 (session 52; the default): narrow tiles add their
 * output as float4s on row-major W2 or stage units, without red4's
 * permutation: the four lanes g = 4a..4a+3 of one t hold rows 4a..4a+3 of
 * the same tokens, so a 4x4 transpose over them (lane ^ 8, lane ^ 4; four
 * shuffles per four values) gives each lane four consecutive rows of one
 * token, added with one red.global.add.v4.f32 (or stored with
 * RAMP_MV2_DET). A quarter of the scalar path's reductions; out must be
 * 16-byte aligned. Measured on an H100 (bench/results/s52-run1): in
 * 8-layer stacks -1.1 to -1.9 us a layer at 240-478 pairs on Qwen3-30B /
 * OLMoE EP8, +1.1-1.2 at two small loads, within 0.5 us elsewhere; kernels
 * alone up to -7.7 us at 1,024 pairs. 0: the scalar reductions (one per
 * value). */
#ifndef RAMP_MV2_OUT4
#define RAMP_MV2_OUT4 1
#endif
#ifndef RAMP_MV2_BF16
#define RAMP_MV2_BF16 0
#endif
#ifndef RAMP_MV2_BULKRED
#define RAMP_MV2_BULKRED 0
#endif
/* RAMP_MV2_STREAMK = 1 (ramp_moe_v2_opts.streamk; moe_v2.md, sessions 24-25;
 * an experiment, correct, 1-3 us slower at one row tile, faster only where
 * wide tiles serve the load anyway): narrow phase 2 as stream-K. The launch's
 * work is the (row tile, chunk of d, K block of h) triples in that order,
 * T = tiles x chunks x h/128; block b takes the contiguous range
 * [b T / G, (b + 1) T / G) and runs it as segments cut at chunk ends, each
 * summed over its K blocks and added into out once: one pipeline fill per
 * block instead of per (chunk, K part), and every SM busy to the end
 * (Mixtral-8x22B at one row tile: .dk4 is 96 tiles, so 36 SMs idle; .dk8
 * is 192, a second wave on 60; s25-run1: the 96 already draw what W2's
 * stream gives). */
#ifndef RAMP_MV2_STREAMK
#define RAMP_MV2_STREAMK 0
#endif
/* RAMP_MV2_DET = 1 (ramp_layer_desc.deterministic; moe_v2.md, session 20):
 * phase 2 stores each token-slot's sums into its own row of prm.out, a
 * per-pair workspace [K part][num_tokens * k][d] of f32, instead of adding
 * them into out[token]: no two blocks touch one address, and the layer's
 * combining kernel (moe_combine.cuh) adds a token's rows in a fixed order,
 * so the result has the same bits on every run. Phase 2 only (a fused
 * entry adds once per slice; the host refuses it in such a layer). */
#ifndef RAMP_MV2_DET
#define RAMP_MV2_DET 0
#endif
/* RAMP_V2_BODY_ONLY = 1 (moe_poly_v2.cuh, once per menu entry inside a
 * namespace): no __global__; the entry is v2_first_tile, v2_init and the two
 * roles, v2_producer_role and v2_consumer_role (the kernel below calls the
 * same functions; V2_ROLE says why they are inlined), and the V2_* macros
 * are undefined at the end so that the next entry can define its own. */
#ifndef RAMP_V2_BODY_ONLY
#define RAMP_V2_BODY_ONLY 0
#endif
/* timeline.cuh's kernel index for the stamps inside the roles (first
 * weights requested, first stage landed): the polymorphic kernel's, which
 * its generator sets, or the standalone kernel's 4 (5: its phase 2) */
#if RAMP_V2_BODY_ONLY
#define V2_TL_IDX RAMP_TL_K
#else
#define V2_TL_IDX (RAMP_MV2_PHASE == 2 ? 5 : 4)
#endif
#if RAMP_INTER % RAMP_WIDTH != 0 || RAMP_HIDDEN % RAMP_MV2_CHUNK != 0
#error "w must divide h, and d must be a multiple of 256"
#endif

/* wgmma N: rows rounded up to 8, as a literal (it is pasted into a name) */
#if RAMP_ROWS >= 1 && RAMP_ROWS <= 8
#define V2_N 8
#elif RAMP_ROWS <= 16
#define V2_N 16
#elif RAMP_ROWS <= 24
#define V2_N 24
#elif RAMP_ROWS <= 32
#define V2_N 32
#elif RAMP_ROWS >= 41 && RAMP_ROWS <= 48
#define V2_N 48
#elif RAMP_ROWS >= 57 && RAMP_ROWS <= 64
#define V2_N 64
#elif RAMP_ROWS >= 65 && RAMP_ROWS <= 128
#define V2_N 128 /* a wide tile: 128 token rows, roles swapped (moe_v2_wide.cuh) */
#define V2_WIDE 1
#else
#error "ceil8(RAMP_ROWS) must be 8, 16, 24, 32, 48 or 64, or RAMP_ROWS 65..128 (a wide tile)"
#endif
#ifndef V2_WIDE
#define V2_WIDE 0
#endif
#if RAMP_MV2_BF16 && (RAMP_MV2_TILED == 1 || RAMP_MV2_TILED == 2 || RAMP_MV2_RED4 || \
                      (RAMP_MV2_PIPE && !V2_WIDE))
#error "RAMP_MV2_BF16: row-major weights or stage units, no W2 permutation, ping-pong in wide tiles only"
#endif
#if RAMP_MV2_BULKRED && (RAMP_MV2_BF16 || RAMP_MV2_RED4 || V2_WIDE || \
                         (defined(RAMP_MV2_KSPLIT) && RAMP_MV2_KSPLIT > 1))
#error "RAMP_MV2_BULKRED: narrow FP8 tiles, scalar output order, no split-K (what is tested)"
#endif
/* bytes per element, and elements of K per 128-byte stage row */
#define V2_EB (RAMP_MV2_BF16 ? 2 : 1)
#define V2_KE (RAMP_MV2_KB / V2_EB)
/* RAMP_MV2_PHASE (ramp_moe_v2_opts.split; moe_v2.md "Session 6"): 0 the fused
 * kernel; 1 the up projection only, each tile's FP8 intermediate and its
 * scales stored to the workspace prm.ws (ramp_moe_v2_ws_layout); 2 the down
 * projection only, tile = (row tile, 256-row chunk of d), K = all of h read
 * back from the workspace, so each output element is added once per expert
 * and K part instead of once per slice. Wide tiles, and narrow FP8 tiles
 * (session 14: Mixtral's small loads, where 128 slices added into the same
 * output rows cost a third of the kernel). */
#ifndef RAMP_MV2_PHASE
#define RAMP_MV2_PHASE 0
#endif
#if RAMP_MV2_PHASE && !V2_WIDE && (RAMP_MV2_BF16 || RAMP_MV2_BULKRED || RAMP_MV2_RED4 || \
                                   RAMP_MV2_PIPE)
#error "RAMP_MV2_PHASE with a narrow tile: FP8, the threads' reductions (no bulk, no red4), no ping-pong"
#endif
#if RAMP_MV2_DET && !RAMP_MV2_PHASE
#error "RAMP_MV2_DET: two-phase entries only (phase 2 writes each slot's row once)"
#endif
/* RAMP_MV2_GROUP (ramp_moe_v2_opts.group): the work tiles' order,
 * moe_v2_params.h's ramp_mv2_tile_of; 1 row-major (v2's order), G > 1 the
 * G row tiles of a slice consecutive, so that blocks running together share
 * the slice's weights through L2 (the grouped order of issue #5). */
#ifndef RAMP_MV2_GROUP
#define RAMP_MV2_GROUP 1
#endif
#if RAMP_MV2_GROUP < 1 || RAMP_MV2_GROUP > 64
#error "RAMP_MV2_GROUP must be in 1..64"
#endif
/* RAMP_MV2_P2K (phase 2, ramp_moe_v2_opts.p2k): K of the down projection in
 * that many parts, each its own tile (its sums added into out separately),
 * so that few row tiles still fill the GPU (Mixtral-8x22B EP8: 8 row tiles
 * x 24 chunks = 192 tiles on 132 SMs, 1.45 waves). */
#ifndef RAMP_MV2_P2K
#define RAMP_MV2_P2K 1
#endif
/* RAMP_MV2_KSPLIT (ramp_config.splitk; moe_v2.md, session 12): 1, or 2: a
 * tile's up projection split in K over a cluster of two CTAs, launched
 * with cluster dimension 2 (consecutive blocks 2q, 2q + 1). CTA rank k sums
 * K blocks [k d/256, (k+1) d/256) of each pass, the two exchange their
 * partial sums through distributed shared memory (v2_ks_exchange) so both
 * hold the whole sums, and CTA k then runs down chunks [k C/2, (k+1) C/2)
 * of the C = d/256: twice the blocks for a load's tiles, each streaming
 * half the bytes. Narrow fused tiles only. */
#ifndef RAMP_MV2_KSPLIT
#define RAMP_MV2_KSPLIT 1
#endif
#define V2_KS RAMP_MV2_KSPLIT
#if V2_KS != 1 && V2_KS != 2
#error "RAMP_MV2_KSPLIT must be 1 or 2"
#endif
#if V2_KS > 1 && (V2_WIDE || RAMP_MV2_PHASE || RAMP_MV2_GROUP > 1)
#error "RAMP_MV2_KSPLIT 2: narrow fused tiles (rows 1..64), row-major order"
#endif
#if V2_KS > 1 && RAMP_ROWS > 32
#error "RAMP_MV2_KSPLIT 2: rows 1..32 (the slot ids are held in registers through the up passes)"
#endif
#if V2_KS > 1 && RAMP_HIDDEN % (RAMP_MV2_CHUNK * V2_KS)
#error "RAMP_MV2_KSPLIT 2 needs d a multiple of 512 (whole down chunks per CTA)"
#endif
/* RAMP_MV2_MCAST (ramp_moe_v2_opts.mcast; moe_v2.md, session 15): 0, or 1:
 * wide tiles in clusters of two CTAs (consecutive blocks 2q, 2q + 1) that
 * run row tiles 2p and 2p + 1 of one slice together; when both are the same
 * expert's (or one of them is past the load: a phantom with no tokens), CTA
 * k loads weight box k of each stage and the TMA unit writes it into both
 * CTAs' rings (multicast), so a weight byte crosses L2 once per 256 tokens
 * instead of per 128. Each consumer warp also releases the stage in its
 * partner (the partner's box lands in this CTA's slot). Session 45: narrow
 * fused FP8 tiles too (opts only, not in the configuration space: an
 * experiment on whether a row tile's cost is L2's weight reads); their
 * consumers read no row tile index, and a phantom's token slots are all -1,
 * so it computes on zero rows and adds nothing. */
#ifndef RAMP_MV2_MCAST
#define RAMP_MV2_MCAST 0
#endif
#if RAMP_MV2_MCAST != 0 && RAMP_MV2_MCAST != 1
#error "RAMP_MV2_MCAST must be 0 or 1"
#endif
#if RAMP_MV2_MCAST && (RAMP_MV2_GROUP > 1 || RAMP_MV2_TILED == 1 || RAMP_MV2_TILED == 2 || \
                       V2_KS > 1 ||                                                          \
                       (!V2_WIDE && (RAMP_MV2_PHASE || RAMP_MV2_BF16 || RAMP_MV2_W2BOX256)))
#error "RAMP_MV2_MCAST: wide tiles or narrow fused FP8 tiles (W2 in 128-row boxes); row-major tile order, row-major weights or stage units; no split-K"
#endif
#if RAMP_MV2_W2BOX256 && (V2_WIDE || RAMP_MV2_TILED || RAMP_MV2_BF16 || V2_KS > 1)
#error "RAMP_MV2_W2BOX256: narrow FP8 tiles on row-major weights, no split-K"
#endif
#if RAMP_MV2_TILED == 3 && RAMP_MV2_PF > 0
#error "RAMP_MV2_TILED 3 (stage units): no L2 prefetch"
#endif
#if RAMP_MV2_TILED < 0 || RAMP_MV2_TILED > 3
#error "RAMP_MV2_TILED must be 0..3"
#endif
/* RAMP_MV2_CGATHER (ramp_moe_v2_opts.cgather; moe_v2.md, session 35): 1, or
 * C = 2, 4, 8: a narrow fused tile run by a cluster of C CTAs (consecutive
 * blocks) on C consecutive slices of one row tile. CTA rank k projects up
 * slice C q + k as a plain tile does, then the C CTAs copy their FP8
 * intermediates and scales into each other's shared memory (v2_cg_gather:
 * one bulk copy per peer, a few KB), and CTA k projects down chunks
 * [k D/C, (k+1) D/C) of the D = d/256 over the C slices' C w columns. Each
 * output element is then added once per C slices instead of once per slice
 * (Mixtral-8x22B: 128 slices of w 128 adding into the same rows cost a
 * third of the fused kernel, session 13), in one launch, with no workspace. */
/* RAMP_MV2_GGATHER (ramp_moe_v2_opts.ggather; moe_v2.md, session 36): the
 * same gather with the blocks exchanged through global memory instead of a
 * cluster's shared memory: G = 2, 4 or 8 consecutive blocks, no cluster
 * launch (clusters of 4 or 8 such CTAs are resident on 120 of 132 SMs).
 * Each stores its block of intermediate and scales into prm.ws, counts
 * itself in the tile's counter (prm.ws_count), waits for the G and reads
 * the peers' blocks (v2_cg_gather). The host launches at most one resident
 * wave, so a group's blocks are resident together. */
#ifndef RAMP_MV2_GGATHER
#define RAMP_MV2_GGATHER 1
#endif
#if RAMP_MV2_GGATHER > 1
#if defined(RAMP_MV2_CGATHER) && RAMP_MV2_CGATHER > 1
#error "RAMP_MV2_GGATHER and RAMP_MV2_CGATHER: one exchange or the other"
#endif
#define V2_CG RAMP_MV2_GGATHER
#define V2_CGG 1
#else
#ifndef RAMP_MV2_CGATHER
#define RAMP_MV2_CGATHER 1
#endif
#define V2_CG RAMP_MV2_CGATHER
#define V2_CGG 0
#endif
#if V2_CG != 1 && V2_CG != 2 && V2_CG != 4 && V2_CG != 8
#error "RAMP_MV2_CGATHER and RAMP_MV2_GGATHER must be 1, 2, 4 or 8"
#endif
#if V2_CG > 1 && (V2_WIDE || RAMP_MV2_PHASE || RAMP_MV2_BF16 || V2_KS > 1 || RAMP_MV2_MCAST || \
                  RAMP_MV2_GROUP > 1 || RAMP_MV2_DET)
#error "RAMP_MV2_CGATHER: narrow fused FP8 tiles, row-major order, no split-K"
#endif
#if V2_CG > 1 && ((RAMP_INTER / RAMP_WIDTH) % V2_CG || (RAMP_HIDDEN / RAMP_MV2_CHUNK) % V2_CG)
#error "RAMP_MV2_CGATHER C must divide h / w and d / 256"
#endif
#define V2_MC (RAMP_MV2_MCAST ? 2 : 1)
#define V2_CL (V2_KS * V2_MC * (V2_CGG ? 1 : V2_CG)) /* CTAs per cluster */
#define V2_TG (V2_CL * (V2_CGG ? V2_CG : 1))         /* CTAs per tile */
#define V2_ACC (V2_N / 2)                  /* accumulators per m-tile and thread */
#define V2_TPT (V2_N / 4)                  /* tokens per thread: 8j + 2t + {0,1} */
/* slot ids a consumer thread keeps for the down phase: its tokens', and
 * with RAMP_MV2_BULKRED token (thread & 127)'s, whose bulk reductions it issues */
#define V2_SLOTS (V2_TPT + RAMP_MV2_BULKRED)
#if RAMP_MV2_BF16
#define V2_MMA HOP_WGMMA_BF16(V2_N)
#else
#define V2_MMA HOP_WGMMA_E4M3(V2_N)
#endif
#define V2_PASSES (RAMP_WIDTH / 128)       /* up passes: 128 columns each */
#define V2_KBLK (RAMP_HIDDEN / V2_KE)      /* K blocks (stages) of an up pass */
#define V2_CHUNKS (RAMP_HIDDEN / RAMP_MV2_CHUNK)
#define V2_KBL (V2_KBLK / V2_KS)           /* this CTA's K blocks of an up pass */
#define V2_CHL (V2_CHUNKS / (V2_KS * V2_CG)) /* this CTA's down chunks */
#define V2_DKB (V2_CG * RAMP_WIDTH / V2_KE) /* K blocks per down chunk */
#define V2_SLICES (RAMP_INTER / RAMP_WIDTH)
#define V2_HKB (RAMP_INTER / V2_KE)        /* K blocks of the down projection (phase 2) */
/* work tiles per row tile: slices, or phase 2's chunks of d */
#define V2_SK (RAMP_MV2_STREAMK && RAMP_MV2_PHASE == 2)
/* phase 2 with K parts of unequal length (P2K not dividing h/128) */
#define V2_P2U (RAMP_MV2_PHASE == 2 && !V2_SK && (V2_HKB % RAMP_MV2_P2K) != 0)
#if V2_P2U && (RAMP_MV2_GROUP > 1 || RAMP_MV2_P2K > V2_HKB)
#error "RAMP_MV2_P2K not dividing h / 128: the row-major tile order, at most h / 128 parts"
#endif
#if RAMP_MV2_STREAMK && (RAMP_MV2_PHASE != 2 || V2_WIDE || RAMP_MV2_P2K != 1 || RAMP_MV2_DET || \
                         RAMP_MV2_BULKRED || RAMP_MV2_GROUP > 1 || V2_KS > 1)
#error "RAMP_MV2_STREAMK: narrow phase 2 only, P2K 1, no det, bulkred, groups or split-K"
#endif
#if V2_SK
/* stream-K: a work unit is one K block of one chunk; `slice` = chunk * h/128 +
 * the segment's first K block, and the segment's length sk_n is passed on */
#define V2_TPR (V2_CHUNKS * V2_HKB)
#define V2_P2_CHUNK(slice) ((slice) / V2_HKB)
#define V2_P2_KB(slice, st) ((slice) % V2_HKB + (st))
#define V2_SKP , int sk_n
#define V2_SKA , sk_n
#elif V2_P2U
/* uneven K parts (session 35): part p of phase 2 holds K blocks [p H / P2K,
 * (p + 1) H / P2K) of the H = h/128, 25 or 26 for Mixtral's 128 in 5 parts
 * (24 chunks x 5 = 120 tiles, one wave on 132 SMs where 4 parts leave 36
 * idle); a tile's length sk_n is passed on as stream-K's segment is */
#define V2_TPR (V2_CHUNKS * RAMP_MV2_P2K)
#define V2_P2_K0(part) ((part) * V2_HKB / RAMP_MV2_P2K)
#define V2_P2NK sk_n
#define V2_P2_CHUNK(slice) ((slice) / RAMP_MV2_P2K)
#define V2_P2_KB(slice, st) (V2_P2_K0((slice) % RAMP_MV2_P2K) + (st))
#define V2_SKP , int sk_n
#define V2_SKA , sk_n
#else
#define V2_TPR (RAMP_MV2_PHASE == 2 ? V2_CHUNKS * RAMP_MV2_P2K : V2_SLICES / V2_CG)
/* phase 2: tile-local `slice` = chunk * P2K + K part; K blocks per tile */
#define V2_P2NK (V2_HKB / RAMP_MV2_P2K)
#define V2_P2_CHUNK(slice) ((slice) / RAMP_MV2_P2K)
#define V2_P2_KB(slice, st) (((slice) % RAMP_MV2_P2K) * V2_P2NK + (st))
#define V2_SKP
#define V2_SKA
#endif
#if RAMP_MV2_PHASE == 2 /* ramp_moe_v2_layout_down_bf: a wide tile's ring is shorter */
#define V2_S (V2_WIDE && RAMP_STAGES > RAMP_MV2_DOWN_STAGES ? RAMP_MV2_DOWN_STAGES : RAMP_STAGES)
#define V2_LAYOUT (ramp_moe_v2_layout_down_bf(RAMP_ROWS, RAMP_STAGES, RAMP_MV2_BF16))
#else
#define V2_S RAMP_STAGES
#define V2_LAYOUT \
    (ramp_moe_v2_layout_cg(RAMP_ROWS, RAMP_WIDTH, RAMP_STAGES, RAMP_MV2_BF16, V2_KS, \
                           RAMP_MV2_BULKRED, V2_CG))
#endif
#define V2_ITILE (V2_N * RAMP_MV2_KB)      /* one 128-byte K tile of the intermediate */
/* Ping-pong of the consumers' temporary accumulators (RAMP_MV2_PIPE: 0 off,
 * 1 for 16 <= N <= 48, 2 for N <= 48): at N = 64 two more sets of 2 x 32
 * do not fit beside the accumulators in 224 registers; at N = 8 the
 * consumers are not the limit, and holding two slots costs the memory-bound
 * loads one stage of look-ahead. */
#if (RAMP_MV2_PIPE == 1 && V2_N >= 16 && V2_N <= 48) || (RAMP_MV2_PIPE == 2 && V2_N <= 48)
#define V2_PIPE 1
#else
#define V2_PIPE 0
#endif
#define V2_PIPE_UP V2_PIPE
#define V2_PIPE_DN V2_PIPE
/* stages per unrolled group of the pipelined loops: the largest of 8, 4, 2
 * (1) dividing the up stages per pass and the down stages per tile */
#define V2_PGU (V2_KBL % 8 == 0 ? 8 : V2_KBL % 4 == 0 ? 4 : 2)
#define V2_NDS (V2_CHL * V2_DKB)
#define V2_PGD (V2_NDS % 8 == 0 ? 8 : V2_NDS % 4 == 0 ? 4 : V2_NDS % 2 == 0 ? 2 : 1)
#if V2_KBL % 2
#error "d / 128 must be even (d is a multiple of 256; 512 with RAMP_MV2_KSPLIT 2)"
#endif
/* Unit of the TMA coordinates: elements (row-major maps) or 128-row /
 * 128-byte blocks (pre-tiled). Every box starts on a block: rows e * 2h,
 * slice * w, p * 128, h (gate / up), e * d, chunk * 256, +128 (down), K at
 * kb * 128 or slice * w + 128 kk, with h, w, d multiples of 128 (above). */
#if RAMP_MV2_TILED
#if RAMP_INTER % 128 || RAMP_HIDDEN % 128
#error "RAMP_MV2_TILED: h and d must be multiples of 128 (whole blocks)"
#endif
#endif
#if RAMP_MV2_TILED == 1 || RAMP_MV2_TILED == 2
#define V2_CU 128
#else
#define V2_CU 1
#endif

/* The two weight tensor maps: ramp_moe_v2_maps, moe_v2_params.h. */

static __device__ __forceinline__ void v2_red(float *p, float v) {
    asm volatile("red.global.add.f32 [%0], %1;\n" ::"l"(p), "f"(v) : "memory");
}
/* Where token-slot sl's output row (of K part `part`) starts: out[token],
 * into which the sums are added, or with RAMP_MV2_DET the slot's own row of
 * the per-pair workspace, into which they are stored. */
static __device__ __forceinline__ float *v2_out_row(const ramp_moe_params &prm, int sl, int part) {
#if RAMP_MV2_DET
    return (float *)prm.out +
           ((size_t)part * ((size_t)prm.num_tokens * RAMP_TOPK) + (size_t)sl) * RAMP_HIDDEN;
#else
    (void)part;
    return (float *)prm.out + (size_t)(sl / RAMP_TOPK) * RAMP_HIDDEN;
#endif
}
/* One output value: added (red), or stored with RAMP_MV2_DET. */
static __device__ __forceinline__ void v2_put(float *p, float v) {
#if RAMP_MV2_DET
    asm volatile("st.global.f32 [%0], %1;\n" ::"l"(p), "f"(v) : "memory");
#else
    v2_red(p, v);
#endif
}
/* p 16-byte aligned */
static __device__ __forceinline__ void v2_red4(float *p, float a, float b, float c, float d) {
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "f"(a), "f"(b),
                 "f"(c), "f"(d)
                 : "memory");
}
/* Four values of one output row's consecutive columns, p 16-byte aligned:
 * added, or stored with RAMP_MV2_DET. */
static __device__ __forceinline__ void v2_put4(float *p, const float *v) {
#if RAMP_MV2_DET
    asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(p), "f"(v[0]), "f"(v[1]),
                 "f"(v[2]), "f"(v[3])
                 : "memory");
#else
    v2_red4(p, v[0], v[1], v[2], v[3]);
#endif
}
/* v[c] of lane k (= g & 3) becomes lane c's v[k] over the four lanes of
 * one t and one g >> 2 (lanes 4k apart): two rounds of pairwise swaps, over
 * bit 1 of k (lane ^ 8) and then bit 0 (lane ^ 4), each lane sending the
 * two values whose bit differs from its own k's. Every lane of the warp
 * takes part. */
static __device__ __forceinline__ void v2_transpose4(float *v, int k) {
    const int hi = k & 2, od = k & 1;
    float s0 = hi ? v[0] : v[2], s1 = hi ? v[1] : v[3];
    s0 = __shfl_xor_sync(0xffffffffu, s0, 8);
    s1 = __shfl_xor_sync(0xffffffffu, s1, 8);
    if (hi) { v[0] = s0; v[1] = s1; } else { v[2] = s0; v[3] = s1; }
    s0 = od ? v[0] : v[1];
    s1 = od ? v[2] : v[3];
    s0 = __shfl_xor_sync(0xffffffffu, s0, 4);
    s1 = __shfl_xor_sync(0xffffffffu, s1, 4);
    if (od) { v[0] = s0; v[2] = s1; } else { v[1] = s0; v[3] = s1; }
}
static __device__ __forceinline__ void v2_cp4(unsigned dst, const void *src, int bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(bytes)
                 : "memory");
}
static __device__ __forceinline__ void v2_st_u8(unsigned addr, unsigned v) {
    asm volatile("st.shared.u8 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
static __device__ __forceinline__ void v2_st_u16(unsigned addr, unsigned v) {
    asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}

/* Named barrier 1 over the 256 consumer threads. */
#define V2_CONSUMER_SYNC() HOP_BAR_SYNC(1, 256)

/* The token of accumulator i of this thread (HOP_DEFINE_WGMMA's layout):
 * column 8(i/4) + 2t + (i&1); its row is 16 w + g + 8 ((i/2)&1). */
#define V2_TOKEN(i, t) (8 * ((i) >> 2) + 2 * (t) + ((i) & 1))
/* index into the thread's V2_TPT token scales of accumulator i */
#define V2_TIDX(i) (2 * ((i) >> 2) + ((i) & 1))

/* Split-K: this CTA's part of K (its cluster rank; 0 without a split) and
 * the block's index among the tiles' walkers (its cluster's: both CTAs of
 * a cluster walk the same tiles). */
#if V2_KS > 1
static __device__ __forceinline__ int v2_kpart() { return (int)hop_cluster_rank(); }
#else
static __device__ __forceinline__ int v2_kpart() { return 0; }
#endif
/* The cluster gather: this CTA's rank among the C (0 without), the slice
 * it projects up (a tile's `slice` is then the cluster's group of C), the
 * first column of h its down projection reads, and the part of d it adds
 * into (split-K's or the gather's rank). */
#if V2_CGG
static __device__ __forceinline__ int v2_crank() { return (int)blockIdx.x % V2_CG; }
#elif V2_CG > 1
static __device__ __forceinline__ int v2_crank() { return (int)hop_cluster_rank(); }
#else
static __device__ __forceinline__ int v2_crank() { return 0; }
#endif
#define V2_UP_SLICE(slice) ((slice) * V2_CG + v2_crank())
#define V2_DN_COL(slice) ((slice) * (V2_CG * RAMP_WIDTH))
static __device__ __forceinline__ int v2_dpart() { return v2_kpart() + v2_crank(); }
/* Up stage st's K block. RAMP_MV2_KROT k > 0 (session 47, an experiment;
 * narrow tiles): a tile group's up passes start at K block (group * k) mod
 * this CTA's K blocks and wrap, instead of all at 0. A W13 box is 128 rows
 * of one 128-byte column block, rows `hidden` bytes apart, so CTAs at the
 * same K block ask for addresses that differ only above the column bits;
 * at the stream's start every CTA is at K block 0. The consumers take
 * every operand and scale from the stage's slot, so only the producer's
 * two maps (v2_stage_box, v2_gather) follow the order; the group (V2_CID),
 * not the block, so the CTAs sharing a tile's stages (multicast, split-K,
 * .gg) agree. Only the float sum's order changes. Measured slower (up to
 * 5.7 us a layer in stacks, never faster: moe_v2.md session 47), so 0. */
#ifndef RAMP_MV2_KROT
#define RAMP_MV2_KROT 0
#endif
#if RAMP_MV2_KROT > 0 && !V2_WIDE
#define V2_UP_KB(st) (v2_kpart() * V2_KBL + ((st) % V2_KBL + V2_CID * RAMP_MV2_KROT) % V2_KBL)
#else
#define V2_UP_KB(st) (v2_kpart() * V2_KBL + (st) % V2_KBL)
#endif
/* The intermediate's scale of token n for down K block kk: block kk / passes
 * (the CTA of that rank), pass kk % passes */
#define V2_ISC(n, kk) \
    (((kk) / V2_PASSES) * (V2_N * V2_PASSES) + (n) * V2_PASSES + (kk) % V2_PASSES)
#define V2_CID ((int)blockIdx.x / V2_TG)
#define V2_CGRID ((int)gridDim.x / V2_TG)

/* The tiles a block walks: tt = blockIdx.x + i * gridDim.x < head[0]; with
 * stream-K its contiguous range of K-block units, as segments (tt the
 * segment's first unit, sk_n its K blocks, cut at the chunk's end). A
 * segment's first unit is never assumed to be the block's preloaded first
 * tile (V2_FIRST): its expert and slots are read from global memory. */
#if V2_SK
/* Block b's first unit: the units split over min(grid, units) blocks, as the
 * blocks past the unit count have returned (the first s25-run1 lost the
 * last units of loads with fewer units than blocks) */
static __device__ __forceinline__ int v2_sk_start(int b, int units) {
    const int g = V2_CGRID < units ? V2_CGRID : units;
    return (int)((long long)b * units / g);
}
#define V2_FOR_TILES                                                          \
    for (int tt = v2_sk_start(V2_CID, v2_head(sm, 0)),                        \
             tt_end = v2_sk_start(V2_CID + 1, v2_head(sm, 0)), sk_n = 0;      \
         tt < tt_end; tt += sk_n)
#define V2_SK_SEGMENT                                                  \
    do {                                                               \
        const int kb0_ = tt % V2_HKB;                                  \
        sk_n = V2_HKB - kb0_ < tt_end - tt ? V2_HKB - kb0_ : tt_end - tt; \
    } while (0)
#define V2_FIRST(tt) 0
#elif V2_P2U /* tiles as usual, each with its part's length */
#define V2_FOR_TILES for (int tt = V2_CID, sk_n = 0; tt < v2_head(sm, 0); tt += V2_CGRID)
#define V2_SK_SEGMENT                                                       \
    do {                                                                    \
        const int p_ = (tt % V2_TPR) % RAMP_MV2_P2K;                        \
        sk_n = V2_P2_K0(p_ + 1) - V2_P2_K0(p_);                             \
    } while (0)
#define V2_FIRST(tt) ((tt) == V2_CID)
#else
/* (the gather through global memory: the blocks past the grid's last whole
 * group, a polymorphic kernel's grid not being a multiple of G, take none) */
#define V2_FOR_TILES                                                             \
    for (int tt = V2_CID; tt < v2_head(sm, 0) && (!V2_CGG || V2_CID < V2_CGRID); \
         tt += V2_CGRID)
#define V2_SK_SEGMENT ((void)0)
#define V2_FIRST(tt) ((tt) == V2_CID)
#endif

/* A consumer thread done with ring slot s's stage (its empty barrier).
 * Multicast: the partner's producer writes into this CTA's slot too, so
 * each warp, once all its lanes are done, also arrives on the partner's
 * barrier (V2_EMPTY_COUNT: 256 threads here + 8 warps there). One arrival
 * per warp here too (after __syncwarp) measured 1% faster, within noise,
 * and racecheck does not see __syncwarp order the other lanes' reads of
 * the slot before lane 0's arrival (moe_v2.md, session 17): not kept. */
#define V2_EMPTY_COUNT (256 + (V2_MC > 1 ? 8 : 0))
static __device__ __forceinline__ void v2_release(unsigned empty_s) {
    hop_mbar_arrive(empty_s);
#if V2_MC > 1
    __syncwarp();
    if ((threadIdx.x & 31) == 0)
        hop_mbar_arrive_remote_relaxed(hop_mapa(empty_s, hop_cluster_rank() ^ 1));
#endif
}
/* The producer's wait for slot s to be free. With multicast the partner's
 * consumers arrive too, relaxed: what they read was the weights, by wgmma,
 * and the TMA write that follows is ordered by the barrier alone, so no
 * cluster-scope acquire (a CCTL.IVALL per wait, s16-run1). */
static __device__ __forceinline__ void v2_wait_empty(unsigned empty_s, unsigned parity) {
    hop_mbar_wait(empty_s, parity);
}

/* ------------------------------------------------------------- producer */

/* Stages of one tile: up stages first (passes x K blocks), then down stages
 * (chunks x K blocks of the slice). */
#if RAMP_MV2_PHASE == 1
#define V2_NST (V2_PASSES * V2_KBLK)
#elif V2_SK
#define V2_NST sk_n /* the segment's K blocks (a parameter of the functions using it) */
#elif RAMP_MV2_PHASE == 2
#define V2_NST V2_P2NK /* stage st: W2 rows of the chunk x K block V2_P2_KB of h */
#else
#define V2_NST (V2_PASSES * V2_KBL + V2_CHL * V2_DKB)
#endif
/* Stages whose weights the producer loads before the tile's token slots are
 * known (the ring's depth, or fewer for a short tile). */
#define V2_HEAD (V2_NST < V2_S ? V2_NST : V2_S)

/* The weights of tile-local stage st: two boxes of 128 rows x 128 bytes at
 * (x, y0) and (x, y1) of map, in units of V2_CU. Up: gate rows [col,
 * col+128) and up rows [h+col, ...) of W13[e], K block kb. Down: W2[e] rows
 * [256 chunk, +256) x columns [slice*w + 128 kk, +128). */
typedef struct {
    const hop_tensormap *map;
    int x, y0, y1;
    int w2; /* a W2 stage (y1 = y0 + 128 / V2_CU) */
} v2_box;

static __device__ __forceinline__ v2_box v2_stage_box(const ramp_moe_v2_maps &maps, int st, int e,
                                                      int slice) {
    v2_box b;
#if RAMP_MV2_PHASE == 2
    if (1) { /* slice = the chunk of d */
        b.map = &maps.w2;
        b.w2 = 1;
        b.x = V2_P2_KB(slice, st) * (V2_KE / V2_CU);
        b.y0 = e * (RAMP_HIDDEN / V2_CU) + V2_P2_CHUNK(slice) * (RAMP_MV2_CHUNK / V2_CU);
        b.y1 = b.y0 + 128 / V2_CU;
    } else
#endif
    if (st < V2_PASSES * V2_KBL) {
        const int p = st / V2_KBL, kb = V2_UP_KB(st);
        b.map = &maps.w13;
        b.w2 = 0;
        b.x = kb * (V2_KE / V2_CU);
        b.y0 = e * (2 * RAMP_INTER / V2_CU) + V2_UP_SLICE(slice) * (RAMP_WIDTH / V2_CU) +
               p * (128 / V2_CU);
        b.y1 = b.y0 + RAMP_INTER / V2_CU;
    } else {
        const int ds = st - V2_PASSES * V2_KBL;
        const int chunk = v2_dpart() * V2_CHL + ds / V2_DKB;
        b.map = &maps.w2;
        b.w2 = 1;
        b.x = V2_DN_COL(slice) / V2_CU + (ds % V2_DKB) * (V2_KE / V2_CU);
        b.y0 = e * (RAMP_HIDDEN / V2_CU) + chunk * (RAMP_MV2_CHUNK / V2_CU);
        b.y1 = b.y0 + 128 / V2_CU;
    }
    return b;
}

/* One box of map at (x, y) (units of V2_CU) into dst; pre-tiled: the block
 * (0, 0, x, y) of the 4-D map. */
static __device__ __forceinline__ void v2_tma_box(unsigned dst, const hop_tensormap *map,
                                                  unsigned bar, int x, int y) {
#if RAMP_MV2_TILED == 2 /* K block-major: the map's outer dimensions are row block, K block */
    hop_tma_load_4d(dst, map, bar, 0, 0, y, x);
#elif RAMP_MV2_TILED
    hop_tma_load_4d(dst, map, bar, 0, 0, x, y);
#else
    hop_tma_load_2d(dst, map, bar, x, y);
#endif
}
static __device__ __forceinline__ void v2_tma_prefetch_box(const hop_tensormap *map, int x, int y) {
#if RAMP_MV2_TILED == 2
    hop_tma_prefetch_l2_4d(map, 0, 0, y, x);
#elif RAMP_MV2_TILED
    hop_tma_prefetch_l2_4d(map, 0, 0, x, y);
#else
    hop_tma_prefetch_l2_2d(map, x, y);
#endif
}

/* Bytes the TMA unit writes into a slot for stage st beside the weights:
 * with RAMP_MV2_TMA_X the up stages' token rows (phases 0 and 1). */
#if RAMP_MV2_TMA_X && V2_WIDE && RAMP_MV2_PHASE != 2 && !V2_DIAG_NO_GATHER
#define V2_TMA_X_ON 1
#define V2_TMA_H_ON 0
#define V2_TOK_TX(st) ((st) < V2_PASSES * V2_KBL ? (unsigned)(V2_N * RAMP_MV2_KB) : 0u)
#elif RAMP_MV2_TMA_X == 1 && V2_WIDE && RAMP_MV2_PHASE == 2 && !V2_DIAG_NO_GATHER
/* phase 2: the intermediate rows, already in tile order in prm.ws, as one
 * box of maps.h per stage */
#define V2_TMA_X_ON 0
#define V2_TMA_H_ON 1
#define V2_TOK_TX(st) ((unsigned)(V2_N * RAMP_MV2_KB))
#else
#define V2_TMA_X_ON 0
#define V2_TMA_H_ON 0
#define V2_TOK_TX(st) 0u
#endif

/* Thread 0: the weights of tile-local stage st into ring slot s, their
 * bytes (and V2_TOK_TX's) announced on full[s] (DIAG 3, 6, 8: no weights). */
static __device__ __forceinline__ void v2_load_weights(const ramp_moe_params &prm,
                                                       const ramp_moe_v2_maps &maps,
                                                       unsigned char *sm, int st, int e,
                                                       int slice, int s, int mc) {
    const unsigned slot = hop_smem(sm) + s * (unsigned)V2_LAYOUT.slot_bytes;
    const unsigned full = hop_smem(sm + V2_LAYOUT.bars) + 8 * s;
#if V2_DIAG_NO_LOADS
    (void)prm; (void)maps; (void)st; (void)e; (void)slice; (void)slot; (void)mc;
    if (V2_TOK_TX(st)) hop_mbar_arrive_expect_tx(full, V2_TOK_TX(st));
    else hop_mbar_arrive(full);
#else
    const v2_box b = v2_stage_box(maps, st, e, slice);
    hop_mbar_arrive_expect_tx(full, RAMP_MV2_A_BYTES + V2_TOK_TX(st));
#if RAMP_MV2_TILED == 3 /* the stage's 32 KB unit, stored as its shared-memory image */
    /* (K blocks of 128 bytes: V2_KE elements) */
    const unsigned long long unit =
        b.w2 ? ((unsigned long long)e * (RAMP_HIDDEN / RAMP_MV2_CHUNK) +
                (b.y0 - e * RAMP_HIDDEN) / RAMP_MV2_CHUNK) * (RAMP_INTER / V2_KE) + b.x / V2_KE
             : ((unsigned long long)e * (RAMP_INTER / 128) + (b.y0 - e * 2 * RAMP_INTER) / 128) *
                       (RAMP_HIDDEN / V2_KE) + b.x / V2_KE;
    const unsigned long long src = (b.w2 ? prm.w2 : prm.w13) + unit * RAMP_MV2_A_BYTES;
#if V2_MC > 1
    if (mc) { /* half k of the unit (box k's image) from here into both CTAs' slot */
        const unsigned k = hop_cluster_rank(), half = RAMP_MV2_A_BYTES / 2;
        hop_bulk_load_mc(slot + k * half, src + k * half, half, full, (unsigned short)3);
        return;
    }
#else
    (void)mc;
#endif
    hop_bulk_load(slot, src, RAMP_MV2_A_BYTES, full);
    return;
#else
    (void)prm;
#endif
#if V2_MC > 1
    if (mc) { /* box k from here into both CTAs' slot; the other from the partner */
        const unsigned k = hop_cluster_rank();
        hop_tma_load_2d_mc(slot + k * (RAMP_MV2_A_BYTES / 2), b.map, full, b.x, k ? b.y1 : b.y0,
                           (unsigned short)3);
        return;
    }
#else
    (void)mc;
#endif
#if RAMP_MV2_W2BOX256 /* W2's rows y0 .. y0 + 255 as one box (the map's box is 256 rows) */
    if (b.w2) {
        v2_tma_box(slot, b.map, full, b.x, b.y0);
        return;
    }
#endif
    v2_tma_box(slot, b.map, full, b.x, b.y0);
    v2_tma_box(slot + RAMP_MV2_A_BYTES / 2, b.map, full, b.x, b.y1);
#endif
}

/* Thread 0: stage st's weights into L2 ahead of their ring slot (with
 * multicast, mc, only this CTA's box: the partner asks for the other). */
static __device__ __forceinline__ void v2_prefetch(const ramp_moe_v2_maps &maps, int st, int e,
                                                   int slice, int mc) {
#if !V2_DIAG_NO_LOADS
    const v2_box b = v2_stage_box(maps, st, e, slice);
#if V2_MC > 1
    if (mc) {
        v2_tma_prefetch_box(b.map, b.x, hop_cluster_rank() ? b.y1 : b.y0);
        return;
    }
#else
    (void)mc;
#endif
    v2_tma_prefetch_box(b.map, b.x, b.y0);
#if RAMP_MV2_W2BOX256
    if (b.w2) return; /* the box above held all 256 rows */
#endif
    v2_tma_prefetch_box(b.map, b.x, b.y1);
#else
    (void)maps; (void)st; (void)e; (void)slice; (void)mc;
#endif
}

/* Every producer thread its share of stage st's cp.asyncs into slot s: up
 * stages the N token rows' K block into the SW128 B tile (padding rows:
 * zero fill), their x_scale, the gate and up block scales; down stages the
 * two consumers' W2 block scales. */
static __device__ __forceinline__ void v2_gather(const ramp_moe_params &prm,
                                                 const ramp_moe_v2_maps &maps, unsigned char *sm,
                                                 int st, int e, int slice, int s, int r) {
    (void)maps;
#if V2_DIAG_NO_GATHER
    (void)prm; (void)sm; (void)st; (void)e; (void)slice; (void)s; (void)r;
#else
    const int t = threadIdx.x;
    const unsigned slot = hop_smem(sm) + s * (unsigned)V2_LAYOUT.slot_bytes;
    const int *tok = (const int *)(sm + V2_LAYOUT.tok);
    (void)r;
#if RAMP_MV2_PHASE == 2
    if (1) { /* row tile r's intermediate rows n, K block st of h */
        const ramp_moe_v2_ws_layout wl =
            ramp_moe_v2_ws_layout_rows(0, RAMP_ROWS, RAMP_INTER, RAMP_MV2_BF16);
        const unsigned char *ib = (const unsigned char *)prm.ws + (size_t)r * wl.tile;
        const float *is = (const float *)(ib + wl.iscale);
        const int kb = V2_P2_KB(slice, st);
        const unsigned sb = slot + (unsigned)V2_LAYOUT.slot_b;
#if V2_TMA_H_ON /* all 128 rows (padding rows: phase 1's zeros) */
        if (t == 0) hop_tma_load_3d(sb, &maps.h, hop_smem(sm + V2_LAYOUT.bars) + 8 * s,
                                    kb * (RAMP_MV2_KB / V2_EB), 0, r);
#else
#pragma unroll
        for (int i = t; i < V2_N * 8; i += 128) {
            const int n = i >> 3, ch = i & 7;
            const int ok = tok[n] >= 0;
            const unsigned char *src =
                ok ? ib + (size_t)n * (RAMP_INTER * V2_EB) + kb * RAMP_MV2_KB + ch * 16 : ib;
            hop_cp16(sb + hop_swz128(n, ch), src, ok ? 16 : 0);
        }
#endif
#if RAMP_MV2_BF16 /* no scales */
        (void)is; (void)e;
#else
        if (t < V2_N) {
            const int ok = tok[t] >= 0;
            const float *src = ok ? is + t * V2_HKB + kb : is;
            v2_cp4(slot + (unsigned)V2_LAYOUT.slot_xs + 4 * t, src, ok ? 4 : 0);
        }
        if (t >= 126) { /* W2 block scales of the chunk's two 128-row halves */
            const int c = t - 126;
            const float *src = (const float *)prm.w2_scale +
                               ((size_t)e * (RAMP_HIDDEN / 128) + V2_P2_CHUNK(slice) * 2 + c) * V2_HKB +
                               kb;
            v2_cp4(slot + (unsigned)V2_LAYOUT.slot_wsc + 4 * c, src, 4);
        }
#endif
    } else
#endif
    if (st < V2_PASSES * V2_KBL) {
        const int p = st / V2_KBL, kb = V2_UP_KB(st);
        const int col = V2_UP_SLICE(slice) * RAMP_WIDTH + p * 128; /* first intermediate column */
        const unsigned char *x = (const unsigned char *)prm.x;
        const unsigned sb = slot + (unsigned)V2_LAYOUT.slot_b;
#if V2_TMA_X_ON && RAMP_MV2_DIAG == 9 /* maps.x's box: 128 rows */
        (void)x;
        if (t == 0) hop_tma_load_2d(sb, &maps.x, hop_smem(sm + V2_LAYOUT.bars) + 8 * s,
                                    kb * (RAMP_MV2_KB / V2_EB), 0);
#elif V2_TMA_X_ON && RAMP_MV2_TMA_X == 1 /* the tile's rows of the copy in tile order */
        (void)x;
        if (t == 0) hop_tma_load_2d(sb, &maps.x, hop_smem(sm + V2_LAYOUT.bars) + 8 * s,
                                    kb * (RAMP_MV2_KB / V2_EB), r * 128);
#elif V2_TMA_X_ON /* one row per thread (V2_N = 128), into full[s] */
        (void)x;
        hop_tma_load_2d(sb + t * HOP_ROW_BYTES, &maps.x, hop_smem(sm + V2_LAYOUT.bars) + 8 * s,
                        kb * (RAMP_MV2_KB / V2_EB), tok[t] >= 0 ? tok[t] / RAMP_TOPK : 0);
#else
#pragma unroll
        for (int i = t; i < V2_N * 8; i += 128) {
            const int n = i >> 3, ch = i & 7, sl = tok[n];
            const unsigned char *src =
                sl >= 0 ? x + (size_t)(sl / RAMP_TOPK) * (RAMP_HIDDEN * V2_EB) + kb * RAMP_MV2_KB +
                              ch * 16
                        : x;
            hop_cp16(sb + hop_swz128(n, ch), src, sl >= 0 ? 16 : 0);
        }
#endif
#if RAMP_MV2_BF16 /* no scales */
        (void)e; (void)col;
#else
        if (t < V2_N) { /* (every producer thread of a wide tile) */
            const int sl = tok[t];
            const float *xs = (const float *)prm.x_scale;
            const float *src =
                sl >= 0 ? xs + (size_t)(sl / RAMP_TOPK) * (RAMP_HIDDEN / 128) + kb : xs;
            v2_cp4(slot + (unsigned)V2_LAYOUT.slot_xs + 4 * t, src, sl >= 0 ? 4 : 0);
        }
        if (t >= 126) { /* 126: gate block scale, 127: up */
            const int row = (t == 127 ? RAMP_INTER : 0) + col;
            const float *src = (const float *)prm.w13_scale +
                               ((size_t)e * (2 * RAMP_INTER / 128) + row / 128) * (RAMP_HIDDEN / 128) +
                               kb;
            v2_cp4(slot + (unsigned)V2_LAYOUT.slot_wsc + 4 * (t - 126), src, 4);
        }
#endif
    } else if (!RAMP_MV2_BF16 && t >= 126) { /* consumer c's rows row + 128c .. +127: one scale block */
        const int ds = st - V2_PASSES * V2_KBL;
        const int row = (v2_dpart() * V2_CHL + ds / V2_DKB) * RAMP_MV2_CHUNK; /* first row of d */
        const int hcol = V2_DN_COL(slice) + (ds % V2_DKB) * 128; /* column of h */
        const int c = t - 126;
        const float *src = (const float *)prm.w2_scale +
                           ((size_t)e * (RAMP_HIDDEN / 128) + row / 128 + c) * (RAMP_INTER / 128) +
                           hcol / 128;
        v2_cp4(slot + (unsigned)V2_LAYOUT.slot_wsc + 4 * c, src, 4);
    }
#endif
}

/* Thread 0, before the tile's token slots are known (they need a block
 * barrier and a global load first): the weights of the first V2_HEAD
 * stages into their slots, each once the consumers released it (the
 * previous tile's last stages; this overlaps its tail), and the L2
 * prefetch of stages V2_HEAD .. RAMP_MV2_PF - 1. `it` = the block's stage count
 * at the tile's start. */
static __device__ __forceinline__ void v2_producer_head(const ramp_moe_params &prm,
                                                        const ramp_moe_v2_maps &maps,
                                                        unsigned char *sm, int e, int slice,
                                                        int it, int mc, int early V2_SKP) {
    if (threadIdx.x != 0) return;
    const unsigned empty = hop_smem(sm + V2_LAYOUT.bars) + 8 * V2_S;
    for (int st = early ? V2_HEAD : 0; st < V2_HEAD; st++) {
        const int i = it + st, s = i % V2_S;
        if (i >= V2_S) v2_wait_empty(empty + 8 * s, (i / V2_S - 1) & 1);
        v2_load_weights(prm, maps, sm, st, e, slice, s, mc);
        if (i == 0) RAMP_TL(0, V2_TL_IDX, 6); /* the block's first weights requested */
    }
#if RAMP_MV2_PF > 0
    for (int st = V2_HEAD; st < RAMP_MV2_PF && st < V2_NST; st++) v2_prefetch(maps, st, e, slice, mc);
#endif
}

/* The producer warpgroup: every stage of one tile through the ring after
 * v2_producer_head; `it` counts stages over the block's tiles (the ring's
 * phases run on). Slots of the head stages were waited for by thread 0
 * before the tile's block barriers, which order that wait before the other
 * threads' writes. Each thread's cp.asyncs of a stage arrive on full[slot]
 * by themselves when they land (cp.async.mbarrier.arrive.noinc), so the
 * producer never waits for its own copies and keeps up to S stages in
 * flight, plus up to RAMP_MV2_PF more in L2 by prefetch; the consumers fence
 * the generic-proxy writes for wgmma after their wait (ramp_wgmma_test's
 * scheme, bit-exact on the H200). (Waiting with cp.async.wait_group before an
 * ordinary arrival, ramp_wgmma_test_ws's scheme, held the producer to about
 * one stage per load latency: ~25-35 GB/s per block, measured 2026-11-30.) */
static __device__ __forceinline__ void v2_producer(const ramp_moe_params &prm,
                                                   const ramp_moe_v2_maps &maps,
                                                   unsigned char *sm, int e, int slice, int r,
                                                   int mc, int &it V2_SKP) {
    const unsigned full = hop_smem(sm + V2_LAYOUT.bars), empty = full + 8 * V2_S;
    for (int st = 0; st < V2_NST; it++, st++) {
        const int s = it % V2_S;
        if (st >= V2_HEAD) {
            v2_wait_empty(empty + 8 * s, (it / V2_S - 1) & 1);
            if (threadIdx.x == 0) v2_load_weights(prm, maps, sm, st, e, slice, s, mc);
        }
#if RAMP_MV2_PF > 0
        if (threadIdx.x == 0 && st + RAMP_MV2_PF < V2_NST && st + RAMP_MV2_PF >= V2_HEAD)
            v2_prefetch(maps, st + RAMP_MV2_PF, e, slice, mc);
#endif
        v2_gather(prm, maps, sm, st, e, slice, s, r);
        hop_cp_arrive_noinc(full + 8 * s);
    }
}

/* ------------------------------------------------------------ consumers */

/* Timing diagnostics 1-3: the tile's stages waited for and released, no
 * math. */
static __device__ __forceinline__ void v2_consumer_diag(unsigned char *sm, int &it V2_SKP) {
    const unsigned full = hop_smem(sm + V2_LAYOUT.bars), empty = full + 8 * V2_S;
    for (int st = 0; st < V2_NST; st++, it++) {
        const int s = it % V2_S;
        hop_mbar_wait(full + 8 * s, (it / V2_S) & 1);
        v2_release(empty + 8 * s);
    }
}

#if V2_WIDE
#include "moe_v2_wide.cuh"
#else

#if V2_KS > 1
/* Split-K: this CTA summed half of the pass's K blocks into accg, accu, its
 * partner (cluster rank ^ 1) the other half. Each sends its partial sums
 * into the other's xbuf with st.async (thread-major float4s: no bank
 * conflicts), each store completing its bytes on the receiver's xfull,
 * whose thread 0 announced the bytes it expects (one arrival): the data
 * arrive as a TMA load's do, with no fence or barrier on the sending side.
 * Each then waits on its own xfull and adds what it received, so both hold
 * the whole sums, bit for bit alike (a + b == b + a in f32). xempty, which
 * the partner arrives on (one thread, cluster-scope release, after a
 * consumer barrier) once all its consumers have read, keeps the next
 * exchange from overwriting xbuf early. xu = the block's exchange count
 * (phase parity). (Session 12's first version stored with st.shared::cluster
 * and released after a consumer barrier: ~3 us per pass, moe_v2.md.) */
static __device__ __forceinline__ void v2_ks_exchange(unsigned char *sm, float *accg, float *accu,
                                                      int xu) {
    const int ct = threadIdx.x - 128; /* consumer thread 0..255 */
    const unsigned peer = hop_cluster_rank() ^ 1u;
    const unsigned xbuf = hop_smem(sm + V2_LAYOUT.xbuf);
    const unsigned xfull = hop_smem(sm + V2_LAYOUT.xbars), xempty = xfull + 8;
    if (ct == 0) hop_mbar_arrive_expect_tx(xfull, 256u * V2_N * 4u); /* the partner's sums */
    if (xu > 0) hop_mbar_wait_cluster(xempty, (xu - 1) & 1);
    const unsigned dst = hop_mapa(xbuf, peer), bar = hop_mapa(xfull, peer);
#pragma unroll
    for (int i = 0; i < V2_ACC; i += 4) {
        hop_st_async_v4(dst + 16u * ((i / 4) * 256 + ct), accg[i], accg[i + 1], accg[i + 2],
                        accg[i + 3], bar);
        hop_st_async_v4(dst + 16u * ((V2_ACC / 4 + i / 4) * 256 + ct), accu[i], accu[i + 1],
                        accu[i + 2], accu[i + 3], bar);
    }
    hop_mbar_wait_cluster(xfull, xu & 1);
    const float4 *in = (const float4 *)(sm + V2_LAYOUT.xbuf);
#pragma unroll
    for (int i = 0; i < V2_ACC; i += 4) {
        const float4 g = in[(i / 4) * 256 + ct], u = in[(V2_ACC / 4 + i / 4) * 256 + ct];
        accg[i] += g.x; accg[i + 1] += g.y; accg[i + 2] += g.z; accg[i + 3] += g.w;
        accu[i] += u.x; accu[i + 1] += u.y; accu[i + 2] += u.z; accu[i + 3] += u.w;
    }
    V2_CONSUMER_SYNC(); /* every consumer's reads before xbuf is released */
    if (ct == 0) hop_mbar_arrive_remote(hop_mapa(xempty, peer));
}
#endif

#if V2_CG > 1
/* The cluster gather (RAMP_MV2_CGATHER). gfull (xbars) completes when the
 * C - 1 peers' intermediates of the block's tile xu have landed here: this
 * CTA's consumer thread 0 announces their bytes (one arrival), each peer's
 * bulk copies complete them. gempty (xbars + 8) completes when every peer
 * has finished the down projection of the tile before (C - 1 arrivals), so
 * that nothing here is rewritten while a peer reads its copy, and the
 * copies this CTA sent then are done reading its own block. */
#define V2_CG_TILE_BYTES (V2_PASSES * V2_ITILE)
#define V2_CG_SCALE_BYTES (V2_N * V2_PASSES * 4)
#if V2_CGG
/* Through global memory (RAMP_MV2_GGATHER): tile (r, group) owns G blocks
 * of prm.ws (moe_v2_params.h, ramp_moe_v2_gg_ws) and two counters of
 * prm.ws_count, arrivals and readers; the last reader zeroes both for the
 * next launch.
 * Nothing in shared memory is written by a peer, so no wait before the
 * next tile rewrites this CTA's block and no release after it. */
static __device__ __forceinline__ void v2_cg_wait_free(unsigned char *sm, int xu) {
    (void)sm; (void)xu;
}
static __device__ __forceinline__ void v2_cg_gather(const ramp_moe_params &prm,
                                                    unsigned char *sm, int xu, int r,
                                                    int slice) {
    (void)xu;
    const ramp_moe_v2_gg_ws gw = ramp_moe_v2_gg_ws_of(prm.max_tiles, V2_N, RAMP_WIDTH,
                                                      RAMP_INTER, V2_CG);
    const long long tile = (long long)r * (V2_SLICES / V2_CG) + slice;
    unsigned char *grp = (unsigned char *)prm.ws + tile * gw.group;
    unsigned *cnt = (unsigned *)prm.ws_count + 2 * tile;
    unsigned char *inter = sm + V2_LAYOUT.inter, *isc = sm + V2_LAYOUT.iscale;
    const int rank = v2_crank(), lt = (int)threadIdx.x - 128; /* consumer threads 0..255 */
    /* this CTA's block out (v2_act_quant wrote it, behind a consumer barrier) */
    uint4 *mine = (uint4 *)(grp + rank * gw.block);
    for (int i = lt; i < V2_CG_TILE_BYTES / 16; i += 256)
        __stcg(mine + i, ((const uint4 *)(inter + rank * V2_CG_TILE_BYTES))[i]);
    for (int i = lt; i < V2_CG_SCALE_BYTES / 16; i += 256)
        __stcg(mine + V2_CG_TILE_BYTES / 16 + i,
               ((const uint4 *)(isc + rank * V2_CG_SCALE_BYTES))[i]);
    V2_CONSUMER_SYNC(); /* every thread's stores, then one fence and the count */
    if (lt == 0) {
        __threadfence();
        atomicAdd(cnt, 1u);
        unsigned n;
        do
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(n) : "l"(cnt) : "memory");
        while (n < (unsigned)V2_CG);
    }
    V2_CONSUMER_SYNC();
    /* the peers' blocks in, every 16 bytes in flight at once (cp.async: L2,
     * no stale line from an earlier launch): item i of peer rank + 1 + i / B
     * is its tile's 16 bytes i % B, or its scales' past the tile */
    enum { TB = V2_CG_TILE_BYTES / 16, B = (V2_CG_TILE_BYTES + V2_CG_SCALE_BYTES) / 16 };
#pragma unroll
    for (int i = lt; i < (V2_CG - 1) * B; i += 256) {
        const int peer = (rank + 1 + i / B) % V2_CG, j = i % B;
        const unsigned dst = j < TB ? hop_smem(inter + peer * V2_CG_TILE_BYTES) + 16 * j
                                    : hop_smem(isc + peer * V2_CG_SCALE_BYTES) + 16 * (j - TB);
        hop_cp16(dst, grp + peer * gw.block + 16 * j, 16);
    }
    hop_cp_commit();
    HOP_CP_WAIT(0);
    hop_fence_proxy_async(); /* the cp.async bytes, read next by wgmma */
    V2_CONSUMER_SYNC();
    if (lt == 0 && atomicAdd(cnt + 1, 1u) == (unsigned)V2_CG - 1) {
        atomicExch(cnt, 0u); /* every peer is past its wait: the counters are free */
        atomicExch(cnt + 1, 0u);
    }
}
static __device__ __forceinline__ void v2_cg_release(unsigned char *sm) { (void)sm; }
#else
/* Before the tile's first v2_act_quant rewrites this CTA's block (its
 * opening consumer barrier orders the other threads after this wait). */
static __device__ __forceinline__ void v2_cg_wait_free(unsigned char *sm, int xu) {
    if (threadIdx.x == 128 && xu > 0)
        hop_mbar_wait(hop_smem(sm + V2_LAYOUT.xbars) + 8, (xu - 1) & 1);
}
/* After the tile's last v2_act_quant (its block written and fenced for the
 * async proxy, behind a consumer barrier): the block copied into every
 * peer's, then the wait for the peers' blocks. */
static __device__ __forceinline__ void v2_cg_gather(const ramp_moe_params &prm,
                                                    unsigned char *sm, int xu, int r,
                                                    int slice) {
    (void)prm; (void)r; (void)slice;
    const unsigned gfull = hop_smem(sm + V2_LAYOUT.xbars);
    if (threadIdx.x == 128) {
        const unsigned rank = hop_cluster_rank();
        const unsigned st = hop_smem(sm + V2_LAYOUT.inter) + rank * V2_CG_TILE_BYTES;
        const unsigned ss = hop_smem(sm + V2_LAYOUT.iscale) + rank * V2_CG_SCALE_BYTES;
        hop_mbar_arrive_expect_tx(gfull, (V2_CG - 1) * (V2_CG_TILE_BYTES + V2_CG_SCALE_BYTES));
#pragma unroll
        for (int q = 1; q < V2_CG; q++) {
            const unsigned peer = (rank + q) % V2_CG, bar = hop_mapa(gfull, peer);
            hop_bulk_s2s(hop_mapa(st, peer), st, V2_CG_TILE_BYTES, bar);
            hop_bulk_s2s(hop_mapa(ss, peer), ss, V2_CG_SCALE_BYTES, bar);
        }
    }
    hop_mbar_wait(gfull, xu & 1);
}
/* After the tile's down projection: every consumer done reading the
 * gathered blocks (wgmma complete, the scales loaded), so each peer may
 * write its next block here. Relaxed: there is no write of this CTA's for
 * the peer to see (as the multicast ring's remote release). */
static __device__ __forceinline__ void v2_cg_release(unsigned char *sm) {
    V2_CONSUMER_SYNC();
    if (threadIdx.x == 128) {
        const unsigned rank = hop_cluster_rank(), gempty = hop_smem(sm + V2_LAYOUT.xbars) + 8;
#pragma unroll
        for (int q = 1; q < V2_CG; q++)
            hop_mbar_arrive_remote_relaxed(hop_mapa(gempty, (rank + q) % V2_CG));
    }
}
#endif /* V2_CGG */
#endif

/* tmp[V2_ACC] = A (SW128 tile at sa, 64 rows) . B (at sb)^T over one
 * 128-byte K block: four k32 wgmmas, the first overwriting (scale-d = 0). */
static __device__ __forceinline__ void v2_mma_kblock(float *tmp, unsigned sa, unsigned sb) {
#pragma unroll
    for (int k4 = 0; k4 < RAMP_MV2_KB / HOP_WGMMA_K_BYTES; k4++)
        V2_MMA(tmp, hop_desc_sw128(sa + k4 * HOP_WGMMA_K_BYTES),
               hop_desc_sw128(sb + k4 * HOP_WGMMA_K_BYTES), k4 > 0);
}

/* a = SiLU(gate) * up * the token's router weight for each accumulator, in
 * the reference's order of operations (src/moe_ref.c; SiLU: common.cuh's
 * ramp_silu), for FP8 and BF16. */
static __device__ __forceinline__ void v2_swiglu(const float *accg, const float *accu,
                                                 const float *rw, int t, float *a) {
#pragma unroll
    for (int i = 0; i < V2_ACC; i++) {
        const float gt = accg[i], up = accu[i];
        const float silu = ramp_silu(gt);
        a[i] = silu * up * rw[V2_TOKEN(i, t)];
    }
}

/* SiLU(gate) * up * rw, quantized per token over the pass's 128 columns
 * (both consumers' 64 each) into intermediate tile p. Ends with the
 * intermediate tile written and fenced for the async proxy, and the amax
 * scratch free again (two consumer barriers). */
static __device__ __forceinline__ void v2_act_quant(unsigned char *sm, const float *accg,
                                                    const float *accu, int p, int c) {
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) & 3;
    const int g = lane >> 2, t = lane & 3;
    const float *rw = (const float *)(sm + V2_LAYOUT.rw);
    float *amax = (float *)(sm + V2_LAYOUT.amax);
    float *iscale = (float *)(sm + V2_LAYOUT.iscale);
    if (p == 0) V2_CONSUMER_SYNC(); /* rw, stored by consumer 0 at the tile's start */
    float a[V2_ACC];
    v2_swiglu(accg, accu, rw, t, a);
    /* per-token maxima: this thread's 2 rows, then the 8 g lanes of the warp */
#pragma unroll
    for (int j = 0; j < V2_N / 8; j++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            float m = fmaxf(fabsf(a[4 * j + e]), fabsf(a[4 * j + 2 + e]));
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 4));
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 8));
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 16));
            if (g == 0) amax[(8 * j + 2 * t + e) * 8 + c * 4 + w] = m;
        }
    V2_CONSUMER_SYNC();
    const unsigned tile = hop_smem(sm + V2_LAYOUT.inter) + (v2_crank() * V2_PASSES + p) * V2_ITILE;
    const int r0 = c * 64 + 16 * w + g; /* column in the 128-column group */
#pragma unroll
    for (int j = 0; j < V2_N / 8; j++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int n = 8 * j + 2 * t + e;
            /* the token's 8 warp maxima, contiguous: two 16-byte loads
             * (eight 4-byte ones and their code, per token, before) */
            const float4 lo = *(const float4 *)(amax + n * 8);
            const float4 hi = *(const float4 *)(amax + n * 8 + 4);
            float m = fmaxf(fmaxf(fmaxf(lo.x, lo.y), fmaxf(lo.z, lo.w)),
                            fmaxf(fmaxf(hi.x, hi.y), fmaxf(hi.z, hi.w)));
            m = fmaxf(m, RAMP_FP8_AMAX_MIN);
            float inv;
            const float s = ramp_fp8_scale(m, &inv);
            const unsigned q = ramp_e4m3x2(a[4 * j + e] * inv, a[4 * j + 2 + e] * inv);
            v2_st_u8(tile + hop_swz128(n, r0 >> 4) + (r0 & 15), q & 0xFFu);
            v2_st_u8(tile + hop_swz128(n, (r0 + 8) >> 4) + ((r0 + 8) & 15), q >> 8);
            if (c == 0 && w == 0 && g == 0) iscale[V2_ISC(n, v2_crank() * V2_PASSES + p)] = s;
        }
    hop_fence_proxy_async(); /* generic stores, read next by wgmma */
    V2_CONSUMER_SYNC();      /* tile complete; amax free for the next pass */
}

/* Up stage `it` (K block of a pass): waits for its slot, reads its scales
 * into registers (xsc: the thread's tokens' x_scale; wg, wu: the gate and up
 * block scales), issues consumer c's gate and up wgmmas into tg, tu and
 * commits them as one group. */
static __device__ __forceinline__ void v2_up_issue(unsigned char *sm, int c, int it, float *tg,
                                                   float *tu, float *xsc, float &wg, float &wu) {
    const int t = threadIdx.x & 3, s = it % V2_S;
    hop_mbar_wait(hop_smem(sm + V2_LAYOUT.bars) + 8 * s, (it / V2_S) & 1);
    if (it == 0) RAMP_TL(128, V2_TL_IDX, 7); /* the block's first stage landed */
    hop_fence_proxy_async(); /* the producer's cp.async B tile, read by wgmma */
    const unsigned slot = hop_smem(sm) + s * (unsigned)V2_LAYOUT.slot_bytes;
    const unsigned char *sp = sm + s * V2_LAYOUT.slot_bytes;
    const float *xs = (const float *)(sp + V2_LAYOUT.slot_xs);
    wg = ((const float *)(sp + V2_LAYOUT.slot_wsc))[0];
    wu = ((const float *)(sp + V2_LAYOUT.slot_wsc))[1];
#pragma unroll
    for (int j = 0; j < V2_N / 8; j++) {
        xsc[2 * j] = xs[8 * j + 2 * t];
        xsc[2 * j + 1] = xs[8 * j + 2 * t + 1];
    }
    hop_wgmma_fence();
    v2_mma_kblock(tg, slot + c * 8192, slot + (unsigned)V2_LAYOUT.slot_b);
    v2_mma_kblock(tu, slot + 16384 + c * 8192, slot + (unsigned)V2_LAYOUT.slot_b);
    hop_wgmma_commit();
}

/* After the wait for up stage `it`'s group: its slot released (the
 * producer may refill it), the partial sums promoted into accg, accu. */
static __device__ __forceinline__ void v2_up_finish(unsigned char *sm, int it, float *tg,
                                                    float *tu, const float *xsc, float wg,
                                                    float wu, float *accg, float *accu) {
    HOP_ACC_FENCE(tg, V2_ACC);
    HOP_ACC_FENCE(tu, V2_ACC);
    v2_release(hop_smem(sm + V2_LAYOUT.bars) + 8 * V2_S + 8 * (it % V2_S));
#pragma unroll
    for (int i = 0; i < V2_ACC; i++) {
        const float x = xsc[V2_TIDX(i)];
        accg[i] += tg[i] * (wg * x);
        accu[i] += tu[i] * (wu * x);
    }
}

/* The slot ids of this thread's V2_TPT tokens (columns 8j + 2t, + 1 of its
 * accumulators), read once for a tile's down projection. */
static __device__ __forceinline__ void v2_thread_slots(const int *tok, int t, int *slots) {
#pragma unroll
    for (int j = 0; j < V2_N / 8; j++) {
        slots[2 * j] = tok[8 * j + 2 * t];
        slots[2 * j + 1] = tok[8 * j + 2 * t + 1];
    }
#if RAMP_MV2_BULKRED
    const int lt = threadIdx.x & 127;
    slots[V2_TPT] = lt < V2_N ? tok[lt] : -1;
#endif
}

/* Down stage `it` (tile-local down stage ds = chunk * V2_DKB + kk): waits
 * for its slot, the factors f = W2 block scale x the tokens' intermediate
 * scales of K block kk, consumer c's two m-tiles of W2 rows . I_kk issued
 * into t0, t1 as one group. */
static __device__ __forceinline__ void v2_dn_issue(unsigned char *sm, int c, int it, int ds,
                                                   float *t0, float *t1, float *f) {
    const int t = threadIdx.x & 3, s = it % V2_S, kk = ds % V2_DKB;
    hop_mbar_wait(hop_smem(sm + V2_LAYOUT.bars) + 8 * s, (it / V2_S) & 1);
    const unsigned slot = hop_smem(sm) + s * (unsigned)V2_LAYOUT.slot_bytes;
    const float ws = ((const float *)(sm + s * V2_LAYOUT.slot_bytes + V2_LAYOUT.slot_wsc))[c];
    const float *iscale = (const float *)(sm + V2_LAYOUT.iscale);
#pragma unroll
    for (int j = 0; j < V2_N / 8; j++) {
        f[2 * j] = ws * iscale[V2_ISC(8 * j + 2 * t, kk)];
        f[2 * j + 1] = ws * iscale[V2_ISC(8 * j + 2 * t + 1, kk)];
    }
    const unsigned sb = hop_smem(sm + V2_LAYOUT.inter) + kk * V2_ITILE;
    hop_wgmma_fence();
    v2_mma_kblock(t0, slot + c * 16384, sb);
    v2_mma_kblock(t1, slot + c * 16384 + 8192, sb);
    hop_wgmma_commit();
}

/* Fused down stage ds (chunk * V2_DKB + kk) of block stage `it`: its chunk
 * of d, and the bulk reductions' staging: the two alternate over the
 * block's chunks (tile it / V2_NST). */
static __device__ __forceinline__ int v2_dn_chunk(int ds) {
    return v2_dpart() * V2_CHL + ds / V2_DKB;
}
static __device__ __forceinline__ int v2_dn_buf(int it, int ds) {
#if V2_SK || V2_P2U /* fused tiles only (compiled, not called, in phase 2) */
    (void)it; (void)ds;
    return 0;
#else
    return ((it / V2_NST) * V2_CHL + ds / V2_DKB) & 1;
#endif
}

/* After the last K block of down chunk `chunk` (of d, 256 rows each):
 * consumer c's rows of it added into out (red.global.add.v4.f32 after a
 * lane transpose with RAMP_MV2_OUT4, the default; .v4.f32 from a thread's
 * own rows with RAMP_MV2_RED4; bulk reductions with RAMP_MV2_BULKRED from
 * staging `buf`, 0 or 1; else one red.global.add.f32 per value) and the
 * accumulators cleared. */
static __device__ __forceinline__ void v2_dn_out(const ramp_moe_params &prm, unsigned char *sm,
                                                 int c, int buf, int chunk, int part, float *acc0,
                                                 float *acc1, const int *slots) {
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) & 3;
    float *out = (float *)prm.out;
    (void)sm;
    (void)buf;
    (void)part;
    (void)out;
#if RAMP_MV2_DET && (RAMP_MV2_BULKRED || RAMP_MV2_RED4)
#error "RAMP_MV2_DET: the threads' stores (narrow phase 2) only, not bulk or red4"
#endif
#if RAMP_MV2_BULKRED
    /* stage token n's 128 rows at stg + n * stride (row 16 w + g + 8 hh,
     * + 64 for acc1), then thread n adds them with one bulk reduction. Two
     * stagings, alternating over the block's chunks (v2_dn_buf): one is
     * rewritten only after the reductions of two chunks before have read
     * it. Each issuer commits one bulk group per chunk (empty where its
     * token is padding), so waiting until at most one is left reading
     * (wait_group.read 1) covers exactly that chunk; then the warpgroup's
     * barrier. */
    const int lt = threadIdx.x & 127, t = lane & 3, g = lane >> 2;
    const unsigned stg = hop_smem(sm + V2_LAYOUT.ostage) +
                         (2 * buf + c) * V2_N * RAMP_MV2_OSTAGE_STRIDE;
    if (lt < V2_N) asm volatile("cp.async.bulk.wait_group.read 1;\n" ::: "memory");
    asm volatile("bar.sync %0, 128;\n" ::"r"(3 + c) : "memory");
#pragma unroll
    for (int i = 0; i < V2_ACC; i++) {
        const unsigned a = stg + V2_TOKEN(i, t) * RAMP_MV2_OSTAGE_STRIDE +
                           4 * (16 * w + g + 8 * ((i >> 1) & 1));
        asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(a), "f"(acc0[i]) : "memory");
        asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(a + 256), "f"(acc1[i]) : "memory");
        acc0[i] = acc1[i] = 0.f;
    }
    hop_fence_proxy_async(); /* generic stores, read next by the bulk reductions */
    asm volatile("bar.sync %0, 128;\n" ::"r"(3 + c) : "memory");
    const int sl = slots[V2_TPT];
#if RAMP_MV2_DIAG == 4
    if (sl == -1234) /* never: the staging kept, nothing added */
#else
    if (sl >= 0)
#endif
    {
        const int row0 = chunk * RAMP_MV2_CHUNK + c * 128;
        asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], 512;\n"
                     ::"l"(out + (size_t)(sl / RAMP_TOPK) * RAMP_HIDDEN + row0),
                     "r"(stg + lt * RAMP_MV2_OSTAGE_STRIDE)
                     : "memory");
    }
    if (lt < V2_N) asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#elif RAMP_MV2_RED4
    /* shared-memory row 64 t + 16 w + g + 8 hh holds output row
     * 4 (8 w + g) + 2 t + hh of the consumer's 128 (ramp_moe_v2_permute_w2);
     * accumulator i is (token V2_TIDX(i), hh = (i >> 1) & 1), acc0 t = 0,
     * acc1 t = 1 */
    const int row4 = chunk * RAMP_MV2_CHUNK + c * 128 + 4 * (8 * w + (lane >> 2));
#pragma unroll
    for (int i = 0; i < V2_ACC; i++) {
        if ((i >> 1) & 1) continue; /* i + 2 is the same token's hh = 1 */
        const int sl = slots[V2_TIDX(i)];
        if (sl >= 0)
#if RAMP_MV2_DIAG == 4
            if (acc0[i] == 1234.5f) /* never: keeps the sums live, adds nothing */
#endif
            v2_red4(out + (size_t)(sl / RAMP_TOPK) * RAMP_HIDDEN + row4, acc0[i], acc0[i + 2],
                    acc1[i], acc1[i + 2]);
    }
#pragma unroll
    for (int i = 0; i < V2_ACC; i++) acc0[i] = acc1[i] = 0.f;
#elif RAMP_MV2_OUT4
    /* accumulators 4j + q of a thread: token 8j + 2t + (q & 1), row g +
     * 8 (q >> 1); after the transpose lane k holds rows 4a + 0..3 (+ 8 (k
     * >> 1)) of token 8j + 2t + (k & 1), g = 4a + k */
    const int k = (lane >> 2) & 3;
    const int row = chunk * RAMP_MV2_CHUNK + c * 128 + 16 * w + 8 * (k >> 1) + 4 * (lane >> 4);
#pragma unroll
    for (int j = 0; j < V2_ACC / 4; j++) {
        float v0[4], v1[4];
#pragma unroll
        for (int q = 0; q < 4; q++) {
            v0[q] = acc0[4 * j + q];
            v1[q] = acc1[4 * j + q];
        }
        v2_transpose4(v0, k);
        v2_transpose4(v1, k);
        const int sl = k & 1 ? slots[2 * j + 1] : slots[2 * j];
        if (sl >= 0) {
            float *o = v2_out_row(prm, sl, part) + row;
#if RAMP_MV2_DIAG == 4
            if (v0[0] == 1234.5f) /* never: keeps the sums live, adds nothing */
#endif
            {
                v2_put4(o, v0);
                v2_put4(o + 64, v1);
            }
        }
    }
#pragma unroll
    for (int i = 0; i < V2_ACC; i++) acc0[i] = acc1[i] = 0.f;
#else
    const int row = chunk * RAMP_MV2_CHUNK + c * 128 + 16 * w + (lane >> 2);
#pragma unroll
    for (int i = 0; i < V2_ACC; i++) {
        const int sl = slots[V2_TIDX(i)];
        if (sl >= 0) {
            float *o = v2_out_row(prm, sl, part) + row + 8 * ((i >> 1) & 1);
#if RAMP_MV2_DIAG == 4
            if (acc0[i] == 1234.5f) /* never: keeps the sums live, adds nothing */
#endif
            {
                v2_put(o, acc0[i]);
                v2_put(o + 64, acc1[i]);
            }
        }
        acc0[i] = acc1[i] = 0.f;
    }
#endif
}

/* After the wait for down stage `it`'s group (ds as above): slot released,
 * promotion into acc0, acc1; after the chunk's last K block, v2_dn_out. */
static __device__ __forceinline__ void v2_dn_finish(const ramp_moe_params &prm, unsigned char *sm,
                                                    int c, int it, int ds, float *t0, float *t1,
                                                    const float *f, float *acc0, float *acc1,
                                                    const int *slots) {
    HOP_ACC_FENCE(t0, V2_ACC);
    HOP_ACC_FENCE(t1, V2_ACC);
    v2_release(hop_smem(sm + V2_LAYOUT.bars) + 8 * V2_S + 8 * (it % V2_S));
#pragma unroll
    for (int i = 0; i < V2_ACC; i++) {
        acc0[i] += t0[i] * f[V2_TIDX(i)];
        acc1[i] += t1[i] * f[V2_TIDX(i)];
    }
    if (ds % V2_DKB != V2_DKB - 1) return;
    v2_dn_out(prm, sm, c, v2_dn_buf(it, ds), v2_dn_chunk(ds), 0, acc0, acc1, slots);
}

#if RAMP_MV2_BF16
/* acc (+)= A (SW128 tile at sa, 64 rows) . B (at sb)^T over one 128-byte K
 * block (64 bf16): four k16 wgmmas, the first overwriting when `zero` (the
 * first K block of a sum). BF16 products are exact and summed in f32, so
 * the sums stay in the accumulators across K: no promotion. */
static __device__ __forceinline__ void v2_mma_kblock_acc(float *acc, unsigned sa, unsigned sb,
                                                         int zero) {
#pragma unroll
    for (int k4 = 0; k4 < RAMP_MV2_KB / HOP_WGMMA_K_BYTES; k4++)
        V2_MMA(acc, hop_desc_sw128(sa + k4 * HOP_WGMMA_K_BYTES),
               hop_desc_sw128(sb + k4 * HOP_WGMMA_K_BYTES), k4 > 0 || !zero);
}

/* SiLU(gate) * up * rw rounded to bf16 (RNE, as the reference): consumer
 * c's 64 columns of pass p are K tile 2p + c of the down projection (token
 * row n, column 16 w + g + 8 hh of the 64 at byte 2 (that)). Ends with both
 * consumers' tiles written and fenced for the async proxy. */
static __device__ __forceinline__ void v2_act_bf16(unsigned char *sm, const float *accg,
                                                   const float *accu, int p, int c) {
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) & 3;
    const int g = lane >> 2, t = lane & 3;
    const float *rw = (const float *)(sm + V2_LAYOUT.rw);
    if (p == 0) V2_CONSUMER_SYNC(); /* rw, stored by consumer 0 at the tile's start */
    const unsigned tile = hop_smem(sm + V2_LAYOUT.inter) + (2 * p + c) * V2_ITILE;
    float a[V2_ACC];
    v2_swiglu(accg, accu, rw, t, a);
#pragma unroll
    for (int i = 0; i < V2_ACC; i += 2) { /* i, i + 1: tokens n, n + 1 of one column */
        const int n = V2_TOKEN(i, t), hh = (i >> 1) & 1;
        const unsigned q = ramp_bf16x2(a[i], a[i + 1]);
        v2_st_u16(tile + hop_swz128(n, 2 * w + hh) + 2 * g, q & 0xFFFFu);
        v2_st_u16(tile + hop_swz128(n + 1, 2 * w + hh) + 2 * g, q >> 16);
    }
    hop_fence_proxy_async(); /* generic stores, read next by wgmma */
    V2_CONSUMER_SYNC();      /* both consumers' tiles complete */
}

/* Consumer warpgroup c (0, 1), BF16: one tile; `it` as the producer's. Each
 * stage is waited for, its wgmmas issued into the sums and waited for, and
 * the slot released. */
static __device__ __forceinline__ void v2_consumer(const ramp_moe_params &prm,
                                                   unsigned char *sm, int c, int r, int slice,
                                                   int &it) {
    (void)r; (void)slice;
    const int t = threadIdx.x & 3;
    const int *tok = (const int *)(sm + V2_LAYOUT.tok);
    const unsigned full = hop_smem(sm + V2_LAYOUT.bars), empty = full + 8 * V2_S;
    float accg[V2_ACC], accu[V2_ACC];
#pragma unroll
    for (int i = 0; i < V2_ACC; i++) accg[i] = accu[i] = 0.f;
    for (int p = 0; p < V2_PASSES; p++) {
        for (int kb = 0; kb < V2_KBL; kb++, it++) {
            const int s = it % V2_S;
            hop_mbar_wait(full + 8 * s, (it / V2_S) & 1);
            hop_fence_proxy_async(); /* the producer's cp.async B tile, read by wgmma */
            const unsigned slot = hop_smem(sm) + s * (unsigned)V2_LAYOUT.slot_bytes;
            hop_wgmma_fence();
            v2_mma_kblock_acc(accg, slot + c * 8192, slot + (unsigned)V2_LAYOUT.slot_b, kb == 0);
            v2_mma_kblock_acc(accu, slot + 16384 + c * 8192, slot + (unsigned)V2_LAYOUT.slot_b,
                              kb == 0);
            hop_wgmma_commit();
            HOP_WGMMA_WAIT(0);
            HOP_ACC_FENCE(accg, V2_ACC);
            HOP_ACC_FENCE(accu, V2_ACC);
            v2_release(empty + 8 * s);
        }
#if V2_KS > 1 && RAMP_MV2_DIAG != 5
        v2_ks_exchange(sm, accg, accu, (it / V2_NST) * V2_PASSES + p);
#endif
        v2_act_bf16(sm, accg, accu, p, c);
    }

    /* down projection, 256 rows of d per chunk (consumer c: rows
     * 128c..128c+127 as two m-tiles), K = the slice's w columns, V2_DKB
     * tiles of 64, from the intermediate in shared memory */
    int slots[V2_SLOTS];
    v2_thread_slots(tok, t, slots);
    float *acc0 = accg, *acc1 = accu; /* reuse the registers */
    for (int ds = 0; ds < V2_NDS; ds++, it++) {
        const int s = it % V2_S, kk = ds % V2_DKB;
        hop_mbar_wait(full + 8 * s, (it / V2_S) & 1);
        const unsigned slot = hop_smem(sm) + s * (unsigned)V2_LAYOUT.slot_bytes;
        const unsigned sb = hop_smem(sm + V2_LAYOUT.inter) + kk * V2_ITILE;
        hop_wgmma_fence();
        v2_mma_kblock_acc(acc0, slot + c * 16384, sb, kk == 0);
        v2_mma_kblock_acc(acc1, slot + c * 16384 + 8192, sb, kk == 0);
        hop_wgmma_commit();
        HOP_WGMMA_WAIT(0);
        HOP_ACC_FENCE(acc0, V2_ACC);
        HOP_ACC_FENCE(acc1, V2_ACC);
        v2_release(empty + 8 * s);
        if (kk == V2_DKB - 1)
            v2_dn_out(prm, sm, c, v2_dn_buf(it, ds), v2_dn_chunk(ds), 0, acc0, acc1, slots);
    }
}

#else /* FP8 */

#if RAMP_MV2_PHASE == 1
/* Narrow phase 1: intermediate tile p (just written to shared memory,
 * SW128, complete after v2_act_quant's last barrier) and its per-token
 * scales into row tile r's block of the workspace, rows n < V2_N, columns
 * slice * w + 128 p; padding rows too (phase 2 never reads them). The 256
 * consumer threads, one 16-byte chunk each per step. */
static __device__ __forceinline__ void v2_store_inter(const ramp_moe_params &prm,
                                                      unsigned char *sm, int r, int slice, int p) {
    const ramp_moe_v2_ws_layout wl = ramp_moe_v2_ws_layout_rows(0, RAMP_ROWS, RAMP_INTER, 0);
    unsigned char *ib = (unsigned char *)prm.ws + (size_t)r * wl.tile;
    const unsigned char *tile = sm + V2_LAYOUT.inter + p * V2_ITILE;
    const float *iscale = (const float *)(sm + V2_LAYOUT.iscale);
    const int ct = threadIdx.x - 128, col = slice * RAMP_WIDTH + p * 128;
#pragma unroll
    for (int i = ct; i < V2_N * 8; i += 256) {
        const int n = i >> 3, ch = i & 7;
        *(uint4 *)(ib + (size_t)n * RAMP_INTER + col + ch * 16) =
            *(const uint4 *)(tile + hop_swz128(n, ch));
    }
    if (ct < V2_N)
        ((float *)(ib + wl.iscale))[ct * V2_HKB + col / 128] = iscale[ct * V2_PASSES + p];
}
#endif

#if RAMP_MV2_PHASE == 2
/* Consumer warpgroup c, narrow phase 2 (session 14): one tile = (row tile,
 * chunk V2_P2_CHUNK(slice) of d, K part); stage st holds the chunk's 256
 * W2 rows x K block V2_P2_KB(slice, st) of h (consumer c: rows 128c ..
 * 128c + 127, two m-tiles) and the tile's intermediate rows of that block,
 * gathered from the workspace as the up stages gather tokens, their
 * scales in the slot's xs. The sums promoted per block as the fused down
 * stages', added into out once at the end. */
static __device__ __forceinline__ void v2_consumer(const ramp_moe_params &prm,
                                                   unsigned char *sm, int c, int r, int slice,
                                                   int &it V2_SKP) {
    (void)r;
    const int t = threadIdx.x & 3;
    const unsigned full = hop_smem(sm + V2_LAYOUT.bars), empty = full + 8 * V2_S;
    int slots[V2_SLOTS];
    v2_thread_slots((const int *)(sm + V2_LAYOUT.tok), t, slots);
    float acc0[V2_ACC], acc1[V2_ACC], t0[V2_ACC], t1[V2_ACC], f[V2_TPT];
#pragma unroll
    for (int i = 0; i < V2_ACC; i++) acc0[i] = acc1[i] = 0.f;
    for (int st = 0; st < V2_NST; st++, it++) {
        const int s = it % V2_S;
        hop_mbar_wait(full + 8 * s, (it / V2_S) & 1);
        hop_fence_proxy_async(); /* the producer's cp.async B tile, read by wgmma */
        const unsigned slot = hop_smem(sm) + s * (unsigned)V2_LAYOUT.slot_bytes;
        const unsigned char *sp = sm + s * V2_LAYOUT.slot_bytes;
        const float ws = ((const float *)(sp + V2_LAYOUT.slot_wsc))[c];
        const float *xs = (const float *)(sp + V2_LAYOUT.slot_xs);
#pragma unroll
        for (int j = 0; j < V2_N / 8; j++) {
            f[2 * j] = ws * xs[8 * j + 2 * t];
            f[2 * j + 1] = ws * xs[8 * j + 2 * t + 1];
        }
        hop_wgmma_fence();
        v2_mma_kblock(t0, slot + c * 16384, slot + (unsigned)V2_LAYOUT.slot_b);
        v2_mma_kblock(t1, slot + c * 16384 + 8192, slot + (unsigned)V2_LAYOUT.slot_b);
        hop_wgmma_commit();
        HOP_WGMMA_WAIT(0);
        HOP_ACC_FENCE(t0, V2_ACC);
        HOP_ACC_FENCE(t1, V2_ACC);
        v2_release(empty + 8 * s);
#pragma unroll
        for (int i = 0; i < V2_ACC; i++) {
            acc0[i] += t0[i] * f[V2_TIDX(i)];
            acc1[i] += t1[i] * f[V2_TIDX(i)];
        }
    }
    v2_dn_out(prm, sm, c, 0, V2_P2_CHUNK(slice), slice % RAMP_MV2_P2K, acc0, acc1,
              slots);
}
#else

/* Consumer warpgroup c (0, 1): one tile; `it` as the producer's.
 * V2_PIPE = 1 (moe_v2.md): two sets of temporary accumulators; stage i+1's
 * wgmmas are issued before stage i's are waited for (wgmma.wait_group 1),
 * so the tensor cores work while stage i is released and promoted. */
static __device__ __forceinline__ void v2_consumer(const ramp_moe_params &prm,
                                                   unsigned char *sm, int c, int r, int slice,
                                                   int &it) {
    (void)r; (void)slice;
    const int t = threadIdx.x & 3;
    const int *tok = (const int *)(sm + V2_LAYOUT.tok);

#if V2_KS > 1
    /* split-K: the slot ids read at the tile's start (N <= 32: at most 8
     * registers through the up passes). Read in the down phase, racecheck
     * reported them racing with the next tile's write of tok (session 12),
     * although the tile's two block barriers order the two either way. */
    int slots[V2_SLOTS];
    v2_thread_slots(tok, t, slots);
#endif
    /* phases 1 + 2: up projection and requantization, one pass of 128
     * columns at a time (consumer c: columns 64c..64c+63 of the pass) */
    float accg[V2_ACC], accu[V2_ACC], tg0[V2_ACC], tu0[V2_ACC];
    float xs0[V2_TPT], wgs[2], wus[2];
#if V2_PIPE
    float tg1[V2_ACC], tu1[V2_ACC], xs1[V2_TPT];
#endif
#pragma unroll
    for (int i = 0; i < V2_ACC; i++) {
        tg0[i] = tu0[i] = 0.f;
#if V2_PIPE
        tg1[i] = tu1[i] = 0.f;
#endif
    }
    for (int p = 0; p < V2_PASSES; p++) {
#pragma unroll
        for (int i = 0; i < V2_ACC; i++) accg[i] = accu[i] = 0.f;
#if V2_PIPE_UP
        /* groups of V2_PGU stages, unrolled: stage j+1 issued before stage
         * j is waited for; nothing in flight across the loop's back edge
         * (ptxas cannot follow a set in flight around a loop and would then
         * serialise every wgmma: C7514; test_moe_v2_compile fails on it) */
        for (int kb0 = 0; kb0 < V2_KBL; kb0 += V2_PGU) {
#pragma unroll
            for (int j = 0; j < V2_PGU; j++) {
                v2_up_issue(sm, c, it + kb0 + j, j & 1 ? tg1 : tg0, j & 1 ? tu1 : tu0,
                            j & 1 ? xs1 : xs0, wgs[j & 1], wus[j & 1]);
                if (j > 0) {
                    HOP_WGMMA_WAIT(1);
                    v2_up_finish(sm, it + kb0 + j - 1, j & 1 ? tg0 : tg1, j & 1 ? tu0 : tu1,
                                 j & 1 ? xs0 : xs1, wgs[(j - 1) & 1], wus[(j - 1) & 1], accg,
                                 accu);
                }
            }
            HOP_WGMMA_WAIT(0);
            v2_up_finish(sm, it + kb0 + V2_PGU - 1, (V2_PGU - 1) & 1 ? tg1 : tg0,
                         (V2_PGU - 1) & 1 ? tu1 : tu0, (V2_PGU - 1) & 1 ? xs1 : xs0,
                         wgs[(V2_PGU - 1) & 1], wus[(V2_PGU - 1) & 1], accg, accu);
        }
        it += V2_KBL;
#else
        for (int kb = 0; kb < V2_KBL; kb++, it++) {
            v2_up_issue(sm, c, it, tg0, tu0, xs0, wgs[0], wus[0]);
            HOP_WGMMA_WAIT(0);
            v2_up_finish(sm, it, tg0, tu0, xs0, wgs[0], wus[0], accg, accu);
        }
#endif
#if V2_KS > 1 && RAMP_MV2_DIAG != 5
        v2_ks_exchange(sm, accg, accu, (it / V2_NST) * V2_PASSES + p);
#endif
#if V2_CG > 1
        if (p == 0) v2_cg_wait_free(sm, it / V2_NST);
#endif
        v2_act_quant(sm, accg, accu, p, c);
#if RAMP_MV2_PHASE == 1
        v2_store_inter(prm, sm, r, slice, p);
#endif
    }
#if RAMP_MV2_PHASE != 1 /* (phase 1: phase 2 projects down) */
    /* phase 3: down projection, 256 rows of d per chunk (consumer c: rows
     * 128c..128c+127 as two m-tiles), K = the slice's w columns from the
     * intermediate in shared memory; stages ds = chunk * V2_DKB + kk */
#if V2_KS == 1
    int slots[V2_SLOTS];
    v2_thread_slots(tok, t, slots);
#endif
#if V2_CG > 1
    v2_cg_gather(prm, sm, it / V2_NST, r, slice); /* K = the cluster's C slices */
#endif
    const int nds = V2_NDS;
    float *acc0 = accg, *acc1 = accu; /* reuse the registers */
#pragma unroll
    for (int i = 0; i < V2_ACC; i++) acc0[i] = acc1[i] = 0.f;
#if V2_PIPE_DN
    /* as the up loop, in groups of V2_PGD stages (a multiple of V2_DKB) */
    for (int ds0 = 0; ds0 < nds; ds0 += V2_PGD) {
#pragma unroll
        for (int j = 0; j < V2_PGD; j++) {
            v2_dn_issue(sm, c, it + ds0 + j, ds0 + j, j & 1 ? tg1 : tg0, j & 1 ? tu1 : tu0,
                        j & 1 ? xs1 : xs0);
            if (j > 0) {
                HOP_WGMMA_WAIT(1);
                v2_dn_finish(prm, sm, c, it + ds0 + j - 1, ds0 + j - 1, j & 1 ? tg0 : tg1,
                             j & 1 ? tu0 : tu1, j & 1 ? xs0 : xs1, acc0, acc1, slots);
            }
        }
        HOP_WGMMA_WAIT(0);
        v2_dn_finish(prm, sm, c, it + ds0 + V2_PGD - 1, ds0 + V2_PGD - 1,
                     (V2_PGD - 1) & 1 ? tg1 : tg0, (V2_PGD - 1) & 1 ? tu1 : tu0,
                     (V2_PGD - 1) & 1 ? xs1 : xs0, acc0, acc1, slots);
    }
    it += nds;
#else
    for (int ds = 0; ds < nds; ds++, it++) {
        v2_dn_issue(sm, c, it, ds, tg0, tu0, xs0);
        HOP_WGMMA_WAIT(0);
        v2_dn_finish(prm, sm, c, it, ds, tg0, tu0, xs0, acc0, acc1, slots);
    }
#endif
#if V2_CG > 1
    v2_cg_release(sm);
#endif
#endif /* RAMP_MV2_PHASE != 1 */
}
#endif /* RAMP_MV2_PHASE != 2 */
#endif /* FP8 */

#endif /* !V2_WIDE */

/* ----------------------------------------------------------------- kernel */

/* Read back what v2_first_tile parked (volatile: once per tile, not
 * held in a register through the loop). head[0]: the block's tile count; head[1]: its first tile's expert */
static __device__ __forceinline__ int v2_head(const unsigned char *sm, int i) {
    return ((const volatile int *)(sm + V2_LAYOUT.head))[i];
}
static __device__ __forceinline__ int v2_first_slot(const unsigned char *sm) {
    return ((const volatile int *)(sm + V2_LAYOUT.rw))[threadIdx.x];
}

/* Tile tt -> row tile r and slice (RAMP_MV2_GROUP's order; the row tiles
 * are head[0] / V2_TPR), its expert (-1: skip the tile); the block's first
 * tile's expert was loaded at the start (v2_first_tile). */
#if V2_MC > 1
/* Multicast: pair tile tt -> this CTA's row tile r = 2p + k (k its cluster
 * rank) and the partner's 2p + (k ^ 1), of slice tt % V2_TPR; head[2] holds
 * the launch's row tiles, head[1] and head[3] the first pair's experts. A
 * row tile past the load is a phantom: its CTA runs the partner's expert
 * with no tokens (*r = -1), so that both walk the same stages (-1 returned
 * for both when neither has one). *mc: the two read the same weights. */
static __device__ __forceinline__ int v2_tile(const ramp_moe_params &prm, const unsigned char *sm,
                                              int tt, int *r, int *slice, int *mc) {
    const int rt = v2_head(sm, 2);
    int r0, r1, own_rows;
    ramp_mv2_pair_of(tt, V2_TPR, (int)hop_cluster_rank(), &r0, &r1, slice);
    const int *te = (const int *)prm.tile_expert;
    const int e0 = r0 < rt ? (tt == V2_CID ? v2_head(sm, 1) : te[r0]) : -1;
    const int e1 = r1 < rt ? (tt == V2_CID ? v2_head(sm, 3) : te[r1]) : -1;
    const int e = ramp_mv2_pair_expert(e0, e1, RAMP_EXPERTS, &own_rows, mc);
    *r = own_rows ? r0 : -1;
    return e;
}
#else
static __device__ __forceinline__ int v2_tile(const ramp_moe_params &prm, const unsigned char *sm,
                                              int tt, int *r, int *slice, int *mc) {
    *mc = 0;
#if RAMP_MV2_GROUP > 1
    ramp_mv2_tile_of(tt, v2_head(sm, 0) / V2_TPR, V2_TPR, RAMP_MV2_GROUP, r, slice);
#else
    *r = tt / V2_TPR;
    *slice = tt % V2_TPR;
#endif
    const int e = V2_FIRST(tt) ? v2_head(sm, 1) : ((const int *)prm.tile_expert)[*r];
    return e >= 0 && e < RAMP_EXPERTS ? e : -1;
}
#endif

/* RAMP_MV2_LATE_WAIT (phase 2 in the polymorphic kernel; moe_poly_v2.cuh,
 * session 25): the kernel starts by programmatic dependent launch while
 * phase 1 runs and does not wait at its top; the producers wait for phase 1
 * (griddepcontrol.wait) after the first tile's head stages are requested,
 * as the weights do not depend on it, and before any read of the
 * intermediate (v2_gather, after the tile's block barriers). The consumers
 * read only what the producers gathered, behind those barriers. */
#ifndef RAMP_MV2_LATE_WAIT
#define RAMP_MV2_LATE_WAIT 0
#endif
#define V2_LATE_WAIT (RAMP_MV2_LATE_WAIT && RAMP_MV2_PHASE == 2)

/* Named barrier 2 over the whole block: tile boundaries. */
#define V2_BLOCK_SYNC() HOP_BAR_SYNC(2, RAMP_MV2_THREADS)

/* The roles, inlined into the kernel. In a polymorphic kernel
 * (RAMP_V2_BODY_ONLY) RAMP_V2_ROLE_CALLS = 1 makes each role of each entry a
 * separate function instead, as v1's bodies are (moe_v1.cuh: inlined side
 * by side, v1 entries shared one register allocation and spilled); but a
 * call with wgmma behind it makes ptxas 13.0 serialise every wgmma of the
 * kernel ("(C7510) Potential Performance Loss: wgmma.mma_async
 * instructions are serialized due to wgmma pipeline crossing function
 * boundary at a function call", 2026-11-30), so the default inlines them:
 * each role's budget is fixed by setmaxnreg anyway, and test_moe_poly
 * checks that no menu spills. The parameters are references to the
 * kernel's __grid_constant__ parameters (no copy to the stack). */
#ifndef RAMP_V2_ROLE_CALLS
#define RAMP_V2_ROLE_CALLS 0
#endif
#if RAMP_V2_BODY_ONLY && RAMP_V2_ROLE_CALLS
#define V2_ROLE __noinline__
#else
#define V2_ROLE __forceinline__
#endif

/* The block's first tile's expert and token slots, loaded early (one
 * global latency before the first weights are requested, not three), and
 * its tile count: parked in shared memory, read back by the roles where they
 * need them (v2_head, v2_first_slot). Carried in registers through the
 * roles' loops instead, ptxas spilled them in polymorphic kernels holding
 * wide entries (the producer's 56 registers). Thread 0 stores the expert
 * (-1 past max_tiles * h/w) into head[1], thread t < RAMP_ROWS (a
 * producer) its slot into the router-weight array, which the consumers
 * fill only after the first tile's two block barriers; thread 0 stores the
 * count into head[0] (v2_init). Before the block's __syncthreads. */
static __device__ __forceinline__ void v2_first_tile(const ramp_moe_params &prm,
                                                     unsigned char *sm, int rtiles) {
#if V2_MC > 1 /* the first pair's two row tiles (v2_tile) */
    (void)rtiles;
    const int r0 = 2 * (V2_CID / V2_TPR) + (int)hop_cluster_rank(), r1 = r0 ^ 1;
    const int in = r0 < prm.max_tiles;
    if (threadIdx.x == 0)
        ((volatile int *)(sm + V2_LAYOUT.head))[3] =
            r1 < prm.max_tiles ? ((const int *)prm.tile_expert)[r1] : -1;
#elif RAMP_MV2_GROUP > 1 /* the order needs the row tiles of this launch */
    const int in = (int)blockIdx.x < rtiles * V2_TPR;
    int r0 = 0, s0 = 0;
    if (in) ramp_mv2_tile_of(blockIdx.x, rtiles, V2_TPR, RAMP_MV2_GROUP, &r0, &s0);
    (void)s0;
#else
    (void)rtiles;
    const int in = V2_CID < prm.max_tiles * V2_TPR;
    const int r0 = V2_CID / V2_TPR;
#endif
    if (threadIdx.x == 0)
        ((volatile int *)(sm + V2_LAYOUT.head))[1] =
            in ? ((const int *)prm.tile_expert)[r0] : -1;
    if (in && threadIdx.x < RAMP_ROWS)
        ((volatile int *)(sm + V2_LAYOUT.rw))[threadIdx.x] =
            ((const int *)prm.sorted_ids)[(size_t)r0 * RAMP_ROWS + threadIdx.x];
}
/* Thread 0: the block's tile count (head[0]), the launch's row tiles
 * (head[2]), the ring's barriers and the maps' prefetch. */
static __device__ __forceinline__ void v2_init(unsigned char *sm, const ramp_moe_v2_maps &maps,
                                               int total, int rtiles) {
    ((volatile int *)(sm + V2_LAYOUT.head))[0] = total;
    ((volatile int *)(sm + V2_LAYOUT.head))[2] = rtiles; /* (multicast's v2_tile) */
    const unsigned full = hop_smem(sm + V2_LAYOUT.bars), empty = full + 8 * V2_S;
    for (int s = 0; s < V2_S; s++) {
        hop_mbar_init(full + 8 * s, 1 + 128); /* expect_tx arrival + 128 producers */
        hop_mbar_init(empty + 8 * s, V2_EMPTY_COUNT); /* every consumer thread (v2_release) */
    }
#if V2_KS > 1
    hop_mbar_init(hop_smem(sm + V2_LAYOUT.xbars), 1);     /* xfull: own expect_tx + the bytes */
    hop_mbar_init(hop_smem(sm + V2_LAYOUT.xbars) + 8, 1); /* xempty: the same */
#elif V2_CG > 1 && !V2_CGG
    hop_mbar_init(hop_smem(sm + V2_LAYOUT.xbars), 1);              /* gfull: own expect_tx */
    hop_mbar_init(hop_smem(sm + V2_LAYOUT.xbars) + 8, V2_CG - 1);  /* gempty: one per peer */
#endif
    hop_mbar_init_fence();
    hop_tma_prefetch_map(&maps.w13);
    hop_tma_prefetch_map(&maps.w2);
}

/* RAMP_MV2_EARLY_HEAD = 1 (session 48; an experiment, off: measured in
 * session 49, the first weights land -1.0..+0.3 us earlier, the layer
 * moves within noise):
 * thread 0 asks for the block's first tile's head stages (v2_producer_head's
 * weights) in the set-up, right after it made the ring's barriers, instead
 * of after the block barrier, setmaxnreg and the producer's own read of the
 * first tile. Session 47's timeline put 0.9-2.2 us between the set-up and
 * the first request on those three steps, and nothing else the weights
 * wait for: they need the expert and slice only, and the first tile's
 * slots are free (the ring is new). The TMA writes only this CTA's slots
 * and arrives on its own full barriers (visible to the async proxy after
 * v2_init's fence), so entries whose CTAs share a stage (multicast) are
 * left out, and so are those whose first tile's length is a parameter
 * (stream-K, uneven phase-2 parts). The producer then skips those stages
 * for the first tile (V2_FIRST); every other tile is as before. */
#ifndef RAMP_MV2_EARLY_HEAD
#define RAMP_MV2_EARLY_HEAD 0
#endif
#define V2_EARLY (RAMP_MV2_EARLY_HEAD && V2_MC == 1 && !V2_SK && !V2_P2U)

/* Thread 0, after v2_init: the first tile's head stages, when V2_EARLY
 * and the block's first tile is one its roles will run (V2_FOR_TILES'
 * first iteration, v2_tile's valid expert: the one thread 0 stored in
 * head[1]; v2_tile reads head[0] too, which v2_init stored). */
static __device__ __forceinline__ void v2_early_head(const ramp_moe_params &prm,
                                                     const ramp_moe_v2_maps &maps,
                                                     unsigned char *sm, int total) {
#if V2_EARLY
    const int tt = V2_CID;
    if (tt >= total || (V2_CGG && V2_CID >= V2_CGRID)) return;
    int r, slice, mc;
    const int e = v2_tile(prm, sm, tt, &r, &slice, &mc);
    if (e < 0) return;
#pragma unroll 1 /* once a launch: code size (instruction fetch, session 27) over speed */
    for (int st = 0; st < V2_HEAD; st++) {
        v2_load_weights(prm, maps, sm, st, e, slice, st, 0);
        if (st == 0) RAMP_TL(0, V2_TL_IDX, 6); /* the block's first weights requested */
    }
#else
    (void)prm; (void)maps; (void)sm; (void)total;
#endif
}

/* RAMP_MV2_DYN = 1 (sessions 48-49; an experiment, off: measured in
 * session 50, -14 to -50 us on DeepSeek-V3 entries with 3-5x more tiles than
 * blocks, which the plans do not choose, +0.1-0.9 us where no claim succeeds):
 * tiles after a block's first are claimed from a counter (atomicAdd)
 * instead of taken by stride (tt += grid), so that blocks whose SMs stream
 * faster take more. Why: session 47's timeline on DeepSeek-V3 EP8 (s47-run1
 * call 6) showed the blocks' ends in discrete groups by SM, 315-322,
 * 356-365 and 398-406 us at 64 tokens uniform (one 11 MB tile each), and at
 * 16 tokens the blocks with two tiles of the static stride ending 60-100 us
 * after those with one; a fluid estimate from each block's own rate puts
 * the balanced end 13-42 us earlier (bench/results/s48-cpu). A claim pays
 * off only where an entry has more tiles than the grid, so the finer tiles
 * (w128 there: 416) would be what the plan chooses with it.
 * When: the producer claims its next tile once it has asked for every
 * stage of the current one, so the claim's horizon is the ring's depth.
 * Session 48's first version claimed at the current tile's top, a whole
 * tile ahead: at 16 tokens every block then claimed at the start and the
 * second round went to blocks in atomic order, not to the first done (s49-run1:
 * the end's spread grew, 33 -> 43 us; at 64 tokens it fell, 45 -> 11).
 * Protocol: the block's first tile is its index (as static); the
 * producer's thread 0 claims (grid + the counter's old value) into
 * head[2 + (i & 1)] and the producer warpgroup reads it behind a named
 * barrier; the consumers read it after the tile's two block barriers,
 * which every role meets for each claim, the failed last (>= head[0]) too,
 * and which order the claim's store before their reads (double-buffered:
 * the next store of that slot comes after the next tile's barriers). After
 * its failed claim a block counts itself in a second word, and the last
 * to do so sets both back to zero (the counters are zero before a launch
 * and after it, as the split-K counters). Words (v2_producer_role's dyn):
 * the polymorphic kernel's pp.sched[2..3] (phase 2: [4..5]; [0..1] are the
 * x copy's barrier), the standalone kernel's prm.ws_count[0..1] (phase 2:
 * [2..3]), 16 zeroed bytes src/moe_v2.c gives every launch that gathers
 * nothing through global memory. Entries with more than one CTA a tile
 * (clusters, .gg), multicast (head[2..3] are its) and stream-K keep the
 * stride. */
#ifndef RAMP_MV2_DYN
#define RAMP_MV2_DYN 0
#endif
#define V2_DYN (RAMP_MV2_DYN && V2_TG == 1 && V2_MC == 1 && !V2_SK)
#if V2_DYN
#define V2_DYN_CTR (dyn + 2 * (RAMP_MV2_PHASE == 2)) /* (dyn: the producer role's) */
#define V2_DYN_BAR 3 /* named barrier of the producer warpgroup (1: consumers, 2: block) */
/* the producer warpgroup, done asking for a tile's stages: its next tile */
static __device__ __forceinline__ int v2_dyn_claim(unsigned char *sm, unsigned *dyn, int i) {
    volatile int *slot = (volatile int *)(sm + V2_LAYOUT.head) + 2 + (i & 1);
    if (threadIdx.x == 0) *slot = V2_CGRID + (int)atomicAdd(V2_DYN_CTR, 1u);
    HOP_BAR_SYNC(V2_DYN_BAR, 128);
    return *slot;
}
/* the consumers: the tile's block barriers, then the tile they publish */
static __device__ __forceinline__ int v2_dyn_meet(const unsigned char *sm, int i) {
    V2_BLOCK_SYNC();
    V2_BLOCK_SYNC();
    return i == 0 ? V2_CID : v2_head(sm, 2 + (i & 1));
}
#if V2_P2U
#define V2_DYN_SKN , sk_n = 0
#else
#define V2_DYN_SKN
#endif
/* (the producer's loop ends inside, after the barriers of its failed claim) */
#define V2_FOR_TILES_P \
    for (int tt = V2_CID, dyn_i = 0 V2_DYN_SKN;; tt = v2_dyn_claim(sm, dyn, ++dyn_i))
#define V2_FOR_TILES_C \
    for (int tt = 0, dyn_i = 0 V2_DYN_SKN; (tt = v2_dyn_meet(sm, dyn_i)) < v2_head(sm, 0); dyn_i++)
/* thread 0 of a block that ran the loop, at its last (failed) claim */
static __device__ __forceinline__ void v2_dyn_done(const unsigned char *sm, unsigned *dyn) {
    unsigned *c = V2_DYN_CTR;
    const int total = v2_head(sm, 0);
    const unsigned blocks = (unsigned)(V2_CGRID < total ? V2_CGRID : total);
    __threadfence();
    if (atomicAdd(c + 1, 1u) == blocks - 1) { /* every block's claims are done */
        atomicExch(c, 0u);
        atomicExch(c + 1, 0u);
    }
}
#else
#define V2_FOR_TILES_P V2_FOR_TILES
#define V2_FOR_TILES_C V2_FOR_TILES
#endif

/* Both roles walk the same tiles tt = blockIdx.x + i * gridDim.x < head[0]
 * and stage counts (it), so the ring's phases agree. Per tile: the
 * producer's thread 0 starts the first stages' weights (v2_producer_head:
 * they need only the expert); block barrier (the previous tile is done with
 * tok, rw, the intermediate); the producer stores the tile's slots, loaded
 * before the barrier; barrier (published); consumer 0 loads the router
 * weights; then the ring. Called after setmaxnreg, by warpgroup 0 (dyn:
 * RAMP_MV2_DYN's counters, unused without it) ... */
static __device__ V2_ROLE void v2_producer_role(const ramp_moe_params &prm,
                                                const ramp_moe_v2_maps &maps, unsigned char *sm,
                                                unsigned *dyn) {
    (void)dyn;
    int *tok = (int *)(sm + V2_LAYOUT.tok);
    int it = 0, waited = !V2_LATE_WAIT, ran = 0;
    (void)ran;
    V2_FOR_TILES_P {
        /* (V2_DYN: a failed claim still meets the consumers at the barriers) */
        const int more = !V2_DYN || tt < v2_head(sm, 0);
        int r = -1, slice = 0, mc = 0, e = -1;
        if (more) {
            V2_SK_SEGMENT;
            e = v2_tile(prm, sm, tt, &r, &slice, &mc);
        }
        if (e < 0 && !V2_DYN) continue;
#if V2_DYN
        /* the failed claim: this block's claims are done, counted while the
         * consumers finish the last tile (at the block's end its atomic's
         * round trip cost Qwen3/OLMoE 0.3-1.1 us a layer, s49-run1 call 1) */
        if (!more && threadIdx.x == 0) v2_dyn_done(sm, dyn);
#endif
        int sl = -1;
        if (threadIdx.x < RAMP_ROWS && r >= 0 && e >= 0) { /* (r < 0: a phantom, no tokens) */
            sl = V2_FIRST(tt)
                     ? v2_first_slot(sm)
                     : ((const int *)prm.sorted_ids)[(size_t)r * RAMP_ROWS + threadIdx.x];
            if (sl >= prm.num_tokens * RAMP_TOPK) sl = -1;
        }
        /* V2_EARLY: the first tile's head stages were asked for in the
         * set-up (v2_early_head, same expert and slice) */
        if (e >= 0)
            v2_producer_head(prm, maps, sm, e, slice, it, mc, V2_EARLY && V2_FIRST(tt) V2_SKA);
        if (!waited) { /* V2_LATE_WAIT: phase 1's intermediate is read from here on */
            asm volatile("griddepcontrol.wait;\n" ::: "memory");
            waited = 1;
        }
        V2_BLOCK_SYNC();
        if (threadIdx.x < V2_N) tok[threadIdx.x] = sl < 0 ? -1 : sl;
        V2_BLOCK_SYNC();
        if (!more) break;
        if (e >= 0) v2_producer(prm, maps, sm, e, slice, r < 0 ? 0 : r, mc, it V2_SKA);
#ifdef RAMP_TIMELINE
        ran += e >= 0;
#endif
    }
    RAMP_TL_COUNT(0, V2_TL_IDX, RAMP_TL_TILES_SLOT, ran); /* (timeline.cuh: tiles run) */
    /* no block completes before phase 1 (V2_LATE_WAIT: a block with no tile) */
    if (!waited) asm volatile("griddepcontrol.wait;\n" ::: "memory");
    /* no thread leaves with its copies in flight (their arrivals) */
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#if V2_CL > 1
    hop_cluster_sync(); /* the partner is done with this CTA's xbuf, slots and barriers */
#endif
}

/* ... and by warpgroups 1 and 2 (wg = 1, 2). */
static __device__ V2_ROLE void v2_consumer_role(const ramp_moe_params &prm, unsigned char *sm,
                                                int wg) {
    int *tok = (int *)(sm + V2_LAYOUT.tok);
    float *rw = (float *)(sm + V2_LAYOUT.rw);
    int it = 0;
    V2_FOR_TILES_C { /* (V2_DYN: the tile's block barriers are in the loop's test) */
        int r, slice, mc;
        V2_SK_SEGMENT;
        const int e = v2_tile(prm, sm, tt, &r, &slice, &mc);
        if (e < 0) continue;
#if !V2_DYN
        V2_BLOCK_SYNC();
        V2_BLOCK_SYNC();
#endif
        /* the router weights, read first at the end of the first up pass
         * (v2_act_quant's extra barrier): off the producer's path */
#if RAMP_MV2_PHASE != 2 /* phase 1 applied them */
        const int n = threadIdx.x - 128;
        if (n < V2_N) rw[n] = tok[n] >= 0 ? ((const float *)prm.topk_weights)[tok[n]] : 0.f;
#else
        (void)rw;
#endif
#if RAMP_MV2_DIAG >= 1 && RAMP_MV2_DIAG <= 3
        (void)wg;
        v2_consumer_diag(sm, it V2_SKA); /* timing diagnostics: no math */
#else
        v2_consumer(prm, sm, wg - 1, r, slice, it V2_SKA);
#endif
    }
#if RAMP_MV2_PHASE == 2 || RAMP_MV2_BULKRED
    /* the last bulk reductions done (they read this block's shared memory
     * and write out) before the block exits */
    asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
#endif
#if V2_CL > 1
    hop_cluster_sync(); /* as the producer's */
#endif
}

/* Work tiles of a launch of rtiles row tiles, each run by V2_CL CTAs:
 * (row tile, slice), or with multicast (pair of row tiles, slice). */
static __device__ __forceinline__ int v2_total(int rtiles) {
    return (V2_MC > 1 ? ramp_mv2_pairs(rtiles) : rtiles) * V2_TPR;
}

#if !RAMP_V2_BODY_ONLY
/* timeline.cuh: the standalone kernel is kernel 4 (its phase-2 launch 5) */
#define V2_TL_K (RAMP_MV2_PHASE == 2 ? 5 : 4)
extern "C" __global__ void __launch_bounds__(RAMP_MV2_THREADS, 1)
ramp_moe_v2(const ramp_moe_params prm, const __grid_constant__ ramp_moe_v2_maps maps) {
    extern __shared__ __align__(1024) unsigned char v2_dyn[];
    const unsigned a = hop_smem(v2_dyn);
    unsigned char *sm = v2_dyn + (((a + RAMP_MV2_ALIGN - 1) & ~(unsigned)(RAMP_MV2_ALIGN - 1)) - a);
    RAMP_TL(0, V2_TL_K, 0);

    /* The first tile's expert and token slots are loaded beside num_tiles
     * (after it with a grouped order, which needs it) */
#if RAMP_MV2_GROUP == 1
    v2_first_tile(prm, sm, 0);
#endif

    /* every block strides over the tiles (row tile, slice); the host sizes
     * the grid min(max_tiles * h/w, SMs) */
    int rtiles = *(const volatile int *)prm.num_tiles;
    if (rtiles > prm.max_tiles) rtiles = prm.max_tiles;
#if RAMP_MV2_GROUP > 1
    v2_first_tile(prm, sm, rtiles);
#endif
    const int total = v2_total(rtiles);
    if (V2_CID >= total) { /* both CTAs of a cluster, or neither */
        RAMP_TL(0, V2_TL_K, 5);
        return;
    }

    if (threadIdx.x == 0) {
        v2_init(sm, maps, total, rtiles);
        v2_early_head(prm, maps, sm, total);
    }
#if V2_CL > 1
    hop_cluster_sync(); /* the partner's barriers initialised before any remote arrival */
#else
    __syncthreads();
#endif

    const int wg = hop_warpgroup();
    if (wg == 0) {
        HOP_SETMAXNREG_DEC(RAMP_MV2_PRODUCER_REGS);
        v2_producer_role(prm, maps, sm, (unsigned *)prm.ws_count); /* (src/moe_v2.c: 16 zeroed bytes) */
        RAMP_TL(0, V2_TL_K, 2);
    } else {
        HOP_SETMAXNREG_INC(RAMP_MV2_CONSUMER_REGS);
        v2_consumer_role(prm, sm, wg);
        RAMP_TL(128, V2_TL_K, 3);
        RAMP_TL(256, V2_TL_K, 4);
    }
}
#else
/* A polymorphic entry (moe_poly_v2.cuh): v2_first_tile, v2_init and the two
 * roles above; the macros are undefined so that the next entry (its own
 * namespace) can define its own. */
/* work tiles per row tile; CTAs per tile; CTAs per cluster */
enum { v2_slices = V2_TPR, v2_ks = V2_TG, v2_cl = V2_CL };
#undef V2_N
#undef V2_WIDE
#undef V2_MC
#undef V2_CL
#undef V2_TG
#undef V2_CG
#undef V2_CGG
#undef V2_UP_SLICE
#undef V2_DN_COL
#undef V2_ISC
#undef V2_CG_TILE_BYTES
#undef V2_CG_SCALE_BYTES
#undef V2_EMPTY_COUNT
#undef V2_TMA_X_ON
#undef V2_TMA_H_ON
#undef V2_TOK_TX
#undef V2_ACC
#undef V2_TPT
#undef V2_MMA
#undef V2_PASSES
#undef V2_KBLK
#undef V2_CHUNKS
#undef V2_DKB
#undef V2_SLICES
#undef V2_TPR
#undef V2_HKB
#undef V2_P2NK
#undef V2_P2_CHUNK
#undef V2_P2_KB
#undef V2_S
#undef V2_LAYOUT
#undef V2_ITILE
#undef V2_PIPE
#undef V2_PIPE_UP
#undef V2_PIPE_DN
#undef V2_PGU
#undef V2_NDS
#undef V2_PGD
#undef V2_CU
#undef V2_EB
#undef V2_KE
#undef V2_CONSUMER_SYNC
#undef V2_TOKEN
#undef V2_TIDX
#undef V2_NST
#undef V2_HEAD
#undef V2_SK
#undef V2_P2U
#undef V2_P2_K0
#undef V2_SKP
#undef V2_SKA
#undef V2_FOR_TILES
#undef V2_SK_SEGMENT
#undef V2_FIRST
#undef V2_KS
#undef V2_KBL
#undef V2_UP_KB
#undef V2_CHL
#undef V2_CID
#undef V2_CGRID
#undef V2_BLOCK_SYNC
#undef V2_LATE_WAIT
#undef V2_EARLY
#undef V2_DYN
#undef V2_DYN_CTR
#undef V2_DYN_BAR
#undef V2_DYN_SKN
#undef V2_FOR_TILES_P
#undef V2_FOR_TILES_C
#undef V2_ROLE
#undef V2_TL_IDX
#endif
