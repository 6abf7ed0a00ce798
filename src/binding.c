/*
 * binding.c - the public structs' layouts, by name, for language bindings
 * (python/ramp.py uses ctypes, which has no C compiler to read ramp.h).
 *
 * Why tables and not a layout copied into the binding: ramp_layer_desc
 * grows a field most sessions, and a copy that drifts by one int makes
 * every later option land in the wrong member without an error. Here the
 * compiler computes each offset, size and kind from the header itself.
 * tests/test_binding.c checks that the tables cover their structs.
 */
#include "internal.h"

#include <string.h>

/* 'i' int, 'u' unsigned, 'q'/'Q' 64-bit, 'f' float, 'd' double, 'c' char,
 * 'p' any pointer. Enums are int or unsigned int in GCC and clang. */
#define KIND_OF(x)                                                                       \
    _Generic((x), int: 'i', unsigned: 'u', long: 'q', long long: 'q', unsigned long: 'Q', \
             unsigned long long: 'Q', float: 'f', double: 'd', char: 'c', default: 'p')

#define MEMBER(T, m) (((T *)0)->m) /* only inside sizeof / _Generic: never evaluated */
#define SCALAR(T, m) {#m, offsetof(T, m), sizeof MEMBER(T, m), 1, KIND_OF(MEMBER(T, m))}
#define ARRAY(T, m)                                                                      \
    {#m, offsetof(T, m), sizeof MEMBER(T, m),                                            \
     (int)(sizeof MEMBER(T, m) / sizeof MEMBER(T, m)[0]), KIND_OF(MEMBER(T, m)[0])}
#define STRUCTS(T, m)                                                                    \
    {#m, offsetof(T, m), sizeof MEMBER(T, m),                                            \
     (int)(sizeof MEMBER(T, m) / sizeof MEMBER(T, m)[0]), 'b'}

static const ramp_field layer_desc_fields[] = {
    SCALAR(ramp_layer_desc, w13),
    SCALAR(ramp_layer_desc, w13_scale),
    SCALAR(ramp_layer_desc, w2),
    SCALAR(ramp_layer_desc, w2_scale),
    ARRAY(ramp_layer_desc, w13_shape),
    ARRAY(ramp_layer_desc, w2_shape),
    SCALAR(ramp_layer_desc, bf16),
    SCALAR(ramp_layer_desc, experts),
    SCALAR(ramp_layer_desc, first_expert),
    SCALAR(ramp_layer_desc, local_experts),
    SCALAR(ramp_layer_desc, local_of),
    SCALAR(ramp_layer_desc, max_tokens),
    SCALAR(ramp_layer_desc, hidden_bf16),
    SCALAR(ramp_layer_desc, serial_launch),
    SCALAR(ramp_layer_desc, kernel),
    SCALAR(ramp_layer_desc, w2_red4),
    SCALAR(ramp_layer_desc, l2_prefetch_mb),
    SCALAR(ramp_layer_desc, bf16_pipe),
    SCALAR(ramp_layer_desc, deterministic),
    SCALAR(ramp_layer_desc, poly_split),
    SCALAR(ramp_layer_desc, poly_top_wait),
    SCALAR(ramp_layer_desc, weight_units),
    SCALAR(ramp_layer_desc, select_one_shape),
    SCALAR(ramp_layer_desc, one_menu),
    SCALAR(ramp_layer_desc, select_pdl),
    SCALAR(ramp_layer_desc, many_expert_classes),
};

static const ramp_field layer_io_fields[] = {
    SCALAR(ramp_layer_io, x),
    SCALAR(ramp_layer_io, x_scale),
    SCALAR(ramp_layer_io, topk_ids),
    SCALAR(ramp_layer_io, topk_weights),
    SCALAR(ramp_layer_io, out),
    SCALAR(ramp_layer_io, tokens),
    SCALAR(ramp_layer_io, tokens_dev),
};

