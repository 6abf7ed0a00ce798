/*
 * timeline.cuh - %globaltimer stamps that lay the layer's kernels on one time
 * axis (an experiment, session 26; off unless RAMP_TIMELINE is defined).
 *
 * Why: the layer takes 2-14 us more than its selection kernel and its
 * forced polymorphic kernel timed apart (bench/results/s26-run1), and event
 * timings of whole graphs cannot say which kernel starts or ends late.
 * RAMP_TIMELINE is the device address of a zeroed array of uint64 (bench_layer
 * --timeline allocates it and passes -DRAMP_TIMELINE=0x... to every compile
 * through RAMP_JIT_DEFINES); each block's stamps go to
 *   [(kernel * RAMP_TL_BLOCKS + block) * RAMP_TL_EVENTS + event]
 * kernel 0 the selection, 1..3 the polymorphic chain in launch order
 * (RAMP_TL_K, set by the generator before each kernel), 4 a v2 entry's
 * standalone kernel (moe_v2.cuh; 5 its phase-2 launch); events: 0 the
 * block starts, 1 past griddepcontrol.wait (the selection: its choice is
 * made; a phase-2 kernel with session 25's late wait: its top, as its
 * producers wait later, unstamped), 2 the producer warpgroup is done, 3 and 4 consumer warpgroups 1 and
 * 2 are done (the selection: 3, its end), 5 a block with no tile returns,
 * 6 a narrow entry's first weights requested, 7 its first stage landed
 * (consumer warpgroup 1 past its first wait; session 46, to split the time
 * between the wait and the first bytes); the polymorphic kernel's head
 * (session 47): 8 the choice and tile count arrived, 9 the entry's set-up
 * done (its first tile's expert arrived, the ring's barriers made), 10 past
 * the block barrier, 11 the producer past setmaxnreg. Slot 12 is no time:
 * the block's SM (%smid + 1), stored with event 0, to tell where the blocks
 * that end late ran; slot 13 is no time either: the tiles the block ran + 1
 * (a v2 entry's producer, at its end; session 48, for RAMP_MV2_DYN, where
 * blocks run as many as they claim).
 * Blocks past RAMP_TL_BLOCKS are not recorded. One store per stamp, by one
 * thread: the stamps cost a few instructions, not a barrier.
 */
#ifndef RAMP_TIMELINE_CUH
#define RAMP_TIMELINE_CUH

#define RAMP_TL_BLOCKS 160
#define RAMP_TL_EVENTS 14
#define RAMP_TL_SM_SLOT 12
#define RAMP_TL_TILES_SLOT 13 /* (the slots from RAMP_TL_SM_SLOT on hold no time) */
#define RAMP_TL_KERNELS 6

#ifdef RAMP_TIMELINE
static __device__ __forceinline__ void ramp_tl_stamp(int kernel, int event) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (blockIdx.x < RAMP_TL_BLOCKS && kernel < RAMP_TL_KERNELS) {
        volatile unsigned long long *b = (volatile unsigned long long *)(RAMP_TIMELINE) +
                                         ((unsigned)kernel * RAMP_TL_BLOCKS + blockIdx.x) * RAMP_TL_EVENTS;
        b[event] = t;
        if (event == 0) {
            unsigned sm;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
            b[RAMP_TL_SM_SLOT] = sm + 1ull;
        }
    }
}
/* a count, not a time, into slot `slot` (stored + 1: 0 is "not stamped") */
static __device__ __forceinline__ void ramp_tl_count(int kernel, int slot, unsigned n) {
    if (blockIdx.x < RAMP_TL_BLOCKS && kernel < RAMP_TL_KERNELS)
        ((volatile unsigned long long *)(RAMP_TIMELINE))[((unsigned)kernel * RAMP_TL_BLOCKS +
                                                          blockIdx.x) * RAMP_TL_EVENTS + slot] =
            n + 1ull;
}
#define RAMP_TL_COUNT(tid, kernel, slot, n)                                    \
    do {                                                                       \
        if (threadIdx.x == (tid)) ramp_tl_count((kernel), (slot), (n));        \
    } while (0)
/* stamp by the thread whose index in the block is tid */
#define RAMP_TL(tid, kernel, event)                                            \
    do {                                                                       \
        if (threadIdx.x == (tid)) ramp_tl_stamp((kernel), (event));            \
    } while (0)
/* ... once dep is known: a stamp that waits for a loaded value (a stamp
 * after a load that nothing uses yet would not) */
#define RAMP_TL_AFTER(tid, kernel, event, dep)                                 \
    do {                                                                       \
        if (threadIdx.x == (tid) && (dep) != -0x7fffffff)                      \
            ramp_tl_stamp((kernel), (event));                                  \
    } while (0)
#else
#define RAMP_TL_COUNT(tid, kernel, slot, n) ((void)0)
#define RAMP_TL(tid, kernel, event) ((void)0)
#define RAMP_TL_AFTER(tid, kernel, event, dep) ((void)0)
#endif

#endif /* RAMP_TIMELINE_CUH */
