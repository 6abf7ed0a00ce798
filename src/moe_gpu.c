/*
 * moe_gpu.c - host glue of the fused MoE kernel v1: defines, compilation
 * through the JIT (jit.c), measured resources, module loading and launches
 * (gpu.c). See moe_gpu.h and kernels/moe_v1.cuh.
 */
#include "moe_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ramp_moe_kernel {
    ramp_gpu *gpu;
    ramp_moe_variant v;
    ramp_moe_v1_layout layout;
    ramp_module *module;
    ramp_kernel *kernel;
    ramp_resources res;
    int sms;
};

ramp_status ramp_moe_v1_check(const ramp_moe_variant *v) {
    RAMP_CHECK(v, RAMP_ERR_INVALID_ARGUMENT, "NULL variant");
    const ramp_config *c = &v->cfg;
    const ramp_geometry *g = &v->geom;
    char name[64];
    ramp_config_name(c, name, sizeof name);
    RAMP_CHECK(c->rows >= 1 && c->rows <= 64, RAMP_ERR_UNSUPPORTED,
               "config %s: rows %d outside 1..64", name, c->rows);
    RAMP_CHECK(!c->ggather, RAMP_ERR_UNSUPPORTED,
               "config %s: the gather through global memory (.gg) is kernel v2's", name);
    RAMP_CHECK(c->width == 128 || c->width == 256 || c->width == 512, RAMP_ERR_UNSUPPORTED,
               "config %s: width %d not 128, 256 or 512", name, c->width);
    RAMP_CHECK(c->stages >= 2 && c->stages <= 8, RAMP_ERR_UNSUPPORTED,
               "config %s: stages %d outside 2..8", name, c->stages);
    RAMP_CHECK(c->splitk == 1 || c->splitk == 2 || c->splitk == 4, RAMP_ERR_UNSUPPORTED,
               "config %s: split-K %d not 1, 2 or 4", name, c->splitk);
    RAMP_CHECK(c->two_phase == 0, RAMP_ERR_UNSUPPORTED,
               "config %s: two launches (.ph2) are kernel v2's wide tiles, not v1's", name);
    RAMP_CHECK(c->mcast == 0, RAMP_ERR_UNSUPPORTED,
               "config %s: weights by TMA multicast (.mc) are kernel v2's wide tiles, not v1's",
               name);
    RAMP_CHECK(c->tma_x == 0, RAMP_ERR_UNSUPPORTED,
               "config %s: token rows by TMA (.tx) are kernel v2's wide tiles, not v1's", name);
    RAMP_CHECK(g->experts >= 1 && g->topk >= 1 && g->inter >= 1 && g->hidden >= 1,
               RAMP_ERR_INVALID_ARGUMENT, "geometry E=%d k=%d h=%d d=%d", g->experts,
               g->topk, g->inter, g->hidden);
    RAMP_CHECK(g->inter % c->width == 0, RAMP_ERR_UNSUPPORTED,
               "config %s: width %d does not divide h = %d", name, c->width, g->inter);
    RAMP_CHECK(g->hidden % (128 * c->splitk) == 0, RAMP_ERR_UNSUPPORTED,
               "config %s: d = %d is not a multiple of 128 * split-K", name, g->hidden);
    RAMP_CHECK(!v->xbf16 || !g->bf16, RAMP_ERR_INVALID_ARGUMENT,
               "BF16 hidden-state input is a variant of FP8 layers only");
    ramp_moe_v1_layout l = ramp_moe_v1_layout_for(v);
    RAMP_CHECK(l.total <= 232448, RAMP_ERR_UNSUPPORTED,
               "config %s: %lld B of shared memory exceeds the 227 KB per block", name,
               l.total);
    return RAMP_OK;
}

ramp_moe_v1_layout ramp_moe_v1_layout_for(const ramp_moe_variant *v) {
    return ramp_moe_v1_layout_of(v->cfg.rows, v->cfg.width, v->cfg.stages, v->geom.bf16,
                                 v->xbf16 && !v->geom.bf16);
}

