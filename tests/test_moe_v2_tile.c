/*
 * test_moe_v2_tile.c - the v2 kernel's pre-tiled weight layout on the CPU
 * (no GPU, no NVRTC; CI under ASan + UBSan):
 * 1. ramp_moe_v2_tile_weights / ramp_moe_v2_tile_matrix against the layout
 *    written out element by element: every byte of the packed W13 and W2 of
 *    random geometries equals the row-major byte its (row block, K block,
 *    row, byte) names (moe_v2.md, "Pre-tiled weights");
 * 2. ramp_moe_v2_tiled_check accepts every built-in model on every layout
 *    ramp_geometry_for accepts (all v2 box offsets are then multiples of
 *    128) and refuses h or d not a multiple of 128 saying which;
 * 3. the packer's and the tiled tensor map's argument checks
 *    (ramp_tmap_tiled_check: no driver needed);
 * 4. the red4 kernel's W2 row permutation (ramp_moe_v2_permute_w2): a
 *    bijection within each 128-row block that puts the four rows a
 *    consumer thread holds for one token (its wgmma accumulators' rows
 *    g + 16 w + {0, 8} of m-tiles 0 and 1) on four consecutive output rows
 *    in the order the kernel adds them; every byte of random W2s moved
 *    where the definition says; its refusals;
 * 5. the wide tile (rows 65..128, moe_v2_wide.cuh) and the split: the
 *    shared-memory layouts fit and do not overlap (phase 1's as the fused
 *    kernel's, phase 2's ramp_moe_v2_layout_down with its output staging),
 *    the workspace layout, the stored-row order the wide consumer's float4
 *    reductions assume of a red4-permuted W2, and the option refusals made
 *    before any compilation;
 * 6. the tile order (ramp_mv2_tile_of, RAMP_MV2_GROUP): for every group
 *    size, row-tile count and tiles per row tile tried, the tiles 0 ..
 *    rtiles * tpr - 1 name every (row tile, slice) exactly once; group 1 is
 *    row-major (v2's order before the option); with group G the blocks of
 *    one wave see each slice on min(G, rows left) consecutive tiles; the
 *    group option's refusal and its program name;
 * 7. the BF16 layouts (RAMP_MV2_BF16, session 9): no scale slots, iscale or
 *    amax; an intermediate of 2 bytes per column in 1024-aligned K tiles of
 *    npad x 128 bytes; exactly the configurations said to fit do (and one
 *    more stage does not); phase 2's ring and the workspace without
 *    scales, whose bytes ramp_moe_v2_ws_bytes asks for;
 * 8. the multicast pairs of wide tiles (RAMP_MV2_MCAST, session 15): both
 *    CTAs of every cluster walk the same tiles, share only one expert's
 *    weights, and run every real (row tile, slice) exactly once.
 */
#include "check.h"
#include "moe_v2_util.h"
#include "tensormap.h"

#include <stdint.h>

/* The packed index of row-major element (row, col) of a [rows][cols] byte
 * matrix, written from the layout's definition [rows/128][cols/128][128][128]. */
static uint64_t tiled_index(uint64_t row, uint64_t col, uint64_t cols) {
    const uint64_t row_block = row / 128, k_block = col / 128;
    const uint64_t row_in_block = row % 128, byte_in_block = col % 128;
    return ((row_block * (cols / 128) + k_block) * 128 + row_in_block) * 128 + byte_in_block;
}

/* The same for the K block-major order, [cols/128][rows/128][128][128]. */
static uint64_t kmajor_index(uint64_t row, uint64_t col, uint64_t rows) {
    const uint64_t row_block = row / 128, k_block = col / 128;
    const uint64_t row_in_block = row % 128, byte_in_block = col % 128;
    return ((k_block * (rows / 128) + row_block) * 128 + row_in_block) * 128 + byte_in_block;
}

/* The packed index of element (row, col) of expert e's W13 (rows 2h, cols
 * d) or W2 (rows d, cols h) in stage units (tiled 3), from the layout's
 * definition (moe_v2.cuh, RAMP_MV2_TILED 3): units of 32 KB ordered
 * (expert, group, K block), two 128-row halves each, 128-byte swizzle. */
static uint64_t unit_index(int w2, uint64_t e, uint64_t row, uint64_t col, uint64_t h,
                           uint64_t d, uint64_t eb) {
    /* col in bytes; eb bytes per element (a K block is 128 bytes either way) */
    const uint64_t cols = (w2 ? h : d) * eb, kb = col / 128, c = col % 128, r = row % 128;
    uint64_t group, groups, half;
    if (w2) {
        group = row / 256, groups = d / 256, half = (row % 256) / 128;
    } else {
        half = row >= h, group = (row - half * h) / 128, groups = h / 128;
    }
    const uint64_t unit = (e * groups + group) * (cols / 128) + kb;
    return unit * 32768 + half * 16384 + r * 128 + (((c / 16) ^ (r % 8)) * 16) + c % 16;
}

/* Every element of dst (kmajor: K block-major) against src; returns the
 * mismatches (prints 3). */
static long long compare_tiled(const char *what, const uint8_t *src, const uint8_t *dst,
                               uint64_t rows, uint64_t cols, int kmajor) {
    long long bad = 0;
    for (uint64_t r = 0; r < rows; r++)
        for (uint64_t c = 0; c < cols; c++)
            if (dst[kmajor ? kmajor_index(r, c, rows) : tiled_index(r, c, cols)] !=
                    src[r * cols + c] &&
                bad++ < 3)
                fprintf(stderr, "%s: element (%llu, %llu) wrong in the tiled copy\n", what,
                        (unsigned long long)r, (unsigned long long)c);
    return bad;
}

