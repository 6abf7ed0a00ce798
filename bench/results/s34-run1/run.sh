#!/usr/bin/env bash
# s34-run1 (session 34): size classes (ramp_layer_desc.menu_by_size), one
# device call per part on a warm machine.
# PART=1: build; test_gpu_select (the selection's entry mask: a quarter of
#   the random descriptors choose among a part of the menu, every launch
#   shape against the CPU twin); test_gpu_layer on kernel v2 (part 4: a
#   one-expert layer's classes, direct runs and graphs per batch size, against
#   the twin restricted to the class, the whole menu's choice and the
#   reference); compute-sanitizer memcheck on test_gpu_layer v2 and
#   racecheck on test_gpu_select.
# PART=2: bench_layer on Mixtral-8x22B EP8's plan fit on stage-unit times,
#   64-512 tokens, 60 reps: the layer, its units form, and both with size
#   classes (rows ramp-bysize, ramp-units-bysize), each timed in alternation
#   with the layer; outputs checked against the layer's.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s34r1-$PART; rm -rf $W; mkdir -p $W/test $W/layer
pack() { tar czf $O/s34-run1-$PART.tgz -C /tmp s34r1-$PART; }
B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
timeout 200 tools/gpu-check env deps build > $W/build.txt 2>&1; echo "build exit $?"
if [ "$PART" = 1 ]; then
mkdir -p $B/test-tmp
(cd $B && RAMP_TEST_TMP=$B/test-tmp timeout 120 ./test_gpu_select) > $W/test/select.txt 2>&1
echo "test_gpu_select exit $?: $(tail -n 1 $W/test/select.txt)"
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=200 \
  timeout 150 ./test_gpu_layer) > $W/test/layer-v2.txt 2>&1
echo "test_gpu_layer v2 exit $?: $(grep -E '^size classes' $W/test/layer-v2.txt | cut -c1-300); $(tail -n 1 $W/test/layer-v2.txt)"
pack
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_SHAPES=1 \
  RAMP_LAYER_ENTRIES=0,5 RAMP_LAYER_ROUTINGS=8 timeout 150 \
  compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_layer) > $W/test/layer-memcheck.txt 2>&1
echo "layer memcheck exit $?: $(grep -m1 'ERROR SUMMARY' $W/test/layer-memcheck.txt); $(grep -E '^size classes' $W/test/layer-memcheck.txt | cut -c1-120)"
(cd $B && RAMP_TEST_ITERS=2 RAMP_TEST_TMP=$B/test-tmp RAMP_SANITIZER=1 timeout 75 \
  compute-sanitizer --tool racecheck --error-exitcode 3 ./test_gpu_select) > $W/test/select-racecheck.txt 2>&1
echo "select racecheck exit $?: $(grep -m1 -E 'RACECHECK SUMMARY' $W/test/select-racecheck.txt)"
pack
fi
if [ "$PART" = 2 ]; then
rm -f $B/layer-loads*.json
LAYER_REPS=60 LAYER_KERNEL=v2 LAYER_UNITS=1 LAYER_BY_SIZE=1 LAYER_TOKENS=64,128,256,512 \
  LAYER_MODELS="mixtral-8x22b-ep8-v2-units" \
  timeout 400 tools/gpu-check bench_layer > $W/layer/gpu-check.txt 2>&1
echo "bench_layer exit $?"
cp -r build-gpucheck-logs/* $W/layer/ 2>/dev/null
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
pack
grep -h -E '^--by-size|^ +ramp-(units|bysize|units-bysize) ' $W/layer/bench_layer.log | head -40
fi
