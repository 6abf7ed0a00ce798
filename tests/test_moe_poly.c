/*
 * test_moe_poly.c - the polymorphic kernel on the CPU side (NVRTC, no GPU):
 * the generated translation unit holds every entry once, in menu order; the
 * launch shape is the widest block and the largest layout; the kernel
 * compiles for sm_90a with no spills, no stack and no static shared memory;
 * bad menus are refused before any compile. Prints Table 12 (registers and
 * shared memory per entry alone and of the polymorphic kernel). Exit 77
 * without NVRTC.
 *
 * The same for menus of Hopper kernel v2 entries (kernels/moe_poly_v2.cuh),
 * Qwen3-30B EP8 and DeepSeek-V3 EP8: the generated unit (one namespace per
 * entry, setup / producer / consumer cases in menu order), the shape (384
 * threads, the largest v2 layout), and ptxas's report of ramp_moe_poly_v2:
 * no spills, no stack, no static shared memory, exactly RAMP_MV2_REGS
 * registers at entry (setmaxnreg's arithmetic), no ptxas warning (C7508:
 * setmaxnreg ignored) and none of the info lines saying that wgmma are
 * serialised or a wait injected (C7514, C7517; as test_moe_v2_compile);
 * and the refusals (persistent, grouped, split-K, BF16, BF16 input,
 * stages outside 2..6, a width not dividing h), each naming the entry.
 * A DeepSeek-V3 menu with wide tiles, fused and two-phase: the second
 * kernel (their phase 2) too, with the same checks; the first kernel once
 * spilled here (moe_v2.md, session 7). A Mixtral-8x22B menu with narrow
 * two-phase entries (session 14) beside fused and wide ones, the same.
 * RAMP_MOE_POLY_CUBIN_DIR=dir writes the v2 kernels' cubins there
 * (poly-v2-<model>[-wide].cubin; tools/gpu-check step layer_v2 disassembles them).
 */
#include "check.h"
#include "moe_poly.h"
#include "moe_v2_util.h"

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

/* ------------------------------------------------------------ v2 menus */

/* Menus of six v2 entries: every wgmma N (8 .. 64), both (all three)
 * widths, 2-4 stages (the configuration space's); Qwen3's holds a split-K
 * entry (r8.w128.s4.k2: a cluster of two CTAs per tile). */
static const char *const MENU_V2_QWEN[] = {"r4.w128.s4",  "r8.w128.s4.k2", "r16.w256.s4",
                                           "r24.w256.s3", "r32.w256.s4",   "r64.w128.s2"};
static const char *const MENU_V2_DSV3[] = {"r4.w128.s4",  "r8.w256.s4",  "r16.w512.s3",
                                           "r32.w512.s4", "r48.w256.s4", "r64.w512.s4"};
/* Wide tiles beside narrow ones: fused, and two-phase with 1, 2, 4 K parts
 * (their phase 2 in the second kernel, ramp_moe_poly_v2_down). */
static const char *const MENU_V2_WIDE[] = {"r8.w256.s4",          "r64.w512.s4",
                                           "r128.w512.s3",        "r128.w256.s3.ph2",
                                           "r128.w512.s3.ph2.dk2", "r128.w128.s4.ph2.dk4"};
/* Narrow tiles in two launches (Mixtral-8x22B, h = 16,384; session 14)
 * beside fused narrow ones and a wide two-phase one */
static const char *const MENU_V2_NARROW2[] = {"r16.w128.s4.ph2.dk4", "r24.w128.s4",
                                              "r32.w128.s4.ph2.dk8", "r64.w128.s4.ph2.dk8",
                                              "r16.w256.s4",         "r128.w128.s4.ph2.dk4"};

/* Wide tiles whose weights go to pairs of row tiles by TMA multicast
 * (session 15), fused and two-phase, beside plain ones: both kernels are
 * launched in clusters of two */
static const char *const MENU_V2_MCAST[] = {"r16.w128.s4.ph2.dk4",    "r8.w256.s4",
                                            "r128.w128.s4.mc",        "r128.w256.s3.ph2.dk2.mc",
                                            "r128.w512.s3.ph2.dk2",   "r64.w128.s4.ph2.dk8"};

/* Wide tiles with token rows by TMA (".tx", sessions 17-18): fused, two-phase,
 * and with multicast, beside narrow and plain wide ones: the first kernel
 * copies x in tile order when one of them is chosen (RAMP_POLY_TX_MASK) */
static const char *const MENU_V2_TMAX[] = {"r16.w128.s4.ph2.dk4",       "r8.w256.s4",
                                           "r128.w256.s3.tx",           "r128.w256.s3.ph2.dk2.mc.tx",
                                           "r128.w128.s4.ph2.dk2.tx",   "r128.w512.s3.ph2.dk2"};

/* The gather through global memory (".gg", session 36): Mixtral's small-load
 * entries with 8- and 4-block groups beside the two-phase and wide ones a
 * layer's menu holds, and a split-K entry (a cluster of two: the groups are
 * no cluster) */
static const char *const MENU_V2_GG[] = {"r32.w128.s4.gg8",         "r8.w256.s4.k2",
                                         "r16.w128.s4.gg4",         "r64.w128.s4.ph2.dk4",
                                         "r128.w128.s3.ph2.dk4.tx", "r128.w128.s4.ph2.dk2.mc.tx"};

/* A BF16 layer's menu with wide entries, fused and two-phase (bf16_pipe) */
static const char *const MENU_V2_BF16W[] = {"r8.w256.s4",           "r32.w256.s3",
                                            "r128.w256.s3",         "r128.w128.s4.ph2.dk2",
                                            "r128.w256.s3.ph2",     "r16.w512.s3"};

/* Deterministic output (det): every entry two-phase, narrow and wide, with
 * 1, 2, 4 and 8 K parts, multicast and token rows by TMA among them */
static const char *const MENU_V2_DET[] = {"r16.w128.s4.ph2.dk4",        "r64.w128.s4.ph2.dk8",
                                          "r128.w128.s4.ph2.dk2.tx",    "r128.w256.s3.ph2",
                                          "r128.w256.s3.ph2.dk2.mc.tx", "r128.w512.s3.ph2.dk2"};

/* ... and a BF16 layer's (two-phase BF16 entries are wide) */
static const char *const MENU_V2_BF16_DET[] = {"r128.w128.s4.ph2",     "r128.w128.s4.ph2.dk2",
                                               "r128.w256.s3.ph2",     "r128.w256.s3.ph2.dk4",
                                               "r128.w256.s3.ph2.dk2", "r128.w128.s3.ph2.dk4"};

static ramp_poly_desc v2_menu(const char *model, const char *const *menu) {
    ramp_poly_desc d;
    memset(&d, 0, sizeof d);
    CHECK_OK(mv2_geometry(model, &d.geom));
    d.kernel = RAMP_KERNEL_V2;
    d.count = 6;
    for (int i = 0; i < d.count; i++) CHECK_OK(ramp_config_parse(menu[i], &d.cfgs[i]));
    return d;
}

