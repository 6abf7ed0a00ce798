/*
 * moe_v2.h - host glue of the Hopper fused MoE kernel v2
 * (kernels/moe_v2.cuh): which variants it supports, the NVRTC defines,
 * compilation through the JIT (jit.c), measured resources, the two weight
 * tensor maps (tensormap.c) and launches. Same variant type and parameter
 * block as v1 (moe_gpu.h), so tests and benchmarks run both on one input.
 *
 * Supported now (issue #5): FP8 and BF16 layers with hidden states of the
 * same type, persistent = 0 and grouped = 0 (the grid is min(tiles, SMs),
 * blocks stride statically over the tiles), split-K 1 or 2 (2: a cluster of
 * two CTAs per tile, rows 1..64, d a multiple of 512); rows b with
 * ceil8(b) in {8, 16, 24, 32, 48, 64}, or 65..128 (a wide tile: 128 token
 * rows, kernels/moe_v2_wide.cuh; optionally in two launches, opts.split);
 * width 128, 256, 512 (dividing h);
 * stages 2..6 within the shared memory; d a multiple of 256.
 *
 * Weights row-major (W13 [E * 2h][d], W2 [E * d][h]) or, with the option
 * `tiled`, pre-tiled in 128-row x 128-byte blocks (ramp_moe_v2_tile_weights;
 * moe_v2.md, "Pre-tiled weights"); block scales the same in both.
 */
#ifndef RAMP_MOE_V2_H
#define RAMP_MOE_V2_H

#include "cuda_loader.h"
#include "moe_gpu.h"

#include "../kernels/moe_v2_params.h"

/* The kernel's second parameter (moe_v2.cuh's ramp_moe_v2_maps). */
typedef struct {
    CUtensorMap w13; /* [E * 2h][d] e4m3, box 128 B x 128 rows, 128-byte swizzle */
    CUtensorMap w2;  /* [E * d][h] */
    CUtensorMap x;   /* opts.tma_x programs only: the copy of x in tile order (box 128 B x
                        128 rows) or x itself (box 128 B x 1 row), made at a launch
                        whose addresses or sizes differ from the last */
    CUtensorMap h;   /* opts.tma_x 1, phase 2: the intermediate in prm.ws, [max_tiles]
                        [128 rows][h], box 128 B x 128 rows of one row tile */
} ramp_moe_v2_maps;

/* Compile-time options of a v2 program beside the variant (experiments of
 * issue #5; moe_v2.md). */
