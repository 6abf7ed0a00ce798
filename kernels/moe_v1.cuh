/*
 * moe_v1.cuh - the fused MoE kernel, version 1: mma.sync tensor cores,
 * cp.async pipelines, every configuration of the space (config.c).
 * Pseudocode: moe_v1.md beside this file. Read that first.
 *
 * One launch computes, for every tile (local expert e, run of at most b
 * token slots, slice of w intermediate columns, split of K = d):
 *   gate|up = W13[e][slice rows] . X[tokens]^T             (K = d, fp32)
 *   a       = SiLU(gate) * up * router_weight(slot)
 *   q       = FP8 e4m3 of a, per token per 128 columns      (FP8 only;
 *             BF16 rounds a to bf16 instead)
 *   out[token] += W2[e][:, slice] . q                       (all d rows)
 * in the swap-AB form: the weights are the MMA's M operand (16 rows per
 * m16n8k32 FP8 / m16n8k16 BF16 instruction) and the tile's tokens its N
 * operand (8 per instruction), so tiles of 2..64 tokens waste little.
 *
 * Input contract (written by the selection kernel, kernels/select.cuh, or
 * by anyone else; see ramp_moe_params in moe_v1_params.h):
 *   sorted_ids  int32 [max_tiles * b]: token slot ids grouped by local
 *               expert, each expert's run padded to a multiple of b with -1.
 *               A slot id is token * k + j (j-th choice of the token), so
 *               the router weight is topk_weights[slot] and the token row
 *               is slot / k. Ids outside [0, M*k) are treated as padding.
 *   tile_expert int32 [max_tiles]: local expert of row tile r (the slots
 *               sorted_ids[r*b .. r*b+b-1]); out-of-range experts skip.
 *   num_tiles   int32 [1] in DEVICE memory: row tiles of this launch
 *               (clamped to max_tiles). Read on the device, so the launch
 *               can be captured in a CUDA graph once and replayed.
 *   x, x_scale  FP8 e4m3 [M, d] with f32 [M, d/128] 1x128 scales, or (when
 *               the kernel is built with RAMP_XBF16=1) BF16 [M, d]
 *               quantized here, 1x128 per token, exactly as src/fp8.c does.
 *   w13, w2     vLLM's block_shape=[128,128] layout: w13 [E, 2h, d] (gate
 *               rows first, then up), w2 [E, d, h]; scales [E, 2h/128,
 *               d/128] and [E, d/128, h/128] f32. BF16: same shapes, no
 *               scales.
 *   out         f32 [M, d]: contributions are ADDED (red.global.add.v4.f32),
 *               so the caller zeroes it first (or passes a residual).
 *   ws,ws_count split-K only: partials and arrival counters; counters start
 *               at zero and the kernel leaves them at zero (graph-safe).
 * Launch: block = THREADS (128 for w = 128, else 256), dynamic shared memory
 * = ramp_moe_v1_layout_of(...).total, grid = max_tiles * Q for a plain
 * launch or sms * blocks_per_sm for a persistent one (Q = h/w * splitk).
 * Every block strides over tiles t = blockIdx.x + i * gridDim.x < num_tiles*Q.
 *
 * Specialisation (macros; all required unless a default is given):
 *   RAMP_ROWS, RAMP_WIDTH, RAMP_STAGES, RAMP_PERSISTENT, RAMP_GROUPED,
 *   RAMP_SPLITK: the configuration (ramp_config)
 *   RAMP_HIDDEN (d), RAMP_INTER (h), RAMP_TOPK (k), RAMP_EXPERTS (local E)
 *   RAMP_BF16 (0: FP8 block-scaled, 1: BF16), RAMP_XBF16 (0: FP8 hidden
 *   states with scales, 1: BF16 hidden states), RAMP_KERNEL_NAME (ramp_moe_v1)
 *
 * Polymorphic builds (moe_poly.cuh) include this file once per menu entry,
 * each time inside its own namespace with RAMP_V1_BODY_ONLY=1: no __global__
 * is emitted, v1_body() is the entry's whole kernel, and the V1_* macros are
 * undefined at the end so that the next entry can define its own. Barriers
 * are named (bar.sync 1 over V1_THREADS), so an entry of 128 threads runs
 * in a wider block whose surplus warps have already returned.
 */
#include "fp8.cuh"
#include "moe_v1_params.h"

#if !defined(RAMP_ROWS) || !defined(RAMP_WIDTH) || !defined(RAMP_STAGES) || \
    !defined(RAMP_SPLITK) || !defined(RAMP_HIDDEN) || !defined(RAMP_INTER) || \
    !defined(RAMP_TOPK) || !defined(RAMP_EXPERTS)
#error "moe_v1.cuh: define RAMP_ROWS, RAMP_WIDTH, RAMP_STAGES, RAMP_SPLITK, RAMP_HIDDEN, RAMP_INTER, RAMP_TOPK, RAMP_EXPERTS"
#endif
#ifndef RAMP_PERSISTENT
#define RAMP_PERSISTENT 0
#endif
#ifndef RAMP_GROUPED
#define RAMP_GROUPED 0
#endif
#ifndef RAMP_BF16
#define RAMP_BF16 0
#endif
#ifndef RAMP_XBF16
#define RAMP_XBF16 0
#endif
#ifndef RAMP_KERNEL_NAME
#define RAMP_KERNEL_NAME ramp_moe_v1
#endif
#ifndef RAMP_V1_BODY_ONLY
#define RAMP_V1_BODY_ONLY 0
#endif
#if RAMP_BF16
#undef RAMP_XBF16
#define RAMP_XBF16 0
#endif