static uint8_t *random_bytes(ramp_rng *rng, size_t n) {
    uint8_t *p = malloc(n);
    if (!p) return NULL;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = ramp_rng_next(rng);
        for (size_t j = 0; j < 8 && i + j < n; j++) p[i + j] = (uint8_t)(v >> (8 * j));
    }
    return p;
}

static void packer_layout(ramp_rng *rng) {
    /* small but uneven: several experts, h and d not powers of two, one with
     * a single K block */
    const ramp_geometry geoms[] = {
        {.experts = 3, .topk = 2, .inter = 384, .hidden = 640},
        {.experts = 2, .topk = 1, .inter = 128, .hidden = 256},
        {.experts = 1, .topk = 1, .inter = 256, .hidden = 128},
        {.experts = 2, .topk = 1, .inter = 384, .hidden = 512}, /* stage units: 3 row blocks, 2 chunks */
    };
    for (size_t gi = 0; gi < sizeof geoms / sizeof geoms[0]; gi++) {
        const ramp_geometry *g = &geoms[gi];
        const uint64_t E = (uint64_t)g->experts, h = (uint64_t)g->inter, d = (uint64_t)g->hidden;
        const size_t n13 = (size_t)(E * 2 * h * d), n2 = (size_t)(E * d * h);
        uint8_t *w13 = random_bytes(rng, n13), *w2 = random_bytes(rng, n2);
        uint8_t *t13 = malloc(n13), *t2 = malloc(n2);
        CHECK(w13 && w2 && t13 && t2);
        if (!w13 || !w2 || !t13 || !t2) goto next;
        memset(t13, 0xA5, n13);
        memset(t2, 0x5A, n2);
        CHECK_OK(ramp_moe_v2_tile_weights(g, w13, w2, t13, t2));
        char what[96];
        snprintf(what, sizeof what, "W13 E=%d h=%d d=%d", g->experts, g->inter, g->hidden);
        CHECK_EQ_INT(compare_tiled(what, w13, t13, E * 2 * h, d, 0), 0);
        snprintf(what, sizeof what, "W2 E=%d h=%d d=%d", g->experts, g->inter, g->hidden);
        CHECK_EQ_INT(compare_tiled(what, w2, t2, E * d, h, 0), 0);
        /* one tensor alone gives the same bytes */
        memset(t2, 0, n2);
        CHECK_OK(ramp_moe_v2_tile_weights(g, NULL, w2, NULL, t2));
        CHECK_EQ_INT(compare_tiled(what, w2, t2, E * d, h, 0), 0);
        /* a box of the kernel is one contiguous 16 KB run: the up rows of
         * expert E-1's last 128 columns, last K block */
        {
            const uint64_t row0 = (E - 1) * 2 * h + h + (h - 128), kb = d / 128 - 1;
            const uint8_t *box = t13 + tiled_index(row0, kb * 128, d);
            long long bad = 0;
            for (uint64_t r = 0; r < 128; r++)
                bad += memcmp(box + r * 128, w13 + (row0 + r) * d + kb * 128, 128) != 0;
            CHECK_EQ_INT(bad, 0);
        }
        /* K block-major (tiled 2): every element, both tensors */
        memset(t13, 0xA5, n13);
        memset(t2, 0x5A, n2);
        CHECK_OK(ramp_moe_v2_tile_weights_order(g, 2, w13, w2, t13, t2));
        snprintf(what, sizeof what, "W13 K-major E=%d h=%d d=%d", g->experts, g->inter, g->hidden);
        CHECK_EQ_INT(compare_tiled(what, w13, t13, E * 2 * h, d, 1), 0);
        snprintf(what, sizeof what, "W2 K-major E=%d h=%d d=%d", g->experts, g->inter, g->hidden);
        CHECK_EQ_INT(compare_tiled(what, w2, t2, E * d, h, 1), 0);
        /* stage units (tiled 3): every element of both tensors; d must be a
         * multiple of 256 (a W2 unit is a 256-row chunk) */
        memset(t13, 0xA5, n13);
        memset(t2, 0x5A, n2);
        if (d % 256) {
            CHECK_ERR(ramp_moe_v2_tile_weights_order(g, 3, w13, w2, t13, t2),
                      RAMP_ERR_UNSUPPORTED);
        } else {
            CHECK_OK(ramp_moe_v2_tile_weights_order(g, 3, w13, w2, t13, t2));
            long long bad13 = 0, bad2 = 0;
            for (uint64_t e = 0; e < E; e++)
                for (uint64_t r = 0; r < 2 * h; r++)
                    for (uint64_t c = 0; c < d; c++)
                        bad13 += t13[unit_index(0, e, r, c, h, d, 1)] != w13[(e * 2 * h + r) * d + c];
            for (uint64_t e = 0; e < E; e++)
                for (uint64_t r = 0; r < d; r++)
                    for (uint64_t c = 0; c < h; c++)
                        bad2 += t2[unit_index(1, e, r, c, h, d, 1)] != w2[(e * d + r) * h + c];
            CHECK_EQ_INT(bad13, 0);
            CHECK_EQ_INT(bad2, 0);
            /* the public form (ramp.h, for ramp_layer_desc.weight_units): the
             * same bytes; shapes of one layer only */
            const int64_t s13[3] = {g->experts, 2 * (int64_t)g->inter, g->hidden};
            const int64_t s2[3] = {g->experts, g->hidden, g->inter};
            uint8_t *u13 = malloc(n13), *u2 = malloc(n2);
            CHECK(u13 && u2);
            if (u13 && u2) {
                CHECK_OK(ramp_weights_to_units(s13, s2, 1, w13, w2, u13, u2));
                CHECK_EQ_INT(memcmp(u13, t13, n13), 0);
                CHECK_EQ_INT(memcmp(u2, t2, n2), 0);
                const int64_t wrong[3] = {g->experts, g->hidden, g->inter + 128};
                CHECK_ERR(ramp_weights_to_units(s13, wrong, 1, w13, w2, u13, u2),
                          RAMP_ERR_INVALID_ARGUMENT);
                CHECK(strstr(ramp_last_error(), "W13 [EL, 2h, d]") != NULL);
                CHECK_ERR(ramp_weights_to_units(s13, s2, 1, w13, w2, NULL, u2),
                          RAMP_ERR_INVALID_ARGUMENT);
            }
            free(u13);
            free(u2);
            /* a BF16 layer's (2-byte elements): every byte of both tensors,
             * through the public form; pre-tiled BF16 (tiled 1, 2) refused */
            ramp_geometry gb = *g;
            gb.bf16 = 1;
            uint8_t *b13 = random_bytes(rng, 2 * n13), *b2 = random_bytes(rng, 2 * n2);
            uint8_t *v13 = malloc(2 * n13), *v2 = malloc(2 * n2);
            CHECK(b13 && b2 && v13 && v2);
            if (b13 && b2 && v13 && v2) {
                memset(v13, 0xA5, 2 * n13);
                memset(v2, 0x5A, 2 * n2);
                CHECK_OK(ramp_weights_to_units(s13, s2, 2, b13, b2, v13, v2));
                long long bb13 = 0, bb2 = 0;
                for (uint64_t e = 0; e < E; e++)
                    for (uint64_t r = 0; r < 2 * h; r++)
                        for (uint64_t c = 0; c < 2 * d; c++)
                            bb13 += v13[unit_index(0, e, r, c, h, d, 2)] !=
                                    b13[(e * 2 * h + r) * 2 * d + c];
                for (uint64_t e = 0; e < E; e++)
                    for (uint64_t r = 0; r < d; r++)
                        for (uint64_t c = 0; c < 2 * h; c++)
                            bb2 += v2[unit_index(1, e, r, c, h, d, 2)] != b2[(e * d + r) * 2 * h + c];
                CHECK_EQ_INT(bb13, 0);
                CHECK_EQ_INT(bb2, 0);
                CHECK_ERR(ramp_moe_v2_tile_weights_order(&gb, 1, b13, b2, v13, v2),
                          RAMP_ERR_UNSUPPORTED);
                CHECK_ERR(ramp_weights_to_units(s13, s2, 3, b13, b2, v13, v2),
                          RAMP_ERR_INVALID_ARGUMENT);
                CHECK(strstr(ramp_last_error(), "elem_bytes 3") != NULL);
            }
            free(b13);
            free(b2);
            free(v13);
            free(v2);
        }
        CHECK_ERR(ramp_moe_v2_tile_weights_order(g, 4, w13, w2, t13, t2),
                  RAMP_ERR_INVALID_ARGUMENT);
    next:
        free(w13); free(w2); free(t13); free(t2);
    }
}