typedef struct {
    int prefetch; /* L2 prefetch distance in stages, 0..16 (RAMP_MV2_PF) */
    int diag;     /* timing diagnostic 0..9 (RAMP_MV2_DIAG); results are wrong if > 0 */
    int pipe;     /* consumer ping-pong (RAMP_MV2_PIPE): 0 off, 1 for 16 <= N <= 48, 2 N <= 48;
                     wide FP8 tiles: output reductions during the second half; wide BF16
                     tiles (1 or 2): one stage's wgmmas kept in flight (session 15) */
    int tiled;    /* 1: weights pre-tiled (RAMP_MV2_TILED; ramp_moe_v2_tile_weights), 2:
                     pre-tiled K block-major, 3: in stage units, each ring stage's
                     shared-memory image read by one bulk copy (narrow tiles;
                     ramp_moe_v2_tile_weights_order) */
    int red4;     /* 1: W2's rows permuted (ramp_moe_v2_permute_w2), output added by
                     red.global.add.v4.f32 (RAMP_MV2_RED4); out 16-byte aligned */
    int split;    /* 1: two launches, the up projection storing the FP8
                     intermediate into prm.ws, then the down projection over all
                     of h (RAMP_MV2_PHASE 1, 2; wide tiles, and narrow FP8 tiles
                     without bulkred, red4, pipe or split-K); prm.ws must hold
                     ramp_moe_v2_ws_bytes(...) bytes; timing
                     diagnostics (results wrong): 2 launches the up program only,
                     3 the down program only */
    int p2k;      /* split: the down projection's K in p2k parts (RAMP_MV2_P2K; 0 or
                     1: whole; 2, 4; 8 narrow tiles only), each a tile of its own,
                     for loads of few row tiles */
    int group;    /* tile order (RAMP_MV2_GROUP): 0 or 1 row-major; 2..64 the row
                     tiles in groups of that many, slice-major inside a group, so
                     blocks running together share a slice's weights through L2
                     (moe_v2_params.h, ramp_mv2_tile_of). Not measured yet
                     (moe_v2.md, session 8) */
    int cluster;  /* 0 or 1: the launch's clusters are the configuration's (split-K 2:
                     two CTAs, else none); 2: an unsplit program launched in clusters
                     of two all the same (timing the cluster launch alone) */
    int bulkred;  /* 1: the output added by the TMA unit's bulk reductions from a
                     shared-memory staging (RAMP_MV2_BULKRED; narrow FP8 tiles,
                     no red4, no split-K; moe_v2.md, session 13) */
    int mcast;    /* 1: wide tiles in clusters of two CTAs running row tiles 2p, 2p + 1
                     of one slice, each stage's weights read from L2 once and written
                     into both by TMA multicast (RAMP_MV2_MCAST; row-major weights and
                     tile order, no split-K; both launches of a split; moe_v2.md,
                     session 15) */
    int tma_x;    /* wide tiles' token rows by TMA instead of cp.async, so no per-stage
                     proxy fence for them (RAMP_MV2_TMA_X; moe_v2.md, session 17):
                     1 one 128-row box per stage from a copy of x in tile order that
                     a kernel of its own (moe_v2_xtile.cuh) writes before each launch
                     into memory the kernel object holds; 2 one 128-byte box per token
                     row, straight from x (correct, 20% slower) */
    int streamk;  /* 1: a narrow split's phase 2 as stream-K (RAMP_MV2_STREAMK): each
                     block one contiguous range of the (row tile, chunk, K block)
                     units, one output add per chunk it touches; replaces p2k.
                     FP8 narrow splits without bulkred, group or split-K (moe_v2.md,
                     sessions 24-25: correct, slower at one row tile; off) */
    int w2box;    /* 1: a W2 stage's 256 rows as one TMA box of 32 KB instead of two
                     of 128 rows (RAMP_MV2_W2BOX256; the W2 map's box 256 rows):
                     narrow FP8 tiles on row-major weights, fused or phase 2
                     (moe_v2.md, session 29) */
    int cgather;  /* 0 or 1: none; 2, 4, 8: a narrow fused FP8 tile run by a cluster of
                     that many CTAs on as many slices, which copy their intermediates
                     into each other's shared memory and each project down 1/C of d
                     over all C slices (RAMP_MV2_CGATHER; moe_v2.md, session 35) */
    int ggather;  /* 0 or 1: none; 2, 4, 8: the same gather through global memory, no
                     cluster: groups of G consecutive blocks exchange their blocks in a
                     workspace the kernel object owns (RAMP_MV2_GGATHER; moe_v2.md,
                     session 36). Not with cgather; as a configuration, ".gg<G>" */
    int pdl;      /* 1 (split 1 only): phase 2 launched by programmatic dependent launch,
                     its producers waiting for phase 1 after their first weights
                     (RAMP_MV2_LATE_WAIT), as the layer runs a two-phase entry; 0:
                     after phase 1, as the datasets were measured (moe_v2.md,
                     session 36) */
} ramp_moe_v2_opts;

/* A configuration with cfg.two_phase > 0 runs as the split (split 1, p2k =
 * two_phase) with whatever options the caller gives, unless those ask for
 * a split themselves. */

/* Bytes of prm.ws the variant's launches need for up to max_tiles row tiles
 * (0 when it is neither split nor gathering through global memory). */
size_t ramp_moe_v2_ws_bytes(const ramp_moe_variant *v, const ramp_moe_v2_opts *o,
                            int max_tiles);
