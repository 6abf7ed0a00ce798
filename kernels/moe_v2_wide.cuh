/*
 * moe_v2_wide.cuh - kernel v2's consumers for wide tiles: 65..128 token
 * slots per tile, the wgmma roles swapped (moe_v2.md, "Session 6: wide
 * tiles"). Included by moe_v2.cuh in place of its own consumer when
 * RAMP_ROWS > 64 (V2_WIDE); the producer, the ring, the tile loop and the
 * slot layout (a token tile of 128 rows) are moe_v2.cuh's, unchanged. No
 * include guard: a polymorphic kernel includes moe_v2.cuh once per entry.
 *
 * Why: a 64-row tile streams its expert-slice's weights into shared memory
 * once per 64 tokens, which bounds v2 at ~749 TFLOP/s on DeepSeek-V3's
 * 4,096 pairs (moe_v2.md, session 5). Here both consumers read the same
 * weight stage for 128 tokens, so a weight byte feeds twice the tokens.
 *
 * Roles: the tokens are wgmma's A operand (M = 64: consumer c owns token
 * rows 64c .. 64c + 63 of the tile), the weights B (N = 128: one 128-row
 * TMA box). A consumer thread's accumulator i (hopper.cuh's layout) is
 * token row 16 w + g + 8 h, h = (i >> 1) & 1, and weight row
 * 8 j + 2 t + e of the box, j = i >> 2, e = i & 1: whole token rows, so
 *  - gate and up of one (token, column) are the same index of the gate and
 *    up accumulators: SiLU x up needs no data movement;
 *  - a token's amax over a pass's 128 columns is the thread's 32 values
 *    and two shuffles over t: no shared-memory exchange;
 *  - each consumer writes and reads only its own rows of the intermediate,
 *    so its barrier is its own warpgroup's;
 *  - the down projection's outputs of a thread are pairs of adjacent output
 *    rows: one shuffle with lane t ^ 1 makes them float4s (or none, with
 *    W2's rows permuted for RAMP_MV2_RED4, below).
 * Up stage (K block kb of pass p): Tg = X[64 tokens] . Wgate[128 rows]^T,
 * then Tu likewise (4 k32 wgmmas each, 64 f32 temporaries), each promoted
 * into accg / accu (64 each) with weight scale x the token's x_scale.
 * Down stage (chunk of 256 rows of d, K block kk): two halves of 128 rows
 * (one W2 scale block each) into acc0 / acc1, promoted with the W2 scale x
 * the token's intermediate scale. 192 live f32 registers at the peak.
 *
 * Split (RAMP_MV2_PHASE, ramp_moe_v2_opts.split): phase 1 stops after the
 * up projection and stores each pass's intermediate and scales to prm.ws
 * (v2w_store_inter); phase 2's consumer runs the same slot stages over W2
 * (tile = row tile x 256-row chunk [x K part]) and adds its output by bulk
 * reductions from a staging area (v2w_output_bulk). Measured gains and the
 * reasons: moe_v2.md, session 6.
 */

#if RAMP_MV2_BF16
#define V2W_MMA HOP_WGMMA_BF16(128)
#else
#define V2W_MMA HOP_WGMMA_E4M3(128)
#endif
/* RAMP_MV2_PIPE != 0 (ramp_moe_v2_opts.pipe): the output reductions of a
 * down chunk's first half are issued while its second half's wgmmas run,
 * instead of after the chunk with the tensor cores idle. (Overlapping the
 * second half's with the next chunk's first spilled at w >= 256.) */
#define V2W_OVERLAP (RAMP_MV2_PIPE != 0)
#define V2W_ACC 64 /* accumulators per thread of one m64n128 result */

/* This consumer's named barrier over its own 128 threads (ids 3, 4). */
static __device__ __forceinline__ void v2w_wg_sync(int c) {
    asm volatile("bar.sync %0, 128;\n" ::"r"(3 + c) : "memory");
}

/* T = A (SW128 tile at sa, 64 token rows) . B (SW128 at sb, 128 weight
 * rows)^T over one 128-byte K block: four k32 wgmmas, the first
 * overwriting (scale-d = 0); committed as one group. */
static __device__ __forceinline__ void v2w_mma_kblock(float *T, unsigned sa, unsigned sb) {
    hop_wgmma_fence();
#pragma unroll
    for (int k4 = 0; k4 < RAMP_MV2_KB / HOP_WGMMA_K_BYTES; k4++)
        V2W_MMA(T, hop_desc_sw128(sa + k4 * HOP_WGMMA_K_BYTES),
                hop_desc_sw128(sb + k4 * HOP_WGMMA_K_BYTES), k4 > 0);
    hop_wgmma_commit();
}

