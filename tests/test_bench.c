/*
 * test_bench.c - timing sweeps (src/bench.c) without a GPU: the router output
 * the GPU backend synthesizes (exact per-expert counts, distinct experts per
 * token, the token-count rule, checked against the selection twin); sweeps
 * with the simulated backend cut into chunks by max_cells and by a tiny
 * deadline, resumed from their file, equal element by element to one
 * uninterrupted ramp_sim_fill; config-major order with every cell timed once;
 * checkpoints that hold exactly the cells measured before them, also in a
 * process killed mid-sweep; and bad input (a geometry the kernel cannot run,
 * unknown backend, negative seconds, a failing backend, mixed devices, a
 * file of another sweep, no GPU) refused with no partial output.
 */
#include "bench.h"
#include "check.h"
#include "internal.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static ramp_rng rng;
static char tmpdir[512];

static void path_of(char *buf, size_t n, const char *name) {
    snprintf(buf, n, "%s/%s", tmpdir, name);
}

static int file_exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

/* Temporary files ("*.tmp.*") left in tmpdir. */
static int tmp_files(void) {
    DIR *d = opendir(tmpdir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp.")) n++;
    if (d) closedir(d);
    return n;
}

static void remove_tmp_files(void) {
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    char p[1024];
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp.")) {
            snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
            remove(p);
        }
    if (d) closedir(d);
}

static int64_t filled_of(const ramp_timing *t) {
    int64_t n = 0;
    for (int64_t i = 0; i < t->nloads * t->nconfigs; i++) n += !isnan(t->times_us[i]);
    return n;
}

/* A copy of t (all configurations). */
static ramp_timing *copy_of(const ramp_timing *t) {
    int *idx = malloc((size_t)t->nconfigs * sizeof *idx);
    for (int c = 0; c < t->nconfigs; c++) idx[c] = c;
    ramp_timing *o = NULL;
    CHECK_OK(ramp_timing_select_configs(t, idx, t->nconfigs, &o));
    free(idx);
    return o;
}

/* Qwen3-30B EP8 geometry, `nc` random valid configurations, `nl` random
 * loads (some with fewer experts, some empty), times NaN. */
static ramp_timing *make_dataset(int nc, int nl) {
    ramp_model m;
    ramp_layout L;
    ramp_geometry g;
    ramp_device_limits lim;
    CHECK_OK(ramp_model_lookup("qwen3-30b", &m));
    CHECK_OK(ramp_layout_parse("EP8", &L));
    CHECK_OK(ramp_geometry_for(&m, L, &g));
    ramp_device_limits_h200(&lim);
    ramp_config *space = NULL;
    int n = 0;
    CHECK_OK(ramp_config_space(&g, &lim, &space, &n));
    if (nc > n) nc = n;
    ramp_config *cfg = malloc((size_t)nc * sizeof *cfg);
    int *bps = malloc((size_t)nc * sizeof *bps);
    for (int c = 0; c < nc; c++) { /* distinct: a partial shuffle */
        int j = c + (int)ramp_rng_below(&rng, (uint32_t)(n - c));
        ramp_config tmp = space[c];
        space[c] = space[j];
        space[j] = tmp;
        cfg[c] = space[c];
        ramp_resources r;
        CHECK_OK(ramp_config_resources(&cfg[c], &g, &lim, &r));
        bps[c] = r.blocks_per_sm;
    }
    ramp_timing *t = NULL;
    CHECK_OK(ramp_timing_create(m.name, "EP8", &g, lim.sms, cfg, bps, nc, &t));
    free(space);
    free(cfg);
    free(bps);
    if (!t) return NULL;
    int d0 = ramp_timing_domain_index(t, "chat"), d1 = ramp_timing_domain_index(t, "code");
    int32_t load[64];
    for (int i = 0; i < nl; i++) {
        int nexp = ramp_rng_below(&rng, 4) == 0 ? 1 + (int)ramp_rng_below(&rng, 16) : 16;
        int empty = ramp_rng_below(&rng, 10) == 0;
        int32_t sum = 0;
        for (int e = 0; e < nexp; e++) {
            load[e] = empty ? 0 : (int32_t)ramp_rng_below(&rng, 1 + ramp_rng_below(&rng, 400));
            sum += load[e];
        }
        CHECK_OK(ramp_timing_add_load(t, i / 8, i % 8, i % 3 ? d0 : d1,
                                      sum + (int32_t)ramp_rng_below(&rng, 100), nexp, load,
                                      NULL));
    }
    return t;
}

/* ---------------------------------------------------------------- routing */

