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
 *             by W2's block scale x s; red.global.add.f32)
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
 * {8, 16, 24, 32, 48, 64}), RAMP_WIDTH (128, 256, 512), RAMP_STAGES (2..6),
 * RAMP_HIDDEN (d, a multiple of 256), RAMP_INTER (h, a multiple of w),
 * RAMP_TOPK, RAMP_EXPERTS.
 */
#include "fp8.cuh"
#include "hopper.cuh"
#include "moe_v1_params.h"
#include "moe_v2_params.h"

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
#else
#error "ceil8(RAMP_ROWS) must be 8, 16, 24, 32, 48 or 64"
#endif
#define V2_ACC (V2_N / 2)                  /* accumulators per m-tile and thread */
#define V2_TPT (V2_N / 4)                  /* tokens per thread: 8j + 2t + {0,1} */
#define V2_MMA HOP_WGMMA_E4M3(V2_N)
#define V2_PASSES (RAMP_WIDTH / 128)       /* up passes: 128 columns each */
#define V2_KBLK (RAMP_HIDDEN / RAMP_MV2_KB) /* K blocks of the up projection */
#define V2_CHUNKS (RAMP_HIDDEN / RAMP_MV2_CHUNK)
#define V2_DKB (RAMP_WIDTH / 128)          /* K blocks per down chunk */
#define V2_SLICES (RAMP_INTER / RAMP_WIDTH)
#define V2_S RAMP_STAGES
#define V2_LAYOUT (ramp_moe_v2_layout_of(RAMP_ROWS, RAMP_WIDTH, RAMP_STAGES))
#define V2_ITILE (V2_N * RAMP_MV2_KB)      /* one 128-column tile of the intermediate */

/* The two weight tensor maps (see moe_v2_params.h). */
typedef struct {
    hop_tensormap w13; /* [E * 2h][d], box 128 B x 128 rows */
    hop_tensormap w2;  /* [E * d][h], box 128 B x 128 rows */
} ramp_moe_v2_maps;

