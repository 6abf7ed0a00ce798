/*
 * bench_moe_v2.c - times the Hopper fused MoE kernel v2 (kernels/
 * moe_v2.cuh) against v1 (kernels/moe_v1.cuh) in the same configurations
 * and against the HBM floor (the active experts' weight bytes, block scales
 * included, over the device-to-device copy rate measured in the same run):
 *   Qwen3-30B-A3B EP8 (16 local experts, d = 2048, h = 768) at per-GPU
 *   loads of 64, 256, 512 and 1,024 token-expert pairs, balanced (every
 *   local expert the same count) and skewed (Zipf 1.2 over local experts);
 *   DeepSeek-V3 EP8 (32 local experts, d = 7168, h = 2048) at 4,096 pairs,
 *   balanced and random (tag 4096u: each pair's expert drawn uniformly);
 *   Mixtral-8x22B EP8 (one local expert, d = 6144, h = 16384) at 16, 64,
 *   128, 256, 512 and 1,024 pairs (load tags m16 .. m1024).
 * Every configuration v2 supports (tests/moe_v2_util.h: rows {2..64} x
 * widths dividing h, 4 stages, plus the wide tile r128 of each width; plain
 * launch) is timed in both kernels where both run (v1 has no wide tile):
 * each launch alone after a 512 MiB write that evicts the L2, between two
 * events, median of `reps`. TFLOP/s counts 2 x pairs x 3 x h x d. The best
 * v2 configuration of each load is checked once: Qwen3 against the CPU
 * reference (every element within ramp_moe_reference_tc's bound, the one
 * for FP8 tensor-core sums), DeepSeek-V3 and Mixtral against v1's output
 * of the same configuration (max |v2 - v1| / rms(v1), printed; -1 when the
 * best is a wide tile, which test_gpu_moe_v2 checks instead).
 *
 * Usage: bench_moe_v2 OUTDIR [reps]  writes OUTDIR/moe-v2-<date>.md and
 * .csv (one row per load and configuration) with the command, date and GPU.
 * Exit 77 without a GPU.
 *
 * Variant mode (experiments, moe_v2.md): RAMP_MV2_BENCH_VARIANTS = comma
 * list of [q:|d:|m:]r<rows>.w<width>.s<stages>[.p<prefetch>][.d<diag>]
 * [.x<pipe>][.t<tiled>][.v<red4>][.u<split>][.k<p2k>][.o<group>][.c<splitk>][.l<cluster>]
 * [.b<bulkred>][.m<mcast>][.y<tma_x>][.z<streamk>][.e<w2box>][.a<cgather>][.j<ggather>]
 * [.f<pdl>][.g<grid cap>]
 * (.a8: a narrow fused tile run by a cluster of 8 CTAs sharing their
 * intermediates, session 35; .j8: the same through global memory in groups
 * of 8 blocks, no cluster, session 36; .f1 with .u1: phase 2 by programmatic
 * dependent launch, as in the layer, session 36; .e1: W2 in
 * boxes of 256 rows, session 29; .z1 with .u1: a narrow
 * tile's phase 2 as stream-K, session 24; .b1: the output added by bulk
 * reductions; .m1: wide (or narrow fused FP8, session 45) tiles in pairs
 * sharing each weight stage by TMA multicast; .y1: wide tiles' token rows by TMA, one box per stage from a copy of x in tile order (.y2: one box
 * per row, from x); .c2: the configuration's split-K over a cluster of two
 * CTAs; .l2: launched in clusters of two unsplit; q: Qwen3 only, m: Mixtral
 * only, d: DeepSeek-V3 only; prefetch, diag, pipe, tiled, red4, split, p2k and group (the tile
 * order) as ramp_moe_v2_opts, by default
 * ramp_moe_v2_default_opts; .t1 runs on the same random weights packed by
 * ramp_moe_v2_tile_weights, .v1 on them with W2 permuted by
 * ramp_moe_v2_permute_w2, each uploaded beside the row-major ones; not both)
 * times only those v2 programs, no v1, on the loads named in
 * RAMP_MV2_BENCH_LOADS (e.g.
 * "64b,64s,512b,4096b,m1024": pairs + b/s/u for balanced/skewed/random, m + pairs
 * for Mixtral; default all), checks
 * every non-diagnostic variant on Qwen3 against the CPU reference, and writes
 * OUTDIR/moe-v2-<date>-<RAMP_MV2_BENCH_NAME>.md and .csv.
 *
 * RAMP_MV2_BENCH_FLUSH=read: L2 emptied before each launch by reading the
 * 512 MiB flush buffer (bench_read.h) instead of writing it, so that no
 * dirty lines drain to HBM while the kernel reads (session 13: the write
 * costs a 64 MiB read ~6 us); recorded in both files' command lines.
 * RAMP_MV2_BENCH_FLUSH=none: no flush, the launches back to back (only for
 * loads whose weights are far larger than the L2, to sample the GPU's
 * power and clock beside a long run: with reps in the thousands).
 *
 * RAMP_MV2_BENCH_BF16=1: the same for BF16 layers (bf16 weights and hidden
 * states, no scales; v2's RAMP_MV2_BF16 programs, rows 2..64, against v1's
 * BF16 kernel; the floor counts 2 bytes per weight); the default mode
 * writes OUTDIR/moe-v2-<date>-bf16.md and .csv. Not with .t1, .t2 or .v
 * variants.
 */
#include "bench_args.h"
#include "bench_common.h"
#include "bench_read.h"
#include "internal.h"
#include "moe_v2.h"

#include "../tests/moe_data.h"
#include "../tests/moe_v2_util.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define MAXV MV2_MAXV
static int g_bf16; /* RAMP_MV2_BENCH_BF16: BF16 layers */
/* RAMP_MV2_BENCH_FLUSH=read: L2 emptied by reading the flush buffer (bench_read.h);
 * none: launches back to back (for power and clock samples beside the run) */
static int g_flush_read, g_flush_none;
static const char *flush_tag(void) {
    return g_flush_read   ? "RAMP_MV2_BENCH_FLUSH=read "
           : g_flush_none ? "RAMP_MV2_BENCH_FLUSH=none "
                          : "";
}
#define MAXX 32 /* variants of variant mode */
#define NMODELS 3
#define NLOADS 16 /* 8 Qwen3, 2 DeepSeek-V3, 6 Mixtral */

typedef struct {
    char text[64];
    int model; /* -1 every model, 0 Qwen3, 1 DeepSeek-V3, 2 Mixtral-8x22B */
    int rows, width, stages, grid;
    int ks; /* split-K over a cluster of that many CTAs (ramp_config.splitk; 0, 1: none) */
    ramp_moe_v2_opts o;
} xvariant;

