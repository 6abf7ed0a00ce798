#!/usr/bin/env bash
# s36-run1 call 8: issue #5's FP8 memory-bound target for DeepSeek-V3 and
# Mixtral-8x22B EP8 (the two whose read floor is reachable) with L2 emptied
# by a read (bench_layer --flush read) instead of the usual 512 MiB write,
# whose ~50 MB of dirty lines drain while the layer reads. Call 5 had
# Mixtral's 64-token layer at 84.3 us with the read flush, 1.18x the copy
# floor, where the write flush gives 1.32x (s34-run1) and a pure read of
# the weights after the selection 1.15x by itself (select+read-bulk 81.9
# against 71.9 us, call 4 / call 5). The stage-unit layers on their own
# plans (as s32-run2 and s34-run1), both kernels by PDL (the default),
# the copy rate measured in the same call. PyTorch's times (write flush,
# s32-run2's peer.csv) only fill the table's torch column.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s36r8; rm -rf $W; mkdir -p $W
rm -f build-gpucheck/layer-loads*.json
LAYER_FLUSH=read LAYER_KERNEL=v2 LAYER_UNITS=1 LAYER_REPS=30 \
  LAYER_MODELS="deepseek-v3-ep8-v2-units mixtral-8x22b-ep8-v2-units" \
  timeout 560 tools/gpu-check env deps build ceilings bench_layer > $W/gpu-check.txt 2>&1
echo "targets (read flush) exit $?"
cp -r build-gpucheck-logs/* $W/ 2>/dev/null
cp build-gpucheck/layer-loads*.json $W/ 2>/dev/null
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
tar czf $O/s36-run1-call8.tgz -C /tmp s36r8
tail -5 $W/gpu-check.txt
