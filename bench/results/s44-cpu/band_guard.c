/* s44: s43-run1/band_nested.c with a guard: bands are used for a held-out domain only
 * when the inner folds (leave one training domain out) prefer the best B over one model
 * by more than MARGIN per batch (geometric). Prints the gap for margins 0, 0.25%, 0.5%,
 * 1%, 2%. No GPU.
 *   gcc -std=gnu11 -O2 -Iinclude bench/results/s44-cpu/band_guard.c -Lbuild-rel -lramp \
 *       -Wl,-rpath,$PWD/build-rel -o /tmp/bandg -lm && /tmp/bandg DATASET */
#include "ramp.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pairs_of(const ramp_timing *t, int64_t i) {
    const int32_t *l = t->loads + i * t->max_experts;
    int p = 0;
    for (int e = 0; e < t->nexp[i]; e++) p += l[e];
    return p;
}

static int pick(const ramp_costmodel *m, const ramp_timing *t, int64_t i) {
    int best = -1;
    double bv = INFINITY;
    for (int c = 0; c < t->nconfigs; c++) {
        if (t->blocks_per_sm[c] < 1) continue;
        double v = ramp_costmodel_predict(m, c, t->nexp[i], t->loads + i * t->max_experts);
        if (v < bv) { bv = v; best = c; }
    }
    return best;
}

/* picks on the loads of `test` (a domain mask), models fit on `train`; B < 0: one model */
static void fit_pick(const ramp_timing *t, const uint8_t *train, const uint8_t *test, int B, int *pk) {
    uint8_t *lo = calloc(t->nloads, 1), *hi = calloc(t->nloads, 1);
    for (int64_t i = 0; i < t->nloads; i++) {
        lo[i] = train[i] && B >= 0 && pairs_of(t, i) <= B;
        hi[i] = train[i] && B >= 0 && pairs_of(t, i) > B;
    }
    ramp_costmodel *g = NULL, *ml = NULL, *mh = NULL;
    if (ramp_costmodel_fit_opt(t, train, RAMP_COSTMODEL_EQ3_PAIRS, NULL, &g)) { printf("fit: %s\n", ramp_last_error()); exit(1); }
    if (B >= 0 && ramp_costmodel_fit_opt(t, lo, RAMP_COSTMODEL_EQ3_PAIRS, NULL, &ml)) ml = NULL;
    if (B >= 0 && ramp_costmodel_fit_opt(t, hi, RAMP_COSTMODEL_EQ3_PAIRS, NULL, &mh)) mh = NULL;
    for (int64_t i = 0; i < t->nloads; i++) {
        if (!test[i]) continue;
        pk[i] = pick(g, t, i);
        if (B < 0) continue;
        const ramp_costmodel *bm = pairs_of(t, i) <= B ? ml : mh;
        int b = bm ? pick(bm, t, i) : -1;
        if (b >= 0) pk[i] = b;
    }
    ramp_costmodel_free(g);
    if (ml) ramp_costmodel_free(ml);
    if (mh) ramp_costmodel_free(mh);
    free(lo);
    free(hi);
}

/* sum over the batches of `test` of log(slowest picked / slowest best); *nb batches */
static double log_gap(const ramp_timing *t, const uint8_t *test, const int *pk, int *nb) {
    double s = 0;
    *nb = 0;
    for (int64_t i = 0; i < t->nloads; i++) {
        if (!test[i]) continue;
        int first = 1;
        for (int64_t j = 0; j < i && first; j++)
            if (test[j] && t->batch[j] == t->batch[i] && t->domain[j] == t->domain[i]) first = 0;
        if (!first) continue;
        double r = 0, x = 0;
        for (int64_t j = i; j < t->nloads; j++) {
            if (!test[j] || t->batch[j] != t->batch[i] || t->domain[j] != t->domain[i]) continue;
            const float *tm = t->times_us + j * t->nconfigs;
            double b = INFINITY;
            for (int c = 0; c < t->nconfigs; c++)
                if (t->blocks_per_sm[c] >= 1 && tm[c] < b) b = tm[c];
            if (b > x) x = b;
            if (tm[pk[j]] > r) r = tm[pk[j]];
        }
        s += log(r / x);
        (*nb)++;
    }
    return s;
}

int main(int argc, char **argv) {
    ramp_timing *t;
    if (argc < 2 || ramp_timing_read(argv[1], 0, &t)) return 1;
    static const int Bs[] = {-1, 64, 128, 256};
    static const double margins[] = {0, 0.0025, 0.005, 0.01, 0.02};
    enum { NM = 5 };
    int uni = -1;
    for (int d = 0; d < t->ndomains; d++)
        if (!strcmp(t->domains[d], "uniform")) uni = d;
    uint8_t *train = calloc(t->nloads, 1), *test = calloc(t->nloads, 1);
    uint8_t *itrain = calloc(t->nloads, 1), *itest = calloc(t->nloads, 1);
    int *pk = calloc(t->nloads, sizeof(int)), *pk1 = calloc(t->nloads, sizeof(int));
    double s_one = 0, s_m[NM] = {0};
    int n_all = 0, nband[NM] = {0}, ndom = 0;
    for (int h = 0; h < t->ndomains; h++) {
        if (h == uni) continue;
        ndom++;
        for (int64_t i = 0; i < t->nloads; i++) {
            train[i] = t->domain[i] != h && t->domain[i] != uni;
            test[i] = t->domain[i] == h;
        }
        double v[4] = {0};
        int inb = 0;
        for (int k = 0; k < 4; k++) {
            for (int d = 0; d < t->ndomains; d++) {
                if (d == h || d == uni) continue;
                for (int64_t i = 0; i < t->nloads; i++) {
                    itrain[i] = train[i] && t->domain[i] != d;
                    itest[i] = t->domain[i] == d;
                }
                int nb;
                fit_pick(t, itrain, itest, Bs[k], pk);
                v[k] += log_gap(t, itest, pk, &nb);
                if (k == 0) inb += nb;
            }
        }
        int kb = 1;
        for (int k = 2; k < 4; k++)
            if (v[k] < v[kb] - 1e-12) kb = k;
        int nb;
        fit_pick(t, train, test, -1, pk1);
        double one = log_gap(t, test, pk1, &nb);
        fit_pick(t, train, test, Bs[kb], pk);
        double band = log_gap(t, test, pk, &nb);
        s_one += one;
        n_all += nb;
        for (int m = 0; m < NM; m++) {
            int use = (v[0] - v[kb]) / inb > log1p(margins[m]) - 1e-12 && v[kb] < v[0] - 1e-12;
            s_m[m] += use ? band : one;
            nband[m] += use;
        }
    }
    const char *name = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
    printf("| %s | %d | %.2f%% |", name, n_all, (exp(s_one / n_all) - 1) * 100);
    for (int m = 0; m < NM; m++) printf(" %.2f%% (%d/%d) |", (exp(s_m[m] / n_all) - 1) * 100, nband[m], ndom);
    printf("\n");
    return 0;
}
