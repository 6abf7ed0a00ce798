#!/usr/bin/env bash
# s36-run1 call 10: phase 2 by programmatic dependent launch in the kernel
# alone (ramp_moe_v2_opts.pdl, call 9's .f1) against the CPU reference and
# v1: test_gpu_moe_v2 with RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_PDL=1 on the five
# models (narrow and wide two-phase tiles, stage units), memcheck and
# racecheck on Mixtral-8x22B.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s36r10; rm -rf $W; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
cd build-gpucheck
mkdir -p /tmp/s36tt
env RAMP_TEST_TMP=/tmp/s36tt RAMP_MOE_CONFIGS=r16.w128.s4,r32.w128.s4,r64.w128.s4,r128.w128.s4,r128.w256.s3 \
  RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_P2K=4 RAMP_MOE_V2_PDL=1 RAMP_MOE_V2_TILED=3 timeout 150 ./test_gpu_moe_v2 \
  > $W/test-pdl.txt 2>&1
echo "test pdl exit $? ($(grep -E '^test_gpu_moe_v2' $W/test-pdl.txt | tail -1))"
for tool in memcheck racecheck; do
  env RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_P2K=4 RAMP_MOE_V2_PDL=1 RAMP_MOE_V2_TILED=3 \
    RAMP_MOE_V2_MODELS=mixtral-8x22b RAMP_MOE_CONFIGS=r32.w128.s4 RAMP_MOE_TOKENS=40 \
    RAMP_MOE_V2_NO_V1=1 timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 \
    ./test_gpu_moe_v2 > $W/$tool.txt 2>&1
  echo "$tool exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/$tool.txt))"
done
cd ..
tar czf $O/s36-run1-call10.tgz -C /tmp s36r10
grep -h "total" $W/*.txt
