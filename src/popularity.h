/*
 * popularity.h - per-layer, per-domain expert popularity built from the real
 * routing counts in data/routing and scaled to any expert count.
 *
 * The traffic generator (traffic.c) draws every request's routing around the
 * popularity of its domain at each layer. Two real sources feed it:
 *   - OLMoE-1B-7B's expert counts per text domain at 3 of its 16 layers
 *     (64 experts): which experts a domain prefers;
 *   - DeepSeek-V3's expert counts per MoE layer (58 layers x 256 experts,
 *     averaged over SGLang's workload files): how the skew varies by layer.
 * docs/traffic.md gives the construction; this header is private.
 */
#ifndef RAMP_POPULARITY_H
#define RAMP_POPULARITY_H

#include "internal.h"

/* Number of OLMoE layers and experts the source file must hold. */
#define RAMP_OLMOE_LAYERS 3
#define RAMP_OLMOE_EXPERTS 64

/* The real counts, each row normalised to mean 1 (with a pseudocount of one
 * assignment per expert so that no expert has zero popularity). */
typedef struct {
    double olmoe_depth[RAMP_OLMOE_LAYERS]; /* relative depth of each layer */
    /* [RAMP_DOMAIN_COUNT][RAMP_OLMOE_LAYERS][RAMP_OLMOE_EXPERTS] */
    double *olmoe;
    int ds_layers;   /* MoE layers with a nonzero row (58 for DeepSeek-V3) */
    int ds_experts;  /* 256 */
    int ds_files;    /* workload files averaged */
    double *ds;      /* [ds_layers][ds_experts], mean over files */
} ramp_routing_source;

/* Reads dir/olmoe-mixtral-domain-counts.json and dir/deepseek-v3-sglang/
 * *.json. RAMP_ERR_IO (a file or the folder cannot be read) or
 * RAMP_ERR_FORMAT (bad JSON, shape or value), naming the file and field. */
ramp_status ramp_routing_source_load(const char *dir, ramp_routing_source **out);
void ramp_routing_source_free(ramp_routing_source *s);

/* Which real source row a model layer draws on. */
typedef struct {
    int olmoe_layer; /* 0..2: nearest OLMoE layer by relative depth */
    int ds_layer;    /* 0..ds_layers-1 at the same relative depth */
} ramp_popularity_origin;

/* Popularity of every domain at each recorded layer, rows summing to 1. */
typedef struct {
    int experts;     /* E */
    int layers;      /* recorded layers */
    int *model_layer;                /* [layers] index in the model */
    ramp_popularity_origin *origin;  /* [layers] */
    double *q;       /* [RAMP_DOMAIN_COUNT][layers][E] */
} ramp_popularity;

/* Exponents on the two real factors: log q = domain_exp * log(domain row)
 * + layer_exp * log(layer row) + const (see docs/traffic.md). */
typedef struct {
    double domain_exp;
    double layer_exp;
} ramp_popularity_shape;

/* Recorded layer i is model layer round(i * (model_layers-1) / (layers-1)),
 * spreading the recorded layers over the model's depth. Expert identities
 * are shuffled per layer by a permutation drawn from seed (shared by the
 * domains, so experts two domains both favour stay shared). */
ramp_status ramp_popularity_build(const ramp_routing_source *src, int experts,
                                  int model_layers, int layers, uint64_t seed,
                                  const ramp_popularity_shape *shape,
                                  ramp_popularity **out);
void ramp_popularity_free(ramp_popularity *p);

static inline const double *ramp_popularity_row(const ramp_popularity *p,
                                                int domain, int layer) {
    return p->q + ((size_t)domain * (size_t)p->layers + (size_t)layer) *
                      (size_t)p->experts;
}

/* Scales a popularity row of n experts to E experts, preserving both the
 * distribution of relative popularity (quantile resampling) and expert
 * identity (new expert j descends from source expert floor(j*n/E), E >= n,
 * or is source expert floor((j+0.5)*n/E), E < n). src: [n] values > 0;
 * dst: [E], mean 1. Exposed for the tests. */
ramp_status ramp_popularity_scale(const double *src, int n, int experts,
                                  double *dst);

#endif /* RAMP_POPULARITY_H */