/* acc += T * f[h(i)] once the group that wrote T is complete. */
static __device__ __forceinline__ void v2w_promote(float *acc, float *T, float f0, float f1) {
    HOP_WGMMA_WAIT(0);
    HOP_ACC_FENCE(T, V2W_ACC);
#pragma unroll
    for (int i = 0; i < V2W_ACC; i++) acc[i] += T[i] * ((i >> 1) & 1 ? f1 : f0);
}

/* SiLU(gate) * up * rw of pass p, quantized per token over its 128 columns
 * into intermediate tile p, rows 64c.. (SW128, token-major: the down
 * projection's A operand), the scales into iscale[n][p]. */
static __device__ __forceinline__ void v2w_act_quant(unsigned char *sm, const float *accg,
                                                     const float *accu, int p, int c) {
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) & 3;
    const int g = lane >> 2, t = lane & 3;
    const float *rw = (const float *)(sm + V2_LAYOUT.rw);
    float *iscale = (float *)(sm + V2_LAYOUT.iscale);
    const unsigned tile = hop_smem(sm + V2_LAYOUT.inter) + p * V2_ITILE;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int n = 64 * c + 16 * w + g + 8 * h; /* token row of the tile */
        const float r = rw[n];
        float a[32], m = 0.f;
#pragma unroll
        for (int j = 0; j < 16; j++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int i = 4 * j + 2 * h + e;
                const float gt = accg[i];
                a[2 * j + e] = ramp_silu(gt) * accu[i] * r;
                m = fmaxf(m, fabsf(a[2 * j + e]));
            }
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
        m = fmaxf(m, RAMP_FP8_AMAX_MIN);
        float inv;
        const float s = ramp_fp8_scale(m, &inv);
        /* row n's 16-byte chunk ch sits at chunk ch ^ (n & 7) = ch ^ g: one
         * XOR of the row's base. The base goes through an opaque move so
         * that ptxas computes the 8 chunk addresses here, not once before
         * the tile loop in 16 registers held through it (they made a
         * polymorphic kernel with two wide entries spill) */
        unsigned row;
        asm volatile("mov.b32 %0, %1;\n" : "=r"(row) : "r"(tile + n * HOP_ROW_BYTES + (g << 4) + 2 * t));
#pragma unroll
        for (int j = 0; j < 16; j++) {
            const unsigned q = ramp_e4m3x2(a[2 * j] * inv, a[2 * j + 1] * inv);
            const unsigned addr = (row ^ ((j >> 1) << 4)) + 8 * (j & 1);
            asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(addr), "h"((unsigned short)q)
                         : "memory");
        }
        if (t == 0) iscale[n * V2_PASSES + p] = s;
    }
    hop_fence_proxy_async(); /* generic stores, read next by wgmma */
    v2w_wg_sync(c);
}

/* Four consecutive output rows of one token from accumulator block j (rows
 * 8j + 2t + {0, 1} of both the thread's tokens): lanes t and t ^ 1 swap a
 * pair, so even t gets token 0's rows 8j + 2t .. + 3 and odd t token 1's
 * rows 8j + 2(t - 1) .. + 3. Every lane of the warp must call it. */
static __device__ __forceinline__ float4 v2w_quad(const float *acc, int j, int odd) {
    const float s0 = odd ? acc[4 * j] : acc[4 * j + 2]; /* the pair sent */
    const float s1 = odd ? acc[4 * j + 1] : acc[4 * j + 3];
    const float r0 = __shfl_xor_sync(0xffffffffu, s0, 1);
    const float r1 = __shfl_xor_sync(0xffffffffu, s1, 1);
    const float k0 = odd ? acc[4 * j + 2] : acc[4 * j]; /* the pair kept */
    const float k1 = odd ? acc[4 * j + 3] : acc[4 * j + 1];
    return odd ? make_float4(r0, r1, k0, k1) : make_float4(k0, k1, r0, r1);
}

/* The chunk's sums of one token row (acc0: rows 0..127 of the chunk, acc1:
 * 128..255) into out. Row-major W2: one float4 per accumulator block
 * (v2w_quad). RAMP_MV2_RED4 (W2 permuted by ramp_moe_v2_permute_w2: stored row
 * 64 t' + 16 w' + g' + 8 hh holds row 4 (8 w' + g') + 2 t' + hh of its
 * 128-row block): stored rows 8 j + 2 t + e are rows 32 ((j >> 1) & 3) +
 * 8 t + 4 e + 2 (j >> 3) + (j & 1), so j = 2m, 2m + 1, 2m + 8, 2m + 9 of
 * one (token, e) are four consecutive rows, in this thread already. */
