/*
 * bench_args.h - command-line handling every benchmark shares: --help, and
 * a clear refusal of unknown options or bad numbers before any GPU work
 * (a benchmark that opens the GPU first answers --help with "no GPU").
 * Header-only: each bench is one executable.
 */
#ifndef RAMP_BENCH_ARGS_H
#define RAMP_BENCH_ARGS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Positional arguments only, between min_pos and max_pos of them. Returns
 * -1 to go on, or main's exit code: 0 after --help / -h (usage on stdout),
 * 2 after an unknown option or a wrong count (message and usage on stderr). */
static inline int bench_args(int argc, char **argv, const char *name, const char *usage,
                             int min_pos, int max_pos) {
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "%s: unknown option %s\n%s", name, argv[i], usage);
            return 2;
        }
        npos++;
    }
    if (npos < min_pos || npos > max_pos) {
        fprintf(stderr, "%s: %d argument(s), expected %d to %d\n%s", name, npos, min_pos, max_pos,
                usage);
        return 2;
    }
    return -1;
}

/* An option that takes a value: -1 to go on when `opt` is one of known[0..n)
 * and `value` is not NULL; else main's exit code 2 after a message and the
 * usage on stderr ("unknown option", "needs a value"). */
static inline int bench_option(const char *name, const char *usage, const char *opt,
                               const char *value, const char *const *known, size_t n) {
    int is_known = 0;
    for (size_t j = 0; j < n; j++) is_known |= !strcmp(opt, known[j]);
    if (!is_known) {
        fprintf(stderr, "%s: unknown option %s\n%s", name, opt, usage);
        return 2;
    }
    if (!value) {
        fprintf(stderr, "%s: %s needs a value\n%s", name, opt, usage);
        return 2;
    }
    return -1;
}

/* A whole number >= min from text (argument `what`), or a message and 0. */
static inline int bench_int_arg(const char *name, const char *what, const char *text, long min,
                                int *out) {
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > 1000000000L) {
        fprintf(stderr, "%s: %s '%s': expected a whole number >= %ld\n", name, what, text, min);
        return 0;
    }
    *out = (int)v;
    return 1;
}

#endif
