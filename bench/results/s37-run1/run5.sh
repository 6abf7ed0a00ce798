#!/usr/bin/env bash
# s37-run1 call 5: bench_layer --jit-ab with --units 1 (new row ramp-units-jit,
# timed in alternation with ramp-units) on an A/A: a define no kernel reads
# (RAMP_S37_AA=1: the same code, a separate compile). Checks the new row runs
# and its output agrees with the row-major layer's; the A/A difference is the
# paired method's noise. Mixtral-8x22B EP8 and DeepSeek-V3 EP8 (stage units,
# read flush), two token counts each.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s37r5; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s37-run1-call5.tgz -C /tmp s37r5' EXIT
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
B=$PWD/build-gpucheck; R=$PWD
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
for m in mixtral deepseek; do
  mkdir -p $W/$m
  if [ $m = mixtral ]; then
    P=$R/bench/results/s34-run2/layer/plan-mixtral-8x22b-ep8-v2-units.json
    DS=$R/data/timing/mixtral-8x22b-ep8-v2-units.safetensors TOK=64,1024
  else
    P=$R/bench/results/s32-run2/units/plan-deepseek-v3-ep8-v2-units.json
    DS=$R/data/timing/deepseek-v3-ep8-v2-units.safetensors TOK=64,2048
  fi
  (cd $B && timeout 200 ./bench_layer --plan $P --dataset $DS --out-dir $W/$m --reps 30 --kernel v2 \
    --units 1 --flush read --jit-ab RAMP_S37_AA=1 --tokens $TOK) > $W/$m/bench_layer.log 2>&1
  echo "bench_layer $m exit $?"
  grep -E "ramp-units-jit|units check" $W/$m/bench_layer.log | tail -8
done