static void model_table(void) {
    const char *layouts[] = {"TP1", "TP2", "TP4", "TP8", "EP2", "EP4", "EP8", "EP16", "EP64"};
    int accepted = 0;
    for (int i = 0; i < ramp_model_count(); i++) {
        const ramp_model *m = ramp_model_at(i);
        for (size_t li = 0; li < sizeof layouts / sizeof layouts[0]; li++) {
            ramp_layout L;
            ramp_geometry g;
            CHECK_OK(ramp_layout_parse(layouts[li], &L));
            if (ramp_geometry_for(m, L, &g) != RAMP_OK) continue; /* refused before v2 */
            ramp_status s = ramp_moe_v2_tiled_check(&g);
            if (s != RAMP_OK)
                fprintf(stderr, "%s on %s cannot be tiled: %s\n", m->name, layouts[li],
                        ramp_last_error());
            CHECK_OK(s);
            accepted++;
        }
    }
    printf("tiled layout: %d (model, layout) geometries accepted\n", accepted);
    CHECK(accepted >= ramp_model_count());

    ramp_geometry g = {.experts = 4, .topk = 2, .inter = 200, .hidden = 256};
    CHECK_ERR(ramp_moe_v2_tiled_check(&g), RAMP_ERR_UNSUPPORTED);
    CHECK(strstr(ramp_last_error(), "h = 200") != NULL);
    g.inter = 256;
    g.hidden = 320;
    CHECK_ERR(ramp_moe_v2_tiled_check(&g), RAMP_ERR_UNSUPPORTED);
    CHECK(strstr(ramp_last_error(), "d = 320") != NULL);
    uint8_t a[4], b[4];
    CHECK_ERR(ramp_moe_v2_tile_weights(&g, a, a, b, b), RAMP_ERR_UNSUPPORTED);
    CHECK_ERR(ramp_moe_v2_tiled_check(NULL), RAMP_ERR_INVALID_ARGUMENT);
}

