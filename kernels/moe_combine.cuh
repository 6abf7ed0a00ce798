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
 *   out[t, :] += sum over j < k, in order, of slot t k + j when its expert is
 *                on this GPU: sum over parts q < P[choice], in order, of
 *                pws[q][t k + j][:]
 *
 * A slot is local by the selection kernel's rule (ids outside [0, E) and
 * other GPUs' experts skipped), so the rows read are exactly the rows
 * phase 2 wrote; rows of other slots are never read (the GPU test poisons
 * them). Work items are (token, 256 float4 columns), grid-strided; the
 * token count is the selection's (meta[RAMP_SELECT_META_TOKENS], clamped
 * there when it came from device memory).
 */
#ifndef RAMP_MOE_COMBINE_CUH
#define RAMP_MOE_COMBINE_CUH

#define RAMP_COMBINE_THREADS 256

__constant__ int ramp_combine_parts[RAMP_COMBINE_ENTRIES] = RAMP_COMBINE_PARTS;

extern "C" __global__ void __launch_bounds__(RAMP_COMBINE_THREADS)
    ramp_moe_combine(float *out, const float *pws, const int *topk_ids, const int *choice_p,
                     const int *tokens_p, const int *local_of, int first_expert,
                     int local_experts, int experts, long long part_pairs) {
    const int choice = *choice_p;
    if (choice < 0 || choice >= RAMP_COMBINE_ENTRIES) return; /* phase 2 ran nothing */
    const int parts = ramp_combine_parts[choice];
    const int tokens = *tokens_p;
    const int h4 = RAMP_HIDDEN / 4, cb = (h4 + RAMP_COMBINE_THREADS - 1) / RAMP_COMBINE_THREADS;
    const long long items = (long long)tokens * cb;
    for (long long w = blockIdx.x; w < items; w += gridDim.x) {
        const int t = (int)(w / cb);
        const int col = (int)(w % cb) * RAMP_COMBINE_THREADS + (int)threadIdx.x;
        if (col >= h4) continue;
        float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
        int any = 0;
        for (int j = 0; j < RAMP_TOPK; j++) {
            const int id = topk_ids[(size_t)t * RAMP_TOPK + j];
            const int local = id >= 0 && id < experts &&
                              (local_of ? local_of[id] >= 0
                                        : id >= first_expert && id < first_expert + local_experts);
            if (!local) continue;
            any = 1;
            for (int q = 0; q < parts; q++) {
                const float4 v = ((const float4 *)(pws + ((size_t)q * part_pairs +
                                                          (size_t)t * RAMP_TOPK + j) *
                                                             RAMP_HIDDEN))[col];
                s.x += v.x;
                s.y += v.y;
                s.z += v.z;
                s.w += v.w;
            }
        }
        if (!any) continue; /* nothing of this token on this GPU: out untouched */
        float4 *o = (float4 *)(out + (size_t)t * RAMP_HIDDEN) + col;
        float4 a = *o;
        a.x += s.x;
        a.y += s.y;
        a.z += s.z;
        a.w += s.w;
        *o = a;
    }
}

#endif /* RAMP_MOE_COMBINE_CUH */
