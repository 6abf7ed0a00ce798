/*
 * select_cpu.h - internals shared by the selection kernel's CPU twin
 * (select_cpu.c) and its GPU driver (select_gpu.c). Public API: ramp.h 9.4.
 */
#ifndef RAMP_SELECT_CPU_H
#define RAMP_SELECT_CPU_H

#include "internal.h"

#include <stdint.h>

/* Most token-expert pairs (max_tokens * k) one selection may see (pair ids
 * and slot counts stay far from int32 overflow). */
#define RAMP_SELECT_MAX_PAIRS (1 << 20)
#define RAMP_SELECT_MAX_LOCAL 1024
#define RAMP_SELECT_MAX_EXPERTS 65535
#define RAMP_SELECT_THETA_MAX 1e20f

/* Menu entry i of a plan as the selection kernel sees it, with the plan's
 * per-entry wave size S_c (ramp_plan_slots) in `slots` and, in an EQ3_PAIRS
 * plan, the pairs coefficient in theta[4] (0 otherwise). Use this, not
 * ramp_select_entry_make(..., plan->sms, plan->blocks_per_sm, ...), which
 * would assume S_c = sms * occupancy. */
ramp_status ramp_select_entry_from_plan(const ramp_plan *p, int i, ramp_select_entry *out);

/* map[E]: local index of every global expert, or -1. */
void ramp_select_build_map(const ramp_select_desc *d, int32_t *map);

/* Equation 3 (+ th4 * pairs) for one entry on counts[local_experts],
 * exactly as the kernel evaluates it (integer features, float32 fmaf chain). */
float ramp_select_predict(const ramp_select_entry *e, int local_experts,
                          const int32_t *counts);

/* The layer's size classes (ramp_layer_desc.one_menu): the entries the
 * choice can take for batches of up to T tokens whose ids name distinct
 * experts, for d's menu (entry_mask ignored), as classes c = 0..n-1 that
 * serve T <= tokens[c] (increasing, the last <= max_tokens) with the
 * entries of masks[c] (each a subset of the next); a class of the whole
 * menu is not listed (the whole menu's kernel serves it). Exact for one local
 * expert, whose choice is a function of its pair count n <= T. For several,
 * the classes are checked at T = 1, 2, 3, 4, 6, 8, 12, ... (a batch between
 * two runs the larger one's), each over every count vector T tokens can give
 * (d->topk bounds the pairs), up to the batch size where that takes more than
 * ~10^6 histograms of the experts over the rows' buckets; larger batches run
 * the whole menu. 0 classes for group_only. */
int ramp_select_size_classes(const ramp_select_desc *d, int tokens[RAMP_SELECT_MAX_ENTRIES],
                             unsigned masks[RAMP_SELECT_MAX_ENTRIES]);
/* The several-expert search itself, without the process-wide cache that
 * ramp_select_size_classes keeps of the last 8 (thread-safe); -1 when out
 * of memory (ramp_select_size_classes then returns 0 and keeps nothing). */
int ramp_select_size_classes_search(const ramp_select_desc *d,
                                    int tokens[RAMP_SELECT_MAX_ENTRIES],
                                    unsigned masks[RAMP_SELECT_MAX_ENTRIES]);
/* The search's limits per batch size; past any, the classes end at the
 * previous batch size checked. The search uses 10^6 histograms, 256 buckets
 * (one recursion level each) and 2 x 10^7 steps along the envelopes; tests
 * pass smaller ones to reach the caps on small menus. */
typedef struct {
    double histograms; /* histograms of the experts over the buckets */
    int buckets;       /* buckets of counts (at most 256: the recursion) */
    double steps;      /* steps along the lower envelopes in P */
} ramp_class_limits;
int ramp_select_size_classes_limited(const ramp_select_desc *d, const ramp_class_limits *lim,
                                     int tokens[RAMP_SELECT_MAX_ENTRIES],
                                     unsigned masks[RAMP_SELECT_MAX_ENTRIES]);
/* Searches the cache has answered since the process started. */
long long ramp_select_size_classes_hits(void);
/* Compiles the selection kernel (entry "ramp_select") as selectors do:
 * group_only 0/1, warps 8, 16 or 32 (block = warps * 32 threads), ctas 1,
 * 2, 4 or 8 (blocks of one cluster), profile 0/1 (RAMP_SELECT_PROFILE).
 * ramp_select_compile is the single-block, non-profiling variant. */
ramp_status ramp_select_compile_variant(int group_only, int warps, int ctas,
                                        int profile, ramp_jit_result **out);
ramp_status ramp_select_compile(int group_only, int warps, ramp_jit_result **out);
/* The same with cond_switch 0/1 (RAMP_SELECT_SWITCH: the choice also set on
 * a graph switch node's handle). */
ramp_status ramp_select_compile_switch(int group_only, int warps, int ctas, int profile,
                                       int cond_switch, ramp_jit_result **out);
/* ... and with pdl_wait 0/1 (RAMP_SELECT_PDL_WAIT: ramp_select_desc.pdl_wait). */
ramp_status ramp_select_compile_opts(int group_only, int warps, int ctas, int profile,
                                     int cond_switch, int pdl_wait, ramp_jit_result **out);

/* A selector whose kernel can set a graph switch node to its choice
 * (ramp_switch, internal.h): ramp_selector_launch_switch with the node's
 * handle (0: none, as ramp_selector_launch). The layer's poly_split 5. */
ramp_status ramp_selector_create_switch(ramp_gpu *gpu, const ramp_select_desc *d,
                                        int cond_switch, ramp_selector **out);
ramp_status ramp_selector_launch_switch(ramp_selector *s, ramp_devptr topk_ids, int tokens,
                                        ramp_devptr tokens_dev, unsigned long long cond,
                                        ramp_stream stream);
/* The same choosing only among the entries of entry_mask (0: the
 * descriptor's entry_mask): a layer's size class. */
ramp_status ramp_selector_launch_masked(ramp_selector *s, ramp_devptr topk_ids, int tokens,
                                        ramp_devptr tokens_dev, unsigned long long cond,
                                        unsigned entry_mask, ramp_stream stream);

/* The selector's largest launch shape (for max_tokens, and a device-side
 * count): blocks (one cluster) and warps per block. */
int ramp_selector_ctas(const ramp_selector *s);
int ramp_selector_warps(const ramp_selector *s);
/* The shape a launch of `tokens` host-counted tokens runs (tokens < 0: a
 * device-side count), and how many shapes the selector holds. */
void ramp_selector_shape(const ramp_selector *s, int tokens, int *warps, int *ctas);
int ramp_selector_shapes(const ramp_selector *s);
/* The launch-shape rule for `pairs` ids (tokens * k), without the
 * environment's overrides: 16 warps a block up to 4,096 pairs, else 32;
 * blocks the fewest of 1, 2, 4, 8 giving each warp at most one 32-pair row. */
void ramp_select_shape_for(long long pairs, int *warps, int *ctas);

/* A selector created with RAMP_SELECT_PROFILE=1 in the environment runs the
 * profiling build: every launch appends a record of RAMP_SEL_PROF_WORDS
 * uint64 (kernels/select_params.h). Copies the records of the launches
 * since the last call (at most max, in launch order) and clears them; waits
 * for `stream`. RAMP_ERR_INVALID_ARGUMENT for a selector built without. */
ramp_status ramp_selector_profile(ramp_selector *s, ramp_stream stream,
                                  uint64_t *records, int max, int *count);

#endif /* RAMP_SELECT_CPU_H */