static void test_route(void) {
    for (int iter = 0; iter < 300; iter++) {
        int k = 1 + (int)ramp_rng_below(&rng, 8);
        int X = 1 + (int)ramp_rng_below(&rng, 40);
        int nexp = 1 + (int)ramp_rng_below(&rng, (uint32_t)X);
        int32_t load[64];
        int64_t P = 0, most = 0;
        int empty = ramp_rng_below(&rng, 12) == 0;
        int tp = ramp_rng_below(&rng, 4) == 0 && nexp >= k; /* TP: B tokens, k local each */
        int32_t B = 1 + (int32_t)ramp_rng_below(&rng, 300), bt;
        for (int e = 0; e < X; e++) load[e] = 0;
        if (tp) {
            /* every token picks k distinct local experts */
            for (int32_t b = 0; b < B; b++) {
                int pick[64], np = 0;
                while (np < k) {
                    int e = (int)ramp_rng_below(&rng, (uint32_t)nexp), dup = 0;
                    for (int q = 0; q < np; q++) dup |= pick[q] == e;
                    if (!dup) pick[np++] = e;
                }
                for (int q = 0; q < k; q++) load[pick[q]]++;
            }
            bt = B;
        } else {
            for (int e = 0; e < nexp; e++)
                load[e] = empty ? 0 : (int32_t)ramp_rng_below(&rng, 1 + ramp_rng_below(&rng, 500));
            bt = (int32_t)ramp_rng_below(&rng, 3000);
        }
        for (int e = 0; e < nexp; e++) {
            P += load[e];
            if (load[e] > most) most = load[e];
        }
        int64_t M = ramp_bench_tokens(k, nexp, load, bt);
        /* The rule, computed another way. */
        int j = k < nexp ? k : nexp;
        int64_t lo = P == 0 ? 1 : (P + j - 1) / j, want;
        if (most > lo) lo = most;
        if (P == 0) want = 1;
        else want = bt < lo ? lo : bt > P ? P : bt;
        CHECK_EQ_INT(M, want);
        if (tp) CHECK_EQ_INT(M, B); /* under TP: the batch exactly */
        int32_t *ids = malloc((size_t)(M * k) * sizeof *ids);
        int32_t *scratch = malloc((size_t)(2 * M) * sizeof *scratch);
        for (int64_t q = 0; q < M * k; q++) ids[q] = -7; /* poison */
        int64_t li = (int64_t)ramp_rng_below(&rng, 1000);
        CHECK_OK(ramp_bench_route(42, li, k, X, nexp, load, M, ids, scratch));
        int32_t hist[64] = {0};
        int bad = 0;
        for (int64_t m = 0; m < M; m++) {
            int seen_remote = 0;
            for (int s = 0; s < k; s++) {
                int32_t id = ids[m * k + s];
                if (id >= 0 && id < nexp) {
                    bad |= seen_remote; /* local choices come first */
                    hist[id]++;
                } else {
                    bad |= id != X + s; /* remote slot s names expert X + s */
                    seen_remote = 1;
                }
                for (int q = 0; q < s; q++) bad |= ids[m * k + q] == id;
            }
        }
        CHECK(!bad);
        for (int e = 0; e < X; e++) CHECK_EQ_INT(hist[e], load[e]);
        if (tp) /* every token k local choices */
            for (int64_t m = 0; m < M; m++) CHECK(ids[m * k + k - 1] < nexp);
        /* The selection twin sees the same counts (as the GPU backend checks). */
        ramp_select_desc d;
        memset(&d, 0, sizeof d);
        d.experts = X + k;
        d.topk = k;
        d.max_tokens = (int)M;
        d.local_experts = X;
        d.nentries = 1;
        d.group_only = 1;
        d.entries[0] = (ramp_select_entry){1 + (int)ramp_rng_below(&rng, 64), 2, 132, {0, 0, 0, 0}, 0, 0};
        ramp_select_result *sel = NULL;
        CHECK_OK(ramp_select_result_create(&d, &sel));
        if (sel) {
            CHECK_OK(ramp_select_cpu(&d, (int)M, ids, sel));
            for (int e = 0; e < X; e++) CHECK_EQ_INT(sel->counts[e], load[e]);
            CHECK_EQ_INT(sel->meta[RAMP_SELECT_META_BAD_IDS], 0);
            CHECK_EQ_INT(sel->meta[RAMP_SELECT_META_LOCAL], P);
        }
        ramp_select_result_free(sel);
        /* Deterministic per (seed, load). */
        int32_t *again = malloc((size_t)(M * k) * sizeof *again);
        CHECK_OK(ramp_bench_route(42, li, k, X, nexp, load, M, again, scratch));
        CHECK(memcmp(ids, again, (size_t)(M * k) * sizeof *ids) == 0);
        free(again);
        free(ids);
        free(scratch);
    }
    /* Too few tokens for the pairs: refused. */
    int32_t load[2] = {5, 5}, ids[64], scratch[64];
    CHECK_ERR(ramp_bench_route(1, 0, 1, 2, 2, load, 4, ids, scratch), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_bench_route(1, 0, 2, 2, 2, load, 4, ids, scratch), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_OK(ramp_bench_route(1, 0, 2, 2, 2, load, 5, ids, scratch));
}

/* ---------------------------------------------------------------- sim sweeps */

static void check_same_times(const ramp_timing *a, const ramp_timing *b) {
    CHECK_EQ_INT(a->nloads, b->nloads);
    CHECK_EQ_INT(a->nconfigs, b->nconfigs);
    if (a->nloads != b->nloads || a->nconfigs != b->nconfigs) return;
    int64_t diff = 0;
    for (int64_t i = 0; i < a->nloads * a->nconfigs; i++) {
        float x = a->times_us[i], y = b->times_us[i];
        if (!(x == y || (isnan(x) && isnan(y)))) {
            if (diff++ < 5)
                fprintf(stderr, "cell %lld: %.9g vs %.9g\n", (long long)i, (double)x, (double)y);
        }
    }
    CHECK_EQ_INT(diff, 0);
}

static void test_sim_chunks(void) {
    ramp_timing *base = make_dataset(6 + (int)ramp_rng_below(&rng, 8), 20 + (int)ramp_rng_below(&rng, 20));
    if (!base) return;
    const int64_t cells = base->nloads * base->nconfigs;
    ramp_bench_options o;
    ramp_bench_defaults(&o);
    o.backend = RAMP_BENCH_SIM;
    o.sim.seed = 1 + ramp_rng_below(&rng, 1000);
    o.command = "test_bench";

    /* Reference: one ramp_sim_fill. */
    ramp_timing *ref = copy_of(base);
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    CHECK_OK(ramp_sim_fill(&o.sim, &lim, ref));

    /* One uninterrupted sweep, no file. */
    ramp_timing *one = copy_of(base);
    ramp_bench_report rep;
    CHECK_OK(ramp_bench_run(one, NULL, &o, &rep));
    CHECK(rep.complete);
    CHECK_EQ_INT(rep.measured, cells);
    CHECK_EQ_INT(rep.cells, cells);
    CHECK_EQ_INT(rep.stopped, RAMP_BENCH_DONE);
    CHECK(strcmp(one->device, "simulated") == 0 && strcmp(one->command, "test_bench") == 0);
    check_same_times(one, ref);

    /* Chunks of random size by max_cells, each resumed from the file. */
    char path[1024];
    path_of(path, sizeof path, "chunks.safetensors");
    remove(path);
    int64_t done = 0;
    int calls = 0;
    while (calls++ < 1000) {
        ramp_timing *t = copy_of(base);
        int64_t taken = 0;
        CHECK_OK(ramp_bench_resume(t, path, &taken));
        CHECK_EQ_INT(taken, calls == 1 ? -1 : done);
        o.max_cells = 1 + (int64_t)ramp_rng_below(&rng, 60);
        CHECK_OK(ramp_bench_run(t, path, &o, &rep));
        int64_t expect = done + o.max_cells < cells ? o.max_cells : cells - done;
        CHECK_EQ_INT(rep.measured, expect);
        CHECK_EQ_INT(rep.filled_before, done);
        done += rep.measured;
        CHECK_EQ_INT(rep.filled, done);
        CHECK_EQ_INT(rep.complete, done == cells);
        if (!rep.complete) CHECK_EQ_INT(rep.stopped, RAMP_BENCH_MAX_CELLS);
        /* The file holds exactly the filled cells, each equal to the reference. */
        ramp_timing *f = NULL;
        CHECK_OK(ramp_timing_read(path, 1, &f));
        if (f) {
            CHECK_EQ_INT(filled_of(f), done);
            int64_t wrong = 0;
            for (int64_t i = 0; i < cells; i++)
                if (!isnan(f->times_us[i]) && f->times_us[i] != ref->times_us[i]) wrong++;
            CHECK_EQ_INT(wrong, 0);
        }
        ramp_timing_free(f);
        ramp_timing_free(t);
        if (rep.complete || !rep.measured) break;
    }
    ramp_timing *fin = NULL;
    CHECK_OK(ramp_timing_read(path, 0, &fin)); /* complete: no NaN left */
    if (fin) check_same_times(fin, ref);
    ramp_timing_free(fin);
    /* Once complete, another call measures nothing and leaves the times. */
    ramp_timing *again = copy_of(base);
    int64_t taken = 0;
    CHECK_OK(ramp_bench_resume(again, path, &taken));
    CHECK_EQ_INT(taken, cells);
    o.max_cells = 0;
    CHECK_OK(ramp_bench_run(again, path, &o, &rep));
    CHECK(rep.complete && rep.measured == 0);
    check_same_times(again, ref);
    ramp_timing_free(again);

    /* A tiny deadline: each call stops after its first cell or few, the file
     * always readable, until done. */
    remove(path);
    o.max_seconds = 1e-9;
    done = 0;
    calls = 0;
    int incomplete_calls = 0;
    while (calls++ < 2 * cells + 5) {
        ramp_timing *t = copy_of(base);
        CHECK_OK(ramp_bench_resume(t, path, &taken));
        CHECK_OK(ramp_bench_run(t, path, &o, &rep));
        CHECK_EQ_INT(rep.measured, 1); /* the first cell is always measured */
        done += rep.measured;
        CHECK_EQ_INT(rep.filled, done);
        if (!rep.complete) {
            incomplete_calls++;
            CHECK_EQ_INT(rep.stopped, RAMP_BENCH_DEADLINE);
        }
        ramp_timing_free(t);
        if (rep.complete) break;
    }
    CHECK(incomplete_calls >= 1); /* the first call cannot finish in 1 ns */
    CHECK_EQ_INT(done, cells);
    fin = NULL;
    CHECK_OK(ramp_timing_read(path, 0, &fin));
    if (fin) check_same_times(fin, ref);
    ramp_timing_free(fin);
    CHECK_EQ_INT(tmp_files(), 0);
    remove(path);
    ramp_timing_free(one);
    ramp_timing_free(ref);
    ramp_timing_free(base);
}

/* ---------------------------------------------------------------- custom backend */

static double value_of(int64_t load, int config) { return 1.0 + 0.25 * (double)load + 3.0 * config; }

typedef struct {
    int64_t calls;        /* time_cell calls */
    int64_t kill_at;      /* 1-based call that kills the process (0: none) */
    int64_t fail_at;      /* call that returns RAMP_ERR_CUDA (0: none) */
    int bad_value;        /* return NaN at fail_at instead */
    const char *path;     /* checkpoint file to check at each call */
    int64_t file_wrong;   /* file content not as expected */
    int64_t *order;       /* [cells] config * nloads + load, in call order */
    int cur;              /* configuration between begin and end, -1: none */
    int64_t nesting_errors;
    int64_t start_filled; /* cells filled before the run */
} probe;

static ramp_status probe_begin(void *user, const ramp_timing *t, int c) {
    probe *p = user;
    if (p->cur != -1) p->nesting_errors++;
    p->cur = c;
    return RAMP_OK;
}

static void probe_end(void *user, const ramp_timing *t, int c) {
    probe *p = user;
    if (p->cur != c) p->nesting_errors++;
    p->cur = -1;
}

static ramp_status probe_time(void *user, const ramp_timing *t, int c, int64_t i, double *us) {
    probe *p = user;
    if (p->cur != c) p->nesting_errors++;
    p->calls++;
    if (p->path) {
        /* Checkpoints every cell: the file holds every cell measured before. */
        ramp_timing *f = NULL;
        if (ramp_timing_read(p->path, 1, &f) != RAMP_OK) p->file_wrong++;
        else {
            if (filled_of(f) != p->start_filled + p->calls - 1) p->file_wrong++;
            for (int64_t q = 0; q < f->nloads * f->nconfigs; q++)
                if (!isnan(f->times_us[q]) &&
                    f->times_us[q] != (float)value_of(q / f->nconfigs, (int)(q % f->nconfigs)))
                    p->file_wrong++;
        }
        ramp_timing_free(f);
    }
    if (p->order) p->order[p->calls - 1] = (int64_t)c * t->nloads + i;
    if (p->kill_at && p->calls == p->kill_at) raise(SIGKILL);
    if (p->fail_at && p->calls == p->fail_at) {
        if (p->bad_value) {
            *us = NAN;
            return RAMP_OK;
        }
        return ramp_set_error(RAMP_ERR_CUDA, __FILE__, __LINE__, "probe: launch failed");
    }
    *us = value_of(i, c);
    return RAMP_OK;
}

/* 3 ms per cell. */
static ramp_status slow_time(void *user, const ramp_timing *t, int c, int64_t i, double *us) {
    struct timespec ts = {0, 3000000L};
    nanosleep(&ts, NULL);
    ++*(int64_t *)user;
    *us = value_of(i, c);
    return RAMP_OK;
}

static void probe_init(probe *p, ramp_bench_ops *ops, ramp_bench_options *o) {
    memset(p, 0, sizeof *p);
    p->cur = -1;
    memset(ops, 0, sizeof *ops);
    ops->device = "probe";
    ops->user = p;
    ops->begin_config = probe_begin;
    ops->time_cell = probe_time;
    ops->end_config = probe_end;
    ramp_bench_defaults(o);
    o->backend = RAMP_BENCH_CUSTOM;
    o->ops = ops;
}

static void test_order_and_checkpoints(void) {
    ramp_timing *t = make_dataset(5 + (int)ramp_rng_below(&rng, 5), 10 + (int)ramp_rng_below(&rng, 20));
    if (!t) return;
    const int64_t cells = t->nloads * t->nconfigs;
    /* Some cells already filled: skipped. */
    int64_t pre = 0;
    char *was_open = malloc((size_t)cells);
    for (int64_t q = 0; q < cells; q++) {
        was_open[q] = ramp_rng_below(&rng, 5) != 0;
        if (!was_open[q]) {
            t->times_us[q] = (float)value_of(q / t->nconfigs, (int)(q % t->nconfigs));
            pre++;
        }
    }
    snprintf(t->device, sizeof t->device, "probe");
    char path[1024];
    path_of(path, sizeof path, "order.safetensors");
    remove(path);
    CHECK_OK(ramp_timing_write(t, path)); /* so the first probe read finds it */
    probe p;
    ramp_bench_ops ops;
    ramp_bench_options o;
    probe_init(&p, &ops, &o);
    p.order = malloc((size_t)cells * sizeof *p.order);
    p.path = path;
    p.start_filled = pre;
    o.checkpoint_seconds = 1e-9; /* after every cell */
    ramp_bench_report rep;
    CHECK_OK(ramp_bench_run(t, path, &o, &rep));
    CHECK(rep.complete);
    CHECK_EQ_INT(p.calls, cells - pre);
    CHECK_EQ_INT(rep.measured, cells - pre);
    CHECK_EQ_INT(rep.checkpoints, cells - pre);
    CHECK_EQ_INT(p.file_wrong, 0);
    CHECK_EQ_INT(p.nesting_errors, 0);
    /* Config-major, loads in order, never a filled cell, each once. */
    int sorted = 1;
    for (int64_t q = 1; q < p.calls; q++) sorted &= p.order[q] > p.order[q - 1];
    CHECK(sorted);
    int64_t refilled = 0;
    for (int64_t q = 0; q < p.calls; q++) {
        int64_t c = p.order[q] / t->nloads, i = p.order[q] % t->nloads;
        refilled += !was_open[i * t->nconfigs + c];
    }
    CHECK_EQ_INT(refilled, 0);
    int64_t wrong = 0;
    for (int64_t q = 0; q < cells; q++)
        wrong += t->times_us[q] != (float)value_of(q / t->nconfigs, (int)(q % t->nconfigs));
    CHECK_EQ_INT(wrong, 0);
    free(p.order);
    free(was_open);
    remove(path);
    ramp_timing_free(t);
}

/* A deadline of 0.3 s on cells of 3 ms: the call ends before it, having
 * measured most of what fits. */
static void test_deadline(void) {
    ramp_timing *t = make_dataset(8, 40);
    if (!t) return;
    int64_t calls = 0;
    ramp_bench_ops ops = {"slow", &calls, NULL, slow_time, NULL};
    ramp_bench_options o;
    ramp_bench_defaults(&o);
    o.backend = RAMP_BENCH_CUSTOM;
    o.ops = &ops;
    o.max_seconds = 0.3;
    char path[1024];
    path_of(path, sizeof path, "deadline.safetensors");
    ramp_bench_report rep;
    CHECK_OK(ramp_bench_run(t, path, &o, &rep));
    CHECK(!rep.complete && rep.stopped == RAMP_BENCH_DEADLINE);
    CHECK_EQ_INT(rep.measured, calls);
    CHECK(rep.seconds < 0.3 + 0.05); /* scheduling noise only */
    CHECK(calls >= 20 && calls <= 100);
    ramp_timing *f = NULL;
    CHECK_OK(ramp_timing_read(path, 1, &f));
    if (f) CHECK_EQ_INT(filled_of(f), calls);
    ramp_timing_free(f);
    remove(path);
    ramp_timing_free(t);
}

/* A process killed mid-sweep leaves a readable file with every cell it
 * measured before its last checkpoint; the same sweep then completes it. */
static void test_killed(void) {
    ramp_timing *base = make_dataset(4 + (int)ramp_rng_below(&rng, 4), 12 + (int)ramp_rng_below(&rng, 12));
    if (!base) return;
    const int64_t cells = base->nloads * base->nconfigs;
    char path[1024];
    path_of(path, sizeof path, "killed.safetensors");
    remove(path);
    int64_t kill_at = 2 + (int64_t)ramp_rng_below(&rng, (uint32_t)(cells - 2));
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        probe p;
        ramp_bench_ops ops;
        ramp_bench_options o;
        probe_init(&p, &ops, &o);
        p.kill_at = kill_at;
        o.checkpoint_seconds = 1e-9;
        ramp_bench_run(base, path, &o, NULL);
        _exit(0); /* not reached */
    }
    int st = 0;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    ramp_timing *f = NULL;
    CHECK_OK(ramp_timing_read(path, 1, &f));
    if (f) {
        CHECK_EQ_INT(filled_of(f), kill_at - 1);
        CHECK(strcmp(f->device, "probe") == 0);
    }
    ramp_timing_free(f);
    /* Resume to the end with the same backend. */
    ramp_timing *t = copy_of(base);
    int64_t taken = 0;
    CHECK_OK(ramp_bench_resume(t, path, &taken));
    CHECK_EQ_INT(taken, kill_at - 1);
    probe p;
    ramp_bench_ops ops;
    ramp_bench_options o;
    probe_init(&p, &ops, &o);
    ramp_bench_report rep;
    CHECK_OK(ramp_bench_run(t, path, &o, &rep));
    CHECK(rep.complete);
    CHECK_EQ_INT(p.calls, cells - (kill_at - 1));
    f = NULL;
    CHECK_OK(ramp_timing_read(path, 0, &f));
    int64_t wrong = 0;
    for (int64_t q = 0; f && q < cells; q++)
        wrong += f->times_us[q] != (float)value_of(q / f->nconfigs, (int)(q % f->nconfigs));
    CHECK_EQ_INT(wrong, 0);
    ramp_timing_free(f);
    ramp_timing_free(t);

    /* Killed at a random moment (maybe while writing): the file is absent or
     * a readable dataset whose filled cells are the simulator's. */
    remove(path);
    ramp_timing *ref = copy_of(base);
    ramp_bench_options so;
    ramp_bench_defaults(&so);
    so.backend = RAMP_BENCH_SIM;
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    CHECK_OK(ramp_sim_fill(&so.sim, &lim, ref));
    so.checkpoint_seconds = 1e-9;
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        for (;;) { /* sweep again and again until killed */
            ramp_timing *c = copy_of(base);
            ramp_bench_run(c, path, &so, NULL);
            ramp_timing_free(c);
        }
    }
    struct timespec ts = {0, (long)(1 + ramp_rng_below(&rng, 30)) * 1000000L};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    CHECK(waitpid(pid, &st, 0) == pid);
    if (file_exists(path)) {
        f = NULL;
        CHECK_OK(ramp_timing_read(path, 1, &f));
        wrong = 0;
        for (int64_t q = 0; f && q < cells; q++)
            wrong += !isnan(f->times_us[q]) && f->times_us[q] != ref->times_us[q];
        CHECK_EQ_INT(wrong, 0);
        ramp_timing_free(f);
    }
    remove_tmp_files(); /* a writer killed before its rename leaves one */
    remove(path);
    ramp_timing_free(ref);
    ramp_timing_free(base);
}

