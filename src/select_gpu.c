/*
 * select_gpu.c - runs the selection kernel (kernels/select.cuh) on a GPU:
 * compiles it with NVRTC (cached on disk), loads it, owns its device
 * buffers, and launches it with one cuLaunchKernel of a fixed shape.
 *
 * The kernel is generic in the descriptor (sizes in the by-value parameter
 * block, the id map and the menu in small device buffers), so one compiled
 * binary serves every plan of a launch shape. A shape is 16 or 32 warps per
 * block and a cluster of 1, 2, 4 or 8 blocks, chosen from the pairs a launch
 * reads (tokens * k). A selector compiles the shapes of every pair count up
 * to max_tokens * k (at most five) and a launch whose token count the host
 * knows takes the smallest that covers it: a cluster of 8 costs a small
 * batch ~0.8 us over one block (bench/results/select-2026-11-30-v2.md,
 * section 4). A device-side count takes the largest. RAMP_SELECT_WARPS and
 * RAMP_SELECT_CTAS override the rule (RAMP_SELECT_CTAS: one shape), for
 * experiments; ramp_select_desc.one_shape keeps only the largest. A contiguous placement
 * is passed as its first expert, so the kernel needs no id map. Everything
 * a launch needs is checked here before the launch, so a bad call never
 * reaches the GPU.
 *
 * RAMP_SELECT_PROFILE=1 at create builds the profiling variant (phase
 * clocks, select_params.h) and gives it a record buffer, read back with
 * ramp_selector_profile.
 */
#include "select_cpu.h"

#include "../kernels/select_params.h"

#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(ramp_sel_params) == RAMP_SEL_PARAMS_BYTES,
               "ramp_sel_params layout changed");
_Static_assert(RAMP_SEL_MAX_ENTRIES == RAMP_SELECT_MAX_ENTRIES,
               "menu size limits differ");
/* the kernel reads an entry as two int4 (ramp_sel_entry_load) */
_Static_assert(sizeof(ramp_sel_entry) == 32 && offsetof(ramp_sel_entry, theta_pairs) == 12 &&
                   offsetof(ramp_sel_entry, theta) == 16,
               "ramp_sel_entry layout changed");
/* the kernel's past-wave penalty is the host's (an integer-valued constant,
 * so the comparison is an integer constant expression for every compiler) */
_Static_assert(RAMP_SEL_PAST_WAVES_INT == (long long)RAMP_PAST_WAVES_US,
               "the selection kernel's past-wave penalty differs from RAMP_PAST_WAVES_US");

/* One compiled launch shape and the shared-memory layout it needs. */
typedef struct {
    ramp_module *module;
    ramp_kernel *kernel;
    int warps;              /* block = warps * 32 threads */
    int ctas;               /* blocks = one cluster */
    long long max_pairs;    /* the most pairs (tokens * k) it is chosen for */
    ramp_sel_layout layout;
} sel_shape;

#define SEL_MAX_SHAPES 5 /* 16 warps x 1, 2, 4, 8 blocks; 32 warps x 8 */

struct ramp_selector {
    ramp_gpu *gpu;
    ramp_select_desc desc;
    sel_shape shapes[SEL_MAX_SHAPES]; /* by max_pairs, the last for max_tokens */
    int nshapes;
    int cond_switch;        /* built with RAMP_SELECT_SWITCH (ramp_selector_create_switch) */
    ramp_sel_params params; /* everything but the per-launch fields */
    ramp_select_device dev;
    ramp_devptr local_of, menu, profile;
};

/* Warps per block: 16 while 8 blocks of 16 warps give every warp at most
 * one row of 32 pairs (4,096 pairs), else 32. Measured on the H200
 * (bench/results/select-2026-11-30-v2.md): every warp runs the prologue and
 * the barriers, so up to 4K ids 16 warps a block on more blocks beat 32
 * (3.45 against 4.13 us for 4,096 ids), and at 32K ids 32 warps win (5.7
 * against 6.7 us).
 * Blocks: enough that each warp has one row of 32 pairs, up to the portable
 * cluster size of 8. Same measurements: on a small batch a cluster of 2
 * costs 0.4 us more than one block and one of 8 0.8 us, while one block that
 * reads 4K ids loses 1-3.5 us to issue and scattered stores; with 32 warps
 * this rule picked the fastest cluster size at every size of the benchmark. */
