/*
 * select.cuh - the selection kernel (paper Section 3.2, Algorithm 1).
 *
 * Input: the router's top-k expert ids, int32 [tokens, k]. Output, for this
 * GPU's local experts: the menu entry with the lowest predicted time
 * (Equation 3), and the token-slot ids (token * k + j) grouped by local
 * expert and padded with -1 into that entry's row tiles, with a tile ->
 * expert map. The layout of every output is documented in ramp.h
 * (ramp_select_result); src/select_cpu.c is the CPU twin, bit for bit.
 *
 * One block of RAMP_SEL_WARPS warps (32: 1024 threads), one launch, no host
 * round trip. Warp w owns a contiguous chunk of the pairs.
 *   A  (per warp) read the chunk 128 pairs a step (16-byte loads when the
 *      input is aligned), map each id to its local expert, count ids that
 *      are neither -1 nor in [0, E), and append the local pairs, in order,
 *      to the warp's list (pair << 10 | expert; a warp-wide prefix sum
 *      gives each lane its place). Under EP most ids are foreign, so the
 *      later steps see only this GPU's pairs.
 *   B  (per warp) count the list into the warp's own row hist[w][e]: lanes
 *      with equal experts find each other with one ballot per bit of the
 *      expert index (a match_any whose cost does not grow with the number
 *      of distinct experts); the lowest lane of each group adds the group's
 *      size with a shared-memory atomic.
 *   C  per expert: n_e = sum over warps; hist[w][e] -> exclusive prefix.
 *   D  one warp per menu entry: T = q * sum ceil(n_e / b), W = ceil(T / S),
 *      A = #{n_e > 0}, t = th0 + th1 W + th2 T + th3 A (fmaf chain, float32).
 *   E  warp 0: argmin (ties to the lower index), scan of tiles per expert.
 *   F  slot bases, -1 padding, tile -> expert map, counts, tile starts, meta.
 *   G  (per warp) scatter the list: slot = expert base + pairs of earlier
 *      warps + rank among equal experts in this 32-entry step.
 * Determinism: within an expert, slots follow the pair index (warp chunks
 * are in order, lists keep the order, lanes rank in order), unlike an
 * atomic-cursor scatter whose order depends on scheduling.
 *
 * RAMP_SELECT_GROUP_ONLY=1 drops D and E's argmin: the plain group-and-pad
 * kernel for entry 0's tile size that RaMP replaces (the benchmark baseline).
 */
#ifndef RAMP_SELECT_CUH
#define RAMP_SELECT_CUH

#include "common.cuh"
#include "select_params.h"

#ifndef RAMP_SELECT_GROUP_ONLY
#define RAMP_SELECT_GROUP_ONLY 0
#endif

/* Local expert code of one id; counts ids that are neither -1 nor in
 * [0, E). `none` marks lanes past the end of the input. */
static __forceinline__ unsigned ramp_sel_code(int id, bool none, int experts,
                                              const short *map, int &bad) {
    unsigned c = RAMP_SEL_SKIP;
    if (none) return c;
    if ((unsigned)id < (unsigned)experts) {
        const int m = map[id];
        if (m >= 0) c = (unsigned)m;
    } else if (id != -1) {
        bad++;
    }
    return c;
}

/* This lane's four ids of each of the four steps from `base` (-1 past hi). */
static __forceinline__ void ramp_sel_load(const int *ids, bool vec, int base,
                                          int hi, int lane, int (&v)[4][4]) {
#pragma unroll
    for (int s = 0; s < 4; s++) {
        const int i0 = base + s * RAMP_SEL_STEP + 4 * lane;
        if (vec && i0 + 3 < hi) {
            const int4 x = __ldg((const int4 *)(ids + i0));
            v[s][0] = x.x; v[s][1] = x.y; v[s][2] = x.z; v[s][3] = x.w;
        } else {
#pragma unroll
            for (int j = 0; j < 4; j++) v[s][j] = i0 + j < hi ? __ldg(ids + i0 + j) : -1;
        }
    }
}

/* Lanes of `valid` whose `code` equals this lane's: one ballot per bit. */
static __forceinline__ unsigned ramp_sel_match(unsigned code, unsigned valid,
                                               int nbits) {
    unsigned peers = valid;
    for (int b = 0; b < nbits; b++) {
        const bool bit = (code >> b) & 1u;
        const unsigned set = __ballot_sync(RAMP_FULL_MASK, bit);
        peers &= bit ? set : ~set;
    }
    return peers;
}

