#!/usr/bin/env bash
# s34-run2 (session 34): the layer's default launch mode, PDL for both
# kernels of a two-phase menu (before: the second kernel after the first
# when the menu holds a narrow two-phase entry). One device call:
# (a) test_gpu_layer v2 in the default mode on a menu of narrow and wide
#     two-phase entries (gpu-check's NS_LAYER_MENU), FP8 and BF16, and its
#     memcheck;
# (b) bench_layer on DeepSeek-V3 and Mixtral-8x22B EP8's plans fit on
#     stage-unit times (both hold a narrow two-phase entry), 14 target loads
#     each, 30 reps: rows ramp (now both kernels by PDL), ramp-pdl1 (the old
#     rule: PDL for the first kernel only), ramp-pdl2 (PDL for both: an A/A
#     of ramp), ramp-serial, and on stage units ramp-units, ramp-units-pdl2;
#     each variant timed in alternation with ramp.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s34r2; rm -rf $W; mkdir -p $W/test $W/layer
pack() { tar czf $O/s34-run2.tgz -C /tmp s34r2; }
B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
timeout 200 tools/gpu-check env deps build > $W/build.txt 2>&1; echo "build exit $?"
mkdir -p $B/test-tmp
M=r16.w128.s4.ph2.dk2,r8.w256.s3,r32.w128.s4.ph2,r64.w128.s3.ph2.dk2,r128.w256.s3.ph2,r16.w128.s4.k2
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8,bf16 RAMP_LAYER_MENU=$M \
  RAMP_LAYER_ROUTINGS=100 timeout 150 ./test_gpu_layer) > $W/test/layer-two-phase.txt 2>&1
echo "test_gpu_layer two-phase menu exit $?: $(tail -n 1 $W/test/layer-two-phase.txt)"
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_MENU=$M \
  RAMP_LAYER_SHAPES=1 RAMP_LAYER_ROUTINGS=6 timeout 120 \
  compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_layer) > $W/test/layer-two-phase-memcheck.txt 2>&1
echo "memcheck exit $?: $(grep -m1 'ERROR SUMMARY' $W/test/layer-two-phase-memcheck.txt)"
pack
rm -f $B/layer-loads*.json
LAYER_REPS=30 LAYER_KERNEL=v2 LAYER_UNITS=1 \
  LAYER_MODELS="deepseek-v3-ep8-v2-units mixtral-8x22b-ep8-v2-units" \
  timeout 330 tools/gpu-check bench_layer > $W/layer/gpu-check.txt 2>&1
echo "bench_layer exit $?"
cp -r build-gpucheck-logs/* $W/layer/ 2>/dev/null
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
pack
