/*
 * hopper.cuh - sm_90a building blocks of the Hopper MoE kernel (issue #5;
 * plan in hopper.md): wgmma on shared-memory operands (FP8 e4m3 m64nNk32
 * and BF16 m64nNk16) with their matrix descriptors, wgmma fence / commit /
 * wait, mbarriers, TMA tile loads, cp.async into the same layout, proxy
 * fences and setmaxnreg. Inline PTX only (NVRTC, -default-device, no
 * headers); every name starts with hop_ / HOP_. Tested by wgmma_test.cuh
 * (tests/test_hopper_compile.c, tests/test_gpu_wgmma.c).
 *
 * Swap-AB (DESIGN.md, paper A.8): the expert's weights are the A operand,
 * 64 rows per instruction; a tile's tokens are the B operand, N = 8..64
 * rows (rows per tile rounded up to 8). Both are K-major.
 *
 * The one shared-memory tile format, for A and B alike ("SW128"): R rows of
 * 128 bytes of K each (128 e4m3 or 64 bf16 elements); row r at byte 128*r;
 * inside a row the eight 16-byte chunks are permuted, chunk c stored at
 * position c ^ (r & 7). Eight rows (1024 B) form one swizzle atom and a
 * tile starts at a multiple of 1024 B. This is what TMA writes for a box of
 * 128 bytes x R rows with CU_TENSOR_MAP_SWIZZLE_128B, what hop_swz128()
 * gives loads done by hand (cp.async), and what the descriptor of
 * hop_desc_sw128() tells wgmma to read. The swizzle puts the 8 rows that a
 * tensor-core read touches at once on 8 different bank groups.
 */
#ifndef RAMP_HOPPER_CUH
#define RAMP_HOPPER_CUH

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "hopper.cuh needs the sm_90a target (wgmma, setmaxnreg)"
#endif

/* A CUtensorMap as the device sees it: 128 opaque bytes, passed by value as
 * a `const __grid_constant__` kernel parameter (so its address is a
 * parameter-space address TMA can read) and aligned to 64 B as TMA needs. */
typedef struct __align__(64) {
    unsigned long long opaque[16];
} hop_tensormap;

#define HOP_CAT_(a, b) a##b
#define HOP_CAT(a, b) HOP_CAT_(a, b)