void ramp_select_shape_for(long long pairs, int *warps, int *ctas) {
    const int w = pairs <= 16LL * 32 * RAMP_SEL_PORTABLE_CTAS ? 16 : 32;
    int n = 1;
    while (n < RAMP_SEL_PORTABLE_CTAS && (long long)n * w * 32 < pairs) n *= 2;
    *warps = w;
    *ctas = n;
}

/* The rule, or the RAMP_SELECT_WARPS (8, 16, 32) and RAMP_SELECT_CTAS (1,
 * 2, 4, 8, 16) overrides; *fixed is 1 when the cluster size is forced (then
 * the selector has that one shape). */
static void shape_env(long long pairs, int *warps, int *ctas, int *fixed) {
    ramp_select_shape_for(pairs, warps, ctas);
    const char *w = getenv("RAMP_SELECT_WARPS");
    const int wv = w && *w ? atoi(w) : 0;
    if (wv == 8 || wv == 16 || wv == 32) {
        *warps = wv;
        int n = 1;
        while (n < RAMP_SEL_PORTABLE_CTAS && (long long)n * wv * 32 < pairs) n *= 2;
        *ctas = n;
    }
    const char *c = getenv("RAMP_SELECT_CTAS");
    const int cv = c && *c ? atoi(c) : 0;
    *fixed = cv == 1 || cv == 2 || cv == 4 || cv == 8 || cv == 16;
    if (*fixed) *ctas = cv;
}

/* The first local expert when the local experts are a contiguous run of
 * global ids (the kernel then needs no map), else -1. */
static int select_first_expert(const ramp_select_desc *d) {
    if (!d->local_of) return d->first_expert;
    int f = -1;
    for (int e = 0; e < d->experts; e++)
        if (d->local_of[e] == 0) f = e;
    if (f < 0 || f > d->experts - d->local_experts) return -1;
    for (int e = 0; e < d->experts; e++) {
        int want = e >= f && e < f + d->local_experts ? e - f : -1;
        if (d->local_of[e] != want) return -1;
    }
    return f;
}

ramp_status ramp_select_compile_variant(int group_only, int warps, int ctas,
                                        int profile, ramp_jit_result **out) {
    return ramp_select_compile_switch(group_only, warps, ctas, profile, 0, out);
}

ramp_status ramp_select_compile_switch(int group_only, int warps, int ctas, int profile,
                                       int cond_switch, ramp_jit_result **out) {
    return ramp_select_compile_opts(group_only, warps, ctas, profile, cond_switch, 0, out);
}

ramp_status ramp_select_compile_opts(int group_only, int warps, int ctas, int profile,
                                     int cond_switch, int pdl_wait, ramp_jit_result **out) {
    RAMP_CHECK(warps == 8 || warps == 16 || warps == 32, RAMP_ERR_INVALID_ARGUMENT,
               "selection kernel warps = %d, expected 8, 16 or 32", warps);
    RAMP_CHECK(ctas == 1 || ctas == 2 || ctas == 4 || ctas == 8 || ctas == 16,
               RAMP_ERR_INVALID_ARGUMENT,
               "selection kernel blocks = %d, expected 1, 2, 4, 8 or 16", ctas);
    char warps_def[32], ctas_def[32];
    snprintf(warps_def, sizeof warps_def, "RAMP_SEL_WARPS=%d", warps);
    snprintf(ctas_def, sizeof ctas_def, "RAMP_SEL_CTAS=%d", ctas);
    const char *defs[6] = {group_only ? "RAMP_SELECT_GROUP_ONLY=1"
                                      : "RAMP_SELECT_GROUP_ONLY=0",
                           warps_def, ctas_def};
    int n = 3;
    if (profile) defs[n++] = "RAMP_SELECT_PROFILE=1";
    if (cond_switch) defs[n++] = "RAMP_SELECT_SWITCH=1";
    if (pdl_wait) defs[n++] = "RAMP_SELECT_PDL_WAIT=1"; /* absent otherwise: the cache key stays */
    ramp_jit_request req = {
        .name = group_only ? "select-group" : cond_switch ? "select-switch" : "select",
        .source = "#include \"select.cuh\"\n",
        .defines = defs,
        .ndefines = n,
    };
    return ramp_jit_compile(&req, out);
}

