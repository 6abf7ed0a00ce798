/*
 * ramp.c - the `ramp` command: dispatches to subcommands (one file each
 * under tools/). Every subcommand takes --help.
 */
#include "cli.h"

static const char USAGE[] =
    "usage: ramp <command> [options]   (ramp <command> --help for details)\n"
    "\n"
    "RaMP chooses an MoE kernel configuration for every GPU from the routing\n"
    "that GPU receives. Commands:\n"
    "  demo       the main job: traffic -> loads -> timings -> fit -> menu -> eval\n"
    "  models     list the built-in model geometries\n"
    "  configs    list a model/layout's kernel configurations and resources\n"
    "  trace      routing traces: gen, stats, import-sglang, info\n"
    "  loads      per-GPU expert loads of a trace record under a layout\n"
    "  dataset    timing datasets: build (from traces), simulate, info\n"
    "  bench      time a dataset's configurations on its loads (GPU), resumable\n"
    "  fit        fit the cost model and pick the menu; write a plan (JSON)\n"
    "  eval       held-out evaluation of every policy (paper Tables 3, 4, 9)\n"
    "  version    print the version\n";

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(USAGE, stderr);
        return CLI_EXIT_USAGE;
    }
    const char *c = argv[1];
    if (!strcmp(c, "--help") || !strcmp(c, "-h") || !strcmp(c, "help")) {
        fputs(USAGE, stdout);
        return 0;
    }
    if (!strcmp(c, "version") || !strcmp(c, "--version")) {
        printf("ramp %s\n", RAMP_VERSION_STRING);
        return 0;
    }
    struct { const char *name; int (*fn)(int, char **); } cmds[] = {
        {"demo", cmd_demo},       {"models", cmd_models}, {"configs", cmd_configs},
        {"trace", cmd_trace},     {"loads", cmd_loads},   {"dataset", cmd_dataset},
        {"fit", cmd_fit},         {"eval", cmd_eval},     {"bench", cmd_bench},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(c, cmds[i].name)) return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "ramp: unknown command '%s'\n\n%s", c, USAGE);
    return CLI_EXIT_USAGE;
}