static __device__ __forceinline__ void v2w_output(const ramp_moe_params &prm, const float *acc,
                                                  int row0, const int *slots) {
    const int t = threadIdx.x & 3;
    float *out = (float *)prm.out;
#if RAMP_MV2_RED4
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int sl = h ? slots[1] : slots[0];
        if (sl < 0) continue;
        float *o = out + (size_t)(sl / RAMP_TOPK) * RAMP_HIDDEN + row0 + 8 * t;
#pragma unroll
        for (int m = 0; m < 4; m++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int i = 4 * (2 * m) + 2 * h + e; /* j = 2m; +4: 2m+1, +32: 2m+8 */
#if RAMP_MV2_DIAG == 4
                if (acc[i] == 1234.5f) /* never: keeps the sums live, adds nothing */
#endif
                v2_red4(o + 32 * m + 4 * e, acc[i], acc[i + 4], acc[i + 32], acc[i + 36]);
            }
    }
#else
    const int odd = t & 1;
    const int sl = odd ? slots[1] : slots[0]; /* not slots[odd]: a local-memory array */
    float *o = out + (size_t)(sl < 0 ? 0 : sl / RAMP_TOPK) * RAMP_HIDDEN + row0 + 2 * (t & 2);
#pragma unroll
    for (int j = 0; j < 16; j++) {
        const float4 q = v2w_quad(acc, j, odd);
        if (sl >= 0)
#if RAMP_MV2_DIAG == 4
            if (q.x == 1234.5f) /* never: keeps the sums live, adds nothing */
#endif
            v2_red4(o + 8 * j, q.x, q.y, q.z, q.w);
    }
#endif
}

/* One stage whose A rows are in the slot (up stages; phase 2's stages):
 * waits for it, box 0 (the slot's first 128 weight rows) into acc0 and box 1
 * (the next 128) into acc1, each promoted with its weight block scale x the
 * row's scale from the slot; releases the slot once both groups are done. */
static __device__ __forceinline__ void v2w_slot_stage(unsigned char *sm, int it, int c, int n0,
                                                      float *acc0, float *acc1, float *T) {
    const unsigned full = hop_smem(sm + V2_LAYOUT.bars), empty = full + 8 * V2_S;
    const int s = it % V2_S;
    hop_mbar_wait(full + 8 * s, (it / V2_S) & 1);
#if !V2_TMA_X_ON && !V2_TMA_H_ON /* (rows by TMA: already the async proxy's) */
    hop_fence_proxy_async(); /* the producer's cp.async rows, read by wgmma */
#endif
    const unsigned slot = hop_smem(sm) + s * (unsigned)V2_LAYOUT.slot_bytes;
    const unsigned a = slot + (unsigned)V2_LAYOUT.slot_b + c * 8192; /* rows 64c.. */
    const unsigned char *sp = sm + s * V2_LAYOUT.slot_bytes;
    const float *xs = (const float *)(sp + V2_LAYOUT.slot_xs);
    const float w0 = ((const float *)(sp + V2_LAYOUT.slot_wsc))[0];
    const float w1 = ((const float *)(sp + V2_LAYOUT.slot_wsc))[1];
    const float x0 = xs[n0], x1 = xs[n0 + 8];
    v2w_mma_kblock(T, a, slot);
    v2w_promote(acc0, T, w0 * x0, w0 * x1);
    v2w_mma_kblock(T, a, slot + 16384);
    HOP_WGMMA_WAIT(0);
    v2_release(empty + 8 * s); /* scales read, wgmmas done: refill */
    v2w_promote(acc1, T, w1 * x0, w1 * x1);
}

#if RAMP_MV2_BF16
/* BF16 (RAMP_MV2_BF16): the sums stay in the accumulators across K (no
 * block scales, so no promotion and no temporaries), and the intermediate
 * is bf16: a pass's 128 columns are the down projection's K tiles 2p and
 * 2p + 1 (64 columns, 128 bytes per token row). */

/* acc (+)= A (64 token rows at sa) . B (128 weight rows at sb)^T over one
 * 128-byte K block (64 bf16), the first wgmma overwriting when `zero`;
 * committed as one group. */
