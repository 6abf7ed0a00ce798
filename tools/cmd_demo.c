/*
 * cmd_demo.c - `ramp demo`, the main job: serving traffic from four domains
 * -> per-GPU loads under a layout -> a timing dataset -> held-out
 * evaluation of every policy (the paper's Table 3) -> the plan a GPU serves.
 *
 * Times come from a measured H200 dataset when one is given (--dataset) or
 * shipped in data/timing/, else from the analytic stand-in, and the report
 * says which. Everything is written to DIR.tmp.<pid> and renamed to DIR only
 * when the whole job succeeded, so a failure leaves no partial output.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "cli.h"

#include <dirent.h>
#include <strings.h>
#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char DEMO_HELP[] =
    "usage: ramp demo [--model NAME] [--layout L] [--out DIR] [--dataset FILE]\n"
    "                 [--kernel v1|v2] [--steps N] [--seed S] [--simulate]\n"
    "\n"
    "The main job, end to end on the CPU (defaults: Qwen3-30B-A3B, EP8, out/demo):\n"
    "  1. generate serving traffic for chat, math, code and knowledge (fixed\n"
    "     concurrency 16, 64, 256) and vLLM's uniform tuning batches;\n"
    "  2. split every batch into per-GPU loads under the layout;\n"
    "  3. time every configuration on every load: a measured H200 dataset if\n"
    "     --dataset is given or data/timing/ holds one for the model and layout\n"
    "     (contiguous placement; of kernel --kernel if there is one: default v2,\n"
    "     the Hopper kernel the layer serves, else v1's), else the analytic\n"
    "     stand-in over that kernel's configurations (--simulate forces it;\n"
    "     clearly labelled);\n"
    "  4. evaluate every policy on held-out domains (Tables 3, 4, 5, 9), write CSV\n"
    "     and SVG plots, fit on all traffic and write the plan (plan.json).\n"
    "--steps sets forward passes per trace (default 96).\n";

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb; (void)flag; (void)ftw;
    return remove(path);
}

static void remove_tree(const char *path) { nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* The shipped dataset for this model and layout: fully measured, contiguous
 * placement (the balanced ones are Table 8's pair, not the default), of the
 * wanted kernel, FP8 on row-major weights, measured on an H200 (the
 * project's reference GPU; the `-h100` files are the same loads on an H100,
 * for --dataset) if there is one, else on another GPU, else the first other,
 * by name (BF16 and stage units' times are options', not the default, and
 * sort before it). 1 if found; *kernel_out says which kernel it holds. */
static int find_shipped(const char *dir, const char *model, const char *layout, int kernel,
                        char *out, size_t n, int *kernel_out) {
    char path[4096], other[4400] = "", other_gpu[4400] = "";
    int other_kernel = -1, found = 0;
    snprintf(path, sizeof path, "%s/timing", dir);
    struct dirent **names = NULL;
    int count = scandir(path, &names, NULL, alphasort);
    for (int i = 0; i < count; i++) {
        const char *f = names[i]->d_name;
        size_t len = strlen(f);
        if (!found && len > 12 && strcmp(f + len - 12, ".safetensors") == 0) {
            char file[4400];
            snprintf(file, sizeof file, "%s/%s", path, f);
            ramp_timing *t = NULL;
            if (ramp_timing_read(file, 0, &t) == RAMP_OK && strcmp(t->model, model) == 0 &&
                strcasecmp(t->layout, layout) == 0 && !ramp_placement_is_balanced(t->placement)) {
                if (t->kernel == kernel && !t->weight_units && !t->geom.bf16) {
                    if (strstr(t->device, "H200")) {
                        snprintf(out, n, "%s", file);
                        found = 1;
                    } else if (!other_gpu[0]) {
                        snprintf(other_gpu, sizeof other_gpu, "%s", file);
                    }
                } else if (other_kernel < 0) {
                    snprintf(other, sizeof other, "%s", file);
                    other_kernel = t->kernel;
                }
            }
            ramp_timing_free(t);
        }
        free(names[i]);
    }
    free(names);
    if (found) {
        *kernel_out = kernel;
    } else if (other_gpu[0]) {
        snprintf(out, n, "%s", other_gpu);
        *kernel_out = kernel;
        found = 1;
    } else if (other_kernel >= 0) {
        snprintf(out, n, "%s", other);
        *kernel_out = other_kernel;
        found = 1;
    }
    return found;
}

