/*
 * traffic.c - a seeded serving-traffic routing generator (ramp.h section 4).
 *
 * Stands in for recorded routing until real traces are imported. It
 * simulates a serving engine with continuous batching and records, for every
 * forward pass and MoE layer, how many tokens each expert receives:
 *   - requests from four domains (chat, math, code, knowledge), with prompt
 *     and output lengths drawn per domain, arrive at a fixed rate (Poisson)
 *     or are held at a fixed concurrency (a finished request is replaced at
 *     once);
 *   - every pass carries one decode token per generating request, then
 *     prompt chunks of prefilling and newly admitted requests, all under a
 *     token budget (vLLM's chunked prefill);
 *   - each request draws, per layer, a routing distribution around its
 *     domain's popularity (popularity.c): a log-normal affinity of its own
 *     plus a few favourite experts that carry a fixed share of its routing;
 *     every one of its tokens picks k distinct experts from it. This is what
 *     makes routing persist within a request and makes a batch of few
 *     requests far more skewed than the long-run totals.
 * docs/traffic.md describes the model and how its constants were
 * calibrated against the paper's Tables 6 and 7.
 */
#include "traffic.h"

#include "popularity.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------------- */
/* Domains                                                                */

static const char *const domain_names[RAMP_DOMAIN_COUNT] = {"chat", "math",
                                                            "code", "knowledge"};

const char *ramp_domain_name(int domain) {
    if (domain >= 0 && domain < RAMP_DOMAIN_COUNT) return domain_names[domain];
    if (domain == RAMP_DOMAIN_MIXED) return "mixed";
    if (domain == RAMP_DOMAIN_UNIFORM) return "uniform";
    return "unknown";
}

static int equal_nocase(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return *a == *b;
}

