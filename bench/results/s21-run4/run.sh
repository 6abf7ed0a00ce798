#!/usr/bin/env bash
# s21-run4: Qwen3-30B EP8 over today's 97-configuration space (s20-run5's
# dataset): the shipped plan (60 configurations, greedy 6), s20-run5's greedy
# 6 (drops r16/r32.w256.s4 for the wide .ph2.tx tile) and the shipped menu
# plus the wide tile (`ramp fit --menu 7 --include ...`), on the 14 loads.
set -u
tools/gpu-check env deps build > /tmp/gc-build.log 2>&1 || { tail -20 /tmp/gc-build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
O=${OUT:-/tmp/out}; R=bench/results/s21-run4
for p in shipped greedy6 old6-tx; do
  mkdir -p /tmp/r4/$p
  ./build-gpucheck/bench_layer --plan $R/plan-$p.json --dataset bench/results/s20-run5/qwen3-30b-ep8-v2.safetensors \
    --out-dir /tmp/r4/$p --reps 20 --kernel v2 --flush read > /tmp/r4/$p/log.txt 2>&1
  echo "$p exit $?"
done
tar czf $O/s21-run4.tgz -C /tmp r4
