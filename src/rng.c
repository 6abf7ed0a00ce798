/*
 * rng.c - a small deterministic RNG (xoshiro256** seeded by splitmix64), so
 * that generated traffic and tests are identical on every platform and libc.
 */
#include "internal.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void ramp_rng_seed(ramp_rng *r, uint64_t seed) {
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t ramp_rng_next(ramp_rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double ramp_rng_uniform(ramp_rng *r) {
    return (double)(ramp_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

uint32_t ramp_rng_below(ramp_rng *r, uint32_t n) {
    /* Lemire's multiply-shift; the tiny bias is irrelevant here. */
    return (uint32_t)(((ramp_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

double ramp_rng_normal(ramp_rng *r) {
    /* Box-Muller, one value per call keeps the stream simple. */
    double u1 = ramp_rng_uniform(r), u2 = ramp_rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

double ramp_rng_exponential(ramp_rng *r, double rate) {
    double u = ramp_rng_uniform(r);
    return -log1p(-u) / rate;
}

double ramp_rng_gamma(ramp_rng *r, double shape) {
    /* Marsaglia-Tsang; shape < 1 boosted by U^(1/shape). */
    if (shape < 1.0) {
        double u = ramp_rng_uniform(r);
        if (u < 1e-300) u = 1e-300;
        return ramp_rng_gamma(r, shape + 1.0) * pow(u, 1.0 / shape);
    }
    double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x = ramp_rng_normal(r), v = 1.0 + c * x;
        if (v <= 0) continue;
        v = v * v * v;
        double u = ramp_rng_uniform(r);
        if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
        if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) return d * v;
    }
}
