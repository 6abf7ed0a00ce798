/*
 * cmd_trace.c - `ramp trace gen|stats|import-sglang|info` and `ramp loads`.
 */
#include "cli.h"

static const char TRACE_HELP[] =
    "usage: ramp trace <gen|stats|import-sglang|info> [options]\n"
    "\n"
    "  gen            generate serving-traffic routing (seeded, deterministic)\n"
    "  stats          batch sizes and per-batch imbalance under a layout\n"
    "  import-sglang  convert SGLang's expert-distribution JSON to a trace\n"
    "  info           print a trace's metadata and size\n"
    "\n"
    "Traces are safetensors files (docs/formats.md); numpy reads them without us.\n";

static const char GEN_HELP[] =
    "usage: ramp trace gen --model NAME -o FILE [options]\n"
    "\n"
    "  --model NAME          built-in model (ramp models), or a custom geometry:\n"
    "  --experts E --topk K --inter H --hidden D --layers L\n"
    "  --domain D            chat, math, code, knowledge, mixed, uniform (default chat)\n"
    "  --vllm-sizes N        instead of traffic: N batches of each of vLLM's 18 tuned\n"
    "                        batch sizes (1-4096) with uniformly random routing\n"
    "  --concurrency N       hold N requests running (default 64)\n"
    "  --rate R              open loop: R requests/s arrive at random instead\n"
    "  --budget T            max tokens per forward pass (default 2048)\n"
    "  --steps N             forward passes to record (default 256)\n"
    "  --warmup N            passes simulated before recording\n"
    "  --layers N            MoE layers per pass to record (default: 4)\n"
    "  --seed S              RNG seed (default 1)\n"
    "  --ids                 also store each token's top-k expert ids\n"
    "  --append              append to FILE if it exists (same model)\n"
    "  -o, --output FILE     where to write (atomically)\n";

static int trace_gen(int argc, char **argv) {
    static const struct option opts[] = {
        {"model", required_argument, 0, 'm'}, {"experts", required_argument, 0, 'E'},
        {"topk", required_argument, 0, 'k'}, {"inter", required_argument, 0, 'H'},
        {"hidden", required_argument, 0, 'D'}, {"layers", required_argument, 0, 'L'},
        {"domain", required_argument, 0, 'd'}, {"concurrency", required_argument, 0, 'c'},
        {"rate", required_argument, 0, 'r'}, {"budget", required_argument, 0, 'b'},
        {"steps", required_argument, 0, 's'}, {"warmup", required_argument, 0, 'w'},
        {"seed", required_argument, 0, 'S'}, {"ids", no_argument, 0, 'i'},
        {"append", no_argument, 0, 'a'}, {"output", required_argument, 0, 'o'},
        {"vllm-sizes", required_argument, 0, 'V'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *cmd = "trace gen";
    cli_model_opts mo = {0};
    const char *out = NULL, *domain_text = "chat";
    long conc = -1, budget = -1, steps = -1, warm = -1, layers = -1, seed = 1, vllm = 0;
    double rate = -1;
    int ids = 0, append = 0, o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (o) {
        case 'm': mo.name = optarg; break;
        case 'E': if (!cli_int(cmd, "--experts", optarg, 1, 4096, &mo.experts)) return 2; break;
        case 'k': if (!cli_int(cmd, "--topk", optarg, 1, 4096, &mo.topk)) return 2; break;
        case 'H': if (!cli_int(cmd, "--inter", optarg, 1, 1 << 20, &mo.inter)) return 2; break;
        case 'D': if (!cli_int(cmd, "--hidden", optarg, 1, 1 << 20, &mo.hidden)) return 2; break;
        case 'L': if (!cli_int(cmd, "--layers", optarg, 1, 1024, &layers)) return 2; break;
        case 'd': domain_text = optarg; break;
        case 'c': if (!cli_int(cmd, "--concurrency", optarg, 1, 1 << 20, &conc)) return 2; break;
        case 'r': if (!cli_double(cmd, "--rate", optarg, 1e-6, 1e9, &rate)) return 2; break;
        case 'b': if (!cli_int(cmd, "--budget", optarg, 1, 1 << 24, &budget)) return 2; break;
        case 's': if (!cli_int(cmd, "--steps", optarg, 1, 1 << 24, &steps)) return 2; break;
        case 'w': if (!cli_int(cmd, "--warmup", optarg, 0, 1 << 24, &warm)) return 2; break;
        case 'S': if (!cli_int(cmd, "--seed", optarg, 0, 0x7fffffffL, &seed)) return 2; break;
        case 'i': ids = 1; break;
        case 'V': if (!cli_int(cmd, "--vllm-sizes", optarg, 1, 1000, &vllm)) return 2; break;
        case 'a': append = 1; break;
        case 'o': out = optarg; break;
        case 'h': fputs(GEN_HELP, stdout); return 0;
        default: return cli_usage_error(cmd, "unknown option");
        }
    }
    if (optind < argc) return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!out) return cli_usage_error(cmd, "-o FILE is required");
    if (conc > 0 && rate > 0) return cli_usage_error(cmd, "give --concurrency or --rate, not both");
    ramp_model m;
    int rc = cli_model_resolve(cmd, &mo, &m);
    if (rc) return rc;
    if (mo.experts && layers > m.layers) m.layers = (int)layers; /* custom: as many as recorded */
    ramp_traffic_params p;
    ramp_traffic_defaults(&p, &m);
    ramp_status s = ramp_domain_parse(domain_text, &p.domain);
    if (s) return cli_fail(cmd, s);
    if (rate > 0) { p.arrival = RAMP_ARRIVAL_RATE; p.rate = rate; }
    if (conc > 0) { p.arrival = RAMP_ARRIVAL_CONCURRENCY; p.concurrency = (int)conc; }
    if (budget > 0) p.token_budget = (int)budget;
    if (steps > 0) p.steps = (int)steps;
    if (warm >= 0) p.warmup_steps = (int)warm;
    if (layers > 0) p.layers = (int)layers;
    p.seed = (uint64_t)seed;
    p.record_ids = ids;
    ramp_trace *t = NULL;
    if (vllm > 0) {
        s = ramp_trace_uniform_batches(&m, ramp_vllm_batch_sizes, RAMP_VLLM_SIZES, (int)vllm,
                                       (uint64_t)seed, &t);
    } else {
        s = ramp_traffic_generate(&p, cli_progress, (void *)"generating traffic", &t);
        cli_progress_done((void *)"generating traffic");
    }
    if (s) return cli_fail(cmd, s);
    s = append ? ramp_trace_append_file(out, t) : ramp_trace_write(t, out);
    int64_t n = t->records;
    ramp_trace_free(t);
    if (s) return cli_fail(cmd, s);
    fprintf(stderr, "wrote %lld records to %s\n", (long long)n, out);
    return 0;
}

