/*
 * test_moe_v2_compile.c - the Hopper fused MoE kernel v2 (kernels/
 * moe_v2.cuh) compiled with NVRTC for sm_90a, no GPU needed (CI): every
 * supported configuration of Qwen3-30B-A3B EP8 and DeepSeek-V3 EP8 (rows
 * {2..64} x widths dividing h, 4 stages; tests/moe_v2_util.h), and ptxas's
 * report of each must show no spills, no stack frame, no static shared
 * memory, no warning at all (C7508 = setmaxnreg ignored), no ptxas info
 * line saying wgmma are serialised or a wait injected (C7514, C7517),
 * exactly RAMP_MV2_REGS registers at entry (setmaxnreg's pool arithmetic:
 * 128 x 56 + 256 x 224 <= 384 x 168), the dynamic layout
 * within 227 KB and one block per SM by the measured resources. Also: the
 * host-side check refuses what v2 does not do yet (persistent, split-K,
 * BF16 wide tiles or options, BF16 hidden states into an FP8 layer, widths
 * that do not divide h) with RAMP_ERR_UNSUPPORTED.
 *
 * Prints registers and shared memory per configuration. Default (CI): one
 * row count per wgmma N (2, 12, 24, 32, 48, 64) for each width of both
 * models: 30 compiles, plus rows 2 and 64 of each width with pre-tiled
 * weights (RAMP_MV2_TILED, "tiled" in the table) and with float4 output
 * (RAMP_MV2_RED4, "red4"; the same rules): 20. Each wide tile also fused,
 * in two launches (K of the down program whole and in 2 parts) and those in
 * the grouped tile order (RAMP_MV2_GROUP=4, "g4"). Each also for a BF16
 * layer (RAMP_MV2_BF16, "bf16": m64nNk16 or m64n128k16, its own layouts), a
 * wide one fused and in two launches (down K whole and in 2 parts).
 * Narrow tiles in two launches (rows 12 and 32 of each width: the up
 * program, the down program with K whole and in 8 parts, or the most of 4
 * and 2 that divide h / 128).
 * Split-K over a cluster of two (ramp_config.splitk 2): rows 8 and 32 of
 * each width, FP8 and BF16. Bulk reductions of the output (RAMP_MV2_BULKRED,
 * "bulkred"): rows 2, 12, 24 and 32 of each width, and the refusals (BF16,
 * red4, split-K, a staging past 227 KB). Each wide tile with its weights by
 * TMA multicast (RAMP_MV2_MCAST, "mcast": fused, up, down in 2 parts; FP8
 * and BF16, and BF16 fused with ping-pong) and, in BF16, with one stage's
 * wgmmas in flight ("pipe": fused, up, down whole and in 2 parts); the
 * multicast refusals (pre-tiled, grouped, mcast 2; narrow BF16, split,
 * w2box). Narrow fused FP8 tiles by multicast (rows 12, 32, 64;
 * row-major and stage units; session 45). The 256-wide
 * tile with its token and intermediate rows by TMA (RAMP_MV2_TMA_X=1,
 * "tmax": fused, up, down in 2 parts; FP8 and BF16), and its refusals
 * (narrow, tma_x 3, diagnostic 9 without it).
 * RAMP_MOE_V2_COMPILE_ALL=1: all, each also tiled and red4. RAMP_MOE_CONFIGS = a
 * comma list of configuration names (e.g. r2.w128.s4) keeps only those.
 * RAMP_MOE_V2_CUBIN_DIR=dir writes each cubin there (tools/gpu-check step
 * v2 disassembles them). RAMP_MOE_COMPILE_THREADS threads (default 2).
 * Exit 77 without NVRTC.
 */
#include "check.h"
#include "compile_pool.h"
#include "moe_v2_util.h"

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    ramp_moe_variant v;
    ramp_moe_v2_opts o;
    const char *model;
    int phase; /* o.split: 1 the up program, 2 the down program */
    ramp_kernel_report rep;
    ramp_resources res;
    ramp_status status;
    int warnings, cached;
    size_t cubin; /* bytes */
    uint64_t code; /* code_hash of the cubin */
    char err[2048];
} job;

/* (RAMP_MOE_V2_COMPILE_ALL queues ~1,000; each variant adds at most 32) */
static job jobs[2048];
static int njobs;
static ramp_device_limits lim;

/* FNV-1a over a cubin's code sections (.text.*): whether an option changed
 * the instructions, which the cubin's size cannot say (its sections are
 * padded, and a program's name alone moves it by a few bytes). 0 for a
 * file that is not a well-formed ELF64. */
static uint64_t code_hash(const unsigned char *b, size_t n) {
    Elf64_Ehdr e;
    if (!b || n < sizeof e) return 0;
    memcpy(&e, b, sizeof e);
    if (memcmp(e.e_ident, ELFMAG, SELFMAG) != 0 || e.e_shentsize != sizeof(Elf64_Shdr) ||
        e.e_shstrndx >= e.e_shnum || e.e_shoff > n ||
        (n - e.e_shoff) / sizeof(Elf64_Shdr) < e.e_shnum)
        return 0;
    Elf64_Shdr names;
    memcpy(&names, b + e.e_shoff + (size_t)e.e_shstrndx * sizeof names, sizeof names);
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < e.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, b + e.e_shoff + (size_t)i * sizeof sh, sizeof sh);
        if (sh.sh_type != SHT_PROGBITS || names.sh_offset > n ||
            (uint64_t)sh.sh_name + 6 > n - names.sh_offset || sh.sh_offset > n ||
            sh.sh_size > n - sh.sh_offset ||
            memcmp(b + names.sh_offset + sh.sh_name, ".text", 5) != 0)
            continue;
        for (size_t k = 0; k < sh.sh_size; k++) h = (h ^ b[sh.sh_offset + k]) * 1099511628211ull;
    }
    return h;
}

