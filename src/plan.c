/*
 * plan.c - the plan file: what a deployment serves (the menu's
 * configurations, in order, each with its Equation 3 coefficients) for one
 * model, layout and per-GPU geometry, as JSON that the GPU layer reads.
 *
 * The reader is strict: it checks the format tag and version, every field's
 * type and range, rejects unknown or repeated keys, configuration names that
 * do not parse, repeated entries, and coefficients that are negative or not
 * finite. Each error names the file and the field.
 *
 * Each entry carries S_c ("slots"), the wave size its W term was fit with;
 * a plan without it (older files) uses sms * occupancy. A plan carries a
 * SHA-256 "checksum" of its canonical content (plan_canonical below), so a
 * corrupted plan in data/ is refused rather than served.
 *
 * A plan fit on a kernel v2 dataset says so ("kernel": "v2", absent for v1,
 * in the checksum only when present, so v1 plans hash as before); every
 * entry of such a plan is a configuration v2 runs on the plan's geometry.
 *
 * A plan fit on times of weights in stage units says so ("weights": "units",
 * absent for row-major, in the checksum only when present, as "kernel").
 *
 * An EQ3_PAIRS plan has a fifth term, "pairs", in "cost_terms" and a fifth
 * theta per entry; the same rule keeps EQ3 plans as they were: four terms in
 * the file and in the canonical text, the fifth only where it exists.
 */
#include "eval.h"
#include "safetensors.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#define PLAN_FORMAT "ramp-plan"
#define PLAN_VERSION 1
#define PLAN_MAX_BYTES (1 << 20)

static const char *const TERM_NAMES[RAMP_COST_TERMS_MAX] = {"1", "waves", "tiles", "active",
                                                            "pairs"};

/* Terms the plan's file carries: 4 (EQ3) or 5 (EQ3_PAIRS). */
static int plan_nterms(const ramp_plan *p) {
    return p->cost_model == RAMP_COSTMODEL_EQ3_PAIRS ? RAMP_COST_TERMS_MAX : RAMP_COST_TERMS;
}