static __device__ __forceinline__ unsigned hop_smem(const void *p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

/* Index of the calling thread's warpgroup, the same value in every lane of
 * a warp as far as the compiler can tell (a shuffle from lane 0), so that
 * role branches stay warp-uniform (setmaxnreg and wgmma need that). */
static __device__ __forceinline__ int hop_warpgroup() {
    return __shfl_sync(0xffffffffu, (int)(threadIdx.x >> 7), 0);
}

/* ---------------------------------------------------------- SW128 tiles */

#define HOP_ROW_BYTES 128   /* bytes of K per tile row */
#define HOP_ATOM_BYTES 1024 /* 8 rows: one swizzle atom, the tile alignment */

/* Byte offset of 16-byte chunk c (0..7) of row r in an SW128 tile. */
static __device__ __forceinline__ unsigned hop_swz128(int r, int c) {
    return (unsigned)(r * HOP_ROW_BYTES + ((c ^ (r & 7)) << 4));
}

/* wgmma matrix descriptor of an SW128 tile (PTX ISA, "Matrix Descriptor
 * Format"; addr = shared address of the tile plus 32 * k for the k-th
 * 32-byte K step, see below):
 *   bits  0-13  start address >> 4 (18-bit shared address space)
 *   bits 16-29  leading-dimension byte offset >> 4: not used for a K-major
 *               swizzled tile whose instruction K (32 bytes) lies inside
 *               one 128-byte row; set to 1 (any value is ignored)
 *   bits 32-45  stride-dimension byte offset >> 4: 1024 B from one group
 *               of 8 rows (M or N) to the next
 *   bits 49-51  base offset: 0, since tiles start on a 1024-byte atom
 *   bits 62-63  layout: 1 = 128-byte swizzle
 * K steps inside the 128-byte row advance the start address by 32 bytes
 * (k32 e4m3 or k16 bf16): the hardware applies the XOR of the swizzle to
 * the address it forms, with the row taken from address bits 7-9, so an
 * offset start inside an atom-aligned tile reads the right chunks (the way
 * DeepGEMM and CUTLASS step K). */
static __device__ __forceinline__ unsigned long long hop_desc_sw128(unsigned addr) {
    return (unsigned long long)((addr & 0x3FFFFu) >> 4) | (1ull << 16) |
           ((unsigned long long)(HOP_ATOM_BYTES >> 4) << 32) | (1ull << 62);
}

/* ---------------------------------------------------------------- wgmma */

/* D[64 x N] (+)= A[64 x K] . B[N x K]^T for one K step, both operands SW128
 * tiles in shared memory (descriptors da, db), D in registers: d[N/2]
 * floats per thread of the warpgroup. scale_d = 0 overwrites D, 1 adds.
 *
 * Accumulator layout (PTX ISA, wgmma "Register Fragments", m64nN, .f32):
 * warp w of the warpgroup (w = (threadIdx.x / 32) % 4) holds rows
 * 16w .. 16w+15; with g = lane / 4 and t = lane % 4,
 *   d[i] is D[16w + g + 8 * ((i >> 1) & 1)][8 * (i >> 2) + 2t + (i & 1)]
 * i.e. per 8-column block j: d[4j+0,1] = row g, columns 8j+2t, +1;
 * d[4j+2,3] = row g+8, the same columns. In the swap-AB use the row is the
 * weight's output row and the column the tile's token.
 *
 * One function per (type, N), generated below: the asm operand lists
 * differ by N, and the accumulators must be separate registers. */
#define HOP_R4(a, b, c, d) "%" #a ", %" #b ", %" #c ", %" #d
#define HOP_D8 HOP_R4(0, 1, 2, 3)
#define HOP_D16 HOP_D8 ", " HOP_R4(4, 5, 6, 7)
#define HOP_D24 HOP_D16 ", " HOP_R4(8, 9, 10, 11)
#define HOP_D32 HOP_D24 ", " HOP_R4(12, 13, 14, 15)
#define HOP_D48 HOP_D32 ", " HOP_R4(16, 17, 18, 19) ", " HOP_R4(20, 21, 22, 23)
#define HOP_D64 HOP_D48 ", " HOP_R4(24, 25, 26, 27) ", " HOP_R4(28, 29, 30, 31)
/* operand numbers after the N/2 accumulators: descriptor A, B; scale-d */
#define HOP_AB8 "%4, %5"
#define HOP_SD8 "%6"
#define HOP_AB16 "%8, %9"
#define HOP_SD16 "%10"
#define HOP_AB24 "%12, %13"
#define HOP_SD24 "%14"
#define HOP_AB32 "%16, %17"
#define HOP_SD32 "%18"
#define HOP_AB48 "%24, %25"
#define HOP_SD48 "%26"
#define HOP_AB64 "%32, %33"
#define HOP_SD64 "%34"
#define HOP_F4(d, i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define HOP_C8(d) HOP_F4(d, 0)
#define HOP_C16(d) HOP_C8(d), HOP_F4(d, 4)
#define HOP_C24(d) HOP_C16(d), HOP_F4(d, 8)
#define HOP_C32(d) HOP_C24(d), HOP_F4(d, 12)
#define HOP_C48(d) HOP_C32(d), HOP_F4(d, 16), HOP_F4(d, 20)
#define HOP_C64(d) HOP_C48(d), HOP_F4(d, 24), HOP_F4(d, 28)

/* Past the configuration space (bench_wgmma's N = 128 and 256; the
 * 128-token tiles of kernels/moe_v2.md, session 5): 64 and 128
 * accumulators, instantiated with HOP_DEFINE_WGMMA where used. */
#define HOP_D128                                                                              \
    HOP_D64 ", " HOP_R4(32, 33, 34, 35) ", " HOP_R4(36, 37, 38, 39) ", " HOP_R4(40, 41, 42, 43) \
        ", " HOP_R4(44, 45, 46, 47) ", " HOP_R4(48, 49, 50, 51) ", " HOP_R4(52, 53, 54, 55)      \
        ", " HOP_R4(56, 57, 58, 59) ", " HOP_R4(60, 61, 62, 63)
#define HOP_D256                                                                              \
    HOP_D128 ", " HOP_R4(64, 65, 66, 67) ", " HOP_R4(68, 69, 70, 71) ", " HOP_R4(72, 73, 74, 75) \
        ", " HOP_R4(76, 77, 78, 79) ", " HOP_R4(80, 81, 82, 83) ", " HOP_R4(84, 85, 86, 87)      \
        ", " HOP_R4(88, 89, 90, 91) ", " HOP_R4(92, 93, 94, 95) ", " HOP_R4(96, 97, 98, 99)      \
        ", " HOP_R4(100, 101, 102, 103) ", " HOP_R4(104, 105, 106, 107) ", " HOP_R4(            \
            108, 109, 110, 111) ", " HOP_R4(112, 113, 114, 115) ", " HOP_R4(116, 117, 118, 119) \
            ", " HOP_R4(120, 121, 122, 123) ", " HOP_R4(124, 125, 126, 127)
#define HOP_C128(d)                                                                           \
    HOP_C64(d), HOP_F4(d, 32), HOP_F4(d, 36), HOP_F4(d, 40), HOP_F4(d, 44), HOP_F4(d, 48),   \
        HOP_F4(d, 52), HOP_F4(d, 56), HOP_F4(d, 60)
#define HOP_C256(d)                                                                           \
    HOP_C128(d), HOP_F4(d, 64), HOP_F4(d, 68), HOP_F4(d, 72), HOP_F4(d, 76), HOP_F4(d, 80),   \
        HOP_F4(d, 84), HOP_F4(d, 88), HOP_F4(d, 92), HOP_F4(d, 96), HOP_F4(d, 100),          \
        HOP_F4(d, 104), HOP_F4(d, 108), HOP_F4(d, 112), HOP_F4(d, 116), HOP_F4(d, 120),      \
        HOP_F4(d, 124)
#define HOP_AB128 "%64, %65"
#define HOP_SD128 "%66"
#define HOP_AB256 "%128, %129"
#define HOP_SD256 "%130"

/* FP8 takes only K-major operands (no transpose immediates); the trailing
 * "1, 1" are the A and B negation scales (+1). BF16 adds the transpose
 * immediates, "0, 0" = both K-major. */
#define HOP_DEFINE_WGMMA(N)                                                      \
    static __device__ __forceinline__ void hop_wgmma_e4m3_n##N(                  \
        float *d, unsigned long long da, unsigned long long db, int scale_d) {   \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " HOP_SD##N ", 0;\n"      \
                     "wgmma.mma_async.sync.aligned.m64n" #N "k32.f32.e4m3.e4m3 " \
                     "{" HOP_D##N "}, " HOP_AB##N ", p, 1, 1;\n}\n"              \
                     : HOP_C##N(d)                                               \
                     : "l"(da), "l"(db), "r"(scale_d)                            \
                     : "memory");                                                \
    }                                                                            \
    static __device__ __forceinline__ void hop_wgmma_bf16_n##N(                  \
        float *d, unsigned long long da, unsigned long long db, int scale_d) {   \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " HOP_SD##N ", 0;\n"      \
                     "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.bf16.bf16 " \
                     "{" HOP_D##N "}, " HOP_AB##N ", p, 1, 1, 0, 0;\n}\n"        \
                     : HOP_C##N(d)                                               \
                     : "l"(da), "l"(db), "r"(scale_d)                            \
                     : "memory");                                                \
    }

