/*
 * test_jit.c - the run-time compiler (CI, no GPU needed).
 *
 * Without NVRTC: the ptxas report parser on known logs, the occupancy rules
 * of ramp_resources_from_report on hand-computed cases, and that every GPU
 * entry point fails with RAMP_ERR_NO_GPU and a message when the driver is
 * missing. With NVRTC (CI has the toolkit): compiles both variants of the
 * selection kernel for sm_90a and checks the ptxas report (no spills, no
 * stack, registers within the 1024-thread limit); the disk cache (hit gives
 * the same bytes, a changed define or header gives a new key, a corrupt
 * entry is recompiled, RAMP_JIT_CACHE=0 bypasses it); the dump switch; and
 * the errors for bad source, a missing include and a bad name.
 * Exits 77 (skipped) only when NVRTC cannot be loaded at all, after the
 * checks that need no NVRTC have passed.
 */
#include "check.h"
#include "jit.h"
#include "select_cpu.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void parse_known_logs(void) {
    const char *log =
        "ptxas info    : 4 bytes gmem\n"
        "ptxas info    : Compiling entry function 'alpha' for 'sm_90a'\n"
        "ptxas info    : Function properties for alpha\n"
        "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
        "ptxas info    : Used 168 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0]\n"
        "ptxas info    : Compile time = 16.889 ms\n"
        "ptxas warning : (C7508) Potential Performance Loss: setmaxnreg ignored\n"
        "ptxas info    : Compiling entry function 'beta' for 'sm_90a'\n"
        "ptxas info    : Function properties for beta\n"
        "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Function properties for helper_noinline\n"
        "ptxas         .     32 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
        "ptxas info    : Used 48 registers, used 2 barriers\n";
    ramp_kernel_report *k = NULL;
    int n = 0;
    CHECK_OK(ramp_ptxas_parse(log, &k, &n));
    CHECK_EQ_INT(n, 2);
    if (n == 2) {
        CHECK(strcmp(k[0].name, "alpha") == 0);
        CHECK_EQ_INT(k[0].registers, 168);
        CHECK_EQ_INT(k[0].smem_bytes, 1024);
        CHECK_EQ_INT(k[0].cmem_bytes, 400);
        CHECK_EQ_INT(k[0].stack_bytes, 16);
        CHECK_EQ_INT(k[0].spill_store_bytes, 8);
        CHECK_EQ_INT(k[0].spill_load_bytes, 12);
        CHECK_EQ_INT(k[0].barriers, 1);
        CHECK(strcmp(k[1].name, "beta") == 0);
        CHECK_EQ_INT(k[1].registers, 48);
        CHECK_EQ_INT(k[1].smem_bytes, 0);
        CHECK_EQ_INT(k[1].barriers, 2);
        /* a non-inlined callee's stack and spills count against its caller */
        CHECK_EQ_INT(k[1].stack_bytes, 32);
        CHECK_EQ_INT(k[1].spill_store_bytes, 4);
    }
    free(k);
    k = NULL;
    CHECK_OK(ramp_ptxas_parse("", &k, &n));
    CHECK_EQ_INT(n, 0);
    free(k);
    k = NULL;
    CHECK_ERR(ramp_ptxas_parse("ptxas info : Compiling entry function 'x\n", &k, &n),
              RAMP_ERR_FORMAT);
    CHECK_ERR(ramp_ptxas_parse("ptxas info    : Used 12 registers\n", &k, &n),
              RAMP_ERR_FORMAT);
    CHECK_ERR(ramp_ptxas_parse("ptxas info    : Compiling entry function 'x' for 'sm_90a'\n"
                               "ptxas . lots of bytes stack frame, 0 bytes spill stores\n",
                               &k, &n),
              RAMP_ERR_FORMAT);
    CHECK_ERR(ramp_ptxas_parse(NULL, &k, &n), RAMP_ERR_INVALID_ARGUMENT);
}