ramp_status ramp_domain_parse(const char *text, int *domain) {
    RAMP_CHECK(text && domain, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_domain_parse: text and domain must not be NULL");
    for (int d = RAMP_DOMAIN_UNIFORM; d < RAMP_DOMAIN_COUNT; d++) {
        if (equal_nocase(text, ramp_domain_name(d))) {
            *domain = d;
            return RAMP_OK;
        }
    }
    RAMP_FAIL(RAMP_ERR_NOT_FOUND,
              "unknown domain \"%.64s\" (chat, math, code, knowledge, mixed, "
              "uniform)", text);
}

/* ---------------------------------------------------------------------- */
/* Constants                                                              */

void ramp_traffic_tuning_default(ramp_traffic_tuning *t) {
    /* Calibrated on Qwen3-30B and DeepSeek-V3 (docs/traffic.md). */
    t->domain_exp = 1.0;
    t->layer_exp = 0.75;
    t->affinity = 0.7;
    t->favourite_share = 0.5;
    t->favourites_per_k = 2.0;
}

/* Request lengths per domain: log-normal with this median and sigma,
 * clamped. Shapes follow the paper's four sources: chat (ShareGPT) long
 * answers, math (GSM8K) medium, code (HumanEval) long prompts, knowledge
 * (MMLU) short answers. */
typedef struct {
    double prompt_median, prompt_sigma;
    double output_median, output_sigma;
} length_model;

static const length_model lengths[RAMP_DOMAIN_COUNT] = {
    {180, 1.0, 220, 0.8}, /* chat */
    {120, 0.4, 180, 0.5}, /* math */
    {420, 0.6, 160, 0.7}, /* code */
    {90, 0.6, 24, 0.6},   /* knowledge */
};
#define MIN_PROMPT 4
#define MAX_PROMPT 8192
#define MIN_OUTPUT 1
#define MAX_OUTPUT 4096
/* Arrivals beyond this many waiting requests are dropped (overload). */
#define MAX_WAITING (1 << 16)

void ramp_traffic_defaults(ramp_traffic_params *p, const ramp_model *model) {
    if (!p) return;
    memset(p, 0, sizeof *p);
    if (model) p->model = *model;
    p->domain = RAMP_DOMAIN_MIXED;
    p->arrival = RAMP_ARRIVAL_CONCURRENCY;
    p->concurrency = 64;
    p->rate = 8.0;
    p->step_seconds = 0.02;
    p->seconds_per_token = 1e-5;
    p->token_budget = 2048;
    p->max_running = 256;
    p->steps = 1000;
    p->warmup_steps = 200;
    p->layers = model && model->layers > 0 ? model->layers : 1;
    p->record_ids = 0;
    p->seed = 1;
    p->popularity_seed = 0;
    p->routing_dir = NULL;
}

/* ---------------------------------------------------------------------- */
/* Requests and their routing                                             */

typedef struct {
    int64_t id;
    int domain;
    int prompt;     /* prompt tokens */
    int output;     /* output tokens, the first sampled by the last chunk */
    int prefilled;  /* prompt tokens already processed */
    int generated;  /* output tokens produced */
    int chunk;      /* tokens this pass */
    double *cdf;    /* [layers][E] cumulative routing distribution */
} request;

typedef struct {
    const ramp_traffic_params *p;
    ramp_traffic_tuning tune;
    const ramp_popularity *pop; /* NULL under uniform routing */
    int E, k, L;
    ramp_rng arrivals;          /* domains, lengths, arrival times */
    ramp_rng routing;           /* per-token expert choices */
    int64_t next_id;
    /* Waiting requests: a FIFO ring. */
    request *wait;
    int wait_head, wait_count, wait_cap;
    /* Running requests in admission order. */
    request *run;
    int run_count, run_cap;
    int decode_rr;              /* round-robin start when decodes exceed budget */
    double *fav_key;            /* [E] scratch: favourite selection */
    int *fav_id;
    int fav_n;
    int64_t dropped;
} sim;

static int draw_length(ramp_rng *r, double median, double sigma, int lo, int hi) {
    double v = median * exp(sigma * ramp_rng_normal(r));
    if (!(v >= lo)) return lo;
    if (v >= hi) return hi;
    return (int)floor(v + 0.5) < lo ? lo : (int)floor(v + 0.5);
}

static void new_request(sim *s, request *q) {
    int d = s->p->domain;
    if (d == RAMP_DOMAIN_MIXED) d = (int)ramp_rng_below(&s->arrivals, RAMP_DOMAIN_COUNT);
    int ld = d >= 0 ? d : RAMP_DOMAIN_CHAT; /* uniform routing: chat lengths */
    memset(q, 0, sizeof *q);
    q->id = s->next_id++;
    q->domain = d;
    q->prompt = draw_length(&s->arrivals, lengths[ld].prompt_median,
                            lengths[ld].prompt_sigma, MIN_PROMPT, MAX_PROMPT);
    q->output = draw_length(&s->arrivals, lengths[ld].output_median,
                            lengths[ld].output_sigma, MIN_OUTPUT, MAX_OUTPUT);
}

static ramp_status push_waiting(sim *s) {
    if (s->wait_count >= MAX_WAITING) {
        request dummy;
        new_request(s, &dummy); /* keep the random stream independent of drops */
        s->dropped++;
        return RAMP_OK;
    }
    if (s->wait_count == s->wait_cap) {
        int ncap = s->wait_cap ? s->wait_cap * 2 : 64;
        request *nw = ramp_calloc((size_t)ncap, sizeof *nw);
        if (!nw) return RAMP_ERR_OUT_OF_MEMORY;
        for (int i = 0; i < s->wait_count; i++)
            nw[i] = s->wait[(s->wait_head + i) % s->wait_cap];
        free(s->wait);
        s->wait = nw;
        s->wait_head = 0;
        s->wait_cap = ncap;
    }
    new_request(s, &s->wait[(s->wait_head + s->wait_count) % s->wait_cap]);
    s->wait_count++;
    return RAMP_OK;
}

/* The request's routing distribution at every layer, as a CDF:
 *   (1 - w) * normalise(popularity * exp(affinity * z)) + w * favourites,
 * z ~ N(0, 1) per expert, favourites = F experts drawn by popularity, each
 * with w / F. Drawn from a stream of the request's own, so it does not
 * depend on the schedule. */
static ramp_status admit(sim *s, request *q) {
    if (s->p->domain == RAMP_DOMAIN_UNIFORM) return RAMP_OK;
    size_t E = (size_t)s->E;
    q->cdf = malloc((size_t)s->L * E * sizeof *q->cdf);
    if (!q->cdf)
        RAMP_FAIL(RAMP_ERR_OUT_OF_MEMORY, "out of memory for request %lld's "
                  "routing (%d layers x %d experts)", (long long)q->id, s->L, s->E);
    ramp_rng r;
    ramp_rng_seed(&r, ramp_mix64(s->p->seed ^ 0x7265717565737421ull) + (uint64_t)q->id);
    int F = (int)floor(s->tune.favourites_per_k * s->k + 0.5);
    if (F > s->E) F = s->E;
    double w = F > 0 ? s->tune.favourite_share : 0.0;
    for (int l = 0; l < s->L; l++) {
        const double *pop = ramp_popularity_row(s->pop, q->domain, l);
        double *c = q->cdf + (size_t)l * E;
        double mx = -INFINITY;
        for (size_t e = 0; e < E; e++) {
            c[e] = log(pop[e]) + s->tune.affinity * ramp_rng_normal(&r);
            if (c[e] > mx) mx = c[e];
        }
        double sum = 0;
        for (size_t e = 0; e < E; e++) {
            c[e] = exp(c[e] - mx);
            sum += c[e];
        }
        for (size_t e = 0; e < E; e++) c[e] *= (1.0 - w) / sum;
        /* Favourites: F distinct experts drawn by the domain's popularity
         * (Gumbel-top-F), sharing w of the request's routing mass. */
        if (w > 0) {
            s->fav_n = 0;
            for (size_t e = 0; e < E; e++) {
                double u = ramp_rng_uniform(&r);
                if (u < 1e-300) u = 1e-300;
                double key = log(pop[e]) - log(-log(u));
                /* Keep the F largest keys (insertion into a short list). */
                int pos = s->fav_n < F ? s->fav_n++ : F;
                if (pos == F && key <= s->fav_key[F - 1]) continue;
                if (pos == F) pos = F - 1;
                while (pos > 0 && s->fav_key[pos - 1] < key) {
                    s->fav_key[pos] = s->fav_key[pos - 1];
                    s->fav_id[pos] = s->fav_id[pos - 1];
                    pos--;
                }
                s->fav_key[pos] = key;
                s->fav_id[pos] = (int)e;
            }
            for (int i = 0; i < F; i++) c[s->fav_id[i]] += w / F;
        }
        double acc = 0;
        for (size_t e = 0; e < E; e++) {
            acc += c[e];
            c[e] = acc;
        }
        for (size_t e = 0; e < E; e++) c[e] /= acc;
        c[E - 1] = 1.0;
    }
    return RAMP_OK;
}

/* k distinct experts drawn without replacement in proportion to the
 * distribution (sequential draws, the same law as Gumbel-top-k). cdf: NULL
 * for uniform routing. */
static void pick_experts(ramp_rng *r, const double *cdf, int E, int k,
                         int32_t *ids) {
    for (int j = 0; j < k; j++) {
        int e = -1;
        /* Rejection: fast while the chosen experts hold little mass. */
        for (int tries = 0; tries < 64 && e < 0; tries++) {
            int c;
            if (!cdf) c = (int)ramp_rng_below(r, (uint32_t)E);
            else {
                double u = ramp_rng_uniform(r);
                int lo = 0, hi = E - 1;
                while (lo < hi) {
                    int mid = (lo + hi) / 2;
                    if (u < cdf[mid]) hi = mid;
                    else lo = mid + 1;
                }
                c = lo;
            }
            int dup = 0;
            for (int i = 0; i < j; i++) dup |= ids[i] == c;
            if (!dup) e = c;
        }
        if (e < 0) {
            /* Exact draw from the remaining mass. */
            double rest = 0;
            for (int x = 0; x < E; x++) {
                int dup = 0;
                for (int i = 0; i < j; i++) dup |= ids[i] == x;
                if (!dup) rest += cdf ? cdf[x] - (x ? cdf[x - 1] : 0) : 1.0;
            }
            double u = ramp_rng_uniform(r) * rest, acc = 0;
            for (int x = 0; x < E; x++) {
                int dup = 0;
                for (int i = 0; i < j; i++) dup |= ids[i] == x;
                if (dup) continue;
                if (e < 0) e = x; /* fallback if the mass left is zero */
                acc += cdf ? cdf[x] - (x ? cdf[x - 1] : 0) : 1.0;
                if (u < acc) {
                    e = x;
                    break;
                }
            }
        }
        ids[j] = e;
    }
}

/* ---------------------------------------------------------------------- */
/* Parameters                                                             */

static ramp_status check_params(const ramp_traffic_params *p) {
    const ramp_model *m = &p->model;
    RAMP_CHECK(m->experts >= 1 && m->topk >= 1 && m->topk <= m->experts &&
                   m->layers >= 1,
               RAMP_ERR_INVALID_ARGUMENT,
               "traffic params: field model (\"%.48s\") needs experts >= 1, "
               "1 <= topk <= experts, layers >= 1 (got E=%d, k=%d, layers=%d)",
               m->name, m->experts, m->topk, m->layers);
    RAMP_CHECK(m->experts <= (1 << 20), RAMP_ERR_INVALID_ARGUMENT,
               "traffic params: field model.experts = %d is over 2^20",
               m->experts);
    RAMP_CHECK(p->domain >= RAMP_DOMAIN_UNIFORM && p->domain < RAMP_DOMAIN_COUNT,
               RAMP_ERR_INVALID_ARGUMENT,
               "traffic params: field domain = %d is not a ramp_domain",
               p->domain);
    RAMP_CHECK(p->arrival == RAMP_ARRIVAL_CONCURRENCY ||
                   p->arrival == RAMP_ARRIVAL_RATE,
               RAMP_ERR_INVALID_ARGUMENT,
               "traffic params: field arrival = %d is not a ramp_arrival",
               (int)p->arrival);
    if (p->arrival == RAMP_ARRIVAL_CONCURRENCY)
        RAMP_CHECK(p->concurrency >= 1 && p->concurrency <= MAX_WAITING,
                   RAMP_ERR_INVALID_ARGUMENT,
                   "traffic params: field concurrency = %d must be in 1..%d",
                   p->concurrency, MAX_WAITING);
    if (p->arrival == RAMP_ARRIVAL_RATE) {
        RAMP_CHECK(isfinite(p->rate) && p->rate > 0, RAMP_ERR_INVALID_ARGUMENT,
                   "traffic params: field rate = %g must be > 0 requests/s",
                   p->rate);
        RAMP_CHECK(isfinite(p->step_seconds) && p->step_seconds > 0,
                   RAMP_ERR_INVALID_ARGUMENT,
                   "traffic params: field step_seconds = %g must be > 0",
                   p->step_seconds);
        RAMP_CHECK(isfinite(p->seconds_per_token) && p->seconds_per_token >= 0,
                   RAMP_ERR_INVALID_ARGUMENT,
                   "traffic params: field seconds_per_token = %g must be >= 0",
                   p->seconds_per_token);
    }
    RAMP_CHECK(p->token_budget >= 1 && p->token_budget <= (1 << 20),
               RAMP_ERR_INVALID_ARGUMENT,
               "traffic params: field token_budget = %d must be in 1..%d",
               p->token_budget, 1 << 20);
    RAMP_CHECK(p->max_running >= 1 && p->max_running <= MAX_WAITING,
               RAMP_ERR_INVALID_ARGUMENT,
               "traffic params: field max_running = %d must be in 1..%d",
               p->max_running, MAX_WAITING);
    RAMP_CHECK(p->steps >= 1, RAMP_ERR_INVALID_ARGUMENT,
               "traffic params: field steps = %d must be >= 1", p->steps);
    RAMP_CHECK(p->warmup_steps >= 0, RAMP_ERR_INVALID_ARGUMENT,
               "traffic params: field warmup_steps = %d must be >= 0",
               p->warmup_steps);
    RAMP_CHECK(p->layers >= 1 && p->layers <= m->layers,
               RAMP_ERR_INVALID_ARGUMENT,
               "traffic params: field layers = %d must be in 1..model.layers "
               "(%d)", p->layers, m->layers);
    return RAMP_OK;
}

/* FNV-1a of the model's name (case-folded) and geometry: the default
 * popularity seed, so every trace of one model shares its hot experts. */
static uint64_t model_popularity_seed(const ramp_model *m) {
    uint64_t h = 1469598103934665603ull;
    for (const char *c = m->name; *c && c < m->name + RAMP_NAME_MAX; c++) {
        h ^= (unsigned char)tolower((unsigned char)*c);
        h *= 1099511628211ull;
    }
    h ^= (uint64_t)m->experts * 0x9E3779B97F4A7C15ull;
    return ramp_mix64(h ^ ((uint64_t)m->topk << 32));
}

static ramp_status routing_dir_of(const ramp_traffic_params *p, char *buf,
                                  size_t size) {
    const char *dir = p->routing_dir;
    int n;
    if (dir) n = snprintf(buf, size, "%s", dir);
    else {
        const char *env = getenv("RAMP_DATA_DIR");
#ifdef RAMP_DEFAULT_DATA_DIR
        const char *base = env && *env ? env : RAMP_DEFAULT_DATA_DIR;
#ifdef RAMP_INSTALLED_DATA_DIR /* the checkout gone: an installed library */
        struct stat sb;
        if (!(env && *env) && stat(RAMP_DEFAULT_DATA_DIR, &sb) != 0) base = RAMP_INSTALLED_DATA_DIR;
#endif
#else
        const char *base = env && *env ? env : "data";
#endif
        n = snprintf(buf, size, "%s/routing", base);
    }
    RAMP_CHECK(n > 0 && (size_t)n < size, RAMP_ERR_INVALID_ARGUMENT,
               "traffic params: field routing_dir is empty or too long");
    return RAMP_OK;
}

/* ---------------------------------------------------------------------- */
/* The simulation                                                         */

static void sim_free(sim *s) {
    for (int i = 0; i < s->run_count; i++) free(s->run[i].cdf);
    for (int i = 0; i < s->wait_count; i++)
        free(s->wait[(s->wait_head + i) % s->wait_cap].cdf);
    free(s->run);
    free(s->wait);
    free(s->fav_key);
    free(s->fav_id);
}

ramp_status ramp_traffic_generate_ex(const ramp_traffic_params *p,
                                     const ramp_traffic_tuning *tuning,
                                     void (*progress)(double, void *),
                                     void *user, ramp_traffic_observer observe,
                                     void *observe_user, ramp_trace **out) {
    RAMP_CHECK(p && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_traffic_generate: params and out must not be NULL");
    RAMP_TRY(check_params(p));

    sim s;
    memset(&s, 0, sizeof s);
    s.p = p;
    if (tuning) s.tune = *tuning;
    else ramp_traffic_tuning_default(&s.tune);
    s.E = p->model.experts;
    s.k = p->model.topk;
    s.L = p->layers;
    ramp_rng_seed(&s.arrivals, ramp_mix64(p->seed ^ 0x6172726976616c73ull));
    ramp_rng_seed(&s.routing, ramp_mix64(p->seed ^ 0x726f7574696e6721ull));

    ramp_status st = RAMP_OK;
    ramp_routing_source *src = NULL;
    ramp_popularity *pop = NULL;
    ramp_trace *trace = NULL;
    int32_t *counts = NULL, *ids = NULL, *token_domain = NULL;
    int64_t *token_request = NULL;
    int *token_owner = NULL;

    /* Popularity from the real counts (not needed for uniform routing, which
     * then also needs no data files). */
    if (p->domain != RAMP_DOMAIN_UNIFORM) {
        char dir[4096];
        st = routing_dir_of(p, dir, sizeof dir);
        if (st == RAMP_OK) st = ramp_routing_source_load(dir, &src);
        if (st != RAMP_OK) goto done;
        ramp_popularity_shape shape = {s.tune.domain_exp, s.tune.layer_exp};
        uint64_t pseed = p->popularity_seed ? p->popularity_seed
                                            : model_popularity_seed(&p->model);
        st = ramp_popularity_build(src, s.E, p->model.layers, s.L, pseed, &shape,
                                   &pop);
        if (st != RAMP_OK) goto done;
        s.pop = pop;
    }

    char source[256];
    char budget_text[64];
    if (p->arrival == RAMP_ARRIVAL_RATE)
        snprintf(budget_text, sizeof budget_text, "rate=%g/s", p->rate);
    else
        snprintf(budget_text, sizeof budget_text, "concurrency=%d", p->concurrency);
    snprintf(source, sizeof source,
             "ramp-traffic v1 seed=%llu %s budget=%d max_running=%d warmup=%d",
             (unsigned long long)p->seed, budget_text, p->token_budget,
             p->max_running, p->warmup_steps);
    st = ramp_trace_create(p->model.name, ramp_domain_name(p->domain), source,
                           s.E, s.k, &trace);
    if (st != RAMP_OK) goto done;

    size_t B = (size_t)p->token_budget;
    counts = ramp_calloc((size_t)s.E, sizeof *counts);
    ids = ramp_calloc(B * (size_t)s.k, sizeof *ids);
    token_owner = ramp_calloc(B, sizeof *token_owner);
    token_request = ramp_calloc(B, sizeof *token_request);
    token_domain = ramp_calloc(B, sizeof *token_domain);
    int cap = p->max_running;
    s.run = ramp_calloc((size_t)cap, sizeof *s.run);
    s.run_cap = cap;
    s.fav_key = ramp_calloc((size_t)s.E, sizeof *s.fav_key);
    s.fav_id = ramp_calloc((size_t)s.E, sizeof *s.fav_id);
    if (!s.fav_key || !s.fav_id || !counts || !ids || !token_owner || !token_request || !token_domain ||
        !s.run) {
        st = RAMP_ERR_OUT_OF_MEMORY;
        goto done;
    }

    double now = 0, next_arrival = 0;
    if (p->arrival == RAMP_ARRIVAL_CONCURRENCY) {
        for (int i = 0; i < p->concurrency && st == RAMP_OK; i++)
            st = push_waiting(&s);
        if (st != RAMP_OK) goto done;
    } else {
        next_arrival = ramp_rng_exponential(&s.arrivals, p->rate);
    }

    int64_t total = (int64_t)p->warmup_steps + p->steps;
    int report_every = p->steps / 100 > 0 ? p->steps / 100 : 1;
    for (int64_t pass = 0; pass < total; pass++) {
        int step = (int)(pass - p->warmup_steps); /* < 0 during warm-up */
        if (p->arrival == RAMP_ARRIVAL_RATE) {
            /* An idle server waits for the next arrival. */
            if (s.run_count == 0 && s.wait_count == 0 && next_arrival > now)
                now = next_arrival;
            while (next_arrival <= now && st == RAMP_OK) {
                st = push_waiting(&s);
                next_arrival += ramp_rng_exponential(&s.arrivals, p->rate);
            }
            if (st != RAMP_OK) goto done;
        }

        /* Schedule: decodes first, then prompt chunks of running requests,
         * then admissions, all under the token budget. */
        int budget = p->token_budget, ntok = 0, decode = 0, decoding = 0;
        for (int i = 0; i < s.run_count; i++) s.run[i].chunk = 0;
        for (int i = 0; i < s.run_count; i++)
            decoding += s.run[i].prefilled == s.run[i].prompt;
        /* More decodes than budget: serve them round-robin from where the
         * last pass stopped. */
        int start = decoding > budget && s.run_count ? s.decode_rr % s.run_count : 0;
        int n = 0;
        for (; n < s.run_count && budget > 0; n++) {
            request *q = &s.run[(start + n) % s.run_count];
            if (q->prefilled < q->prompt) continue;
            q->chunk = 1;
            budget--;
            decode++;
        }
        s.decode_rr = decoding > p->token_budget ? start + n : 0;
        for (int i = 0; i < s.run_count && budget > 0; i++) {
            request *q = &s.run[i];
            if (q->prefilled >= q->prompt) continue;
            q->chunk = q->prompt - q->prefilled < budget ? q->prompt - q->prefilled
                                                         : budget;
            budget -= q->chunk;
        }
        while (budget > 0 && s.wait_count > 0 && s.run_count < s.run_cap) {
            request *q = &s.run[s.run_count];
            *q = s.wait[s.wait_head];
            s.wait_head = (s.wait_head + 1) % s.wait_cap;
            s.wait_count--;
            s.run_count++;
            st = admit(&s, q);
            if (st != RAMP_OK) goto done;
            q->chunk = q->prompt < budget ? q->prompt : budget;
            budget -= q->chunk;
        }
        /* Token order: decodes, then prompt chunks, each in running order. */
        for (int phase = 0; phase < 2; phase++) {
            for (int i = 0; i < s.run_count; i++) {
                request *q = &s.run[i];
                int is_decode = q->prefilled == q->prompt;
                if (q->chunk == 0 || is_decode != (phase == 0)) continue;
                for (int t = 0; t < q->chunk; t++) {
                    token_owner[ntok] = i;
                    token_request[ntok] = q->id;
                    token_domain[ntok] = q->domain;
                    ntok++;
                }
            }
        }

        if (observe) {
            ramp_traffic_pass info = {step < 0 ? -1 : step, now, ntok, decode,
                                      ntok - decode, s.run_count, decoding,
                                      s.wait_count, token_request, token_domain};
            observe(&info, observe_user);
        }

        /* Route every token at every recorded layer. */
        if (step >= 0) {
            for (int l = 0; l < s.L; l++) {
                memset(counts, 0, (size_t)s.E * sizeof *counts);
                for (int t = 0; t < ntok; t++) {
                    const request *q = &s.run[token_owner[t]];
                    const double *cdf = q->cdf ? q->cdf + (size_t)l * (size_t)s.E
                                               : NULL;
                    int32_t *tid = ids + (size_t)t * (size_t)s.k;
                    pick_experts(&s.routing, cdf, s.E, s.k, tid);
                    for (int j = 0; j < s.k; j++) counts[tid[j]]++;
                }
                st = ramp_trace_append(trace, step, pop ? pop->model_layer[l] : l,
                                       ntok, counts, p->record_ids ? ids : NULL);
                if (st != RAMP_OK) goto done;
            }
            if (progress && (step % report_every == 0 || step == p->steps - 1))
                progress((double)(step + 1) / p->steps, user);
        }

        /* Advance: a request's last prompt chunk samples its first output
         * token; finished requests leave (and, at fixed concurrency, a new
         * one arrives at once). */
        int kept = 0, finished = 0;
        for (int i = 0; i < s.run_count; i++) {
            request *q = &s.run[i];
            if (q->chunk > 0) {
                if (q->prefilled < q->prompt) {
                    q->prefilled += q->chunk;
                    if (q->prefilled == q->prompt) q->generated = 1;
                } else {
                    q->generated++;
                }
            }
            if (q->prefilled == q->prompt && q->generated >= q->output) {
                free(q->cdf);
                finished++;
                continue;
            }
            s.run[kept++] = *q;
        }
        s.run_count = kept;
        if (p->arrival == RAMP_ARRIVAL_CONCURRENCY) {
            for (int i = 0; i < finished && st == RAMP_OK; i++) st = push_waiting(&s);
            if (st != RAMP_OK) goto done;
        } else {
            now += p->step_seconds + p->seconds_per_token * ntok;
        }
    }

    *out = trace;
    trace = NULL;
done:
    sim_free(&s);
    free(counts);
    free(ids);
    free(token_owner);
    free(token_request);
    free(token_domain);
    ramp_trace_free(trace);
    ramp_popularity_free(pop);
    ramp_routing_source_free(src);
    return st;
}

ramp_status ramp_traffic_generate(const ramp_traffic_params *p,
                                  void (*progress)(double, void *), void *user,
                                  ramp_trace **out) {
    return ramp_traffic_generate_ex(p, NULL, progress, user, NULL, NULL, out);
}