/* Bytes of prm.ws_count they need: a gather through global memory's two
 * counters a tile (ggather, ".gg"), zero before the first launch (each
 * launch leaves them zero); 0 otherwise. ramp_moe_v2_launch gives a kernel
 * object's own launches their own ws and counters for the gather, allocated
 * and zeroed (on the stream) by the first launch that needs more row tiles
 * than it holds: launch once before capturing a graph, or the zeroing is
 * captured with it. */
size_t ramp_moe_v2_counter_bytes(const ramp_moe_variant *v, const ramp_moe_v2_opts *o,
                                 int max_tiles);

/* The options every plain entry point uses (RAMP_MV2_PF_DEFAULT, no diag,
 * RAMP_MV2_PIPE_DEFAULT, row-major weights). */
ramp_moe_v2_opts ramp_moe_v2_default_opts(void);

/* RAMP_ERR_UNSUPPORTED saying why when v2 cannot run the variant. */
ramp_status ramp_moe_v2_check(const ramp_moe_variant *v);
ramp_moe_v2_layout ramp_moe_v2_layout_for(const ramp_moe_variant *v);
/* The same for a program compiled with options o (NULL: the defaults):
 * o->bulkred adds the output staging. */
ramp_moe_v2_layout ramp_moe_v2_layout_for_opts(const ramp_moe_variant *v,
                                               const ramp_moe_v2_opts *o);
/* Whether v can run with bulk reductions (o->bulkred): narrow FP8 tiles, no
 * split-K, two phases or red4, the staging within 227 KB;
 * RAMP_ERR_UNSUPPORTED saying which. */
ramp_status ramp_moe_v2_bulkred_check(const ramp_moe_variant *v, const ramp_moe_v2_opts *o);
int ramp_moe_v2_defines(const ramp_moe_variant *v, char storage[][48], const char **defs);
void ramp_moe_v2_program_name(const ramp_moe_variant *v, char *buf, size_t size);
/* The name (and JIT cache name) of the program with options o (NULL: the
 * defaults): "-diagN" and "-tiled" appended when set. */
void ramp_moe_v2_program_name_opts(const ramp_moe_variant *v, const ramp_moe_v2_opts *o,
                                   char *buf, size_t size);
/* The name of the program ramp_moe_v2_compile_phase compiles (with o->split:
 * "-ph1" or "-ph2" appended, phase 2's with "-k<p2k>" before it). */
void ramp_moe_v2_program_name_phase(const ramp_moe_variant *v, const ramp_moe_v2_opts *o,
                                    int phase, char *buf, size_t size);
/* What ramp_moe_v2_compile_opts checks before it compiles (no NVRTC
 * needed): the variant, the options' ranges and the combinations built;
 * RAMP_ERR_UNSUPPORTED names one that is not. */
ramp_status ramp_moe_v2_opts_check(const ramp_moe_variant *v, const ramp_moe_v2_opts *o);
/* The options the layer and `ramp bench` run a configuration with on a
 * weight layout: the defaults, and tiled 3 for stage units (1). */
ramp_moe_v2_opts ramp_moe_v2_weight_opts(int weight_units);
/* Whether configuration c runs on weights in stage units on geometry g. */
ramp_status ramp_moe_v2_units_check(const ramp_config *c, const ramp_geometry *g);
ramp_status ramp_moe_v2_compile(const ramp_moe_variant *v, ramp_jit_result **out);
/* The same with options (NULL: the defaults). */
ramp_status ramp_moe_v2_compile_opts(const ramp_moe_variant *v, const ramp_moe_v2_opts *o,
                                     ramp_jit_result **out);
/* With o->split: the program of phase 1 (phase 0 or 1: the up projection,
 * which ramp_moe_v2_compile_opts gives) or 2 (the down projection); without
 * it, the fused program whatever phase says. */
ramp_status ramp_moe_v2_compile_phase(const ramp_moe_variant *v, const ramp_moe_v2_opts *o,
                                      int phase, ramp_jit_result **out);
/* From a compile result: registers from ptxas, the layout's shared memory,
 * 384 threads, validity (spills, fit). */
ramp_status ramp_moe_v2_resources_of(const ramp_moe_variant *v, const ramp_jit_result *r,
                                     const ramp_device_limits *lim, ramp_resources *out);

