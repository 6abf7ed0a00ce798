/*
 * moe_poly.h - host glue of the polymorphic fused MoE kernel
 * (kernels/moe_poly.cuh): one kernel holding a menu of v1 configurations
 * that runs the entry whose index is in device memory; or, with kernel =
 * RAMP_KERNEL_V2, a menu of Hopper kernel v2 configurations
 * (kernels/moe_poly_v2.cuh: 384 threads, the weights' tensor maps as a
 * second parameter, grid of at most one block per SM striding over the
 * tiles). The functions below serve both; where they differ, it says so.
 */
#ifndef RAMP_MOE_POLY_H
#define RAMP_MOE_POLY_H

#include "moe_gpu.h"

/* The v2 polymorphic kernels: the menu's, and the phase 2 of its two-phase
 * entries (launched after it when the menu has one; moe_poly_v2.cuh); with
 * ramp_poly_desc.split, the two-phase entries' phase 1 in a kernel of its
 * own. At most RAMP_POLY_MAX_KERNELS in one launch. */
#define RAMP_POLY_V2_KERNEL "ramp_moe_poly_v2"
#define RAMP_POLY_V2_UP_KERNEL "ramp_moe_poly_v2_up"
#define RAMP_POLY_V2_DOWN_KERNEL "ramp_moe_poly_v2_down"
#define RAMP_POLY_V2_C2_KERNEL "ramp_moe_poly_v2_c2"
#define RAMP_POLY_V2_DOWN_C2_KERNEL "ramp_moe_poly_v2_down_c2"
#define RAMP_POLY_V2_WIDE_KERNEL "ramp_moe_poly_v2_wide"
#define RAMP_POLY_V2_DOWN_WIDE_KERNEL "ramp_moe_poly_v2_down_wide"
#define RAMP_POLY_MAX_KERNELS (2 * RAMP_MENU_MAX) /* split 5: two per entry */
/* det: the combining kernel (kernels/moe_combine.cuh) */
#define RAMP_POLY_COMBINE_KERNEL "ramp_moe_combine"

/* A menu compiled into one kernel: configurations in menu order, the layer's
 * per-GPU geometry (experts = local experts) and input kind, and which
 * kernel the entries are (ramp_kernel_version; 0 = RAMP_KERNEL_V1). */
typedef struct {
    ramp_geometry geom;
    int xbf16;
    int count;
    ramp_config cfgs[RAMP_MENU_MAX];
    int kernel;
    int red4; /* v2: float4 output, W2 rows permuted (RAMP_MV2_RED4) */
    int units; /* v2: the weights in stage units, one bulk copy a stage
                  (RAMP_MV2_TILED 3, ramp_weights_to_units) */
    int l2pf_mb; /* v2: MB of the weights prefetched into L2 under the selection (0: none) */
    int bf16_pipe; /* v2, BF16 layer: 1 = wide entries with one stage's wgmmas in flight */
    int det;       /* v2, every entry two-phase: 1 = phase 2 stores each slot's rows into
                      a per-pair workspace (RAMP_MV2_DET), which the module's combining
                      kernel adds into out in a fixed order (kernels/moe_combine.cuh) */
    int split;     /* v2 menus of fused and two-phase entries: which kernels hold what
                      (ramp_moe_poly_chain). 0: fused entries and phase 1 in
                      RAMP_POLY_V2_KERNEL, then phase 2 in RAMP_POLY_V2_DOWN_KERNEL;
                      1: phase 1 in RAMP_POLY_V2_UP_KERNEL, then fused entries and
                      phase 2 in RAMP_POLY_V2_DOWN_KERNEL; 2: three kernels, fused
                      entries, phase 1, phase 2 (1 and 2: other menus as 0); 3: by
                      cluster, what runs on one CTA apart from what runs on clusters
                      of two (split-K, multicast), whose launch caps the grid at the
                      resident clusters: fused and phase 1 on one CTA (_V2_KERNEL),
                      on pairs (_V2_C2_KERNEL), then phase 2 likewise (_DOWN_KERNEL,
                      _DOWN_C2_KERNEL); 4: by width, narrow entries (rows <= 64) in
                      _V2_KERNEL then _DOWN_KERNEL, wide tiles in _V2_WIDE_KERNEL
                      then _DOWN_WIDE_KERNEL, so that narrow entries do not run with
                      a wide tile's shared-memory carve-out; kernels with nothing
                      to run are left out; 5: by entry, entry i's fused or phase-1
                      kernel ramp_moe_poly_v2_e<i>, then for a two-phase entry its
                      phase 2, ramp_moe_poly_v2_down_e<i>, each with its own grid
                      and shared memory; every v2 menu. In a captured graph the
                      layer runs only the chosen entry's (a switch node,
                      ramp_moe_poly_launch_entry); launched plainly, the chain
                      of every entry's kernels */
    int label[RAMP_MENU_MAX]; /* v2: the choice index that runs entry i (its case
                      in the kernel's switches, its bit of the .tx mask); all 0:
                      entry i runs on choice i. A layer's size classes
                      (ramp_layer_desc.one_menu) compile a part of the plan's
                      menu with the plan's indices. Increasing, < RAMP_MENU_MAX;
                      not with split 5 */
    int top_wait;  /* v2: 1 = a kernel holding only phase 2 waits for its
                      predecessor at its top; 0 (the default) after its blocks
                      requested their first weights (RAMP_POLY_V2_TOP_WAIT 0,
                      RAMP_MV2_LATE_WAIT; not with det) */
} ramp_poly_desc;