/* The N of the configuration space: rows per tile {2..64} rounded up to 8
 * (2, 4, 6, 8 -> 8; 12, 16 -> 16; 24; 32; 48; 64). */
HOP_DEFINE_WGMMA(8)
HOP_DEFINE_WGMMA(16)
HOP_DEFINE_WGMMA(24)
HOP_DEFINE_WGMMA(32)
HOP_DEFINE_WGMMA(48)
HOP_DEFINE_WGMMA(64)
/* m64n128: kernel v2's wide tiles (moe_v2_wide.cuh), 128 weight rows per wgmma */
HOP_DEFINE_WGMMA(128)

/* hop_wgmma_e4m3_n<N> / hop_wgmma_bf16_n<N> for an N given by a macro. */
#define HOP_WGMMA_E4M3(N) HOP_CAT(hop_wgmma_e4m3_n, N)
#define HOP_WGMMA_BF16(N) HOP_CAT(hop_wgmma_bf16_n, N)

/* Bytes of K one instruction consumes (32 e4m3 or 16 bf16): four steps
 * cover a 128-byte tile row. */
#define HOP_WGMMA_K_BYTES 32

/* wgmma.fence: orders earlier register accesses (the accumulators) before
 * the wgmmas that follow; needed before the first wgmma and after any
 * ordinary access to the accumulators (PTX ISA 9.7.15.7.1). */