static void test_v2_source_and_shape(void) {
    ramp_poly_desc d = v2_menu("qwen3-30b", MENU_V2_QWEN);
    char *src = NULL;
    CHECK_OK(ramp_moe_poly_source(&d, &src));
    if (!src) return;
    CHECK_EQ_INT(count_of(src, "#include \"moe_v2.cuh\""), d.count);
    CHECK_EQ_INT(count_of(src, "moe_v1.cuh"), 0);
    CHECK_EQ_INT(count_of(src, "#include \"moe_poly_v2.cuh\""), 1);
    /* three switches of one case per entry, in menu order, the role split
     * between the first and the second */
    static const char *const cases[3] = {"RAMP_POLY_V2_SETUP(", "RAMP_POLY_V2_PRODUCER(",
                                         "RAMP_POLY_V2_CONSUMER("};
    const char *prev = strstr(src, "RAMP_POLY_V2_BEGIN");
    CHECK(prev != NULL);
    for (int p = 0; p < 3 && prev; p++)
        for (int i = 0; i < d.count; i++) {
            char cs[96];
            snprintf(cs, sizeof cs, "%s%d, ramp_poly_e%d)", cases[p], i, i);
            const char *q = strstr(src, cs);
            CHECK(q && q > prev);
            if (q) prev = q;
        }
    CHECK(strstr(src, "RAMP_POLY_V2_PRODUCERS") < strstr(src, "RAMP_POLY_V2_PRODUCER(0"));
    CHECK(strstr(src, "RAMP_POLY_V2_END") > strstr(src, "RAMP_POLY_V2_CONSUMER(5"));
    /* the split-K entry (1) alone defines its cluster split, inside its namespace */
    CHECK_EQ_INT(count_of(src, "#define RAMP_MV2_KSPLIT 2\n"), 1);
    CHECK_EQ_INT(count_of(src, "#undef RAMP_MV2_KSPLIT"), d.count);
    {
        const char *ks = strstr(src, "#define RAMP_MV2_KSPLIT 2");
        const char *e1 = strstr(src, "namespace ramp_poly_e1 {"), *e0 = strstr(src, "namespace ramp_poly_e0 {");
        CHECK(ks && e0 && e1 && ks > e0 && ks < e1);
    }
    free(src);
    int threads;
    long long smem, want = 0;
    ramp_moe_poly_shape(&d, &threads, &smem);
    for (int i = 0; i < d.count; i++) {
        ramp_moe_variant v = {d.cfgs[i], d.geom, 0};
        long long t = ramp_moe_v2_layout_for(&v).total;
        want = t > want ? t : want;
    }
    CHECK_EQ_INT(threads, RAMP_MV2_THREADS);
    CHECK_EQ_INT(smem, want);
    CHECK(strcmp(ramp_moe_poly_kernel_name(&d), "ramp_moe_poly_v2") == 0);

    /* two-phase entries: phase 1 in the first kernel, phase 2 in namespaces
     * ramp_poly_d<i> of the second, whose switches hold only those */
    d = v2_menu("deepseek-v3", MENU_V2_WIDE);
    src = NULL;
    CHECK_OK(ramp_moe_poly_source(&d, &src));
    if (!src) return;
    CHECK_EQ_INT(count_of(src, "#include \"moe_v2.cuh\""), d.count + 3);
    CHECK_EQ_INT(count_of(src, "#define RAMP_MV2_PHASE 1"), 3);
    CHECK_EQ_INT(count_of(src, "#define RAMP_MV2_PHASE 2"), 3);
    CHECK_EQ_INT(count_of(src, "#define RAMP_MV2_P2K 1\n"), 1);
    CHECK_EQ_INT(count_of(src, "#define RAMP_MV2_P2K 2\n"), 1);
    CHECK_EQ_INT(count_of(src, "#define RAMP_MV2_P2K 4\n"), 1);
    CHECK_EQ_INT(count_of(src, "#undef RAMP_MV2_PHASE"), d.count + 3);
    const char *down = strstr(src, "RAMP_POLY_V2_BEGIN(ramp_moe_poly_v2_down, ;, ;)");
    const char *first = strstr(src, "RAMP_POLY_V2_BEGIN(ramp_moe_poly_v2, ;, ");
    CHECK(down && first && down > first);
    /* the first kernel lets the second start (only with a second kernel) */
    CHECK(first && strncmp(first + strlen("RAMP_POLY_V2_BEGIN(ramp_moe_poly_v2, ;, "),
                           "asm volatile(\"griddepcontrol.launch_dependents", 44) == 0);
    for (int i = 0; i < d.count && down; i++) {
        char cs[96];
        snprintf(cs, sizeof cs, "RAMP_POLY_V2_CONSUMER(%d, ramp_poly_d%d)", i, i);
        CHECK((strstr(down, cs) != NULL) == (d.cfgs[i].two_phase > 0));
        snprintf(cs, sizeof cs, "RAMP_POLY_V2_SETUP(%d, ramp_poly_e%d)", i, i);
        CHECK(strstr(down, cs) == NULL);
    }
    free(src);

    /* the L2 prefetch under the selection: its size before the prelude, in
     * the first kernel only (the second's blocks start after the first's) */
    d.l2pf_mb = 24;
    src = NULL;
    CHECK_OK(ramp_moe_poly_source(&d, &src));
    if (!src) return;
    CHECK(strstr(src, "#define RAMP_POLY_L2PF_BYTES 25165824ull\n") != NULL &&
          strstr(src, "#define RAMP_POLY_L2PF_BYTES") < strstr(src, "#include \"moe_poly_v2.cuh\""));
    CHECK(strstr(src, "RAMP_POLY_V2_BEGIN(ramp_moe_poly_v2, RAMP_POLY_V2_L2PF(pp.moe), asm") != NULL);
    CHECK(strstr(src, "RAMP_POLY_V2_BEGIN(ramp_moe_poly_v2_down, ;, ;)") != NULL);
    CHECK_EQ_INT(count_of(src, "RAMP_POLY_V2_L2PF"), 1);
    free(src);
}

/* Multicast entries: RAMP_MV2_MCAST inside their namespaces, in both
 * kernels of the two-phase one (entry 3), undefined after every entry. */
static void test_v2_mcast_source(void) {
    char *src = NULL;
    const ramp_poly_desc dm = v2_menu("mixtral-8x22b", MENU_V2_MCAST);
    CHECK_OK(ramp_moe_poly_source(&dm, &src));
    if (!src) return;
    CHECK_EQ_INT(count_of(src, "#define RAMP_MV2_MCAST 1\n"), 3);
    CHECK_EQ_INT(count_of(src, "#undef RAMP_MV2_MCAST"), dm.count + 4);
    /* the first define is entry 2's (after entry 1's namespace, before its
     * own); the last is entry 3's phase 2 (after entry 0's) */
    const char *e1 = strstr(src, "namespace ramp_poly_e1 {"), *e2 = strstr(src, "namespace ramp_poly_e2 {");
    const char *d0 = strstr(src, "namespace ramp_poly_d0 {"), *d3 = strstr(src, "namespace ramp_poly_d3 {");
    const char *first = strstr(src, "#define RAMP_MV2_MCAST 1"), *last = first;
    for (const char *q = first; q; q = strstr(q + 1, "#define RAMP_MV2_MCAST 1")) last = q;
    CHECK(e1 && e2 && d0 && d3 && first && first > e1 && first < e2);
    CHECK(last && last > d0 && last < d3);
    free(src);
}

/* Token rows by TMA: RAMP_MV2_TMA_X 1 inside the .tx entries' namespaces
 * (both kernels of the two-phase ones), undefined after every entry; the
 * copy of x (RAMP_POLY_TX_MASK of entries 2-4, 128 slots, rows of d bytes)
 * defined before the prelude and run after the first kernel's wait only;
 * nothing of it without a .tx entry. Refused: .tx entries of two row counts
 * (one copy), .tx on a narrow tile. */
