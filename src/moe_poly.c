/*
 * moe_poly.c - the polymorphic kernel's host side: generates the
 * translation unit that includes kernels/moe_v1.cuh once per menu entry
 * (kernels/moe_poly.cuh says why and how), or kernels/moe_v2.cuh for a menu
 * of Hopper kernel v2 entries (kernels/moe_poly_v2.cuh), compiles it
 * through the JIT, reads its resources and launches it.
 */
#include "moe_poly.h"

#include "jit.h"
#include "moe_v2.h" /* v2 entries: checks, layout, defines, tensor maps */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernels one launch queues, in order (moe_poly_v2.cuh, "Split"):
 * which parts of the menu each holds. A v1 menu and a v2 menu without
 * two-phase entries are one kernel of fused entries. */
enum {
    PART_FUSED = 1, PART_UP = 2, PART_DOWN = 4,
    PART_C1 = 8, PART_C2 = 16,      /* only entries on one CTA / on clusters of two */
    PART_NARROW = 32, PART_WIDE = 64, /* only entries of rows <= 64 / wide tiles */
    PART_ENTRY = 128 /* only entry (parts >> PART_ENTRY_SHIFT): split 5 */
};
#define PART_ENTRY_SHIFT 8
#define PART_ONLY(i) (PART_ENTRY | (i) << PART_ENTRY_SHIFT)
/* -1: a kernel of every entry, else the one entry split 5 gave it */
static int part_entry(int parts) { return parts & PART_ENTRY ? parts >> PART_ENTRY_SHIFT : -1; }

#define ENTRY_NAMES(p)                                                                      \
    {p "0", p "1", p "2", p "3", p "4", p "5", p "6", p "7", p "8", p "9", p "10", p "11",  \
     p "12", p "13", p "14", p "15"}
static const char *const ENTRY_KERNEL[RAMP_MENU_MAX] = ENTRY_NAMES(RAMP_POLY_V2_KERNEL "_e");
static const char *const ENTRY_DOWN_KERNEL[RAMP_MENU_MAX] =
    ENTRY_NAMES(RAMP_POLY_V2_DOWN_KERNEL "_e");
_Static_assert(RAMP_MENU_MAX == 16, "ENTRY_NAMES spells out 16 names");
typedef struct {
    const char *name;
    int parts;    /* PART_*: fused entries, two-phase entries' phase 1, their phase 2;
                     C1 / C2: only those that run on one CTA / a cluster of two */
    ramp_kernel *kernel;
    long long smem;
    ramp_resources res;
    int cluster;  /* CTAs per cluster: 2 with a split-K or multicast member (else 1) */
    int clusters; /* resident clusters of that many CTAs: the grid's cap / cluster */
    unsigned full; /* its grid at the layer's max_pairs */
} poly_link;

struct ramp_moe_poly {
    ramp_poly_desc d;
    ramp_gpu *gpu;
    ramp_moe_v2_maps *maps;        /* v2: the weights' tensor maps (128-aligned) */
    ramp_devptr map_w13, map_w2;   /* the addresses they were built for (0: none) */
    ramp_module *module;
    poly_link link[RAMP_POLY_MAX_KERNELS];
    int nlinks;
    ramp_kernel *kernel_combine; /* det: the combining kernel (NULL: none) */
    int threads;
    int sms;
    unsigned grid_override;
    int64_t tiles[RAMP_MENU_MAX]; /* row-tile bound per entry */
    /* v2 entries with token rows by TMA (".tx"): the copy of x in tile order
     * that the first kernel writes when one of them is chosen (bit i of
     * tx_mask; moe_poly_v2.cuh's RAMP_POLY_TX_MASK) */
    unsigned tx_mask;
    ramp_devptr xt;     /* tx_tiles x 128 rows of d elements */
    int tx_tiles;       /* the most row tiles a .tx entry can have (at max_pairs) */
    ramp_devptr map_ws; /* the workspace maps->h was built for (0: none) */
};

static ramp_moe_variant variant_of(const ramp_poly_desc *d, int i) {
    ramp_moe_variant v;
    memset(&v, 0, sizeof v);
    v.cfg = d->cfgs[i];
    v.geom = d->geom;
    v.xbf16 = d->xbf16;
    return v;
}

static int is_v2(const ramp_poly_desc *d) { return d->kernel == RAMP_KERNEL_V2; }

static int labelled(const ramp_poly_desc *d) {
    for (int i = 0; i < d->count; i++)
        if (d->label[i]) return 1;
    return 0;
}
/* The choice index that runs entry i (ramp_poly_desc.label) */
static int label_of(const ramp_poly_desc *d, int i) { return labelled(d) ? d->label[i] : i; }

/* Entries with token rows by TMA (".tx"): bit i for entry i */
static unsigned tx_mask_of(const ramp_poly_desc *d) {
    unsigned m = 0;
    for (int i = 0; i < d->count; i++)
        if (d->cfgs[i].tma_x) m |= 1u << label_of(d, i);
    return m;
}

/* v2 entries run in two launches (wide tiles, ramp_config.two_phase) */
static int has_two_phase(const ramp_poly_desc *d) {
    for (int i = 0; i < d->count; i++)
        if (d->cfgs[i].two_phase) return 1;
    return 0;
}
/* Row tiles an entry's launch covers: a multicast entry's in whole pairs */
static long long covered_tiles(const ramp_config *c, long long tiles) {
    return c->mcast ? (tiles + 1) / 2 * 2 : tiles;
}
/* v2 entries that run in one launch (no two-phase split) */
static int has_fused(const ramp_poly_desc *d) {
    for (int i = 0; i < d->count; i++)
        if (!d->cfgs[i].two_phase) return 1;
    return 0;
}

/* What of entry i a kernel of these parts runs: 0 none, else the phase's
 * namespace letter ('e': fused or phase 1, 'd': phase 2). C1 / C2: only
 * where that phase runs on one CTA (C1) or a cluster of two (C2: split-K in
 * one launch, multicast in either phase). */
static char member(const ramp_poly_desc *d, int parts, int i) {
    const ramp_config *c = &d->cfgs[i];
    char ns = 0;
    if (part_entry(parts) >= 0 && part_entry(parts) != i) return 0;
    if (!c->two_phase) ns = (parts & PART_FUSED) ? 'e' : 0;
    else if (parts & PART_UP) ns = 'e';
    else if (parts & PART_DOWN) ns = 'd';
    if (ns && (parts & (PART_NARROW | PART_WIDE)) &&
        !(parts & (c->rows > 64 ? PART_WIDE : PART_NARROW)))
        return 0;
    if (!ns || !(parts & (PART_C1 | PART_C2))) return ns;
    const int paired = c->mcast || (ns == 'e' && c->splitk > 1);
    return (parts & (paired ? PART_C2 : PART_C1)) ? ns : 0;
}

/* The kernels a launch queues (names and parts; moe_poly_v2.cuh, "Split"):
 * split only changes a v2 menu with a two-phase entry (1 and 2: and a fused
 * one); a menu of fused entries stays one kernel whatever split says. */
