/*
 * test_config_compile.c - ramp_config_compile (src/config_compile.c), the
 * library behind `ramp configs --ptxas`, against the kernels' own compile
 * paths: for a v1 configuration and for fused and two-phase v2 ones (with K
 * in 2 parts), the same program names, ptxas reports and launch shapes as
 * ramp_moe_v1_compile / ramp_moe_v2_compile_phase give, the resources
 * ramp_moe_v1_resources gives, cubins written byte-identical to the
 * compiler's; refusals (a kernel that does not run the configuration, an
 * unknown kernel, a cubin folder that does not exist: no file left
 * behind). And ramp_plan_compile, a plan's polymorphic kernel, against
 * ramp_moe_poly_compile of the menu as the layer builds it: v1 (one kernel)
 * and v2 with a two-phase entry (two kernels, the second's shared memory
 * the down layout's), with and without float4 output; refusals. Exit 77
 * without NVRTC. No GPU needed.
 */
#include "check.h"
#include "moe_gpu.h"
#include "moe_poly.h"
#include "moe_v2.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

static ramp_geometry geometry(const char *model) {
    ramp_model m;
    ramp_layout L;
    ramp_geometry g;
    memset(&g, 0, sizeof g);
    CHECK_OK(ramp_model_lookup(model, &m));
    CHECK_OK(ramp_layout_parse("EP8", &L));
    CHECK_OK(ramp_geometry_for(&m, L, &g));
    return g;
}

static ramp_config config(const char *name) {
    ramp_config c;
    memset(&c, 0, sizeof c);
    CHECK_OK(ramp_config_parse(name, &c));
    return c;
}

/* Whether dir/name.cubin holds exactly r's cubin. */
static int cubin_matches(const char *dir, const char *name, const ramp_jit_result *r) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.cubin", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char *buf = malloc(r->cubin_size + 1);
    size_t n = buf ? fread(buf, 1, r->cubin_size + 1, f) : 0;
    fclose(f);
    int same = buf && n == r->cubin_size && memcmp(buf, r->cubin, n) == 0;
    free(buf);
    return same;
}

