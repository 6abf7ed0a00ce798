/*
 * cmd_dataset.c - `ramp dataset build|simulate|info`: timing datasets, the
 * measured (or, until GPU numbers exist, simulated) time of every
 * configuration on every per-GPU load.
 */
#include "cli.h"

#include <time.h>

static const char DATASET_HELP[] =
    "usage: ramp dataset <build|simulate|info|seal> [options]\n"
    "\n"
    "  build     per-GPU loads of traces under a layout -> dataset (times empty)\n"
    "  simulate  fill a dataset's times with the analytic stand-in (NOT a\n"
    "            measurement; the file says device \"simulated\")\n"
    "  info      print a dataset's metadata, size and how many times are filled\n"
    "  seal      rewrite a dataset unchanged, with its sha256 checksum\n";

static const char BUILD_HELP[] =
    "usage: ramp dataset build --model NAME --layout L -o OUT TRACE...\n"
    "                          [--stride N] [--min-tokens N] [--max-batches N]\n"
    "                          [--balanced-on FILE | --balanced-on-others] [--bf16]\n"
    "                          [--kernel v1|v2]\n"
    "\n"
    "Takes every N-th record of each trace with at least min-tokens tokens (at\n"
    "most max-batches per trace; without --stride, N spreads them over the\n"
    "whole trace), splits it into per-GPU loads under the layout, and writes a\n"
    "dataset over the whole configuration space with empty times. Placement of\n"
    "experts on GPUs (EP layouts; recorded in the dataset's \"placement\"):\n"
    "  (default)             contiguous blocks, as vLLM\n"
    "  --balanced-on FILE    balanced per layer on FILE's records (EPLB-style)\n"
    "  --balanced-on-others  each trace balanced per layer on the records of the\n"
    "                        other traces given, \"uniform\" ones excluded (the\n"
    "                        paper's Table 8: each domain placed on the expected\n"
    "                        load of the other domains)\n"
    "The same traces and options with and without balancing give the same\n"
    "batches (same ids and tokens): `ramp eval` pairs them for Table 8.\n"
    "--kernel v2: the space of the Hopper kernel v2 only (plain launch, no\n"
    "grouped order; split-K over a cluster of two, wide and two-phase tiles:\n"
    "Qwen3-30B EP8 97 configurations, DeepSeek-V3 EP8 154; `ramp configs\n"
    "--kernel v2` lists them),\n"
    "recorded in the dataset (\"kernel\"), so that `ramp bench` times v2 and every\n"
    "cell is a measured time. Default v1, the whole space.\n";

