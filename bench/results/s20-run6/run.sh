#!/usr/bin/env bash
# s20-run6: why narrow entries slow down inside a polymorphic kernel whose menu
# holds a wide entry (s20-run5: r48/r64 poly/alone 1.21-1.25 at 1,024 uniform
# against 1.08 in a menu of narrow entries). The old Qwen3-30B EP8 v2 plan's
# menu (six narrow entries) with entry 0 replaced: p0 none, p1 a fused wide
# tile of 219.7 KB shared memory (r128.w128.s4), p2 a two-phase wide tile
# (220 KB and a second kernel, r128.w128.s3.ph2), p3 a fused wide tile of
# 186 KB, below r64.w256.s4's 188 KB (r128.w256.s3). bench_layer's poly[i]
# rows force every entry inside the polymorphic kernel.
set -u
R=bench/results/s20-run6
tools/gpu-check env deps build > /tmp/gc-build.log 2>&1 || { tail -20 /tmp/gc-build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
mkdir -p /tmp/r6
for p in p0 p1 p2 p3; do
  mkdir -p /tmp/r6/$p
  ./build-gpucheck/bench_layer --plan $R/plan-$p.json --dataset bench/results/s20-run5/qwen3-30b-ep8-v2.safetensors \
    --out-dir /tmp/r6/$p --reps 20 --kernel v2 --flush read --tokens 512,1024,4096 > /tmp/r6/$p/log.txt 2>&1
  echo "$p exit $?"
  grep -E '^polymorphic|median' /tmp/r6/$p/log.txt
done
