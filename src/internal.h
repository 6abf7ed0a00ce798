/*
 * internal.h - helpers shared by libramp's sources; not installed.
 *
 * Errors: a failing function records "file:line: message" for
 * ramp_last_error() and returns its status. Use
 *   RAMP_FAIL(status, "fmt", ...)       record and return
 *   RAMP_CHECK(cond, status, "fmt", ...) fail unless cond holds
 *   RAMP_TRY(expr)                       forward an error status unchanged
 */
#ifndef RAMP_INTERNAL_H
#define RAMP_INTERNAL_H

#include "ramp.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>

/* Records the message (printf-style) and returns s. */
ramp_status ramp_set_error(ramp_status s, const char *file, int line,
                           const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
void ramp_clear_error(void);

#define RAMP_FAIL(status, ...) \
    return ramp_set_error((status), __FILE__, __LINE__, __VA_ARGS__)

#define RAMP_CHECK(cond, status, ...)                                   \
    do {                                                                \
        if (!(cond)) RAMP_FAIL((status), __VA_ARGS__);                  \
    } while (0)

#define RAMP_TRY(expr)                                                  \
    do {                                                                \
        ramp_status ramp_try_s_ = (expr);                               \
        if (ramp_try_s_ != RAMP_OK) return ramp_try_s_;                 \
    } while (0)

/* calloc that records RAMP_ERR_OUT_OF_MEMORY; returns NULL on failure. */
void *ramp_calloc(size_t count, size_t size);

/* Deterministic RNG (xoshiro256**, seeded by splitmix64): the same seed gives
 * the same stream on every platform. */
typedef struct { uint64_t s[4]; } ramp_rng;
void ramp_rng_seed(ramp_rng *r, uint64_t seed);
uint64_t ramp_rng_next(ramp_rng *r);
double ramp_rng_uniform(ramp_rng *r);            /* [0, 1) */
double ramp_rng_normal(ramp_rng *r);             /* N(0, 1) */
double ramp_rng_exponential(ramp_rng *r, double rate);
double ramp_rng_gamma(ramp_rng *r, double shape); /* scale 1 */
uint32_t ramp_rng_below(ramp_rng *r, uint32_t n); /* uniform in [0, n) */

/* A 64-bit finaliser (murmur3's): derives independent seeds from ids. */
static inline uint64_t ramp_mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* A graph switch node during a stream capture (gpu.c; CUDA 12.8+ drivers):
 * the layer's poly_split 5 runs only the chosen entry's kernels. Order:
 * ramp_switch_handle (the value a kernel sets on every launch, `bodies` =
 * no body until it first does), the kernel that sets it, ramp_switch_add (the node after what the
 * stream captured so far), then per body ramp_switch_body_begin, the body's
 * launches on `body_stream`, ramp_switch_body_end. */
typedef struct {
    unsigned long long handle;
    unsigned bodies;
    void **body_graphs; /* the driver's CUgraph array, valid while the node lives */
} ramp_switch;
ramp_status ramp_stream_capturing(ramp_gpu *gpu, ramp_stream stream, int *capturing);
ramp_status ramp_switch_handle(ramp_gpu *gpu, ramp_stream stream, unsigned bodies,
                               ramp_switch *sw);
ramp_status ramp_switch_add(ramp_gpu *gpu, ramp_stream stream, ramp_switch *sw);
ramp_status ramp_switch_body_begin(ramp_gpu *gpu, const ramp_switch *sw, unsigned body,
                                   ramp_stream body_stream);
ramp_status ramp_switch_body_end(ramp_gpu *gpu, ramp_stream body_stream);

#endif /* RAMP_INTERNAL_H */