#if RAMP_WIDTH != 128 && RAMP_WIDTH != 256 && RAMP_WIDTH != 512
#error "RAMP_WIDTH must be 128, 256 or 512"
#endif
#if RAMP_ROWS < 1 || RAMP_ROWS > 64
#error "RAMP_ROWS must be in 1..64"
#endif
#if RAMP_STAGES < 2 || RAMP_STAGES > 8
#error "RAMP_STAGES must be in 2..8"
#endif
#if RAMP_INTER % RAMP_WIDTH != 0
#error "the slice width must divide h"
#endif
#if RAMP_HIDDEN % (128 * RAMP_SPLITK) != 0
#error "d must be a multiple of 128 * split-K"
#endif
#if !RAMP_BF16 && RAMP_INTER % 128 != 0
#error "FP8 needs h % 128 == 0"
#endif

/* ---- constants of this specialisation (= ramp_moe_v1_layout_of) ---- */
#define V1_NPAD ((RAMP_ROWS + 7) / 8 * 8)
#define V1_NT (V1_NPAD / 8)                 /* n-tiles of 8 tokens */
#define V1_MTW (V1_NPAD >= 32 ? 2 : 4)      /* m16 tiles per warp */
#define V1_HMT (V1_MTW / 2)                 /* of them gate (and as many up) */
#define V1_THREADS ((RAMP_WIDTH == 128 && V1_MTW == 4) ? 128 : 256)
#define V1_WARPS (V1_THREADS / 32)
#define V1_RW (16 * V1_MTW)                 /* weight rows per warp */
#define V1_CW (8 * V1_MTW)                  /* intermediate columns per warp */
#define V1_GW (128 / V1_CW)                 /* warps per 128-column group */
#define V1_AROWS (V1_RW * V1_WARPS)         /* weight rows per stage */
#define V1_PW (V1_AROWS / 2)                /* intermediate columns per up pass */
#define V1_NPASS (RAMP_WIDTH / V1_PW)
#define V1_EB (RAMP_BF16 ? 2 : 1)           /* bytes per element */
#define V1_KS (64 / V1_EB)                  /* K elements per stage (64 bytes) */
#define V1_KRANGE (RAMP_HIDDEN / RAMP_SPLITK)
#define V1_UPS (V1_KRANGE / V1_KS)          /* stages per up pass */
#define V1_NUP (V1_NPASS * V1_UPS)
#define V1_DCHUNKS ((RAMP_HIDDEN + V1_AROWS - 1) / V1_AROWS)
#define V1_DKS (RAMP_WIDTH / V1_KS)         /* stages per down chunk */
#define V1_NDOWN (V1_DCHUNKS * V1_DKS)
#define V1_SLICES (RAMP_INTER / RAMP_WIDTH)
#define V1_Q (V1_SLICES * RAMP_SPLITK)      /* tiles per row tile */
#define V1_GROUP 8                          /* row tiles per group (grouped order) */
#define V1_ACC (4 * V1_MTW * V1_NT)         /* accumulators per thread */
#define V1_FP8 (!RAMP_BF16)

#if RAMP_WIDTH % V1_PW != 0 || V1_PW % 128 != 0
#error "internal: pass width must divide w and be a multiple of 128"
#endif

/* ---- PTX wrappers ---- */
static __device__ __forceinline__ unsigned v1_smem(const void *p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
/* 16-byte async copy; bytes = 0 writes zeros and reads nothing. */
static __device__ __forceinline__ void v1_cp16(unsigned dst, const void *src, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(dst), "l"(src), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void v1_cp4(unsigned dst, const void *src, int bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
                 :: "r"(dst), "l"(src), "r"(bytes) : "memory");
}
#define V1_COMMIT() asm volatile("cp.async.commit_group;\n" ::: "memory")
#define V1_WAIT(n) asm volatile("cp.async.wait_group %0;\n" :: "n"(n) : "memory")
/* The block barrier of this configuration's V1_THREADS threads: named in a
 * polymorphic kernel, where the block may be wider than the entry. */
#if RAMP_V1_BODY_ONLY
#define V1_SYNC() asm volatile("bar.sync 1, %0;\n" :: "n"(V1_THREADS) : "memory")
#else
#define V1_SYNC() __syncthreads()
#endif

static __device__ __forceinline__ void v1_ldsm4(unsigned addr, unsigned *r) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr) : "memory");
}

/* D += A . B for one 16-byte-K fragment pair per k-step: BF16 m16n8k16
 * natively. FP8: sm_90 has no FP8 mma.sync in hardware (ptxas emulates
 * m16n8k32.e4m3 with conversions and f16 HMMA, hoisting the converted
 * fragments and spilling at 64 rows), so we emulate it ourselves: e4m3 ->
 * f16 is exact and f16 products are exact in the f32 accumulator. An e4m3
 * register holding k = 4t..4t+3 becomes two f16x2 registers (4t, 4t+1) and
 * (4t+2, 4t+3), used as the f16 fragment's k = (2t, 2t+1) and (2t+8, 2t+9):
 * A and B take the same permutation of k, so the dot product is unchanged. */