static void occupancy_rules(void) {
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    ramp_kernel_report k = {.registers = 128};
    ramp_resources r;
    /* 128 regs: 4096 per warp, 4 warps per sub-partition, 16 per SM; 8 warps
     * per block -> 2 blocks; 100 KB + 1 KB reserved: 2 fit in 228 KB. */
    CHECK_OK(ramp_resources_from_report(&k, 256, 100 * 1024, &lim, &r));
    CHECK_EQ_INT(r.blocks_per_sm, 2);
    CHECK_EQ_INT(r.valid, 1);
    CHECK_EQ_INT(r.measured, 1);
    CHECK_EQ_INT(r.smem_bytes, 100 * 1024);
    /* 120 KB: only one fits */
    CHECK_OK(ramp_resources_from_report(&k, 256, 120 * 1024, &lim, &r));
    CHECK_EQ_INT(r.blocks_per_sm, 1);
    /* 64 regs x 1024 threads: exactly one block */
    k.registers = 64;
    CHECK_OK(ramp_resources_from_report(&k, 1024, 0, &lim, &r));
    CHECK_EQ_INT(r.blocks_per_sm, 1);
    /* 65 regs x 1024 threads: 72 per thread after rounding, cannot launch */
    k.registers = 65;
    CHECK_OK(ramp_resources_from_report(&k, 1024, 0, &lim, &r));
    CHECK_EQ_INT(r.valid, 0);
    CHECK_EQ_INT(r.blocks_per_sm, 0);
    /* 32 regs x 128 threads: threads allow 16, blocks per SM cap 32: 16 */
    k.registers = 32;
    CHECK_OK(ramp_resources_from_report(&k, 128, 0, &lim, &r));
    CHECK_EQ_INT(r.blocks_per_sm, 16);
    /* too much shared memory for one block */
    CHECK_OK(ramp_resources_from_report(&k, 128, 240 * 1024, &lim, &r));
    CHECK_EQ_INT(r.valid, 0);
    CHECK(strstr(r.why, "shared memory") != NULL);
    /* spills make it invalid but keep the occupancy */
    k.spill_store_bytes = 4;
    CHECK_OK(ramp_resources_from_report(&k, 128, 0, &lim, &r));
    CHECK_EQ_INT(r.valid, 0);
    CHECK(strstr(r.why, "spill") != NULL);
    CHECK_ERR(ramp_resources_from_report(&k, 0, 0, &lim, &r), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_resources_from_report(&k, 2048, 0, &lim, &r), RAMP_ERR_INVALID_ARGUMENT);
}

/* In a child process whose driver path points nowhere: every GPU entry
 * point says RAMP_ERR_NO_GPU (or INVALID_ARGUMENT for NULL handles). */
