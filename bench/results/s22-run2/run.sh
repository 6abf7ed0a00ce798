#!/usr/bin/env bash
# s22-run2: the polymorphic kernel split by cluster size (poly_split 3;
# kernels/moe_v2.md, session 22): entries on one CTA in kernels apart from
# split-K and multicast ones, whose cluster launch caps the grid.
# test_gpu_layer (FP8, BF16), memcheck and racecheck, then bench_layer
# --split 3 on the shipped plans whose menus mix both: Mixtral-8x22B EP8
# (FP8 and BF16), OLMoE EP16, Qwen3-30B EP32.
set -u
R=bench/results/s22-run2
export SPLIT_PLANS="$R/plan-mixtral-8x22b-ep8.json|data/timing/mixtral-8x22b-ep8-v2.safetensors
$R/plan-mixtral-8x22b-ep8-v2-bf16.json|data/timing/mixtral-8x22b-ep8-v2-bf16.safetensors
$R/plan-olmoe-ep16-v2.json|data/timing/olmoe-ep16-v2.safetensors
$R/plan-qwen3-30b-ep32-v2.json|data/timing/qwen3-30b-ep32-v2.safetensors"
export SPLIT_PLANS=$(echo $SPLIT_PLANS)
export SPLIT_PARTS=${SPLIT_PARTS:-"bench test sanitize"} SPLIT_ROUTINGS=${SPLIT_ROUTINGS:-100}
export SPLIT_MODES=${SPLIT_MODES:-3} SPLIT_BENCH=${SPLIT_BENCH:-3}
OUT=${OUT:-/tmp/out} tools/gpu-check env deps build split
