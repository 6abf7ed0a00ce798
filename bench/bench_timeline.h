/*
 * bench_timeline.h - kernels/timeline.cuh's %globaltimer stamps on the host,
 * for bench_layer --timeline (one layer's graph) and bench_stack --timeline
 * (the last layer of a stack: each layer's kernels stamp the same slots, so
 * what is left after one replay is the last layer's, run right after the
 * layer before it, as a forward pass runs it).
 *
 * tl_open allocates the stamp array and hands its address to every later
 * compile through RAMP_JIT_DEFINES (appended to what is there, so a timing
 * diagnostic can be stamped too); tl_zero clears it on a stream;
 * tl_report downloads it and writes every stamped block to the CSV and one
 * line per kernel (min/median/max over its blocks, us after the run's first
 * stamp) to stdout.
 */
#ifndef RAMP_BENCH_TIMELINE_H
#define RAMP_BENCH_TIMELINE_H

#include "ramp.h"

#include "../kernels/timeline.cuh" /* the stamp array's sizes and events */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    ramp_devptr buf;
    FILE *csv;
    unsigned long long *host;
} tl_state;
enum { TL_WORDS = RAMP_TL_KERNELS * RAMP_TL_BLOCKS * RAMP_TL_EVENTS };

/* Before any layer is made. Returns 0, or -1 with *why set. */
static int tl_open(tl_state *tl, ramp_gpu *gpu, const char *csv_path, const char **why) {
    memset(tl, 0, sizeof *tl);
    if (ramp_gpu_alloc(gpu, TL_WORDS * sizeof(unsigned long long), &tl->buf) != RAMP_OK)
        return *why = "allocating the stamp array", -1;
    const char *prev = getenv("RAMP_JIT_DEFINES");
    char defs[600];
    snprintf(defs, sizeof defs, "%s%sRAMP_TIMELINE=0x%llxull", prev ? prev : "", prev && *prev ? " " : "",
             (unsigned long long)tl->buf);
    setenv("RAMP_JIT_DEFINES", defs, 1);
    tl->host = malloc(TL_WORDS * sizeof *tl->host);
    tl->csv = fopen(csv_path, "w");
    if (!tl->host || !tl->csv) return *why = "opening the timeline CSV or allocating its buffer", -1;
    fprintf(tl->csv, "# %%globaltimer stamps (kernels/timeline.cuh), ns after the run's first stamp, -1 "
                     "not stamped. kernel 0 the selection, 1.. the polymorphic chain, 4 (5) a v2 entry "
                     "alone (its phase 2); e0 start, e1 past the wait (selection: choice made), e2 "
                     "producer done, e3/e4 consumer warpgroups done (selection: e3 end), e5 returned "
                     "with no tile, e6 first weights requested, e7 first stage landed (consumer 1); the "
                     "polymorphic kernel's head: e8 choice arrived, e9 entry set up, e10 past the block "
                     "barrier, e11 producer past setmaxnreg; sm the block's SM (%%smid); tiles the tiles its "
                     "producer ran (a v2 entry)\n"
                     "what,tokens,routing,config,run,kernel,block,e0,e1,e2,e3,e4,e5,e6,e7,e8,e9,e10,"
                     "e11,sm,tiles\n");
    return 0;
}

static ramp_status tl_zero(tl_state *tl, ramp_gpu *gpu, ramp_stream st) {
    return ramp_gpu_fill32_async(gpu, tl->buf, 0u, TL_WORDS * 2, st);
}

static int tl_cmp_ll(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/* min / median / max of v[0..n) in us, into buf */
static const char *tl_span(long long *v, int n, char *buf, size_t size) {
    if (n == 0) return snprintf(buf, size, "%20s", "-"), buf;
    qsort(v, (size_t)n, sizeof *v, tl_cmp_ll);
    snprintf(buf, size, "%6.2f/%6.2f/%6.2f", v[0] / 1e3, v[n / 2] / 1e3, v[n - 1] / 1e3);
    return buf;
}

/* After the stamped run has completed (the stream synchronised). */
static ramp_status tl_report(tl_state *tl, ramp_gpu *gpu, const char *what, int tokens,
                             const char *routing, const char *cfg, int run) {
    ramp_status s = ramp_gpu_download(gpu, tl->host, tl->buf, TL_WORDS * sizeof *tl->host);
    if (s != RAMP_OK) return s;
    unsigned long long t0 = 0;
    for (int i = 0; i < TL_WORDS; i++) /* (the SM and tile-count slots hold no time) */
        if (i % RAMP_TL_EVENTS < RAMP_TL_SM_SLOT && tl->host[i] && (!t0 || tl->host[i] < t0))
            t0 = tl->host[i];
    for (int k = 0; k < RAMP_TL_KERNELS; k++) {
        long long st[RAMP_TL_BLOCKS], wt[RAMP_TL_BLOCKS], en[RAMP_TL_BLOCKS], rq[RAMP_TL_BLOCKS],
            ld[RAMP_TL_BLOCKS];
        int ns = 0, nw = 0, ne = 0, nr = 0, nl = 0;
        for (int b = 0; b < RAMP_TL_BLOCKS; b++) {
            const unsigned long long *e = tl->host + ((size_t)k * RAMP_TL_BLOCKS + b) * RAMP_TL_EVENTS;
            if (!e[0]) continue;
            long long rel[RAMP_TL_EVENTS], last = -1;
            for (int j = 0; j < RAMP_TL_SM_SLOT; j++) {
                rel[j] = e[j] ? (long long)(e[j] - t0) : -1;
                if (j >= 2 && j <= 5 && rel[j] > last) last = rel[j];
            }
            fprintf(tl->csv, "%s,%d,%s,%s,%d,%d,%d", what, tokens, routing, cfg, run, k, b);
            for (int j = 0; j < RAMP_TL_SM_SLOT; j++) fprintf(tl->csv, ",%lld", rel[j]);
            fprintf(tl->csv, ",%lld,%lld", (long long)e[RAMP_TL_SM_SLOT] - 1,
                    (long long)e[RAMP_TL_TILES_SLOT] - 1);
            fputc('\n', tl->csv);
            st[ns++] = rel[0];
            if (rel[1] >= 0) wt[nw++] = rel[1];
            if (last >= 0) en[ne++] = last;
            if (rel[6] >= 0) rq[nr++] = rel[6];
            if (rel[7] >= 0) ld[nl++] = rel[7];
        }
        if (!ns) continue;
        char a[48], w[48], z[48], r[48], l[48];
        printf("       timeline %-6s run %d kernel %d: %3d blocks, start %s, past wait %s, first "
               "weights asked %s, landed %s, end %s us\n",
               what, run, k, ns, tl_span(st, ns, a, sizeof a), tl_span(wt, nw, w, sizeof w),
               tl_span(rq, nr, r, sizeof r), tl_span(ld, nl, l, sizeof l), tl_span(en, ne, z, sizeof z));
    }
    fflush(tl->csv);
    return RAMP_OK;
}

static void tl_close(tl_state *tl, ramp_gpu *gpu) {
    if (tl->csv) fclose(tl->csv);
    free(tl->host);
    if (tl->buf) ramp_gpu_free(gpu, tl->buf);
    memset(tl, 0, sizeof *tl);
}

#endif /* RAMP_BENCH_TIMELINE_H */
