#!/usr/bin/env bash
# s21-run3: s21-run2 found that any kernel after the polymorphic first kernel
# (even the phase-2 kernel with one block) costs r48/r64 6-9 us, and nothing
# after the entry's own kernel. Two questions: does an unrelated kernel (the
# selection) pay it too (poly-k1+sel against alone+sel), and is it the first
# kernel's griddepcontrol.launch_dependents (RAMP_POLY_NO_TRIGGER=1)?
set -u
tools/gpu-check env deps build > /tmp/gc-build.log 2>&1 || { tail -20 /tmp/gc-build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
O=${OUT:-/tmp/out}
for t in 0 1; do
  mkdir -p /tmp/r3/nt$t
  RAMP_POLY_NO_TRIGGER=$t ./build-gpucheck/bench_layer --plan bench/results/s20-run5/plan-qwen3-30b-ep8-v2.json \
    --dataset bench/results/s20-run5/qwen3-30b-ep8-v2.safetensors \
    --out-dir /tmp/r3/nt$t --reps 20 --kernel v2 --flush read --tokens 1024,4096 > /tmp/r3/nt$t/log.txt 2>&1
  echo "no-trigger $t exit $?"
done
tar czf $O/s21-run3.tgz -C /tmp r3
