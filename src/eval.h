/*
 * eval.h - private helpers shared by the choice modules (costmodel.c,
 * menu.c, policy.c, eval.c, plan.c, plot_svg.c): a timing dataset's loads
 * grouped into batches, the per-load statistics that tables are keyed on,
 * per-load cost-model diagnostics, and atomic text-file output.
 */
#ifndef RAMP_EVAL_H
#define RAMP_EVAL_H

#include "internal.h"

#include <stdio.h>

/* ---- batches ---------------------------------------------------------- */

/* Loads of a timing dataset grouped by batch id. Batches are in ascending
 * id order; a batch's loads are in dataset order. */
typedef struct {
    int64_t count;
    int32_t *id;      /* [count] batch id */
    int64_t *first;   /* [count + 1] offsets into loads */
    int64_t *loads;   /* [nloads] load indices grouped by batch */
} ramp_batches;

/* Groups t's loads; RAMP_ERR_FORMAT if the loads of one batch disagree on
 * domain or batch_tokens, or a domain index is out of range. */
ramp_status ramp_batches_build(const ramp_timing *t, ramp_batches *out);
void ramp_batches_free(ramp_batches *b);

/* ---- per-load statistics ---------------------------------------------- */

typedef struct {
    double tokens;   /* token-expert pairs on this GPU: sum of the load */
    double active;   /* experts with n_e > 0 */
    double padding;  /* mean over the row sizes of padded rows' share */
    double maxmean;  /* largest n_e over the mean n_e (1 for an empty load) */
    double cv;       /* coefficient of variation of n_e (0 when empty) */
} ramp_load_stats;

/* rows: the distinct tile row counts the padding averages over. */
void ramp_load_stats_compute(int nexp, const int32_t *load, const int *rows,
                             int nrows, ramp_load_stats *out);

/* Distinct rows values of t's configurations, ascending; returns the count
 * (<= 64 kept). */
int ramp_distinct_rows(const ramp_config *configs, int nconfigs, int *rows,
                       int cap);

/* Times of load i: t->times_us + i * nconfigs. */
static inline const float *ramp_times_of(const ramp_timing *t, int64_t i) {
    return t->times_us + (size_t)i * (size_t)t->nconfigs;
}
static inline const int32_t *ramp_load_of(const ramp_timing *t, int64_t i) {
    return t->loads + (size_t)i * (size_t)t->max_experts;
}

/* RAMP_PAST_WAVES_US when `tiles` tiles at `slots` per wave are past
 * ramp_config_max_waves(kernel, c), else 0 (costmodel.c): what every CPU
 * prediction adds, as the selection kernel does. */
double ramp_past_waves_us(int kernel, const ramp_config *c, double tiles, double slots);

/* ---- cost-model diagnostics on one load -------------------------------- */

/* Spearman between predicted and measured times over the candidates that
 * have a finite measured time and a finite prediction (NaN when fewer than
 * two), and |predicted/measured - 1| of the configuration the model picks
 * (NaN when none). cands NULL: every configuration. scratch: 3 * nconfigs. */
void ramp_costmodel_load_diag(const ramp_costmodel *m, const ramp_timing *t,
                              int64_t i, const int *cands, int ncand,
                              double *scratch, double *rho, double *pick_err,
                              double *pred_out);

/* ---- atomic text output ----------------------------------------------- */

typedef struct {
    FILE *f;
    char tmp[4096];
    const char *path;
} ramp_outfile;

/* Opens path.tmp.<pid> for writing. */
ramp_status ramp_outfile_open(ramp_outfile *o, const char *path);
/* Checks for write errors, closes and renames into place; on any failure
 * removes the temporary file. */
ramp_status ramp_outfile_commit(ramp_outfile *o);
/* Closes and removes the temporary file (after an error). */
void ramp_outfile_abort(ramp_outfile *o);

/* Joins dir and name into buf; RAMP_ERR_INVALID_ARGUMENT if too long. */
ramp_status ramp_path_join(char *buf, size_t size, const char *dir,
                           const char *name);

/* ---- small numeric helpers --------------------------------------------- */

/* Median of v[0..n) (sorted in place); NaN when n == 0. */
double ramp_median_inplace(double *v, int64_t n);
/* Linear-interpolated quantile of sorted v. */
double ramp_quantile_sorted(const double *v, int64_t n, double q);

#endif /* RAMP_EVAL_H */
