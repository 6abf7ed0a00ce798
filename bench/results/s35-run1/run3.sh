#!/usr/bin/env bash
# s35-run1 call 3: clusters of two (the only cluster gather all 128 of
# Mixtral's w-128 slices fit at once: 66 resident) still add each output
# element 64 ways; here with the output by bulk reductions (.b1, session 13)
# or float4 reductions on permuted W2 (.v1, row-major weights), correct
# first (test_gpu_moe_v2 on Mixtral and OLMoE, memcheck), then timed beside
# the layer's two-phase entries (.u1.k4) on units and row-major weights.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s35r1c; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
git log -1 --format=%H >> $W/env.txt
cd build-gpucheck
CF=r8.w128.s4,r16.w128.s4,r32.w128.s4
t() { # name, env...
  local n=$1; shift
  env RAMP_TEST_TMP=/tmp/s35tt RAMP_MOE_CONFIGS=$CF RAMP_MOE_V2_MODELS=mixtral-8x22b,olmoe \
    RAMP_MOE_V2_CGATHER=2 "$@" timeout 120 ./test_gpu_moe_v2 > $W/test-$n.txt 2>&1
  echo "test $n exit $? ($(grep -E '^test_gpu_moe_v2' $W/test-$n.txt | tail -1))"
}
t cg2-bulkred-units RAMP_MOE_V2_BULKRED=1 RAMP_MOE_V2_TILED=3
t cg2-red4 RAMP_MOE_V2_RED4=1
env RAMP_MOE_V2_CGATHER=2 RAMP_MOE_V2_BULKRED=1 RAMP_MOE_V2_MODELS=olmoe RAMP_MOE_CONFIGS=r16.w128.s4 \
  RAMP_MOE_V2_NO_V1=1 timeout 100 compute-sanitizer --tool memcheck \
  --error-exitcode 3 ./test_gpu_moe_v2 > $W/cg2-bulkred-memcheck.txt 2>&1
echo "memcheck exit $? ($(grep -m1 -E 'ERROR SUMMARY' $W/cg2-bulkred-memcheck.txt))"
V=m:r16.w128.s4.t3.u1.k4,m:r32.w128.s4.t3.u1.k4,m:r32.w128.s4.u1.k4,m:r32.w128.s4.t3.a2.d4
V=$V,m:r32.w128.s4.t3.a2,m:r32.w128.s4.t3.a2.b1,m:r16.w128.s4.t3.a2,m:r16.w128.s4.t3.a2.b1
V=$V,m:r32.w128.s4.a2.v1,m:r16.w128.s4.a2.v1,m:r32.w128.s4.t3.b1
RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=cgather3 RAMP_MV2_BENCH_VARIANTS=$V \
  RAMP_MV2_BENCH_LOADS=m16,m64 timeout 200 ./bench_moe_v2 $W 30 > $W/bench.txt 2>&1
echo "bench exit $?"
cd ..
tar czf $O/s35-run1-call3.tgz -C /tmp s35r1c
grep grid $W/bench.txt | awk '{print $1, $3, $5}'
