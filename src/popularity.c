/*
 * popularity.c - expert popularity per layer and domain, from real counts.
 *
 * Reads the two real routing sources in data/routing (OLMoE per domain at
 * three layers, DeepSeek-V3 per layer), and builds for a model of E experts
 * and L layers one popularity row per (domain, recorded layer):
 *
 *   q[d][l] ~ D[d][l] ^ domain_exp * S[l] ^ layer_exp
 *
 * D is the OLMoE row of the domain (chat<-tulu, math<-arxiv, code<-github,
 * knowledge<-wikipedia) at the OLMoE layer nearest in relative depth; S is
 * DeepSeek-V3's row at the same relative depth, so the skew changes from
 * layer to layer as it does in a real model. Both are scaled to E experts by
 * ramp_popularity_scale and shuffled by per-layer permutations, so which
 * experts are hot differs between layers. The D permutation is shared by the
 * four domains: experts that two domains both favour in OLMoE stay shared.
 */
#include "popularity.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define OLMOE_FILE "olmoe-mixtral-domain-counts.json"
#define DS_DIR "deepseek-v3-sglang"
#define MAX_JSON_BYTES (64L << 20)

/* Our domains in ramp_domain order and the OLMoE domain each one uses. */
static const char *const olmoe_domain_of[RAMP_DOMAIN_COUNT] = {
    "tulu", "arxiv", "github", "wikipedia"};

/* Reads a whole file and parses it; *root must be freed with cJSON_Delete. */
static ramp_status read_json(const char *path, cJSON **root) {
    FILE *f = fopen(path, "rb");
    if (!f)
        RAMP_FAIL(RAMP_ERR_IO, "cannot open routing data %s: %s", path,
                  strerror(errno));
    char *buf = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        RAMP_FAIL(RAMP_ERR_IO, "cannot read routing data %s", path);
    }
    if (size > MAX_JSON_BYTES) {
        fclose(f);
        RAMP_FAIL(RAMP_ERR_FORMAT, "routing data %s: %ld bytes, over the %ld "
                  "byte limit", path, size, MAX_JSON_BYTES);
    }
    buf = malloc((size_t)size + 1);
    if (!buf) {
        fclose(f);
        RAMP_FAIL(RAMP_ERR_OUT_OF_MEMORY, "out of memory reading %s", path);
    }
    size_t got = fread(buf, 1, (size_t)size, f);
    int err = ferror(f);
    fclose(f);
    if (err || got != (size_t)size) {
        free(buf);
        RAMP_FAIL(RAMP_ERR_IO, "cannot read routing data %s", path);
    }
    buf[size] = '\0';
    const char *end = NULL;
    *root = cJSON_ParseWithLengthOpts(buf, (size_t)size, &end, 0);
    if (!*root) {
        long off = end ? (long)(end - buf) : -1;
        free(buf);
        RAMP_FAIL(RAMP_ERR_FORMAT, "routing data %s: invalid JSON near byte %ld",
                  path, off);
    }
    free(buf);
    return RAMP_OK;
}

/* Reads a JSON array of n finite non-negative numbers into out. */
static ramp_status read_counts(const cJSON *arr, int n, double *out,
                               const char *path, const char *field, int row) {
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) != n)
        RAMP_FAIL(RAMP_ERR_FORMAT, "routing data %s: %s[%d] is not an array of "
                  "%d counts", path, field, row, n);
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, arr) {
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
            RAMP_FAIL(RAMP_ERR_FORMAT, "routing data %s: %s[%d][%d] is not a "
                      "finite count >= 0", path, field, row, i);
        out[i++] = v->valuedouble;
    }
    return RAMP_OK;
}

/* Normalises a row to mean 1 with a pseudocount of one per expert.
 * Returns 0 if the row is all zero (a dense layer). */
static int normalise_row(double *row, int n) {
    double sum = 0;
    for (int i = 0; i < n; i++) sum += row[i];
    if (sum <= 0) return 0;
    for (int i = 0; i < n; i++) row[i] = (row[i] + 1.0) * n / (sum + n);
    return 1;
}