/* One job of the compile pool (compile_pool.h). */
static void compile_one(int i, void *ctx) {
    job *j = (job *)ctx + i;
    ramp_jit_result *r = NULL;
    j->status = ramp_moe_v2_compile_phase(&j->v, &j->o, j->phase, &r);
    if (j->status == RAMP_OK) {
        const ramp_kernel_report *k = ramp_jit_kernel(r, "ramp_moe_v2");
        if (k) j->rep = *k;
        j->warnings = r->ptxas_warnings;
        /* ptxas's info lines about wgmma: serialised (C7514 and kin)
         * or a wait injected (C7517) cost the pipelined consumers their
         * overlap silently (2026-11-30), so they count as warnings */
        if (r->log && (strstr(r->log, "Potential Performance Loss") ||
                       strstr(r->log, "is injected")))
            j->warnings++;
        j->cached = r->from_cache;
        j->cubin = r->cubin_size;
        j->code = code_hash(r->cubin, r->cubin_size);
        if (j->warnings) snprintf(j->err, sizeof j->err, "%s", r->log);
        j->status = k ? ramp_moe_v2_resources_of(&j->v, r, &lim, &j->res) : RAMP_ERR_INTERNAL;
        char name[96], file[104];
        ramp_moe_v2_program_name_phase(&j->v, &j->o, j->phase, name, sizeof name);
        snprintf(file, sizeof file, "%s.cubin", name);
        compile_pool_save_cubin("RAMP_MOE_V2_CUBIN_DIR", file, r);
    }
    if (j->status != RAMP_OK) snprintf(j->err, sizeof j->err, "%s", ramp_last_error());
    ramp_jit_result_free(r);
}

