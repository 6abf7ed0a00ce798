#!/usr/bin/env bash
# s32-run2: issue #5's FP8 targets on DeepSeek-V3 and Mixtral-8x22B EP8 with
# the plan fit on stage-unit times (s32-run1's datasets) beside the plan fit
# on row-major times, both served by the shipped layer (ramp) and the units
# layer (ramp-units), in one call: (a) ceilings, bench_layer on the row-major
# plans; (b) bench_layer on the units plans, then PyTorch's two-GEMM FP8 MoE
# on the same loads (the loads of both datasets are the same 320).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s32r2; rm -rf $W; mkdir -p $W/rows $W/units
rm -f build-gpucheck/layer-loads*.json
LAYER_KERNEL=v2 LAYER_UNITS=1 LAYER_MODELS="deepseek-v3-ep8-v2 mixtral-8x22b-ep8-v2" \
  timeout 250 tools/gpu-check env deps build ceilings bench_layer > $W/rows/gpu-check.txt 2>&1
echo "rows plans exit $?"
cp -r build-gpucheck-logs/* $W/rows/
tar czf $O/s32-run2.tgz -C /tmp s32r2
rm -f build-gpucheck/layer-loads*.json
LAYER_KERNEL=v2 LAYER_UNITS=1 LAYER_MODELS="deepseek-v3-ep8-v2-units mixtral-8x22b-ep8-v2-units" \
  PEER_ARGS="--impl torch-fp8-rowwise" PEER_TIMEOUT=100 \
  timeout 300 tools/gpu-check bench_layer peer > $W/units/gpu-check.txt 2>&1
echo "units plans exit $?"
cp -r build-gpucheck-logs/* $W/units/
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
tar czf $O/s32-run2.tgz -C /tmp s32r2
tail -4 $W/rows/gpu-check.txt; tail -4 $W/units/gpu-check.txt
