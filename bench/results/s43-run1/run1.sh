#!/usr/bin/env bash
# s43-run1 call 1 (repo root, carry [".debs"]): (a) the Python binding's GPU
# test in its final form (session 42: per-element tolerance with the
# ambiguity bound and the float32 addition allowance; never run on a GPU);
# (b) the stale v2 datasets that time part of the space re-measured over all
# of it on their shipped loads: OLMoE-1B-7B EP8, EP4, EP16 (116/90/116 of
# 154) and Qwen3-30B TP2 (30 of 47).
# Predicted: (a) 8/8 in every form, refusals 4/4, worst error / tolerance
# < 0.5, every row's error RMS < 2%, memcheck 0 errors. (b) as session 42's
# Qwen3 datasets: the best time per load ~10% lower at <= 16 pairs where
# split-K was missing (EP4, TP2), ~30% lower at >= 2,049 pairs (wide
# two-phase tiles), the same between; EP8/EP16 (which had split-K) gain only
# at their largest loads.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s43r1; rm -rf $W; mkdir -p $W/py
trap 'tar czf $O/s43-run1.tgz -C /tmp s43r1' EXIT
PY_ITERS=16 SAN_TIMEOUT=150 timeout 240 tools/gpu-check env deps build python > $W/py/gpu-check.txt 2>&1
echo "gpu-check python exit $?"
cp -r build-gpucheck-logs/* $W/py/ 2>/dev/null
grep -A8 "python binding form" build-gpucheck-logs/tables.txt; grep -E "^worst|memcheck" build-gpucheck-logs/tables.txt
DATASETS="olmoe:EP8:30:v2 olmoe:EP4:30:v2 olmoe:EP16:30:v2 qwen3-30b:TP2:60:v2" \
  DATASETS_SECONDS=270 timeout 300 tools/gpu-check datasets > $W/gpu-check-datasets.txt 2>&1
echo "gpu-check datasets exit $?"
mkdir -p $W/datasets; cp -r build-gpucheck-logs/* $W/datasets/ 2>/dev/null
grep -A6 "^datasets" build-gpucheck-logs/tables.txt