static void refusals(void) {
    ramp_geometry g;
    CHECK_OK(mv2_geometry("qwen3-30b", &g));
    ramp_moe_variant v = mv2_variant(&g, 8, 128);
    CHECK_OK(ramp_moe_v2_check(&v));
    v.cfg.width = 512; /* 768 % 512 != 0 */
    CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED);
    v = mv2_variant(&g, 8, 128);
    v.cfg.persistent = 1;
    CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED);
    /* split-K: 2 over a cluster of two CTAs, narrow fused tiles, d a
     * multiple of 512; not 4, not wide or two-phase, not d = 1280 */
    v = mv2_variant(&g, 8, 128);
    v.cfg.splitk = 2;
    CHECK_OK(ramp_moe_v2_check(&v));
    v.cfg.splitk = 4;
    CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED);
    v = mv2_variant(&g, 48, 128); /* split-K's rows stop at 32 (what is tested) */
    CHECK_OK(ramp_moe_v2_check(&v));
    v.cfg.splitk = 2;
    CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED);
    CHECK(strstr(ramp_last_error(), "rows 48") != NULL);
    v = mv2_variant(&g, MV2_WIDE_ROWS, 128);
    v.cfg.stages = 3;
    CHECK_OK(ramp_moe_v2_check(&v));
    v.cfg.splitk = 2;
    CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED);
    v.cfg.two_phase = 1;
    CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED);
    v = mv2_variant(&g, 8, 128);
    v.cfg.splitk = 2;
    v.geom.hidden = 1280;
    CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED);
    CHECK(strstr(ramp_last_error(), "512") != NULL);
    v.cfg.splitk = 1;
    CHECK_OK(ramp_moe_v2_check(&v));
    /* BF16: narrow and wide tiles, fused and two-phase; of the options only
     * the order (no pre-tiled weights, W2 permutation or ping-pong) */
    v = mv2_variant(&g, 8, 128);
    v.geom.bf16 = 1;
    CHECK_OK(ramp_moe_v2_check(&v));
    v.cfg.rows = MV2_WIDE_ROWS;
    v.cfg.stages = 3;
    CHECK_OK(ramp_moe_v2_check(&v));
    v.cfg.two_phase = 2;
    CHECK_OK(ramp_moe_v2_check(&v));
    {
        ramp_moe_variant b = mv2_variant(&g, 8, 128);
        b.geom.bf16 = 1;
        const char *what[] = {"tiled", "red4", "pipe"};
        for (int k = 0; k < 3; k++) {
            ramp_moe_v2_opts o = ramp_moe_v2_default_opts();
            o.tiled = k == 0;
            o.red4 = k == 1;
            o.pipe = k == 2;
            ramp_jit_result *r = NULL;
            CHECK_ERR(ramp_moe_v2_compile_opts(&b, &o, &r), RAMP_ERR_UNSUPPORTED);
            CHECK(r == NULL);
            if (!strstr(ramp_last_error(), what[k])) {
                fprintf(stderr, "BF16 with %s: refused without naming it: %s\n", what[k],
                        ramp_last_error());
                check_failures++;
            }
        }
    }
    {
        /* bulk reductions: refused where they are not built, naming why */
        static const char *const what[] = {"bf16 1", "red4 1", "split-K", "227 KB"};
        for (int k = 0; k < 4; k++) {
            ramp_moe_variant b = mv2_variant(&g, k == 3 ? 64 : 8, k == 3 ? 256 : 128);
            ramp_moe_v2_opts o = ramp_moe_v2_default_opts();
            o.bulkred = 1;
            b.geom.bf16 = k == 0;
            o.red4 = k == 1;
            if (k == 2) b.cfg.splitk = 2;
            ramp_jit_result *r = NULL;
            CHECK_ERR(ramp_moe_v2_compile_opts(&b, &o, &r), RAMP_ERR_UNSUPPORTED);
            CHECK(r == NULL);
            if (!strstr(ramp_last_error(), what[k]) || !strstr(ramp_last_error(), "bulk")) {
                fprintf(stderr, "bulkred refused without saying why (%s): %s\n", what[k],
                        ramp_last_error());
                check_failures++;
            }
        }
    }
    {
        /* multicast: refused where it is not built, naming why (narrow:
         * BF16, two launches, W2 in 256-row boxes) */
        for (int k = 1; k < 6; k++) {
            ramp_moe_variant b = mv2_variant(&g, k >= 3 ? 64 : MV2_WIDE_ROWS, 128);
            b.geom.bf16 = k == 3;
            ramp_moe_v2_opts o = ramp_moe_v2_default_opts();
            o.mcast = 1;
            o.tiled = k == 1;
            o.group = k == 2 ? 4 : 1;
            o.split = k == 4;
            o.w2box = k == 5;
            ramp_jit_result *r = NULL;
            CHECK_ERR(ramp_moe_v2_compile_opts(&b, &o, &r), RAMP_ERR_UNSUPPORTED);
            CHECK(r == NULL);
            CHECK(strstr(ramp_last_error(), "multicast") != NULL);
        }
        ramp_moe_variant b = mv2_variant(&g, MV2_WIDE_ROWS, 128);
        ramp_moe_v2_opts o = ramp_moe_v2_default_opts();
        o.mcast = 2;
        ramp_jit_result *r = NULL;
        CHECK_ERR(ramp_moe_v2_compile_opts(&b, &o, &r), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "mcast 2") != NULL);
    }
    {
        /* token rows by TMA: wide tiles only, tma_x 0..2, diagnostic 9 with 1 */
        ramp_moe_variant b = mv2_variant(&g, 64, 128);
        ramp_moe_v2_opts o = ramp_moe_v2_default_opts();
        o.tma_x = 1;
        ramp_jit_result *r = NULL;
        CHECK_ERR(ramp_moe_v2_compile_opts(&b, &o, &r), RAMP_ERR_UNSUPPORTED);
        CHECK(r == NULL && strstr(ramp_last_error(), "TMA") && strstr(ramp_last_error(), "rows 64"));
        b = mv2_variant(&g, MV2_WIDE_ROWS, 128);
        o.tma_x = 3;
        CHECK_ERR(ramp_moe_v2_compile_opts(&b, &o, &r), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(r == NULL && strstr(ramp_last_error(), "tma_x 3") != NULL);
        o.tma_x = 2;
        o.diag = 9;
        CHECK_ERR(ramp_moe_v2_compile_opts(&b, &o, &r), RAMP_ERR_UNSUPPORTED);
        CHECK(r == NULL && strstr(ramp_last_error(), "diagnostic 9") != NULL);
    }
    v = mv2_variant(&g, 8, 128);
    v.xbf16 = 1;
    CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED);
    v = mv2_variant(&g, 40, 128); /* N = 40: no wgmma instance */
    CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED);
    v = mv2_variant(&g, 8, 128);
    v.cfg.stages = 7;
    CHECK_ERR(ramp_moe_v2_check(&v), RAMP_ERR_UNSUPPORTED);
    /* options are checked before NVRTC runs */
    v = mv2_variant(&g, 8, 128);
    ramp_moe_v2_opts o = ramp_moe_v2_default_opts();
    o.tiled = 4;
    ramp_jit_result *r = NULL;
    CHECK_ERR(ramp_moe_v2_compile_opts(&v, &o, &r), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(r == NULL);
    /* stage units (tiled 3): not with the L2 prefetch; a narrow and a wide
     * tile compile, fused and both phases, and the wide one with multicast,
     * without spills */
    o = ramp_moe_v2_default_opts();
    o.tiled = 3;
    v = mv2_variant(&g, 8, 128);
    o.prefetch = 2;
    CHECK_ERR(ramp_moe_v2_compile_opts(&v, &o, &r), RAMP_ERR_UNSUPPORTED);
    CHECK(r == NULL && strstr(ramp_last_error(), "prefetch") != NULL);
    o.prefetch = 0;
    for (int ph = 0; ph <= 8; ph++) {
        v = mv2_variant(&g, ph < 3 ? 8 : MV2_WIDE_ROWS, 128);
        while (v.cfg.stages > 2 && ramp_moe_v2_check(&v) != RAMP_OK) v.cfg.stages--;
        o.split = ph % 3 > 0;
        o.mcast = ph >= 6;
        CHECK_OK(ramp_moe_v2_compile_phase(&v, &o, ph % 3, &r));
        const ramp_kernel_report *k = r ? ramp_jit_kernel(r, "ramp_moe_v2") : NULL;
        CHECK(k != NULL && k->spill_store_bytes == 0 && k->spill_load_bytes == 0);
        ramp_jit_result_free(r);
        r = NULL;
    }
    /* ... and a BF16 layer's (session 30): narrow fused; wide fused and both
     * phases, with multicast, and fused with one stage's wgmmas in flight */
    for (int c = 0; c < 8; c++) {
        v = mv2_variant(&g, c == 0 ? 8 : MV2_WIDE_ROWS, 128);
        v.geom.bf16 = 1;
        while (v.cfg.stages > 2 && ramp_moe_v2_check(&v) != RAMP_OK) v.cfg.stages--;
        o = ramp_moe_v2_default_opts();
        o.tiled = 3;
        const int ph = c >= 1 && c <= 6 ? (c - 1) % 3 : 0;
        o.split = ph > 0;
        o.mcast = c >= 4 && c <= 6;
        o.pipe = c == 7;
        CHECK_OK(ramp_moe_v2_compile_phase(&v, &o, ph, &r));
        const ramp_kernel_report *k = r ? ramp_jit_kernel(r, "ramp_moe_v2") : NULL;
        CHECK(k != NULL && k->spill_store_bytes == 0 && k->spill_load_bytes == 0);
        ramp_jit_result_free(r);
        r = NULL;
    }
    /* BF16 weights pre-tiled in 128 x 128-byte blocks (tiled 1, 2): refused */
    v = mv2_variant(&g, 8, 128);
    v.geom.bf16 = 1;
    o = ramp_moe_v2_default_opts();
    o.tiled = 1;
    CHECK_ERR(ramp_moe_v2_compile_opts(&v, &o, &r), RAMP_ERR_UNSUPPORTED);
    CHECK(r == NULL && strstr(ramp_last_error(), "stage units") != NULL);
    o = ramp_moe_v2_default_opts();
    v = mv2_variant(&g, 8, 128);
    /* stream-K: 0 or 1, and only a narrow split's phase 2 (not unsplit, not
     * wide, not grouped, not split-K), each refusal naming it */
    o = ramp_moe_v2_default_opts();
    o.streamk = 2;
    o.split = 1;
    CHECK_ERR(ramp_moe_v2_compile_phase(&v, &o, 2, &r), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(r == NULL && strstr(ramp_last_error(), "streamk 2") != NULL);
    for (int k = 0; k < 4; k++) {
        v = mv2_variant(&g, k == 1 ? 128 : 16, 128);
        o = ramp_moe_v2_default_opts();
        o.streamk = 1;
        o.split = k != 0;
        if (k == 2) o.group = 4;
        if (k == 3) v.cfg.splitk = 2;
        CHECK_ERR(ramp_moe_v2_compile_phase(&v, &o, 2, &r), RAMP_ERR_UNSUPPORTED);
        CHECK(r == NULL && strstr(ramp_last_error(), "stream-K") != NULL);
    }
    /* its program: the define and its own name, phase 2 only */
    v = mv2_variant(&g, 16, 128);
    o = ramp_moe_v2_default_opts();
    o.streamk = 1;
    o.split = 1;
    char name[128];
    ramp_moe_v2_program_name_phase(&v, &o, 2, name, sizeof name);
    CHECK(strstr(name, "-sk-ph2") != NULL);
    ramp_moe_v2_program_name_phase(&v, &o, 1, name, sizeof name);
    CHECK(strstr(name, "-sk") == NULL);
}

/* A program compiled with an option (c) beside the same one without it (p):
 * bad unless both compiled as compile_one requires of c (no spill, stack or
 * warning, RAMP_MV2_REGS registers, valid resources) and c's cubin is more
 * than 256 B larger (grows) or its code differs (code_hash). Counts a
 * failure and says why when bad. */
static int option_program_bad(const job *p, const job *c, int grows, const char *what) {
    const int bad = p->status != RAMP_OK || c->status != RAMP_OK || c->warnings ||
                    c->rep.spill_store_bytes || c->rep.spill_load_bytes || c->rep.stack_bytes ||
                    c->rep.registers != RAMP_MV2_REGS || !c->res.valid ||
                    (grows ? c->cubin < p->cubin + 256
                           : !c->code || !p->code || c->code == p->code);
    if (bad) {
        fprintf(stderr, "  %s: %s\n", what,
                c->status != RAMP_OK ? c->err : p->status != RAMP_OK ? p->err : c->err);
        check_failures++;
    }
    return bad;
}

/* The cluster gather (cgather, session 35): its range and refusals, each
 * naming it (a wide tile, two phases, BF16, split-K, a grouped order, a C that
 * does not divide the slices or the down chunks, C blocks of intermediate
 * past 227 KB), and the program's own name. */
static void cgather_refusals(void) {
    ramp_geometry g, gm;
    CHECK_OK(mv2_geometry("qwen3-30b", &g)); /* h 768: 6 slices of w 128; d 2048: 8 chunks */
    CHECK_OK(mv2_geometry("mixtral-8x22b", &gm));
    ramp_moe_variant v = mv2_variant(&g, 16, 128);
    ramp_moe_v2_opts o = ramp_moe_v2_default_opts();
    ramp_jit_result *r = NULL;
    o.cgather = 3;
    CHECK_ERR(ramp_moe_v2_opts_check(&v, &o), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "cgather 3") != NULL);
    for (int k = 0; k < 7; k++) {
        v = mv2_variant(k == 6 ? &gm : &g, k == 0 ? 128 : 16, 128);
        o = ramp_moe_v2_default_opts();
        o.cgather = k == 4 ? 4 : 2;
        if (k == 1) o.split = 1;
        if (k == 2) v.geom.bf16 = 1;
        if (k == 3) v.cfg.splitk = 2;
        if (k == 5) o.group = 4;
        if (k == 6) { /* 64 rows: 8 blocks of 64 x 128 B beside four 41 KB slots */
            v = mv2_variant(&gm, 64, 128);
            o.cgather = 8;
        }
        CHECK_ERR(ramp_moe_v2_compile_opts(&v, &o, &r), RAMP_ERR_UNSUPPORTED);
        CHECK(r == NULL && strstr(ramp_last_error(), "cgather") != NULL);
    }
    v = mv2_variant(&gm, 32, 128);
    o = ramp_moe_v2_default_opts();
    o.cgather = 8;
    CHECK_OK(ramp_moe_v2_opts_check(&v, &o));
    char name[128];
    ramp_moe_v2_program_name_opts(&v, &o, name, sizeof name);
    CHECK(strstr(name, "-cg8") != NULL);
    /* the layout: C blocks of intermediate and scales, and the two barriers */
    const ramp_moe_v2_layout l1 = ramp_moe_v2_layout_of(32, 128, 4);
    const ramp_moe_v2_layout l8 = ramp_moe_v2_layout_for_opts(&v, &o);
    CHECK(l8.iscale - l8.inter == 8 * (l1.iscale - l1.inter));
    CHECK(l8.amax - l8.iscale >= 8 * 32 * 4 && l8.xbars - l8.head >= 16 && l8.total > l1.total);
    /* the same through global memory (ggather, session 36): its range, not
     * with cgather, the same refusals naming it, its name and layout */
    o = ramp_moe_v2_default_opts();
    o.ggather = 3;
    CHECK_ERR(ramp_moe_v2_opts_check(&v, &o), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "ggather 3") != NULL);
    o.ggather = 8;
    o.cgather = 8;
    CHECK_ERR(ramp_moe_v2_opts_check(&v, &o), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "one exchange or the other") != NULL);
    o.cgather = 0;
    CHECK_OK(ramp_moe_v2_opts_check(&v, &o));
    ramp_moe_v2_program_name_opts(&v, &o, name, sizeof name);
    CHECK(strstr(name, "-gg8") != NULL && strstr(name, "-cg") == NULL);
    CHECK(ramp_moe_v2_layout_for_opts(&v, &o).total == l8.total);
    v = mv2_variant(&gm, 128, 128);
    CHECK_ERR(ramp_moe_v2_compile_opts(&v, &o, &r), RAMP_ERR_UNSUPPORTED);
    CHECK(r == NULL && strstr(ramp_last_error(), "ggather 8") != NULL);
    /* its workspace: G blocks of npad x w bytes and npad x w / 128 scales
     * per tile, then two counters per tile */
    const ramp_moe_v2_gg_ws gw = ramp_moe_v2_gg_ws_of(3, 32, 256, 16384, 4);
    CHECK(gw.block == 32 * 256 + 32 * 2 * 4 && gw.group == 4 * gw.block);
    CHECK(gw.counters == 3 * 16 * gw.group && gw.total == gw.counters + 3 * 16 * 8);
}

