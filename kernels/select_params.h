/*
 * select_params.h - the selection kernel's parameter block, menu layout and
 * shared-memory layout, shared by the host (src/select_gpu.c, C11) and the
 * device (kernels/select.cuh, compiled by NVRTC).
 *
 * The kernel takes ramp_sel_params by value as its only parameter, so host
 * and device must agree on its layout byte for byte: fixed-width fields
 * only, device addresses as 64-bit integers, and a size both sides assert.
 * The menu lives in a small device buffer (ramp_sel_entry[nentries]); each
 * warp that needs an entry loads it at the start, next to the ids.
 * The host computes the shared-memory layout (ramp_sel_layout_of) and passes
 * the offsets and the other per-selector constants in the parameters: every
 * warp runs the kernel's prologue, so each instruction saved there is saved
 * 32 times. The layout depends on the experts and the menu only, not on the
 * number of pairs.
 */
#ifndef RAMP_SELECT_PARAMS_H
#define RAMP_SELECT_PARAMS_H

#define RAMP_SEL_MAX_ENTRIES 16  /* = RAMP_SELECT_MAX_ENTRIES in ramp.h */
#ifndef RAMP_SEL_WARPS
#define RAMP_SEL_WARPS 32        /* warps per block (1024 threads) */
#endif
#ifndef RAMP_SEL_CTAS
#define RAMP_SEL_CTAS 1          /* blocks in the launch: one cluster */
#endif
#define RAMP_SEL_THREADS (RAMP_SEL_WARPS * 32)
#define RAMP_SEL_MAX_CTAS 16     /* Hopper's non-portable cluster limit */
#define RAMP_SEL_PORTABLE_CTAS 8 /* the portable one: the default shapes' cap */
#define RAMP_SEL_SKIP 0xFFFFu    /* code of a pair that is not ours */
#define RAMP_SEL_ROWS 4          /* rows of 32 pairs a warp loads at once */
#define RAMP_SEL_MAX_NBITS 10    /* bits of a local expert index (<= 1024) */

/* RAMP_SELECT_PROFILE builds: one record of RAMP_SEL_PROF_WORDS uint64 per
 * launch, after a uint64 launch counter padded to one record:
 *   [0] SM id, [1] %globaltimer at entry, [2] at exit, [3] clock64 at entry,
 *   [4] clock64 at exit, [8 + 8 * pass + k] clock64 at mark k of pass
 *   0 (cold) and 1 (warm: the same work again, instructions and data cached). */
#define RAMP_SEL_PROF_WORDS 32
#define RAMP_SEL_PROF_RECORDS 64
#define RAMP_SEL_PROF_MARKS 8

#ifdef __CUDACC_RTC__
typedef int ramp_sel_i32;
typedef unsigned long long ramp_sel_u64;
#else
#include <stdint.h>
typedef int32_t ramp_sel_i32;
typedef uint64_t ramp_sel_u64;
#endif

/* One menu entry in device memory (32 bytes, 16-byte aligned buffer).
 * theta_pairs, Equation 3 + pairs' fifth coefficient (0 for Equation 3),
 * sits in what was a pad word, so the size and the two 16-byte loads stay.
 * slots_waves packs S_c (low 16 bits, 1..65535), max_waves (bits 16..30,
 * 0..32767; ramp_select_entry.max_waves) and pair_tiles (bit 31) for the
 * same reason. */
typedef struct {
    ramp_sel_i32 rows, slices, slots_waves;
    float theta_pairs;
    float theta[4];
} ramp_sel_entry;

#define RAMP_SEL_SLOTS_OF(sw) ((sw) & 0xFFFF)
#define RAMP_SEL_WAVES_OF(sw) (((sw) >> 16) & 0x7FFF)
#define RAMP_SEL_PAIRS_OF(sw) ((int)((unsigned)(sw) >> 31))
#define RAMP_SEL_PAST_WAVES_INT 1000000 /* = RAMP_PAST_WAVES_US (ramp.h), us */
#define RAMP_SEL_PAST_WAVES_US ((float)RAMP_SEL_PAST_WAVES_INT)