static void argument_checks(void) {
    uint8_t *src = calloc(256 * 256, 1), *dst = calloc(256 * 256, 1);
    CHECK(src && dst);
    if (!src || !dst) goto done;
    CHECK_OK(ramp_moe_v2_tile_matrix(src, 256, 256, dst));
    CHECK_ERR(ramp_moe_v2_tile_matrix(src, 200, 256, dst), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_moe_v2_tile_matrix(src, 256, 64, dst), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_moe_v2_tile_matrix(src, 0, 256, dst), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_moe_v2_tile_matrix(src, 256, 256, src), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_moe_v2_tile_matrix(NULL, 256, 256, dst), RAMP_ERR_INVALID_ARGUMENT);
    ramp_geometry g = {.experts = 1, .topk = 1, .inter = 128, .hidden = 128};
    CHECK_ERR(ramp_moe_v2_tile_weights(&g, src, NULL, NULL, dst), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_moe_v2_tile_weights(&g, NULL, NULL, NULL, NULL), RAMP_ERR_INVALID_ARGUMENT);

    /* the 4-D map's rules (the encoder itself needs the driver) */
    ramp_tmap_tiled t = {0x7f0000000000ull, 32 * 2 * 2048, 7168, 0}; /* DeepSeek-V3 EP8 W13 */
    CHECK_OK(ramp_tmap_tiled_check(&t));
    t.base += 8;
    CHECK_ERR(ramp_tmap_tiled_check(&t), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "16-byte aligned") != NULL);
    t.base = 0;
    CHECK_ERR(ramp_tmap_tiled_check(&t), RAMP_ERR_INVALID_ARGUMENT);
    t = (ramp_tmap_tiled){0x7f0000000000ull, 32 * 2 * 2048, 7100, 1};
    CHECK_ERR(ramp_tmap_tiled_check(&t), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "multiples of 128") != NULL);
    CHECK_ERR(ramp_tmap_tiled_check(NULL), RAMP_ERR_INVALID_ARGUMENT);
done:
    free(src);
    free(dst);
}

/* Shared-memory row of m-tile t, warp w, lane group g, half hh (the wgmma
 * f32 accumulator layout: rows g and g + 8 of the warp's 16). */
static int smem_row(int t, int w, int g, int hh) { return 64 * t + 16 * w + g + 8 * hh; }

