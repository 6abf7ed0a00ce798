/*
 * test_hopper_compile.c - the Hopper building blocks without a GPU (CI).
 *
 * 1. TMA descriptors (src/tensormap.c): ramp_tmap_2d_check accepts the maps
 *    the v2 kernel needs (e4m3 and bf16 weights, boxes of 128 bytes x 64 or
 *    128 rows) and refuses each broken rule with RAMP_ERR_INVALID_ARGUMENT
 *    and a message naming it (base not 16-byte aligned, row stride not a
 *    multiple of 16, box dimension outside 1..256, inner box over the
 *    128-byte swizzle span or not a multiple of 16 bytes, ...).
 *    ramp_tmap_2d_encode refuses a misaligned output, then needs the
 *    driver: without one RAMP_ERR_NO_GPU with the loader's message, with one
 *    a filled map.
 * 2. kernels/wgmma_test.cuh compiled with NVRTC for sm_90a for every N
 *    (8, 16, 24, 32, 48, 64) in e4m3 and bf16, both kernels: ptxas must
 *    report no spills, no stack frame, <= 255 registers, no static shared
 *    memory, no warnings at all (a setmaxnreg it ignores, C7508, or wgmmas
 *    it serialises would warn), exactly RAMP_WGT_WS_REGS registers at entry
 *    for the warp-specialised kernel (setmaxnreg's pool arithmetic assumes
 *    it), and the dynamic layout within the 227 KB per block. Prints the
 *    registers per N. RAMP_HOPPER_CUBIN_DIR=dir writes each cubin there
 *    (tools/gpu-check step wgmma disassembles them: QGMMA / HGMMA present,
 *    no local memory). 12 compiles on 2 threads; exit 77 without NVRTC
 *    (after part 1).
 * 3. kernels/read_floor.cuh (the benchmarks' measured floor, bench_read.h):
 *    both kernels compile, no spills, no stack, no warnings, and the bulk
 *    kernel's ring (READ_BULK_SMEM) within the 227 KB per block.
 * 4. kernels/inflow.cuh (bench_inflow's probe) with the rings bench_inflow
 *    builds at both ends (32 KB x 4, 64 KB x 3, and the loads' 128 KB x 1):
 *    all three kernels compile, no spills, no stack, no warnings, each
 *    ring plus its barriers within the 227 KB per block.
 */
#include "check.h"
#include "compile_pool.h"
#include "tensormap.h"
#include "../bench/bench_read.h"
#include "wgmma_util.h"

/* ------------------------------------------------------------ tensormap */

/* A valid e4m3 weight map: [4 experts x 1536 rows][2048], box 128 B x 64. */
static ramp_tmap_2d good_map(void) {
    ramp_tmap_2d t;
    memset(&t, 0, sizeof t);
    t.base = 0x7f0000000000ull;
    t.elem_bytes = 1;
    t.rows = 4 * 1536;
    t.cols = 2048;
    t.row_stride = 2048;
    t.box_rows = 64;
    t.box_cols = 128;
    return t;
}

/* Expects RAMP_ERR_INVALID_ARGUMENT with `what` in the message. */
static void expect_refused(const ramp_tmap_2d *t, const char *what, int line) {
    ramp_status s = ramp_tmap_2d_check(t);
    if (s != RAMP_ERR_INVALID_ARGUMENT || !strstr(ramp_last_error(), what)) {
        fprintf(stderr, "%s:%d: expected a refusal mentioning '%s', got %s: %s\n", __FILE__,
                line, what, ramp_status_name(s), ramp_last_error());
        check_failures++;
    }
}
#define REFUSED(t, what) expect_refused(&(t), what, __LINE__)