static int chain_of(const ramp_poly_desc *d, poly_link *out) {
    memset(out, 0, sizeof(poly_link) * RAMP_POLY_MAX_KERNELS);
    if (!is_v2(d)) {
        out[0].name = "ramp_moe_poly";
        out[0].parts = PART_FUSED;
        return 1;
    }
    if (d->split == 5) { /* by entry: a switch node's bodies */
        int n = 0;
        for (int i = 0; i < d->count; i++) {
            out[n].name = ENTRY_KERNEL[i];
            out[n++].parts = PART_FUSED | PART_UP | PART_ONLY(i);
            if (!d->cfgs[i].two_phase) continue;
            out[n].name = ENTRY_DOWN_KERNEL[i];
            out[n++].parts = PART_DOWN | PART_ONLY(i);
        }
        return n;
    }
    out[0].name = RAMP_POLY_V2_KERNEL;
    out[0].parts = PART_FUSED | PART_UP;
    if (!has_two_phase(d)) return 1;
    if (d->split == 1 && has_fused(d)) {
        out[0].name = RAMP_POLY_V2_UP_KERNEL;
        out[0].parts = PART_UP;
        out[1].name = RAMP_POLY_V2_DOWN_KERNEL;
        out[1].parts = PART_FUSED | PART_DOWN;
        return 2;
    }
    if (d->split >= 3) {
        /* 3, by cluster: a kernel of clusters caps every entry's grid; 4, by
         * width: a wide entry's shared memory sets every entry's carve-out
         * (s22-run3: narrow entries stream 15% slower at 233 KB) */
        static const struct { const char *name; int parts; } groups[2][4] = {
            {{RAMP_POLY_V2_KERNEL, PART_FUSED | PART_UP | PART_C1},
             {RAMP_POLY_V2_C2_KERNEL, PART_FUSED | PART_UP | PART_C2},
             {RAMP_POLY_V2_DOWN_KERNEL, PART_DOWN | PART_C1},
             {RAMP_POLY_V2_DOWN_C2_KERNEL, PART_DOWN | PART_C2}},
            {{RAMP_POLY_V2_KERNEL, PART_FUSED | PART_UP | PART_NARROW},
             {RAMP_POLY_V2_DOWN_KERNEL, PART_DOWN | PART_NARROW},
             {RAMP_POLY_V2_WIDE_KERNEL, PART_FUSED | PART_UP | PART_WIDE},
             {RAMP_POLY_V2_DOWN_WIDE_KERNEL, PART_DOWN | PART_WIDE}}};
        int n = 0;
        for (int j = 0; j < 4; j++) {
            const int parts = groups[d->split - 3][j].parts;
            int any = 0;
            for (int i = 0; i < d->count; i++) any |= member(d, parts, i) != 0;
            if (!any) continue;
            out[n].name = groups[d->split - 3][j].name;
            out[n++].parts = parts;
        }
        return n;
    }
    if (d->split == 2 && has_fused(d)) {
        out[0].parts = PART_FUSED;
        out[1].name = RAMP_POLY_V2_UP_KERNEL;
        out[1].parts = PART_UP;
        out[2].name = RAMP_POLY_V2_DOWN_KERNEL;
        out[2].parts = PART_DOWN;
        return 3;
    }
    out[1].name = RAMP_POLY_V2_DOWN_KERNEL;
    out[1].parts = PART_DOWN;
    return 2;
}

/* CTAs per cluster of a kernel: a v2 split-K entry runs a tile on that many,
 * a multicast entry (.mc) each pair of row tiles on two, in both phases;
 * entries of 1 ignore it */
static int link_cluster(const ramp_poly_desc *d, int parts) {
    int c = 1;
    for (int i = 0; is_v2(d) && i < d->count; i++) {
        const char m = member(d, parts, i);
        if (m == 'e' && d->cfgs[i].splitk > c) c = d->cfgs[i].splitk;
        if (m && d->cfgs[i].mcast && c < 2) c = 2;
    }
    return c;
}

int ramp_moe_poly_chain(const ramp_poly_desc *d, const char *names[RAMP_POLY_MAX_KERNELS]) {
    poly_link chain[RAMP_POLY_MAX_KERNELS];
    const int n = chain_of(d, chain);
    for (int j = 0; j < n; j++) names[j] = chain[j].name;
    return n;
}

