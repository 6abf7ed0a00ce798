#!/usr/bin/env bash
# s30-run2: the layer on weights in stage units, multicast entries included
# (s30-run1), on four models, and units with both kernels by PDL
# (ramp-units-pdl2, beside ramp-pdl2): do the two gains add? bench_layer
# --units 1; outputs checked against the shipped layer's (1e-4 of the
# largest |out|). L2 emptied by writing, as the targets; median of 20.
# Plans: Mixtral-8x22B and Qwen3-30B as s29-run6; DeepSeek-V3 and OLMoE EP8
# `ramp fit` defaults on the shipped v2 datasets (here).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s30r2; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
for m in mixtral-8x22b qwen3-30b deepseek-v3 olmoe; do
  mkdir -p $W/$m
  case $m in
    mixtral-8x22b) tok=64,256,1024,4096; plan=bench/results/s29-run6/plan-$m-ep8.json ;;
    qwen3-30b) tok=64,256,2048; plan=bench/results/s29-run6/plan-$m-ep8.json ;;
    *) tok=64,512,4096; plan=bench/results/s30-run2/plan-$m-ep8.json ;;
  esac
  timeout 120 ./build-gpucheck/bench_layer --plan $plan \
    --dataset data/timing/$m-ep8-v2.safetensors --tokens $tok --reps 20 --kernel v2 --units 1 \
    --out-dir $W/$m > $W/$m/log.txt 2>&1
  echo "layer $m exit $?"
  tar czf $O/s30-run2.tgz -C /tmp s30r2
done
for m in mixtral-8x22b qwen3-30b deepseek-v3 olmoe; do
  echo "== $m"; grep -E "^[0-9]+ +(uniform|skewed)|ramp-pdl2 |ramp-units|check:.* [1-9][0-9]* beyond" $W/$m/log.txt | cut -c1-100
done
