#!/usr/bin/env bash
# s32-run1: the v2 timing datasets of DeepSeek-V3 and Mixtral-8x22B EP8 (FP8)
# re-measured on weights in stage units (`ramp bench --weights units`,
# gpu-check DATASETS_UNITS=1): the same traces, seeds and batches as the
# shipped row-major datasets (s18-run4), so the same 320 loads each.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s32r1; rm -rf $W; mkdir -p $W
DATASETS="deepseek-v3:EP8:8:v2 mixtral-8x22b:EP8:8:v2" DATASETS_UNITS=1 DATASETS_SECONDS=470 \
  timeout 570 tools/gpu-check env deps build datasets > $W/gpu-check.txt 2>&1
echo "datasets exit $?"
cp build-gpucheck-logs/tables.txt build-gpucheck-logs/env.log $W/ 2>/dev/null
cp build-gpucheck-logs/datasets/*.safetensors $W/ 2>/dev/null
tar czf $O/s32-run1.tgz -C /tmp s32r1
ls -la $W; tail -n 6 $W/tables.txt
