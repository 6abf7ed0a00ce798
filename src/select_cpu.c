/*
 * select_cpu.c - the selection kernel's descriptor checks, output sizes and
 * CPU twin (paper Section 3.2, Algorithm 1).
 *
 * The twin computes exactly what kernels/select.cuh computes, bit for bit:
 * the same counts, the same float32 predictions (integer features, then
 * fmaf(th4, P, fmaf(th3, A, fmaf(th2, T, fmaf(th1, W, th0)))); fmaf is
 * correctly rounded in C99 and __fmaf_rn on the GPU, so no contraction or
 * excess precision can differ; th4 = 0 for Equation 3 alone leaves the sum
 * as it was), the same choice (lowest prediction, ties to the lowest menu
 * index), and the same layout: token-slot ids grouped by local expert, in
 * increasing order within an expert (a stable counting sort), each expert's
 * run padded with -1 to whole tiles of the chosen entry.
 */
#include "select_cpu.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Capacity bounds: sum_e ceil(n_e / b) <= floor(P / b) + min(EL, P) and
 * sum_e ceil(n_e / b) * b <= P + min(EL, P) * (b - 1). */
static void capacity_of(const ramp_select_desc *d, int64_t *slots,
                        int64_t *tiles) {
    int64_t P = (int64_t)d->max_tokens * d->topk;
    int64_t A = P < d->local_experts ? P : d->local_experts;
    int64_t ms = 1, mt = 1;
    int n = d->group_only ? 1 : d->nentries;
    for (int c = 0; c < n; c++) {
        int64_t b = d->entries[c].rows;
        int64_t t = P / b + A;
        int64_t s = P + A * (b - 1);
        if (t > mt) mt = t;
        if (s > ms) ms = s;
    }
    *slots = ms;
    *tiles = mt;
}