/* The cluster gather's programs: Mixtral-8x22B (h 16,384, d 6,144) with C 2,
 * 4 and 8 on narrow tiles of w 128 and 256, DeepSeek-V3 (28 chunks) with C 4,
 * and the same through global memory (gg), compiled without spills,
 * warnings or serialised wgmmas (compile_one's rules), each differing from
 * the plain program by more than its name. */
static void cgather_compiles(void) {
    static const struct {
        const char *model;
        int rows, width, cg, out; /* out: 1 bulk reductions, 2 float4 reductions */
        int gg;                   /* 1: ggather (global memory) instead of cgather */
    } cases[] = {{"mixtral-8x22b", 8, 128, 8, 0, 0},  {"mixtral-8x22b", 16, 128, 8, 0, 0},
                 {"mixtral-8x22b", 32, 128, 8, 0, 0}, {"mixtral-8x22b", 32, 128, 4, 0, 0},
                 {"mixtral-8x22b", 16, 256, 4, 0, 0}, {"mixtral-8x22b", 64, 128, 2, 0, 0},
                 {"mixtral-8x22b", 32, 128, 2, 1, 0}, {"mixtral-8x22b", 32, 128, 2, 2, 0},
                 {"deepseek-v3", 24, 128, 4, 0, 0},   {"mixtral-8x22b", 16, 128, 8, 0, 1},
                 {"mixtral-8x22b", 16, 128, 8, 1, 1}, {"mixtral-8x22b", 16, 128, 4, 2, 1},
                 {"mixtral-8x22b", 32, 128, 8, 0, 1}, {"mixtral-8x22b", 64, 128, 4, 0, 1},
                 {"deepseek-v3", 24, 128, 4, 0, 1}};
    const int n = (int)(sizeof cases / sizeof cases[0]);
    job *cj = calloc((size_t)n * 2, sizeof *cj);
    CHECK(cj != NULL);
    if (!cj) return;
    for (int i = 0; i < 2 * n; i++) {
        ramp_geometry g;
        CHECK_OK(mv2_geometry(cases[i / 2].model, &g));
        cj[i].v = mv2_variant(&g, cases[i / 2].rows, cases[i / 2].width);
        cj[i].o = ramp_moe_v2_default_opts();
        cj[i].o.tiled = cases[i / 2].out == 2 ? 0 : 3; /* units, as the layer serves Mixtral */
        cj[i].o.bulkred = cases[i / 2].out == 1;
        cj[i].o.red4 = cases[i / 2].out == 2;
        cj[i].o.cgather = i % 2 && !cases[i / 2].gg ? cases[i / 2].cg : 0;
        cj[i].o.ggather = i % 2 && cases[i / 2].gg ? cases[i / 2].cg : 0;
        cj[i].model = cases[i / 2].model;
    }
    compile_pool_run(2 * n, compile_pool_threads("RAMP_MOE_COMPILE_THREADS", 2, 32), compile_one,
                     cj);
    for (int i = 0; i < 2 * n; i += 2) {
        const job *p = &cj[i], *c = &cj[i + 1];
        char name[64];
        ramp_config_name(&c->v.cfg, name, sizeof name);
        char what[96];
        const int cg = c->o.ggather > 1 ? c->o.ggather : c->o.cgather;
        const char *how = c->o.ggather > 1 ? "gg" : "cg";
        snprintf(what, sizeof what, "%s %s %s%d", c->model, name, how, cg);
        const int bad = option_program_bad(p, c, 1, what);
        printf("%-12s %-22s %s%d%-8s %5d regs, %lld B shared, cubin %zu B (plain %zu B)%s\n",
               c->model, name, how, cg,
               c->o.bulkred ? " bulkred" : c->o.red4 ? " red4" : "", c->rep.registers,
               ramp_moe_v2_layout_for_opts(&c->v, &c->o).total, c->cubin, p->cubin,
               bad ? "   BAD" : "");
    }
    free(cj);
}

