/*
 * trace_stats.c - summary statistics of a routing trace: batch sizes over
 * every record, and the per-GPU imbalance (ramp_imbalance, placement.c) over
 * the records whose batch size is in a chosen range.
 *
 * Percentiles: batch sizes use the nearest-rank rule (the value at sorted
 * position ceil(q * n) - 1), so they are always a batch size that occurred;
 * imbalance quantiles interpolate linearly between sorted values (numpy's
 * default), so the median of an even count is the mean of the middle two.
 * With no record in range the imbalance figures are NaN.
 */
#include "internal.h"

#include <math.h>
#include <string.h>

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_f64(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int32_t nearest_rank(const int32_t *sorted, int64_t n, double q) {
    int64_t i = (int64_t)ceil(q * (double)n) - 1;
    if (i < 0) i = 0;
    if (i >= n) i = n - 1;
    return sorted[i];
}

static double linear_quantile(const double *sorted, int64_t n, double q) {
    double pos = q * (double)(n - 1);
    int64_t lo = (int64_t)floor(pos);
    if (lo >= n - 1) return sorted[n - 1];
    double frac = pos - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

/* Histogram bucket: 0 -> 0, 1 -> 1, 2-3 -> 2, 4-7 -> 3, ..., >= 16384 -> 15. */
static int token_bucket(int32_t tokens) {
    if (tokens <= 0) return 0;
    int b = 1;
    while (b < 15 && tokens >= (1 << b)) b++;
    return b;
}

ramp_status ramp_trace_stats_compute(const ramp_trace *t,
                                     const ramp_placement *p, int min_tokens,
                                     int max_tokens, ramp_trace_stats *out) {
    RAMP_CHECK(t && p && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_trace_stats_compute: NULL trace, placement or out");
    RAMP_CHECK(p->experts == t->experts, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_trace_stats_compute: placement has %d experts, trace "
               "has %d", p->experts, t->experts);
    RAMP_CHECK(t->records >= 0 && (t->records == 0 || (t->tokens && t->counts)),
               RAMP_ERR_INVALID_ARGUMENT,
               "ramp_trace_stats_compute: trace has %lld records but no "
               "arrays", (long long)t->records);
    int64_t n = t->records;
    ramp_trace_stats st;
    memset(&st, 0, sizeof st);
    st.records = n;
    st.imbalance_median = st.imbalance_p90 = NAN;
    if (n == 0) {
        st.tokens_mean = NAN;
        st.frac_ge128 = NAN;
        *out = st;
        return RAMP_OK;
    }
    int32_t *tok = ramp_calloc((size_t)n, sizeof *tok);
    double *imb = ramp_calloc((size_t)n, sizeof *imb);
    if (!tok || !imb) {
        free(tok);
        free(imb);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    double sum = 0;
    int64_t nimb = 0;
    for (int64_t r = 0; r < n; r++) {
        int32_t x = t->tokens[r];
        tok[r] = x;
        sum += x;
        st.histogram[token_bucket(x)]++;
        if (x >= 128) st.batches_ge128++;
        if (x >= min_tokens && (max_tokens <= 0 || x <= max_tokens))
            imb[nimb++] = ramp_imbalance(p, t->counts + r * t->experts);
    }
    qsort(tok, (size_t)n, sizeof *tok, cmp_i32);
    st.tokens_mean = sum / (double)n;
    st.tokens_min = tok[0];
    st.tokens_max = tok[n - 1];
    st.tokens_p50 = nearest_rank(tok, n, 0.50);
    st.tokens_p90 = nearest_rank(tok, n, 0.90);
    st.tokens_p99 = nearest_rank(tok, n, 0.99);
    st.frac_ge128 = (double)st.batches_ge128 / (double)n;
    if (nimb > 0) {
        qsort(imb, (size_t)nimb, sizeof *imb, cmp_f64);
        st.imbalance_median = linear_quantile(imb, nimb, 0.50);
        st.imbalance_p90 = linear_quantile(imb, nimb, 0.90);
    }
    free(tok);
    free(imb);
    *out = st;
    return RAMP_OK;
}
