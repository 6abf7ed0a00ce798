#!/usr/bin/env bash
# s26-run3 (session 26): s26-run2's timeline showed the MoE kernel runs as
# long in the layer as forced, so the layer's time over the forced kernel
# is the selection plus launch costs; what is left is the polymorphic
# kernel's own overhead over the entry alone (Qwen3-30B EP8 2,048 uniform,
# r64.w256.s4: 84.1 against 77.2 us) and the cost it leaves the next kernel
# (poly-k1+sel 98.6 against poly-k1 83.2 plus a 6.9 us selection). Now the
# entry alone is stamped too (kernel 4), and the first kernel / the entry
# alone followed by the selection ("k1+sel", "a+sel"). Prediction (session
# 21's Nsight: +16% cycles, same instructions): the poly kernel's blocks
# run longer than the alone kernel's from their start, not start late; the
# selection after it starts late (its wait for the poly kernel's end).
# Then the GPU tests of the selection, the layer and kernel v2 on the final
# code (ctest) and compute-sanitizer on the selection (gpu-check's sanitize
# step), as far as the call's time allows (BUDGET seconds, default 200).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s26r3; rm -rf $W; mkdir -p $W
t0=$(date +%s)
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
cp build-gpucheck-logs/env.log $W/ 2>/dev/null
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
R=bench/results/s26-run1/fp8
tl() { # name, timeout, plan, dataset, tokens
  mkdir -p $W/$1
  timeout $2 ./build-gpucheck/bench_layer --plan $R/plan-$3.json --dataset data/timing/$3.safetensors \
    --tokens $4 --out-dir $W/$1 --reps 20 --kernel v2 --timeline 1 > $W/$1/log.txt 2>&1
  echo "bench $1 exit $? ($(( $(date +%s) - t0 )) s)"
}
tl qwen3 150 qwen3-30b-ep8-v2 64,2048
tl mixtral 120 mixtral-8x22b-ep8-v2 64
tar czf $O/s26-run3.tgz -C /tmp s26r3
left=$(( ${BUDGET:-200} - ($(date +%s) - t0) ))
echo "ctest with ${left} s left"
if [ $left -gt 60 ]; then
  CTEST_ARGS="--timeout $left -R test_gpu_(select|layer|moe_v2)" timeout $left tools/gpu-check ctest > $W/ctest.txt 2>&1
  echo "ctest exit $?"; cp build-gpucheck-logs/ctest.log $W/ 2>/dev/null
fi
left=$(( ${BUDGET:-200} + 30 - ($(date +%s) - t0) ))
if [ $left -gt 45 ]; then
  SAN_TIMEOUT=$(( left / 3 )) timeout $left tools/gpu-check sanitize > $W/sanitize.txt 2>&1
  echo "sanitize exit $?"; cp build-gpucheck-logs/sanitize.log $W/ 2>/dev/null
fi
tar czf $O/s26-run3.tgz -C /tmp s26r3
tail -45 $W/ctest.txt 2>/dev/null | grep -E "tests passed|Failed|\*\*\*|Passed|SKIP|Not Run" | head -40
for n in qwen3 mixtral; do
  echo "== $n"; grep -E "^ *(timeline .* run 0|[0-9]+ +(uniform|skewed))" $W/$n/log.txt | head -40
done