static const char STATS_HELP[] =
    "usage: ramp trace stats FILE... [--layout EP8] [--balanced-on FILE]\n"
    "                        [--min-tokens 128] [--max-tokens N] [--csv]\n"
    "\n"
    "Batch-size distribution, and the paper's imbalance: the median over\n"
    "records with min-tokens <= tokens <= max-tokens of the most loaded GPU's\n"
    "tokens over the mean GPU's, under the layout (contiguous placement, or\n"
    "balanced per layer on the expected load of --balanced-on's records).\n"
    "--layout may be repeated.\n";

static int trace_stats(int argc, char **argv) {
    static const struct option opts[] = {
        {"layout", required_argument, 0, 'l'}, {"balanced-on", required_argument, 0, 'B'},
        {"min-tokens", required_argument, 0, 'n'}, {"max-tokens", required_argument, 0, 'x'},
        {"csv", no_argument, 0, 'c'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *cmd = "trace stats";
    const char *layouts[16], *balance_on = NULL;
    int nlayouts = 0, csv = 0, o;
    long min_tokens = 128, max_tokens = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (o) {
        case 'l':
            if (nlayouts == 16) return cli_usage_error(cmd, "at most 16 --layout");
            layouts[nlayouts++] = optarg;
            break;
        case 'B': balance_on = optarg; break;
        case 'n': if (!cli_int(cmd, "--min-tokens", optarg, 0, 1 << 30, &min_tokens)) return 2; break;
        case 'x': if (!cli_int(cmd, "--max-tokens", optarg, 0, 1 << 30, &max_tokens)) return 2; break;
        case 'c': csv = 1; break;
        case 'h': fputs(STATS_HELP, stdout); return 0;
        default: return cli_usage_error(cmd, "unknown option");
        }
    }
    if (optind >= argc) return cli_usage_error(cmd, "give one or more trace files");
    if (nlayouts == 0) layouts[nlayouts++] = "EP8";
    ramp_trace *bal = NULL;
    ramp_status s;
    if (balance_on && (s = ramp_trace_read(balance_on, &bal))) return cli_fail(cmd, s);
    if (csv) puts("file,model,domain,records,tokens_mean,tokens_p50,tokens_p90,tokens_max,frac_ge128,layout,placement,imbalance_median,imbalance_records");
    int rc = 0;
    for (int f = optind; f < argc && rc == 0; f++) {
        ramp_trace *t = NULL;
        if ((s = ramp_trace_read(argv[f], &t))) { rc = cli_fail(cmd, s); break; }
        if (bal && bal->experts != t->experts) {
            rc = cli_usage_error(cmd, "%s has %d experts, --balanced-on %s has %d", argv[f],
                                 t->experts, balance_on, bal->experts);
            ramp_trace_free(t);
            break;
        }
        if (!csv) printf("%s: %s, domain %s, %lld records, E = %d, k = %d\n", argv[f], t->model,
                         t->domain, (long long)t->records, t->experts, t->topk);
        for (int li = 0; li < nlayouts && rc == 0; li++) {
            ramp_layout L;
            if ((s = ramp_layout_parse(layouts[li], &L))) { rc = cli_fail(cmd, s); break; }
            int layers = 1;
            for (int64_t r = 0; r < t->records; r++)
                if (t->layer[r] + 1 > layers) layers = t->layer[r] + 1;
            ramp_placement **pl = NULL, *contig = NULL;
            int npl = 1;
            if (bal) {
                s = ramp_placements_balanced_on(bal, L, layers, &pl);
                npl = layers;
            } else {
                s = ramp_placement_contiguous(t->experts, L, &contig);
                pl = &contig;
            }
            ramp_trace_stats st;
            double median = 0;
            int64_t nrec = 0;
            if (s == RAMP_OK) s = ramp_trace_stats_compute(t, pl[0], (int)min_tokens, (int)max_tokens, &st);
            if (s == RAMP_OK) s = ramp_imbalance_median(t, pl, npl, (int)min_tokens, (int)max_tokens, &median, &nrec);
            if (s != RAMP_OK) rc = cli_fail(cmd, s);
            else if (csv)
                printf("%s,%s,%s,%lld,%.2f,%d,%d,%d,%.4f,%s,%s,%.4f,%lld\n", argv[f], t->model, t->domain,
                       (long long)st.records, st.tokens_mean, st.tokens_p50, st.tokens_p90, st.tokens_max,
                       st.frac_ge128, layouts[li], bal ? "balanced" : "contiguous", median, (long long)nrec);
            else {
                if (li == 0) {
                    printf("  tokens per batch: mean %.1f, p50 %d, p90 %d, p99 %d, max %d; %.1f%% of batches >= 128\n",
                           st.tokens_mean, st.tokens_p50, st.tokens_p90, st.tokens_p99, st.tokens_max,
                           100.0 * st.frac_ge128);
                    printf("  histogram (tokens: batches):");
                    for (int b = 0; b < 16; b++)
                        if (st.histogram[b]) printf(" %s%d:%lld", b == 15 ? ">=" : "", b == 0 ? 0 : 1 << (b - 1),
                                                    (long long)st.histogram[b]);
                    printf("\n");
                }
                char hi[32] = "inf";
                if (max_tokens > 0) snprintf(hi, sizeof hi, "%ld", max_tokens);
                printf("  %-5s %-10s median most-loaded GPU / mean = %.3f over %lld records with tokens in [%ld, %s]\n",
                       layouts[li], bal ? "balanced" : "contiguous", median, (long long)nrec, min_tokens, hi);
            }
            if (bal) {
                for (int l = 0; l < layers; l++) ramp_placement_free(pl[l]);
                free(pl);
            } else ramp_placement_free(contig);
        }
        ramp_trace_free(t);
    }
    ramp_trace_free(bal);
    return rc;
}

static const char IMPORT_HELP[] =
    "usage: ramp trace import-sglang FILE.json --model NAME -o OUT [--domain D]\n"
    "\n"
    "Converts SGLang's expert-distribution recorder output ({\"logical_count\":\n"
    "[layers][experts]}, also DeepSeek EPLB's `weight` input) to a trace with one\n"
    "aggregate record per MoE layer (dense layers, all zero, are skipped).\n";

static int trace_import(int argc, char **argv) {
    static const struct option opts[] = {
        {"model", required_argument, 0, 'm'}, {"domain", required_argument, 0, 'd'},
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *cmd = "trace import-sglang", *model = NULL, *domain = "imported", *out = NULL;
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (o) {
        case 'm': model = optarg; break;
        case 'd': domain = optarg; break;
        case 'o': out = optarg; break;
        case 'h': fputs(IMPORT_HELP, stdout); return 0;
        default: return cli_usage_error(cmd, "unknown option");
        }
    }
    if (optind != argc - 1) return cli_usage_error(cmd, "give exactly one JSON file");
    if (!model || !out) return cli_usage_error(cmd, "--model and -o are required");
    ramp_model m;
    ramp_status s = ramp_model_lookup(model, &m);
    if (s) return cli_fail(cmd, s);
    ramp_trace *t = NULL;
    if ((s = ramp_trace_import_sglang(argv[optind], &m, domain, &t))) return cli_fail(cmd, s);
    s = ramp_trace_write(t, out);
    int64_t n = t->records;
    ramp_trace_free(t);
    if (s) return cli_fail(cmd, s);
    fprintf(stderr, "wrote %lld layer records to %s\n", (long long)n, out);
    return 0;
}

static int trace_info(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        puts("usage: ramp trace info FILE...\n\nPrints each trace's metadata and size.");
        return argc < 2 ? 2 : 0;
    }
    for (int f = 1; f < argc; f++) {
        ramp_trace *t = NULL;
        ramp_status s = ramp_trace_read(argv[f], &t);
        if (s) return cli_fail("trace info", s);
        printf("%s: model %s, domain %s, source %s, E = %d, k = %d, %lld records%s\n", argv[f], t->model,
               t->domain, t->source, t->experts, t->topk, (long long)t->records,
               t->topk_ids ? ", with top-k ids" : "");
        ramp_trace_free(t);
    }
    return 0;
}

