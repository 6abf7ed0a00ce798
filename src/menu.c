/*
 * menu.c - RaMP's menu (paper Section 3.1, last paragraph, and 3.3): the few
 * configurations compiled into the polymorphic kernel. All entries share one
 * shared-memory buffer, so they come from one occupancy class
 * (blocks_per_sm). Within each class a greedy adds, one at a time, the
 * configuration that most lowers the workload's total time, sum over loads
 * of min over the menu; the class with the lowest total wins.
 *
 * The objective is facility-location-like (a sum of minima), so the greedy
 * is not always optimal for 2 <= N < class size; it is exact for N = 1 and
 * for N = class size, and its total never rises as N grows.
 *
 * Included entries (ramp_menu_greedy_include) go on first, in the caller's
 * order, and fix the class; the greedy adds the rest.
 *
 * RAMP_MENU_LAYER replaces the per-load sum by the layer's time: per batch,
 * the slowest GPU's time with the best of the menu on each GPU, summed over
 * batches. A menu entry then earns its place only where it shortens the
 * slowest GPU, which is what a layer waits for.
 */
#include "eval.h"

#include <math.h>
#include <string.h>

/* The objective of a candidate column col given the running minima cur:
 * per load, sum_i min(col_i, cur_i); per batch (grp != NULL: loads
 * grp->first[b] .. grp->first[b+1]-1 of the selected order form batch b),
 * sum_b max_{i in b} min(col_i, cur_i), the layer time with the best of the
 * menu on every GPU. */
typedef struct {
    int64_t count;
    const int64_t *first;
} menu_groups;

static double objective(const double *col, const double *cur, int64_t n, const menu_groups *grp) {
    double total = 0;
    if (!grp) {
        for (int64_t i = 0; i < n; i++) total += col[i] < cur[i] ? col[i] : cur[i];
        return total;
    }
    for (int64_t b = 0; b < grp->count; b++) {
        double mx = 0;
        for (int64_t i = grp->first[b]; i < grp->first[b + 1]; i++) {
            double v = col[i] < cur[i] ? col[i] : cur[i];
            if (v > mx) mx = v;
        }
        total += mx;
    }
    return total;
}

/* Greedy over the class members (ascending indices). V is column-major:
 * V[c * n + i] = time of config c on selected load i. */
static void greedy_class(const double *V, int64_t n, const int *members,
                         int nmembers, int size, double *cur, const menu_groups *grp,
                         const int *first, int nfirst, ramp_menu *m) {
    memset(m, 0, sizeof *m);
    for (int64_t i = 0; i < n; i++) cur[i] = INFINITY;
    int taken[RAMP_MENU_MAX];
    int steps = size < nmembers ? size : nmembers;
    for (int s = 0; s < steps; s++) {
        int best = -1;
        double bt = INFINITY;
        if (s < nfirst) { /* an entry the caller put on the menu */
            best = first[s];
            bt = objective(V + (size_t)best * (size_t)n, cur, n, grp);
        }
        for (int j = 0; s >= nfirst && j < nmembers; j++) {
            int c = members[j], used = 0;
            for (int l = 0; l < s; l++)
                if (taken[l] == c) used = 1;
            if (used) continue;
            double total = objective(V + (size_t)c * (size_t)n, cur, n, grp);
            if (best < 0 || total < bt) { bt = total; best = c; } /* ties: lower index */
        }
        const double *col = V + (size_t)best * (size_t)n;
        for (int64_t i = 0; i < n; i++)
            if (col[i] < cur[i]) cur[i] = col[i];
        taken[s] = best;
        m->config[s] = best;
        m->total_us[s] = bt;
        m->count = s + 1;
    }
    m->loads = n;
}

ramp_status ramp_menu_greedy(const ramp_timing *t, const uint8_t *mask,
                             int size, int occupancy,
                             const ramp_costmodel *model, ramp_menu *out) {
    return ramp_menu_greedy_objective(t, mask, size, occupancy, model, RAMP_MENU_PER_LOAD, out);
}

ramp_status ramp_menu_greedy_objective(const ramp_timing *t, const uint8_t *mask, int size,
                                       int occupancy, const ramp_costmodel *model,
                                       ramp_menu_objective objective_kind, ramp_menu *out) {
    return ramp_menu_greedy_include(t, mask, size, occupancy, model, objective_kind, NULL, 0,
                                    out);
}

