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
 * One launch of RAMP_SEL_CTAS blocks of RAMP_SEL_WARPS warps. With more
 * than one block the launch is one thread-block cluster (sm_90): each block
 * copies its counts into the others' shared memory before one cluster
 * barrier, so it stays one launch of a fixed shape with no host round trip.
 * The host picks the shape from the pairs a launch covers (select_gpu.c):
 * 16 warps a block and a block per 512 pairs up to 4,096 pairs, then 32
 * warps and 8 blocks; a selector holds the shapes up to max_tokens * k and
 * a launch with a host token count takes the smallest that covers it.
 *
 * Where the time goes (measured, bench/results/select-2026-11-30-v2.md):
 * not in instruction fetch (straight-line code ran as fast as a loop) nor
 * in __syncthreads (about 50 cycles), but in chains of dependent
 * instructions in one warp, in code that all 32 warps run (8 per
 * scheduler), in warp reductions that all warps issue at once, in remote
 * shared-memory loads (about 400 cycles each) and in scattered stores (one
 * per distinct cache line). So: short chains per warp, work spread over
 * warps and blocks, one warp for what one warp can do, pushes not pulls.
 *
 * The pairs are rows of 32 (lane l of row r holds pair 32 r + l); warp g of
 * the cluster owns a contiguous run of rows, so pair order = (block, warp,
 * row, lane) order.
 *   0  (all) issue the first RAMP_SEL_ROWS rows' id loads and the menu entry
 *      this warp evaluates; clear this block's counters; copy the id map
 *      (only for a scattered placement: a contiguous one is a subtraction).
 *      Barrier.
 *   1  (per warp) per row: local expert of each id; lanes of equal experts
 *      (match.any when few lanes are local, else one ballot per bit of the
 *      expert index); the lowest lane of each group adds the group's size
 *      to hist[warp][e] and tot[block][e] (shared-memory atomics: counts
 *      only, so the order is irrelevant). The first RAMP_SEL_ROWS rows'
 *      experts and groups stay in registers for step 4. Barrier; in a
 *      cluster, this block's tot row goes to every block, cluster barrier.
 *   2  (thread per expert, low warps) exclusive prefix of hist over this
 *      block's warps, in place; n_e and the pairs in earlier blocks.
 *   3  (warp per menu entry, high warps, at the same time as 2) n_e, the
 *      entry's tiles per expert and their scan (scan[entry][e]), and
 *      Equation 3: T = q * sum ceil(n_e / b), W = ceil(T / S),
 *      A = #{n_e > 0}, P = sum n_e, t = th0 + th1 W + th2 T + th3 A + th4 P
 *      (fmaf chain, float32; th4 = 0 for Equation 3 alone, which leaves t
 *      as it was). Barrier. Warp W-1 takes the argmin (two warp reductions
 *      on an order-preserving integer key; ties to the lower index): every
 *      entry's scan is ready, so the choice adds no serial step. Barrier.
 *   4  (every warp) slot cursors of this warp's row of hist; the ordered
 *      scatter: slot = cursor + rank in the group, the group's lowest lane
 *      advances the cursor. The high warps write the -1 pads, the tile map
 *      and the small outputs meanwhile.
 * Determinism: within an expert, slots follow the pair index (blocks, warps
 * and rows in order, lanes ranked in order), unlike an atomic-cursor
 * scatter whose order depends on scheduling.
 *
 * RAMP_SELECT_GROUP_ONLY=1 drops Equation 3 and the argmin: the plain
 * group-and-pad kernel for entry 0's tile size that RaMP replaces (the
 * benchmark baseline). RAMP_SELECT_PROFILE=1 runs the whole body twice and
 * records clock64 at each step's end (select_params.h says where).
 * RAMP_SELECT_PDL_WAIT=1 (ramp_select_desc.pdl_wait): the kernel is launched
 * as a programmatic dependent of the kernel before it on the stream (the
 * router's, or the previous layer's) and waits for that grid
 * (griddepcontrol.wait) before it reads or writes global memory, so that
 * its launch and block start overlap that kernel's last blocks instead of
 * following its end.
 * RAMP_SELECT_SWITCH=1 also writes the choice to p.cond, a graph switch
 * node's handle (the layer's poly_split 5), which then runs only the
 * chosen entry's kernels. The driver resolves cudaGraphSetConditional when
 * it loads the module: no device runtime library is linked.
 */
