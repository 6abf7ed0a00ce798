#!/usr/bin/env bash
# s26-run2: where the layer's time goes between its kernels (session 26).
# s26-run1: the layer takes 2-14 us more than the forced polymorphic kernel
# (Qwen3-30B EP8, r64.w256.s4 at 2,048 tokens: 95.3 against 83.3, with a
# 7.1 us selection that programmatic dependent launch should partly hide).
# bench_layer --timeline 1 compiles every kernel with %globaltimer stamps
# (kernels/timeline.cuh) and runs the layer, its selection alone and the
# chosen entry forced three more times per load: when each kernel's blocks
# start, pass griddepcontrol.wait and end. Prediction: the poly kernel's
# blocks pass the wait within ~1 us of the selection's end, and the layer's
# extra time is the poly kernel's own run being longer in the layer than
# forced (session 21's "+16% cycles"), not a gap between the kernels.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s26r2; rm -rf $W; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
cp build-gpucheck-logs/env.log $W/ 2>/dev/null
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
R=bench/results/s26-run1/fp8
tl() { # name, timeout, plan, dataset, tokens
  mkdir -p $W/$1
  timeout $2 ./build-gpucheck/bench_layer --plan $R/plan-$3.json --dataset data/timing/$3.safetensors \
    --tokens $4 --out-dir $W/$1 --reps 20 --kernel v2 --timeline 1 > $W/$1/log.txt 2>&1
  echo "bench $1 exit $?"
}
tl qwen3 200 qwen3-30b-ep8-v2 64,512,2048,4096
tl mixtral 150 mixtral-8x22b-ep8-v2 64,256
tl deepseek 150 deepseek-v3-ep8-v2 64,4096
tar czf $O/s26-run2.tgz -C /tmp s26r2
for n in qwen3 mixtral deepseek; do
  echo "== $n"; grep -E "^ *(timeline .* run 0|[0-9]+ +(uniform|skewed))" $W/$n/log.txt | head -60
done
