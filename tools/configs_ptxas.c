/*
 * configs_ptxas.c - `ramp configs --ptxas`: every configuration of the space
 * compiled as the GPU path compiles it (NVRTC, sm_90a; no GPU needed), with
 * what ptxas measured in place of the estimates, and optionally the cubins
 * for a disassembler (tools/sass-check). Compiles run on worker threads;
 * the table comes out in the space's order. `ramp configs --plan PLAN
 * --ptxas`: the same for the polymorphic kernel a plan's layer runs.
 */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    ramp_kernel_version kernel;
    int units;
    const ramp_config *cfgs;
    const ramp_geometry *g;
    const ramp_device_limits *lim;
    const char *cubin_dir;
    ramp_config_compiled *out;
    ramp_status *status;
    char (*err)[512];
    int n, next, done;
    pthread_mutex_t lock;
} pool;

static void *worker(void *arg) {
    pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        int i = p->next < p->n ? p->next++ : -1;
        pthread_mutex_unlock(&p->lock);
        if (i < 0) return NULL;
        p->status[i] = ramp_config_compile_weights(p->kernel, &p->cfgs[i], p->g, p->units, p->lim,
                                                   p->cubin_dir, &p->out[i]);
        if (p->status[i] != RAMP_OK) snprintf(p->err[i], sizeof p->err[i], "%s", ramp_last_error());
        pthread_mutex_lock(&p->lock);
        p->done++;
        cli_progress((double)p->done / p->n, "compiling");
        pthread_mutex_unlock(&p->lock);
    }
}

/* Removes a failed run's staging folder and whatever it wrote there (a
 * configuration that failed half-way may have left its first program's
 * cubin; the folder is this run's own). */
static void remove_staging(const char *dir) {
    DIR *d = opendir(dir);
    char path[1400];
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        remove(path);
    }
    if (d) closedir(d);
    rmdir(dir);
}

/* A folder that does not exist, or an empty one (rename() replaces an
 * empty folder). */
static int dir_usable(const char *dir) {
    struct stat sb;
    if (stat(dir, &sb) != 0) return errno == ENOENT;
    if (!S_ISDIR(sb.st_mode)) return 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    int empty = 1;
    for (struct dirent *e; empty && (e = readdir(d));)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    return empty;
}

static int staging_make(const char *cubin_dir, char *staging, size_t size);

/* The staging folder becomes cubin_dir when the run succeeded (keep),
 * else it goes; returns the exit code of a failed rename, else 0. */
static int staging_finish(const char *staging, const char *cubin_dir, int keep) {
    if (keep && rename(staging, cubin_dir) == 0) return 0;
    if (keep)
        fprintf(stderr, "ramp configs: cannot rename %s to %s: %s\n", staging, cubin_dir,
                strerror(errno));
    remove_staging(staging);
    return keep ? CLI_EXIT_ERROR : 0;
}

