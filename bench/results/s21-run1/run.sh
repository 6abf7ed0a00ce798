#!/usr/bin/env bash
# s21-run1: where the polymorphic overhead of narrow entries comes from
# (s20-run5/6: r48/r64.w256.s4 poly/alone 1.09 in a menu of narrow entries,
# 1.21-1.25 with a two-phase entry on it). bench_layer's new v2 rows time each
# forced entry three more ways: poly-pdl (both kernels with PDL, as the layer
# launches them), poly-k1 (the first kernel only, no phase-2 launch) and
# poly-exact (the grid the entry alone runs). Plans: s20-run5's (a wide
# .ph2.tx entry) and s20-run6's p0 (six narrow fused entries).
set -u
tools/gpu-check env deps build > /tmp/gc-build.log 2>&1 || { tail -20 /tmp/gc-build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
O=${OUT:-/tmp/out}; mkdir -p /tmp/r1
for p in s20-run5/plan-qwen3-30b-ep8-v2.json s20-run6/plan-p0.json; do
  n=$(basename $(dirname $p)); mkdir -p /tmp/r1/$n
  ./build-gpucheck/bench_layer --plan bench/results/$p --dataset bench/results/s20-run5/qwen3-30b-ep8-v2.safetensors \
    --out-dir /tmp/r1/$n --reps 20 --kernel v2 --flush read --tokens 512,1024,4096 > /tmp/r1/$n/log.txt 2>&1
  echo "$n exit $?"
  grep -E '^polymorphic|median' /tmp/r1/$n/log.txt
done
tar czf $O/s21-run1.tgz -C /tmp r1
