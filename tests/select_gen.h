/*
 * select_gen.h - random selection descriptors and routings for the
 * selection kernel's tests (test_select_cpu.c, test_gpu_select.c).
 *
 * Descriptors vary E, k, the local experts (contiguous or a scattered map),
 * max_tokens, the menu (tile rows, slices, slots, coefficients, deliberate
 * ties). Routings come in kinds that stress different paths: uniform,
 * skewed (gamma popularity), every pair on one expert, every id foreign,
 * every id -1, a sprinkling of out-of-range ids, and rows with repeats.
 */
#ifndef RAMP_SELECT_GEN_H
#define RAMP_SELECT_GEN_H

#include "internal.h"
#include "ramp.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    GEN_UNIFORM, GEN_SKEWED, GEN_ONE_EXPERT, GEN_FOREIGN, GEN_ALL_NONE,
    GEN_BAD_IDS, GEN_REPEATS, GEN_KINDS
};

static const char *gen_kind_name(int k) {
    static const char *names[] = {"uniform", "skewed", "one-expert", "foreign",
                                  "all -1", "bad ids", "repeats"};
    return k >= 0 && k < GEN_KINDS ? names[k] : "?";
}

static int gen_pick(ramp_rng *r, const int *v, int n) {
    return v[ramp_rng_below(r, (uint32_t)n)];
}

/* A random valid descriptor. local_of: room for 4096 entries. */
static void gen_desc(ramp_rng *r, ramp_select_desc *d, int32_t *local_of,
                     int big) {
    static const int Es[] = {1, 2, 8, 16, 32, 60, 64, 128, 256, 300, 1000};
    static const int rows[] = {1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64};
    memset(d, 0, sizeof *d);
    d->experts = gen_pick(r, Es, (int)(sizeof Es / sizeof Es[0]));
    int kmax = d->experts < 8 ? d->experts : 8;
    d->topk = 1 + (int)ramp_rng_below(r, (uint32_t)kmax);
    int lmax = d->experts < 256 ? d->experts : 256;
    if (ramp_rng_below(r, 4) == 0) d->local_experts = lmax;
    else d->local_experts = 1 + (int)ramp_rng_below(r, (uint32_t)(lmax < 40 ? lmax : 40));
    d->max_tokens = big ? 4096 : 1 + (int)ramp_rng_below(r, 600);
    if (ramp_rng_below(r, 2)) {
        d->local_of = NULL;
        d->first_expert = (int)ramp_rng_below(r, (uint32_t)(d->experts - d->local_experts + 1));
    } else {
        /* a scattered map: a random subset of experts, random local order,
         * maybe leaving some local indices unused */
        int *perm = malloc(sizeof(int) * (size_t)d->experts);
        for (int e = 0; e < d->experts; e++) perm[e] = e;
        for (int e = d->experts - 1; e > 0; e--) {
            int j = (int)ramp_rng_below(r, (uint32_t)(e + 1));
            int t = perm[e]; perm[e] = perm[j]; perm[j] = t;
        }
        for (int e = 0; e < d->experts; e++) local_of[e] = -1;
        int held = d->local_experts - (int)ramp_rng_below(r, 2) * (d->local_experts > 1);
        for (int j = 0; j < held; j++) local_of[perm[j]] = j;
        free(perm);
        d->local_of = local_of;
    }
    d->nentries = ramp_rng_below(r, 8) == 0 ? 1 + (int)ramp_rng_below(r, RAMP_SELECT_MAX_ENTRIES)
                                            : 6;
    for (int c = 0; c < d->nentries; c++) {
        ramp_select_entry *e = &d->entries[c];
        e->rows = ramp_rng_below(r, 10) ? gen_pick(r, rows, 11) : 1 + (int)ramp_rng_below(r, 200);
        e->slices = 1 + (int)ramp_rng_below(r, 32);
        e->slots = ramp_rng_below(r, 2) ? 132 * (1 + (int)ramp_rng_below(r, 3))
                                        : 1 + (int)ramp_rng_below(r, 1000);
        /* a wave limit on a third of the entries (split-K's is 1) */
        e->max_waves = ramp_rng_below(r, 3) == 0 ? 1 + (int)ramp_rng_below(r, 3) : 0;
        /* row tiles in pairs (multicast) on a quarter */
        e->pair_tiles = ramp_rng_below(r, 4) == 0;
        for (int j = 0; j < 4; j++) {
            double v = ramp_rng_uniform(r);
            /* mix scales and exact zeros, as NNLS fits have */
            e->theta[j] = ramp_rng_below(r, 5) == 0 ? 0.0f
                                                    : (float)(v * (j == 0 ? 20.0 : j == 1 ? 8.0 : 0.05));
        }
        /* deliberate ties: a copy of an earlier entry */
        if (c > 0 && ramp_rng_below(r, 6) == 0)
            *e = d->entries[ramp_rng_below(r, (uint32_t)c)];
    }
    d->group_only = ramp_rng_below(r, 10) == 0;
    /* a quarter choose among a random non-empty part of the menu (a layer's
     * size class) */
    const unsigned all = (unsigned)((1ull << d->nentries) - 1);
    d->entry_mask = 0;
    if (ramp_rng_below(r, 4) == 0) do
            d->entry_mask = (unsigned)ramp_rng_next(r) & all;
        while (!d->entry_mask);
}