static void test_v2_tma_x_source(void) {
    char *src = NULL;
    ramp_poly_desc d = v2_menu("mixtral-8x22b", MENU_V2_TMAX);
    CHECK_OK(ramp_moe_poly_source(&d, &src));
    if (!src) return;
    CHECK_EQ_INT(count_of(src, "#define RAMP_MV2_TMA_X 1\n"), 3 + 2); /* 3 entries, 2 two-phase */
    CHECK_EQ_INT(count_of(src, "#undef RAMP_MV2_TMA_X"), d.count + 4);
    const char *e1 = strstr(src, "namespace ramp_poly_e1 {"), *e2 = strstr(src, "namespace ramp_poly_e2 {");
    const char *t = strstr(src, "#define RAMP_MV2_TMA_X 1");
    CHECK(e1 && e2 && t && t > e1 && t < e2); /* entry 2 is the first .tx one */
    const char *m = strstr(src, "#define RAMP_POLY_TX_MASK 0x1cu\n#define RAMP_POLY_TX_SLOTS 128\n"
                                "#define RAMP_POLY_TX_ROW_BYTES 6144\n");
    CHECK(m && m < strstr(src, "#include \"moe_poly_v2.cuh\""));
    CHECK_EQ_INT(count_of(src, "RAMP_POLY_V2_XCOPY()"), 1);
    CHECK(strstr(src, "RAMP_POLY_V2_BEGIN(ramp_moe_poly_v2, ;, asm volatile(\"griddepcontrol."
                      "launch_dependents;\\n\" ::: \"memory\"); RAMP_POLY_V2_XCOPY())") != NULL);
    CHECK(strstr(src, "RAMP_POLY_V2_BEGIN(ramp_moe_poly_v2_down, ;, ;)") != NULL);
    free(src);
    d.geom.bf16 = 1; /* a BF16 layer's rows: 2 d bytes (no narrow two-phase entry) */
    CHECK_OK(ramp_config_parse("r16.w128.s4", &d.cfgs[0]));
    CHECK_OK(ramp_config_parse("r128.w256.s3.ph2", &d.cfgs[5]));
    src = NULL;
    CHECK_OK(ramp_moe_poly_source(&d, &src));
    CHECK(src && strstr(src, "#define RAMP_POLY_TX_ROW_BYTES 12288\n") != NULL);
    free(src);
    d = v2_menu("mixtral-8x22b", MENU_V2_MCAST); /* no .tx entry: nothing of it */
    src = NULL;
    CHECK_OK(ramp_moe_poly_source(&d, &src));
    CHECK(src && !strstr(src, "RAMP_POLY_TX") && !strstr(src, "XCOPY") &&
          !strstr(src, "RAMP_MV2_TMA_X 1"));
    free(src);
    d = v2_menu("mixtral-8x22b", MENU_V2_TMAX);
    d.cfgs[4].rows = 96; /* (v2 runs wide tiles of 65..128 rows) */
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_UNSUPPORTED);
    CHECK(strstr(ramp_last_error(), "one row count") && strstr(ramp_last_error(), "entry 4"));
    d = v2_menu("mixtral-8x22b", MENU_V2_TMAX);
    d.cfgs[1].tma_x = 1; /* r8: narrow */
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_UNSUPPORTED);
    CHECK(strstr(ramp_last_error(), "menu entry 1") && strstr(ramp_last_error(), "tma_x"));
    ramp_config c;
    CHECK_ERR(ramp_config_parse("r64.w128.s4.tx", &c), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), ".tx") != NULL);
    CHECK_ERR(ramp_config_parse("r128.w128.s4.tx.mc", &c), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_OK(ramp_config_parse("r128.w256.s3.ph2.dk2.mc.tx", &c));
    CHECK(c.tma_x == 1 && c.mcast == 1 && c.two_phase == 2);
    char name[64];
    CHECK(strcmp(ramp_config_name(&c, name, sizeof name), "r128.w256.s3.ph2.dk2.mc.tx") == 0);
}

/* The gather through global memory: RAMP_MV2_GGATHER G inside each ".gg"
 * entry's namespace only, undefined after every entry; the configuration
 * grammar and its refusals (a wide, two-phase or split-K tile; G not 2, 4,
 * 8; kernel v1; G not dividing the slices and the down chunks). */
static void test_v2_ggather_source(void) {
    char *src = NULL;
    const ramp_poly_desc d = v2_menu("mixtral-8x22b", MENU_V2_GG);
    CHECK_OK(ramp_moe_poly_source(&d, &src));
    if (!src) return;
    CHECK_EQ_INT(count_of(src, "#define RAMP_MV2_GGATHER 8\n"), 1);
    CHECK_EQ_INT(count_of(src, "#define RAMP_MV2_GGATHER 4\n"), 1);
    CHECK_EQ_INT(count_of(src, "#undef RAMP_MV2_GGATHER"), d.count + 3); /* 3 two-phase */
    const char *g8 = strstr(src, "#define RAMP_MV2_GGATHER 8"), *e0 = strstr(src, "namespace ramp_poly_e0 {");
    const char *g4 = strstr(src, "#define RAMP_MV2_GGATHER 4"), *e1 = strstr(src, "namespace ramp_poly_e1 {");
    const char *e2 = strstr(src, "namespace ramp_poly_e2 {");
    CHECK(g8 && e0 && g8 < e0 && g4 && e1 && e2 && g4 > e1 && g4 < e2);
    free(src);
    ramp_config c;
    char name[64];
    CHECK_OK(ramp_config_parse("r32.w128.s4.gg8", &c));
    CHECK(c.ggather == 8 && c.two_phase == 0 && c.rows == 32);
    CHECK(strcmp(ramp_config_name(&c, name, sizeof name), "r32.w128.s4.gg8") == 0);
    static const char *const bad[] = {"r32.w128.s4.gg3", "r32.w128.s4.gg", "r128.w128.s4.gg8",
                                      "r32.w128.s4.ph2.dk4.gg8", "r8.w128.s4.k2.gg2",
                                      "r32.w128.s4.gg8.tx"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK_ERR(ramp_config_parse(bad[i], &c), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), bad[i]) != NULL);
    }
    ramp_geometry g;
    CHECK_OK(mv2_geometry("qwen3-30b", &g)); /* 6 slices of w 128, 8 chunks */
    CHECK_OK(ramp_config_parse("r16.w128.s4.gg4", &c));
    ramp_moe_variant v = {c, g, 0};
    CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED);
    CHECK(strstr(ramp_last_error(), "ggather 4 must divide") != NULL);
    v.cfg.ggather = 2;
    CHECK_OK(ramp_moe_v2_check(&v));
    CHECK_ERR(ramp_moe_v1_check(&v), RAMP_ERR_UNSUPPORTED);
    CHECK(strstr(ramp_last_error(), ".gg") != NULL);
}

/* A BF16 layer with bf16_pipe: RAMP_MV2_PIPE 1 around each wide entry's
 * namespaces (first and second kernel), the kernel's default after. */
static void test_v2_bf16_pipe_source(void) {
    char *src = NULL;
    ramp_poly_desc db = v2_menu("deepseek-v3", MENU_V2_BF16W);
    db.geom.bf16 = db.bf16_pipe = 1;
    CHECK_OK(ramp_moe_poly_check(&db));
    CHECK_OK(ramp_moe_poly_source(&db, &src));
    if (!src) return;
    CHECK_EQ_INT(count_of(src, "#define RAMP_MV2_PIPE 1\n"), 3 + 2); /* 3 wide, 2 two-phase */
    CHECK_EQ_INT(count_of(src, "#define RAMP_MV2_PIPE 0\n"), 3 + 2);
    const char *e1 = strstr(src, "namespace ramp_poly_e1 {"), *e2 = strstr(src, "namespace ramp_poly_e2 {");
    const char *p1 = strstr(src, "#define RAMP_MV2_PIPE 1");
    CHECK(e1 && e2 && p1 && p1 > e1 && p1 < e2); /* entry 2 is the first wide one */
    free(src);
    db.geom.bf16 = 0; /* an FP8 layer: refused */
    CHECK_ERR(ramp_moe_poly_check(&db), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "bf16_pipe") != NULL);
}

/* The late wait (session 25): the phase-2 kernel alone is generated with
 * RAMP_POLY_V2_TOP_WAIT 0 and its entries' namespaces with
 * RAMP_MV2_LATE_WAIT 1, the first kernel keeps its wait at the top; neither
 * with det, with split 1 on a menu with a fused entry (phase 2 then shares
 * a kernel with it) or
 * with top_wait 1; a menu without a two-phase entry has none; top_wait out
 * of range or with kernel v1 is refused. */
