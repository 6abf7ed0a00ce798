/*
 * cmd_bench.c - `ramp bench`: times every configuration of a timing dataset
 * on every per-GPU load (src/bench.c), in chunks of a few minutes that
 * resume: exit 3 means "stopped before the deadline, run the same command
 * again".
 */
#include "cli.h"

#include <math.h>
#include <unistd.h>

static const char BENCH_HELP[] =
    "usage: ramp bench DATASET -o OUT [options]\n"
    "\n"
    "Times every configuration of DATASET (from `ramp dataset build`) on every\n"
    "per-GPU load and writes the times to OUT, a timing dataset. GPU backend: the\n"
    "fused kernel (v1, or v2 with --kernel v2) on one GPU, each load's routing\n"
    "synthesized with exactly its per-expert counts, L2 flushed before each run,\n"
    "CUDA events, median of the runs. EP16/EP32 loads are replayed on the one GPU.\n"
    "\n"
    "Works in chunks: it stops cleanly before --max-seconds, writes OUT every\n"
    "--checkpoint seconds (atomically; only whole measured cells), and exits 3\n"
    "while cells remain. Run the same command again to resume: when OUT exists\n"
    "and holds the same loads and configurations, filled cells are skipped.\n"
    "\n"
    "  -o, --output OUT    the timing dataset to write (and resume from)\n"
    "  --backend B         gpu (default) or sim (the analytic stand-in; NOT a\n"
    "                      measurement, the file says device \"simulated\")\n"
    "  --kernel K          v1 or v2 (default: DATASET's kernel, v1 unless it was\n"
    "                      built with `ramp dataset build --kernel v2`). OUT\n"
    "                      records it. A DATASET of another kernel with no times\n"
    "                      yet is narrowed to the configurations K runs (v2: plain\n"
    "                      launch, no grouped order, split-K only over a cluster\n"
    "                      of two; the count left out is printed); one with\n"
    "                      times is refused,\n"
    "                      and so is resuming an OUT of another kernel\n"
    "  --weights W         rows or units: the weight layout the kernel reads\n"
    "                      (default: DATASET's, rows unless set here). units:\n"
    "                      stage units (ramp_layer_desc.weight_units), kernel v2\n"
    "                      only; OUT records it (\"weights\") and a plan fit on\n"
    "                      it says so. Only on a DATASET with no times; resuming\n"
    "                      an OUT of the other layout is refused\n"
    "  --max-seconds S     stop before S seconds (default 240; 0: no limit)\n"
    "  --checkpoint S      write OUT every S seconds (default 60; 0: at the end)\n"
    "  --repeats N         timed runs per cell, after one warm-up (default 5)\n"
    "  --configs LIST      only these configurations (comma-separated names)\n"
    "  --stride N          only every N-th configuration of DATASET\n"
    "  --seed S            GPU: weights, tokens, routing; sim: noise (default 1)\n"
    "  --gpu N             device ordinal (default 0)\n"
    "  --max-cells N       stop after N cells (to test chunking)\n"
    "\n"
    "Exit status: 0 complete, 3 incomplete (run again to resume), 1 error,\n"
    "2 bad usage. Progress goes to stderr (RAMP_PROGRESS=1 when not a terminal).\n";

/* Indices of the configurations named in a comma-separated list. */
static int pick_configs(const char *cmd, const ramp_timing *t, const char *list, int **idx,
                        int *n) {
    char *copy = strdup(list);
    *idx = calloc((size_t)t->nconfigs, sizeof **idx);
    if (!copy || !*idx) {
        free(copy);
        return cli_usage_error(cmd, "out of memory");
    }
    *n = 0;
    int rc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
        ramp_config c;
        ramp_status s = ramp_config_parse(tok, &c);
        if (s) { rc = cli_fail(cmd, s); break; }
        int found = -1;
        for (int i = 0; i < t->nconfigs; i++)
            if (ramp_config_equal(&t->configs[i], &c)) found = i;
        if (found < 0) { rc = cli_usage_error(cmd, "--configs: %s is not in the dataset's space", tok); break; }
        for (int j = 0; j < *n; j++)
            if ((*idx)[j] == found) rc = cli_usage_error(cmd, "--configs: %s given twice", tok);
        if (rc == 0) (*idx)[(*n)++] = found;
    }
    if (rc == 0 && *n == 0) rc = cli_usage_error(cmd, "--configs: no configuration named");
    free(copy);
    return rc;
}

/* Ends a progress line (cli_progress prints only to a terminal or with
 * RAMP_PROGRESS=1). */
