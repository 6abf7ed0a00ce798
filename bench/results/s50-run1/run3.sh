#!/usr/bin/env bash
# s50-run1 call 3 (repo root, carry [".debs"]): the default build (no
# experiment switch) on a GPU after sessions 48-50's changes. Their kernel
# code sits behind switches and the default SASS was compared unchanged,
# but src/moe_v2.c now passes RAMP_MV2_DYN's 16 zeroed bytes to every
# launch (session 48) and every GPU check since ran with the switches on.
# Predicted: every check passes, memcheck 0 errors.
DEFINES=""
source bench/device_run.sh s50-run3
t() { ramp_check "$@"; }
t moe-v2 170 RAMP_MOE_V2_MODELS=qwen3-30b,olmoe ./test_gpu_moe_v2
t moe-v2-dsv3 90 RAMP_MOE_V2_MODELS=deepseek-v3 \
  RAMP_MOE_CONFIGS=r8.w128.s4,r8.w512.s4,r16.w256.s4,r128.w256.s3,r8.w256.s4.k2 ./test_gpu_moe_v2
t layer-default 60 RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=20 ./test_gpu_layer
t memcheck 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r8.w128.s4,r16.w128.s4.k2 \
  RAMP_MOE_TOKENS=12 RAMP_MOE_V2_NO_V1=1 compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_moe_v2