/* A Mixtral-8x22B phase-2 program on stage units as the layer compiles it:
 * rows 32 (4 stages) or a wide tile (3 stages, token rows by TMA), 4 K
 * parts; the caller changes the option under test. */
static void mixtral_down_job(job *j, const ramp_geometry *g, int rows) {
    j->v = mv2_variant(g, rows, 128);
    if (rows > 64) j->v.cfg.stages = 3;
    j->o = ramp_moe_v2_default_opts();
    j->o.tiled = 3;
    j->o.split = 1;
    j->o.tma_x = rows > 64;
    j->o.p2k = 4;
    j->phase = 2;
    j->model = "mixtral-8x22b";
}

/* Phase 2 with K parts of unequal length (session 35): Mixtral-8x22B's 128 K
 * blocks in 5 parts (25 or 26 each), a narrow and a wide (.tx) tile on stage
 * units, and a wide BF16 tile (256 K blocks of 64 elements), compiled as
 * compile_one requires (no spill, no warning, 168 registers); each program
 * differs from the 4-part one by more than a name. */
static void uneven_parts_compile(void) {
    ramp_geometry g;
    CHECK_OK(mv2_geometry("mixtral-8x22b", &g));
    job uj[6];
    memset(uj, 0, sizeof uj);
    for (int i = 0; i < 6; i++) {
        mixtral_down_job(&uj[i], &g, i < 2 ? 32 : 128);
        uj[i].v.geom.bf16 = i >= 4;
        uj[i].o.tma_x = i >= 2 && i < 4; /* (a BF16 wide tile reads its rows itself) */
        uj[i].o.p2k = i % 2 ? 5 : 4;
    }
    compile_pool_run(6, compile_pool_threads("RAMP_MOE_COMPILE_THREADS", 2, 32), compile_one, uj);
    for (int i = 1; i < 6; i += 2) {
        const job *c = &uj[i], *p = &uj[i - 1];
        char what[64];
        snprintf(what, sizeof what, "r%d%s down k5", c->v.cfg.rows, c->v.geom.bf16 ? " bf16" : "");
        const int bad = option_program_bad(p, c, 0, what);
        printf("mixtral-8x22b r%d%s down k5: %d regs, cubin %zu B (k4 %zu B)%s\n",
               c->v.cfg.rows, c->v.geom.bf16 ? " bf16" : "", c->rep.registers, c->cubin,
               p->cubin, bad ? "   BAD" : "");
    }
}