ramp_status ramp_plan_validate(const ramp_plan *p) {
    RAMP_CHECK(p, RAMP_ERR_INVALID_ARGUMENT, "plan is NULL");
    RAMP_CHECK(p->model[0] && memchr(p->model, 0, sizeof p->model), RAMP_ERR_INVALID_ARGUMENT,
               "plan: model name is empty");
    ramp_layout l;
    RAMP_TRY(ramp_layout_parse(p->layout, &l));
    RAMP_CHECK(p->sms >= 1 && p->sms <= 100000, RAMP_ERR_INVALID_ARGUMENT,
               "plan: sms = %d out of 1..100000", p->sms);
    RAMP_CHECK(p->blocks_per_sm >= 1 && p->blocks_per_sm <= 1024, RAMP_ERR_INVALID_ARGUMENT,
               "plan: occupancy (blocks per SM) = %d out of 1..1024", p->blocks_per_sm);
    const ramp_geometry *g = &p->geom;
    RAMP_CHECK(g->experts >= 1 && g->topk >= 1 && g->inter >= 1 && g->hidden >= 1 &&
                   (g->bf16 == 0 || g->bf16 == 1),
               RAMP_ERR_INVALID_ARGUMENT,
               "plan: geometry experts %d, topk %d, inter %d, hidden %d, bf16 %d (need >= 1, "
               "bf16 0 or 1)", g->experts, g->topk, g->inter, g->hidden, g->bf16);
    RAMP_CHECK(p->count >= 1 && p->count <= RAMP_MENU_MAX, RAMP_ERR_INVALID_ARGUMENT,
               "plan: %d menu entries (need 1..%d)", p->count, RAMP_MENU_MAX);
    RAMP_CHECK(p->kernel == RAMP_KERNEL_V1 || p->kernel == RAMP_KERNEL_V2,
               RAMP_ERR_INVALID_ARGUMENT, "plan: kernel = %d is not v1 (0) or v2 (1)", p->kernel);
    RAMP_CHECK(p->weight_units == 0 || (p->weight_units == 1 && p->kernel == RAMP_KERNEL_V2),
               RAMP_ERR_INVALID_ARGUMENT,
               "plan: weight_units = %d (0 row-major, or 1 stage units with kernel v2; kernel %s)",
               p->weight_units, ramp_kernel_version_name((ramp_kernel_version)p->kernel));
    RAMP_CHECK(p->cost_model == RAMP_COSTMODEL_EQ3 || p->cost_model == RAMP_COSTMODEL_EQ3_PAIRS,
               RAMP_ERR_INVALID_ARGUMENT,
               "plan: cost_model = %d is not eq3 (%d) or eq3+pairs (%d)", (int)p->cost_model,
               (int)RAMP_COSTMODEL_EQ3, (int)RAMP_COSTMODEL_EQ3_PAIRS);
    const int nt = plan_nterms(p);
    for (int i = 0; i < p->count; i++) {
        char name[64];
        ramp_config back;
        ramp_config_name(&p->configs[i], name, sizeof name);
        ramp_status s = ramp_config_parse(name, &back);
        RAMP_CHECK(s == RAMP_OK && ramp_config_equal(&back, &p->configs[i]),
                   RAMP_ERR_INVALID_ARGUMENT, "plan: menu entry %d (%s) is not a valid "
                   "configuration", i, name);
        for (int j = 0; j < i; j++)
            RAMP_CHECK(!ramp_config_equal(&p->configs[i], &p->configs[j]),
                       RAMP_ERR_INVALID_ARGUMENT, "plan: menu entries %d and %d are both %s", j,
                       i, name);
        if (p->kernel != RAMP_KERNEL_V1 &&
            ramp_kernel_version_check((ramp_kernel_version)p->kernel, &p->configs[i],
                                      &p->geom) != RAMP_OK) {
            char why[256];
            snprintf(why, sizeof why, "%s", ramp_last_error());
            RAMP_FAIL(RAMP_ERR_INVALID_ARGUMENT, "plan: menu entry %d (%s) is not a "
                      "configuration kernel %s runs: %s", i, name,
                      ramp_kernel_version_name((ramp_kernel_version)p->kernel), why);
        }
        for (int k = 0; k < nt; k++)
            RAMP_CHECK(isfinite(p->theta[i][k]) && p->theta[i][k] >= 0,
                       RAMP_ERR_INVALID_ARGUMENT,
                       "plan: menu entry %d (%s) theta[%d] = %g (need finite, >= 0)", i, name,
                       k, p->theta[i][k]);
        /* A four-term plan's file has no place for it: it would be lost. */
        RAMP_CHECK(nt == RAMP_COST_TERMS_MAX || p->theta[i][4] == 0, RAMP_ERR_INVALID_ARGUMENT,
                   "plan: menu entry %d (%s) theta[4] (pairs) = %g in an eq3 plan (four "
                   "terms): set cost_model to eq3+pairs, or it to 0", i, name, p->theta[i][4]);
        long long cap = (long long)p->sms * p->blocks_per_sm;
        RAMP_CHECK(p->slots[i] >= 0 && p->slots[i] <= cap, RAMP_ERR_INVALID_ARGUMENT,
                   "plan: menu entry %d (%s) slots = %d (need 1..sms * occupancy = %lld, or 0 "
                   "for that default)", i, name, p->slots[i], cap);
    }
    return RAMP_OK;
}

int ramp_plan_slots(const ramp_plan *p, int i) {
    if (!p || i < 0 || i >= RAMP_MENU_MAX) return 0;
    if (p->slots[i] > 0) return p->slots[i];
    return (p->sms > 0 ? p->sms : 1) * (p->blocks_per_sm > 0 ? p->blocks_per_sm : 1);
}

/* The canonical content the checksum covers, one line per field, doubles
 * as %.17g (which round-trips), slots as stored (0 when absent):
 *   ramp-plan 1 / libramp L / model M / layout L / device D / sms N /
 *   geometry E K H D B / occupancy O / [kernel K, only when not v1] /
 *   [weights units, only for stage units] /
 *   [cost_terms 1 waves tiles active pairs, only with five terms] /
 *   entry CONFIG T0 T1 T2 T3 [T4, only with five terms] SLOTS ...
 * (each followed by '\n'). Returns malloc'd text or NULL. */
