/*
 * test_gpu_wgmma.c - the Hopper building blocks (kernels/hopper.cuh) on a
 * GPU: both test kernels of kernels/wgmma_test.cuh (one warpgroup with a
 * 2-stage ring; producer + two consumer warpgroups with a 4-stage ring and
 * setmaxnreg) compute C[M x N] = A[M x K] . B[N x K]^T with A loaded by TMA
 * through a tensor map (src/tensormap.c) and B by cp.async, for every N
 * (8, 16, 24, 32, 48, 64) in e4m3 and bf16 (the first kernel starts its
 * accumulators as NaN, which the first wgmma's scale-d = 0 must discard; the
 * second zeroes them and always adds), for K = 128, 384, 512, 1024
 * (e4m3: 1, 3, 4 and 8 ring steps) and 128, 192, 512 (bf16: 2, 3, 8), M =
 * 256 rows (4 or 2 blocks: the TMA row coordinate moves), on fresh random
 * data of two kinds:
 *
 *   exact   entries are integers in [-3, 3] (exact in e4m3 and bf16): every
 *           product and every partial sum (|sum| <= 1024 * 9 < 2^14) is an
 *           integer of at most 14 significant bits, which the tensor core's
 *           accumulator holds exactly even in the model below (aligned to
 *           an exponent below 2^14, 13 fraction bits: a resolution of 1 or
 *           finer), so C must equal the reference bit for bit. Any mistake in the
 *           descriptors, the swizzle, the TMA box, the ring's phases or the
 *           accumulator layout shows as a wrong integer.
 *   full    e4m3: every finite code (the whole exponent range); bf16:
 *           N(0,1) scaled by 2^U(-8,8). Products are exact (<= 8 and 16
 *           significant bits: exact in f32), but Hopper's FP8 tensor core
 *           does not accumulate in full f32: the DeepSeek-V3 report
 *           (Section 3.3.2) measured about 14 bits kept, and the
 *           SageAttention2 study describes the FP8 accumulator as 1-8-13
 *           (13 fraction bits), which is why DeepGEMM promotes partial
 *           sums into f32 registers every 128 K. The bound assumes that
 *           model: each instruction (32 e4m3 or 16 bf16 steps of K) adds
 *           its g products to the accumulator after aligning all g + 1
 *           addends to the largest exponent and keeping 13 fraction bits,
 *           so it errs by at most (g + 1) * 2^-12 * M_i, M_i the largest
 *           magnitude among its addends (the exact running sum and its
 *           products); the bound is the sum over instructions, plus one f32
 *           rounding of the result. (bf16 accumulates at least as finely,
 *           so the same bound holds for it, loosely.) The largest
 *           |error| / sum|products| seen is printed per type: the
 *           accumulator precision actually measured.
 *
 * The output is filled with a NaN pattern before every launch (the kernels
 * overwrite C), with 64 guard words past it that must stay untouched; every
 * element is compared. Prints one line per (type, N) and a summary line.
 * RAMP_WGMMA_TYPES (e4m3,bf16) narrows the run.
 *
 * RAMP_WGMMA_STREAM=1 adds a diagnostic (not a benchmark, and no check):
 * how fast the producer/consumer kernel's 4-stage TMA ring streams A from
 * device memory (e4m3, N = 8, K = 8192, 128 rows = 2 MB per block, 16 KB
 * of A per stage) on 33, 66 and 132 blocks, each launch on a region of A
 * not read by the previous few (138 MB in all, against a 50 MB L2): the
 * rate per block tells hopper.md's plan how many SMs must stream to reach
 * the copy rate. Exit 77 without a GPU.
 */
#include "check.h"
#include "fp8.h"
#include "tensormap.h"
#include "wgmma_util.h"

#include <stdint.h>

#define M_ROWS 256
#define GUARD 64
#define POISON 0x7FC0DEADu

typedef struct {
    ramp_gpu *gpu;
    ramp_stream st;
    ramp_devptr a, b, c;
    float *host_c;
    double *ref, *bound, *sabs;
    uint8_t *ha, *hb; /* host A [M][K], B [N][K] in element bytes */
    float *fa, *fb;   /* the same decoded */
} ctx;

