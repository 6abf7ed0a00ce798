/*
 * test_binding.c - what a language binding relies on, with no GPU:
 *  1. ramp_struct_fields: every table entry is its member (offset, size,
 *     kind and count against offsetof/sizeof here), the entries tile their
 *     struct with no hole a member could hide in (so a field added to the
 *     header and not to the table fails here), unknown names refused;
 *  2. ramp_layer_check: the checks ramp_layer_create makes before the GPU,
 *     each refusal naming its field, and a descriptor it accepts;
 *  3. ramp_version.
 */
#include "check.h"

#include <stddef.h>

/* Bytes of one element of a kind (0: 'b', sized by the table). */
static size_t kind_bytes(char kind) {
    switch (kind) {
    case 'i': case 'u': case 'f': return 4;
    case 'q': case 'Q': case 'd': case 'p': return 8;
    case 'c': return 1;
    default: return 0;
    }
}

static const ramp_field *find(const ramp_field *f, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(f[i].name, name) == 0) return &f[i];
    return NULL;
}

/* A member the table leaves out on purpose: [offset, offset + size). */
typedef struct {
    size_t offset, size;
} omitted;

/* The table of `type` is ordered, each entry's size its count x kind, and
 * together with `skip` it covers the struct: any hole is padding, shorter
 * than the next member's alignment (at most 7 bytes, and none before a
 * 4-byte member), so no int or pointer is missing. */
static void check_table(const char *type, const omitted *skip, int nskip) {
    size_t size = 0;
    int n = 0;
    const ramp_field *f = ramp_struct_fields(type, &size, &n);
    CHECK(f != NULL);
    if (!f) return;
    CHECK(n >= 5 && size > 0);
    size_t end = 0; /* covered up to here */
    int k = 0;
    for (int i = 0; i < n; i++) {
        const ramp_field *e = &f[i];
        CHECK(e->name && e->name[0]);
        CHECK(e->count >= 1);
        const size_t eb = kind_bytes(e->kind);
        if (e->kind == 'b')
            CHECK(e->size % (size_t)e->count == 0);
        else if (eb == 0 || e->size != eb * (size_t)e->count) {
            fprintf(stderr, "%s.%s: kind '%c' x %d is not its %zu bytes\n", type, e->name,
                    e->kind, e->count, e->size);
            check_failures++;
        }
        /* the omitted members before this one */
        while (k < nskip && skip[k].offset < e->offset) {
            CHECK(skip[k].offset >= end && skip[k].offset - end < 8);
            end = skip[k].offset + skip[k].size;
            k++;
        }
        const size_t align = e->kind == 'b' ? 4 : (eb ? eb : 1);
        if (e->offset < end || e->offset - end >= (align < 8 ? align : 8) ||
            e->offset + e->size > size) {
            fprintf(stderr, "%s.%s at %zu (+%zu): covered up to %zu of %zu: a member is "
                    "missing from the table or overlaps\n",
                    type, e->name, e->offset, e->size, end, size);
            check_failures++;
        }
        end = e->offset + e->size;
    }
    for (; k < nskip; k++) {
        CHECK(skip[k].offset >= end && skip[k].offset - end < 8);
        end = skip[k].offset + skip[k].size;
    }
    if (size - end >= 8) {
        fprintf(stderr, "%s: the table ends at %zu of %zu bytes\n", type, end, size);
        check_failures++;
    }
}

