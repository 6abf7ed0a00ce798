#!/usr/bin/env bash
# s34-run4 (session 34): the session's changes on the paths not run yet.
# One device call: test_gpu_layer on kernel v1 (the selection's new
# parameter block and launch rule under the v1 layer; no size classes
# there), and with its memcheck; test_gpu_layer v2 with deterministic output
# on gpu-check's two-phase DET_LAYER_MENU (part 4's size classes then run
# through the whole menu's combining kernel, its K-part table indexed by
# the plan's indices); test_gpu_select's memcheck.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s34r4; rm -rf $W; mkdir -p $W/test
pack() { tar czf $O/s34-run4.tgz -C /tmp s34r4; }
B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
timeout 200 tools/gpu-check env deps build > $W/build.txt 2>&1; echo "build exit $?"
mkdir -p $B/test-tmp
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_ROUTINGS=200 timeout 150 ./test_gpu_layer) \
  > $W/test/layer-v1.txt 2>&1
echo "test_gpu_layer v1 exit $?: $(tail -n 1 $W/test/layer-v1.txt)"
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_ROUTINGS=3 RAMP_LAYER_KINDS=fp8,bf16 RAMP_LAYER_SHAPES=2 \
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_layer) \
  > $W/test/layer-v1-memcheck.txt 2>&1
echo "v1 memcheck exit $?: $(grep -m1 'ERROR SUMMARY' $W/test/layer-v1-memcheck.txt)"
pack
M=r16.w128.s4.ph2.dk2,r32.w128.s4.ph2,r64.w128.s3.ph2.dk2,r128.w256.s3.ph2,r128.w128.s4.ph2.dk2.mc.tx,r128.w256.s3.ph2.tx
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_DET=1 RAMP_LAYER_KINDS=fp8 \
  RAMP_LAYER_MENU=$M RAMP_LAYER_ROUTINGS=100 timeout 150 ./test_gpu_layer) > $W/test/layer-v2-det.txt 2>&1
echo "test_gpu_layer v2 det exit $?: $(grep -E '^size classes' $W/test/layer-v2-det.txt | cut -c1-220); $(tail -n 1 $W/test/layer-v2-det.txt)"
(cd $B && RAMP_TEST_ITERS=2 RAMP_TEST_TMP=$B/test-tmp RAMP_SANITIZER=1 timeout 75 \
  compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_select) > $W/test/select-memcheck.txt 2>&1
echo "select memcheck exit $?: $(grep -m1 'ERROR SUMMARY' $W/test/select-memcheck.txt)"
pack