static __device__ __forceinline__ void v1_mma_f16(float *c, unsigned a0, unsigned a1,
                                                  unsigned a2, unsigned a3,
                                                  unsigned b0, unsigned b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
static __device__ __forceinline__ void v1_mma_bf16(float *c, const unsigned *a,
                                                   unsigned b0, unsigned b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
/* Four e4m3 -> two f16x2 (exact). Volatile: converted where written, so
 * the compiler does not hoist (and hold) converted copies. */
static __device__ __forceinline__ void v1_e4m3x4_f16(unsigned v, unsigned *lo, unsigned *hi) {
    unsigned short a = (unsigned short)(v & 0xFFFFu), b = (unsigned short)(v >> 16);
    asm volatile("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(*lo) : "h"(a));
    asm volatile("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(*hi) : "h"(b));
}

static __device__ __forceinline__ void v1_red4(float *p, float a, float b, float c, float d) {
    asm volatile("red.global.add.v4.f32 [%0], {%1,%2,%3,%4};\n"
                 :: "l"(p), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
}

/* 64-byte rows of 4 chunks: chunk c of row r lives at c ^ ((r >> 1) & 3), so
 * that ldmatrix's 8 rows of one chunk hit 8 different bank groups. */
static __device__ __forceinline__ unsigned v1_swz(int r, int c) {
    return (unsigned)(r * 64 + ((c ^ ((r >> 1) & 3)) << 4));
}

/* Register row (mt, half, g) of a warp's RW-row block (RW = 16 * MTW) holds
 * weight row g * 2MTW + mt * 2 + half of that block (down) or intermediate
 * column g * MTW + (mt % HMT) * 2 + half (up; mt / HMT picks gate or up):
 * each thread then owns consecutive columns/rows, so it stores MTW FP8 bytes
 * or 2MTW floats at once. The loader applies the same permutation. */

typedef struct {
    int e, r, slice, split;
} v1_tile;

typedef struct {
    const unsigned char *x;
    const float *x_scale;
    const unsigned char *w13;
    const float *w13_scale;
    const unsigned char *w2;
    const float *w2_scale;
    float *out;
    float *ws;
    unsigned char *smem;
} v1_ctx;

#define V1_LAYOUT (ramp_moe_v1_layout_of(RAMP_ROWS, RAMP_WIDTH, RAMP_STAGES, RAMP_BF16, RAMP_XBF16))

static __device__ __forceinline__ unsigned char *v1_slot(const v1_ctx *c, int st) {
    return c->smem + (st % RAMP_STAGES) * V1_LAYOUT.slot_bytes;
}

/* Issues the cp.async copies of pipeline step st (up stage or down stage). */
static __device__ __forceinline__ void v1_issue(const v1_ctx *c, const v1_tile *t, int st) {
    const int tid = threadIdx.x;
    unsigned char *slot = v1_slot(c, st);
    const unsigned sa = v1_smem(slot + V1_LAYOUT.slot_a);
    const int *tok = (const int *)(c->smem + V1_LAYOUT.tok);
    if (st < V1_NUP) {
        const int p = st / V1_UPS, kst = st % V1_UPS;
        const int k0 = t->split * V1_KRANGE + kst * V1_KS; /* element */
        const int c0 = t->slice * RAMP_WIDTH + p * V1_PW;  /* intermediate column */
        const unsigned char *wbase = c->w13 + (size_t)t->e * (2 * RAMP_INTER) *
                                                  (size_t)RAMP_HIDDEN * V1_EB;
#pragma unroll
        for (int i = 0; i < V1_AROWS * 4 / V1_THREADS; i++) {
            int idx = tid + i * V1_THREADS;
            int r = idx >> 2, ch = idx & 3;
            int wi = r / V1_RW, lr = r % V1_RW, mt = lr >> 4, hf = (lr >> 3) & 1, g = lr & 7;
            int grow = (mt >= V1_HMT ? RAMP_INTER : 0) + c0 + wi * V1_CW + g * V1_MTW +
                       (mt % V1_HMT) * 2 + hf;
            const unsigned char *src = wbase + (size_t)grow * RAMP_HIDDEN * V1_EB +
                                       (size_t)k0 * V1_EB + ch * 16;
            v1_cp16(sa + v1_swz(r, ch), src, 16);
        }
#if RAMP_XBF16
        /* Raw BF16 token K (64 elements = 128 bytes per row). */
        const unsigned sr = v1_smem(slot + V1_LAYOUT.slot_raw);
        for (int idx = tid; idx < V1_NPAD * 8; idx += V1_THREADS) {
            int n = idx >> 3, ch = idx & 7;
            int s = tok[n];
            const unsigned char *src = c->x;
            if (s >= 0)
                src = c->x + ((size_t)(s / RAMP_TOPK) * RAMP_HIDDEN + k0) * 2 + ch * 16;
            v1_cp16(sr + n * 128 + ch * 16, src, s >= 0 ? 16 : 0);
        }
#else
        const unsigned sb = v1_smem(slot + V1_LAYOUT.slot_b);
        for (int idx = tid; idx < V1_NPAD * 4; idx += V1_THREADS) {
            int n = idx >> 2, ch = idx & 3;
            int s = tok[n];
            const unsigned char *src = c->x;
            if (s >= 0)
                src = c->x + ((size_t)(s / RAMP_TOPK) * RAMP_HIDDEN + k0) * V1_EB + ch * 16;
            v1_cp16(sb + v1_swz(n, ch), src, s >= 0 ? 16 : 0);
        }
#if V1_FP8
        if (tid < V1_NPAD) {
            int s = tok[tid];
            const float *src = c->x_scale;
            if (s >= 0)
                src = c->x_scale + (size_t)(s / RAMP_TOPK) * (RAMP_HIDDEN / 128) + k0 / 128;
            v1_cp4(v1_smem(slot + V1_LAYOUT.slot_xs) + tid * 4, src, s >= 0 ? 4 : 0);
        }
#endif
#endif
#if V1_FP8
        if (tid >= V1_THREADS - 2 * V1_WARPS) {
            int j = tid - (V1_THREADS - 2 * V1_WARPS);
            int wi = j >> 1, up = j & 1;
            int row = (up ? RAMP_INTER : 0) + c0 + wi * V1_CW;
            const float *src = c->w13_scale +
                ((size_t)t->e * (2 * RAMP_INTER / 128) + row / 128) * (RAMP_HIDDEN / 128) + k0 / 128;
            v1_cp4(v1_smem(slot + V1_LAYOUT.slot_wsc) + j * 4, src, 4);
        }
#endif
    } else {
        const int ds = st - V1_NUP;
        const int chunk = ds / V1_DKS, kk = ds % V1_DKS;
        const int j0 = t->slice * RAMP_WIDTH + kk * V1_KS; /* column of h */
        const int rbase = chunk * V1_AROWS;
        const unsigned char *wbase = c->w2 + (size_t)t->e * RAMP_HIDDEN *
                                                 (size_t)RAMP_INTER * V1_EB;
#pragma unroll
        for (int i = 0; i < V1_AROWS * 4 / V1_THREADS; i++) {
            int idx = tid + i * V1_THREADS;
            int r = idx >> 2, ch = idx & 3;
            int wi = r / V1_RW, lr = r % V1_RW, mt = lr >> 4, hf = (lr >> 3) & 1, g = lr & 7;
            int drow = rbase + wi * V1_RW + g * (2 * V1_MTW) + mt * 2 + hf;
            int ok = drow < RAMP_HIDDEN;
            const unsigned char *src = ok ? wbase + (size_t)drow * RAMP_INTER * V1_EB +
                                                (size_t)j0 * V1_EB + ch * 16
                                          : wbase;
            v1_cp16(sa + v1_swz(r, ch), src, ok ? 16 : 0);
        }
#if V1_FP8
        if (tid >= V1_THREADS - V1_WARPS) {
            int wi = tid - (V1_THREADS - V1_WARPS);
            int drow = rbase + wi * V1_RW;
            int ok = drow < RAMP_HIDDEN;
            const float *src = ok ? c->w2_scale + ((size_t)t->e * (RAMP_HIDDEN / 128) + drow / 128) *
                                                      (RAMP_INTER / 128) + j0 / 128
                                  : c->w2_scale;
            v1_cp4(v1_smem(slot + V1_LAYOUT.slot_wsc) + wi * 4, src, ok ? 4 : 0);
        }
#endif
    }
}

static __device__ __forceinline__ unsigned v1_baddr(unsigned bsm, int bstride, int bswz,
                                                    int boff, int nt) {
    const int lane = threadIdx.x & 31;
    int row = nt * 8 + (lane & 7), ch = lane >> 3;
    return bswz ? bsm + v1_swz(row, ch) : bsm + row * bstride + boff + ch * 16;
}

/* B fragments of all n-tiles stay in registers across the m-tiles for up to
 * 32 rows; for 48-64 rows they are re-read per m-tile (2x the B reads from
 * shared memory, 24-32 registers fewer: no spills). */
#ifndef V1_BKEEP
#define V1_BKEEP (V1_NT <= 4)
#endif

/* One stage of MMAs: acc[MTW m-tiles][NT][4] += A(slot) . B^T, where B rows
 * come from `bsm` (stride bstride bytes, swizzled iff bswz, K bytes at boff)
 * and, for FP8, the stage's K (64, within one 128 block) is summed apart and
 * then scaled by wscale(gate or up) * bscale(token): the 1x128 / 128x128
 * block scales applied in f32, as the reference does per block. */
static __device__ __forceinline__ void v1_mma_stage(float (*acc)[V1_NT][4], unsigned sa,
                                                    unsigned bsm, int bstride, int bswz,
                                                    int boff, float wsg, float wsu,
                                                    const float *bsc, int bscs) {
    const int lane = threadIdx.x & 31, wi = threadIdx.x >> 5;
#if V1_BKEEP
    unsigned bf[V1_NT][4];
#pragma unroll
    for (int nt = 0; nt < V1_NT; nt++) v1_ldsm4(v1_baddr(bsm, bstride, bswz, boff, nt), bf[nt]);
#endif
#pragma unroll
    for (int mt = 0; mt < V1_MTW; mt++) {
        unsigned af[2][4];
#pragma unroll
        for (int ks = 0; ks < 2; ks++) {
            int row = wi * V1_RW + mt * 16 + (lane & 15), ch = 2 * ks + (lane >> 4);
            v1_ldsm4(sa + v1_swz(row, ch), af[ks]);
        }
#if V1_FP8
        const float w = mt >= V1_HMT ? wsu : wsg;
        unsigned ah[2][4][2]; /* [ks][fp8 reg][lo/hi] as f16x2 */
#pragma unroll
        for (int ks = 0; ks < 2; ks++)
#pragma unroll
            for (int r = 0; r < 4; r++) v1_e4m3x4_f16(af[ks][r], &ah[ks][r][0], &ah[ks][r][1]);
#pragma unroll
        for (int nt = 0; nt < V1_NT; nt++) {
#if V1_BKEEP
            const unsigned *b = bf[nt];
#else
            unsigned b[4];
            v1_ldsm4(v1_baddr(bsm, bstride, bswz, boff, nt), b);
#endif
            unsigned bh[4][2];
#pragma unroll
            for (int r = 0; r < 4; r++) v1_e4m3x4_f16(b[r], &bh[r][0], &bh[r][1]);
            float tmp[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
            for (int ks = 0; ks < 2; ks++)
#pragma unroll
                for (int h = 0; h < 2; h++) /* fp8 k-halves 0-15, 16-31 */
                    v1_mma_f16(tmp, ah[ks][2 * h][0], ah[ks][2 * h + 1][0], ah[ks][2 * h][1],
                               ah[ks][2 * h + 1][1], bh[2 * ks + h][0], bh[2 * ks + h][1]);
            int n = nt * 8 + (lane & 3) * 2;
            float s0 = w * bsc[n * bscs], s1 = w * bsc[(n + 1) * bscs];
            acc[mt][nt][0] += tmp[0] * s0;
            acc[mt][nt][1] += tmp[1] * s1;
            acc[mt][nt][2] += tmp[2] * s0;
            acc[mt][nt][3] += tmp[3] * s1;
        }
#else
#pragma unroll
        for (int nt = 0; nt < V1_NT; nt++) {
#if V1_BKEEP
            const unsigned *b = bf[nt];
#else
            unsigned b[4];
            v1_ldsm4(v1_baddr(bsm, bstride, bswz, boff, nt), b);
#endif
            v1_mma_bf16(acc[mt][nt], af[0], b[0], b[1]);
            v1_mma_bf16(acc[mt][nt], af[1], b[2], b[3]);
        }
#endif
    }
}

static __device__ __forceinline__ void v1_zero(float (*acc)[V1_NT][4]) {
#pragma unroll
    for (int mt = 0; mt < V1_MTW; mt++)
#pragma unroll
        for (int nt = 0; nt < V1_NT; nt++)
#pragma unroll
            for (int i = 0; i < 4; i++) acc[mt][nt][i] = 0.f;
}

/* SiLU(gate) * up * router weight of up pass p, rounded (BF16) or quantized
 * per token per 128 columns (FP8), into the intermediate. Ends synchronised. */
static __device__ __forceinline__ void v1_act_quant(const v1_ctx *c, float (*acc)[V1_NT][4], int p) {
    const int lane = threadIdx.x & 31, wi = threadIdx.x >> 5;
    const int g = lane >> 2, tq = lane & 3;
    unsigned char *inter = c->smem + V1_LAYOUT.inter;
    const float *rw = (const float *)(c->smem + V1_LAYOUT.rw);
    const int col = p * V1_PW + wi * V1_CW + g * V1_MTW; /* slice column of v[0] */
    float v[V1_NT][2][V1_MTW];
#pragma unroll
    for (int nt = 0; nt < V1_NT; nt++)
#pragma unroll
        for (int j = 0; j < 2; j++) {
            float r = rw[nt * 8 + tq * 2 + j];
#pragma unroll
            for (int mt = 0; mt < V1_HMT; mt++)
#pragma unroll
                for (int hf = 0; hf < 2; hf++) {
                    float gt = acc[mt][nt][hf * 2 + j], up = acc[mt + V1_HMT][nt][hf * 2 + j];
                    float silu = gt / (1.0f + expf(-gt));
                    v[nt][j][mt * 2 + hf] = silu * up * r;
                }
        }
#if V1_FP8
    float *amax = (float *)(c->smem + V1_LAYOUT.amax);
    float *iscale = (float *)(c->smem + V1_LAYOUT.iscale);
#pragma unroll
    for (int nt = 0; nt < V1_NT; nt++)
#pragma unroll
        for (int j = 0; j < 2; j++) {
            float m = 0.f;
#pragma unroll
            for (int i = 0; i < V1_MTW; i++) m = fmaxf(m, fabsf(v[nt][j][i]));
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 4));
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 8));
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 16));
            if (g == 0) amax[wi * V1_NPAD + nt * 8 + tq * 2 + j] = m;
        }
    V1_SYNC();
    const int gw = wi - wi % V1_GW; /* first warp of this 128-column group */
#pragma unroll
    for (int nt = 0; nt < V1_NT; nt++)
#pragma unroll
        for (int j = 0; j < 2; j++) {
            int n = nt * 8 + tq * 2 + j;
            float m = 0.f;
#pragma unroll
            for (int k = 0; k < V1_GW; k++) m = fmaxf(m, amax[(gw + k) * V1_NPAD + n]);
            m = fmaxf(m, RAMP_FP8_AMAX_MIN);
            float s = m / RAMP_E4M3_MAX;
            float inv = 1.0f / s;
            unsigned char *dst = inter + n * V1_LAYOUT.inter_stride + col;
#if V1_MTW == 4
            *(unsigned *)dst = ramp_e4m3x4(v[nt][j][0] * inv, v[nt][j][1] * inv,
                                           v[nt][j][2] * inv, v[nt][j][3] * inv);
#else
            *(unsigned short *)dst =
                (unsigned short)ramp_e4m3x2(v[nt][j][0] * inv, v[nt][j][1] * inv);
#endif
            if (g == 0 && wi == gw) iscale[n * (RAMP_WIDTH / 128) + col / 128] = s;
        }
#else
#pragma unroll
    for (int nt = 0; nt < V1_NT; nt++)
#pragma unroll
        for (int j = 0; j < 2; j++) {
            int n = nt * 8 + tq * 2 + j;
            unsigned char *dst = inter + n * V1_LAYOUT.inter_stride + col * 2;
#if V1_MTW == 4
            uint2 q;
            q.x = ramp_bf16x2(v[nt][j][0], v[nt][j][1]);
            q.y = ramp_bf16x2(v[nt][j][2], v[nt][j][3]);
            *(uint2 *)dst = q;
#else
            *(unsigned *)dst = ramp_bf16x2(v[nt][j][0], v[nt][j][1]);
#endif
        }
#endif
    V1_SYNC();
}

