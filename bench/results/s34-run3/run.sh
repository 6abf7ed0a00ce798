#!/usr/bin/env bash
# s34-run3 (session 34): size classes on BF16 layers. One device call:
# (a) test_gpu_layer v2 (FP8 kind in part 1; part 4 now FP8 and BF16: a
#     one-expert layer's classes against the twin restricted to the class,
#     the whole menu's choice and the reference), and memcheck on it;
# (b) bench_layer on Mixtral-8x22B EP8's BF16 plan (row-major times, as the
#     BF16 targets use), 64-512 tokens, 30 reps: the layer with its classes,
#     ramp-units on stage units, and the one-kernel forms ramp-onemenu,
#     ramp-units-onemenu, each timed in alternation with the layer and its
#     output checked against the layer's.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s34r3; rm -rf $W; mkdir -p $W/test $W/layer
pack() { tar czf $O/s34-run3.tgz -C /tmp s34r3; }
B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
timeout 200 tools/gpu-check env deps build > $W/build.txt 2>&1; echo "build exit $?"
mkdir -p $B/test-tmp
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=200 \
  timeout 150 ./test_gpu_layer) > $W/test/layer-v2.txt 2>&1
echo "test_gpu_layer v2 exit $?: $(grep -E '^size classes' $W/test/layer-v2.txt | cut -c1-200); $(tail -n 1 $W/test/layer-v2.txt)"
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_SHAPES=1 \
  RAMP_LAYER_ENTRIES=0 RAMP_LAYER_ROUTINGS=16 timeout 150 \
  compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_layer) > $W/test/layer-memcheck.txt 2>&1
echo "memcheck exit $?: $(grep -m1 'ERROR SUMMARY' $W/test/layer-memcheck.txt)"
pack
rm -f $B/layer-loads*.json
LAYER_REPS=30 LAYER_KERNEL=v2 LAYER_BF16=1 LAYER_UNITS=1 LAYER_ONE_MENU=1 LAYER_TOKENS=64,128,256,512 \
  LAYER_MODELS="mixtral-8x22b-ep8-v2-bf16" \
  timeout 250 tools/gpu-check bench_layer > $W/layer/gpu-check.txt 2>&1
echo "bench_layer exit $?"
cp -r build-gpucheck-logs/* $W/layer/ 2>/dev/null
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
pack
grep -h -E '^size classes|^ +ramp-(units|onemenu|units-onemenu) ' $W/layer/bench_layer.log | head -30