ramp_status ramp_select_desc_check(const ramp_select_desc *d) {
    RAMP_CHECK(d, RAMP_ERR_INVALID_ARGUMENT, "selection descriptor is NULL");
    RAMP_CHECK(d->experts >= 1 && d->experts <= RAMP_SELECT_MAX_EXPERTS,
               RAMP_ERR_INVALID_ARGUMENT, "experts = %d, expected 1..%d",
               d->experts, RAMP_SELECT_MAX_EXPERTS);
    RAMP_CHECK(d->topk >= 1 && d->topk <= d->experts, RAMP_ERR_INVALID_ARGUMENT,
               "topk = %d, expected 1..experts (%d)", d->topk, d->experts);
    RAMP_CHECK(d->max_tokens >= 1, RAMP_ERR_INVALID_ARGUMENT,
               "max_tokens = %d, expected >= 1", d->max_tokens);
    RAMP_CHECK((int64_t)d->max_tokens * d->topk <= RAMP_SELECT_MAX_PAIRS,
               RAMP_ERR_INVALID_ARGUMENT,
               "max_tokens * topk = %d * %d = %lld pairs, at most %d", d->max_tokens,
               d->topk, (long long)d->max_tokens * d->topk, RAMP_SELECT_MAX_PAIRS);
    RAMP_CHECK(d->local_experts >= 1 && d->local_experts <= RAMP_SELECT_MAX_LOCAL &&
                   d->local_experts <= d->experts,
               RAMP_ERR_INVALID_ARGUMENT,
               "local_experts = %d, expected 1..min(%d, experts = %d)",
               d->local_experts, RAMP_SELECT_MAX_LOCAL, d->experts);
    if (d->local_of) {
        /* Each local index may be held by at most one global expert. */
        char *used = calloc((size_t)d->local_experts, 1);
        RAMP_CHECK(used, RAMP_ERR_OUT_OF_MEMORY, "out of memory");
        for (int e = 0; e < d->experts; e++) {
            int32_t l = d->local_of[e];
            if (l == -1) continue;
            if (l < -1 || l >= d->local_experts) {
                free(used);
                RAMP_FAIL(RAMP_ERR_INVALID_ARGUMENT,
                          "local_of[%d] = %d, expected -1 or 0..%d", e, l,
                          d->local_experts - 1);
            }
            if (used[l]) {
                free(used);
                RAMP_FAIL(RAMP_ERR_INVALID_ARGUMENT,
                          "local_of[%d] = %d: local index already given to "
                          "another expert", e, l);
            }
            used[l] = 1;
        }
        free(used);
    } else {
        RAMP_CHECK(d->first_expert >= 0 &&
                       d->first_expert <= d->experts - d->local_experts,
                   RAMP_ERR_INVALID_ARGUMENT,
                   "first_expert = %d with %d local experts: past E = %d",
                   d->first_expert, d->local_experts, d->experts);
    }
    RAMP_CHECK(d->nentries >= 1 && d->nentries <= RAMP_SELECT_MAX_ENTRIES,
               RAMP_ERR_INVALID_ARGUMENT, "nentries = %d, expected 1..%d",
               d->nentries, RAMP_SELECT_MAX_ENTRIES);
    RAMP_CHECK(d->group_only == 0 || d->group_only == 1, RAMP_ERR_INVALID_ARGUMENT,
               "group_only = %d, expected 0 or 1", d->group_only);
    RAMP_CHECK(d->one_shape == 0 || d->one_shape == 1, RAMP_ERR_INVALID_ARGUMENT,
               "one_shape = %d, expected 0 or 1", d->one_shape);
    RAMP_CHECK(d->pdl_wait == 0 || d->pdl_wait == 1, RAMP_ERR_INVALID_ARGUMENT,
               "pdl_wait = %d, expected 0 or 1", d->pdl_wait);
    RAMP_CHECK((d->entry_mask >> d->nentries) == 0,
               RAMP_ERR_INVALID_ARGUMENT,
               "entry_mask = 0x%x names an entry past the menu's %d", d->entry_mask,
               d->nentries);
    for (int c = 0; c < d->nentries; c++) {
        const ramp_select_entry *e = &d->entries[c];
        RAMP_CHECK(e->rows >= 1 && e->rows <= 1024, RAMP_ERR_INVALID_ARGUMENT,
                   "entries[%d].rows = %d, expected 1..1024", c, e->rows);
        RAMP_CHECK(e->slices >= 1 && e->slices <= 65536, RAMP_ERR_INVALID_ARGUMENT,
                   "entries[%d].slices = %d, expected 1..65536", c, e->slices);
        RAMP_CHECK(e->slots >= 1 && e->slots <= 65535, RAMP_ERR_INVALID_ARGUMENT,
                   "entries[%d].slots = %d, expected 1..65535", c, e->slots);
        RAMP_CHECK(e->max_waves >= 0 && e->max_waves <= 32767, RAMP_ERR_INVALID_ARGUMENT,
                   "entries[%d].max_waves = %d, expected 0 (no limit) .. 32767", c,
                   e->max_waves);
        RAMP_CHECK(e->pair_tiles == 0 || e->pair_tiles == 1, RAMP_ERR_INVALID_ARGUMENT,
                   "entries[%d].pair_tiles = %d, expected 0 or 1", c, e->pair_tiles);
        for (int j = 0; j < 5; j++)
            RAMP_CHECK(isfinite(e->theta[j]) && fabsf(e->theta[j]) <= RAMP_SELECT_THETA_MAX,
                       RAMP_ERR_INVALID_ARGUMENT,
                       "entries[%d].theta[%d] = %g: must be finite, |theta| <= 1e20",
                       c, j, (double)e->theta[j]);
    }
    /* T = q * tiles and T + S - 1 must fit in int32 on the GPU. */
    int64_t slots, tiles;
    capacity_of(d, &slots, &tiles);
    for (int c = 0; c < d->nentries; c++) {
        int64_t T = tiles * d->entries[c].slices + d->entries[c].slots;
        RAMP_CHECK(T < INT32_MAX, RAMP_ERR_INVALID_ARGUMENT,
                   "entries[%d]: up to %lld tiles x %d slices overflows int32",
                   c, (long long)tiles, d->entries[c].slices);
    }
    RAMP_CHECK(slots < INT32_MAX, RAMP_ERR_INVALID_ARGUMENT,
               "padded slots up to %lld overflow int32", (long long)slots);
    return RAMP_OK;
}

