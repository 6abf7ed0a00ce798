/*
 * timing.c - timing datasets: the measured time of every configuration on
 * each recorded per-GPU load (the input of the cost-model fit). Stored as
 * safetensors (docs/formats.md) with the configuration names, their occupancy
 * classes, the domain names and the run's provenance (device, command, date)
 * in __metadata__.
 *
 * One checker (timing_check) runs before every write and after every read:
 * loads non-negative and zero past nexp, nexp <= max_experts, indices in
 * range, and times finite and >= 0 (NaN, "not measured yet", only where
 * allowed). A file libramp writes therefore always reads back.
 */
#include "internal.h"
#include "moe_v2.h"
#include "safetensors.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TIMING_MAX_DIM (1 << 20)
#define TIMING_MAX_CONFIGS 4096 /* duplicate checks are quadratic */
#define TIMING_MAX_DOMAINS 4096

static const char *const timing_tensors[] = {
    "loads", "nexp", "batch", "gpu", "domain", "batch_tokens", "times_us"};

void ramp_timing_free(ramp_timing *t) {
    if (!t) return;
    free(t->configs);
    free(t->blocks_per_sm);
    free(t->domains);
    free(t->loads);
    free(t->nexp);
    free(t->batch);
    free(t->gpu);
    free(t->domain);
    free(t->batch_tokens);
    free(t->times_us);
    free(t);
}

static ramp_status check_geometry(ramp_status status, const char *where,
                                  const ramp_geometry *g) {
    RAMP_CHECK(g->experts >= 1 && g->experts <= TIMING_MAX_DIM &&
                   g->topk >= 1 && g->topk <= TIMING_MAX_DIM &&
                   g->inter >= 1 && g->inter <= TIMING_MAX_DIM &&
                   g->hidden >= 1 && g->hidden <= TIMING_MAX_DIM &&
                   (g->bf16 == 0 || g->bf16 == 1),
               status,
               "%s: bad geometry (experts %d, topk %d, inter %d, hidden %d, "
               "bf16 %d): sizes must be in [1, %d], bf16 0 or 1", where,
               g->experts, g->topk, g->inter, g->hidden, g->bf16,
               TIMING_MAX_DIM);
    return RAMP_OK;
}

/* Checks that the configurations are valid (their names parse back to the
 * same configuration) and distinct. */
static ramp_status check_configs(ramp_status status, const char *where,
                                 const ramp_config *configs,
                                 const int *blocks_per_sm, int n) {
    for (int i = 0; i < n; i++) {
        char name[96], why[512];
        ramp_config back;
        ramp_config_name(&configs[i], name, sizeof name);
        if (ramp_config_parse(name, &back) != RAMP_OK) {
            snprintf(why, sizeof why, "%s", ramp_last_error());
            RAMP_FAIL(status, "%s: configuration %d (%s) is not valid: %s",
                      where, i, name, why);
        }
        RAMP_CHECK(ramp_config_equal(&back, &configs[i]), status,
                   "%s: configuration %d (%s) has a flag outside {0, 1} "
                   "(persistent %d, grouped %d) or two_phase %d outside {0, 1, 2, 4}",
                   where, i, name, configs[i].persistent, configs[i].grouped,
                   configs[i].two_phase);
        RAMP_CHECK(blocks_per_sm[i] >= 1, status,
                   "%s: configuration %d (%s) has blocks_per_sm = %d; a timed "
                   "configuration must run (>= 1)", where, i, name,
                   blocks_per_sm[i]);
        for (int j = 0; j < i; j++)
            RAMP_CHECK(!ramp_config_equal(&configs[i], &configs[j]), status,
                       "%s: configuration %s appears twice (at %d and %d)",
                       where, name, j, i);
    }
    return RAMP_OK;
}