/* One RAMP_MV2_BENCH_VARIANTS item; 0 if malformed. */
static int parse_xvariant(const char *txt, xvariant *x) {
    memset(x, 0, sizeof *x);
    snprintf(x->text, sizeof x->text, "%s", txt);
    x->model = -1;
    x->o = ramp_moe_v2_default_opts();
    const char *p = txt;
    if ((p[0] == 'q' || p[0] == 'd' || p[0] == 'm') && p[1] == ':') {
        x->model = p[0] == 'q' ? 0 : p[0] == 'd' ? 1 : 2;
        p += 2;
    }
    int used = 0;
    if (sscanf(p, "r%d.w%d.s%d%n", &x->rows, &x->width, &x->stages, &used) != 3) return 0;
    p += used;
    while (*p == '.') {
        char c = p[1];
        int val = 0;
        used = 0;
        if (sscanf(p + 2, "%d%n", &val, &used) != 1) return 0;
        if (c == 'p') x->o.prefetch = val;
        else if (c == 'd') x->o.diag = val;
        else if (c == 'g') x->grid = val;
        else if (c == 'x') x->o.pipe = val;
        else if (c == 't') x->o.tiled = val;
        else if (c == 'v') x->o.red4 = val;
        else if (c == 'u') x->o.split = val;
        else if (c == 'k') x->o.p2k = val;
        else if (c == 'o') x->o.group = val;
        else if (c == 'c') x->ks = val;
        else if (c == 'l') x->o.cluster = val;
        else if (c == 'b') x->o.bulkred = val;
        else if (c == 'm') x->o.mcast = val;
        else if (c == 'y') x->o.tma_x = val;
        else if (c == 'z') x->o.streamk = val;
        else if (c == 'e') x->o.w2box = val;
        else if (c == 'a') x->o.cgather = val;
        else if (c == 'j') x->o.ggather = val;
        else if (c == 'f') x->o.pdl = val;
        else return 0;
        p += 2 + used;
    }
    /* split 0..3 and p2k 0, 1, 2, 4 (8: narrow tiles) as ramp_moe_v2_compile_phase
     * checks; refused here, before a GPU is opened */
    const int split_ok = x->o.split >= 0 && x->o.split <= 3;
    const int p2k_ok = (x->o.p2k >= 0 && x->o.p2k <= 5) ||
                       ((x->o.p2k == 6 || x->o.p2k == 8) && x->rows <= 64);
    const int group_ok = x->o.group >= 0 && x->o.group <= 64;
    const int ks_ok = x->ks >= 0 && x->ks <= 2 && x->o.cluster >= 0 && x->o.cluster <= 2 &&
                      x->o.bulkred >= 0 && x->o.bulkred <= 1 && x->o.mcast >= 0 &&
                      x->o.mcast <= 1 && /* (ramp_moe_v2_opts_check refuses the rest) */
                      x->o.tma_x >= 0 && x->o.tma_x <= 2 && (!x->o.tma_x || x->rows > 64) &&
                      x->o.streamk >= 0 && x->o.streamk <= 1 &&
                      (!x->o.streamk || (x->rows <= 64 && x->o.split == 1)) &&
                      (x->o.cgather == 0 || x->o.cgather == 1 || x->o.cgather == 2 ||
                       x->o.cgather == 4 || x->o.cgather == 8) &&
                      (x->o.ggather == 0 || x->o.ggather == 1 || x->o.ggather == 2 ||
                       x->o.ggather == 4 || x->o.ggather == 8) &&
                      (x->o.pdl == 0 || (x->o.pdl == 1 && x->o.split == 1));
    const int tiled_ok = x->o.tiled >= 0 && x->o.tiled <= 3 && !(x->o.tiled && x->o.red4);
    return *p == '\0' && tiled_ok && split_ok && p2k_ok && group_ok && ks_ok;
}

#define ROUTING_NAME(ld) ((ld)->skewed == 1 ? "skewed" : (ld)->skewed == 2 ? "random" : "balanced")
typedef struct {
    const char *model;
    int mi; /* index of model in main's models[] */
    int pairs, active;
    int skewed; /* 0 balanced (round robin), 1 skewed (Zipf 1.2), 2 random (uniform draws) */
    double flop; /* 2 x pairs x 3 x h x d */
    moe_batch b;
    double floor_us;
    ramp_devptr x, xs, tw;
    double t2[MAXV], t1[MAXV]; /* medians, v2 and v1 (0: v1 cannot run it) */
    int best2, best1;
    double check; /* Qwen3: max err/bound; DeepSeek-V3: max |v2-v1|/rms(v1) */
    int selected; /* variant mode: timed */
    float *ref, *bd; /* variant mode: the CPU reference and its bound, once per load */
    double tx[MAXX], cx[MAXX]; /* variant mode: median us, check (-1: none) */
} load;

typedef struct {
    ramp_gpu *gpu;
    ramp_stream st;
    ramp_event *e0, *e1;
    ramp_devptr flush, sorted, texp, ntiles, out;
    ramp_devptr ws; /* split variants' intermediate (0: none) */
    size_t flush_bytes;
    int reps;
    double *samp;
    ramp_graph *flush_graph; /* RAMP_MV2_BENCH_FLUSH=read */
    double wall0, wall1;     /* Unix seconds around time_one's last timed launches */
} timer;

static double wall_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Uploads the selection of ld for rows; fills p. */
static ramp_status prepare(timer *T, load *ld, ramp_select_desc *desc, const ramp_moe_variant *v,
                           ramp_devptr w13, ramp_devptr w13s, ramp_devptr w2, ramp_devptr w2s,
                           ramp_moe_params *p) {
    const int h = v->geom.inter;
    desc->entries[0] = (ramp_select_entry){v->cfg.rows, h / v->cfg.width, 132, {0, 0, 0, 0}, 0, 0};
    ramp_select_result *sel = NULL;
    RAMP_TRY(ramp_select_result_create(desc, &sel));
    ramp_status s = ramp_select_cpu(desc, ld->pairs, ld->b.ids, sel);
    int tiles = s == RAMP_OK ? sel->meta[RAMP_SELECT_META_TILES] : 0;
    if (s == RAMP_OK)
        s = ramp_gpu_upload(T->gpu, T->sorted, sel->sorted_ids, (size_t)(tiles ? tiles : 1) * v->cfg.rows * 4);
    if (s == RAMP_OK)
        s = ramp_gpu_upload(T->gpu, T->texp, sel->tile_expert, (size_t)(tiles ? tiles : 1) * 4);
    int32_t nt = tiles;
    if (s == RAMP_OK) s = ramp_gpu_upload(T->gpu, T->ntiles, &nt, 4);
    memset(p, 0, sizeof *p);
    p->x = ld->x; p->x_scale = ld->xs; p->w13 = w13; p->w13_scale = w13s; p->w2 = w2; p->w2_scale = w2s;
    p->topk_weights = ld->tw; p->sorted_ids = T->sorted; p->tile_expert = T->texp;
    p->num_tiles = T->ntiles; p->out = T->out; p->num_tokens = ld->pairs;
    p->max_tiles = (int)sel->max_tiles;
    p->ws = T->ws;
    ramp_select_result_free(sel);
    return s;
}

