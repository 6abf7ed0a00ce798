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
 * One block of 1024 threads (32 warps), one launch, no host round trip:
 *   A  stage: each id -> local expert code (uint16; SKIP for -1, foreign and
 *      bad ids, bad ones counted), 16-byte loads when the input is aligned.
 *   B  count: warp w owns a contiguous chunk of the pairs and counts its
 *      pairs per expert into its own row hist[w][e] (warp-aggregated shared
 *      atomics: one add per distinct expert per 32 pairs).
 *   C  per expert: n_e = sum over warps, hist[w][e] -> exclusive prefix.
 *   D  one warp per menu entry: T = q * sum ceil(n_e / b), W = ceil(T / S),
 *      A = #{n_e > 0}, t = th0 + th1 W + th2 T + th3 A (fmaf chain, float32).
 *   E  warp 0: argmin (ties to the lower index), scan of tiles per expert.
 *   F  pads (-1), tile -> expert map, counts, tile starts, meta.
 *   G  scatter: warp w walks its chunk again in order; a pair's slot is its
 *      expert's base + the pairs of earlier warps + its rank among equal
 *      experts in this 32-pair step (match_any + popc of lower lanes).
 * Determinism: within an expert, slots follow the pair index (warp chunks
 * are in order, and so are lanes within a step), unlike an atomic-cursor
 * scatter whose order depends on scheduling.
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

/* Entry c's fields. Note: a kernel parameter array indexed by a run-time
 * value can make the compiler copy the whole struct to local memory; the
 * unrolled compare keeps every access a constant-offset parameter load. */
static __forceinline__ void ramp_sel_entry(const ramp_sel_params &p, int c,
                                           int &rows, int &slices, int &slots,
                                           float th[4]) {
    rows = p.rows[0];
    slices = p.slices[0];
    slots = p.slots[0];
    th[0] = p.theta[0][0]; th[1] = p.theta[0][1];
    th[2] = p.theta[0][2]; th[3] = p.theta[0][3];
#pragma unroll
    for (int i = 1; i < RAMP_SEL_MAX_ENTRIES; i++) {
        if (c == i) {
            rows = p.rows[i];
            slices = p.slices[i];
            slots = p.slots[i];
            th[0] = p.theta[i][0]; th[1] = p.theta[i][1];
            th[2] = p.theta[i][2]; th[3] = p.theta[i][3];
        }
    }
}

static __forceinline__ int ramp_sel_rows(const ramp_sel_params &p, int c) {
    int rows = p.rows[0];
#pragma unroll
    for (int i = 1; i < RAMP_SEL_MAX_ENTRIES; i++)
        if (c == i) rows = p.rows[i];
    return rows;
}

/* Local code of one id; counts ids that are neither -1 nor in [0, E). */
static __forceinline__ unsigned ramp_sel_code(int id, int experts,
                                              const short *map, int &bad) {
    unsigned c = RAMP_SEL_SKIP;
    if ((unsigned)id < (unsigned)experts) {
        int m = map[id];
        if (m >= 0) c = (unsigned)m;
    } else if (id != -1) {
        bad++;
    }
    return c;
}