ramp_status ramp_timing_create(const char *model, const char *layout,
                               const ramp_geometry *g, int sms,
                               const ramp_config *configs,
                               const int *blocks_per_sm, int nconfigs,
                               ramp_timing **out) {
    const char *W = "ramp_timing_create";
    RAMP_CHECK(model && layout && g && configs && blocks_per_sm && out,
               RAMP_ERR_INVALID_ARGUMENT, "%s: NULL argument", W);
    RAMP_CHECK(model[0] && strlen(model) < RAMP_NAME_MAX,
               RAMP_ERR_INVALID_ARGUMENT,
               "%s: model name '%.64s' is empty or longer than %d characters",
               W, model, RAMP_NAME_MAX - 1);
    ramp_layout lay;
    RAMP_TRY(ramp_layout_parse(layout, &lay));
    RAMP_TRY(check_geometry(RAMP_ERR_INVALID_ARGUMENT, W, g));
    RAMP_CHECK(sms >= 1, RAMP_ERR_INVALID_ARGUMENT, "%s: sms = %d, must be "
               ">= 1", W, sms);
    RAMP_CHECK(nconfigs >= 1 && nconfigs <= TIMING_MAX_CONFIGS,
               RAMP_ERR_INVALID_ARGUMENT, "%s: nconfigs = %d outside [1, %d]",
               W, nconfigs, TIMING_MAX_CONFIGS);
    RAMP_TRY(check_configs(RAMP_ERR_INVALID_ARGUMENT, W, configs,
                           blocks_per_sm, nconfigs));
    ramp_timing *t = ramp_calloc(1, sizeof *t);
    if (!t) return RAMP_ERR_OUT_OF_MEMORY;
    t->configs = ramp_calloc((size_t)nconfigs, sizeof *t->configs);
    t->blocks_per_sm = ramp_calloc((size_t)nconfigs, sizeof *t->blocks_per_sm);
    if (!t->configs || !t->blocks_per_sm) {
        ramp_timing_free(t);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    snprintf(t->model, sizeof t->model, "%s", model);
    ramp_layout_name(lay, t->layout, sizeof t->layout);
    t->geom = *g;
    t->sms = sms;
    t->nconfigs = nconfigs;
    memcpy(t->configs, configs, (size_t)nconfigs * sizeof *configs);
    memcpy(t->blocks_per_sm, blocks_per_sm,
           (size_t)nconfigs * sizeof *blocks_per_sm);
    t->max_experts = g->experts;
    *out = t;
    return RAMP_OK;
}

static ramp_status check_domain_name(ramp_status status, const char *where,
                                     const char *name) {
    size_t n = strlen(name);
    RAMP_CHECK(n >= 1 && n < RAMP_NAME_MAX && !strchr(name, ','), status,
               "%s: domain name '%.64s' must be 1-%d characters without ','",
               where, name, RAMP_NAME_MAX - 1);
    return RAMP_OK;
}

int ramp_timing_domain_index(ramp_timing *t, const char *name) {
    if (!t || !name) {
        ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                       "ramp_timing_domain_index: NULL argument");
        return -1;
    }
    for (int i = 0; i < t->ndomains; i++)
        if (strcmp(t->domains[i], name) == 0) return i;
    if (check_domain_name(RAMP_ERR_INVALID_ARGUMENT,
                          "ramp_timing_domain_index", name) != RAMP_OK)
        return -1;
    if (t->ndomains >= TIMING_MAX_DOMAINS) {
        ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                       "ramp_timing_domain_index: more than %d domains",
                       TIMING_MAX_DOMAINS);
        return -1;
    }
    char(*d)[RAMP_NAME_MAX] =
        realloc(t->domains, (size_t)(t->ndomains + 1) * sizeof *t->domains);
    if (!d) {
        ramp_set_error(RAMP_ERR_OUT_OF_MEMORY, __FILE__, __LINE__,
                       "out of memory adding domain '%s'", name);
        return -1;
    }
    t->domains = d;
    snprintf(t->domains[t->ndomains], RAMP_NAME_MAX, "%s", name);
    return t->ndomains++;
}

/* Makes room for n loads. */
static ramp_status timing_reserve(ramp_timing *t, int64_t n) {
    if (n <= t->capacity) return RAMP_OK;
    int64_t cap = t->capacity ? t->capacity : 64;
    while (cap < n) cap *= 2;
    size_t X = (size_t)t->max_experts, C = (size_t)t->nconfigs;
    RAMP_CHECK((uint64_t)cap <= SIZE_MAX / 4 / (X > C ? X : C),
               RAMP_ERR_OUT_OF_MEMORY, "timing dataset of %lld loads is too "
               "big", (long long)cap);
    size_t c = (size_t)cap;
    void *p;
#define GROW(field, count)                                              \
    if (!(p = realloc(t->field, (count) * sizeof *t->field))) goto oom; \
    t->field = p;
    GROW(loads, c * X);
    GROW(nexp, c);
    GROW(batch, c);
    GROW(gpu, c);
    GROW(domain, c);
    GROW(batch_tokens, c);
    GROW(times_us, c * C);
#undef GROW
    t->capacity = cap;
    return RAMP_OK;
oom:
    RAMP_FAIL(RAMP_ERR_OUT_OF_MEMORY, "out of memory growing a timing dataset "
              "to %lld loads", (long long)n);
}

