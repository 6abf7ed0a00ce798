/*
 * layout.c - parallel layouts (TP1-TP8, EP2-EP64), expert placements
 * (contiguous blocks as vLLM, or balanced on expected load as EPLB without
 * replication), and the per-GPU loads a batch's routing gives each GPU.
 */
#include "internal.h"

#include <ctype.h>
#include <string.h>

ramp_status ramp_layout_parse(const char *text, ramp_layout *out) {
    RAMP_CHECK(text && out, RAMP_ERR_INVALID_ARGUMENT, "layout is NULL");
    ramp_layout l;
    if (tolower((unsigned char)text[0]) == 't' && tolower((unsigned char)text[1]) == 'p')
        l.kind = RAMP_TP;
    else if (tolower((unsigned char)text[0]) == 'e' && tolower((unsigned char)text[1]) == 'p')
        l.kind = RAMP_EP;
    else
        RAMP_FAIL(RAMP_ERR_INVALID_ARGUMENT,
                  "layout '%s': expected TP<n> (n = 1..8) or EP<n> (n = 2..64)",
                  text);
    const char *digits = text + 2;
    char *end = NULL;
    long n = (*digits >= '0' && *digits <= '9') ? strtol(digits, &end, 10) : -1;
    RAMP_CHECK(n > 0 && end && *end == '\0', RAMP_ERR_INVALID_ARGUMENT,
               "layout '%s': expected TP<n> (n = 1..8) or EP<n> (n = 2..64)",
               text);
    if (l.kind == RAMP_TP)
        RAMP_CHECK(n >= 1 && n <= 8, RAMP_ERR_INVALID_ARGUMENT,
                   "layout '%s': TP degree must be 1..8", text);
    else
        RAMP_CHECK(n >= 2 && n <= 64, RAMP_ERR_INVALID_ARGUMENT,
                   "layout '%s': EP degree must be 2..64", text);
    l.gpus = (int)n;
    *out = l;
    return RAMP_OK;
}

char *ramp_layout_name(ramp_layout layout, char *buf, size_t size) {
    snprintf(buf, size, "%s%d", layout.kind == RAMP_TP ? "TP" : "EP", layout.gpus);
    return buf;
}

void ramp_placement_free(ramp_placement *p) {
    if (!p) return;
    free(p->gpu_of);
    free(p->local_of);
    free(p->first);
    free(p->members);
    free(p);
}

static ramp_status placement_alloc(int experts, ramp_layout layout,
                                   ramp_placement **out) {
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "output is NULL");
    RAMP_CHECK(experts >= 1, RAMP_ERR_INVALID_ARGUMENT,
               "experts = %d: must be >= 1", experts);
    char lname[16];
    ramp_layout_name(layout, lname, sizeof lname);
    RAMP_CHECK(layout.gpus >= 1, RAMP_ERR_INVALID_ARGUMENT,
               "layout %s: GPU count must be >= 1", lname);
    RAMP_CHECK(layout.kind == RAMP_TP || layout.gpus <= experts,
               RAMP_ERR_UNSUPPORTED, "layout %s: more GPUs than the %d experts",
               lname, experts);
    ramp_placement *p = ramp_calloc(1, sizeof *p);
    if (!p) return RAMP_ERR_OUT_OF_MEMORY;
    p->layout = layout;
    p->experts = experts;
    p->gpus = layout.kind == RAMP_TP ? 1 : layout.gpus;
    p->gpu_of = ramp_calloc((size_t)experts, sizeof(int));
    p->local_of = ramp_calloc((size_t)experts, sizeof(int));
    p->first = ramp_calloc((size_t)p->gpus + 1, sizeof(int));
    p->members = ramp_calloc((size_t)experts, sizeof(int));
    if (!p->gpu_of || !p->local_of || !p->first || !p->members) {
        ramp_placement_free(p);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    /* Expert counts per GPU: the first E % G GPUs hold one more. */
    int base = experts / p->gpus, extra = experts % p->gpus;
    for (int g = 0; g < p->gpus; g++)
        p->first[g + 1] = p->first[g] + base + (g < extra);
    p->max_local = base + (extra > 0);
    *out = p;
    return RAMP_OK;
}