extern "C" __global__ void __launch_bounds__(RAMP_SEL_THREADS, 1)
ramp_select(const ramp_sel_params p) {
    extern __shared__ __align__(16) unsigned char smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int E = p.experts, EL = p.local_experts, k = p.topk;
    const ramp_sel_layout L =
        ramp_sel_layout_of(E, EL, (long long)p.max_tokens * k);
    int *hist = (int *)(smem + L.hist);
    int *tstart = (int *)(smem + L.tstart);
    int *cnt = (int *)(smem + L.cnt);
    float *pred = (float *)(smem + L.pred);
    int *misc = (int *)(smem + L.misc); /* 0 bad, 1 chosen, 2 rows, 3 tiles, 4 local */
    short *map = (short *)(smem + L.map);
    unsigned short *code = (unsigned short *)(smem + L.code);

    int tokens = p.tokens, clamped = 0;
    if (p.tokens_dev) {
        int t = *(const int *)p.tokens_dev;
        if (t < 0 || t > p.max_tokens) {
            clamped = 1;
            t = t < 0 ? 0 : p.max_tokens;
        }
        tokens = t;
    }
    const int P = tokens * k;

    /* ---- A: clear, load the id map, stage codes ---- */
    for (int i = tid; i < RAMP_SEL_WARPS * EL; i += RAMP_SEL_THREADS) hist[i] = 0;
    const short *gmap = (const short *)p.local_of;
    for (int i = tid; i < E; i += RAMP_SEL_THREADS) map[i] = gmap[i];
    if (tid < 8) misc[tid] = 0;
    __syncthreads();

    const int *ids = (const int *)p.ids;
    int bad = 0;
    int done = 0;
    if ((p.ids & 15ull) == 0) {
        /* 16-byte loads, four per thread in flight before any is used */
        const int P4 = P >> 2;
        const int4 *ids4 = (const int4 *)ids;
        for (int i0 = tid; i0 < P4; i0 += 4 * RAMP_SEL_THREADS) {
            int4 v[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const int i = i0 + u * RAMP_SEL_THREADS;
                if (i < P4) v[u] = __ldg(ids4 + i);
            }
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const int i = i0 + u * RAMP_SEL_THREADS;
                if (i < P4) {
                    ushort4 c;
                    c.x = (unsigned short)ramp_sel_code(v[u].x, E, map, bad);
                    c.y = (unsigned short)ramp_sel_code(v[u].y, E, map, bad);
                    c.z = (unsigned short)ramp_sel_code(v[u].z, E, map, bad);
                    c.w = (unsigned short)ramp_sel_code(v[u].w, E, map, bad);
                    *(ushort4 *)(code + 4 * i) = c;
                }
            }
        }
        done = P4 * 4;
    }
    for (int i = done + tid; i < P; i += RAMP_SEL_THREADS)
        code[i] = (unsigned short)ramp_sel_code(__ldg(ids + i), E, map, bad);
    bad = __reduce_add_sync(RAMP_FULL_MASK, bad);
    if (lane == 0 && bad) atomicAdd(&misc[0], bad);
    __syncthreads();

    /* ---- B: per-warp counts over a contiguous chunk ---- */
    const int chunk = ramp_ceil_div(P, RAMP_SEL_THREADS) * 32;
    const int lo = min(P, warp * chunk), hi = min(P, lo + chunk);
    int *myhist = hist + warp * EL;
    for (int base = lo; base < hi; base += 32) {
        const int i = base + lane;
        const unsigned c = i < hi ? code[i] : RAMP_SEL_SKIP;
        const unsigned peers = __match_any_sync(RAMP_FULL_MASK, c);
        if (c != RAMP_SEL_SKIP && lane == __ffs(peers) - 1)
            atomicAdd(&myhist[c], __popc(peers));
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
    /* ---- D: Equation 3, one warp per menu entry ---- */
    if (warp < p.nentries) {
        int rows, slices, slots;
        float th[4];
        ramp_sel_entry(p, warp, rows, slices, slots, th);
        int tiles = 0, active = 0;
        for (int e = lane; e < EL; e += 32) {
            const int n = cnt[e];
            tiles += ramp_ceil_div(n, rows);
            active += n > 0;
        }
        tiles = __reduce_add_sync(RAMP_FULL_MASK, tiles);
        active = __reduce_add_sync(RAMP_FULL_MASK, active);
        if (lane == 0) {
            const int T = tiles * slices;
            const int W = ramp_ceil_div(T, slots);
            float t = th[0];
            t = __fmaf_rn(th[1], __int2float_rn(W), t);
            t = __fmaf_rn(th[2], __int2float_rn(T), t);
            t = __fmaf_rn(th[3], __int2float_rn(active), t);
            pred[warp] = t;
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
        const int rows = ramp_sel_rows(p, chosen);
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
    int *counts = (int *)p.counts;
    int *gtstart = (int *)p.tile_start;
    for (int e = tid; e < EL; e += RAMP_SEL_THREADS) {
        const int end = tstart[e + 1] * rows;
        for (int j = tstart[e] * rows + cnt[e]; j < end; j++) sorted[j] = -1;
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
    __syncthreads();

    /* ---- G: ordered scatter ---- */
    const unsigned below = ramp_lanemask_lt();
    for (int base = lo; base < hi; base += 32) {
        const int i = base + lane;
        const unsigned c = i < hi ? code[i] : RAMP_SEL_SKIP;
        const unsigned peers = __match_any_sync(RAMP_FULL_MASK, c);
        int pos = 0;
        if (c != RAMP_SEL_SKIP) {
            pos = myhist[c] + __popc(peers & below);
            sorted[pos] = i;
        }
        __syncwarp();
        /* the lowest lane of each group (rank 0) advances the base */
        if (c != RAMP_SEL_SKIP && (peers & below) == 0)
            myhist[c] = pos + __popc(peers);
        __syncwarp();
    }
}

#endif /* RAMP_SELECT_CUH */
