#!/usr/bin/env bash
# s42-run1 call 2 (repo root, carry [".debs"]): (a) the Python binding's GPU
# test again with TC_EPS 2^-16, the per-row and whole-output RMS checks and a
# line of numbers per call; (b) Qwen3-30B EP8's layer in a stack on the plan
# fit on the re-measured dataset (call 1's part 3: all 97 configurations),
# from 64 to 4,096 tokens; (c) the other stale v2 datasets re-measured over
# the whole space on the same loads (Qwen3-30B EP8 balanced, which Table 8
# pairs with EP8; EP16; TP1; Phi-3.5-MoE EP8: each times 60 of 97).
# Predicted: (a) 8/8 in every form, worst row error RMS < 1.5%, ambiguous
# intermediates 1-5%; memcheck 0 errors. (b) 64-512 tokens as call 1's stack
# (the new configurations win only at <= 16 pairs and >= 513 in the dataset),
# 2,048-4,096 tokens on a wide two-phase tile (r128...ph2), ~30% under what
# the old plan's narrow tiles took in the dataset (73 against 108 us median).
# (c) as Qwen3 EP8's: ~10% off the best at the smallest loads, ~30% at the
# largest, the same between.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s42r2; rm -rf $W; mkdir -p $W/py
trap 'tar czf $O/s42-run2.tgz -C /tmp s42r2' EXIT
PY_ITERS=8 SAN_TIMEOUT=150 timeout 230 tools/gpu-check env deps build python > $W/py/gpu-check.txt 2>&1
echo "gpu-check python exit $?"
cp -r build-gpucheck-logs/* $W/py/ 2>/dev/null
grep -A8 "python binding form" build-gpucheck-logs/tables.txt; grep -E "^worst|memcheck" build-gpucheck-logs/tables.txt
STACK_MODELS="qwen3-30b-ep8-v2|0|64,128,256,512,1024,2048,4096" STACK_TIMEOUT=200 timeout 300 \
  tools/gpu-check stack > $W/gpu-check-stack.txt 2>&1
echo "gpu-check stack exit $?"
mkdir -p $W/stack; cp -r build-gpucheck-logs/* $W/stack/ 2>/dev/null
DATASETS="qwen3-30b:EP8:balanced:18:v2 qwen3-30b:EP16:6:v2 qwen3-30b:TP1:12:v2 phi-3.5-moe:EP8:8:v2" \
  DATASETS_SECONDS=280 timeout 330 tools/gpu-check datasets > $W/gpu-check-datasets.txt 2>&1
echo "gpu-check datasets exit $?"
mkdir -p $W/datasets; cp -r build-gpucheck-logs/* $W/datasets/ 2>/dev/null
grep -A6 "^datasets" build-gpucheck-logs/tables.txt
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
grep -A16 "^| tokens" $W/stack/tables.txt | cut -c1-200
