#!/usr/bin/env bash
# s36-run1 call 7: where `r32.w128.s4.gg8` loses in the stage-unit layer
# (call 5: 88.8 us against 84.3 for `r32.w128.s4.ph2.dk4`, while alone on
# units it is 6.5 us faster, call 6). bench_layer --timeline 1 (every
# block's start, wait and end) on both plans, 64 and 128 tokens, read flush,
# now also stamping the stage-unit layer ("units").
set -u
O=${OUT:-/tmp/out}; W=/tmp/s36r7; rm -rf $W; mkdir -p $W/old $W/gg8
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
B=$PWD/build-gpucheck; R=$PWD
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
DS=$R/data/timing/mixtral-8x22b-ep8-v2-units.safetensors
for run in old gg8; do
  P=$R/bench/results/s34-run2/layer/plan-mixtral-8x22b-ep8-v2-units.json
  [ $run = gg8 ] && P=$R/bench/results/s36-run1/plan-mixtral-units-gg8.json
  (cd $B && timeout 200 ./bench_layer --plan $P --dataset $DS --out-dir $W/$run --reps 20 \
    --kernel v2 --units 1 --flush read --tokens 64,128 --timeline 1) > $W/$run/bench_layer.log 2>&1
  echo "bench_layer $run exit $?"
done
tar czf $O/s36-run1-call7.tgz -C /tmp s36r7
for run in old gg8; do echo "== $run"; grep -h "timeline" $W/$run/bench_layer.log | grep -E "units|ramp |alone|poly" | head -24; done