/* Median time of k2 (or k1 when k2 is NULL) on p. */
static ramp_status time_one(timer *T, ramp_moe_v2_kernel *k2, ramp_moe_kernel *k1,
                            const ramp_moe_params *p, double *med) {
    for (int r = 0; r < T->reps + 1; r++) {
        if (r == 1) T->wall0 = wall_seconds();
        if (T->flush_graph) RAMP_TRY(ramp_graph_replay(T->flush_graph, T->st));
        else if (!g_flush_none)
            RAMP_TRY(ramp_gpu_fill32_async(T->gpu, T->flush, (uint32_t)r, T->flush_bytes / 4, T->st));
        RAMP_TRY(ramp_event_record(T->e0, T->st));
        RAMP_TRY(k2 ? ramp_moe_v2_launch(k2, p, T->st) : ramp_moe_kernel_launch(k1, p, T->st));
        RAMP_TRY(ramp_event_record(T->e1, T->st));
        double us;
        RAMP_TRY(ramp_event_elapsed_us(T->e0, T->e1, &us));
        if (r > 0) T->samp[r - 1] = us; /* first: warm-up */
    }
    T->wall1 = wall_seconds();
    qsort(T->samp, (size_t)T->reps, sizeof(double), bench_cmp_double);
    *med = T->samp[T->reps / 2];
    return RAMP_OK;
}

/* Variant mode: max err / bound of kernel K2 on load ld against the CPU
 * reference (Qwen3 geometry), as the best-configuration check below. */
static ramp_status check_ref(timer *T, load *ld, ramp_moe_v2_kernel *K2, const ramp_moe_params *p,
                             moe_weights *W, int d, int threads, double *worst) {
    const size_t n = (size_t)ld->pairs * d;
    float *o = malloc(n * 4);
    ramp_status s = o ? RAMP_OK : RAMP_ERR_OUT_OF_MEMORY;
    if (s == RAMP_OK) s = ramp_gpu_fill32_async(T->gpu, T->out, 0, n, T->st);
    if (s == RAMP_OK) s = ramp_moe_v2_launch(K2, p, T->st);
    if (s == RAMP_OK) s = ramp_stream_sync(T->gpu, T->st);
    if (s == RAMP_OK) s = ramp_gpu_download(T->gpu, o, T->out, n * 4);
    if (s == RAMP_OK && !ld->ref) {
        ld->ref = malloc(n * 4);
        ld->bd = malloc(n * 4);
        ramp_moe_layer Ly = moe_layer_of(W);
        ramp_moe_batch B = g_bf16 ? moe_batch_bf16(&ld->b) : moe_batch_fp8(&ld->b);
        s = ld->ref && ld->bd ? ramp_moe_reference_tc(&Ly, &B, threads, 1, ld->ref, ld->bd)
                              : RAMP_ERR_OUT_OF_MEMORY;
        if (s != RAMP_OK) {
            free(ld->ref); free(ld->bd);
            ld->ref = ld->bd = NULL;
        }
    }
    *worst = 0;
    for (size_t i = 0; s == RAMP_OK && i < n; i++) {
        double r = fabs(o[i] - ld->ref[i]) / (ld->bd[i] + fabs(ld->ref[i]) / 65536.0 + 1e-30);
        if (!(r <= *worst)) *worst = isnan(r) ? INFINITY : r;
    }
    free(o);
    return s;
}

/* One token per pair: its first choice the given local expert, the other
 * k - 1 choices on remote experts (distinct). */
static void route(load *ld, int t, int e, int E, int global, int k) {
    int32_t *id = ld->b.ids + (size_t)t * k;
    id[0] = e;
    for (int j = 1; j < k; j++) id[j] = E + (int)((t * 7 + j * 13) % (global - E));
    for (int j = 1; j < k; j++)
        for (int j2 = 1; j2 < j; j2++)
            if (id[j] == id[j2]) id[j] = E + (id[j] - E + 1) % (global - E);
}

