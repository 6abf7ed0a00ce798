/*
 * moe_v2.c - host glue of the Hopper fused MoE kernel v2 (moe_v2.h,
 * kernels/moe_v2.cuh): checks, defines, JIT compile, resources, tensor maps,
 * the pre-tiled weight layout's packer and launches.
 */
#include "moe_v2.h"

#include "tensormap.h"

#include <stdio.h>
#include <string.h>

struct ramp_moe_v2_kernel {
    ramp_moe_v2_maps maps; /* first: CUtensorMap needs 128-byte alignment */
    ramp_gpu *gpu;
    ramp_moe_variant v;
    ramp_moe_v2_layout layout;
    ramp_module *module;
    ramp_kernel *kernel;
    ramp_resources res;
    int sms, max_grid;
    int ks;       /* CTAs per tile (cfg.splitk, multicast's 2, cgather): a cluster
                     launch when > 1 */
    int cg;       /* opts.cgather or ggather (1: none): a tile is cg slices */
    int gg;       /* opts.ggather (1: none): the exchange through gg_ws, no cluster */
    ramp_devptr gg_ws;  /* ggather: the blocks and counters (ramp_moe_v2_gg_ws) */
    int gg_tiles;       /* row tiles gg_ws holds */
    ramp_devptr dyn;    /* 16 zeroed bytes: RAMP_MV2_DYN's tile counters (moe_v2.cuh),
                           passed as ws_count where the program gathers nothing */
    int launch_cluster; /* CTAs per cluster of the launch: ks, or opts.cluster */
    int clusters; /* resident clusters of ks CTAs (the grid's cap / ks) */
    int tiled; /* the program reads pre-tiled weights: 4-D maps */
    int w2box; /* the program reads W2 in boxes of 256 rows */
    int split; /* two launches: module/kernel = phase 1, module2/kernel2 = phase 2
                  (2, 3: phase 1 or 2 alone, for timing) */
    int p2k;   /* phase 2 tiles per (row tile, chunk) */
    int pdl2;  /* opts.pdl: phase 2 by programmatic dependent launch */
    int streamk; /* phase 2 as stream-K: units (row tile, chunk, K block) */
    int mc;    /* 2 with multicast (opts.mcast): a tile is a pair of row tiles, ks = 2 */
    int clusters2; /* phase 2's resident clusters of ks CTAs */
    ramp_moe_v2_layout layout2;
    ramp_module *module2;
    ramp_kernel *kernel2;
    ramp_moe_u64 map_w13, map_w2; /* addresses the maps were built for (0: none) */
    int tma_x;                    /* maps.x read by the program: 0 none; 1 over xt, the
                                     copy of x in tile order the xtile kernel writes; 2 over
                                     x, one row per box; 3 over x, 128 rows per box
                                     (timing diagnostic 9) */
    ramp_moe_u64 map_x;           /* base and rows maps.x was built for (0: none) */
    int map_m;
    ramp_moe_u64 map_h;           /* tma_x 1, split: ws and tiles maps.h was built for */
    int map_h_tiles;
    ramp_module *xt_module;       /* tma_x 1: moe_v2_xtile.cuh */
    ramp_kernel *xt_kernel;
    ramp_devptr xt;               /* tma_x 1: max_tiles * 128 rows of d elements */
    size_t xt_bytes;
};

_Static_assert(sizeof(ramp_moe_v2_maps) == 512, "ramp_moe_v2_maps: four 128-byte maps");

static ramp_status cgather_check(const ramp_moe_variant *v, const ramp_moe_v2_opts *o);

ramp_status ramp_moe_v2_check(const ramp_moe_variant *v) {
    RAMP_CHECK(v, RAMP_ERR_INVALID_ARGUMENT, "NULL variant");
    const ramp_config *c = &v->cfg;
    const ramp_geometry *g = &v->geom;
    char name[64];
    ramp_config_name(c, name, sizeof name);
    const int n = (c->rows + 7) / 8 * 8;
    RAMP_CHECK((c->rows >= 1 && c->rows <= 64 && n != 40 && n != 56) ||
                   (c->rows > 64 && c->rows <= 128),
               RAMP_ERR_UNSUPPORTED,
               "v2 config %s: rows %d (rounded up to 8: %d) is neither 1..64 with a wgmma N of "
               "8, 16, 24, 32, 48 or 64 nor a wide tile of 65..128", name, c->rows, n);
    RAMP_CHECK(c->width == 128 || c->width == 256 || c->width == 512, RAMP_ERR_UNSUPPORTED,
               "v2 config %s: width %d not 128, 256 or 512", name, c->width);
    RAMP_CHECK(c->stages >= 2 && c->stages <= 6, RAMP_ERR_UNSUPPORTED,
               "v2 config %s: stages %d outside 2..6", name, c->stages);
    RAMP_CHECK(!c->persistent && !c->grouped, RAMP_ERR_UNSUPPORTED,
               "v2 config %s: persistent launch and grouped order are not configurations of "
               "v2 (it is persistent always; its grouped order is an option)", name);
    /* split-K's tested part: the configuration space's rows and widths
     * (src/config.c), every stage count */
    RAMP_CHECK(c->splitk == 1 ||
                   (c->splitk == 2 && c->rows <= 32 && c->width <= 256 && !c->two_phase),
               RAMP_ERR_UNSUPPORTED,
               "v2 config %s: split-K %d with rows %d, width %d, two_phase %d (v2 splits K over "
               "a cluster of two CTAs only: split-K 1 or 2, and 2 with rows 1..32, width 128 or "
               "256, fused)", name, c->splitk, c->rows, c->width, c->two_phase);
    RAMP_CHECK(c->splitk == 1 || g->hidden % (RAMP_MV2_CHUNK * c->splitk) == 0,
               RAMP_ERR_UNSUPPORTED,
               "v2 config %s: split-K %d needs d a multiple of %d (whole down chunks per CTA), "
               "not %d", name, c->splitk, RAMP_MV2_CHUNK * c->splitk, g->hidden);
    /* two launches: wide tiles, and narrow FP8 ones (session 14) with up to
     * 8 K parts (few row tiles fill the GPU with 24 chunks x 8 on Mixtral);
     * parts that do not divide h / 128 are of unequal length (session 35: 5
     * parts make 24 x 5 = 120 tiles, one wave) */
    RAMP_CHECK(c->two_phase == 0 ||
                   (c->two_phase >= 1 && c->two_phase <= 5 && c->rows > 64) ||
                   (c->two_phase >= 1 && c->two_phase <= 8 && c->two_phase != 7 &&
                    c->rows <= 64 && !g->bf16),
               RAMP_ERR_UNSUPPORTED,
               "v2 config %s: two_phase %d (two launches: 0, or 1..5 K parts with a wide "
               "tile of 65..128 rows, 1..6 or 8 with a narrow FP8 tile)", name, c->two_phase);
    RAMP_CHECK(c->two_phase <= g->inter / 128, RAMP_ERR_UNSUPPORTED,
               "v2 config %s: %d K parts of h / 128 = %d K blocks", name, c->two_phase,
               g->inter / 128);
    RAMP_CHECK(!c->mcast || (c->mcast == 1 && c->rows > 64 && c->splitk == 1),
               RAMP_ERR_UNSUPPORTED,
               "v2 config %s: multicast %d with rows %d, split-K %d (.mc: the weights of two "
               "wide tiles, 65..128 rows, by TMA multicast; no split-K)", name, c->mcast,
               c->rows, c->splitk);
    RAMP_CHECK(!c->tma_x || (c->tma_x == 1 && c->rows > 64 && c->splitk == 1),
               RAMP_ERR_UNSUPPORTED,
               "v2 config %s: tma_x %d with rows %d, split-K %d (.tx: a wide tile's token rows, "
               "65..128, as one TMA box; no split-K)", name, c->tma_x, c->rows, c->splitk);
    RAMP_CHECK(!v->xbf16, RAMP_ERR_UNSUPPORTED,
               "v2 config %s: BF16 hidden states into an FP8 layer (quantized in the kernel) "
               "are v1's only so far", name);
    RAMP_CHECK(g->experts >= 1 && g->topk >= 1 && g->inter >= 1 && g->hidden >= 1,
               RAMP_ERR_INVALID_ARGUMENT, "geometry E=%d k=%d h=%d d=%d", g->experts, g->topk,
               g->inter, g->hidden);
    RAMP_CHECK(g->inter % c->width == 0, RAMP_ERR_UNSUPPORTED,
               "v2 config %s: width %d does not divide h = %d", name, c->width, g->inter);
    RAMP_CHECK(g->hidden % RAMP_MV2_CHUNK == 0, RAMP_ERR_UNSUPPORTED,
               "v2 config %s: d = %d is not a multiple of %d (the down chunk)", name,
               g->hidden, RAMP_MV2_CHUNK);
    ramp_moe_v2_layout l = ramp_moe_v2_layout_for(v);
    RAMP_CHECK(l.total <= 232448, RAMP_ERR_UNSUPPORTED,
               "v2 config %s: %lld B of shared memory exceeds the 227 KB per block", name,
               l.total);
    if (c->ggather) { /* (.gg: the option's checks on the configuration's own) */
        ramp_moe_v2_opts o = ramp_moe_v2_default_opts();
        o.ggather = c->ggather;
        RAMP_TRY(cgather_check(v, &o));
    }
    return RAMP_OK;
}