int configs_ptxas(ramp_kernel_version kernel, int units, const ramp_config *cfgs, int n,
                  const ramp_geometry *g, const ramp_device_limits *lim, int jobs,
                  const char *cubin_dir, int csv) {
    if (cubin_dir && !dir_usable(cubin_dir))
        return cli_usage_error("configs", "--cubin-dir %s: not a folder, or not empty", cubin_dir);
    int major = 0, minor = 0;
    if (ramp_jit_version(&major, &minor) != RAMP_OK) return cli_fail("configs", RAMP_ERR_NO_GPU);
    char staging[1100] = "";
    if (cubin_dir) {
        if (!staging_make(cubin_dir, staging, sizeof staging)) return CLI_EXIT_ERROR;
    }
    ramp_config_compiled *cc = calloc((size_t)(n ? n : 1), sizeof *cc);
    ramp_status *st = calloc((size_t)(n ? n : 1), sizeof *st);
    char (*err)[512] = calloc((size_t)(n ? n : 1), sizeof *err);
    if (!cc || !st || !err) {
        free(cc);
        free(st);
        free(err);
        if (*staging) rmdir(staging);
        return cli_fail("configs", RAMP_ERR_OUT_OF_MEMORY);
    }
    pool p = {kernel, units, cfgs, g, lim, *staging ? staging : NULL, cc, st, err, n, 0, 0,
              PTHREAD_MUTEX_INITIALIZER};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t th[32];
    int nth = 0;
    for (; nth < jobs && nth < n; nth++)
        if (pthread_create(&th[nth], NULL, worker, &p) != 0) break;
    if (nth == 0) worker(&p);
    for (int i = 0; i < nth; i++) pthread_join(th[i], NULL);
    cli_progress_done("compiling");
    clock_gettime(CLOCK_MONOTONIC, &t1);

    int failed = 0, bad = 0, cached = 0, programs = 0;
    if (csv)
        puts("config,valid,programs,regs,regs_down,spill_store_bytes,spill_load_bytes,"
             "stack_bytes,smem_bytes,smem_down_bytes,threads,blocks_per_sm,ptxas_warnings,reason");
    else
        printf("%-28s %5s %7s %11s %5s %8s %8s %4s %4s %s\n", "config", "valid", "regs",
               "spill st/ld", "stack", "smem", "smem2", "thr", "occ", "why");
    for (int i = 0; i < n; i++) {
        char name[64];
        ramp_config_name(&cfgs[i], name, sizeof name);
        if (st[i] != RAMP_OK) {
            fprintf(stderr, "ramp configs: %s: %s: %s\n", name, ramp_status_name(st[i]), err[i]);
            failed++;
            continue;
        }
        const ramp_config_compiled *c = &cc[i];
        const int two = c->nprograms == 2;
        int spill_st = c->report[0].spill_store_bytes + (two ? c->report[1].spill_store_bytes : 0);
        int spill_ld = c->report[0].spill_load_bytes + (two ? c->report[1].spill_load_bytes : 0);
        int stack = c->report[0].stack_bytes > c->report[1].stack_bytes ? c->report[0].stack_bytes
                                                                          : c->report[1].stack_bytes;
        const int ok = c->res.valid && !c->ptxas_warnings;
        bad += !ok;
        cached += c->from_cache;
        programs += c->nprograms;
        char why[160];
        snprintf(why, sizeof why, "%s%s%s", c->res.valid ? "" : c->res.why,
                 c->ptxas_warnings && !c->res.valid ? "; " : "",
                 c->ptxas_warnings ? "ptxas warning(s)" : "");
        if (csv) {
            printf("%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s\n", name, ok, c->nprograms,
                   c->report[0].registers, two ? c->report[1].registers : 0, spill_st, spill_ld,
                   stack, c->dynamic_smem[0] + c->report[0].smem_bytes,
                   two ? c->dynamic_smem[1] + c->report[1].smem_bytes : 0, c->threads,
                   c->res.blocks_per_sm, c->ptxas_warnings, why);
        } else {
            char regs[16], smem2[16], spill[24];
            if (two) snprintf(regs, sizeof regs, "%d/%d", c->report[0].registers, c->report[1].registers);
            else snprintf(regs, sizeof regs, "%d", c->report[0].registers);
            if (two) snprintf(smem2, sizeof smem2, "%d", c->dynamic_smem[1] + c->report[1].smem_bytes);
            else snprintf(smem2, sizeof smem2, "-");
            snprintf(spill, sizeof spill, "%d/%d", spill_st, spill_ld);
            printf("%-28s %5s %7s %11s %5d %8d %8s %4d %4d %s\n", name, ok ? "yes" : "NO", regs,
                   spill, stack, c->dynamic_smem[0] + c->report[0].smem_bytes, smem2, c->threads,
                   c->res.blocks_per_sm, why);
        }
    }
    const double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    const int rc = *staging ? staging_finish(staging, cubin_dir, !failed && !bad) : 0;
    if (!csv)
        printf("%d configurations, %d programs compiled by NVRTC %d.%d for sm_90a (%d from the JIT "
               "cache) in %.1f s on %d thread(s): %d cannot run as compiled%s%s\n",
               n - failed, programs, major, minor, cached, secs, nth ? nth : 1, bad,
               failed ? ", compile errors above" : "",
               cubin_dir && !failed && !bad && !rc ? "; cubins in the --cubin-dir folder" : "");
    free(cc);
    free(st);
    free(err);
    if (failed || bad) {
        fprintf(stderr, "ramp configs: %d configuration(s) of the space failed to compile and %d "
                        "cannot run as compiled (spills, stack, shared memory, warnings)%s\n",
                failed, bad, *staging ? "; no cubins written" : "");
        return CLI_EXIT_ERROR;
    }
    return rc;
}

/* The staging folder next to cubin_dir (which must not exist or be empty);
 * 0 and a message when it cannot be made. */
static int staging_make(const char *cubin_dir, char *staging, size_t size) {
    snprintf(staging, size, "%s.partial-%ld", cubin_dir, (long)getpid());
    if (mkdir(staging, 0777) == 0) return 1;
    fprintf(stderr, "ramp configs: cannot create %s: %s\n", staging, strerror(errno));
    return 0;
}

/* The size classes a kernel v2 layer of up to CLASSES_MAX_TOKENS tokens
 * serving p makes (ramp_plan_size_classes), one line. */
#define CLASSES_MAX_TOKENS 4096
static void print_size_classes(const ramp_plan *p) {
    int tokens[RAMP_MENU_MAX];
    unsigned masks[RAMP_MENU_MAX];
    const int n = ramp_plan_size_classes(p, CLASSES_MAX_TOKENS, tokens, masks);
    if (n <= 0) {
        printf("size classes: none (%d expert%s a GPU: no batch size up to the search's cap "
               "leaves an entry out); the whole menu serves every batch\n", p->geom.experts,
               p->geom.experts == 1 ? "" : "s");
        return;
    }
    printf("size classes (a kernel v2 layer of up to %d tokens, the count on the host%s):",
           CLASSES_MAX_TOKENS,
           p->geom.experts > 1 ? ", ramp_layer_desc.many_expert_classes 1" : "");
    for (int c = 0; c < n; c++) {
        printf("%s <= %d tokens {", c ? ";" : "", tokens[c]);
        for (int i = 0, k = 0; i < p->count; i++) {
            if (!((masks[c] >> i) & 1u)) continue;
            char name[64];
            ramp_config_name(&p->configs[i], name, sizeof name);
            printf("%s%s", k++ ? " " : "", name);
        }
        printf("}");
    }
    printf("; the whole menu above\n");
}

