#!/usr/bin/env bash
# s22-run1: the polymorphic kernel split into a chain (poly_split 1 and 2;
# kernels/moe_v2.md, session 22). gpu-check's split step: test_gpu_layer on
# both splits (FP8, BF16), memcheck and racecheck, then bench_layer --split
# 1,2 on three plans with fused and two-phase entries: Qwen3-30B EP8's
# shipped menu plus the wide .ph2.tx tile (s21-run4's plan, s20-run5's
# dataset), and the shipped DeepSeek-V3 and Mixtral-8x22B EP8 plans.
set -u
R=bench/results/s22-run1
export SPLIT_PLANS="$R/plan-qwen3-30b-ep8-tx.json|bench/results/s20-run5/qwen3-30b-ep8-v2.safetensors
$R/plan-deepseek-v3-ep8.json|data/timing/deepseek-v3-ep8-v2.safetensors
$R/plan-mixtral-8x22b-ep8.json|data/timing/mixtral-8x22b-ep8-v2.safetensors"
export SPLIT_PLANS=$(echo $SPLIT_PLANS)
export SPLIT_PARTS=${SPLIT_PARTS:-"bench test"} SPLIT_ROUTINGS=${SPLIT_ROUTINGS:-100}
OUT=${OUT:-/tmp/out} tools/gpu-check env deps build split