static void no_driver(void) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("RAMP_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
        ramp_gpu *g = NULL;
        int n = -1;
        CHECK_ERR(ramp_gpu_count(&n), RAMP_ERR_NO_GPU);
        CHECK_ERR(ramp_gpu_open(0, &g), RAMP_ERR_NO_GPU);
        CHECK(strstr(ramp_last_error(), "no CUDA driver") != NULL);
        CHECK(strstr(ramp_last_error(), "/nonexistent/libcuda.so.1") != NULL);
        CHECK(g == NULL);
        CHECK_ERR(ramp_gpu_open(0, &g), RAMP_ERR_NO_GPU); /* same again */
        ramp_devptr p = 0;
        CHECK_ERR(ramp_gpu_alloc(NULL, 16, &p), RAMP_ERR_INVALID_ARGUMENT);
        ramp_stream s = NULL;
        CHECK_ERR(ramp_stream_create(NULL, &s), RAMP_ERR_INVALID_ARGUMENT);
        ramp_select_desc d = {.experts = 8, .topk = 2, .max_tokens = 4,
                              .local_experts = 8, .nentries = 1};
        d.entries[0] = (ramp_select_entry){.rows = 4, .slices = 1, .slots = 1};
        ramp_selector *sel = NULL;
        CHECK_ERR(ramp_selector_create(NULL, &d, &sel), RAMP_ERR_INVALID_ARGUMENT);
        CHECK_ERR(ramp_selector_launch(NULL, 0, 0, 0, NULL), RAMP_ERR_INVALID_ARGUMENT);
        ramp_gpu_close(NULL);
        ramp_module_free(NULL);
        ramp_graph_free(NULL);
        ramp_event_free(NULL);
        ramp_selector_free(NULL);
        fflush(stderr);
        _exit(check_failures ? 1 : 0);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void remove_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[1200];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(path);
        else unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static int file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static ramp_jit_result *compile_select(int group_only, int warps, int ctas) {
    ramp_jit_result *r = NULL;
    CHECK_OK(ramp_select_compile_variant(group_only, warps, ctas, 0, &r));
    return r;
}

/* The variants the selectors use: group-only or not, 8/16/32 warps, one
 * block or a cluster of 8 (2 and 4 differ from 8 in one constant), and the
 * non-portable cluster of 16 with 32 warps. */
static void selection_kernel_report(void) {
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    static const int warps[3] = {32, 16, 8};
    for (int v = 0; v < 14; v++) {
        const int g = v & 1, w = v < 12 ? warps[(v / 2) % 3] : 32;
        const int c = v < 6 ? 1 : v < 12 ? 8 : 16;
        ramp_jit_result *r = compile_select(g, w, c);
        if (!r) continue;
        CHECK(r->cubin_size > 0);
        CHECK_EQ_INT(r->nkernels, 1);
        const ramp_kernel_report *k = ramp_jit_kernel(r, "ramp_select");
        CHECK(k != NULL);
        if (!k || r->nkernels != 1)
            fprintf(stderr, "select variant %d/%d/%d: from_cache %d, key %016llx, log:\n%s\n",
                    g, w, c, r->from_cache, (unsigned long long)r->key, r->log);
        if (k) {
            printf("ramp_select (%s, %d warps, %d block%s): %d registers, %d B smem, %d B "
                   "stack, %d/%d B spill stores/loads\n", g ? "group only" : "select", w, c,
                   c > 1 ? "s" : "",
                   k->registers, k->smem_bytes, k->stack_bytes,
                   k->spill_store_bytes, k->spill_load_bytes);
            CHECK_EQ_INT(k->spill_store_bytes, 0);
            CHECK_EQ_INT(k->spill_load_bytes, 0);
            CHECK_EQ_INT(k->stack_bytes, 0);
            CHECK(k->registers > 0 && k->registers <= 65536 / (w * 32)); /* fits */
            CHECK_EQ_INT(k->smem_bytes, 0); /* all of it is dynamic */
            /* the biggest case of the issue fits and launches */
            ramp_select_desc d = {.experts = 256, .topk = 8, .max_tokens = 4096,
                                  .local_experts = 32, .nentries = 6};
            int64_t smem = ramp_select_smem_bytes(&d);
            ramp_resources res;
            CHECK_OK(ramp_resources_from_report(k, w * 32, (int)smem, &lim, &res));
            CHECK_EQ_INT(res.valid, 1);
            CHECK(res.blocks_per_sm >= 1);
        }
        CHECK_EQ_INT(r->ptxas_warnings, 0);
        CHECK(ramp_jit_kernel(r, "nope") == NULL);
        ramp_jit_result_free(r);
    }
    /* the switch-node build (the layer's poly_split 5) calls the device
     * runtime's cudaGraphSetConditional, left for the driver to resolve at
     * load: the name is in its cubin, not in the plain build's; no spills */
    for (int sw = 0; sw < 2; sw++) {
        ramp_jit_result *r = NULL;
        CHECK_OK(ramp_select_compile_switch(0, 32, 8, 0, sw, &r));
        if (!r) continue;
        const ramp_kernel_report *k = ramp_jit_kernel(r, "ramp_select");
        CHECK(k != NULL);
        int named = 0;
        static const char sym[] = "cudaGraphSetConditional";
        for (size_t i = 0; i + sizeof sym - 1 <= r->cubin_size && !named; i++)
            named = memcmp((const char *)r->cubin + i, sym, sizeof sym - 1) == 0;
        CHECK_EQ_INT(named, sw);
        if (k) {
            printf("ramp_select (switch build %d): %d registers, %d B stack, %d/%d B spills\n", sw,
                   k->registers, k->stack_bytes, k->spill_store_bytes, k->spill_load_bytes);
            CHECK_EQ_INT(k->spill_store_bytes, 0);
            CHECK_EQ_INT(k->spill_load_bytes, 0);
        }
        CHECK_EQ_INT(r->ptxas_warnings, 0);
        ramp_jit_result_free(r);
    }
    /* the programmatic-dependent build (ramp_select_desc.pdl_wait): its own
     * code (a wait at the top), its own cache key, and no spills */
    for (int c = 1; c <= 8; c += 7) {
        ramp_jit_result *r0 = NULL, *r1 = NULL;
        CHECK_OK(ramp_select_compile_opts(0, 32, c, 0, 0, 0, &r0));
        CHECK_OK(ramp_select_compile_opts(0, 32, c, 0, 0, 1, &r1));
        if (r0 && r1) {
            CHECK(r0->key != r1->key);
            CHECK(r0->cubin_size != r1->cubin_size ||
                  memcmp(r0->cubin, r1->cubin, r0->cubin_size) != 0);
            const ramp_kernel_report *k = ramp_jit_kernel(r1, "ramp_select");
            CHECK(k != NULL);
            if (k) {
                printf("ramp_select (pdl_wait, 32 warps, %d block%s): %d registers, %d/%d B spills\n",
                       c, c > 1 ? "s" : "", k->registers, k->spill_store_bytes, k->spill_load_bytes);
                CHECK_EQ_INT(k->spill_store_bytes, 0);
                CHECK_EQ_INT(k->spill_load_bytes, 0);
                CHECK_EQ_INT(k->stack_bytes, 0);
            }
            CHECK_EQ_INT(r1->ptxas_warnings, 0);
        }
        ramp_jit_result_free(r0);
        ramp_jit_result_free(r1);
    }
    ramp_jit_result *r = NULL;
    CHECK_ERR(ramp_select_compile(0, 12, &r), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_select_compile_variant(0, 32, 3, 0, &r), RAMP_ERR_INVALID_ARGUMENT);
}

static void cache_and_errors(const char *root) {
    char kdir[600], cdir[600], path[1400];
    snprintf(kdir, sizeof kdir, "%s/kernels", root);
    snprintf(cdir, sizeof cdir, "%s/cache", root);
    CHECK(mkdir(root, 0755) == 0);
    CHECK(mkdir(kdir, 0755) == 0);
    setenv("RAMP_CACHE_DIR", cdir, 1);
    unsetenv("RAMP_JIT_CACHE");
    unsetenv("RAMP_JIT_DUMP");

    snprintf(path, sizeof path, "%s/value.cuh", kdir);
    write_file(path, "#define VALUE 3\n");
    const char *src =
        "#include \"value.cuh\"\n"
        "extern \"C\" __global__ void scale(float *x) { x[threadIdx.x] *= VALUE * SCALE; }\n";
    const char *defs[] = {"SCALE=2"};
    ramp_jit_request req = {.name = "t-scale", .source = src, .defines = defs,
                            .ndefines = 1, .kernel_dir = kdir};
    ramp_jit_result *a = NULL, *b = NULL, *c = NULL;
    CHECK_OK(ramp_jit_compile(&req, &a));
    CHECK_OK(ramp_jit_compile(&req, &b));
    if (a && b) {
        CHECK_EQ_INT(a->from_cache, 0);
        CHECK_EQ_INT(b->from_cache, 1);
        CHECK(a->key == b->key);
        CHECK(a->cubin_size == b->cubin_size &&
              memcmp(a->cubin, b->cubin, a->cubin_size) == 0);
        CHECK(strcmp(a->log, b->log) == 0);
        CHECK_EQ_INT(b->nkernels, 1);
        CHECK(ramp_jit_kernel(b, "scale") != NULL);
        ramp_jit_cache_path(cdir, "t-scale", a->key, path, sizeof path);
        CHECK(file_exists(path));
        /* a corrupt entry (truncated) is ignored and rewritten */
        CHECK(truncate(path, 50) == 0);
        CHECK_OK(ramp_jit_compile(&req, &c));
        if (c) CHECK_EQ_INT(c->from_cache, 0);
        ramp_jit_result_free(c);
        c = NULL;
        CHECK_OK(ramp_jit_compile(&req, &c));
        if (c) CHECK_EQ_INT(c->from_cache, 1);
        ramp_jit_result_free(c);
        c = NULL;
        /* one flipped byte in the cubin: checksum catches it */
        FILE *f = fopen(path, "r+b");
        CHECK(f != NULL);
        if (f) {
            fseek(f, -20, SEEK_END);
            int ch = fgetc(f);
            fseek(f, -20, SEEK_END);
            fputc(ch ^ 0x40, f);
            fclose(f);
        }
        CHECK_OK(ramp_jit_compile(&req, &c));
        if (c) CHECK_EQ_INT(c->from_cache, 0);
        ramp_jit_result_free(c);
        c = NULL;
    }
    /* another define: another key */
    const char *defs2[] = {"SCALE=5"};
    ramp_jit_request req2 = req;
    req2.defines = defs2;
    CHECK_OK(ramp_jit_compile(&req2, &c));
    if (a && c) CHECK(a->key != c->key && c->from_cache == 0);
    ramp_jit_result_free(c);
    c = NULL;
    /* an edited header: another key */
    snprintf(path, sizeof path, "%s/value.cuh", kdir);
    write_file(path, "#define VALUE 4\n");
    CHECK_OK(ramp_jit_compile(&req, &c));
    if (a && c) CHECK(a->key != c->key && c->from_cache == 0);
    ramp_jit_result_free(c);
    c = NULL;
    /* cache off */
    setenv("RAMP_JIT_CACHE", "0", 1);
    CHECK_OK(ramp_jit_compile(&req, &c));
    if (c) CHECK_EQ_INT(c->from_cache, 0);
    ramp_jit_result_free(c);
    c = NULL;
    unsetenv("RAMP_JIT_CACHE");
    /* dump */
    setenv("RAMP_JIT_DUMP", "1", 1);
    const char *defs3[] = {"SCALE=7"};
    req2.defines = defs3;
    CHECK_OK(ramp_jit_compile(&req2, &c));
    if (c) {
        char base[1300];
        snprintf(base, sizeof base, "%s/t-scale-%016llx", cdir, (unsigned long long)c->key);
        snprintf(path, sizeof path, "%s.cu", base);
        CHECK(file_exists(path));
        /* NVRTC 12.9+'s own cache would drop the ptxas report: it is off */
        char *text = NULL;
        if (ramp_read_text_file(path, &text, NULL) == RAMP_OK) {
            CHECK(strstr(text, "--ptxas-options=-v") != NULL);
            if (c->nvrtc_major > 12 || (c->nvrtc_major == 12 && c->nvrtc_minor >= 9))
                CHECK(strstr(text, "--no-cache") != NULL);
            CHECK(strstr(text, "-DSCALE=7") != NULL);
        }
        free(text);
        snprintf(path, sizeof path, "%s.ptx", base);
        CHECK(file_exists(path));
        snprintf(path, sizeof path, "%s.log", base);
        CHECK(file_exists(path));
    }
    ramp_jit_result_free(c);
    c = NULL;
    unsetenv("RAMP_JIT_DUMP");
    ramp_jit_result_free(a);
    ramp_jit_result_free(b);

    /* errors */
    ramp_jit_request bad = req;
    bad.source = "extern \"C\" __global__ void broken(int *x) { x[0] = undefined_name; }\n";
    bad.name = "t-broken";
    CHECK_ERR(ramp_jit_compile(&bad, &c), RAMP_ERR_COMPILE);
    CHECK(strstr(ramp_last_error(), "t-broken") != NULL);
    CHECK(strstr(ramp_last_error(), "undefined_name") != NULL);
    bad.source = "#include \"missing.cuh\"\n";
    CHECK_ERR(ramp_jit_compile(&bad, &c), RAMP_ERR_NOT_FOUND);
    CHECK(strstr(ramp_last_error(), "missing.cuh") != NULL);
    bad.source = "#include \"../escape.cuh\"\n";
    CHECK_ERR(ramp_jit_compile(&bad, &c), RAMP_ERR_INVALID_ARGUMENT);
    bad = req;
    bad.name = "has space";
    CHECK_ERR(ramp_jit_compile(&bad, &c), RAMP_ERR_INVALID_ARGUMENT);
    bad.name = NULL;
    CHECK_ERR(ramp_jit_compile(&bad, &c), RAMP_ERR_INVALID_ARGUMENT);
    bad = req;
    bad.ndefines = 2;
    bad.defines = NULL;
    CHECK_ERR(ramp_jit_compile(&bad, &c), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_jit_compile(NULL, &c), RAMP_ERR_INVALID_ARGUMENT);
    bad = req;
    bad.arch = "compute_90a"; /* virtual arch: no cubin */
    CHECK_ERR(ramp_jit_compile(&bad, &c), RAMP_ERR_COMPILE);
    CHECK(c == NULL);
    unsetenv("RAMP_CACHE_DIR");
}

/* RAMP_JIT_DEFINES adds defines to every program and to the cache key: a
 * program that stops compiling without them compiles with them, under
 * another key than with other values; a list too long is refused. */
static void env_defines(const char *root) {
    char cdir[600];
    snprintf(cdir, sizeof cdir, "%s/env-cache", root);
    setenv("RAMP_CACHE_DIR", cdir, 1);
    const char *src = "#if !defined(EXTRA_A) || EXTRA_B != 7\n#error the env defines are missing\n#endif\n"
                      "extern \"C\" __global__ void k(int *x) { x[0] = EXTRA_B; }\n";
    ramp_jit_request req = {.name = "t-env", .source = src};
    ramp_jit_result *a = NULL, *b = NULL;
    unsetenv("RAMP_JIT_DEFINES");
    CHECK_ERR(ramp_jit_compile(&req, &a), RAMP_ERR_COMPILE);
    CHECK(strstr(ramp_last_error(), "env defines are missing") != NULL);
    setenv("RAMP_JIT_DEFINES", "  EXTRA_A EXTRA_B=7 ", 1);
    CHECK_OK(ramp_jit_compile(&req, &a));
    setenv("RAMP_JIT_DEFINES", "EXTRA_A EXTRA_B=7 EXTRA_C=1", 1);
    CHECK_OK(ramp_jit_compile(&req, &b));
    if (a && b) CHECK(a->key != b->key); /* every define is in the key */
    ramp_jit_result_free(a);
    ramp_jit_result_free(b);
    a = NULL;
    setenv("RAMP_JIT_DEFINES", "A1 A2 A3 A4 A5 A6 A7 A8 A9", 1);
    CHECK_ERR(ramp_jit_compile(&req, &a), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "RAMP_JIT_DEFINES") != NULL);
    CHECK(a == NULL);
    unsetenv("RAMP_JIT_DEFINES");
    unsetenv("RAMP_CACHE_DIR");
}

int main(void) {
    check_seed();
    parse_known_logs();
    occupancy_rules();
    no_driver();
    if (check_failures) return check_finish("test_jit");

    int major = 0, minor = 0;
    if (ramp_jit_version(&major, &minor) != RAMP_OK) {
        printf("NVRTC not available (%s): skipping the compile checks\n",
               ramp_last_error());
        return 77;
    }
    printf("NVRTC %d.%d\n", major, minor);
    char root[512];
    snprintf(root, sizeof root, "%s/jit-%ld", check_tmpdir(), (long)getpid());
    remove_tree(root);
    cache_and_errors(root);
    env_defines(root);
    /* the selection kernel, compiled into the test's own cache */
    char cdir[600];
    snprintf(cdir, sizeof cdir, "%s/select-cache", root);
    setenv("RAMP_CACHE_DIR", cdir, 1);
    selection_kernel_report();
    selection_kernel_report(); /* again, from the cache */
    remove_tree(root);
    return check_finish("test_jit");
}