/* Steps 1-3 when no dataset is given: traffic -> loads -> simulated times. */
static ramp_status build_simulated(const ramp_model *m, ramp_layout L, const char *layout_text,
                                   ramp_kernel_version kernel, const char *dir, int steps,
                                   uint64_t seed, ramp_timing **out) {
    ramp_geometry g;
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    ramp_status s = ramp_geometry_for(m, L, &g);
    if (s) return s;
    ramp_timing *t = NULL;
    if ((s = ramp_timing_create_space_for(kernel, m, layout_text, &g, &lim, &t))) return s;
    ramp_placement *p = NULL;
    if ((s = ramp_placement_contiguous(m->experts, L, &p))) { ramp_timing_free(t); return s; }
    const int domains[] = {RAMP_DOMAIN_CHAT, RAMP_DOMAIN_MATH, RAMP_DOMAIN_CODE, RAMP_DOMAIN_KNOWLEDGE};
    const int concurrency[] = {16, 64, 256};
    char path[4400], label[96];
    for (int d = 0; d < 4 && s == RAMP_OK; d++) {
        ramp_trace *all = NULL;
        for (int c = 0; c < 3 && s == RAMP_OK; c++) {
            ramp_traffic_params tp;
            ramp_traffic_defaults(&tp, m);
            tp.domain = domains[d];
            tp.arrival = RAMP_ARRIVAL_CONCURRENCY;
            tp.concurrency = concurrency[c];
            tp.steps = steps;
            tp.layers = 2;
            tp.seed = seed * 131 + (uint64_t)(d * 7 + c);
            ramp_trace *tr = NULL;
            snprintf(label, sizeof label, "traffic %s, %d concurrent", ramp_domain_name(domains[d]), concurrency[c]);
            s = ramp_traffic_generate(&tp, cli_progress, label, &tr);
            cli_progress_done(label);
            if (s == RAMP_OK) s = ramp_timing_add_trace(t, tr, &p, 1, 1, 1, 0);
            snprintf(path, sizeof path, "%s/traces/%s-c%d.safetensors", dir, ramp_domain_name(domains[d]), concurrency[c]);
            if (s == RAMP_OK) s = ramp_trace_write(tr, path);
            ramp_trace_free(tr);
        }
        ramp_trace_free(all);
    }
    if (s == RAMP_OK) {
        ramp_trace *u = NULL;
        s = ramp_trace_uniform_batches(m, ramp_vllm_batch_sizes, RAMP_VLLM_SIZES, 4, seed, &u);
        if (s == RAMP_OK) s = ramp_timing_add_trace(t, u, &p, 1, 1, 0, 0);
        snprintf(path, sizeof path, "%s/traces/uniform.safetensors", dir);
        if (s == RAMP_OK) s = ramp_trace_write(u, path);
        ramp_trace_free(u);
    }
    ramp_placement_free(p);
    if (s == RAMP_OK) {
        fprintf(stderr, "simulating %lld loads x %d configurations\n", (long long)t->nloads, t->nconfigs);
        ramp_sim_params sp;
        ramp_sim_defaults(&sp);
        sp.seed = seed;
        s = ramp_sim_fill(&sp, &lim, t);
    }
    if (s) { ramp_timing_free(t); return s; }
    *out = t;
    return RAMP_OK;
}

