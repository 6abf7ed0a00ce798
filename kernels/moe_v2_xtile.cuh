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
 * In the polymorphic kernel's module (moe_poly_v2.cuh; session 18) it runs
 * between the selection kernel and the MoE kernel, both launches with
 * programmatic dependent launch: choice != 0 points at the selection's
 * chosen entry, and the copy is made only when bit `choice` of mask is set
 * (an entry with token rows by TMA: the grouping is then that entry's);
 * otherwise every block returns after its wait. choice = 0: always.
 *
 * Defines: RAMP_ROWS (slots per row tile in sorted_ids), RAMP_TOPK,
 * RAMP_ROW_BYTES (d x the element's bytes, a multiple of 16). Launch:
 * RAMP_MV2_XT_THREADS threads, one warp per row, grid = row tiles * 128 /
 * (RAMP_MV2_XT_THREADS / 32); rows past num_tiles * 128 return at once.
 */
#include "moe_v1_params.h"
#include "moe_v2_params.h" /* RAMP_MV2_XT_THREADS */

extern "C" __global__ void __launch_bounds__(RAMP_MV2_XT_THREADS)
    ramp_moe_v2_xtile(const ramp_moe_params prm, unsigned long long xt,
                      unsigned long long choice, unsigned mask) {
    /* the selection's outputs are complete past the wait; the MoE kernel
     * behind may start now: its own wait covers this grid's writes */
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
    if (choice) {
        const int c = *(const volatile int *)choice;
        if (c < 0 || c > 31 || !((mask >> c) & 1u)) return;
    }
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