typedef struct ramp_moe_v2_kernel ramp_moe_v2_kernel;

ramp_status ramp_moe_v2_create_from(ramp_gpu *gpu, const ramp_moe_variant *v,
                                    const ramp_jit_result *jit, ramp_moe_v2_kernel **out);
/* The same for a program compiled with options o (NULL: the defaults); the
 * kernel keeps o.tiled to build its maps for the matching layout. */
ramp_status ramp_moe_v2_create_from_opts(ramp_gpu *gpu, const ramp_moe_variant *v,
                                         const ramp_moe_v2_opts *o, const ramp_jit_result *jit,
                                         ramp_moe_v2_kernel **out);
ramp_status ramp_moe_v2_create(ramp_gpu *gpu, const ramp_moe_variant *v,
                               ramp_moe_v2_kernel **out);
ramp_status ramp_moe_v2_create_opts(ramp_gpu *gpu, const ramp_moe_variant *v,
                                    const ramp_moe_v2_opts *o, ramp_moe_v2_kernel **out);
void ramp_moe_v2_free(ramp_moe_v2_kernel *k);
const ramp_resources *ramp_moe_v2_kernel_resources(const ramp_moe_v2_kernel *k);
/* Blocks of a launch: min(max_tiles * h / w, SMs) tiles' worth (x 2 CTAs
 * for split-K, capped at the resident clusters); every block strides over
 * the tiles (one block per SM fits). */
unsigned ramp_moe_v2_grid(const ramp_moe_v2_kernel *k, int max_tiles);
/* Caps the grid at `blocks` (0: no cap beyond the SMs), so that tests can
 * make every block run several tiles; a split-K kernel (cfg.splitk 2, two
 * CTAs per tile) rounds it down to whole clusters. */
void ramp_moe_v2_set_max_grid(ramp_moe_v2_kernel *k, int blocks);
/* The resident clusters of ks CTAs of a v2 program with smem bytes of
 * dynamic shared memory (the driver's count, at most sms / ks; sms / ks when
 * the driver cannot say): a grid of more would leave clusters waiting for a
 * second wave while the first strides over all the tiles. */
ramp_status ramp_moe_v2_cluster_cap(const ramp_kernel *kernel, int smem, int ks, int sms,
                                    int *clusters);

/* The kernel's second parameter for the weights of geometry g (experts =
 * local experts): W13 [E * 2h][d] and W2 [E * d][h] at w13 and w2, boxes of
 * 128 B x 128 rows, 128-byte swizzle; tiled = 1: the same weights stored
 * pre-tiled (ramp_moe_v2_tile_weights), 4-D maps with boxes of one block
 * (tensormap.h's ramp_tmap_tiled). out must be 64-byte aligned (a
 * CUtensorMap on the stack or in a struct is; malloc'd memory may not be).
 * Needs the GPU's context current, as ramp_moe_v2_launch. */
ramp_status ramp_moe_v2_maps_build(const ramp_geometry *g, ramp_devptr w13, ramp_devptr w2,
                                   int tiled, ramp_moe_v2_maps *out);
/* The same with W2's boxes w2_box_rows (128, or 256 for opts.w2box) rows. */
ramp_status ramp_moe_v2_maps_build_box(const ramp_geometry *g, ramp_devptr w13, ramp_devptr w2,
                                       int tiled, int w2_box_rows, ramp_moe_v2_maps *out);

/* Token rows by TMA (opts.tma_x, ".tx"): the map of maps.x over `rows` rows
 * of hidden states at base (d elements each), boxes of 128 B x box_rows
 * rows (128: a row tile of a copy in tile order; 1: a token row of x). */
ramp_status ramp_moe_v2_map_x(const ramp_geometry *g, ramp_devptr base, int rows,
                             int box_rows, CUtensorMap *out);
/* The map of maps.h for a two-phase program of `rows` rows per tile (65..128)
 * with tokens by TMA: the intermediate in ws as `tiles` planes of 128 rows x
 * h, plane r at r x the workspace's tile stride; boxes of 128 B x 128 rows. */