/* Each entry supported by the kernel (ramp_moe_v1_check / ramp_moe_v2_check:
 * v2 refuses persistent, grouped, split-K, BF16, stages outside 2..6, ...),
 * 1..RAMP_MENU_MAX entries, no entry repeated: RAMP_ERR_INVALID_ARGUMENT /
 * UNSUPPORTED saying which entry and why. */
ramp_status ramp_moe_poly_check(const ramp_poly_desc *d);

/* The generated translation unit (malloc'd, NUL-terminated) and its -D
 * options; see moe_poly.cuh for its shape. */
ramp_status ramp_moe_poly_source(const ramp_poly_desc *d, char **source);

/* Block threads (the widest entry; v2: 384) and dynamic shared memory (the
 * largest entry's layout). */
void ramp_moe_poly_shape(const ramp_poly_desc *d, int *threads, long long *smem);

/* The kernels a launch of d queues, in order (names into *names; the
 * module holds them all): 1 to RAMP_POLY_MAX_KERNELS. */
int ramp_moe_poly_chain(const ramp_poly_desc *d, const char *names[RAMP_POLY_MAX_KERNELS]);

/* Compiles (or reads from the JIT cache). */
ramp_status ramp_moe_poly_compile(const ramp_poly_desc *d, ramp_jit_result **out);

typedef struct ramp_moe_poly ramp_moe_poly;

/* Compiles and loads the kernel for a layer of at most max_pairs
 * token-expert pairs on this GPU (tokens * k), sizing its grid for the most
 * tiles any entry can produce. RAMP_ERR_UNSUPPORTED if the kernel cannot run
 * (registers or shared memory). */
ramp_status ramp_moe_poly_create(ramp_gpu *gpu, const ramp_poly_desc *d,
                                 int64_t max_pairs, ramp_moe_poly **out);
void ramp_moe_poly_free(ramp_moe_poly *k);

/* What a compile of d (ramp_moe_poly_compile) can run with on a GPU of
 * limits lim: the first kernel's resources (measured = 1) and, when a v2
 * menu holds a two-phase entry, the second kernel's and its dynamic shared
 * memory (*smem_down; 0 and res_down zeroed when there is none). A chain of
 * more kernels (split 2 to 4) is refused (RAMP_ERR_INVALID_ARGUMENT). */
ramp_status ramp_moe_poly_resources_of(const ramp_poly_desc *d, const ramp_jit_result *jit,
                                       const ramp_device_limits *lim, ramp_resources *res,
                                       ramp_resources *res_down, long long *smem_down);
/* Resources of the polymorphic kernel (the first of its chain; measured = 1). */
const ramp_resources *ramp_moe_poly_resources(const ramp_moe_poly *k);
/* The kernel's name in the module and the ptxas report: "ramp_moe_poly"
 * (v1 entries) or "ramp_moe_poly_v2". */
const char *ramp_moe_poly_kernel_name(const ramp_poly_desc *d);
/* v2: builds the weights' tensor maps (tensormap.c) for w13 [EL * 2h][d] and
 * w2 [EL * d][h] once (a layer calls it at creation); a launch with other
 * addresses rebuilds them first. Needs the GPU's context current (every
 * libramp GPU call binds it). v1: nothing to do, RAMP_OK. */
ramp_status ramp_moe_poly_set_weights(ramp_moe_poly *k, ramp_devptr w13, ramp_devptr w2);
/* Grid of a launch: the most blocks any entry can use for p->num_tokens
 * tokens (the capacity's at most: full grid), capped at RAMP_POLY_WAVES
 * waves of sms * blocks per SM; past the cap, blocks take further tiles
 * from the tile counter. v2: capped at one wave (sms; one block per SM),
 * blocks stride over the tiles. The cap is there because a surplus block still
 * costs a launch and a read of the choice (measured: about 2 ns of the
 * whole GPU's time per block, so the 263,168 blocks that DeepSeek-V3 EP8 at
 * 4,096 tokens would need cost 0.5 ms). ramp_moe_poly_grid: at capacity. */
#define RAMP_POLY_WAVES 2
unsigned ramp_moe_poly_grid(const ramp_moe_poly *k);
unsigned ramp_moe_poly_full_grid(const ramp_moe_poly *k);
/* Overrides the grid (blocks; 0: the default cap), for benchmarks. */
void ramp_moe_poly_set_grid(ramp_moe_poly *k, unsigned blocks);
/* Bytes of the tile scheduler's state (sched): zero it once. */
#define RAMP_POLY_SCHED_BYTES (4 * RAMP_POLY_SCHED_WORDS)
/* Split-K workspace for max_tiles row tiles: the most any entry needs; v2:
 * the intermediate of its two-phase entries, or the exchanged blocks of its
 * ".gg" entries, for the row tiles each can have at the kernel's max_pairs
 * (max_tiles is not used), 0 without one. Counters (zero before the first
 * launch; every launch leaves them zero): v1's split-K arrivals; v2's ".gg"
 * entries' two a tile (ramp_moe_v2_counter_bytes), 0 without one. */
