/*
 * wgmma_bench_util.h - the variants of the wgmma throughput benchmark
 * (kernels/wgmma_bench.cuh) and how to compile one, for the programs that
 * use them: bench/bench_wgmma.c (GPU, timing) and
 * tests/test_wgmma_bench_compile.c (CPU, ptxas report). Header-only.
 *
 * A variant is a form x N x W:
 *   form  how the wgmmas are issued, named <operands>.a<sets>[.p]:
 *         ss / rs   both operands from shared memory / A from registers
 *         a1 / a2   accumulator sets per warpgroup (a2: gate and up, as v2)
 *         .p        one commit group left in flight at each wait (pipelined);
 *                   without it every group is waited for
 *         .pr       FP8 block-scale promotion as v2's wide consumers do it:
 *                   per set, its 4 wgmmas into a temporary (the first
 *                   overwriting), wait 0, then acc[set] += T x scale
 *         .pp       the same promotion pipelined: two temporaries
 *                   alternating, the next set's group issued before this
 *                   one's is waited for (wait 1) and promoted
 *         .t        a further warpgroup writes 48 KB into shared memory by TMA per
 *                   iteration meanwhile (kernel v2's stage: its producer's
 *                   writes beside its consumers' wgmma reads)
 *         .i        the same warpgroup (and setmaxnreg), idle: the block's
 *                   shape without the writes
 *         .h        as .t, but the iteration's weight bytes (2 N rows x 128
 *                   B, N >= 64) streamed from HBM, the 16 KB of token rows
 *                   from L2: v2's wide stage with its weights from memory,
 *                   2 x 128 FLOP a weight byte (DeepSeek-V3's balanced
 *                   4,096 pairs); the rate the tensor cores and HBM give
 *                   together
 *   N     the instruction's N: 8, 16, 32, 64 (v2's tiles), 128, 256
 *   W     warpgroups per block: 1 or 2 (v2 has two consumers)
 * A variant exists when its accumulators fit: sets x N / 2 <= 128 floats
 * per thread (a2 stops at N = 128), and with its temporaries (N / 2 for
 * .pr, N for .pp) <= 192 (v2's wide consumer: 128 + 64): .pr up to N =
 * 128, .pp up to N = 64; the .h forms from N = 64 (a 16 KB piece of
 * weights is 64 rows of gate and 64 of up).
 */
#ifndef RAMP_WGMMA_BENCH_UTIL_H
#define RAMP_WGMMA_BENCH_UTIL_H

#include "ramp.h"

#include "../kernels/wgmma_bench_params.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    int rs, accs, pipe;
    int promo; /* 0: none, 1: .pr, 2: .pp (temporaries of N / 2 floats) */
    int tma;   /* 1 .t: a warpgroup's TMA copies into shared memory beside (RAMP_WB_TMA);
                  2 .i: the same warpgroup idle (RAMP_WB_TMA_IDLE);
                  3 .h: the copies' weight pieces from HBM (RAMP_WB_TMA 2) */
} wb_form;

static const wb_form WB_FORMS[] = {
    {"ss.a1", 0, 1, 0, 0, 0},    {"ss.a2", 0, 2, 0, 0, 0},    {"ss.a1.p", 0, 1, 1, 0, 0},
    {"ss.a2.p", 0, 2, 1, 0, 0},  {"rs.a1", 1, 1, 0, 0, 0},    {"rs.a1.p", 1, 1, 1, 0, 0},
    {"ss.a2.pr", 0, 2, 0, 1, 0}, {"ss.a2.pp", 0, 2, 0, 2, 0}, {"ss.a2.t", 0, 2, 0, 0, 1},
    {"ss.a2.pr.t", 0, 2, 0, 1, 1}, {"ss.a2.pp.t", 0, 2, 0, 2, 1}, {"ss.a2.pr.i", 0, 2, 0, 1, 2},
    {"ss.a2.pp.i", 0, 2, 0, 2, 2}, {"ss.a2.h", 0, 2, 0, 0, 3},    {"ss.a2.pr.h", 0, 2, 0, 1, 3},
    {"ss.a2.pp.h", 0, 2, 0, 2, 3},
};
#define WB_NFORMS ((int)(sizeof WB_FORMS / sizeof WB_FORMS[0]))

static const int WB_NS[] = {8, 16, 32, 64, 128, 256};
#define WB_NN ((int)(sizeof WB_NS / sizeof WB_NS[0]))

#define WB_KERNEL "ramp_wgmma_bench"

/* One variant. */
typedef struct {
    const wb_form *form;
    int n, w;
    int hbm; /* .h: 16 KB pieces an iteration from HBM, 1..4 (0: the form's own, N / 64) */
} wb_variant;

/* .h: the pieces an iteration streams from HBM. */
static inline int wb_hbm_pieces(const wb_variant *v) {
    return v->form->tma != 3 ? 0 : v->hbm > 0 ? v->hbm : v->n / 64;
}

/* .h: FLOP of the iteration's wgmmas per weight byte streamed (256 at the
 * form's own pieces with two warpgroups). */
static inline double wb_flop_per_hbm_byte(const wb_variant *v) {
    const int p = wb_hbm_pieces(v);
    return p ? v->w * v->form->accs * RAMP_WB_KSTEPS * ramp_wb_wgmma_flop(v->n) /
                   ((double)p * RAMP_WB_TMA_PIECE)
             : 0.0;
}

