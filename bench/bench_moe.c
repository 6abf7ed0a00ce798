/*
 * bench_moe.c - times the fused MoE kernel v1 (kernels/moe_v1.cuh) on
 * Qwen3-30B-A3B EP8 (16 local experts, d = 2048, h = 768, FP8 128x128
 * block-scaled) at per-GPU loads of 64, 256, 512 and 1,024 token-expert
 * pairs, balanced (every local expert the same count) and skewed (Zipf 1.2
 * over the local experts), against the HBM floor: the active experts' weight
 * bytes (with their scales) over the device-to-device copy rate measured in
 * the same run (bytes read + written, like DESIGN.md's 4.2 TB/s).
 *
 * Every configuration of the model's space is timed: each launch alone,
 * after a 512 MiB write that evicts the L2, between two events; the median
 * of `reps` launches. The best configuration of each load is checked once
 * against the CPU reference (every element within the bound of moe_ref.h).
 *
 * Usage: bench_moe OUTDIR [reps]   writes OUTDIR/moe-v1-<date>.md and .csv
 * (one row per load and configuration) with the command, date and GPU.
 */
#include "bench_args.h"
#include "bench_common.h"
#include "internal.h"
#include "moe_gpu.h"

#include "../tests/moe_data.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* compile pool */
typedef struct {
    ramp_moe_variant v;
    ramp_jit_result *r;
    ramp_status s;
    int done;
} cjob;
static cjob *cj;
static int ncj, cnext;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static void *cworker(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&mu);
        int i = cnext++;
        pthread_mutex_unlock(&mu);
        if (i >= ncj) return NULL;
        ramp_jit_result *r = NULL;
        ramp_status s = ramp_moe_v1_compile(&cj[i].v, &r);
        pthread_mutex_lock(&mu);
        cj[i].r = r;
        cj[i].s = s;
        cj[i].done = 1;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
}

typedef struct {
    int pairs, skewed;
    moe_batch b;
    int32_t counts[16];
    int active;
    double floor_us;
    ramp_devptr x, xs, tw;
    double best_us;
    int best;
} load;

static const char USAGE[] =
    "usage: bench_moe OUTDIR [reps]\n"
    "\n"
    "Times every configuration of the fused MoE kernel v1 on Qwen3-30B-A3B EP8\n"
    "at 64-1,024 token-expert pairs (balanced and skewed) against the HBM floor\n"
    "(the active experts' bytes at the copy rate measured in the same run), the\n"
    "L2 evicted before each launch, the median of `reps` launches (default 20,\n"
    "at least 3). Writes OUTDIR/moe-v1-<date>.md and .csv. Needs a GPU (exit 77\n"
    "without one).\n";

