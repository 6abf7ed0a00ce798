#!/usr/bin/env bash
# s29-run5: weights in stage units, one bulk copy a stage (session 29).
# s29-run4: the read floor's bulk kernel reads 1 GiB at 3.85-3.88 TB/s in
# 16 KB requests (128 or 192 KB in flight) and at 4.57-4.61 in 32-64 KB
# requests (128 KB in flight), while kernel v2 streams its weights in 16 KB
# TMA boxes at ~4.0 (a 32 KB tensor box, `.e1`, changed nothing). Here each
# ring stage's 32 KB of weights is stored as one contiguous unit holding
# its shared-memory image (128-byte swizzle applied when packing;
# RAMP_MV2_TILED 3, `.t3`) and read by one cp.async.bulk. Prediction: the
# weight stream at the 32 KB bulk rate, phase 1 of Mixtral's 16 pairs by
# TMA alone 53 -> ~47 us, both launches ~85 -> ~77-80. Correct first:
# test_gpu_moe_v2 on stage units (every tile of the five models, fused, and
# two-phase on two) against the CPU reference and v1;
# memcheck and racecheck on Mixtral r32 two-phase.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s29r5; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
cd build-gpucheck
env RAMP_TEST_TMP=/tmp/s29tt RAMP_MOE_V2_TILED=3 timeout 150 ./test_gpu_moe_v2 > $W/test-t3.txt 2>&1
echo "test units exit $? ($(grep -m1 -E 'violation' $W/test-t3.txt))"
env RAMP_TEST_TMP=/tmp/s29tt RAMP_MOE_V2_TILED=3 RAMP_MOE_V2_SPLIT=1 \
  RAMP_MOE_V2_MODELS=mixtral-8x22b,qwen3-30b timeout 120 ./test_gpu_moe_v2 > $W/test-t3-split.txt 2>&1
echo "test units split exit $? ($(grep -m1 -E 'violation' $W/test-t3-split.txt))"
for tool in memcheck racecheck; do
  env RAMP_TEST_TMP=/tmp/s29tt RAMP_MOE_V2_MODELS=mixtral-8x22b RAMP_MOE_CONFIGS=r32.w128.s4 RAMP_MOE_TOKENS=24 \
    RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_TILED=3 RAMP_MOE_V2_NO_V1=1 timeout 100 compute-sanitizer --tool $tool \
    --error-exitcode 3 ./test_gpu_moe_v2 > $W/$tool-t3-split.txt 2>&1
  echo "$tool exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/$tool-t3-split.txt))"
done
V=
for t in "" .t3; do
  V=$V,m:r32.w128.s4.u1.k4$t,m:r32.w128.s4.u2$t,m:r32.w128.s4.u2$t.d2,m:r32.w128.s4.u3.k4$t
  V=$V,m:r32.w128.s4.u3.k4$t.d2,m:r64.w128.s4.u1.k4$t,m:r32.w128.s4$t.d2,m:r128.w128.s4.u1.k4$t
  V=$V,q:r8.w128.s4$t,q:r16.w256.s4$t,q:r32.w256.s4$t,q:r64.w256.s4$t
done
RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=units RAMP_MV2_BENCH_VARIANTS=${V#,} \
  RAMP_MV2_BENCH_LOADS=m16,m64,m256,m1024,64b,256b,1024b timeout 240 ./bench_moe_v2 $W 20 > $W/bench.txt 2>&1
echo "bench exit $?"
cd ..
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
tar czf $O/s29-run5.tgz -C /tmp s29r5
grep -E "^\| (mixtral|qwen)" $W/moe-v2-*-units.md | cut -d'|' -f2-10
