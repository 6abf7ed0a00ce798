/*
 * eval_util.h - synthetic timing datasets whose truth is known, for the
 * cost-model, menu, policy, evaluation and plan tests: every configuration's
 * time on a load is theta_c . (1, W_c, T_c, A) of that load (Equation 3) times
 * (1 + noise * N(0,1)), with per-configuration theta chosen so that small
 * tiles win on small or skewed loads and large tiles on large ones. Traffic
 * domains differ in how unevenly their tokens spread over experts; the
 * "uniform" domain has vLLM's tuner's batch sizes and even routing.
 */
#ifndef RAMP_EVAL_UTIL_H
#define RAMP_EVAL_UTIL_H

#include "check.h"
#include "internal.h"

#include <math.h>
#include <string.h>

#define SYN_LOCAL 16   /* experts per GPU */
#define SYN_TOPK 8

typedef struct {
    int gpus;              /* EP degree */
    int ndomains;          /* traffic domains (<= 4) */
    int batches;           /* per traffic domain */
    int uniform_repeats;   /* batches per vLLM size in "uniform" (0: none) */
    double noise;          /* relative sd of the multiplicative noise */
    int two_classes;       /* 1: rows <= 8 have blocks_per_sm 2, others 1 */
    int tilecount_truth;   /* 1: times from the tile-count formula instead */
    int wave_sms;          /* 1: the true W steps every sms tiles (S_c =
                              sms), not every sms * blocks_per_sm */
} syn_params;

static inline void syn_defaults(syn_params *p) {
    p->gpus = 8;
    p->ndomains = 4;
    p->batches = 20;
    p->uniform_repeats = 1;
    p->noise = 0.0;
    p->two_classes = 1;
    p->tilecount_truth = 0;
    p->wave_sms = 0;
}

static const char *const SYN_DOMAINS[4] = {"chat", "math", "code", "knowledge"};

/* 12 configurations: rows {2,4,8,16,32,64} x stages {2,4}, width 256. */
static inline int syn_configs(ramp_config *c, int *bps, int two_classes) {
    static const int rows[6] = {2, 4, 8, 16, 32, 64};
    int n = 0;
    for (int r = 0; r < 6; r++)
        for (int s = 0; s < 2; s++) {
            ramp_config x = {rows[r], 256, s ? 4 : 2, s, 0, 1, 0, 0, 0, 0};
            c[n] = x;
            bps[n] = two_classes ? (rows[r] <= 8 ? 2 : 1) : 1;
            n++;
        }
    return n;
}

static inline void syn_theta(ramp_rng *rng, const ramp_config *c, int n, double *theta) {
    for (int i = 0; i < n; i++) {
        double b = c[i].rows;
        double *th = theta + i * 4;
        th[0] = 2.0 + ramp_rng_uniform(rng);
        th[1] = (1.0 + 0.1 * b) * (0.8 + 0.4 * ramp_rng_uniform(rng));
        th[2] = 0.002 * b * (0.8 + 0.4 * ramp_rng_uniform(rng));
        th[3] = 0.05 * (0.5 + ramp_rng_uniform(rng));
    }
}

/* Truth for configuration c on a load (wave_sms: W = ceil(T / sms)). */
static inline double syn_time_w(const ramp_timing *t, const double *theta, int c,
                                int nexp, const int32_t *load, int tilecount, int wave_sms) {
    double terms[4];
    ramp_costmodel_terms_slots(tilecount ? RAMP_COSTMODEL_TILECOUNT : RAMP_COSTMODEL_EQ3,
                               &t->configs[c], &t->geom, t->sms,
                               wave_sms ? t->sms : t->sms * t->blocks_per_sm[c], nexp, load,
                               terms);
    const double *th = theta + c * 4;
    return th[0] * terms[0] + th[1] * terms[1] + th[2] * terms[2] + th[3] * terms[3];
}

