/*
 * layer.c - the MoE layer an engine calls (ramp.h section 10): a plan's menu
 * served by the selection kernel (select_gpu.c) and the polymorphic kernel
 * (moe_poly.c). Everything that can disagree with the plan is checked at
 * creation, and every buffer is allocated there, so a call only queues its
 * launches (two; a third with two-phase entries, a fourth with deterministic
 * output) and can be captured in a CUDA graph. The polymorphic kernel's
 * entries are v1's (the default) or the Hopper kernel v2's
 * (ramp_layer_desc.kernel; kernels/moe_poly_v2.cuh), whose weight tensor
 * maps are built here, once.
 */
#include "moe_poly.h"
#include "moe_v2.h"
#include "select_cpu.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A size class (ramp_layer_desc.one_menu 0): a kernel holding the entries
 * the choice can take for batches of up to `tokens` tokens
 * (ramp_select_size_classes) */
typedef struct {
    int tokens;
    unsigned mask;
    ramp_moe_poly *poly;
} size_class;

struct ramp_layer {
    ramp_gpu *gpu;
    ramp_plan plan;
    ramp_layer_desc desc;   /* local_of not kept (copied into the selector) */
    ramp_selector *sel;
    ramp_select_device sdev;
    ramp_moe_poly *poly;
    size_class cls[RAMP_MENU_MAX];
    int ncls;
    ramp_devptr ws, ws_count, sched;
    ramp_devptr pws;       /* deterministic: the per-pair output rows */
    ramp_devptr local_dev; /* deterministic with local_of: its device copy */
    ramp_stream body;      /* poly_split 5: the stream a switch node's bodies are captured on */
    ramp_layer_info info;
};

void ramp_layer_free(ramp_layer *L) {
    if (!L) return;
    ramp_selector_free(L->sel);
    ramp_moe_poly_free(L->poly);
    for (int c = 0; c < L->ncls; c++) ramp_moe_poly_free(L->cls[c].poly);
    if (L->gpu && L->body) ramp_stream_destroy(L->gpu, L->body);
    if (L->gpu) {
        ramp_gpu_free(L->gpu, L->ws);
        ramp_gpu_free(L->gpu, L->ws_count);
        ramp_gpu_free(L->gpu, L->sched);
        ramp_gpu_free(L->gpu, L->pws);
        ramp_gpu_free(L->gpu, L->local_dev);
    }
    free(L);
}

/* The descriptor against the plan: what a layer built from the wrong plan
 * (another model, layout or precision) would get wrong. */
