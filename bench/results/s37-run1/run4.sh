#!/usr/bin/env bash
# s37-run1 call 4: issue #5's memory-bound target for Qwen3-30B and OLMoE EP8
# with L2 emptied by a read (bench_layer --flush read), as session 36 did for
# DeepSeek-V3 and Mixtral-8x22B. Their miss is argued by the measured floor
# (the selection, then a kernel that only reads the active weights: 1.74-2.38x
# and 1.98-2.10x the copy floor in s30-run3), measured under the write flush,
# whose ~50 MB of dirty lines drain while the layer reads; their 12-24 MB
# reads may be the loads it inflates most. Predicted: that floor lower by a
# few us, still above 1.2x on most loads (the selection's ~3-5 us against
# 3-6 us of weights). Shipped row-major layer and plans (fit by gpu-check from
# the shipped datasets, as s30-run3); the copy rate in the same call.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s37r4; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s37-run1-call4.tgz -C /tmp s37r4' EXIT
rm -f build-gpucheck/layer-loads*.json
LAYER_FLUSH=read LAYER_KERNEL=v2 LAYER_REPS=30 LAYER_MODELS="qwen3-30b-ep8-v2 olmoe-ep8-v2" \
  timeout 560 tools/gpu-check env deps build ceilings bench_layer > $W/gpu-check.txt 2>&1
echo "targets (read flush) exit $?"
cp -r build-gpucheck-logs/* $W/ 2>/dev/null
cp build-gpucheck/layer-loads*.json $W/ 2>/dev/null
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
tail -5 $W/gpu-check.txt