static char *plan_canonical(const ramp_plan *p) {
    size_t cap = 1024 + (size_t)p->count * 256, n = 0;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    n += (size_t)snprintf(buf + n, cap - n,
                          "%s %d\nlibramp %s\nmodel %s\nlayout %s\ndevice %s\nsms %d\n"
                          "geometry %d %d %d %d %d\noccupancy %d\n",
                          PLAN_FORMAT, PLAN_VERSION, p->libramp, p->model, p->layout, p->device,
                          p->sms, p->geom.experts, p->geom.topk, p->geom.inter, p->geom.hidden,
                          p->geom.bf16, p->blocks_per_sm);
    if (p->kernel != RAMP_KERNEL_V1 && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, "kernel %s\n",
                              ramp_kernel_version_name((ramp_kernel_version)p->kernel));
    if (p->weight_units && n < cap) n += (size_t)snprintf(buf + n, cap - n, "weights units\n");
    const int nt = plan_nterms(p);
    if (nt > RAMP_COST_TERMS && n < cap) {
        n += (size_t)snprintf(buf + n, cap - n, "cost_terms");
        for (int k = 0; k < nt && n < cap; k++)
            n += (size_t)snprintf(buf + n, cap - n, " %s", TERM_NAMES[k]);
        if (n < cap) n += (size_t)snprintf(buf + n, cap - n, "\n");
    }
    for (int i = 0; i < p->count && n < cap; i++) {
        char name[64];
        ramp_config_name(&p->configs[i], name, sizeof name);
        n += (size_t)snprintf(buf + n, cap - n, "entry %s", name);
        for (int k = 0; k < nt && n < cap; k++)
            n += (size_t)snprintf(buf + n, cap - n, " %.17g", p->theta[i][k]);
        if (n < cap) n += (size_t)snprintf(buf + n, cap - n, " %d\n", p->slots[i]);
    }
    if (n >= cap) {
        free(buf);
        return NULL;
    }
    return buf;
}

static ramp_status plan_checksum(const ramp_plan *p, char out[72]) {
    char *text = plan_canonical(p);
    RAMP_CHECK(text, RAMP_ERR_OUT_OF_MEMORY, "plan checksum: out of memory");
    char hex[65];
    ramp_sha256_hex(text, strlen(text), hex);
    free(text);
    snprintf(out, 72, "sha256:%s", hex);
    return RAMP_OK;
}