int main(int argc, char **argv) {
    int rc = bench_args(argc, argv, "bench_moe", USAGE, 1, 2);
    if (rc >= 0) return rc;
    const char *outdir = argv[1];
    int reps = 20;
    if (argc > 2 && !bench_int_arg("bench_moe", "reps", argv[2], 1, &reps)) return 2;
    if (reps < 3) reps = 3;
    int ngpu = 0;
    if (ramp_gpu_count(&ngpu) != RAMP_OK) {
        fprintf(stderr, "bench_moe: no GPU: %s\n", ramp_last_error());
        return 77;
    }
    ramp_gpu *gpu;
    ramp_stream st;
    TRY(ramp_gpu_open(0, &gpu));
    TRY(ramp_stream_create(gpu, &st));
    ramp_gpu_info info;
    TRY(ramp_gpu_get_info(gpu, &info));
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    ramp_model m;
    ramp_layout L;
    ramp_geometry g;
    TRY(ramp_model_lookup("qwen3-30b", &m));
    TRY(ramp_layout_parse("EP8", &L));
    TRY(ramp_geometry_for(&m, L, &g));
    const int E = g.experts, k = g.topk, h = g.inter, d = g.hidden;
    ramp_config *space;
    int nsp;
    TRY(ramp_config_space(&g, &info.limits, &space, &nsp));
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1) threads = 1;
    if (threads > 32) threads = 32;
    cj = calloc((size_t)nsp, sizeof *cj);
    int *job_of = calloc((size_t)nsp, sizeof *job_of);
    for (int i = 0; i < nsp; i++) {
        ramp_moe_variant v = {space[i], g, 0};
        v.cfg.persistent = 0;
        int j;
        for (j = 0; j < ncj; j++)
            if (ramp_config_equal(&cj[j].v.cfg, &v.cfg)) break;
        if (j == ncj) cj[ncj++].v = v;
        job_of[i] = j;
    }
    pthread_t th[32];
    for (int t = 0; t < threads; t++) pthread_create(&th[t], NULL, cworker, NULL);

    /* data */
    ramp_rng rng;
    ramp_rng_seed(&rng, 20260101);
    moe_weights W;
    if (moe_weights_make_fast(&rng, E, k, h, d, 0, &W)) DIE("out of memory");
    size_t n13 = (size_t)E * 2 * h * d, n2 = (size_t)E * d * h;
    size_t s13 = (size_t)E * (2 * h / 128) * (d / 128) * 4, s2 = (size_t)E * (d / 128) * (h / 128) * 4;
    ramp_devptr w13, w2, w13s, w2s, out, flush, sorted, texp, ntiles;
    TRY(ramp_gpu_alloc(gpu, n13, &w13));
    TRY(ramp_gpu_alloc(gpu, n2, &w2));
    TRY(ramp_gpu_alloc(gpu, s13, &w13s));
    TRY(ramp_gpu_alloc(gpu, s2, &w2s));
    TRY(ramp_gpu_upload(gpu, w13, W.w13, n13));
    TRY(ramp_gpu_upload(gpu, w2, W.w2, n2));
    TRY(ramp_gpu_upload(gpu, w13s, W.w13_scale, s13));
    TRY(ramp_gpu_upload(gpu, w2s, W.w2_scale, s2));
    const size_t flush_bytes = 512u << 20;
    TRY(ramp_gpu_alloc(gpu, flush_bytes, &flush));

    ramp_event *e0, *e1;
    TRY(ramp_event_create(gpu, &e0));
    TRY(ramp_event_create(gpu, &e1));
    double copy_rate = 0;
    TRY(bench_copy_rate(gpu, st, info.limits.sms, e0, e1, &copy_rate));
    printf("GPU %s, %d SMs; copy rate %.2f TB/s (read + write, median of 10)\n",
           info.limits.name, info.limits.sms, copy_rate / 1e12);

    /* loads */
    const int PAIRS[] = {64, 256, 512, 1024};
    load loads[8];
    memset(loads, 0, sizeof loads);
    int nl = 0, maxM = 1024;
    const double expert_bytes = 3.0 * h * d + ((2.0 * h / 128) * (d / 128) + (d / 128.0) * (h / 128)) * 4;
    for (int pi = 0; pi < 4; pi++)
        for (int sk = 0; sk < 2; sk++) {
            load *ld = &loads[nl++];
            ld->pairs = PAIRS[pi];
            ld->skewed = sk;
            /* one token per pair: its first choice local, the rest remote */
            if (moe_batch_make(&rng, MOE_UNIFORM, ld->pairs, k, m.experts, E, d, &ld->b)) DIE("oom");
            double p[16], tot = 0;
            int perm[16];
            for (int e = 0; e < E; e++) perm[e] = e;
            for (int e = E - 1; e > 0; e--) {
                int j = (int)ramp_rng_below(&rng, (uint32_t)e + 1), t = perm[e];
                perm[e] = perm[j]; perm[j] = t;
            }
            for (int e = 0; e < E; e++) { p[perm[e]] = 1.0 / pow(e + 1, 1.2); tot += p[perm[e]]; }
            for (int t = 0; t < ld->pairs; t++) {
                int e;
                if (!sk) e = t % E;
                else {
                    double u = ramp_rng_uniform(&rng) * tot, acc = 0;
                    for (e = 0; e < E - 1; e++) { acc += p[e]; if (u < acc) break; }
                }
                int32_t *id = ld->b.ids + (size_t)t * k;
                id[0] = e;
                for (int j = 1; j < k; j++) id[j] = E + (int)((t * 7 + j * 13) % (m.experts - E));
                for (int j = 1; j < k; j++) /* distinct remote experts */
                    for (int j2 = 1; j2 < j; j2++)
                        if (id[j] == id[j2]) id[j] = E + (id[j] - E + 1) % (m.experts - E);
                ld->counts[e]++;
            }
            for (int e = 0; e < E; e++) ld->active += ld->counts[e] > 0;
            ld->floor_us = ld->active * expert_bytes / copy_rate * 1e6;
            size_t n = (size_t)ld->pairs * d;
            TRY(ramp_gpu_alloc(gpu, n, &ld->x));
            TRY(ramp_gpu_alloc(gpu, n / 128 * 4, &ld->xs));
            TRY(ramp_gpu_alloc(gpu, (size_t)ld->pairs * k * 4, &ld->tw));
            TRY(ramp_gpu_upload(gpu, ld->x, ld->b.x, n));
            TRY(ramp_gpu_upload(gpu, ld->xs, ld->b.x_scale, n / 128 * 4));
            TRY(ramp_gpu_upload(gpu, ld->tw, ld->b.weights, (size_t)ld->pairs * k * 4));
            ld->best_us = 1e30;
            ld->best = -1;
        }
    ramp_select_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.experts = m.experts;
    desc.topk = k;
    desc.max_tokens = maxM;
    desc.local_experts = E;
    desc.nentries = 1;
    desc.group_only = 1;
    desc.entries[0] = (ramp_select_entry){2, h / 128, 132, {0, 0, 0, 0}, 0, 0};
    int64_t cap_slots, cap_tiles;
    TRY(ramp_select_capacity(&desc, &cap_slots, &cap_tiles)); /* rows 2: most tiles */
    desc.entries[0].rows = 64;
    int64_t cs64, ct64;
    TRY(ramp_select_capacity(&desc, &cs64, &ct64));
    if (cs64 > cap_slots) cap_slots = cs64;
    TRY(ramp_gpu_alloc(gpu, (size_t)cap_slots * 4, &sorted));
    TRY(ramp_gpu_alloc(gpu, (size_t)cap_tiles * 4, &texp));
    TRY(ramp_gpu_alloc(gpu, 16, &ntiles));
    TRY(ramp_gpu_alloc(gpu, (size_t)maxM * d * 4, &out));
    TRY(ramp_gpu_fill32_async(gpu, out, 0, (size_t)maxM * d, st));

    /* time every configuration on every load */
    double *times = calloc((size_t)nsp * nl, sizeof *times);
    double *samp = malloc((size_t)reps * sizeof *samp);
    ramp_select_result *sel = NULL;
    for (int ci = 0; ci < nsp; ci++) {
        pthread_mutex_lock(&mu);
        while (!cj[job_of[ci]].done) pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
        cjob *J = &cj[job_of[ci]];
        char name[64];
        ramp_config_name(&space[ci], name, sizeof name);
        if (J->s != RAMP_OK) DIE("compile %s failed", name);
        ramp_moe_variant v = {space[ci], g, 0};
        ramp_moe_kernel *K;
        TRY(ramp_moe_kernel_create_from(gpu, &v, J->r, &K));
        desc.entries[0] = (ramp_select_entry){v.cfg.rows, h / v.cfg.width * v.cfg.splitk, 132, {0, 0, 0, 0}, 0, 0};
        ramp_select_result_free(sel);
        sel = NULL;
        TRY(ramp_select_result_create(&desc, &sel));
        for (int li = 0; li < nl; li++) {
            load *ld = &loads[li];
            TRY(ramp_select_cpu(&desc, ld->pairs, ld->b.ids, sel));
            int tiles = sel->meta[RAMP_SELECT_META_TILES];
            TRY(ramp_gpu_upload(gpu, sorted, sel->sorted_ids, (size_t)tiles * v.cfg.rows * 4));
            TRY(ramp_gpu_upload(gpu, texp, sel->tile_expert, (size_t)tiles * 4));
            int32_t nt = tiles;
            TRY(ramp_gpu_upload(gpu, ntiles, &nt, 4));
            ramp_moe_params p;
            memset(&p, 0, sizeof p);
            p.x = ld->x; p.x_scale = ld->xs; p.w13 = w13; p.w13_scale = w13s; p.w2 = w2; p.w2_scale = w2s;
            p.topk_weights = ld->tw; p.sorted_ids = sorted; p.tile_expert = texp; p.num_tiles = ntiles;
            p.out = out; p.num_tokens = ld->pairs; p.max_tiles = (int)sel->max_tiles;
            for (int r = 0; r < reps + 1; r++) {
                TRY(ramp_gpu_fill32_async(gpu, flush, (uint32_t)r, flush_bytes / 4, st));
                TRY(ramp_event_record(e0, st));
                TRY(ramp_moe_kernel_launch(K, &p, st));
                TRY(ramp_event_record(e1, st));
                double us;
                TRY(ramp_event_elapsed_us(e0, e1, &us));
                if (r > 0) samp[r - 1] = us; /* first: warm-up */
            }
            qsort(samp, (size_t)reps, sizeof(double), bench_cmp_double);
            double med = samp[reps / 2];
            times[(size_t)li * nsp + ci] = med;
            if (med < ld->best_us) { ld->best_us = med; ld->best = ci; }
        }
        ramp_moe_kernel_free(K);
    }
    /* correctness of each load's best configuration */
    double worst_ratio[8] = {0};
    for (int li = 0; li < nl; li++) {
        load *ld = &loads[li];
        ramp_moe_variant v = {space[ld->best], g, 0};
        ramp_moe_kernel *K;
        TRY(ramp_moe_kernel_create_from(gpu, &v, cj[job_of[ld->best]].r, &K));
        desc.entries[0] = (ramp_select_entry){v.cfg.rows, h / v.cfg.width * v.cfg.splitk, 132, {0, 0, 0, 0}, 0, 0};
        ramp_select_result_free(sel);
        sel = NULL;
        TRY(ramp_select_result_create(&desc, &sel));
        TRY(ramp_select_cpu(&desc, ld->pairs, ld->b.ids, sel));
        int tiles = sel->meta[RAMP_SELECT_META_TILES];
        TRY(ramp_gpu_upload(gpu, sorted, sel->sorted_ids, (size_t)tiles * v.cfg.rows * 4));
        TRY(ramp_gpu_upload(gpu, texp, sel->tile_expert, (size_t)tiles * 4));
        int32_t nt = tiles;
        TRY(ramp_gpu_upload(gpu, ntiles, &nt, 4));
        size_t n = (size_t)ld->pairs * d;
        TRY(ramp_gpu_fill32_async(gpu, out, 0, n, st));
        ramp_moe_params p;
        memset(&p, 0, sizeof p);
        p.x = ld->x; p.x_scale = ld->xs; p.w13 = w13; p.w13_scale = w13s; p.w2 = w2; p.w2_scale = w2s;
        p.topk_weights = ld->tw; p.sorted_ids = sorted; p.tile_expert = texp; p.num_tiles = ntiles;
        p.out = out; p.num_tokens = ld->pairs; p.max_tiles = (int)sel->max_tiles;
        TRY(ramp_moe_kernel_launch(K, &p, st));
        TRY(ramp_stream_sync(gpu, st));
        float *o = malloc(n * 4), *ref = malloc(n * 4), *bd = malloc(n * 4);
        TRY(ramp_gpu_download(gpu, o, out, n * 4));
        ramp_moe_layer Ly = moe_layer_of(&W);
        ramp_moe_batch B = moe_batch_fp8(&ld->b);
        TRY(ramp_moe_reference(&Ly, &B, threads, ref, bd));
        for (size_t i = 0; i < n; i++) {
            double r = fabs(o[i] - ref[i]) / (bd[i] + fabs(ref[i]) / 65536.0 + 1e-30);
            if (!(r <= worst_ratio[li])) worst_ratio[li] = isnan(r) ? INFINITY : r;
        }
        free(o); free(ref); free(bd);
        ramp_moe_kernel_free(K);
    }
    for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);

    /* results */
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    char date[32], stamp[32], cmd[512] = "";
    strftime(date, sizeof date, "%Y-%m-%d", &tmv);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    for (int i = 0; i < argc; i++) {
        strncat(cmd, argv[i], sizeof cmd - strlen(cmd) - 2);
        strcat(cmd, " ");
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/moe-v1-%s.csv", outdir, date);
    FILE *f = fopen(path, "w");
    if (!f) DIE("cannot write %s", path);
    fprintf(f, "# command: %s\n# date: %s\n# gpu: %s, %d SMs\n# copy_rate_tb_s: %.4f\n", cmd, stamp,
           info.limits.name, info.limits.sms, copy_rate / 1e12);
    fprintf(f, "pairs,shape,active_experts,config,median_us,floor_us,ratio\n");
    for (int li = 0; li < nl; li++)
        for (int ci = 0; ci < nsp; ci++) {
            char name[64];
            ramp_config_name(&space[ci], name, sizeof name);
            double t = times[(size_t)li * nsp + ci];
            fprintf(f, "%d,%s,%d,%s,%.3f,%.3f,%.3f\n", loads[li].pairs,
                    loads[li].skewed ? "skewed" : "balanced", loads[li].active, name, t,
                    loads[li].floor_us, t / loads[li].floor_us);
        }
    fclose(f);
    snprintf(path, sizeof path, "%s/moe-v1-%s.md", outdir, date);
    f = fopen(path, "w");
    if (!f) DIE("cannot write %s", path);
    fprintf(f, "# Fused MoE kernel v1 (mma.sync), Qwen3-30B-A3B EP8, FP8 128x128\n\n");
    fprintf(f, "- command: `%s`\n- date: %s\n- GPU: %s, %d SMs\n", cmd, stamp, info.limits.name,
            info.limits.sms);
    fprintf(f, "- measured copy rate: %.2f TB/s (1 GiB device-to-device, bytes read + written, median of 10)\n",
            copy_rate / 1e12);
    fprintf(f, "- timing: each launch alone after a 512 MiB write (L2 evicted), events, median of %d\n", reps);
    fprintf(f, "- floor: active experts x %.2f MB (w13 + w2 + block scales) / copy rate\n", expert_bytes / 1e6);
    fprintf(f, "- %d configurations timed per load; all times in the CSV beside this file\n\n", nsp);
    fprintf(f, "| pairs | routing | active experts | best config | best (us) | floor (us) | best / floor | median config (us) | max err/bound |\n");
    fprintf(f, "|---|---|---|---|---|---|---|---|---|\n");
    printf("\n pairs routing  active  best config               best us  floor us  ratio  median-config us  err/bound\n");
    for (int li = 0; li < nl; li++) {
        load *ld = &loads[li];
        char name[64];
        ramp_config_name(&space[ld->best], name, sizeof name);
        double *tt = malloc((size_t)nsp * sizeof *tt);
        for (int ci = 0; ci < nsp; ci++) tt[ci] = times[(size_t)li * nsp + ci];
        qsort(tt, (size_t)nsp, sizeof *tt, bench_cmp_double);
        double medc = tt[nsp / 2];
        free(tt);
        fprintf(f, "| %d | %s | %d | %s | %.1f | %.1f | %.2f | %.1f | %.3f |\n", ld->pairs,
                ld->skewed ? "skewed" : "balanced", ld->active, name, ld->best_us, ld->floor_us,
                ld->best_us / ld->floor_us, medc, worst_ratio[li]);
        printf("%6d %-9s %6d  %-24s %8.1f %9.1f %6.2f %17.1f %10.3f\n", ld->pairs,
               ld->skewed ? "skewed" : "balanced", ld->active, name, ld->best_us, ld->floor_us,
               ld->best_us / ld->floor_us, medc, worst_ratio[li]);
    }
    fclose(f);
    printf("wrote %s/moe-v1-%s.{md,csv}\n", outdir, date);
    int bad = 0;
    for (int li = 0; li < nl; li++) bad |= !(worst_ratio[li] <= 1.0);
    return bad;
}