typedef struct {
    long long elements, bad;
    double worst_ratio;  /* max err / bound over full-mode elements */
    double worst_rel;    /* max err / sum|products| over full-mode elements */
    int runs;
} tally;

#define GPU_OK(expr)                                                              \
    do {                                                                          \
        ramp_status s_ = (expr);                                                  \
        if (s_ != RAMP_OK) {                                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr,         \
                    ramp_last_error());                                           \
            check_failures++;                                                     \
            goto fail;                                                            \
        }                                                                         \
    } while (0)

static float elem(const uint8_t *p, int bf16, size_t i) {
    if (!bf16) return ramp_e4m3_decode(p[i]);
    uint16_t v;
    memcpy(&v, p + 2 * i, 2);
    return ramp_bf16_decode(v);
}

static void put(uint8_t *p, int bf16, size_t i, float x) {
    if (!bf16) {
        p[i] = ramp_e4m3_encode(x);
        return;
    }
    uint16_t v = ramp_bf16_encode(x);
    memcpy(p + 2 * i, &v, 2);
}

/* Random entries of one kind (see the header). */
static void fill(ramp_rng *r, uint8_t *p, int bf16, size_t count, int full) {
    for (size_t i = 0; i < count; i++) {
        if (!full) {
            put(p, bf16, i, (float)((int)ramp_rng_below(r, 7) - 3));
        } else if (!bf16) {
            uint8_t code;
            do code = (uint8_t)ramp_rng_below(r, 256);
            while ((code & 0x7F) == 0x7F); /* NaN */
            p[i] = code;
        } else {
            put(p, bf16, i, (float)(ramp_rng_normal(r) * exp2(16.0 * ramp_rng_uniform(r) - 8.0)));
        }
    }
}

/* Exact reference (double), the accumulator bound and sum |products|. */
static void reference(ctx *c, int bf16, int n, int k) {
    const int g = bf16 ? 16 : 32; /* K steps per instruction */
    for (size_t i = 0; i < (size_t)M_ROWS * k; i++) c->fa[i] = elem(c->ha, bf16, i);
    for (size_t i = 0; i < (size_t)n * k; i++) c->fb[i] = elem(c->hb, bf16, i);
    for (int m = 0; m < M_ROWS; m++)
        for (int j = 0; j < n; j++) {
            const float *a = c->fa + (size_t)m * k, *b = c->fb + (size_t)j * k;
            double sum = 0, sabs = 0, bound = 0;
            for (int k0 = 0; k0 < k; k0 += g) {
                double mi = fabs(sum);
                for (int kk = k0; kk < k0 + g; kk++) {
                    double p = (double)a[kk] * b[kk];
                    sum += p;
                    sabs += fabs(p);
                    if (fabs(p) > mi) mi = fabs(p);
                }
                bound += (g + 1) * ldexp(mi, -12);
            }
            size_t i = (size_t)m * n + j;
            c->ref[i] = sum;
            c->sabs[i] = sabs;
            c->bound[i] = bound + ldexp(fabs(sum), -23); /* the final f32 rounding */
        }
}