static void test_v2_late_wait_source(void) {
    char *src = NULL;
    ramp_poly_desc d = v2_menu("mixtral-8x22b", MENU_V2_DET);
    CHECK_OK(ramp_moe_poly_source(&d, &src));
    if (!src) return;
    const char *first = strstr(src, "RAMP_POLY_V2_BEGIN(" RAMP_POLY_V2_KERNEL ",");
    const char *late = strstr(src, "#define RAMP_MV2_LATE_WAIT 1\n");
    const char *d0 = strstr(src, "namespace ramp_poly_d0 {");
    const char *off = strstr(src, "#define RAMP_POLY_V2_TOP_WAIT 0\n");
    const char *down = strstr(src, "RAMP_POLY_V2_BEGIN(" RAMP_POLY_V2_DOWN_KERNEL ",");
    const char *on = strstr(src, "#define RAMP_POLY_V2_TOP_WAIT 1\n");
    CHECK(first && late && d0 && off && down && on);
    CHECK(first < late && late < d0 && d0 < off && off < down && down < on);
    CHECK_EQ_INT(count_of(src, "RAMP_MV2_LATE_WAIT"), 1);
    CHECK_EQ_INT(count_of(src, "RAMP_POLY_V2_TOP_WAIT 0"), 1);
    free(src);
    for (int c = 0; c < 4; c++) {
        d = v2_menu(c == 3 ? "deepseek-v3" : "mixtral-8x22b",
                    c == 3 ? MENU_V2_DSV3 : c == 1 ? MENU_V2_TMAX : MENU_V2_DET);
        if (c == 0) d.det = 1;
        if (c == 1) d.split = 1;
        if (c == 2) d.top_wait = 1;
        src = NULL;
        CHECK_OK(ramp_moe_poly_source(&d, &src));
        if (src) CHECK(!strstr(src, "RAMP_MV2_LATE_WAIT") && !strstr(src, "RAMP_POLY_V2_TOP_WAIT"));
        if (src && strstr(src, "RAMP_POLY_V2_TOP_WAIT")) fprintf(stderr, "late wait case %d\n", c);
        free(src);
    }
    d = v2_menu("mixtral-8x22b", MENU_V2_DET);
    for (int bad = 0; bad < 2; bad++) { /* out of range; with kernel v1 */
        d.top_wait = bad ? 1 : 2;
        if (bad) d.kernel = RAMP_KERNEL_V1;
        CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "top_wait") != NULL);
    }
}

/* det: RAMP_MV2_DET before every entry, the combining kernel after both
 * kernels with each entry's K parts; refused with a fused entry (named) or
 * kernel v1. */
static void test_v2_det_source(void) {
    char *src = NULL;
    ramp_poly_desc d = v2_menu("mixtral-8x22b", MENU_V2_DET);
    d.det = 1;
    CHECK_OK(ramp_moe_poly_check(&d));
    CHECK_OK(ramp_moe_poly_source(&d, &src));
    if (!src) return;
    const char *det = strstr(src, "#define RAMP_MV2_DET 1\n");
    const char *e0 = strstr(src, "namespace ramp_poly_e0 {");
    const char *down = strstr(src, "RAMP_POLY_V2_BEGIN(" RAMP_POLY_V2_DOWN_KERNEL);
    const char *parts = strstr(src, "#define RAMP_COMBINE_PARTS {4, 8, 2, 1, 2, 2}\n");
    const char *inc = strstr(src, "#include \"moe_combine.cuh\"");
    CHECK(det && e0 && det < e0);
    CHECK(strstr(src, "#define RAMP_COMBINE_ENTRIES 6\n") != NULL);
    CHECK(down && parts && inc && down < parts && parts < inc);
    CHECK_EQ_INT(count_of(src, "RAMP_MV2_DET"), 1);
    free(src);
    d.det = 0; /* without det: neither */
    CHECK_OK(ramp_moe_poly_source(&d, &src));
    if (src) CHECK(!strstr(src, "RAMP_MV2_DET") && !strstr(src, "moe_combine.cuh"));
    free(src);
    d.det = 1;
    CHECK_OK(ramp_config_parse("r128.w256.s3.tx", &d.cfgs[4])); /* fused */
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_UNSUPPORTED);
    CHECK(strstr(ramp_last_error(), "entry 4 (r128.w256.s3.tx)") != NULL);
    d = v2_menu("mixtral-8x22b", MENU_V2_DET);
    d.det = 1;
    d.kernel = RAMP_KERNEL_V1;
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "det = 1") != NULL);
    d.kernel = RAMP_KERNEL_V2;
    d.det = 2;
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_INVALID_ARGUMENT);
}

static int labelled_of(const ramp_poly_desc *d) {
    for (int i = 0; i < d->count; i++)
        if (d->label[i]) return 1;
    return 0;
}

/* A part of a menu with the menu's indices (ramp_poly_desc.label, a
 * layer's size class): every switch's cases and the .tx mask carry the
 * labels, the namespaces the part's own order; a deterministic part's
 * combining kernel has a K-part count for every index up to its last (0
 * for those it does not hold). Labels must increase, stay below
 * RAMP_MENU_MAX, and are refused with split 5 and v1. */
static void test_v2_label_source(void) {
    ramp_poly_desc d = v2_menu("mixtral-8x22b", MENU_V2_TMAX);
    static const int keep[3] = {1, 3, 4};
    for (int j = 0; j < 3; j++) {
        d.cfgs[j] = d.cfgs[keep[j]];
        d.label[j] = keep[j];
    }
    d.count = 3;
    CHECK_OK(ramp_moe_poly_check(&d));
    char *src = NULL;
    CHECK_OK(ramp_moe_poly_source(&d, &src));
    if (!src) return;
    CHECK_EQ_INT(count_of(src, "(1, ramp_poly_e0)"), 3); /* setup, producer, consumer */
    CHECK_EQ_INT(count_of(src, "(3, ramp_poly_e1)"), 3);
    CHECK_EQ_INT(count_of(src, "(4, ramp_poly_e2)"), 3);
    CHECK_EQ_INT(count_of(src, "(3, ramp_poly_d1)"), 3); /* phase 2 of both two-phase ones */
    CHECK_EQ_INT(count_of(src, "(4, ramp_poly_d2)"), 3);
    CHECK_EQ_INT(count_of(src, "(0, ramp_poly"), 0);
    CHECK_EQ_INT(count_of(src, "(2, ramp_poly"), 0);
    CHECK(strstr(src, "#define RAMP_POLY_TX_MASK 0x18u\n") != NULL);
    free(src);
    src = NULL;
    ramp_poly_desc t = v2_menu("mixtral-8x22b", MENU_V2_DET);
    t.det = 1;
    t.cfgs[0] = t.cfgs[1];
    t.cfgs[1] = t.cfgs[4];
    t.label[0] = 1;
    t.label[1] = 4;
    t.count = 2;
    CHECK_OK(ramp_moe_poly_source(&t, &src));
    CHECK(src && strstr(src, "#define RAMP_COMBINE_ENTRIES 5\n"
                             "#define RAMP_COMBINE_PARTS {0, 8, 0, 0, 2}\n") != NULL);
    free(src);
    ramp_poly_desc b = d;
    b.label[2] = 3; /* not increasing */
    CHECK_ERR(ramp_moe_poly_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "label[2] = 3") != NULL);
    b = d;
    b.label[2] = RAMP_MENU_MAX;
    CHECK_ERR(ramp_moe_poly_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    b = d;
    b.split = 5;
    CHECK_ERR(ramp_moe_poly_check(&b), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "split 5") != NULL);
    b = d;
    b.split = 4; /* other splits keep the labels */
    CHECK_OK(ramp_moe_poly_check(&b));
}

/* The kernel split into a chain (split 1: phase 1 first, then fused
 * entries and phase 2; 2: fused, phase 1, phase 2): each kernel's cases are
 * exactly its part of the menu, in menu order and in the right namespace;
 * every kernel but the last lets the next launch early; the L2 prefetch and
 * the copy of x are the first kernel's; menus without both kinds of entry,
 * and split 0, are the unsplit source byte for byte. */