static void red4_permutation(ramp_rng *rng) {
    int seen[128] = {0};
    for (int s = 0; s < 128; s++) {
        const int r = ramp_moe_v2_red4_row(s);
        CHECK(r >= 0 && r < 128);
        if (r >= 0 && r < 128) seen[r]++;
    }
    for (int r = 0; r < 128; r++) CHECK_EQ_INT(seen[r], 1);
    /* the kernel adds (acc0 hh 0, acc0 hh 1, acc1 hh 0, acc1 hh 1) at
     * output rows 4 (8 w + g) + 0..3 */
    for (int w = 0; w < 4; w++)
        for (int g = 0; g < 8; g++)
            for (int t = 0; t < 2; t++)
                for (int hh = 0; hh < 2; hh++)
                    CHECK_EQ_INT(ramp_moe_v2_red4_row(smem_row(t, w, g, hh)),
                                 4 * (8 * w + g) + 2 * t + hh);
    const ramp_geometry geoms[] = {
        {.experts = 3, .topk = 2, .inter = 384, .hidden = 640},
        {.experts = 1, .topk = 1, .inter = 256, .hidden = 128},
    };
    for (size_t gi = 0; gi < sizeof geoms / sizeof geoms[0]; gi++) {
        const ramp_geometry *g = &geoms[gi];
        const uint64_t rows = (uint64_t)g->experts * (uint64_t)g->hidden, cols = (uint64_t)g->inter;
        uint8_t *w2 = random_bytes(rng, (size_t)(rows * cols)), *p2 = malloc((size_t)(rows * cols));
        CHECK(w2 && p2);
        if (w2 && p2) {
            memset(p2, 0xC3, (size_t)(rows * cols));
            CHECK_OK(ramp_moe_v2_permute_w2(g, w2, p2));
            long long bad = 0;
            for (uint64_t s = 0; s < rows; s++) {
                const uint64_t src = (s / 128) * 128 + (uint64_t)ramp_moe_v2_red4_row((int)(s % 128));
                bad += memcmp(p2 + s * cols, w2 + src * cols, cols) != 0;
            }
            CHECK_EQ_INT(bad, 0);
            /* the public form (ramp.h, for ramp_layer_desc.w2_red4) is the same */
            const int64_t shape[3] = {g->experts, g->hidden, g->inter};
            uint8_t *q2 = malloc((size_t)(rows * cols));
            CHECK(q2 != NULL);
            if (q2) {
                CHECK_OK(ramp_w2_to_red4(shape, w2, q2));
                CHECK_EQ_INT(memcmp(q2, p2, (size_t)(rows * cols)), 0);
                free(q2);
            }
            CHECK_EQ_INT(ramp_moe_v2_permute_w2(g, w2, w2), RAMP_ERR_INVALID_ARGUMENT);
            CHECK_EQ_INT(ramp_moe_v2_permute_w2(g, NULL, p2), RAMP_ERR_INVALID_ARGUMENT);
        }
        free(w2);
        free(p2);
    }
    ramp_geometry odd = {.experts = 2, .topk = 1, .inter = 128, .hidden = 192};
    uint8_t a[1], b[1];
    CHECK_EQ_INT(ramp_moe_v2_permute_w2(&odd, a, b), RAMP_ERR_UNSUPPORTED);
    CHECK(strstr(ramp_last_error(), "d = 192") != NULL);
    const int64_t bad_shape[3] = {2, 192, 128}, neg_shape[3] = {2, -128, 128};
    CHECK_EQ_INT(ramp_w2_to_red4(bad_shape, a, b), RAMP_ERR_UNSUPPORTED);
    CHECK_EQ_INT(ramp_w2_to_red4(neg_shape, a, b), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(ramp_w2_to_red4(NULL, a, b), RAMP_ERR_INVALID_ARGUMENT);
}

/* 5. Wide tiles and the split. */
static void wide_and_split(void) {
    const int widths[3] = {128, 256, 512}, stages[3] = {4, 3, 3};
    for (int i = 0; i < 3; i++)
        for (int rows = 65; rows <= 128; rows += 63) {
            ramp_moe_v2_layout l = ramp_moe_v2_layout_of(rows, widths[i], stages[i]);
            CHECK(l.npad == 128);
            CHECK(l.slot_bytes % RAMP_MV2_ALIGN == 0 && l.slot_b == RAMP_MV2_A_BYTES);
            CHECK(l.slot_xs == l.slot_b + 128 * RAMP_MV2_KB);  /* the 128-row token tile */
            CHECK(l.iscale == l.inter + 128LL * widths[i]);  /* one 128-row tile per pass */
            CHECK(l.tok == l.amax); /* no amax scratch: whole token rows per thread */
            CHECK(l.total <= 232448);                          /* the stages that fit */
            ramp_moe_v2_layout more = ramp_moe_v2_layout_of(rows, widths[i], stages[i] + 1);
            CHECK(i == 0 || more.total > 232448); /* and one more does not (w >= 256) */
        }
    for (int st = 2; st <= 6; st++) {
        ramp_moe_v2_layout d = ramp_moe_v2_layout_down(128, st);
        CHECK(d.stages == (st < RAMP_MV2_DOWN_STAGES ? st : RAMP_MV2_DOWN_STAGES));
        CHECK(d.stages == ramp_moe_v2_down_stages(st));
        CHECK(d.tok >= (long long)d.stages * d.slot_bytes && d.rw > d.tok && d.bars > d.rw);
        CHECK(d.ostage >= d.bars + 16LL * d.stages && d.ostage % 16 == 0);
        CHECK(RAMP_MV2_OSTAGE_STRIDE % 16 == 0 && RAMP_MV2_OSTAGE_STRIDE >= 128 * 4);
        CHECK(d.ostage + 2LL * 64 * RAMP_MV2_OSTAGE_STRIDE + RAMP_MV2_ALIGN <= d.total);
        CHECK(d.total <= 232448);
    }
    const int tiles[3] = {1, 7, 300}, inters[3] = {768, 2048, 16384};
    for (int i = 0; i < 3; i++) {
        ramp_moe_v2_ws_layout w = ramp_moe_v2_ws_layout_of(tiles[i], inters[i]);
        /* a block per row tile: the intermediate, then its scales, nothing
         * shared between tiles, so any tile count fits in tiles x tile */
        CHECK(w.iscale % 256 == 0 && w.tile % 256 == 0);
        CHECK(w.iscale >= 128LL * inters[i]);
        CHECK(w.tile >= w.iscale + 128LL * (inters[i] / 128) * 4);
        CHECK(w.tile < w.iscale + 128LL * (inters[i] / 128) * 4 + 256);
        CHECK(w.total == (long long)tiles[i] * w.tile);
        CHECK(ramp_moe_v2_ws_layout_of(0, inters[i]).tile == w.tile);
    }
    /* the bytes a variant asks for: none fused; a two-phase configuration's
     * (or the split option's) block per row tile */
    {
        ramp_moe_variant v;
        memset(&v, 0, sizeof v);
        v.geom = (ramp_geometry){32, 8, 2048, 7168, 0};
        CHECK_OK(ramp_config_parse("r128.w512.s3", &v.cfg));
        CHECK(ramp_moe_v2_ws_bytes(&v, NULL, 64) == 0);
        ramp_moe_v2_opts o = ramp_moe_v2_default_opts();
        o.split = 1;
        CHECK(ramp_moe_v2_ws_bytes(&v, &o, 64) ==
              (size_t)(64 * ramp_moe_v2_ws_layout_of(0, 2048).tile));
        CHECK_OK(ramp_config_parse("r128.w512.s3.ph2.dk2", &v.cfg));
        CHECK(ramp_moe_v2_ws_bytes(&v, NULL, 64) ==
              (size_t)ramp_moe_v2_ws_layout_of(64, 2048).total);
        CHECK(ramp_moe_v2_ws_bytes(&v, NULL, 0) == 0);
        CHECK_OK(ramp_config_parse("r64.w512.s4", &v.cfg));
        CHECK(ramp_moe_v2_ws_bytes(&v, NULL, 64) == 0);
        /* two-phase with K parts not dividing h / 128 = 6 (Qwen3): parts of
         * unequal length (session 35); more parts than K blocks: refused */
        v.geom = (ramp_geometry){16, 8, 768, 2048, 0};
        CHECK_OK(ramp_config_parse("r128.w256.s3.ph2.dk4", &v.cfg));
        CHECK_OK(ramp_moe_v2_check(&v));
        CHECK_OK(ramp_config_parse("r32.w128.s4.ph2.dk8", &v.cfg));
        CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED);
        CHECK(strstr(ramp_last_error(), "K parts") != NULL);
        CHECK_OK(ramp_config_parse("r128.w256.s3.ph2.dk4", &v.cfg));
        CHECK_OK(ramp_config_parse("r128.w256.s3.ph2.dk2", &v.cfg));
        CHECK_OK(ramp_moe_v2_check(&v));
        CHECK_ERR(ramp_moe_v1_check(&v), RAMP_ERR_UNSUPPORTED);
        /* a narrow tile in two launches (session 14): its npad rows per row
         * tile; 8 K parts where they divide h / 128; FP8 only */
        v.geom = (ramp_geometry){1, 2, 16384, 6144, 0};
        CHECK_OK(ramp_config_parse("r12.w128.s4", &v.cfg));
        v.cfg.two_phase = 8;
        CHECK_OK(ramp_moe_v2_check(&v));
        const ramp_moe_v2_ws_layout nw = ramp_moe_v2_ws_layout_rows(3, 12, 16384, 0);
        CHECK(nw.iscale == 16LL * 16384 && nw.tile == nw.iscale + 16LL * 128 * 4);
        CHECK(ramp_moe_v2_ws_bytes(&v, NULL, 3) == (size_t)nw.total);
        CHECK(ramp_moe_v2_ws_layout_rows(3, 100, 16384, 0).total ==
              ramp_moe_v2_ws_layout_of(3, 16384).total);
        v.geom.bf16 = 1;
        CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED);
        v.geom.bf16 = 0;
        v.cfg.two_phase = 5; /* parts of 25 or 26 of the 128 K blocks (session 35) */
        CHECK_OK(ramp_moe_v2_check(&v));
        v.cfg.two_phase = 7;
        CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED);
        v.cfg.rows = 128; /* 8 parts: narrow tiles only */
        v.cfg.two_phase = 8;
        CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED);
    }
    /* a narrow tile's phase 2 keeps its fused ring of width 128, every stage */
    for (int st = 2; st <= 6; st++) {
        const ramp_moe_v2_layout d = ramp_moe_v2_layout_down(16, st);
        const ramp_moe_v2_layout f = ramp_moe_v2_layout_of(16, 128, st);
        CHECK(d.stages == st && d.total == f.total && d.slot_bytes == f.slot_bytes);
    }
    /* the wide consumer's accumulator j (rows 8j + 2t + e of a 128-row W2
     * half) on a red4-permuted W2: blocks j = 2m, 2m+1, 2m+8, 2m+9 of one
     * (t, e) are rows 32m + 8t + 4e + 0..3, in that order */
    for (int m = 0; m < 4; m++)
        for (int t = 0; t < 4; t++)
            for (int e = 0; e < 2; e++) {
                const int js[4] = {2 * m, 2 * m + 1, 2 * m + 8, 2 * m + 9};
                for (int q = 0; q < 4; q++)
                    CHECK(ramp_moe_v2_red4_row(8 * js[q] + 2 * t + e) == 32 * m + 8 * t + 4 * e + q);
            }
    /* the split's refusals, before any compilation */
    ramp_geometry g;
    CHECK_OK(mv2_geometry("qwen3-30b", &g));
    ramp_moe_variant v;
    memset(&v, 0, sizeof v);
    v.cfg = (ramp_config){64, 256, 4, 0, 0, 1, 0, 0, 0, 0};
    v.geom = g;
    ramp_moe_v2_opts o = ramp_moe_v2_default_opts();
    o.split = 1;
    ramp_jit_result *r = NULL;
    o.pipe = 1; /* a narrow split: FP8 without ping-pong (what is built) */
    CHECK_ERR(ramp_moe_v2_compile_phase(&v, &o, 1, &r), RAMP_ERR_UNSUPPORTED);
    CHECK(strstr(ramp_last_error(), "narrow") != NULL);
    o.pipe = 0;
    o.p2k = 8; /* h / 128 = 6 */
    CHECK_ERR(ramp_moe_v2_compile_phase(&v, &o, 2, &r), RAMP_ERR_UNSUPPORTED);
    o.p2k = 0;
    v.cfg.rows = 128;
    v.cfg.stages = 3;
    o.p2k = 7;
    CHECK_ERR(ramp_moe_v2_compile_phase(&v, &o, 2, &r), RAMP_ERR_INVALID_ARGUMENT);
    o.p2k = 4; /* Qwen3-30B EP8: h / 128 = 6, parts of unequal length: row-major order only */
    o.group = 4;
    CHECK_ERR(ramp_moe_v2_compile_phase(&v, &o, 2, &r), RAMP_ERR_UNSUPPORTED);
    CHECK(r == NULL && strstr(ramp_last_error(), "unequal") != NULL);
    o.group = 1;
    o.p2k = 6; /* a wide tile: 1..5 parts */
    CHECK_ERR(ramp_moe_v2_compile_phase(&v, &o, 2, &r), RAMP_ERR_UNSUPPORTED);
    o.p2k = 0;
    o.split = 4;
    CHECK_ERR(ramp_moe_v2_compile_phase(&v, &o, 1, &r), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(r == NULL);
    v.cfg.rows = 129;
    CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED);
    v.cfg.rows = 65;
    CHECK_OK(ramp_moe_v2_check(&v));
}

