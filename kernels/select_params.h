/*
 * select_params.h - the selection kernel's parameter block and shared-memory
 * layout, shared by the host (src/select_gpu.c, C11) and the device
 * (kernels/select.cuh, compiled by NVRTC).
 *
 * The kernel takes this struct by value as its only parameter, so host and
 * device must agree on its layout byte for byte: fixed-width fields only,
 * device addresses as 64-bit integers, and a size both sides assert.
 * The shared-memory layout is computed by the same inline function on both
 * sides, so the host can size the launch and refuse one that cannot fit.
 */
#ifndef RAMP_SELECT_PARAMS_H
#define RAMP_SELECT_PARAMS_H

#define RAMP_SEL_MAX_ENTRIES 16  /* = RAMP_SELECT_MAX_ENTRIES in ramp.h */
#define RAMP_SEL_WARPS 32        /* one block of 1024 threads */
#define RAMP_SEL_THREADS (RAMP_SEL_WARPS * 32)
#define RAMP_SEL_SKIP 0xFFFFu    /* staged code of a pair that is not ours */

#ifdef __CUDACC_RTC__
typedef int ramp_sel_i32;
typedef unsigned long long ramp_sel_u64;
#else
#include <stdint.h>
typedef int32_t ramp_sel_i32;
typedef uint64_t ramp_sel_u64;
#endif

typedef struct {
    /* inputs */
    ramp_sel_u64 ids;          /* const int32 [tokens * topk] */
    ramp_sel_u64 tokens_dev;   /* 0, or const int32 *: token count on device */
    ramp_sel_u64 local_of;     /* const int16 [experts]: local index or -1 */
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
    ramp_sel_i32 rows[RAMP_SEL_MAX_ENTRIES];
    ramp_sel_i32 slices[RAMP_SEL_MAX_ENTRIES];
    ramp_sel_i32 slots[RAMP_SEL_MAX_ENTRIES];
    float theta[RAMP_SEL_MAX_ENTRIES][4];
} ramp_sel_params;

/* 9 pointers + 6 ints + 3 * 16 ints + 64 floats. */
#define RAMP_SEL_PARAMS_BYTES (9 * 8 + 6 * 4 + 3 * 16 * 4 + 64 * 4)

/* Byte offsets of the shared-memory regions, all 16-byte aligned:
 *   hist   int32 [WARPS][local_experts]  per-warp counts, then slot bases
 *   tstart int32 [local_experts + 1]     first tile of each expert
 *   cnt    int32 [local_experts]         pairs per expert
 *   pred   float [MAX_ENTRIES]           Equation 3 per entry
 *   misc   int32 [8]                     bad-id count, chosen, rows, ...
 *   map    int16 [experts]               global id -> local index or -1
 *   code   uint16 [max_tokens * topk]    staged local index per pair */
typedef struct {
    long long hist, tstart, cnt, pred, misc, map, code, total;
} ramp_sel_layout;

static inline long long ramp_sel_align16(long long x) {
    return (x + 15) / 16 * 16;
}

static inline ramp_sel_layout ramp_sel_layout_of(int experts, int local_experts,
                                                 long long max_pairs) {
    ramp_sel_layout l;
    long long off = 0;
    l.hist = off;   off = ramp_sel_align16(off + 4LL * RAMP_SEL_WARPS * local_experts);
    l.tstart = off; off = ramp_sel_align16(off + 4LL * (local_experts + 1));
    l.cnt = off;    off = ramp_sel_align16(off + 4LL * local_experts);
    l.pred = off;   off = ramp_sel_align16(off + 4LL * RAMP_SEL_MAX_ENTRIES);
    l.misc = off;   off = ramp_sel_align16(off + 4LL * 8);
    l.map = off;    off = ramp_sel_align16(off + 2LL * experts);
    /* + 8 bytes so that 4-wide staging stores never cross the end. */
    l.code = off;   off = ramp_sel_align16(off + 2LL * max_pairs + 8);
    l.total = off;
    return l;
}

#endif /* RAMP_SELECT_PARAMS_H */
