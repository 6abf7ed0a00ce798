#!/usr/bin/env bash
# s32-run3: s32-run1/run2 for BF16 Mixtral-8x22B EP8: (a) its v2 BF16 dataset
# on stage units (same traces, seeds, batches as the shipped BF16 file, so
# the same 320 loads); (b) ceilings and bench_layer (BF16, LAYER_UNITS=1) on
# the plan fit on the shipped row-major BF16 dataset; (c) the same on the
# plan fit on (a), then PyTorch's two-GEMM torch._grouped_mm MoE.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s32r3; rm -rf $W; mkdir -p $W/ds $W/rows $W/units
DATASETS_BF16=1 DATASETS_UNITS=1 DATASETS="mixtral-8x22b:EP8:8:v2" DATASETS_SECONDS=220 \
  timeout 250 tools/gpu-check env deps build datasets > $W/ds/gpu-check.txt 2>&1
echo "dataset exit $?"
cp build-gpucheck-logs/tables.txt build-gpucheck-logs/env.log $W/ds/ 2>/dev/null
cp build-gpucheck-logs/datasets/*.safetensors $W/ds/ 2>/dev/null
cp build-gpucheck-logs/datasets/mixtral-8x22b-ep8-v2-bf16-units.safetensors data/timing/ 2>/dev/null
tar czf $O/s32-run3.tgz -C /tmp s32r3
rm -f build-gpucheck/layer-loads*.json
LAYER_KERNEL=v2 LAYER_UNITS=1 LAYER_BF16=1 LAYER_MODELS="mixtral-8x22b-ep8-v2-bf16" \
  timeout 110 tools/gpu-check ceilings bench_layer > $W/rows/gpu-check.txt 2>&1
echo "rows plan exit $?"
cp -r build-gpucheck-logs/* $W/rows/
tar czf $O/s32-run3.tgz -C /tmp s32r3
rm -f build-gpucheck/layer-loads*.json
LAYER_KERNEL=v2 LAYER_UNITS=1 LAYER_BF16=1 LAYER_MODELS="mixtral-8x22b-ep8-v2-bf16-units" \
  PEER_ARGS="--impl torch-bf16" PEER_TIMEOUT=60 \
  timeout 140 tools/gpu-check bench_layer peer > $W/units/gpu-check.txt 2>&1
echo "units plan exit $?"
cp -r build-gpucheck-logs/* $W/units/
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
tar czf $O/s32-run3.tgz -C /tmp s32r3
tail -3 $W/ds/tables.txt; tail -4 $W/rows/gpu-check.txt; tail -4 $W/units/gpu-check.txt