static ramp_status load_olmoe(const char *dir, ramp_routing_source *s) {
    char path[4096];
    int len = snprintf(path, sizeof path, "%s/%s", dir, OLMOE_FILE);
    RAMP_CHECK(len > 0 && (size_t)len < sizeof path, RAMP_ERR_INVALID_ARGUMENT,
               "routing_dir is too long (%d bytes)", len);
    cJSON *root = NULL;
    RAMP_TRY(read_json(path, &root));
    ramp_status st = RAMP_OK;
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(root, "counts");
    const cJSON *olmoe = counts ? cJSON_GetObjectItemCaseSensitive(counts, "olmoe")
                                : NULL;
    if (!cJSON_IsArray(layers) || cJSON_GetArraySize(layers) != RAMP_OLMOE_LAYERS) {
        st = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                            "routing data %s: field \"layers\" must list %d "
                            "layers", path, RAMP_OLMOE_LAYERS);
        goto done;
    }
    if (!cJSON_IsObject(olmoe)) {
        st = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                            "routing data %s: field \"counts.olmoe\" is missing",
                            path);
        goto done;
    }
    /* OLMoE-1B-7B has 16 layers: depth = layer / 15. */
    for (int i = 0; i < RAMP_OLMOE_LAYERS; i++) {
        const cJSON *v = cJSON_GetArrayItem(layers, i);
        if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 15) {
            st = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                                "routing data %s: layers[%d] is not an OLMoE "
                                "layer (0..15)", path, i);
            goto done;
        }
        s->olmoe_depth[i] = v->valuedouble / 15.0;
    }
    for (int d = 0; d < RAMP_DOMAIN_COUNT; d++) {
        const cJSON *dom = cJSON_GetObjectItemCaseSensitive(olmoe, olmoe_domain_of[d]);
        char field[64];
        snprintf(field, sizeof field, "counts.olmoe.%s", olmoe_domain_of[d]);
        if (!cJSON_IsArray(dom) || cJSON_GetArraySize(dom) != RAMP_OLMOE_LAYERS) {
            st = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                                "routing data %s: field \"%s\" must hold %d "
                                "layers", path, field, RAMP_OLMOE_LAYERS);
            goto done;
        }
        for (int i = 0; i < RAMP_OLMOE_LAYERS; i++) {
            double *row = s->olmoe + ((size_t)d * RAMP_OLMOE_LAYERS + (size_t)i) *
                                         RAMP_OLMOE_EXPERTS;
            st = read_counts(cJSON_GetArrayItem(dom, i), RAMP_OLMOE_EXPERTS, row,
                             path, field, i);
            if (st != RAMP_OK) goto done;
            if (!normalise_row(row, RAMP_OLMOE_EXPERTS)) {
                st = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                                    "routing data %s: %s[%d] is all zero", path,
                                    field, i);
                goto done;
            }
        }
    }
done:
    cJSON_Delete(root);
    return st;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of the *.json files in dir (sorted so that the mean is
 * summed in the same order everywhere). */
static ramp_status list_json(const char *dir, char ***names, int *count) {
    DIR *dp = opendir(dir);
    if (!dp)
        RAMP_FAIL(RAMP_ERR_IO, "cannot open routing data folder %s: %s", dir,
                  strerror(errno));
    int n = 0, cap = 0;
    char **list = NULL;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0) continue;
        if (n == cap) {
            int ncap = cap ? cap * 2 : 16;
            char **nl = realloc(list, (size_t)ncap * sizeof *nl);
            if (!nl) goto oom;
            list = nl;
            cap = ncap;
        }
        list[n] = malloc(len + 1);
        if (!list[n]) goto oom;
        memcpy(list[n], de->d_name, len + 1);
        n++;
    }
    closedir(dp);
    if (n) qsort(list, (size_t)n, sizeof *list, cmp_str);
    *names = list;
    *count = n;
    return RAMP_OK;
oom:
    closedir(dp);
    for (int i = 0; i < n; i++) free(list[i]);
    free(list);
    RAMP_FAIL(RAMP_ERR_OUT_OF_MEMORY, "out of memory listing %s", dir);
}