static __device__ __forceinline__ void v2_red(float *p, float v) {
    asm volatile("red.global.add.f32 [%0], %1;\n" ::"l"(p), "f"(v) : "memory");
}
static __device__ __forceinline__ void v2_cp4(unsigned dst, const void *src, int bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(bytes)
                 : "memory");
}
static __device__ __forceinline__ void v2_st_u8(unsigned addr, unsigned v) {
    asm volatile("st.shared.u8 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}

/* Named barrier 1 over the 256 consumer threads. */
#define V2_CONSUMER_SYNC() HOP_BAR_SYNC(1, 256)

/* The token of accumulator i of this thread (HOP_DEFINE_WGMMA's layout):
 * column 8(i/4) + 2t + (i&1); its row is 16 w + g + 8 ((i/2)&1). */
#define V2_TOKEN(i, t) (8 * ((i) >> 2) + 2 * (t) + ((i) & 1))
/* index into the thread's V2_TPT token scales of accumulator i */
#define V2_TIDX(i) (2 * ((i) >> 2) + ((i) & 1))

/* ------------------------------------------------------------- producer */

/* Stage `it` of the tile's sequence into ring slot s: up stages first
 * (passes x K blocks), then down stages (chunks x K blocks of the slice).
 * Thread 0 issues the two TMA boxes on full[s]; every thread its share of
 * the token gather and of the scales by cp.async. */
static __device__ __forceinline__ void v2_produce(const ramp_moe_params &prm,
                                                  const ramp_moe_v2_maps &maps,
                                                  unsigned char *sm, int it, int e,
                                                  int slice, int s) {
    const int t = threadIdx.x;
    const unsigned slot = hop_smem(sm) + s * (unsigned)V2_LAYOUT.slot_bytes;
    const unsigned full = hop_smem(sm + V2_LAYOUT.bars) + 8 * s;
    const int *tok = (const int *)(sm + V2_LAYOUT.tok);
    if (it < V2_PASSES * V2_KBLK) {
        const int p = it / V2_KBLK, kb = it % V2_KBLK;
        const int col = slice * RAMP_WIDTH + p * 128; /* first intermediate column */
        if (t == 0) {
            const int y = e * 2 * RAMP_INTER + col;
            hop_mbar_arrive_expect_tx(full, RAMP_MV2_A_BYTES);
            hop_tma_load_2d(slot, &maps.w13, full, kb * RAMP_MV2_KB, y);
            hop_tma_load_2d(slot + RAMP_MV2_A_BYTES / 2, &maps.w13, full, kb * RAMP_MV2_KB,
                            y + RAMP_INTER);
        }
        const unsigned char *x = (const unsigned char *)prm.x;
        const unsigned sb = slot + (unsigned)V2_LAYOUT.slot_b;
#pragma unroll
        for (int i = t; i < V2_N * 8; i += 128) {
            const int n = i >> 3, ch = i & 7, s = tok[n];
            const unsigned char *src =
                s >= 0 ? x + (size_t)(s / RAMP_TOPK) * RAMP_HIDDEN + kb * RAMP_MV2_KB + ch * 16 : x;
            hop_cp16(sb + hop_swz128(n, ch), src, s >= 0 ? 16 : 0);
        }
        if (t < V2_N) {
            const int s = tok[t];
            const float *xs = (const float *)prm.x_scale;
            const float *src =
                s >= 0 ? xs + (size_t)(s / RAMP_TOPK) * (RAMP_HIDDEN / 128) + kb : xs;
            v2_cp4(slot + (unsigned)V2_LAYOUT.slot_xs + 4 * t, src, s >= 0 ? 4 : 0);
        } else if (t >= 126) { /* 126: gate block scale, 127: up */
            const int row = (t == 127 ? RAMP_INTER : 0) + col;
            const float *src = (const float *)prm.w13_scale +
                               ((size_t)e * (2 * RAMP_INTER / 128) + row / 128) * (RAMP_HIDDEN / 128) +
                               kb;
            v2_cp4(slot + (unsigned)V2_LAYOUT.slot_wsc + 4 * (t - 126), src, 4);
        }
    } else {
        const int ds = it - V2_PASSES * V2_KBLK;
        const int chunk = ds / V2_DKB, kk = ds % V2_DKB;
        const int row = chunk * RAMP_MV2_CHUNK;         /* first row of d */
        const int hcol = slice * RAMP_WIDTH + kk * 128; /* column of h */
        if (t == 0) {
            const int y = e * RAMP_HIDDEN + row;
            hop_mbar_arrive_expect_tx(full, RAMP_MV2_A_BYTES);
            hop_tma_load_2d(slot, &maps.w2, full, hcol, y);
            hop_tma_load_2d(slot + RAMP_MV2_A_BYTES / 2, &maps.w2, full, hcol, y + 128);
        }
        if (t >= 126) { /* consumer c's rows row + 128c .. +127: one scale block */
            const int c = t - 126;
            const float *src = (const float *)prm.w2_scale +
                               ((size_t)e * (RAMP_HIDDEN / 128) + row / 128 + c) * (RAMP_INTER / 128) +
                               hcol / 128;
            v2_cp4(slot + (unsigned)V2_LAYOUT.slot_wsc + 4 * c, src, 4);
        }
    }
}

/* The producer warpgroup: every stage of one tile through the ring; `it`
 * counts stages over the block's tiles (the ring's phases run on). Each
 * thread's cp.asyncs of a stage arrive on full[slot] by themselves when they
 * land (cp.async.mbarrier.arrive.noinc), so the producer never waits for its
 * own copies and keeps up to S stages in flight; the consumers fence the
 * generic-proxy writes for wgmma after their wait (ramp_wgmma_test's scheme,
 * bit-exact on the H200). (Waiting with cp.async.wait_group before an
 * ordinary arrival, ramp_wgmma_test_ws's scheme, held the producer to about
 * one stage per load latency: ~25-35 GB/s per block, measured 2026-11-30.) */
static __device__ __forceinline__ void v2_producer(const ramp_moe_params &prm,
                                                   const ramp_moe_v2_maps &maps,
                                                   unsigned char *sm, int e, int slice, int &it) {
    const unsigned full = hop_smem(sm + V2_LAYOUT.bars), empty = full + 8 * V2_S;
    const int end = it + V2_PASSES * V2_KBLK + V2_CHUNKS * V2_DKB;
    for (int st = 0; it < end; it++, st++) {
        const int s = it % V2_S;
        if (it >= V2_S) hop_mbar_wait(empty + 8 * s, (it / V2_S - 1) & 1);
        v2_produce(prm, maps, sm, st, e, slice, s);
        hop_cp_arrive_noinc(full + 8 * s);
    }
}

/* ------------------------------------------------------------ consumers */

/* tmp[V2_ACC] = A (SW128 tile at sa, 64 rows) . B (at sb)^T over one
 * 128-byte K block: four k32 wgmmas, the first overwriting (scale-d = 0). */
static __device__ __forceinline__ void v2_mma_kblock(float *tmp, unsigned sa, unsigned sb) {
#pragma unroll
    for (int k4 = 0; k4 < RAMP_MV2_KB / HOP_WGMMA_K_BYTES; k4++)
        V2_MMA(tmp, hop_desc_sw128(sa + k4 * HOP_WGMMA_K_BYTES),
               hop_desc_sw128(sb + k4 * HOP_WGMMA_K_BYTES), k4 > 0);
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
    float a[V2_ACC];
#pragma unroll
    for (int i = 0; i < V2_ACC; i++) {
        const float gt = accg[i], up = accu[i];
        const float silu = gt / (1.0f + expf(-gt));
        a[i] = silu * up * rw[V2_TOKEN(i, t)];
    }
    /* per-token maxima: this thread's 2 rows, then the 8 g lanes of the warp */
#pragma unroll
    for (int j = 0; j < V2_N / 8; j++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            float m = fmaxf(fabsf(a[4 * j + e]), fabsf(a[4 * j + 2 + e]));
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 4));
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 8));
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 16));
            if (g == 0) amax[(c * 4 + w) * V2_N + 8 * j + 2 * t + e] = m;
        }
    V2_CONSUMER_SYNC();
    const unsigned tile = hop_smem(sm + V2_LAYOUT.inter) + p * V2_ITILE;
    const int r0 = c * 64 + 16 * w + g; /* column in the 128-column group */