static ramp_status check_desc(const ramp_plan *p, const ramp_layer_desc *d) {
    const ramp_geometry *g = &p->geom;
    RAMP_CHECK(d->serial_launch >= 0 && d->serial_launch <= 3, RAMP_ERR_INVALID_ARGUMENT,
               "layer: serial_launch = %d (0 automatic, 1 serial, 2 PDL for the first kernel "
               "only, 3 PDL for both)", d->serial_launch);
    RAMP_CHECK(d->max_tokens >= 1, RAMP_ERR_INVALID_ARGUMENT,
               "layer: max_tokens = %d, must be >= 1", d->max_tokens);
    RAMP_CHECK(d->experts >= 1 && g->topk <= d->experts, RAMP_ERR_INVALID_ARGUMENT,
               "layer: experts E = %d with the plan's top-k %d (need 1 <= k <= E)",
               d->experts, g->topk);
    ramp_model m;
    if (ramp_model_lookup(p->model, &m) == RAMP_OK)
        RAMP_CHECK(m.experts == d->experts, RAMP_ERR_INVALID_ARGUMENT,
                   "layer: E = %d, but the plan is for %s with %d experts", d->experts,
                   p->model, m.experts);
    RAMP_CHECK(d->local_experts >= 1 && d->local_experts <= g->experts &&
                   d->local_experts <= d->experts,
               RAMP_ERR_INVALID_ARGUMENT,
               "layer: local_experts = %d, but the plan (%s %s) serves at most %d per GPU",
               d->local_experts, p->model, p->layout, g->experts);
    RAMP_CHECK(d->bf16 == g->bf16, RAMP_ERR_INVALID_ARGUMENT,
               "layer: weights are %s, the plan is for %s", d->bf16 ? "BF16" : "FP8",
               g->bf16 ? "BF16" : "FP8");
    RAMP_CHECK(!d->hidden_bf16 || !d->bf16, RAMP_ERR_INVALID_ARGUMENT,
               "layer: hidden_bf16 is for FP8 layers (BF16 layers take BF16 input anyway)");
    const int64_t want13[3] = {d->local_experts, 2LL * g->inter, g->hidden};
    const int64_t want2[3] = {d->local_experts, g->hidden, g->inter};
    for (int i = 0; i < 3; i++) {
        RAMP_CHECK(d->w13_shape[i] == want13[i], RAMP_ERR_INVALID_ARGUMENT,
                   "layer: w13 shape [%lld, %lld, %lld], the plan (%s %s) needs [%lld, %lld, "
                   "%lld] = [EL, 2h, d]",
                   (long long)d->w13_shape[0], (long long)d->w13_shape[1],
                   (long long)d->w13_shape[2], p->model, p->layout, (long long)want13[0],
                   (long long)want13[1], (long long)want13[2]);
        RAMP_CHECK(d->w2_shape[i] == want2[i], RAMP_ERR_INVALID_ARGUMENT,
                   "layer: w2 shape [%lld, %lld, %lld], the plan (%s %s) needs [%lld, %lld, "
                   "%lld] = [EL, d, h]",
                   (long long)d->w2_shape[0], (long long)d->w2_shape[1],
                   (long long)d->w2_shape[2], p->model, p->layout, (long long)want2[0],
                   (long long)want2[1], (long long)want2[2]);
    }
    RAMP_CHECK(d->w13 && d->w2, RAMP_ERR_INVALID_ARGUMENT, "layer: w13 or w2 is 0");
    RAMP_CHECK(d->bf16 || (d->w13_scale && d->w2_scale), RAMP_ERR_INVALID_ARGUMENT,
               "layer: FP8 weights need w13_scale and w2_scale");
    RAMP_CHECK((int64_t)d->max_tokens * g->topk <= INT_MAX / 2, RAMP_ERR_INVALID_ARGUMENT,
               "layer: max_tokens %d x k %d is too many pairs", d->max_tokens, g->topk);
    RAMP_CHECK(d->kernel == RAMP_KERNEL_V1 || d->kernel == RAMP_KERNEL_V2,
               RAMP_ERR_INVALID_ARGUMENT, "layer: kernel = %d is not RAMP_KERNEL_V1 (%d) or "
               "RAMP_KERNEL_V2 (%d)", d->kernel, RAMP_KERNEL_V1, RAMP_KERNEL_V2);
    RAMP_CHECK(d->weight_units == 0 ||
                   (d->weight_units == 1 && d->kernel == RAMP_KERNEL_V2 && !d->w2_red4 &&
                    !d->l2_prefetch_mb),
               RAMP_ERR_INVALID_ARGUMENT,
               "layer: weight_units = %d: weights in stage units are read by kernel v2, "
               "without w2_red4 or l2_prefetch_mb (0, or 1 with kernel = RAMP_KERNEL_V2; "
               "kernel %d, w2_red4 %d, l2_prefetch_mb %d)",
               d->weight_units, d->kernel, d->w2_red4, d->l2_prefetch_mb);
    RAMP_CHECK(d->w2_red4 == 0 || (d->w2_red4 == 1 && d->kernel == RAMP_KERNEL_V2),
               RAMP_ERR_INVALID_ARGUMENT,
               "layer: w2_red4 = %d: W2 in the float4-output row order is read by kernel v2 "
               "only (0, or 1 with kernel = RAMP_KERNEL_V2)", d->w2_red4);
    RAMP_CHECK(d->l2_prefetch_mb == 0 ||
                   (d->kernel == RAMP_KERNEL_V2 && d->l2_prefetch_mb > 0 &&
                    d->l2_prefetch_mb <= RAMP_L2PF_MAX_MB),
               RAMP_ERR_INVALID_ARGUMENT,
               "layer: l2_prefetch_mb = %d: the L2 prefetch under the selection is a kernel v2 "
               "option (0, or 1..%d with kernel = RAMP_KERNEL_V2)", d->l2_prefetch_mb,
               RAMP_L2PF_MAX_MB);
    RAMP_CHECK(d->bf16_pipe == 0 || (d->bf16_pipe == 1 && d->kernel == RAMP_KERNEL_V2 && d->bf16),
               RAMP_ERR_INVALID_ARGUMENT,
               "layer: bf16_pipe = %d: one stage's wgmmas in flight is a kernel v2 option for "
               "BF16 layers (0, or 1 with kernel = RAMP_KERNEL_V2 and bf16 = 1; here kernel %d, "
               "bf16 %d)", d->bf16_pipe, d->kernel, d->bf16);
    RAMP_CHECK(d->deterministic == 0 || (d->deterministic == 1 && d->kernel == RAMP_KERNEL_V2),
               RAMP_ERR_INVALID_ARGUMENT,
               "layer: deterministic = %d: per-slot output rows and a combining kernel are a "
               "kernel v2 option (0, or 1 with kernel = RAMP_KERNEL_V2; here kernel %d)",
               d->deterministic, d->kernel);
    RAMP_CHECK(d->poly_split >= 0 && d->poly_split <= 5 &&
                   (d->poly_split == 0 || d->kernel == RAMP_KERNEL_V2),
               RAMP_ERR_INVALID_ARGUMENT,
               "layer: poly_split = %d: how a menu is split into kernels is a kernel v2 option "
               "(0..5, with kernel = RAMP_KERNEL_V2; "
               "here kernel %d)", d->poly_split, d->kernel);
    RAMP_CHECK(d->poly_top_wait == 0 || (d->poly_top_wait == 1 && d->kernel == RAMP_KERNEL_V2),
               RAMP_ERR_INVALID_ARGUMENT,
               "layer: poly_top_wait = %d: where phase 2 waits for phase 1 is a kernel v2 "
               "option (0, or 1 with kernel = RAMP_KERNEL_V2; here kernel %d)",
               d->poly_top_wait, d->kernel);
    RAMP_CHECK(d->select_one_shape == 0 || d->select_one_shape == 1, RAMP_ERR_INVALID_ARGUMENT,
               "layer: select_one_shape = %d, expected 0 or 1", d->select_one_shape);
    RAMP_CHECK(d->select_pdl == 0 || d->select_pdl == 1, RAMP_ERR_INVALID_ARGUMENT,
               "layer: select_pdl = %d, expected 0 or 1", d->select_pdl);
    RAMP_CHECK(d->one_menu == 0 || d->one_menu == 1, RAMP_ERR_INVALID_ARGUMENT,
               "layer: one_menu = %d, expected 0 (size classes where exact) or 1 (one kernel "
               "for every batch)", d->one_menu);
    RAMP_CHECK(d->many_expert_classes == 0 || d->many_expert_classes == 1,
               RAMP_ERR_INVALID_ARGUMENT,
               "layer: many_expert_classes = %d, expected 0 (size classes for one local expert "
               "only) or 1 (for several too)", d->many_expert_classes);
    RAMP_CHECK(d->poly_split != 5 || d->l2_prefetch_mb == 0, RAMP_ERR_INVALID_ARGUMENT,
               "layer: poly_split 5 with l2_prefetch_mb = %d: the prefetch runs under the "
               "selection kernel, which a switch node's bodies start after (0 with split 5)",
               d->l2_prefetch_mb);
    return RAMP_OK;
}