static void tensormap_checks(void) {
    ramp_tmap_2d t = good_map();
    CHECK_OK(ramp_tmap_2d_check(&t));
    t.box_rows = 128; /* two consumers' rows in one box */
    CHECK_OK(ramp_tmap_2d_check(&t));
    t.box_rows = 256;
    CHECK_OK(ramp_tmap_2d_check(&t));
    /* bf16: 64 elements = 128 bytes per box row */
    t = good_map();
    t.elem_bytes = 2;
    t.row_stride = 4096;
    t.box_cols = 64;
    CHECK_OK(ramp_tmap_2d_check(&t));
    /* padded rows are fine as long as the stride is a multiple of 16 */
    t = good_map();
    t.row_stride = 2048 + 16;
    CHECK_OK(ramp_tmap_2d_check(&t));
    /* a third dimension (kernel v2's workspace: row tiles of 128 rows, each
     * followed by its scales): planes at least a plane apart, 16-aligned */
    t = good_map();
    t.rows = 128;
    t.planes = 24;
    t.plane_stride = 128 * 2048 + 256;
    CHECK_OK(ramp_tmap_2d_check(&t));
    t.plane_stride = 128 * 2048 - 16;
    REFUSED(t, "shorter than a plane");
    t.plane_stride = 128 * 2048 + 8;
    REFUSED(t, "plane stride");
    t.plane_stride = 128 * 2048;
    t.planes = (1ull << 32) + 1;
    REFUSED(t, "third dimension must be 1 .. 2^32");

    CHECK_ERR(ramp_tmap_2d_check(NULL), RAMP_ERR_INVALID_ARGUMENT);
    t = good_map();
    t.elem_bytes = 4;
    REFUSED(t, "elem_bytes = 4");
    t = good_map();
    t.base = 0;
    REFUSED(t, "base address is 0");
    for (int off = 1; off < 16; off += 7) {
        t = good_map();
        t.base += (unsigned)off;
        REFUSED(t, "not 16-byte aligned");
    }
    t = good_map();
    t.base += 32; /* 16-aligned but not 128: allowed */
    CHECK_OK(ramp_tmap_2d_check(&t));
    t = good_map();
    t.rows = 0;
    REFUSED(t, "each dimension must be 1 .. 2^32");
    t = good_map();
    t.cols = (1ull << 32) + 1;
    t.row_stride = t.cols;
    REFUSED(t, "each dimension must be 1 .. 2^32");
    /* dense rows of K = 2064 e4m3 are 16-byte multiples; of K = 2056 not */
    t = good_map();
    t.cols = 2064;
    t.row_stride = 2064;
    CHECK_OK(ramp_tmap_2d_check(&t));
    t.cols = 2056;
    t.row_stride = 2056;
    REFUSED(t, "not a multiple of 16 B");
    t = good_map();
    t.row_stride = 1024;
    REFUSED(t, "shorter than a row");
    t = good_map();
    t.row_stride = 1ull << 40;
    REFUSED(t, "not below 2^40");
    t = good_map();
    t.box_rows = 257;
    REFUSED(t, "each box dimension must be 1 .. 256");
    t = good_map();
    t.box_rows = 0;
    REFUSED(t, "each box dimension must be 1 .. 256");
    t = good_map();
    t.box_cols = 256; /* 256 B of e4m3: over the swizzle span */
    REFUSED(t, "exceeds the 128-byte swizzle span");
    t = good_map();
    t.elem_bytes = 2;
    t.row_stride = 4096;
    t.box_cols = 128; /* 256 B of bf16 */
    REFUSED(t, "exceeds the 128-byte swizzle span");
    t = good_map();
    t.box_cols = 8; /* 8 B */
    REFUSED(t, "not a multiple of 16 B");
    t = good_map();
    t.box_cols = 144;
    REFUSED(t, "exceeds the 128-byte swizzle span");

    /* encode: the arguments and the output's alignment, before the driver */
    struct {
        CUtensorMap m[2];
    } buf;
    CUtensorMap *mis = (CUtensorMap *)(void *)((char *)&buf + 32);
    t = good_map();
    CHECK_ERR(ramp_tmap_2d_encode(&t, mis), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "64-byte aligned") != NULL);
    t.base += 8;
    CHECK_ERR(ramp_tmap_2d_encode(&t, &buf.m[0]), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "16-byte aligned") != NULL);
    CHECK_ERR(ramp_tmap_2d_encode(NULL, &buf.m[0]), RAMP_ERR_INVALID_ARGUMENT);

    /* a valid map needs the driver */
    int ngpu = 0;
    ramp_status gs = ramp_gpu_count(&ngpu);
    /* the driver wants a current context (CUDA_ERROR_INVALID_CONTEXT
     * otherwise, seen on the H200 2026-11-30): ramp_gpu_open binds one */
    ramp_gpu *gpu = NULL;
    if (gs == RAMP_OK && ngpu > 0) CHECK_OK(ramp_gpu_open(0, &gpu));
    t = good_map();
    memset(&buf, 0, sizeof buf);
    ramp_status s = ramp_tmap_2d_encode(&t, &buf.m[0]);
    ramp_gpu_close(gpu);
    if (gs == RAMP_ERR_NO_GPU) {
        CHECK_EQ_INT(s, RAMP_ERR_NO_GPU);
        const char *msg = ramp_last_error();
        /* the loader's message: what was tried and why it failed */
        CHECK(strstr(msg, "driver") != NULL || strstr(msg, "GPU") != NULL);
        printf("tensormap encode without a GPU: %s: %s\n", ramp_status_name(s), msg);
    } else {
        CHECK_OK(s);
        int nonzero = 0;
        for (int i = 0; i < 16; i++) nonzero |= buf.m[0].opaque[i] != 0;
        CHECK(nonzero);
        printf("tensormap encode on the GPU machine: %s\n", ramp_status_name(s));
    }
}

