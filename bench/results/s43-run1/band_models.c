/* s43-run1: one cost model against two by band of pairs (P <= B, P > B), on the
 * held-out protocol of ramp eval (each traffic domain held out in turn, trained on
 * the others, uniform loads left out unless the third argument is 1), batch gap
 * to exhaustive search (slowest GPU), geometric mean. No GPU.
 *   gcc -std=gnu11 -O2 -Iinclude bench/results/s43-run1/band_models.c -Lbuild-rel -lramp \
 *       -Wl,-rpath,$PWD/build-rel -o /tmp/band -lm && /tmp/band DATASET B 0 */
#include "ramp.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int pairs_of(const ramp_timing *t, int64_t i) { const int32_t *l = t->loads + i * t->max_experts; int p = 0; for (int e = 0; e < t->nexp[i]; e++) p += l[e]; return p; }
static int pick(const ramp_costmodel *m, const ramp_timing *t, int64_t i) {
  int best = -1; double bv = INFINITY;
  for (int c = 0; c < t->nconfigs; c++) { if (t->blocks_per_sm[c] < 1) continue;
    double v = ramp_costmodel_predict(m, c, t->nexp[i], t->loads + i * t->max_experts);
    if (v < bv) { bv = v; best = c; } }
  return best;
}
int main(int argc, char **argv) {
  ramp_timing *t; if (ramp_timing_read(argv[1], 0, &t)) return 1;
  const int B = atoi(argv[2]), use_uniform = atoi(argv[3]);
  int uni = -1; for (int d = 0; d < t->ndomains; d++) if (!strcmp(t->domains[d], "uniform")) uni = d;
  double lg[2] = {0, 0}; int nb = 0;
  uint8_t *mk = calloc(t->nloads, 1), *lo = calloc(t->nloads, 1), *hi = calloc(t->nloads, 1);
  int *pk[2]; pk[0] = calloc(t->nloads, sizeof(int)); pk[1] = calloc(t->nloads, sizeof(int));
  for (int h = 0; h < t->ndomains; h++) {
    if (h == uni) continue;
    for (int64_t i = 0; i < t->nloads; i++) {
      mk[i] = t->domain[i] != h && (use_uniform || t->domain[i] != uni);
      lo[i] = mk[i] && pairs_of(t, i) <= B; hi[i] = mk[i] && pairs_of(t, i) > B;
    }
    ramp_costmodel *g = NULL, *ml = NULL, *mh = NULL;
    if (ramp_costmodel_fit_opt(t, mk, RAMP_COSTMODEL_EQ3_PAIRS, NULL, &g)) { printf("fit: %s\n", ramp_last_error()); return 1; }
    if (ramp_costmodel_fit_opt(t, lo, RAMP_COSTMODEL_EQ3_PAIRS, NULL, &ml)) ml = NULL;
    if (ramp_costmodel_fit_opt(t, hi, RAMP_COSTMODEL_EQ3_PAIRS, NULL, &mh)) mh = NULL;
    for (int64_t i = 0; i < t->nloads; i++) {
      if (t->domain[i] != h) continue;
      pk[0][i] = pick(g, t, i);
      const ramp_costmodel *bm = pairs_of(t, i) <= B ? ml : mh;
      pk[1][i] = bm ? pick(bm, t, i) : pk[0][i];
      if (pk[1][i] < 0) pk[1][i] = pk[0][i];
    }
    ramp_costmodel_free(g); if (ml) ramp_costmodel_free(ml); if (mh) ramp_costmodel_free(mh);
  }
  /* batches: slowest GPU */
  for (int64_t i = 0; i < t->nloads; i++) {
    if (t->domain[i] == uni) continue;
    int first = 1; for (int64_t j = 0; j < i; j++) if (t->batch[j] == t->batch[i] && t->domain[j] == t->domain[i]) { first = 0; break; }
    if (!first) continue;
    double r[2] = {0, 0}, x = 0;
    for (int64_t j = i; j < t->nloads; j++) {
      if (t->batch[j] != t->batch[i] || t->domain[j] != t->domain[i]) continue;
      const float *tm = t->times_us + j * t->nconfigs;
      double b = INFINITY; for (int c = 0; c < t->nconfigs; c++) if (t->blocks_per_sm[c] >= 1 && tm[c] < b) b = tm[c];
      if (b > x) x = b;
      for (int k = 0; k < 2; k++) if (tm[pk[k][j]] > r[k]) r[k] = tm[pk[k][j]];
    }
    lg[0] += log(r[0] / x); lg[1] += log(r[1] / x); nb++;
  }
  printf("%-40s B=%d uniform=%d batches %d: one model %.2f%%, two bands %.2f%%\n", argv[1] + (strrchr(argv[1], '/') ? strrchr(argv[1], '/') - argv[1] + 1 : 0), B, use_uniform, nb, (exp(lg[0] / nb) - 1) * 100, (exp(lg[1] / nb) - 1) * 100);
}