static __device__ __forceinline__ void v2w_mma_acc(float *acc, unsigned sa, unsigned sb,
                                                   int zero) {
    hop_wgmma_fence();
#pragma unroll
    for (int k4 = 0; k4 < RAMP_MV2_KB / HOP_WGMMA_K_BYTES; k4++)
        V2W_MMA(acc, hop_desc_sw128(sa + k4 * HOP_WGMMA_K_BYTES),
                hop_desc_sw128(sb + k4 * HOP_WGMMA_K_BYTES), k4 > 0 || !zero);
    hop_wgmma_commit();
}

/* One stage issued: waits for slot it, then box 0 (the slot's first 128
 * weight rows) . this consumer's 64 A rows into acc0 and box 1 into acc1
 * (two committed groups). The A rows are at `a` within the slot (up stages:
 * the producer's token rows, fenced for the async proxy) or, when a_in_slot
 * is 0, at the shared-memory address `a` (down stages: the intermediate). */
static __device__ __forceinline__ void v2w_issue_bf16(unsigned char *sm, int it, unsigned a,
                                                      int a_in_slot, int zero, float *acc0,
                                                      float *acc1) {
    const int s = it % V2_S;
    hop_mbar_wait(hop_smem(sm + V2_LAYOUT.bars) + 8 * s, (it / V2_S) & 1);
    if (a_in_slot && !V2_TMA_X_ON && !V2_TMA_H_ON)
        hop_fence_proxy_async(); /* the producer's cp.async rows, read by wgmma */
    const unsigned slot = hop_smem(sm) + s * (unsigned)V2_LAYOUT.slot_bytes;
    const unsigned sa = a_in_slot ? slot + a : a;
    v2w_mma_acc(acc0, sa, slot, zero);
    v2w_mma_acc(acc1, sa, slot + 16384, zero);
}
/* ... and completed, the slot released. */
static __device__ __forceinline__ void v2w_stage_bf16(unsigned char *sm, int it, unsigned a,
                                                      int a_in_slot, int zero, float *acc0,
                                                      float *acc1) {
    v2w_issue_bf16(sm, it, a, a_in_slot, zero, acc0, acc1);
    HOP_WGMMA_WAIT(0);
    HOP_ACC_FENCE(acc0, V2W_ACC);
    HOP_ACC_FENCE(acc1, V2W_ACC);
    v2_release(hop_smem(sm + V2_LAYOUT.bars) + 8 * V2_S + 8 * (it % V2_S));
}

/* n consecutive stages into acc0 and acc1, the first overwriting; A rows
 * at a in each slot (a_in_slot) or at the shared-memory address
 * a + k a_step for stage k. RAMP_MV2_PIPE (ramp_moe_v2_opts.pipe, BF16 wide
 * tiles; session 15): with no promotion between K blocks, stage k+1's
 * wgmmas are issued before stage k's are waited for (wait_group 2: each
 * stage commits two groups), so the tensor cores work while a stage is
 * released and the next one's barrier is waited for. One accumulator set
 * in flight around a rolled loop, fenced for the compiler at the issue and
 * after the wait (as CUTLASS's mainloops): ptxas keeps the registers and
 * does not serialise (no C7514; the SASS waits DEPBAR 0x2 in the loop).
 * The narrow tiles' ping-pong, two temporaries alternating, needs unrolled
 * groups instead (moe_v2.cuh). */
#if RAMP_MV2_PIPE
#define V2W_RUN_BF16(sm, it, n, a, a_in_slot, a_step, acc0, acc1)                          \
    do {                                                                                    \
        const unsigned v2w_empty_ = hop_smem((sm) + V2_LAYOUT.bars) + 8 * V2_S;             \
        _Pragma("unroll 1") for (int k_ = 0; k_ < (n); k_++) {                              \
            HOP_ACC_FENCE(acc0, V2W_ACC);                                                   \
            HOP_ACC_FENCE(acc1, V2W_ACC);                                                   \
            v2w_issue_bf16(sm, (it) + k_, (a) + k_ * (a_step), a_in_slot, k_ == 0, acc0, acc1); \
            HOP_WGMMA_WAIT(2);                                                              \
            HOP_ACC_FENCE(acc0, V2W_ACC);                                                   \
            HOP_ACC_FENCE(acc1, V2W_ACC);                                                   \
            if (k_ > 0) v2_release(v2w_empty_ + 8 * (((it) + k_ - 1) % V2_S));              \
        }                                                                                   \
        HOP_WGMMA_WAIT(0);                                                                  \
        v2_release(v2w_empty_ + 8 * (((it) + (n) - 1) % V2_S));                             \
        HOP_ACC_FENCE(acc0, V2W_ACC);                                                       \
        HOP_ACC_FENCE(acc1, V2W_ACC);                                                       \
        (it) += (n);                                                                        \
    } while (0)