/* Truth for configuration c on a load. */
static inline double syn_time(const ramp_timing *t, const double *theta, int c,
                              int nexp, const int32_t *load, int tilecount) {
    double terms[4];
    ramp_costmodel_terms(tilecount ? RAMP_COSTMODEL_TILECOUNT : RAMP_COSTMODEL_EQ3,
                         &t->configs[c], &t->geom, t->sms, t->blocks_per_sm[c], nexp, load,
                         terms);
    const double *th = theta + c * 4;
    return th[0] * terms[0] + th[1] * terms[1] + th[2] * terms[2] + th[3] * terms[3];
}

/* One batch: B tokens over gpus * 16 experts with popularity weights w. */
static inline void syn_batch(ramp_rng *rng, ramp_timing *t, int dom, int32_t batch_id,
                             int B, const double *w, int gpus) {
    int E = gpus * SYN_LOCAL;
    double wsum = 0;
    for (int e = 0; e < E; e++) wsum += w[e];
    for (int g = 0; g < gpus; g++) {
        int32_t load[SYN_LOCAL];
        for (int j = 0; j < SYN_LOCAL; j++) {
            double lam = (double)B * SYN_TOPK * w[g * SYN_LOCAL + j] / wsum;
            double v = lam * ramp_rng_gamma(rng, 4.0) / 4.0;
            load[j] = (int32_t)floor(v + ramp_rng_uniform(rng));
        }
        CHECK_OK(ramp_timing_add_load(t, batch_id, g, dom, B, SYN_LOCAL, load, NULL));
    }
}

/* Builds the dataset and fills times; theta: [12 * 4] out. */
static inline ramp_timing *syn_dataset(ramp_rng *rng, const syn_params *p, double *theta) {
    ramp_config cfg[12];
    int bps[12];
    int nc = syn_configs(cfg, bps, p->two_classes);
    ramp_geometry g = {SYN_LOCAL, SYN_TOPK, 768, 2048, 0};
    char layout[16];
    snprintf(layout, sizeof layout, "EP%d", p->gpus);
    ramp_timing *t = NULL;
    /* 16 SMs: waves vary over the loads for every tile size, so the fit's
     * terms are identifiable on every training fold. */
    CHECK_OK(ramp_timing_create("synthetic", layout, &g, 16, cfg, bps, nc, &t));
    if (!t) return NULL;
    syn_theta(rng, cfg, nc, theta);
    int E = p->gpus * SYN_LOCAL;
    double *w = calloc((size_t)E, sizeof *w);
    int32_t id = 0;
    for (int d = 0; d < p->ndomains; d++) {
        int dom = ramp_timing_domain_index(t, SYN_DOMAINS[d]);
        /* Domains differ in skew: gamma shape 0.3 (very skewed) .. 3. */
        double shape = 0.3 * pow(2.2, d);
        for (int b = 0; b < p->batches; b++) {
            for (int e = 0; e < E; e++) w[e] = ramp_rng_gamma(rng, shape) + 1e-3;
            int B = (int)floor(exp(log(4.0) + ramp_rng_uniform(rng) * (log(3000.0) - log(4.0))));
            if (b == 0) B = 1; /* every domain has GPUs with no tokens */
            syn_batch(rng, t, dom, id++, B, w, p->gpus);
        }
    }
    if (p->uniform_repeats > 0) {
        int dom = ramp_timing_domain_index(t, "uniform");
        for (int r = 0; r < p->uniform_repeats; r++)
            for (int s = 0; s < RAMP_VLLM_SIZES; s++) {
                for (int e = 0; e < E; e++) w[e] = 1.0;
                syn_batch(rng, t, dom, id++, ramp_vllm_batch_sizes[s], w, p->gpus);
            }
    }
    free(w);
    for (int64_t i = 0; i < t->nloads; i++)
        for (int c = 0; c < nc; c++) {
            double v = syn_time_w(t, theta, c, t->nexp[i], t->loads + i * t->max_experts,
                                  p->tilecount_truth, p->wave_sms);
            if (p->noise > 0) v *= 1.0 + p->noise * ramp_rng_normal(rng);
            t->times_us[i * nc + c] = (float)v;
        }
    return t;
}

#endif