/* Size classes: a kernel per class, each with the plan's indices
 * (ramp_poly_desc.label) and sized for its own largest batch */
static ramp_status create_classes(ramp_layer *L, const ramp_select_desc *sd,
                                  const ramp_poly_desc *whole) {
    int tokens[RAMP_SELECT_MAX_ENTRIES];
    unsigned masks[RAMP_SELECT_MAX_ENTRIES];
    const int n = ramp_select_size_classes(sd, tokens, masks);
    for (int c = 0; c < n; c++) {
        ramp_poly_desc pd = *whole;
        pd.count = 0;
        memset(pd.label, 0, sizeof pd.label);
        for (int i = 0; i < whole->count; i++) {
            if (!((masks[c] >> i) & 1u)) continue;
            pd.cfgs[pd.count] = whole->cfgs[i];
            pd.label[pd.count++] = i;
        }
        size_class *k = &L->cls[L->ncls];
        k->tokens = tokens[c];
        k->mask = masks[c];
        ramp_status s = ramp_moe_poly_create(L->gpu, &pd,
                                             (int64_t)tokens[c] * L->plan.geom.topk, &k->poly);
        if (s != RAMP_OK) return s;
        L->ncls++;
        RAMP_TRY(ramp_moe_poly_set_weights(k->poly, L->desc.w13, L->desc.w2));
    }
    return RAMP_OK;
}