/* 1 if the variant's accumulators fit (see the top). */
static inline int wb_variant_valid(const wb_form *f, int n, int w) {
    return f && (w == 1 || w == 2) && f->accs * n / 2 <= RAMP_WB_MAX_ACC_REGS &&
           (f->accs + f->promo) * n / 2 <= RAMP_WB_MAX_ACC_REGS + 64 && (f->tma != 3 || n >= 64);
}

static inline int wb_threads(const wb_variant *v) {
    return (v->w + (v->form->tma ? 1 : 0)) * RAMP_WB_WG_THREADS;
}

static inline int wb_smem(const wb_variant *v) {
    return ramp_wb_smem_bytes(v->w, v->form->accs, v->n) +
           (v->form->tma == 3 ? RAMP_WB_TMA_SMEM_H : v->form->tma ? RAMP_WB_TMA_SMEM : 0);
}

/* The form named `name`, or NULL. */
static inline const wb_form *wb_form_find(const char *name) {
    for (int i = 0; i < WB_NFORMS; i++)
        if (strcmp(WB_FORMS[i].name, name) == 0) return &WB_FORMS[i];
    return NULL;
}

/* "ss.a2.p-n64-w2" (.h at other than N / 64 pieces: "-h3" after): the
 * program name (JIT cache, cubin files). */
static inline void wb_variant_name(const wb_variant *v, char *buf, size_t size) {
    if (v->form->tma == 3 && v->hbm > 0 && v->hbm != v->n / 64)
        snprintf(buf, size, "%s-n%d-w%d-h%d", v->form->name, v->n, v->w, v->hbm);
    else
        snprintf(buf, size, "%s-n%d-w%d", v->form->name, v->n, v->w);
}

/* Compiles wgmma_bench.cuh for the variant (NVRTC, sm_90a, no GPU needed). */
static inline ramp_status wb_compile(const wb_variant *v, ramp_jit_result **out) {
    char name[64], prog[80], dn[32], dw[32], da[32], dp[32], dr[32], dq[32], dt[32], di[32];
    char dh[40];
    wb_variant_name(v, name, sizeof name);
    snprintf(prog, sizeof prog, "wgmma-bench-%s", name);
    snprintf(dn, sizeof dn, "RAMP_WB_N=%d", v->n);
    snprintf(dw, sizeof dw, "RAMP_WB_W=%d", v->w);
    snprintf(da, sizeof da, "RAMP_WB_ACCS=%d", v->form->accs);
    snprintf(dp, sizeof dp, "RAMP_WB_PIPE=%d", v->form->pipe);
    snprintf(dr, sizeof dr, "RAMP_WB_RS=%d", v->form->rs);
    snprintf(dq, sizeof dq, "RAMP_WB_PROMO=%d", v->form->promo);
    snprintf(dt, sizeof dt, "RAMP_WB_TMA=%d", v->form->tma == 3 ? 2 : v->form->tma ? 1 : 0);
    snprintf(di, sizeof di, "RAMP_WB_TMA_IDLE=%d", v->form->tma == 2);
    snprintf(dh, sizeof dh, "RAMP_WB_HBM_PIECES=%d", v->hbm);
    const char *defs[9] = {dn, dw, da, dp, dr, dq, dt, di, dh};
    ramp_jit_request rq;
    memset(&rq, 0, sizeof rq);
    rq.name = prog;
    rq.source = "#include \"wgmma_bench.cuh\"\n";
    rq.defines = defs;
    rq.ndefines = v->form->tma == 2 ? 8 : v->form->tma ? 7 : v->form->promo ? 6 : 5; /* older forms keep their keys */
    if (v->form->tma == 3 && v->hbm > 0 && v->hbm != v->n / 64) { /* .h at another intensity */
        defs[7] = dh;
        rq.ndefines = 8;
    }
    return ramp_jit_compile(&rq, out);
}

/* ptxas's info lines that say wgmmas were serialised (C7514 and kin) or a
 * wait injected (C7517): either would make the timing measure something
 * else than the instruction form (test_moe_v2_compile counts them as
 * warnings too). */
static inline int wb_log_serialised(const ramp_jit_result *r) {
    return r->log && (strstr(r->log, "Potential Performance Loss") != NULL ||
                      strstr(r->log, "is injected") != NULL);
}

/* Every valid variant of the forms, Ns and Ws given (lists of counts nf,
 * nn, nw) into out (room for max); returns how many. */
static inline int wb_variants(const wb_form *const *forms, int nf, const int *ns, int nn,
                              const int *ws, int nw, wb_variant *out, int max) {
    int k = 0;
    for (int f = 0; f < nf; f++)
        for (int i = 0; i < nn; i++)
            for (int j = 0; j < nw; j++)
                if (wb_variant_valid(forms[f], ns[i], ws[j]) && k < max) {
                    out[k].form = forms[f];
                    out[k].n = ns[i];
                    out[k].w = ws[j];
                    out[k].hbm = 0;
                    k++;
                }
    return k;
}

#endif /* RAMP_WGMMA_BENCH_UTIL_H */