ramp_moe_v2_layout ramp_moe_v2_layout_for(const ramp_moe_variant *v) {
    return ramp_moe_v2_layout_for_opts(v, NULL);
}

ramp_moe_v2_layout ramp_moe_v2_layout_for_opts(const ramp_moe_variant *v,
                                               const ramp_moe_v2_opts *o) {
    const int gg = o && o->ggather > 1 ? o->ggather : v->cfg.ggather; /* (the option's first) */
    return ramp_moe_v2_layout_cg(v->cfg.rows, v->cfg.width, v->cfg.stages, v->geom.bf16,
                                 v->cfg.splitk > 1 ? v->cfg.splitk : 1, o ? o->bulkred : 0,
                                 gg > 1 ? gg : o ? o->cgather : 1);
}

ramp_status ramp_moe_v2_bulkred_check(const ramp_moe_variant *v, const ramp_moe_v2_opts *o) {
    char name[64];
    ramp_config_name(&v->cfg, name, sizeof name);
    RAMP_CHECK(!v->geom.bf16 && v->cfg.rows <= 64 && v->cfg.splitk <= 1 && v->cfg.two_phase == 0 &&
                   !o->red4,
               RAMP_ERR_UNSUPPORTED,
               "v2 config %s: bulk reductions (bulkred) are built for narrow FP8 tiles without "
               "split-K, two phases or red4 (bf16 %d, red4 %d)", name, v->geom.bf16, o->red4);
    const ramp_moe_v2_layout l = ramp_moe_v2_layout_for_opts(v, o);
    RAMP_CHECK(l.total <= 232448, RAMP_ERR_UNSUPPORTED,
               "v2 config %s with bulk reductions: %lld B of shared memory exceeds the 227 KB "
               "per block", name, l.total);
    return RAMP_OK;
}

/* The cluster gather (opts.cgather) or the same through global memory
 * (opts.ggather): narrow fused FP8 tiles, C dividing the slices and the down
 * chunks, the C blocks of intermediate within 227 KB. */
static ramp_status cgather_check(const ramp_moe_variant *v, const ramp_moe_v2_opts *o) {
    char name[64];
    ramp_config_name(&v->cfg, name, sizeof name);
    RAMP_CHECK(o->cgather <= 1 || o->ggather <= 1, RAMP_ERR_INVALID_ARGUMENT,
               "v2 config %s: cgather %d and ggather %d: one exchange or the other", name,
               o->cgather, o->ggather);
    const char *what = o->ggather > 1 ? "ggather" : "cgather";
    const int C = o->ggather > 1 ? o->ggather : o->cgather;
    RAMP_CHECK(!v->geom.bf16 && v->cfg.rows <= 64 && v->cfg.splitk <= 1 && !o->split &&
                   !o->mcast && o->group <= 1 && o->cluster <= 1,
               RAMP_ERR_UNSUPPORTED,
               "v2 config %s: the gather (%s %d) is built for narrow fused FP8 tiles "
               "in row-major order, without split-K, two phases, multicast or a cluster option "
               "(bf16 %d, split %d, group %d, cluster %d)",
               name, what, C, v->geom.bf16, o->split, o->group, o->cluster);
    RAMP_CHECK((v->geom.inter / v->cfg.width) % C == 0 &&
                   (v->geom.hidden / RAMP_MV2_CHUNK) % C == 0,
               RAMP_ERR_UNSUPPORTED,
               "v2 config %s: %s %d must divide the slices (h / w = %d) and the down chunks "
               "(d / %d = %d)", name, what, C, v->geom.inter / v->cfg.width, RAMP_MV2_CHUNK,
               v->geom.hidden / RAMP_MV2_CHUNK);
    const ramp_moe_v2_layout l = ramp_moe_v2_layout_for_opts(v, o);
    RAMP_CHECK(l.total <= 232448, RAMP_ERR_UNSUPPORTED,
               "v2 config %s with %s %d: %lld B of shared memory exceeds the 227 KB per "
               "block", name, what, C, l.total);
    return RAMP_OK;
}

ramp_moe_v2_opts ramp_moe_v2_default_opts(void) {
    ramp_moe_v2_opts o = {RAMP_MV2_PF_DEFAULT, 0, RAMP_MV2_PIPE_DEFAULT, 0, 0, 0, 0, 1, 0, 0,
                          0, 0, 0, 0, 0, 0, 0};
    return o;
}

static ramp_moe_v2_opts opts_or_default(const ramp_moe_v2_opts *o) {
    return o ? *o : ramp_moe_v2_default_opts();
}

/* The options a program of variant v runs with: a two-phase configuration
 * (cfg.two_phase) is the split with that many K parts, unless o already
 * asks for a split (its timing diagnostics) or for its own parts. */
static ramp_moe_v2_opts effective_opts(const ramp_moe_variant *v, const ramp_moe_v2_opts *o) {
    ramp_moe_v2_opts e = opts_or_default(o);
    if (v->cfg.two_phase > 0) {
        if (!e.split) e.split = 1;
        if (!e.p2k) e.p2k = v->cfg.two_phase;
    }
    if (e.streamk) e.p2k = 1; /* stream-K's ranges replace the K parts */
    if (v->cfg.mcast) e.mcast = 1; /* (".mc") */
    if (v->cfg.tma_x) e.tma_x = 1; /* (".tx") */
    if (v->cfg.ggather > 1) e.ggather = v->cfg.ggather; /* (".gg") */
    return e;
}

/* The gather through global memory (ggather G): its blocks of row tiles
 * up to max_tiles, or with counters, its two counters a tile (0 without). */
static ramp_moe_v2_gg_ws gg_ws_of(const ramp_moe_variant *v, const ramp_moe_v2_opts *e,
                                  int max_tiles) {
    ramp_moe_v2_gg_ws w;
    memset(&w, 0, sizeof w);
    if (e->ggather > 1 && max_tiles >= 0)
        w = ramp_moe_v2_gg_ws_of(max_tiles, (v->cfg.rows + 7) / 8 * 8, v->cfg.width,
                                 v->geom.inter, e->ggather);
    return w;
}

size_t ramp_moe_v2_counter_bytes(const ramp_moe_variant *v, const ramp_moe_v2_opts *o,
                                 int max_tiles) {
    if (!v) return 0;
    const ramp_moe_v2_opts e = effective_opts(v, o);
    const ramp_moe_v2_gg_ws w = gg_ws_of(v, &e, max_tiles);
    return (size_t)(w.total - w.counters);
}

size_t ramp_moe_v2_ws_bytes(const ramp_moe_variant *v, const ramp_moe_v2_opts *o,
                            int max_tiles) {
    if (!v || max_tiles < 0) return 0;
    const ramp_moe_v2_opts e = effective_opts(v, o);
    if (e.ggather > 1) return (size_t)gg_ws_of(v, &e, max_tiles).counters;
    if (!e.split) return 0;
    return (size_t)ramp_moe_v2_ws_layout_rows(max_tiles, v->cfg.rows, v->geom.inter,
                                              v->geom.bf16).total;
}