ramp_status ramp_moe_v2_map_h(const ramp_geometry *g, int rows, ramp_devptr ws, int tiles,
                             CUtensorMap *out);
/* RAMP_ERR_UNSUPPORTED saying which dimension when g's weights cannot be
 * pre-tiled: every box of the v2 kernel must start on a 128-row x 128-byte
 * block, so h and d must be multiples of 128 (every built-in model on every
 * layout ramp_geometry_for accepts is; v2 itself needs d % 256 and w | h). */
ramp_status ramp_moe_v2_tiled_check(const ramp_geometry *g);

/* Packs the row-major byte matrix src [rows][cols] into dst pre-tiled:
 * dst[((rb * cols/128 + kb) * 128 + r) * 128 + c] = src[(128 rb + r) * cols
 * + 128 kb + c], i.e. [rows/128][cols/128][128][128]. rows and cols
 * multiples of 128; dst (rows * cols bytes) must not overlap src. CPU only. */
ramp_status ramp_moe_v2_tile_matrix(const uint8_t *src, uint64_t rows, uint64_t cols,
                                    uint8_t *dst);
/* The same with kmajor 1: the blocks K block-major, dst[((kb * rows/128 +
 * rb) * 128 + r) * 128 + c], so that the blocks of one K block lie together
 * (session 29: the blocks of a launch, each on its own rows, then read one
 * contiguous range at each K step). */
ramp_status ramp_moe_v2_tile_matrix_order(const uint8_t *src, uint64_t rows, uint64_t cols,
                                          int kmajor, uint8_t *dst);

/* The weights of geometry g for the tiled kernel: W13 [E * 2h][d] into
 * w13_tiled, W2 [E * d][h] into w2_tiled (same sizes as the inputs), after
 * ramp_moe_v2_tiled_check. Either pair may be NULL to pack one tensor. */
ramp_status ramp_moe_v2_tile_weights(const ramp_geometry *g, const uint8_t *w13,
                                     const uint8_t *w2, uint8_t *w13_tiled, uint8_t *w2_tiled);
/* The same for ramp_moe_v2_opts.tiled = tiled (1, 2: K block-major, 3:
 * stage units, moe_v2.cuh's RAMP_MV2_TILED 3; d a multiple of 256). A BF16
 * geometry (g->bf16, 2-byte elements): stage units only. */
ramp_status ramp_moe_v2_tile_weights_order(const ramp_geometry *g, int tiled, const uint8_t *w13,
                                           const uint8_t *w2, uint8_t *w13_tiled,
                                           uint8_t *w2_tiled);

/* W2 [E * d][h] for the red4 kernel: in every 128-row block, stored row s =
 * 64 t + 16 w + g + 8 hh (t, hh in 0..1, w in 0..3, g in 0..7) holds row
 * 4 (8 w + g) + 2 t + hh of w2, so each consumer thread's four accumulators
 * of a token are four consecutive output rows. d a multiple of 128 (v2
 * needs 256); dst (E * d * h bytes) must not overlap src. The block scales
 * are unchanged (rows move only within their 128-row scale block). Apply
 * before ramp_moe_v2_tile_weights when both are used. CPU only. */
ramp_status ramp_moe_v2_permute_w2(const ramp_geometry *g, const uint8_t *w2, uint8_t *dst);
/* The output row that stored row s (0..127) of a block holds (above). */
int ramp_moe_v2_red4_row(int s);

/* Queues one launch. The weight tensor maps are (re)built on the host when
 * p->w13 or p->w2 differ from the previous launch's (a map holds the
 * address), so a captured graph keeps the maps of its capture. ws/ws_count
 * are not used (no split-K yet). The calling thread must have the GPU's
 * context current (ramp_gpu_open and every libramp GPU call bind it): the
 * driver's map encoder refuses to work without one. */
ramp_status ramp_moe_v2_launch(ramp_moe_v2_kernel *k, const ramp_moe_params *p,
                               ramp_stream stream);

#endif /* RAMP_MOE_V2_H */