ramp_status ramp_select_compile(int group_only, int warps, ramp_jit_result **out) {
    return ramp_select_compile_variant(group_only, warps, 1, 0, out);
}

int64_t ramp_select_smem_bytes(const ramp_select_desc *d) {
    if (!d) return 0;
    int warps, ctas, fixed;
    shape_env((long long)d->max_tokens * d->topk, &warps, &ctas, &fixed);
    ramp_sel_layout l = ramp_sel_layout_of(warps, ctas, d->experts, d->local_experts,
                                           d->group_only ? 1 : d->nentries,
                                           select_first_expert(d) < 0);
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
    ramp_gpu_free(s->gpu, s->profile);
    for (int i = 0; i < s->nshapes; i++) ramp_module_free(s->shapes[i].module);
    free(s);
}

#define PROFILE_BYTES ((size_t)RAMP_SEL_PROF_WORDS * 8 * (RAMP_SEL_PROF_RECORDS + 1))

/* Compiles and loads shape sh (warps, ctas, max_pairs set) for the
 * descriptor; its layout must fit a block's shared memory. */
static ramp_status shape_load(ramp_selector *s, sel_shape *sh, int profile,
                              const ramp_gpu_info *info) {
    const ramp_select_desc *d = &s->desc;
    sh->layout = ramp_sel_layout_of(sh->warps, sh->ctas, d->experts, d->local_experts,
                                    d->group_only ? 1 : d->nentries,
                                    select_first_expert(d) < 0);
    RAMP_CHECK(sh->layout.total <= info->limits.smem_per_block, RAMP_ERR_UNSUPPORTED,
               "the selection kernel needs %d B of shared memory for %d "
               "experts (%d local); %s allows %d B per block",
               sh->layout.total, d->experts, d->local_experts, info->limits.name,
               info->limits.smem_per_block);
    ramp_jit_result *jit = NULL;
    RAMP_TRY(ramp_select_compile_opts(d->group_only, sh->warps, sh->ctas, profile,
                                      s->cond_switch, d->pdl_wait, &jit));
    const ramp_kernel_report *rep = ramp_jit_kernel(jit, "ramp_select");
    if (!rep) {
        ramp_set_error(RAMP_ERR_INTERNAL, __FILE__, __LINE__,
                       "the compiler's report has no entry ramp_select (log: %.200s)",
                       jit->log ? jit->log : "");
        ramp_jit_result_free(jit);
        return RAMP_ERR_INTERNAL;
    }
    ramp_status st = ramp_module_load(s->gpu, jit->cubin, jit->cubin_size, &sh->module);
    ramp_jit_result_free(jit);
    RAMP_TRY(st);
    return ramp_module_kernel(sh->module, "ramp_select", sh->layout.total, &sh->kernel);
}