ramp_status ramp_moe_poly_check(const ramp_poly_desc *d) {
    RAMP_CHECK(d, RAMP_ERR_INVALID_ARGUMENT, "NULL polymorphic kernel descriptor");
    RAMP_CHECK(d->kernel == RAMP_KERNEL_V1 || d->kernel == RAMP_KERNEL_V2,
               RAMP_ERR_INVALID_ARGUMENT, "polymorphic kernel: kernel = %d is not v1 (%d) or "
               "v2 (%d)", d->kernel, RAMP_KERNEL_V1, RAMP_KERNEL_V2);
    RAMP_CHECK(d->count >= 1 && d->count <= RAMP_MENU_MAX, RAMP_ERR_INVALID_ARGUMENT,
               "menu of %d entries: expected 1..%d", d->count, RAMP_MENU_MAX);
    RAMP_CHECK(d->red4 == 0 || (d->red4 == 1 && is_v2(d)), RAMP_ERR_INVALID_ARGUMENT,
               "polymorphic kernel: red4 = %d (W2 permuted for float4 output is a kernel v2 "
               "option: 0, or 1 with v2)", d->red4);
    RAMP_CHECK(d->l2pf_mb >= 0 && d->l2pf_mb <= RAMP_L2PF_MAX_MB && (!d->l2pf_mb || is_v2(d)),
               RAMP_ERR_INVALID_ARGUMENT,
               "polymorphic kernel: l2pf_mb = %d (the L2 prefetch under the selection is a kernel "
               "v2 option: 0, or 1..%d MB with v2)", d->l2pf_mb, RAMP_L2PF_MAX_MB);
    RAMP_CHECK(d->top_wait == 0 || (d->top_wait == 1 && is_v2(d)), RAMP_ERR_INVALID_ARGUMENT,
               "polymorphic kernel: top_wait = %d (where phase 2 waits is a kernel v2 option: "
               "0, or 1 with v2)", d->top_wait);
    RAMP_CHECK(d->bf16_pipe == 0 || (d->bf16_pipe == 1 && is_v2(d) && d->geom.bf16),
               RAMP_ERR_INVALID_ARGUMENT,
               "polymorphic kernel: bf16_pipe = %d (one stage's wgmmas in flight is a kernel v2 "
               "option for BF16 layers: 0, or 1 with v2 and bf16)", d->bf16_pipe);
    RAMP_CHECK(d->det == 0 || (d->det == 1 && is_v2(d)), RAMP_ERR_INVALID_ARGUMENT,
               "polymorphic kernel: det = %d (deterministic output is a kernel v2 option: 0, or "
               "1 with v2)", d->det);
    RAMP_CHECK(d->split >= 0 && d->split <= 5 && (!d->split || is_v2(d)),
               RAMP_ERR_INVALID_ARGUMENT,
               "polymorphic kernel: split = %d (how a v2 menu is split into kernels: 0..5, with "
               "v2)", d->split);
    for (int i = 0; labelled(d) && i < d->count; i++)
        RAMP_CHECK(is_v2(d) && d->split != 5 && d->label[i] >= 0 &&
                       d->label[i] < RAMP_MENU_MAX && (i == 0 || d->label[i] > d->label[i - 1]),
                   RAMP_ERR_INVALID_ARGUMENT,
                   "polymorphic kernel: label[%d] = %d (choice indices of a part of a menu: "
                   "v2, not split 5, increasing, 0..%d)", i, d->label[i], RAMP_MENU_MAX - 1);
    RAMP_CHECK(d->units == 0 || (d->units == 1 && is_v2(d) && !d->red4 && !d->l2pf_mb),
               RAMP_ERR_INVALID_ARGUMENT,
               "polymorphic kernel: units = %d (weights in stage units: 0, or 1 with v2 without "
               "red4 or the L2 prefetch)", d->units);
    RAMP_CHECK(!d->red4 || !d->geom.bf16, RAMP_ERR_UNSUPPORTED,
               "polymorphic kernel v2: float4 output with W2 permuted (red4) is for FP8 layers "
               "only so far; this layer is BF16");
    for (int i = 0; i < d->count; i++) {
        ramp_moe_variant v = variant_of(d, i);
        if (is_v2(d)) {
            /* name the entry: a plan's menu may hold what only v1 runs */
            ramp_status s = ramp_moe_v2_check(&v);
            if (s != RAMP_OK) {
                char why[512];
                snprintf(why, sizeof why, "%s", ramp_last_error());
                return ramp_set_error(s, __FILE__, __LINE__,
                                      "polymorphic kernel v2: menu entry %d: %s", i, why);
            }
        } else {
            RAMP_TRY(ramp_moe_v1_check(&v));
        }
        for (int j = 0; j < i; j++) {
            if (memcmp(&d->cfgs[i], &d->cfgs[j], sizeof d->cfgs[i]) == 0) {
                char name[64];
                ramp_config_name(&d->cfgs[i], name, sizeof name);
                return ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                                      "menu entries %d and %d are both %s", j, i, name);
            }
        }
    }
    /* (after each entry's own checks, which name what v2 cannot run at all) */
    for (int i = 0; d->det && i < d->count; i++)
        if (!d->cfgs[i].two_phase) {
            char name[64];
            ramp_config_name(&d->cfgs[i], name, sizeof name);
            return ramp_set_error(RAMP_ERR_UNSUPPORTED, __FILE__, __LINE__,
                                  "deterministic output: menu entry %d (%s) runs in one launch, "
                                  "which adds into out once per slice; only two-phase entries "
                                  "(.ph2) write each slot's row once", i, name);
        }
    int tx_rows = 0; /* one copy of x serves every .tx entry: one row count */
    for (int i = 0; i < d->count; i++) {
        if (!d->cfgs[i].tma_x) continue;
        RAMP_CHECK(!tx_rows || d->cfgs[i].rows == tx_rows, RAMP_ERR_UNSUPPORTED,
                   "polymorphic kernel v2: menu entries with token rows by TMA (.tx) must have "
                   "one row count; entry %d has %d, an earlier one %d", i, d->cfgs[i].rows,
                   tx_rows);
        tx_rows = d->cfgs[i].rows;
    }
    return RAMP_OK;
}

void ramp_moe_poly_shape(const ramp_poly_desc *d, int *threads, long long *smem) {
    int t = 0;
    long long s = 0;
    for (int i = 0; i < d->count; i++) {
        ramp_moe_variant v = variant_of(d, i);
        if (is_v2(d)) {
            ramp_moe_v2_layout l = ramp_moe_v2_layout_for(&v);
            t = RAMP_MV2_THREADS;
            if (l.total > s) s = l.total;
            continue;
        }
        ramp_moe_v1_layout l = ramp_moe_v1_layout_for(&v);
        if (l.threads > t) t = l.threads;
        if (l.total > s) s = l.total;
    }
    *threads = t;
    *smem = s;
}

/* A growing text buffer; `failed` sticks after an allocation failure. */
typedef struct {
    char *p;
    size_t n, cap;
    int failed;
} text_buf;