/* One launch of kernel `ws` and the check of every element. */
static ramp_status run_one(ctx *c, ramp_kernel *kern, int ws, int bf16, int n, int k, int full,
                           tally *t) {
    const int eb = bf16 ? 2 : 1;
    ramp_tmap_2d d;
    memset(&d, 0, sizeof d);
    d.base = c->a;
    d.elem_bytes = eb;
    d.rows = M_ROWS;
    d.cols = (uint64_t)k;
    d.row_stride = (uint64_t)k * eb;
    d.box_rows = 64;
    d.box_cols = (uint32_t)(RAMP_WGT_K_BYTES / eb);
    CUtensorMap map;
    RAMP_TRY(ramp_tmap_2d_encode(&d, &map));
    const size_t cn = (size_t)M_ROWS * n;
    RAMP_TRY(ramp_gpu_fill32_async(c->gpu, c->c, POISON, cn + GUARD, c->st));
    ramp_devptr b = c->b, cc = c->c;
    int kk = k;
    void *args[4] = {&map, &b, &cc, &kk};
    unsigned grid[3] = {(unsigned)(M_ROWS / WGT_ROWS[ws]), 1, 1};
    unsigned block[3] = {(unsigned)WGT_THREADS[ws], 1, 1};
    RAMP_TRY(ramp_kernel_launch(kern, grid, block, ramp_wgt_smem_bytes(ws, n), c->st, args));
    RAMP_TRY(ramp_stream_sync(c->gpu, c->st));
    RAMP_TRY(ramp_gpu_download(c->gpu, c->host_c, c->c, (cn + GUARD) * 4));
    int shown = 0;
    for (size_t i = 0; i < cn; i++) {
        double got = c->host_c[i];
        double err = fabs(got - c->ref[i]);
        int ok = full ? err <= c->bound[i] : got == c->ref[i];
        if (full && ok) {
            if (c->bound[i] > 0 && err / c->bound[i] > t->worst_ratio)
                t->worst_ratio = err / c->bound[i];
            if (c->sabs[i] > 0 && err / c->sabs[i] > t->worst_rel) t->worst_rel = err / c->sabs[i];
        }
        if (!ok) {
            t->bad++;
            if (shown++ < 4)
                fprintf(stderr,
                        "  %s %s N=%d K=%d %s: C[%zu][%zu] = %.9g, expected %.9g (bound %.3g)\n",
                        WGT_KERNELS[ws], bf16 ? "bf16" : "e4m3", n, k, full ? "full" : "exact",
                        i / n, i % n, got, c->ref[i], full ? c->bound[i] : 0.0);
        }
    }
    for (size_t i = cn; i < cn + GUARD; i++) {
        uint32_t w;
        memcpy(&w, &c->host_c[i], 4);
        if (w != POISON) {
            t->bad++;
            if (shown++ < 4)
                fprintf(stderr, "  %s N=%d K=%d: guard word %zu overwritten\n", WGT_KERNELS[ws], n,
                        k, i - cn);
        }
    }
    t->elements += (long long)cn;
    t->runs++;
    return RAMP_OK;
}

/* RAMP_WGMMA_STREAM=1: A's streaming rate through the ring (see the top). */
static ramp_status stream_rate(ctx *c) {
    const int k = 8192, rows_total = 132 * RAMP_WGT_WS_ROWS, n = 8;
    const int grids[3] = {33, 66, 132};
    ramp_devptr a = 0, b = 0, cc = 0;
    ramp_jit_result *jr = NULL;
    ramp_module *mod = NULL;
    ramp_kernel *kern = NULL;
    ramp_event *ev[2] = {NULL, NULL};
    ramp_status s = wgt_compile(n, 0, &jr);
    if (s == RAMP_OK) s = ramp_module_load(c->gpu, jr->cubin, jr->cubin_size, &mod);
    ramp_jit_result_free(jr);
    if (s == RAMP_OK) s = ramp_module_kernel(mod, WGT_KERNELS[1], ramp_wgt_smem_bytes(1, n), &kern);
    if (s == RAMP_OK) s = ramp_gpu_alloc(c->gpu, (size_t)rows_total * k, &a);
    if (s == RAMP_OK) s = ramp_gpu_alloc(c->gpu, (size_t)n * k, &b);
    if (s == RAMP_OK) s = ramp_gpu_alloc(c->gpu, (size_t)rows_total * n * 4, &cc);
    /* 0x38 = 1.0 in e4m3 */
    if (s == RAMP_OK)
        s = ramp_gpu_fill32_async(c->gpu, a, 0x38383838u, (size_t)rows_total * k / 4, c->st);
    if (s == RAMP_OK) s = ramp_gpu_fill32_async(c->gpu, b, 0x38383838u, (size_t)n * k / 4, c->st);
    for (int i = 0; i < 2 && s == RAMP_OK; i++) s = ramp_event_create(c->gpu, &ev[i]);
    for (int gi = 0; gi < 3 && s == RAMP_OK; gi++) {
        const int grid = grids[gi], rows = grid * RAMP_WGT_WS_ROWS;
        const int regions = rows_total / rows;
        double t[8];
        for (int rep = 0; rep < 10 && s == RAMP_OK; rep++) {
            ramp_tmap_2d d;
            memset(&d, 0, sizeof d);
            d.base = a + (uint64_t)(rep % regions) * rows * k;
            d.elem_bytes = 1;
            d.rows = (uint64_t)rows;
            d.cols = (uint64_t)k;
            d.row_stride = (uint64_t)k;
            d.box_rows = 64;
            d.box_cols = RAMP_WGT_K_BYTES;
            CUtensorMap map;
            s = ramp_tmap_2d_encode(&d, &map);
            int kk = k;
            void *args[4] = {&map, &b, &cc, &kk};
            unsigned g3[3] = {(unsigned)grid, 1, 1}, b3[3] = {RAMP_WGT_WS_THREADS, 1, 1};
            if (s == RAMP_OK) s = ramp_event_record(ev[0], c->st);
            if (s == RAMP_OK)
                s = ramp_kernel_launch(kern, g3, b3, ramp_wgt_smem_bytes(1, n), c->st, args);
            if (s == RAMP_OK) s = ramp_event_record(ev[1], c->st);
            double us = 0;
            if (s == RAMP_OK) s = ramp_event_elapsed_us(ev[0], ev[1], &us);
            if (rep >= 2) t[rep - 2] = us;
        }
        if (s != RAMP_OK) break;
        for (int i = 1; i < 8; i++) /* insertion sort: median of 8 */
            for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
                double x = t[j];
                t[j] = t[j - 1];
                t[j - 1] = x;
            }
        const double us = 0.5 * (t[3] + t[4]), bytes = (double)rows * k;
        printf("stream: %3d blocks, %5.1f MB of A in %7.1f us: %6.0f GB/s, %5.1f GB/s per block\n",
               grid, bytes / 1e6, us, bytes / us / 1e3, bytes / us / 1e3 / grid);
    }
    for (int i = 0; i < 2; i++) ramp_event_free(ev[i]);
    ramp_module_free(mod);
    ramp_gpu_free(c->gpu, a);
    ramp_gpu_free(c->gpu, b);
    ramp_gpu_free(c->gpu, cc);
    return s;
}

