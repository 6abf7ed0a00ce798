#!/usr/bin/env bash
# s29-run3: Mixtral-8x22B EP8's layer on menus of 3, 4 and 6 entries
# (session 29). The six-entry plan (the `ramp fit` default) compiles to a
# first polymorphic kernel of ~270 KB of SASS, and its narrow entries run
# 7 us longer in it than alone (s29-run2: 64 tokens, 92.7 against 85.6);
# session 27 measured `r32` at 1.02 in a three-entry menu. On the dataset's
# own times the smaller menus lose 1.7% (4) and 3.5% (3) of the total. Which
# wins in the layer, over issue #5's 14 loads? Same load draws (seed), same
# harness as the targets (L2 emptied by writing, median of 30).
set -u
O=${OUT:-/tmp/out}; R=bench/results/s29-run3; W=/tmp/s29r3; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
for n in 6 4 3; do
  mkdir -p $W/menu$n
  timeout 170 ./build-gpucheck/bench_layer --plan $R/plan-mixtral-8x22b-ep8-menu$n.json \
    --dataset data/timing/mixtral-8x22b-ep8-v2.safetensors --reps 30 --kernel v2 \
    --loads-json $W/menu$n/loads.json --out-dir $W/menu$n > $W/menu$n/log.txt 2>&1
  echo "menu $n exit $?"
done
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
tar czf $O/s29-run3.tgz -C /tmp s29r3
for n in 6 4 3; do
  echo "== menu $n"; grep -E "^[0-9]+ +(uniform|skewed)" $W/menu$n/log.txt | awk '{print $1, $2, $3, $5, $6, $8}'
done
