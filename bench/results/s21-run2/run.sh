#!/usr/bin/env bash
# s21-run2: s21-run1 found that the phase-2 kernel, which returns at once for
# a fused choice, costs r48/r64.w256.s4 8-13 us and r8/r24 1-4. Two more rows:
# poly-d1 (the phase-2 kernel with one block) and alone+d (the entry's own
# kernel, then the phase-2 kernel): is it the second kernel's blocks, or what
# the first leaves behind?
set -u
tools/gpu-check env deps build > /tmp/gc-build.log 2>&1 || { tail -20 /tmp/gc-build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
O=${OUT:-/tmp/out}; mkdir -p /tmp/r2/s20-run5
./build-gpucheck/bench_layer --plan bench/results/s20-run5/plan-qwen3-30b-ep8-v2.json \
  --dataset bench/results/s20-run5/qwen3-30b-ep8-v2.safetensors \
  --out-dir /tmp/r2/s20-run5 --reps 20 --kernel v2 --flush read --tokens 1024,4096 > /tmp/r2/s20-run5/log.txt 2>&1
echo "exit $?"
tar czf $O/s21-run2.tgz -C /tmp r2