typedef struct {
    /* inputs */
    ramp_sel_u64 ids;          /* const int32 [tokens * topk] */
    ramp_sel_u64 tokens_dev;   /* 0, or const int32 *: token count on device */
    ramp_sel_u64 local_of;     /* const int16 [experts]: local index or -1
                                  (read only when first_expert < 0) */
    ramp_sel_u64 menu;         /* const ramp_sel_entry [nentries] */
    ramp_sel_u64 profile;      /* RAMP_SELECT_PROFILE builds: uint64 records */
    /* outputs */
    ramp_sel_u64 meta;         /* int32 [8] */
    ramp_sel_u64 pred;         /* float [nentries] */
    ramp_sel_u64 counts;       /* int32 [local_experts] */
    ramp_sel_u64 tile_start;   /* int32 [local_experts + 1] */
    ramp_sel_u64 sorted_ids;   /* int32 [max_slots] */
    ramp_sel_u64 tile_expert;  /* int32 [max_tiles] */
    ramp_sel_u64 cond;         /* RAMP_SELECT_SWITCH builds: 0, or the graph
                                  switch handle the choice is written to */
    ramp_sel_i32 tokens;       /* used when tokens_dev == 0 */
    ramp_sel_i32 max_tokens;
    ramp_sel_i32 topk;
    ramp_sel_i32 experts;
    ramp_sel_i32 local_experts;
    ramp_sel_i32 nentries;
    ramp_sel_i32 first_expert; /* >= 0: the local experts are first_expert ..
                                  + local_experts - 1 (no map needed);
                                  -1: look ids up in local_of */
    ramp_sel_i32 nbits;        /* bits of a local expert index: ceil(log2 EL) */
    ramp_sel_i32 scan_entries; /* menu entries with a tile scan (1: group-only) */
    ramp_sel_i32 entry_mask;   /* entries the choice may take (bit i: entry i;
                                  never 0: the host passes every entry's) */
    ramp_sel_i32 pad0;
    /* shared-memory offsets (bytes), from ramp_sel_layout_of */
    ramp_sel_i32 off_hist, off_tot, off_cnt, off_cpre, off_scan, off_pred,
        off_misc, off_map;
} ramp_sel_params;

#define RAMP_SEL_PARAMS_BYTES (12 * 8 + 20 * 4)

/* Byte offsets of the shared-memory regions, all 16-byte aligned:
 *   hist   int32 [warps][local_experts] each warp's count per expert, then
 *                                       its exclusive prefix over the
 *                                       block's warps, then its slot cursor
 *   tot    int32 [ctas][local_experts]  every block's count per expert (a
 *                                       block counts into its row, then
 *                                       copies the row into the other blocks)
 *   cnt    int32 [local_experts]        pairs per expert (whole launch)
 *   cpre   int32 [local_experts]        pairs of each expert in earlier blocks
 *   scan   int32 [entries][local_experts + 1]  first tile of each expert
 *                                       under each entry's rows (the last:
 *                                       the entry's tile count)
 *   pred   float [MAX_ENTRIES]          Equation 3 per entry, then
 *          int32 [MAX_ENTRIES]          each entry's rows
 *   misc   int32 [32]                   0 bad ids (block), 1 bad ids (all),
 *                                       2 local pairs, 3 chosen entry, 4 its
 *                                       rows, 8 + c bad ids of block c
 *   map    int16 [experts]              global id -> local index or -1
 *                                       (only with_map) */
typedef struct {
    int hist, tot, cnt, cpre, scan, pred, misc, map, total;
} ramp_sel_layout;

static inline int ramp_sel_align16(int x) { return (x + 15) & ~15; }

/* int arithmetic: the largest layout (32 warps x 1024 local experts, 16
 * blocks, 16 entries, 65535 experts) is under 500 KB. */
static inline ramp_sel_layout ramp_sel_layout_of(int warps, int ctas, int experts,
                                                 int local_experts, int entries,
                                                 int with_map) {
    ramp_sel_layout l;
    int off = 0;
    l.hist = off;   off = ramp_sel_align16(off + 4 * warps * local_experts);
    l.tot = off;    off = ramp_sel_align16(off + 4 * ctas * local_experts);
    l.cnt = off;    off = ramp_sel_align16(off + 4 * local_experts);
    l.cpre = off;   off = ramp_sel_align16(off + 4 * local_experts);
    l.scan = off;   off = ramp_sel_align16(off + 4 * entries * (local_experts + 1));
    l.pred = off;   off = ramp_sel_align16(off + 8 * RAMP_SEL_MAX_ENTRIES);
    l.misc = off;   off = ramp_sel_align16(off + 4 * (8 + RAMP_SEL_MAX_CTAS));
    l.map = off;
    if (with_map) off = ramp_sel_align16(off + 2 * experts);
    l.total = off;
    return l;
}

#endif /* RAMP_SELECT_PARAMS_H */
