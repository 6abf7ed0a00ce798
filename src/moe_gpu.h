/*
 * moe_gpu.h - host glue of the fused MoE kernel v1 (kernels/moe_v1.cuh):
 * the NVRTC defines of a configuration, its compilation (cached on disk by
 * jit.c), its measured resources, and launches.
 *
 * A variant = configuration + per-GPU geometry + input kind. RAMP_PERSISTENT
 * changes no device code in v1 (every block strides over tiles; only the
 * grid differs), so plain and persistent variants share one binary.
 */
#ifndef RAMP_MOE_GPU_H
#define RAMP_MOE_GPU_H

#include "internal.h"

#include "../kernels/moe_v1_params.h"

typedef struct {
    ramp_config cfg;
    ramp_geometry geom; /* experts = local experts, bf16 = precision */
    int xbf16;          /* FP8 layers: hidden states arrive as BF16 */
} ramp_moe_variant;

#define RAMP_MOE_MAX_DEFINES 21 /* v2: 9 always + 11 options at most (moe_v2.c) */

/* Checks that the kernel supports the variant: RAMP_ERR_UNSUPPORTED saying
 * why (w does not divide h, d not a multiple of 128 * split-K, ...). */
ramp_status ramp_moe_v1_check(const ramp_moe_variant *v);

/* The -D definitions of a variant (into storage; defs point there). */
int ramp_moe_v1_defines(const ramp_moe_variant *v, char storage[][48],
                        const char **defs);
/* Program name for the JIT (cache files, messages). */
void ramp_moe_v1_program_name(const ramp_moe_variant *v, char *buf, size_t size);

/* Launch shape: threads per block and dynamic shared memory. */
ramp_moe_v1_layout ramp_moe_v1_layout_for(const ramp_moe_variant *v);

/* Compiles (or reads from the JIT cache). */
ramp_status ramp_moe_v1_compile(const ramp_moe_variant *v, ramp_jit_result **out);

/* Measured resources (measured = 1) from the ptxas report: registers,
 * shared memory (dynamic layout total), occupancy, validity (spills, fit). */
ramp_status ramp_moe_v1_resources(const ramp_moe_variant *v,
                                  const ramp_device_limits *lim,
                                  ramp_resources *out);

/* A compiled, loaded kernel for one variant. */
typedef struct ramp_moe_kernel ramp_moe_kernel;

ramp_status ramp_moe_kernel_create(ramp_gpu *gpu, const ramp_moe_variant *v,
                                   ramp_moe_kernel **out);
/* The same from an already compiled result (not freed). */
ramp_status ramp_moe_kernel_create_from(ramp_gpu *gpu, const ramp_moe_variant *v,
                                        const ramp_jit_result *jit,
                                        ramp_moe_kernel **out);
void ramp_moe_kernel_free(ramp_moe_kernel *k);
const ramp_resources *ramp_moe_kernel_resources(const ramp_moe_kernel *k);

/* Grid of a launch: max_tiles * h/w * splitk blocks (plain), or
 * min(that, sms * blocks_per_sm) (persistent). */
unsigned ramp_moe_kernel_grid(const ramp_moe_kernel *k, int max_tiles);

/* Split-K workspace sizes for max_tiles row tiles (0 without split-K): f32
 * partials and i32 counters (zero them once; the kernel keeps them zero). */
size_t ramp_moe_v1_ws_bytes(const ramp_moe_variant *v, int max_tiles);
size_t ramp_moe_v1_counter_bytes(const ramp_moe_variant *v, int max_tiles);

/* Queues one launch. p->max_tiles sizes the grid. */
ramp_status ramp_moe_kernel_launch(ramp_moe_kernel *k, const ramp_moe_params *p,
                                   ramp_stream stream);

#endif /* RAMP_MOE_GPU_H */
