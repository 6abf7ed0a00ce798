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
 */
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