#if RAMP_XBF16
/* Quantizes the BF16 token K block of stages st (even) and st + 1 into the
 * slots' FP8 B areas: 1x128 per token, scale = amax / 448, q = e4m3(x / s)
 * computed as x * (1 / s), exactly as src/fp8.c. */
static __device__ __forceinline__ void v1_quant_tokens(const v1_ctx *c, int st) {
    const int lane = threadIdx.x & 31, wi = threadIdx.x >> 5;
    const int half = lane >> 4, l16 = lane & 15;
    unsigned char *slot = v1_slot(c, st + half);
    for (int n = wi; n < V1_NPAD; n += V1_WARPS) {
        uint2 raw = *(const uint2 *)(slot + V1_LAYOUT.slot_raw + n * 128 + l16 * 8);
        float f0 = ramp_bf16_lo(raw.x), f1 = ramp_bf16_hi(raw.x);
        float f2 = ramp_bf16_lo(raw.y), f3 = ramp_bf16_hi(raw.y);
        float m = fmaxf(fmaxf(fabsf(f0), fabsf(f1)), fmaxf(fabsf(f2), fabsf(f3)));
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
        m = fmaxf(m, RAMP_FP8_AMAX_MIN);
        float s = m / RAMP_E4M3_MAX;
        float inv = 1.0f / s;
        unsigned q = ramp_e4m3x4(f0 * inv, f1 * inv, f2 * inv, f3 * inv);
        int ch = l16 >> 2;
        *(unsigned *)(slot + V1_LAYOUT.slot_b + v1_swz(n, ch) + (l16 & 3) * 4) = q;
        if (l16 == 0) ((float *)(slot + V1_LAYOUT.slot_xs))[n] = s;
    }
}
#endif