/* Phase 2 launched by programmatic dependent launch (opts.pdl, session 36):
 * its program waits after its first weights (RAMP_MV2_LATE_WAIT), a narrow
 * and a wide one on stage units compile as compile_one requires, each one's
 * code differing from the plain one's (-lw); refused without both
 * launches. */
static void pdl_phase2_compile(void) {
    ramp_geometry g;
    CHECK_OK(mv2_geometry("mixtral-8x22b", &g));
    job pj[4];
    memset(pj, 0, sizeof pj);
    for (int i = 0; i < 4; i++) {
        mixtral_down_job(&pj[i], &g, i < 2 ? 32 : 128);
        pj[i].o.pdl = i % 2;
    }
    compile_pool_run(4, compile_pool_threads("RAMP_MOE_COMPILE_THREADS", 2, 32), compile_one, pj);
    for (int i = 1; i < 4; i += 2) {
        char what[64];
        snprintf(what, sizeof what, "r%d down pdl", pj[i].v.cfg.rows);
        const job *c = &pj[i];
        const int bad = option_program_bad(&pj[i - 1], c, 0, what);
        printf("mixtral-8x22b r%d down pdl: %d regs, cubin %zu B (plain %zu B)%s\n",
               pj[i].v.cfg.rows, pj[i].rep.registers, pj[i].cubin, pj[i - 1].cubin,
               bad ? "   BAD" : "");
    }
    char name[128];
    ramp_moe_v2_program_name_phase(&pj[1].v, &pj[1].o, 2, name, sizeof name);
    CHECK(strstr(name, "-lw-ph2") != NULL);
    ramp_moe_v2_program_name_phase(&pj[1].v, &pj[1].o, 1, name, sizeof name);
    CHECK(strstr(name, "-lw") == NULL);
    ramp_moe_v2_opts o = ramp_moe_v2_default_opts();
    o.pdl = 1;
    ramp_moe_variant v = mv2_variant(&g, 32, 128);
    CHECK_ERR(ramp_moe_v2_opts_check(&v, &o), RAMP_ERR_UNSUPPORTED);
    CHECK(strstr(ramp_last_error(), "pdl 1") != NULL);
    o.pdl = 2;
    o.split = 1;
    CHECK_ERR(ramp_moe_v2_opts_check(&v, &o), RAMP_ERR_INVALID_ARGUMENT);
}

/* The stream-K option reaches the kernel: its phase-2 program is not the
 * plain one under another name (a name changes a cubin by a few bytes; the
 * stream-K loop by about 2 KB, 70,488 -> 72,536 B with NVRTC 13.0). */
static void streamk_differs(void) {
    ramp_geometry g;
    CHECK_OK(mv2_geometry("mixtral-8x22b", &g));
    ramp_moe_variant v = mv2_variant(&g, 32, 128);
    ramp_moe_v2_opts o = ramp_moe_v2_default_opts();
    o.split = 1;
    ramp_jit_result *plain = NULL, *sk = NULL;
    CHECK_OK(ramp_moe_v2_compile_phase(&v, &o, 2, &plain));
    o.streamk = 1;
    CHECK_OK(ramp_moe_v2_compile_phase(&v, &o, 2, &sk));
    CHECK(plain && sk &&
          (plain->cubin_size > sk->cubin_size + 256 || sk->cubin_size > plain->cubin_size + 256));
    ramp_jit_result_free(plain);
    ramp_jit_result_free(sk);
}

