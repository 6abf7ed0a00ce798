#!/usr/bin/env bash
# s34-run1, second call (size classes on by default): PART=3 test_gpu_layer
# on kernel v2 (part 4 now the default layer; one_menu 1 makes no classes)
# and its memcheck; PART=4 issue #5's targets for Mixtral-8x22B EP8 on the
# plan fit on stage-unit times: ceilings, bench_layer over the 14 target loads
# (the layer with its size classes, ramp-units on stage units, and with
# --one-menu 1 the one-kernel forms beside: ramp-onemenu,
# ramp-units-onemenu), then PyTorch's two-GEMM FP8 MoE on the same loads.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s34r1-$PART; rm -rf $W; mkdir -p $W/test $W/layer
pack() { tar czf $O/s34-run1-$PART.tgz -C /tmp s34r1-$PART; }
B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
timeout 200 tools/gpu-check env deps build > $W/build.txt 2>&1; echo "build exit $?"
if [ "$PART" = 3 ]; then
mkdir -p $B/test-tmp
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=200 \
  timeout 150 ./test_gpu_layer) > $W/test/layer-v2.txt 2>&1
echo "test_gpu_layer v2 exit $?: $(grep -E '^size classes' $W/test/layer-v2.txt | cut -c1-300); $(tail -n 1 $W/test/layer-v2.txt)"
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_UNITS=1 \
  RAMP_LAYER_ROUTINGS=100 timeout 120 ./test_gpu_layer) > $W/test/layer-v2-units.txt 2>&1
echo "test_gpu_layer v2 units exit $?: $(grep -E '^size classes' $W/test/layer-v2-units.txt | cut -c1-200); $(tail -n 1 $W/test/layer-v2-units.txt)"
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_SHAPES=1 \
  RAMP_LAYER_ENTRIES=0 RAMP_LAYER_ROUTINGS=12 timeout 150 \
  compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_layer) > $W/test/layer-memcheck.txt 2>&1
echo "layer memcheck exit $?: $(grep -m1 'ERROR SUMMARY' $W/test/layer-memcheck.txt)"
pack
fi
if [ "$PART" = 4 ]; then
rm -f $B/layer-loads*.json
LAYER_REPS=30 LAYER_KERNEL=v2 LAYER_UNITS=1 LAYER_ONE_MENU=1 LAYER_MODELS="mixtral-8x22b-ep8-v2-units" \
  PEER_ARGS="--impl torch-fp8-rowwise" PEER_TIMEOUT=120 \
  timeout 520 tools/gpu-check ceilings bench_layer peer > $W/layer/gpu-check.txt 2>&1
echo "targets exit $?"
cp -r build-gpucheck-logs/* $W/layer/ 2>/dev/null
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
pack
grep -h -E '^size classes|^ +ramp-(units|onemenu|units-onemenu) ' $W/layer/bench_layer.log | head -50
fi