/* phase: RAMP_MV2_PHASE of a split program (1, 2), 0 for the fused kernel */
static int defines_opts(const ramp_moe_variant *v, const ramp_moe_v2_opts *o, int phase,
                        char storage[][48], const char **defs) {
    int n = 0;
    /* 9 always and 12 options, 11 at most together (stream-K has neither P2K
     * nor GROUP): 20 <= RAMP_MOE_MAX_DEFINES (the guard keeps a future option
     * from writing past the arrays) */
#define DEF(fmt, val)                           \
    do {                                        \
        if (n < RAMP_MOE_MAX_DEFINES) {         \
            snprintf(storage[n], 48, fmt, val); \
            defs[n] = storage[n];               \
            n++;                                \
        }                                       \
    } while (0)
    DEF("RAMP_ROWS=%d", v->cfg.rows);
    DEF("RAMP_WIDTH=%d", v->cfg.width);
    DEF("RAMP_STAGES=%d", v->cfg.stages);
    DEF("RAMP_HIDDEN=%d", v->geom.hidden);
    DEF("RAMP_INTER=%d", v->geom.inter);
    DEF("RAMP_TOPK=%d", v->geom.topk);
    DEF("RAMP_EXPERTS=%d", v->geom.experts);
    DEF("RAMP_MV2_PF=%d", o->prefetch);
    if (o->diag) DEF("RAMP_MV2_DIAG=%d", o->diag);
    DEF("RAMP_MV2_PIPE=%d", o->pipe);
    /* only when set: row-major programs keep their defines and cache keys */
    if (o->tiled) DEF("RAMP_MV2_TILED=%d", o->tiled);
    if (o->red4) DEF("RAMP_MV2_RED4=%d", o->red4);
    if (o->bulkred) DEF("RAMP_MV2_BULKRED=%d", o->bulkred);
    if (phase) DEF("RAMP_MV2_PHASE=%d", phase);
    if (phase == 2 && o->p2k > 1) DEF("RAMP_MV2_P2K=%d", o->p2k);
    if (phase == 2 && o->streamk) DEF("RAMP_MV2_STREAMK=%d", o->streamk);
    if (phase == 2 && o->pdl) DEF("RAMP_MV2_LATE_WAIT=%d", 1);
    if (o->group > 1) DEF("RAMP_MV2_GROUP=%d", o->group);
    if (v->geom.bf16) DEF("RAMP_MV2_BF16=%d", 1);
    if (v->cfg.splitk > 1) DEF("RAMP_MV2_KSPLIT=%d", v->cfg.splitk);
    if (o->mcast) DEF("RAMP_MV2_MCAST=%d", o->mcast);
    if (o->tma_x) DEF("RAMP_MV2_TMA_X=%d", o->tma_x);
    if (o->w2box) DEF("RAMP_MV2_W2BOX256=%d", 1);
    if (o->cgather > 1) DEF("RAMP_MV2_CGATHER=%d", o->cgather);
    if (o->ggather > 1) DEF("RAMP_MV2_GGATHER=%d", o->ggather);
#undef DEF
    return n;
}

int ramp_moe_v2_defines(const ramp_moe_variant *v, char storage[][48], const char **defs) {
    const ramp_moe_v2_opts o = ramp_moe_v2_default_opts();
    return defines_opts(v, &o, 0, storage, defs);
}

void ramp_moe_v2_program_name_opts(const ramp_moe_variant *v, const ramp_moe_v2_opts *opts,
                                   char *buf, size_t size) {
    ramp_moe_v2_program_name_phase(v, opts, 0, buf, size);
}

void ramp_moe_v2_program_name_phase(const ramp_moe_variant *v, const ramp_moe_v2_opts *opts,
                                    int phase, char *buf, size_t size) {
    const ramp_moe_v2_opts o = effective_opts(v, opts);
    int n = snprintf(buf, size, "moe2-r%dw%ds%dp%dx%d-d%dh%dk%de%d-%s", v->cfg.rows,
                     v->cfg.width, v->cfg.stages, o.prefetch, o.pipe, v->geom.hidden,
                     v->geom.inter, v->geom.topk, v->geom.experts, v->geom.bf16 ? "bf16" : "fp8");
    if (o.diag && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "-diag%d", o.diag);
    if (o.tiled && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n,
                      o.tiled == 3 ? "-units" : o.tiled == 2 ? "-tiledk" : "-tiled");
    if (o.red4 && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "-red4");
    if (o.bulkred && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "-bulkred");
    if (o.w2box && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "-w2b256");
    if (o.group > 1 && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "-g%d", o.group);
    if (v->cfg.splitk > 1 && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "-ks%d", v->cfg.splitk);
    if (o.mcast && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "-mc");
    if (o.tma_x && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "-tx");
    if (o.cgather > 1 && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "-cg%d", o.cgather);
    if (o.ggather > 1 && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "-gg%d", o.ggather);
    if (o.split && phase == 2 && o.p2k > 1 && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "-k%d", o.p2k);
    if (o.split && phase == 2 && o.streamk && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "-sk");
    if (o.split && phase == 2 && o.pdl && n > 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, "-lw");
    if (o.split && n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, phase == 2 ? "-ph2" : "-ph1");
}

void ramp_moe_v2_program_name(const ramp_moe_variant *v, char *buf, size_t size) {
    ramp_moe_v2_program_name_opts(v, NULL, buf, size);
}

ramp_status ramp_moe_v2_compile(const ramp_moe_variant *v, ramp_jit_result **out) {
    return ramp_moe_v2_compile_opts(v, NULL, out);
}

