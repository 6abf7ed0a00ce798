#!/usr/bin/env bash
# s39-run1 call 5: are Mixtral-8x22B's memory-bound loads power-capped too?
# Kernel v2 alone on 16, 128 and 256 pairs (the narrow two-phase entry and
# the wide one, row-major), launched back to back under nvidia-smi's
# samples (gpu-check step power), then the same with the usual read flush
# (times only). Predicted: 16 pairs below the cap (a stream alone drew ~611
# W in call 1, at 1,980 MHz), 256 pairs (compute-bound, ~1,000 TFLOP/s of
# padded math) at it.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s39r5; rm -rf $W; mkdir -p $W/flush
trap 'tar czf $O/s39-run1-call5.tgz -C /tmp s39r5' EXIT
V=m:r32.w128.s4.u1.k4,m:r128.w128.s3.u1.k4
POWER_WGMMA_ARGS="--forms ss.a2.t,ss.a2.h --n 128 --w 2 --grids 1 --reps 40 --target-ms 25" \
  POWER_MOE_VARIANTS=$V POWER_MOE_LOADS=m16,m128,m256 POWER_MOE_REPS=8000 \
  tools/gpu-check env deps build power > $W/gpu-check.txt 2>&1
echo "gpu-check exit $?"; cp -r build-gpucheck-logs $W/gpu-check-logs
sed -n '/^power (exit/,$p' $W/gpu-check-logs/tables.txt
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck
RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=readflush RAMP_MV2_BENCH_VARIANTS=$V \
  RAMP_MV2_BENCH_LOADS=m16,m128,m256 timeout 200 ./bench_moe_v2 $W/flush 200 > $W/flush/bench.txt 2>&1
echo "read flush exit $?"; grep wall $W/flush/bench.txt | awk '{print $1, $3, $5, $6}'
