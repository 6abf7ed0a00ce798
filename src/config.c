/*
 * config.c - the fused kernel's configuration space: readable names, the
 * resource estimate of each configuration on a geometry, and the list of
 * configurations that fit an H200.
 *
 * The space (DESIGN.md, "The kernel"):
 *   rows per tile b  {2,4,6,8,12,16,24,32,48,64}
 *   slice width w    {128,256,512}, dividing the per-GPU h
 *   pipeline depth   {2,3,4} (a name may say up to 6: hand-made menus)
 *   launch           plain, persistent, persistent with grouped tile order
 *   split-K          1, or 2 for d >= 4096 with b <= 8 (few tokens, long K)
 * Grouped order only changes anything under a persistent tile scheduler, so
 * it is not offered on a plain grid.
 *
 * Resources: shared memory and threads are the v1 kernel's own layout
 * (kernels/moe_v1_params.h, the function the launcher sizes launches with),
 * so they are exact. Registers are per-rows-class upper bounds read off
 * ptxas (NVRTC 13.0, sm_90a) over every FP8 configuration of DeepSeek-V3,
 * OLMoE and Qwen3-30B on EP8 (tests/test_moe_compile.c checks them on every
 * CI run); the GPU runtime reports the exact count of a compiled kernel
 * (ramp_moe_v1_resources, measured = 1).
 *
 * Kernel v2 (kernels/moe_v2.cuh) runs a part of this space (plain launch,
 * no grouped order; FP8 or BF16): ramp_config_space_for filters the
 * space with the kernel's own check (ramp_moe_v2_check), so a v2 dataset
 * holds only configurations v2 can time. v2 adds its wide tiles: rows 128
 * (kernels/moe_v2_wide.cuh), fused or in two launches (two_phase 1, 2, 4:
 * the down projection's K in that many parts), stages 3 and 4 (the
 * measured optimum, moe_v2.md; 2 left out to keep the sweeps short). Its
 * split-K is its own (a cluster of two CTAs per tile, moe_v2.md session 12,
 * for small loads of small experts, where v1's d >= 4096 rule does not
 * apply): rows {4, 8, 16, 24, 32} x widths {128, 256} x 4 stages, split 2,
 * in place of v1's split-K entries. FP8 layers also get narrow tiles in two
 * launches: rows {16, 32, 64} x width 128 x 4 stages, the down projection's
 * K in 4 or 8 parts (where they divide h / 128). They pay where h is long
 * (Mixtral-8x22B's 16,384: 128 slices of 128 each adding into the same
 * output rows; moe_v2.md session 14); elsewhere they are what a
 * deterministic menu (two-phase entries only) has for small loads, offered
 * since session 21 (DeepSeek-V3's h = 2,048, OLMoE's 1,024).
 * ramp_config_resources gives a wide configuration v2's own layout, one
 * block per SM.
 */
#include "internal.h"
#include "moe_v2.h" /* ramp_moe_v1_check, ramp_moe_v2_check: what each kernel runs */

#include "../kernels/moe_v1_params.h"

#include <string.h>

static const int ROWS[] = {2, 4, 6, 8, 12, 16, 24, 32, 48, 64};
static const int WIDTHS[] = {128, 256, 512};
static const int STAGES[] = {2, 3, 4}; /* the spaces' */
/* A name may say up to 6 stages (both kernels build them where shared memory
 * allows; ramp_config_valid says where): deeper rings for experiments and
 * hand-made menus (session 46), outside the spaces the datasets time. */
#define PARSE_MAX_STAGES 6
#define WIDE_ROWS 128                           /* kernel v2 only */
static const int WIDE_STAGES[] = {3, 4};
static const int TWO_PHASE[] = {0, 1, 2, 4};    /* fused; two launches, K parts */
#define WIDE_VARIANTS 3 /* each wide tile plain, .tx and .mc.tx */
static const int KS_ROWS[] = {4, 8, 16, 24, 32}; /* v2's split-K (cluster of 2) */
static const int KS_WIDTHS[] = {128, 256};
#define KS_STAGES 4
static const int NS_ROWS[] = {16, 32, 64}; /* v2's narrow two-phase tiles */
static const int NS_PARTS[] = {4, 8};
#define NS_WIDTH 128
#define NS_STAGES 4
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

void ramp_device_limits_h200(ramp_device_limits *out) {
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "NVIDIA H200 (nominal)");
    out->sms = 132;
    out->smem_per_block = 232448;
    out->smem_per_sm = 233472;
    out->regs_per_sm = 65536;
    out->max_threads_per_sm = 2048;
    out->max_blocks_per_sm = 32;
}