extern "C" __global__ void __launch_bounds__(RAMP_SEL_THREADS, 1)
ramp_select(const ramp_sel_params p) {
    extern __shared__ __align__(16) unsigned char smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int E = p.experts, EL = p.local_experts;
    const ramp_sel_layout L = ramp_sel_layout_of(
        RAMP_SEL_WARPS, E, EL, (long long)p.max_tokens * p.topk, p.scratch == 0);
    int *hist = (int *)(smem + L.hist);
    int *tstart = (int *)(smem + L.tstart);
    int *cnt = (int *)(smem + L.cnt);
    float *pred = (float *)(smem + L.pred);
    ramp_sel_entry *menu = (ramp_sel_entry *)(smem + L.menu);
    int *misc = (int *)(smem + L.misc); /* 0 bad, 1 chosen, 2 rows, 3 tiles, 4 local */
    short *map = (short *)(smem + L.map);

    int tokens = p.tokens, clamped = 0;
    if (p.tokens_dev) {
        int t = *(const int *)p.tokens_dev;
        if (t < 0 || t > p.max_tokens) {
            clamped = 1;
            t = t < 0 ? 0 : p.max_tokens;
        }
        tokens = t;
    }
    const int P = tokens * p.topk;
    const int chunk = (int)ramp_sel_chunk(P, RAMP_SEL_WARPS);
    const int lo = min(P, warp * chunk), hi = min(P, lo + chunk);
    unsigned *list = (p.scratch ? (unsigned *)p.scratch : (unsigned *)(smem + L.list)) +
                     (long long)warp * chunk;
    int *myhist = hist + warp * EL;
    const int nbits = EL > 1 ? 32 - __clz(EL - 1) : 0;
    const unsigned below = ramp_lanemask_lt();

    /* ---- setup: own hist row, id map, menu; the first ids in flight ---- */
    const int *ids = (const int *)p.ids;
    const bool vec = (p.ids & 15ull) == 0;
    int v[4][4];
    if (lo < hi) ramp_sel_load(ids, vec, lo, hi, lane, v);
    for (int e = lane; e < EL; e += 32) myhist[e] = 0;
    const short *gmap = (const short *)p.local_of;
    for (int i = tid; i < E; i += RAMP_SEL_THREADS) map[i] = gmap[i];
    if (tid < p.nentries * 8)
        ((int *)menu)[tid] = ((const int *)p.menu)[tid];
    if (tid < 8) misc[tid] = 0;
    __syncthreads();

    /* ---- A: compact this warp's local pairs into its list ---- */
    int bad = 0, n = 0;
    for (int base = lo; base < hi; base += 4 * RAMP_SEL_STEP) {
#pragma unroll
        for (int s = 0; s < 4; s++) {
            const int i0 = base + s * RAMP_SEL_STEP + 4 * lane;
            if (base + s * RAMP_SEL_STEP >= hi) break; /* warp-uniform */
            unsigned c[4];
            int m = 0;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                c[j] = ramp_sel_code(v[s][j], i0 + j >= hi, E, map, bad);
                m += c[j] != RAMP_SEL_SKIP;
            }
            int inc = m;
#pragma unroll
            for (int off = 1; off < 32; off <<= 1) {
                const int y = __shfl_up_sync(RAMP_FULL_MASK, inc, off);
                if (lane >= off) inc += y;
            }
            int k = n + inc - m;
#pragma unroll
            for (int j = 0; j < 4; j++)
                if (c[j] != RAMP_SEL_SKIP)
                    list[k++] = ((unsigned)(i0 + j) << RAMP_SEL_CODE_BITS) | c[j];
            n += __shfl_sync(RAMP_FULL_MASK, inc, 31);
        }
        if (base + 4 * RAMP_SEL_STEP < hi)
            ramp_sel_load(ids, vec, base + 4 * RAMP_SEL_STEP, hi, lane, v);
    }
    bad = __reduce_add_sync(RAMP_FULL_MASK, bad);
    if (lane == 0 && bad) atomicAdd(&misc[0], bad);
    __syncwarp();

    /* ---- B: count the list into this warp's row ---- */
    for (int k0 = 0; k0 < n; k0 += 32) {
        const bool valid = k0 + lane < n;
        const unsigned e = valid ? list[k0 + lane] & ((1u << RAMP_SEL_CODE_BITS) - 1) : 0;
        const unsigned peers = ramp_sel_match(e, __ballot_sync(RAMP_FULL_MASK, valid), nbits);
        if (valid && (peers & below) == 0) atomicAdd(&myhist[e], __popc(peers));
    }
    __syncthreads();

    /* ---- C: totals and per-warp exclusive prefixes ---- */
    for (int e = tid; e < EL; e += RAMP_SEL_THREADS) {
        int run = 0;
#pragma unroll
        for (int w = 0; w < RAMP_SEL_WARPS; w++) {
            const int h = hist[w * EL + e];
            hist[w * EL + e] = run;
            run += h;
        }
        cnt[e] = run;
    }
    __syncthreads();

