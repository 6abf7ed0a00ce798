#!/usr/bin/env bash
# s28-run5 (session 28): does a code order chosen by measurement pay over
# the whole load set? s27-run3 timed every rotation of Qwen3-30B's menu on
# 4 loads (the best 3.4% under the shipped order there); s28-run3/4 saw
# layers move by +-3% (reproducibly, three replicates) when an edit moved
# the code. Here every rotation of Qwen3-30B's and OLMoE's shipped FP8
# menus (each entry first once; same entries and coefficients, so the same
# choice on every load; only the code layout changes) over all 14 loads of
# issue #5's table (64..4,096 tokens, uniform and skewed), then the shipped
# order again to see the drift. The objective: the layer's total.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s28r5; rm -rf $W; mkdir -p $W
t0=$(date +%s)
left() { echo $(( ${BUDGET:-540} - ($(date +%s) - t0) )); }
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
cp build-gpucheck-logs/env.log $W/ 2>/dev/null
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
H=bench/results/s28-run5; S=bench/results/s27-run5/fp8
bl() { # name, plan, dataset
  [ $(left) -gt 45 ] || { echo "bench $1 skipped (budget)"; return; }
  mkdir -p $W/$1
  timeout 60 ./build-gpucheck/bench_layer --plan $2 --dataset data/timing/$3.safetensors \
    --out-dir $W/$1 --reps 30 --kernel v2 > $W/$1/log.txt 2>&1
  echo "bench $1 exit $? ($(( $(date +%s) - t0 )) s)"
}
for m in qwen3:qwen3-30b-ep8-v2 olmoe:olmoe-ep8-v2; do
  n=${m%%:*}; d=${m#*:}
  bl $n-rot0 $S/plan-$d.json $d
  for k in 1 2 3 4 5; do bl $n-rot$k $H/plan-$n-rot$k.json $d; done
done
bl qwen3-rot0b $S/plan-qwen3-30b-ep8-v2.json qwen3-30b-ep8-v2
bl olmoe-rot0b $S/plan-olmoe-ep8-v2.json olmoe-ep8-v2
rm -f $O/*; tar czf $O/s28-run5.tgz -C /tmp s28r5
for r in $W/*/; do
  printf '%-12s' $(basename $r); awk -F, '$7 == "ramp" {s += $10; n++} END {printf " ramp total %.1f us over %d loads\n", s, n}' $r/layer-*.csv
done