static ramp_status selector_init(ramp_selector *s) {
    const ramp_select_desc *d = &s->desc;
    ramp_gpu_info info;
    RAMP_TRY(ramp_gpu_get_info(s->gpu, &info));
    const int first = select_first_expert(d);
    const int scan_entries = d->group_only ? 1 : d->nentries;
    const char *prof_env = getenv("RAMP_SELECT_PROFILE");
    const int profile = prof_env && prof_env[0] == '1';

    /* the shapes of 512, 1024, ... pairs below max_tokens * k, then its own */
    const long long max_pairs = (long long)d->max_tokens * d->topk;
    int warps, ctas, fixed;
    shape_env(max_pairs, &warps, &ctas, &fixed);
    if (!fixed && !d->one_shape)
        for (long long p = 1; p < max_pairs && s->nshapes < SEL_MAX_SHAPES - 1; p *= 2) {
            int w, c, f;
            shape_env(p, &w, &c, &f);
            if (w == warps && c == ctas) break;
            sel_shape *last = s->nshapes ? &s->shapes[s->nshapes - 1] : NULL;
            if (last && last->warps == w && last->ctas == c) last->max_pairs = p;
            else s->shapes[s->nshapes++] = (sel_shape){.warps = w, .ctas = c, .max_pairs = p};
        }
    s->shapes[s->nshapes++] = (sel_shape){.warps = warps, .ctas = ctas, .max_pairs = max_pairs};
    for (int i = 0; i < s->nshapes; i++) RAMP_TRY(shape_load(s, &s->shapes[i], profile, &info));

    ramp_status st;

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
    if (profile) {
        void *zero = ramp_calloc(1, PROFILE_BYTES);
        if (!zero) return RAMP_ERR_OUT_OF_MEMORY;
        st = ramp_gpu_alloc(s->gpu, PROFILE_BYTES, &s->profile);
        if (st == RAMP_OK) st = ramp_gpu_upload(s->gpu, s->profile, zero, PROFILE_BYTES);
        free(zero);
        RAMP_TRY(st);
    }
    ramp_sel_entry menu[RAMP_SEL_MAX_ENTRIES];
    memset(menu, 0, sizeof menu);
    for (int c = 0; c < d->nentries; c++) {
        menu[c].rows = d->entries[c].rows;
        menu[c].slices = d->entries[c].slices;
        /* 16, 15 and 1 bits (ramp_select_desc_check bounds them) */
        menu[c].slots_waves = (int32_t)((uint32_t)d->entries[c].slots |
                                        (uint32_t)d->entries[c].max_waves << 16 |
                                        (uint32_t)d->entries[c].pair_tiles << 31);
        for (int j = 0; j < 4; j++) menu[c].theta[j] = d->entries[c].theta[j];
        menu[c].theta_pairs = d->entries[c].theta[4];
    }
    RAMP_TRY(ramp_gpu_alloc(s->gpu, sizeof menu, &s->menu));
    RAMP_TRY(ramp_gpu_upload(s->gpu, s->menu, menu, sizeof menu));

    if (first < 0) { /* the id map, int16 on the device */
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
    }

    ramp_sel_params *p = &s->params;
    memset(p, 0, sizeof *p);
    p->local_of = s->local_of;
    p->menu = s->menu;
    p->profile = s->profile;
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
    p->first_expert = first;
    p->nbits = 0;
    while ((1 << p->nbits) < d->local_experts) p->nbits++;
    p->scan_entries = scan_entries;
    p->entry_mask = (ramp_sel_i32)(d->entry_mask ? d->entry_mask
                                                 : (unsigned)((1ull << d->nentries) - 1));
    return RAMP_OK;
}

/* The shape a launch of `tokens` host-counted tokens runs (tokens < 0: a
 * device-side count, the largest shape). */
static const sel_shape *shape_of(const ramp_selector *s, int tokens) {
    if (tokens >= 0)
        for (int i = 0; i < s->nshapes - 1; i++)
            if ((long long)tokens * s->desc.topk <= s->shapes[i].max_pairs) return &s->shapes[i];
    return &s->shapes[s->nshapes - 1];
}

ramp_status ramp_selector_create(ramp_gpu *gpu, const ramp_select_desc *d,
                                 ramp_selector **out) {
    return ramp_selector_create_switch(gpu, d, 0, out);
}

