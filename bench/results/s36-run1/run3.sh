#!/usr/bin/env bash
# s36-run1 call 3: the gather through global memory (ggather G,
# RAMP_MV2_GGATHER; bench .jG) after call 2, which measured it correct on
# row-major weights with float4 adds (G 2) and 1.4 us of output adds but
# 3.9 us of exchange at 16 pairs (gg8 79.0 us, its .d4 77.6, the fused tile's
# .d4 73.7). Changed: one fence after the consumers' barrier instead of one
# per thread; the peers' blocks in by cp.async, all in flight at once,
# instead of a loop of dependent loads per peer. Predicted: the exchange
# 3.9 -> ~1.5-2 us (gg8 ~77 us); with 5 stages (more W2 in the ring while
# the group waits) a little more.
# (1) correct: test_gpu_moe_v2 G 8 on units, G 4 with bulk reductions, G 2
# with float4 adds (valid configurations only: call 2's lists held some G
# refuses), memcheck and racecheck; (2) the kernel alone, twice.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s36r3; rm -rf $W; mkdir -p $W/test $W/a $W/b
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
cd build-gpucheck
mkdir -p /tmp/s36tt
t() { # name, configs, env...
  local n=$1 cf=$2; shift 2
  env RAMP_TEST_TMP=/tmp/s36tt RAMP_MOE_CONFIGS=$cf "$@" timeout 120 ./test_gpu_moe_v2 > $W/test/$n.txt 2>&1
  echo "test $n exit $? ($(grep -E '^test_gpu_moe_v2' $W/test/$n.txt | tail -1))"
}
t gg8-units r8.w128.s4,r16.w128.s4,r32.w128.s4 RAMP_MOE_V2_GGATHER=8 RAMP_MOE_V2_TILED=3
t gg4-bulkred r8.w128.s4,r16.w128.s4,r16.w256.s4 RAMP_MOE_V2_GGATHER=4 RAMP_MOE_V2_BULKRED=1
t gg2-red4 r8.w128.s4,r16.w128.s4,r32.w128.s4,r64.w128.s4,r16.w256.s4 RAMP_MOE_V2_GGATHER=2 RAMP_MOE_V2_RED4=1
for tool in memcheck racecheck; do
  env RAMP_MOE_V2_GGATHER=8 RAMP_MOE_V2_TILED=3 RAMP_MOE_V2_MODELS=mixtral-8x22b \
    RAMP_MOE_CONFIGS=r16.w128.s4 RAMP_MOE_TOKENS=40 RAMP_MOE_V2_NO_V1=1 timeout 150 \
    compute-sanitizer --tool $tool --error-exitcode 3 ./test_gpu_moe_v2 > $W/test/$tool.txt 2>&1
  echo "$tool exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/test/$tool.txt))"
done
V=m:r16.w128.s4.t3.u1.k4,m:r16.w128.s4.t3.u1.k5,m:r32.w128.s4.t3.u1.k4,m:r64.w128.s4.t3.u1.k4
V=$V,m:r16.w128.s4.t3.d4,m:r16.w128.s4.t3.j8,m:r16.w128.s4.t3.j8.b1,m:r16.w128.s4.t3.j8.d4
V=$V,m:r16.w128.s5.t3.j8,m:r16.w128.s5.t3.j8.b1,m:r16.w128.s4.t3.j4.b1,m:r32.w128.s4.t3.j8
V=$V,m:r8.w128.s4.t3.j8,m:r8.w128.s5.t3.j8.b1
for run in a b; do
  RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=gg-$run RAMP_MV2_BENCH_VARIANTS=$V \
    RAMP_MV2_BENCH_LOADS=m16,m64 timeout 200 ./bench_moe_v2 $W/$run 30 > $W/$run/bench.txt 2>&1
  echo "bench $run exit $?"
done
cd ..
tar czf $O/s36-run1-call3.tgz -C /tmp s36r3
for run in a b; do echo "== $run"; grep grid $W/$run/bench.txt | awk '{print $1, $3, $5}'; done