/* Everything ramp_layer_create checks before it touches the GPU, and the
 * two kernels' descriptors it builds from the plan and the descriptor. */
static ramp_status prepare(const ramp_plan *plan, const ramp_layer_desc *d,
                           ramp_select_desc *sd, ramp_poly_desc *pd) {
    RAMP_TRY(ramp_plan_validate(plan));
    RAMP_TRY(check_desc(plan, d));
    RAMP_CHECK(plan->count <= RAMP_SELECT_MAX_ENTRIES, RAMP_ERR_INVALID_ARGUMENT,
               "layer: menu of %d entries, the selection kernel takes %d", plan->count,
               RAMP_SELECT_MAX_ENTRIES);
    memset(sd, 0, sizeof *sd);
    sd->experts = d->experts;
    sd->topk = plan->geom.topk;
    sd->max_tokens = d->max_tokens;
    sd->local_experts = d->local_experts;
    sd->local_of = d->local_of;
    sd->first_expert = d->first_expert;
    sd->nentries = plan->count;
    sd->one_shape = d->select_one_shape;
    sd->pdl_wait = d->select_pdl;
    for (int i = 0; i < plan->count; i++)
        RAMP_TRY(ramp_select_entry_from_plan(plan, i, &sd->entries[i]));
    RAMP_TRY(ramp_select_desc_check(sd));

    memset(pd, 0, sizeof *pd);
    pd->geom = plan->geom;
    pd->geom.experts = d->local_experts;
    pd->xbf16 = d->hidden_bf16;
    pd->kernel = d->kernel;
    pd->red4 = d->w2_red4;
    pd->l2pf_mb = d->l2_prefetch_mb;
    pd->bf16_pipe = d->bf16_pipe;
    pd->det = d->deterministic;
    pd->split = d->poly_split;
    pd->top_wait = d->poly_top_wait;
    pd->units = d->weight_units;
    pd->count = plan->count;
    memcpy(pd->cfgs, plan->configs, sizeof(ramp_config) * (size_t)plan->count);
    return ramp_moe_poly_check(pd);
}

ramp_status ramp_layer_check(const ramp_plan *plan, const ramp_layer_desc *d) {
    RAMP_CHECK(plan && d, RAMP_ERR_INVALID_ARGUMENT, "ramp_layer_check: NULL argument");
    ramp_select_desc sd;
    ramp_poly_desc pd;
    return prepare(plan, d, &sd, &pd);
}

