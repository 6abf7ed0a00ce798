#!/usr/bin/env bash
# s39-run1 call 9: the power-capped ceiling as a curve. bench_wgmma's .h
# forms at N 128 with one and two consumer warpgroups and 1-4 weight pieces
# an iteration (--hbm-pieces): 64, 85, 128, 171, 256 and 512 FLOP a weight
# byte, bare and promoted, beside the same wgmmas fed from L2 (.t), under
# nvidia-smi's samples (gpu-check step power, no v2). Predicted: at 64-128
# FLOP/B the stream at HBM's 4.4-4.6 TB/s; above, the rate rising to
# ~1,150-1,250 TFLOP/s bare at 512 (half the stream's power of 256's).
# Call 8 did that with the pieces interleaved over the blocks (block b's
# k-th at k x 132 + b mod the buffer's pieces, which is block b + 4's
# (k - 993)-th): ss.a2.pr.h at 64 FLOP/B read "5.56 TB/s from HBM", blocks
# locked onto each other's L2 fills. Now each block streams its own
# contiguous share; the same shapes again, and the 256 FLOP/B figures of
# calls 3-6 re-measured with it (predicted: equal or lower).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s39r9; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s39-run1-call9.tgz -C /tmp s39r9' EXIT
POWER_WGMMA_ARGS="--forms ss.a2.t,ss.a2.pr.t,ss.a2.h,ss.a2.pr.h --n 128 --w 1,2 --grids 1 --reps 40 --target-ms 25 --hbm-pieces 1,2,3,4" \
  POWER_MOE=0 tools/gpu-check env deps build power > $W/gpu-check.txt 2>&1
echo "gpu-check exit $?"; cp -r build-gpucheck-logs $W/logs
grep -E "^(form|ss)" $W/logs/power-wgmma.txt
sed -n '/^power (exit/,$p' $W/logs/tables.txt