#pragma unroll
    for (int j = 0; j < V2_N / 8; j++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int n = 8 * j + 2 * t + e;
            float m = 0.f;
#pragma unroll
            for (int k = 0; k < 8; k++) m = fmaxf(m, amax[k * V2_N + n]);
            m = fmaxf(m, RAMP_FP8_AMAX_MIN);
            const float s = m / RAMP_E4M3_MAX;
            const float inv = 1.0f / s;
            const unsigned q = ramp_e4m3x2(a[4 * j + e] * inv, a[4 * j + 2 + e] * inv);
            v2_st_u8(tile + hop_swz128(n, r0 >> 4) + (r0 & 15), q & 0xFFu);
            v2_st_u8(tile + hop_swz128(n, (r0 + 8) >> 4) + ((r0 + 8) & 15), q >> 8);
            if (c == 0 && w == 0 && g == 0) iscale[n * V2_PASSES + p] = s;
        }
    hop_fence_proxy_async(); /* generic stores, read next by wgmma */
    V2_CONSUMER_SYNC();      /* tile complete; amax free for the next pass */
}

/* Consumer warpgroup c (0, 1): one tile; `it` as the producer's. */
static __device__ __forceinline__ void v2_consumer(const ramp_moe_params &prm,
                                                   unsigned char *sm, int c, int &it) {
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) & 3;
    const int g = lane >> 2, t = lane & 3;
    const unsigned base = hop_smem(sm);
    const unsigned full = hop_smem(sm + V2_LAYOUT.bars), empty = full + 8 * V2_S;
    const int *tok = (const int *)(sm + V2_LAYOUT.tok);

    /* phases 1 + 2: up projection and requantization, one pass of 128
     * columns at a time (consumer c: columns 64c..64c+63 of the pass) */
    float accg[V2_ACC], accu[V2_ACC], tg[V2_ACC], tu[V2_ACC];