/* Checks one load's fields. */
static ramp_status check_load(ramp_status status, const char *where,
                              const ramp_timing *t, int gpus, int64_t i,
                              int32_t batch, int32_t gpu, int32_t domain,
                              int32_t batch_tokens, int32_t nexp,
                              const int32_t *load, int padded) {
#define LD "%s: load %lld: "
    RAMP_CHECK(batch >= 0, status, LD "batch = %d is negative (tensor "
               "'batch')", where, (long long)i, (int)batch);
    RAMP_CHECK(gpu >= 0 && gpu < gpus, status,
               LD "gpu = %d outside [0, %d) for layout %s (tensor 'gpu')",
               where, (long long)i, (int)gpu, gpus, t->layout);
    RAMP_CHECK(domain >= 0 && domain < t->ndomains, status,
               LD "domain = %d outside [0, %d) (tensor 'domain')", where,
               (long long)i, (int)domain, t->ndomains);
    RAMP_CHECK(batch_tokens >= 0, status, LD "batch_tokens = %d is negative "
               "(tensor 'batch_tokens')", where, (long long)i,
               (int)batch_tokens);
    RAMP_CHECK(nexp >= 0 && nexp <= t->max_experts, status,
               LD "nexp = %d outside [0, max_experts = %d] (tensor 'nexp')",
               where, (long long)i, (int)nexp, t->max_experts);
    int n = padded ? t->max_experts : nexp;
    for (int j = 0; j < n; j++) {
        RAMP_CHECK(load[j] >= 0, status,
                   LD "tokens of local expert %d = %d is negative (tensor "
                   "'loads')", where, (long long)i, j, (int)load[j]);
        RAMP_CHECK(j < nexp || load[j] == 0, status,
                   LD "local expert %d holds %d tokens but nexp = %d (tensor "
                   "'loads' must be zero past nexp)", where, (long long)i, j,
                   (int)load[j], (int)nexp);
    }
#undef LD
    return RAMP_OK;
}

ramp_status ramp_timing_add_load(ramp_timing *t, int32_t batch, int32_t gpu,
                                 int domain, int32_t batch_tokens, int nexp,
                                 const int32_t *load, int64_t *index) {
    const char *W = "ramp_timing_add_load";
    RAMP_CHECK(t && (load || nexp == 0), RAMP_ERR_INVALID_ARGUMENT,
               "%s: NULL timing or load", W);
    ramp_layout lay;
    RAMP_TRY(ramp_layout_parse(t->layout, &lay));
    RAMP_TRY(check_load(RAMP_ERR_INVALID_ARGUMENT, W, t, lay.gpus, t->nloads,
                        batch, gpu, domain, batch_tokens, nexp, load, 0));
    RAMP_TRY(timing_reserve(t, t->nloads + 1));
    int64_t i = t->nloads;
    int32_t *row = t->loads + i * t->max_experts;
    memset(row, 0, (size_t)t->max_experts * sizeof *row);
    if (nexp > 0) memcpy(row, load, (size_t)nexp * sizeof *row);
    t->nexp[i] = nexp;
    t->batch[i] = batch;
    t->gpu[i] = gpu;
    t->domain[i] = domain;
    t->batch_tokens[i] = batch_tokens;
    for (int c = 0; c < t->nconfigs; c++)
        t->times_us[i * t->nconfigs + c] = NAN;
    t->nloads++;
    if (index) *index = i;
    return RAMP_OK;
}

/* The kernel is v1 or v2, a v2 dataset holds only configurations v2 runs
 * on its geometry (so every cell of it can be a measured time), and a v1
 * dataset none of v2's wide tiles (v1 has no such kernel). */
static ramp_status check_kernel(ramp_status status, const char *where,
                                const ramp_timing *t) {
    RAMP_CHECK(t->kernel == RAMP_KERNEL_V1 || t->kernel == RAMP_KERNEL_V2, status,
               "%s: kernel = %d is not v1 (0) or v2 (1)", where, t->kernel);
    if (t->kernel == RAMP_KERNEL_V1) {
        for (int c = 0; c < t->nconfigs; c++) {
            char name[96];
            RAMP_CHECK(t->configs[c].rows <= 64 && !t->configs[c].two_phase, status,
                       "%s: kernel v1 dataset: configuration %d (%s) is a wide tile of kernel "
                       "v2 (rows 128, .ph2): v1 does not run it", where, c,
                       ramp_config_name(&t->configs[c], name, sizeof name));
        }
        return RAMP_OK;
    }
    for (int c = 0; c < t->nconfigs; c++) {
        if (ramp_kernel_version_check((ramp_kernel_version)t->kernel, &t->configs[c],
                                      &t->geom) == RAMP_OK)
            continue;
        char name[96], why[512];
        snprintf(why, sizeof why, "%s", ramp_last_error());
        RAMP_FAIL(status, "%s: kernel v2 dataset: configuration %d (%s) is not one v2 runs "
                  "(%s)", where, c, ramp_config_name(&t->configs[c], name, sizeof name), why);
    }
    return RAMP_OK;
}