ramp_status ramp_plan_make(const ramp_timing *t, const ramp_menu *menu,
                           const ramp_costmodel *m, ramp_plan *out) {
    RAMP_CHECK(t && menu && m && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_plan_make: NULL argument");
    /* The plan and the selection kernel evaluate Equation 3, with or
     * without the pairs term; the tile-count formula has other terms. */
    RAMP_CHECK(m->kind == RAMP_COSTMODEL_EQ3 || m->kind == RAMP_COSTMODEL_EQ3_PAIRS,
               RAMP_ERR_INVALID_ARGUMENT,
               "ramp_plan_make: the plan and the selection kernel serve Equation 3 (1, W, T, "
               "A) or Equation 3 + pairs (1, W, T, A, P); the model is %s",
               m->kind == RAMP_COSTMODEL_TILECOUNT ? "the tile-count formula"
                                                    : "of an unknown kind");
    RAMP_CHECK(m->nconfigs == t->nconfigs, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_plan_make: model has %d configurations, dataset %d", m->nconfigs,
               t->nconfigs);
    RAMP_CHECK(menu->count >= 1 && menu->count <= RAMP_MENU_MAX, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_plan_make: menu has %d entries", menu->count);
    ramp_plan p;
    memset(&p, 0, sizeof p);
    snprintf(p.model, sizeof p.model, "%s", t->model);
    snprintf(p.layout, sizeof p.layout, "%s", t->layout);
    snprintf(p.device, sizeof p.device, "%s", t->device);
    snprintf(p.libramp, sizeof p.libramp, "%s", RAMP_VERSION_STRING);
    p.geom = t->geom;
    p.sms = t->sms;
    p.blocks_per_sm = menu->blocks_per_sm;
    p.kernel = t->kernel;
    p.weight_units = t->weight_units;
    p.cost_model = m->kind;
    p.count = menu->count;
    const int nt = ramp_costmodel_nterms(m->kind);
    for (int i = 0; i < menu->count; i++) {
        int c = menu->config[i];
        RAMP_CHECK(c >= 0 && c < t->nconfigs, RAMP_ERR_INVALID_ARGUMENT,
                   "ramp_plan_make: menu entry %d: config index %d out of range", i, c);
        char name[64];
        ramp_config_name(&t->configs[c], name, sizeof name);
        RAMP_CHECK(m->rows[c] > 0, RAMP_ERR_INVALID_ARGUMENT,
                   "ramp_plan_make: menu entry %d (%s) has no fitted coefficients", i, name);
        RAMP_CHECK(t->blocks_per_sm[c] == menu->blocks_per_sm, RAMP_ERR_INVALID_ARGUMENT,
                   "ramp_plan_make: menu entry %d (%s) has occupancy %d, the menu %d", i, name,
                   t->blocks_per_sm[c], menu->blocks_per_sm);
        p.configs[i] = t->configs[c];
        for (int k = 0; k < nt; k++) p.theta[i][k] = m->theta[(size_t)c * nt + k];
        p.slots[i] = ramp_costmodel_slots(m, c);
    }
    RAMP_TRY(ramp_plan_validate(&p));
    *out = p;
    return RAMP_OK;
}

int ramp_plan_gpu_mismatch(const ramp_plan *p, const char *gpu_name, int gpu_sms, char *buf,
                           size_t size) {
    if (!p || !gpu_name || !buf || size == 0) return -1;
    int n = 0;
    buf[0] = 0;
    if (p->sms != gpu_sms)
        n = snprintf(buf, size, "plan tuned on %d SMs (%s), this GPU has %d: choices may be off",
                     p->sms, p->device[0] ? p->device : "an unnamed GPU", gpu_sms);
    else if (p->device[0] && strcmp(p->device, gpu_name) != 0) /* "": not said, not compared */
        n = snprintf(buf, size,
                     "plan fit on timings of %s, this GPU is %s: choices may be off (fit one "
                     "on this GPU's timings)",
                     p->device, gpu_name);
    if (n < 0) buf[0] = 0;
    return n < 0 ? -1 : n;
}

int ramp_plan_pick(const ramp_plan *p, int nexp, const int32_t *load) {
    int best = 0;
    double bv = INFINITY;
    /* The same sum, in the same order, as ramp_costmodel_predict. */
    const ramp_costmodel_kind kind =
        p && p->cost_model == RAMP_COSTMODEL_EQ3_PAIRS ? RAMP_COSTMODEL_EQ3_PAIRS
                                                       : RAMP_COSTMODEL_EQ3;
    const int nt = ramp_costmodel_nterms(kind);
    for (int i = 0; p && i < p->count; i++) {
        double terms[RAMP_COST_TERMS_MAX], v = 0;
        ramp_costmodel_terms_slots(kind, &p->configs[i], &p->geom, p->sms,
                                   ramp_plan_slots(p, i), nexp, load, terms);
        for (int k = 0; k < nt; k++) v += p->theta[i][k] * terms[k];
        v += ramp_past_waves_us(p->kernel, &p->configs[i], terms[2], (double)ramp_plan_slots(p, i));
        if (v < bv) { bv = v; best = i; }
    }
    return best;
}

/* ---- writing ---------------------------------------------------------------- */

ramp_status ramp_plan_write(const ramp_plan *p, const char *path) {
    RAMP_CHECK(path && *path, RAMP_ERR_INVALID_ARGUMENT, "ramp_plan_write: empty path");
    RAMP_TRY(ramp_plan_validate(p));
    cJSON *root = cJSON_CreateObject();
    int ok = root != NULL;
    ok = ok && cJSON_AddStringToObject(root, "format", PLAN_FORMAT);
    ok = ok && cJSON_AddNumberToObject(root, "version", PLAN_VERSION);
    ok = ok && cJSON_AddStringToObject(root, "libramp", RAMP_VERSION_STRING);
    ok = ok && cJSON_AddStringToObject(root, "model", p->model);
    ok = ok && cJSON_AddStringToObject(root, "layout", p->layout);
    ok = ok && cJSON_AddStringToObject(root, "device", p->device);
    ok = ok && cJSON_AddNumberToObject(root, "sms", p->sms);
    cJSON *g = ok ? cJSON_AddObjectToObject(root, "geometry") : NULL;
    ok = ok && g;
    ok = ok && cJSON_AddNumberToObject(g, "experts", p->geom.experts);
    ok = ok && cJSON_AddNumberToObject(g, "topk", p->geom.topk);
    ok = ok && cJSON_AddNumberToObject(g, "inter", p->geom.inter);
    ok = ok && cJSON_AddNumberToObject(g, "hidden", p->geom.hidden);
    ok = ok && cJSON_AddNumberToObject(g, "bf16", p->geom.bf16);
    ok = ok && cJSON_AddNumberToObject(root, "occupancy", p->blocks_per_sm);
    if (p->kernel != RAMP_KERNEL_V1)
        ok = ok && cJSON_AddStringToObject(root, "kernel",
                                           ramp_kernel_version_name((ramp_kernel_version)p->kernel));
    if (p->weight_units) ok = ok && cJSON_AddStringToObject(root, "weights", "units");
    const int nt = plan_nterms(p);
    cJSON *terms = ok ? cJSON_CreateStringArray(TERM_NAMES, nt) : NULL;
    ok = ok && terms && cJSON_AddItemToObject(root, "cost_terms", terms);
    cJSON *menu = ok ? cJSON_AddArrayToObject(root, "menu") : NULL;
    ok = ok && menu;
    for (int i = 0; ok && i < p->count; i++) {
        char name[64];
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(menu, e);
        ok = ok && cJSON_AddStringToObject(e, "config",
                                           ramp_config_name(&p->configs[i], name, sizeof name));
        /* %.17g round-trips every double; cJSON's own printer may drop the
         * last digit. */
        cJSON *th = ok ? cJSON_AddArrayToObject(e, "theta") : NULL;
        ok = ok && th;
        for (int k = 0; ok && k < nt; k++) {
            char num[40];
            snprintf(num, sizeof num, "%.17g", p->theta[i][k]);
            cJSON *v = cJSON_CreateRaw(num);
            ok = v && cJSON_AddItemToArray(th, v);
        }
        if (ok && p->slots[i] > 0) ok = cJSON_AddNumberToObject(e, "slots", p->slots[i]) != NULL;
    }
    char sum[72];
    ramp_status cs = ok ? plan_checksum(p, sum) : RAMP_OK;
    if (cs != RAMP_OK) {
        cJSON_Delete(root);
        return cs;
    }
    ok = ok && cJSON_AddStringToObject(root, "checksum", sum);
    char *text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    RAMP_CHECK(text, RAMP_ERR_OUT_OF_MEMORY, "ramp_plan_write: building the JSON failed");
    ramp_outfile o;
    ramp_status st = ramp_outfile_open(&o, path);
    if (st == RAMP_OK) {
        fputs(text, o.f);
        fputc('\n', o.f);
        st = ramp_outfile_commit(&o);
    }
    cJSON_free(text);
    return st;
}

/* ---- reading ------------------------------------------------------------------ */

#define FMT_FAIL(...) RAMP_FAIL(RAMP_ERR_FORMAT, __VA_ARGS__)

static ramp_status get_int(const cJSON *obj, const char *key, const char *where,
                           const char *label, long lo, long hi, int *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) FMT_FAIL("plan %s: %s\"%s\" is missing", label, where, key);
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < (double)lo || v->valuedouble > (double)hi)
        FMT_FAIL("plan %s: %s\"%s\" must be an integer in %ld..%ld", label, where, key, lo, hi);
    *out = (int)v->valuedouble;
    return RAMP_OK;
}