/* Gives every entry of d a pairs coefficient theta[4] > 0 (Equation 3 +
 * pairs), on the scale of the other terms for up to a few thousand pairs;
 * an entry that copies an earlier one (a deliberate tie) gets its value. */
static void gen_pairs_term(ramp_rng *r, ramp_select_desc *d) {
    for (int c = 0; c < d->nentries; c++) {
        ramp_select_entry *e = &d->entries[c];
        int copy = -1;
        for (int j = 0; j < c && copy < 0; j++)
            if (memcmp(&d->entries[j], e, offsetof(ramp_select_entry, theta) + 4 * sizeof(float)) == 0)
                copy = j;
        e->theta[4] = copy >= 0 ? d->entries[copy].theta[4]
                                : (float)(0.0005 + 0.01 * ramp_rng_uniform(r));
    }
}

/* A routing of `tokens` tokens of kind `kind` into ids[tokens * k]. */
static void gen_routing(ramp_rng *r, const ramp_select_desc *d, int tokens,
                        int kind, int32_t *ids) {
    const int E = d->experts, k = d->topk;
    int32_t *map = malloc(sizeof(int32_t) * (size_t)E);
    for (int e = 0; e < E; e++)
        map[e] = d->local_of ? d->local_of[e]
                             : (e >= d->first_expert && e < d->first_expert + d->local_experts
                                    ? e - d->first_expert : -1);
    double *w = malloc(sizeof(double) * (size_t)E);
    double total = 0;
    for (int e = 0; e < E; e++) {
        w[e] = kind == GEN_SKEWED ? pow(ramp_rng_gamma(r, 0.3), 2.0) + 1e-9 : 1.0;
        total += w[e];
    }
    int hot = (int)ramp_rng_below(r, (uint32_t)E);
    int foreign = -1;
    for (int e = 0; e < E && foreign < 0; e++)
        if (map[e] < 0) foreign = e;
    for (int t = 0; t < tokens; t++) {
        for (int j = 0; j < k; j++) {
            int32_t id;
            switch (kind) {
            case GEN_ONE_EXPERT: id = j == 0 ? hot : (int32_t)ramp_rng_below(r, (uint32_t)E); break;
            case GEN_FOREIGN: id = foreign >= 0 ? foreign : -1; break;
            case GEN_ALL_NONE: id = -1; break;
            case GEN_REPEATS: id = (int32_t)ramp_rng_below(r, (uint32_t)(E < 3 ? E : 3)); break;
            default: {
                /* top-k without repeats, by weight (rejection) */
                for (int tries = 0;; tries++) {
                    double u = ramp_rng_uniform(r) * total, acc = 0;
                    id = E - 1;
                    for (int e = 0; e < E; e++) {
                        acc += w[e];
                        if (u < acc) { id = e; break; }
                    }
                    int dup = 0;
                    for (int i = 0; i < j; i++) dup |= ids[(size_t)t * k + i] == id;
                    if (!dup || tries > 50) break;
                }
            }
            }
            if (kind == GEN_BAD_IDS && ramp_rng_below(r, 8) == 0) {
                static const int32_t bad[] = {-2, -1000, INT32_MIN, INT32_MAX, 65535, 70000};
                uint32_t pick = ramp_rng_below(r, 8);
                id = pick < 6 ? bad[pick] : (pick == 6 ? E : E + 1);
            }
            if (kind != GEN_ALL_NONE && kind != GEN_FOREIGN && ramp_rng_below(r, 50) == 0)
                id = -1; /* a dropped slot */
            ids[(size_t)t * k + j] = id;
        }
    }
    free(map);
    free(w);
}

#endif /* RAMP_SELECT_GEN_H */
