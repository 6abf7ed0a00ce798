#!/usr/bin/env bash
# s27-run1 (session 27): does the polymorphic kernel's per-block overhead
# over the entry alone follow its code size? Session 26 measured (CPU) 244 KB
# of SASS for Mixtral's shipped six-entry first kernel against 35-37 KB for
# r32.w128.s4.ph2.dk4 alone or in a one-entry menu. Here the same entry is
# timed forced in menus of 1, 3 and 6 entries (first kernel 36, 110, 251 KB;
# phase 2 18, 40, 103 KB) and Qwen3-30B's r64.w256.s4 in menus of 1 and 6
# (62, 227 KB); bench_layer's "polymorphic / alone per entry" lines are the
# measure. Prediction if instruction fetch is the cost: the one-entry menus
# at ~1.00 (session 21: one entry 1.01x), the three-entry between, the
# shipped plans at s26-run3's 1.05-1.13. Then the GPU tests on this code
# and compute-sanitizer on the selection, as far as BUDGET (s) allows.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s27r1; rm -rf $W; mkdir -p $W
t0=$(date +%s)
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
cp build-gpucheck-logs/env.log $W/ 2>/dev/null
echo "built ($(( $(date +%s) - t0 )) s)"
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
H=bench/results/s27-run1; S=bench/results/s26-run1/fp8
bl() { # name, timeout, plan, dataset, tokens
  mkdir -p $W/$1
  timeout $2 ./build-gpucheck/bench_layer --plan $3 --dataset data/timing/$4.safetensors \
    --tokens $5 --out-dir $W/$1 --reps 30 --kernel v2 > $W/$1/log.txt 2>&1
  echo "bench $1 exit $? ($(( $(date +%s) - t0 )) s)"
}
bl mixtral-1 100 $H/plan-mixtral-menu1.json mixtral-8x22b-ep8-v2 64,256
bl mixtral-3 100 $H/plan-mixtral-menu3.json mixtral-8x22b-ep8-v2 64,256
bl mixtral-6 100 $S/plan-mixtral-8x22b-ep8-v2.json mixtral-8x22b-ep8-v2 64,256
bl qwen3-1 80 $H/plan-qwen3-menu1.json qwen3-30b-ep8-v2 2048
bl qwen3-6 80 $S/plan-qwen3-30b-ep8-v2.json qwen3-30b-ep8-v2 2048
tar czf $O/s27-run1.tgz -C /tmp s27r1
left=$(( ${BUDGET:-560} - ($(date +%s) - t0) ))
echo "ctest with ${left} s left"
if [ $left -gt 60 ]; then
  CTEST_ARGS="--timeout $left -R test_gpu_|test_jit" timeout $left tools/gpu-check ctest > $W/ctest.txt 2>&1
  echo "ctest exit $?"; cp build-gpucheck-logs/ctest.log $W/ 2>/dev/null
fi
left=$(( ${BUDGET:-560} + 25 - ($(date +%s) - t0) ))
if [ $left -gt 30 ]; then
  SAN_TIMEOUT=$(( left / 3 )) timeout $left tools/gpu-check sanitize > $W/sanitize.txt 2>&1
  echo "sanitize exit $?"; cp build-gpucheck-logs/sanitize*.txt $W/ 2>/dev/null
fi
tar czf $O/s27-run1.tgz -C /tmp s27r1
grep -E "tests passed|Failed|\*\*\*|Test +#" $W/ctest.txt 2>/dev/null | head -20
grep -h "exit\|SUMMARY" $W/sanitize*.txt 2>/dev/null | head
for n in mixtral-1 mixtral-3 mixtral-6 qwen3-1 qwen3-6; do
  echo "== $n"; grep -E "^[0-9]+ +(uniform|skewed)|^  r[0-9]+\.|polymorphic / alone" $W/$n/log.txt | head -20
done