static ramp_status get_str(const cJSON *obj, const char *key, const char *label, char *buf,
                           size_t size, int required) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v) {
        if (!required) { buf[0] = '\0'; return RAMP_OK; }
        FMT_FAIL("plan %s: \"%s\" is missing", label, key);
    }
    if (!cJSON_IsString(v) || !v->valuestring)
        FMT_FAIL("plan %s: \"%s\" must be a string", label, key);
    if (strlen(v->valuestring) >= size)
        FMT_FAIL("plan %s: \"%s\" is longer than %zu characters", label, key, size - 1);
    memcpy(buf, v->valuestring, strlen(v->valuestring) + 1);
    return RAMP_OK;
}

/* Every key known and not repeated. */
static ramp_status check_keys(const cJSON *obj, const char *const *known, int nknown,
                              const char *where, const char *label) {
    for (const cJSON *a = obj->child; a; a = a->next) {
        int ok = 0;
        for (int i = 0; i < nknown; i++)
            if (a->string && strcmp(a->string, known[i]) == 0) ok = 1;
        if (!ok) FMT_FAIL("plan %s: unknown key \"%s\"%s", label, a->string ? a->string : "", where);
        for (const cJSON *b = a->next; b; b = b->next)
            if (strcmp(a->string, b->string) == 0)
                FMT_FAIL("plan %s: key \"%s\" repeated%s", label, a->string, where);
    }
    return RAMP_OK;
}

