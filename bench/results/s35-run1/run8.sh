#!/usr/bin/env bash
# s35-run1 call 8: call 7's plan against session 32's on one machine (call
# 7's run of the old plan failed on a wrong path): bench_layer on stage
# units over the 14 target loads, session 32's plan, then call 6's.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s35r1h; rm -rf $W; mkdir -p $W/old $W/new
R=$PWD B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$R/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$R/kernels RAMP_DATA_DIR=$R/data
timeout 200 tools/gpu-check env deps build > $W/build.txt 2>&1; echo "build exit $?"
DS=$R/data/timing/mixtral-8x22b-ep8-v2-units.safetensors
$B/ramp fit $DS -o $W/new/plan.json > $W/new/fit.txt 2>&1
for v in old new; do
  P=$R/bench/results/s35-run1/plan-s32-units.json; [ $v = new ] && P=$W/new/plan.json
  (cd $B && timeout 170 ./bench_layer --plan $P --dataset $DS --out-dir $W/$v --reps 30 \
    --kernel v2 --units 1) > $W/$v/bench_layer.log 2>&1
  echo "$v plan exit $?"
done
tar czf $O/s35-run1-call8.tgz -C /tmp s35r1h
for v in old new; do grep -h ",ramp-units," $W/$v/layer-*.csv | cut -d, -f3,4,9,10; done
