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