static void test_v2_split_source(void) {
    static const char *const trig = "griddepcontrol.launch_dependents";
    for (int split = 1; split <= 2; split++) {
        ramp_poly_desc d = v2_menu("mixtral-8x22b", MENU_V2_TMAX);
        d.split = split;
        d.l2pf_mb = 16;
        CHECK_OK(ramp_moe_poly_check(&d));
        const char *chain[RAMP_POLY_MAX_KERNELS];
        const int n = ramp_moe_poly_chain(&d, chain);
        CHECK_EQ_INT(n, split == 1 ? 2 : 3);
        char *src = NULL;
        CHECK_OK(ramp_moe_poly_source(&d, &src));
        if (!src) continue;
        for (int j = 0; j < n; j++) {
            char begin[96];
            snprintf(begin, sizeof begin, "RAMP_POLY_V2_BEGIN(%s,", chain[j]);
            const char *b = strstr(src, begin);
            CHECK(b != NULL && count_of(src, begin) == 1);
            if (!b) continue;
            const char *e = strstr(b, "RAMP_POLY_V2_END");
            const char *eol = strchr(b, '\n');
            CHECK(e && eol);
            if (!e || !eol) continue;
            const int is_up = !strcmp(chain[j], RAMP_POLY_V2_UP_KERNEL);
            const int is_down = !strcmp(chain[j], RAMP_POLY_V2_DOWN_KERNEL);
            /* the prologue: prefetch and copy of x first, trigger but last */
            char line[512];
            snprintf(line, sizeof line, "%.*s", (int)(eol - b), b);
            CHECK((strstr(line, "RAMP_POLY_V2_L2PF") != NULL) == (j == 0));
            CHECK((strstr(line, "RAMP_POLY_V2_XCOPY") != NULL) == (j == 0));
            CHECK((strstr(line, trig) != NULL) == (j < n - 1));
            /* the cases: entry i here iff its part is, each role once */
            char body[8192];
            snprintf(body, sizeof body, "%.*s", (int)(e - b), b);
            int last = -1;
            for (int i = 0; i < d.count; i++) {
                const int two = d.cfgs[i].two_phase > 0;
                const int want_e = (!two && ((split == 1 && is_down) || (split == 2 && !is_up && !is_down))) ||
                                   (two && is_up);
                const int want_d = two && is_down;
                char ce[64], cd[64];
                snprintf(ce, sizeof ce, "RAMP_POLY_V2_SETUP(%d, ramp_poly_e%d)", i, i);
                snprintf(cd, sizeof cd, "RAMP_POLY_V2_SETUP(%d, ramp_poly_d%d)", i, i);
                CHECK_EQ_INT(count_of(body, ce), want_e);
                CHECK_EQ_INT(count_of(body, cd), want_d);
                snprintf(ce, sizeof ce, "RAMP_POLY_V2_CONSUMER(%d, ramp_poly_%c%d)", i,
                         want_d ? 'd' : 'e', i);
                CHECK_EQ_INT(count_of(body, ce), want_e || want_d);
                const char *at = strstr(body, ce);
                if (at) { /* menu order */
                    CHECK((int)(at - body) > last);
                    last = (int)(at - body);
                }
            }
        }
        free(src);
    }
    /* split 3, by cluster: entry 3 (.mc) on pairs in both phases, the rest on
     * one CTA; split 4, by width: entries 0 and 1 narrow, the rest wide tiles,
     * each phase 2 right after its phase 1. Four kernels each, each with
     * exactly its class */
    for (int sp = 3; sp <= 4; sp++) {
        ramp_poly_desc d = v2_menu("mixtral-8x22b", MENU_V2_TMAX);
        d.split = sp;
        const char *chain[RAMP_POLY_MAX_KERNELS];
        CHECK_EQ_INT(ramp_moe_poly_chain(&d, chain), 4);
        static const char *const wants[2][4] = {
            {RAMP_POLY_V2_KERNEL, RAMP_POLY_V2_C2_KERNEL, RAMP_POLY_V2_DOWN_KERNEL,
             RAMP_POLY_V2_DOWN_C2_KERNEL},
            {RAMP_POLY_V2_KERNEL, RAMP_POLY_V2_DOWN_KERNEL, RAMP_POLY_V2_WIDE_KERNEL,
             RAMP_POLY_V2_DOWN_WIDE_KERNEL}};
        static const char *const casess[2][4] = {{"0e1e2e4e5e", "3e", "0d4d5d", "3d"},
                                                 {"0e1e", "0d", "2e3e4e5e", "3d4d5d"}};
        const char *const *want = wants[sp - 3], *const *cases = casess[sp - 3];
        char *src = NULL;
        CHECK_OK(ramp_moe_poly_source(&d, &src));
        for (int j = 0; j < 4 && src; j++) {
            CHECK(strcmp(chain[j], want[j]) == 0);
            char begin[96], got[64] = "";
            snprintf(begin, sizeof begin, "RAMP_POLY_V2_BEGIN(%s,", want[j]);
            const char *b = strstr(src, begin), *e = b ? strstr(b, "RAMP_POLY_V2_PRODUCERS") : NULL;
            CHECK(b && e);
            for (const char *p = b; p && e && (p = strstr(p, "RAMP_POLY_V2_SETUP(")) && p < e; p++) {
                int i;
                char ns;
                if (sscanf(p, "RAMP_POLY_V2_SETUP(%d, ramp_poly_%c", &i, &ns) == 2)
                    snprintf(got + strlen(got), sizeof got - strlen(got), "%d%c", i, ns);
            }
            CHECK(strcmp(got, cases[j]) == 0);
            if (strcmp(got, cases[j])) fprintf(stderr, "split %d %s: %s\n", sp, want[j], got);
        }
        free(src);
        d = v2_menu("deepseek-v3", MENU_V2_DSV3); /* no pairs, no wide tile: unsplit */
        char *a = NULL, *b = NULL;
        CHECK_OK(ramp_moe_poly_source(&d, &a));
        d.split = sp;
        CHECK_OK(ramp_moe_poly_source(&d, &b));
        CHECK(a && b && strcmp(a, b) == 0);
        free(a);
        free(b);
    }
    /* nothing to split: the unsplit source */
    static const char *const *const menus[] = {MENU_V2_QWEN, MENU_V2_DET, MENU_V2_TMAX};
    for (int m = 0; m < 3; m++) {
        ramp_poly_desc d = v2_menu(m == 0 ? "qwen3-30b" : "mixtral-8x22b", menus[m]);
        char *a = NULL, *b = NULL;
        CHECK_OK(ramp_moe_poly_source(&d, &a));
        d.split = m == 2 ? 0 : 2;
        CHECK_OK(ramp_moe_poly_source(&d, &b));
        CHECK(a && b && strcmp(a, b) == 0);
        free(a);
        free(b);
    }
    /* split 5, by entry: entry i's kernel holds entry i alone (phase 1 or
     * fused), a two-phase entry's phase 2 follows in its own kernel; the
     * first triggers the second and copies x for a .tx entry, nothing
     * prefetches (the selection has ended when a switch body starts), and
     * a menu of fused entries is split too (DeepSeek-V3's) */
    static const char *const *const menus5[] = {MENU_V2_TMAX, MENU_V2_DSV3};
    for (int m = 0; m < 2; m++) {
        ramp_poly_desc d = v2_menu(m ? "deepseek-v3" : "mixtral-8x22b", menus5[m]);
        d.split = 5;
        d.l2pf_mb = 16;
        CHECK_OK(ramp_moe_poly_check(&d));
        const char *chain[RAMP_POLY_MAX_KERNELS];
        const int n = ramp_moe_poly_chain(&d, chain);
        int want_n = d.count;
        for (int i = 0; i < d.count; i++) want_n += d.cfgs[i].two_phase > 0;
        CHECK_EQ_INT(n, want_n);
        char *src = NULL;
        CHECK_OK(ramp_moe_poly_source(&d, &src));
        CHECK(src && !strstr(src, "RAMP_POLY_V2_L2PF(pp.moe)"));
        for (int i = 0, j = 0; i < d.count && src && j < n; i++) {
            const int two = d.cfgs[i].two_phase > 0;
            for (int ph = 0; ph <= two; ph++, j++) {
                char name[64], begin[96], setup[64], got[64] = "";
                snprintf(name, sizeof name, "%s_e%d",
                         ph ? RAMP_POLY_V2_DOWN_KERNEL : RAMP_POLY_V2_KERNEL, i);
                CHECK(strcmp(chain[j], name) == 0);
                snprintf(begin, sizeof begin, "RAMP_POLY_V2_BEGIN(%s,", name);
                const char *b = strstr(src, begin);
                const char *e = b ? strstr(b, "RAMP_POLY_V2_PRODUCERS") : NULL;
                const char *eol = b ? strchr(b, '\n') : NULL;
                CHECK(b && e && eol && count_of(src, begin) == 1);
                if (!b || !e || !eol) continue;
                for (const char *q = b; (q = strstr(q, "RAMP_POLY_V2_SETUP(")) && q < e; q++) {
                    int k;
                    char ns;
                    if (sscanf(q, "RAMP_POLY_V2_SETUP(%d, ramp_poly_%c", &k, &ns) == 2)
                        snprintf(got + strlen(got), sizeof got - strlen(got), "%d%c", k, ns);
                }
                snprintf(setup, sizeof setup, "%d%c", i, ph ? 'd' : 'e');
                CHECK(strcmp(got, setup) == 0);
                char line[512];
                snprintf(line, sizeof line, "%.*s", (int)(eol - b), b);
                CHECK((strstr(line, trig) != NULL) == (!ph && two));
                CHECK((strstr(line, "RAMP_POLY_V2_XCOPY") != NULL) == (!ph && d.cfgs[i].tma_x));
            }
        }
        free(src);
    }
    /* refusals: out of range, or with v1 */
    ramp_poly_desc d = v2_menu("mixtral-8x22b", MENU_V2_TMAX);
    d.split = 6;
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "split = 6") != NULL);
    d.split = -1;
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_INVALID_ARGUMENT);
    d = qwen3_menu(0, 0);
    d.split = 1;
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "split = 1") != NULL);
}

