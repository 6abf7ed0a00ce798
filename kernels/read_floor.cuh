/*
 * read_floor.cuh - the benchmarks' measured floor of a memory-bound MoE
 * layer: a kernel that only reads the active experts' weight bytes, as fast
 * as plain loads go, and does nothing with them. bench_layer times it alone
 * and after the selection kernel (programmatic dependent launch, as the
 * layer launches its expert kernel), in the same CUDA graph harness as the
 * layer, from a flushed L2: what any kernel that must read those bytes
 * after routing would take at the least (issue #5's 1.2x target is against
 * the copy rate, which has no launch, no ramp-up and no tail).
 *
 * Input: pieces[n], each a 16-byte-aligned device range of at most
 * RAMP_READ_PIECE bytes (the host splits every weight range into them).
 * Block b reads pieces b, b + gridDim.x, ...: each thread issues its
 * RAMP_READ_VEC 16-byte loads of a piece before using any (so a block has
 * RAMP_READ_PIECE bytes in flight), then folds them into a checksum that is
 * stored only on an impossible value, so the loads cannot be dropped.
 * Launch: RAMP_READ_THREADS threads, grid up to 2 blocks per SM.
 *
 * ramp_read_bulk: the same pieces read by the TMA unit instead of the
 * threads (cp.async.bulk, one thread per block issuing them into a ring
 * of RAMP_READ_STAGES pieces of shared memory, each completing its bytes on
 * its mbarrier), as kernel v2 loads its weights. Launch: 32 threads,
 * RAMP_READ_STAGES * RAMP_READ_PIECE bytes of dynamic shared memory, grid
 * up to one block per SM. With n = 0 both are the empty kernel: the
 * harness's fixed cost.
 */
#include "hopper.cuh"
#define RAMP_READ_THREADS 512
#define RAMP_READ_VEC 8
#define RAMP_READ_PIECE (RAMP_READ_THREADS * RAMP_READ_VEC * 16)

typedef struct {
    unsigned long long ptr, bytes;
} ramp_read_piece;

extern "C" __global__ void __launch_bounds__(RAMP_READ_THREADS)
    ramp_read_floor(const ramp_read_piece *pieces, int n, unsigned *sink) {
    /* launched after the selection with PDL: wait for it, as the layer does */
    asm volatile("griddepcontrol.wait;" ::: "memory");
    unsigned acc = 0;
    for (int i = blockIdx.x; i < n; i += gridDim.x) {
        const uint4 *p = (const uint4 *)pieces[i].ptr;
        const int nv = (int)(pieces[i].bytes / 16);
        uint4 v[RAMP_READ_VEC];
#pragma unroll
        for (int j = 0; j < RAMP_READ_VEC; j++) {
            const int at = threadIdx.x + j * RAMP_READ_THREADS;
            v[j] = at < nv ? __ldcs(p + at) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int j = 0; j < RAMP_READ_VEC; j++) acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
    }
    if (acc == 0x9e3779b9u) *sink = acc;
}

/* The bulk kernel's ring: RAMP_READ_STAGES slots of RAMP_READ_SLOT bytes
 * (pieces at most that long); other values for the request-size sweep of
 * bench_layer (session 29). */
#ifndef RAMP_READ_STAGES
#define RAMP_READ_STAGES 3
#endif
#ifndef RAMP_READ_SLOT
#define RAMP_READ_SLOT RAMP_READ_PIECE
#endif

extern "C" __global__ void __launch_bounds__(32)
    ramp_read_bulk(const ramp_read_piece *pieces, int n, unsigned *sink) {
    extern __shared__ __align__(128) unsigned char ring[];
    __shared__ __align__(8) unsigned long long bars[RAMP_READ_STAGES];
    asm volatile("griddepcontrol.wait;" ::: "memory");
    if (threadIdx.x != 0) return;
    for (int s = 0; s < RAMP_READ_STAGES; s++) hop_mbar_init(hop_smem(&bars[s]), 1);
    hop_mbar_init_fence();
    int k = 0;
    for (int i = blockIdx.x; i < n; i += gridDim.x, k++) {
        const int s = k % RAMP_READ_STAGES;
        const unsigned bar = hop_smem(&bars[s]);
        /* the slot's previous piece has landed: reuse it */
        if (k >= RAMP_READ_STAGES) hop_mbar_wait(bar, (unsigned)((k / RAMP_READ_STAGES - 1) & 1));
        const unsigned bytes = (unsigned)pieces[i].bytes;
        hop_mbar_arrive_expect_tx(bar, bytes);
        hop_bulk_load(hop_smem(ring + (size_t)s * RAMP_READ_SLOT), pieces[i].ptr, bytes, bar);
    }
    /* the last pieces land before the block exits */
    for (int j = k - RAMP_READ_STAGES < 0 ? 0 : k - RAMP_READ_STAGES; j < k; j++)
        hop_mbar_wait(hop_smem(&bars[j % RAMP_READ_STAGES]), (unsigned)((j / RAMP_READ_STAGES) & 1));
    (void)sink; /* the copies are volatile asm: nothing to keep alive */
}