/* Stage units are kernel v2's, and every configuration must run on them. */
static ramp_status check_weights(ramp_status status, const char *where, const ramp_timing *t) {
    RAMP_CHECK(t->weight_units == 0 || t->weight_units == 1, status,
               "%s: weight_units = %d is not 0 (row-major) or 1 (stage units)", where,
               t->weight_units);
    if (!t->weight_units) return RAMP_OK;
    RAMP_CHECK(t->kernel == RAMP_KERNEL_V2, status,
               "%s: times on weights in stage units must be of kernel v2, not %s", where,
               ramp_kernel_version_name((ramp_kernel_version)t->kernel));
    for (int c = 0; c < t->nconfigs; c++) {
        if (ramp_moe_v2_units_check(&t->configs[c], &t->geom) == RAMP_OK) continue;
        char name[96], why[512];
        snprintf(why, sizeof why, "%s", ramp_last_error());
        RAMP_FAIL(status, "%s: weights in stage units: configuration %d (%s) does not run on "
                  "them (%s)", where, c, ramp_config_name(&t->configs[c], name, sizeof name), why);
    }
    return RAMP_OK;
}

/* Checks the whole dataset. time_status: status for a bad time (NUMERIC
 * before writing: the caller filled them; FORMAT after reading). */
static ramp_status timing_check(ramp_status status, ramp_status time_status,
                                const char *where, const ramp_timing *t,
                                int allow_missing) {
    RAMP_CHECK(memchr(t->model, 0, sizeof t->model) && t->model[0] &&
                   memchr(t->layout, 0, sizeof t->layout) &&
                   memchr(t->device, 0, sizeof t->device) &&
                   memchr(t->command, 0, sizeof t->command) &&
                   memchr(t->date, 0, sizeof t->date) &&
                   memchr(t->placement, 0, sizeof t->placement),
               status, "%s: a text field is not NUL-terminated, or the model "
               "is empty", where);
    RAMP_CHECK(!t->placement[0] || strcmp(t->placement, "contiguous") == 0 ||
                   ramp_placement_is_balanced(t->placement),
               status, "%s: placement '%.63s' is not 'contiguous', 'balanced' or "
               "'balanced:<source>'", where, t->placement);
    ramp_layout lay;
    RAMP_CHECK(ramp_layout_parse(t->layout, &lay) == RAMP_OK, status,
               "%s: layout '%s' is not TP1-TP8 or EP2-EP64", where,
               t->layout);
    RAMP_TRY(check_geometry(status, where, &t->geom));
    RAMP_CHECK(t->max_experts == t->geom.experts, status,
               "%s: max_experts = %d but the geometry has %d experts", where,
               t->max_experts, t->geom.experts);
    RAMP_CHECK(t->sms >= 1, status, "%s: sms = %d, must be >= 1", where,
               t->sms);
    RAMP_CHECK(t->nconfigs >= 1 && t->nconfigs <= TIMING_MAX_CONFIGS &&
                   t->configs && t->blocks_per_sm,
               status, "%s: nconfigs = %d outside [1, %d] or no arrays",
               where, t->nconfigs, TIMING_MAX_CONFIGS);
    RAMP_TRY(check_configs(status, where, t->configs, t->blocks_per_sm,
                           t->nconfigs));
    RAMP_TRY(check_kernel(status, where, t));
    RAMP_TRY(check_weights(status, where, t));
    RAMP_CHECK(t->ndomains >= 0 && t->ndomains <= TIMING_MAX_DOMAINS &&
                   (t->ndomains == 0 || t->domains),
               status, "%s: ndomains = %d outside [0, %d] or no array", where,
               t->ndomains, TIMING_MAX_DOMAINS);
    for (int d = 0; d < t->ndomains; d++) {
        RAMP_CHECK(memchr(t->domains[d], 0, RAMP_NAME_MAX), status,
                   "%s: domain %d is not NUL-terminated", where, d);
        RAMP_TRY(check_domain_name(status, where, t->domains[d]));
        for (int e = 0; e < d; e++)
            RAMP_CHECK(strcmp(t->domains[d], t->domains[e]) != 0, status,
                       "%s: domain '%s' appears twice (at %d and %d)", where,
                       t->domains[d], e, d);
    }
    RAMP_CHECK(t->nloads >= 0 &&
                   (t->nloads == 0 ||
                    (t->loads && t->nexp && t->batch && t->gpu && t->domain &&
                     t->batch_tokens && t->times_us)),
               status, "%s: %lld loads but no arrays", where,
               (long long)t->nloads);
    for (int64_t i = 0; i < t->nloads; i++) {
        RAMP_TRY(check_load(status, where, t, lay.gpus, i, t->batch[i],
                            t->gpu[i], t->domain[i], t->batch_tokens[i],
                            t->nexp[i], t->loads + i * t->max_experts, 1));
        for (int c = 0; c < t->nconfigs; c++) {
            float v = t->times_us[i * t->nconfigs + c];
            if (isnan(v)) {
                RAMP_CHECK(allow_missing, time_status,
                           "%s: load %lld, configuration %d: time is NaN (not "
                           "measured) (tensor 'times_us')", where,
                           (long long)i, c);
            } else {
                RAMP_CHECK(isfinite(v) && v >= 0, time_status,
                           "%s: load %lld, configuration %d: time %g us is "
                           "not finite and >= 0 (tensor 'times_us')", where,
                           (long long)i, c, (double)v);
            }
        }
    }
    return RAMP_OK;
}