/* Adds one SGLang dump's normalised nonzero rows into s->ds (allocating it
 * on the first file). */
static ramp_status add_ds_file(const char *path, ramp_routing_source *s) {
    cJSON *root = NULL;
    RAMP_TRY(read_json(path, &root));
    ramp_status st = RAMP_OK;
    double *row = NULL;
    const cJSON *lc = cJSON_GetObjectItemCaseSensitive(root, "logical_count");
    if (!cJSON_IsArray(lc) || cJSON_GetArraySize(lc) < 1) {
        st = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                            "routing data %s: field \"logical_count\" must be "
                            "an array of layers", path);
        goto done;
    }
    const cJSON *first = cJSON_GetArrayItem(lc, 0);
    int width = cJSON_IsArray(first) ? cJSON_GetArraySize(first) : 0;
    if (width < 1 || (s->ds && width != s->ds_experts)) {
        st = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                            "routing data %s: logical_count[0] has %d experts, "
                            "expected %d", path, width,
                            s->ds ? s->ds_experts : 256);
        goto done;
    }
    int rows = cJSON_GetArraySize(lc);
    row = malloc((size_t)width * sizeof *row);
    if (!row) {
        st = ramp_set_error(RAMP_ERR_OUT_OF_MEMORY, __FILE__, __LINE__,
                            "out of memory reading %s", path);
        goto done;
    }
    /* First pass: count MoE (nonzero) layers; they must match earlier files. */
    int moe = 0;
    for (int l = 0; l < rows; l++) {
        st = read_counts(cJSON_GetArrayItem(lc, l), width, row, path,
                         "logical_count", l);
        if (st != RAMP_OK) goto done;
        double sum = 0;
        for (int e = 0; e < width; e++) sum += row[e];
        moe += sum > 0;
    }
    if (moe < 1 || (s->ds && moe != s->ds_layers)) {
        st = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                            "routing data %s: %d layers with routing counts, "
                            "expected %d", path, moe, s->ds ? s->ds_layers : 58);
        goto done;
    }
    if (!s->ds) {
        s->ds = ramp_calloc((size_t)moe * (size_t)width, sizeof *s->ds);
        if (!s->ds) {
            st = RAMP_ERR_OUT_OF_MEMORY;
            goto done;
        }
        s->ds_layers = moe;
        s->ds_experts = width;
    }
    int m = 0;
    for (int l = 0; l < rows; l++) {
        st = read_counts(cJSON_GetArrayItem(lc, l), width, row, path,
                         "logical_count", l);
        if (st != RAMP_OK) goto done;
        if (!normalise_row(row, width)) continue;
        double *acc = s->ds + (size_t)m * (size_t)width;
        for (int e = 0; e < width; e++) acc[e] += row[e];
        m++;
    }
    s->ds_files++;
done:
    free(row);
    cJSON_Delete(root);
    return st;
}

static ramp_status load_ds(const char *dir, ramp_routing_source *s) {
    char folder[4096], path[4352];
    int len = snprintf(folder, sizeof folder, "%s/%s", dir, DS_DIR);
    RAMP_CHECK(len > 0 && (size_t)len < sizeof folder, RAMP_ERR_INVALID_ARGUMENT,
               "routing_dir is too long (%d bytes)", len);
    char **names = NULL;
    int n = 0;
    RAMP_TRY(list_json(folder, &names, &n));
    ramp_status st = RAMP_OK;
    if (n == 0)
        st = ramp_set_error(RAMP_ERR_IO, __FILE__, __LINE__,
                            "routing data folder %s holds no .json files", folder);
    for (int i = 0; i < n && st == RAMP_OK; i++) {
        snprintf(path, sizeof path, "%s/%s", folder, names[i]);
        st = add_ds_file(path, s);
    }
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    if (st != RAMP_OK) return st;
    size_t total = (size_t)s->ds_layers * (size_t)s->ds_experts;
    for (size_t i = 0; i < total; i++) s->ds[i] /= s->ds_files;
    return RAMP_OK;
}