static void put(text_buf *b, const char *fmt, ...) {
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (w < 0) {
            b->failed = 1;
            return;
        }
        if (b->p && b->n + (size_t)w < b->cap) {
            b->n += (size_t)w;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)w;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->failed = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

static const char *const ENTRY_MACROS[] = {"RAMP_ROWS",       "RAMP_WIDTH",
                                            "RAMP_STAGES",     "RAMP_PERSISTENT",
                                            "RAMP_GROUPED",    "RAMP_SPLITK"};

/* v2 entries: rows, width and stages are the entry's (and a two-phase
 * entry's phase and K parts); the rest of v2's defines (geometry, options)
 * are the kernel's. */
static const char *const ENTRY_MACROS_V2[] = {"RAMP_ROWS",      "RAMP_WIDTH",
                                              "RAMP_STAGES",    "RAMP_MV2_PHASE",
                                              "RAMP_MV2_P2K",   "RAMP_MV2_KSPLIT",
                                              "RAMP_MV2_MCAST", "RAMP_MV2_TMA_X",
                                              "RAMP_MV2_GGATHER"};
#define N_ENTRY_V2 (sizeof ENTRY_MACROS_V2 / sizeof *ENTRY_MACROS_V2)

/* One entry's namespace: phase 0 (fused), 1 or 2 (two-phase entries).
 * pipe: a BF16 wide entry with one stage's wgmmas in flight (bf16_pipe):
 * RAMP_MV2_PIPE, the kernel's -D option, redefined for it alone. */
static void put_entry_v2(text_buf *b, const ramp_config *c, int i, int phase, int pipe) {
    char name[64];
    ramp_config_name(c, name, sizeof name);
    put(b, "\n/* entry %d: %s%s */\n", i, name,
        phase == 1 ? ", phase 1" : phase == 2 ? ", phase 2" : "");
    put(b, "#define RAMP_ROWS %d\n#define RAMP_WIDTH %d\n#define RAMP_STAGES %d\n", c->rows,
        c->width, c->stages);
    if (phase) put(b, "#define RAMP_MV2_PHASE %d\n", phase);
    if (phase == 2) put(b, "#define RAMP_MV2_P2K %d\n", c->two_phase);
    if (c->splitk > 1) put(b, "#define RAMP_MV2_KSPLIT %d\n", c->splitk);
    if (c->mcast) put(b, "#define RAMP_MV2_MCAST 1\n"); /* both phases */
    if (c->tma_x) put(b, "#define RAMP_MV2_TMA_X 1\n");  /* both phases */
    if (c->ggather > 1) put(b, "#define RAMP_MV2_GGATHER %d\n", c->ggather);
    pipe = pipe && c->rows > 64;
    if (pipe) put(b, "#undef RAMP_MV2_PIPE\n#define RAMP_MV2_PIPE 1\n");
    put(b, "namespace ramp_poly_%c%d {\n#include \"moe_v2.cuh\"\n}\n", phase == 2 ? 'd' : 'e', i);
    for (size_t m = 0; m < N_ENTRY_V2; m++) put(b, "#undef %s\n", ENTRY_MACROS_V2[m]);
    if (pipe) put(b, "#undef RAMP_MV2_PIPE\n#define RAMP_MV2_PIPE %d\n", RAMP_MV2_PIPE_DEFAULT);
}

/* A kernel's three switches over the entries it holds (member()). */
static void put_kernel_v2(text_buf *b, const ramp_poly_desc *d, const poly_link *chain0,
                          const poly_link *l, const char *before_wait, const char *after_wait) {
    static const char *const parts[3][2] = {{"RAMP_POLY_V2_BEGIN", "RAMP_POLY_V2_SETUP"},
                                            {"RAMP_POLY_V2_PRODUCERS", "RAMP_POLY_V2_PRODUCER"},
                                            {"RAMP_POLY_V2_CONSUMERS", "RAMP_POLY_V2_CONSUMER"}};
    /* its index among the chain's kernels, for timeline.cuh's stamps */
    put(b, "\n#undef RAMP_TL_K\n#define RAMP_TL_K %d\n", (int)(l - chain0) + 1);
    for (int p = 0; p < 3; p++) {
        if (p == 0) put(b, "%s(%s, %s, %s)\n", parts[p][0], l->name, before_wait, after_wait);
        else put(b, "%s\n", parts[p][0]);
        for (int i = 0; i < d->count; i++) {
            const char ns = member(d, l->parts, i);
            if (ns) put(b, "%s(%d, ramp_poly_%c%d)\n", parts[p][1], label_of(d, i), ns, i);
        }
    }
    put(b, "RAMP_POLY_V2_END\n");
}

static int down_only(int parts) { return (parts & PART_DOWN) && !(parts & (PART_FUSED | PART_UP)); }

static ramp_status source_v2(const ramp_poly_desc *d, char **source) {
    text_buf b = {0};
    put(&b, "/* generated by src/moe_poly.c: a menu of %d v2 configurations */\n", d->count);
    /* the L2 prefetch under the selection kernel (moe_poly_v2.cuh), first kernel only */
    if (d->l2pf_mb) put(&b, "#define RAMP_POLY_L2PF_BYTES %lldull\n", (long long)d->l2pf_mb << 20);
    /* .tx entries: the first kernel copies x in tile order when one is chosen */
    const unsigned tx = tx_mask_of(d);
    for (int i = 0; i < d->count && tx; i++)
        if (d->cfgs[i].tma_x) { /* (one row count: ramp_moe_poly_check) */
            put(&b, "#define RAMP_POLY_TX_MASK 0x%xu\n#define RAMP_POLY_TX_SLOTS %d\n"
                "#define RAMP_POLY_TX_ROW_BYTES %d\n", tx, d->cfgs[i].rows,
                d->geom.hidden * (d->geom.bf16 ? 2 : 1));
            break;
        }
    if (d->det) put(&b, "#define RAMP_MV2_DET 1\n"); /* phase 2 stores slots' rows */
    put(&b, "#include \"moe_poly_v2.cuh\"\n");
    for (int i = 0; i < d->count; i++)
        put_entry_v2(&b, &d->cfgs[i], i, d->cfgs[i].two_phase ? 1 : 0, d->bf16_pipe);
    poly_link chain[RAMP_POLY_MAX_KERNELS];
    const int n = chain_of(d, chain);
    /* each kernel but the last lets the next start at once (moe_poly_v2.cuh);
     * det: so does the last, for the combining kernel (its blocks wait for
     * this kernel's completion: griddepcontrol.wait) */
    const char *trigger = "asm volatile(\"griddepcontrol.launch_dependents;\\n\" ::: \"memory\")";
    char first[160];
    snprintf(first, sizeof first, "%s%s", n > 1 ? trigger : ";", tx ? "; RAMP_POLY_V2_XCOPY()" : "");
    /* A kernel holding only phase 2 waits for its predecessor after its
     * blocks' first weights are requested, not at the top (moe_poly_v2.cuh,
     * RAMP_POLY_V2_TOP_WAIT; session 25); not with det (its trigger runs
     * after the wait). */
    int late = 0;
    for (int j = 0; j < n && !d->det && !d->top_wait; j++)
        if (down_only(chain[j].parts)) late = 1;
    /* kernels of fused entries and phase 1, then the phase-2 namespaces and
     * the kernels that hold them */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && has_two_phase(d)) {
            put(&b, "\n/* the two-phase entries' phase 2 */\n");
            if (late) put(&b, "#define RAMP_MV2_LATE_WAIT 1\n");
            for (int i = 0; i < d->count; i++)
                if (d->cfgs[i].two_phase) put_entry_v2(&b, &d->cfgs[i], i, 2, d->bf16_pipe);
        }
        for (int j = 0; j < n; j++) {
            if (!(chain[j].parts & PART_DOWN) != (pass == 0)) continue;
            const int e = part_entry(chain[j].parts);
            char own[160]; /* split 5: an entry's first kernel triggers its phase 2 */
            if (e >= 0)
                snprintf(own, sizeof own, "%s%s",
                         chain[j].parts & PART_DOWN ? (d->det ? trigger : ";")
                         : d->cfgs[e].two_phase     ? trigger
                                                    : ";",
                         !(chain[j].parts & PART_DOWN) && d->cfgs[e].tma_x
                             ? "; RAMP_POLY_V2_XCOPY()"
                             : "");
            if (late && down_only(chain[j].parts))
                put(&b, "#undef RAMP_POLY_V2_TOP_WAIT\n#define RAMP_POLY_V2_TOP_WAIT 0\n");
            put_kernel_v2(&b, d, chain, &chain[j],
                          j == 0 && d->l2pf_mb && e < 0 ? "RAMP_POLY_V2_L2PF(pp.moe)" : ";",
                          e >= 0 ? own : j == 0 ? first : (j < n - 1 || d->det) ? trigger : ";");
            if (late && down_only(chain[j].parts))
                put(&b, "#undef RAMP_POLY_V2_TOP_WAIT\n#define RAMP_POLY_V2_TOP_WAIT 1\n");
        }
    }
    if (d->det) { /* the combining kernel, with each entry's K parts */
        /* indexed by the choice: entries not held have no parts (0) */
        const int n_idx = label_of(d, d->count - 1) + 1;
        put(&b, "\n#define RAMP_COMBINE_ENTRIES %d\n#define RAMP_COMBINE_PARTS {", n_idx);
        for (int c = 0, i = 0; c < n_idx; c++) {
            const int parts = i < d->count && label_of(d, i) == c ? d->cfgs[i++].two_phase : 0;
            put(&b, "%s%d", c ? ", " : "", parts);
        }
        put(&b, "}\n#include \"moe_combine.cuh\"\n");
    }
    if (b.failed) {
        free(b.p);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    *source = b.p;
    return RAMP_OK;
}