/* ---------------------------------------------------------------- bad input */

static void test_errors(void) {
    char path[1024];
    path_of(path, sizeof path, "bad.safetensors");
    remove(path);
    ramp_bench_options o;
    ramp_bench_report rep;
    ramp_bench_backend b;
    CHECK_ERR(ramp_bench_backend_parse("cuda", &b), RAMP_ERR_NOT_FOUND);
    CHECK(strstr(ramp_last_error(), "cuda") != NULL);
    CHECK_OK(ramp_bench_backend_parse("SIM", &b));
    CHECK_EQ_INT(b, RAMP_BENCH_SIM);
    CHECK_OK(ramp_bench_backend_parse("gpu", &b));
    CHECK_EQ_INT(b, RAMP_BENCH_GPU);
    CHECK(strcmp(ramp_bench_backend_name(RAMP_BENCH_SIM), "sim") == 0);

    ramp_timing *t = make_dataset(4, 10);
    if (!t) return;
    /* Options out of range: nothing timed, nothing written. */
    for (int k = 0; k < 7; k++) {
        ramp_bench_defaults(&o);
        o.backend = RAMP_BENCH_SIM;
        switch (k) {
        case 0: o.backend = (ramp_bench_backend)9; break;
        case 1: o.max_seconds = -1; break;
        case 2: o.checkpoint_seconds = -0.5; break;
        case 3: o.max_seconds = NAN; break;
        case 4: o.repeats = 0; break;
        case 5: o.backend = RAMP_BENCH_CUSTOM; break; /* no ops */
        case 6: o.max_cells = -3; break;
        }
        CHECK_ERR(ramp_bench_run(t, path, &o, &rep), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(!file_exists(path));
        CHECK_EQ_INT(filled_of(t), 0);
    }
    ramp_bench_defaults(&o);
    o.max_seconds = -2;
    CHECK_ERR(ramp_bench_run(t, path, &o, &rep), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "max_seconds") != NULL);

    /* No GPU (driver path forced to nothing): a clear error, no file. */
    setenv("RAMP_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
    ramp_bench_defaults(&o);
    o.backend = RAMP_BENCH_GPU;
    CHECK_ERR(ramp_bench_run(t, path, &o, &rep), RAMP_ERR_NO_GPU);
    CHECK(strstr(ramp_last_error(), "GPU") != NULL);
    CHECK(!file_exists(path));

    /* Geometries the kernel cannot run: h not a multiple of the width,
     * d not a multiple of 128. */
    ramp_geometry gs[2] = {{4, 2, 640, 1024, 0}, {4, 2, 512, 1000, 0}};
    ramp_config c;
    CHECK_OK(ramp_config_parse("r16.w256.s3", &c));
    for (int k = 0; k < 2; k++) {
        int bps = 1;
        ramp_timing *g = NULL;
        CHECK_OK(ramp_timing_create("custom", "EP2", &gs[k], 132, &c, &bps, 1, &g));
        if (!g) continue;
        int d = ramp_timing_domain_index(g, "chat");
        int32_t load[4] = {3, 0, 5, 1};
        CHECK_OK(ramp_timing_add_load(g, 0, 0, d, 9, 4, load, NULL));
        ramp_bench_defaults(&o);
        o.backend = RAMP_BENCH_SIM;
        CHECK_ERR(ramp_bench_run(g, path, &o, &rep), RAMP_ERR_UNSUPPORTED);
        CHECK(strstr(ramp_last_error(), "r16.w256.s3") != NULL);
        CHECK(strstr(ramp_last_error(), k == 0 ? "640" : "1000") != NULL);
        CHECK_ERR(ramp_bench_check(g), RAMP_ERR_UNSUPPORTED);
        o.backend = RAMP_BENCH_GPU; /* refused before any GPU call */
        CHECK_ERR(ramp_bench_run(g, path, &o, &rep), RAMP_ERR_UNSUPPORTED);
        CHECK(!file_exists(path));
        ramp_timing_free(g);
    }
    CHECK_OK(ramp_bench_check(t));

    /* A backend failing mid-sweep: the error names the cell; no file if no
     * checkpoint was due; an earlier file stays as it was. */
    probe p;
    ramp_bench_ops ops;
    const int64_t cells = t->nloads * t->nconfigs;
    for (int bad_value = 0; bad_value < 2; bad_value++) {
        probe_init(&p, &ops, &o);
        p.fail_at = 1 + (int64_t)ramp_rng_below(&rng, (uint32_t)cells);
        p.bad_value = bad_value;
        o.checkpoint_seconds = 0;
        ramp_timing *c1 = copy_of(t);
        CHECK_ERR(ramp_bench_run(c1, path, &o, &rep),
                  bad_value ? RAMP_ERR_NUMERIC : RAMP_ERR_CUDA);
        CHECK(strstr(ramp_last_error(), "load") != NULL);
        CHECK(!file_exists(path));
        CHECK_EQ_INT(tmp_files(), 0);
        ramp_timing_free(c1);
    }
    /* ... with a file from an earlier chunk: unchanged. */
    probe_init(&p, &ops, &o);
    o.max_cells = 3;
    ramp_timing *c2 = copy_of(t);
    CHECK_OK(ramp_bench_run(c2, path, &o, &rep));
    ramp_timing_free(c2);
    FILE *fp = fopen(path, "rb");
    char before[1 << 16], after[1 << 16];
    size_t nb = fp ? fread(before, 1, sizeof before, fp) : 0;
    if (fp) fclose(fp);
    probe_init(&p, &ops, &o);
    p.fail_at = 2;
    o.checkpoint_seconds = 0;
    c2 = copy_of(t);
    int64_t taken = 0;
    CHECK_OK(ramp_bench_resume(c2, path, &taken));
    CHECK_EQ_INT(taken, 3);
    CHECK_ERR(ramp_bench_run(c2, path, &o, &rep), RAMP_ERR_CUDA);
    ramp_timing_free(c2);
    fp = fopen(path, "rb");
    size_t na = fp ? fread(after, 1, sizeof after, fp) : 0;
    if (fp) fclose(fp);
    CHECK(nb > 0 && na == nb && memcmp(before, after, nb) == 0);

    /* One dataset, one device: the file's 3 probe times refuse the simulator. */
    c2 = copy_of(t);
    CHECK_OK(ramp_bench_resume(c2, path, &taken));
    ramp_bench_defaults(&o);
    o.backend = RAMP_BENCH_SIM;
    CHECK_ERR(ramp_bench_run(c2, path, &o, &rep), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "probe") != NULL);
    ramp_timing_free(c2);

    /* Resuming from the file of another sweep: refused, naming the field. */
    int idx[2] = {1, 0};
    ramp_timing *other = NULL;
    CHECK_OK(ramp_timing_select_configs(t, idx, 2, &other));
    if (other) {
        CHECK_ERR(ramp_bench_resume(other, path, &taken), RAMP_ERR_FORMAT);
        CHECK(strstr(ramp_last_error(), "configuration") != NULL);
        ramp_timing_free(other);
    }
    ramp_timing *moved = copy_of(t);
    moved->loads[3 * moved->max_experts] += 1;
    CHECK_ERR(ramp_bench_resume(moved, path, &taken), RAMP_ERR_FORMAT);
    CHECK(strstr(ramp_last_error(), "load 3") != NULL);
    ramp_timing_free(moved);
    remove(path);
    CHECK_OK(ramp_bench_resume(t, path, &taken));
    CHECK_EQ_INT(taken, -1);

    /* Subsets: bad indices refused; good ones copy loads and times. */
    int dup[2] = {0, 0}, out_of_range[1] = {t->nconfigs};
    ramp_timing *s = NULL;
    CHECK_ERR(ramp_timing_select_configs(t, dup, 2, &s), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_timing_select_configs(t, out_of_range, 1, &s), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_timing_select_configs(t, idx, 0, &s), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(s == NULL);
    for (int64_t q = 0; q < cells; q++) t->times_us[q] = (float)q;
    int pick[2] = {t->nconfigs - 1, 1};
    CHECK_OK(ramp_timing_select_configs(t, pick, 2, &s));
    if (s) {
        CHECK_EQ_INT(s->nloads, t->nloads);
        int64_t wrong = 0;
        for (int64_t i = 0; i < t->nloads; i++) {
            wrong += memcmp(s->loads + i * s->max_experts, t->loads + i * t->max_experts,
                            (size_t)t->max_experts * 4) != 0;
            wrong += s->nexp[i] != t->nexp[i] || s->batch[i] != t->batch[i] ||
                     s->gpu[i] != t->gpu[i] || s->batch_tokens[i] != t->batch_tokens[i] ||
                     strcmp(s->domains[s->domain[i]], t->domains[t->domain[i]]) != 0;
            for (int j = 0; j < 2; j++)
                wrong += s->times_us[i * 2 + j] != t->times_us[i * t->nconfigs + pick[j]];
        }
        CHECK_EQ_INT(wrong, 0);
        CHECK(ramp_config_equal(&s->configs[0], &t->configs[t->nconfigs - 1]));
        CHECK(ramp_config_equal(&s->configs[1], &t->configs[1]));
    }
    ramp_timing_free(s);
    CHECK_EQ_INT(tmp_files(), 0);
    ramp_timing_free(t);
}

/* Kernel v2 sweeps: ramp_timing_select_kernel keeps exactly the plain,
 * ungrouped, split-K-1 configurations in order (the rest counted), a v2
 * sweep fills every cell and its file says v2, resuming it as a v1 sweep is
 * refused, and so are another kernel's times, BF16 and (in the sweep's
 * check) a configuration v2 does not run. */
static void test_kernel_sweep(void) {
    char path[600];
    path_of(path, sizeof path, "v2.safetensors");
    ramp_timing *t = make_dataset(40, 12);
    if (!t) return;
    ramp_timing *k2 = NULL;
    int dropped = -1;
    CHECK_OK(ramp_timing_select_kernel(t, RAMP_KERNEL_V2, &k2, &dropped));
    if (!k2) {
        ramp_timing_free(t);
        return;
    }
    int want_dropped = 0, j = 0, *kept = calloc((size_t)t->nconfigs, sizeof *kept);
    for (int c = 0; c < t->nconfigs; c++) {
        const ramp_config *x = &t->configs[c];
        if (x->persistent || x->grouped || x->splitk != 1) {
            want_dropped++;
            continue;
        }
        CHECK(j < k2->nconfigs && ramp_config_equal(x, &k2->configs[j]));
        CHECK_EQ_INT(k2->blocks_per_sm[j], 1);
        if (kept) kept[j] = c;
        j++;
    }
    CHECK(want_dropped > 0 && j > 0); /* 40 of Qwen3's 180: both kinds */
    CHECK_EQ_INT(dropped, want_dropped);
    CHECK_EQ_INT(k2->nconfigs, j);
    CHECK_EQ_INT(k2->kernel, RAMP_KERNEL_V2);
    CHECK_EQ_INT(k2->nloads, t->nloads);
    CHECK(memcmp(k2->loads, t->loads, (size_t)(t->nloads * t->max_experts) * 4) == 0);

    ramp_bench_options o;
    ramp_bench_report rep;
    ramp_bench_defaults(&o);
    o.backend = RAMP_BENCH_SIM;
    o.checkpoint_seconds = 0;
    CHECK_OK(ramp_bench_run(k2, path, &o, &rep));
    CHECK(rep.complete);
    ramp_timing *back = NULL;
    CHECK_OK(ramp_timing_read(path, 0, &back)); /* no NaN allowed */
    if (back) CHECK_EQ_INT(back->kernel, RAMP_KERNEL_V2);
    ramp_timing_free(back);

    /* The same loads and configurations as a v1 sweep: refused. */
    ramp_timing *v1 = NULL;
    if (kept) CHECK_OK(ramp_timing_select_configs(t, kept, j, &v1));
    int64_t taken = 0;
    if (v1) {
        CHECK_EQ_INT(v1->kernel, RAMP_KERNEL_V1);
        CHECK_ERR(ramp_bench_resume(v1, path, &taken), RAMP_ERR_FORMAT);
        CHECK(strstr(ramp_last_error(), "kernel v2") && strstr(ramp_last_error(), "kernel v1"));
        v1->kernel = RAMP_KERNEL_V2; /* the same sweep under v2: resumes */
        CHECK_OK(ramp_bench_resume(v1, path, &taken));
        CHECK_EQ_INT(taken, k2->nloads * k2->nconfigs);
    }
    ramp_timing_free(v1);
    free(kept);

    /* Times of one kernel never move to another; the same kernel keeps them. */
    ramp_timing *x = NULL;
    CHECK_ERR(ramp_timing_select_kernel(k2, RAMP_KERNEL_V1, &x, &dropped),
              RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "kernel v2") != NULL);
    CHECK_OK(ramp_timing_select_kernel(k2, RAMP_KERNEL_V2, &x, &dropped));
    if (x) {
        CHECK_EQ_INT(dropped, 0);
        CHECK_EQ_INT(filled_of(x), x->nloads * x->nconfigs);
    }
    ramp_timing_free(x);
    x = NULL;
    CHECK_ERR(ramp_timing_select_kernel(t, (ramp_kernel_version)5, &x, &dropped),
              RAMP_ERR_INVALID_ARGUMENT);
    /* a BF16 dataset: v2 keeps what it runs for BF16 */
    t->geom.bf16 = 1;
    CHECK_OK(ramp_timing_select_kernel(t, RAMP_KERNEL_V2, &x, &dropped));
    if (x) {
        int runs = 0;
        for (int c = 0; c < t->nconfigs; c++)
            runs += ramp_kernel_version_check(RAMP_KERNEL_V2, &t->configs[c], &t->geom) == RAMP_OK;
        CHECK_EQ_INT(x->nconfigs, runs);
        CHECK_EQ_INT(dropped, t->nconfigs - runs);
        CHECK_EQ_INT(x->geom.bf16, 1);
    }
    ramp_timing_free(x);
    x = NULL;
    t->geom.bf16 = 0;

    /* The sweep's check: a v2 dataset (in memory) with a persistent one. */
    t->kernel = RAMP_KERNEL_V2;
    remove(path);
    CHECK_ERR(ramp_bench_run(t, path, &o, &rep), RAMP_ERR_UNSUPPORTED);
    CHECK(strstr(ramp_last_error(), "kernel v2") != NULL);
    CHECK(!file_exists(path));
    ramp_timing_free(k2);
    ramp_timing_free(t);
    CHECK_EQ_INT(tmp_files(), 0);
}

int main(void) {
    ramp_rng_seed(&rng, check_seed());
    snprintf(tmpdir, sizeof tmpdir, "%s/test_bench.%ld", check_tmpdir(), (long)getpid());
    mkdir(tmpdir, 0700);
    test_route();
    test_sim_chunks();
    test_order_and_checkpoints();
    test_deadline();
    test_killed();
    test_errors();
    test_kernel_sweep();
    rmdir(tmpdir);
    return check_finish("test_bench");
}