static __device__ __forceinline__ void hop_wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
/* Closes the wgmmas issued since the last commit into one group. */
static __device__ __forceinline__ void hop_wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
/* Waits until at most n committed groups are pending (n: constant 0..7).
 * Only then may the accumulators be read, or the operands' shared memory
 * be overwritten. */
#define HOP_WGMMA_WAIT(n) asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(n) : "memory")

/* A compiler-only fence on n accumulator registers (n constant): the asm
 * above tells the compiler the accumulators are written when the wgmma is
 * issued, not when it completes, so reads of them must not be moved above
 * the wait, nor other writes below the issue. Use after HOP_WGMMA_WAIT and
 * before hop_wgmma_fence (as CUTLASS's warpgroup_fence_operand does). */
#define HOP_ACC_FENCE(d, n)                                    \
    do {                                                       \
        _Pragma("unroll") for (int hop_i_ = 0; hop_i_ < (n); hop_i_++) \
            asm volatile("" : "+f"((d)[hop_i_])::"memory");    \
    } while (0)

/* ------------------------------------------------------------- mbarrier */

/* A 64-bit shared-memory barrier with a phase: it completes a phase when
 * `count` arrivals have been made and every expected transaction byte has
 * landed (TMA's complete_tx), then flips its phase parity. Waiters pass the
 * parity of the phase they wait for: for the i-th use of a ring slot
 * (i = 0, 1, ...) that is i & 1. */
static __device__ __forceinline__ void hop_mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
/* After the inits, before the block barrier that publishes them: makes the
 * initialised barriers visible to the other threads and to the async proxy
 * (the TMA unit completes transactions on them). */
static __device__ __forceinline__ void hop_mbar_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
static __device__ __forceinline__ void hop_mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
/* One arrival that also announces `bytes` transaction bytes (the TMA loads
 * of this phase): the phase cannot complete before they land. */
static __device__ __forceinline__ void hop_mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}
/* HOP_MBAR_SUSPEND_NS > 0 (an experiment, through RAMP_JIT_DEFINES): try_wait
 * with that suspend-time hint, so that a waiting warp sleeps in the barrier
 * rather than return to the retry loop, which ptxas places at the end of
 * the function (far from the loop in a polymorphic kernel). Measured at 1 ms
 * in s27-run2: no effect on the polymorphic overhead or the entries alone.
 * 0 (default): no hint, the programs as before. */
#ifndef HOP_MBAR_SUSPEND_NS
#define HOP_MBAR_SUSPEND_NS 0
#endif
#if HOP_MBAR_SUSPEND_NS > 0
#define HOP_MBAR_TRY_OPERANDS " p, [%1], %2, %3;\n"
#else
#define HOP_MBAR_TRY_OPERANDS " p, [%1], %2;\n"
#endif
/* Spins until the phase with parity `parity` has completed (try_wait may
 * suspend the thread for a while before it says no; the loop retries). Its
 * acquire makes what the arriving threads wrote before arriving, and the
 * TMA bytes, visible to the caller. */
#define HOP_MBAR_WAIT_LOOP(try_wait, bar, parity)                                 \
    do {                                                                          \
        unsigned done_;                                                           \
        do {                                                                      \
            asm volatile("{\n.reg .pred p;\n" try_wait HOP_MBAR_TRY_OPERANDS     \
                         "selp.u32 %0, 1, 0, p;\n}\n"                             \
                         : "=r"(done_)                                            \
                         : "r"(bar), "r"(parity), "n"(HOP_MBAR_SUSPEND_NS)        \
                         : "memory");                                             \
        } while (!done_);                                                         \
    } while (0)
static __device__ __forceinline__ void hop_mbar_wait(unsigned bar, unsigned parity) {
    HOP_MBAR_WAIT_LOOP("mbarrier.try_wait.parity.shared::cta.b64", bar, parity);
}

/* -------------------------------------------------- TMA and cp.async */

/* TMA: copies the box at element coordinates (x = inner/K, y = row) of the
 * 2-D tensor map `tmap` into shared memory at dst (SW128: 1024-aligned),
 * then completes box-bytes transactions on `bar`. Issued by one thread;
 * the shared::cluster destination is this CTA's own shared memory when
 * there is no cluster. */
static __device__ __forceinline__ void hop_tma_load_2d(unsigned dst, const hop_tensormap *tmap,
                                                       unsigned bar, int x, int y) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
        "[%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
        "l"((unsigned long long)tmap), "r"(x), "r"(y), "r"(bar)
        : "memory");
}
/* `bytes` (a multiple of 16) from global address src (16-byte aligned) to
 * shared dst by the TMA unit as one contiguous bulk copy, completing its
 * bytes on the mbarrier at bar. */