int ramp_moe_v1_defines(const ramp_moe_variant *v, char storage[][48], const char **defs) {
    int n = 0;
#define DEF(fmt, val)                                   \
    do {                                                \
        snprintf(storage[n], 48, fmt, val);             \
        defs[n] = storage[n];                           \
        n++;                                            \
    } while (0)
    DEF("RAMP_ROWS=%d", v->cfg.rows);
    DEF("RAMP_WIDTH=%d", v->cfg.width);
    DEF("RAMP_STAGES=%d", v->cfg.stages);
    DEF("RAMP_GROUPED=%d", v->cfg.grouped ? 1 : 0);
    DEF("RAMP_SPLITK=%d", v->cfg.splitk);
    DEF("RAMP_HIDDEN=%d", v->geom.hidden);
    DEF("RAMP_INTER=%d", v->geom.inter);
    DEF("RAMP_TOPK=%d", v->geom.topk);
    DEF("RAMP_EXPERTS=%d", v->geom.experts);
    DEF("RAMP_BF16=%d", v->geom.bf16 ? 1 : 0);
    DEF("RAMP_XBF16=%d", (v->xbf16 && !v->geom.bf16) ? 1 : 0);
#undef DEF
    return n;
}

void ramp_moe_v1_program_name(const ramp_moe_variant *v, char *buf, size_t size) {
    snprintf(buf, size, "moe1-r%dw%ds%dg%dk%d-d%dh%dk%de%d-%s", v->cfg.rows, v->cfg.width,
             v->cfg.stages, v->cfg.grouped ? 1 : 0, v->cfg.splitk, v->geom.hidden,
             v->geom.inter, v->geom.topk, v->geom.experts,
             v->geom.bf16 ? "bf16" : (v->xbf16 ? "fp8x16" : "fp8"));
}

ramp_status ramp_moe_v1_compile(const ramp_moe_variant *v, ramp_jit_result **out) {
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "NULL output");
    RAMP_TRY(ramp_moe_v1_check(v));
    char storage[RAMP_MOE_MAX_DEFINES][48];
    const char *defs[RAMP_MOE_MAX_DEFINES];
    char name[96];
    ramp_jit_request rq;
    memset(&rq, 0, sizeof rq);
    ramp_moe_v1_program_name(v, name, sizeof name);
    rq.name = name;
    rq.source = "#include \"moe_v1.cuh\"\n";
    rq.defines = defs;
    rq.ndefines = ramp_moe_v1_defines(v, storage, defs);
    return ramp_jit_compile(&rq, out);
}

static ramp_status resources_of(const ramp_moe_variant *v, const ramp_jit_result *r,
                                const ramp_device_limits *lim, ramp_resources *out) {
    const ramp_kernel_report *k = ramp_jit_kernel(r, "ramp_moe_v1");
    RAMP_CHECK(k, RAMP_ERR_INTERNAL, "no ptxas report for ramp_moe_v1 in the compile log");
    ramp_moe_v1_layout l = ramp_moe_v1_layout_for(v);
    return ramp_resources_from_report(k, l.threads, (int)l.total, lim, out);
}

