/*
 * moe_combine.cuh - the deterministic layer's third kernel
 * (ramp_layer_desc.deterministic; moe_v2.md, session 20): adds each token's
 * expert outputs, which phase 2 stored one row per token-slot (RAMP_MV2_DET)
 * instead of adding them into out with reductions, into out in a fixed
 * order. Floating-point addition is not associative, so reductions that
 * land in whatever order the blocks run give results that differ in the
 * last bits from run to run; here every element of out has one writer and
 * one order of additions, so a run's output has the same bits every time.
 *
 * Compiled into the polymorphic v2 module (src/moe_poly.c appends it to the
 * generated source) with the layer's RAMP_HIDDEN and RAMP_TOPK and, per menu
 * entry, its K parts (phase 2 stores one row per slot and K part):
 *   RAMP_COMBINE_ENTRIES  menu size
 *   RAMP_COMBINE_PARTS    {parts of entry 0, entry 1, ...}
 *
 *   out[t, :] += sum over parts q < P[choice], in order, of the sum over
 *                j < k, in order, of pws[q][t k + j][:] for the slots
 *                t k + j whose expert is on this GPU
 *
 * A slot is local by the selection kernel's rule (ids outside [0, E) and
 * other GPUs' experts skipped), so the rows read are exactly the rows
 * phase 2 wrote; rows of other slots are never read (the GPU test poisons
 * them). A block per token, grid-strided: the token's k ids are read once
 * (independent loads, a bit mask of its local slots), then each thread
 * walks the row's float4 columns with every slot's load of a K part in
 * flight before the adds (a first version chained id, branch and row load
 * per (token, 256 columns) item and was latency-bound: 60 us on
 * Mixtral's 893 pairs, s20-run2). The token count is the selection's
 * (meta[RAMP_SELECT_META_TOKENS], clamped there when it came from device
 * memory).
 */
#ifndef RAMP_MOE_COMBINE_CUH
#define RAMP_MOE_COMBINE_CUH

#define RAMP_COMBINE_THREADS 256

__constant__ int ramp_combine_parts[RAMP_COMBINE_ENTRIES] = RAMP_COMBINE_PARTS;

extern "C" __global__ void __launch_bounds__(RAMP_COMBINE_THREADS)
    ramp_moe_combine(float *out, const float *__restrict__ pws, const int *__restrict__ topk_ids,
                     const int *choice_p, const int *tokens_p, const int *__restrict__ local_of,
                     int first_expert, int local_experts, int experts, long long part_pairs) {
    /* launched with programmatic dependent launch after the phase-2 kernel
     * (which triggers at its start): wait for all of it, and its writes */
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    const int choice = *choice_p;
    if (choice < 0 || choice >= RAMP_COMBINE_ENTRIES) return; /* phase 2 ran nothing */
    const int parts = ramp_combine_parts[choice];
    const int tokens = *tokens_p, h4 = RAMP_HIDDEN / 4;
    for (int t = blockIdx.x; t < tokens; t += gridDim.x) {
        /* the token's local slots as a bit mask: its k ids are independent
         * loads, not a chain of k round trips */
        unsigned mask = 0;
#pragma unroll
        for (int j = 0; j < RAMP_TOPK; j++) {
            const int id = topk_ids[(size_t)t * RAMP_TOPK + j];
            const int local = id >= 0 && id < experts &&
                              (local_of ? local_of[id] >= 0
                                        : id >= first_expert && id < first_expert + local_experts);
            mask |= (unsigned)local << j;
        }
        if (!mask) continue; /* nothing of this token on this GPU: out untouched */
        const float4 *row = (const float4 *)(pws + (size_t)t * RAMP_TOPK * RAMP_HIDDEN);
        float4 *o = (float4 *)(out + (size_t)t * RAMP_HIDDEN);
#pragma unroll 2
        for (int col = threadIdx.x; col < h4; col += RAMP_COMBINE_THREADS) {
            /* per K part, every slot's load issued before the first add
             * (unrolled over the slots); the adds in K-part, then slot, order */
            float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
            for (int q = 0; q < parts; q++) {
                float4 v[RAMP_TOPK];
#pragma unroll
                for (int j = 0; j < RAMP_TOPK; j++)
                    v[j] = (mask >> j) & 1 ? row[((size_t)q * part_pairs + j) * h4 + col]
                                           : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
                for (int j = 0; j < RAMP_TOPK; j++)
                    if ((mask >> j) & 1) {
                        s.x += v[j].x;
                        s.y += v[j].y;
                        s.z += v[j].z;
                        s.w += v[j].w;
                    }
            }
            float4 a = o[col];
            a.x += s.x;
            a.y += s.y;
            a.z += s.z;
            a.w += s.w;
            o[col] = a;
        }
    }
}

#endif /* RAMP_MOE_COMBINE_CUH */
