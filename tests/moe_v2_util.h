/*
 * moe_v2_util.h - the v2 fused MoE kernel's supported configurations on the
 * two models of issue #5's first step (Qwen3-30B-A3B EP8, DeepSeek-V3 EP8),
 * for the tests and the benchmark. Header-only.
 */
#ifndef RAMP_MOE_V2_UTIL_H
#define RAMP_MOE_V2_UTIL_H

#include "moe_v2.h"

#include <string.h>

/* Rows per tile of the configuration space (ramp.h's ramp_config): every
 * one has its wgmma N = ceil8(rows) in {8, 16, 24, 32, 48, 64}. */
static const int MV2_ROWS[] = {2, 4, 6, 8, 12, 16, 24, 32, 48, 64};
#define MV2_NROWS ((int)(sizeof MV2_ROWS / sizeof MV2_ROWS[0]))
static const int MV2_WIDTHS[] = {128, 256, 512};
#define MV2_STAGES 4
/* The wide tile (kernel v2 only, not yet in ramp.h's configuration space:
 * moe_v2_wide.cuh): 128 rows, as many stages up to MV2_STAGES as fit. */
#define MV2_WIDE_ROWS 128
/* v2's split-K (ramp_config.splitk 2, a cluster of two CTAs per tile):
 * the rows and widths of its configuration space (src/config.c). */
static const int MV2_KS_ROWS[] = {4, 8, 16, 24, 32};
#define MV2_KS_NROWS ((int)(sizeof MV2_KS_ROWS / sizeof MV2_KS_ROWS[0]))
static const int MV2_KS_WIDTHS[] = {128, 256};
/* Variants per geometry at most: the rows above and the wide tile, x widths,
 * and the split-K ones. */
#define MV2_MAXV (3 * (MV2_NROWS + 1) + 2 * MV2_KS_NROWS)

/* The per-GPU geometry of model `name` on EP8 (FP8). */
static inline ramp_status mv2_geometry(const char *name, ramp_geometry *g) {
    ramp_model m;
    ramp_layout L;
    RAMP_TRY(ramp_model_lookup(name, &m));
    RAMP_TRY(ramp_layout_parse("EP8", &L));
    RAMP_TRY(ramp_geometry_for(&m, L, g));
    g->bf16 = 0;
    return RAMP_OK;
}

/* The plain-launch variant (rows, width, MV2_STAGES) on g. */
static inline ramp_moe_variant mv2_variant(const ramp_geometry *g, int rows, int width) {
    ramp_moe_variant v;
    memset(&v, 0, sizeof v);
    v.cfg.rows = rows;
    v.cfg.width = width;
    v.cfg.stages = MV2_STAGES;
    v.cfg.splitk = 1;
    v.geom = *g;
    return v;
}

/* Every supported variant of g (rows x widths that divide h, then the wide
 * tile of each width with the most stages that fit, then split-K 2 where
 * v2 runs it), into out (room for MV2_MAXV); returns the count. */
static inline int mv2_variants(const ramp_geometry *g, ramp_moe_variant *out) {
    int n = 0;
    for (int wi = 0; wi < 3; wi++)
        for (int ri = 0; ri < MV2_NROWS; ri++) {
            ramp_moe_variant v = mv2_variant(g, MV2_ROWS[ri], MV2_WIDTHS[wi]);
            if (ramp_moe_v2_check(&v) == RAMP_OK) out[n++] = v;
        }
    for (int wi = 0; wi < 3; wi++) {
        ramp_moe_variant v = mv2_variant(g, MV2_WIDE_ROWS, MV2_WIDTHS[wi]);
        while (v.cfg.stages > 2 && ramp_moe_v2_check(&v) != RAMP_OK) v.cfg.stages--;
        if (ramp_moe_v2_check(&v) == RAMP_OK) out[n++] = v;
    }
    for (int wi = 0; wi < 2; wi++)
        for (int ri = 0; ri < MV2_KS_NROWS; ri++) {
            ramp_moe_variant v = mv2_variant(g, MV2_KS_ROWS[ri], MV2_KS_WIDTHS[wi]);
            v.cfg.splitk = 2;
            if (ramp_moe_v2_check(&v) == RAMP_OK) out[n++] = v;
        }
    return n;
}

#endif /* RAMP_MOE_V2_UTIL_H */