/* Entry 3 changed to c (or the layer's kind: every entry) must be refused
 * as UNSUPPORTED, naming the first entry v2 cannot run. */
static void refuse_v2(const char *how, ramp_config c, int bf16, int xbf16) {
    const char *want = xbf16 ? "menu entry 0" : "menu entry 3";
    ramp_poly_desc d = v2_menu("qwen3-30b", MENU_V2_QWEN);
    d.cfgs[3] = c;
    d.geom.bf16 = bf16;
    d.xbf16 = xbf16;
    ramp_status s = ramp_moe_poly_check(&d);
    CHECK_EQ_INT(s, RAMP_ERR_UNSUPPORTED);
    const char *e = ramp_last_error();
    if (s != RAMP_ERR_UNSUPPORTED || !strstr(e, want)) {
        fprintf(stderr, "v2 menu with %s: %s\n", how, e);
        check_failures += s == RAMP_ERR_UNSUPPORTED;
    }
    char *src = (char *)1;
    CHECK(ramp_moe_poly_source(&d, &src) != RAMP_OK);
    CHECK(src == (char *)1);
}

static void test_v2_refusals(void) {
    ramp_poly_desc d = v2_menu("qwen3-30b", MENU_V2_QWEN);
    CHECK_OK(ramp_moe_poly_check(&d));
    /* weights in stage units: 0 or 1, v2 without red4 or the L2 prefetch;
     * multicast entries and BF16 layers too (session 30) */
    d.units = 1;
    CHECK_OK(ramp_moe_poly_check(&d));
    d.geom.bf16 = 1;
    CHECK_OK(ramp_moe_poly_check(&d));
    for (int k = 0; k < 3; k++) {
        d = v2_menu("qwen3-30b", MENU_V2_QWEN);
        d.units = k == 0 ? 2 : 1;
        d.red4 = k == 1;
        d.l2pf_mb = k == 2 ? 8 : 0;
        CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "units") != NULL);
    }
    d = v2_menu("mixtral-8x22b", MENU_V2_MCAST);
    d.units = 1;
    CHECK_OK(ramp_moe_poly_check(&d));
    d = v2_menu("qwen3-30b", MENU_V2_QWEN);
    const ramp_config base = d.cfgs[3];
    ramp_config c = base;
    c.persistent = 1;
    refuse_v2("a persistent entry", c, 0, 0);
    c = base;
    c.grouped = 1;
    refuse_v2("a grouped entry", c, 0, 0);
    c = base;
    c.splitk = 4; /* v2 splits K over a cluster of two only */
    refuse_v2("a split-K 4 entry", c, 0, 0);
    c = base;
    c.rows = 128;
    c.splitk = 2; /* narrow tiles only */
    refuse_v2("a wide split-K entry", c, 0, 0);
    c = base;
    c.stages = 7;
    refuse_v2("7 stages", c, 0, 0);
    c = base;
    c.stages = 1;
    refuse_v2("1 stage", c, 0, 0);
    c = base;
    c.width = 512; /* does not divide h = 768 */
    refuse_v2("width 512", c, 0, 0);
    c = base;
    c.rows = 40; /* wgmma N = 40: no instance */
    refuse_v2("40 rows", c, 0, 0);
    /* BF16 weights: the menu runs (a two-phase entry too), but not with W2
     * permuted for float4 output */
    d.geom.bf16 = 1;
    CHECK_OK(ramp_moe_poly_check(&d));
    d.cfgs[3].rows = 128;
    d.cfgs[3].stages = 3;
    d.cfgs[3].two_phase = 1;
    CHECK_OK(ramp_moe_poly_check(&d));
    d.red4 = 1;
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_UNSUPPORTED);
    CHECK(strstr(ramp_last_error(), "red4") && strstr(ramp_last_error(), "BF16"));
    d = v2_menu("qwen3-30b", MENU_V2_QWEN);
    refuse_v2("BF16 input", base, 0, 1);
    d = v2_menu("qwen3-30b", MENU_V2_QWEN);
    d.kernel = 7;
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_INVALID_ARGUMENT);
    d = v2_menu("qwen3-30b", MENU_V2_QWEN);
    d.cfgs[4] = d.cfgs[2];
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_INVALID_ARGUMENT);
    /* float4 output is v2's; 0 or 1 */
    d = v2_menu("qwen3-30b", MENU_V2_QWEN);
    d.red4 = 2;
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_INVALID_ARGUMENT);
    d.red4 = 1;
    CHECK_OK(ramp_moe_poly_check(&d));
    d.kernel = RAMP_KERNEL_V1;
    for (int i = 0; i < d.count; i++) CHECK_OK(ramp_config_parse("r8.w128.s3", &d.cfgs[i]));
    d.count = 1;
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "red4") != NULL);
    /* the L2 prefetch: v2's, 0..RAMP_L2PF_MAX_MB */
    d = v2_menu("qwen3-30b", MENU_V2_QWEN);
    d.l2pf_mb = RAMP_L2PF_MAX_MB;
    CHECK_OK(ramp_moe_poly_check(&d));
    for (int bad = 0; bad < 2; bad++) {
        d.l2pf_mb = bad ? -1 : RAMP_L2PF_MAX_MB + 1;
        CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "l2pf_mb") != NULL);
    }
    d.l2pf_mb = 8;
    d.kernel = RAMP_KERNEL_V1;
    for (int i = 0; i < d.count; i++) CHECK_OK(ramp_config_parse("r8.w128.s3", &d.cfgs[i]));
    d.count = 1;
    CHECK_ERR(ramp_moe_poly_check(&d), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "kernel v2 option") != NULL);
}

/* Compiles a v2 menu; checks ptxas's report as test_moe_v2_compile checks
 * each entry's; prints Table 12 for it. */
