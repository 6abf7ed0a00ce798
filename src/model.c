/*
 * model.c - the built-in MoE geometries (paper Table 1, plus each model's
 * hidden size d from DESIGN.md) and custom ones, and the per-GPU geometry a
 * layout gives each GPU.
 */
#include "internal.h"

#include <ctype.h>
#include <string.h>

typedef struct {
    ramp_model m;
    const char *aliases; /* comma-separated, compared case-insensitively */
} model_entry;

static const model_entry MODELS[] = {
    {{"OLMoE-1B-7B", 64, 8, 1024, 2048, 16}, "olmoe,olmoe-1b-7b-0924"},
    {{"Qwen1.5-MoE-A2.7B", 60, 4, 1408, 2048, 24}, "qwen1.5-moe,qwen1.5"},
    {{"Qwen2-57B-A14B", 64, 8, 2560, 3584, 28}, "qwen2-57b,qwen2"},
    {{"Qwen3-30B-A3B", 128, 8, 768, 2048, 48}, "qwen3-30b,qwen3"},
    {{"Qwen3.5-35B-A3B", 256, 8, 512, 2048, 40}, "qwen3.5-35b,qwen3.5"},
    {{"Phi-3.5-MoE", 16, 2, 6400, 4096, 32}, "phi-3.5-moe,phi3.5,phi"},
    {{"Mixtral-8x22B", 8, 2, 16384, 6144, 56}, "mixtral-8x22b,mixtral"},
    {{"DeepSeek-V3", 256, 8, 2048, 7168, 58}, "deepseek-v3,deepseek,dsv3"},
};
#define NMODELS ((int)(sizeof MODELS / sizeof MODELS[0]))

int ramp_model_count(void) { return NMODELS; }

const ramp_model *ramp_model_at(int i) {
    return (i >= 0 && i < NMODELS) ? &MODELS[i].m : NULL;
}

static int same_name(const char *a, const char *b, size_t nb) {
    size_t i = 0;
    for (; i < nb && a[i]; i++)
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
            return 0;
    return i == nb && a[i] == '\0';
}

ramp_status ramp_model_lookup(const char *name, ramp_model *out) {
    RAMP_CHECK(name && out, RAMP_ERR_INVALID_ARGUMENT, "model name is NULL");
    for (int i = 0; i < NMODELS; i++) {
        if (same_name(name, MODELS[i].m.name, strlen(MODELS[i].m.name))) {
            *out = MODELS[i].m;
            return RAMP_OK;
        }
        for (const char *a = MODELS[i].aliases; *a;) {
            size_t n = strcspn(a, ",");
            if (same_name(name, a, n)) {
                *out = MODELS[i].m;
                return RAMP_OK;
            }
            a += n + (a[n] == ',');
        }
    }
    RAMP_FAIL(RAMP_ERR_NOT_FOUND,
              "unknown model '%s' (try `ramp models`, or give --experts, "
              "--topk, --inter, --hidden, --layers for a custom geometry)",
              name);
}

ramp_status ramp_model_custom(const char *name, int experts, int topk,
                              int inter, int hidden, int layers,
                              ramp_model *out) {
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "output is NULL");
    RAMP_CHECK(experts >= 1 && experts <= 4096, RAMP_ERR_INVALID_ARGUMENT,
               "experts = %d: must be in [1, 4096]", experts);
    RAMP_CHECK(topk >= 1 && topk <= experts, RAMP_ERR_INVALID_ARGUMENT,
               "topk = %d: must be in [1, experts = %d]", topk, experts);
    RAMP_CHECK(inter >= 1 && inter <= (1 << 20), RAMP_ERR_INVALID_ARGUMENT,
               "inter (h) = %d: must be in [1, 2^20]", inter);
    RAMP_CHECK(hidden >= 1 && hidden <= (1 << 20), RAMP_ERR_INVALID_ARGUMENT,
               "hidden (d) = %d: must be in [1, 2^20]", hidden);
    RAMP_CHECK(layers >= 1 && layers <= 1024, RAMP_ERR_INVALID_ARGUMENT,
               "layers = %d: must be in [1, 1024]", layers);
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name && *name ? name : "custom");
    out->experts = experts;
    out->topk = topk;
    out->inter = inter;
    out->hidden = hidden;
    out->layers = layers;
    return RAMP_OK;
}

ramp_status ramp_geometry_for(const ramp_model *m, ramp_layout layout,
                              ramp_geometry *out) {
    RAMP_CHECK(m && out, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    char lname[16];
    ramp_layout_name(layout, lname, sizeof lname);
    RAMP_CHECK(layout.gpus >= 1, RAMP_ERR_INVALID_ARGUMENT,
               "layout %s: GPU count must be >= 1", lname);
    ramp_geometry g = {0};
    g.topk = m->topk;
    g.hidden = m->hidden;
    if (layout.kind == RAMP_TP) {
        RAMP_CHECK(m->inter % layout.gpus == 0, RAMP_ERR_UNSUPPORTED,
                   "%s on %s: h = %d does not split evenly over %d GPUs",
                   m->name, lname, m->inter, layout.gpus);
        g.experts = m->experts;
        g.inter = m->inter / layout.gpus;
    } else {
        RAMP_CHECK(layout.gpus <= m->experts, RAMP_ERR_UNSUPPORTED,
                   "%s on %s: more GPUs than its %d experts", m->name, lname,
                   m->experts);
        g.experts = (m->experts + layout.gpus - 1) / layout.gpus;
        g.inter = m->inter;
    }
    /* FP8 128x128 blocks tile both d and the per-GPU h. */
    RAMP_CHECK(g.inter % 128 == 0, RAMP_ERR_UNSUPPORTED,
               "%s on %s: per-GPU h = %d is not a multiple of 128 (FP8 "
               "128x128 weight blocks need it)", m->name, lname, g.inter);
    RAMP_CHECK(g.hidden % 128 == 0, RAMP_ERR_UNSUPPORTED,
               "%s: d = %d is not a multiple of 128 (FP8 blocks need it)",
               m->name, g.hidden);
    *out = g;
    return RAMP_OK;
}