static __device__ __forceinline__ void hop_bulk_load(unsigned dst, unsigned long long src,
                                                     unsigned bytes, unsigned bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
                 "[%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
/* hop_bulk_load's bytes written into every CTA of the cluster whose bit is
 * set in `mask`, at the same shared::cta offset in each, each completing on
 * its own mbarrier at offset bar (one L2 read feeds them all). */
static __device__ __forceinline__ void hop_bulk_load_mc(unsigned dst, unsigned long long src,
                                                        unsigned bytes, unsigned bar,
                                                        unsigned short mask) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1], %2, [%3], %4;\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar), "h"(mask)
                 : "memory");
}
/* The same box written into every CTA of the cluster whose bit is set in
 * `mask`, at the same shared::cta offset dst in each, each completing the
 * box's bytes on its own mbarrier at offset bar: one L2 read feeds them all
 * (TMA multicast). */
static __device__ __forceinline__ void hop_tma_load_2d_mc(unsigned dst, const hop_tensormap *tmap,
                                                          unsigned bar, int x, int y,
                                                          unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
        "l"((unsigned long long)tmap), "r"(x), "r"(y), "r"(bar), "h"(mask)
        : "memory");
}
/* Prefetches the box at (x, y) of `tmap` into L2 (no shared memory, no
 * barrier, nothing to wait for): more bytes in flight than the ring's
 * shared memory holds. */
static __device__ __forceinline__ void hop_tma_prefetch_l2_2d(const hop_tensormap *tmap, int x,
                                                              int y) {
    asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];\n" ::"l"(
                     (unsigned long long)tmap),
                 "r"(x), "r"(y)
                 : "memory");
}
/* The 3-D form: a box of one plane (coordinates c0 innermost .. c2). */
static __device__ __forceinline__ void hop_tma_load_3d(unsigned dst, const hop_tensormap *tmap,
                                                       unsigned bar, int c0, int c1, int c2) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes "
        "[%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
        "l"((unsigned long long)tmap), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
}
/* The 4-D forms, for weights stored pre-tiled (moe_v2.md, "Pre-tiled
 * weights"): coordinates c0 (innermost) .. c3 of the box's first element. */
static __device__ __forceinline__ void hop_tma_load_4d(unsigned dst, const hop_tensormap *tmap,
                                                       unsigned bar, int c0, int c1, int c2,
                                                       int c3) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes "
        "[%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
        "l"((unsigned long long)tmap), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
        : "memory");
}
static __device__ __forceinline__ void hop_tma_prefetch_l2_4d(const hop_tensormap *tmap, int c0,
                                                              int c1, int c2, int c3) {
    asm volatile("cp.async.bulk.prefetch.tensor.4d.L2.global.tile [%0, {%1, %2, %3, %4}];\n" ::"l"(
                     (unsigned long long)tmap),
                 "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}
/* Fetches the tensor map into the TMA unit's cache ahead of the first load. */
static __device__ __forceinline__ void hop_tma_prefetch_map(const hop_tensormap *tmap) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"((unsigned long long)tmap) : "memory");
}

/* 16-byte cp.async (L2 only, as operands are read once per block); bytes =
 * 0 writes zeros and reads nothing (padding token rows). */
static __device__ __forceinline__ void hop_cp16(unsigned dst, const void *src, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes)
                 : "memory");
}
static __device__ __forceinline__ void hop_cp_commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
#define HOP_CP_WAIT(n) asm volatile("cp.async.wait_group %0;\n" ::"n"(n) : "memory")
/* An arrival on `bar` made when all of this thread's earlier cp.asyncs have
 * landed (.noinc: it counts as one of the barrier's `count` arrivals). */
