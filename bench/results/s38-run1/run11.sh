#!/usr/bin/env bash
# s38-run1 call 11: L2 cache policies (RAMP_MV2_L2HINT, an experiment): bit 0
# the stage units' weight copies evict_first, bit 1 phase 2's bulk output
# reductions evict_last. Call 8 found DeepSeek-V3 4,096's down launch paying
# 55 us for its 117 MB of output adds on top of loads and math; if the
# weight stream (470 MB through a 50 MB L2) evicts the 14.7 MB output
# between a token's adds, each add goes to HBM, and keeping the output
# (evict_last) or letting the weights go first (evict_first) would cut it.
# Predicted: the down launch 213 -> 170-190 us with bit 1 or both, nothing
# or a little on Mixtral's loads (their output is 0.8-6 MB). Kernel alone,
# read flush, HINT 0 / 3 / 1 / 2 / 0; then test_gpu_moe_v2 with HINT 3 on
# the two models' two-phase units tiles (a policy cannot change a result;
# checked anyway).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s38r11; rm -rf $W; mkdir -p $W/test
trap 'tar czf $O/s38-run1-call11.tgz -C /tmp s38r11' EXIT
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
cd build-gpucheck
D=d:r128.w128.s3.t3.u1.y1 M=m:r128.w128.s3.t3.u1.k4.y1 N=m:r32.w128.s4.t3.u1.k4
V=$D,$D.u2,$D.u3,$M,$M.u3,$N
for run in a0 b3 c1 d2 e0; do
  mkdir -p $W/$run
  RAMP_JIT_DEFINES=RAMP_MV2_L2HINT=${run#?} RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=l2hint${run#?} \
    RAMP_MV2_BENCH_VARIANTS=$V RAMP_MV2_BENCH_LOADS=m16,m128,m1024,4096b,4096u \
    timeout 100 ./bench_moe_v2 $W/$run 20 > $W/$run/bench.txt 2>&1
  echo "bench $run exit $?"
done
env RAMP_TEST_TMP=/tmp RAMP_JIT_DEFINES=RAMP_MV2_L2HINT=3 RAMP_MOE_CONFIGS=r128.w128.s4 RAMP_MOE_V2_SPLIT=1 \
  RAMP_MOE_V2_P2K=4 RAMP_MOE_V2_TILED=3 RAMP_MOE_V2_MODELS=mixtral-8x22b,deepseek-v3 \
  timeout 100 ./test_gpu_moe_v2 > $W/test/hint3.txt 2>&1
echo "test hint3 exit $? ($(grep -E '^test_gpu_moe_v2' $W/test/hint3.txt | tail -1))"
for run in a0 b3 c1 d2 e0; do echo "== $run"; grep grid $W/$run/bench.txt | awk '{print $1, $3, $4, $5}'; done