/* Variant mode's table: one row per (load, variant) timed. */
static int write_variants(const char *outdir, const char *xname, const char *date,
                          const char *stamp, const char *cmd, const char *xenv,
                          const ramp_gpu_info *info, double copy_rate, const load *loads, int nl,
                          const xvariant *xv, int nx) {
    char path[1024];
    int bad = 0;
    for (int pass = 0; pass < 2; pass++) {
        snprintf(path, sizeof path, "%s/moe-v2-%s-%s.%s", outdir, date, xname, pass ? "md" : "csv");
        FILE *f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "cannot write %s\n", path);
            return 1;
        }
        if (pass == 0) {
            fprintf(f, "# command: %sRAMP_MV2_BENCH_VARIANTS=%s %s\n# date: %s\n# gpu: %s, %d SMs\n"
                       "# copy_rate_tb_s: %.4f\n", g_bf16 ? "RAMP_MV2_BENCH_BF16=1 " : flush_tag(), xenv,
                    cmd, stamp, info->limits.name, info->limits.sms, copy_rate / 1e12);
            fprintf(f, "model,pairs,shape,active_experts,variant,us,floor_us,ratio,tflops,check\n");
        } else {
            fprintf(f, "# Fused MoE kernel v2: variants (%s), %s layers\n\n", xname,
                    g_bf16 ? "BF16" : "FP8");
            fprintf(f, "- command: `%sRAMP_MV2_BENCH_VARIANTS=%s %s`\n- date: %s\n- GPU: %s, %d SMs\n",
                    g_bf16 ? "RAMP_MV2_BENCH_BF16=1 " : flush_tag(),
                    xenv, cmd, stamp, info->limits.name,
                    info->limits.sms);
            fprintf(f, "- measured copy rate: %.2f TB/s; timing as moe-v2-%s.md (L2 evicted%s, events, median)\n",
                    copy_rate / 1e12, date,
                    g_flush_read ? " by a 512 MiB read" : g_flush_none ? ": NOT, launches back to back" : "");
            fprintf(f, "- variant: r.w.s = rows, width, stages; .pN L2 prefetch N stages ahead; .dN "
                       "timing diagnostic N (results wrong); .xN consumer ping-pong (0 off, 1 for "
                       "N 16..48, 2 for N <= 48); .t1 weights pre-tiled (one contiguous 16 KB "
                       "run per TMA box; .t2 the boxes K block-major; .t3 each stage one 32 KB "
                       "unit read by one bulk copy); .v1 output by red.global.add.v4.f32 (W2 rows permuted); .u1 "
                       "two launches (up projection storing the intermediate, then the down projection "
                       "over all of h; .u2/.u3: the up / the down launch alone, for timing); .kN the down "
                       "projection's K in N parts (tiles of their own); .oN the tile order in groups of N "
                       "row tiles (slice-major inside a group); .b1 output by the TMA unit's bulk "
                       "reductions from shared memory; .m1 weights by TMA multicast to pairs of "
                       "tiles; .y1 wide tiles' token rows by TMA from a copy of x in tile order "
                       "(.y2: a box per row from x); .z1 (with .u1) phase 2 as stream-K, each block "
                       "a contiguous range of (row tile, chunk, K block) units; .e1 W2 read in boxes "
                       "of 256 rows (one TMA operation a stage); .aN a cluster of N CTAs per tile "
                       "of N slices, sharing their intermediates; .jN the same through global memory, "
                       "groups of N blocks and no cluster; .f1 (with .u1) phase 2 by programmatic "
                       "dependent launch, as the layer launches it; .gN grid capped at N blocks\n");
            fprintf(f, "- check: Qwen3 max err/bound vs the CPU reference (-1: not checked)\n\n");
            fprintf(f, "| model | pairs | routing | variant | us | floor (us) | / floor | TFLOP/s | check |\n");
            fprintf(f, "|---|---|---|---|---|---|---|---|---|\n");
        }
        for (int li = 0; li < nl; li++) {
            const load *ld = &loads[li];
            for (int xi = 0; xi < nx; xi++) {
                if (ld->tx[xi] < 0) continue;
                const double t = ld->tx[xi];
                if (pass == 0)
                    fprintf(f, "%s,%d,%s,%d,%s,%.3f,%.3f,%.3f,%.1f,%.4g\n", ld->model, ld->pairs,
                            ROUTING_NAME(ld), ld->active, xv[xi].text, t,
                            ld->floor_us, t / ld->floor_us, ld->flop / (t * 1e6), ld->cx[xi]);
                else
                    fprintf(f, "| %s | %d | %s | %s | %.1f | %.1f | %.2f | %.0f | %.3g |\n",
                            ld->model, ld->pairs, ROUTING_NAME(ld), xv[xi].text,
                            t, ld->floor_us, t / ld->floor_us, ld->flop / (t * 1e6), ld->cx[xi]);
                if (pass == 0 && !(ld->cx[xi] <= 1.0) && ld->cx[xi] != -1) bad = 1;
            }
        }
        fclose(f);
    }
    printf("wrote %s/moe-v2-%s-%s.{md,csv}%s\n", outdir, date, xname,
           bad ? "; a checked variant exceeded its bound" : "");
    return bad;
}

static const char USAGE[] =
    "usage: bench_moe_v2 OUTDIR [reps]\n"
    "\n"
    "Times the Hopper kernel v2 against v1 and the HBM floor on Qwen3-30B-A3B,\n"
    "DeepSeek-V3 and Mixtral-8x22B EP8 loads (balanced, skewed, random), the L2 evicted before each\n"
    "launch, the median of `reps` launches (default 20, at least 3); writes\n"
    "OUTDIR/moe-v2-<date>.md and .csv. Variant mode: RAMP_MV2_BENCH_VARIANTS =\n"
    "comma list of [q:|d:|m:]r<rows>.w<width>.s<stages>[.p<prefetch>][.d<diag>]\n"
    "[.x<pipe>][.t<tiled>][.v<float4 output>][.u<two-phase>][.k<down K parts>][.o<tile order group>]\n"
    "[.c<split-K>][.l<cluster>][.b<bulk reductions>][.m<multicast>][.y<token rows by TMA>][.g<grid cap>]\n"
    "(ramp_moe_v2_opts),\n"
    "RAMP_MV2_BENCH_LOADS (e.g. 64b,512s,4096b,m1024), RAMP_MV2_BENCH_NAME; see the\n"
    "file's comment. Needs a GPU (exit 77 without one).\n";

