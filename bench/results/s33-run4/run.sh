#!/usr/bin/env bash
# s33-run4: bench_layer still runs after its timing code was factored (timed_once, stat_of):
# Qwen3-30B EP8, 64 tokens, --one-shape 1 (a variant timed by time_pair, outputs compared).
set -u
timeout 80 tools/gpu-check env deps build > /dev/null 2>&1; echo "build exit $?"
B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
$B/ramp fit data/timing/qwen3-30b-ep8-v2.safetensors -o /tmp/p.json > /dev/null
mkdir -p $OUT/bl; cd $B && timeout 40 ./bench_layer --plan /tmp/p.json --dataset $OLDPWD/data/timing/qwen3-30b-ep8-v2.safetensors --out-dir $OUT/bl --tokens 64 --reps 10 --kernel v2 --one-shape 1 2>&1 | grep -E "oneshape|check|^ +ramp " | head