int cmd_demo(int argc, char **argv) {
    static const struct option opts[] = {
        {"model", required_argument, 0, 'm'}, {"layout", required_argument, 0, 'l'},
        {"out", required_argument, 0, 'o'}, {"dataset", required_argument, 0, 'd'},
        {"steps", required_argument, 0, 's'}, {"seed", required_argument, 0, 'S'},
        {"simulate", no_argument, 0, 'x'}, {"kernel", required_argument, 0, 'k'},
        {"help", no_argument, 0, 'h'},      {0, 0, 0, 0}};
    const char *cmd = "demo", *model = "qwen3-30b", *layout_text = "EP8", *outdir = "out/demo", *dataset = NULL;
    long steps = 96, seed = 1;
    int force_sim = 0, o;
    ramp_kernel_version kernel = RAMP_KERNEL_V2; /* the kernel the layer serves */
    optind = 1;
    while ((o = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (o) {
        case 'm': model = optarg; break;
        case 'l': layout_text = optarg; break;
        case 'o': outdir = optarg; break;
        case 'd': dataset = optarg; break;
        case 's': if (!cli_int(cmd, "--steps", optarg, 8, 1 << 20, &steps)) return 2; break;
        case 'S': if (!cli_int(cmd, "--seed", optarg, 0, 0x7fffffffL, &seed)) return 2; break;
        case 'x': force_sim = 1; break;
        case 'k':
            if (ramp_kernel_version_parse(optarg, &kernel) != RAMP_OK)
                return cli_usage_error(cmd, "--kernel %s: expected v1 or v2", optarg);
            break;
        case 'h': fputs(DEMO_HELP, stdout); return 0;
        default: return cli_usage_error(cmd, "unknown option");
        }
    }
    if (optind < argc) return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (dataset && force_sim) return cli_usage_error(cmd, "--dataset and --simulate exclude each other");
    ramp_model m;
    ramp_layout L;
    ramp_status s;
    if ((s = ramp_model_lookup(model, &m)) || (s = ramp_layout_parse(layout_text, &L))) return cli_fail(cmd, s);

    /* A shipped measured dataset for this model and layout? */
    char shipped[4400];
    int shipped_kernel = -1;
    const char *data_dir = getenv("RAMP_DATA_DIR");
    if (!dataset && !force_sim &&
        find_shipped(data_dir && *data_dir ? data_dir : "data", m.name, layout_text, (int)kernel,
                     shipped, sizeof shipped, &shipped_kernel)) {
        dataset = shipped;
        if (shipped_kernel != (int)kernel)
            fprintf(stderr, "no shipped %s dataset for %s %s: using kernel %s's\n",
                    ramp_kernel_version_name(kernel), m.name, layout_text,
                    ramp_kernel_version_name((ramp_kernel_version)shipped_kernel));
    }

    char tmp[4096], sub[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", outdir, (long)getpid());
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", outdir);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) { *slash = '\0'; mkdir(parent, 0777); }
    if (mkdir(tmp, 0777) != 0) return cli_usage_error(cmd, "cannot create %s: %s", tmp, strerror(errno));

    int rc = 0;
    ramp_timing *t = NULL;
    if (dataset) {
        fprintf(stderr, "using measured dataset %s\n", dataset);
        s = ramp_timing_read(dataset, 0, &t);
    } else {
        fprintf(stderr, "no measured dataset for %s %s: using the analytic stand-in (SIMULATED)\n", m.name, layout_text);
        snprintf(sub, sizeof sub, "%s/traces", tmp);
        mkdir(sub, 0777);
        s = build_simulated(&m, L, layout_text, kernel, tmp, (int)steps, (uint64_t)seed, &t);
        if (s == RAMP_OK) {
            time_t now = time(NULL);
            strftime(t->date, sizeof t->date, "%Y-%m-%d", gmtime(&now));
            snprintf(t->command, sizeof t->command, "ramp demo --model %s --layout %s --steps %ld --seed %ld --simulate",
                     model, layout_text, steps, seed);
            snprintf(sub, sizeof sub, "%s/dataset.safetensors", tmp);
            s = ramp_timing_write(t, sub);
        }
    }
    ramp_eval_result *res = NULL;
    ramp_eval_options eo;
    ramp_eval_defaults(&eo);
    if (s == RAMP_OK) {
        fprintf(stderr, "evaluating on held-out domains (%lld loads)\n", (long long)t->nloads);
        s = ramp_eval_run(t, &eo, &res);
    }
    if (s == RAMP_OK) {
        snprintf(sub, sizeof sub, "%s/eval", tmp);
        mkdir(sub, 0777);
        if (!(s = ramp_eval_write_csv(res, sub)) && !(s = ramp_eval_write_loads(res, t, sub)))
            s = ramp_eval_write_plots(res, sub);
    }
    if (s == RAMP_OK) {
        /* The plan a deployment serves: fit and menu on all traffic. */
        uint8_t *mask = calloc((size_t)t->nloads, 1);
        ramp_costmodel *cm = NULL;
        ramp_menu menu;
        ramp_plan plan;
        if (!mask) s = RAMP_ERR_OUT_OF_MEMORY;
        for (int64_t i = 0; mask && i < t->nloads; i++) mask[i] = strcmp(t->domains[t->domain[i]], "uniform") != 0;
        if (s == RAMP_OK) s = ramp_costmodel_fit(t, mask, eo.policy.cost_model, &cm);
        if (s == RAMP_OK) s = ramp_menu_greedy(t, mask, 6, 0, NULL, &menu);
        if (s == RAMP_OK) s = ramp_plan_make(t, &menu, cm, &plan);
        snprintf(sub, sizeof sub, "%s/plan.json", tmp);
        if (s == RAMP_OK) s = ramp_plan_write(&plan, sub);
        ramp_costmodel_free(cm);
        free(mask);
    }
    if (s != RAMP_OK) rc = cli_fail(cmd, s);
    if (rc == 0) {
        const ramp_eval_result *cr = res;
        if (strcmp(res->device, "simulated"))
            printf("RaMP demo: %s %s, times of kernel %s measured on %s\n\n", m.name, layout_text,
                   ramp_kernel_version_name((ramp_kernel_version)t->kernel), res->device);
        else
            printf("RaMP demo: %s %s, times from the analytic stand-in (SIMULATED, not measured)\n\n",
                   m.name, layout_text);
        printf("RaMP's cost model: %s\n\n", eo.policy.cost_model == RAMP_COSTMODEL_EQ3_PAIRS
                                                ? "Equation 3 + the GPU's token-expert pairs"
                                                : "Equation 3");
        ramp_eval_print_table3(stdout, &cr, 1);
        printf("\n");
        ramp_eval_print_table4(stdout, &cr, 1);
        printf("\n");
        ramp_eval_print_table5(stdout, &cr, 1);
        printf("\n");
        ramp_eval_print_table9(stdout, &cr, 1);
        printf("\n");
        ramp_eval_print_summary(stdout, res);
        remove_tree(outdir);
        if (rename(tmp, outdir) != 0) rc = cli_usage_error(cmd, "cannot rename %s to %s: %s", tmp, outdir, strerror(errno));
        else printf("\nwrote %s/: eval/*.csv, eval/*.svg, plan.json%s\n", outdir, dataset ? "" : ", traces/, dataset.safetensors");
        if (!strcmp(res->device, "simulated"))
            printf("NOTE: these times are SIMULATED (src/simulate.c). They show the pipeline works end to end,\n"
                   "not how fast any kernel is. Measured H200 datasets replace them (data/timing/).\n");
    }
    if (rc != 0) remove_tree(tmp);
    ramp_eval_free(res);
    ramp_timing_free(t);
    return rc;
}
