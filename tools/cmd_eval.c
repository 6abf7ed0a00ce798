/*
 * cmd_eval.c - `ramp fit` (cost model + menu -> plan JSON) and `ramp eval`
 * (held-out evaluation of every policy: the paper's Tables 3, 4, 5, 8, 9
 * and 11 and the transfer, CSV and SVG plots).
 */
#include "cli.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

/* --wave-fit and --intercept (ramp fit and ramp eval). */
static int parse_fit_flag(const char *cmd, int o, const char *text, ramp_costmodel_fit_options *fo) {
    if (o == 'W') {
        if (ramp_wave_fit_parse(text, &fo->wave) == RAMP_OK) return 1;
        cli_usage_error(cmd, "--wave-fit %s: expected picks, rmse, capacity or sms", text);
        return 0;
    }
    if (!strcmp(text, "penalised")) fo->intercept_free = 0;
    else if (!strcmp(text, "free")) fo->intercept_free = 1;
    else {
        cli_usage_error(cmd, "--intercept %s: expected penalised or free", text);
        return 0;
    }
    return 1;
}

static const char FIT_HELP[] =
    "usage: ramp fit DATASET -o PLAN.json [--menu N] [--occupancy B]\n"
    "                [--exclude-domain D]... [--diagnose]\n"
    "                [--wave-fit picks|rmse|capacity|sms] [--intercept penalised|free]\n"
    "                [--cost-model eq3|eq3+pairs] [--deterministic]\n"
    "                [--include CONFIG[,CONFIG...]]...\n"
    "\n"
    "Fits Equation 3's coefficients for every configuration of a timing dataset\n"
    "(NNLS on relative error), picks the greedy menu of N (default 6) from one\n"
    "occupancy class (B blocks/SM, or the best class), and writes the plan the\n"
    "GPU layer serves. --exclude-domain leaves a domain's loads out of the fit\n"
    "(to keep it held out); --diagnose prints rank correlation and pick error.\n"
    "--wave-fit and --intercept: how S_c and theta are fit (see `ramp eval\n"
    "--help`; defaults picks and penalised).\n"
    "--cost-model: eq3+pairs (the default) fits Equation 3 plus a pairs term,\n"
    "t = th0 + th1*W + th2*T + th3*A + th4*P, P the GPU's token-expert pairs\n"
    "(the sum of its load's counts: kernel v2's per-pair gathers and output\n"
    "reductions), and writes a five-term plan (\"cost_terms\" ending in\n"
    "\"pairs\"); it closes most of v2's gap on DeepSeek-V3 EP32 and Phi-3.5-MoE\n"
    "(bench/results/eval-2026-11-30-pairs.md). eq3 fits the paper's Equation 3\n"
    "alone and writes a four-term plan.\n"
    "The plan records the dataset's kernel (\"kernel\": \"v2\" for a kernel v2\n"
    "dataset; absent for v1).\n"
    "--deterministic: the menu from the dataset's two-phase configurations only\n"
    "(\".ph2\"), the ones a layer with ramp_layer_desc.deterministic = 1 can\n"
    "serve (each token-slot's output row written once, then combined in a fixed\n"
    "order: the same bits on every run). The fit and the menu see those alone.\n"
    "--include: these configurations (names as `ramp dataset info` lists them)\n"
    "are the menu's first entries, in that order; the greedy adds the rest up to\n"
    "N from their occupancy class. For a configuration the greedy would leave\n"
    "out because the dataset holds few of the loads it serves (the greedy\n"
    "minimises the total over the dataset's loads).\n";

