#!/usr/bin/env bash
# s29-run6: weights in stage units in the layer (session 29). The layer
# (selection + polymorphic kernel, one graph) with ramp_layer_desc.
# weight_units = 1 (bench_layer --units 1: impl ramp-units), beside the
# row-major layer on the same menu (ramp-nomc: Mixtral's menu with
# multicast off, which stage units do not run yet) and the shipped layer
# (ramp); the units layer's output checked against the row-major one's on
# every load (1e-4 of the largest |out|). L2 emptied by writing, as the
# targets; median of 20. Plans: Mixtral-8x22B EP8 the default six-entry fit
# (as s29-run3), Qwen3-30B EP8 the default fit.
set -u
O=${OUT:-/tmp/out}; R=bench/results/s29-run6; W=/tmp/s29r6; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
for m in mixtral-8x22b qwen3-30b; do
  mkdir -p $W/$m
  tok=64,256,1024; [ $m = qwen3-30b ] && tok=64,256,2048
  timeout 100 ./build-gpucheck/bench_layer --plan $R/plan-$m-ep8.json \
    --dataset data/timing/$m-ep8-v2.safetensors --tokens $tok --reps 20 --kernel v2 --units 1 \
    --out-dir $W/$m > $W/$m/log.txt 2>&1
  echo "$m exit $?"
done
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
tar czf $O/s29-run6.tgz -C /tmp s29r6
for m in mixtral-8x22b qwen3-30b; do
  echo "== $m"; grep -E "^[0-9]+ +(uniform|skewed)|ramp-nomc |ramp-units |units check" $W/$m/log.txt | cut -c1-150
done