ramp_status ramp_menu_greedy_include(const ramp_timing *t, const uint8_t *mask, int size,
                                     int occupancy, const ramp_costmodel *model,
                                     ramp_menu_objective objective_kind, const int *include,
                                     int ninclude, ramp_menu *out) {
    RAMP_CHECK(t && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_menu_greedy: NULL argument");
    RAMP_CHECK(ninclude >= 0 && (ninclude == 0 || include), RAMP_ERR_INVALID_ARGUMENT,
               "ramp_menu_greedy: %d included entries and no list", ninclude);
    RAMP_CHECK(ninclude <= size, RAMP_ERR_INVALID_ARGUMENT,
               "%d included entries: more than the menu size %d", ninclude, size);
    RAMP_CHECK(size >= 1 && size <= RAMP_MENU_MAX, RAMP_ERR_INVALID_ARGUMENT,
               "menu size %d: must be 1..%d", size, RAMP_MENU_MAX);
    RAMP_CHECK(occupancy >= 0, RAMP_ERR_INVALID_ARGUMENT,
               "occupancy class %d: must be >= 0 (0: any)", occupancy);
    RAMP_CHECK(t->nconfigs >= 1 && t->configs && t->blocks_per_sm,
               RAMP_ERR_INVALID_ARGUMENT, "timing dataset has no configurations");
    RAMP_CHECK(!model || model->nconfigs == t->nconfigs, RAMP_ERR_INVALID_ARGUMENT,
               "cost model has %d configurations, the dataset %d",
               model ? model->nconfigs : 0, t->nconfigs);
    RAMP_CHECK(objective_kind == RAMP_MENU_PER_LOAD || objective_kind == RAMP_MENU_LAYER,
               RAMP_ERR_INVALID_ARGUMENT, "menu objective %d unknown", (int)objective_kind);
    int nc = t->nconfigs;
    int64_t n = 0;
    for (int64_t i = 0; i < t->nloads; i++)
        if (!mask || mask[i]) n++;
    RAMP_CHECK(n > 0, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_menu_greedy: the workload mask selects none of %lld loads",
               (long long)t->nloads);
    /* Layer objective: the selected loads in batch order; a batch counts
     * only if all its loads are selected. */
    ramp_batches bt;
    memset(&bt, 0, sizeof bt);
    int64_t *order = NULL, *gfirst = NULL;
    menu_groups groups = {0, NULL};
    if (objective_kind == RAMP_MENU_LAYER) {
        RAMP_TRY(ramp_batches_build(t, &bt));
        order = ramp_calloc((size_t)n, sizeof *order);
        gfirst = ramp_calloc((size_t)bt.count + 1, sizeof *gfirst);
        if (!order || !gfirst) {
            free(order);
            free(gfirst);
            ramp_batches_free(&bt);
            return RAMP_ERR_OUT_OF_MEMORY;
        }
        int64_t k = 0, g = 0;
        for (int64_t b = 0; b < bt.count; b++) {
            int all = 1;
            for (int64_t j = bt.first[b]; j < bt.first[b + 1]; j++)
                if (mask && !mask[bt.loads[j]]) all = 0;
            if (!all) continue;
            gfirst[g++] = k;
            for (int64_t j = bt.first[b]; j < bt.first[b + 1]; j++) order[k++] = bt.loads[j];
        }
        gfirst[g] = k;
        ramp_batches_free(&bt);
        if (g == 0) {
            free(order);
            free(gfirst);
            RAMP_FAIL(RAMP_ERR_INVALID_ARGUMENT,
                      "ramp_menu_greedy: no batch has all its loads in the workload");
        }
        n = k;
        groups.count = g;
        groups.first = gfirst;
    }

    double *V = ramp_calloc((size_t)n * (size_t)nc, sizeof *V);
    double *cur = ramp_calloc((size_t)n, sizeof *cur);
    double *pred = ramp_calloc((size_t)nc, sizeof *pred);
    int *ok = ramp_calloc((size_t)nc, sizeof *ok);
    int *members = ramp_calloc((size_t)nc, sizeof *members);
    ramp_status st = RAMP_OK;
    if (!V || !cur || !pred || !ok || !members) { st = RAMP_ERR_OUT_OF_MEMORY; goto done; }
    int64_t k = 0;
    for (int64_t ii = 0; ii < (order ? n : t->nloads); ii++) {
        int64_t i = order ? order[ii] : ii;
        if (!order && mask && !mask[i]) continue;
        if (model) ramp_costmodel_predict_all(model, t->nexp[i], ramp_load_of(t, i), pred);
        const float *tm = ramp_times_of(t, i);
        for (int c = 0; c < nc; c++) {
            double v = model ? pred[c] : (double)tm[c];
            /* An entry past its wave limit is not served (the prediction
             * carries the penalty already): a menu must cover those loads
             * with another entry. */
            if (!model && ramp_config_max_waves((ramp_kernel_version)t->kernel, &t->configs[c]) > 0) {
                ramp_features f;
                ramp_features_compute(&t->configs[c], &t->geom, t->sms, t->blocks_per_sm[c],
                                      t->nexp[i], ramp_load_of(t, i), &f);
                v += ramp_past_waves_us(t->kernel, &t->configs[c], f.tiles,
                                        (double)t->sms * (t->blocks_per_sm[c] > 0
                                                              ? t->blocks_per_sm[c] : 1));
            }
            V[(size_t)c * (size_t)n + (size_t)k] = v;
        }
        k++;
    }
    /* Candidates: runnable, and timed (or predicted) on every load. */
    for (int c = 0; c < nc; c++) {
        ok[c] = t->blocks_per_sm[c] >= 1;
        for (int64_t i = 0; ok[c] && i < n; i++)
            if (!isfinite(V[(size_t)c * (size_t)n + (size_t)i])) ok[c] = 0;
    }
    /* Included entries: configurations of the dataset, distinct, runnable
     * and timed on every load, of one occupancy class, which they fix. */
    int inc_class = 0;
    for (int j = 0; j < ninclude; j++) {
        const int c = include[j];
        char name[64];
        if (c < 0 || c >= nc) {
            st = ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                                "included entry %d: not a configuration index (0..%d)", c,
                                nc - 1);
            goto done;
        }
        ramp_config_name(&t->configs[c], name, sizeof name);
        for (int l = 0; l < j; l++)
            if (include[l] == c) {
                st = ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                                    "included entry %s: given twice", name);
                goto done;
            }
        if (!ok[c]) {
            st = ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                                "included entry %s: %s", name,
                                t->blocks_per_sm[c] < 1 ? "cannot run (0 blocks per SM)"
                                : model ? "has no finite prediction on every load of the workload"
                                        : "not timed on every load of the workload");
            goto done;
        }
        if (j == 0) inc_class = t->blocks_per_sm[c];
        if (t->blocks_per_sm[c] != inc_class || (occupancy && occupancy != inc_class)) {
            st = ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                                "included entry %s: occupancy class %d, but the menu's is %d "
                                "(one class a menu: its entries share one shared-memory "
                                "buffer)",
                                name, t->blocks_per_sm[c], occupancy ? occupancy : inc_class);
            goto done;
        }
    }
    if (inc_class) occupancy = inc_class;
    int have = 0;
    memset(out, 0, sizeof *out);
    /* Classes in ascending blocks_per_sm: a tie keeps the lower class. */
    int cls = 0;
    for (;;) {
        int next = 0;
        for (int c = 0; c < nc; c++)
            if (ok[c] && t->blocks_per_sm[c] > cls &&
                (next == 0 || t->blocks_per_sm[c] < next))
                next = t->blocks_per_sm[c];
        if (next == 0) break;
        cls = next;
        if (occupancy && cls != occupancy) continue;
        int nm = 0;
        for (int c = 0; c < nc; c++)
            if (ok[c] && t->blocks_per_sm[c] == cls) members[nm++] = c;
        ramp_menu m;
        greedy_class(V, n, members, nm, size, cur, order ? &groups : NULL, include, ninclude,
                     &m);
        m.blocks_per_sm = cls;
        if (!have || m.total_us[m.count - 1] < out->total_us[out->count - 1]) {
            *out = m;
            have = 1;
        }
    }
    if (!have)
        st = ramp_set_error(RAMP_ERR_NOT_FOUND, __FILE__, __LINE__,
                            occupancy ? "no configuration of occupancy class %d is "
                                        "runnable and %s on every load of the workload"
                                      : "no configuration (class %d = any) is runnable "
                                        "and %s on every load of the workload",
                            occupancy, model ? "predicted" : "timed");
done:
    free(order);
    free(gfirst);
    free(V);
    free(cur);
    free(pred);
    free(ok);
    free(members);
    return st;
}
