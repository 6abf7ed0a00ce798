#!/usr/bin/env bash
# s25-run1 (prepared in session 24, not yet run): narrow phase 2 as stream-K
# (ramp_moe_v2_opts.streamk, RAMP_MV2_STREAMK; kernels/moe_v2.md, session
# 24). Correct before fast: test_gpu_moe_v2 with every narrow split of the
# five models, phase 2 as stream-K, against the CPU reference and v1 (the
# workspace poisoned with NaNs before each launch), on the default grid and
# on 7 blocks; memcheck and racecheck on Mixtral-8x22B; then the kernel
# alone on Mixtral's small loads, K in parts (.k4, .k8) against stream-K
# (.z1). Prediction: phase 2 on all 132 SMs instead of 96 (.dk4 at one row
# tile: 24 chunks x 4 parts), 4-8 us off the 12-59-pair loads.
# Two calls fit the 600 s per command: `run.sh test`, then `run.sh bench`.
set -u
STAGE=${1:-all}
O=${OUT:-/tmp/out}; W=/tmp/s25r1; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
cd build-gpucheck
if [ $STAGE != bench ]; then
SK="RAMP_TEST_TMP=/tmp/s25tt RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_STREAMK=1"
env $SK timeout 240 ./test_gpu_moe_v2 > $W/v2-streamk-test.txt 2>&1
echo "test exit $?"
for tool in memcheck racecheck; do
  env $SK RAMP_MOE_V2_MODELS=mixtral-8x22b RAMP_MOE_CONFIGS=r16.w128.s4,r32.w128.s4 \
    RAMP_MOE_TOKENS=24 RAMP_MOE_V2_NO_V1=1 timeout 110 compute-sanitizer --tool $tool \
    --error-exitcode 3 ./test_gpu_moe_v2 > $W/v2-streamk-$tool.txt 2>&1
  echo "$tool exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/v2-streamk-$tool.txt))"
done
fi
if [ $STAGE != test ]; then
V=m:r16.w128.s4.u1.k4,m:r16.w128.s4.u1.z1,m:r32.w128.s4.u1.k4,m:r32.w128.s4.u1.k8,m:r32.w128.s4.u1.z1
V=$V,m:r64.w128.s4.u1.k4,m:r64.w128.s4.u1.z1
RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=streamk RAMP_MV2_BENCH_VARIANTS=$V \
  RAMP_MV2_BENCH_LOADS=m8,m16,m32,m64,m128,m256 timeout 240 ./bench_moe_v2 $W 20 > $W/bench.txt 2>&1
echo "bench exit $?"
fi
cd ..
tar czf $O/s25-run1-$STAGE.tgz -C /tmp s25r1
grep -E "^test_gpu_moe_v2|violat|differ" $W/v2-streamk-test.txt | head -20
grep -E "^\| Mixtral|^\| mixtral" $W/moe-v2-*-streamk.md 2>/dev/null | head -60