static int files_in(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void same_report(const ramp_kernel_report *a, const ramp_kernel_report *b) {
    CHECK_EQ_INT(a->registers, b->registers);
    CHECK_EQ_INT(a->spill_store_bytes, b->spill_store_bytes);
    CHECK_EQ_INT(a->spill_load_bytes, b->spill_load_bytes);
    CHECK_EQ_INT(a->stack_bytes, b->stack_bytes);
    CHECK_EQ_INT(a->smem_bytes, b->smem_bytes);
}

static void v1_config(const char *dir, const ramp_device_limits *lim) {
    ramp_geometry g = geometry("qwen3-30b");
    ramp_config c = config("r16.w128.s4");
    ramp_config_compiled cc;
    CHECK_OK(ramp_config_compile(RAMP_KERNEL_V1, &c, &g, lim, dir, &cc));
    ramp_moe_variant v = {c, g, 0};
    ramp_jit_result *r = NULL;
    CHECK_OK(ramp_moe_v1_compile(&v, &r));
    if (!r) return;
    char name[96];
    ramp_moe_v1_program_name(&v, name, sizeof name);
    CHECK_EQ_INT(cc.nprograms, 1);
    CHECK(strcmp(cc.program[0], name) == 0);
    same_report(&cc.report[0], ramp_jit_kernel(r, "ramp_moe_v1"));
    CHECK_EQ_INT(cc.threads, ramp_moe_v1_layout_for(&v).threads);
    CHECK_EQ_INT(cc.dynamic_smem[0], ramp_moe_v1_layout_for(&v).total);
    ramp_resources res;
    CHECK_OK(ramp_moe_v1_resources(&v, lim, &res));
    CHECK_EQ_INT(cc.res.valid, res.valid);
    CHECK_EQ_INT(cc.res.measured, 1);
    CHECK_EQ_INT(cc.res.blocks_per_sm, res.blocks_per_sm);
    CHECK_EQ_INT(cc.res.smem_bytes, res.smem_bytes);
    CHECK_EQ_INT(cc.res.regs_per_thread, res.regs_per_thread);
    CHECK(cubin_matches(dir, name, r));
    ramp_jit_result_free(r);
    /* v1 does not run v2's wide tiles */
    ramp_config wide = config("r128.w256.s3");
    CHECK_ERR(ramp_config_compile(RAMP_KERNEL_V1, &wide, &g, lim, NULL, &cc), RAMP_ERR_UNSUPPORTED);
}

/* A v2 configuration: each program as ramp_moe_v2_compile_phase builds it
 * (bf16: for a BF16 layer; units: reading weights in stage units). */
static void v2_config(const char *dir, const ramp_device_limits *lim, const char *cfg_name,
                      int programs, int bf16, int units) {
    ramp_geometry g = geometry("deepseek-v3");
    g.bf16 = bf16;
    ramp_config c = config(cfg_name);
    ramp_config_compiled cc;
    CHECK_OK(ramp_config_compile_weights(RAMP_KERNEL_V2, &c, &g, units, lim, dir, &cc));
    CHECK_EQ_INT(cc.nprograms, programs);
    const ramp_moe_v2_opts o = ramp_moe_v2_weight_opts(units);
    CHECK_EQ_INT(cc.threads, RAMP_MV2_THREADS);
    CHECK_EQ_INT(cc.res.valid, 1);
    CHECK_EQ_INT(cc.res.blocks_per_sm, 1);
    CHECK_EQ_INT(cc.ptxas_warnings, 0);
    ramp_moe_variant v;
    memset(&v, 0, sizeof v);
    v.cfg = c;
    v.geom = g;
    int smem = 0;
    for (int i = 0; i < programs; i++) {
        const int phase = programs == 2 ? i + 1 : 0;
        char name[96];
        ramp_moe_v2_program_name_phase(&v, &o, phase, name, sizeof name);
        CHECK(strcmp(cc.program[i], name) == 0);
        CHECK((strstr(name, "-units") != NULL) == units);
        /* the names say what they are: the down program its K parts */
        if (programs == 2) CHECK(strstr(name, i ? "-ph2" : "-ph1") != NULL);
        if (c.two_phase > 1 && i == 1) CHECK(strstr(name, "-k2-ph2") != NULL);
        CHECK(strstr(name, bf16 ? "-bf16" : "-fp8") != NULL); /* tools/sass-check's --expect auto */
        ramp_jit_result *r = NULL;
        CHECK_OK(ramp_moe_v2_compile_phase(&v, &o, phase, &r));
        if (!r) continue;
        same_report(&cc.report[i], ramp_jit_kernel(r, "ramp_moe_v2"));
        CHECK_EQ_INT(cc.report[i].registers, RAMP_MV2_REGS);
        const long long want = phase == 2 ? ramp_moe_v2_layout_down_bf(c.rows, c.stages, bf16).total
                                          : ramp_moe_v2_layout_for(&v).total;
        CHECK_EQ_INT(cc.dynamic_smem[i], want);
        if (cc.dynamic_smem[i] + cc.report[i].smem_bytes > smem)
            smem = cc.dynamic_smem[i] + cc.report[i].smem_bytes;
        CHECK(cubin_matches(dir, name, r));
        ramp_jit_result_free(r);
    }
    CHECK_EQ_INT(cc.res.smem_bytes, smem); /* the larger of the two */
}

/* A plan of the named entries for model on EP8 (coefficients: any valid). */
static ramp_plan plan_of(const char *model, int kernel, const char *const *names, int n) {
    ramp_plan p;
    memset(&p, 0, sizeof p);
    snprintf(p.model, sizeof p.model, "%s", model);
    snprintf(p.layout, sizeof p.layout, "EP8");
    p.geom = geometry(model);
    p.sms = 132;
    p.blocks_per_sm = 1;
    p.kernel = kernel;
    p.count = n;
    for (int i = 0; i < n; i++) {
        p.configs[i] = config(names[i]);
        for (int t = 0; t < 4; t++) p.theta[i][t] = 1.0 + i + t;
    }
    return p;
}

static void plan_kernel(const char *dir, const ramp_device_limits *lim, const char *model,
                        int kernel, const char *const *names, int n, int red4, int want_kernels,
                        int bf16, int units) {
    ramp_plan p = plan_of(model, kernel, names, n);
    p.geom.bf16 = bf16;
    p.weight_units = units;
    CHECK_OK(ramp_plan_validate(&p));
    char path[1100], base[200];
    snprintf(base, sizeof base, "plan-%s-%d%s%s", model, red4, bf16 ? "-bf16" : "",
             units ? "-units" : "");
    snprintf(path, sizeof path, "%s/%s.cubin", dir, base);
    ramp_plan_compiled pc;
    CHECK_OK(ramp_plan_compile(&p, red4, lim, path, &pc));
    ramp_poly_desc d;
    memset(&d, 0, sizeof d);
    d.geom = p.geom;
    d.kernel = kernel;
    d.red4 = red4;
    d.units = units;
    d.count = n;
    memcpy(d.cfgs, p.configs, sizeof(ramp_config) * (size_t)n);
    ramp_jit_result *r = NULL;
    CHECK_OK(ramp_moe_poly_compile(&d, &r));
    if (!r) return;
    CHECK_EQ_INT(pc.nkernels, want_kernels);
    CHECK(strcmp(pc.kernel[0], ramp_moe_poly_kernel_name(&d)) == 0);
    if (want_kernels == 2) CHECK(strcmp(pc.kernel[1], RAMP_POLY_V2_DOWN_KERNEL) == 0);
    int threads;
    long long smem;
    ramp_moe_poly_shape(&d, &threads, &smem);
    CHECK_EQ_INT(pc.threads, threads);
    CHECK_EQ_INT(pc.dynamic_smem[0], smem);
    for (int i = 0; i < pc.nkernels; i++) same_report(&pc.report[i], ramp_jit_kernel(r, pc.kernel[i]));
    long long down = 0;
    for (int i = 0; i < n; i++)
        if (p.configs[i].two_phase) {
            long long l = ramp_moe_v2_layout_down_bf(p.configs[i].rows, p.configs[i].stages,
                                                     p.geom.bf16).total;
            if (l > down) down = l;
        }
    if (want_kernels == 2) CHECK_EQ_INT(pc.dynamic_smem[1], down);
    CHECK_EQ_INT(pc.res.valid, 1);
    CHECK_EQ_INT(pc.res.measured, 1);
    CHECK_EQ_INT(pc.ptxas_warnings, 0);
    /* the cubin as the compiler made it, at the path given */
    char dirname_[1100];
    snprintf(dirname_, sizeof dirname_, "%s", dir);
    CHECK(cubin_matches(dirname_, base, r));
    ramp_jit_result_free(r);
}

static void plan_compiles(const char *dir, const ramp_device_limits *lim) {
    const char *v1[] = {"r16.w128.s4", "r8.w256.s3"};
    plan_kernel(dir, lim, "qwen3-30b", RAMP_KERNEL_V1, v1, 2, 0, 1, 0, 0);
    const char *v2[] = {"r32.w512.s4", "r128.w128.s4.ph2.dk2", "r8.w128.s4"};
    plan_kernel(dir, lim, "deepseek-v3", RAMP_KERNEL_V2, v2, 3, 0, 2, 0, 0);
    plan_kernel(dir, lim, "deepseek-v3", RAMP_KERNEL_V2, v2, 3, 1, 2, 0, 0);
    const char *narrow[] = {"r32.w512.s4", "r8.w128.s4"};
    plan_kernel(dir, lim, "deepseek-v3", RAMP_KERNEL_V2, narrow, 2, 0, 1, 0, 0);
    plan_kernel(dir, lim, "deepseek-v3", RAMP_KERNEL_V2, v2, 3, 0, 2, 1, 0); /* a BF16 layer */
    plan_kernel(dir, lim, "deepseek-v3", RAMP_KERNEL_V2, v2, 3, 0, 2, 0, 1); /* stage units */
    /* refusals: float4 output on a v1 plan, an entry the kernel does not run,
     * a plan that does not validate */
    ramp_plan p = plan_of("qwen3-30b", RAMP_KERNEL_V1, v1, 2);
    ramp_plan_compiled pc;
    CHECK_ERR(ramp_plan_compile(&p, 1, lim, NULL, &pc), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_plan_compile(&p, 2, lim, NULL, &pc), RAMP_ERR_INVALID_ARGUMENT);
    p = plan_of("deepseek-v3", RAMP_KERNEL_V2, v2, 3); /* float4 output reads row-major W2 */
    p.weight_units = 1;
    CHECK_ERR(ramp_plan_compile(&p, 1, lim, NULL, &pc), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "stage units") != NULL);
    const char *wide[] = {"r16.w128.s4", "r128.w256.s3"};
    p = plan_of("qwen3-30b", RAMP_KERNEL_V1, wide, 2);
    CHECK(ramp_plan_compile(&p, 0, lim, NULL, &pc) != RAMP_OK);
    p = plan_of("qwen3-30b", RAMP_KERNEL_V1, v1, 2);
    p.count = 0;
    CHECK_ERR(ramp_plan_compile(&p, 0, lim, NULL, &pc), RAMP_ERR_INVALID_ARGUMENT);
}

