#!/usr/bin/env bash
# s35-run1 call 5: phase 2 in 5 K parts of unequal length (25 or 26 of
# Mixtral's 128 K blocks): 24 chunks x 5 = 120 tiles in one wave, where 4
# parts run 96 and leave 36 SMs idle. Call 4 showed the wide tile's phase 2
# at one row tile streaming W2 at 2.55 TB/s on 96 CTAs (3 stages each) and
# its math alone 41.8 us; predicted with 120 CTAs ~38-40 us instead of 47.8.
# Correct first: test_gpu_moe_v2 two-phase with P2K 5 on all five models
# (narrow and wide tiles; row-major and units), memcheck on Mixtral; then
# the kernel alone, both launches and phase 2 alone, 4 against 5 parts.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s35r1e; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
cd build-gpucheck
CF=r16.w128.s4,r32.w128.s4,r64.w128.s4,r128.w128.s4,r128.w256.s3
t() { # name, env...
  local n=$1; shift
  env RAMP_TEST_TMP=/tmp/s35tt RAMP_MOE_CONFIGS=$CF RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_P2K=5 "$@" \
    timeout 150 ./test_gpu_moe_v2 > $W/test-$n.txt 2>&1
  echo "test $n exit $? ($(grep -E '^test_gpu_moe_v2' $W/test-$n.txt | tail -1))"
}
t k5
t k5-units RAMP_MOE_V2_TILED=3
env RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_P2K=5 RAMP_MOE_V2_TILED=3 RAMP_MOE_V2_MODELS=mixtral-8x22b \
  RAMP_MOE_CONFIGS=r16.w128.s4,r128.w128.s4 RAMP_MOE_TOKENS=24 RAMP_MOE_V2_NO_V1=1 timeout 120 \
  compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_moe_v2 > $W/k5-memcheck.txt 2>&1
echo "memcheck exit $? ($(grep -m1 -E 'ERROR SUMMARY' $W/k5-memcheck.txt))"
V=
for r in r16.w128.s4 r32.w128.s4 r64.w128.s4; do V=$V,m:$r.t3.u1.k4,m:$r.t3.u1.k5; done
V=$V,m:r32.w128.s4.t3.u3.k4,m:r32.w128.s4.t3.u3.k5
for r in r128.w128.s3 r128.w128.s4; do V=$V,m:$r.t3.u1.k4.y1,m:$r.t3.u1.k5.y1; done
V=$V,m:r128.w128.s3.t3.u3.k4.y1,m:r128.w128.s3.t3.u3.k5.y1
RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=k5 RAMP_MV2_BENCH_VARIANTS=${V#,} \
  RAMP_MV2_BENCH_LOADS=m16,m64,m128,m256 timeout 240 ./bench_moe_v2 $W 30 > $W/bench.txt 2>&1
echo "bench exit $?"
cd ..
tar czf $O/s35-run1-call5.tgz -C /tmp s35r1e
grep -h "violat" $W/test-*.txt | grep total
grep grid $W/bench.txt | awk '{print $1, $3, $5, $11}'