static int dataset_build(int argc, char **argv) {
    static const struct option opts[] = {
        {"model", required_argument, 0, 'm'}, {"layout", required_argument, 0, 'l'},
        {"output", required_argument, 0, 'o'}, {"stride", required_argument, 0, 's'},
        {"min-tokens", required_argument, 0, 'n'}, {"max-batches", required_argument, 0, 'x'},
        {"balanced-on", required_argument, 0, 'B'}, {"balanced-on-others", no_argument, 0, 'O'},
        {"bf16", no_argument, 0, 'b'}, {"kernel", required_argument, 0, 'k'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *cmd = "dataset build", *model = NULL, *layout_text = NULL, *out = NULL, *bal_path = NULL;
    ramp_kernel_version kernel = RAMP_KERNEL_V1;
    long stride = 0, min_tokens = 0, max_batches = 0;
    int bf16 = 0, others = 0, o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (o) {
        case 'm': model = optarg; break;
        case 'l': layout_text = optarg; break;
        case 'o': out = optarg; break;
        case 's': if (!cli_int(cmd, "--stride", optarg, 1, 1 << 30, &stride)) return 2; break;
        case 'n': if (!cli_int(cmd, "--min-tokens", optarg, 0, 1 << 30, &min_tokens)) return 2; break;
        case 'x': if (!cli_int(cmd, "--max-batches", optarg, 0, 1L << 40, &max_batches)) return 2; break;
        case 'B': bal_path = optarg; break;
        case 'O': others = 1; break;
        case 'b': bf16 = 1; break;
        case 'k':
            if (ramp_kernel_version_parse(optarg, &kernel))
                return cli_usage_error(cmd, "--kernel '%s': expected v1 or v2", optarg);
            break;
        case 'h': fputs(BUILD_HELP, stdout); return 0;
        default: return cli_usage_error(cmd, "unknown option");
        }
    }
    if (!model || !layout_text || !out) return cli_usage_error(cmd, "--model, --layout and -o are required");
    if (optind >= argc) return cli_usage_error(cmd, "give one or more trace files");
    if (bal_path && others) return cli_usage_error(cmd, "give --balanced-on or --balanced-on-others, not both");
    if (others && argc - optind < 2)
        return cli_usage_error(cmd, "--balanced-on-others needs two or more traces (each is placed on the others)");
    ramp_model m;
    ramp_layout L;
    ramp_geometry g;
    ramp_status s;
    if ((s = ramp_model_lookup(model, &m)) || (s = ramp_layout_parse(layout_text, &L)) ||
        (s = ramp_geometry_for(&m, L, &g)))
        return cli_fail(cmd, s);
    g.bf16 = bf16;
    if ((bal_path || others) && L.kind == RAMP_TP)
        return cli_usage_error(cmd, "%s: layout %s holds every expert on every GPU, there is no placement to balance",
                               bal_path ? "--balanced-on" : "--balanced-on-others", layout_text);
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    ramp_timing *t = NULL;
    if ((s = ramp_timing_create_space_for(kernel, &m, layout_text, &g, &lim, &t))) return cli_fail(cmd, s);
    const char *bal_base = bal_path ? strrchr(bal_path, '/') : NULL;
    bal_base = bal_base ? bal_base + 1 : bal_path;
    if (others) snprintf(t->placement, sizeof t->placement, "balanced:others");
    else if (bal_path) snprintf(t->placement, sizeof t->placement, "balanced:%.54s", bal_base);
    else snprintf(t->placement, sizeof t->placement, "contiguous");
    int ntr = argc - optind, rc = 0;
    ramp_trace *bal = NULL, **trs = calloc((size_t)ntr, sizeof *trs);
    if (!trs) rc = cli_usage_error(cmd, "out of memory");
    if (rc == 0 && bal_path && (s = ramp_trace_read(bal_path, &bal))) rc = cli_fail(cmd, s);
    if (rc == 0 && bal && bal->experts != m.experts)
        rc = cli_usage_error(cmd, "--balanced-on %s has %d experts, %s has %d", bal_path, bal->experts, m.name,
                             m.experts);
    /* Every trace first: --balanced-on-others places each on the others. */
    for (int f = 0; f < ntr && rc == 0; f++) {
        if ((s = ramp_trace_read(argv[optind + f], &trs[f]))) { rc = cli_fail(cmd, s); break; }
        if (trs[f]->experts != m.experts)
            rc = cli_usage_error(cmd, "%s has %d experts, %s has %d", argv[optind + f], trs[f]->experts, m.name,
                                 m.experts);
    }
    const ramp_trace **on = others && rc == 0 ? calloc((size_t)ntr, sizeof *on) : NULL;
    if (others && rc == 0 && !on) rc = cli_usage_error(cmd, "out of memory");
    for (int f = 0; f < ntr && rc == 0; f++) {
        ramp_trace *tr = trs[f];
        int layers = 1;
        for (int64_t r = 0; r < tr->records; r++)
            if (tr->layer[r] + 1 > layers) layers = tr->layer[r] + 1;
        ramp_placement **pl = NULL, *contig = NULL;
        int npl = 1, balanced = bal || others;
        if (bal) { s = ramp_placements_balanced_on(bal, L, layers, &pl); npl = layers; }
        else if (others) {
            int non = 0;
            for (int k = 0; k < ntr; k++)
                if (k != f && strcmp(trs[k]->domain, "uniform") != 0) on[non++] = trs[k];
            if (non == 0) {
                rc = cli_usage_error(cmd, "--balanced-on-others: %s has no other non-uniform trace to be placed on",
                                     argv[optind + f]);
                break;
            }
            s = ramp_placements_balanced_on_traces(on, non, L, layers, &pl);
            npl = layers;
        } else { s = ramp_placement_contiguous(m.experts, L, &contig); pl = &contig; }
        /* With --max-batches and no --stride, spread the picks over the trace. */
        long st = stride;
        if (st == 0) st = max_batches > 0 && tr->records > max_batches ? tr->records / max_batches : 1;
        if (s == RAMP_OK) s = ramp_timing_add_trace(t, tr, pl, npl, (int)st, (int)min_tokens, max_batches);
        if (s) rc = cli_fail(cmd, s);
        if (balanced && pl) { for (int l = 0; l < npl; l++) ramp_placement_free(pl[l]); free(pl); }
        else ramp_placement_free(contig);
    }
    for (int f = 0; trs && f < ntr; f++) ramp_trace_free(trs[f]);
    free(trs);
    free(on);
    ramp_trace_free(bal);
    if (rc == 0) {
        time_t now = time(NULL);
        strftime(t->date, sizeof t->date, "%Y-%m-%d", gmtime(&now));
        snprintf(t->device, sizeof t->device, "none (times not measured yet)");
        if ((s = ramp_timing_write(t, out))) rc = cli_fail(cmd, s);
        else fprintf(stderr, "wrote %lld loads x %d configurations (kernel %s) to %s\n", (long long)t->nloads,
                     t->nconfigs, ramp_kernel_version_name(kernel), out);
    }
    ramp_timing_free(t);
    return rc;
}

static const char SIM_HELP[] =
    "usage: ramp dataset simulate IN -o OUT [--seed S] [--noise SD]\n"
    "\n"
    "Fills every time of a dataset with the analytic stand-in for the H200\n"
    "(src/simulate.c). For running the offline pipeline before measurements\n"
    "exist; never report a speed from it.\n";

static int dataset_simulate(int argc, char **argv) {
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"seed", required_argument, 0, 'S'},
        {"noise", required_argument, 0, 'n'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *cmd = "dataset simulate", *out = NULL;
    long seed = 1;
    double noise = -1;
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (o) {
        case 'o': out = optarg; break;
        case 'S': if (!cli_int(cmd, "--seed", optarg, 0, 0x7fffffffL, &seed)) return 2; break;
        case 'n': if (!cli_double(cmd, "--noise", optarg, 0, 1, &noise)) return 2; break;
        case 'h': fputs(SIM_HELP, stdout); return 0;
        default: return cli_usage_error(cmd, "unknown option");
        }
    }
    if (optind != argc - 1 || !out) return cli_usage_error(cmd, "give one input dataset and -o OUT");
    ramp_timing *t = NULL;
    ramp_status s = ramp_timing_read(argv[optind], 1, &t);
    if (s) return cli_fail(cmd, s);
    ramp_sim_params sp;
    ramp_sim_defaults(&sp);
    sp.seed = (uint64_t)seed;
    if (noise >= 0) sp.noise = noise;
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    if (!(s = ramp_sim_fill(&sp, &lim, t))) s = ramp_timing_write(t, out);
    ramp_timing_free(t);
    return s ? cli_fail(cmd, s) : 0;
}

