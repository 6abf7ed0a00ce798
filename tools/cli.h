/*
 * cli.h - what the `ramp` subcommands share: option parsing on top of
 * getopt_long, error reporting, and progress lines. The CLI is a thin client
 * of libramp: every decision lives in the library.
 */
#ifndef RAMP_CLI_H
#define RAMP_CLI_H

#include "ramp.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exit codes: 0 success, 1 the library reported an error, 2 bad usage. */
#define CLI_EXIT_ERROR 1
#define CLI_EXIT_USAGE 2
/* `ramp bench`: stopped before its deadline; the same command resumes. */
#define CLI_EXIT_INCOMPLETE 3

/* Prints "ramp <cmd>: <status>: <message>" and returns CLI_EXIT_ERROR. */
int cli_fail(const char *cmd, ramp_status s);
/* Prints "ramp <cmd>: <message>\nTry 'ramp <cmd> --help'." and returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...);

/* Strict number parsing: the whole string, within [lo, hi]. */
int cli_int(const char *cmd, const char *opt, const char *text, long lo, long hi, long *out);
int cli_double(const char *cmd, const char *opt, const char *text, double lo, double hi, double *out);

/* Model from --model NAME or a custom geometry (--experts etc.). */
typedef struct {
    const char *name;
    long experts, topk, inter, hidden, layers;
} cli_model_opts;
int cli_model_resolve(const char *cmd, const cli_model_opts *o, ramp_model *out);

/* Progress on stderr, only when stderr is a terminal or RAMP_PROGRESS=1. */
void cli_progress(double fraction, void *label);
void cli_progress_done(void *label);

/* `ramp configs --ptxas` (configs_ptxas.c): compiles cfgs[0..n) on `jobs`
 * threads (units: the programs reading weights in stage units) and prints
 * what ptxas measured; cubin_dir (NULL: none) must not exist or be empty,
 * and receives every cubin only if all compile and run. Returns the exit
 * code. */
int configs_ptxas(ramp_kernel_version kernel, int units, const ramp_config *cfgs, int n,
                  const ramp_geometry *g, const ramp_device_limits *lim, int jobs,
                  const char *cubin_dir, int csv);

/* `ramp configs --plan PLAN --ptxas`: the plan's polymorphic kernel
 * compiled as the layer does (red4: its float4 output); cubin_dir as above,
 * receiving poly.cubin. Returns the exit code. */
int configs_plan_ptxas(const char *plan_path, int red4, const char *cubin_dir, int csv);
/* `ramp configs --plan PLAN` without --ptxas: the menu and the layer's size
 * classes, no compile. */
int configs_plan_info(const char *plan_path);

/* How much of kernel t->kernel's configuration space today (on the H200's
 * limits) the dataset t times, as a line on f ("  space: ..."); with
 * only_gaps, a "note: " line only when some are missing. Returns how many
 * are missing, -1 if the space cannot be listed. */
int cli_space_coverage(const ramp_timing *t, FILE *f, int only_gaps);

/* Subcommands. */
int cmd_models(int argc, char **argv);
int cmd_configs(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_loads(int argc, char **argv);
int cmd_dataset(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_fit(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_bench(int argc, char **argv);

#endif
