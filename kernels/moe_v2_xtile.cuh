/*
 * moe_v2_xtile.cuh - the hidden states in tile order, for kernel v2's wide
 * tiles with token rows by TMA (ramp_moe_v2_opts.tma_x; moe_v2.md, session
 * 17): row 128 r + n of xt is the token of row tile r's slot n (x's row
 * slot / k; zeros for a padding slot), so that each up stage of the MoE
 * kernel loads its tile's 128 token rows as one TMA box, where a gather
 * takes 1,024 cp.asyncs (or 128 one-row boxes) per stage. Launched just
 * before the MoE kernel on the same stream; it reads what the selection
 * wrote (sorted_ids, num_tiles) as the MoE kernel does.
 *
 * Defines: RAMP_ROWS (slots per row tile in sorted_ids), RAMP_TOPK,
 * RAMP_ROW_BYTES (d x the element's bytes, a multiple of 16). Launch:
 * RAMP_MV2_XT_THREADS threads, one warp per row, grid = max_tiles * 128 /
 * (RAMP_MV2_XT_THREADS / 32); rows past num_tiles * 128 return at once.
 */
#include "moe_v1_params.h"
#include "moe_v2_params.h" /* RAMP_MV2_XT_THREADS */

extern "C" __global__ void __launch_bounds__(RAMP_MV2_XT_THREADS)
    ramp_moe_v2_xtile(const ramp_moe_params prm, unsigned long long xt) {
    const int row = blockIdx.x * (RAMP_MV2_XT_THREADS / 32) + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (row >= *(const int *)prm.num_tiles * 128) return;
    const int r = row >> 7, n = row & 127;
    int sl = n < RAMP_ROWS ? ((const int *)prm.sorted_ids)[(size_t)r * RAMP_ROWS + n] : -1;
    if (sl >= prm.num_tokens * RAMP_TOPK) sl = -1;
    const uint4 *src = (const uint4 *)((const unsigned char *)prm.x +
                                       (size_t)(sl < 0 ? 0 : sl / RAMP_TOPK) * RAMP_ROW_BYTES);
    uint4 *dst = (uint4 *)((unsigned char *)xt + (size_t)row * RAMP_ROW_BYTES);
    for (int i = lane; i < RAMP_ROW_BYTES / 16; i += 32)
        dst[i] = sl < 0 ? make_uint4(0u, 0u, 0u, 0u) : src[i];
}