#if !RAMP_SELECT_GROUP_ONLY
    /* ---- D: Equation 3, one warp per menu entry (a warp takes several
     * when the menu has more entries than the block has warps) ---- */
    for (int c = warp; c < p.nentries; c += RAMP_SEL_WARPS) {
        const ramp_sel_entry me = menu[c];
        int tiles = 0, active = 0;
        for (int e = lane; e < EL; e += 32) {
            const int c = cnt[e];
            tiles += ramp_ceil_div(c, me.rows);
            active += c > 0;
        }
        tiles = __reduce_add_sync(RAMP_FULL_MASK, tiles);
        active = __reduce_add_sync(RAMP_FULL_MASK, active);
        if (lane == 0) {
            const int T = tiles * me.slices;
            const int W = ramp_ceil_div(T, me.slots);
            float t = me.theta[0];
            t = __fmaf_rn(me.theta[1], __int2float_rn(W), t);
            t = __fmaf_rn(me.theta[2], __int2float_rn(T), t);
            t = __fmaf_rn(me.theta[3], __int2float_rn(active), t);
            pred[c] = t;
        }
    }
    __syncthreads();
#endif

    /* ---- E: argmin and the tile scan (warp 0) ---- */
    if (warp == 0) {
        int chosen = 0;
#if !RAMP_SELECT_GROUP_ONLY
        float v = lane < p.nentries ? pred[lane] : ramp_pos_inf();
        int idx = lane;
#pragma unroll
        for (int off = 16; off; off >>= 1) {
            const float ov = __shfl_xor_sync(RAMP_FULL_MASK, v, off);
            const int oi = __shfl_xor_sync(RAMP_FULL_MASK, idx, off);
            if (ov < v || (ov == v && oi < idx)) {
                v = ov;
                idx = oi;
            }
        }
        chosen = idx;
#endif
        const int rows = menu[chosen].rows;
        const int per = ramp_ceil_div(EL, 32);
        const int e0 = min(EL, lane * per), e1 = min(EL, e0 + per);
        int sum = 0, pairs = 0;
        for (int e = e0; e < e1; e++) {
            sum += ramp_ceil_div(cnt[e], rows);
            pairs += cnt[e];
        }
        int inc = sum;
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            const int y = __shfl_up_sync(RAMP_FULL_MASK, inc, off);
            if (lane >= off) inc += y;
        }
        int run = inc - sum;
        for (int e = e0; e < e1; e++) {
            tstart[e] = run;
            run += ramp_ceil_div(cnt[e], rows);
        }
        pairs = __reduce_add_sync(RAMP_FULL_MASK, pairs);
        if (lane == 31) {
            tstart[EL] = inc;
            misc[1] = chosen;
            misc[2] = rows;
            misc[3] = inc;
            misc[4] = pairs;
        }
    }
    __syncthreads();

    /* ---- F: slot bases, pads, tile map, small outputs ---- */
    const int rows = misc[2], ntiles = misc[3];
    for (int e = lane; e < EL; e += 32) myhist[e] += tstart[e] * rows; /* own row */
    int *sorted = (int *)p.sorted_ids;
    for (int e = warp; e < EL; e += RAMP_SEL_WARPS) { /* a warp per expert */
        const int end = tstart[e + 1] * rows;
        for (int j = tstart[e] * rows + cnt[e] + lane; j < end; j += 32) sorted[j] = -1;
    }
    int *counts = (int *)p.counts;
    int *gtstart = (int *)p.tile_start;
    for (int e = tid; e < EL; e += RAMP_SEL_THREADS) {
        counts[e] = cnt[e];
        gtstart[e] = tstart[e];
    }
    int *tile_expert = (int *)p.tile_expert;
    for (int t = tid; t < ntiles; t += RAMP_SEL_THREADS) {
        /* largest e with tstart[e] <= t: the expert whose tiles hold t */
        int a = 0, b = EL - 1;
        while (a < b) {
            const int m = (a + b + 1) >> 1;
            if (tstart[m] <= t) a = m;
            else b = m - 1;
        }
        tile_expert[t] = a;
    }
    if (tid < p.nentries)
        ((float *)p.pred)[tid] = RAMP_SELECT_GROUP_ONLY ? 0.0f : pred[tid];
    if (tid == 0) {
        int *meta = (int *)p.meta;
        gtstart[EL] = ntiles;
        meta[0] = misc[1];
        meta[1] = ntiles;
        meta[2] = ntiles * rows;
        meta[3] = misc[4];
        meta[4] = misc[0];
        meta[5] = tokens;
        meta[6] = clamped;
        meta[7] = 0;
    }
    __syncwarp();

    /* ---- G: ordered scatter of this warp's list ---- */
    for (int k0 = 0; k0 < n; k0 += 32) {
        const bool valid = k0 + lane < n;
        const unsigned entry = valid ? list[k0 + lane] : 0;
        const unsigned e = entry & ((1u << RAMP_SEL_CODE_BITS) - 1);
        const unsigned peers = ramp_sel_match(e, __ballot_sync(RAMP_FULL_MASK, valid), nbits);
        int pos = 0;
        if (valid) {
            pos = myhist[e] + __popc(peers & below);
            sorted[pos] = (int)(entry >> RAMP_SEL_CODE_BITS);
        }
        __syncwarp();
        /* the lowest lane of each group advances the base */
        if (valid && (peers & below) == 0) myhist[e] = pos + __popc(peers);
        __syncwarp();
    }
}

#endif /* RAMP_SELECT_CUH */