#else
#define V2W_RUN_BF16(sm, it, n, a, a_in_slot, a_step, acc0, acc1)                          \
    do {                                                                                    \
        _Pragma("unroll 1") for (int k_ = 0; k_ < (n); k_++, (it)++)                        \
            v2w_stage_bf16(sm, it, (a) + k_ * (a_step), a_in_slot, k_ == 0, acc0, acc1);     \
    } while (0)
#endif

#endif

#if RAMP_MV2_PHASE == 1
/* Phase 1: this consumer's 64 rows of intermediate tile p (just written to
 * shared memory, SW128) and their scales into row tile r's block of the
 * workspace, rows n, columns slice * w + 128 p. */
static __device__ __forceinline__ void v2w_store_inter(const ramp_moe_params &prm,
                                                       unsigned char *sm, int c, int r, int slice,
                                                       int p) {
    if (r < 0) return; /* a multicast phantom (v2_tile): no rows */
    const ramp_moe_v2_ws_layout wl = ramp_moe_v2_ws_layout_of(0, RAMP_INTER);
    unsigned char *ib = (unsigned char *)prm.ws + (size_t)r * wl.tile;
    const unsigned char *tile = sm + V2_LAYOUT.inter + p * V2_ITILE;
    const float *iscale = (const float *)(sm + V2_LAYOUT.iscale);
    const int lt = threadIdx.x & 127;
    /* 16-byte chunk ch = lt & 7 of rows n = 64 c + (lt >> 3) + 16 k: the
     * same swizzled chunk in every k. Both offsets go through an opaque
     * move so that the four k's addresses are immediates off them here,
     * not hoisted before the tile loop (spills in polymorphic kernels) */
    const int n0 = 64 * c + (lt >> 3), ch = lt & 7;
    unsigned so;
    unsigned long long go;
    asm volatile("mov.b32 %0, %1;\n" : "=r"(so) : "r"(hop_swz128(n0, ch)));
    asm volatile("mov.b64 %0, %1;\n"
                 : "=l"(go)
                 : "l"((unsigned long long)n0 * RAMP_INTER + slice * RAMP_WIDTH + p * 128 + ch * 16));
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const uint4 v = *(const uint4 *)(tile + so + k * 16 * HOP_ROW_BYTES);
        *(uint4 *)(ib + go + (size_t)k * 16 * RAMP_INTER) = v;
    }
    if (lt < 64) {
        const int n = 64 * c + lt;
        ((float *)(ib + wl.iscale))[n * V2_HKB + slice * V2_PASSES + p] =
            iscale[n * V2_PASSES + p];
    }
}
#endif

#if RAMP_MV2_PHASE == 2
/* out[dst..] += the bytes (f32) of shared memory at src, by the TMA unit
 * (one bulk reduction, its own bulk group). */
static __device__ __forceinline__ void v2w_bulk_red(float *dst, unsigned src, int bytes) {
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n"
                 ::"l"(dst), "r"(src), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

/* out[dst..] = the bytes of shared memory at src (one bulk copy, its own
 * bulk group): RAMP_MV2_DET's store of a slot's row. */
static __device__ __forceinline__ void v2w_bulk_store(float *dst, unsigned src, int bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n"
                 ::"l"(dst), "r"(src), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

/* Phase 2's output of one half (acc: this consumer's 64 tokens x 128 rows
 * from row0): float4s (v2w_quad) into the consumer's staging rows, then one bulk reduction of 512 bytes per
 * token row, issued by thread lt = the row. The TMA unit does the additions
 * while the consumers go on (the reductions of the fused kernel's threads
 * stall them: moe_v2.md, session 6). Before the staging is written again,
 * its previous reductions must have read it (wait_group.read). With
 * RAMP_MV2_DET, a bulk store into the slot's row of K part `part` instead. */
static __device__ __forceinline__ void v2w_output_bulk(const ramp_moe_params &prm,
                                                       unsigned char *sm, const float *acc,
                                                       int row0, int part, int c) {
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) & 3, t = lane & 3;
    const int lt = threadIdx.x & 127, odd = t & 1;
    const unsigned stg = hop_smem(sm + V2_LAYOUT.ostage) + c * 64 * RAMP_MV2_OSTAGE_STRIDE;
    if (lt < 64) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
    v2w_wg_sync(c);
    const unsigned row = stg + (16 * w + (lane >> 2) + 8 * odd) * RAMP_MV2_OSTAGE_STRIDE +
                         4 * 2 * (t & 2);
#pragma unroll
    for (int j = 0; j < 16; j++) {
        const float4 q = v2w_quad(acc, j, odd);
        asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(row + 32 * j), "f"(q.x),
                     "f"(q.y), "f"(q.z), "f"(q.w)
                     : "memory");
    }
    hop_fence_proxy_async(); /* generic stores, read next by the bulk copies */
    v2w_wg_sync(c);
    if (lt < 64) {
        const int sl = ((const int *)(sm + V2_LAYOUT.tok))[64 * c + lt];
#if RAMP_MV2_DIAG == 4
        if (sl == -1234) /* never: the staging kept, nothing added */
#else
        if (sl >= 0)
#endif
#if RAMP_MV2_DET
            v2w_bulk_store(v2_out_row(prm, sl, part) + row0, stg + lt * RAMP_MV2_OSTAGE_STRIDE,
                           128 * 4);
#else
            v2w_bulk_red(v2_out_row(prm, sl, part) + row0, stg + lt * RAMP_MV2_OSTAGE_STRIDE,
                         128 * 4);
#endif
    }
}