/* A growable string for the comma-separated lists. */
typedef struct {
    char *s;
    size_t n, cap;
} strbuf;

static int sb_add(strbuf *b, const char *text) {
    size_t len = strlen(text);
    if (b->n + len + 2 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->n + len + 2 > cap) cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) return 0;
        b->s = p;
        b->cap = cap;
    }
    if (b->n) b->s[b->n++] = ',';
    memcpy(b->s + b->n, text, len + 1);
    b->n += len;
    return 1;
}

static ramp_status timing_writer(const ramp_timing *t, const char *where,
                                 ramp_st_writer **out) {
    RAMP_TRY(timing_check(RAMP_ERR_INVALID_ARGUMENT, RAMP_ERR_NUMERIC, where,
                          t, 1));
    strbuf cfg = {0}, bps = {0}, dom = {0};
    int ok = 1;
    for (int c = 0; ok && c < t->nconfigs; c++) {
        char name[96], num[16];
        ramp_config_name(&t->configs[c], name, sizeof name);
        snprintf(num, sizeof num, "%d", t->blocks_per_sm[c]);
        ok = sb_add(&cfg, name) && sb_add(&bps, num);
    }
    for (int d = 0; ok && d < t->ndomains; d++) ok = sb_add(&dom, t->domains[d]);
    ramp_st_writer *w = NULL;
    ramp_status s = ok ? RAMP_OK
                       : ramp_set_error(RAMP_ERR_OUT_OF_MEMORY, __FILE__,
                                        __LINE__, "out of memory");
    int64_t L = t->nloads;
    int64_t shape_lx[2] = {L, t->max_experts}, shape_lc[2] = {L, t->nconfigs};
    if (s == RAMP_OK) s = ramp_st_writer_create(&w);
    if (s == RAMP_OK) s = ramp_st_writer_checksum(w);
    if (s == RAMP_OK &&
        ((s = ramp_st_writer_meta(w, "format", "ramp-timing")) ||
         (s = ramp_st_writer_meta(w, "version", "1")) ||
         (s = ramp_st_writer_meta(w, "model", t->model)) ||
         (s = ramp_st_writer_meta(w, "layout", t->layout)) ||
         (s = ramp_st_writer_meta_int(w, "experts", t->geom.experts)) ||
         (s = ramp_st_writer_meta_int(w, "topk", t->geom.topk)) ||
         (s = ramp_st_writer_meta_int(w, "inter", t->geom.inter)) ||
         (s = ramp_st_writer_meta_int(w, "hidden", t->geom.hidden)) ||
         (s = ramp_st_writer_meta_int(w, "bf16", t->geom.bf16)) ||
         (s = ramp_st_writer_meta_int(w, "sms", t->sms)) ||
         (s = ramp_st_writer_meta(w, "configs", cfg.s)) ||
         (s = ramp_st_writer_meta(w, "blocks_per_sm", bps.s)) ||
         (s = ramp_st_writer_meta(w, "domains", dom.s ? dom.s : "")) ||
         (s = ramp_st_writer_meta(w, "device", t->device)) ||
         (s = ramp_st_writer_meta(w, "command", t->command)) ||
         (s = ramp_st_writer_meta(w, "date", t->date)) ||
         (t->placement[0] && (s = ramp_st_writer_meta(w, "placement", t->placement))) ||
         (t->kernel != RAMP_KERNEL_V1 &&
          (s = ramp_st_writer_meta(w, "kernel",
                                   ramp_kernel_version_name((ramp_kernel_version)t->kernel)))) ||
         (t->weight_units && (s = ramp_st_writer_meta(w, "weights", "units"))) ||
         (s = ramp_st_writer_add(w, "loads", RAMP_ST_I32, 2, shape_lx,
                                 t->loads)) ||
         (s = ramp_st_writer_add(w, "nexp", RAMP_ST_I32, 1, &L, t->nexp)) ||
         (s = ramp_st_writer_add(w, "batch", RAMP_ST_I32, 1, &L, t->batch)) ||
         (s = ramp_st_writer_add(w, "gpu", RAMP_ST_I32, 1, &L, t->gpu)) ||
         (s = ramp_st_writer_add(w, "domain", RAMP_ST_I32, 1, &L,
                                 t->domain)) ||
         (s = ramp_st_writer_add(w, "batch_tokens", RAMP_ST_I32, 1, &L,
                                 t->batch_tokens)) ||
         (s = ramp_st_writer_add(w, "times_us", RAMP_ST_F32, 2, shape_lc,
                                 t->times_us)))) {
        ramp_st_writer_free(w);
        w = NULL;
    }
    free(cfg.s);
    free(bps.s);
    free(dom.s);
    *out = w;
    return s;
}

