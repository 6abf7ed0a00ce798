#!/usr/bin/env bash
# s36-run1 call 4: the gather through global memory as a configuration
# (".gg<G>": ramp_config.ggather; the polymorphic kernel's entry, the
# layer's ws and ws_count) in the layer. (1) correct: test_gpu_layer on
# kernel v2 with a menu holding two ".gg2" entries (the test's Qwen3-30B
# geometry has 6 slices of w 128: G 2), FP8, row-major and stage units
# (every entry forced, also on 7 blocks: a partial group; graph replays; a
# one-expert layer's size classes), memcheck; (2) Mixtral-8x22B EP8's layer
# on session 34's plan (stage units) against the same plan with its
# `r32.w128.s4.ph2.dk4` replaced by `r32.w128.s4.gg8` (same coefficients, so
# the same choices), alternating B A B on the same loads.
# Predicted: the loads that choose r32 (64-128 tokens) 3-7 us faster
# (kernel alone s36 call 3: r32.gg8 79.1-79.4 us against r32.ph2.dk4
# 81.6-86.6 at 16 pairs), the others unchanged.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s36r4; rm -rf $W; mkdir -p $W/test $W/gg8a $W/old $W/gg8b
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
B=$PWD/build-gpucheck; R=$PWD
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
mkdir -p $B/test-tmp
M=r16.w128.s4.gg2,r8.w128.s4,r32.w128.s4.gg2,r64.w128.s4,r128.w128.s3.ph2.dk2,r32.w256.s4
for u in 0 1; do
  (cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_MENU=$M \
    RAMP_LAYER_UNITS=$u RAMP_LAYER_ROUTINGS=100 timeout 150 ./test_gpu_layer) > $W/test/layer-gg2-u$u.txt 2>&1
  echo "test_gpu_layer gg2 units=$u exit $?: $(tail -n 1 $W/test/layer-gg2-u$u.txt)"
done
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_MENU=$M \
  RAMP_LAYER_ROUTINGS=4 RAMP_LAYER_SHAPES=2 RAMP_LAYER_ENTRIES=0,2 timeout 200 \
  compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_layer) > $W/test/layer-gg2-memcheck.txt 2>&1
echo "memcheck exit $? ($(grep -m1 'ERROR SUMMARY' $W/test/layer-gg2-memcheck.txt))"
DS=$R/data/timing/mixtral-8x22b-ep8-v2-units.safetensors
for run in gg8a old gg8b; do
  P=$R/bench/results/s36-run1/plan-mixtral-units-gg8.json
  [ $run = old ] && P=$R/bench/results/s34-run2/layer/plan-mixtral-8x22b-ep8-v2-units.json
  (cd $B && timeout 150 ./bench_layer --plan $P --dataset $DS --out-dir $W/$run --reps 30 \
    --kernel v2 --units 1 --tokens 64,128,256,512) > $W/$run/bench_layer.log 2>&1
  echo "bench_layer $run exit $?"
done
tar czf $O/s36-run1-call4.tgz -C /tmp s36r4
for run in gg8a old gg8b; do echo "== $run"; grep -h -E ',(ramp-units|alone),' $W/$run/*.csv | cut -d, -f3-5,7,9,10; done
