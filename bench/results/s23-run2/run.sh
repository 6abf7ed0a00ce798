#!/usr/bin/env bash
# s23-run2: poly_split 5 (a graph switch node over per-entry kernels) under
# compute-sanitizer memcheck and racecheck (test_gpu_layer, FP8, entries 0, 3
# and 5 forced and one graph replay), then bench_layer --split 5 again on the
# Mixtral-8x22B and Qwen3-30B EP8 plans with RAMP_SWITCH_ASSIGN_DEFAULT=0 (the
# switch's value not reset at each graph launch): does the reset cost part
# of the 6-11 us s23-run1 measured for the switch node?
set -u
R=bench/results/s23-run2
export SPLIT_PLANS="$R/plan-mixtral-8x22b-ep8.json|data/timing/mixtral-8x22b-ep8-v2.safetensors
$R/plan-qwen3-30b-ep8-tx.json|bench/results/s20-run5/qwen3-30b-ep8-v2.safetensors"
export SPLIT_PLANS=$(echo $SPLIT_PLANS)
export SPLIT_MODES=5 SPLIT_BENCH=5
OUT=${OUT:-/tmp/out} SPLIT_PARTS=sanitize tools/gpu-check env deps build split
cp build-gpucheck-logs/tables.txt "${OUT:-/tmp/out}/tables-sanitize.txt" # the next run restarts it
OUT=${OUT:-/tmp/out} SPLIT_PARTS=bench RAMP_SWITCH_ASSIGN_DEFAULT=0 tools/gpu-check split
