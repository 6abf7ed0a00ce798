/*
 * check.h - the tests' assertions: each failure prints file, line and the
 * failed condition with values, and the test exits non-zero at the end.
 */
#ifndef RAMP_CHECK_H
#define RAMP_CHECK_H

#include "ramp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures = 0;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,         \
                    __LINE__, #cond);                                      \
            check_failures++;                                              \
        }                                                                  \
    } while (0)

#define CHECK_OK(expr)                                                     \
    do {                                                                   \
        ramp_status check_s_ = (expr);                                     \
        if (check_s_ != RAMP_OK) {                                         \
            fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__,       \
                    __LINE__, #expr, ramp_status_name(check_s_),           \
                    ramp_last_error());                                    \
            check_failures++;                                              \
        }                                                                  \
    } while (0)

/* Expects a specific error status and a non-empty message. */
#define CHECK_ERR(expr, status)                                            \
    do {                                                                   \
        ramp_status check_s_ = (expr);                                     \
        if (check_s_ != (status) || ramp_last_error()[0] == '\0') {        \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s\n",        \
                    __FILE__, __LINE__, #expr, ramp_status_name(check_s_), \
                    ramp_status_name(status));                             \
            check_failures++;                                              \
        }                                                                  \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                 \
    do {                                                                   \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);    \
        if (check_a_ != check_b_) {                                        \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s = %lld, %s = %lld\n", \
                    __FILE__, __LINE__, #a, check_a_, #b, check_b_);       \
            check_failures++;                                              \
        }                                                                  \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                              \
    do {                                                                   \
        double check_a_ = (a), check_b_ = (b);                             \
        if (!(fabs(check_a_ - check_b_) <= (tol))) {                       \
            fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.9g, %s = %.9g (tol %g)\n", \
                    __FILE__, __LINE__, #a, check_a_, #b, check_b_, (double)(tol)); \
            check_failures++;                                              \
        }                                                                  \
    } while (0)

static inline int check_finish(const char *name) {
    if (check_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

/* Whether `name` is an item of the comma-separated `list` (whole items:
 * "mixtral" does not select "mixtral-8x22b"). */
static inline int check_listed(const char *list, const char *name) {
    const size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* The items of `list` that are none of names[0..count): printed to stderr
 * with the names there are, and counted, so that a misspelt selection in an
 * environment variable fails a test instead of skipping what it meant. */
static inline int check_list_unknown(const char *var, const char *list, const char *const *names,
                                     int count) {
    int bad = 0;
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        const int len = end ? (int)(end - p) : (int)strlen(p);
        int known = 0;
        for (int i = 0; i < count && !known; i++)
            known = (int)strlen(names[i]) == len && strncmp(p, names[i], (size_t)len) == 0;
        if (!known) {
            fprintf(stderr, "%s: '%.*s' is not one of:", var, len, p);
            for (int i = 0; i < count; i++) fprintf(stderr, " %s", names[i]);
            fprintf(stderr, "\n");
            bad++;
        }
        p = end ? end + 1 : NULL;
    }
    return bad;
}

/* Per-test scratch directory (build/test-tmp under CTest). */
static inline const char *check_tmpdir(void) {
    const char *d = getenv("RAMP_TEST_TMP");
    return d && *d ? d : "/tmp";
}

/* Fresh seed per run unless RAMP_TEST_SEED pins it; printed so a failure can
 * be replayed. */
static inline unsigned long long check_seed(void) {
    const char *s = getenv("RAMP_TEST_SEED");
    unsigned long long seed;
    if (s && *s) seed = strtoull(s, NULL, 0);
    else {
        FILE *f = fopen("/dev/urandom", "rb");
        if (!f || fread(&seed, sizeof seed, 1, f) != 1) seed = 12345;
        if (f) fclose(f);
    }
    printf("seed %llu (set RAMP_TEST_SEED to replay)\n", seed);
    return seed;
}

#endif
