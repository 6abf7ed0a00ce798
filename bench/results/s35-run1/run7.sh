#!/usr/bin/env bash
# s35-run1 call 7: the 5-part entries in the layer. (1) test_gpu_layer on
# kernel v2 with a menu of two-phase entries, three of them with K in 5 parts
# (the test's h = 768: 6 K blocks, parts of 1 or 2), deterministic output,
# then on stage units; (2) issue #5's targets for Mixtral-8x22B EP8 on the
# plan fit on call 6's dataset (its menu holds r128.w128.s3.ph2.dk5 and
# r128.w128.s4.ph2.dk5.tx), after the same bench_layer on session 32's plan
# (plan-s32-units.json) over the same loads, same machine.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s35r1g; rm -rf $W; mkdir -p $W/test $W/old $W/layer
B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
timeout 200 tools/gpu-check env deps build > $W/build.txt 2>&1; echo "build exit $?"
mkdir -p $B/test-tmp
M=r16.w128.s4.ph2.dk5,r32.w128.s4.ph2.dk4,r64.w128.s4.ph2.dk5,r128.w128.s4.ph2.dk5.tx,r128.w256.s3.ph2.dk5,r128.w128.s4.ph2.dk2.mc.tx
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_MENU=$M \
  RAMP_LAYER_DET=1 RAMP_LAYER_ROUTINGS=40 timeout 120 ./test_gpu_layer) > $W/test/layer-dk5-det.txt 2>&1
echo "test_gpu_layer dk5 det exit $?: $(tail -n 1 $W/test/layer-dk5-det.txt)"
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_MENU=$M \
  RAMP_LAYER_UNITS=1 RAMP_LAYER_ROUTINGS=40 timeout 120 ./test_gpu_layer) > $W/test/layer-dk5-units.txt 2>&1
echo "test_gpu_layer dk5 units exit $?: $(tail -n 1 $W/test/layer-dk5-units.txt)"
DS=$PWD/data/timing/mixtral-8x22b-ep8-v2-units.safetensors
(cd $B && timeout 150 ./bench_layer --plan $PWD/bench/results/s35-run1/plan-s32-units.json \
  --dataset $DS --out-dir $W/old --reps 30 --kernel v2 --units 1) > $W/old/bench_layer.log 2>&1
echo "old plan exit $?"
rm -f $B/layer-loads*.json
LAYER_REPS=30 LAYER_KERNEL=v2 LAYER_UNITS=1 LAYER_MODELS="mixtral-8x22b-ep8-v2-units" \
  PEER_ARGS="--impl torch-fp8-rowwise" PEER_TIMEOUT=120 \
  timeout 330 tools/gpu-check ceilings bench_layer peer > $W/layer/gpu-check.txt 2>&1
echo "targets exit $?"
cp -r build-gpucheck-logs/* $W/layer/ 2>/dev/null
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
tar czf $O/s35-run1-call7.tgz -C /tmp s35r1g
grep -h -E '^ +ramp-units ' $W/old/bench_layer.log | head -16
grep -h -E '^ +ramp-units ' $W/layer/bench_layer.log | head -16
