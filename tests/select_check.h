/*
 * select_check.h - checks a selection result against the definition, not
 * against the CPU twin's code: counts from a plain loop, the expected run of
 * every expert (its pair indices in increasing order, then -1 padding to
 * whole tiles), tile starts, the tile -> expert map, meta, and Equation 3
 * (with the pairs term) recomputed in double from ramp_features_compute. Also checks that slots
 * and tiles past the end still hold the poison the caller put there.
 * Include after check.h.
 */
#ifndef RAMP_SELECT_CHECK_H
#define RAMP_SELECT_CHECK_H

#include "select_gen.h"

#define SEL_POISON 0x5a5a5a5a

static void sel_poison(ramp_select_result *r) {
    for (int64_t i = 0; i < r->max_slots; i++) r->sorted_ids[i] = SEL_POISON;
    for (int64_t i = 0; i < r->max_tiles; i++) r->tile_expert[i] = SEL_POISON;
    for (int i = 0; i <= r->local_experts; i++) r->tile_start[i] = SEL_POISON;
    for (int i = 0; i < r->local_experts; i++) r->counts[i] = SEL_POISON;
    for (int i = 0; i < RAMP_SELECT_META_COUNT; i++) r->meta[i] = SEL_POISON;
}

/* Equation 3 (+ theta[4] * pairs) in double through the cost-model
 * module's features. */
static double sel_pred_double(const ramp_select_entry *e, int nexp,
                              const int32_t *counts, ramp_features *f) {
    double pairs = 0;
    for (int i = 0; i < nexp; i++) pairs += counts[i];
    /* a configuration and geometry with the same b, q, S and pairing:
     * q = ceil(inter / width) * splitk with width = 128, inter = 128 * q */
    ramp_config c = {.rows = e->rows, .width = 128, .stages = 2, .splitk = 1,
                     .mcast = e->pair_tiles};
    ramp_geometry g = {.experts = nexp, .topk = 1, .inter = 128 * e->slices,
                       .hidden = 128};
    ramp_features_compute(&c, &g, e->slots, 1, nexp, counts, f);
    /* past max_waves: the penalty (ramp.h's definition, not the twin's) */
    double past = e->max_waves > 0 && f->waves > e->max_waves ? RAMP_PAST_WAVES_US : 0.0;
    return (double)e->theta[0] + (double)e->theta[1] * f->waves +
           (double)e->theta[2] * f->tiles + (double)e->theta[3] * f->active +
           (double)e->theta[4] * pairs + past;
}