/* Adds a finished down chunk (acc) into out, 2MTW consecutive rows per
 * thread and token column. */
static __device__ __forceinline__ void v1_store_out(const v1_ctx *c, float (*acc)[V1_NT][4], int chunk) {
    const int lane = threadIdx.x & 31, wi = threadIdx.x >> 5;
    const int g = lane >> 2, tq = lane & 3;
    const int *tok = (const int *)(c->smem + V1_LAYOUT.tok);
    const int drow = chunk * V1_AROWS + wi * V1_RW + g * (2 * V1_MTW);
    if (drow >= RAMP_HIDDEN) return;
#pragma unroll
    for (int nt = 0; nt < V1_NT; nt++)
#pragma unroll
        for (int j = 0; j < 2; j++) {
            int s = tok[nt * 8 + tq * 2 + j];
            if (s < 0) continue;
            float *o = c->out + (size_t)(s / RAMP_TOPK) * RAMP_HIDDEN + drow;
#pragma unroll
            for (int h = 0; h < V1_MTW / 2; h++)
                v1_red4(o + 4 * h, acc[2 * h][nt][j], acc[2 * h][nt][2 + j],
                        acc[2 * h + 1][nt][j], acc[2 * h + 1][nt][2 + j]);
        }
}

#if RAMP_SPLITK > 1
static __device__ __forceinline__ float *v1_partial(const v1_ctx *c, const v1_tile *t, int split, int p) {
    size_t tsid = (size_t)t->r * V1_SLICES + t->slice;
    return c->ws + ((tsid * RAMP_SPLITK + split) * V1_NPASS + p) * (size_t)(V1_ACC * V1_THREADS);
}
#endif

