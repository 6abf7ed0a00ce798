/*
 * inflow.cuh - how fast bytes get into an SM: the probe behind
 * bench/bench_inflow.c (kernels/moe_v2.md, session 38).
 *
 * Why: kernel v2's wide tile takes 384 bytes into shared memory per 128 x
 * 256 x 2 FLOPs (gate and up rows 256, tokens 128, per K byte), and its
 * launches have been seen taking ~21 bytes per SM clock however they were
 * changed (sessions 15, 19). Whether that is a limit of the hardware (the
 * L2's read bandwidth shared by all SMs, or one SM's intake) or of v2's
 * producer decides what the roofline of a tile that streams its operands
 * through shared memory is. These kernels do nothing but fill shared memory
 * (or registers) from a window of global memory, so their rate is the
 * ceiling, measured on any grid size (answer, bench/results/s38-run1: an SM
 * takes 59-98 B/clk from L2, so neither):
 *
 *   ramp_inflow_bulk  thread 0 of a 32-thread block issues cp.async.bulk
 *                     copies of RAMP_INFLOW_PIECE bytes into a ring of
 *                     RAMP_INFLOW_STAGES slots, each completing on its
 *                     mbarrier, and refills a slot once its copy landed
 *                     (kernel v2's producer without consumers).
 *   ramp_inflow_mc    the same in clusters of two CTAs: CTA k copies half k
 *                     of each piece with .multicast::cluster into both
 *                     CTAs' slots (one L2 read, two shared-memory writes, as
 *                     v2's .mc tiles share their weights); a slot is refilled
 *                     once both CTAs saw it land (an empty barrier of count
 *                     2, arrived on from both).
 *   ramp_inflow_loads 1,024 threads issue RAMP_INFLOW_VEC 16-byte loads each
 *                     before using any (128 KB in flight a block), into
 *                     registers: the path the threads' own loads take.
 *
 * Block b (cluster q for _mc) reads `pieces` consecutive pieces starting at
 * piece (b * pieces + first) of the window, wrapping: a window smaller
 * than L2 is read from L2 after the first pass, a large one from HBM (the
 * host moves `first` between launches so that no launch finds the last
 * one's bytes in L2). The window holds word w = inflow_word(w)
 * (ramp_inflow_fill), so what landed can be checked without reading it
 * again: each block compares its last piece word by word (the copies from
 * their ring slot, the loads from their registers; checking every word
 * slowed the loads kernel by a third), adding its mismatches to bad[0] (a
 * rate is only reported for copies that put the right bytes in the right
 * place); bad[1] is the loads' checksum sink.
 */
#include "hopper.cuh"

#ifndef RAMP_INFLOW_PIECE
#define RAMP_INFLOW_PIECE 32768
#endif
#ifndef RAMP_INFLOW_STAGES
#define RAMP_INFLOW_STAGES 4
#endif
#define RAMP_INFLOW_THREADS 1024
#define RAMP_INFLOW_VEC 8
#if RAMP_INFLOW_PIECE % 32 || RAMP_INFLOW_PIECE * RAMP_INFLOW_STAGES > 229376
#error "RAMP_INFLOW_PIECE: a multiple of 32 bytes, the ring within 224 KB"
#endif

/* The window's word w (a 32-bit word index): distinct in every word of a
 * piece and from piece to piece, so a copy from the wrong place shows. */
static __device__ __forceinline__ unsigned inflow_word(unsigned long long w) {
    return (unsigned)w * 2654435761u + (unsigned)(w >> 32) + 12345u;
}

extern "C" __global__ void ramp_inflow_fill(unsigned *p, long long words) {
    for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x; w < words;
         w += (long long)gridDim.x * blockDim.x)
        p[w] = inflow_word((unsigned long long)w);
}

/* The 32 threads of warp 0: slot's RAMP_INFLOW_PIECE bytes against the
 * window's piece at byte offset *off (thread 0 waited for them to land and
 * then stored *off); the mismatches added to *bad. *off is read after the
 * warp's barrier: the other threads get here long before thread 0. */
static __device__ __forceinline__ void inflow_check(const unsigned char *slot,
                                                   const unsigned long long *off, unsigned *bad) {
    __syncwarp(); /* thread 0's wait made the bytes visible to it; now the warp's */
    const unsigned long long w0 = *off / 4;
    const unsigned *wds = (const unsigned *)slot;
    unsigned miss = 0;
    for (int j = threadIdx.x; j < RAMP_INFLOW_PIECE / 4; j += 32)
        miss += wds[j] != inflow_word(w0 + (unsigned long long)j);
    if (miss) atomicAdd(bad, miss);
}