/* Phase 2, consumer c of tile (row tile r, `slice` = chunk of d x P2K + K
 * part): the chunk's 256 rows for the tile's 128 intermediate rows over its
 * part of h (stages kb:
 * W2 rows [256 chunk, +256) x K block kb, the intermediate rows' K block kb
 * and scales, gathered by the producer as tokens are in phase 1), promoted
 * per K block with the W2 block scale x the row's intermediate scale, then
 * added into out once. BF16: the sums kept across the K blocks, no scales. */
static __device__ __forceinline__ void v2_consumer(const ramp_moe_params &prm,
                                                   unsigned char *sm, int c, int r, int slice,
                                                   int &it V2_SKP) {
    (void)r;
#if RAMP_MV2_BF16
    float acc0[V2W_ACC], acc1[V2W_ACC];
#pragma unroll
    for (int i = 0; i < V2W_ACC; i++) acc0[i] = acc1[i] = 0.f;
    V2W_RUN_BF16(sm, it, V2_P2NK, (unsigned)V2_LAYOUT.slot_b + c * 8192, 1, 0u, acc0, acc1);
#else
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) & 3;
    const int n0 = 64 * c + 16 * w + (lane >> 2);
    float acc0[V2W_ACC], acc1[V2W_ACC], T[V2W_ACC];
#pragma unroll
    for (int i = 0; i < V2W_ACC; i++) T[i] = acc0[i] = acc1[i] = 0.f;
#pragma unroll 1
    for (int kb = 0; kb < V2_P2NK; kb++, it++) v2w_slot_stage(sm, it, c, n0, acc0, acc1, T);
#endif
    const int part = slice % RAMP_MV2_P2K;
    v2w_output_bulk(prm, sm, acc0, V2_P2_CHUNK(slice) * RAMP_MV2_CHUNK, part, c);
    v2w_output_bulk(prm, sm, acc1, V2_P2_CHUNK(slice) * RAMP_MV2_CHUNK + 128, part, c);
}
#elif RAMP_MV2_BF16
/* SiLU(gate) * up * rw of pass p rounded to bf16 (RNE, as the reference)
 * into K tiles 2p and 2p + 1 of the intermediate, this consumer's rows:
 * columns 8 j + 2 t and + 1 of a token row are one bf16x2, in K tile
 * 2p + j / 8, 16-byte chunk j % 8 (swizzled: ^ g, the row's n & 7), byte 4 t. */
static __device__ __forceinline__ void v2w_act_bf16(unsigned char *sm, const float *accg,
                                                    const float *accu, int p, int c) {
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) & 3;
    const int g = lane >> 2, t = lane & 3;
    const float *rw = (const float *)(sm + V2_LAYOUT.rw);
    const unsigned tile = hop_smem(sm + V2_LAYOUT.inter) + 2 * p * V2_ITILE;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int n = 64 * c + 16 * w + g + 8 * h; /* token row of the tile */
        const float r = rw[n];
        /* an opaque base, as in v2w_act_quant (no addresses hoisted) */
        unsigned row;
        asm volatile("mov.b32 %0, %1;\n" : "=r"(row) : "r"(tile + n * HOP_ROW_BYTES + 4 * t));
