#!/usr/bin/env bash
# s36-run1 call 1: the wide FP8 tile's stage as four m64n64 groups, each
# half promoted while the next runs (RAMP_MV2_WHALF=1, moe_v2_wide.cuh),
# against today's two m64n128 groups each waited for before its promotion.
# Session 35 measured the wide tile's math alone at ~71% of the dense rate
# per SM (phase 1, 128 pairs: 49.1 us with no loads) and 55% in phase 2.
# Predicted: phase 1 math alone 49.1 -> ~40 us, phase 2 41.8 -> ~35; at
# 256 pairs (math-bound, multicast pairs) phase 1 102 -> ~88.
# (1) correct: test_gpu_moe_v2 on the wide tiles of all five models with
# WHALF=1 (fused, two-phase, units, multicast), memcheck and racecheck;
# (2) the kernel alone, WHALF 0 / 1 / 0 on one machine (A/B/A).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s36r1; rm -rf $W; mkdir -p $W/test $W/a0 $W/b1 $W/c0
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
cd build-gpucheck
mkdir -p /tmp/s36tt
CF=r128.w128.s4,r128.w128.s3,r128.w256.s3
t() { # name, env...
  local n=$1; shift
  env RAMP_TEST_TMP=/tmp/s36tt RAMP_MOE_CONFIGS=$CF RAMP_JIT_DEFINES=RAMP_MV2_WHALF=1 "$@" \
    timeout 100 ./test_gpu_moe_v2 > $W/test/$n.txt 2>&1
  echo "test $n exit $? ($(grep -E '^test_gpu_moe_v2' $W/test/$n.txt | tail -1))"
}
t fused
t split4-units RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_P2K=4 RAMP_MOE_V2_TILED=3
t split2-mcast RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_P2K=2 RAMP_MOE_V2_MCAST=1
for tool in memcheck racecheck; do
  env RAMP_JIT_DEFINES=RAMP_MV2_WHALF=1 RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_P2K=4 RAMP_MOE_V2_TILED=3 \
    RAMP_MOE_V2_MODELS=mixtral-8x22b RAMP_MOE_CONFIGS=r128.w128.s3 RAMP_MOE_TOKENS=40 \
    RAMP_MOE_V2_NO_V1=1 timeout 120 compute-sanitizer --tool $tool --error-exitcode 3 \
    ./test_gpu_moe_v2 > $W/test/$tool.txt 2>&1
  echo "$tool exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/test/$tool.txt))"
done
B=m:r128.w128.s3.t3
V=$B.u1.k4.y1,$B.u2.k4.y1,$B.u3.k4.y1,$B.u2.k4.y1.d6,$B.u3.k4.y1.d6
M=m:r128.w128.s4.t3
V=$V,$M.u1.k2.m1.y1,$M.u2.k2.m1.y1.d6,m:r128.w128.s3.t3.u1.k4.m1.y1
V=$V,d:r128.w128.s3.t3.u1.y1,d:r128.w128.s4.t3.u1.y1,d:r128.w128.s3.t3.u2.y1.d6
for run in a0 b1 c0; do
  RAMP_JIT_DEFINES=RAMP_MV2_WHALF=${run#?} RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=whalf${run#?} \
    RAMP_MV2_BENCH_VARIANTS=$V RAMP_MV2_BENCH_LOADS=m128,m256,m1024,4096b \
    timeout 150 ./bench_moe_v2 $W/$run 20 > $W/$run/bench.txt 2>&1
  echo "bench $run exit $?"
done
cd ..
tar czf $O/s36-run1-call1.tgz -C /tmp s36r1
for run in a0 b1 c0; do echo "== $run"; grep grid $W/$run/bench.txt | awk '{print $1, $3, $5, $11}'; done