static int g_v2_bf16_pipe; /* the next test_v2_compile: a BF16 layer, bf16_pipe 1 */
static int g_v2_det;       /* the next test_v2_compile: deterministic output */
static int g_v2_split;     /* the next test_v2_compile: the kernel split into a chain */
static int g_v2_units;     /* the next test_v2_compile: weights in stage units */
static unsigned g_v2_part; /* the next test_v2_compile: only these entries, with the
                              menu's indices (a layer's size class) */

/* Dynamic shared memory the test expects of chain kernel `name` under split
 * (the menu's effective one): the largest layout of what it holds (fused
 * entries and phase 1: the entry's layout; phase 2: the down layout). */
static long long expected_smem(const ramp_poly_desc *d, int split, const char *name) {
    const int up = !strcmp(name, RAMP_POLY_V2_UP_KERNEL), down = !strcmp(name, RAMP_POLY_V2_DOWN_KERNEL);
    const int c2 = !strcmp(name, RAMP_POLY_V2_C2_KERNEL), down2 = !strcmp(name, RAMP_POLY_V2_DOWN_C2_KERNEL);
    const int wide = !strcmp(name, RAMP_POLY_V2_WIDE_KERNEL),
              downw = !strcmp(name, RAMP_POLY_V2_DOWN_WIDE_KERNEL);
    long long m = 0;
    if (split == 5) { /* ramp_moe_poly_v2[_down]_e<i>: entry i's own layout */
        int i = -1;
        const char *at = strrchr(name, 'e');
        if (at && at > name && at[-1] == '_') i = atoi(at + 1);
        if (i < 0 || i >= d->count) return 0;
        ramp_moe_variant v = {d->cfgs[i], d->geom, 0};
        return strstr(name, "_down_") ? ramp_moe_v2_layout_down_bf(d->cfgs[i].rows,
                                                                    d->cfgs[i].stages,
                                                                    d->geom.bf16).total
                                      : ramp_moe_v2_layout_for(&v).total;
    }
    for (int i = 0; i < d->count; i++) {
        ramp_moe_variant v = {d->cfgs[i], d->geom, 0};
        const int two = d->cfgs[i].two_phase > 0;
        const int pair_e = d->cfgs[i].mcast || d->cfgs[i].splitk > 1, pair_d = d->cfgs[i].mcast;
        long long l = 0;
        if (split == 4) { /* by width */
            const int w = d->cfgs[i].rows > 64;
            if (two && ((down && !w) || (downw && w)))
                l = ramp_moe_v2_layout_down_bf(d->cfgs[i].rows, d->cfgs[i].stages, d->geom.bf16).total;
            else if ((!down && !downw && !wide && !w) || (wide && w))
                l = ramp_moe_v2_layout_for(&v).total;
        } else if (split == 3) { /* by cluster */
            if ((down && two && !pair_d) || (down2 && two && pair_d))
                l = ramp_moe_v2_layout_down_bf(d->cfgs[i].rows, d->cfgs[i].stages, d->geom.bf16).total;
            else if ((!down && !down2 && !c2 && !pair_e) || (c2 && pair_e))
                l = ramp_moe_v2_layout_for(&v).total;
        } else if (down && two)
            l = ramp_moe_v2_layout_down_bf(d->cfgs[i].rows, d->cfgs[i].stages, d->geom.bf16).total;
        else if ((down && !two && split == 1) || (up && two) ||
                 (!up && !down && (!two || split == 0)))
            l = ramp_moe_v2_layout_for(&v).total;
        m = l > m ? l : m;
    }
    return m;
}
static int test_v2_compile(const char *model, const char *const *menu, int red4, int l2pf_mb,
                           const char *tag) {
    ramp_poly_desc d = v2_menu(model, menu);
    d.red4 = red4; /* float4 output: one more define, the same budget */
    d.l2pf_mb = l2pf_mb; /* the L2 prefetch: the same budget too */
    d.geom.bf16 = d.bf16_pipe = g_v2_bf16_pipe;
    d.det = g_v2_det;
    d.split = g_v2_split;
    d.units = g_v2_units;
    const char *names[RAMP_MENU_MAX];
    for (int i = 0; i < d.count; i++) names[i] = menu[i];
    if (g_v2_part) {
        int n = 0;
        for (int i = 0; i < d.count; i++) {
            if (!((g_v2_part >> i) & 1u)) continue;
            d.cfgs[n] = d.cfgs[i];
            d.label[n] = i;
            names[n++] = menu[i];
        }
        d.count = n;
    }
    g_v2_bf16_pipe = g_v2_det = g_v2_split = g_v2_units = 0;
    g_v2_part = 0;
    ramp_jit_result *r = NULL;
    ramp_status s = ramp_moe_poly_compile(&d, &r);
    if (s == RAMP_ERR_NO_GPU) return 77;
    CHECK_OK(s);
    if (s != RAMP_OK) {
        fprintf(stderr, "%s\n", ramp_last_error());
        return 1;
    }
    int threads;
    long long smem;
    ramp_moe_poly_shape(&d, &threads, &smem);
    printf("Table 12 (v2, %s EP8%s%s%s%s%s%s%s): entry, registers, shared memory (B)\n", model,
           labelled_of(&d) ? ", a part of the menu" : "",
           red4 ? ", W2 permuted (red4)" : "", l2pf_mb ? ", L2 prefetch" : "",
           d.bf16_pipe ? ", BF16, wide entries pipelined" : "",
           d.det ? ", deterministic output" : "",
           d.split == 1 ? ", split: phase 1 first" : d.split == 2 ? ", split in three"
           : d.split == 3 ? ", split by cluster" : d.split == 4 ? ", split by width"
           : d.split == 5 ? ", split by entry" : "",
           d.units ? ", weights in stage units" : "");
    for (int i = 0; i < d.count; i++) {
        ramp_moe_variant v = {d.cfgs[i], d.geom, 0};
        ramp_jit_result *one = NULL;
        CHECK_OK(ramp_moe_v2_compile(&v, &one));
        const ramp_kernel_report *o = one ? ramp_jit_kernel(one, "ramp_moe_v2") : NULL;
        if (o) printf("  %-28s %4d %7lld\n", names[i], o->registers, ramp_moe_v2_layout_for(&v).total);
        ramp_jit_result_free(one);
    }
    int warnings = r->ptxas_warnings;
    if (r->log && (strstr(r->log, "Potential Performance Loss") || strstr(r->log, "is injected")))
        warnings++;
    if (warnings) fprintf(stderr, "%.4000s\n", r->log ? r->log : "");
    CHECK_EQ_INT(warnings, 0);
    /* the menu's kernel, and the two-phase entries' phase 2 when it has any;
     * split: the chain of three kernels, or phase 1 first */
    int two = 0, fused = 0;
    for (int i = 0; i < d.count; i++) {
        two |= d.cfgs[i].two_phase > 0;
        fused |= d.cfgs[i].two_phase == 0;
    }
    const char *chain[RAMP_POLY_MAX_KERNELS];
    const int n = ramp_moe_poly_chain(&d, chain);
    const int split = d.split >= 3 ? d.split : two && fused ? d.split : 0;
    if (split >= 3) { /* by cluster or width: every kernel in the module, none empty */
        for (int j = 0; j < n; j++) CHECK(ramp_jit_kernel(r, chain[j]) != NULL);
        CHECK(n >= 1 && n <= (split == 5 ? 2 * d.count : 4));
        for (int j = 0; j < n; j++) CHECK(expected_smem(&d, split, chain[j]) > 0);
    } else {
        CHECK_EQ_INT(n, two ? (split == 2 ? 3 : 2) : 1);
        CHECK(strcmp(chain[0], split == 1 ? RAMP_POLY_V2_UP_KERNEL : RAMP_POLY_V2_KERNEL) == 0);
        if (n == 3) CHECK(strcmp(chain[1], RAMP_POLY_V2_UP_KERNEL) == 0);
        if (n > 1) CHECK(strcmp(chain[n - 1], RAMP_POLY_V2_DOWN_KERNEL) == 0);
        CHECK((ramp_jit_kernel(r, RAMP_POLY_V2_DOWN_KERNEL) != NULL) == two);
        CHECK((ramp_jit_kernel(r, RAMP_POLY_V2_UP_KERNEL) != NULL) == (split != 0));
        CHECK((ramp_jit_kernel(r, RAMP_POLY_V2_KERNEL) != NULL) == (split != 1));
    }
    const ramp_kernel_report *kc = ramp_jit_kernel(r, RAMP_POLY_COMBINE_KERNEL);
    CHECK((kc != NULL) == d.det);
    if (kc) { /* a plain streaming kernel: no spills, no stack */
        printf("  %-28s %4d  (spills %d/%d B, stack %d B)\n", "combine (deterministic)",
               kc->registers, kc->spill_store_bytes, kc->spill_load_bytes, kc->stack_bytes);
        CHECK(kc->spill_store_bytes == 0 && kc->spill_load_bytes == 0 && kc->stack_bytes == 0);
    }
    if (!split) CHECK(expected_smem(&d, 0, RAMP_POLY_V2_KERNEL) == smem);
    for (int kk = 0; kk < n; kk++) {
        const ramp_kernel_report *kr = ramp_jit_kernel(r, chain[kk]);
        CHECK(kr != NULL);
        const long long sm = expected_smem(&d, split, chain[kk]);
        if (!kr) continue;
        printf("  %-28s %4d %7lld  (spills %d/%d B, stack %d B, static smem %d B, %d ptxas "
               "warning(s)%s)\n",
               chain[kk], kr->registers, sm,
               kr->spill_store_bytes, kr->spill_load_bytes, kr->stack_bytes, kr->smem_bytes,
               warnings, r->from_cache ? ", cached" : "");
        CHECK_EQ_INT(kr->spill_store_bytes, 0);
        CHECK_EQ_INT(kr->spill_load_bytes, 0);
        CHECK_EQ_INT(kr->stack_bytes, 0);
        CHECK_EQ_INT(kr->smem_bytes, 0);
        CHECK_EQ_INT(kr->registers, RAMP_MV2_REGS);
        ramp_device_limits lim;
        ramp_device_limits_h200(&lim);
        ramp_resources res;
        CHECK_OK(ramp_resources_from_report(kr, threads, (int)sm, &lim, &res));
        CHECK(res.valid && res.blocks_per_sm == 1);
        CHECK(sm <= 232448);
    }
    const char *dir = getenv("RAMP_MOE_POLY_CUBIN_DIR");
    if (dir && *dir) {
        char path[1024];
        snprintf(path, sizeof path, "%s/poly-v2%s-%s%s.cubin", dir, red4 ? "r4" : "", model, tag);
        FILE *f = fopen(path, "wb");
        int ok = f && fwrite(r->cubin, 1, r->cubin_size, f) == r->cubin_size;
        if (f) ok &= fclose(f) == 0;
        CHECK(ok);
    }
    ramp_jit_result_free(r);
    return 0;
}