/* Computes pipeline step st: MMAs, then the step's epilogue if it ends an
 * up pass (activation + quantization, or split-K partial store) or a down
 * chunk (output). */
static __device__ __forceinline__ void v1_compute(const v1_ctx *c, const v1_tile *t, int st,
                                                  float (*acc)[V1_NT][4]) {
    const int wi = threadIdx.x >> 5;
    unsigned char *slot = v1_slot(c, st);
    const unsigned sa = v1_smem(slot + V1_LAYOUT.slot_a);
    if (st < V1_NUP) {
        const int p = st / V1_UPS, kst = st % V1_UPS;
#if V1_FP8
        const float *wsc = (const float *)(slot + V1_LAYOUT.slot_wsc);
        v1_mma_stage(acc, sa, v1_smem(slot + V1_LAYOUT.slot_b), 64, 1, 0, wsc[2 * wi],
                     wsc[2 * wi + 1], (const float *)(slot + V1_LAYOUT.slot_xs), 1);
#else
        v1_mma_stage(acc, sa, v1_smem(slot + V1_LAYOUT.slot_b), 64, 1, 0, 1.f, 1.f, 0, 0);
#endif
        if (kst == V1_UPS - 1) {
#if RAMP_SPLITK > 1
            float *dst = v1_partial(c, t, t->split, p);
#pragma unroll
            for (int mt = 0; mt < V1_MTW; mt++)
#pragma unroll
                for (int nt = 0; nt < V1_NT; nt++)
#pragma unroll
                    for (int i = 0; i < 4; i++)
                        dst[((mt * V1_NT + nt) * 4 + i) * V1_THREADS + threadIdx.x] = acc[mt][nt][i];
#else
            v1_act_quant(c, acc, p);
#endif
            v1_zero(acc);
        }
    } else {
        const int ds = st - V1_NUP;
        const int chunk = ds / V1_DKS, kk = ds % V1_DKS;
        const unsigned char *inter = c->smem + V1_LAYOUT.inter;
#if V1_FP8
        const float *wsc = (const float *)(slot + V1_LAYOUT.slot_wsc);
        const float *isc = (const float *)(c->smem + V1_LAYOUT.iscale) + (kk * V1_KS) / 128;
        v1_mma_stage(acc, sa, v1_smem(inter), (int)V1_LAYOUT.inter_stride, 0, kk * 64,
                     wsc[wi], wsc[wi], isc, RAMP_WIDTH / 128);
#else
        v1_mma_stage(acc, sa, v1_smem(inter), (int)V1_LAYOUT.inter_stride, 0, kk * 64,
                     1.f, 1.f, 0, 0);
#endif
        if (kk == V1_DKS - 1) {
            v1_store_out(c, acc, chunk);
            v1_zero(acc);
        }
    }
}