ramp_status ramp_moe_v2_opts_check(const ramp_moe_variant *v, const ramp_moe_v2_opts *opts) {
    RAMP_CHECK(v, RAMP_ERR_INVALID_ARGUMENT, "NULL variant");
    RAMP_TRY(ramp_moe_v2_check(v));
    const ramp_moe_v2_opts o = effective_opts(v, opts);
    RAMP_CHECK(o.prefetch >= 0 && o.prefetch <= 16 && o.diag >= 0 && o.diag <= 9 &&
                   o.pipe >= 0 && o.pipe <= 2 && o.tiled >= 0 && o.tiled <= 3 &&
                   (o.red4 == 0 || o.red4 == 1) && o.split >= 0 && o.split <= 3 &&
                   o.p2k >= 0 && o.p2k <= 8 && o.p2k != 7 &&
                   o.group >= 0 && o.group <= 64 && o.cluster >= 0 && o.cluster <= 2 &&
                   (o.bulkred == 0 || o.bulkred == 1) && (o.mcast == 0 || o.mcast == 1) &&
                   o.tma_x >= 0 && o.tma_x <= 2 && (o.streamk == 0 || o.streamk == 1) &&
                   (o.w2box == 0 || o.w2box == 1) &&
                   (o.cgather == 0 || o.cgather == 1 || o.cgather == 2 || o.cgather == 4 ||
                    o.cgather == 8) &&
                   (o.ggather == 0 || o.ggather == 1 || o.ggather == 2 || o.ggather == 4 ||
                    o.ggather == 8) &&
                   (o.pdl == 0 || o.pdl == 1),
               RAMP_ERR_INVALID_ARGUMENT,
               "v2 options: prefetch %d (0..16), diag %d (0..9), pipe %d (0..2), tiled %d (0..3), "
               "red4 %d (0, 1), split %d (0..3), p2k %d (0..6, 8), group %d (0..64), "
               "cluster %d (0..2), bulkred %d (0, 1), mcast %d (0, 1), tma_x %d (0..2), "
               "streamk %d (0, 1), w2box %d (0, 1), cgather %d (0, 1, 2, 4, 8), "
               "ggather %d (0, 1, 2, 4, 8), pdl %d (0, 1)",
               o.prefetch, o.diag, o.pipe, o.tiled, o.red4, o.split, o.p2k, o.group, o.cluster,
               o.bulkred, o.mcast, o.tma_x, o.streamk, o.w2box, o.cgather, o.ggather, o.pdl);
    RAMP_CHECK(!o.pdl || o.split == 1, RAMP_ERR_UNSUPPORTED,
               "v2 pdl 1 (phase 2 by programmatic dependent launch) needs both launches "
               "(split 1), not split %d", o.split);
    if (o.cgather > 1 || o.ggather > 1) RAMP_TRY(cgather_check(v, &o));
    RAMP_CHECK(o.tiled != 3 || o.prefetch == 0, RAMP_ERR_UNSUPPORTED,
               "v2 weights in stage units (tiled 3): no L2 prefetch; not prefetch %d",
               o.prefetch);
    RAMP_CHECK(!o.w2box || (v->cfg.rows <= 64 && !v->geom.bf16 && !o.tiled && v->cfg.splitk <= 1),
               RAMP_ERR_UNSUPPORTED,
               "v2 W2 boxes of 256 rows (w2box 1): narrow FP8 tiles on row-major weights without "
               "split-K; not rows %d, bf16 %d, tiled %d, split-K %d",
               v->cfg.rows, v->geom.bf16, o.tiled, v->cfg.splitk);
    RAMP_CHECK(!o.streamk || (o.split == 1 && v->cfg.rows <= 64 && o.group <= 1 &&
                              v->cfg.splitk <= 1),
               RAMP_ERR_UNSUPPORTED,
               "v2 stream-K (streamk 1) runs phase 2 of a narrow split (rows <= 64, split 1, "
               "row-major tile order, no split-K); not rows %d, split %d, group %d, split-K %d",
               v->cfg.rows, o.split, o.group, v->cfg.splitk);
    RAMP_CHECK(o.diag != 9 || o.tma_x == 1, RAMP_ERR_UNSUPPORTED,
               "v2 timing diagnostic 9 (the token tile as one TMA box of x) needs tma_x 1");
    RAMP_CHECK(!o.tma_x || v->cfg.rows > 64, RAMP_ERR_UNSUPPORTED,
               "v2 token rows by TMA (tma_x 1) are built for wide tiles (rows 65..128), not "
               "rows %d", v->cfg.rows);
    /* narrow fused FP8 tiles too (session 45's experiment; the kernel's #error) */
    const int narrow_mc_ok = v->cfg.rows > 64 || (!v->geom.bf16 && !o.split &&
                                                  !v->cfg.two_phase && !o.w2box);
    RAMP_CHECK(!o.mcast || (narrow_mc_ok && v->cfg.splitk <= 1 && o.group <= 1 &&
                            (o.tiled == 0 || o.tiled == 3)),
               RAMP_ERR_UNSUPPORTED,
               "v2 multicast (mcast 1) runs wide tiles (rows 65..128) or narrow fused FP8 tiles "
               "(W2 in 128-row boxes) with row-major weights or stage units, the row-major tile "
               "order and no split-K; not rows %d, bf16 %d, split %d, two_phase %d, w2box %d, "
               "split-K %d, group %d, tiled %d",
               v->cfg.rows, v->geom.bf16, o.split, v->cfg.two_phase, o.w2box, v->cfg.splitk,
               o.group, o.tiled);
    if (o.bulkred) RAMP_TRY(ramp_moe_v2_bulkred_check(v, &o));
    RAMP_CHECK(!o.split || o.p2k <= v->geom.inter / 128, RAMP_ERR_UNSUPPORTED,
               "v2 split: p2k %d parts of h / 128 = %d K blocks", o.p2k, v->geom.inter / 128);
    RAMP_CHECK(!o.split || o.p2k <= 1 || (v->geom.inter / 128) % o.p2k == 0 || o.group <= 1,
               RAMP_ERR_UNSUPPORTED,
               "v2 split: p2k %d parts of unequal length (not dividing h / 128 = %d) run the "
               "row-major tile order, not groups of %d", o.p2k, v->geom.inter / 128, o.group);
    RAMP_CHECK(!o.split || o.p2k <= 5 || v->cfg.rows <= 64, RAMP_ERR_UNSUPPORTED,
               "v2 split: p2k %d with a wide tile (1..5 K parts)", o.p2k);
    /* a narrow split (session 14): what is built and tested */
    RAMP_CHECK(!o.split || v->cfg.rows > 64 ||
                   (!v->geom.bf16 && !o.bulkred && !o.red4 && !o.pipe && v->cfg.splitk <= 1),
               RAMP_ERR_UNSUPPORTED,
               "v2 split (two-phase) of a narrow tile (rows %d): FP8 without bulkred, red4, "
               "pipe or split-K (bf16 %d, bulkred %d, red4 %d, pipe %d, split-K %d)",
               v->cfg.rows, v->geom.bf16, o.bulkred, o.red4, o.pipe, v->cfg.splitk);
    RAMP_CHECK(v->cfg.splitk == 1 || o.group <= 1, RAMP_ERR_UNSUPPORTED,
               "v2 config r%d.w%d.s%d.k%d: split-K runs the row-major tile order only, not "
               "groups of %d", v->cfg.rows, v->cfg.width, v->cfg.stages, v->cfg.splitk, o.group);
    if (o.tiled) RAMP_TRY(ramp_moe_v2_tiled_check(&v->geom));
    RAMP_CHECK(o.tiled != 3 || v->geom.hidden % RAMP_MV2_CHUNK == 0, RAMP_ERR_UNSUPPORTED,
               "v2 stage units: d = %d is not a multiple of %d (W2's units are chunks of %d "
               "rows)", v->geom.hidden, RAMP_MV2_CHUNK, RAMP_MV2_CHUNK);
    RAMP_CHECK(!v->geom.bf16 || ((o.tiled == 0 || o.tiled == 3) && !o.red4 &&
                                 (!o.pipe || v->cfg.rows > 64)),
               RAMP_ERR_UNSUPPORTED,
               "v2 BF16: row-major weights or stage units, W2 unpermuted, and ping-pong (one "
               "stage's wgmmas in flight) in wide tiles only (tiled %d, red4 %d, pipe %d, rows %d)",
               o.tiled, o.red4,
               o.pipe, v->cfg.rows);
    return RAMP_OK;
}

ramp_moe_v2_opts ramp_moe_v2_weight_opts(int weight_units) {
    ramp_moe_v2_opts o = ramp_moe_v2_default_opts();
    if (weight_units) o.tiled = 3;
    return o;
}

ramp_status ramp_moe_v2_units_check(const ramp_config *c, const ramp_geometry *g) {
    RAMP_CHECK(c && g, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    const ramp_moe_variant v = {*c, *g, 0};
    const ramp_moe_v2_opts o = ramp_moe_v2_weight_opts(1);
    return ramp_moe_v2_opts_check(&v, &o);
}

ramp_status ramp_moe_v2_compile_phase(const ramp_moe_variant *v, const ramp_moe_v2_opts *opts,
                                      int phase, ramp_jit_result **out) {
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "NULL output");
    RAMP_TRY(ramp_moe_v2_opts_check(v, opts));
    const ramp_moe_v2_opts o = effective_opts(v, opts);
    char storage[RAMP_MOE_MAX_DEFINES][48];
    const char *defs[RAMP_MOE_MAX_DEFINES];
    char name[96];
    ramp_jit_request rq;
    memset(&rq, 0, sizeof rq);
    ramp_moe_v2_program_name_phase(v, &o, phase, name, sizeof name);
    rq.name = name;
    rq.source = "#include \"moe_v2.cuh\"\n";
    rq.defines = defs;
    rq.ndefines = defines_opts(v, &o, o.split ? (phase ? phase : 1) : 0, storage, defs);
    return ramp_jit_compile(&rq, out);
}

ramp_status ramp_moe_v2_compile_opts(const ramp_moe_variant *v, const ramp_moe_v2_opts *opts,
                                     ramp_jit_result **out) {
    return ramp_moe_v2_compile_phase(v, opts, 0, out);
}

