/*
 * cli_common.c - option parsing, errors and progress shared by subcommands.
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <unistd.h>

int cli_fail(const char *cmd, ramp_status s) {
    fprintf(stderr, "ramp %s: %s: %s\n", cmd, ramp_status_name(s), ramp_last_error());
    return CLI_EXIT_ERROR;
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "ramp %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'ramp %s --help'.\n", cmd);
    return CLI_EXIT_USAGE;
}

int cli_int(const char *cmd, const char *opt, const char *text, long lo, long hi, long *out) {
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || !end || end == text || *end != '\0' || v < lo || v > hi) {
        cli_usage_error(cmd, "%s '%s': expected an integer in [%ld, %ld]", opt, text, lo, hi);
        return 0;
    }
    *out = v;
    return 1;
}

int cli_double(const char *cmd, const char *opt, const char *text, double lo, double hi, double *out) {
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || !end || end == text || *end != '\0' || !isfinite(v) || v < lo || v > hi) {
        cli_usage_error(cmd, "%s '%s': expected a number in [%g, %g]", opt, text, lo, hi);
        return 0;
    }
    *out = v;
    return 1;
}

int cli_model_resolve(const char *cmd, const cli_model_opts *o, ramp_model *out) {
    int custom = o->experts || o->topk || o->inter || o->hidden || o->layers;
    if (o->name && !custom) {
        ramp_status s = ramp_model_lookup(o->name, out);
        if (s != RAMP_OK) return cli_fail(cmd, s);
        return 0;
    }
    if (!custom) return cli_usage_error(cmd, "give --model NAME or a custom geometry");
    if (!(o->experts && o->topk && o->inter && o->hidden))
        return cli_usage_error(cmd, "a custom geometry needs --experts, --topk, --inter and --hidden");
    ramp_status s = ramp_model_custom(o->name ? o->name : "custom", (int)o->experts,
                                      (int)o->topk, (int)o->inter, (int)o->hidden,
                                      o->layers ? (int)o->layers : 1, out);
    return s == RAMP_OK ? 0 : cli_fail(cmd, s);
}

static int progress_enabled(void) {
    const char *e = getenv("RAMP_PROGRESS");
    if (e && *e) return strcmp(e, "0") != 0;
    return isatty(STDERR_FILENO);
}

void cli_progress(double fraction, void *label) {
    if (!progress_enabled()) return;
    static int last = -1;
    int pct = (int)(fraction * 100.0);
    if (pct == last) return;
    last = pct;
    fprintf(stderr, "\r%s: %3d%%", label ? (const char *)label : "working", pct);
    fflush(stderr);
}

void cli_progress_done(void *label) {
    if (!progress_enabled()) return;
    fprintf(stderr, "\r%s: done\n", label ? (const char *)label : "working");
}

/* The family a configuration belongs to, for summaries of what is missing. */
static int config_family(const ramp_config *c) {
    if (c->rows > 64) return 0;
    if (c->splitk > 1) return 1;
    if (c->two_phase) return 2;
    return 3;
}

int cli_space_coverage(const ramp_timing *t, FILE *f, int only_gaps) {
    static const char *family[] = {"wide (128 rows)", "split-K", "narrow two-phase", "other"};
    ramp_device_limits lim;
    ramp_device_limits_h200(&lim);
    ramp_config *space = NULL;
    int n = 0;
    if (ramp_config_space_for((ramp_kernel_version)t->kernel, &t->geom, &lim, &space, &n) != RAMP_OK)
        return -1;
    int timed = 0, missing[4] = {0};
    char first[4][64];
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (int c = 0; c < t->nconfigs && !found; c++) found = ramp_config_equal(&space[i], &t->configs[c]);
        if (found) {
            timed++;
            continue;
        }
        const int fam = config_family(&space[i]);
        if (missing[fam]++ == 0) ramp_config_name(&space[i], first[fam], sizeof first[fam]);
    }
    free(space);
    const char *k = ramp_kernel_version_name((ramp_kernel_version)t->kernel);
    if (timed == n && !only_gaps)
        fprintf(f, "  space: all %d configurations of kernel %s's space for this geometry are timed\n", n, k);
    if (timed < n) {
        fprintf(f, "%s%d of the %d configurations of kernel %s's space for this geometry are timed; "
                   "a plan fit on it cannot choose the other %d:",
                only_gaps ? "note: " : "  space: ", timed, n, k, n - timed);
        for (int fam = 0, sep = 0; fam < 4; fam++)
            if (missing[fam])
                fprintf(f, "%s %d %s (%s%s)", sep++ ? "," : "", missing[fam], family[fam], first[fam],
                        missing[fam] > 1 ? ", ..." : "");
        fputc('\n', f);
    }
    if (t->nconfigs > timed && !only_gaps)
        fprintf(f, "  (%d timed configurations are not in the space any more)\n", t->nconfigs - timed);
    return n - timed;
}