static void progress_newline(void) {
    const char *e = getenv("RAMP_PROGRESS");
    if (e && *e ? strcmp(e, "0") != 0 : isatty(STDERR_FILENO)) fputc('\n', stderr);
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

int cmd_bench(int argc, char **argv) {
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"backend", required_argument, 0, 'b'},
        {"max-seconds", required_argument, 0, 'T'}, {"checkpoint", required_argument, 0, 'C'},
        {"repeats", required_argument, 0, 'r'}, {"configs", required_argument, 0, 'c'},
        {"stride", required_argument, 0, 's'}, {"seed", required_argument, 0, 'S'},
        {"gpu", required_argument, 0, 'g'}, {"max-cells", required_argument, 0, 'x'},
        {"kernel", required_argument, 0, 'k'}, {"weights", required_argument, 0, 'w'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *cmd = "bench", *out = NULL, *backend_text = "gpu", *configs = NULL;
    const char *kernel_text = NULL, *weights_text = NULL;
    long stride = 0, repeats = 5, seed = 1, gpu = 0, max_cells = 0;
    double max_seconds = 240, checkpoint = 60;
    /* The command line as given (getopt_long reorders argv), recorded in
     * the dataset. */
    char line[512] = "ramp";
    for (int i = 0; i < argc; i++) {
        size_t n = strlen(line);
        snprintf(line + n, sizeof line - n, " %s", argv[i]);
    }
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (o) {
        case 'o': out = optarg; break;
        case 'b': backend_text = optarg; break;
        case 'T': if (!cli_double(cmd, "--max-seconds", optarg, 0, 1e9, &max_seconds)) return 2; break;
        case 'C': if (!cli_double(cmd, "--checkpoint", optarg, 0, 1e9, &checkpoint)) return 2; break;
        case 'r': if (!cli_int(cmd, "--repeats", optarg, 1, 1000, &repeats)) return 2; break;
        case 'c': configs = optarg; break;
        case 's': if (!cli_int(cmd, "--stride", optarg, 1, 1 << 20, &stride)) return 2; break;
        case 'S': if (!cli_int(cmd, "--seed", optarg, 0, 0x7fffffffL, &seed)) return 2; break;
        case 'g': if (!cli_int(cmd, "--gpu", optarg, 0, 1024, &gpu)) return 2; break;
        case 'x': if (!cli_int(cmd, "--max-cells", optarg, 0, 1L << 40, &max_cells)) return 2; break;
        case 'k': kernel_text = optarg; break;
        case 'w': weights_text = optarg; break;
        case 'h': fputs(BENCH_HELP, stdout); return 0;
        default: return cli_usage_error(cmd, "unknown option");
        }
    }
    if (optind != argc - 1 || !out) return cli_usage_error(cmd, "give one input dataset and -o OUT");
    if (configs && stride) return cli_usage_error(cmd, "give --configs or --stride, not both");
    ramp_bench_options opt;
    ramp_bench_defaults(&opt);
    ramp_status s = ramp_bench_backend_parse(backend_text, &opt.backend);
    if (s) return cli_usage_error(cmd, "--backend '%s': expected gpu or sim", backend_text);
    ramp_kernel_version kernel = RAMP_KERNEL_V1;
    if (kernel_text && ramp_kernel_version_parse(kernel_text, &kernel))
        return cli_usage_error(cmd, "--kernel '%s': expected v1 or v2", kernel_text);
    int units = 0;
    if (weights_text && strcmp(weights_text, "rows") && strcmp(weights_text, "units"))
        return cli_usage_error(cmd, "--weights '%s': expected rows or units", weights_text);
    if (weights_text) units = !strcmp(weights_text, "units");
    opt.max_seconds = max_seconds;
    opt.checkpoint_seconds = checkpoint;
    opt.repeats = (int)repeats;
    opt.seed = (uint64_t)seed;
    opt.sim.seed = (uint64_t)seed;
    opt.gpu = (int)gpu;
    opt.max_cells = max_cells;

    opt.command = line;

    ramp_timing *in = NULL, *t = NULL;
    if ((s = ramp_timing_read(argv[optind], 1, &in))) return cli_fail(cmd, s);
    int rc = 0;
    if (configs || stride > 1) {
        int *idx = NULL, n = 0;
        if (configs) rc = pick_configs(cmd, in, configs, &idx, &n);
        else if (!(idx = calloc((size_t)in->nconfigs, sizeof *idx))) rc = cli_usage_error(cmd, "out of memory");
        else
            for (int i = 0; i < in->nconfigs; i += (int)stride) idx[n++] = i;
        if (rc == 0 && (s = ramp_timing_select_configs(in, idx, n, &t))) rc = cli_fail(cmd, s);
        free(idx);
        ramp_timing_free(in);
    } else {
        t = in;
    }
    if (rc == 0 && kernel_text && t->kernel != (int)kernel) {
        /* Another kernel's loads: keep the configurations this one runs. */
        const char *from = ramp_kernel_version_name((ramp_kernel_version)t->kernel);
        int64_t filled = 0;
        for (int64_t i = 0; i < t->nloads * t->nconfigs; i++) filled += !isnan(t->times_us[i]);
        ramp_timing *k = NULL;
        int dropped = 0;
        if (filled > 0)
            rc = cli_usage_error(cmd, "--kernel %s: %s holds %lld times of kernel %s; one dataset "
                                 "holds one kernel's times (start from loads with no times, e.g. "
                                 "`ramp dataset build --kernel %s`)", kernel_text, argv[optind],
                                 (long long)filled, from, kernel_text);
        else if ((s = ramp_timing_select_kernel(t, kernel, &k, &dropped)))
            rc = cli_fail(cmd, s);
        else if (configs && dropped > 0)
            rc = cli_usage_error(cmd, "--kernel %s: %d of the configurations named in --configs "
                                 "are not ones kernel %s runs (v2: plain launch, no .grp, no "
                                 ".k2, FP8)", kernel_text, dropped, kernel_text);
        else
            fprintf(stderr, "kernel %s: %d of %s's %d configurations (kernel %s) kept, %d left out "
                    "(ones kernel %s does not run)\n", kernel_text, k->nconfigs, argv[optind],
                    t->nconfigs, from, dropped, kernel_text);
        ramp_timing_free(t);
        t = k;
    }
    if (rc == 0 && weights_text && t->weight_units != units) {
        int64_t filled = 0;
        for (int64_t i = 0; i < t->nloads * t->nconfigs; i++) filled += !isnan(t->times_us[i]);
        if (filled > 0)
            rc = cli_usage_error(cmd, "--weights %s: %s holds %lld times of %s weights; one "
                                 "dataset holds one weight layout's times (start from loads with "
                                 "no times)", weights_text, argv[optind], (long long)filled,
                                 t->weight_units ? "stage-unit" : "row-major");
        else if (units && t->kernel != RAMP_KERNEL_V2)
            rc = cli_usage_error(cmd, "--weights units: stage units are read by kernel v2, and "
                                 "%s is for kernel %s (add --kernel v2)", argv[optind],
                                 ramp_kernel_version_name((ramp_kernel_version)t->kernel));
        else
            t->weight_units = units;
    }
    int64_t taken = -1;
    if (rc == 0 && (s = ramp_bench_resume(t, out, &taken))) rc = cli_fail(cmd, s);
    if (rc == 0) {
        if (taken >= 0)
            fprintf(stderr, "resuming from %s: %lld of %lld times filled\n", out, (long long)taken,
                    (long long)(t->nloads * t->nconfigs));
        fprintf(stderr, "timing %lld loads x %d configurations (%s backend, kernel %s%s)\n",
                (long long)t->nloads, t->nconfigs, ramp_bench_backend_name(opt.backend),
                ramp_kernel_version_name((ramp_kernel_version)t->kernel),
                t->weight_units ? ", weights in stage units" : "");
        opt.progress = cli_progress;
        opt.progress_user = (void *)"timing";
        ramp_bench_report rep;
        s = ramp_bench_run(t, out, &opt, &rep);
        if (s) {
            progress_newline();
            rc = cli_fail(cmd, s);
        } else {
            if (rep.complete) cli_progress_done((void *)"timing");
            else progress_newline();
            /* Spread of the times, a first look at what was measured. */
            int64_t n = 0;
            float *v = malloc((size_t)(rep.cells ? rep.cells : 1) * sizeof *v);
            for (int64_t i = 0; v && i < rep.cells; i++)
                if (!isnan(t->times_us[i])) v[n++] = t->times_us[i];
            if (v && n > 0) {
                qsort(v, (size_t)n, sizeof *v, cmp_float);
                fprintf(stderr, "times over %lld cells: min %.1f us, median %.1f us, max %.1f us (%s)\n",
                        (long long)n, v[0], v[n / 2], v[n - 1], t->device);
            }
            free(v);
            fprintf(stderr, "measured %lld cells in %.1f s; %lld of %lld filled; wrote %s\n",
                    (long long)rep.measured, rep.seconds, (long long)rep.filled,
                    (long long)rep.cells, out);
            if (!rep.complete) {
                fprintf(stderr, "incomplete (%s): run the same command again to resume\n",
                        rep.stopped == RAMP_BENCH_MAX_CELLS ? "--max-cells reached" : "deadline");
                rc = CLI_EXIT_INCOMPLETE;
            }
        }
    }
    ramp_timing_free(t);
    return rc;
}