int main(void) {
    refusals();
    cgather_refusals();
    int major = 0, minor = 0;
    if (ramp_jit_version(&major, &minor) != RAMP_OK) {
        printf("test_moe_v2_compile: NVRTC not available (%s): compiles skipped\n",
               ramp_last_error());
        if (check_failures) return check_finish("test_moe_v2_compile");
        return 77;
    }
    printf("NVRTC %d.%d\n", major, minor);
    ramp_device_limits_h200(&lim);
    streamk_differs();
    cgather_compiles();
    pdl_phase2_compile();
    uneven_parts_compile();
    const char *all_env = getenv("RAMP_MOE_V2_COMPILE_ALL");
    const int all = all_env && atoi(all_env) > 0;
    const char *configs_env = getenv("RAMP_MOE_CONFIGS");
    const char *models[2] = {"qwen3-30b", "deepseek-v3"};
    for (int mi = 0; mi < 2; mi++) {
        ramp_geometry g;
        CHECK_OK(mv2_geometry(models[mi], &g));
        ramp_moe_variant vs[MV2_MAXV];
        int n = mv2_variants(&g, vs);
        for (int i = 0; i < n; i++) {
            const int r = vs[i].cfg.rows;
            if (njobs > (int)(sizeof jobs / sizeof *jobs) - 32) {
                fprintf(stderr, "test_moe_v2_compile: more than %d programs queued\n", njobs);
                return 1;
            }
            if (configs_env && *configs_env) { /* exactly the configurations named */
                char name[64], list[1100], key[80];
                ramp_config_name(&vs[i].cfg, name, sizeof name);
                snprintf(list, sizeof list, ",%s,", configs_env);
                snprintf(key, sizeof key, ",%s,", name);
                if (!strstr(list, key)) continue;
            } else if (!all) {
                /* default: one rows value per wgmma N (12 stands for 16,
                 * ...); split-K (a cluster of two): N = 8 and 32 */
                const int ks = vs[i].cfg.splitk > 1;
                if (ks && r != 8 && r != 32) continue;
                if (!ks && r != 2 && r != 12 && r != 24 && r != 32 && r != 48 && r != 64 &&
                    r != MV2_WIDE_ROWS)
                    continue;
            }
            /* pre-tiled (mode 1): only the producer's TMA coordinates
             * differ; float4 output (mode 2): only the epilogue; so the
             * smallest and largest N of each width stand for the rest */
            /* wide tiles also split in two launches (modes 3, 4: the up and
             * the down program; 5: the down program with K in 2 parts), and
             * in the grouped tile order (6: fused, 7 and 8: 3 and 5 with
             * groups of 4 row tiles) */
            const int wide = r == MV2_WIDE_ROWS;
            for (int mode = 0; mode <= (wide ? 8 : (all || r == 2 || r == 64) ? 2 : 0); mode++) {
                const int m = mode >= 6 ? (mode == 6 ? 0 : mode == 7 ? 3 : 5) : mode;
                jobs[njobs].v = vs[i];
                jobs[njobs].o = ramp_moe_v2_default_opts();
                jobs[njobs].o.tiled = m == 1;
                jobs[njobs].o.red4 = m == 2;
                jobs[njobs].o.split = m >= 3;
                jobs[njobs].phase = m == 3 ? 1 : m >= 4 ? 2 : 0;
                jobs[njobs].o.p2k = m == 5 ? 2 : 0;
                jobs[njobs].o.group = mode >= 6 ? 4 : 1;
                jobs[njobs].model = models[mi];
                njobs++;
            }
            /* narrow FP8 tiles in two launches too (session 14): the up
             * program, the down program with K whole and in 8 parts (or 4,
             * 2), and as stream-K (session 24) */
            if (!wide && vs[i].cfg.splitk <= 1 && (all || r == 12 || r == 32))
                for (int m = 1; m <= 4; m++) {
                    jobs[njobs].v = vs[i];
                    jobs[njobs].o = ramp_moe_v2_default_opts();
                    jobs[njobs].o.split = 1;
                    jobs[njobs].phase = m == 1 ? 1 : 2;
                    const int hk = vs[i].geom.inter / 128;
                    jobs[njobs].o.p2k = m != 3 ? 0 : hk % 8 == 0 ? 8 : hk % 4 == 0 ? 4 : 2;
                    jobs[njobs].o.streamk = m == 4;
                    jobs[njobs].model = models[mi];
                    njobs++;
                }
            /* the output by bulk reductions: the narrow unsplit FP8 tiles
             * whose staging fits (ramp_moe_v2_bulkred_check) */
            ramp_moe_v2_opts ob = ramp_moe_v2_default_opts();
            ob.bulkred = 1;
            if (!wide && vs[i].cfg.splitk <= 1 && ramp_moe_v2_bulkred_check(&vs[i], &ob) == RAMP_OK &&
                (all || r == 2 || r == 12 || r == 24 || r == 32)) {
                jobs[njobs].v = vs[i];
                jobs[njobs].o = ob;
                jobs[njobs].model = models[mi];
                njobs++;
            }
            /* wide tiles sharing weight stages by TMA multicast (session
             * 15): fused, the up program, the down program with K in 2
             * parts; FP8 and BF16; 6: BF16 fused with ping-pong too */
            for (int m = 0; wide && m < 7; m++) {
                jobs[njobs].v = vs[i];
                jobs[njobs].v.geom.bf16 = m >= 3;
                jobs[njobs].o = ramp_moe_v2_default_opts();
                jobs[njobs].o.mcast = 1;
                jobs[njobs].o.pipe = m == 6;
                jobs[njobs].o.split = m % 3 > 0 && m < 6;
                jobs[njobs].phase = m < 6 ? m % 3 : 0;
                jobs[njobs].o.p2k = m % 3 == 2 && m < 6 ? 2 : 0;
                jobs[njobs].model = models[mi];
                if (ramp_moe_v2_check(&jobs[njobs].v) == RAMP_OK) njobs++;
            }
            /* narrow fused FP8 tiles by multicast (session 45): rows
             * 12, 32, 64, row-major weights and stage units */
            for (int m = 0; !wide && vs[i].cfg.splitk <= 1 && m < 2 &&
                            (all || r == 12 || r == 32 || r == 64);
                 m++) {
                jobs[njobs].v = vs[i];
                jobs[njobs].o = ramp_moe_v2_default_opts();
                jobs[njobs].o.mcast = 1;
                jobs[njobs].o.tiled = m ? 3 : 0;
                if (m) jobs[njobs].o.prefetch = 0; /* (stage units: no L2 prefetch) */
                jobs[njobs].model = models[mi];
                njobs++;
            }
            /* the 256-wide tile's rows by TMA (tma_x 1, session 17): fused,
             * the up program, the down program with K in 2 parts; FP8, BF16 */
            for (int m = 0; wide && vs[i].cfg.width == 256 && m < 6; m++) {
                jobs[njobs].v = vs[i];
                jobs[njobs].v.geom.bf16 = m >= 3;
                jobs[njobs].o = ramp_moe_v2_default_opts();
                jobs[njobs].o.tma_x = 1;
                jobs[njobs].o.split = m % 3 > 0;
                jobs[njobs].phase = m % 3;
                jobs[njobs].o.p2k = m % 3 == 2 ? 2 : 0;
                jobs[njobs].model = models[mi];
                if (ramp_moe_v2_check(&jobs[njobs].v) == RAMP_OK) njobs++;
            }
            /* a wide BF16 tile with one stage's wgmmas in flight (pipe 1,
             * session 15): fused, the up program, the down program with K
             * whole and in 2 parts; ptxas must not serialise them (C7514) */
            for (int m = 0; wide && m < 4; m++) {
                jobs[njobs].v = vs[i];
                jobs[njobs].v.geom.bf16 = 1;
                jobs[njobs].o = ramp_moe_v2_default_opts();
                jobs[njobs].o.pipe = 1;
                jobs[njobs].o.split = m > 0;
                jobs[njobs].phase = m == 0 ? 0 : m == 1 ? 1 : 2;
                jobs[njobs].o.p2k = m == 3 ? 2 : 0;
                jobs[njobs].model = models[mi];
                if (ramp_moe_v2_check(&jobs[njobs].v) == RAMP_OK) njobs++;
            }
            /* the same tile for a BF16 layer; a wide one also in two launches
             * (the up program, the down program with K whole and in 2 parts) */
            for (int mode = 0; mode <= (wide ? 3 : 0); mode++) {
                jobs[njobs].v = vs[i];
                jobs[njobs].v.geom.bf16 = 1;
                jobs[njobs].o = ramp_moe_v2_default_opts();
                jobs[njobs].o.split = mode > 0;
                jobs[njobs].phase = mode == 1 ? 1 : mode >= 2 ? 2 : 0;
                jobs[njobs].o.p2k = mode == 3 ? 2 : 0;
                jobs[njobs].model = models[mi];
                if (ramp_moe_v2_check(&jobs[njobs].v) == RAMP_OK) njobs++;
            }
        }
    }
    if (configs_env && *configs_env && njobs == 0) { /* a misspelt name must fail */
        fprintf(stderr, "RAMP_MOE_CONFIGS='%s' names no v2 configuration of Qwen3-30B or "
                        "DeepSeek-V3 EP8\n", configs_env);
        check_failures++;
    }
    const int nth = compile_pool_threads("RAMP_MOE_COMPILE_THREADS", 2, 32);
    double secs = compile_pool_run(njobs, nth, compile_one, jobs);

    int cached = 0;
    printf("%-12s %-22s %5s %9s %6s\n", "model", "config", "regs", "smem(B)", "blocks");
    for (int i = 0; i < njobs; i++) {
        const job *j = &jobs[i];
        char name[64];
        ramp_config_name(&j->v.cfg, name, sizeof name);
        if (j->o.tiled) strncat(name, " tiled", sizeof name - strlen(name) - 1);
        if (j->o.red4) strncat(name, " red4", sizeof name - strlen(name) - 1);
        if (j->o.bulkred) strncat(name, " bulkred", sizeof name - strlen(name) - 1);
        if (j->o.mcast) strncat(name, " mcast", sizeof name - strlen(name) - 1);
        if (j->o.tma_x) strncat(name, " tmax", sizeof name - strlen(name) - 1);
        if (j->o.pipe) strncat(name, " pipe", sizeof name - strlen(name) - 1);
        if (j->phase) strncat(name, j->phase == 1 ? " up" : " down", sizeof name - strlen(name) - 1);
        if (j->o.p2k > 1)
            snprintf(name + strlen(name), sizeof name - strlen(name), " k%d", j->o.p2k);
        if (j->o.streamk) strncat(name, " sk", sizeof name - strlen(name) - 1);
        if (j->o.group > 1) strncat(name, " g4", sizeof name - strlen(name) - 1);
        if (j->v.geom.bf16) strncat(name, " bf16", sizeof name - strlen(name) - 1);
        if (j->status != RAMP_OK) {
            fprintf(stderr, "%s %s: %s\n", j->model, name, j->err);
            check_failures++;
            continue;
        }
        cached += j->cached;
        const ramp_kernel_report *r = &j->rep;
        const long long smem = j->phase == 2
                                   ? ramp_moe_v2_layout_down_bf(j->v.cfg.rows, j->v.cfg.stages,
                                                                j->v.geom.bf16).total
                                   : ramp_moe_v2_layout_for_opts(&j->v, &j->o).total;
        int bad = j->warnings || r->spill_store_bytes || r->spill_load_bytes || r->stack_bytes ||
                  r->smem_bytes || r->registers != RAMP_MV2_REGS || smem > 232448 ||
                  !j->res.valid || j->res.blocks_per_sm != 1;
        printf("%-12s %-22s %5d %9lld %6d%s\n", j->model, name, r->registers, smem,
               j->res.blocks_per_sm, bad ? "   BAD" : "");
        if (bad) {
            fprintf(stderr,
                    "  %s %s: spill %d/%d, stack %d, static smem %d, regs %d (must be %d), "
                    "valid %d (%s), %d ptxas warning(s)\n%.3000s\n",
                    j->model, name, r->spill_store_bytes, r->spill_load_bytes, r->stack_bytes,
                    r->smem_bytes, r->registers, RAMP_MV2_REGS, j->res.valid, j->res.why,
                    j->warnings, j->warnings ? j->err : "");
            check_failures++;
        }
    }
    printf("%d programs in %.1f s on %d threads, %d from the JIT cache\n", njobs, secs, nth,
           cached);
    return check_finish("test_moe_v2_compile");
}