ramp_status ramp_selector_create_switch(ramp_gpu *gpu, const ramp_select_desc *d,
                                        int cond_switch, ramp_selector **out) {
    RAMP_CHECK(gpu && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_selector_create: NULL gpu or out");
    RAMP_TRY(ramp_select_desc_check(d));
    ramp_selector *s = ramp_calloc(1, sizeof *s);
    if (!s) return RAMP_ERR_OUT_OF_MEMORY;
    s->gpu = gpu;
    s->desc = *d;
    s->cond_switch = cond_switch != 0;
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
    return ramp_selector_launch_switch(s, topk_ids, tokens, tokens_dev, 0, stream);
}

ramp_status ramp_selector_launch_switch(ramp_selector *s, ramp_devptr topk_ids, int tokens,
                                        ramp_devptr tokens_dev, unsigned long long cond,
                                        ramp_stream stream) {
    return ramp_selector_launch_masked(s, topk_ids, tokens, tokens_dev, cond, 0, stream);
}

ramp_status ramp_selector_launch_masked(ramp_selector *s, ramp_devptr topk_ids, int tokens,
                                        ramp_devptr tokens_dev, unsigned long long cond,
                                        unsigned entry_mask, ramp_stream stream) {
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
    RAMP_CHECK(!cond || s->cond_switch, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_selector_launch: a switch handle for a selector built without "
               "(ramp_selector_create_switch)");
    p.cond = cond;
    RAMP_CHECK((entry_mask >> s->desc.nentries) == 0, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_selector_launch: entry mask 0x%x names an entry past the menu's %d",
               entry_mask, s->desc.nentries);
    if (entry_mask) p.entry_mask = (ramp_sel_i32)entry_mask;
    const sel_shape *sh = shape_of(s, tokens_dev ? -1 : tokens);
    const ramp_sel_layout *l = &sh->layout;
    p.off_hist = l->hist;
    p.off_tot = l->tot;
    p.off_cnt = l->cnt;
    p.off_cpre = l->cpre;
    p.off_scan = l->scan;
    p.off_pred = l->pred;
    p.off_misc = l->misc;
    p.off_map = l->map;
    void *args[] = {&p};
    const unsigned grid[3] = {(unsigned)sh->ctas, 1, 1};
    const unsigned block[3] = {(unsigned)sh->warps * 32, 1, 1};
    /* pdl_wait: the kernel's cluster shape is compiled in (__cluster_dims__) */
    return ramp_kernel_launch_ex(sh->kernel, grid, block, l->total, stream, args,
                                 s->desc.pdl_wait, 1);
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

int ramp_selector_ctas(const ramp_selector *s) {
    return s ? s->shapes[s->nshapes - 1].ctas : 0;
}

int ramp_selector_warps(const ramp_selector *s) {
    return s ? s->shapes[s->nshapes - 1].warps : 0;
}

void ramp_selector_shape(const ramp_selector *s, int tokens, int *warps, int *ctas) {
    const sel_shape *sh = s ? shape_of(s, tokens) : NULL;
    *warps = sh ? sh->warps : 0;
    *ctas = sh ? sh->ctas : 0;
}

int ramp_selector_shapes(const ramp_selector *s) { return s ? s->nshapes : 0; }

ramp_status ramp_selector_profile(ramp_selector *s, ramp_stream stream,
                                  uint64_t *records, int max, int *count) {
    RAMP_CHECK(s && count && (records || max == 0), RAMP_ERR_INVALID_ARGUMENT,
               "ramp_selector_profile: NULL argument");
    RAMP_CHECK(s->profile, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_selector_profile: the selector was not built with "
               "RAMP_SELECT_PROFILE=1");
    uint64_t *buf = malloc(PROFILE_BYTES);
    if (!buf) return RAMP_ERR_OUT_OF_MEMORY;
    ramp_status st = ramp_gpu_download_async(s->gpu, buf, s->profile, PROFILE_BYTES, stream);
    if (st == RAMP_OK) st = ramp_stream_sync(s->gpu, stream);
    if (st == RAMP_OK)
        st = ramp_gpu_fill32_async(s->gpu, s->profile, 0, PROFILE_BYTES / 4, stream);
    if (st == RAMP_OK) st = ramp_stream_sync(s->gpu, stream);
    if (st == RAMP_OK) {
        int n = buf[0] < RAMP_SEL_PROF_RECORDS ? (int)buf[0] : RAMP_SEL_PROF_RECORDS;
        if (n > max) n = max;
        memcpy(records, buf + RAMP_SEL_PROF_WORDS, (size_t)n * RAMP_SEL_PROF_WORDS * 8);
        *count = n;
    }
    free(buf);
    return st;
}
