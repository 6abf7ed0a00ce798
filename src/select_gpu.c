/*
 * select_gpu.c - runs the selection kernel (kernels/select.cuh) on a GPU:
 * compiles it with NVRTC (cached on disk), loads it, owns its device
 * buffers, and launches it with one cuLaunchKernel of a fixed shape.
 *
 * The kernel is generic in the descriptor (sizes in the by-value parameter
 * block, the id map and the menu in small device buffers), so one compiled
 * binary serves every plan; only group_only selects another binary.
 * Everything a launch needs is checked here before the launch, so a bad
 * call never reaches the GPU.
 */
#include "select_cpu.h"

#include "../kernels/select_params.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(ramp_sel_params) == RAMP_SEL_PARAMS_BYTES,
               "ramp_sel_params layout changed");
_Static_assert(RAMP_SEL_MAX_ENTRIES == RAMP_SELECT_MAX_ENTRIES,
               "menu size limits differ");

struct ramp_selector {
    ramp_gpu *gpu;
    ramp_select_desc desc;
    ramp_module *module;
    ramp_kernel *kernel;
    int warps;              /* block = warps * 32 threads */
    int smem;
    ramp_sel_params params; /* everything but the per-launch fields */
    ramp_select_device dev;
    ramp_devptr local_of, menu, scratch;
};

/* Warps per block: 32 unless RAMP_SELECT_WARPS (8, 16 or 32) says otherwise
 * (a tuning experiment; the default is what the tests and benchmarks use). */
static int select_warps(void) {
    const char *w = getenv("RAMP_SELECT_WARPS");
    int v = w && *w ? atoi(w) : 32;
    return v == 8 || v == 16 ? v : 32;
}

ramp_status ramp_select_compile(int group_only, int warps, ramp_jit_result **out) {
    RAMP_CHECK(warps == 8 || warps == 16 || warps == 32, RAMP_ERR_INVALID_ARGUMENT,
               "selection kernel warps = %d, expected 8, 16 or 32", warps);
    char warps_def[32];
    snprintf(warps_def, sizeof warps_def, "RAMP_SEL_WARPS=%d", warps);
    const char *defs[2] = {group_only ? "RAMP_SELECT_GROUP_ONLY=1"
                                      : "RAMP_SELECT_GROUP_ONLY=0",
                           warps_def};
    ramp_jit_request req = {
        .name = group_only ? "select-group" : "select",
        .source = "#include \"select.cuh\"\n",
        .defines = defs,
        .ndefines = 2,
    };
    return ramp_jit_compile(&req, out);
}

int64_t ramp_select_smem_bytes(const ramp_select_desc *d) {
    if (!d) return 0;
    ramp_sel_layout l = ramp_sel_layout_of(select_warps(), d->experts, d->local_experts,
                                           (long long)d->max_tokens * d->topk, 1);
    return l.total;
}

void ramp_selector_free(ramp_selector *s) {
    if (!s) return;
    ramp_gpu_free(s->gpu, s->dev.meta);
    ramp_gpu_free(s->gpu, s->dev.pred);
    ramp_gpu_free(s->gpu, s->dev.counts);
    ramp_gpu_free(s->gpu, s->dev.tile_start);
    ramp_gpu_free(s->gpu, s->dev.sorted_ids);
    ramp_gpu_free(s->gpu, s->dev.tile_expert);
    ramp_gpu_free(s->gpu, s->local_of);
    ramp_gpu_free(s->gpu, s->menu);
    ramp_gpu_free(s->gpu, s->scratch);
    ramp_module_free(s->module);
    free(s);
}

