/*
 * select_cpu.h - internals shared by the selection kernel's CPU twin
 * (select_cpu.c) and its GPU driver (select_gpu.c). Public API: ramp.h 9.4.
 */
#ifndef RAMP_SELECT_CPU_H
#define RAMP_SELECT_CPU_H

#include "internal.h"

#include <stdint.h>

/* Most token-expert pairs (max_tokens * k) one selection may see: the staged
 * codes live in shared memory (2 bytes each). */
#define RAMP_SELECT_MAX_PAIRS (1 << 20)
#define RAMP_SELECT_MAX_LOCAL 1024
#define RAMP_SELECT_MAX_EXPERTS 65535
#define RAMP_SELECT_THETA_MAX 1e20f

/* map[E]: local index of every global expert, or -1. */
void ramp_select_build_map(const ramp_select_desc *d, int32_t *map);

/* Equation 3 for one entry on counts[local_experts], exactly as the kernel
 * evaluates it (integer features, float32 fmaf chain). */
float ramp_select_predict(const ramp_select_entry *e, int local_experts,
                          const int32_t *counts);

/* Compiles the selection kernel (entry "ramp_select") as selectors do:
 * group_only 0/1, warps 8, 16 or 32 (block = warps * 32 threads). */
ramp_status ramp_select_compile(int group_only, int warps, ramp_jit_result **out);

#endif /* RAMP_SELECT_CPU_H */