static int dataset_info(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        puts("usage: ramp dataset info FILE...\n\nPrints each dataset's metadata, how many times are filled, and how much of\nits kernel's configuration space (today's, on the H200's limits) it times:\na plan fit on it can choose only those.");
        return argc < 2 ? 2 : 0;
    }
    for (int f = 1; f < argc; f++) {
        ramp_timing *t = NULL;
        ramp_status s = ramp_timing_read(argv[f], 1, &t);
        if (s) return cli_fail("dataset info", s);
        int64_t filled = 0, batches = 0;
        for (int64_t i = 0; i < t->nloads * t->nconfigs; i++) filled += t->times_us[i] == t->times_us[i];
        for (int64_t i = 0; i < t->nloads; i++) batches += i == 0 || t->batch[i] != t->batch[i - 1];
        printf("%s: %s %s, device %s, date %s\n  %lld loads in %lld batches, %d configurations, %lld of %lld times filled\n  domains:",
               argv[f], t->model, t->layout, t->device, t->date, (long long)t->nloads, (long long)batches,
               t->nconfigs, (long long)filled, (long long)(t->nloads * t->nconfigs));
        for (int d = 0; d < t->ndomains; d++) printf(" %s", t->domains[d]);
        printf("\n  placement: %s\n", t->placement[0] ? t->placement : "not recorded (contiguous)");
        printf("  kernel: %s\n", ramp_kernel_version_name((ramp_kernel_version)t->kernel));
        printf("  weights: %s\n", t->weight_units ? "units (stage units)" : "rows (row-major)");
        printf("  precision: %s\n", t->geom.bf16 ? "bf16" : "fp8 (128x128 block scales)");
        printf("  command: %s\n", t->command[0] ? t->command : "(none recorded)");
        printf("  checksum: %s\n", t->checksum ? "sha256, verified" : "none (written before checksums)");
        cli_space_coverage(t, stdout, 0);
        ramp_timing_free(t);
    }
    return 0;
}

/* Reads and rewrites a dataset: every write carries the sha256 checksum,
 * so this adds one to files written before checksums existed (the values,
 * metadata and provenance are kept as they are). */
static int dataset_seal(int argc, char **argv) {
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *cmd = "dataset seal", *out = NULL;
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (o) {
        case 'o': out = optarg; break;
        case 'h':
            puts("usage: ramp dataset seal IN -o OUT\n\nRewrites a timing dataset unchanged, with the sha256 checksum\n"
                 "that every write now carries (docs/formats.md). OUT may be IN.");
            return 0;
        default: return cli_usage_error(cmd, "unknown option");
        }
    }
    if (optind != argc - 1 || !out) return cli_usage_error(cmd, "give one input dataset and -o OUT");
    ramp_timing *t = NULL;
    ramp_status s = ramp_timing_read(argv[optind], 1, &t);
    if (!s) s = ramp_timing_write(t, out);
    ramp_timing_free(t);
    if (s) return cli_fail(cmd, s);
    fprintf(stderr, "wrote %s\n", out);
    return 0;
}

int cmd_dataset(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(DATASET_HELP, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "build")) return dataset_build(argc - 1, argv + 1);
    if (!strcmp(argv[1], "simulate")) return dataset_simulate(argc - 1, argv + 1);
    if (!strcmp(argv[1], "info")) return dataset_info(argc - 1, argv + 1);
    if (!strcmp(argv[1], "seal")) return dataset_seal(argc - 1, argv + 1);
    return cli_usage_error("dataset", "unknown subcommand '%s'", argv[1]);
}
