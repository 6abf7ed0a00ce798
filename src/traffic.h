/*
 * traffic.h - private interface of the traffic generator (traffic.c): the
 * calibrated constants, and a variant of ramp_traffic_generate that reports
 * every forward pass's schedule, for the tests and for calibration.
 */
#ifndef RAMP_TRAFFIC_H
#define RAMP_TRAFFIC_H

#include "internal.h"

/* The generator's calibrated constants (docs/traffic.md, "Calibration"). */
typedef struct {
    double domain_exp;    /* exponent on OLMoE's domain popularity */
    double layer_exp;     /* exponent on DeepSeek-V3's per-layer popularity */
    double affinity;      /* sigma of a request's log-normal expert affinity */
    double favourite_share; /* share of a request's routing on its favourites */
    double favourites_per_k; /* favourite experts per layer, in units of k */
} ramp_traffic_tuning;

void ramp_traffic_tuning_default(ramp_traffic_tuning *t);

/* One forward pass as the scheduler built it. Pointers valid during the
 * callback only. */
typedef struct {
    int step;             /* recorded pass index, -1 during warm-up */
    double time;          /* simulated seconds at the start of the pass */
    int tokens;           /* decode_tokens + prefill_tokens */
    int decode_tokens;    /* one per running request that is generating */
    int prefill_tokens;   /* prompt chunks */
    int running;          /* requests admitted (generating or prefilling) */
    int decoding;         /* running requests past their prompt */
    int waiting;          /* arrived, not admitted yet */
    const int64_t *token_request; /* [tokens] request id of each token */
    const int32_t *token_domain;  /* [tokens] domain of each token */
} ramp_traffic_pass;

typedef void (*ramp_traffic_observer)(const ramp_traffic_pass *pass, void *user);

/* ramp_traffic_generate with explicit constants (NULL: the defaults) and
 * an observer called once per forward pass (NULL: none). */
ramp_status ramp_traffic_generate_ex(const ramp_traffic_params *p,
                                     const ramp_traffic_tuning *tuning,
                                     void (*progress)(double, void *),
                                     void *user, ramp_traffic_observer observe,
                                     void *observe_user, ramp_trace **out);

#endif /* RAMP_TRAFFIC_H */