/* The window's pieces in order from block (or cluster) b's first, wrapping:
 * one division per block, then an add and a compare per piece (a 64-bit
 * modulo per piece, a software routine, held the first version of the
 * issuing thread to one copy per ~400 clocks). */
typedef struct {
    unsigned long long off, end;
} inflow_cursor;
static __device__ __forceinline__ inflow_cursor inflow_start(long long b, long long pieces,
                                                             long long first, long long n) {
    inflow_cursor c;
    c.off = (unsigned long long)((b * pieces + first) % n) * RAMP_INFLOW_PIECE;
    c.end = (unsigned long long)n * RAMP_INFLOW_PIECE;
    return c;
}
static __device__ __forceinline__ void inflow_next(inflow_cursor &c) {
    c.off += RAMP_INFLOW_PIECE;
    if (c.off == c.end) c.off = 0;
}

/* The ring's next slot: s wraps at RAMP_INFLOW_STAGES, flipping the parity
 * ph of the slots' current round. */
static __device__ __forceinline__ void inflow_advance(int &s, unsigned &ph) {
    if (++s == RAMP_INFLOW_STAGES) {
        s = 0;
        ph ^= 1u;
    }
}

/* Thread 0: waits for the last RAMP_INFLOW_STAGES pieces of `pieces` to land
 * (cluster: an acquire at cluster scope, for bytes the partner copied). */
static __device__ __forceinline__ void inflow_drain(const unsigned long long *full, long long pieces,
                                                    int cluster) {
    for (long long j = pieces > RAMP_INFLOW_STAGES ? pieces - RAMP_INFLOW_STAGES : 0; j < pieces;
         j++) {
        const unsigned bar = hop_smem(&full[j % RAMP_INFLOW_STAGES]);
        const unsigned parity = (unsigned)((j / RAMP_INFLOW_STAGES) & 1);
        if (cluster) hop_mbar_wait_cluster(bar, parity);
        else hop_mbar_wait(bar, parity);
    }
}

extern "C" __global__ void __launch_bounds__(32)
    ramp_inflow_bulk(unsigned long long base, long long window_pieces, long long pieces,
                     long long first, unsigned *bad) {
    extern __shared__ __align__(128) unsigned char ring[];
    __shared__ __align__(8) unsigned long long full[RAMP_INFLOW_STAGES];
    __shared__ unsigned long long last_off; /* the last piece's offset */
    if (threadIdx.x == 0) {
        for (int s = 0; s < RAMP_INFLOW_STAGES; s++) hop_mbar_init(hop_smem(&full[s]), 1);
        hop_mbar_init_fence();
        inflow_cursor cur = inflow_start(blockIdx.x, pieces, first, window_pieces);
        unsigned long long lo = 0;
        int s = 0;
        unsigned ph = 0; /* parity of slot s's current round */
        for (int i = 0; i < (int)pieces; i++, inflow_next(cur)) {
            const unsigned bar = hop_smem(&full[s]);
            /* the slot's last piece has landed: refill it */
            if (i >= RAMP_INFLOW_STAGES) hop_mbar_wait(bar, ph ^ 1u);
            hop_mbar_arrive_expect_tx(bar, RAMP_INFLOW_PIECE);
            hop_bulk_load(hop_smem(ring + (size_t)s * RAMP_INFLOW_PIECE), base + cur.off,
                          RAMP_INFLOW_PIECE, bar);
            lo = cur.off;
            inflow_advance(s, ph);
        }
        inflow_drain(full, pieces, 0); /* the last pieces land before the block exits */
        last_off = lo;
    }
    if (pieces > 0)
        inflow_check(ring + (size_t)((pieces - 1) % RAMP_INFLOW_STAGES) * RAMP_INFLOW_PIECE,
                     &last_off, bad);
}

