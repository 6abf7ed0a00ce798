#!/usr/bin/env bash
# s36-run1 call 2: the gather through global memory (ggather G,
# RAMP_MV2_GGATHER; bench .jG): session 35's cluster gather without the
# cluster, so that groups of 4 or 8 blocks are not limited to 120 SMs.
# Predicted at 16-64 pairs on Mixtral-8x22B EP8: the fused tile's stream
# without output adds (s35: 74.5 us) + ~2-3 us of exchange latency hidden
# by the ring + 16-way adds (128 / 8) -> ~78-80 us, against 81.7-85 for the
# two-phase entries and 83.0 for cluster pairs with bulk reductions.
# (1) correct: test_gpu_moe_v2 with G 8, 4, 2 (units, row-major, bulk and
# float4 reductions, a capped grid that makes groups stride over tiles),
# memcheck and racecheck; (2) the kernel alone against the two-phase
# entries, the cluster pair, and the fused tile without output adds, twice.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s36r2; rm -rf $W; mkdir -p $W/test $W/a $W/b
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
cd build-gpucheck
mkdir -p /tmp/s36tt
CF=r8.w128.s4,r16.w128.s4,r32.w128.s4,r64.w128.s4,r16.w256.s4
t() { # name, env...
  local n=$1; shift
  env RAMP_TEST_TMP=/tmp/s36tt RAMP_MOE_CONFIGS=$CF "$@" timeout 120 ./test_gpu_moe_v2 > $W/test/$n.txt 2>&1
  echo "test $n exit $? ($(grep -E '^test_gpu_moe_v2' $W/test/$n.txt | tail -1))"
}
t gg8-units RAMP_MOE_V2_GGATHER=8 RAMP_MOE_V2_TILED=3
t gg4-bulkred RAMP_MOE_V2_GGATHER=4 RAMP_MOE_V2_BULKRED=1
t gg2-red4 RAMP_MOE_V2_GGATHER=2 RAMP_MOE_V2_RED4=1
for tool in memcheck racecheck; do
  env RAMP_MOE_V2_GGATHER=8 RAMP_MOE_V2_TILED=3 RAMP_MOE_V2_MODELS=mixtral-8x22b \
    RAMP_MOE_CONFIGS=r16.w128.s4 RAMP_MOE_TOKENS=40 RAMP_MOE_V2_NO_V1=1 timeout 150 \
    compute-sanitizer --tool $tool --error-exitcode 3 ./test_gpu_moe_v2 > $W/test/$tool.txt 2>&1
  echo "$tool exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/test/$tool.txt))"
done
V=m:r16.w128.s4.t3.u1.k4,m:r16.w128.s4.t3.u1.k5,m:r32.w128.s4.t3.u1.k4,m:r16.w128.s4.t3.a2.b1
V=$V,m:r16.w128.s4.t3,m:r16.w128.s4.t3.d4,m:r16.w128.s4.t3.j8,m:r16.w128.s4.t3.j8.b1
V=$V,m:r16.w128.s4.t3.j4.b1,m:r16.w128.s4.t3.j2.b1,m:r32.w128.s4.t3.j8
V=$V,m:r64.w128.s4.t3.j4,m:r16.w128.s4.t3.j8.d4
for run in a b; do
  RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=gg-$run RAMP_MV2_BENCH_VARIANTS=$V \
    RAMP_MV2_BENCH_LOADS=m16,m64,m128 timeout 200 ./bench_moe_v2 $W/$run 30 > $W/$run/bench.txt 2>&1
  echo "bench $run exit $?"
done
cd ..
tar czf $O/s36-run1-call2.tgz -C /tmp s36r2
for run in a b; do echo "== $run"; grep grid $W/$run/bench.txt | awk '{print $1, $3, $5}'; done