/* ------------------------------------------------------------ compiles */

typedef struct {
    int n, bf16;
    ramp_status status;
    char err[2048];
    ramp_kernel_report rep[2];
    int found[2];
    int warnings, cached;
} job;

static job jobs[2 * WGT_NN];
static int njobs;

/* One job of the compile pool (compile_pool.h). */
static void compile_one(int i, void *ctx) {
    job *j = (job *)ctx + i;
    ramp_jit_result *r = NULL;
    j->status = wgt_compile(j->n, j->bf16, &r);
    if (j->status != RAMP_OK) {
        snprintf(j->err, sizeof j->err, "%s", ramp_last_error());
        return;
    }
    for (int k = 0; k < 2; k++) {
        const ramp_kernel_report *rep = ramp_jit_kernel(r, WGT_KERNELS[k]);
        if (rep) {
            j->rep[k] = *rep;
            j->found[k] = 1;
        }
    }
    j->warnings = r->ptxas_warnings;
    j->cached = r->from_cache;
    if (j->warnings) snprintf(j->err, sizeof j->err, "%s", r->log);
    char file[64];
    snprintf(file, sizeof file, "wgmma-test-n%d-%s.cubin", j->n, j->bf16 ? "bf16" : "e4m3");
    compile_pool_save_cubin("RAMP_HOPPER_CUBIN_DIR", file, r);
    ramp_jit_result_free(r);
}

static void compile_checks(void) {
    for (int bf16 = 0; bf16 < 2; bf16++)
        for (int i = 0; i < WGT_NN; i++) {
            jobs[njobs].n = WGT_NS[i];
            jobs[njobs].bf16 = bf16;
            njobs++;
        }
    double secs = compile_pool_run(njobs, 2, compile_one, jobs);

    int cached = 0;
    printf("%-5s %3s  %-36s  %-36s\n", "type", "N", "ramp_wgmma_test: regs smem(dyn)",
           "ramp_wgmma_test_ws: regs smem(dyn)");
    for (int i = 0; i < njobs; i++) {
        const job *j = &jobs[i];
        const char *type = j->bf16 ? "bf16" : "e4m3";
        if (j->status != RAMP_OK) {
            fprintf(stderr, "%s N=%d: %s\n", type, j->n, j->err);
            check_failures++;
            continue;
        }
        cached += j->cached;
        int bad = j->warnings != 0;
        for (int k = 0; k < 2; k++) {
            const ramp_kernel_report *r = &j->rep[k];
            bad |= !j->found[k] || r->spill_store_bytes || r->spill_load_bytes ||
                   r->stack_bytes || r->registers > 255 || r->registers < 1 ||
                   r->smem_bytes != 0 || ramp_wgt_smem_bytes(k, j->n) > 232448;
        }
        bad |= j->rep[1].registers != RAMP_WGT_WS_REGS;
        printf("%-5s %3d  regs %3d, %6d B                  regs %3d, %6d B%s\n", type, j->n,
               j->rep[0].registers, ramp_wgt_smem_bytes(0, j->n), j->rep[1].registers,
               ramp_wgt_smem_bytes(1, j->n), bad ? "   BAD" : "");
        if (bad) {
            for (int k = 0; k < 2; k++)
                fprintf(stderr,
                        "  %s: found %d, spill %d/%d, stack %d, static smem %d, regs %d "
                        "(ws kernel must have %d)\n",
                        WGT_KERNELS[k], j->found[k], j->rep[k].spill_store_bytes,
                        j->rep[k].spill_load_bytes, j->rep[k].stack_bytes, j->rep[k].smem_bytes,
                        j->rep[k].registers, RAMP_WGT_WS_REGS);
            if (j->warnings)
                fprintf(stderr, "  %d ptxas warning(s):\n%.3000s\n", j->warnings, j->err);
            check_failures++;
        }
    }
    printf("%d programs (%d kernels) in %.1f s, %d from the JIT cache\n", njobs, 2 * njobs, secs,
           cached);
}