size_t ramp_moe_poly_ws_bytes(const ramp_moe_poly *k, int max_tiles);
size_t ramp_moe_poly_counter_bytes(const ramp_moe_poly *k, int max_tiles);

/* Queues one launch (two when a v2 menu has a two-phase entry: the second
 * runs its phase 2; up to four with split): choice (device i32) picks the entry; sched (device,
 * RAMP_POLY_SCHED_BYTES, zero before the first launch, left zero) is the
 * tile scheduler's (v2 uses words 0 and 1 as a grid barrier when a ".tx"
 * entry is chosen, moe_poly_v2.cuh; one contract). Launches on one sched
 * must not overlap (a stream's do not).
 * p->max_tiles is the capacity of sorted_ids / tile_expert in row tiles of
 * the SMALLEST entry's rows (the selection kernel's max_tiles); p->num_tokens
 * sizes the grid. */
ramp_status ramp_moe_poly_launch(ramp_moe_poly *k, const ramp_moe_params *p,
                                 ramp_devptr choice, ramp_devptr sched, ramp_stream stream);
/* The same with programmatic dependent launch: blocks start while the
 * previous kernel on the stream (the selection kernel) finishes; the
 * two-phase entries' second kernel starts while the first runs. */
ramp_status ramp_moe_poly_launch_pdl(ramp_moe_poly *k, const ramp_moe_params *p,
                                     ramp_devptr choice, ramp_devptr sched,
                                     ramp_stream stream);
/* pdl: bit 0 the first kernel with programmatic dependent launch, bit 1 the
 * ones after it (ramp_moe_poly_chain; without split, the two-phase entries'
 * phase 2); 0 is ramp_moe_poly_launch, 3 ramp_moe_poly_launch_pdl. Bits 2-4,
 * for timing experiments only: 4 the first kernel alone (a two-phase choice
 * then leaves its output unwritten), 8 the last with one block (cluster), 16
 * all but the first. */
/* split 5: only entry `entry`'s kernels (a switch node's body; pdl bit 0 is
 * ignored: the body's first kernel has nothing in its graph to overlap). */
ramp_status ramp_moe_poly_launch_entry(ramp_moe_poly *k, const ramp_moe_params *p,
                                       ramp_devptr choice, ramp_devptr sched,
                                       ramp_stream stream, int pdl, int entry);
ramp_status ramp_moe_poly_launch_mode(ramp_moe_poly *k, const ramp_moe_params *p,
                                      ramp_devptr choice, ramp_devptr sched,
                                      ramp_stream stream, int pdl);
/* det: the per-pair workspace a launch for max_pairs pairs stores into
 * (ramp_moe_params.out of the launch): f32 [K parts][max_pairs][d], the
 * most K parts of any entry; 0 without det. */
size_t ramp_moe_poly_pair_ws_bytes(const ramp_moe_poly *k, int64_t max_pairs);

/* det: which token-slots are this GPU's, by the selection kernel's rule:
 * ids in [0, experts) with local_of[id] >= 0 (a device array; 0: the range
 * first_expert .. + local_experts - 1). */
typedef struct {
    ramp_devptr local_of;
    int first_expert, local_experts, experts;
} ramp_poly_locality;

/* det: queues the combining kernel after a launch (same stream): out[t] +=
 * the rows of token t's local slots in pws, in K-part and slot order.
 * choice and tokens (device i32): the menu index and the token count the
 * selection used; part_pairs: the launch's num_tokens * k (its workspace
 * rows per K part); max_tokens: the most tokens (sizes the grid); pdl: with
 * programmatic dependent launch (its blocks wait for the previous kernel's
 * completion; the phase-2 kernel of a det menu lets it launch at once). */
ramp_status ramp_moe_poly_combine(ramp_moe_poly *k, ramp_devptr out, ramp_devptr pws,
                                  ramp_devptr topk_ids, ramp_devptr choice, ramp_devptr tokens,
                                  const ramp_poly_locality *loc, int64_t part_pairs,
                                  int max_tokens, int pdl, ramp_stream stream);

/* The pdl bits of ramp_moe_poly_launch_mode for ramp_layer_desc.serial_launch
 * (1 none, 2 the first kernel, anything else both). Until session 34 the
 * automatic mode launched a narrow two-phase entry's second kernel without
 * PDL (2-7 us faster on Mixtral's small loads in session 14,
 * bench/results/s14-run4); since its producers request their first weights
 * before waiting (session 25) PDL is the faster (bench/results/s34-run2). */
int ramp_moe_poly_pdl_mode(int serial_launch);

#endif /* RAMP_MOE_POLY_H */