#ifndef RAMP_SELECT_CUH
#define RAMP_SELECT_CUH

#include "common.cuh"
#include "select_params.h"
#include "timeline.cuh"

#ifndef RAMP_SELECT_GROUP_ONLY
#define RAMP_SELECT_GROUP_ONLY 0
#endif
#ifndef RAMP_SELECT_PROFILE
#define RAMP_SELECT_PROFILE 0
#endif
#ifndef RAMP_SELECT_SWITCH
#define RAMP_SELECT_SWITCH 0
#endif
#ifndef RAMP_SELECT_PDL_WAIT
#define RAMP_SELECT_PDL_WAIT 0
#endif
#if RAMP_SELECT_SWITCH
/* the device runtime's declaration (cuda_device_runtime_api.h) */
extern "C" __device__ __cudart_builtin__ void cudaGraphSetConditional(unsigned long long handle,
                                                                     unsigned int value);
#endif

#if RAMP_SEL_CTAS > 1
#define RAMP_SEL_CLUSTER __cluster_dims__(RAMP_SEL_CTAS, 1, 1)
#else
#define RAMP_SEL_CLUSTER
#endif

/* This block's rank in its cluster (0 without one). */
static __forceinline__ unsigned ramp_sel_rank() {
#if RAMP_SEL_CTAS > 1
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
#else
    return 0;
#endif
}

/* Barrier of every thread of the launch, ordering shared-memory accesses
 * across its blocks. */
static __forceinline__ void ramp_sel_sync_all() {
#if RAMP_SEL_CTAS > 1
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
    __syncthreads();
#endif
}

/* Split cluster barrier around the start: every block arrives first thing
 * and waits just before its first remote store, so the stores never reach a
 * block that has not started, and the wait itself costs nothing. */
static __forceinline__ void ramp_sel_arrive_early() {
#if RAMP_SEL_CTAS > 1
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
#endif
}
static __forceinline__ void ramp_sel_wait_started() {
#if RAMP_SEL_CTAS > 1
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
#endif
}

/* *p = v in the shared memory of cluster block `rank` (the same offset):
 * a store, so nothing waits for it; the next cluster barrier publishes it.
 * Pushing each block's counts costs one barrier, pulling them costs a
 * remote round trip (about 400 cycles) on the critical path. */
static __forceinline__ void ramp_sel_push(int *p, unsigned rank, int v) {
    unsigned a = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("mapa.shared::cluster.u32 %0, %0, %1;" : "+r"(a) : "r"(rank));
    asm volatile("st.shared::cluster.u32 [%0], %1;" :: "r"(a), "r"(v) : "memory");
}

/* Pairs of local expert e over the blocks (tot[c][e]), and in the blocks
 * before this one. */
static __forceinline__ int ramp_sel_total(const int *tot, int EL, int e, unsigned rank,
                                          int &before) {
    int n = 0;
    before = 0;
#pragma unroll
    for (int c = 0; c < RAMP_SEL_CTAS; c++) {
        const int t = tot[c * EL + e];
        n += t;
        before += c < (int)rank ? t : 0;
    }
    return n;
}

/* ceil(a / b) for a >= 0, b >= 1 (unsigned: half the instructions). */
static __forceinline__ int ramp_sel_cdiv(int a, int b) {
    return (int)(((unsigned)a + (unsigned)b - 1u) / (unsigned)b);
}

/* Local expert of one id, or RAMP_SEL_SKIP; counts ids that are neither -1
 * nor in [0, E). first >= 0: the local experts are first .. first + EL - 1;
 * else map[] (-1 for foreign experts). */
static __forceinline__ unsigned ramp_sel_code(int id, int experts, int first,
                                              int EL, const short *map, int &bad) {
    if ((unsigned)id < (unsigned)experts) {
        const int m = first >= 0 ? id - first : map[id];
        return (unsigned)m < (unsigned)EL ? (unsigned)m : RAMP_SEL_SKIP;
    }
    bad += id != -1;
    return RAMP_SEL_SKIP;
}

