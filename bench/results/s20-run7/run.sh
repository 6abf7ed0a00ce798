#!/usr/bin/env bash
# s20-run7: the first kernel asks for the second's shared memory (one carve-out
# for both) against each its own (RAMP_POLY_OWN_CARVEOUT=1), on s20-run6's p2
# plan (a two-phase wide entry beside five narrow ones) and p0 (none).
set -u
R=bench/results/s20-run6
tools/gpu-check env deps build > /tmp/gc-build.log 2>&1 || { tail -20 /tmp/gc-build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
mkdir -p /tmp/r7
for v in same own; do
  for p in p2 p0; do
    mkdir -p /tmp/r7/$p-$v
    RAMP_POLY_OWN_CARVEOUT=$([ $v = own ] && echo 1 || echo 0) ./build-gpucheck/bench_layer --plan $R/plan-$p.json \
      --dataset bench/results/s20-run5/qwen3-30b-ep8-v2.safetensors \
      --out-dir /tmp/r7/$p-$v --reps 20 --kernel v2 --flush read --tokens 512,1024,4096 > /tmp/r7/$p-$v/log.txt 2>&1
    echo "$p $v exit $?"
    grep -E '^polymorphic|median' /tmp/r7/$p-$v/log.txt
  done
done