#pragma unroll
    for (int i = 0; i < V2_ACC; i++) tg[i] = tu[i] = 0.f;
    for (int p = 0; p < V2_PASSES; p++) {
#pragma unroll
        for (int i = 0; i < V2_ACC; i++) accg[i] = accu[i] = 0.f;
        for (int kb = 0; kb < V2_KBLK; kb++, it++) {
            const int s = it % V2_S;
            hop_mbar_wait(full + 8 * s, (it / V2_S) & 1);
            hop_fence_proxy_async(); /* the producer's cp.async B tile, read by wgmma */
            const unsigned slot = base + s * (unsigned)V2_LAYOUT.slot_bytes;
            const unsigned char *sp = sm + s * V2_LAYOUT.slot_bytes;
            const float *xs = (const float *)(sp + V2_LAYOUT.slot_xs);
            const float wg = ((const float *)(sp + V2_LAYOUT.slot_wsc))[0];
            const float wu = ((const float *)(sp + V2_LAYOUT.slot_wsc))[1];
            float xsc[V2_TPT];
#pragma unroll
            for (int j = 0; j < V2_N / 8; j++) {
                xsc[2 * j] = xs[8 * j + 2 * t];
                xsc[2 * j + 1] = xs[8 * j + 2 * t + 1];
            }
            hop_wgmma_fence();
            v2_mma_kblock(tg, slot + c * 8192, slot + (unsigned)V2_LAYOUT.slot_b);
            v2_mma_kblock(tu, slot + 16384 + c * 8192, slot + (unsigned)V2_LAYOUT.slot_b);
            hop_wgmma_commit();
            HOP_WGMMA_WAIT(0);
            HOP_ACC_FENCE(tg, V2_ACC);
            HOP_ACC_FENCE(tu, V2_ACC);
            hop_mbar_arrive(empty + 8 * s); /* slot read: the producer may refill it */
#pragma unroll
            for (int i = 0; i < V2_ACC; i++) {
                const float x = xsc[V2_TIDX(i)];
                accg[i] += tg[i] * (wg * x);
                accu[i] += tu[i] * (wu * x);
            }
        }
        v2_act_quant(sm, accg, accu, p, c);
    }

    /* phase 3: down projection, 256 rows of d per chunk (consumer c: rows
     * 128c..128c+127 as two m-tiles), K = the slice's w columns from the
     * intermediate in shared memory */
    const float *iscale = (const float *)(sm + V2_LAYOUT.iscale);
    const unsigned inter = hop_smem(sm + V2_LAYOUT.inter);
    float *out = (float *)prm.out;
    int slots[V2_TPT]; /* the thread's tokens' slot ids */
#pragma unroll
    for (int j = 0; j < V2_N / 8; j++) {
        slots[2 * j] = tok[8 * j + 2 * t];
        slots[2 * j + 1] = tok[8 * j + 2 * t + 1];
    }
    float *acc0 = accg, *acc1 = accu, *t0 = tg, *t1 = tu; /* reuse the registers */
    for (int chunk = 0; chunk < V2_CHUNKS; chunk++) {
#pragma unroll
        for (int i = 0; i < V2_ACC; i++) acc0[i] = acc1[i] = 0.f;
        for (int kk = 0; kk < V2_DKB; kk++, it++) {
            const int s = it % V2_S;
            hop_mbar_wait(full + 8 * s, (it / V2_S) & 1);
            const unsigned slot = base + s * (unsigned)V2_LAYOUT.slot_bytes;
            const float ws = ((const float *)(sm + s * V2_LAYOUT.slot_bytes + V2_LAYOUT.slot_wsc))[c];
            float f[V2_TPT];
#pragma unroll
            for (int j = 0; j < V2_N / 8; j++) {
                f[2 * j] = ws * iscale[(8 * j + 2 * t) * V2_PASSES + kk];
                f[2 * j + 1] = ws * iscale[(8 * j + 2 * t + 1) * V2_PASSES + kk];
            }
            const unsigned sb = inter + kk * V2_ITILE;
            hop_wgmma_fence();
            v2_mma_kblock(t0, slot + c * 16384, sb);
            v2_mma_kblock(t1, slot + c * 16384 + 8192, sb);
            hop_wgmma_commit();
            HOP_WGMMA_WAIT(0);
            HOP_ACC_FENCE(t0, V2_ACC);
            HOP_ACC_FENCE(t1, V2_ACC);
            hop_mbar_arrive(empty + 8 * s);
#pragma unroll
            for (int i = 0; i < V2_ACC; i++) {
                acc0[i] += t0[i] * f[V2_TIDX(i)];
                acc1[i] += t1[i] * f[V2_TIDX(i)];
            }
        }
        const int row = chunk * RAMP_MV2_CHUNK + c * 128 + 16 * w + g;
#pragma unroll
        for (int i = 0; i < V2_ACC; i++) {
            const int sl = slots[V2_TIDX(i)];
            if (sl < 0) continue;
            float *o = out + (size_t)(sl / RAMP_TOPK) * RAMP_HIDDEN + row + 8 * ((i >> 1) & 1);
            v2_red(o, acc0[i]);
            v2_red(o + 64, acc1[i]);
        }
    }
}