ramp_status ramp_moe_v1_resources(const ramp_moe_variant *v, const ramp_device_limits *lim,
                                  ramp_resources *out) {
    RAMP_CHECK(v && lim && out, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    ramp_jit_result *r = NULL;
    RAMP_TRY(ramp_moe_v1_compile(v, &r));
    ramp_status s = resources_of(v, r, lim, out);
    ramp_jit_result_free(r);
    return s;
}

ramp_status ramp_moe_kernel_create_from(ramp_gpu *gpu, const ramp_moe_variant *v,
                                        const ramp_jit_result *jit, ramp_moe_kernel **out) {
    RAMP_CHECK(gpu && v && jit && out, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    RAMP_TRY(ramp_moe_v1_check(v));
    ramp_gpu_info info;
    RAMP_TRY(ramp_gpu_get_info(gpu, &info));
    ramp_moe_kernel *k = ramp_calloc(1, sizeof *k);
    if (!k) return RAMP_ERR_OUT_OF_MEMORY;
    k->gpu = gpu;
    k->v = *v;
    k->layout = ramp_moe_v1_layout_for(v);
    k->sms = info.limits.sms;
    ramp_status s = resources_of(v, jit, &info.limits, &k->res);
    if (s == RAMP_OK && !k->res.valid) {
        char name[64];
        ramp_config_name(&v->cfg, name, sizeof name);
        s = ramp_set_error(RAMP_ERR_UNSUPPORTED, __FILE__, __LINE__,
                           "config %s cannot run: %s", name, k->res.why);
    }
    if (s == RAMP_OK) s = ramp_module_load(gpu, jit->cubin, jit->cubin_size, &k->module);
    if (s == RAMP_OK)
        s = ramp_module_kernel(k->module, "ramp_moe_v1", (int)k->layout.total, &k->kernel);
    if (s != RAMP_OK) {
        ramp_moe_kernel_free(k);
        return s;
    }
    *out = k;
    return RAMP_OK;
}

ramp_status ramp_moe_kernel_create(ramp_gpu *gpu, const ramp_moe_variant *v,
                                   ramp_moe_kernel **out) {
    RAMP_CHECK(gpu && v && out, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    ramp_jit_result *r = NULL;
    RAMP_TRY(ramp_moe_v1_compile(v, &r));
    ramp_status s = ramp_moe_kernel_create_from(gpu, v, r, out);
    ramp_jit_result_free(r);
    return s;
}

void ramp_moe_kernel_free(ramp_moe_kernel *k) {
    if (!k) return;
    ramp_module_free(k->module);
    free(k);
}

const ramp_resources *ramp_moe_kernel_resources(const ramp_moe_kernel *k) {
    return k ? &k->res : NULL;
}

unsigned ramp_moe_kernel_grid(const ramp_moe_kernel *k, int max_tiles) {
    long long q = (long long)(k->v.geom.inter / k->v.cfg.width) * k->v.cfg.splitk;
    long long total = (long long)max_tiles * q;
    if (k->v.cfg.persistent) {
        long long slots = (long long)k->sms * (k->res.blocks_per_sm > 0 ? k->res.blocks_per_sm : 1);
        if (slots < total) total = slots;
    }
    if (total < 1) total = 1;
    if (total > 0x7FFFFFFFLL) total = 0x7FFFFFFFLL;
    return (unsigned)total;
}

size_t ramp_moe_v1_ws_bytes(const ramp_moe_variant *v, int max_tiles) {
    return (size_t)ramp_moe_v1_ws_floats(v->cfg.rows, v->cfg.width, v->cfg.splitk,
                                         v->geom.inter, max_tiles) * 4;
}

size_t ramp_moe_v1_counter_bytes(const ramp_moe_variant *v, int max_tiles) {
    return (size_t)ramp_moe_v1_ws_counters(v->cfg.width, v->cfg.splitk, v->geom.inter,
                                           max_tiles) * 4;
}

ramp_status ramp_moe_kernel_launch(ramp_moe_kernel *k, const ramp_moe_params *p,
                                   ramp_stream stream) {
    RAMP_CHECK(k && p, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    RAMP_CHECK(sizeof(ramp_moe_params) == RAMP_MOE_PARAMS_BYTES, RAMP_ERR_INTERNAL,
               "ramp_moe_params is %zu bytes, expected %d", sizeof(ramp_moe_params),
               RAMP_MOE_PARAMS_BYTES);
    RAMP_CHECK(p->max_tiles >= 0 && p->num_tokens >= 0, RAMP_ERR_INVALID_ARGUMENT,
               "max_tiles = %d, num_tokens = %d", p->max_tiles, p->num_tokens);
    RAMP_CHECK(p->x && p->w13 && p->w2 && p->topk_weights && p->sorted_ids &&
                   p->tile_expert && p->num_tiles && p->out,
               RAMP_ERR_INVALID_ARGUMENT, "a required device pointer is 0");
    RAMP_CHECK(k->v.geom.bf16 || (p->w13_scale && p->w2_scale), RAMP_ERR_INVALID_ARGUMENT,
               "FP8 layer without weight scales");
    RAMP_CHECK(k->v.geom.bf16 || k->v.xbf16 || p->x_scale, RAMP_ERR_INVALID_ARGUMENT,
               "FP8 hidden states without x_scale");
    RAMP_CHECK(k->v.cfg.splitk == 1 || (p->ws && p->ws_count), RAMP_ERR_INVALID_ARGUMENT,
               "split-K %d needs ws and ws_count", k->v.cfg.splitk);
    RAMP_CHECK(p->out % 16 == 0, RAMP_ERR_INVALID_ARGUMENT,
               "v1: out (0x%llx) must be 16-byte aligned (the kernel adds float4s)",
               (unsigned long long)p->out);
    unsigned grid[3] = {ramp_moe_kernel_grid(k, p->max_tiles), 1, 1};
    unsigned block[3] = {(unsigned)k->layout.threads, 1, 1};
    ramp_moe_params copy = *p;
    void *args[1] = {&copy};
    return ramp_kernel_launch(k->kernel, grid, block, (int)k->layout.total, stream, args);
}