static const ramp_field layer_info_fields[] = {
    SCALAR(ramp_layer_info, entries),
    STRUCTS(ramp_layer_info, configs),
    SCALAR(ramp_layer_info, threads),
    SCALAR(ramp_layer_info, smem_bytes),
    SCALAR(ramp_layer_info, registers),
    SCALAR(ramp_layer_info, blocks_per_sm),
    SCALAR(ramp_layer_info, kernel),
    SCALAR(ramp_layer_info, grid),
    SCALAR(ramp_layer_info, plan_sms),
    SCALAR(ramp_layer_info, device_sms),
    ARRAY(ramp_layer_info, warning),
    SCALAR(ramp_layer_info, pair_ws),
    SCALAR(ramp_layer_info, pair_ws_bytes),
    SCALAR(ramp_layer_info, size_classes),
    ARRAY(ramp_layer_info, class_tokens),
    ARRAY(ramp_layer_info, class_entries),
};

static const ramp_field plan_fields[] = {
    ARRAY(ramp_plan, model),
    ARRAY(ramp_plan, layout),
    ARRAY(ramp_plan, device),
    ARRAY(ramp_plan, libramp),
    SCALAR(ramp_plan, geom.experts),
    SCALAR(ramp_plan, geom.topk),
    SCALAR(ramp_plan, geom.inter),
    SCALAR(ramp_plan, geom.hidden),
    SCALAR(ramp_plan, geom.bf16),
    SCALAR(ramp_plan, sms),
    SCALAR(ramp_plan, blocks_per_sm),
    SCALAR(ramp_plan, count),
    STRUCTS(ramp_plan, configs),
    SCALAR(ramp_plan, checksum),
    SCALAR(ramp_plan, kernel),
    SCALAR(ramp_plan, cost_model),
    SCALAR(ramp_plan, weight_units),
};

static const ramp_field gpu_info_fields[] = {
    ARRAY(ramp_gpu_info, limits.name),
    SCALAR(ramp_gpu_info, limits.sms),
    SCALAR(ramp_gpu_info, limits.smem_per_block),
    SCALAR(ramp_gpu_info, limits.smem_per_sm),
    SCALAR(ramp_gpu_info, limits.regs_per_sm),
    SCALAR(ramp_gpu_info, limits.max_threads_per_sm),
    SCALAR(ramp_gpu_info, limits.max_blocks_per_sm),
    SCALAR(ramp_gpu_info, ordinal),
    SCALAR(ramp_gpu_info, cc_major),
    SCALAR(ramp_gpu_info, cc_minor),
    SCALAR(ramp_gpu_info, l2_bytes),
    SCALAR(ramp_gpu_info, max_threads_per_block),
    SCALAR(ramp_gpu_info, clock_khz),
    SCALAR(ramp_gpu_info, global_bytes),
    SCALAR(ramp_gpu_info, driver_version),
};

#define TABLE(T, f) {#T, sizeof(T), f, (int)(sizeof f / sizeof f[0])}
static const struct {
    const char *type;
    size_t size;
    const ramp_field *fields;
    int count;
} tables[] = {
    TABLE(ramp_layer_desc, layer_desc_fields), TABLE(ramp_layer_io, layer_io_fields),
    TABLE(ramp_layer_info, layer_info_fields), TABLE(ramp_plan, plan_fields),
    TABLE(ramp_gpu_info, gpu_info_fields),
};

const ramp_field *ramp_struct_fields(const char *type, size_t *size, int *count) {
    ramp_clear_error();
    for (size_t i = 0; type && i < sizeof tables / sizeof tables[0]; i++)
        if (strcmp(type, tables[i].type) == 0) {
            if (size) *size = tables[i].size;
            if (count) *count = tables[i].count;
            return tables[i].fields;
        }
    ramp_set_error(RAMP_ERR_NOT_FOUND, __FILE__, __LINE__,
                   "ramp_struct_fields: no public struct \"%s\" (ramp_layer_desc, ramp_layer_io, "
                   "ramp_layer_info, ramp_plan, ramp_gpu_info)",
                   type ? type : "(null)");
    return NULL;
}

const char *ramp_version(void) { return RAMP_VERSION_STRING; }