/* Runs pipeline steps [first, last) through a ring of RAMP_STAGES slots:
 * RAMP_STAGES - 1 steps' copies are in flight while one step computes. */
static __device__ __forceinline__ void v1_run(const v1_ctx *c, const v1_tile *t, int first,
                                              int last, float (*acc)[V1_NT][4]) {
#pragma unroll
    for (int i = 0; i < RAMP_STAGES - 1; i++) {
        if (first + i < last) v1_issue(c, t, first + i);
        V1_COMMIT();
    }
    for (int st = first; st < last; st++) {
        if (st + RAMP_STAGES - 1 < last) v1_issue(c, t, st + RAMP_STAGES - 1);
        V1_COMMIT();
#if RAMP_XBF16
        /* An even up stage quantizes K blocks of 128 = this stage and the next. */
        const int pair = st < V1_NUP && ((st % V1_UPS) & 1) == 0;
        if (pair) V1_WAIT(RAMP_STAGES - 2);
        else V1_WAIT(RAMP_STAGES - 1);
        V1_SYNC();
        if (pair) {
            v1_quant_tokens(c, st);
            V1_SYNC();
        }
#else
        V1_WAIT(RAMP_STAGES - 1);
        V1_SYNC();
#endif
        v1_compute(c, t, st, acc);
        V1_SYNC(); /* the slot of st is free for the next issue */
    }
    V1_WAIT(0);
}

/* Tile index -> (row tile, slice, split). Plain order: the q tiles of one row
 * tile are consecutive (token rows reused from L2). Grouped order: within
 * groups of V1_GROUP row tiles the row tile varies fastest, so blocks that
 * run together read the same weight slice (weights reused from L2). */
static __device__ __forceinline__ void v1_decode(int tt, int rtiles, int *r, int *sub) {
#if RAMP_GROUPED
    int grp = tt / (V1_GROUP * V1_Q);
    int base = grp * V1_GROUP;
    int gs = rtiles - base < V1_GROUP ? rtiles - base : V1_GROUP;
    int local = tt - grp * V1_GROUP * V1_Q;
    *sub = local / gs;
    *r = base + local % gs;
#else
    (void)rtiles;
    *r = tt / V1_Q;
    *sub = tt % V1_Q;
#endif
}

/* The tile after tt: tt + grid (static striding), or, with a tile counter
 * (sched, the polymorphic kernel's), the next unclaimed tile, so that
 * blocks that finish early take more (a tile scheduler, like the hardware's
 * for a plain grid). Thread 0 claims it when the current tile starts (its
 * latency hides behind the tile) and flag[1] broadcasts it. */
static __device__ __forceinline__ int v1_next(int *sched, int tt, int grid, int claim,
                                              int *flag) {
    if (!sched) return tt + grid;
    if (threadIdx.x == 0) flag[1] = grid + claim;
    V1_SYNC();
    const int next = flag[1];
    V1_SYNC(); /* everyone has read it before thread 0 claims again */
    return next;
}

/* The whole kernel of this configuration for block `block` of `grid`
 * (threads 0 .. V1_THREADS-1; smem: ramp_moe_v1_layout_of(...).total bytes,
 * 128-byte aligned). In a polymorphic kernel, tiles after the first come
 * from the counter sched. */
#if RAMP_V1_BODY_ONLY
/* Not inlined into the polymorphic kernel's switch: inlined, the compiler
 * allocates registers across the entries' bodies together and spills where
 * no entry alone would; a call gives each entry its own allocation (and
 * takes the parameters by value: a reference to the kernel's parameter
 * space would be copied to the stack). Inlined into a single-configuration
 * kernel, a reference keeps them in the parameter bank. */