ramp_status ramp_layer_create(ramp_gpu *gpu, const ramp_plan *plan, const ramp_layer_desc *d,
                              ramp_layer **out) {
    RAMP_CHECK(gpu && plan && d && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_layer_create: NULL argument");
    ramp_select_desc sd;
    ramp_poly_desc pd;
    RAMP_TRY(prepare(plan, d, &sd, &pd));
    ramp_gpu_info gi;
    RAMP_TRY(ramp_gpu_get_info(gpu, &gi));

    ramp_layer *L = ramp_calloc(1, sizeof *L);
    if (!L) return RAMP_ERR_OUT_OF_MEMORY;
    L->gpu = gpu;
    L->plan = *plan;
    L->desc = *d;
    L->desc.local_of = NULL;
    ramp_status s = ramp_selector_create_switch(gpu, &sd, d->poly_split == 5, &L->sel);
    if (s == RAMP_OK && d->poly_split == 5) s = ramp_stream_create(gpu, &L->body);
    if (s == RAMP_OK) s = ramp_selector_device(L->sel, &L->sdev);
    if (s == RAMP_OK && L->sdev.max_tiles > INT_MAX)
        s = ramp_set_error(RAMP_ERR_INVALID_ARGUMENT, __FILE__, __LINE__,
                           "layer: %lld row tiles exceed the kernel's int range",
                           (long long)L->sdev.max_tiles);
    if (s == RAMP_OK)
        s = ramp_moe_poly_create(gpu, &pd, (int64_t)d->max_tokens * plan->geom.topk, &L->poly);
    /* v2: the weights' tensor maps, once (the weights do not move) */
    if (s == RAMP_OK) s = ramp_moe_poly_set_weights(L->poly, d->w13, d->w2);
    /* (labelled kernels: v2, and no per-entry chain) */
    if (s == RAMP_OK && !d->one_menu && d->kernel == RAMP_KERNEL_V2 && d->poly_split != 5 &&
        (d->local_experts == 1 || d->many_expert_classes))
        s = create_classes(L, &sd, &pd);
    if (s == RAMP_OK) {
        int mt = (int)L->sdev.max_tiles;
        size_t wsb = ramp_moe_poly_ws_bytes(L->poly, mt);
        size_t cb = ramp_moe_poly_counter_bytes(L->poly, mt);
        if (wsb) s = ramp_gpu_alloc(gpu, wsb, &L->ws);
        if (s == RAMP_OK && cb) s = ramp_gpu_alloc(gpu, cb, &L->ws_count);
        if (s == RAMP_OK) s = ramp_gpu_alloc(gpu, RAMP_POLY_SCHED_BYTES, &L->sched);
        /* The kernel leaves its split-K and scheduler counters at zero;
         * start there. */
        void *zero = ramp_calloc(1, cb + RAMP_POLY_SCHED_BYTES);
        if (s == RAMP_OK && !zero) s = RAMP_ERR_OUT_OF_MEMORY;
        if (s == RAMP_OK && cb) s = ramp_gpu_upload(gpu, L->ws_count, zero, cb);
        if (s == RAMP_OK) s = ramp_gpu_upload(gpu, L->sched, zero, RAMP_POLY_SCHED_BYTES);
        free(zero);
    }
    if (s == RAMP_OK && d->deterministic) { /* per-pair rows; the combine's locality map */
        s = ramp_gpu_alloc(gpu, ramp_moe_poly_pair_ws_bytes(
                                    L->poly, (int64_t)d->max_tokens * plan->geom.topk),
                           &L->pws);
        if (s == RAMP_OK && d->local_of) {
            s = ramp_gpu_alloc(gpu, sizeof(int32_t) * (size_t)d->experts, &L->local_dev);
            if (s == RAMP_OK)
                s = ramp_gpu_upload(gpu, L->local_dev, d->local_of,
                                    sizeof(int32_t) * (size_t)d->experts);
        }
    }
    if (s != RAMP_OK) {
        ramp_layer_free(L);
        return s;
    }
    ramp_layer_info *in = &L->info;
    in->entries = plan->count;
    memcpy(in->configs, plan->configs, sizeof(ramp_config) * (size_t)plan->count);
    int threads;
    long long smem;
    ramp_moe_poly_shape(&pd, &threads, &smem);
    const ramp_resources *res = ramp_moe_poly_resources(L->poly);
    in->threads = threads;
    in->smem_bytes = smem;
    in->registers = res->regs_per_thread;
    in->blocks_per_sm = res->blocks_per_sm;
    in->kernel = d->kernel;
    in->grid = ramp_moe_poly_grid(L->poly);
    in->plan_sms = plan->sms;
    in->device_sms = gi.limits.sms;
    ramp_plan_gpu_mismatch(plan, gi.limits.name, gi.limits.sms, in->warning,
                           sizeof in->warning);
    if (plan->kernel != d->kernel) {
        size_t n = strlen(in->warning);
        snprintf(in->warning + n, sizeof in->warning - n,
                 "%splan fit on kernel %s times, the layer runs %s: choices may be off",
                 n ? "; " : "", ramp_kernel_version_name((ramp_kernel_version)plan->kernel),
                 ramp_kernel_version_name((ramp_kernel_version)d->kernel));
    }
    if (plan->weight_units != d->weight_units) {
        size_t n = strlen(in->warning);
        snprintf(in->warning + n, sizeof in->warning - n,
                 "%splan fit on %s weights, the layer reads %s: choices may be off",
                 n ? "; " : "", plan->weight_units ? "stage-unit" : "row-major",
                 d->weight_units ? "stage units" : "row-major");
    }
    in->select = L->sdev;
    in->size_classes = L->ncls;
    for (int c = 0; c < L->ncls; c++) {
        in->class_tokens[c] = L->cls[c].tokens;
        in->class_entries[c] = L->cls[c].mask;
    }
    in->pair_ws = L->pws;
    in->pair_ws_bytes = L->pws ? ramp_moe_poly_pair_ws_bytes(
                                     L->poly, (int64_t)d->max_tokens * plan->geom.topk)
                               : 0;
    *out = L;
    return RAMP_OK;
}

ramp_status ramp_layer_run(ramp_layer *L, const ramp_layer_io *io, ramp_stream stream) {
    RAMP_CHECK(L && io, RAMP_ERR_INVALID_ARGUMENT, "ramp_layer_run: NULL argument");
    RAMP_CHECK(stream, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_layer_run: NULL stream (the legacy stream cannot be captured)");
    RAMP_CHECK(io->tokens_dev || (io->tokens >= 0 && io->tokens <= L->desc.max_tokens),
               RAMP_ERR_INVALID_ARGUMENT, "ramp_layer_run: tokens = %d outside 0..%d",
               io->tokens, L->desc.max_tokens);
    RAMP_CHECK(io->x && io->topk_ids && io->topk_weights && io->out,
               RAMP_ERR_INVALID_ARGUMENT,
               "ramp_layer_run: x, topk_ids, topk_weights and out are required");
    RAMP_CHECK(L->desc.bf16 || L->desc.hidden_bf16 || io->x_scale, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_layer_run: FP8 hidden states need x_scale");
    /* both kernels add float4s into out (v1 always, v2 since session 52) */
    RAMP_CHECK(io->out % 16 == 0, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_layer_run: the kernels add float4s: out (0x%llx) must be 16-byte aligned",
               (unsigned long long)io->out);
    /* poly_split 5 in a capture: the selection sets a switch node that runs
     * the chosen entry's kernels alone */
    int capturing = 0;
    ramp_switch sw = {0};
    if (L->desc.poly_split == 5) RAMP_TRY(ramp_stream_capturing(L->gpu, stream, &capturing));
    if (capturing) RAMP_TRY(ramp_switch_handle(L->gpu, stream, (unsigned)L->plan.count, &sw));
    /* size classes: a host count runs the smallest class covering it */
    const size_class *cls = NULL;
    for (int c = 0; !io->tokens_dev && c < L->ncls && !cls; c++)
        if (io->tokens <= L->cls[c].tokens) cls = &L->cls[c];
    RAMP_TRY(ramp_selector_launch_masked(L->sel, io->topk_ids, io->tokens, io->tokens_dev,
                                         sw.handle, cls ? cls->mask : 0, stream));
    ramp_moe_params p;
    memset(&p, 0, sizeof p);
    p.x = io->x;
    p.x_scale = io->x_scale;
    p.w13 = L->desc.w13;
    p.w13_scale = L->desc.w13_scale;
    p.w2 = L->desc.w2;
    p.w2_scale = L->desc.w2_scale;
    p.topk_weights = io->topk_weights;
    p.sorted_ids = L->sdev.sorted_ids;
    p.tile_expert = L->sdev.tile_expert;
    p.num_tiles = L->sdev.meta + 4 * RAMP_SELECT_META_TILES;
    p.out = L->desc.deterministic ? L->pws : io->out;
    p.ws = L->ws;
    p.ws_count = L->ws_count;
    /* Slot ids bound the token count; with a device-side count the selection
     * kernel only emits ids of the tokens it processed. */
    p.num_tokens = io->tokens_dev ? L->desc.max_tokens : io->tokens;
    p.max_tiles = (int)L->sdev.max_tiles;
    const ramp_devptr choice = L->sdev.meta + 4 * RAMP_SELECT_META_CHOSEN;
    const int pdl = ramp_moe_poly_pdl_mode(L->desc.serial_launch);
    if (capturing) {
        RAMP_TRY(ramp_switch_add(L->gpu, stream, &sw));
        for (int i = 0; i < L->plan.count; i++) {
            RAMP_TRY(ramp_switch_body_begin(L->gpu, &sw, (unsigned)i, L->body));
            ramp_status st = ramp_moe_poly_launch_entry(L->poly, &p, choice, L->sched, L->body,
                                                        pdl, i);
            ramp_status end = ramp_switch_body_end(L->gpu, L->body);
            RAMP_TRY(st);
            RAMP_TRY(end);
        }
    } else {
        RAMP_TRY(ramp_moe_poly_launch_mode(cls ? cls->poly : L->poly, &p, choice, L->sched,
                                           stream, pdl));
    }
    if (!L->desc.deterministic) return RAMP_OK;
    const ramp_poly_locality loc = {L->local_dev, L->desc.first_expert, L->desc.local_experts,
                                    L->desc.experts};
    /* grid for the call's tokens when the host knows them; PDL unless the
     * layer runs serially */
    return ramp_moe_poly_combine(L->poly, io->out, L->pws, io->topk_ids, choice,
                                 L->sdev.meta + 4 * RAMP_SELECT_META_TOKENS, &loc,
                                 (int64_t)p.num_tokens * L->plan.geom.topk, p.num_tokens,
                                 L->desc.serial_launch != 1 && !capturing, stream);
}

ramp_status ramp_layer_get_info(const ramp_layer *L, ramp_layer_info *out) {
    RAMP_CHECK(L && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_layer_get_info: NULL argument");
    *out = L->info;
    return RAMP_OK;
}

ramp_status ramp_weights_to_units(const int64_t w13_shape[3], const int64_t w2_shape[3],
                                  int elem_bytes, const void *w13, const void *w2,
                                  void *w13_dst, void *w2_dst) {
    RAMP_CHECK(w13_shape && w2_shape && w13 && w2 && w13_dst && w2_dst,
               RAMP_ERR_INVALID_ARGUMENT, "ramp_weights_to_units: NULL argument");
    RAMP_CHECK(elem_bytes == 1 || elem_bytes == 2, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_weights_to_units: elem_bytes %d (1: FP8, 2: BF16)", elem_bytes);
    RAMP_CHECK(w13_shape[0] >= 1 && w13_shape[0] <= INT_MAX && w13_shape[2] >= 1 &&
                   w13_shape[2] <= INT_MAX && w13_shape[1] >= 2 && w13_shape[1] % 2 == 0 &&
                   w13_shape[1] / 2 <= INT_MAX && w2_shape[0] == w13_shape[0] &&
                   w2_shape[1] == w13_shape[2] && w2_shape[2] == w13_shape[1] / 2,
               RAMP_ERR_INVALID_ARGUMENT,
               "ramp_weights_to_units: shapes {%lld, %lld, %lld} and {%lld, %lld, %lld} are not "
               "W13 [EL, 2h, d] and W2 [EL, d, h] of one layer",
               (long long)w13_shape[0], (long long)w13_shape[1], (long long)w13_shape[2],
               (long long)w2_shape[0], (long long)w2_shape[1], (long long)w2_shape[2]);
    ramp_geometry g;
    memset(&g, 0, sizeof g);
    g.experts = (int)w13_shape[0];
    g.inter = (int)(w13_shape[1] / 2);
    g.hidden = (int)w13_shape[2];
    g.bf16 = elem_bytes == 2;
    return ramp_moe_v2_tile_weights_order(&g, 3, (const uint8_t *)w13, (const uint8_t *)w2,
                                          (uint8_t *)w13_dst, (uint8_t *)w2_dst);
}

ramp_status ramp_w2_to_red4(const int64_t w2_shape[3], const void *w2, void *dst) {
    RAMP_CHECK(w2_shape && w2 && dst, RAMP_ERR_INVALID_ARGUMENT, "ramp_w2_to_red4: NULL argument");
    RAMP_CHECK(w2_shape[0] >= 1 && w2_shape[1] >= 1 && w2_shape[2] >= 1 &&
                   w2_shape[0] <= INT_MAX && w2_shape[1] <= INT_MAX && w2_shape[2] <= INT_MAX,
               RAMP_ERR_INVALID_ARGUMENT, "ramp_w2_to_red4: shape {%lld, %lld, %lld}",
               (long long)w2_shape[0], (long long)w2_shape[1], (long long)w2_shape[2]);
    ramp_geometry g;
    memset(&g, 0, sizeof g);
    g.experts = (int)w2_shape[0];
    g.hidden = (int)w2_shape[1];
    g.inter = (int)w2_shape[2];
    return ramp_moe_v2_permute_w2(&g, (const uint8_t *)w2, (uint8_t *)dst);
}
