#!/usr/bin/env bash
# s23-run1: the polymorphic kernel as one kernel per entry, the chosen
# entry's run by a CUDA graph switch node that the selection kernel sets
# (poly_split 5; kernels/moe_v2.md, session 23). Each entry runs with its own
# grid and shared memory, and the others cost nothing (session 22: every idle
# kernel of a chain cost 1-5 us). test_gpu_layer (FP8, BF16) forced runs
# (outside a capture: every entry's kernels in turn) and graph replays (the
# switch), bench_layer --split 5 on the Mixtral-8x22B, Qwen3-30B (+ .tx) and
# DeepSeek-V3 EP8 plans, then memcheck and racecheck.
set -u
R=bench/results/s23-run1
export SPLIT_PLANS="$R/plan-mixtral-8x22b-ep8.json|data/timing/mixtral-8x22b-ep8-v2.safetensors
$R/plan-qwen3-30b-ep8-tx.json|bench/results/s20-run5/qwen3-30b-ep8-v2.safetensors
$R/plan-deepseek-v3-ep8.json|data/timing/deepseek-v3-ep8-v2.safetensors"
export SPLIT_PLANS=$(echo $SPLIT_PLANS)
export SPLIT_PARTS=${SPLIT_PARTS:-"test bench sanitize"} SPLIT_ROUTINGS=${SPLIT_ROUTINGS:-50}
export SPLIT_MODES=${SPLIT_MODES:-5} SPLIT_BENCH=${SPLIT_BENCH:-5}
OUT=${OUT:-/tmp/out} tools/gpu-check env deps build split