static __device__ __forceinline__ void hop_cp_arrive_noinc(unsigned bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

/* -------------------------------------------------------------- fences */

/* Shared memory written through the generic proxy (st.shared, cp.async)
 * and then read by wgmma or TMA (the async proxy) needs this fence between
 * the write and the read (PTX ISA 9.7.15.4); results of wgmma and TMA
 * become visible to ordinary loads by their completion alone. */
static __device__ __forceinline__ void hop_fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* Named barrier over `n` threads (a multiple of 32), id 1..15 (0 is
 * __syncthreads): synchronises the consumer warpgroups without the
 * producer. */
#define HOP_BAR_SYNC(id, n) asm volatile("bar.sync %0, %1;\n" ::"n"(id), "n"(n) : "memory")

/* ------------------------------------------------------------ clusters */

/* This CTA's rank in its cluster (0 without a cluster launch). */
static __device__ __forceinline__ unsigned hop_cluster_rank() {
    unsigned r; /* not volatile: a constant of the CTA, computed once where used often */
    asm("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
/* The shared::cluster address of CTA `rank`'s shared memory at the
 * shared::cta offset `addr` (distributed shared memory). */
static __device__ __forceinline__ unsigned hop_mapa(unsigned addr, unsigned rank) {
    unsigned d;
    asm("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(d) : "r"(addr), "r"(rank)); /* pure */
    return d;
}
/* Every thread of every CTA of the cluster: a barrier whose release /
 * acquire order shared-memory accesses across the cluster. Also a barrier
 * of the CTA (all its threads arrive). */
static __device__ __forceinline__ void hop_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
/* An asynchronous store of four floats into another CTA's shared memory
 * (addr and bar: shared::cluster addresses from hop_mapa) that completes 16
 * transaction bytes on that CTA's mbarrier bar when it lands: the receiver
 * announces the bytes it expects (hop_mbar_arrive_expect_tx) and its wait
 * on bar then sees the data, as with a TMA load; no fence on this side. */
static __device__ __forceinline__ void hop_st_async_v4(unsigned addr, float a, float b, float c,
                                                       float d, unsigned bar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];\n"
                 ::"r"(addr), "f"(a), "f"(b), "f"(c), "f"(d), "r"(bar)
                 : "memory");
}
/* `bytes` (a multiple of 16) of this CTA's shared memory at src (16-byte
 * aligned, written through the async proxy or fenced for it) copied by the
 * TMA unit into another CTA's shared memory at dst, completing its bytes on
 * that CTA's mbarrier bar (dst, bar: shared::cluster addresses from
 * hop_mapa). The receiver announces the bytes; its wait then sees them. */
static __device__ __forceinline__ void hop_bulk_s2s(unsigned dst, unsigned src, unsigned bytes,
                                                    unsigned bar) {
    asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes "
                 "[%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "r"(src), "r"(bytes), "r"(bar)
                 : "memory");
}
/* An arrival on another CTA's mbarrier (a shared::cluster address from
 * hop_mapa), released at cluster scope: this thread's earlier stores to that
 * CTA are visible to whoever acquires the phase (hop_mbar_wait_cluster). */
static __device__ __forceinline__ void hop_mbar_arrive_remote(unsigned bar) {
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(bar)
                 : "memory");
}
/* An arrival on another CTA's mbarrier that orders nothing but itself
 * (relaxed): for a "done reading this slot" signal whose reads were
 * wgmma's, already complete (wgmma.wait_group), so there is no write of
 * this thread's for the other side to see. The release form above costs a
 * MEMBAR.ALL.GPU before the arrival (it waits for every outstanding global
 * write of the thread: the output's reductions), the cluster-scope acquire
 * a CCTL.IVALL after the wait; s16-run1 measured multicast 20-26% slower
 * with them in every stage. */
static __device__ __forceinline__ void hop_mbar_arrive_remote_relaxed(unsigned bar) {
    asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(bar)
                 : "memory");
}
/* hop_mbar_wait with cluster-scope acquire: for phases completed by other
 * CTAs' arrivals. */
static __device__ __forceinline__ void hop_mbar_wait_cluster(unsigned bar, unsigned parity) {
    HOP_MBAR_WAIT_LOOP("mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64", bar, parity);
}

/* ---------------------------------------------------------- setmaxnreg */

/* Moves registers between warpgroups: the producer gives some back (DEC),
 * the consumers take them (INC). n is a constant multiple of 8 in 24..256;
 * every warp of the warpgroup must execute it. It takes effect only when
 * the kernel's register count at entry is fixed (__launch_bounds__(T, 1) or
 * -maxrregcount); ptxas warns (C7508) when it ignores it. The pool is the
 * block's entry allotment: with 3 warpgroups at 168, 40 + 2 x 232 fits. */
#define HOP_SETMAXNREG_INC(n) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(n))
#define HOP_SETMAXNREG_DEC(n) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(n))

#endif /* RAMP_HOPPER_CUH */