int cmd_fit(int argc, char **argv) {
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"menu", required_argument, 0, 'n'},
        {"occupancy", required_argument, 0, 'b'}, {"exclude-domain", required_argument, 0, 'x'},
        {"diagnose", no_argument, 0, 'd'}, {"wave-fit", required_argument, 0, 'W'},
        {"intercept", required_argument, 0, 'I'}, {"cost-model", required_argument, 0, 'C'},
        {"deterministic", no_argument, 0, 'D'}, {"include", required_argument, 0, 'i'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *cmd = "fit", *out = NULL, *exclude[16];
    char inc_names[RAMP_MENU_MAX][64];
    int ninc = 0;
    ramp_costmodel_kind kind = RAMP_COSTMODEL_EQ3_PAIRS;
    long menu_size = 6, occupancy = 0;
    int nexclude = 0, diagnose = 0, deterministic = 0, o;
    ramp_costmodel_fit_options fo = {RAMP_WAVE_PICKS, 0};
    optind = 1;
    while ((o = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (o) {
        case 'o': out = optarg; break;
        case 'n': if (!cli_int(cmd, "--menu", optarg, 1, RAMP_MENU_MAX, &menu_size)) return 2; break;
        case 'b': if (!cli_int(cmd, "--occupancy", optarg, 0, 32, &occupancy)) return 2; break;
        case 'x':
            if (nexclude == 16) return cli_usage_error(cmd, "at most 16 --exclude-domain");
            exclude[nexclude++] = optarg;
            break;
        case 'd': diagnose = 1; break;
        case 'W':
        case 'I':
            if (!parse_fit_flag(cmd, o, optarg, &fo)) return 2;
            break;
        case 'C':
            /* a plan serves Equation 3, with or without pairs */
            if (ramp_costmodel_kind_parse(optarg, &kind) != RAMP_OK ||
                kind == RAMP_COSTMODEL_TILECOUNT)
                return cli_usage_error(cmd, "--cost-model %s: expected eq3 or eq3+pairs", optarg);
            break;
        case 'D': deterministic = 1; break;
        case 'i':
            for (const char *p = optarg;;) {
                const char *e = strchr(p, ',');
                size_t len = e ? (size_t)(e - p) : strlen(p);
                if (len == 0 || len >= sizeof inc_names[0])
                    return cli_usage_error(cmd, "--include %s: an empty or overlong configuration name", optarg);
                if (ninc == RAMP_MENU_MAX)
                    return cli_usage_error(cmd, "--include: at most %d configurations", RAMP_MENU_MAX);
                memcpy(inc_names[ninc], p, len);
                inc_names[ninc++][len] = '\0';
                if (!e) break;
                p = e + 1;
            }
            break;
        case 'h': fputs(FIT_HELP, stdout); return 0;
        default: return cli_usage_error(cmd, "unknown option");
        }
    }
    if (optind != argc - 1 || !out) return cli_usage_error(cmd, "give one dataset and -o PLAN.json");
    ramp_timing *t = NULL;
    ramp_status s = ramp_timing_read(argv[optind], 0, &t);
    if (s) return cli_fail(cmd, s);
    if (deterministic) { /* the dataset's two-phase configurations alone */
        int *idx = malloc(sizeof *idx * (size_t)(t->nconfigs ? t->nconfigs : 1)), n = 0;
        ramp_timing *sub = NULL;
        for (int c = 0; idx && c < t->nconfigs; c++)
            if (t->configs[c].two_phase) idx[n++] = c;
        if (!idx) s = RAMP_ERR_OUT_OF_MEMORY;
        else if (n == 0) {
            fprintf(stderr, "ramp fit: --deterministic: %s has no two-phase configuration (\".ph2\"), "
                            "which a deterministic layer needs\n", argv[optind]);
            free(idx);
            ramp_timing_free(t);
            return 1;
        } else s = ramp_timing_select_configs(t, idx, n, &sub);
        free(idx);
        ramp_timing_free(t);
        if (s) return cli_fail(cmd, s);
        t = sub;
    }
    uint8_t *mask = calloc((size_t)(t->nloads ? t->nloads : 1), 1);
    int rc = 0, inc[RAMP_MENU_MAX];
    if (ninc > menu_size)
        rc = cli_usage_error(cmd, "--include: %d configurations, more than the menu's %ld (--menu)",
                             ninc, menu_size);
    for (int j = 0; rc == 0 && j < ninc; j++) {
        inc[j] = -1;
        for (int c = 0; c < t->nconfigs && inc[j] < 0; c++) {
            char name[64];
            if (!strcmp(ramp_config_name(&t->configs[c], name, sizeof name), inc_names[j])) inc[j] = c;
        }
        if (inc[j] < 0)
            rc = cli_usage_error(cmd, "--include %s: not a configuration of %s%s (`ramp dataset info` "
                                 "lists them)", inc_names[j], argv[optind],
                                 deterministic ? "'s two-phase ones (--deterministic)" : "");
    }
    for (int x = 0; x < nexclude; x++) {
        int found = 0;
        for (int d = 0; d < t->ndomains; d++) found |= !strcmp(t->domains[d], exclude[x]);
        if (!found) rc = cli_usage_error(cmd, "--exclude-domain %s: not a domain of %s", exclude[x], argv[optind]);
    }
    for (int64_t i = 0; mask && i < t->nloads; i++) {
        mask[i] = 1;
        for (int x = 0; x < nexclude; x++)
            if (!strcmp(t->domains[t->domain[i]], exclude[x])) mask[i] = 0;
    }
    ramp_costmodel *m = NULL;
    ramp_menu menu;
    ramp_plan plan;
    if (rc == 0 && !mask) rc = cli_usage_error(cmd, "out of memory");
    if (rc == 0 && (s = ramp_costmodel_fit_opt(t, mask, kind, &fo, &m))) rc = cli_fail(cmd, s);
    if (rc == 0 && (s = ramp_menu_greedy_include(t, mask, (int)menu_size, (int)occupancy, NULL,
                                                 RAMP_MENU_PER_LOAD, inc, ninc, &menu)))
        rc = cli_fail(cmd, s);
    if (rc == 0 && (s = ramp_plan_make(t, &menu, m, &plan))) rc = cli_fail(cmd, s);
    if (rc == 0 && (s = ramp_plan_write(&plan, out))) rc = cli_fail(cmd, s);
    if (rc == 0) {
        printf("%s %s (kernel %s%s): menu of %d from occupancy class %d (blocks/SM), fit on %lld loads%s\n", t->model,
               t->layout, ramp_kernel_version_name((ramp_kernel_version)t->kernel),
               t->weight_units ? ", weights in stage units" : "", menu.count, menu.blocks_per_sm,
               (long long)menu.loads, deterministic ? ", two-phase configurations only (--deterministic)" : "");
        const int nt = ramp_costmodel_nterms(kind);
        for (int i = 0; i < menu.count; i++) {
            char name[64], pairs[40] = "";
            const double *th = m->theta + (size_t)menu.config[i] * nt;
            if (nt > RAMP_COST_TERMS) snprintf(pairs, sizeof pairs, ", %.3g", th[4]);
            printf("  %-26s total %.1f us   theta = [%.3g, %.3g, %.3g, %.3g%s]   wave %d tiles\n",
                   ramp_config_name(&t->configs[menu.config[i]], name, sizeof name), menu.total_us[i],
                   th[0], th[1], th[2], th[3], pairs, plan.slots[i]);
        }
        if (!deterministic) cli_space_coverage(t, stdout, 1);
        if (diagnose) {
            ramp_costmodel_diag dg;
            if ((s = ramp_costmodel_diagnose(m, t, mask, NULL, 0, &dg))) rc = cli_fail(cmd, s);
            else printf("cost model on its training loads: Spearman median %.3f (p10 %.3f), pick error median %.1f%%, "
                        "mean gap of the pick %.2f%%\n", dg.spearman_median, dg.spearman_p10,
                        100 * dg.pick_err_median, 100 * dg.pick_gap_mean);
        }
        fprintf(stderr, "wrote %s\n", out);
    }
    ramp_costmodel_free(m);
    free(mask);
    ramp_timing_free(t);
    return rc;
}

static const char EVAL_HELP[] =
    "usage: ramp eval DATASET... [--out DIR] [--holdout D] [--menu N]\n"
    "                 [--bootstrap N] [--seed S] [--min-tokens 128] [--summary]\n"
    "                 [--menu-objective load|layer]\n"
    "                 [--wave-fit picks|rmse|capacity|sms] [--intercept penalised|free]\n"
    "                 [--cost-model eq3|eq3+pairs] [--train-uniform]\n"
    "\n"
    "Held-out evaluation: for each traffic domain in turn, every policy that\n"
    "learns is fit on the other domains (vLLM's tuning on the \"uniform\" batches)\n"
    "and scored on that domain's batches; a batch's time is its slowest GPU's.\n"
    "Give any number of datasets (models, layouts, placements): each is one row\n"
    "of the paper's Table 3 (RaMP's speedup over each policy), Table 4 (tables\n"
    "given the cost model's inputs), Table 5 (held-out domains, with bootstrap\n"
    "intervals) and Table 9 (the menu). Two more print when their datasets are\n"
    "given: Table 8 (balanced expert placement: a dataset built with\n"
    "`ramp dataset build --balanced-on-others`, paired with the contiguous one of\n"
    "the same model and layout built from the same traces: imbalance, RaMP over\n"
    "the trace-tuned table and over vLLM's tuning under each placement, and the\n"
    "effect of balancing on the same batches) and Table 11 (TP layouts: every\n"
    "GPU holds every expert). With --out, writes per dataset\n"
    "DIR/<model>-<layout>[-balanced][-v2]/batches.csv, loads.csv (each GPU's\n"
    "choice per policy and its time), summary.csv,\n"
    "predicted_vs_measured.svg and speedup.svg, and DIR/report.txt (every table\n"
    "printed, as on stdout without --summary). --menu-objective picks the\n"
    "menu greedy's objective: load (the paper's: sum over loads of the best\n"
    "menu time, the default) or layer (sum over batches of the slowest GPU's).\n"
    "--wave-fit and --intercept choose how RaMP's Equation 3 is fit (its form\n"
    "is the same): the wave size S_c by the training picks' regret starting\n"
    "from sms (picks, the default), by the lowest RMS relative error (rmse,\n"
    "eval-2026-11-30-v2), sms * occupancy (capacity, the paper's) or sms; and\n"
    "theta_0 penalised by a tiny row so that one-wave training loads put the\n"
    "fixed cost on the wave term (penalised, the default) or the paper's plain\n"
    "NNLS (free). `--wave-fit capacity --intercept free` is the paper's fit.\n"
    "--cost-model picks the form of the cost model that RaMP, the menu's RaMP\n"
    "and the transfer fit: eq3+pairs (the default: Equation 3 plus th4*P, P the\n"
    "load's token-expert pairs, the sum of its counts, for kernel v2's per-pair\n"
    "work; what `ramp fit` writes and the selection kernel serves) or eq3 (the\n"
    "paper's Equation 3, t = th0 + th1*W + th2*T + th3*A).\n"
    "--train-uniform: the \"uniform\" loads (uniformly random routing, what an\n"
    "offline tuning sweep generates) train every learning policy too, not only\n"
    "vLLM's; the held-out domain stays held out. `ramp fit` trains on every\n"
    "load, uniform included, so this is the protocol closer to the served plan;\n"
    "without it, the paper's (held-out traffic only).\n"
    "Given datasets of two or more models, it also prints the cost model's\n"
    "transfer: each model's configurations fit on the other models' datasets\n"
    "(load terms scaled by hidden / 2048) and scored on all its traffic batches.\n"
    "The datasets of one call must be of one kernel (v1, or v2 from\n"
    "`ramp dataset build --kernel v2`): Table 8 and the transfer combine them.\n";

/* --menu-objective load|layer. */
static int parse_objective(const char *cmd, const char *text, ramp_menu_objective *out) {
    if (!strcmp(text, "load")) *out = RAMP_MENU_PER_LOAD;
    else if (!strcmp(text, "layer")) *out = RAMP_MENU_LAYER;
    else {
        cli_usage_error(cmd, "--menu-objective %s: expected load or layer", text);
        return 0;
    }
    return 1;
}

/* Every table the datasets call for, to f. */
static ramp_status print_tables(FILE *f, const ramp_eval_result *const *cr, int n,
                                const ramp_eval_options *eo, const ramp_eval_transfer *tr,
                                const ramp_eval_result **tres, int ntr) {
    int balanced = 0, every = 0;
    for (int i = 0; i < n; i++) {
        balanced |= ramp_placement_is_balanced(cr[i]->placement);
        every |= cr[i]->every_expert;
    }
    ramp_status s;
    if (eo->policy.cost_model == RAMP_COSTMODEL_EQ3_PAIRS)
        fprintf(f, "Cost model: eq3+pairs, t = th0 + th1*W + th2*T + th3*A + th4*P "
                   "(P: the load's token-expert pairs)\n");
    else
        fprintf(f, "Cost model: eq3, t = th0 + th1*W + th2*T + th3*A (the paper's Equation 3)\n");
    fprintf(f, "Training: %s\n\n",
            eo->train_uniform ? "the other traffic domains and the uniform loads (--train-uniform)"
                              : "the other traffic domains (the paper's protocol; vLLM's tuning on "
                                "the uniform loads)");
    if ((s = ramp_eval_print_table3(f, cr, n))) return s;
    fprintf(f, "\n");
    if ((s = ramp_eval_print_table4(f, cr, n))) return s;
    fprintf(f, "\n");
    if ((s = ramp_eval_print_table5(f, cr, n))) return s;
    if (balanced) {
        fprintf(f, "\n");
        if ((s = ramp_eval_print_table8(f, cr, n))) return s;
    }
    if (eo->menu_size > 0) {
        fprintf(f, "\n");
        if ((s = ramp_eval_print_table9(f, cr, n))) return s;
    }
    if (every) {
        fprintf(f, "\n");
        if ((s = ramp_eval_print_table11(f, cr, n))) return s;
    }
    if (ntr > 0) {
        fprintf(f, "\n");
        if ((s = ramp_eval_print_transfer(f, tr, ntr, tres))) return s;
    }
    int sims = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(cr[i]->device, "simulated")) continue;
        fprintf(f, "%s%s %s%s", sims++ ? ", " : "\nNOTE: the times of ", cr[i]->model, cr[i]->layout,
                ramp_placement_is_balanced(cr[i]->placement) ? " (balanced)" : "");
    }
    if (sims)
        fprintf(f, " are SIMULATED (src/simulate.c), not measured:\nthey show the pipeline works, "
                   "not how fast anything is.\n");
    return ferror(f) ? RAMP_ERR_IO : RAMP_OK;
}