extern "C" __global__ void __launch_bounds__(32)
    ramp_inflow_mc(unsigned long long base, long long window_pieces, long long pieces,
                   long long first, unsigned *bad) {
    extern __shared__ __align__(128) unsigned char ring[];
    __shared__ __align__(8) unsigned long long full[RAMP_INFLOW_STAGES];
    __shared__ __align__(8) unsigned long long empty[RAMP_INFLOW_STAGES];
    __shared__ unsigned long long last_off; /* the last piece's offset */
    const unsigned rank = hop_cluster_rank(), other = rank ^ 1u;
    const long long q = blockIdx.x / 2; /* the cluster: both CTAs read its pieces */
    const unsigned half = RAMP_INFLOW_PIECE / 2;
    if (threadIdx.x == 0) {
        for (int s = 0; s < RAMP_INFLOW_STAGES; s++) {
            hop_mbar_init(hop_smem(&full[s]), 1);
            hop_mbar_init(hop_smem(&empty[s]), 2); /* both CTAs saw slot s land */
        }
        hop_mbar_init_fence();
    }
    hop_cluster_sync(); /* the partner's barriers exist before any copy or arrival */
    if (threadIdx.x == 0) {
        inflow_cursor cur = inflow_start(q, pieces, first, window_pieces);
        unsigned long long lo = 0;
        int s = 0;
        unsigned ph = 0; /* parity of slot s's current round */
        for (int i = 0; i < (int)pieces; i++, inflow_next(cur)) {
            const unsigned bar = hop_smem(&full[s]), eb = hop_smem(&empty[s]);
            if (i >= RAMP_INFLOW_STAGES) {
                /* this CTA's slot landed (both halves), tell both CTAs; then
                 * wait until the partner's did too before writing into it */
                hop_mbar_wait_cluster(bar, ph ^ 1u);
                hop_mbar_arrive(eb);
                hop_mbar_arrive_remote_relaxed(hop_mapa(eb, other));
                hop_mbar_wait_cluster(eb, ph ^ 1u);
            }
            hop_mbar_arrive_expect_tx(bar, RAMP_INFLOW_PIECE); /* both halves */
            hop_bulk_load_mc(hop_smem(ring + (size_t)s * RAMP_INFLOW_PIECE) + rank * half,
                             base + cur.off + rank * half, half, bar, (unsigned short)3);
            lo = cur.off;
            inflow_advance(s, ph);
        }
        inflow_drain(full, pieces, 1);
        last_off = lo;
    }
    /* both halves of the last piece, one from each CTA */
    if (pieces > 0)
        inflow_check(ring + (size_t)((pieces - 1) % RAMP_INFLOW_STAGES) * RAMP_INFLOW_PIECE,
                     &last_off, bad);
    hop_cluster_sync(); /* no CTA leaves while copies into it may be issued */
}

extern "C" __global__ void __launch_bounds__(RAMP_INFLOW_THREADS)
    ramp_inflow_loads(unsigned long long base, long long window_pieces, long long pieces,
                      long long first, unsigned *bad) {
    const int per = RAMP_INFLOW_PIECE / 16; /* uint4s a piece */
    unsigned acc = 0, miss = 0;
    inflow_cursor cur = inflow_start(blockIdx.x, pieces, first, window_pieces);
    for (int i = 0; i < (int)pieces; i++, inflow_next(cur)) {
        const uint4 *p = (const uint4 *)(base + cur.off);
        /* a piece is RAMP_INFLOW_THREADS * RAMP_INFLOW_VEC uint4s at most;
         * each thread's loads are all issued before any is used */
        uint4 v[RAMP_INFLOW_VEC];
#pragma unroll
        for (int j = 0; j < RAMP_INFLOW_VEC; j++) {
            const int at = threadIdx.x + j * RAMP_INFLOW_THREADS;
            v[j] = at < per ? __ldcg(p + at) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int j = 0; j < RAMP_INFLOW_VEC; j++) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
        if (i == (int)pieces - 1) /* the last piece checked word by word, as the copies' */
#pragma unroll
            for (int j = 0; j < RAMP_INFLOW_VEC; j++) {
                const int at = threadIdx.x + j * RAMP_INFLOW_THREADS;
                const unsigned long long w = cur.off / 4 + 4ull * (unsigned long long)at;
                if (at < per)
                    miss += (v[j].x != inflow_word(w)) + (v[j].y != inflow_word(w + 1)) +
                            (v[j].z != inflow_word(w + 2)) + (v[j].w != inflow_word(w + 3));
            }
    }
    if (miss) atomicAdd(bad, miss);
    if (acc == 0x9e3779b9u) bad[1] = acc; /* a sink nobody reads: keeps every load */
}