int main(int argc, char **argv) {
    int rc = bench_args(argc, argv, "bench_moe_v2", USAGE, 1, 2);
    if (rc >= 0) return rc;
    const char *outdir = argv[1];
    int reps = 20;
    if (argc > 2 && !bench_int_arg("bench_moe_v2", "reps", argv[2], 1, &reps)) return 2;
    if (reps < 3) reps = 3;
    /* variant mode */
    xvariant xv[MAXX];
    int nx = 0;
    const char *xenv = getenv("RAMP_MV2_BENCH_VARIANTS"), *lenv = getenv("RAMP_MV2_BENCH_LOADS");
    const char *xname = getenv("RAMP_MV2_BENCH_NAME");
    if (!xname || !*xname) xname = "variants";
    if (xenv && *xenv) {
        char buf[2048];
        snprintf(buf, sizeof buf, "%s", xenv);
        for (char *tk = strtok(buf, ","); tk; tk = strtok(NULL, ",")) {
            if (nx == MAXX || !parse_xvariant(tk, &xv[nx])) {
                fprintf(stderr, "bench_moe_v2: bad or too many variants at '%s'\n", tk);
                return 2;
            }
            nx++;
        }
    }
    const char *benv = getenv("RAMP_MV2_BENCH_BF16");
    g_bf16 = benv && atoi(benv) > 0;
    for (int xi = 0; g_bf16 && xi < nx; xi++)
        if ((xv[xi].o.tiled && xv[xi].o.tiled != 3) || xv[xi].o.red4) {
            fprintf(stderr, "bench_moe_v2: variant %s: v2 runs BF16 layers on row-major or "
                            "stage-unit, unpermuted weights (no .t1, .t2 or .v with "
                            "RAMP_MV2_BENCH_BF16)\n",
                    xv[xi].text);
            return 2;
        }
    int ngpu = 0;
    if (ramp_gpu_count(&ngpu) != RAMP_OK || ngpu < 1) {
        fprintf(stderr, "bench_moe_v2: no GPU: %s\n", ramp_last_error());
        return 77;
    }
    timer T;
    memset(&T, 0, sizeof T);
    T.reps = reps;
    T.samp = malloc((size_t)reps * sizeof *T.samp);
    TRY(ramp_gpu_open(0, &T.gpu));
    TRY(ramp_stream_create(T.gpu, &T.st));
    ramp_gpu_info info;
    TRY(ramp_gpu_get_info(T.gpu, &info));
    TRY(ramp_event_create(T.gpu, &T.e0));
    TRY(ramp_event_create(T.gpu, &T.e1));
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1) threads = 1;
    if (threads > 32) threads = 32;
    T.flush_bytes = 512u << 20;
    TRY(ramp_gpu_alloc(T.gpu, T.flush_bytes, &T.flush));
    const char *fenv = getenv("RAMP_MV2_BENCH_FLUSH");
    read_floor flush_reader;
    memset(&flush_reader, 0, sizeof flush_reader);
    if (fenv && *fenv) {
        if (strcmp(fenv, "read") && strcmp(fenv, "write") && strcmp(fenv, "none")) {
            fprintf(stderr, "bench_moe_v2: RAMP_MV2_BENCH_FLUSH=%s: read, write or none\n", fenv);
            return 2;
        }
        g_flush_read = fenv[0] == 'r';
        g_flush_none = fenv[0] == 'n';
    }
    if (g_flush_read) {
        TRY(ramp_gpu_fill32_async(T.gpu, T.flush, 3, T.flush_bytes / 4, T.st));
        TRY(read_flush_graph(&flush_reader, T.gpu, T.st, T.flush, T.flush_bytes, &T.flush_graph));
    }

    double copy_rate = 0;
    TRY(bench_copy_rate(T.gpu, T.st, info.limits.sms, T.e0, T.e1, &copy_rate));
    printf("GPU %s, %d SMs; copy rate %.2f TB/s (read + write, median of 10); %s layers\n",
           info.limits.name, info.limits.sms, copy_rate / 1e12, g_bf16 ? "BF16" : "FP8");

    ramp_rng rng;
    ramp_rng_seed(&rng, 20261130);
    load loads[NLOADS];
    memset(loads, 0, sizeof loads);
    int nl = 0;
    ramp_moe_variant vars[NMODELS][MAXV];
    int nv[NMODELS];
    ramp_geometry geoms[NMODELS];
    const char *models[NMODELS] = {"qwen3-30b", "deepseek-v3", "mixtral-8x22b"};
    for (int mi = 0; mi < NMODELS; mi++) {
        ramp_model m;
        TRY(ramp_model_lookup(models[mi], &m));
        TRY(mv2_geometry(models[mi], &geoms[mi]));
        geoms[mi].bf16 = g_bf16;
        nv[mi] = mv2_variants(&geoms[mi], vars[mi]);
        const ramp_geometry g = geoms[mi];
        const int E = g.experts, k = g.topk, h = g.inter, d = g.hidden;
        const double expert_bytes =
            g_bf16 ? 2 * 3.0 * h * d
                   : 3.0 * h * d + ((2.0 * h / 128) * (d / 128) + (d / 128.0) * (h / 128)) * 4;
        double p[64], tot = 0;
        int perm[64];
        for (int e = 0; e < E; e++) perm[e] = e;
        for (int e = E - 1; e > 0; e--) {
            int j = (int)ramp_rng_below(&rng, (uint32_t)e + 1), t = perm[e];
            perm[e] = perm[j];
            perm[j] = t;
        }
        for (int e = 0; e < E; e++) {
            p[perm[e]] = 1.0 / pow(e + 1, 1.2);
            tot += p[perm[e]];
        }
        /* Qwen3: 64..1024 pairs balanced and skewed; DeepSeek-V3: 4,096
         * balanced and random (each pair's expert drawn uniformly: about 125
         * +- 11 an expert, so some experts take a second row tile of 128,
         * as a served batch's do); Mixtral (one local expert): 16 (a 64-token
         * batch under EP8 gives it 12-13), 64, 128, 256, 512, 1,024 */
        const int qp[4] = {64, 256, 512, 1024}, mp[6] = {16, 64, 128, 256, 512, 1024};
        for (int li = 0; li < (mi == 0 ? 8 : mi == 1 ? 2 : 6); li++) {
            load *ld = &loads[nl++];
            ld->model = models[mi];
            ld->mi = mi;
            ld->pairs = mi == 0 ? qp[li / 2] : mi == 1 ? 4096 : mp[li];
            ld->skewed = mi == 0 ? li % 2 : mi == 1 ? 2 * li : 0;
            ld->flop = 2.0 * ld->pairs * 3.0 * h * d;
            if (moe_batch_make(&rng, MOE_UNIFORM, ld->pairs, k, m.experts, E, d, &ld->b))
                DIE("out of memory");
            int counts[64] = {0};
            for (int t = 0; t < ld->pairs; t++) {
                int e = t % E;
                if (ld->skewed == 2) e = (int)ramp_rng_below(&rng, (uint32_t)E);
                else if (ld->skewed) {
                    double u = ramp_rng_uniform(&rng) * tot, acc = 0;
                    for (e = 0; e < E - 1; e++) {
                        acc += p[e];
                        if (u < acc) break;
                    }
                }
                route(ld, t, e, E, m.experts, k);
                counts[e]++;
            }
            for (int e = 0; e < E; e++) ld->active += counts[e] > 0;
            ld->floor_us = ld->active * expert_bytes / copy_rate * 1e6;
            const size_t n = (size_t)ld->pairs * d;
            TRY(ramp_gpu_alloc(T.gpu, n * (g_bf16 ? 2 : 1), &ld->x));
            TRY(ramp_gpu_alloc(T.gpu, n / 128 * 4, &ld->xs));
            TRY(ramp_gpu_alloc(T.gpu, (size_t)ld->pairs * k * 4, &ld->tw));
            if (g_bf16) TRY(ramp_gpu_upload(T.gpu, ld->x, ld->b.x_bf16, n * 2));
            else TRY(ramp_gpu_upload(T.gpu, ld->x, ld->b.x, n));
            TRY(ramp_gpu_upload(T.gpu, ld->xs, ld->b.x_scale, n / 128 * 4));
            TRY(ramp_gpu_upload(T.gpu, ld->tw, ld->b.weights, (size_t)ld->pairs * k * 4));
            ld->best2 = ld->best1 = -1;
            char tag[32];
            if (mi == 2) /* m1024: not Qwen3's 1024b */
                snprintf(tag, sizeof tag, "m%d", ld->pairs);
            else
                snprintf(tag, sizeof tag, "%d%c", ld->pairs, "bsu"[ld->skewed]);
            ld->selected = 1;
            if (nx && lenv && *lenv) {
                char lb[512];
                snprintf(lb, sizeof lb, "%s", lenv);
                ld->selected = 0;
                for (char *tk = strtok(lb, ","); tk; tk = strtok(NULL, ","))
                    ld->selected |= strcmp(tk, tag) == 0;
            }
            for (int xi = 0; xi < MAXX; xi++) ld->tx[xi] = ld->cx[xi] = -1;
        }
    }

    /* time, model by model (the weights of one model on the GPU at a time) */
    for (int mi = 0; mi < NMODELS; mi++) {
        const ramp_geometry g = geoms[mi];
        const int E = g.experts, k = g.topk, h = g.inter, d = g.hidden;
        int wanted = !nx;
        for (int li = 0; li < nl; li++) wanted |= loads[li].model == models[mi] && loads[li].selected;
        if (!wanted) continue;
        ramp_model m;
        TRY(ramp_model_lookup(models[mi], &m));
        moe_weights W;
        if (moe_weights_make_fast(&rng, E, k, h, d, g_bf16, &W)) DIE("out of memory");
        const size_t el = g_bf16 ? 2 : 1;
        const size_t n13 = (size_t)E * 2 * h * d * el, n2 = (size_t)E * d * h * el;
        const size_t s13 = (size_t)E * (2 * h / 128) * (d / 128) * 4, s2 = (size_t)E * (d / 128) * (h / 128) * 4;
        ramp_devptr w13, w2, w13s, w2s;
        TRY(ramp_gpu_alloc(T.gpu, n13, &w13));
        TRY(ramp_gpu_alloc(T.gpu, n2, &w2));
        TRY(ramp_gpu_alloc(T.gpu, s13, &w13s));
        TRY(ramp_gpu_alloc(T.gpu, s2, &w2s));
        TRY(ramp_gpu_upload(T.gpu, w13, W.w13, n13));
        TRY(ramp_gpu_upload(T.gpu, w2, W.w2, n2));
        if (!g_bf16) { /* (a BF16 layer has none) */
            TRY(ramp_gpu_upload(T.gpu, w13s, W.w13_scale, s13));
            TRY(ramp_gpu_upload(T.gpu, w2s, W.w2_scale, s2));
        }
        /* the same weights pre-tiled, for .t1 (.t2: K block-major, .t3: stage units) variants
         * of this model */
        ramp_devptr w13t[4] = {0, 0, 0, 0}, w2t[4] = {0, 0, 0, 0};
        int any_tiled[4] = {0, 0, 0, 0};
        for (int xi = 0; xi < nx; xi++)
            if (xv[xi].model < 0 || xv[xi].model == mi) any_tiled[xv[xi].o.tiled] = 1;
        ramp_devptr w2p = 0;
        int any_red4 = 0;
        for (int xi = 0; xi < nx; xi++)
            any_red4 |= xv[xi].o.red4 && (xv[xi].model < 0 || xv[xi].model == mi);
        if (any_red4) {
            uint8_t *p2 = malloc(n2);
            if (!p2) DIE("out of memory");
            TRY(ramp_moe_v2_permute_w2(&g, W.w2, p2));
            TRY(ramp_gpu_alloc(T.gpu, n2, &w2p));
            TRY(ramp_gpu_upload(T.gpu, w2p, p2, n2));
            free(p2);
        }
        for (int tm = 1; tm <= 3; tm++) {
            if (!any_tiled[tm]) continue;
            uint8_t *t13 = malloc(n13), *t2 = malloc(n2);
            if (!t13 || !t2) DIE("out of memory");
            TRY(ramp_moe_v2_tile_weights_order(&g, tm, W.w13, W.w2, t13, t2));
            TRY(ramp_gpu_alloc(T.gpu, n13, &w13t[tm]));
            TRY(ramp_gpu_alloc(T.gpu, n2, &w2t[tm]));
            TRY(ramp_gpu_upload(T.gpu, w13t[tm], t13, n13));
            TRY(ramp_gpu_upload(T.gpu, w2t[tm], t2, n2));
            free(t13);
            free(t2);
        }
        int maxM = 0;
        for (int li = 0; li < nl; li++)
            if (loads[li].model == models[mi] && loads[li].pairs > maxM) maxM = loads[li].pairs;
        ramp_select_desc desc;
        memset(&desc, 0, sizeof desc);
        desc.experts = m.experts;
        desc.topk = k;
        desc.max_tokens = maxM;
        desc.local_experts = E;
        desc.nentries = 1;
        desc.group_only = 1;
        int64_t cap_slots = 0, cap_tiles = 0;
        for (int i = 0; i <= MV2_NROWS; i++) { /* and the wide tile */
            const int rows = i < MV2_NROWS ? MV2_ROWS[i] : MV2_WIDE_ROWS;
            desc.entries[0] = (ramp_select_entry){rows, h / 128, 132, {0, 0, 0, 0}, 0, 0};
            int64_t ms, mt;
            TRY(ramp_select_capacity(&desc, &ms, &mt));
            if (ms > cap_slots) cap_slots = ms;
            if (mt > cap_tiles) cap_tiles = mt;
        }
        TRY(ramp_gpu_alloc(T.gpu, (size_t)cap_slots * 4 + 64, &T.sorted));
        TRY(ramp_gpu_alloc(T.gpu, (size_t)cap_tiles * 4 + 64, &T.texp));
        int any_split = 0;
        for (int xi = 0; xi < nx; xi++)
            any_split |= xv[xi].o.split && (xv[xi].model < 0 || xv[xi].model == mi);
        T.ws = 0; /* the largest capacity of any rows bounds every split variant's */
        if (any_split)
            TRY(ramp_gpu_alloc(T.gpu,
                               (size_t)ramp_moe_v2_ws_layout_bf((int)cap_tiles, h, g_bf16).total,
                               &T.ws));
        TRY(ramp_gpu_alloc(T.gpu, 64, &T.ntiles));
        TRY(ramp_gpu_alloc(T.gpu, (size_t)maxM * d * 4, &T.out));
        TRY(ramp_gpu_fill32_async(T.gpu, T.out, 0, (size_t)maxM * d, T.st));
        for (int xi = 0; xi < nx; xi++) {
            const xvariant *x = &xv[xi];
            int any = 0;
            for (int li = 0; li < nl; li++)
                any |= loads[li].model == models[mi] && loads[li].selected;
            if (!any || (x->model >= 0 && x->model != mi)) continue;
            ramp_moe_variant v = mv2_variant(&g, x->rows, x->width);
            v.cfg.stages = x->stages;
            if (x->ks > 1) v.cfg.splitk = x->ks;
            if (ramp_moe_v2_check(&v) != RAMP_OK) {
                printf("variant %s: not supported on %s (%s)\n", x->text, models[mi], ramp_last_error());
                continue;
            }
            ramp_moe_v2_kernel *K2;
            TRY(ramp_moe_v2_create_opts(T.gpu, &v, &x->o, &K2));
            ramp_moe_v2_set_max_grid(K2, x->grid);
            for (int li = 0; li < nl; li++) {
                load *ld = &loads[li];
                if (ld->model != models[mi] || !ld->selected) continue;
                ramp_moe_params p;
                TRY(prepare(&T, ld, &desc, &v, x->o.tiled ? w13t[x->o.tiled] : w13, w13s,
                            x->o.tiled ? w2t[x->o.tiled] : x->o.red4 ? w2p : w2, w2s, &p));
                TRY(time_one(&T, K2, NULL, &p, &ld->tx[xi]));
                if (mi == 0 && x->o.diag == 0)
                    TRY(check_ref(&T, ld, K2, &p, &W, d, threads, &ld->cx[xi]));
                /* wall: the timed launches' Unix seconds, to line up power
                 * and clock samples taken beside the run */
                printf("%-24s %-12s %5d %-8s %8.1f us  %.2f x floor  grid %u  check %.3g  "
                       "wall %.3f %.3f\n",
                       x->text, ld->model, ld->pairs, ROUTING_NAME(ld),
                       ld->tx[xi], ld->tx[xi] / ld->floor_us, ramp_moe_v2_grid(K2, p.max_tiles),
                       ld->cx[xi], T.wall0, T.wall1);
                fflush(stdout);
            }
            ramp_moe_v2_free(K2);
        }
        for (int ci = 0; ci < (nx ? 0 : nv[mi]); ci++) {
            const ramp_moe_variant *v = &vars[mi][ci];
            ramp_moe_v2_kernel *K2;
            ramp_moe_kernel *K1 = NULL;
            TRY(ramp_moe_v2_create(T.gpu, v, &K2));
            /* v1's split-K needs a workspace: v2's split-K has no v1 twin here */
            if (v->cfg.splitk == 1 && ramp_moe_v1_check(v) == RAMP_OK &&
                ramp_moe_kernel_create(T.gpu, v, &K1) != RAMP_OK)
                K1 = NULL;
            for (int li = 0; li < nl; li++) {
                load *ld = &loads[li];
                if (ld->model != models[mi]) continue;
                ramp_moe_params p;
                TRY(prepare(&T, ld, &desc, v, w13, w13s, w2, w2s, &p));
                TRY(time_one(&T, K2, NULL, &p, &ld->t2[ci]));
                if (K1) TRY(time_one(&T, NULL, K1, &p, &ld->t1[ci]));
                if (ld->best2 < 0 || ld->t2[ci] < ld->t2[ld->best2]) ld->best2 = ci;
                if (K1 && (ld->best1 < 0 || ld->t1[ci] < ld->t1[ld->best1])) ld->best1 = ci;
            }
            ramp_moe_v2_free(K2);
            ramp_moe_kernel_free(K1);
        }
        /* the best v2 configuration of each load, checked once */
        ramp_moe_layer Ly = moe_layer_of(&W);
        for (int li = 0; li < nl; li++) {
            load *ld = &loads[li];
            if (nx || ld->model != models[mi] || ld->best2 < 0) continue;
            const ramp_moe_variant *v = &vars[mi][ld->best2];
            const size_t n = (size_t)ld->pairs * d;
            float *o = malloc(n * 4), *o1 = malloc(n * 4), *ref = malloc(n * 4), *bd = malloc(n * 4);
            if (!o || !o1 || !ref || !bd) DIE("out of memory");
            ramp_moe_v2_kernel *K2;
            TRY(ramp_moe_v2_create(T.gpu, v, &K2));
            ramp_moe_params p;
            TRY(prepare(&T, ld, &desc, v, w13, w13s, w2, w2s, &p));
            TRY(ramp_gpu_fill32_async(T.gpu, T.out, 0, n, T.st));
            TRY(ramp_moe_v2_launch(K2, &p, T.st));
            TRY(ramp_stream_sync(T.gpu, T.st));
            TRY(ramp_gpu_download(T.gpu, o, T.out, n * 4));
            ramp_moe_v2_free(K2);
            double worst = 0;
            if (mi == 0) {
                ramp_moe_batch B = g_bf16 ? moe_batch_bf16(&ld->b) : moe_batch_fp8(&ld->b);
                TRY(ramp_moe_reference_tc(&Ly, &B, threads, 1, ref, bd));
                for (size_t i = 0; i < n; i++) {
                    double r = fabs(o[i] - ref[i]) / (bd[i] + fabs(ref[i]) / 65536.0 + 1e-30);
                    if (!(r <= worst)) worst = isnan(r) ? INFINITY : r;
                }
            } else if (ramp_moe_v1_check(v) != RAMP_OK) {
                worst = -1; /* v1 cannot run a wide tile: no check here (test_gpu_moe_v2 has) */
            } else {
                ramp_moe_kernel *K1;
                ramp_moe_variant v1v = *v; /* split-K: the same function unsplit */
                v1v.cfg.splitk = 1;
                TRY(ramp_moe_kernel_create(T.gpu, &v1v, &K1));
                TRY(ramp_gpu_fill32_async(T.gpu, T.out, 0, n, T.st));
                TRY(ramp_moe_kernel_launch(K1, &p, T.st));
                TRY(ramp_stream_sync(T.gpu, T.st));
                TRY(ramp_gpu_download(T.gpu, o1, T.out, n * 4));
                ramp_moe_kernel_free(K1);
                double ss = 0, mx = 0;
                for (size_t i = 0; i < n; i++) {
                    ss += (double)o1[i] * o1[i];
                    double dd = fabs((double)o[i] - o1[i]);
                    if (!(dd <= mx)) mx = isnan(dd) ? INFINITY : dd;
                }
                worst = mx / (sqrt(ss / (double)n) + 1e-30);
            }
            ld->check = worst;
            free(o); free(o1); free(ref); free(bd);
        }
        ramp_gpu_free(T.gpu, w13); ramp_gpu_free(T.gpu, w2);
        for (int tm = 1; tm <= 3; tm++) {
            ramp_gpu_free(T.gpu, w13t[tm]);
            ramp_gpu_free(T.gpu, w2t[tm]);
        }
        ramp_gpu_free(T.gpu, w2p);
        ramp_gpu_free(T.gpu, w13s); ramp_gpu_free(T.gpu, w2s);
        ramp_gpu_free(T.gpu, T.sorted); ramp_gpu_free(T.gpu, T.texp);
        ramp_gpu_free(T.gpu, T.ntiles); ramp_gpu_free(T.gpu, T.out); ramp_gpu_free(T.gpu, T.ws);
        moe_weights_free(&W);
    }

    /* results */
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    char date[32], stamp[32], cmd[512] = "";
    if (g_bf16 && !nx) snprintf(cmd, sizeof cmd, "RAMP_MV2_BENCH_BF16=1 ");
    strftime(date, sizeof date, "%Y-%m-%d", &tmv);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    for (int i = 0; i < argc; i++) {
        strncat(cmd, argv[i], sizeof cmd - strlen(cmd) - 2);
        strcat(cmd, " ");
    }
    char path[1024];
    if (nx) return write_variants(outdir, xname, date, stamp, cmd, xenv, &info, copy_rate, loads,
                                  nl, xv, nx);
    const char *kind = g_bf16 ? "-bf16" : "";
    snprintf(path, sizeof path, "%s/moe-v2-%s%s.csv", outdir, date, kind);
    FILE *f = fopen(path, "w");
    if (!f) DIE("cannot write %s", path);
    fprintf(f, "# command: %s\n# date: %s\n# gpu: %s, %d SMs\n# copy_rate_tb_s: %.4f\n", cmd, stamp,
            info.limits.name, info.limits.sms, copy_rate / 1e12);
    fprintf(f, "model,pairs,shape,active_experts,config,v2_us,v1_us,floor_us,v2_tflops\n");
    for (int li = 0; li < nl; li++) {
        const load *ld = &loads[li];
        const int mi = ld->mi;
        const double flop = 2.0 * ld->pairs * 3.0 * geoms[mi].inter * geoms[mi].hidden;
        for (int ci = 0; ci < nv[mi]; ci++) {
            char name[64];
            ramp_config_name(&vars[mi][ci].cfg, name, sizeof name);
            fprintf(f, "%s,%d,%s,%d,%s,%.3f,%.3f,%.3f,%.1f\n", ld->model, ld->pairs,
                    ROUTING_NAME(ld), ld->active, name, ld->t2[ci], ld->t1[ci],
                    ld->floor_us, flop / (ld->t2[ci] * 1e6));
        }
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/moe-v2-%s%s.md", outdir, date, kind);
    f = fopen(path, "w");
    if (!f) DIE("cannot write %s", path);
    fprintf(f, "# Fused MoE kernel v2 (wgmma + TMA, warp-specialised) vs v1, %s\n\n",
            g_bf16 ? "BF16" : "FP8 128x128");
    fprintf(f, "- command: `%s`\n- date: %s\n- GPU: %s, %d SMs\n", cmd, stamp, info.limits.name,
            info.limits.sms);
    fprintf(f, "- measured copy rate: %.2f TB/s (1 GiB device-to-device, bytes read + written, median of 10)\n",
            copy_rate / 1e12);
    fprintf(f, "- timing: each launch alone after a 512 MiB %s (L2 evicted), events, median of %d\n",
            g_flush_read ? "read" : g_flush_none ? "nothing (NOT evicted)" : "write", reps);
    fprintf(f, "- floor: active experts x (w13 + w2%s) / copy rate; TFLOP/s: 2 x pairs x 3 x h x d / time\n",
            g_bf16 ? ", 2 bytes per weight" : " + block scales");
    fprintf(f, "- v2 configurations: rows {2..64} x widths dividing h, 4 stages, and the wide tile r128 of each width (most stages that fit), plain launch; v1 timed in the same ones (no wide tile)\n");
    fprintf(f, "- check: Qwen3 max err/bound of the best v2 config vs the CPU reference; DeepSeek-V3 and Mixtral max |v2-v1| / rms(v1) (-1: a wide tile, no v1)\n\n");
    fprintf(f, "| model | pairs | routing | active | best v2 config | v2 (us) | v1 same config (us) | best v1 (us) | floor (us) | v2 / floor | v2 TFLOP/s | check |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    printf("\nmodel        pairs routing  active best v2 config   v2 us  v1same us  best v1 us  floor us  v2/floor  TFLOP/s  check\n");
    int bad = 0;
    for (int li = 0; li < nl; li++) {
        const load *ld = &loads[li];
        const int mi = ld->mi;
        if (ld->best2 < 0) continue;
        char name[64];
        ramp_config_name(&vars[mi][ld->best2].cfg, name, sizeof name);
        const double t2 = ld->t2[ld->best2], t1s = ld->t1[ld->best2];
        const double t1b = ld->best1 >= 0 ? ld->t1[ld->best1] : 0;
        const double tf = 2.0 * ld->pairs * 3.0 * geoms[mi].inter * geoms[mi].hidden / (t2 * 1e6);
        fprintf(f, "| %s | %d | %s | %d | %s | %.1f | %.1f | %.1f | %.1f | %.2f | %.0f | %.3g |\n",
                ld->model, ld->pairs, ROUTING_NAME(ld), ld->active, name, t2, t1s,
                t1b, ld->floor_us, t2 / ld->floor_us, tf, ld->check);
        printf("%-12s %5d %-8s %6d %-16s %7.1f %10.1f %11.1f %9.1f %9.2f %8.0f  %.3g\n", ld->model,
               ld->pairs, ROUTING_NAME(ld), ld->active, name, t2, t1s, t1b,
               ld->floor_us, t2 / ld->floor_us, tf, ld->check);
        if (mi == 0) bad |= !(ld->check <= 1.0);
    }
    /* v2 against v1 in every timed (load, configuration) */
    int slower = 0, cells = 0;
    double worst = 0;
    char worst_name[96] = "";
    for (int li = 0; li < nl; li++) {
        const load *ld = &loads[li];
        const int mi = ld->mi;
        for (int ci = 0; ci < nv[mi]; ci++) {
            if (ld->t1[ci] <= 0) continue;
            const double r = ld->t2[ci] / ld->t1[ci];
            cells++;
            slower += r > 1.0;
            if (r > worst) {
                char name[64];
                ramp_config_name(&vars[mi][ci].cfg, name, sizeof name);
                worst = r;
                snprintf(worst_name, sizeof worst_name, "%s %d %s %s", ld->model, ld->pairs,
                         ROUTING_NAME(ld), name);
            }
        }
    }
    fprintf(f, "\nv2 slower than v1 in %d of %d (load, configuration) cells; worst v2/v1 %.2f (%s)\n",
            slower, cells, worst, worst_name);
    printf("v2 slower than v1 in %d of %d (load, configuration) cells; worst v2/v1 %.2f (%s)\n",
           slower, cells, worst, worst_name);
    fclose(f);
    printf("wrote %s/moe-v2-%s%s.{md,csv}\n", outdir, date, kind);
    return bad;
}