ramp_status ramp_moe_v2_resources_of(const ramp_moe_variant *v, const ramp_jit_result *r,
                                     const ramp_device_limits *lim, ramp_resources *out) {
    RAMP_CHECK(v && r && lim && out, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    const ramp_kernel_report *k = ramp_jit_kernel(r, "ramp_moe_v2");
    RAMP_CHECK(k, RAMP_ERR_INTERNAL, "no ptxas report for ramp_moe_v2 in the compile log");
    ramp_moe_v2_layout l = ramp_moe_v2_layout_for(v);
    return ramp_resources_from_report(k, RAMP_MV2_THREADS, (int)l.total, lim, out);
}

ramp_status ramp_moe_v2_create_from(ramp_gpu *gpu, const ramp_moe_variant *v,
                                    const ramp_jit_result *jit, ramp_moe_v2_kernel **out) {
    return ramp_moe_v2_create_from_opts(gpu, v, NULL, jit, out);
}

ramp_status ramp_moe_v2_create_from_opts(ramp_gpu *gpu, const ramp_moe_variant *v,
                                         const ramp_moe_v2_opts *o, const ramp_jit_result *jit,
                                         ramp_moe_v2_kernel **out) {
    RAMP_CHECK(gpu && v && jit && out, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    RAMP_TRY(ramp_moe_v2_check(v));
    ramp_gpu_info info;
    RAMP_TRY(ramp_gpu_get_info(gpu, &info));
    /* CUtensorMap wants 128-byte alignment: aligned_alloc, not calloc */
    ramp_moe_v2_kernel *k = aligned_alloc(128, (sizeof *k + 127) / 128 * 128);
    RAMP_CHECK(k, RAMP_ERR_OUT_OF_MEMORY, "out of memory");
    memset(k, 0, sizeof *k);
    k->gpu = gpu;
    k->v = *v;
    const ramp_moe_v2_opts eo = effective_opts(v, o);
    k->layout = ramp_moe_v2_layout_for_opts(v, &eo);
    k->sms = info.limits.sms;
    k->tiled = eo.tiled;
    k->w2box = eo.w2box;
    k->tma_x = eo.tma_x == 1 && eo.diag == 9 ? 3 : eo.tma_x;
    ramp_status s = ramp_moe_v2_resources_of(v, jit, &info.limits, &k->res);
    if (s == RAMP_OK && !k->res.valid) {
        char name[64];
        ramp_config_name(&v->cfg, name, sizeof name);
        s = ramp_set_error(RAMP_ERR_UNSUPPORTED, __FILE__, __LINE__,
                           "v2 config %s cannot run: %s", name, k->res.why);
    }
    if (s == RAMP_OK) s = ramp_module_load(gpu, jit->cubin, jit->cubin_size, &k->module);
    if (s == RAMP_OK)
        s = ramp_module_kernel(k->module, "ramp_moe_v2", (int)k->layout.total, &k->kernel);
    k->mc = eo.mcast ? 2 : 1;
    k->gg = eo.ggather > 1 ? eo.ggather : 1;
    k->cg = eo.cgather > 1 ? eo.cgather : k->gg;
    k->ks = (v->cfg.splitk > 1 ? v->cfg.splitk : 1) * k->mc * k->cg;
    /* opts.cluster: an unsplit program launched in clusters too (timing);
     * ggather's groups are no cluster */
    const int cluster_ctas = k->ks / k->gg;
    k->launch_cluster = eo.cluster > cluster_ctas ? eo.cluster : cluster_ctas;
    k->clusters = k->sms / k->launch_cluster;
    if (s == RAMP_OK && k->launch_cluster > 1)
        s = ramp_moe_v2_cluster_cap(k->kernel, (int)k->layout.total, k->launch_cluster, k->sms,
                                    &k->clusters);
    k->split = eo.split;
    k->pdl2 = eo.pdl;
    k->p2k = eo.p2k > 1 ? eo.p2k : 1;
    k->streamk = eo.streamk;
    if (s == RAMP_OK && k->split) { /* phase 2: the down projection, its own program */
        ramp_jit_result *j2 = NULL;
        k->layout2 = ramp_moe_v2_layout_down_bf(v->cfg.rows, v->cfg.stages, v->geom.bf16);
        s = ramp_moe_v2_compile_phase(v, &eo, 2, &j2);
        if (s == RAMP_OK) s = ramp_module_load(gpu, j2->cubin, j2->cubin_size, &k->module2);
        if (s == RAMP_OK)
            s = ramp_module_kernel(k->module2, "ramp_moe_v2", (int)k->layout2.total, &k->kernel2);
        k->clusters2 = k->sms / k->ks;
        if (s == RAMP_OK && k->ks > 1)
            s = ramp_moe_v2_cluster_cap(k->kernel2, (int)k->layout2.total, k->ks, k->sms,
                                        &k->clusters2);
        ramp_jit_result_free(j2);
    }
    if (s == RAMP_OK && k->tma_x == 1) { /* the copy of x in tile order */
        char name[96], st[3][48];
        const char *defs[3];
        snprintf(name, sizeof name, "moe2-xtile-r%d-d%dk%d-%s", v->cfg.rows, v->geom.hidden,
                 v->geom.topk, v->geom.bf16 ? "bf16" : "fp8");
        snprintf(st[0], 48, "RAMP_ROWS=%d", v->cfg.rows);
        snprintf(st[1], 48, "RAMP_TOPK=%d", v->geom.topk);
        snprintf(st[2], 48, "RAMP_ROW_BYTES=%d", v->geom.hidden * (v->geom.bf16 ? 2 : 1));
        for (int i = 0; i < 3; i++) defs[i] = st[i];
        ramp_jit_request rq;
        memset(&rq, 0, sizeof rq);
        rq.name = name;
        rq.source = "#include \"moe_v2_xtile.cuh\"\n";
        rq.defines = defs;
        rq.ndefines = 3;
        ramp_jit_result *jx = NULL;
        s = ramp_jit_compile(&rq, &jx);
        if (s == RAMP_OK) s = ramp_module_load(gpu, jx->cubin, jx->cubin_size, &k->xt_module);
        if (s == RAMP_OK) s = ramp_module_kernel(k->xt_module, "ramp_moe_v2_xtile", 0, &k->xt_kernel);
        ramp_jit_result_free(jx);
    }
    /* (every program: the switch is a compile-time define the host does
     * not see, RAMP_JIT_DEFINES; the kernel leaves the words zero) */
    if (s == RAMP_OK) s = ramp_gpu_alloc(gpu, 16, &k->dyn);
    if (s == RAMP_OK) {
        static const uint32_t zero[4];
        s = ramp_gpu_upload(gpu, k->dyn, zero, sizeof zero);
    }
    if (s != RAMP_OK) {
        ramp_moe_v2_free(k);
        return s;
    }
    *out = k;
    return RAMP_OK;
}

ramp_status ramp_moe_v2_create(ramp_gpu *gpu, const ramp_moe_variant *v,
                               ramp_moe_v2_kernel **out) {
    return ramp_moe_v2_create_opts(gpu, v, NULL, out);
}

ramp_status ramp_moe_v2_create_opts(ramp_gpu *gpu, const ramp_moe_variant *v,
                                    const ramp_moe_v2_opts *o, ramp_moe_v2_kernel **out) {
    RAMP_CHECK(gpu && v && out, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    ramp_jit_result *r = NULL;
    RAMP_TRY(ramp_moe_v2_compile_opts(v, o, &r));
    ramp_status s = ramp_moe_v2_create_from_opts(gpu, v, o, r, out);
    ramp_jit_result_free(r);
    return s;
}

void ramp_moe_v2_free(ramp_moe_v2_kernel *k) {
    if (!k) return;
    if (k->xt) ramp_gpu_free(k->gpu, k->xt);
    if (k->gg_ws) ramp_gpu_free(k->gpu, k->gg_ws);
    if (k->dyn) ramp_gpu_free(k->gpu, k->dyn);
    ramp_module_free(k->xt_module);
    ramp_module_free(k->module);
    ramp_module_free(k->module2);
    free(k);
}

const ramp_resources *ramp_moe_v2_kernel_resources(const ramp_moe_v2_kernel *k) {
    return k ? &k->res : NULL;
}

unsigned ramp_moe_v2_grid(const ramp_moe_v2_kernel *k, int max_tiles) {
    /* in tiles, each run by ks CTAs (a cluster when ks = 2); with multicast
     * a tile is a pair of row tiles */
    const long long rt = k->mc > 1 ? ((long long)max_tiles + 1) / 2 : max_tiles;
    long long total = rt * (k->v.geom.inter / k->v.cfg.width / k->cg);
    /* (ggather: at most one resident wave, so that a group's blocks, which
     * wait for each other, are resident together) */
    const long long resident = (long long)k->clusters * k->launch_cluster / k->ks;
    if (total > resident && resident > 0) total = resident; /* resident; they stride */
    if (k->max_grid > 0 && total > k->max_grid / k->ks) total = k->max_grid / k->ks;
    if (total < 1) total = 1;
    if (total > 0x7FFFFFFFLL / k->ks) total = 0x7FFFFFFFLL / k->ks;
    /* whole clusters: with ks = 1 in clusters (opts.cluster) every CTA takes
     * tiles, so round down, keeping one cluster */
    long long ctas = total * k->ks, c = k->launch_cluster;
    ctas = ctas / c * c;
    return (unsigned)(ctas < c ? c : ctas);
}

ramp_status ramp_moe_v2_cluster_cap(const ramp_kernel *kernel, int smem, int ks, int sms,
                                    int *clusters) {
    *clusters = sms / ks;
    if (ks <= 1) return RAMP_OK;
    const unsigned block[3] = {RAMP_MV2_THREADS, 1, 1};
    int n = 0;
    /* a driver that cannot say (before CUDA 11.8): every SM pair, as
     * without clusters; its error is not the caller's */
    if (ramp_kernel_max_active_clusters(kernel, block, smem, ks, &n) != RAMP_OK) {
        ramp_clear_error();
        return RAMP_OK;
    }
    if (n > 0 && n < *clusters) *clusters = n;
    return RAMP_OK;
}

void ramp_moe_v2_set_max_grid(ramp_moe_v2_kernel *k, int blocks) {
    if (k) k->max_grid = blocks > 0 ? blocks : 0;
}

/* The maps of W13 [E * 2h][d] and W2 [E * d][h]: boxes of 128 bytes x 128
 * rows (two per 32 KB stage), row-major or pre-tiled as the program reads. */
static ramp_status build_maps(ramp_moe_v2_kernel *k, ramp_moe_u64 w13, ramp_moe_u64 w2) {
    /* stage units (tiled 3) are read by bulk copies: the maps are never used */
    ramp_status s = ramp_moe_v2_maps_build_box(&k->v.geom, w13, w2, k->tiled == 3 ? 0 : k->tiled,
                                               k->w2box ? 256 : RAMP_MV2_BOX_ROWS, &k->maps);
    k->map_w13 = s == RAMP_OK ? w13 : 0;
    k->map_w2 = s == RAMP_OK ? w2 : 0;
    return s;
}

ramp_status ramp_moe_v2_maps_build(const ramp_geometry *g, ramp_devptr w13, ramp_devptr w2,
                                   int tiled, ramp_moe_v2_maps *out) {
    return ramp_moe_v2_maps_build_box(g, w13, w2, tiled, RAMP_MV2_BOX_ROWS, out);
}

ramp_status ramp_moe_v2_maps_build_box(const ramp_geometry *g, ramp_devptr w13, ramp_devptr w2,
                                       int tiled, int w2_box_rows, ramp_moe_v2_maps *out) {
    RAMP_CHECK(g && out, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    RAMP_CHECK(w2_box_rows == RAMP_MV2_BOX_ROWS || (w2_box_rows == 256 && !tiled),
               RAMP_ERR_INVALID_ARGUMENT,
               "v2 maps: W2 boxes of %d rows (128, or 256 on row-major weights; tiled %d)",
               w2_box_rows, tiled);
    if (tiled) {
        RAMP_TRY(ramp_moe_v2_tiled_check(g));
        const int kmajor = tiled == 2;
        ramp_tmap_tiled t = {w13, (uint64_t)g->experts * 2 * g->inter, (uint64_t)g->hidden,
                             kmajor};
        RAMP_TRY(ramp_tmap_tiled_encode(&t, &out->w13));
        t = (ramp_tmap_tiled){w2, (uint64_t)g->experts * g->hidden, (uint64_t)g->inter, kmajor};
        return ramp_tmap_tiled_encode(&t, &out->w2);
    }
    ramp_tmap_2d t;
    memset(&t, 0, sizeof t);
    t.elem_bytes = g->bf16 ? 2 : 1;
    t.box_rows = RAMP_MV2_BOX_ROWS;
    t.box_cols = RAMP_MV2_KB / t.elem_bytes; /* 128 bytes of K */
    t.base = w13;
    t.rows = (uint64_t)g->experts * 2 * g->inter;
    t.cols = (uint64_t)g->hidden;
    t.row_stride = (uint64_t)g->hidden * t.elem_bytes;
    RAMP_TRY(ramp_tmap_2d_encode(&t, &out->w13));
    t.base = w2;
    t.rows = (uint64_t)g->experts * g->hidden;
    t.cols = (uint64_t)g->inter;
    t.row_stride = (uint64_t)g->inter * t.elem_bytes;
    t.box_rows = (uint32_t)w2_box_rows;
    return ramp_tmap_2d_encode(&t, &out->w2);
}

ramp_status ramp_moe_v2_tiled_check(const ramp_geometry *g) {
    RAMP_CHECK(g, RAMP_ERR_INVALID_ARGUMENT, "NULL geometry");
    RAMP_CHECK(g->experts >= 1 && g->inter >= 1 && g->hidden >= 1, RAMP_ERR_INVALID_ARGUMENT,
               "v2 tiled weights: geometry E=%d h=%d d=%d", g->experts, g->inter, g->hidden);
    /* W13 boxes start at rows e * 2h + slice * w + 128 p (+ h) and K 128 kb;
     * W2 boxes at rows e * d + 256 chunk (+ 128) and K slice * w + 128 kk */
    RAMP_CHECK(g->inter % RAMP_MV2_BOX_ROWS == 0, RAMP_ERR_UNSUPPORTED,
               "v2 tiled weights: h = %d is not a multiple of %d, so W13's up rows (at h) and "
               "W2's rows of %d bytes do not fall on 128 x 128-byte blocks", g->inter,
               RAMP_MV2_BOX_ROWS, g->inter);
    RAMP_CHECK(g->hidden % RAMP_MV2_BOX_ROWS == 0, RAMP_ERR_UNSUPPORTED,
               "v2 tiled weights: d = %d is not a multiple of %d, so W2's expert rows (at e * d) "
               "and W13's rows of %d bytes do not fall on 128 x 128-byte blocks", g->hidden,
               RAMP_MV2_BOX_ROWS, g->hidden);
    return RAMP_OK;
}

ramp_status ramp_moe_v2_tile_matrix(const uint8_t *src, uint64_t rows, uint64_t cols,
                                    uint8_t *dst) {
    return ramp_moe_v2_tile_matrix_order(src, rows, cols, 0, dst);
}

ramp_status ramp_moe_v2_tile_matrix_order(const uint8_t *src, uint64_t rows, uint64_t cols,
                                          int kmajor, uint8_t *dst) {
    enum { B = RAMP_MV2_BOX_ROWS }; /* rows and bytes of a block (RAMP_MV2_KB too) */
    RAMP_CHECK(src && dst, RAMP_ERR_INVALID_ARGUMENT, "v2 tile: NULL matrix");
    RAMP_CHECK(src != dst, RAMP_ERR_INVALID_ARGUMENT,
               "v2 tile: source and destination are the same buffer (no in-place packing)");
    RAMP_CHECK(rows >= B && cols >= B && rows % B == 0 && cols % B == 0,
               RAMP_ERR_INVALID_ARGUMENT,
               "v2 tile: %llu x %llu bytes; both must be positive multiples of %d",
               (unsigned long long)rows, (unsigned long long)cols, B);
    const uint64_t kblocks = cols / B, rblocks = rows / B;
    /* block (rb, kb) at step_r * rb + step_k * kb blocks */
    const uint64_t step_r = kmajor ? 1 : kblocks, step_k = kmajor ? rblocks : 1;
    for (uint64_t row = 0; row < rows; row++) {
        /* row `row` lands as row row % 128 of each block of row block row / 128 */
        uint8_t *d = dst + ((row / B) * step_r * B + row % B) * B;
        const uint8_t *s = src + row * cols;
        for (uint64_t kb = 0; kb < kblocks; kb++) memcpy(d + kb * step_k * B * B, s + kb * B, B);
    }
    return RAMP_OK;
}

/* Stage units (tiled 3): for each expert e (expert_bytes apart in src) and
 * group q (0..groups-1) of its rows, and each K block kb of its cols-byte
 * rows, one 32 KB unit of two 128-row halves: rows 128 q .. (W2's 256-row
 * chunk: 256 q .., its second half 128 rows later; W13's row block q of
 * gate, then of up, h * d bytes later), each byte (r, c) of a half at
 * r * 128 + ((c / 16) ^ (r % 8)) * 16 + c % 16, the 128-byte swizzle that
 * TMA would apply, so one bulk copy lands a ring slot's image. */
static void pack_units(const uint8_t *src, uint64_t experts, uint64_t groups,
                       uint64_t rows_per_group, uint64_t half, uint64_t cols,
                       uint64_t expert_bytes, uint8_t *dst) {
    const uint64_t kblocks = cols / 128;
    for (uint64_t e = 0; e < experts; e++)
        for (uint64_t q = 0; q < groups; q++)
            for (uint64_t kb = 0; kb < kblocks; kb++) {
                uint8_t *u = dst + ((e * groups + q) * kblocks + kb) * RAMP_MV2_A_BYTES;
                for (int hf = 0; hf < 2; hf++) {
                    const uint8_t *s = src + e * expert_bytes + q * rows_per_group * cols +
                                       (uint64_t)hf * half + kb * 128;
                    for (uint64_t r = 0; r < 128; r++)
                        for (uint64_t c = 0; c < 8; c++)
                            memcpy(u + hf * 16384 + r * 128 + ((c ^ (r & 7)) << 4),
                                   s + r * cols + c * 16, 16);
                }
            }
}

ramp_status ramp_moe_v2_tile_weights(const ramp_geometry *g, const uint8_t *w13,
                                     const uint8_t *w2, uint8_t *w13_tiled, uint8_t *w2_tiled) {
    return ramp_moe_v2_tile_weights_order(g, 1, w13, w2, w13_tiled, w2_tiled);
}

ramp_status ramp_moe_v2_tile_weights_order(const ramp_geometry *g, int tiled, const uint8_t *w13,
                                           const uint8_t *w2, uint8_t *w13_tiled,
                                           uint8_t *w2_tiled) {
    RAMP_TRY(ramp_moe_v2_tiled_check(g));
    RAMP_CHECK(tiled >= 1 && tiled <= 3, RAMP_ERR_INVALID_ARGUMENT,
               "v2 tile weights: tiled %d (1 row block-major, 2 K block-major, 3 stage units)",
               tiled);
    RAMP_CHECK(!w13 == !w13_tiled && !w2 == !w2_tiled && (w13 || w2), RAMP_ERR_INVALID_ARGUMENT,
               "v2 tile weights: give W13 and its destination, W2 and its destination, or both "
               "pairs");
    RAMP_CHECK(!g->bf16 || tiled == 3, RAMP_ERR_UNSUPPORTED,
               "v2 tile weights: a BF16 layer's weights go in stage units (tiled 3) only, not "
               "tiled %d", tiled);
    const uint64_t E = (uint64_t)g->experts, h = (uint64_t)g->inter, d = (uint64_t)g->hidden;
    if (tiled == 3) {
        const uint64_t eb = g->bf16 ? 2 : 1; /* a K block is 128 bytes either way */
        RAMP_CHECK(d % RAMP_MV2_CHUNK == 0, RAMP_ERR_UNSUPPORTED,
                   "v2 stage units: d = %llu is not a multiple of %d", (unsigned long long)d,
                   RAMP_MV2_CHUNK);
        RAMP_CHECK((!w13 || w13 != w13_tiled) && (!w2 || w2 != w2_tiled),
                   RAMP_ERR_INVALID_ARGUMENT,
                   "v2 stage units: source and destination are the same buffer");
        if (w13) pack_units(w13, E, h / 128, 128, h * d * eb, d * eb, 2 * h * d * eb, w13_tiled);
        if (w2)
            pack_units(w2, E, d / RAMP_MV2_CHUNK, RAMP_MV2_CHUNK, 128 * h * eb, h * eb,
                       d * h * eb, w2_tiled);
        return RAMP_OK;
    }
    if (w13) RAMP_TRY(ramp_moe_v2_tile_matrix_order(w13, E * 2 * h, d, tiled == 2, w13_tiled));
    if (w2) RAMP_TRY(ramp_moe_v2_tile_matrix_order(w2, E * d, h, tiled == 2, w2_tiled));
    return RAMP_OK;
}

int ramp_moe_v2_red4_row(int s) {
    const int t = s >> 6, w = (s >> 4) & 3, hh = (s >> 3) & 1, g = s & 7;
    return 4 * (8 * w + g) + 2 * t + hh;
}

ramp_status ramp_moe_v2_permute_w2(const ramp_geometry *g, const uint8_t *w2, uint8_t *dst) {
    RAMP_CHECK(g && w2 && dst, RAMP_ERR_INVALID_ARGUMENT, "v2 permute W2: NULL argument");
    RAMP_CHECK(w2 != dst, RAMP_ERR_INVALID_ARGUMENT,
               "v2 permute W2: source and destination are the same buffer");
    RAMP_CHECK(g->experts > 0 && g->inter > 0 && g->hidden > 0 && g->hidden % 128 == 0,
               RAMP_ERR_UNSUPPORTED,
               "v2 permute W2: d = %d is not a positive multiple of 128 (E = %d, h = %d)",
               g->hidden, g->experts, g->inter);
    const uint64_t rows = (uint64_t)g->experts * (uint64_t)g->hidden, cols = (uint64_t)g->inter;
    for (uint64_t r = 0; r < rows; r++) {
        const uint64_t src = (r & ~(uint64_t)127) + (uint64_t)ramp_moe_v2_red4_row((int)(r & 127));
        memcpy(dst + r * cols, w2 + src * cols, cols);
    }
    return RAMP_OK;
}

ramp_status ramp_moe_v2_map_x(const ramp_geometry *g, ramp_devptr base, int rows,
                             int box_rows, CUtensorMap *out) {
    RAMP_CHECK(g && base && rows > 0 && (box_rows == 1 || box_rows == 128) && out,
               RAMP_ERR_INVALID_ARGUMENT, "v2 token map: base 0x%llx, rows %d, box rows %d",
               (unsigned long long)base, rows, box_rows);
    ramp_tmap_2d t;
    memset(&t, 0, sizeof t);
    t.elem_bytes = g->bf16 ? 2 : 1;
    t.box_rows = box_rows;
    t.box_cols = RAMP_MV2_KB / t.elem_bytes;
    t.base = base;
    t.rows = (uint64_t)rows;
    t.cols = (uint64_t)g->hidden;
    t.row_stride = (uint64_t)g->hidden * t.elem_bytes;
    return ramp_tmap_2d_encode(&t, out);
}

ramp_status ramp_moe_v2_map_h(const ramp_geometry *g, int rows, ramp_devptr ws, int tiles,
                             CUtensorMap *out) {
    RAMP_CHECK(g && ws && tiles > 0 && out, RAMP_ERR_INVALID_ARGUMENT,
               "v2 intermediate map: ws 0x%llx, tiles %d", (unsigned long long)ws, tiles);
    ramp_tmap_2d t;
    memset(&t, 0, sizeof t);
    t.elem_bytes = g->bf16 ? 2 : 1;
    t.box_rows = 128;
    t.box_cols = RAMP_MV2_KB / t.elem_bytes;
    t.base = ws;
    t.rows = 128;
    t.cols = (uint64_t)g->inter;
    t.row_stride = (uint64_t)g->inter * t.elem_bytes;
    t.planes = (uint64_t)tiles; /* row tile r's 128 rows are plane r */
    t.plane_stride = (uint64_t)ramp_moe_v2_ws_layout_rows(0, rows, g->inter, g->bf16).tile;
    return ramp_tmap_2d_encode(&t, out);
}

/* tma_x 1: the copy of x in tile order (moe_v2_xtile.cuh) into k->xt, grown
 * to p->max_tiles row tiles when smaller (an allocation: make the first
 * launch outside a stream capture), queued before the MoE kernel. */
static ramp_status xtile_launch(ramp_moe_v2_kernel *k, const ramp_moe_params *p,
                                ramp_stream stream) {
    const size_t row_bytes = (size_t)k->v.geom.hidden * (k->v.geom.bf16 ? 2 : 1);
    const size_t need = (size_t)p->max_tiles * 128 * row_bytes;
    if (need > k->xt_bytes) {
        RAMP_TRY(ramp_gpu_free(k->gpu, k->xt));
        k->xt = 0;
        k->xt_bytes = 0;
        k->map_x = 0;
        RAMP_TRY(ramp_gpu_alloc(k->gpu, need, &k->xt));
        k->xt_bytes = need;
    }
    if (p->max_tiles == 0) return RAMP_OK;
    ramp_moe_params copy = *p;
    ramp_devptr xt = k->xt;
    void *args[2] = {&copy, &xt};
    const unsigned grid[3] = {(unsigned)(p->max_tiles * 128 / (RAMP_MV2_XT_THREADS / 32)), 1, 1};
    const unsigned block[3] = {RAMP_MV2_XT_THREADS, 1, 1};
    return ramp_kernel_launch(k->xt_kernel, grid, block, 0, stream, args);
}

ramp_status ramp_moe_v2_launch(ramp_moe_v2_kernel *k, const ramp_moe_params *p,
                               ramp_stream stream) {
    RAMP_CHECK(k && p, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    RAMP_CHECK(sizeof(ramp_moe_params) == RAMP_MOE_PARAMS_BYTES, RAMP_ERR_INTERNAL,
               "ramp_moe_params is %zu bytes, expected %d", sizeof(ramp_moe_params),
               RAMP_MOE_PARAMS_BYTES);
    RAMP_CHECK(p->max_tiles >= 0 && p->num_tokens >= 0, RAMP_ERR_INVALID_ARGUMENT,
               "max_tiles = %d, num_tokens = %d", p->max_tiles, p->num_tokens);
    RAMP_CHECK(p->x && p->w13 && p->w2 && p->topk_weights && p->sorted_ids && p->tile_expert &&
                   p->num_tiles && p->out,
               RAMP_ERR_INVALID_ARGUMENT, "a required device pointer is 0");
    RAMP_CHECK(k->v.geom.bf16 || (p->x_scale && p->w13_scale && p->w2_scale),
               RAMP_ERR_INVALID_ARGUMENT, "an FP8 layer's x_scale, w13_scale or w2_scale is 0");
    RAMP_CHECK(!k->split || p->ws, RAMP_ERR_INVALID_ARGUMENT,
               "v2 split: prm.ws (the intermediate, %lld bytes) is 0",
               ramp_moe_v2_ws_layout_rows(p->max_tiles, k->v.cfg.rows, k->v.geom.inter,
                                          k->v.geom.bf16).total);
    /* every v2 program adds float4s (RAMP_MV2_OUT4, red4, wide tiles) or
     * bulk reductions of 16-byte rows */
    RAMP_CHECK(p->out % 16 == 0, RAMP_ERR_INVALID_ARGUMENT,
               "v2: out (0x%llx) must be 16-byte aligned (the kernel adds float4s)",
               (unsigned long long)p->out);
    if (p->w13 != k->map_w13 || p->w2 != k->map_w2) RAMP_TRY(build_maps(k, p->w13, p->w2));
    if (k->tma_x == 1) RAMP_TRY(xtile_launch(k, p, stream));
    if (k->tma_x == 1 && k->split && p->max_tiles > 0 &&
        (p->ws != k->map_h || p->max_tiles != k->map_h_tiles)) {
        k->map_h = 0;
        RAMP_TRY(ramp_moe_v2_map_h(&k->v.geom, k->v.cfg.rows, p->ws, p->max_tiles, &k->maps.h));
        k->map_h = p->ws;
        k->map_h_tiles = p->max_tiles;
    }
    const ramp_moe_u64 xbase = k->tma_x == 1 ? k->xt : p->x;
    const int xrows = k->tma_x == 1 ? p->max_tiles * 128 : p->num_tokens;
    if (k->tma_x && xrows > 0 && (xbase != k->map_x || xrows != k->map_m)) {
        k->map_x = 0; /* a row, or a tile's */
        RAMP_TRY(ramp_moe_v2_map_x(&k->v.geom, xbase, xrows, k->tma_x == 2 ? 1 : 128,
                                   &k->maps.x));
        k->map_x = xbase;
        k->map_m = xrows;
    }
    unsigned grid[3] = {ramp_moe_v2_grid(k, p->max_tiles), 1, 1};
    unsigned block[3] = {RAMP_MV2_THREADS, 1, 1};
    ramp_moe_params copy = *p;
    copy.ws_count = k->dyn; /* (unless the exchange's, below: v2 reads it for nothing else) */
    if (k->gg > 1) { /* the workspace of the exchange, its counters zeroed once */
        if (p->max_tiles > k->gg_tiles) {
            const ramp_moe_v2_gg_ws gw = ramp_moe_v2_gg_ws_of(
                p->max_tiles, (k->v.cfg.rows + 7) / 8 * 8, k->v.cfg.width, k->v.geom.inter, k->gg);
            if (k->gg_ws) ramp_gpu_free(k->gpu, k->gg_ws);
            k->gg_ws = 0;
            k->gg_tiles = 0;
            RAMP_TRY(ramp_gpu_alloc(k->gpu, (size_t)gw.total, &k->gg_ws));
            RAMP_TRY(ramp_gpu_fill32_async(k->gpu, k->gg_ws, 0, (size_t)gw.total / 4, stream));
            k->gg_tiles = p->max_tiles;
        }
        copy.ws = k->gg_ws;
        copy.ws_count = k->gg_ws + (ramp_devptr)ramp_moe_v2_gg_ws_of(
            k->gg_tiles, (k->v.cfg.rows + 7) / 8 * 8, k->v.cfg.width, k->v.geom.inter,
            k->gg).counters;
    }
    void *args[2] = {&copy, &k->maps};
    if (k->split != 3)
        RAMP_TRY(ramp_kernel_launch_ex(k->kernel, grid, block, (int)k->layout.total, stream,
                                       args, 0, k->launch_cluster));
    if (!k->split || k->split == 2) return RAMP_OK;
    /* phase 2: tiles (row tile, 256-row chunk of d, K part); with multicast
     * (pairs of row tiles, two CTAs each) in whole clusters */
    if (k->mc > 1) {
        long long t2 = ((long long)p->max_tiles + 1) / 2 *
                       (k->v.geom.hidden / RAMP_MV2_CHUNK) * k->p2k;
        if (t2 > k->clusters2 && k->clusters2 > 0) t2 = k->clusters2;
        if (k->max_grid > 0 && t2 > k->max_grid / k->ks) t2 = k->max_grid / k->ks;
        grid[0] = (unsigned)(t2 < 1 ? k->ks : t2 * k->ks);
        return ramp_kernel_launch_ex(k->kernel2, grid, block, (int)k->layout2.total, stream,
                                     args, k->pdl2, k->ks);
    }
    /* stream-K: a unit is a K block, so every block has work down to one unit */
    long long g2 = (long long)p->max_tiles * (k->v.geom.hidden / RAMP_MV2_CHUNK) *
                   (k->streamk ? k->v.geom.inter / 128 : k->p2k);
    if (g2 > k->sms && k->sms > 0) g2 = k->sms;
    if (k->max_grid > 0 && g2 > k->max_grid) g2 = k->max_grid;
    grid[0] = (unsigned)(g2 < 1 ? 1 : g2);
    return ramp_kernel_launch_ex(k->kernel2, grid, block, (int)k->layout2.total, stream, args,
                                 k->pdl2, 1);
}
