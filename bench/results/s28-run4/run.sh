#!/usr/bin/env bash
# s28-run4 (session 28): s28-run3's A/B repeated, twice for Qwen3-30B and
# OLMoE in the other order (the new kernels first), once for Mixtral; the
# command the device tool ran, one line there, spread out here. Carry
# .debs and build-ab (build-ab/kernels-before: kernels/ of commit ca16d48).
set -u; O=$OUT; W=/tmp/s28r4; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || exit 1
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_DATA_DIR=$PWD/data
S=bench/results/s27-run5/fp8; B=$PWD/build-ab/kernels-before; N=$PWD/kernels
bl() {
  mkdir -p $W/$1
  RAMP_KERNEL_DIR=$6 timeout $2 ./build-gpucheck/bench_layer --plan $3 --dataset data/timing/$4.safetensors \
    --tokens $5 --out-dir $W/$1 --reps 30 --kernel v2 > $W/$1/log.txt 2>&1
  echo "bench $1 exit $?"
}
for r in 1 2; do
  bl q6-now-$r 60 $S/plan-qwen3-30b-ep8-v2.json qwen3-30b-ep8-v2 256,2048 $N
  bl q6-before-$r 60 $S/plan-qwen3-30b-ep8-v2.json qwen3-30b-ep8-v2 256,2048 $B
  bl o6-now-$r 60 $S/plan-olmoe-ep8-v2.json olmoe-ep8-v2 512,2048 $N
  bl o6-before-$r 60 $S/plan-olmoe-ep8-v2.json olmoe-ep8-v2 512,2048 $B
done
bl m6-now 80 $S/plan-mixtral-8x22b-ep8-v2.json mixtral-8x22b-ep8-v2 64,256 $N
bl m6-before 80 $S/plan-mixtral-8x22b-ep8-v2.json mixtral-8x22b-ep8-v2 64,256 $B
cp build-gpucheck-logs/env.log $W/; tar czf $O/s28-run4.tgz -C /tmp s28r4
for d in $W/*/; do
  echo "== $(basename $d)"; grep -E "^[0-9]+ +(uniform|skewed)" $d/log.txt | awk '{print $1,$2,$5,$6,$8}'
done