int main(void) {
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    ramp_geometry g = geometry("qwen3-30b");
    ramp_config c = config("r16.w128.s4");
    ramp_config_compiled cc;
    /* argument checks come before the compiler */
    CHECK_ERR(ramp_config_compile((ramp_kernel_version)7, &c, &g, &lim, NULL, &cc),
              RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_config_compile(RAMP_KERNEL_V2, NULL, &g, &lim, NULL, &cc),
              RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_config_compile_weights(RAMP_KERNEL_V1, &c, &g, 1, &lim, NULL, &cc),
              RAMP_ERR_INVALID_ARGUMENT); /* stage units are kernel v2's */
    CHECK_ERR(ramp_config_compile_weights(RAMP_KERNEL_V2, &c, &g, 2, &lim, NULL, &cc),
              RAMP_ERR_INVALID_ARGUMENT);
    int major = 0, minor = 0;
    if (ramp_jit_version(&major, &minor) != RAMP_OK) {
        printf("test_config_compile: NVRTC not available (%s): compiles skipped\n", ramp_last_error());
        return check_failures ? check_finish("test_config_compile") : 77;
    }
    char dir[1024], missing[1100];
    snprintf(dir, sizeof dir, "%s/test_config_compile.%ld", check_tmpdir(), (long)getpid());
    CHECK(mkdir(dir, 0777) == 0);
    v1_config(dir, &lim);
    v2_config(dir, &lim, "r64.w256.s4", 1, 0, 0);
    v2_config(dir, &lim, "r64.w256.s4", 1, 1, 0);
    v2_config(dir, &lim, "r128.w128.s4.ph2.dk2", 2, 0, 0);
    v2_config(dir, &lim, "r128.w128.s4.ph2.dk2", 2, 1, 0);
    v2_config(dir, &lim, "r128.w256.s3", 1, 0, 0);
    v2_config(dir, &lim, "r64.w256.s4", 1, 0, 1);
    v2_config(dir, &lim, "r128.w128.s4.ph2.dk2", 2, 1, 1);
    CHECK_EQ_INT(files_in(dir), 11); /* 1 + 1 + 1 + 2 + 2 + 1 + 1 + 2 cubins, no temporaries */
    plan_compiles(dir, &lim);
    CHECK_EQ_INT(files_in(dir), 16); /* + the plans' (two share a name), no temporaries */
    /* a folder that is not there: an error, and nothing written */
    snprintf(missing, sizeof missing, "%s/not-there", dir);
    CHECK_ERR(ramp_config_compile(RAMP_KERNEL_V2, &c, &g, &lim, missing, &cc), RAMP_ERR_IO);
    CHECK_EQ_INT(files_in(dir), 16);
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.') remove(path);
    }
    if (d) closedir(d);
    rmdir(dir);
    return check_finish("test_config_compile");
}