int cmd_trace(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(TRACE_HELP, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "gen")) return trace_gen(argc - 1, argv + 1);
    if (!strcmp(argv[1], "stats")) return trace_stats(argc - 1, argv + 1);
    if (!strcmp(argv[1], "import-sglang")) return trace_import(argc - 1, argv + 1);
    if (!strcmp(argv[1], "info")) return trace_info(argc - 1, argv + 1);
    return cli_usage_error("trace", "unknown subcommand '%s'", argv[1]);
}

static const char LOADS_HELP[] =
    "usage: ramp loads FILE --layout L [--record N] [--csv]\n"
    "\n"
    "Prints each GPU's tokens per local expert for one record of a trace\n"
    "(contiguous placement), with each GPU's total and the imbalance.\n";

int cmd_loads(int argc, char **argv) {
    static const struct option opts[] = {
        {"layout", required_argument, 0, 'l'}, {"record", required_argument, 0, 'r'},
        {"csv", no_argument, 0, 'c'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *cmd = "loads", *layout_text = NULL;
    long record = 0;
    int csv = 0, o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (o) {
        case 'l': layout_text = optarg; break;
        case 'r': if (!cli_int(cmd, "--record", optarg, 0, 1L << 40, &record)) return 2; break;
        case 'c': csv = 1; break;
        case 'h': fputs(LOADS_HELP, stdout); return 0;
        default: return cli_usage_error(cmd, "unknown option");
        }
    }
    if (optind != argc - 1) return cli_usage_error(cmd, "give exactly one trace file");
    if (!layout_text) return cli_usage_error(cmd, "--layout is required");
    ramp_layout L;
    ramp_status s = ramp_layout_parse(layout_text, &L);
    if (s) return cli_fail(cmd, s);
    ramp_trace *t = NULL;
    if ((s = ramp_trace_read(argv[optind], &t))) return cli_fail(cmd, s);
    if (record >= t->records) {
        int64_t n = t->records;
        ramp_trace_free(t);
        return cli_usage_error(cmd, "--record %ld: %s has %lld records", record, argv[optind], (long long)n);
    }
    ramp_placement *p = NULL;
    if ((s = ramp_placement_contiguous(t->experts, L, &p))) {
        ramp_trace_free(t);
        return cli_fail(cmd, s);
    }
    int32_t *loads = calloc((size_t)p->gpus * (size_t)p->max_local, sizeof *loads);
    const int32_t *counts = t->counts + record * t->experts;
    if (!loads || (s = ramp_gpu_loads(p, counts, loads))) {
        free(loads);
        ramp_placement_free(p);
        ramp_trace_free(t);
        return loads ? cli_fail(cmd, s) : cli_usage_error(cmd, "out of memory");
    }
    if (csv) puts("gpu,local_expert,expert,tokens");
    else printf("record %ld: step %d, layer %d, %d tokens; imbalance %.3f\n", record, t->step[record],
                t->layer[record], t->tokens[record], ramp_imbalance(p, counts));
    for (int g = 0; g < p->gpus; g++) {
        long total = 0;
        int n = ramp_placement_local_count(p, g);
        if (!csv) printf("GPU %2d:", g);
        for (int j = 0; j < n; j++) {
            int32_t v = loads[(size_t)g * p->max_local + j];
            total += v;
            if (csv) printf("%d,%d,%d,%d\n", g, j, p->members[p->first[g] + j], v);
            else printf(" %d", v);
        }
        if (!csv) printf("  (total %ld)\n", total);
    }
    free(loads);
    ramp_placement_free(p);
    ramp_trace_free(t);
    return 0;
}