ramp_status ramp_routing_source_load(const char *dir, ramp_routing_source **out) {
    RAMP_CHECK(dir && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_routing_source_load: dir and out must not be NULL");
    ramp_routing_source *s = ramp_calloc(1, sizeof *s);
    if (!s) return RAMP_ERR_OUT_OF_MEMORY;
    s->olmoe = ramp_calloc((size_t)RAMP_DOMAIN_COUNT * RAMP_OLMOE_LAYERS *
                               RAMP_OLMOE_EXPERTS, sizeof *s->olmoe);
    ramp_status st = s->olmoe ? RAMP_OK : RAMP_ERR_OUT_OF_MEMORY;
    if (st == RAMP_OK) st = load_olmoe(dir, s);
    if (st == RAMP_OK) st = load_ds(dir, s);
    if (st != RAMP_OK) {
        ramp_routing_source_free(s);
        return st;
    }
    *out = s;
    return RAMP_OK;
}

void ramp_routing_source_free(ramp_routing_source *s) {
    if (!s) return;
    free(s->olmoe);
    free(s->ds);
    free(s);
}

/* ---------------------------------------------------------------------- */

/* Sort key: value, ties by index, so the order is deterministic. */
typedef struct {
    double v;
    int i;
} keyed;
static int cmp_keyed(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->v < y->v) return -1;
    if (x->v > y->v) return 1;
    return (x->i > y->i) - (x->i < y->i);
}

ramp_status ramp_popularity_scale(const double *src, int n, int experts,
                                  double *dst) {
    RAMP_CHECK(src && dst && n >= 1 && experts >= 1, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_popularity_scale: need src, dst, n >= 1, E >= 1 "
               "(n=%d, E=%d)", n, experts);
    keyed *order = ramp_calloc((size_t)n, sizeof *order);
    int *rank = ramp_calloc((size_t)n, sizeof *rank);
    double *sorted = ramp_calloc((size_t)n, sizeof *sorted);
    if (!order || !rank || !sorted) {
        free(order);
        free(rank);
        free(sorted);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < n; i++) {
        order[i].v = src[i];
        order[i].i = i;
    }
    qsort(order, (size_t)n, sizeof *order, cmp_keyed);
    for (int r = 0; r < n; r++) {
        rank[order[r].i] = r;
        sorted[r] = order[r].v;
    }
    double sum = 0;
    for (int j = 0; j < experts; j++) {
        /* Source expert and position among its children. */
        int s, c, m;
        if (experts >= n) {
            s = (int)((int64_t)j * n / experts);
            int lo = (int)(((int64_t)s * experts + n - 1) / n);
            int hi = (int)(((int64_t)(s + 1) * experts + n - 1) / n);
            c = j - lo;
            m = hi - lo;
        } else {
            s = (int)(((int64_t)2 * j + 1) * n / (2 * (int64_t)experts));
            c = 0;
            m = 1;
        }
        /* Quantile position inside the source expert's rank interval, read
         * off the piecewise-linear quantile function through (r+0.5)/n. */
        double u = (rank[s] + (c + 0.5) / m) / n;
        double x = u * n - 0.5;
        double v;
        if (x <= 0) v = sorted[0];
        else if (x >= n - 1) v = sorted[n - 1];
        else {
            int i = (int)x;
            double f = x - i;
            v = sorted[i] * (1 - f) + sorted[i + 1] * f;
        }
        dst[j] = v;
        sum += v;
    }
    for (int j = 0; j < experts; j++) dst[j] *= experts / sum;
    free(order);
    free(rank);
    free(sorted);
    return RAMP_OK;
}

/* Fisher-Yates shuffle of 0..n-1. */
static void permutation(ramp_rng *r, int *perm, int n) {
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)ramp_rng_below(r, (uint32_t)i + 1);
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

void ramp_popularity_free(ramp_popularity *p) {
    if (!p) return;
    free(p->model_layer);
    free(p->origin);
    free(p->q);
    free(p);
}