ramp_status ramp_timing_write(const ramp_timing *t, const char *path) {
    RAMP_CHECK(t && path, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_timing_write: NULL timing or path");
    ramp_st_writer *w;
    RAMP_TRY(timing_writer(t, path, &w));
    ramp_status s = ramp_st_writer_write(w, path);
    ramp_st_writer_free(w);
    return s;
}

ramp_status ramp_timing_write_memory(const ramp_timing *t, void **bytes,
                                     size_t *size) {
    RAMP_CHECK(t && bytes && size, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_timing_write_memory: NULL argument");
    ramp_st_writer *w;
    RAMP_TRY(timing_writer(t, "ramp_timing_write_memory", &w));
    ramp_status s = ramp_st_writer_to_memory(w, bytes, size);
    ramp_st_writer_free(w);
    return s;
}

/* Splits a comma-separated metadata list into a malloc'd copy and pointers
 * to its items ("" gives zero items). */
static ramp_status split_list(const char *L, const char *key,
                              const char *text, int max, char **copy,
                              char ***items, int *count) {
    size_t len = strlen(text);
    *copy = ramp_calloc(len + 1, 1);
    int n = 0;
    if (len > 0) {
        n = 1;
        for (const char *p = text; *p; p++) n += *p == ',';
    }
    *items = ramp_calloc((size_t)(n ? n : 1), sizeof **items);
    if (!*copy || !*items) return RAMP_ERR_OUT_OF_MEMORY;
    RAMP_CHECK(n <= max, RAMP_ERR_FORMAT,
               "%s: __metadata__ '%s' lists %d items, at most %d allowed", L,
               key, n, max);
    memcpy(*copy, text, len + 1);
    char *p = *copy;
    for (int i = 0; i < n; i++) {
        (*items)[i] = p;
        char *c = strchr(p, ',');
        if (c) {
            *c = '\0';
            p = c + 1;
        }
    }
    *count = n;
    return RAMP_OK;
}

static ramp_status parse_lists(const ramp_st_file *f, ramp_timing *t,
                               char **copies, char ***items) {
    const char *L = ramp_st_label(f);
    const char *cfg = ramp_st_meta(f, "configs");
    const char *bps = ramp_st_meta(f, "blocks_per_sm");
    const char *dom = ramp_st_meta(f, "domains");
    RAMP_CHECK(cfg && bps && dom, RAMP_ERR_FORMAT,
               "%s: __metadata__ lacks '%s'", L,
               !cfg ? "configs" : !bps ? "blocks_per_sm" : "domains");
    int nc, nb, nd;
    RAMP_TRY(split_list(L, "configs", cfg, TIMING_MAX_CONFIGS, &copies[0],
                        &items[0], &nc));
    RAMP_TRY(split_list(L, "blocks_per_sm", bps, TIMING_MAX_CONFIGS,
                        &copies[1], &items[1], &nb));
    RAMP_TRY(split_list(L, "domains", dom, TIMING_MAX_DOMAINS, &copies[2],
                        &items[2], &nd));
    RAMP_CHECK(nc >= 1, RAMP_ERR_FORMAT,
               "%s: __metadata__ 'configs' lists no configuration", L);
    RAMP_CHECK(nb == nc, RAMP_ERR_FORMAT,
               "%s: __metadata__ 'blocks_per_sm' lists %d values for %d "
               "configurations", L, nb, nc);
    t->configs = ramp_calloc((size_t)nc, sizeof *t->configs);
    t->blocks_per_sm = ramp_calloc((size_t)nc, sizeof *t->blocks_per_sm);
    t->domains = ramp_calloc((size_t)(nd ? nd : 1), sizeof *t->domains);
    if (!t->configs || !t->blocks_per_sm || !t->domains)
        return RAMP_ERR_OUT_OF_MEMORY;
    for (int c = 0; c < nc; c++) {
        if (ramp_config_parse(items[0][c], &t->configs[c]) != RAMP_OK) {
            char why[512];
            snprintf(why, sizeof why, "%s", ramp_last_error());
            RAMP_FAIL(RAMP_ERR_FORMAT, "%s: __metadata__ 'configs' item %d: %s",
                      L, c, why);
        }
        const char *p = items[1][c];
        long v = 0;
        int digits = 0;
        for (; *p >= '0' && *p <= '9' && v < 1000000; p++, digits++)
            v = v * 10 + (*p - '0');
        RAMP_CHECK(digits > 0 && *p == '\0' && v >= 1 && v < 1000000,
                   RAMP_ERR_FORMAT,
                   "%s: __metadata__ 'blocks_per_sm' item %d = '%.16s' is not "
                   "a positive integer", L, c, items[1][c]);
        t->blocks_per_sm[c] = (int)v;
    }
    t->nconfigs = nc;
    for (int d = 0; d < nd; d++) {
        RAMP_TRY(check_domain_name(RAMP_ERR_FORMAT, L, items[2][d]));
        snprintf(t->domains[d], RAMP_NAME_MAX, "%s", items[2][d]);
    }
    t->ndomains = nd;
    return RAMP_OK;
}

static ramp_status timing_from_st_into(const ramp_st_file *f,
                                       int allow_missing, ramp_timing *t,
                                       char **copies, char ***items) {
    const char *L = ramp_st_label(f);
    /* Only the known keys: a corrupted key name must not silently drop a
     * field (or the checksum). */
    static const char *const known[] = {"format", "version", "model", "layout", "experts",
                                        "topk", "inter", "hidden", "bf16", "sms", "configs",
                                        "blocks_per_sm", "domains", "device", "command",
                                        "date", "placement", "kernel", "weights",
                                        RAMP_ST_CHECKSUM_KEY};
    for (int i = 0; i < ramp_st_meta_count(f); i++) {
        const char *k = ramp_st_meta_key(f, i);
        int ok = 0;
        for (size_t j = 0; j < sizeof known / sizeof known[0]; j++) ok |= strcmp(k, known[j]) == 0;
        RAMP_CHECK(ok, RAMP_ERR_FORMAT, "%s: unknown __metadata__ key '%.64s' (corrupted, or not "
                   "a ramp-timing file)", L, k);
    }
    t->checksum = ramp_st_checksum_verified(f);
    const char *fmt = ramp_st_meta(f, "format");
    RAMP_CHECK(fmt && strcmp(fmt, "ramp-timing") == 0, RAMP_ERR_FORMAT,
               "%s: __metadata__ 'format' is %s%.32s%s, expected "
               "'ramp-timing'", L, fmt ? "'" : "", fmt ? fmt : "missing",
               fmt ? "'" : "");
    const char *ver = ramp_st_meta(f, "version");
    RAMP_CHECK(ver, RAMP_ERR_FORMAT, "%s: __metadata__ has no 'version'", L);
    RAMP_CHECK(strcmp(ver, "1") == 0, RAMP_ERR_UNSUPPORTED,
               "%s: timing format version '%.16s' is not supported (only 1)",
               L, ver);
    RAMP_TRY(ramp_st_meta_string(f, "model", 1, t->model, sizeof t->model));
    RAMP_CHECK(t->model[0], RAMP_ERR_FORMAT, "%s: __metadata__ 'model' is "
               "empty", L);
    RAMP_TRY(ramp_st_meta_string(f, "layout", 1, t->layout, sizeof t->layout));
    ramp_layout lay;
    RAMP_CHECK(ramp_layout_parse(t->layout, &lay) == RAMP_OK, RAMP_ERR_FORMAT,
               "%s: __metadata__ 'layout' = '%s' is not TP1-TP8 or EP2-EP64",
               L, t->layout);
    RAMP_TRY(ramp_st_meta_string(f, "device", 0, t->device, sizeof t->device));
    RAMP_TRY(ramp_st_meta_string(f, "command", 0, t->command,
                                 sizeof t->command));
    RAMP_TRY(ramp_st_meta_string(f, "date", 0, t->date, sizeof t->date));
    RAMP_TRY(ramp_st_meta_string(f, "placement", 0, t->placement, sizeof t->placement));
    const char *kernel = ramp_st_meta(f, "kernel"); /* absent: v1 */
    ramp_kernel_version kv = RAMP_KERNEL_V1;
    RAMP_CHECK(!kernel || ramp_kernel_version_parse(kernel, &kv) == RAMP_OK, RAMP_ERR_FORMAT,
               "%s: __metadata__ 'kernel' = '%.32s' is not v1 or v2 (the key is absent for v1)",
               L, kernel ? kernel : "");
    t->kernel = (int)kv;
    const char *weights = ramp_st_meta(f, "weights"); /* absent: row-major */
    RAMP_CHECK(!weights || !strcmp(weights, "rows") || !strcmp(weights, "units"),
               RAMP_ERR_FORMAT,
               "%s: __metadata__ 'weights' = '%.32s' is not 'rows' or 'units' (absent: rows)", L,
               weights ? weights : "");
    t->weight_units = weights && !strcmp(weights, "units");
    int64_t v[6];
    RAMP_TRY(ramp_st_meta_int(f, "experts", 1, TIMING_MAX_DIM, &v[0]));
    RAMP_TRY(ramp_st_meta_int(f, "topk", 1, TIMING_MAX_DIM, &v[1]));
    RAMP_TRY(ramp_st_meta_int(f, "inter", 1, TIMING_MAX_DIM, &v[2]));
    RAMP_TRY(ramp_st_meta_int(f, "hidden", 1, TIMING_MAX_DIM, &v[3]));
    RAMP_TRY(ramp_st_meta_int(f, "sms", 1, 1000000, &v[4]));
    RAMP_TRY(ramp_st_meta_int(f, "bf16", 0, 1, &v[5]));
    t->geom.experts = (int)v[0];
    t->geom.topk = (int)v[1];
    t->geom.inter = (int)v[2];
    t->geom.hidden = (int)v[3];
    t->sms = (int)v[4];
    t->geom.bf16 = (int)v[5];
    t->max_experts = t->geom.experts;
    RAMP_TRY(parse_lists(f, t, copies, items));

    RAMP_TRY(ramp_st_only(f, timing_tensors, 7));
    const ramp_st_tensor *tn, *tl, *tb, *tg, *td, *tt, *tm;
    RAMP_TRY(ramp_st_expect(f, "nexp", RAMP_ST_I32, 1, NULL, &tn));
    int64_t n = tn->shape[0];
    int64_t shape_l[1] = {n}, shape_lx[2] = {n, t->max_experts},
            shape_lc[2] = {n, t->nconfigs};
    RAMP_TRY(ramp_st_expect(f, "loads", RAMP_ST_I32, 2, shape_lx, &tl));
    RAMP_TRY(ramp_st_expect(f, "batch", RAMP_ST_I32, 1, shape_l, &tb));
    RAMP_TRY(ramp_st_expect(f, "gpu", RAMP_ST_I32, 1, shape_l, &tg));
    RAMP_TRY(ramp_st_expect(f, "domain", RAMP_ST_I32, 1, shape_l, &td));
    RAMP_TRY(ramp_st_expect(f, "batch_tokens", RAMP_ST_I32, 1, shape_l, &tt));
    RAMP_TRY(ramp_st_expect(f, "times_us", RAMP_ST_F32, 2, shape_lc, &tm));
    RAMP_TRY(timing_reserve(t, n));
    ramp_st_copy(tn, t->nexp);
    ramp_st_copy(tl, t->loads);
    ramp_st_copy(tb, t->batch);
    ramp_st_copy(tg, t->gpu);
    ramp_st_copy(td, t->domain);
    ramp_st_copy(tt, t->batch_tokens);
    ramp_st_copy(tm, t->times_us);
    t->nloads = n;
    return timing_check(RAMP_ERR_FORMAT, RAMP_ERR_FORMAT, L, t, allow_missing);
}

static ramp_status timing_from_st(const ramp_st_file *f, int allow_missing,
                                  ramp_timing **out) {
    ramp_timing *t = ramp_calloc(1, sizeof *t);
    if (!t) return RAMP_ERR_OUT_OF_MEMORY;
    char *copies[3] = {NULL, NULL, NULL};
    char **items[3] = {NULL, NULL, NULL};
    ramp_status s = timing_from_st_into(f, allow_missing, t, copies, items);
    for (int i = 0; i < 3; i++) {
        free(copies[i]);
        free(items[i]);
    }
    if (s != RAMP_OK) {
        ramp_timing_free(t);
        return s;
    }
    *out = t;
    return RAMP_OK;
}

ramp_status ramp_timing_read_memory(const void *bytes, size_t size,
                                    const char *label, int allow_missing,
                                    ramp_timing **out) {
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "ramp_timing_read_memory: NULL");
    ramp_st_file *f;
    RAMP_TRY(ramp_st_parse(bytes, size, label, &f));
    ramp_status s = timing_from_st(f, allow_missing, out);
    ramp_st_close(f);
    return s;
}

ramp_status ramp_timing_read(const char *path, int allow_missing,
                             ramp_timing **out) {
    RAMP_CHECK(path && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_timing_read: NULL path or out");
    ramp_st_file *f;
    RAMP_TRY(ramp_st_open(path, &f));
    ramp_status s = timing_from_st(f, allow_missing, out);
    ramp_st_close(f);
    return s;
}
