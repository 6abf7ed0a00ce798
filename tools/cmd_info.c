/*
 * cmd_info.c - `ramp models` and `ramp configs`: what the library knows about
 * geometries and the configuration space, as a table or CSV.
 */
#include "cli.h"

#include <unistd.h>

int cmd_models(int argc, char **argv) {
    static const struct option opts[] = {{"csv", no_argument, 0, 'c'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int csv = 0, o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (o == 'c') csv = 1;
        else if (o == 'h') {
            puts("usage: ramp models [--csv]\n\nLists the built-in MoE geometries (paper Table 1 plus the hidden size d).");
            return 0;
        } else return cli_usage_error("models", "unknown option");
    }
    if (optind < argc) return cli_usage_error("models", "unexpected argument '%s'", argv[optind]);
    if (csv) puts("model,experts,topk,inter,hidden,layers");
    else printf("%-20s %8s %5s %7s %7s %7s\n", "model", "experts", "topk", "h", "d", "layers");
    for (int i = 0; i < ramp_model_count(); i++) {
        const ramp_model *m = ramp_model_at(i);
        printf(csv ? "%s,%d,%d,%d,%d,%d\n" : "%-20s %8d %5d %7d %7d %7d\n", m->name,
               m->experts, m->topk, m->inter, m->hidden, m->layers);
    }
    return 0;
}

static const char CONFIGS_HELP[] =
    "usage: ramp configs --model NAME --layout L [--bf16] [--all] [--csv] [--kernel v1|v2]\n"
    "                    [--ptxas [--units] [--jobs N] [--cubin-dir DIR]]\n"
    "       ramp configs --experts E --topk K --inter H --hidden D --layout L ...\n"
    "       ramp configs --plan PLAN [--ptxas [--red4] [--csv] [--cubin-dir DIR]]\n"
    "\n"
    "Lists the kernel configurations valid for the model on the layout, with\n"
    "their estimated shared memory, threads, registers and occupancy class\n"
    "(blocks per SM). --all also lists those that do not fit, with the reason.\n"
    "--kernel v2: the Hopper kernel v2's space instead of v1's (plain launch;\n"
    "with its wide tiles, rows 128, fused or in two launches: .ph2, .ph2.dk2,\n"
    ".ph2.dk4; FP8 or --bf16; FP8 rows 16, 32, 64 in two launches too, where\n"
    "the parts divide h / 128: .ph2.dk4, .ph2.dk8); --all then lists v1's\n"
    "others with why v2 does not run them.\n"
    "--ptxas: compiles every valid configuration as the GPU path does (NVRTC for\n"
    "sm_90a, no GPU needed; the JIT cache keeps the programs) on N threads (--jobs;\n"
    "default: the CPUs) and lists what ptxas measured: registers (up/down for a\n"
    "two-phase configuration), spill and stack bytes, shared memory (smem2: the\n"
    "down program's), threads, blocks per SM. Exits 1 if one fails to compile,\n"
    "spills, has a stack frame, or draws a ptxas warning. --cubin-dir DIR (new or\n"
    "empty) receives every program's cubin, for tools/sass-check; only when all\n"
    "of them compile and can run. --units (kernel v2): the programs that read\n"
    "weights in stage units (ramp_layer_desc.weight_units, `ramp bench --weights\n"
    "units`) instead of row-major ones.\n"
    "--plan PLAN: the plan's menu and the size classes a kernel v2 layer serving\n"
    "it makes (ramp_plan_size_classes: the entries a batch of up to T tokens can\n"
    "choose, each class compiled as a kernel of its own; ramp_layer_desc.one_menu;\n"
    "with several experts a GPU, searched up to the batch size where every count\n"
    "vector takes more than ~10^6 histograms), no compile.\n"
    "--plan PLAN --ptxas: the polymorphic kernel a layer serving PLAN runs (its\n"
    "menu in one kernel, and a second kernel for the phase 2 of two-phase\n"
    "entries), compiled as ramp_layer_create compiles it, one row per kernel;\n"
    "--red4 as the layer's w2_red4 (kernel v2); a plan fit on stage units\n"
    "(\"weights\": \"units\") compiles as a layer reading them. --cubin-dir\n"
    "receives poly.cubin.\n";

int cmd_configs(int argc, char **argv) {
    static const struct option opts[] = {
        {"model", required_argument, 0, 'm'}, {"layout", required_argument, 0, 'l'},
        {"experts", required_argument, 0, 'E'}, {"topk", required_argument, 0, 'k'},
        {"inter", required_argument, 0, 'H'}, {"hidden", required_argument, 0, 'D'},
        {"bf16", no_argument, 0, 'b'}, {"all", no_argument, 0, 'a'},
        {"csv", no_argument, 0, 'c'}, {"kernel", required_argument, 0, 'K'},
        {"ptxas", no_argument, 0, 'p'}, {"jobs", required_argument, 0, 'j'},
        {"cubin-dir", required_argument, 0, 'u'}, {"plan", required_argument, 0, 'P'},
        {"red4", no_argument, 0, 'r'}, {"units", no_argument, 0, 'U'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    ramp_kernel_version kernel = RAMP_KERNEL_V1;
    cli_model_opts mo = {0};
    const char *layout_text = NULL, *cubin_dir = NULL, *plan_path = NULL;
    long jobs = 0;
    int bf16 = 0, all = 0, csv = 0, ptxas = 0, red4 = 0, units = 0, kernel_given = 0, o;
    optind = 1;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (o) {
        case 'm': mo.name = optarg; break;
        case 'l': layout_text = optarg; break;
        case 'E': if (!cli_int("configs", "--experts", optarg, 1, 4096, &mo.experts)) return CLI_EXIT_USAGE; break;
        case 'k': if (!cli_int("configs", "--topk", optarg, 1, 4096, &mo.topk)) return CLI_EXIT_USAGE; break;
        case 'H': if (!cli_int("configs", "--inter", optarg, 1, 1 << 20, &mo.inter)) return CLI_EXIT_USAGE; break;
        case 'D': if (!cli_int("configs", "--hidden", optarg, 1, 1 << 20, &mo.hidden)) return CLI_EXIT_USAGE; break;
        case 'b': bf16 = 1; break;
        case 'a': all = 1; break;
        case 'c': csv = 1; break;
        case 'K':
            if (ramp_kernel_version_parse(optarg, &kernel) != RAMP_OK)
                return cli_usage_error("configs", "--kernel %s: expected v1 or v2", optarg);
            kernel_given = 1;
            break;
        case 'p': ptxas = 1; break;
        case 'j': if (!cli_int("configs", "--jobs", optarg, 1, 32, &jobs)) return CLI_EXIT_USAGE; break;
        case 'u': cubin_dir = optarg; break;
        case 'P': plan_path = optarg; break;
        case 'r': red4 = 1; break;
        case 'U': units = 1; break;
        case 'h': fputs(CONFIGS_HELP, stdout); return 0;
        default: return cli_usage_error("configs", "unknown option");
        }
    }
    if (optind < argc) return cli_usage_error("configs", "unexpected argument '%s'", argv[optind]);
    if (plan_path) { /* the plan says model, layout and kernel */
        if (!ptxas && (red4 || csv || cubin_dir))
            return cli_usage_error("configs", "--red4, --csv and --cubin-dir with --plan go "
                                              "with --ptxas");
        if (layout_text || mo.name || mo.experts || mo.topk || mo.inter || mo.hidden || bf16 ||
            all || kernel_given || jobs || units)
            return cli_usage_error("configs", "--plan replaces --model, --layout, the geometry, "
                                              "--bf16, --all, --kernel, --jobs and --units (a "
                                              "plan says its weights)");
        if (cubin_dir && !*cubin_dir) return cli_usage_error("configs", "--cubin-dir: empty path");
        return ptxas ? configs_plan_ptxas(plan_path, red4, cubin_dir, csv)
                     : configs_plan_info(plan_path);
    }
    if (red4) return cli_usage_error("configs", "--red4 goes with --plan");
    if (units && (!ptxas || kernel != RAMP_KERNEL_V2))
        return cli_usage_error("configs", "--units goes with --ptxas and --kernel v2 (stage units "
                                          "are kernel v2's)");
    if (!layout_text) return cli_usage_error("configs", "--layout is required (e.g. EP8)");
    if (!ptxas && (jobs || cubin_dir))
        return cli_usage_error("configs", "--jobs and --cubin-dir go with --ptxas");
    if (ptxas && all)
        return cli_usage_error("configs", "--ptxas compiles the valid configurations only; drop --all");
    if (cubin_dir && !*cubin_dir) return cli_usage_error("configs", "--cubin-dir: empty path");
    ramp_model m;
    int rc = cli_model_resolve("configs", &mo, &m);
    if (rc) return rc;
    ramp_layout layout;
    ramp_status s = ramp_layout_parse(layout_text, &layout);
    if (s) return cli_fail("configs", s);
    ramp_geometry g;
    if ((s = ramp_geometry_for(&m, layout, &g))) return cli_fail("configs", s);
    g.bf16 = bf16;
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    if (!csv) printf("%s %s: %d experts/GPU, h = %d, d = %d, %s, kernel %s%s%s\n", m.name,
                     layout_text, g.experts, g.inter, g.hidden, bf16 ? "BF16" : "FP8",
                     ramp_kernel_version_name(kernel), ptxas ? ", measured by ptxas" : "",
                     units ? ", weights in stage units" : "");
    if (csv && !ptxas) puts("config,valid,smem_bytes,threads,regs,blocks_per_sm,reason");
    else if (!ptxas) printf("%-28s %6s %8s %5s %4s %4s\n", "config", "valid", "smem", "thr", "regs", "occ");
    int valid = 0;
    ramp_config *cand = NULL;
    int ncand = 0, in_space = -1; /* v2: cand[0..in_space) is its space */
    if (kernel == RAMP_KERNEL_V2) { /* v2's space, then (--all) v1's others */
        ramp_config *v1c = NULL, *sp = NULL;
        int n1 = 0, nsp = 0;
        if ((s = ramp_config_space_for(RAMP_KERNEL_V2, &g, &lim, &sp, &nsp)))
            return cli_fail("configs", s);
        if ((s = ramp_config_candidates(&g, &v1c, &n1))) {
            free(sp);
            return cli_fail("configs", s);
        }
        cand = malloc(sizeof *cand * (size_t)(nsp + n1));
        if (!cand) {
            free(sp);
            free(v1c);
            return cli_fail("configs", RAMP_ERR_OUT_OF_MEMORY);
        }
        memcpy(cand, sp, sizeof *cand * (size_t)nsp);
        ncand = in_space = nsp;
        for (int i = 0; i < n1; i++) {
            int have = 0;
            for (int j = 0; j < nsp && !have; j++) have = ramp_config_equal(&v1c[i], &sp[j]);
            if (!have) cand[ncand++] = v1c[i];
        }
        free(sp);
        free(v1c);
    } else if ((s = ramp_config_candidates(&g, &cand, &ncand))) {
        return cli_fail("configs", s);
    }
    for (int i = 0; i < ncand; i++) {
        ramp_resources r;
        if ((s = ramp_config_resources_for(kernel, &cand[i], &g, &lim, &r))) {
            free(cand);
            return cli_fail("configs", s);
        }
        if (in_space >= 0 && i >= in_space && r.valid) { /* e.g. v1's split-K at 2-3 stages */
            r.valid = 0;
            snprintf(r.why, sizeof r.why, "v2 runs it, but it is not in v2's space");
        }
        if (ptxas) { /* the valid ones, in order, to compile below */
            if (r.valid) cand[valid++] = cand[i];
            continue;
        }
        valid += r.valid;
        if (!r.valid && !all) continue;
        char name[64];
        ramp_config_name(&cand[i], name, sizeof name);
        if (csv) printf("%s,%d,%d,%d,%d,%d,%s\n", name, r.valid, r.smem_bytes, r.threads,
                        r.regs_per_thread, r.blocks_per_sm, r.why);
        else printf("%-28s %6s %8d %5d %4d %4d %s\n", name, r.valid ? "yes" : "no",
                    r.smem_bytes, r.threads, r.regs_per_thread, r.blocks_per_sm, r.why);
    }
    if (ptxas) {
        if (!jobs) jobs = sysconf(_SC_NPROCESSORS_ONLN) > 32 ? 32 : sysconf(_SC_NPROCESSORS_ONLN);
        rc = configs_ptxas(kernel, units, cand, valid, &g, &lim, jobs > 0 ? (int)jobs : 1, cubin_dir, csv);
        free(cand);
        return rc;
    }
    free(cand);
    if (!csv) printf("%d valid configurations (estimates; `--ptxas` measures them)\n", valid);
    return 0;
}