ramp_status ramp_popularity_build(const ramp_routing_source *src, int experts,
                                  int model_layers, int layers, uint64_t seed,
                                  const ramp_popularity_shape *shape,
                                  ramp_popularity **out) {
    RAMP_CHECK(src && shape && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_popularity_build: NULL argument");
    RAMP_CHECK(experts >= 1 && model_layers >= 1 && layers >= 1 &&
                   layers <= model_layers,
               RAMP_ERR_INVALID_ARGUMENT,
               "ramp_popularity_build: need E >= 1 and 1 <= layers <= model "
               "layers (E=%d, layers=%d, model layers=%d)",
               experts, layers, model_layers);
    size_t E = (size_t)experts;
    ramp_popularity *p = ramp_calloc(1, sizeof *p);
    if (!p) return RAMP_ERR_OUT_OF_MEMORY;
    p->experts = experts;
    p->layers = layers;
    p->model_layer = ramp_calloc((size_t)layers, sizeof *p->model_layer);
    p->origin = ramp_calloc((size_t)layers, sizeof *p->origin);
    p->q = ramp_calloc((size_t)RAMP_DOMAIN_COUNT * (size_t)layers * E, sizeof *p->q);
    double *dom = ramp_calloc(E, sizeof *dom);
    double *lay = ramp_calloc(E, sizeof *lay);
    int *perm_d = ramp_calloc(E, sizeof *perm_d);
    int *perm_s = ramp_calloc(E, sizeof *perm_s);
    ramp_status st = RAMP_OK;
    if (!p->model_layer || !p->origin || !p->q || !dom || !lay || !perm_d ||
        !perm_s) {
        st = RAMP_ERR_OUT_OF_MEMORY;
        goto done;
    }
    for (int l = 0; l < layers; l++) {
        int ml = layers > 1 ? (int)floor((double)l * (model_layers - 1) /
                                              (layers - 1) + 0.5)
                            : 0;
        double depth = model_layers > 1 ? (double)ml / (model_layers - 1) : 0.0;
        int ol = 0;
        for (int i = 1; i < RAMP_OLMOE_LAYERS; i++)
            if (fabs(src->olmoe_depth[i] - depth) < fabs(src->olmoe_depth[ol] - depth))
                ol = i;
        int dl = (int)floor(depth * (src->ds_layers - 1) + 0.5);
        p->model_layer[l] = ml;
        p->origin[l].olmoe_layer = ol;
        p->origin[l].ds_layer = dl;
        /* Two permutations per model layer, from a stream of the layer's
         * own: a layer's hot experts depend neither on the exponents nor on
         * which other layers are recorded. */
        ramp_rng rng;
        ramp_rng_seed(&rng, (seed ^ 0x706f70756c617269ull) + /* "populari" */
                                0x9E3779B97F4A7C15ull * (uint64_t)(ml + 1));
        permutation(&rng, perm_d, experts);
        permutation(&rng, perm_s, experts);
        st = ramp_popularity_scale(src->ds + (size_t)dl * (size_t)src->ds_experts,
                                   src->ds_experts, experts, lay);
        if (st != RAMP_OK) goto done;
        for (int d = 0; d < RAMP_DOMAIN_COUNT; d++) {
            const double *row = src->olmoe + ((size_t)d * RAMP_OLMOE_LAYERS +
                                              (size_t)ol) * RAMP_OLMOE_EXPERTS;
            st = ramp_popularity_scale(row, RAMP_OLMOE_EXPERTS, experts, dom);
            if (st != RAMP_OK) goto done;
            double *q = p->q + ((size_t)d * (size_t)layers + (size_t)l) * E;
            double sum = 0, mx = -INFINITY;
            for (size_t e = 0; e < E; e++) {
                q[e] = shape->domain_exp * log(dom[perm_d[e]]) +
                       shape->layer_exp * log(lay[perm_s[e]]);
                if (q[e] > mx) mx = q[e];
            }
            for (size_t e = 0; e < E; e++) {
                q[e] = exp(q[e] - mx);
                sum += q[e];
            }
            for (size_t e = 0; e < E; e++) q[e] /= sum;
        }
    }
done:
    free(dom);
    free(lay);
    free(perm_d);
    free(perm_s);
    if (st != RAMP_OK) {
        ramp_popularity_free(p);
        return st;
    }
    *out = p;
    return RAMP_OK;
}
