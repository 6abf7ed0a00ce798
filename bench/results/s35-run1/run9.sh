#!/usr/bin/env bash
# s35-run1 call 9: the final tree (5-part entries off the space again, the
# shipped dataset restored) regression-checked: test_gpu_moe_v2 fused and
# two-phase on the narrow and wide tiles of all five models (even K parts:
# the programs the layer serves), test_gpu_layer on kernel v2 (FP8, its
# default menu and size classes).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s35r1i; rm -rf $W; mkdir -p $W
B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
timeout 200 tools/gpu-check env deps build > $W/build.txt 2>&1; echo "build exit $?"
mkdir -p $B/test-tmp
CF=r8.w128.s4,r32.w128.s4,r64.w128.s4,r128.w128.s4,r128.w256.s3
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_MOE_CONFIGS=$CF timeout 100 ./test_gpu_moe_v2) > $W/moe-v2.txt 2>&1
echo "test_gpu_moe_v2 exit $?: $(tail -n 1 $W/moe-v2.txt)"
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_MOE_CONFIGS=$CF RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_P2K=4 \
  timeout 100 ./test_gpu_moe_v2) > $W/moe-v2-split.txt 2>&1
echo "test_gpu_moe_v2 split exit $?: $(tail -n 1 $W/moe-v2-split.txt)"
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=60 \
  timeout 100 ./test_gpu_layer) > $W/layer-v2.txt 2>&1
echo "test_gpu_layer v2 exit $?: $(tail -n 1 $W/layer-v2.txt)"
tar czf $O/s35-run1-call9.tgz -C /tmp s35r1i
grep -h "total" $W/moe-v2*.txt
