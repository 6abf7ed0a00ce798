/*
 * compile_pool.h - what the NVRTC compile tests (tests/test_*_compile.c)
 * share: a list of independent compiles spread over a few threads (NVRTC
 * takes seconds a program, the tests compile tens of them), and the cubins
 * written to a directory for tools/gpu-check to disassemble. Header-only.
 */
#ifndef RAMP_COMPILE_POOL_H
#define RAMP_COMPILE_POOL_H

#include "check.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define COMPILE_POOL_MAX_THREADS 64

/* Hands out job indices, and guards check_failures (a plain int in check.h)
 * while the workers run. */
static pthread_mutex_t compile_pool_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
    int njobs, next;
    void (*one)(int index, void *ctx);
    void *ctx;
} compile_pool;

/* The thread count from environment variable `env` when it is a number > 0,
 * else `dflt`; at most `max` (and COMPILE_POOL_MAX_THREADS). */
static inline int compile_pool_threads(const char *env, int dflt, int max) {
    const char *s = getenv(env);
    int n = s && atoi(s) > 0 ? atoi(s) : dflt;
    if (max > COMPILE_POOL_MAX_THREADS) max = COMPILE_POOL_MAX_THREADS;
    return n > max ? max : n;
}

static inline void *compile_pool_worker(void *arg) {
    compile_pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&compile_pool_lock);
        int i = p->next++;
        pthread_mutex_unlock(&compile_pool_lock);
        if (i >= p->njobs) return NULL;
        p->one(i, p->ctx);
    }
}

/* Runs one(i, ctx) once for every i in [0, njobs) on `nthreads` threads
 * (each takes the next index until none is left) and waits for all of them.
 * Returns the wall time in seconds, which the tests print. */
static inline double compile_pool_run(int njobs, int nthreads, void (*one)(int index, void *ctx),
                                      void *ctx) {
    compile_pool p = {njobs, 0, one, ctx};
    if (nthreads < 1) nthreads = 1;
    if (nthreads > COMPILE_POOL_MAX_THREADS) nthreads = COMPILE_POOL_MAX_THREADS;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_t th[COMPILE_POOL_MAX_THREADS];
    int started = 0;
    for (int t = 0; t < nthreads; t++)
        started += pthread_create(&th[started], NULL, compile_pool_worker, &p) == 0;
    /* no thread to be had: the jobs still all run, here */
    if (!started) compile_pool_worker(&p);
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
}

/* Writes r's cubin to $dir_env/file_name when that variable is set and not
 * empty. A cubin that cannot be written (or closed) is a failed check:
 * tools/gpu-check would otherwise disassemble a stale or missing file. */
static inline void compile_pool_save_cubin(const char *dir_env, const char *file_name,
                                           const ramp_jit_result *r) {
    const char *dir = getenv(dir_env);
    if (!dir || !*dir) return;
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, file_name);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(r->cubin, 1, r->cubin_size, f) == r->cubin_size;
    if (f) ok &= fclose(f) == 0;
    if (!ok) {
        fprintf(stderr, "cannot write %s\n", path);
        pthread_mutex_lock(&compile_pool_lock);
        check_failures++;
        pthread_mutex_unlock(&compile_pool_lock);
    }
}

#endif