int configs_plan_info(const char *plan_path) {
    ramp_plan p;
    ramp_status s = ramp_plan_read(plan_path, &p);
    if (s) return cli_fail("configs", s);
    printf("%s %s, plan %s: kernel %s%s, %d expert%s a GPU, menu:", p.model, p.layout, plan_path,
           ramp_kernel_version_name((ramp_kernel_version)p.kernel),
           p.weight_units ? ", weights in stage units" : "", p.geom.experts,
           p.geom.experts == 1 ? "" : "s");
    for (int i = 0; i < p.count; i++) {
        char name[64];
        ramp_config_name(&p.configs[i], name, sizeof name);
        printf(" %s", name);
    }
    printf("\n");
    print_size_classes(&p);
    return 0;
}

int configs_plan_ptxas(const char *plan_path, int red4, const char *cubin_dir, int csv) {
    if (cubin_dir && !dir_usable(cubin_dir))
        return cli_usage_error("configs", "--cubin-dir %s: not a folder, or not empty", cubin_dir);
    ramp_plan p;
    ramp_status s = ramp_plan_read(plan_path, &p);
    if (s) return cli_fail("configs", s);
    int major = 0, minor = 0;
    if (ramp_jit_version(&major, &minor) != RAMP_OK) return cli_fail("configs", RAMP_ERR_NO_GPU);
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    char staging[1100] = "", path[1200] = "";
    if (cubin_dir) {
        if (!staging_make(cubin_dir, staging, sizeof staging)) return CLI_EXIT_ERROR;
        snprintf(path, sizeof path, "%s/poly.cubin", staging);
    }
    ramp_plan_compiled pc;
    s = ramp_plan_compile(&p, red4, &lim, *path ? path : NULL, &pc);
    if (s) {
        if (*staging) remove_staging(staging);
        return cli_fail("configs", s);
    }
    if (csv) {
        puts("kernel,valid,regs,spill_store_bytes,spill_load_bytes,stack_bytes,smem_bytes,threads,"
             "blocks_per_sm,ptxas_warnings,reason");
    } else {
        printf("%s %s, plan %s: %d entries compiled into one kernel (kernel %s%s):", p.model,
               p.layout, plan_path, p.count,
               ramp_kernel_version_name((ramp_kernel_version)p.kernel),
               red4 ? ", W2 permuted (red4)" : p.weight_units ? ", weights in stage units" : "");
        for (int i = 0; i < p.count; i++) {
            char name[64];
            ramp_config_name(&p.configs[i], name, sizeof name);
            printf(" %s", name);
        }
        printf("\n%-24s %5s %5s %11s %5s %8s %4s %s\n", "kernel", "valid", "regs", "spill st/ld",
               "stack", "smem", "thr", "why");
    }
    const int ok = pc.res.valid && !pc.ptxas_warnings;
    for (int i = 0; i < pc.nkernels; i++) {
        const ramp_kernel_report *r = &pc.report[i];
        const int smem = pc.dynamic_smem[i] + r->smem_bytes;
        if (csv)
            printf("%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s\n", pc.kernel[i], ok, r->registers,
                   r->spill_store_bytes, r->spill_load_bytes, r->stack_bytes, smem, pc.threads,
                   pc.res.blocks_per_sm, pc.ptxas_warnings, ok ? "" : pc.res.valid ? "ptxas warning(s)" : pc.res.why);
        else
            printf("%-24s %5s %5d %5d/%-5d %5d %8d %4d %s\n", pc.kernel[i], ok ? "yes" : "NO",
                   r->registers, r->spill_store_bytes, r->spill_load_bytes, r->stack_bytes, smem,
                   pc.threads, ok ? "" : pc.res.valid ? "ptxas warning(s)" : pc.res.why);
    }
    const int rc = *staging ? staging_finish(staging, cubin_dir, ok) : 0;
    if (!csv) print_size_classes(&p);
    if (!csv)
        printf("NVRTC %d.%d, sm_90a%s: %s%s\n", major, minor, pc.from_cache ? " (from the JIT cache)" : "",
               ok ? "can run as compiled" : "cannot run as compiled",
               cubin_dir && ok && !rc ? "; poly.cubin in the --cubin-dir folder" : "");
    if (!ok) {
        fprintf(stderr, "ramp configs: the plan's polymorphic kernel cannot run as compiled (%s)%s\n",
                pc.res.valid ? "ptxas warnings" : pc.res.why, *staging ? "; no cubin written" : "");
        return CLI_EXIT_ERROR;
    }
    return rc;
}