/* Returns the number of failed checks it added. */
static int sel_check(const ramp_select_desc *d, int tokens, const int32_t *ids,
                     const ramp_select_result *r, const char *what) {
    int before = check_failures;
    const int E = d->experts, EL = d->local_experts, P = tokens * d->topk;
    int32_t *map = malloc(sizeof(int32_t) * (size_t)E);
    int32_t *cnt = calloc((size_t)EL, sizeof(int32_t));
    int bad = 0, local = 0;
    for (int e = 0; e < E; e++)
        map[e] = d->local_of ? d->local_of[e]
                             : (e >= d->first_expert && e < d->first_expert + EL
                                    ? e - d->first_expert : -1);
    for (int p = 0; p < P; p++) {
        int64_t id = ids[p];
        if (id >= 0 && id < E) {
            if (map[id] >= 0) { cnt[map[id]]++; local++; }
        } else if (id != -1) bad++;
    }
    for (int e = 0; e < EL; e++) CHECK_EQ_INT(r->counts[e], cnt[e]);
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_LOCAL], local);
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_BAD_IDS], bad);
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_TOKENS], tokens);
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_CLAMPED], 0);

    /* the choice: predictions match Equation 3, argmin over the entries
     * entry_mask allows, ties to lowest */
    int chosen = r->meta[RAMP_SELECT_META_CHOSEN];
    CHECK(chosen >= 0 && chosen < d->nentries);
    if (chosen < 0 || chosen >= d->nentries) chosen = 0;
    const unsigned allowed = d->entry_mask ? d->entry_mask : ~0u;
    if (!d->group_only) CHECK((allowed >> chosen) & 1u);
    if (d->group_only) {
        CHECK_EQ_INT(chosen, 0);
        for (int c = 0; c < d->nentries; c++) CHECK(r->pred[c] == 0.0f);
    } else {
        for (int c = 0; c < d->nentries; c++) {
            ramp_features f;
            double want = sel_pred_double(&d->entries[c], EL, cnt, &f);
            /* float32 rounding of four fmaf steps and the conversions */
            CHECK_NEAR(r->pred[c], want, 1e-5 * fabs(want) + 1e-6);
            if (!((allowed >> c) & 1u)) continue;
            if (c < chosen) CHECK(r->pred[c] > r->pred[chosen]);
            else CHECK(r->pred[c] >= r->pred[chosen]);
        }
    }

    /* layout */
    const int b = d->entries[chosen].rows;
    int tiles = 0;
    for (int e = 0; e < EL; e++) {
        CHECK_EQ_INT(r->tile_start[e], tiles);
        tiles += (cnt[e] + b - 1) / b;
    }
    CHECK_EQ_INT(r->tile_start[EL], tiles);
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_TILES], tiles);
    CHECK_EQ_INT(r->meta[RAMP_SELECT_META_SLOTS], (int64_t)tiles * b);
    CHECK(tiles <= r->max_tiles && (int64_t)tiles * b <= r->max_slots);
    if (check_failures == before && tiles <= r->max_tiles &&
        (int64_t)tiles * b <= r->max_slots) {
        int32_t *next = calloc((size_t)EL, sizeof(int32_t)); /* slot cursor */
        for (int e = 0; e < EL; e++) next[e] = r->tile_start[e] * b;
        for (int p = 0; p < P; p++) { /* every local pair, in order */
            int64_t id = ids[p];
            if (id < 0 || id >= E || map[id] < 0) continue;
            int e = map[id];
            if (r->sorted_ids[next[e]] != p) {
                fprintf(stderr, "%s: expert %d slot %d holds %d, expected pair %d\n",
                        what, e, next[e], r->sorted_ids[next[e]], p);
                check_failures++;
                break;
            }
            next[e]++;
        }
        for (int e = 0; e < EL && check_failures == before; e++) {
            for (int j = next[e]; j < r->tile_start[e + 1] * b; j++)
                if (r->sorted_ids[j] != -1) {
                    fprintf(stderr, "%s: padding slot %d of expert %d holds %d\n",
                            what, j, e, r->sorted_ids[j]);
                    check_failures++;
                    break;
                }
            for (int t = r->tile_start[e]; t < r->tile_start[e + 1]; t++)
                if (r->tile_expert[t] != e) {
                    fprintf(stderr, "%s: tile %d maps to %d, expected %d\n", what,
                            t, r->tile_expert[t], e);
                    check_failures++;
                    break;
                }
        }
        free(next);
        /* nothing written past the end */
        for (int64_t i = (int64_t)tiles * b; i < r->max_slots; i++)
            if (r->sorted_ids[i] != SEL_POISON) {
                fprintf(stderr, "%s: slot %lld past the end was written\n", what,
                        (long long)i);
                check_failures++;
                break;
            }
        for (int64_t i = tiles; i < r->max_tiles; i++)
            if (r->tile_expert[i] != SEL_POISON) {
                fprintf(stderr, "%s: tile %lld past the end was written\n", what,
                        (long long)i);
                check_failures++;
                break;
            }
    }
    free(map);
    free(cnt);
    if (check_failures != before)
        fprintf(stderr, "  in %s: E=%d k=%d EL=%d tokens=%d menu=%d group_only=%d\n",
                what, E, d->topk, EL, tokens, d->nentries, d->group_only);
    return check_failures - before;
}

#endif /* RAMP_SELECT_CHECK_H */
