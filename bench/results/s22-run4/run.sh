#!/usr/bin/env bash
# s22-run4: the polymorphic kernel split by tile width (poly_split 4): narrow
# entries (both phases) in kernels whose shared memory is theirs, wide tiles
# apart (s22-run3: with a wide tile on the menu the kernel's carve-out is
# 233 KB and Mixtral's narrow two-phase entries stream 5-13 us slower).
# bench_layer --split 4 on the shipped Mixtral-8x22B and DeepSeek-V3 EP8
# plans, then test_gpu_layer with split 4 (FP8, BF16).
set -u
R=bench/results/s22-run4
export SPLIT_PLANS="$R/plan-mixtral-8x22b-ep8.json|data/timing/mixtral-8x22b-ep8-v2.safetensors
$R/plan-deepseek-v3-ep8.json|data/timing/deepseek-v3-ep8-v2.safetensors"
export SPLIT_PLANS=$(echo $SPLIT_PLANS)
export SPLIT_PARTS=${SPLIT_PARTS:-"bench test"} SPLIT_ROUTINGS=${SPLIT_ROUTINGS:-50}
export SPLIT_MODES=${SPLIT_MODES:-4} SPLIT_BENCH=${SPLIT_BENCH:-4}
OUT=${OUT:-/tmp/out} tools/gpu-check env deps build split