static void tile_order(void) {
    static unsigned char seen[70 * 130];
    const int tprs[] = {1, 3, 16, 48, 128};
    const int groups[] = {1, 2, 3, 4, 8, 64};
    for (int gi = 0; gi < 6; gi++)
        for (int ti = 0; ti < 5; ti++)
            for (int rtiles = 0; rtiles <= 69; rtiles++) {
                const int G = groups[gi], tpr = tprs[ti], n = rtiles * tpr;
                memset(seen, 0, sizeof seen);
                int bad = 0, run_bad = 0;
                for (int tt = 0; tt < n; tt++) {
                    int r = -1, s = -1;
                    ramp_mv2_tile_of(tt, rtiles, tpr, G, &r, &s);
                    if (r < 0 || r >= rtiles || s < 0 || s >= tpr || seen[r * tpr + s]++) {
                        bad++;
                        continue;
                    }
                    if (G == 1 && (r != tt / tpr || s != tt % tpr)) bad++;
                    /* grouped: the row tiles of a group, then the next
                     * slice; the group of tile tt holds its row */
                    const int full = rtiles / G * G, size = r < full ? G : rtiles - full;
                    const int first = r < full ? r / G * G : full;
                    if (G > 1 && tt + 1 < n) {
                        int r2, s2;
                        ramp_mv2_tile_of(tt + 1, rtiles, tpr, G, &r2, &s2);
                        const int last_of_group = r == first + size - 1;
                        if (!last_of_group && (r2 != r + 1 || s2 != s)) run_bad++;
                        if (last_of_group && s + 1 < tpr && (r2 != first || s2 != s + 1)) run_bad++;
                    }
                }
                if (bad || run_bad)
                    fprintf(stderr, "tile order G %d, tpr %d, rtiles %d: %d bad, %d out of order\n",
                            G, tpr, rtiles, bad, run_bad);
                CHECK(bad == 0 && run_bad == 0);
            }
    /* the option: refused out of 0..64 before compiling; named in the program */
    ramp_geometry g;
    CHECK_OK(mv2_geometry("mixtral-8x22b", &g));
    ramp_moe_variant v = mv2_variant(&g, 128, 128);
    v.cfg.two_phase = 2;
    ramp_moe_v2_opts o = ramp_moe_v2_default_opts();
    CHECK_EQ_INT(o.group, 1);
    o.group = 65;
    ramp_jit_result *r = NULL;
    CHECK_ERR(ramp_moe_v2_compile_phase(&v, &o, 1, &r), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(r == NULL);
    char name[128];
    o.group = 4;
    ramp_moe_v2_program_name_phase(&v, &o, 2, name, sizeof name);
    CHECK(strstr(name, "-g4-k2-ph2") != NULL);
    o.group = 1;
    ramp_moe_v2_program_name_phase(&v, &o, 1, name, sizeof name);
    CHECK(strstr(name, "-g") == NULL);
}

/* 7. The BF16 layouts. */
static void bf16_layouts(void) {
    const int rows[11] = {2, 4, 8, 12, 16, 24, 32, 48, 64, 65, 128}, widths[3] = {128, 256, 512};
    for (int ri = 0; ri < 11; ri++)
        for (int wi = 0; wi < 3; wi++)
            for (int st = 2; st <= 6; st++) {
                const ramp_moe_v2_layout f = ramp_moe_v2_layout_of(rows[ri], widths[wi], st);
                const ramp_moe_v2_layout b = ramp_moe_v2_layout_bf(rows[ri], widths[wi], st, 1);
                const long long npad = b.npad;
                CHECK(npad == f.npad && b.stages == st && b.passes == widths[wi] / 128);
                CHECK(b.slot_b == RAMP_MV2_A_BYTES);
                CHECK(b.slot_xs == b.slot_b + npad * RAMP_MV2_KB && b.slot_wsc == b.slot_xs);
                CHECK(b.slot_bytes == ramp_mv2_align(RAMP_MV2_A_BYTES + npad * RAMP_MV2_KB,
                                                     RAMP_MV2_ALIGN));
                CHECK(b.inter == st * b.slot_bytes && b.inter % RAMP_MV2_ALIGN == 0);
                CHECK((npad * RAMP_MV2_KB) % RAMP_MV2_ALIGN == 0); /* every K tile aligned */
                CHECK(b.iscale == b.inter + npad * widths[wi] * 2); /* w / 64 K tiles */
                CHECK(b.amax == b.iscale && b.tok == b.amax);       /* no scales, no amax */
                CHECK(b.rw > b.tok && b.bars > b.rw && b.head > b.bars);
                CHECK(b.total == b.head + 16 + RAMP_MV2_ALIGN);
                CHECK(ramp_moe_v2_layout_bf(rows[ri], widths[wi], st, 0).total == f.total);
            }
    /* what the BF16 spaces hold: r64.w512.s4, wide w = 128 with 4 stages and
     * w = 256 with 3 fit; one more stage, or a wide w = 512 with 3, does not */
    CHECK(ramp_moe_v2_layout_bf(64, 512, 4, 1).total == 230992);
    CHECK(ramp_moe_v2_layout_bf(64, 512, 5, 1).total > 232448);
    CHECK(ramp_moe_v2_layout_bf(128, 128, 4, 1).total == 231504);
    CHECK(ramp_moe_v2_layout_bf(128, 128, 5, 1).total > 232448);
    CHECK(ramp_moe_v2_layout_bf(128, 256, 3, 1).total <= 232448);
    CHECK(ramp_moe_v2_layout_bf(128, 256, 4, 1).total > 232448);
    CHECK(ramp_moe_v2_layout_bf(128, 512, 3, 1).total > 232448);
    for (int st = 2; st <= 6; st++) { /* phase 2: the ring without scale slots */
        const ramp_moe_v2_layout f = ramp_moe_v2_layout_down(128, st);
        const ramp_moe_v2_layout b = ramp_moe_v2_layout_down_bf(128, st, 1);
        CHECK(b.stages == f.stages && b.slot_bytes == RAMP_MV2_A_BYTES + 128 * RAMP_MV2_KB);
        CHECK(b.tok == (long long)b.stages * b.slot_bytes && b.ostage % 16 == 0);
        CHECK(b.total == f.total - (long long)f.stages * (f.slot_bytes - b.slot_bytes));
        CHECK(b.total <= 232448);
    }
    const int inters[3] = {768, 2048, 16384};
    for (int i = 0; i < 3; i++) { /* the workspace: 2 bytes a column, no scales */
        const ramp_moe_v2_ws_layout w = ramp_moe_v2_ws_layout_bf(5, inters[i], 1);
        CHECK(w.iscale == 128LL * inters[i] * 2 && w.tile == w.iscale);
        CHECK(w.tile % 256 == 0 && w.total == 5 * w.tile);
        CHECK(ramp_moe_v2_ws_layout_bf(5, inters[i], 0).total ==
              ramp_moe_v2_ws_layout_of(5, inters[i]).total);
    }
    ramp_moe_variant v;
    memset(&v, 0, sizeof v);
    v.geom = (ramp_geometry){32, 8, 2048, 7168, 1};
    CHECK_OK(ramp_config_parse("r128.w128.s4.ph2.dk2", &v.cfg));
    CHECK_OK(ramp_moe_v2_check(&v));
    CHECK(ramp_moe_v2_ws_bytes(&v, NULL, 64) ==
          (size_t)ramp_moe_v2_ws_layout_bf(64, 2048, 1).total);
    CHECK(ramp_moe_v2_layout_for(&v).total == ramp_moe_v2_layout_bf(128, 128, 4, 1).total);
    CHECK_OK(ramp_config_parse("r128.w512.s3", &v.cfg));
    CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED); /* 280,640 B */
    CHECK(strstr(ramp_last_error(), "227 KB") != NULL);
}