#define V1_BODY_INLINE __noinline__
#define V1_PRM const ramp_moe_params
#else
#define V1_BODY_INLINE __forceinline__
#define V1_PRM const ramp_moe_params &
#endif
static __device__ V1_BODY_INLINE void v1_body(V1_PRM prm,
                                               unsigned char *ramp_v1_smem,
                                               int block, int grid, int *sched) {
    v1_ctx c;
    c.x = (const unsigned char *)prm.x;
    c.x_scale = (const float *)prm.x_scale;
    c.w13 = (const unsigned char *)prm.w13;
    c.w13_scale = (const float *)prm.w13_scale;
    c.w2 = (const unsigned char *)prm.w2;
    c.w2_scale = (const float *)prm.w2_scale;
    c.out = (float *)prm.out;
    c.ws = (float *)prm.ws;
    c.smem = ramp_v1_smem;
    const int *sorted_ids = (const int *)prm.sorted_ids;
    const int *tile_expert = (const int *)prm.tile_expert;
    const float *topk_w = (const float *)prm.topk_weights;
    int *tok = (int *)(ramp_v1_smem + V1_LAYOUT.tok);
    float *rw = (float *)(ramp_v1_smem + V1_LAYOUT.rw);
    int *flag = (int *)(ramp_v1_smem + V1_LAYOUT.flag);

    int rtiles = *(const volatile int *)prm.num_tiles;
    if (rtiles > prm.max_tiles) rtiles = prm.max_tiles;
    if (rtiles < 0) rtiles = 0;
    const int total = rtiles * V1_Q;
    const int slots = prm.num_tokens * RAMP_TOPK;

    float acc[V1_MTW][V1_NT][4];
#if RAMP_V1_BODY_ONLY
    /* The first tile is `block`, the next ones grid + the counter's claims
     * (the polymorphic kernel passes the block index and its grid, or, for
     * a launch with few tiles, a tile it claimed and grid = 0). */
    int claim = 0;
    for (int tt = block; tt < total; tt = v1_next(sched, tt, grid, claim, flag)) {
        if (threadIdx.x == 0) claim = atomicAdd(sched, 1);
#else
    /* a single configuration strides statically */
    (void)sched;
    for (int tt = block; tt < total; tt += grid) {
#endif
        v1_tile t;
        int sub;
        v1_decode(tt, rtiles, &t.r, &sub);
        t.slice = sub / RAMP_SPLITK;
        t.split = sub % RAMP_SPLITK;
        t.e = tile_expert[t.r];
        if (t.e < 0 || t.e >= RAMP_EXPERTS) continue;
        if (threadIdx.x < V1_NPAD) {
            int n = threadIdx.x, s = -1;
            if (n < RAMP_ROWS) s = sorted_ids[(size_t)t.r * RAMP_ROWS + n];
            if (s >= slots) s = -1;
            tok[n] = s < 0 ? -1 : s;
            rw[n] = s < 0 ? 0.f : topk_w[s];
        }
        V1_SYNC();
        v1_zero(acc);
#if RAMP_SPLITK > 1
        v1_run(&c, &t, 0, V1_NUP, acc);
        /* Last of the split-K blocks of (row tile, slice) finishes the tile. */
        __threadfence();
        V1_SYNC();
        if (threadIdx.x == 0) {
            int *cnt = (int *)prm.ws_count + (size_t)t.r * V1_SLICES + t.slice;
            int old = atomicAdd(cnt, 1);
            int last = old == RAMP_SPLITK - 1;
            if (last) atomicExch(cnt, 0);
            *flag = last;
        }
        V1_SYNC();
        if (*flag) {
            __threadfence();
            for (int p = 0; p < V1_NPASS; p++) {
#pragma unroll
                for (int mt = 0; mt < V1_MTW; mt++)
#pragma unroll
                    for (int nt = 0; nt < V1_NT; nt++)
#pragma unroll
                        for (int i = 0; i < 4; i++) {
                            float s = 0.f;
                            for (int k = 0; k < RAMP_SPLITK; k++)
                                s += __ldcg(v1_partial(&c, &t, k, p) +
                                            ((mt * V1_NT + nt) * 4 + i) * V1_THREADS + threadIdx.x);
                            acc[mt][nt][i] = s;
                        }
                v1_act_quant(&c, acc, p);
            }
            v1_zero(acc);
            v1_run(&c, &t, V1_NUP, V1_NUP + V1_NDOWN, acc);
        }
#else
        v1_run(&c, &t, 0, V1_NUP + V1_NDOWN, acc);
#endif
    }
}

#if !RAMP_V1_BODY_ONLY
extern "C" __global__ void __launch_bounds__(V1_THREADS, 1)
RAMP_KERNEL_NAME(const ramp_moe_params prm) {
    extern __shared__ __align__(128) unsigned char ramp_v1_smem[];
    v1_body(prm, ramp_v1_smem, blockIdx.x, gridDim.x, 0);
}
#else
enum { v1_threads = V1_THREADS, /* block threads this entry needs */
       v1_q = V1_Q };             /* work tiles per row tile */
#undef V1_NPAD
#undef V1_NT
#undef V1_MTW
#undef V1_HMT
#undef V1_THREADS
#undef V1_WARPS
#undef V1_RW
#undef V1_CW
#undef V1_GW
#undef V1_AROWS
#undef V1_PW
#undef V1_NPASS
#undef V1_EB
#undef V1_KS
#undef V1_KRANGE
#undef V1_UPS
#undef V1_NUP
#undef V1_DCHUNKS
#undef V1_DKS
#undef V1_NDOWN
#undef V1_SLICES
#undef V1_Q
#undef V1_GROUP
#undef V1_ACC
#undef V1_FP8
#undef V1_COMMIT
#undef V1_WAIT
#undef V1_SYNC
#undef V1_LAYOUT
#undef V1_BKEEP
#undef V1_BODY_INLINE
#undef V1_PRM
#endif