static ramp_status parse_root(const cJSON *root, const char *label, ramp_plan *p) {
    if (!cJSON_IsObject(root)) FMT_FAIL("plan %s: the top level must be a JSON object", label);
    static const char *const KEYS[] = {"format", "version", "libramp", "model", "layout",
                                       "device", "sms", "geometry", "occupancy",
                                       "kernel", "weights", "cost_terms", "menu", "checksum"};
    RAMP_TRY(check_keys(root, KEYS, (int)(sizeof KEYS / sizeof KEYS[0]), "", label));
    char fmt[32];
    RAMP_TRY(get_str(root, "format", label, fmt, sizeof fmt, 1));
    if (strcmp(fmt, PLAN_FORMAT) != 0)
        FMT_FAIL("plan %s: \"format\" is \"%s\", expected \"%s\"", label, fmt, PLAN_FORMAT);
    int version;
    RAMP_TRY(get_int(root, "version", "", label, 1, 1000000, &version));
    if (version != PLAN_VERSION)
        FMT_FAIL("plan %s: \"version\" %d unsupported (this libramp reads %d)", label, version,
                 PLAN_VERSION);
    RAMP_TRY(get_str(root, "libramp", label, p->libramp, sizeof p->libramp, 1));
    if (atoi(p->libramp) != RAMP_VERSION_MAJOR || !(p->libramp[0] >= '0' && p->libramp[0] <= '9'))
        FMT_FAIL("plan %s: written by libramp %s; this is %s (major versions differ)", label,
                 p->libramp, RAMP_VERSION_STRING);
    RAMP_TRY(get_str(root, "model", label, p->model, sizeof p->model, 1));
    RAMP_TRY(get_str(root, "layout", label, p->layout, sizeof p->layout, 1));
    RAMP_TRY(get_str(root, "device", label, p->device, sizeof p->device, 0));
    RAMP_TRY(get_int(root, "sms", "", label, 1, 100000, &p->sms));
    RAMP_TRY(get_int(root, "occupancy", "", label, 1, 1024, &p->blocks_per_sm));
    char kernel[16];
    RAMP_TRY(get_str(root, "kernel", label, kernel, sizeof kernel, 0));
    ramp_kernel_version kv = RAMP_KERNEL_V1; /* absent: v1 */
    if (cJSON_GetObjectItemCaseSensitive(root, "kernel") &&
        ramp_kernel_version_parse(kernel, &kv) != RAMP_OK)
        FMT_FAIL("plan %s: \"kernel\" is \"%s\", expected \"v1\" or \"v2\" (absent: v1)", label,
                 kernel);
    p->kernel = (int)kv;
    char weights[16];
    RAMP_TRY(get_str(root, "weights", label, weights, sizeof weights, 0));
    if (cJSON_GetObjectItemCaseSensitive(root, "weights") && strcmp(weights, "rows") &&
        strcmp(weights, "units"))
        FMT_FAIL("plan %s: \"weights\" is \"%s\", expected \"rows\" or \"units\" (absent: rows)",
                 label, weights);
    p->weight_units = !strcmp(weights, "units"); /* absent: "" */
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, "geometry");
    if (!cJSON_IsObject(g)) FMT_FAIL("plan %s: \"geometry\" must be an object", label);
    static const char *const GKEYS[] = {"experts", "topk", "inter", "hidden", "bf16"};
    RAMP_TRY(check_keys(g, GKEYS, 5, " in \"geometry\"", label));
    RAMP_TRY(get_int(g, "experts", "geometry.", label, 1, 1 << 20, &p->geom.experts));
    RAMP_TRY(get_int(g, "topk", "geometry.", label, 1, 1 << 20, &p->geom.topk));
    RAMP_TRY(get_int(g, "inter", "geometry.", label, 1, 1 << 24, &p->geom.inter));
    RAMP_TRY(get_int(g, "hidden", "geometry.", label, 1, 1 << 24, &p->geom.hidden));
    RAMP_TRY(get_int(g, "bf16", "geometry.", label, 0, 1, &p->geom.bf16));
    /* Equation 3's four terms, or those and "pairs": nothing else. */
    const cJSON *terms = cJSON_GetObjectItemCaseSensitive(root, "cost_terms");
    if (!cJSON_IsArray(terms))
        FMT_FAIL("plan %s: \"cost_terms\" must be an array of term names", label);
    const int nt = cJSON_GetArraySize(terms);
    if (nt != RAMP_COST_TERMS && nt != RAMP_COST_TERMS_MAX)
        FMT_FAIL("plan %s: \"cost_terms\" has %d names; it must be [\"1\", \"waves\", \"tiles\", "
                 "\"active\"] or [\"1\", \"waves\", \"tiles\", \"active\", \"pairs\"]", label, nt);
    for (int k = 0; k < nt; k++) {
        const cJSON *s = cJSON_GetArrayItem(terms, k);
        if (!cJSON_IsString(s) || strcmp(s->valuestring, TERM_NAMES[k]) != 0)
            FMT_FAIL("plan %s: \"cost_terms\"[%d] must be \"%s\"", label, k, TERM_NAMES[k]);
    }
    p->cost_model = nt == RAMP_COST_TERMS_MAX ? RAMP_COSTMODEL_EQ3_PAIRS : RAMP_COSTMODEL_EQ3;
    const cJSON *menu = cJSON_GetObjectItemCaseSensitive(root, "menu");
    if (!cJSON_IsArray(menu)) FMT_FAIL("plan %s: \"menu\" must be an array", label);
    int n = cJSON_GetArraySize(menu);
    if (n < 1 || n > RAMP_MENU_MAX)
        FMT_FAIL("plan %s: \"menu\" has %d entries (need 1..%d)", label, n, RAMP_MENU_MAX);
    p->count = n;
    int i = 0;
    for (const cJSON *e = menu->child; e; e = e->next, i++) {
        char where[48], name[64];
        snprintf(where, sizeof where, " in \"menu\"[%d]", i);
        if (!cJSON_IsObject(e)) FMT_FAIL("plan %s: \"menu\"[%d] must be an object", label, i);
        static const char *const EKEYS[] = {"config", "theta", "slots"};
        RAMP_TRY(check_keys(e, EKEYS, 3, where, label));
        p->slots[i] = 0;
        if (cJSON_GetObjectItemCaseSensitive(e, "slots")) {
            char w2[64];
            snprintf(w2, sizeof w2, "menu[%d].", i);
            RAMP_TRY(get_int(e, "slots", w2, label, 1, 1 << 30, &p->slots[i]));
        }
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "config");
        if (!cJSON_IsString(c) || strlen(c->valuestring) >= sizeof name)
            FMT_FAIL("plan %s: \"menu\"[%d].config must be a configuration name", label, i);
        if (ramp_config_parse(c->valuestring, &p->configs[i]) != RAMP_OK) {
            char why[256];
            snprintf(why, sizeof why, "%s", ramp_last_error());
            FMT_FAIL("plan %s: \"menu\"[%d].config: %s", label, i, why);
        }
        const cJSON *th = cJSON_GetObjectItemCaseSensitive(e, "theta");
        if (!cJSON_IsArray(th) || cJSON_GetArraySize(th) != nt)
            FMT_FAIL("plan %s: \"menu\"[%d].theta must be an array of %d numbers, one per "
                     "\"cost_terms\" entry", label, i, nt);
        for (int k = 0; k < nt; k++) {
            const cJSON *v = cJSON_GetArrayItem(th, k);
            if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
                FMT_FAIL("plan %s: \"menu\"[%d].theta[%d] must be a finite number >= 0", label,
                         i, k);
            p->theta[i][k] = v->valuedouble;
        }
    }
    if (ramp_plan_validate(p) != RAMP_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", ramp_last_error());
        FMT_FAIL("plan %s: %s", label, why);
    }
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(root, "checksum");
    if (sum) {
        if (!cJSON_IsString(sum) || !sum->valuestring)
            FMT_FAIL("plan %s: \"checksum\" must be a string", label);
        char want[72];
        RAMP_TRY(plan_checksum(p, want));
        if (strcmp(sum->valuestring, want) != 0)
            FMT_FAIL("plan %s: checksum mismatch: the file says \"%.80s\", its content hashes "
                     "to \"%s\": the plan is corrupted (or was edited without updating its "
                     "checksum)", label, sum->valuestring, want);
        p->checksum = 1;
    }
    return RAMP_OK;
}