/* Ids of rows r0 .. r0 + RAMP_SEL_ROWS - 1 at this lane (-1 past r1 or P):
 * all loads issued before the first use. */
static __forceinline__ void ramp_sel_load(const int *ids, int r0, int r1, int P,
                                          int lane, int (&v)[RAMP_SEL_ROWS]) {
#pragma unroll
    for (int j = 0; j < RAMP_SEL_ROWS; j++) {
        const int i = (r0 + j) * 32 + lane;
        v[j] = r0 + j < r1 && i < P ? __ldg(ids + i) : -1;
    }
}

/* Lanes whose code equals this lane's, among the lanes with a local expert
 * (0 for a lane without). Two ways, picked per row: match.any costs about
 * one step per distinct value in the row (the foreign lanes are one value),
 * one ballot per bit of the code costs nbits steps; measured on the H200,
 * match.any halves step 1 for EP routings (a few local lanes a row) and
 * takes 1.75x as long with 32 local lanes of 32 experts. */
static __forceinline__ unsigned ramp_sel_match(unsigned code, int nbits) {
    const bool mine = code != RAMP_SEL_SKIP;
    const unsigned valid = __ballot_sync(RAMP_FULL_MASK, mine);
    if (valid == 0u) return 0u;
    unsigned peers;
    if (__popc(valid) <= 2 * nbits) {
        peers = __match_any_sync(RAMP_FULL_MASK, code);
    } else {
        peers = valid;
#pragma unroll
        for (int b = 0; b < RAMP_SEL_MAX_NBITS; b++) {
            if (b >= nbits) break;
            const unsigned bit = (code >> b) & 1u;
            /* keep the lanes whose bit b equals ours */
            peers &= ~(__ballot_sync(RAMP_FULL_MASK, bit) ^ (0u - bit));
        }
    }
    return mine ? peers : 0u;
}

/* Inclusive sum of x over lanes 0..lane. */
static __forceinline__ int ramp_sel_scan(int x, int lane) {
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const int y = __shfl_up_sync(RAMP_FULL_MASK, x, off);
        if (lane >= off) x += y;
    }
    return x;
}

/* Counts one row (step 1): the lowest lane of each group adds its size. */
static __forceinline__ void ramp_sel_count(unsigned c, unsigned peers, unsigned below,
                                           int *myhist, int *tot) {
    if (peers != 0u && (peers & below) == 0u) {
        atomicAdd(&myhist[c], __popc(peers));
        atomicAdd(&tot[c], __popc(peers));
    }
}

/* Scatters one row (step 4); `pair` is this lane's pair index. */
static __forceinline__ void ramp_sel_place(unsigned c, unsigned peers, unsigned below,
                                           int lane, int pair, int *myhist, int *sorted) {
    const int leader = peers ? __ffs(peers) - 1 : lane;
    int base = 0;
    if (leader == lane && peers) {
        base = myhist[c];
        myhist[c] = base + __popc(peers);
    }
    base = __shfl_sync(RAMP_FULL_MASK, base, leader);
    if (peers) sorted[base + __popc(peers & below)] = pair;
    __syncwarp(); /* cursors advanced before the next row reads them */
}

static __forceinline__ ramp_sel_entry ramp_sel_entry_load(unsigned long long menu, int c) {
    const int4 *m = (const int4 *)menu + 2 * c;
    const int4 a = __ldg(m), b = __ldg(m + 1);
    ramp_sel_entry e;
    e.rows = a.x; e.slices = a.y; e.slots_waves = a.z; e.theta_pairs = __int_as_float(a.w);
    e.theta[0] = __int_as_float(b.x); e.theta[1] = __int_as_float(b.y);
    e.theta[2] = __int_as_float(b.z); e.theta[3] = __int_as_float(b.w);
    return e;
}