/* The layer's launch modes (ramp_layer_desc.serial_launch): 1 none, 2 the
 * first kernel with PDL, 3 both; 0 automatic: both (before session 34 the
 * second kernel without PDL when a narrow two-phase entry was on the menu). */
static void test_pdl_mode(void) {
    CHECK_EQ_INT(ramp_moe_poly_pdl_mode(0), 3); /* any menu, since session 34 */
    CHECK_EQ_INT(ramp_moe_poly_pdl_mode(1), 0);
    CHECK_EQ_INT(ramp_moe_poly_pdl_mode(2), 1);
    CHECK_EQ_INT(ramp_moe_poly_pdl_mode(3), 3);
}

int main(void) {
    test_pdl_mode();
    test_source_and_shape();
    test_bad_menus();
    test_v2_source_and_shape();
    test_v2_mcast_source();
    test_v2_bf16_pipe_source();
    test_v2_det_source();
    test_v2_late_wait_source();
    test_v2_split_source();
    test_v2_tma_x_source();
    test_v2_ggather_source();
    test_v2_label_source();
    test_v2_refusals();
    int rc = test_compile(0, 0, "FP8");
    if (rc == 77) {
        printf("test_moe_poly: NVRTC not available, compile checks skipped\n");
        return check_failures ? 1 : 77;
    }
    test_compile(0, 1, "FP8, BF16 input");
    test_compile(1, 0, "BF16");
    test_v2_compile("qwen3-30b", MENU_V2_QWEN, 0, 0, "");
    test_v2_compile("deepseek-v3", MENU_V2_DSV3, 0, 0, "");
    test_v2_compile("deepseek-v3", MENU_V2_DSV3, 1, 0, "");
    test_v2_compile("deepseek-v3", MENU_V2_WIDE, 0, 0, "-wide");
    test_v2_compile("mixtral-8x22b", MENU_V2_NARROW2, 0, 0, "-narrow2");
    test_v2_compile("mixtral-8x22b", MENU_V2_MCAST, 0, 0, "-mc"); /* (sass-check: multicast) */
    test_v2_compile("mixtral-8x22b", MENU_V2_TMAX, 0, 0, "-tx");
    g_v2_split = 1;
    test_v2_compile("mixtral-8x22b", MENU_V2_TMAX, 0, 0, "-tx-split1");
    g_v2_split = 2;
    test_v2_compile("mixtral-8x22b", MENU_V2_TMAX, 0, 0, "-tx-split2");
    g_v2_split = 3;
    test_v2_compile("mixtral-8x22b", MENU_V2_TMAX, 0, 0, "-tx-split3");
    g_v2_split = 4;
    test_v2_compile("mixtral-8x22b", MENU_V2_TMAX, 0, 0, "-tx-split4");
    g_v2_split = 5;
    test_v2_compile("mixtral-8x22b", MENU_V2_TMAX, 0, 0, "-tx-split5");
    g_v2_bf16_pipe = 1;
    test_v2_compile("deepseek-v3", MENU_V2_BF16W, 0, 0, "-bf16-pipe");
    test_v2_compile("qwen3-30b", MENU_V2_QWEN, 0, 32, "-l2pf");
    g_v2_det = 1;
    test_v2_compile("mixtral-8x22b", MENU_V2_DET, 0, 0, "-det");
    g_v2_det = 1;
    test_v2_compile("deepseek-v3", MENU_V2_DET, 0, 0, "-det");
    g_v2_det = g_v2_bf16_pipe = 1; /* BF16: its phase 2's bulk stores */
    test_v2_compile("deepseek-v3", MENU_V2_BF16_DET, 0, 0, "-bf16-det");
    g_v2_units = 1; /* weights in stage units: narrow and wide, fused and two-phase */
    test_v2_compile("mixtral-8x22b", MENU_V2_NARROW2, 0, 0, "-units");
    g_v2_units = 1;
    test_v2_compile("qwen3-30b", MENU_V2_QWEN, 0, 0, "-units");
    g_v2_units = 1; /* ... with multicast and token rows by TMA */
    test_v2_compile("mixtral-8x22b", MENU_V2_TMAX, 0, 0, "-units-tx");
    g_v2_units = g_v2_bf16_pipe = 1; /* ... a BF16 layer's, wide entries pipelined */
    test_v2_compile("deepseek-v3", MENU_V2_BF16W, 0, 0, "-units-bf16");
    g_v2_part = 0x1a; /* a size class: a narrow two-phase, a fused and a multicast .tx entry */
    test_v2_compile("mixtral-8x22b", MENU_V2_TMAX, 0, 0, "-part");
    g_v2_units = 1; /* the gather through global memory, as a Mixtral layer would serve it */
    test_v2_compile("mixtral-8x22b", MENU_V2_GG, 0, 0, "-gg");
    return check_finish("test_moe_poly");
}