char *ramp_config_name(const ramp_config *c, char *buf, size_t size) {
    int n = snprintf(buf, size, "r%d.w%d.s%d%s%s", c->rows, c->width,
                     c->stages, c->persistent ? ".persist" : "",
                     c->grouped ? ".grp" : "");
    if (c->splitk > 1 && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ".k%d", c->splitk);
    if (c->two_phase > 0 && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ".ph2");
    if (c->two_phase > 1 && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ".dk%d", c->two_phase);
    if (c->mcast && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ".mc");
    if (c->tma_x && n >= 0 && (size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, ".tx");
    if (c->ggather > 1 && n >= 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, ".gg%d", c->ggather);
    return buf;
}

int ramp_config_max_waves(ramp_kernel_version k, const ramp_config *c) {
    return k == RAMP_KERNEL_V2 && c && c->splitk > 1 ? 1 : 0;
}

int ramp_config_equal(const ramp_config *a, const ramp_config *b) {
    return a->rows == b->rows && a->width == b->width &&
           a->stages == b->stages && a->persistent == b->persistent &&
           a->grouped == b->grouped && a->splitk == b->splitk &&
           a->two_phase == b->two_phase && a->mcast == b->mcast && a->tma_x == b->tma_x &&
           a->ggather == b->ggather;
}

static int in_list(int v, const int *list, int n) {
    for (int i = 0; i < n; i++)
        if (list[i] == v) return 1;
    return 0;
}

/* Reads a positive decimal number at *p; advances *p. */
static int read_number(const char **p, int *value) {
    const char *s = *p;
    long v = 0;
    if (*s < '0' || *s > '9') return 0;
    while (*s >= '0' && *s <= '9' && v < 100000) v = v * 10 + (*s++ - '0');
    *value = (int)v;
    *p = s;
    return 1;
}

ramp_status ramp_config_parse(const char *text, ramp_config *out) {
    RAMP_CHECK(text && out, RAMP_ERR_INVALID_ARGUMENT, "config name is NULL");
    ramp_config c = {0, 0, 0, 0, 0, 1, 0, 0, 0, 0};
    const char *p = text;
    const char *form = "expected r<rows>.w<width>.s<stages>[.persist][.grp][.k<split>]"
                       "[.ph2[.dk<parts>]][.mc][.tx][.gg<blocks>], e.g. r16.w256.s4.persist "
                       "or r128.w512.s3.ph2.dk2";
    RAMP_CHECK(*p == 'r' && (p++, read_number(&p, &c.rows)) && *p == '.',
               RAMP_ERR_INVALID_ARGUMENT, "config '%s': %s", text, form);
    p++;
    RAMP_CHECK(*p == 'w' && (p++, read_number(&p, &c.width)),
               RAMP_ERR_INVALID_ARGUMENT, "config '%s': %s", text, form);
    RAMP_CHECK(*p == '.' && p[1] == 's' && (p += 2, read_number(&p, &c.stages)),
               RAMP_ERR_INVALID_ARGUMENT, "config '%s': %s", text, form);
    if (strncmp(p, ".persist", 8) == 0) { c.persistent = 1; p += 8; }
    if (strncmp(p, ".grp", 4) == 0) { c.grouped = 1; p += 4; }
    if (strncmp(p, ".k", 2) == 0) {
        p += 2;
        RAMP_CHECK(read_number(&p, &c.splitk), RAMP_ERR_INVALID_ARGUMENT,
                   "config '%s': %s", text, form);
    }
    if (strncmp(p, ".ph2", 4) == 0) {
        c.two_phase = 1;
        p += 4;
        if (strncmp(p, ".dk", 3) == 0) {
            p += 3;
            RAMP_CHECK(read_number(&p, &c.two_phase), RAMP_ERR_INVALID_ARGUMENT,
                       "config '%s': %s", text, form);
            RAMP_CHECK(c.two_phase >= 2 && c.two_phase <= 8 && c.two_phase != 7,
                       RAMP_ERR_INVALID_ARGUMENT,
                       "config '%s': .dk%d: the down projection's K parts must be 2..6 or 8 "
                       "(one part: no .dk)", text, c.two_phase);
        }
    }
    if (strncmp(p, ".mc", 3) == 0) {
        c.mcast = 1;
        p += 3;
    }
    if (strncmp(p, ".tx", 3) == 0) {
        c.tma_x = 1;
        p += 3;
    }
    if (strncmp(p, ".gg", 3) == 0) {
        p += 3;
        RAMP_CHECK(read_number(&p, &c.ggather), RAMP_ERR_INVALID_ARGUMENT,
                   "config '%s': %s", text, form);
        RAMP_CHECK(c.ggather == 2 || c.ggather == 4 || c.ggather == 8, RAMP_ERR_INVALID_ARGUMENT,
                   "config '%s': .gg%d: the gather's groups are 2, 4 or 8 blocks", text,
                   c.ggather);
    }
    RAMP_CHECK(*p == '\0', RAMP_ERR_INVALID_ARGUMENT,
               "config '%s': unexpected '%s'; %s", text, p, form);
    RAMP_CHECK(!c.mcast || (c.rows == WIDE_ROWS && c.splitk == 1), RAMP_ERR_INVALID_ARGUMENT,
               "config '%s': .mc (weights by TMA multicast to two CTAs) needs the wide tile, "
               "rows %d, without split-K", text, WIDE_ROWS);
    RAMP_CHECK(!c.tma_x || (c.rows == WIDE_ROWS && c.splitk == 1), RAMP_ERR_INVALID_ARGUMENT,
               "config '%s': .tx (token rows by TMA from a copy in tile order) needs the wide "
               "tile, rows %d, without split-K", text, WIDE_ROWS);
    RAMP_CHECK(!c.ggather || (c.rows <= 64 && c.splitk == 1 && !c.two_phase && !c.persistent),
               RAMP_ERR_INVALID_ARGUMENT,
               "config '%s': .gg (the gather through global memory) is a narrow fused tile's: "
               "rows <= 64, one launch, no split-K or persistent grid", text);
    RAMP_CHECK(in_list(c.rows, ROWS, COUNT(ROWS)) || c.rows == WIDE_ROWS,
               RAMP_ERR_INVALID_ARGUMENT,
               "config '%s': rows %d not in {2,4,6,8,12,16,24,32,48,64} or %d (v2's wide tile)",
               text, c.rows, WIDE_ROWS);
    RAMP_CHECK(!c.two_phase || c.rows == WIDE_ROWS || in_list(c.rows, NS_ROWS, COUNT(NS_ROWS)),
               RAMP_ERR_INVALID_ARGUMENT,
               "config '%s': .ph2 (two launches) needs the wide tile, rows %d, or rows 16, 32 "
               "or 64", text, WIDE_ROWS);
    RAMP_CHECK(in_list(c.width, WIDTHS, COUNT(WIDTHS)), RAMP_ERR_INVALID_ARGUMENT,
               "config '%s': width %d not in {128,256,512}", text, c.width);
    RAMP_CHECK(c.stages >= 2 && c.stages <= PARSE_MAX_STAGES, RAMP_ERR_INVALID_ARGUMENT,
               "config '%s': stages %d not in 2..%d", text, c.stages, PARSE_MAX_STAGES);
    RAMP_CHECK(c.splitk == 1 || c.splitk == 2 || c.splitk == 4,
               RAMP_ERR_INVALID_ARGUMENT, "config '%s': split-K %d not in {1,2,4}",
               text, c.splitk);
    RAMP_CHECK(!c.grouped || c.persistent, RAMP_ERR_INVALID_ARGUMENT,
               "config '%s': .grp needs .persist (grouped order is a tile "
               "scheduler's)", text);
    *out = c;
    return RAMP_OK;
}

/* Upper bound of ptxas's register count for the v1 kernel (see the file
 * comment): the rows class sets the accumulator and warp layout; split-K
 * adds its workspace addressing. */
int ramp_config_register_bound(const ramp_config *c) {
    int r;
    if (c->rows <= 8) r = c->splitk > 1 ? 184 : 168;
    else if (c->rows <= 16) r = 192;
    else if (c->rows <= 24) r = 208;
    else if (c->rows <= 32) r = 160;
    else if (c->rows <= 48) r = 192;
    else r = 224;
    return r;
}

/* Kernel v2's resources: its layout (the larger of the two phases' when
 * split), 384 threads, RAMP_MV2_REGS at entry, one block per SM;
 * ramp_moe_v2_check says whether v2 runs it. A wide configuration (v2
 * only) gets these from ramp_config_resources too. */
static ramp_status v2_resources(const ramp_config *c, const ramp_geometry *g,
                                const ramp_device_limits *lim, ramp_resources *out) {
    memset(out, 0, sizeof *out);
    ramp_moe_variant v;
    memset(&v, 0, sizeof v);
    v.cfg = *c;
    v.geom = *g;
    /* (.gg: its G blocks of intermediate and scales) */
    long long smem = ramp_moe_v2_layout_cg(c->rows, c->width, c->stages, g->bf16,
                                           c->splitk > 1 ? c->splitk : 1, 0,
                                           c->ggather > 1 ? c->ggather : 1)
                         .total;
    if (c->two_phase) {
        long long down = ramp_moe_v2_layout_down_bf(c->rows, c->stages, g->bf16).total;
        if (down > smem) smem = down;
    }
    out->smem_bytes = (int)smem;
    out->threads = RAMP_MV2_THREADS;
    out->regs_per_thread = RAMP_MV2_REGS;
    out->blocks_per_sm = 1;
    out->valid = 1;
    if (smem > lim->smem_per_block) {
        out->valid = 0;
        snprintf(out->why, sizeof out->why, "shared memory %lld > %d per block", smem,
                 lim->smem_per_block);
    } else if (ramp_moe_v2_check(&v) != RAMP_OK) {
        out->valid = 0;
        snprintf(out->why, sizeof out->why, "%s", ramp_last_error());
    }
    return RAMP_OK;
}

ramp_status ramp_config_resources(const ramp_config *c, const ramp_geometry *g,
                                  const ramp_device_limits *lim,
                                  ramp_resources *out) {
    RAMP_CHECK(c && g && lim && out, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    memset(out, 0, sizeof *out);
    if (c->rows > 64 || c->two_phase || c->ggather) return v2_resources(c, g, lim, out);
    ramp_moe_v1_layout l = ramp_moe_v1_layout_of(c->rows, c->width, c->stages, g->bf16, 0);
    long smem = (long)l.total;
    int threads = l.threads;
    int regs = ramp_config_register_bound(c);
    out->smem_bytes = (int)smem;
    out->threads = threads;
    out->regs_per_thread = regs;
    out->measured = 0;
    out->valid = 1;
    if (c->width > g->inter || g->inter % c->width != 0) {
        out->valid = 0;
        snprintf(out->why, sizeof out->why, "width %d does not divide h = %d",
                 c->width, g->inter);
    } else if (c->splitk > 1 && (g->hidden % (c->splitk * 128) != 0)) {
        out->valid = 0;
        snprintf(out->why, sizeof out->why, "split-K %d does not divide d = %d in 128 blocks",
                 c->splitk, g->hidden);
    } else if (smem > lim->smem_per_block) {
        out->valid = 0;
        snprintf(out->why, sizeof out->why, "shared memory %ld > %d per block",
                 smem, lim->smem_per_block);
    }
    if (out->valid) {
        /* The driver reserves 1 KB of shared memory per block. */
        int by_smem = lim->smem_per_sm / (int)(smem + 1024);
        int by_threads = lim->max_threads_per_sm / threads;
        int regs_alloc = (regs + 7) / 8 * 8;
        int by_regs = lim->regs_per_sm / (regs_alloc * threads);
        int b = by_smem;
        if (by_threads < b) b = by_threads;
        if (by_regs < b) b = by_regs;
        if (lim->max_blocks_per_sm < b) b = lim->max_blocks_per_sm;
        out->blocks_per_sm = b;
        if (b < 1) {
            out->valid = 0;
            snprintf(out->why, sizeof out->why, "does not fit one block per SM");
        }
    }
    return RAMP_OK;
}

ramp_status ramp_config_candidates(const ramp_geometry *g, ramp_config **out,
                                  int *count) {
    RAMP_CHECK(g && out && count, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    int cap = COUNT(ROWS) * COUNT(WIDTHS) * COUNT(STAGES) * 3 * 2, n = 0;
    ramp_config *list = ramp_calloc((size_t)cap, sizeof *list);
    if (!list) return RAMP_ERR_OUT_OF_MEMORY;
    for (int ri = 0; ri < COUNT(ROWS); ri++)
        for (int wi = 0; wi < COUNT(WIDTHS); wi++)
            for (int si = 0; si < COUNT(STAGES); si++)
                for (int launch = 0; launch < 3; launch++)
                    for (int split = 1; split <= 2; split++) {
                        if (split == 2 && !(g->hidden >= 4096 && ROWS[ri] <= 8)) continue;
                        list[n++] = (ramp_config){ROWS[ri], WIDTHS[wi], STAGES[si],
                                                  launch >= 1, launch == 2, split, 0, 0, 0, 0};
                    }
    *out = list;
    *count = n;
    return RAMP_OK;
}

ramp_status ramp_config_space(const ramp_geometry *g,
                              const ramp_device_limits *lim, ramp_config **out,
                              int *count) {
    RAMP_CHECK(g && lim && out && count, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    RAMP_CHECK(g->inter >= 128 && g->hidden >= 128, RAMP_ERR_INVALID_ARGUMENT,
               "geometry h = %d, d = %d: both must be >= 128", g->inter, g->hidden);
    ramp_config *list = NULL;
    int total = 0, n = 0;
    RAMP_TRY(ramp_config_candidates(g, &list, &total));
    for (int i = 0; i < total; i++) {
        ramp_resources r;
        ramp_status s = ramp_config_resources(&list[i], g, lim, &r);
        if (s != RAMP_OK) { free(list); return s; }
        if (r.valid) list[n++] = list[i];
    }
    *out = list;
    *count = n;
    return RAMP_OK;
}

ramp_status ramp_config_resources_for(ramp_kernel_version k, const ramp_config *c,
                                      const ramp_geometry *g, const ramp_device_limits *lim,
                                      ramp_resources *out) {
    RAMP_CHECK(c && g && lim && out, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    RAMP_CHECK(k == RAMP_KERNEL_V1 || k == RAMP_KERNEL_V2, RAMP_ERR_INVALID_ARGUMENT,
               "kernel = %d: not v1 (0) or v2 (1)", (int)k);
    if (k == RAMP_KERNEL_V2) return v2_resources(c, g, lim, out);
    RAMP_TRY(ramp_config_resources(c, g, lim, out));
    if (out->valid && ramp_moe_v1_check(&(ramp_moe_variant){*c, *g, 0}) != RAMP_OK) {
        out->valid = 0; /* v2's wide tiles */
        snprintf(out->why, sizeof out->why, "%s", ramp_last_error());
    }
    return RAMP_OK;
}

/* ---------------------------------------------------------------- kernels */

const char *ramp_kernel_version_name(ramp_kernel_version k) {
    switch (k) {
    case RAMP_KERNEL_V1: return "v1";
    case RAMP_KERNEL_V2: return "v2";
    }
    return "?";
}

ramp_status ramp_kernel_version_parse(const char *text, ramp_kernel_version *out) {
    RAMP_CHECK(text && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_kernel_version_parse: NULL argument");
    if (strcmp(text, "v1") == 0) *out = RAMP_KERNEL_V1;
    else if (strcmp(text, "v2") == 0) *out = RAMP_KERNEL_V2;
    else RAMP_FAIL(RAMP_ERR_NOT_FOUND, "unknown kernel '%.32s' (expected v1 or v2)", text);
    return RAMP_OK;
}

ramp_status ramp_kernel_version_check(ramp_kernel_version k, const ramp_config *c,
                                      const ramp_geometry *g) {
    RAMP_CHECK(c && g, RAMP_ERR_INVALID_ARGUMENT, "ramp_kernel_version_check: NULL argument");
    ramp_moe_variant v;
    memset(&v, 0, sizeof v);
    v.cfg = *c;
    v.geom = *g;
    switch (k) {
    case RAMP_KERNEL_V1: return ramp_moe_v1_check(&v);
    case RAMP_KERNEL_V2: return ramp_moe_v2_check(&v);
    }
    RAMP_FAIL(RAMP_ERR_INVALID_ARGUMENT, "kernel = %d: not v1 (0) or v2 (1)", (int)k);
}

int ramp_config_occupancy(ramp_kernel_version k, const ramp_config *c,
                          const ramp_geometry *g, const ramp_device_limits *lim) {
    if (!c || !g || !lim) return 0;
    ramp_resources r;
    if (ramp_config_resources(c, g, lim, &r) != RAMP_OK || !r.valid) return 0;
    if (k == RAMP_KERNEL_V1) return c->rows <= 64 && !c->two_phase ? r.blocks_per_sm : 0;
    if (k != RAMP_KERNEL_V2 || ramp_kernel_version_check(k, c, g) != RAMP_OK) return 0;
    return 1;
}

/* The down projection's K in `parts` parts (two-phase entries): whole parts
 * of the h / 128 K blocks. (v2 also runs parts of unequal length, e.g.
 * .dk5; session 35 measured Mixtral-8x22B's space with 5-part entries and a
 * plan refit on it slower in the layer, so they stay off the space:
 * kernels/moe_v2.md.) */
static int k_parts_offered(const ramp_geometry *g, int parts) {
    return parts <= 1 || (g->inter / 128) % parts == 0;
}

ramp_status ramp_config_space_for(ramp_kernel_version k, const ramp_geometry *g,
                                  const ramp_device_limits *lim, ramp_config **out,
                                  int *count) {
    RAMP_CHECK(g && lim && out && count, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    RAMP_CHECK(k == RAMP_KERNEL_V1 || k == RAMP_KERNEL_V2, RAMP_ERR_INVALID_ARGUMENT,
               "kernel = %d: not v1 (0) or v2 (1)", (int)k);
    ramp_config *list = NULL;
    int total = 0, n = 0;
    RAMP_TRY(ramp_config_space(g, lim, &list, &total));
    if (k == RAMP_KERNEL_V2) { /* v2's wide tiles and split-K after v1's space */
        const int wide = COUNT(WIDTHS) * COUNT(WIDE_STAGES) * COUNT(TWO_PHASE) * WIDE_VARIANTS +
                         COUNT(KS_ROWS) * COUNT(KS_WIDTHS) + COUNT(NS_ROWS) * COUNT(NS_PARTS);
        ramp_config *grown = realloc(list, (size_t)(total + wide) * sizeof *list);
        if (!grown) {
            free(list);
            return RAMP_ERR_OUT_OF_MEMORY;
        }
        list = grown;
        int kept = 0; /* v1's split-K entries are not v2's */
        for (int i = 0; i < total; i++)
            if (list[i].splitk == 1) list[kept++] = list[i];
        total = kept;
        for (int wi = 0; wi < COUNT(WIDTHS); wi++)
            for (int si = 0; si < COUNT(WIDE_STAGES); si++)
                for (int pi = 0; pi < COUNT(TWO_PHASE); pi++) {
                    if (!k_parts_offered(g, TWO_PHASE[pi])) continue;
                    for (int vi = 0; vi < WIDE_VARIANTS; vi++) {
                        /* plain; token rows by TMA (.tx); and with weight
                         * multicast too (.mc.tx): sessions 17-18 */
                        ramp_config c = {WIDE_ROWS, WIDTHS[wi], WIDE_STAGES[si], 0, 0, 1,
                                         TWO_PHASE[pi], vi == 2, vi >= 1, 0};
                        ramp_resources r;
                        if (ramp_config_resources(&c, g, lim, &r) == RAMP_OK && r.valid)
                            list[total++] = c;
                    }
                }
        for (int ri = 0; ri < COUNT(KS_ROWS); ri++)
            for (int wi = 0; wi < COUNT(KS_WIDTHS); wi++) {
                ramp_config c = {KS_ROWS[ri], KS_WIDTHS[wi], KS_STAGES, 0, 0, 2, 0, 0, 0, 0};
                ramp_resources r;
                if (v2_resources(&c, g, lim, &r) == RAMP_OK && r.valid) list[total++] = c;
            }
        for (int ri = 0; ri < COUNT(NS_ROWS) && !g->bf16; ri++)
            for (int pi = 0; pi < COUNT(NS_PARTS); pi++) {
                if (!k_parts_offered(g, NS_PARTS[pi])) continue;
                ramp_config c = {NS_ROWS[ri], NS_WIDTH, NS_STAGES, 0, 0, 1, NS_PARTS[pi], 0, 0, 0};
                ramp_resources r;
                if (v2_resources(&c, g, lim, &r) == RAMP_OK && r.valid) list[total++] = c;
            }
    }
    for (int i = 0; i < total; i++)
        if (ramp_kernel_version_check(k, &list[i], g) == RAMP_OK) list[n++] = list[i];
    if (n == 0 && total > 0) {
        char name[64];
        ramp_kernel_version_check(k, &list[0], g);
        char why[256];
        snprintf(why, sizeof why, "%s", ramp_last_error());
        ramp_config_name(&list[0], name, sizeof name);
        free(list);
        RAMP_FAIL(RAMP_ERR_UNSUPPORTED, "kernel %s runs none of the %d configurations of this "
                  "geometry (E=%d k=%d h=%d d=%d); the first, %s: %s", ramp_kernel_version_name(k),
                  total, g->experts, g->topk, g->inter, g->hidden, name, why);
    }
    *out = list;
    *count = n;
    return RAMP_OK;
}
