#!/usr/bin/env bash
# s36-run1 call 5: call 4's layer A/B (session 34's Mixtral-8x22B EP8 plan on
# stage units against the same plan with `r32.w128.s4.gg8` for
# `r32.w128.s4.ph2.dk4`) with L2 emptied by a read instead of the usual
# write (bench_layer --flush read: no dirty lines drained while the layer
# reads; session 13: the write costs a mid-size read ~6 us). Call 4 (write
# flush): gg8 1.4 us faster alone but 0.8-2.7 us slower in the layer, where
# bench_moe_v2 (read flush) had it 2.5-7 us faster alone. Predicted: with a
# read flush the gg8 layer 2-5 us faster at 64-128 tokens. A/B/A: old, gg8,
# old; the copy-rate ceiling in the same call.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s36r5; rm -rf $W; mkdir -p $W/old1 $W/gg8 $W/old2 $W/ceil
tools/gpu-check env deps build ceilings > $W/ceil/gpu-check.txt 2>&1 || { tail -20 $W/ceil/gpu-check.txt; exit 1; }
cp build-gpucheck-logs/ceilings.csv $W/ceil/ 2>/dev/null
B=$PWD/build-gpucheck; R=$PWD
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
DS=$R/data/timing/mixtral-8x22b-ep8-v2-units.safetensors
for run in old1 gg8 old2; do
  P=$R/bench/results/s34-run2/layer/plan-mixtral-8x22b-ep8-v2-units.json
  [ $run = gg8 ] && P=$R/bench/results/s36-run1/plan-mixtral-units-gg8.json
  (cd $B && timeout 150 ./bench_layer --plan $P --dataset $DS --out-dir $W/$run --reps 30 \
    --kernel v2 --units 1 --flush read --tokens 64,128,256) > $W/$run/bench_layer.log 2>&1
  echo "bench_layer $run exit $?"
done
tar czf $O/s36-run1-call5.tgz -C /tmp s36r5
grep -h copy $W/ceil/ceilings.csv | head -3
for run in old1 gg8 old2; do echo "== $run"; grep -h -E ',(ramp-units|alone|select\+read-bulk),' $W/$run/*.csv | grep -E "r32|r64|r8" | cut -d, -f3-5,7,9,10 | grep -E "ramp-units|select|alone,r32"; done