#if RAMP_SELECT_PROFILE
#define RAMP_SEL_PASSES 2
#define RAMP_SEL_MARK(k) \
    do { if (tid == 0) prof[pass * RAMP_SEL_PROF_MARKS + (k)] = clock64(); } while (0)
static __forceinline__ unsigned long long ramp_sel_gtime() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
#else
#define RAMP_SEL_PASSES 1
#define RAMP_SEL_MARK(k) do { } while (0)
#endif

extern "C" __global__ void RAMP_SEL_CLUSTER __launch_bounds__(RAMP_SEL_THREADS, 1)
ramp_select(const ramp_sel_params p) {
    extern __shared__ __align__(16) unsigned char smem[];
    RAMP_TL(0, 0, 0);
    ramp_sel_arrive_early();
    /* A kernel launched after this one as a programmatic dependent (the
     * layer's MoE kernel) may start now: it runs griddepcontrol.wait, which
     * waits for this whole grid to finish and its writes to be visible,
     * before it reads anything. Triggering first only hides its launch. */
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#if RAMP_SELECT_PDL_WAIT
    /* the previous kernel wrote the ids, or still reads this selector's
     * outputs: nothing global is touched before it is done (the timeline
     * stamp above writes only its own diagnostic slot) */
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int E = p.experts, EL = p.local_experts, first = p.first_expert;
    int *hist = (int *)(smem + p.off_hist);
    int *tot = (int *)(smem + p.off_tot);
    int *cnt = (int *)(smem + p.off_cnt);
    int *cpre = (int *)(smem + p.off_cpre);
    int *scan = (int *)(smem + p.off_scan);
    float *pred = (float *)(smem + p.off_pred);
    int *erows = (int *)(smem + p.off_pred) + RAMP_SEL_MAX_ENTRIES;
    int *misc = (int *)(smem + p.off_misc);
    short *map = (short *)(smem + p.off_map);
    const unsigned rank = ramp_sel_rank();
    const bool lead = rank == 0; /* block 0 writes the small outputs */
#if RAMP_SELECT_PROFILE
    __shared__ long long prof[2 * RAMP_SEL_PROF_MARKS];
    const unsigned long long gt0 = ramp_sel_gtime();
    const long long clk0 = clock64();
    for (int pass = 0; pass < RAMP_SEL_PASSES; pass++) {
    if (pass) ramp_sel_arrive_early();
#endif

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
    const int nrows = (P + 31) >> 5;
    const int G = RAMP_SEL_CTAS * RAMP_SEL_WARPS, g = (int)rank * RAMP_SEL_WARPS + warp;
    const int per = (nrows + G - 1) / G;
    const int r_lo = min(nrows, g * per), r_hi = min(nrows, r_lo + per);
    int *myhist = hist + warp * EL, *mytot = tot + rank * EL;
    const int nbits = p.nbits;
    const unsigned below = ramp_lanemask_lt();

    /* ---- 0: loads in flight, counters cleared, map copied ---- */
    const int *ids = (const int *)p.ids;
    int v[RAMP_SEL_ROWS];
    ramp_sel_load(ids, r_lo, r_hi, P, lane, v);
    /* warp W-1-c works on entry c in step 3, away from the low warps that
     * do step 2 (and hold the rows when the batch is small) */
    const int my_entry = RAMP_SEL_WARPS - 1 - warp;
    ramp_sel_entry me = {0, 0, 0, 0.0f, {0.0f, 0.0f, 0.0f, 0.0f}};
    if (my_entry < p.scan_entries) me = ramp_sel_entry_load(p.menu, my_entry);
#pragma unroll 1
    for (int e = lane; e < EL; e += 32) myhist[e] = 0;
#pragma unroll 1
    for (int e = tid; e < EL; e += RAMP_SEL_THREADS) mytot[e] = 0;
    if (tid < 8) misc[tid] = 0; /* not 8..15: other blocks push into them */
    if (first < 0) {
        const short *gmap = (const short *)p.local_of;
#pragma unroll 1
        for (int i = tid; i < E; i += RAMP_SEL_THREADS) map[i] = gmap[i];
    }
    __syncthreads();
    RAMP_SEL_MARK(0);

    /* ---- 1: count this warp's rows; keep the first load's groups ---- */
    int bad = 0;
    unsigned kc[RAMP_SEL_ROWS], kp[RAMP_SEL_ROWS];
#pragma unroll
    for (int j = 0; j < RAMP_SEL_ROWS; j++) {
        kc[j] = RAMP_SEL_SKIP;
        kp[j] = 0u;
        if (r_lo + j >= r_hi) break; /* warp-uniform */
        kc[j] = ramp_sel_code(v[j], E, first, EL, map, bad);
        kp[j] = ramp_sel_match(kc[j], nbits);
        ramp_sel_count(kc[j], kp[j], below, myhist, mytot);
    }
    for (int r0 = r_lo + RAMP_SEL_ROWS; r0 < r_hi; r0 += RAMP_SEL_ROWS) {
        ramp_sel_load(ids, r0, r_hi, P, lane, v);
#pragma unroll
        for (int j = 0; j < RAMP_SEL_ROWS; j++) {
            if (r0 + j >= r_hi) break;
            const unsigned c = ramp_sel_code(v[j], E, first, EL, map, bad);
            ramp_sel_count(c, ramp_sel_match(c, nbits), below, myhist, mytot);
        }
    }
    if (bad) atomicAdd(&misc[0], bad); /* rare: no warp reduction for it */
    RAMP_SEL_MARK(1);
    __syncthreads();
#if RAMP_SEL_CTAS > 1
    /* copy this block's counts into the other blocks, then one cluster
     * barrier: from here on every block reads only its own shared memory */
    ramp_sel_wait_started();
#pragma unroll 1
    for (int e = tid; e < EL; e += RAMP_SEL_THREADS) {
        const int t = mytot[e];
#pragma unroll
        for (int c = 0; c < RAMP_SEL_CTAS; c++)
            if (c != (int)rank) ramp_sel_push(mytot + e, (unsigned)c, t);
    }
    if (tid < RAMP_SEL_CTAS) ramp_sel_push(misc + 8 + rank, (unsigned)tid, misc[0]);
    ramp_sel_sync_all();
#endif
    RAMP_SEL_MARK(2);

    /* ---- 2: warp prefixes and totals (thread per expert) ---- */
#pragma unroll 1
    for (int e = tid; e < EL; e += RAMP_SEL_THREADS) {
        /* loads in batches of 8 before their stores: a load that follows
         * a store to the same array waits for it (the compiler cannot tell
         * the addresses apart), which made this a 32-deep chain */
        int run = 0;
#pragma unroll
        for (int w0 = 0; w0 < RAMP_SEL_WARPS; w0 += 8) {
            int h[8];
#pragma unroll
            for (int w = 0; w < 8; w++) h[w] = hist[(w0 + w) * EL + e];
#pragma unroll
            for (int w = 0; w < 8; w++) {
                hist[(w0 + w) * EL + e] = run;
                run += h[w];
            }
        }
        int before;
        cnt[e] = ramp_sel_total(tot, EL, e, rank, before);
        cpre[e] = before;
    }
    if (lead && tid == 0) {
        int b = misc[0];
#if RAMP_SEL_CTAS > 1
        b = 0;
#pragma unroll
        for (int c = 0; c < RAMP_SEL_CTAS; c++) b += misc[8 + c];
#endif
        misc[1] = b;
    }

    /* ---- 3: per menu entry, tile scan and Equation 3 (at the same time
     * as 2); then warp W-1 chooses ---- */
    for (int c = my_entry; c < p.scan_entries; c += RAMP_SEL_WARPS) {
        if (c != my_entry) me = ramp_sel_entry_load(p.menu, c);
        int *sc = scan + c * (EL + 1);
        int tiles = 0, active = 0, pairs = 0, inc, before;
        if (EL <= 32) { /* one expert a lane: all in registers */
            const int n = lane < EL ? ramp_sel_total(tot, EL, lane, rank, before) : 0;
            tiles = ramp_sel_cdiv(n, me.rows);
            active = n > 0;
            pairs = n;
            inc = ramp_sel_scan(tiles, lane);
            if (lane < EL) sc[lane] = inc - tiles;
        } else { /* a run of experts a lane, two passes */
            const int span = ramp_sel_cdiv(EL, 32);
            const int e0 = min(EL, lane * span), e1 = min(EL, e0 + span);
#pragma unroll 1
            for (int e = e0; e < e1; e++) {
                const int n = ramp_sel_total(tot, EL, e, rank, before);
                tiles += ramp_sel_cdiv(n, me.rows);
                active += n > 0;
                pairs += n;
            }
            inc = ramp_sel_scan(tiles, lane);
            int run = inc - tiles;
#pragma unroll 1
            for (int e = e0; e < e1; e++) {
                sc[e] = run;
                run += ramp_sel_cdiv(ramp_sel_total(tot, EL, e, rank, before), me.rows);
            }
        }
        const int T = __shfl_sync(RAMP_FULL_MASK, inc, 31);
        active = __reduce_add_sync(RAMP_FULL_MASK, active);
        pairs = __reduce_add_sync(RAMP_FULL_MASK, pairs);
        if (lane == 31) sc[EL] = T;
        if (lane == 0) {
            erows[c] = me.rows;
            if (c == 0) {
                misc[2] = pairs;
                misc[3] = 0; /* the choice when there is no Equation 3 */
                misc[4] = me.rows;
            }
#if !RAMP_SELECT_GROUP_ONLY
            /* a multicast entry runs its row tiles in pairs */
            const int Tq = (RAMP_SEL_PAIRS_OF(me.slots_waves) ? (T + 1) & ~1 : T) * me.slices;
            const int W = ramp_sel_cdiv(Tq, RAMP_SEL_SLOTS_OF(me.slots_waves));
            float t = me.theta[0];
            t = __fmaf_rn(me.theta[1], __int2float_rn(W), t);
            t = __fmaf_rn(me.theta[2], __int2float_rn(Tq), t);
            t = __fmaf_rn(me.theta[3], __int2float_rn(active), t);
            /* pairs: this GPU's token-expert pairs, the sum of its local
             * experts' n_e over every block (misc[2], meta[3]): the cost
             * model's P. Last, so that th4 = 0 changes nothing. */
            t = __fmaf_rn(me.theta_pairs, __int2float_rn(pairs), t);
            /* past the entry's waves (split-K: one): chosen only if all are */
            const int mw = RAMP_SEL_WAVES_OF(me.slots_waves);
            if (mw > 0 && W > mw) t = __fadd_rn(t, RAMP_SEL_PAST_WAVES_US);
            pred[c] = t;
#endif
        }
    }
    __syncthreads();
#if !RAMP_SELECT_GROUP_ONLY
    /* one warp chooses while the others wait: all 32 warps reducing the
     * same 16 values cost about 250 cycles more */
    if (my_entry == 0) {
        /* order-preserving integer key of pred (-0 as +0: they compare equal
         * as floats); lanes past the menu or outside entry_mask get the
         * largest key (the mask allows at least one entry) */
        const int allowed = lane < p.nentries && (((unsigned)p.entry_mask >> lane) & 1u);
        const float t = allowed ? pred[lane] : 0.0f;
        const unsigned u = t == 0.0f ? 0u : __float_as_uint(t);
        const unsigned key = allowed ? u ^ ((u >> 31) ? 0xFFFFFFFFu : 0x80000000u)
                                     : 0xFFFFFFFFu;
        const unsigned m = __reduce_min_sync(RAMP_FULL_MASK, key);
        const int chosen = (int)__reduce_min_sync(RAMP_FULL_MASK, key == m ? (unsigned)lane : 32u);
        if (lane == 0) {
            misc[3] = chosen;
            misc[4] = erows[chosen];
        }
    }
    __syncthreads();
#endif
    RAMP_SEL_MARK(3);
    RAMP_TL(0, 0, 1);

    /* ---- 4: cursors, ordered scatter; pads, tile map, outputs ---- */
    const int chosen = misc[3], rows = misc[4];
    const int *tstart = scan + chosen * (EL + 1);
#pragma unroll 1
    for (int e = lane; e < EL; e += 32) myhist[e] += tstart[e] * rows + cpre[e];
    __syncwarp();
    RAMP_SEL_MARK(4);

    int *sorted = (int *)p.sorted_ids;
#pragma unroll
    for (int j = 0; j < RAMP_SEL_ROWS; j++) {
        if (r_lo + j >= r_hi) break;
        if (__any_sync(RAMP_FULL_MASK, kp[j] != 0u))
            ramp_sel_place(kc[j], kp[j], below, lane, (r_lo + j) * 32 + lane, myhist, sorted);
    }
    int unused = 0; /* bad ids were counted in step 1 */
    for (int r0 = r_lo + RAMP_SEL_ROWS; r0 < r_hi; r0 += RAMP_SEL_ROWS) {
        ramp_sel_load(ids, r0, r_hi, P, lane, v); /* L1 hits */
#pragma unroll
        for (int j = 0; j < RAMP_SEL_ROWS; j++) {
            if (r0 + j >= r_hi) break;
            const unsigned c = ramp_sel_code(v[j], E, first, EL, map, unused);
            const unsigned peers = ramp_sel_match(c, nbits);
            if (__any_sync(RAMP_FULL_MASK, peers != 0u))
                ramp_sel_place(c, peers, below, lane, (r0 + j) * 32 + lane, myhist, sorted);
        }
    }
    RAMP_SEL_MARK(5);

    /* pads and the tile map, one expert per warp from the top of the
     * cluster (the low warps hold the rows of a small batch) */
    int *tile_expert = (int *)p.tile_expert;
#pragma unroll 1
    for (int e = G - 1 - g; e < EL; e += G) {
        const int t0 = tstart[e], t1 = tstart[e + 1];
#pragma unroll 1
        for (int j = t0 * rows + cnt[e] + lane; j < t1 * rows; j += 32) sorted[j] = -1;
#pragma unroll 1
        for (int t = t0 + lane; t < t1; t += 32) tile_expert[t] = e;
    }
    if (lead && warp == RAMP_SEL_WARPS - 1) {
        int *counts = (int *)p.counts, *gtstart = (int *)p.tile_start;
#pragma unroll 1
        for (int e = lane; e <= EL; e += 32) {
            if (e < EL) counts[e] = cnt[e];
            gtstart[e] = tstart[e];
        }
        if (lane < p.nentries)
            ((float *)p.pred)[lane] = RAMP_SELECT_GROUP_ONLY ? 0.0f : pred[lane];
        if (lane == 0) {
            int *meta = (int *)p.meta;
            meta[0] = chosen;
#if RAMP_SELECT_SWITCH
            if (p.cond) cudaGraphSetConditional(p.cond, (unsigned)chosen);
#endif
            meta[1] = tstart[EL];
            meta[2] = tstart[EL] * rows;
            meta[3] = misc[2];
            meta[4] = misc[1];
            meta[5] = tokens;
            meta[6] = clamped;
            meta[7] = 0;
        }
    }
    RAMP_SEL_MARK(6);
    RAMP_SEL_MARK(7);
    RAMP_TL(0, 0, 3);

#if RAMP_SELECT_PROFILE
    ramp_sel_sync_all(); /* the next pass rewrites shared memory, here and remotely */
    }
    if (tid == 0 && lead && p.profile) {
        const unsigned long long gt1 = ramp_sel_gtime();
        const long long clk1 = clock64();
        unsigned long long *buf = (unsigned long long *)p.profile;
        const unsigned long long slot = atomicAdd(buf, 1ull) % RAMP_SEL_PROF_RECORDS;
        unsigned long long *rec = buf + RAMP_SEL_PROF_WORDS * (1 + slot);
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        rec[0] = smid;
        rec[1] = gt0;
        rec[2] = gt1;
        rec[3] = (unsigned long long)clk0;
        rec[4] = (unsigned long long)clk1;
        for (int k = 0; k < 2 * RAMP_SEL_PROF_MARKS; k++)
            rec[8 + k] = (unsigned long long)prof[k];
    }
#endif
}

#endif /* RAMP_SELECT_CUH */
