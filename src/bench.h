/*
 * bench.h - internals of the timing sweeps (bench.c) that the tests check on
 * the CPU: the router output the GPU backend synthesizes for a per-GPU load.
 * Public API: ramp.h section 6a.
 */
#ifndef RAMP_BENCH_H
#define RAMP_BENCH_H

#include "internal.h"

#include <stdint.h>

/* Tokens the GPU backend routes a load over (ramp.h 6a):
 * batch_tokens clamped to [max(max_e n_e, ceil(P / min(k, nexp))), P],
 * P = sum of the load; 1 for an empty load. */
int64_t ramp_bench_tokens(int topk, int nexp, const int32_t *load,
                          int32_t batch_tokens);

/* Router output for a load over M tokens (M from ramp_bench_tokens, or any
 * M >= that lower bound): ids [M * topk], local experts 0..nexp-1 with
 * counts equal to load, each token's local experts first and distinct, the
 * token's other slots j naming remote experts local_experts + j. Tokens are
 * taken in an order drawn from (seed, load_index). scratch: [2 * M] int32. */
ramp_status ramp_bench_route(uint64_t seed, int64_t load_index, int topk,
                             int local_experts, int nexp, const int32_t *load,
                             int64_t M, int32_t *ids, int32_t *scratch);

#endif /* RAMP_BENCH_H */