ramp_status ramp_plan_parse(const char *text, size_t size, const char *label,
                            ramp_plan *out) {
    RAMP_CHECK((text || size == 0) && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_plan_parse: NULL argument");
    const char *lab = label ? label : "(memory)";
    RAMP_CHECK(size <= PLAN_MAX_BYTES, RAMP_ERR_FORMAT, "plan %s: %zu bytes (over %d)", lab,
               size, PLAN_MAX_BYTES);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text ? text : "", size, &end, 0);
    if (!root) {
        size_t off = end && text && end >= text ? (size_t)(end - text) : 0;
        FMT_FAIL("plan %s: not valid JSON (near byte %zu)", lab, off);
    }
    /* Only white space may follow the object: a byte turned into '}' must
     * not cut the plan short (dropping the checksum after it). */
    for (const char *q = end ? end : text + size; q && q < text + size; q++)
        if (*q != ' ' && *q != '\t' && *q != '\n' && *q != '\r') {
            cJSON_Delete(root);
            FMT_FAIL("plan %s: not valid JSON: bytes after the top-level object (at byte %zu)",
                     lab, (size_t)(q - text));
        }
    ramp_plan p;
    memset(&p, 0, sizeof p);
    ramp_status st = parse_root(root, lab, &p);
    cJSON_Delete(root);
    if (st == RAMP_OK) *out = p;
    return st;
}

ramp_status ramp_plan_read(const char *path, ramp_plan *out) {
    RAMP_CHECK(path && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_plan_read: NULL argument");
    FILE *f = fopen(path, "rb");
    RAMP_CHECK(f, RAMP_ERR_IO, "cannot open plan %s: %s", path, strerror(errno));
    char *buf = malloc(PLAN_MAX_BYTES + 1);
    if (!buf) {
        fclose(f);
        RAMP_FAIL(RAMP_ERR_OUT_OF_MEMORY, "reading plan %s", path);
    }
    size_t n = fread(buf, 1, PLAN_MAX_BYTES + 1, f);
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        RAMP_FAIL(RAMP_ERR_IO, "reading plan %s failed", path);
    }
    if (n > PLAN_MAX_BYTES) {
        free(buf);
        RAMP_FAIL(RAMP_ERR_FORMAT, "plan %s: larger than %d bytes", path, PLAN_MAX_BYTES);
    }
    ramp_status st = ramp_plan_parse(buf, n, path, out);
    free(buf);
    return st;
}