ramp_status ramp_moe_poly_source(const ramp_poly_desc *d, char **source) {
    RAMP_CHECK(source, RAMP_ERR_INVALID_ARGUMENT, "NULL output");
    RAMP_TRY(ramp_moe_poly_check(d));
    if (is_v2(d)) return source_v2(d, source);
    text_buf b = {0};
    put(&b, "/* generated by src/moe_poly.c: a menu of %d v1 configurations */\n",
        d->count);
    put(&b, "#include \"moe_poly.cuh\"\n");
    for (int i = 0; i < d->count; i++) {
        const ramp_config *c = &d->cfgs[i];
        char name[64];
        ramp_config_name(c, name, sizeof name);
        put(&b, "\n/* entry %d: %s */\n", i, name);
        put(&b, "#define RAMP_ROWS %d\n#define RAMP_WIDTH %d\n#define RAMP_STAGES %d\n",
            c->rows, c->width, c->stages);
        put(&b, "#define RAMP_PERSISTENT %d\n#define RAMP_GROUPED %d\n#define RAMP_SPLITK %d\n",
            c->persistent ? 1 : 0, c->grouped ? 1 : 0, c->splitk);
        put(&b, "namespace ramp_poly_e%d {\n#include \"moe_v1.cuh\"\n}\n", i);
        for (size_t m = 0; m < sizeof ENTRY_MACROS / sizeof *ENTRY_MACROS; m++)
            put(&b, "#undef %s\n", ENTRY_MACROS[m]);
    }
    put(&b, "\nRAMP_POLY_KERNEL_BEGIN\n");
    for (int i = 0; i < d->count; i++)
        put(&b, "RAMP_POLY_CASE(%d, ramp_poly_e%d, %d)\n", i, i,
            d->cfgs[i].persistent ? 1 : 0);
    put(&b, "RAMP_POLY_KERNEL_END\n");
    if (b.failed) {
        free(b.p);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    *source = b.p;
    return RAMP_OK;
}

ramp_status ramp_moe_poly_compile(const ramp_poly_desc *d, ramp_jit_result **out) {
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "NULL output");
    char *src = NULL;
    RAMP_TRY(ramp_moe_poly_source(d, &src));
    int threads;
    long long smem;
    ramp_moe_poly_shape(d, &threads, &smem);
    /* The geometry defines are the first entry's defines minus the entry's
     * own (v1: ENTRY_MACROS; v2: ENTRY_MACROS_V2, and v2's options stay). */
    ramp_moe_variant v = variant_of(d, 0);
    char storage[RAMP_MOE_MAX_DEFINES + 1][48];
    const char *all[RAMP_MOE_MAX_DEFINES];
    int n = is_v2(d) ? ramp_moe_v2_defines(&v, storage, all) : ramp_moe_v1_defines(&v, storage, all);
    const char *const *emac = is_v2(d) ? ENTRY_MACROS_V2 : ENTRY_MACROS;
    const size_t nemac = is_v2(d) ? N_ENTRY_V2 : sizeof ENTRY_MACROS / sizeof *ENTRY_MACROS;
    const char *defs[RAMP_MOE_MAX_DEFINES + 1];
    int nd = 0;
    for (int i = 0; i < n; i++) {
        int entry = 0;
        for (size_t m = 0; m < nemac; m++) {
            size_t len = strlen(emac[m]);
            if (strncmp(all[i], emac[m], len) == 0 && all[i][len] == '=') entry = 1;
        }
        if (!entry) defs[nd++] = all[i];
    }
    if (!is_v2(d)) { /* v2 entries all have RAMP_MV2_THREADS */
        snprintf(storage[RAMP_MOE_MAX_DEFINES], 48, "RAMP_POLY_THREADS=%d", threads);
        defs[nd++] = storage[RAMP_MOE_MAX_DEFINES];
    } else if (d->red4) { /* one output mode for every entry */
        snprintf(storage[RAMP_MOE_MAX_DEFINES], 48, "RAMP_MV2_RED4=1");
        defs[nd++] = storage[RAMP_MOE_MAX_DEFINES];
    } else if (d->units) { /* one weight layout for every entry (not with red4) */
        snprintf(storage[RAMP_MOE_MAX_DEFINES], 48, "RAMP_MV2_TILED=3");
        defs[nd++] = storage[RAMP_MOE_MAX_DEFINES];
    }
    /* The name carries the geometry and a hash of the menu (the cache key
     * covers the full source anyway). */
    uint64_t h = ramp_fnv1a64(RAMP_FNV_OFFSET, src, strlen(src));
    char name[96];
    const char *kind = is_v2(d) ? (d->red4 ? "v2r4-" : d->units ? "v2u-" : "v2-") : "";
    snprintf(name, sizeof name, "poly%s%d-d%dh%dk%de%d-%s-%016llx", kind, d->count,
             d->geom.hidden, d->geom.inter, d->geom.topk, d->geom.experts,
             d->geom.bf16 ? "bf16" : (d->xbf16 ? "fp8x16" : "fp8"), (unsigned long long)h);
    ramp_jit_request rq;
    memset(&rq, 0, sizeof rq);
    rq.name = name;
    rq.source = src;
    rq.defines = defs;
    rq.ndefines = nd;
    ramp_status s = ramp_jit_compile(&rq, out);
    free(src);
    return s;
}

/* The blocks a two-phase entry's phase 2 needs per row tile: chunks of d x
 * K parts (moe_v2.cuh's V2_TPR). */
static long long down_tiles_per_row_tile(const ramp_poly_desc *d, const ramp_config *c) {
    return (long long)(d->geom.hidden / RAMP_MV2_CHUNK) * c->two_phase;
}

static int64_t entry_tiles(const ramp_config *c, int64_t max_pairs, int experts) {
    /* The selection kernel's bound for one entry (select_cpu.c, capacity). */
    int64_t a = max_pairs < experts ? max_pairs : experts;
    int64_t t = max_pairs / c->rows + a;
    return t < 1 ? 1 : t;
}

/* Dynamic shared memory of a kernel: its largest member's layout */
static long long link_smem(const ramp_poly_desc *d, int parts) {
    if (!is_v2(d)) {
        int threads;
        long long smem;
        ramp_moe_poly_shape(d, &threads, &smem);
        return smem;
    }
    long long m = 0;
    for (int i = 0; i < d->count; i++) {
        const char ns = member(d, parts, i);
        long long l = 0;
        if (ns == 'e') {
            ramp_moe_variant v = variant_of(d, i);
            l = ramp_moe_v2_layout_for(&v).total;
        } else if (ns == 'd') {
            l = ramp_moe_v2_layout_down_bf(d->cfgs[i].rows, d->cfgs[i].stages, d->geom.bf16).total;
        }
        if (l > m) m = l;
    }
    return m;
}

/* Blocks a kernel's members can use for `pairs` pairs: the most of any
 * (fused and phase 1: row tiles x slices x split-K CTAs; phase 2: row tiles
 * x chunks of d x K parts), multicast entries' row tiles in whole pairs */
static long long link_need(const ramp_poly_desc *d, int parts, int64_t pairs) {
    long long need = 1;
    for (int i = 0; i < d->count; i++) {
        const ramp_config *c = &d->cfgs[i];
        const char ns = member(d, parts, i);
        if (!ns) continue;
        const long long t = covered_tiles(c, entry_tiles(c, pairs, d->geom.experts));
        const long long g = ns == 'd' ? t * down_tiles_per_row_tile(d, c)
                                      : t * (long long)(d->geom.inter / c->width) * c->splitk;
        if (g > need) need = g;
    }
    return need;
}