/* 8. Multicast pairs (RAMP_MV2_MCAST, session 15): both CTAs of every
 * cluster walked through a launch as moe_v2.cuh's v2_tile walks them, on
 * random row-tile experts (sorted, as the selection writes them, with
 * garbage past the load's row tiles and some tiles of no expert), grids
 * and slice counts. The two must skip the same tiles (else their rings'
 * phases part and the kernel hangs), agree on sharing, share only the
 * same expert's weights; every real (row tile, slice) is run exactly once
 * with its rows, and no CTA has rows of a tile past the load. */
static void multicast_pairs(ramp_rng *rng) {
    enum { MAXR = 48, MAXT = 128 };
    static unsigned char seen[MAXR * MAXT];
    int te[MAXR + 4];
    const int tprs[] = {1, 3, 16, 128}, grids[] = {1, 2, 3, 7, 66}, experts[] = {1, 2, 8, 32};
    int cases = 0, shared = 0, phantoms = 0, apart = 0;
    for (int iter = 0; iter < 400; iter++) {
        const int E = experts[ramp_rng_next(rng) % 4];
        const int tpr = tprs[ramp_rng_next(rng) % 4], Q = grids[ramp_rng_next(rng) % 5];
        const int max_tiles = (int)(ramp_rng_next(rng) % MAXR) + 1;
        const int rt = (int)(ramp_rng_next(rng) % (unsigned)(max_tiles + 1));
        /* experts nondecreasing over the row tiles, a few tiles of none
         * (-1) or out of range, garbage past rt */
        int e = (int)(ramp_rng_next(rng) % (unsigned)E);
        for (int r = 0; r < max_tiles + 4; r++) {
            if (r > 0 && ramp_rng_next(rng) % 3 == 0 && e + 1 < E) e++;
            const unsigned u = (unsigned)(ramp_rng_next(rng) % 16);
            te[r] = r >= rt ? (int)(ramp_rng_next(rng) % (unsigned)E) : u == 0 ? -1 : u == 1 ? E : e;
        }
        memset(seen, 0, sizeof seen);
        int bad = 0;
        const int total = ramp_mv2_pairs(rt) * tpr;
        for (int q = 0; q < Q; q++)
            for (int tt = q; tt < total; tt += Q) {
                int ex[2], rows[2], mc[2], rr[2];
                for (int k = 0; k < 2; k++) {
                    int r0, r1, sl;
                    ramp_mv2_pair_of(tt, tpr, k, &r0, &r1, &sl);
                    const int e0 = r0 < rt ? te[r0] : -1, e1 = r1 < rt ? te[r1] : -1;
                    ex[k] = ramp_mv2_pair_expert(e0, e1, E, &rows[k], &mc[k]);
                    rr[k] = r0;
                    if (sl != tt % tpr || r0 / 2 != tt / tpr) bad++;
                    if (rows[k] && (r0 >= rt || te[r0] < 0 || te[r0] >= E || ex[k] != te[r0])) bad++;
                    if (rows[k]) {
                        if (seen[r0 * tpr + sl]++) bad++; /* twice */
                    }
                }
                if ((ex[0] < 0) != (ex[1] < 0)) bad++; /* one skips, one runs: a hang */
                if (ex[0] < 0) continue;
                if (mc[0] != mc[1] || (mc[0] && ex[0] != ex[1])) bad++;
                if (ex[0] < 0 || ex[0] >= E) bad++;
                shared += mc[0];
                phantoms += !rows[0] + !rows[1];
                apart += !mc[0];
                (void)rr;
            }
        /* every real tile run with its rows */
        for (int r = 0; r < rt; r++)
            for (int sl = 0; sl < tpr; sl++)
                if ((te[r] >= 0 && te[r] < E) != (seen[r * tpr + sl] == 1)) bad++;
        if (bad)
            fprintf(stderr, "multicast pairs: E %d, tpr %d, grid %d clusters, %d of %d row tiles: %d "
                            "bad\n", E, tpr, Q, rt, max_tiles, bad);
        CHECK(bad == 0);
        cases++;
    }
    /* the walk met every kind of pair */
    CHECK(shared > 0 && phantoms > 0 && apart > 0);
    printf("multicast pairs: %d launches, %d shared pair tiles, %d phantoms, %d pairs of two "
           "experts\n", cases, shared, phantoms, apart);
    /* the option: named in the program; refused outside 0, 1 */
    ramp_geometry g;
    CHECK_OK(mv2_geometry("mixtral-8x22b", &g));
    ramp_moe_variant v = mv2_variant(&g, 128, 128);
    ramp_moe_v2_opts o = ramp_moe_v2_default_opts();
    CHECK_EQ_INT(o.mcast, 0);
    o.mcast = 1;
    char name[128];
    ramp_moe_v2_program_name_opts(&v, &o, name, sizeof name);
    CHECK(strstr(name, "-mc") != NULL);
    o.mcast = -1;
    ramp_jit_result *r = NULL;
    CHECK_ERR(ramp_moe_v2_compile_opts(&v, &o, &r), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(r == NULL);
}

int main(void) {
    ramp_rng rng;
    unsigned long long seed = check_seed();
    ramp_rng_seed(&rng, seed);
    packer_layout(&rng);
    model_table();
    argument_checks();
    red4_permutation(&rng);
    wide_and_split();
    tile_order();
    bf16_layouts();
    multicast_pairs(&rng);
    return check_finish("test_moe_v2_tile");
}
