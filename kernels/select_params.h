/*
 * select_params.h - the selection kernel's parameter block, menu layout and
 * shared-memory layout, shared by the host (src/select_gpu.c, C11) and the
 * device (kernels/select.cuh, compiled by NVRTC).
 *
 * The kernel takes ramp_sel_params by value as its only parameter, so host
 * and device must agree on its layout byte for byte: fixed-width fields
 * only, device addresses as 64-bit integers, and a size both sides assert.
 * The menu lives in a small device buffer (ramp_sel_entry[nentries]) that
 * the kernel copies to shared memory first: indexing a by-value parameter
 * array with a run-time index goes through slow generic parameter loads.
 * The shared-memory layout is computed by the same inline function on both
 * sides, so the host can size the launch and refuse one that cannot fit.
 */
#ifndef RAMP_SELECT_PARAMS_H
#define RAMP_SELECT_PARAMS_H

#define RAMP_SEL_MAX_ENTRIES 16  /* = RAMP_SELECT_MAX_ENTRIES in ramp.h */
#ifndef RAMP_SEL_WARPS
#define RAMP_SEL_WARPS 32        /* one block of 1024 threads */
#endif
#define RAMP_SEL_THREADS (RAMP_SEL_WARPS * 32)
#define RAMP_SEL_SKIP 0xFFFFu    /* code of a pair that is not ours */
#define RAMP_SEL_CODE_BITS 10    /* local expert in a list entry (< 1024) */
#define RAMP_SEL_STEP 128        /* pairs a warp reads per step (4 a lane) */

#ifdef __CUDACC_RTC__
typedef int ramp_sel_i32;
typedef unsigned long long ramp_sel_u64;
#else
#include <stdint.h>
typedef int32_t ramp_sel_i32;
typedef uint64_t ramp_sel_u64;
#endif

/* One menu entry in device memory (32 bytes). */
typedef struct {
    ramp_sel_i32 rows, slices, slots, pad;
    float theta[4];
} ramp_sel_entry;

typedef struct {
    /* inputs */
    ramp_sel_u64 ids;          /* const int32 [tokens * topk] */
    ramp_sel_u64 tokens_dev;   /* 0, or const int32 *: token count on device */
    ramp_sel_u64 local_of;     /* const int16 [experts]: local index or -1 */
    ramp_sel_u64 menu;         /* const ramp_sel_entry [nentries] */
    ramp_sel_u64 scratch;      /* uint32 pair list in global memory when it
                                  does not fit in shared memory, else 0 */
    /* outputs */
    ramp_sel_u64 meta;         /* int32 [8] */
    ramp_sel_u64 pred;         /* float [nentries] */
    ramp_sel_u64 counts;       /* int32 [local_experts] */
    ramp_sel_u64 tile_start;   /* int32 [local_experts + 1] */
    ramp_sel_u64 sorted_ids;   /* int32 [max_slots] */
    ramp_sel_u64 tile_expert;  /* int32 [max_tiles] */
    ramp_sel_i32 tokens;       /* used when tokens_dev == 0 */
    ramp_sel_i32 max_tokens;
    ramp_sel_i32 topk;
    ramp_sel_i32 experts;
    ramp_sel_i32 local_experts;
    ramp_sel_i32 nentries;
    ramp_sel_i32 reserved[2];
} ramp_sel_params;

#define RAMP_SEL_PARAMS_BYTES (11 * 8 + 8 * 4)

/* Pairs one warp owns (a multiple of RAMP_SEL_STEP) for `pairs` pairs. */
static inline long long ramp_sel_chunk(long long pairs, int warps) {
    long long per = (long long)warps * RAMP_SEL_STEP;
    return (pairs + per - 1) / per * RAMP_SEL_STEP;
}

/* Byte offsets of the shared-memory regions, all 16-byte aligned:
 *   hist   int32 [warps][local_experts] per-warp counts, then slot bases
 *   tstart int32 [local_experts + 1]    first tile of each expert
 *   cnt    int32 [local_experts]        pairs per expert
 *   pred   float [MAX_ENTRIES]          Equation 3 per entry
 *   menu   ramp_sel_entry [MAX_ENTRIES]
 *   misc   int32 [8]                    bad-id count, chosen, rows, ...
 *   map    int16 [experts]              global id -> local index or -1
 *   list   uint32 [warps * chunk]       each warp's local pairs, in order:
 *                                       pair << 10 | local expert
 *                                       (only when list_in_smem) */
typedef struct {
    long long hist, tstart, cnt, pred, menu, misc, map, list, total;
} ramp_sel_layout;

static inline long long ramp_sel_align16(long long x) {
    return (x + 15) / 16 * 16;
}

static inline ramp_sel_layout ramp_sel_layout_of(int warps, int experts,
                                                 int local_experts,
                                                 long long max_pairs,
                                                 int list_in_smem) {
    ramp_sel_layout l;
    long long off = 0;
    l.hist = off;   off = ramp_sel_align16(off + 4LL * warps * local_experts);
    l.tstart = off; off = ramp_sel_align16(off + 4LL * (local_experts + 1));
    l.cnt = off;    off = ramp_sel_align16(off + 4LL * local_experts);
    l.pred = off;   off = ramp_sel_align16(off + 4LL * RAMP_SEL_MAX_ENTRIES);
    l.menu = off;   off = ramp_sel_align16(off + 32LL * RAMP_SEL_MAX_ENTRIES);
    l.misc = off;   off = ramp_sel_align16(off + 4LL * 8);
    l.map = off;    off = ramp_sel_align16(off + 2LL * experts);
    l.list = off;
    if (list_in_smem)
        off = ramp_sel_align16(off + 4LL * warps * ramp_sel_chunk(max_pairs, warps));
    l.total = off;
    return l;
}

#endif /* RAMP_SELECT_PARAMS_H */