ramp_status ramp_moe_poly_resources_of(const ramp_poly_desc *d, const ramp_jit_result *jit,
                                       const ramp_device_limits *lim, ramp_resources *res,
                                       ramp_resources *res_down, long long *smem_down) {
    RAMP_CHECK(d && jit && lim && res && res_down && smem_down, RAMP_ERR_INVALID_ARGUMENT,
               "NULL argument");
    poly_link chain[RAMP_POLY_MAX_KERNELS];
    const int n = chain_of(d, chain);
    RAMP_CHECK(n <= 2, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_moe_poly_resources_of reports two kernels; this menu (split = %d) "
               "launches %d", d->split, n);
    int threads;
    long long smem;
    ramp_moe_poly_shape(d, &threads, &smem);
    memset(res_down, 0, sizeof *res_down);
    *smem_down = 0;
    for (int j = 0; j < n; j++) {
        const ramp_kernel_report *rep = ramp_jit_kernel(jit, chain[j].name);
        RAMP_CHECK(rep, RAMP_ERR_INTERNAL, "no ptxas report for %s in the compile log",
                   chain[j].name);
        const long long sm = link_smem(d, chain[j].parts);
        if (j == 1) *smem_down = sm;
        RAMP_TRY(ramp_resources_from_report(rep, threads, (int)sm, lim, j ? res_down : res));
    }
    return RAMP_OK;
}