#define EXPECT_FIELD(T, m, kindc, cnt)                                                   \
    do {                                                                                 \
        size_t sz_;                                                                      \
        int n_;                                                                          \
        const ramp_field *t_ = ramp_struct_fields(#T, &sz_, &n_);                        \
        const ramp_field *e_ = t_ ? find(t_, n_, #m) : NULL;                             \
        CHECK(e_ != NULL);                                                               \
        if (e_) {                                                                        \
            CHECK_EQ_INT(sz_, sizeof(T));                                                \
            CHECK_EQ_INT(e_->offset, offsetof(T, m));                                    \
            CHECK_EQ_INT(e_->size, sizeof(((T *)0)->m));                                 \
            CHECK_EQ_INT(e_->kind, kindc);                                               \
            CHECK_EQ_INT(e_->count, cnt);                                                \
        }                                                                                \
    } while (0)

static void test_fields(void) {
    /* one of every kind, against the header as this file sees it */
    EXPECT_FIELD(ramp_layer_desc, w13, 'Q', 1);
    EXPECT_FIELD(ramp_layer_desc, w2_shape, 'q', 3);
    EXPECT_FIELD(ramp_layer_desc, local_of, 'p', 1);
    EXPECT_FIELD(ramp_layer_desc, select_pdl, 'i', 1);
    EXPECT_FIELD(ramp_layer_io, tokens, 'i', 1);
    EXPECT_FIELD(ramp_layer_io, tokens_dev, 'Q', 1);
    EXPECT_FIELD(ramp_layer_info, grid, 'u', 1);
    EXPECT_FIELD(ramp_layer_info, smem_bytes, 'q', 1);
    EXPECT_FIELD(ramp_layer_info, warning, 'c', 256);
    EXPECT_FIELD(ramp_layer_info, configs, 'b', RAMP_MENU_MAX);
    EXPECT_FIELD(ramp_layer_info, class_entries, 'u', RAMP_MENU_MAX);
    EXPECT_FIELD(ramp_plan, geom.hidden, 'i', 1);
    EXPECT_FIELD(ramp_plan, model, 'c', RAMP_NAME_MAX);
    EXPECT_FIELD(ramp_gpu_info, limits.sms, 'i', 1);
    EXPECT_FIELD(ramp_gpu_info, global_bytes, 'Q', 1);

    check_table("ramp_layer_desc", NULL, 0);
    check_table("ramp_layer_io", NULL, 0);
    const omitted info_skip[] = {{offsetof(ramp_layer_info, select),
                                  sizeof(((ramp_layer_info *)0)->select)}};
    check_table("ramp_layer_info", info_skip, 1);
    const omitted plan_skip[] = {
        {offsetof(ramp_plan, theta), sizeof(((ramp_plan *)0)->theta)},
        {offsetof(ramp_plan, slots), sizeof(((ramp_plan *)0)->slots)}};
    check_table("ramp_plan", plan_skip, 2);
    check_table("ramp_gpu_info", NULL, 0);

    size_t size = 123;
    int n = 45;
    CHECK(ramp_struct_fields("ramp_layer", &size, &n) == NULL);
    CHECK(strstr(ramp_last_error(), "\"ramp_layer\"") != NULL);
    CHECK(size == 123 && n == 45); /* untouched on failure */
    CHECK(ramp_struct_fields(NULL, &size, &n) == NULL);
    CHECK(strcmp(ramp_version(), RAMP_VERSION_STRING) == 0);
}

/* Qwen3-30B EP8's geometry, a two-entry menu */
static ramp_plan small_plan(int kernel) {
    ramp_plan p;
    memset(&p, 0, sizeof p);
    snprintf(p.model, sizeof p.model, "qwen3-30b");
    snprintf(p.layout, sizeof p.layout, "EP8");
    snprintf(p.device, sizeof p.device, "test");
    snprintf(p.libramp, sizeof p.libramp, "%s", RAMP_VERSION_STRING);
    p.geom = (ramp_geometry){16, 8, 768, 2048, 0};
    p.kernel = kernel;
    p.sms = 132;
    p.blocks_per_sm = 1;
    p.count = 2;
    CHECK_OK(ramp_config_parse("r8.w128.s4", &p.configs[0]));
    CHECK_OK(ramp_config_parse("r32.w256.s4", &p.configs[1]));
    for (int i = 0; i < 2; i++) {
        p.theta[i][0] = 5 + i;
        p.theta[i][1] = 1;
        p.theta[i][2] = 0.1;
        p.theta[i][3] = 0.1;
    }
    return p;
}

static ramp_layer_desc small_desc(int kernel) {
    ramp_layer_desc d;
    memset(&d, 0, sizeof d);
    d.w13 = 0x1000; d.w13_scale = 0x2000; d.w2 = 0x3000; d.w2_scale = 0x4000;
    const int64_t s13[3] = {16, 1536, 2048}, s2[3] = {16, 2048, 768};
    memcpy(d.w13_shape, s13, sizeof s13);
    memcpy(d.w2_shape, s2, sizeof s2);
    d.experts = 128;
    d.local_experts = 16;
    d.max_tokens = 256;
    d.kernel = kernel;
    return d;
}

/* the call refused with `status`, its message holding `needle` */
static void refused(const ramp_plan *p, const ramp_layer_desc *d, ramp_status status,
                    const char *needle) {
    CHECK_ERR(ramp_layer_check(p, d), status);
    if (!strstr(ramp_last_error(), needle)) {
        fprintf(stderr, "expected \"%s\" in: %s\n", needle, ramp_last_error());
        check_failures++;
    }
}

static void test_layer_check(void) {
    for (int kernel = RAMP_KERNEL_V1; kernel <= RAMP_KERNEL_V2; kernel++) {
        ramp_plan p = small_plan(kernel);
        ramp_layer_desc d = small_desc(kernel);
        CHECK_OK(ramp_layer_check(&p, &d));

        ramp_layer_desc b = d;
        b.w13_shape[1] = 1024;
        refused(&p, &b, RAMP_ERR_INVALID_ARGUMENT, "w13 shape [16, 1024, 2048]");
        b = d;
        b.local_experts = 17;
        refused(&p, &b, RAMP_ERR_INVALID_ARGUMENT, "local_experts = 17");
        b = d;
        b.experts = 64;
        refused(&p, &b, RAMP_ERR_INVALID_ARGUMENT, "E = 64");
        b = d;
        b.w2_scale = 0;
        refused(&p, &b, RAMP_ERR_INVALID_ARGUMENT, "w2_scale");
        b = d;
        b.select_pdl = 2;
        refused(&p, &b, RAMP_ERR_INVALID_ARGUMENT, "select_pdl = 2");
        b = d;
        b.many_expert_classes = -1;
        refused(&p, &b, RAMP_ERR_INVALID_ARGUMENT, "many_expert_classes = -1");
        ramp_plan q = p;
        q.geom.bf16 = 1;
        refused(&q, &d, RAMP_ERR_INVALID_ARGUMENT, "the plan is for BF16");
        q = p;
        q.sms = 0; /* an invalid plan: the plan's own check comes first */
        CHECK_ERR(ramp_layer_check(&q, &d), RAMP_ERR_INVALID_ARGUMENT);
    }
    /* a v1 plan's entry that kernel v2 does not run (persistent launch):
     * the layer on v2 names it */
    ramp_plan p = small_plan(RAMP_KERNEL_V1);
    CHECK_OK(ramp_config_parse("r16.w256.s4.persist", &p.configs[1]));
    ramp_layer_desc d = small_desc(RAMP_KERNEL_V2);
    refused(&p, &d, RAMP_ERR_UNSUPPORTED, "persist");
    d.kernel = RAMP_KERNEL_V1; /* v1 runs it */
    CHECK_OK(ramp_layer_check(&p, &d));
    CHECK_ERR(ramp_layer_check(NULL, &d), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_layer_check(&p, NULL), RAMP_ERR_INVALID_ARGUMENT);
}

int main(void) {
    test_fields();
    test_layer_check();
    return check_finish("test_binding");
}