static ramp_status selector_init(ramp_selector *s) {
    const ramp_select_desc *d = &s->desc;
    ramp_gpu_info info;
    RAMP_TRY(ramp_gpu_get_info(s->gpu, &info));
    /* The pair list goes in shared memory when it fits, else in a device
     * buffer (large max_tokens); the rest must fit in shared memory. */
    s->warps = select_warps();
    const long long pairs = (long long)d->max_tokens * d->topk;
    ramp_sel_layout with = ramp_sel_layout_of(s->warps, d->experts, d->local_experts, pairs, 1);
    ramp_sel_layout without = ramp_sel_layout_of(s->warps, d->experts, d->local_experts, pairs, 0);
    const int list_in_smem = with.total <= info.limits.smem_per_block;
    RAMP_CHECK(without.total <= info.limits.smem_per_block, RAMP_ERR_UNSUPPORTED,
               "the selection kernel needs %lld B of shared memory for %d "
               "experts (%d local); %s allows %d B per block",
               without.total, d->experts, d->local_experts, info.limits.name,
               info.limits.smem_per_block);
    s->smem = (int)(list_in_smem ? with.total : without.total);

    ramp_jit_result *jit = NULL;
    RAMP_TRY(ramp_select_compile(d->group_only, s->warps, &jit));
    const ramp_kernel_report *rep = ramp_jit_kernel(jit, "ramp_select");
    if (!rep) {
        ramp_set_error(RAMP_ERR_INTERNAL, __FILE__, __LINE__,
                       "the compiler's report has no entry ramp_select (log: %.200s)",
                       jit->log ? jit->log : "");
        ramp_jit_result_free(jit);
        return RAMP_ERR_INTERNAL;
    }
    ramp_status st = ramp_module_load(s->gpu, jit->cubin, jit->cubin_size, &s->module);
    ramp_jit_result_free(jit);
    RAMP_TRY(st);
    RAMP_TRY(ramp_module_kernel(s->module, "ramp_select", s->smem, &s->kernel));

    int64_t slots, tiles;
    RAMP_TRY(ramp_select_capacity(d, &slots, &tiles));
    s->dev.max_slots = slots;
    s->dev.max_tiles = tiles;
    RAMP_TRY(ramp_gpu_alloc(s->gpu, RAMP_SELECT_META_COUNT * 4, &s->dev.meta));
    RAMP_TRY(ramp_gpu_alloc(s->gpu, RAMP_SELECT_MAX_ENTRIES * 4, &s->dev.pred));
    RAMP_TRY(ramp_gpu_alloc(s->gpu, (size_t)d->local_experts * 4, &s->dev.counts));
    RAMP_TRY(ramp_gpu_alloc(s->gpu, ((size_t)d->local_experts + 1) * 4, &s->dev.tile_start));
    RAMP_TRY(ramp_gpu_alloc(s->gpu, (size_t)slots * 4, &s->dev.sorted_ids));
    RAMP_TRY(ramp_gpu_alloc(s->gpu, (size_t)tiles * 4, &s->dev.tile_expert));
    if (!list_in_smem)
        RAMP_TRY(ramp_gpu_alloc(s->gpu, 4 * (size_t)s->warps *
                                            (size_t)ramp_sel_chunk(pairs, s->warps),
                                &s->scratch));
    ramp_sel_entry menu[RAMP_SEL_MAX_ENTRIES];
    memset(menu, 0, sizeof menu);
    for (int c = 0; c < d->nentries; c++) {
        menu[c].rows = d->entries[c].rows;
        menu[c].slices = d->entries[c].slices;
        menu[c].slots = d->entries[c].slots;
        for (int j = 0; j < 4; j++) menu[c].theta[j] = d->entries[c].theta[j];
    }
    RAMP_TRY(ramp_gpu_alloc(s->gpu, sizeof menu, &s->menu));
    RAMP_TRY(ramp_gpu_upload(s->gpu, s->menu, menu, sizeof menu));

    /* the id map, int16 on the device */
    int32_t *map = ramp_calloc((size_t)d->experts, sizeof *map);
    int16_t *map16 = ramp_calloc((size_t)d->experts, sizeof *map16);
    if (!map || !map16) {
        free(map);
        free(map16);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    ramp_select_build_map(d, map);
    for (int e = 0; e < d->experts; e++) map16[e] = (int16_t)map[e];
    st = ramp_gpu_alloc(s->gpu, (size_t)d->experts * 2, &s->local_of);
    if (st == RAMP_OK)
        st = ramp_gpu_upload(s->gpu, s->local_of, map16, (size_t)d->experts * 2);
    free(map);
    free(map16);
    RAMP_TRY(st);

    ramp_sel_params *p = &s->params;
    memset(p, 0, sizeof *p);
    p->local_of = s->local_of;
    p->menu = s->menu;
    p->scratch = s->scratch;
    p->meta = s->dev.meta;
    p->pred = s->dev.pred;
    p->counts = s->dev.counts;
    p->tile_start = s->dev.tile_start;
    p->sorted_ids = s->dev.sorted_ids;
    p->tile_expert = s->dev.tile_expert;
    p->max_tokens = d->max_tokens;
    p->topk = d->topk;
    p->experts = d->experts;
    p->local_experts = d->local_experts;
    p->nentries = d->nentries;
    return RAMP_OK;
}

ramp_status ramp_selector_create(ramp_gpu *gpu, const ramp_select_desc *d,
                                 ramp_selector **out) {
    RAMP_CHECK(gpu && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_selector_create: NULL gpu or out");
    RAMP_TRY(ramp_select_desc_check(d));
    ramp_selector *s = ramp_calloc(1, sizeof *s);
    if (!s) return RAMP_ERR_OUT_OF_MEMORY;
    s->gpu = gpu;
    s->desc = *d;
    ramp_status st = selector_init(s); /* reads the caller's local_of */
    s->desc.local_of = NULL;           /* the map lives on the device now */
    if (st != RAMP_OK) {
        ramp_selector_free(s);
        return st;
    }
    *out = s;
    return RAMP_OK;
}

ramp_status ramp_selector_launch(ramp_selector *s, ramp_devptr topk_ids,
                                 int tokens, ramp_devptr tokens_dev,
                                 ramp_stream stream) {
    RAMP_CHECK(s, RAMP_ERR_INVALID_ARGUMENT, "ramp_selector_launch: NULL selector");
    RAMP_CHECK(stream, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_selector_launch: NULL stream; create one with "
               "ramp_stream_create (the legacy default stream cannot be "
               "captured into a graph)");
    RAMP_CHECK(tokens >= 0 && tokens <= s->desc.max_tokens, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_selector_launch: %d tokens, the selector was built for at "
               "most %d", tokens, s->desc.max_tokens);
    RAMP_CHECK(topk_ids || (tokens == 0 && !tokens_dev), RAMP_ERR_INVALID_ARGUMENT,
               "ramp_selector_launch: topk_ids is 0 with %d tokens%s", tokens,
               tokens_dev ? " and a device token count" : "");
    RAMP_CHECK(topk_ids % 4 == 0 && tokens_dev % 4 == 0, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_selector_launch: topk_ids 0x%llx or tokens_dev 0x%llx is "
               "not 4-byte aligned", (unsigned long long)topk_ids,
               (unsigned long long)tokens_dev);
    ramp_sel_params p = s->params;
    p.ids = topk_ids;
    p.tokens = tokens;
    p.tokens_dev = tokens_dev;
    void *args[] = {&p};
    const unsigned grid[3] = {1, 1, 1}, block[3] = {(unsigned)s->warps * 32, 1, 1};
    return ramp_kernel_launch(s->kernel, grid, block, s->smem, stream, args);
}

ramp_status ramp_selector_device(const ramp_selector *s, ramp_select_device *out) {
    RAMP_CHECK(s && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_selector_device: NULL argument");
    *out = s->dev;
    return RAMP_OK;
}

ramp_status ramp_selector_download(ramp_selector *s, ramp_stream stream,
                                   ramp_select_result *out) {
    RAMP_CHECK(s && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_selector_download: NULL argument");
    RAMP_CHECK(out->local_experts == s->desc.local_experts &&
                   out->max_slots >= s->dev.max_slots &&
                   out->max_tiles >= s->dev.max_tiles,
               RAMP_ERR_INVALID_ARGUMENT,
               "ramp_selector_download: result made for another descriptor");
    ramp_gpu *g = s->gpu;
    const int EL = s->desc.local_experts;
    RAMP_TRY(ramp_gpu_download_async(g, out->meta, s->dev.meta, sizeof out->meta, stream));
    RAMP_TRY(ramp_gpu_download_async(g, out->pred, s->dev.pred,
                                     (size_t)s->desc.nentries * sizeof(float), stream));
    RAMP_TRY(ramp_gpu_download_async(g, out->counts, s->dev.counts,
                                     (size_t)EL * 4, stream));
    RAMP_TRY(ramp_gpu_download_async(g, out->tile_start, s->dev.tile_start,
                                     ((size_t)EL + 1) * 4, stream));
    RAMP_TRY(ramp_stream_sync(g, stream));
    int32_t tiles = out->meta[RAMP_SELECT_META_TILES];
    int32_t slots = out->meta[RAMP_SELECT_META_SLOTS];
    RAMP_CHECK(tiles >= 0 && tiles <= s->dev.max_tiles && slots >= 0 &&
                   slots <= s->dev.max_slots,
               RAMP_ERR_INTERNAL,
               "selection kernel reported %d tiles, %d slots; capacity %lld, %lld",
               tiles, slots, (long long)s->dev.max_tiles, (long long)s->dev.max_slots);
    RAMP_TRY(ramp_gpu_download_async(g, out->sorted_ids, s->dev.sorted_ids,
                                     (size_t)slots * 4, stream));
    RAMP_TRY(ramp_gpu_download_async(g, out->tile_expert, s->dev.tile_expert,
                                     (size_t)tiles * 4, stream));
    RAMP_TRY(ramp_stream_sync(g, stream));
    return RAMP_OK;
}