/* mkdir -p for one or two levels. */
static int make_dir(const char *path) {
    if (mkdir(path, 0777) == 0 || errno == EEXIST) return 1;
    return 0;
}

int cmd_eval(int argc, char **argv) {
    static const struct option opts[] = {
        {"out", required_argument, 0, 'o'}, {"holdout", required_argument, 0, 'H'},
        {"menu", required_argument, 0, 'n'}, {"bootstrap", required_argument, 0, 'B'},
        {"seed", required_argument, 0, 'S'}, {"min-tokens", required_argument, 0, 'm'},
        {"summary", no_argument, 0, 's'}, {"menu-objective", required_argument, 0, 'M'},
        {"wave-fit", required_argument, 0, 'W'}, {"intercept", required_argument, 0, 'I'},
        {"cost-model", required_argument, 0, 'C'}, {"train-uniform", no_argument, 0, 'U'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *cmd = "eval", *outdir = NULL;
    ramp_eval_options eo;
    ramp_eval_defaults(&eo);
    long v;
    int summary = 0, o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (o) {
        case 'o': outdir = optarg; break;
        case 'H': eo.holdout = optarg; break;
        case 'U': eo.train_uniform = 1; break;
        case 'n': if (!cli_int(cmd, "--menu", optarg, 0, RAMP_MENU_MAX, &v)) return 2; eo.menu_size = (int)v; break;
        case 'B': if (!cli_int(cmd, "--bootstrap", optarg, 0, 100000, &v)) return 2; eo.bootstrap = (int)v; break;
        case 'S': if (!cli_int(cmd, "--seed", optarg, 0, 0x7fffffffL, &v)) return 2; eo.seed = (uint64_t)v; break;
        case 'm': if (!cli_int(cmd, "--min-tokens", optarg, 1, 1 << 30, &v)) return 2; eo.min_tokens = (int)v; break;
        case 's': summary = 1; break;
        case 'M':
            if (!parse_objective(cmd, optarg, &eo.menu_objective)) return 2;
            break;
        case 'W':
        case 'I':
            if (!parse_fit_flag(cmd, o, optarg, &eo.policy.fit)) return 2;
            break;
        case 'C':
            /* The tile-count formula is its own policy, not RaMP's model. */
            if (ramp_costmodel_kind_parse(optarg, &eo.policy.cost_model) != RAMP_OK ||
                eo.policy.cost_model == RAMP_COSTMODEL_TILECOUNT)
                return cli_usage_error(cmd, "--cost-model %s: expected eq3 or eq3+pairs", optarg);
            break;
        case 'h': fputs(EVAL_HELP, stdout); return 0;
        default: return cli_usage_error(cmd, "unknown option");
        }
    }
    if (optind >= argc) return cli_usage_error(cmd, "give one or more timing datasets");
    int n = argc - optind, rc = 0;
    ramp_eval_result **res = calloc((size_t)n, sizeof *res);
    ramp_timing **ts = calloc((size_t)n, sizeof *ts);
    if (!res || !ts) {
        free(res);
        free(ts);
        return cli_usage_error(cmd, "out of memory");
    }
    if (outdir && !make_dir(outdir)) rc = cli_usage_error(cmd, "--out %s: cannot create: %s", outdir, strerror(errno));
    for (int i = 0; i < n && rc == 0; i++) {
        ramp_timing *t = NULL;
        ramp_status s = ramp_timing_read(argv[optind + i], 0, &t);
        ts[i] = t; /* kept for the transfer */
        if (s) { rc = cli_fail(cmd, s); break; }
        /* One kernel per call: Table 8 pairs datasets and the transfer fits
         * on the others, and neither may mix kernels' times. */
        if (i > 0 && t->kernel != ts[0]->kernel) {
            rc = cli_usage_error(cmd, "%s holds kernel %s times, %s kernel %s: evaluate one kernel's datasets per "
                                 "call", argv[optind + i], ramp_kernel_version_name((ramp_kernel_version)t->kernel),
                                 argv[optind], ramp_kernel_version_name((ramp_kernel_version)ts[0]->kernel));
            break;
        }
        if (i > 0 && t->weight_units != ts[0]->weight_units) {
            rc = cli_usage_error(cmd, "%s holds times of %s weights, %s of %s: evaluate one weight "
                                 "layout's datasets per call", argv[optind + i],
                                 t->weight_units ? "stage-unit" : "row-major", argv[optind],
                                 ts[0]->weight_units ? "stage-unit" : "row-major");
            break;
        }
        fprintf(stderr, "evaluating %s (%s %s, kernel %s, %lld loads x %d configurations)\n", argv[optind + i],
                t->model, t->layout, ramp_kernel_version_name((ramp_kernel_version)t->kernel), (long long)t->nloads,
                t->nconfigs);
        s = ramp_eval_run(t, &eo, &res[i]);
        if (s) { rc = cli_fail(cmd, s); break; }
        if (summary) ramp_eval_print_summary(stdout, res[i]);
        if (outdir) {
            char dir[4096];
            snprintf(dir, sizeof dir, "%s/%s-%s%s%s", outdir, res[i]->model, res[i]->layout,
                     ramp_placement_is_balanced(res[i]->placement) ? "-balanced" : "",
                     t->kernel == RAMP_KERNEL_V2 ? "-v2" : "");
            if (!make_dir(dir)) rc = cli_usage_error(cmd, "cannot create %s: %s", dir, strerror(errno));
            else if ((s = ramp_eval_write_csv(res[i], dir)) || (s = ramp_eval_write_loads(res[i], t, dir)) ||
                     (s = ramp_eval_write_plots(res[i], dir)))
                rc = cli_fail(cmd, s);
        }
    }
    ramp_eval_transfer *tr = NULL;
    const ramp_eval_result **tres = NULL;
    int ntr = 0;
    if (rc == 0) {
        /* With datasets of two or more models: the cost model's transfer to
         * each model from the others. */
        tr = calloc((size_t)n, sizeof *tr);
        tres = calloc((size_t)n, sizeof *tres);
        if (!tr || !tres) rc = cli_usage_error(cmd, "out of memory");
        for (int i = 0; i < n && rc == 0; i++) {
            /* A balanced dataset is a second placement of a layout, not
             * another target. */
            if (ramp_placement_is_balanced(res[i]->placement)) continue;
            ramp_status s = ramp_eval_transfer_run_kind((const ramp_timing *const *)ts, n, i, eo.min_tokens,
                                                        eo.policy.cost_model, &tr[ntr]);
            if (s == RAMP_ERR_NOT_FOUND) continue; /* one model only */
            if (s) rc = cli_fail(cmd, s);
            else tres[ntr++] = res[i];
        }
    }
    if (rc == 0) {
        const ramp_eval_result *const *cr = (const ramp_eval_result *const *)res;
        ramp_status s = print_tables(stdout, cr, n, &eo, tr, tres, ntr);
        if (s) rc = cli_fail(cmd, s);
        if (rc == 0 && outdir) {
            /* DIR/report.txt, atomically: a temporary file renamed into place. */
            char path[4096], tmp[4200];
            snprintf(path, sizeof path, "%s/report.txt", outdir);
            snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
            FILE *f = fopen(tmp, "w");
            if (!f) {
                fprintf(stderr, "ramp %s: cannot create %s: %s\n", cmd, tmp, strerror(errno));
                rc = CLI_EXIT_ERROR;
            } else {
                int bad = print_tables(f, cr, n, &eo, tr, tres, ntr) != RAMP_OK;
                bad |= fclose(f) != 0;
                if (bad || rename(tmp, path) != 0) {
                    fprintf(stderr, "ramp %s: cannot write %s: %s\n", cmd, path, strerror(errno));
                    remove(tmp);
                    rc = CLI_EXIT_ERROR;
                }
            }
        }
    }
    free(tr);
    free(tres);
    for (int i = 0; i < n; i++) {
        ramp_eval_free(res[i]);
        ramp_timing_free(ts[i]);
    }
    free(res);
    free(ts);
    return rc;
}
