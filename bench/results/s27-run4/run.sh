#!/usr/bin/env bash
# s27-run4 (session 27): the fast SiLU (common.cuh ramp_silu, RAMP_FAST_SILU 1).
# s27-run2's source counters put the polymorphic kernel's extra time in
# instruction fetch, and a quarter of an entry's per-tile code is the IEEE
# division in SiLU (~22 instructions an element, unrolled: FCHK, a slow-path
# branch); __fdividef / __expf take the Mixtral first kernel from 251 to
# 190 KB of SASS, Qwen3's from 227 to 203, r64.w256.s4's one-entry kernel
# from 62 to 54. Predicted: the polymorphic / alone ratios fall (most where
# they are 1.05-1.14), the entries alone a little faster. A/B in the same
# call: RAMP_JIT_DEFINES=RAMP_FAST_SILU=0 is the exact form. Then the GPU
# tests on this code (FP8 and BF16, the layer, wide tiles) and memcheck.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s27r4; rm -rf $W; mkdir -p $W
t0=$(date +%s)
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
cp build-gpucheck-logs/env.log $W/ 2>/dev/null
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
S=bench/results/s26-run1/fp8; P=bench/results/s27-run1
QD=qwen3-30b-ep8-v2; MD=mixtral-8x22b-ep8-v2
bl() { # name, timeout, plan, dataset, tokens [, RAMP_JIT_DEFINES]
  mkdir -p $W/$1
  RAMP_JIT_DEFINES=${6:-} timeout $2 ./build-gpucheck/bench_layer --plan $3 --dataset data/timing/$4.safetensors \
    --tokens $5 --out-dir $W/$1 --reps 30 --kernel v2 > $W/$1/log.txt 2>&1
  echo "bench $1 exit $? ($(( $(date +%s) - t0 )) s)"
}
bl q6-fast 60 $S/plan-$QD.json $QD 256,2048
bl q6-exact 60 $S/plan-$QD.json $QD 256,2048 RAMP_FAST_SILU=0
bl m6-fast 80 $S/plan-$MD.json $MD 64,256
bl m6-exact 80 $S/plan-$MD.json $MD 64,256 RAMP_FAST_SILU=0
bl q1-fast 40 $P/plan-qwen3-menu1.json $QD 2048
tar czf $O/s27-run4.tgz -C /tmp s27r4
CTEST_ARGS="--timeout 300 -R test_gpu_(moe_v2|layer|select|wgmma)|test_jit" timeout 320 tools/gpu-check ctest > $W/ctest.txt 2>&1
echo "ctest exit $? ($(( $(date +%s) - t0 )) s)"; cp build-gpucheck-logs/ctest.log $W/ 2>/dev/null
tar czf $O/s27-run4.tgz -C /tmp s27r4
t() { # label, timeout, environment for test_gpu_moe_v2
  local l=$1 to=$2; shift 2
  (cd build-gpucheck && env RAMP_TEST_TMP=$PWD/test-tmp "$@" timeout $to ./test_gpu_moe_v2) > $W/v2-$l.txt 2>&1
  echo "test_gpu_moe_v2 $l exit $? ($(( $(date +%s) - t0 )) s)"
}
left() { echo $(( ${BUDGET:-600} - ($(date +%s) - t0) )); }
[ $(left) -gt 100 ] && t bf16 $(( $(left) - 20 )) RAMP_MOE_V2_BF16=1
[ $(left) -gt 60 ] && t wide $(( $(left) - 10 )) RAMP_MOE_CONFIGS=r128.w128.s4,r128.w256.s3 \
  RAMP_MOE_V2_MODELS=qwen3-30b,mixtral-8x22b RAMP_MOE_TOKENS=300
[ $(left) -gt 40 ] && (cd build-gpucheck && RAMP_TEST_TMP=$PWD/test-tmp RAMP_MOE_V2_MODELS=qwen3-30b \
  RAMP_MOE_CONFIGS=r24.w256.s4,r64.w256.s4 RAMP_MOE_TOKENS=12 RAMP_MOE_V2_NO_V1=1 \
  timeout $(( $(left) - 5 )) compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_moe_v2) > $W/v2-memcheck.txt 2>&1 \
  && echo "memcheck exit 0" || echo "memcheck exit $?"
tar czf $O/s27-run4.tgz -C /tmp s27r4
grep -E "tests passed|Failed|Test +#" $W/ctest.txt | head -12
for f in $W/v2-*.txt; do echo "== $(basename $f)"; tail -3 $f | cut -c1-160; done
grep -h "ERROR SUMMARY" $W/v2-memcheck.txt
for n in q6-fast q6-exact m6-fast m6-exact q1-fast; do
  echo "== $n"; grep -E "^[0-9]+ +(uniform|skewed)|^  r[0-9]+\." $W/$n/log.txt | cut -c1-78 | head -12
done