ramp_status ramp_select_capacity(const ramp_select_desc *d, int64_t *max_slots,
                                 int64_t *max_tiles) {
    RAMP_TRY(ramp_select_desc_check(d));
    RAMP_CHECK(max_slots && max_tiles, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_select_capacity: NULL output");
    capacity_of(d, max_slots, max_tiles);
    return RAMP_OK;
}

ramp_status ramp_select_entry_make(const ramp_config *c, const ramp_geometry *g,
                                   int sms, int blocks_per_sm,
                                   const double theta[4],
                                   ramp_select_entry *out) {
    return ramp_select_entry_make_terms(c, g, sms, blocks_per_sm, theta, 4, out);
}

ramp_status ramp_select_entry_make_terms(const ramp_config *c, const ramp_geometry *g,
                                         int sms, int blocks_per_sm, const double *theta,
                                         int nterms, ramp_select_entry *out) {
    RAMP_CHECK(c && g && theta && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_select_entry_make: NULL argument");
    RAMP_CHECK(nterms == 4 || nterms == 5, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_select_entry_make: %d cost terms, expected 4 (Equation 3) or 5 (with "
               "pairs)", nterms);
    RAMP_CHECK(c->rows >= 1 && c->width >= 1 && c->splitk >= 1,
               RAMP_ERR_INVALID_ARGUMENT,
               "configuration rows = %d, width = %d, splitk = %d", c->rows,
               c->width, c->splitk);
    RAMP_CHECK(g->inter >= 1, RAMP_ERR_INVALID_ARGUMENT, "geometry inter = %d",
               g->inter);
    RAMP_CHECK(sms >= 1 && blocks_per_sm >= 1 && (int64_t)sms * blocks_per_sm <= 65535,
               RAMP_ERR_INVALID_ARGUMENT,
               "sms = %d, blocks_per_sm = %d: both must be >= 1, their product <= 65535", sms,
               blocks_per_sm);
    memset(out, 0, sizeof *out);
    out->rows = c->rows;
    out->slices = (g->inter + c->width - 1) / c->width * c->splitk;
    out->slots = sms * blocks_per_sm;
    out->pair_tiles = c->mcast ? 1 : 0; /* as the cost model's T (costmodel.c, tiles_of) */
    for (int j = 0; j < nterms; j++) { /* theta[4] stays 0 for four terms */
        RAMP_CHECK(isfinite(theta[j]) && fabs(theta[j]) <= RAMP_SELECT_THETA_MAX,
                   RAMP_ERR_INVALID_ARGUMENT,
                   "theta[%d] = %g: must be finite, |theta| <= 1e20", j, theta[j]);
        out->theta[j] = (float)theta[j];
    }
    return RAMP_OK;
}

ramp_status ramp_select_entry_from_plan(const ramp_plan *p, int i, ramp_select_entry *out) {
    RAMP_CHECK(p && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_select_entry_from_plan: NULL argument");
    RAMP_CHECK(i >= 0 && i < p->count, RAMP_ERR_INVALID_ARGUMENT,
               "plan entry %d: the plan has %d entries", i, p->count);
    /* The plan's own S_c (the wave size its W term was fit with), not
     * sms * occupancy. */
    const int nterms = p->cost_model == RAMP_COSTMODEL_EQ3_PAIRS ? 5 : 4;
    RAMP_TRY(ramp_select_entry_make_terms(&p->configs[i], &p->geom, ramp_plan_slots(p, i), 1,
                                          p->theta[i], nterms, out));
    out->max_waves = ramp_config_max_waves((ramp_kernel_version)p->kernel, &p->configs[i]);
    return RAMP_OK;
}

void ramp_select_build_map(const ramp_select_desc *d, int32_t *map) {
    for (int e = 0; e < d->experts; e++) {
        if (d->local_of) map[e] = d->local_of[e];
        else map[e] = e >= d->first_expert && e < d->first_expert + d->local_experts
                          ? e - d->first_expert : -1;
    }
}

/* Equation 3 (+ th4 * pairs) from the load's features: raw tiles (before
 * pair rounding), active experts and pairs */
static float predict_features(const ramp_select_entry *e, int tiles, int active, int pairs) {
    if (e->pair_tiles) tiles = (tiles + 1) / 2 * 2;
    int T = tiles * e->slices;
    int W = (T + e->slots - 1) / e->slots;
    float t = e->theta[0];
    t = fmaf(e->theta[1], (float)W, t);
    t = fmaf(e->theta[2], (float)T, t);
    t = fmaf(e->theta[3], (float)active, t);
    /* P = this GPU's token-expert pairs, the cost model's sum of the load;
     * last, as in the kernel (pairs <= 2^20: exact in float) */
    t = fmaf(e->theta[4], (float)pairs, t);
    if (e->max_waves > 0 && W > e->max_waves) t += (float)RAMP_PAST_WAVES_US;
    return t;
}

float ramp_select_predict(const ramp_select_entry *e, int local_experts,
                          const int32_t *counts) {
    int tiles = 0, active = 0, pairs = 0;
    for (int i = 0; i < local_experts; i++) {
        tiles += (counts[i] + e->rows - 1) / e->rows;
        active += counts[i] > 0;
        pairs += counts[i];
    }
    return predict_features(e, tiles, active, pairs);
}

ramp_status ramp_select_result_create(const ramp_select_desc *d,
                                      ramp_select_result **out) {
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "ramp_select_result_create: NULL out");
    int64_t slots, tiles;
    RAMP_TRY(ramp_select_capacity(d, &slots, &tiles));
    ramp_select_result *r = ramp_calloc(1, sizeof *r);
    if (!r) return RAMP_ERR_OUT_OF_MEMORY;
    r->local_experts = d->local_experts;
    r->max_slots = slots;
    r->max_tiles = tiles;
    r->counts = ramp_calloc((size_t)d->local_experts, sizeof(int32_t));
    r->tile_start = ramp_calloc((size_t)d->local_experts + 1, sizeof(int32_t));
    r->sorted_ids = ramp_calloc((size_t)slots, sizeof(int32_t));
    r->tile_expert = ramp_calloc((size_t)tiles, sizeof(int32_t));
    if (!r->counts || !r->tile_start || !r->sorted_ids || !r->tile_expert) {
        ramp_select_result_free(r);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    *out = r;
    return RAMP_OK;
}

void ramp_select_result_free(ramp_select_result *r) {
    if (!r) return;
    free(r->counts);
    free(r->tile_start);
    free(r->sorted_ids);
    free(r->tile_expert);
    free(r);
}

ramp_status ramp_select_cpu(const ramp_select_desc *d, int tokens,
                            const int32_t *ids, ramp_select_result *out) {
    int64_t cap_slots, cap_tiles;
    RAMP_TRY(ramp_select_capacity(d, &cap_slots, &cap_tiles));
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "ramp_select_cpu: NULL result");
    RAMP_CHECK(out->local_experts == d->local_experts && out->max_slots >= cap_slots &&
                   out->max_tiles >= cap_tiles,
               RAMP_ERR_INVALID_ARGUMENT,
               "result was made for another descriptor (%d local experts, "
               "%lld slots, %lld tiles; need %d, %lld, %lld)",
               out->local_experts, (long long)out->max_slots,
               (long long)out->max_tiles, d->local_experts,
               (long long)cap_slots, (long long)cap_tiles);
    RAMP_CHECK(tokens >= 0 && tokens <= d->max_tokens, RAMP_ERR_INVALID_ARGUMENT,
               "tokens = %d, expected 0..max_tokens (%d)", tokens, d->max_tokens);
    RAMP_CHECK(ids || tokens == 0, RAMP_ERR_INVALID_ARGUMENT,
               "ids is NULL with %d tokens", tokens);
    const int E = d->experts, EL = d->local_experts;
    const int P = tokens * d->topk;
    int32_t *map = ramp_calloc((size_t)E, sizeof *map);
    int32_t *cursor = ramp_calloc((size_t)EL, sizeof *cursor);
    if (!map || !cursor) {
        free(map);
        free(cursor);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    ramp_select_build_map(d, map);

    /* counts; ids that are neither -1 nor in [0, E) are counted as bad */
    int32_t *cnt = out->counts;
    memset(cnt, 0, (size_t)EL * sizeof *cnt);
    int bad = 0, local = 0;
    for (int p = 0; p < P; p++) {
        int32_t id = ids[p];
        if ((uint32_t)id < (uint32_t)E) {
            if (map[id] >= 0) {
                cnt[map[id]]++;
                local++;
            }
        } else if (id != -1) {
            bad++;
        }
    }

    /* Equation 3 and the choice */
    int chosen = -1;
    memset(out->pred, 0, sizeof out->pred);
    if (!d->group_only) {
        const unsigned allowed = d->entry_mask ? d->entry_mask : ~0u;
        for (int c = 0; c < d->nentries; c++) {
            out->pred[c] = ramp_select_predict(&d->entries[c], EL, cnt);
            if (((allowed >> c) & 1u) && (chosen < 0 || out->pred[c] < out->pred[chosen]))
                chosen = c;
        }
    }
    if (chosen < 0) chosen = 0;
    const int b = d->entries[chosen].rows;

    /* tiles per expert, padded layout, stable scatter */
    int tiles = 0;
    for (int e = 0; e < EL; e++) {
        out->tile_start[e] = tiles;
        cursor[e] = tiles * b;
        tiles += (cnt[e] + b - 1) / b;
    }
    out->tile_start[EL] = tiles;
    for (int p = 0; p < P; p++) {
        int32_t id = ids[p];
        if ((uint32_t)id < (uint32_t)E && map[id] >= 0)
            out->sorted_ids[cursor[map[id]]++] = p;
    }
    for (int e = 0; e < EL; e++) {
        for (int j = cursor[e]; j < out->tile_start[e + 1] * b; j++)
            out->sorted_ids[j] = -1;
        for (int t = out->tile_start[e]; t < out->tile_start[e + 1]; t++)
            out->tile_expert[t] = e;
    }

    memset(out->meta, 0, sizeof out->meta);
    out->meta[RAMP_SELECT_META_CHOSEN] = chosen;
    out->meta[RAMP_SELECT_META_TILES] = tiles;
    out->meta[RAMP_SELECT_META_SLOTS] = tiles * b;
    out->meta[RAMP_SELECT_META_LOCAL] = local;
    out->meta[RAMP_SELECT_META_BAD_IDS] = bad;
    out->meta[RAMP_SELECT_META_TOKENS] = tokens;
    out->meta[RAMP_SELECT_META_CLAMPED] = 0;
    free(map);
    free(cursor);
    return RAMP_OK;
}

/* Several local experts. T tokens whose ids name distinct experts give
 * exactly the count vectors with every c_e in 0..T and sum <= min(k, EL) T
 * (deal each expert's pairs to the tokens round robin: no token gets one
 * expert twice or more than min(k, EL) pairs). An entry's prediction sees a
 * count only through ceil(c / rows), constant between consecutive multiples
 * of the menu's row counts (a bucket), whether it is 0, and the sum P, the
 * only term left linear. So a histogram of the experts over the buckets fixes
 * every term but P, which ranges over an interval; the entries that are the
 * first minimum somewhere on it are found by walking the lower envelope of
 * the entries' lines in P. Every histogram is visited: exact up to the
 * float32 near-ties, which count as reachable (never fewer entries than a
 * routing can choose). */
#define CLASS_HISTOGRAM_CAP 1000000.0 /* histograms one batch size may visit */
#define CLASS_BUCKETS_MAX 256
/* steps along the envelopes: about two a histogram, more where two lines'
 * slopes differ by a float's step and their predictions stay equal over a
 * stretch of P (a review measured 10 a histogram); this bounds the time */
#define CLASS_STEP_CAP 2.0e7
#define CLASS_PAST_CAP (-1)
#define CLASS_NO_MEMORY (-2)

typedef struct {
    const ramp_select_desc *d;
    int nbuckets;     /* buckets 1..nbuckets of nonzero counts */
    int *lo, *hi;     /* bucket b holds the counts lo[b]..hi[b] */
    int *tiles;       /* [b * nentries + j]: ceil(c / rows_j) in bucket b */
    int max_pairs;    /* min(k, EL) * T */
    unsigned reach;
    double steps, max_steps; /* envelope steps taken, allowed */
} class_walk;

/* C(experts + buckets, buckets), or something past `cap` */
static double histograms(int experts, int buckets, double cap) {
    double n = 1.0;
    for (int i = 1; i <= buckets && n <= 2.0 * cap; i++)
        n = n * (double)(experts + i) / (double)i;
    return n;
}

/* the entries that are the first minimum at some P in plo..phi, given the
 * rest of the load's features */
static void class_leaf(class_walk *w, const int *tiles, int active, int plo, int phi) {
    const ramp_select_desc *d = w->d;
    float t[RAMP_SELECT_MAX_ENTRIES];
    for (int P = plo;; w->steps += 1.0) {
        if (w->steps > w->max_steps) return; /* class_reach reports the cap */
        int c = 0;
        for (int j = 0; j < d->nentries; j++) {
            t[j] = predict_features(&d->entries[j], tiles[j], active, P);
            if (t[j] < t[c]) c = j;
        }
        /* near-ties: rounding could order them either way between the
         * points visited */
        const float tol = 1e-5f * fabsf(t[c]) + 1e-6f;
        for (int j = 0; j < d->nentries; j++)
            if (t[j] <= t[c] + tol) w->reach |= 1u << j;
        if (P >= phi) return;
        /* only a line of smaller slope can take over as P grows */
        long long next = phi;
        for (int j = 0; j < d->nentries; j++) {
            const double dslope = (double)d->entries[c].theta[4] - d->entries[j].theta[4];
            if (dslope <= 0.0) continue;
            const double x = P + ((double)t[j] - t[c]) / dslope;
            const long long at = x < (double)phi ? (long long)floor(x) : phi;
            if (at < next) next = at;
        }
        P = next > P ? (int)next : P + 1;
    }
}

static void class_visit(class_walk *w, int b, int left, int *acc, int plo, int phi) {
    const int n = w->d->nentries;
    if (plo > w->max_pairs || w->steps > w->max_steps) return; /* lo only grows */
    if (b > w->nbuckets) {
        class_leaf(w, acc, w->d->local_experts - left, plo,
                   phi < w->max_pairs ? phi : w->max_pairs);
        return;
    }
    int next[RAMP_SELECT_MAX_ENTRIES];
    memcpy(next, acc, sizeof next);
    for (int k = 0; k <= left && plo + k * w->lo[b] <= w->max_pairs; k++) {
        class_visit(w, b + 1, left - k, next, plo + k * w->lo[b], phi + k * w->hi[b]);
        for (int j = 0; j < n; j++) next[j] += w->tiles[b * n + j];
    }
}

/* the entries T tokens can choose; CLASS_PAST_CAP when that takes more
 * than the limits, CLASS_NO_MEMORY */
static long long class_reach(const ramp_select_desc *d, int T, const ramp_class_limits *lim) {
    const int n = d->nentries, EL = d->local_experts;
    /* bucket ends: the multiples of every entry's rows up to T, and T */
    int nb = 0;
    for (int c = 1; c <= T; c++) {
        int end = c == T;
        for (int j = 0; j < n && !end; j++) end = c % d->entries[j].rows == 0;
        nb += end;
    }
    /* (the walk recurses once per bucket: bounded for small thread stacks) */
    if (nb > lim->buckets || nb > CLASS_BUCKETS_MAX ||
        histograms(EL, nb, lim->histograms) > lim->histograms)
        return CLASS_PAST_CAP;
    class_walk w = {d, nb, NULL, NULL, NULL, 0, 0, 0.0, lim->steps};
    w.lo = malloc((size_t)(nb + 1) * sizeof *w.lo);
    w.hi = malloc((size_t)(nb + 1) * sizeof *w.hi);
    w.tiles = malloc((size_t)(nb + 1) * (size_t)n * sizeof *w.tiles);
    if (!w.lo || !w.hi || !w.tiles) {
        free(w.lo), free(w.hi), free(w.tiles);
        return CLASS_NO_MEMORY;
    }
    for (int c = 1, b = 1, start = 1; c <= T; c++) {
        int end = c == T;
        for (int j = 0; j < n && !end; j++) end = c % d->entries[j].rows == 0;
        if (!end) continue;
        w.lo[b] = start;
        w.hi[b] = c;
        for (int j = 0; j < n; j++) w.tiles[b * n + j] = (c + d->entries[j].rows - 1) / d->entries[j].rows;
        start = c + 1;
        b++;
    }
    const int k = d->topk > 0 && d->topk < EL ? d->topk : EL;
    w.max_pairs = (int)((long long)k * T < INT_MAX ? (long long)k * T : INT_MAX);
    int acc[RAMP_SELECT_MAX_ENTRIES] = {0};
    class_visit(&w, 1, EL, acc, 0, 0);
    free(w.lo), free(w.hi), free(w.tiles);
    return w.steps > w.max_steps ? (long long)CLASS_PAST_CAP : (long long)w.reach;
}

int ramp_select_size_classes_search(const ramp_select_desc *d,
                                    int tokens[RAMP_SELECT_MAX_ENTRIES],
                                    unsigned masks[RAMP_SELECT_MAX_ENTRIES]) {
    const ramp_class_limits lim = {CLASS_HISTOGRAM_CAP, CLASS_BUCKETS_MAX, CLASS_STEP_CAP};
    return ramp_select_size_classes_limited(d, &lim, tokens, masks);
}

int ramp_select_size_classes_limited(const ramp_select_desc *d, const ramp_class_limits *lim,
                                     int tokens[RAMP_SELECT_MAX_ENTRIES],
                                     unsigned masks[RAMP_SELECT_MAX_ENTRIES]) {
    const unsigned all = (unsigned)((1ull << d->nentries) - 1);
    int n = 0, lastT = 0;
    unsigned reach = 0;
    /* batch sizes 1, 2, 3, 4, 6, 8, 12, ...: a batch between two of them
     * runs the larger one's class */
    for (int i = 0;; i++) {
        const int p2 = 1 << (i / 2);
        int T = i % 2 ? p2 + p2 / 2 : p2;
        if (i == 1) continue; /* 1.5 */
        if (T > d->max_tokens) T = d->max_tokens;
        if (T <= lastT) break;
        const long long r = class_reach(d, T, lim);
        if (r == CLASS_NO_MEMORY) return -1;
        if (r < 0) break; /* past the cap: the whole menu from here */
        const unsigned next = reach | (unsigned)r;
        if (next == all) break;
        if (next != reach && reach) { /* the class so far ends at lastT */
            tokens[n] = lastT;
            masks[n++] = reach;
        }
        reach = next;
        lastT = T;
        if (T == d->max_tokens) break;
    }
    if (reach && reach != all) {
        tokens[n] = lastT;
        masks[n++] = reach;
    }
    return n;
}

/* The search takes up to ~0.5 s (Qwen3-30B EP8's plan), and an engine
 * creates a layer per MoE layer from one plan: a few searches kept for the
 * process, keyed on everything the search reads. */
typedef struct {
    int used, local_experts, topk, max_tokens, nentries;
    ramp_select_entry entries[RAMP_SELECT_MAX_ENTRIES];
    int n, tokens[RAMP_SELECT_MAX_ENTRIES];
    unsigned masks[RAMP_SELECT_MAX_ENTRIES];
} class_memo;
#define CLASS_MEMOS 8
_Static_assert(sizeof(ramp_select_entry) == 10 * 4, "ramp_select_entry has padding");
static class_memo memos[CLASS_MEMOS];
static int memo_next;
static long long memo_hits;
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;

static int memo_is(const class_memo *m, const ramp_select_desc *d) {
    /* (an entry is ints and floats: no padding; equal bits, equal search) */
    return m->used && m->local_experts == d->local_experts && m->topk == d->topk &&
           m->max_tokens == d->max_tokens && m->nentries == d->nentries &&
           memcmp(m->entries, d->entries, (size_t)d->nentries * sizeof *d->entries) == 0;
}

static int size_classes_many(const ramp_select_desc *d, int tokens[RAMP_SELECT_MAX_ENTRIES],
                             unsigned masks[RAMP_SELECT_MAX_ENTRIES]) {
    pthread_mutex_lock(&memo_lock);
    for (int i = 0; i < CLASS_MEMOS; i++) {
        if (!memo_is(&memos[i], d)) continue;
        const int n = memos[i].n;
        memcpy(tokens, memos[i].tokens, sizeof memos[i].tokens);
        memcpy(masks, memos[i].masks, sizeof memos[i].masks);
        memo_hits++;
        pthread_mutex_unlock(&memo_lock);
        return n;
    }
    pthread_mutex_unlock(&memo_lock);
    const int n = ramp_select_size_classes_search(d, tokens, masks);
    if (n < 0) return 0; /* out of memory: the whole menu, and not kept */
    pthread_mutex_lock(&memo_lock);
    for (int i = 0; i < CLASS_MEMOS; i++) /* another thread searched it meanwhile */
        if (memo_is(&memos[i], d)) {
            pthread_mutex_unlock(&memo_lock);
            return n;
        }
    class_memo *m = &memos[memo_next];
    memo_next = (memo_next + 1) % CLASS_MEMOS;
    m->used = 1;
    m->local_experts = d->local_experts;
    m->topk = d->topk;
    m->max_tokens = d->max_tokens;
    m->nentries = d->nentries;
    memcpy(m->entries, d->entries, (size_t)d->nentries * sizeof *d->entries);
    m->n = n;
    memcpy(m->tokens, tokens, sizeof m->tokens);
    memcpy(m->masks, masks, sizeof m->masks);
    pthread_mutex_unlock(&memo_lock);
    return n;
}

long long ramp_select_size_classes_hits(void) {
    pthread_mutex_lock(&memo_lock);
    const long long h = memo_hits;
    pthread_mutex_unlock(&memo_lock);
    return h;
}

int ramp_select_size_classes(const ramp_select_desc *d, int tokens[RAMP_SELECT_MAX_ENTRIES],
                             unsigned masks[RAMP_SELECT_MAX_ENTRIES]) {
    if (d->group_only || d->local_experts < 1) return 0;
    if (d->local_experts > 1) return size_classes_many(d, tokens, masks);
    const unsigned all = (unsigned)((1ull << d->nentries) - 1);
    unsigned reach = 0;
    int n = 0;
    /* T tokens give the one local expert 0..T pairs; reach grows with T */
    for (int T = 0; T <= d->max_tokens && reach != all; T++) {
        const int32_t cnt = T;
        int chosen = 0;
        float best = 0.0f;
        for (int c = 0; c < d->nentries; c++) {
            const float t = ramp_select_predict(&d->entries[c], 1, &cnt);
            if (c == 0 || t < best) {
                best = t;
                chosen = c;
            }
        }
        const unsigned next = reach | 1u << chosen;
        if (next != reach && T > 1) { /* the class so far ends at T - 1 */
            tokens[n] = T - 1;
            masks[n++] = reach;
        }
        reach = next;
    }
    if (reach != all) { /* max_tokens never reaches the whole menu */
        tokens[n] = d->max_tokens;
        masks[n++] = reach;
    }
    return n;
}

int ramp_plan_size_classes(const ramp_plan *p, int max_tokens, int tokens[RAMP_MENU_MAX],
                           unsigned masks[RAMP_MENU_MAX]) {
    if (!p || !tokens || !masks || max_tokens < 1 || p->count < 1 ||
        p->count > RAMP_SELECT_MAX_ENTRIES ||
        (int64_t)max_tokens * (p->geom.topk > 1 ? p->geom.topk : 1) > RAMP_SELECT_MAX_PAIRS)
        return -1; /* (the last: a layer would refuse max_tokens) */
    ramp_select_desc d;
    memset(&d, 0, sizeof d);
    d.local_experts = p->geom.experts;
    d.topk = p->geom.topk;
    d.max_tokens = max_tokens;
    d.nentries = p->count;
    for (int i = 0; i < p->count; i++)
        if (ramp_select_entry_from_plan(p, i, &d.entries[i]) != RAMP_OK) return -1;
    return ramp_select_size_classes(&d, tokens, masks);
}
