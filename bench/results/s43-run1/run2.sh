#!/usr/bin/env bash
# s43-run1 call 2 (repo root, carry [".debs"]): (a) size classes for several
# local experts on the GPU: test_gpu_layer kernel v2 FP8 (part 4 now also on
# a 16-expert layer, and every other part's 16-expert layers now run a class
# kernel for batches of <= 32 tokens), then under memcheck; (b) Qwen3-30B EP8
# and OLMoE EP8 (the re-measured dataset of call 1) in stacks at 16-128 tokens
# with size classes against the same stacks without (--one-menu 1);
# Predicted: (a) 0 mismatches, 0 choices unlike the whole menu's, 0 output
# violations, memcheck 0 errors. (b) Qwen3 at 16-64 tokens 1-3 us a layer
# faster with classes (s42-run1: the two wide two-phase entries cost the
# narrow ones 1-4 us), 128 tokens the same (the whole menu above 64);
# OLMoE's classes (up to 96 tokens) 1-3 us at 16-64.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s43r2; rm -rf $W; mkdir -p $W/layer $W/stack $W/datasets
trap 'tar czf $O/s43-run2.tgz -C /tmp s43r2' EXIT
LAYER_V2_KINDS=fp8 LAYER_V2_ROUTINGS=24 LAYER_V2_SAN_TOOLS=memcheck LAYER_V2_COMPILE=0 \
  LAYER_V2_TIMEOUT=220 LAYER_V2_SAN_TIMEOUT=120 timeout 360 \
  tools/gpu-check env deps build layer_v2 > $W/layer/gpu-check.txt 2>&1
echo "gpu-check layer_v2 exit $?"
cp build-gpucheck-logs/* $W/layer/ 2>/dev/null
grep -E "^size classes|^test_gpu_layer|ERROR SUMMARY|failed" build-gpucheck-logs/layer-v2-*.txt | head -20
STACK_MODELS="qwen3-30b-ep8-v2|0|16,32,64,128 olmoe-ep8-v2|0|16,32,64,128" STACK_ONE_MENU=1 STACK_MANY_CLASSES=1 \
  STACK_SELECT_PDL=0 STACK_TIMEOUT=110 timeout 225 tools/gpu-check stack > $W/stack/gpu-check.txt 2>&1
echo "gpu-check stack exit $?"
cp build-gpucheck-logs/stack-* build-gpucheck-logs/plan-stack-* build-gpucheck-logs/tables.txt $W/stack/ 2>/dev/null
grep -E "^[0-9]+ |one_menu" $W/stack/gpu-check.txt | head -40