#pragma unroll
        for (int j = 0; j < 16; j++) {
            const int i = 4 * j + 2 * h;
            const float a0 = ramp_silu(accg[i]) * accu[i] * r;
            const float a1 = ramp_silu(accg[i + 1]) * accu[i + 1] * r;
            const unsigned addr = row + (j >> 3) * V2_ITILE + (((j & 7) ^ g) << 4);
            asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(ramp_bf16x2(a0, a1))
                         : "memory");
        }
    }
    hop_fence_proxy_async(); /* generic stores, read next by wgmma */
    v2w_wg_sync(c);
}

#if RAMP_MV2_PHASE == 1
/* Phase 1, BF16: this consumer's 64 rows of intermediate K tiles 2p, 2p + 1
 * (just written, SW128) into row tile r's block of the workspace: row n,
 * columns slice * w + 128 p + 64 u .. (2 bytes each). Thread lt copies
 * 16-byte chunk lt & 7 of rows 64 c + (lt >> 3) + 16 k of both tiles. */
static __device__ __forceinline__ void v2w_store_inter_bf16(const ramp_moe_params &prm,
                                                            unsigned char *sm, int c, int r,
                                                            int slice, int p) {
    if (r < 0) return; /* a multicast phantom (v2_tile): no rows */
    const ramp_moe_v2_ws_layout wl = ramp_moe_v2_ws_layout_bf(0, RAMP_INTER, 1);
    unsigned char *ib = (unsigned char *)prm.ws + (size_t)r * wl.tile;
    const unsigned char *tile = sm + V2_LAYOUT.inter + 2 * p * V2_ITILE;
    const int lt = threadIdx.x & 127;
    const int n0 = 64 * c + (lt >> 3), ch = lt & 7;
    /* opaque offsets, as in v2w_store_inter (no hoisting before the tile loop) */
    unsigned so;
    unsigned long long go;
    asm volatile("mov.b32 %0, %1;\n" : "=r"(so) : "r"(hop_swz128(n0, ch)));
    asm volatile("mov.b64 %0, %1;\n"
                 : "=l"(go)
                 : "l"(((unsigned long long)n0 * RAMP_INTER + slice * RAMP_WIDTH + p * 128) * 2 +
                       ch * 16));
#pragma unroll
    for (int u = 0; u < 2; u++)
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const uint4 v = *(const uint4 *)(tile + u * V2_ITILE + so + k * 16 * HOP_ROW_BYTES);
            *(uint4 *)(ib + go + u * 128 + (size_t)k * 16 * RAMP_INTER * 2) = v;
        }
}
#endif

/* Consumer warpgroup c (0, 1) of a wide BF16 tile; `it` as the producer's. */
static __device__ __forceinline__ void v2_consumer(const ramp_moe_params &prm,
                                                   unsigned char *sm, int c, int r, int slice,
                                                   int &it) {
    (void)r; (void)slice; (void)prm;
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) & 3;
    const int n0 = 64 * c + 16 * w + (lane >> 2); /* token rows n0, n0 + 8 */
    float accg[V2W_ACC], accu[V2W_ACC];
#pragma unroll
    for (int i = 0; i < V2W_ACC; i++) accg[i] = accu[i] = 0.f;
    /* up projection, one 128-column pass at a time */
    for (int p = 0; p < V2_PASSES; p++) {
        V2W_RUN_BF16(sm, it, V2_KBLK, (unsigned)V2_LAYOUT.slot_b + c * 8192, 1, 0u, accg, accu);
        if (p == 0) V2_CONSUMER_SYNC(); /* rw, stored by consumer 0 at the tile's start */
        v2w_act_bf16(sm, accg, accu, p, c);
#if RAMP_MV2_PHASE == 1
        v2w_store_inter_bf16(prm, sm, c, r, slice, p);
#endif
    }
#if RAMP_MV2_PHASE == 1
    return; /* phase 2 does the down projection */
#endif
    /* down projection, 256 rows of d per chunk: rows 0..127 into acc0,
     * 128..255 into acc1; K = the slice's columns, V2_DKB tiles of 64 */
    const int *tok = (const int *)(sm + V2_LAYOUT.tok);
    const int slots[2] = {tok[n0], tok[n0 + 8]};
    float *acc0 = accg, *acc1 = accu;
#pragma unroll 1
    for (int ch = 0; ch < V2_CHUNKS; ch++) {
        V2W_RUN_BF16(sm, it, V2_DKB, hop_smem(sm + V2_LAYOUT.inter) + c * 8192, 0,
                     (unsigned)V2_ITILE, acc0, acc1);
        v2w_output(prm, acc0, ch * RAMP_MV2_CHUNK, slots);
        v2w_output(prm, acc1, ch * RAMP_MV2_CHUNK + 128, slots);
    }
}