int main(void) {
    unsigned long long seed = check_seed();
    ctx c;
    memset(&c, 0, sizeof c);
    ramp_status s = ramp_gpu_open(0, &c.gpu);
    if (s == RAMP_ERR_NO_GPU) {
        printf("test_gpu_wgmma: no GPU (%s): skipped\n", ramp_last_error());
        return 77;
    }
    ramp_gpu_info info;
    ramp_module *mod = NULL;
    GPU_OK(s);
    GPU_OK(ramp_gpu_get_info(c.gpu, &info));
    printf("GPU %s (sm_%d%d), driver %d\n", info.limits.name, info.cc_major, info.cc_minor,
           info.driver_version);
    if (info.cc_major != 9 || info.cc_minor != 0) {
        printf("test_gpu_wgmma: the kernels are built for sm_90a; this GPU is sm_%d%d: "
               "skipped\n", info.cc_major, info.cc_minor);
        ramp_gpu_close(c.gpu);
        return 77;
    }
    GPU_OK(ramp_stream_create(c.gpu, &c.st));
    const int kmax = 1024, nmax = 64;
    GPU_OK(ramp_gpu_alloc(c.gpu, (size_t)M_ROWS * kmax * 2, &c.a));
    GPU_OK(ramp_gpu_alloc(c.gpu, (size_t)nmax * kmax * 2, &c.b));
    GPU_OK(ramp_gpu_alloc(c.gpu, ((size_t)M_ROWS * nmax + GUARD) * 4, &c.c));
    c.ha = malloc((size_t)M_ROWS * kmax * 2);
    c.hb = malloc((size_t)nmax * kmax * 2);
    c.host_c = malloc(((size_t)M_ROWS * nmax + GUARD) * 4);
    c.ref = malloc((size_t)M_ROWS * nmax * sizeof(double));
    c.bound = malloc((size_t)M_ROWS * nmax * sizeof(double));
    c.sabs = malloc((size_t)M_ROWS * nmax * sizeof(double));
    c.fa = malloc((size_t)M_ROWS * kmax * sizeof(float));
    c.fb = malloc((size_t)nmax * kmax * sizeof(float));
    if (!c.ha || !c.hb || !c.host_c || !c.ref || !c.bound || !c.sabs || !c.fa || !c.fb) {
        fprintf(stderr, "out of memory\n");
        check_failures++;
        goto fail;
    }

    const char *types = getenv("RAMP_WGMMA_TYPES");
    ramp_rng rng;
    ramp_rng_seed(&rng, seed);
    tally total[2];
    memset(total, 0, sizeof total);
    for (int bf16 = 0; bf16 < 2; bf16++) {
        if (types && *types && !strstr(types, bf16 ? "bf16" : "e4m3")) continue;
        const int ks_e4m3[] = {128, 384, 512, 1024}, ks_bf16[] = {128, 192, 512};
        const int *ks = bf16 ? ks_bf16 : ks_e4m3;
        const int nks = bf16 ? 3 : 4;
        const int eb = bf16 ? 2 : 1;
        for (int ni = 0; ni < WGT_NN; ni++) {
            const int n = WGT_NS[ni];
            ramp_jit_result *jr = NULL;
            ramp_kernel *kern[2] = {NULL, NULL};
            GPU_OK(wgt_compile(n, bf16, &jr));
            s = ramp_module_load(c.gpu, jr->cubin, jr->cubin_size, &mod);
            ramp_jit_result_free(jr);
            GPU_OK(s);
            for (int ws = 0; ws < 2; ws++)
                GPU_OK(ramp_module_kernel(mod, WGT_KERNELS[ws], ramp_wgt_smem_bytes(ws, n),
                                          &kern[ws]));
            tally t;
            memset(&t, 0, sizeof t);
            for (int ki = 0; ki < nks; ki++) {
                const int k = ks[ki];
                for (int full = 0; full < 2; full++) {
                    fill(&rng, c.ha, bf16, (size_t)M_ROWS * k, full);
                    fill(&rng, c.hb, bf16, (size_t)n * k, full);
                    reference(&c, bf16, n, k);
                    GPU_OK(ramp_gpu_upload(c.gpu, c.a, c.ha, (size_t)M_ROWS * k * eb));
                    GPU_OK(ramp_gpu_upload(c.gpu, c.b, c.hb, (size_t)n * k * eb));
                    for (int ws = 0; ws < 2; ws++)
                        GPU_OK(run_one(&c, kern[ws], ws, bf16, n, k, full, &t));
                }
            }
            printf("%s N=%-2d: %d runs, %lld elements, %lld out of bound; full range: max "
                   "err/bound %.3g, max err/sum|p| %.3g\n",
                   bf16 ? "bf16" : "e4m3", n, t.runs, t.elements, t.bad, t.worst_ratio,
                   t.worst_rel);
            if (t.bad) check_failures++;
            tally *T = &total[bf16];
            T->runs += t.runs;
            T->elements += t.elements;
            T->bad += t.bad;
            if (t.worst_ratio > T->worst_ratio) T->worst_ratio = t.worst_ratio;
            if (t.worst_rel > T->worst_rel) T->worst_rel = t.worst_rel;
            ramp_module_free(mod);
            mod = NULL;
        }
    }
    const char *stream = getenv("RAMP_WGMMA_STREAM");
    if (stream && strcmp(stream, "1") == 0) GPU_OK(stream_rate(&c));
    printf("test_gpu_wgmma: %d runs, %lld elements, %lld out of bound (exact data bit-exact); "
           "max err/sum|p| e4m3 %.3g, bf16 %.3g; max err/bound %.3g\n",
           total[0].runs + total[1].runs, total[0].elements + total[1].elements,
           total[0].bad + total[1].bad, total[0].worst_rel, total[1].worst_rel,
           total[0].worst_ratio > total[1].worst_ratio ? total[0].worst_ratio
                                                       : total[1].worst_ratio);
fail:
    ramp_module_free(mod);
    if (c.gpu) {
        ramp_gpu_free(c.gpu, c.a);
        ramp_gpu_free(c.gpu, c.b);
        ramp_gpu_free(c.gpu, c.c);
        if (c.st) ramp_stream_destroy(c.gpu, c.st);
        ramp_gpu_close(c.gpu);
    }
    free(c.ha);
    free(c.hb);
    free(c.host_c);
    free(c.ref);
    free(c.bound);
    free(c.sabs);
    free(c.fa);
    free(c.fb);
    return check_finish("test_gpu_wgmma");
}
