/*
 * test_moe_poly.c - the polymorphic kernel on the CPU side (NVRTC, no GPU):
 * the generated translation unit holds every entry once, in menu order; the
 * launch shape is the widest block and the largest layout; the kernel
 * compiles for sm_90a with no spills, no stack and no static shared memory;
 * bad menus are refused before any compile. Prints Table 12 (registers and
 * shared memory per entry alone and of the polymorphic kernel). Exit 77
 * without NVRTC.
 */
#include "check.h"
#include "moe_poly.h"

/* A menu that mixes every axis the dispatcher must handle: 128- and
 * 256-thread entries, one n-tile to eight, plain, persistent, grouped and
 * split-K. Qwen3-30B EP8: d 2048, h 768, k 8, 16 local experts. */
static const char *const MENU[] = {"r4.w128.s4", "r8.w256.s3", "r16.w256.s4.persist",
                                   "r32.w256.s2", "r64.w128.s3.persist.grp", "r8.w256.s2.k2"};
#define NMENU ((int)(sizeof MENU / sizeof *MENU))

static ramp_poly_desc qwen3_menu(int bf16, int xbf16) {
    ramp_poly_desc d;
    memset(&d, 0, sizeof d);
    d.geom.experts = 16;
    d.geom.topk = 8;
    d.geom.inter = 768;
    d.geom.hidden = 2048;
    d.geom.bf16 = bf16;
    d.xbf16 = xbf16;
    d.count = NMENU;
    for (int i = 0; i < NMENU; i++) CHECK_OK(ramp_config_parse(MENU[i], &d.cfgs[i]));
    return d;
}

static int count_of(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

static void test_source_and_shape(void) {
    ramp_poly_desc d = qwen3_menu(0, 0);
    char *src = NULL;
    CHECK_OK(ramp_moe_poly_source(&d, &src));
    if (!src) return;
    CHECK_EQ_INT(count_of(src, "#include \"moe_v1.cuh\""), NMENU);
    CHECK_EQ_INT(count_of(src, "RAMP_POLY_CASE("), NMENU);
    /* entry i's namespace precedes entry i + 1's, and its case names it */
    const char *prev = src;
    for (int i = 0; i < NMENU; i++) {
        char ns[64], cs[96];
        snprintf(ns, sizeof ns, "namespace ramp_poly_e%d {", i);
        snprintf(cs, sizeof cs, "RAMP_POLY_CASE(%d, ramp_poly_e%d, %d)", i, i,
                 d.cfgs[i].persistent);
        const char *p = strstr(src, ns);
        CHECK(p && p >= prev);
        if (p) prev = p;
        CHECK(strstr(src, cs) != NULL);
    }
    free(src);

    int threads;
    long long smem;
    ramp_moe_poly_shape(&d, &threads, &smem);
    int want_t = 0;
    long long want_s = 0;
    for (int i = 0; i < NMENU; i++) {
        ramp_moe_variant v = {d.cfgs[i], d.geom, 0};
        ramp_moe_v1_layout l = ramp_moe_v1_layout_for(&v);
        want_t = l.threads > want_t ? l.threads : want_t;
        want_s = l.total > want_s ? l.total : want_s;
    }
    CHECK_EQ_INT(threads, want_t);
    CHECK_EQ_INT(smem, want_s);
    CHECK_EQ_INT(threads, 256); /* the menu mixes 128 and 256 */
}

static void test_bad_menus(void) {
    ramp_poly_desc d = qwen3_menu(0, 0);
    d.count = 0;
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_INVALID_ARGUMENT);
    d.count = RAMP_MENU_MAX + 1;
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_INVALID_ARGUMENT);
    d = qwen3_menu(0, 0);
    d.cfgs[3] = d.cfgs[1];
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_INVALID_ARGUMENT);
    d = qwen3_menu(0, 0);
    d.cfgs[2].width = 384; /* does not divide h = 768 in v1's widths */
    CHECK(ramp_moe_poly_check(&d) != RAMP_OK);
    d = qwen3_menu(0, 0);
    d.cfgs[5].splitk = 3;
    CHECK(ramp_moe_poly_check(&d) != RAMP_OK);
    char *src = (char *)1;
    d = qwen3_menu(0, 0);
    d.count = 0;
    CHECK(ramp_moe_poly_source(&d, &src) != RAMP_OK);
    CHECK(src == (char *)1); /* untouched on failure */
}

/* Compiles one kind and checks the report; prints Table 12's rows. */
static int test_compile(int bf16, int xbf16, const char *kind) {
    ramp_poly_desc d = qwen3_menu(bf16, xbf16);
    ramp_jit_result *r = NULL;
    ramp_status s = ramp_moe_poly_compile(&d, &r);
    if (s == RAMP_ERR_NO_GPU) return 77;
    CHECK_OK(s);
    if (s != RAMP_OK) return 1;
    const ramp_kernel_report *k = ramp_jit_kernel(r, "ramp_moe_poly");
    CHECK(k != NULL);
    if (k) {
        int threads;
        long long smem;
        ramp_moe_poly_shape(&d, &threads, &smem);
        printf("Table 12 (%s, Qwen3-30B EP8): entry, registers, shared memory (B)\n", kind);
        int max_regs = 0;
        for (int i = 0; i < NMENU; i++) {
            ramp_moe_variant v = {d.cfgs[i], d.geom, xbf16};
            ramp_jit_result *one = NULL;
            CHECK_OK(ramp_moe_v1_compile(&v, &one));
            const ramp_kernel_report *o = one ? ramp_jit_kernel(one, "ramp_moe_v1") : NULL;
            ramp_moe_v1_layout l = ramp_moe_v1_layout_for(&v);
            if (o) {
                printf("  %-22s %4d %7lld\n", MENU[i], o->registers, l.total);
                max_regs = o->registers > max_regs ? o->registers : max_regs;
            }
            ramp_jit_result_free(one);
        }
        printf("  %-22s %4d %7lld  (alone: max %d registers)\n", "polymorphic", k->registers,
               smem, max_regs);
        CHECK_EQ_INT(k->spill_store_bytes, 0);
        CHECK_EQ_INT(k->spill_load_bytes, 0);
        CHECK_EQ_INT(k->stack_bytes, 0);
        /* static: only the tile scheduler's broadcast word (the entries'
         * shared memory is all dynamic); ramp_resources_from_report counts it */
        CHECK(k->smem_bytes <= 128);
        CHECK(k->registers >= 32 && k->registers <= 255);
        ramp_device_limits lim;
        ramp_device_limits_h200(&lim);
        ramp_resources res;
        CHECK_OK(ramp_resources_from_report(k, threads, (int)smem, &lim, &res));
        CHECK(res.valid && res.blocks_per_sm >= 1);
    }
    ramp_jit_result_free(r);
    return 0;
}

int main(void) {
    test_source_and_shape();
    test_bad_menus();
    int rc = test_compile(0, 0, "FP8");
    if (rc == 77) {
        printf("test_moe_poly: NVRTC not available, compile checks skipped\n");
        return check_failures ? 1 : 77;
    }
    test_compile(0, 1, "FP8, BF16 input");
    test_compile(1, 0, "BF16");
    return check_finish("test_moe_poly");
}