#else
/* Consumer warpgroup c (0, 1) of a wide tile; `it` as the producer's. */
static __device__ __forceinline__ void v2_consumer(const ramp_moe_params &prm,
                                                   unsigned char *sm, int c, int r, int slice,
                                                   int &it) {
    (void)r; (void)slice;
    const int lane = threadIdx.x & 31, w = (threadIdx.x >> 5) & 3;
    const int n0 = 64 * c + 16 * w + (lane >> 2); /* token rows n0, n0 + 8 */
    const unsigned full = hop_smem(sm + V2_LAYOUT.bars), empty = full + 8 * V2_S;
    float accg[V2W_ACC], accu[V2W_ACC], T[V2W_ACC];
#pragma unroll
    for (int i = 0; i < V2W_ACC; i++) T[i] = 0.f;

    /* up projection and requantization, one 128-column pass at a time */
    for (int p = 0; p < V2_PASSES; p++) {
#pragma unroll
        for (int i = 0; i < V2W_ACC; i++) accg[i] = accu[i] = 0.f;
        for (int kb = 0; kb < V2_KBLK; kb++, it++) v2w_slot_stage(sm, it, c, n0, accg, accu, T);
        if (p == 0) V2_CONSUMER_SYNC(); /* rw, stored by consumer 0 at the tile's start */
        v2w_act_quant(sm, accg, accu, p, c);
#if RAMP_MV2_PHASE == 1
        v2w_store_inter(prm, sm, c, r, slice, p);
#endif
    }
#if RAMP_MV2_PHASE == 1
    return; /* phase 2 does the down projection */
#endif

    /* down projection, 256 rows of d per chunk: rows 0..127 into acc0,
     * 128..255 into acc1; K = the slice's columns, the intermediate */
    const int *tok = (const int *)(sm + V2_LAYOUT.tok);
    const int slots[2] = {tok[n0], tok[n0 + 8]};
    const float *iscale = (const float *)(sm + V2_LAYOUT.iscale);
    float *acc0 = accg, *acc1 = accu;
#pragma unroll
    for (int i = 0; i < V2W_ACC; i++) acc0[i] = acc1[i] = 0.f;
#pragma unroll 1
    for (int ch = 0; ch < V2_CHUNKS; ch++) {
#if V2W_OVERLAP
#pragma unroll /* the outputs' kk tests resolved at compile time (spilled as a loop) */
#else
#pragma unroll 1
#endif
        for (int kk = 0; kk < V2_DKB; kk++, it++) {
            const int s = it % V2_S;
            hop_mbar_wait(full + 8 * s, (it / V2_S) & 1);
            const unsigned slot = hop_smem(sm) + s * (unsigned)V2_LAYOUT.slot_bytes;
            const float *ws = (const float *)(sm + s * V2_LAYOUT.slot_bytes + V2_LAYOUT.slot_wsc);
            const float w0 = ws[0], w1 = ws[1];
            const float i0 = iscale[n0 * V2_PASSES + kk], i1 = iscale[(n0 + 8) * V2_PASSES + kk];
            const unsigned a_int = hop_smem(sm + V2_LAYOUT.inter) + kk * V2_ITILE + c * 8192;
            v2w_mma_kblock(T, a_int, slot);
            v2w_promote(acc0, T, w0 * i0, w0 * i1);
            v2w_mma_kblock(T, a_int, slot + 16384);
#if V2W_OVERLAP
            if (kk == V2_DKB - 1) { /* first half done: added during the second */
                v2w_output(prm, acc0, ch * RAMP_MV2_CHUNK, slots);
#pragma unroll
                for (int i = 0; i < V2W_ACC; i++) acc0[i] = 0.f;
            }
#endif
            HOP_WGMMA_WAIT(0);
            v2_release(empty + 8 * s);
            v2w_promote(acc1, T, w1 * i0, w1 * i1);
        }
#if !V2W_OVERLAP
        v2w_output(prm, acc0, ch * RAMP_MV2_CHUNK, slots);
#pragma unroll
        for (int i = 0; i < V2W_ACC; i++) acc0[i] = 0.f;
#endif
        v2w_output(prm, acc1, ch * RAMP_MV2_CHUNK + 128, slots);
#pragma unroll
        for (int i = 0; i < V2W_ACC; i++) acc1[i] = 0.f;
    }
}
#endif /* RAMP_MV2_PHASE == 2, BF16, FP8 */

#undef V2W_MMA
#undef V2W_RUN_BF16
#undef V2W_OVERLAP
#undef V2W_ACC