/* ----------------------------------------------------------------- kernel */

/* Tile tt -> row tile r and slice (the slices of a row tile consecutive),
 * its expert (-1: skip the tile). */
static __device__ __forceinline__ int v2_tile(const ramp_moe_params &prm, int tt, int *r,
                                              int *slice) {
    *r = tt / V2_SLICES;
    *slice = tt % V2_SLICES;
    const int e = ((const int *)prm.tile_expert)[*r];
    return e >= 0 && e < RAMP_EXPERTS ? e : -1;
}

/* Named barrier 2 over the whole block: tile boundaries. */
#define V2_BLOCK_SYNC() HOP_BAR_SYNC(2, RAMP_MV2_THREADS)

extern "C" __global__ void __launch_bounds__(RAMP_MV2_THREADS, 1)
ramp_moe_v2(const ramp_moe_params prm, const __grid_constant__ ramp_moe_v2_maps maps) {
    extern __shared__ __align__(1024) unsigned char v2_dyn[];
    const unsigned a = hop_smem(v2_dyn);
    unsigned char *sm = v2_dyn + (((a + RAMP_MV2_ALIGN - 1) & ~(unsigned)(RAMP_MV2_ALIGN - 1)) - a);

    /* every block strides over the tiles (row tile, slice); the host sizes
     * the grid min(max_tiles * h/w, SMs) */
    int rtiles = *(const volatile int *)prm.num_tiles;
    if (rtiles > prm.max_tiles) rtiles = prm.max_tiles;
    const int total = rtiles * V2_SLICES;
    if ((int)blockIdx.x >= total) return;

    if (threadIdx.x == 0) {
        const unsigned full = hop_smem(sm + V2_LAYOUT.bars), empty = full + 8 * V2_S;
        for (int s = 0; s < V2_S; s++) {
            hop_mbar_init(full + 8 * s, 1 + 128); /* expect_tx arrival + 128 producers */
            hop_mbar_init(empty + 8 * s, 256);    /* every consumer thread */
        }
        hop_mbar_init_fence();
        hop_tma_prefetch_map(&maps.w13);
        hop_tma_prefetch_map(&maps.w2);
    }
    __syncthreads();

    /* Both roles walk the same tiles and stage counts (it), so the ring's
     * phases agree. At each tile: barrier (the previous tile is done with
     * tok, rw, the intermediate), the producer loads the tile's slots and
     * router weights, barrier (published). */
    int *tok = (int *)(sm + V2_LAYOUT.tok);
    float *rw = (float *)(sm + V2_LAYOUT.rw);
    int it = 0;
    const int wg = hop_warpgroup();
    if (wg == 0) {
        HOP_SETMAXNREG_DEC(RAMP_MV2_PRODUCER_REGS);
        for (int tt = blockIdx.x; tt < total; tt += gridDim.x) {
            int r, slice;
            const int e = v2_tile(prm, tt, &r, &slice);
            if (e < 0) continue;
            V2_BLOCK_SYNC();
            if (threadIdx.x < V2_N) {
                const int n = threadIdx.x;
                int s = -1;
                if (n < RAMP_ROWS) s = ((const int *)prm.sorted_ids)[(size_t)r * RAMP_ROWS + n];
                if (s >= prm.num_tokens * RAMP_TOPK) s = -1;
                tok[n] = s < 0 ? -1 : s;
                rw[n] = s < 0 ? 0.f : ((const float *)prm.topk_weights)[s];
            }
            V2_BLOCK_SYNC();
            v2_producer(prm, maps, sm, e, slice, it);
        }
        /* no thread leaves with its copies in flight (their arrivals) */
        asm volatile("cp.async.wait_all;\n" ::: "memory");
    } else {
        HOP_SETMAXNREG_INC(RAMP_MV2_CONSUMER_REGS);
        for (int tt = blockIdx.x; tt < total; tt += gridDim.x) {
            int r, slice;
            if (v2_tile(prm, tt, &r, &slice) < 0) continue;
            V2_BLOCK_SYNC();
            V2_BLOCK_SYNC();
            v2_consumer(prm, sm, wg - 1, it);
        }
    }
}