/* ------------------------------------------------------------ read floor */

static void read_floor_checks(void) {
    ramp_jit_request rq;
    memset(&rq, 0, sizeof rq);
    rq.name = "read-floor";
    rq.source = "#include \"read_floor.cuh\"\n";
    ramp_jit_result *r = NULL;
    CHECK_OK(ramp_jit_compile(&rq, &r));
    if (!r) return;
    static const char *const names[2] = {"ramp_read_floor", "ramp_read_bulk"};
    for (int i = 0; i < 2; i++) {
        const ramp_kernel_report *k = ramp_jit_kernel(r, names[i]);
        CHECK(k != NULL);
        if (!k) continue;
        printf("%s: %d registers, %d B static smem, %d/%d B spill stores/loads, %d B stack\n",
               names[i], k->registers, k->smem_bytes, k->spill_store_bytes, k->spill_load_bytes,
               k->stack_bytes);
        CHECK(k->spill_store_bytes == 0 && k->spill_load_bytes == 0 && k->stack_bytes == 0);
        /* the bulk kernel's static mbarriers beside its dynamic ring */
        CHECK(READ_BULK_SMEM + k->smem_bytes <= 232448);
    }
    CHECK(strstr(r->log ? r->log : "", "warning") == NULL);
    ramp_jit_result_free(r);
}

/* ------------------------------------------------------------ inflow probe */

/* kernels/inflow.cuh compiled with a ring of `stages` pieces of `piece` bytes. */
static ramp_status inflow_compile(int piece, int stages, ramp_jit_result **r) {
    char d0[48], d1[48];
    snprintf(d0, sizeof d0, "RAMP_INFLOW_PIECE=%d", piece);
    snprintf(d1, sizeof d1, "RAMP_INFLOW_STAGES=%d", stages);
    const char *defs[2] = {d0, d1};
    ramp_jit_request rq;
    memset(&rq, 0, sizeof rq);
    rq.name = "inflow";
    rq.source = "#include \"inflow.cuh\"\n";
    rq.defines = defs;
    rq.ndefines = 2;
    return ramp_jit_compile(&rq, r);
}

static void inflow_checks(void) {
    static const int rings[3][2] = {{32768, 4}, {65536, 3}, {131072, 1}};
    static const char *const names[3] = {"ramp_inflow_bulk", "ramp_inflow_mc", "ramp_inflow_loads"};
    for (int v = 0; v < 3; v++) {
        ramp_jit_result *r = NULL;
        CHECK_OK(inflow_compile(rings[v][0], rings[v][1], &r));
        if (!r) continue;
        for (int i = 0; i < 3; i++) {
            const ramp_kernel_report *k = ramp_jit_kernel(r, names[i]);
            CHECK(k != NULL);
            if (!k) continue;
            CHECK(k->spill_store_bytes == 0 && k->spill_load_bytes == 0 && k->stack_bytes == 0);
            if (i < 2) CHECK(rings[v][0] * rings[v][1] + k->smem_bytes <= 232448);
            if (v == 0)
                printf("%s: %d registers, %d B static smem\n", names[i], k->registers,
                       k->smem_bytes);
        }
        CHECK(strstr(r->log ? r->log : "", "warning") == NULL);
        ramp_jit_result_free(r);
    }
    /* a ring over 224 KB is refused by the kernel itself */
    ramp_jit_result *r = NULL;
    CHECK(inflow_compile(65536, 4, &r) == RAMP_ERR_COMPILE &&
          strstr(ramp_last_error(), "the ring within 224 KB") != NULL);
    ramp_jit_result_free(r);
}

int main(void) {
    tensormap_checks();
    int major = 0, minor = 0;
    if (ramp_jit_version(&major, &minor) != RAMP_OK) {
        printf("test_hopper_compile: NVRTC not available (%s): compile checks skipped\n",
               ramp_last_error());
        if (check_failures) return check_finish("test_hopper_compile");
        return 77;
    }
    printf("NVRTC %d.%d\n", major, minor);
    compile_checks();
    read_floor_checks();
    inflow_checks();
    return check_finish("test_hopper_compile");
}