/* Fills gpu_of/local_of from members and first. */
static void placement_index(ramp_placement *p) {
    for (int g = 0; g < p->gpus; g++)
        for (int j = p->first[g]; j < p->first[g + 1]; j++) {
            p->gpu_of[p->members[j]] = g;
            p->local_of[p->members[j]] = j - p->first[g];
        }
}

ramp_status ramp_placement_contiguous(int experts, ramp_layout layout,
                                      ramp_placement **out) {
    ramp_placement *p = NULL;
    RAMP_TRY(placement_alloc(experts, layout, &p));
    for (int e = 0; e < experts; e++) p->members[e] = e;
    placement_index(p);
    *out = p;
    return RAMP_OK;
}

typedef struct { double load; int expert; } expert_load;

static int by_load_desc(const void *a, const void *b) {
    const expert_load *x = a, *y = b;
    if (x->load != y->load) return x->load < y->load ? 1 : -1;
    return x->expert - y->expert; /* stable: lower id first */
}

ramp_status ramp_placement_balanced(int experts, ramp_layout layout,
                                    const double *expected_load,
                                    ramp_placement **out) {
    RAMP_CHECK(expected_load, RAMP_ERR_INVALID_ARGUMENT, "expected_load is NULL");
    for (int e = 0; e < experts; e++)
        RAMP_CHECK(expected_load[e] >= 0 && expected_load[e] < 1e300,
                   RAMP_ERR_INVALID_ARGUMENT,
                   "expected_load[%d] = %g: must be finite and >= 0", e,
                   expected_load[e]);
    ramp_placement *p = NULL;
    RAMP_TRY(placement_alloc(experts, layout, &p));
    if (p->gpus == 1) {
        for (int e = 0; e < experts; e++) p->members[e] = e;
        placement_index(p);
        *out = p;
        return RAMP_OK;
    }
    expert_load *order = ramp_calloc((size_t)experts, sizeof *order);
    double *gpu_load = ramp_calloc((size_t)p->gpus, sizeof(double));
    int *filled = ramp_calloc((size_t)p->gpus, sizeof(int));
    if (!order || !gpu_load || !filled) {
        free(order); free(gpu_load); free(filled);
        ramp_placement_free(p);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    for (int e = 0; e < experts; e++) order[e] = (expert_load){expected_load[e], e};
    qsort(order, (size_t)experts, sizeof *order, by_load_desc);
    /* Longest-processing-time first, with each GPU's expert count fixed to
     * the contiguous split so memory per GPU is unchanged. */
    for (int i = 0; i < experts; i++) {
        int best = -1;
        for (int g = 0; g < p->gpus; g++) {
            if (filled[g] == p->first[g + 1] - p->first[g]) continue;
            if (best < 0 || gpu_load[g] < gpu_load[best]) best = g;
        }
        p->members[p->first[best] + filled[best]++] = order[i].expert;
        gpu_load[best] += order[i].load;
    }
    /* LPT is a heuristic: keep the contiguous split where it is at least as
     * good on this load, so balancing never makes the busiest GPU busier. */
    double lpt_max = 0, contig_max = 0;
    for (int g = 0; g < p->gpus; g++) {
        double c = 0;
        for (int e = p->first[g]; e < p->first[g + 1]; e++) c += expected_load[e];
        if (gpu_load[g] > lpt_max) lpt_max = gpu_load[g];
        if (c > contig_max) contig_max = c;
    }
    if (contig_max <= lpt_max)
        for (int e = 0; e < experts; e++) p->members[e] = e;
    free(order); free(gpu_load); free(filled);
    placement_index(p);
    *out = p;
    return RAMP_OK;
}

int ramp_placement_is_balanced(const char *placement) {
    return placement && strncmp(placement, "balanced", 8) == 0 &&
           (placement[8] == '\0' || placement[8] == ':');
}

int ramp_placement_local_count(const ramp_placement *p, int g) {
    if (!p || g < 0 || g >= p->gpus) return 0;
    return p->first[g + 1] - p->first[g];
}

ramp_status ramp_gpu_loads(const ramp_placement *p, const int32_t *counts,
                           int32_t *loads) {
    RAMP_CHECK(p && counts && loads, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    memset(loads, 0, (size_t)p->gpus * (size_t)p->max_local * sizeof *loads);
    for (int g = 0; g < p->gpus; g++)
        for (int j = p->first[g]; j < p->first[g + 1]; j++) {
            int e = p->members[j];
            RAMP_CHECK(counts[e] >= 0, RAMP_ERR_INVALID_ARGUMENT,
                       "counts[%d] = %d is negative", e, (int)counts[e]);
            loads[(size_t)g * (size_t)p->max_local + (size_t)(j - p->first[g])] = counts[e];
        }
    return RAMP_OK;
}

double ramp_imbalance(const ramp_placement *p, const int32_t *counts) {
    if (!p || !counts || p->gpus <= 1) return 1.0;
    double total = 0, most = 0;
    for (int g = 0; g < p->gpus; g++) {
        double s = 0;
        for (int j = p->first[g]; j < p->first[g + 1]; j++) s += counts[p->members[j]];
        total += s;
        if (s > most) most = s;
    }
    return total > 0 ? most / (total / p->gpus) : 1.0;
}

ramp_status ramp_placements_balanced_on(const ramp_trace *on, ramp_layout layout,
                                        int layers, ramp_placement ***out) {
    RAMP_CHECK(on && out, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    return ramp_placements_balanced_on_traces(&on, 1, layout, layers, out);
}

ramp_status ramp_placements_balanced_on_traces(const ramp_trace *const *on, int n,
                                               ramp_layout layout, int layers,
                                               ramp_placement ***out) {
    RAMP_CHECK(on && out && n >= 1, RAMP_ERR_INVALID_ARGUMENT,
               "NULL argument or no trace to balance on (n = %d)", n);
    RAMP_CHECK(layers >= 1, RAMP_ERR_INVALID_ARGUMENT, "layers = %d: must be >= 1", layers);
    int E = -1;
    for (int i = 0; i < n; i++) {
        if (!on[i]) continue;
        if (E < 0) E = on[i]->experts;
        RAMP_CHECK(on[i]->experts == E, RAMP_ERR_INVALID_ARGUMENT,
                   "balancing trace %d has %d experts, trace 0 has %d", i, on[i]->experts, E);
    }
    RAMP_CHECK(E >= 1, RAMP_ERR_INVALID_ARGUMENT, "no trace to balance on (all %d NULL)", n);
    double *expected = ramp_calloc((size_t)layers * (size_t)E, sizeof *expected);
    ramp_placement **list = ramp_calloc((size_t)layers, sizeof *list);
    if (!expected || !list) {
        free(expected);
        free(list);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < n; i++) {
        const ramp_trace *tr = on[i];
        for (int64_t r = 0; tr && r < tr->records; r++) {
            int l = tr->layer[r];
            if (l < 0 || l >= layers) continue;
            for (int e = 0; e < E; e++) expected[(size_t)l * E + e] += tr->counts[r * E + e];
        }
    }
    ramp_status s = RAMP_OK;
    for (int l = 0; l < layers && s == RAMP_OK; l++)
        s = ramp_placement_balanced(E, layout, expected + (size_t)l * E, &list[l]);
    free(expected);
    if (s != RAMP_OK) {
        for (int l = 0; l < layers; l++) ramp_placement_free(list[l]);
        free(list);
        return s;
    }
    *out = list;
    return RAMP_OK;
}

static int by_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

ramp_status ramp_imbalance_median(const ramp_trace *t,
                                  ramp_placement *const *placements, int n,
                                  int min_tokens, int max_tokens,
                                  double *median, int64_t *records) {
    RAMP_CHECK(t && placements && n >= 1 && median, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    for (int i = 0; i < n; i++)
        RAMP_CHECK(placements[i] && placements[i]->experts == t->experts, RAMP_ERR_INVALID_ARGUMENT,
                   "placement %d is for %d experts, the trace has %d", i,
                   placements[i] ? placements[i]->experts : 0, t->experts);
    double *v = ramp_calloc((size_t)(t->records ? t->records : 1), sizeof *v);
    if (!v) return RAMP_ERR_OUT_OF_MEMORY;
    int64_t m = 0;
    for (int64_t r = 0; r < t->records; r++) {
        if (t->tokens[r] < min_tokens || (max_tokens > 0 && t->tokens[r] > max_tokens)) continue;
        int l = t->layer[r] < 0 ? 0 : t->layer[r];
        v[m++] = ramp_imbalance(placements[l % n], t->counts + r * t->experts);
    }
    qsort(v, (size_t)m, sizeof *v, by_double);
    *median = m == 0 ? 0.0 : (m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]));
    if (records) *records = m;
    free(v);
    return RAMP_OK;
}