ramp_status ramp_moe_poly_create(ramp_gpu *gpu, const ramp_poly_desc *d, int64_t max_pairs,
                                 ramp_moe_poly **out) {
    RAMP_CHECK(gpu && d && out, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    RAMP_CHECK(max_pairs >= 1, RAMP_ERR_INVALID_ARGUMENT,
               "max_pairs = %lld: must be >= 1", (long long)max_pairs);
    RAMP_TRY(ramp_moe_poly_check(d));
    ramp_gpu_info info;
    RAMP_TRY(ramp_gpu_get_info(gpu, &info));
    ramp_moe_poly *k = ramp_calloc(1, sizeof *k);
    if (!k) return RAMP_ERR_OUT_OF_MEMORY;
    k->d = *d;
    k->gpu = gpu;
    k->sms = info.limits.sms;
    long long smem_all;
    ramp_moe_poly_shape(d, &k->threads, &smem_all);
    for (int i = 0; i < d->count; i++) {
        const ramp_config *c = &d->cfgs[i];
        k->tiles[i] = entry_tiles(c, max_pairs, d->geom.experts);
        if (c->tma_x && k->tiles[i] > k->tx_tiles) k->tx_tiles = (int)k->tiles[i];
    }
    k->tx_mask = tx_mask_of(d);
    k->nlinks = chain_of(d, k->link);
    ramp_status s = RAMP_OK;
    for (int j = 0; j < k->nlinks && s == RAMP_OK; j++) {
        poly_link *l = &k->link[j];
        l->smem = link_smem(d, l->parts);
        l->cluster = link_cluster(d, l->parts);
        l->clusters = k->sms / l->cluster;
        const long long g = link_need(d, l->parts, max_pairs);
        if (g > 0x7FFFFFFFLL)
            s = ramp_set_error(RAMP_ERR_UNSUPPORTED, __FILE__, __LINE__,
                               "grid of %lld blocks for %lld pairs exceeds 2^31 - 1", g,
                               (long long)max_pairs);
        l->full = (unsigned)g;
    }
    if (s == RAMP_OK && is_v2(d)) { /* CUtensorMap wants 64-byte alignment: not calloc's */
        k->maps = aligned_alloc(128, (sizeof *k->maps + 127) / 128 * 128);
        if (!k->maps) s = RAMP_ERR_OUT_OF_MEMORY;
        else memset(k->maps, 0, sizeof *k->maps);
    }
    ramp_jit_result *jit = NULL;
    if (s == RAMP_OK) s = ramp_moe_poly_compile(d, &jit);
    for (int j = 0; j < k->nlinks && s == RAMP_OK; j++) {
        poly_link *l = &k->link[j];
        const ramp_kernel_report *rep = ramp_jit_kernel(jit, l->name);
        if (!rep)
            s = ramp_set_error(RAMP_ERR_INTERNAL, __FILE__, __LINE__,
                               "no ptxas report for %s in the compile log", l->name);
        if (s == RAMP_OK)
            s = ramp_resources_from_report(rep, k->threads, (int)l->smem, &info.limits, &l->res);
        if (s == RAMP_OK && !l->res.valid) /* every kernel of the chain must run */
            s = ramp_set_error(RAMP_ERR_UNSUPPORTED, __FILE__, __LINE__,
                               "polymorphic kernel of %d entries cannot run%s%s: %s", d->count,
                               j ? ": its kernel " : "", j ? l->name : "", l->res.why);
    }
    if (s == RAMP_OK) s = ramp_module_load(gpu, jit->cubin, jit->cubin_size, &k->module);
    for (int j = 0; j < k->nlinks && s == RAMP_OK; j++) {
        poly_link *l = &k->link[j];
        s = ramp_module_kernel(k->module, l->name, (int)l->smem, &l->kernel);
        if (s == RAMP_OK && l->cluster > 1)
            s = ramp_moe_v2_cluster_cap(l->kernel, (int)l->smem, l->cluster, k->sms, &l->clusters);
    }
    if (s == RAMP_OK && d->det)
        s = ramp_module_kernel(k->module, RAMP_POLY_COMBINE_KERNEL, 0, &k->kernel_combine);
    if (s == RAMP_OK && k->tx_mask) { /* the copy of x and its map, once */
        const size_t row_bytes = (size_t)d->geom.hidden * (d->geom.bf16 ? 2 : 1);
        s = ramp_gpu_alloc(gpu, (size_t)k->tx_tiles * 128 * row_bytes, &k->xt);
        if (s == RAMP_OK) s = ramp_moe_v2_map_x(&d->geom, k->xt, k->tx_tiles * 128, 128, &k->maps->x);
    }
    ramp_jit_result_free(jit);
    if (s != RAMP_OK) {
        ramp_moe_poly_free(k);
        return s;
    }
    ramp_moe_poly_set_grid(k, 0);
    *out = k;
    return RAMP_OK;
}

void ramp_moe_poly_set_grid(ramp_moe_poly *k, unsigned blocks) { k->grid_override = blocks; }

const char *ramp_moe_poly_kernel_name(const ramp_poly_desc *d) {
    return d && is_v2(d) ? RAMP_POLY_V2_KERNEL : "ramp_moe_poly";
}

ramp_status ramp_moe_poly_set_weights(ramp_moe_poly *k, ramp_devptr w13, ramp_devptr w2) {
    RAMP_CHECK(k, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    if (!is_v2(&k->d)) return RAMP_OK;
    RAMP_CHECK(w13 && w2, RAMP_ERR_INVALID_ARGUMENT, "v2 polymorphic kernel: w13 or w2 is 0");
    /* row-major weights: the polymorphic kernel has no pre-tiled mode */
    ramp_status s = ramp_moe_v2_maps_build(&k->d.geom, w13, w2, 0, k->maps);
    k->map_w13 = s == RAMP_OK ? w13 : 0;
    k->map_w2 = s == RAMP_OK ? w2 : 0;
    return s;
}

/* Blocks of kernel j for a launch of `pairs` token-expert pairs: the most
 * its members can use for them (its full grid at most), capped at
 * RAMP_POLY_WAVES waves for v1 (blocks past the cap take further tiles from
 * the tile counter) and one wave of resident clusters for v2 (blocks stride
 * over the tiles), or at the override; v2: whole clusters. */
static unsigned grid_of(const ramp_moe_poly *k, int j, int64_t pairs) {
    const poly_link *l = &k->link[j];
    long long need = link_need(&k->d, l->parts, pairs);
    long long wave = (long long)k->sms * (l->res.blocks_per_sm > 0 ? l->res.blocks_per_sm : 1);
    if (is_v2(&k->d)) /* one block per SM */
        wave = l->cluster > 1 ? (long long)l->clusters * l->cluster : (long long)k->sms;
    long long cap = k->grid_override ? (long long)k->grid_override
                                     : (is_v2(&k->d) ? 1 : RAMP_POLY_WAVES) * wave;
    if (need > cap) need = cap;
    if (need > (long long)l->full) need = l->full;
    const long long c = l->cluster; /* whole clusters */
    need = need / c * c;
    return (unsigned)(need < c ? c : need);
}

unsigned ramp_moe_poly_full_grid(const ramp_moe_poly *k) { return k->link[0].full; }

void ramp_moe_poly_free(ramp_moe_poly *k) {
    if (!k) return;
    if (k->xt) ramp_gpu_free(k->gpu, k->xt);
    ramp_module_free(k->module);
    free(k->maps);
    free(k);
}

const ramp_resources *ramp_moe_poly_resources(const ramp_moe_poly *k) {
    return k ? &k->link[0].res : NULL;
}

unsigned ramp_moe_poly_grid(const ramp_moe_poly *k) { return grid_of(k, 0, INT64_MAX / 4); }

/* The most any entry needs of a split-K buffer (only one entry runs); v2:
 * the two-phase entries' intermediate, for the row tiles each can have
 * (its own bound, not the layer's capacity in its smallest tiles). */
static size_t most_of_entries(const ramp_moe_poly *k, int max_tiles,
                              size_t (*bytes)(const ramp_moe_variant *, int)) {
    size_t m = 0;
    if (is_v2(&k->d)) { /* (counters: only the gather through global memory's, ".gg") */
        for (int i = 0; i < k->d.count; i++) {
            ramp_moe_variant v = variant_of(&k->d, i);
            size_t b = bytes == ramp_moe_v1_ws_bytes
                           ? ramp_moe_v2_ws_bytes(&v, NULL, (int)k->tiles[i])
                           : ramp_moe_v2_counter_bytes(&v, NULL, (int)k->tiles[i]);
            if (b > m) m = b;
        }
        return m;
    }
    for (int i = 0; i < k->d.count; i++) {
        ramp_moe_variant v = variant_of(&k->d, i);
        size_t b = bytes(&v, max_tiles);
        if (b > m) m = b;
    }
    return m;
}

size_t ramp_moe_poly_ws_bytes(const ramp_moe_poly *k, int max_tiles) {
    return most_of_entries(k, max_tiles, ramp_moe_v1_ws_bytes);
}

size_t ramp_moe_poly_counter_bytes(const ramp_moe_poly *k, int max_tiles) {
    return most_of_entries(k, max_tiles, ramp_moe_v1_counter_bytes);
}

static ramp_status poly_launch(ramp_moe_poly *k, const ramp_moe_params *p,
                               ramp_devptr choice, ramp_devptr sched, ramp_stream stream,
                               int pdl, int entry) {
    RAMP_CHECK(k && p, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    /* entry >= 0: that entry's kernels only (split 5, a switch node's body) */
    int j0 = 0;
    if (entry >= 0) {
        RAMP_CHECK(k->d.split == 5 && entry < k->d.count, RAMP_ERR_INVALID_ARGUMENT,
                   "launch of entry %d alone: needs split 5 and an entry of the menu (split %d, "
                   "%d entries)", entry, k->d.split, k->d.count);
        while (part_entry(k->link[j0].parts) != entry) j0++;
        pdl &= 2;
    }
    RAMP_CHECK(sizeof(ramp_poly_params) == RAMP_POLY_PARAMS_BYTES, RAMP_ERR_INTERNAL,
               "ramp_poly_params is %zu bytes, expected %d", sizeof(ramp_poly_params),
               RAMP_POLY_PARAMS_BYTES);
    RAMP_CHECK(p->max_tiles >= 0 && p->num_tokens >= 0, RAMP_ERR_INVALID_ARGUMENT,
               "max_tiles = %d, num_tokens = %d", p->max_tiles, p->num_tokens);
    RAMP_CHECK(p->x && p->w13 && p->w2 && p->topk_weights && p->sorted_ids &&
                   p->tile_expert && p->num_tiles && p->out && choice && sched,
               RAMP_ERR_INVALID_ARGUMENT, "a required device pointer is 0 (choice and sched "
               "included)");
    RAMP_CHECK(k->d.geom.bf16 || (p->w13_scale && p->w2_scale), RAMP_ERR_INVALID_ARGUMENT,
               "FP8 layer without weight scales");
    RAMP_CHECK(k->d.geom.bf16 || k->d.xbf16 || p->x_scale, RAMP_ERR_INVALID_ARGUMENT,
               "FP8 hidden states without x_scale");
    RAMP_CHECK(p->out % 16 == 0, RAMP_ERR_INVALID_ARGUMENT,
               "the kernels add float4s: out (0x%llx) must be 16-byte aligned",
               (unsigned long long)p->out);
    RAMP_CHECK(!(is_v2(&k->d) && has_two_phase(&k->d)) || p->ws, RAMP_ERR_INVALID_ARGUMENT,
               "a two-phase v2 entry needs ws (ramp_moe_poly_ws_bytes) for its intermediate");
    int gg = 0;
    for (int i = 0; i < k->d.count; i++) gg |= k->d.cfgs[i].ggather > 1;
    RAMP_CHECK(!gg || (p->ws && p->ws_count), RAMP_ERR_INVALID_ARGUMENT,
               "a v2 entry gathering through global memory (.gg) needs ws and ws_count "
               "(ramp_moe_poly_ws_bytes, ramp_moe_poly_counter_bytes; the counters zeroed once)");
    if (is_v2(&k->d) && (p->w13 != k->map_w13 || p->w2 != k->map_w2))
        RAMP_TRY(ramp_moe_poly_set_weights(k, p->w13, p->w2));
    int splitk = 0; /* v1's split-K sums through a workspace; v2's through its cluster */
    for (int i = 0; i < k->d.count; i++) splitk |= k->d.cfgs[i].splitk > 1 && !is_v2(&k->d);
    RAMP_CHECK(!splitk || (p->ws && p->ws_count), RAMP_ERR_INVALID_ARGUMENT,
               "a split-K entry needs ws and ws_count");
    const int64_t pairs = (int64_t)p->num_tokens * k->d.geom.topk;
    if (k->tx_mask) {
        /* a two-phase .tx entry's phase 2 reads the intermediate by TMA */
        int tx_two = 0;
        for (int i = 0; i < k->d.count; i++) tx_two |= k->d.cfgs[i].tma_x && k->d.cfgs[i].two_phase;
        if (tx_two && p->ws != k->map_ws) {
            k->map_ws = 0;
            RAMP_TRY(ramp_moe_v2_map_h(&k->d.geom, 128, p->ws, k->tx_tiles, &k->maps->h));
            k->map_ws = p->ws;
        }
    }
    const poly_link *l0 = &k->link[j0];
    unsigned grid[3] = {grid_of(k, j0, pairs), 1, 1};
    unsigned block[3] = {(unsigned)k->threads, 1, 1};
    /* a .tx entry's grid barrier (in the first kernel) needs every block
     * resident at once */
    RAMP_CHECK(!k->tx_mask || grid[0] <= (unsigned)(l0->cluster > 1 ? l0->clusters * l0->cluster
                                                                     : k->sms),
               RAMP_ERR_UNSUPPORTED,
               "polymorphic kernel v2 with .tx entries: a grid of %u blocks is more than one "
               "wave (%d SMs); the copy of x ends in a grid barrier (ramp_moe_poly_set_grid)",
               grid[0], k->sms);
    ramp_poly_params pp;
    memset(&pp, 0, sizeof pp);
    pp.moe = *p;
    pp.choice = choice;
    pp.sched = sched;
    long long pg = (long long)k->sms * (l0->res.blocks_per_sm > 0 ? l0->res.blocks_per_sm : 1);
    pp.persist_grid = (int)(pg < (long long)grid[0] ? pg : grid[0]);
    pp.sms = k->sms;
    /* v1: one parameter; v2: the maps and the .tx entries' copy of x too */
    ramp_devptr xt = k->xt;
    int xt_rows = k->tx_tiles * 128;
    void *args[4] = {&pp, k->maps, &xt, &xt_rows};
    /* the chain: a kernel whose parts hold another choice returns at once */
    for (int j = j0; j < k->nlinks; j++) {
        const poly_link *l = &k->link[j];
        if (entry >= 0 && part_entry(l->parts) != entry) break;
        if (j == j0 && (pdl & 16)) continue;
        if (j > j0 && (pdl & 4)) break;
        grid[0] = j == j0 ? grid[0]
                  : (pdl & 8) && j == k->nlinks - 1 ? (unsigned)l->cluster
                                                     : grid_of(k, j, pairs);
        RAMP_TRY(ramp_kernel_launch_ex(l->kernel, grid, block, (int)l->smem, stream, args,
                                       j == j0 ? pdl & 1 : (pdl >> 1) & 1, l->cluster));
    }
    return RAMP_OK;
}

ramp_status ramp_moe_poly_launch(ramp_moe_poly *k, const ramp_moe_params *p,
                                 ramp_devptr choice, ramp_devptr sched, ramp_stream stream) {
    return poly_launch(k, p, choice, sched, stream, 0, -1);
}

ramp_status ramp_moe_poly_launch_pdl(ramp_moe_poly *k, const ramp_moe_params *p,
                                     ramp_devptr choice, ramp_devptr sched,
                                     ramp_stream stream) {
    return poly_launch(k, p, choice, sched, stream, 3, -1);
}

ramp_status ramp_moe_poly_launch_entry(ramp_moe_poly *k, const ramp_moe_params *p,
                                       ramp_devptr choice, ramp_devptr sched,
                                       ramp_stream stream, int pdl, int entry) {
    RAMP_CHECK(entry >= 0, RAMP_ERR_INVALID_ARGUMENT, "entry = %d", entry);
    return poly_launch(k, p, choice, sched, stream, pdl, entry);
}

size_t ramp_moe_poly_pair_ws_bytes(const ramp_moe_poly *k, int64_t max_pairs) {
    if (!k || !k->d.det || max_pairs < 1) return 0;
    int parts = 1;
    for (int i = 0; i < k->d.count; i++)
        if (k->d.cfgs[i].two_phase > parts) parts = k->d.cfgs[i].two_phase;
    return (size_t)parts * (size_t)max_pairs * (size_t)k->d.geom.hidden * sizeof(float);
}

ramp_status ramp_moe_poly_combine(ramp_moe_poly *k, ramp_devptr out, ramp_devptr pws,
                                  ramp_devptr topk_ids, ramp_devptr choice, ramp_devptr tokens,
                                  const ramp_poly_locality *loc, int64_t part_pairs,
                                  int max_tokens, int pdl, ramp_stream stream) {
    RAMP_CHECK(k && loc, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    RAMP_CHECK(k->kernel_combine, RAMP_ERR_INVALID_ARGUMENT,
               "the combining kernel is compiled for deterministic menus only (det = 1)");
    RAMP_CHECK(out && pws && topk_ids && choice && tokens, RAMP_ERR_INVALID_ARGUMENT,
               "combine: a required device pointer is 0");
    RAMP_CHECK(out % 16 == 0 && pws % 16 == 0, RAMP_ERR_INVALID_ARGUMENT,
               "combine: out (0x%llx) and the workspace (0x%llx) must be 16-byte aligned",
               (unsigned long long)out, (unsigned long long)pws);
    RAMP_CHECK(part_pairs >= 0 && max_tokens >= 0, RAMP_ERR_INVALID_ARGUMENT,
               "combine: part_pairs %lld, max_tokens %d", (long long)part_pairs, max_tokens);
    /* a block per token, grid-strided: at most 8 blocks per SM */
    long long blocks = max_tokens, cap = 8LL * k->sms;
    if (blocks > cap) blocks = cap;
    unsigned grid[3] = {(unsigned)(blocks < 1 ? 1 : blocks), 1, 1}, block[3] = {256, 1, 1};
    ramp_devptr lo = loc->local_of;
    int first = loc->first_expert, el = loc->local_experts, e = loc->experts;
    long long pp = (long long)part_pairs;
    void *args[10] = {&out, &pws, &topk_ids, &choice, &tokens, &lo, &first, &el, &e, &pp};
    return ramp_kernel_launch_ex(k->kernel_combine, grid, block, 0, stream, args, pdl != 0, 1);
}

int ramp_moe_poly_pdl_mode(int serial_launch) {
    return serial_launch == 1 ? 0 : serial_launch == 2 ? 1 : 3;
}

ramp_status ramp_moe_poly_launch_mode(ramp_moe_poly *k, const ramp_moe_params *p,
                                      ramp_devptr choice, ramp_devptr sched,
                                      ramp_stream stream, int pdl) {
    RAMP_CHECK(pdl >= 0 && pdl <= 31, RAMP_ERR_INVALID_ARGUMENT,
               "polymorphic launch mode %d: not 0..31 (bit 0 the first kernel's PDL, bit 1 the "
               "second's; experiments: bit 2 the first kernel alone, bit 3 the second with one "
               "block, bit 4 the second alone)", pdl);
    return poly_launch(k, p, choice, sched, stream, pdl, -1);
}
