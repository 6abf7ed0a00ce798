#!/usr/bin/env bash
# s28-run1 (session 28): the fast FP8 scale (fp8.cuh ramp_fp8_scale,
# RAMP_FAST_QSCALE 1): m * (1/448) and rcp.approx instead of two IEEE
# divisions per token in the requantization (v2 narrow and wide). On the
# CPU (NVRTC 13.0) it removes the last FCHK from every shipped FP8 plan's
# polymorphic kernel (Qwen3 48 -> 0, 197.9 -> 175.8 KB; Mixtral 32 -> 0,
# 285.9 -> 270.6 KB), same registers, no spills. Predicted: layers 1-3%
# faster where the polymorphic kernel paid instruction fetch (Qwen3 r48/r64,
# Mixtral r32/r64), nothing elsewhere. A/B in the same call:
# RAMP_JIT_DEFINES=RAMP_FAST_QSCALE=0 is the exact form. Then the GPU tests
# on this code (the FP8 bounds are what the change could break), wide tiles,
# and compute-sanitizer memcheck and racecheck on v2.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s28r1; rm -rf $W; mkdir -p $W
t0=$(date +%s)
left() { echo $(( ${BUDGET:-560} - ($(date +%s) - t0) )); }
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
cp build-gpucheck-logs/env.log $W/ 2>/dev/null
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
S=bench/results/s27-run5/fp8
QD=qwen3-30b-ep8-v2; MD=mixtral-8x22b-ep8-v2
bl() { # name, timeout, plan, dataset, tokens [, RAMP_JIT_DEFINES]
  mkdir -p $W/$1
  RAMP_JIT_DEFINES=${6:-} timeout $2 ./build-gpucheck/bench_layer --plan $3 --dataset data/timing/$4.safetensors \
    --tokens $5 --out-dir $W/$1 --reps 30 --kernel v2 > $W/$1/log.txt 2>&1
  echo "bench $1 exit $? ($(( $(date +%s) - t0 )) s)"
}
bl q6-fast 60 $S/plan-$QD.json $QD 256,2048
bl q6-exact 60 $S/plan-$QD.json $QD 256,2048 RAMP_FAST_QSCALE=0
bl m6-fast 80 $S/plan-$MD.json $MD 64,256
bl m6-exact 80 $S/plan-$MD.json $MD 64,256 RAMP_FAST_QSCALE=0
tar czf $O/s28-run1.tgz -C /tmp s28r1
CTEST_ARGS="--timeout 300 -R test_gpu_(moe_v2|layer|select|wgmma)|test_jit" timeout 320 tools/gpu-check ctest > $W/ctest.txt 2>&1
echo "ctest exit $? ($(( $(date +%s) - t0 )) s)"; cp build-gpucheck-logs/ctest.log $W/ 2>/dev/null
tar czf $O/s28-run1.tgz -C /tmp s28r1
v2() { # label, timeout, command prefix..., then environment is set by the caller
  local l=$1 to=$2; shift 2
  (cd build-gpucheck && RAMP_TEST_TMP=$PWD/test-tmp timeout $to "$@" ./test_gpu_moe_v2) > $W/v2-$l.txt 2>&1
  echo "test_gpu_moe_v2 $l exit $? ($(( $(date +%s) - t0 )) s)"
}
[ $(left) -gt 60 ] && RAMP_MOE_CONFIGS=r128.w128.s4,r128.w256.s3 RAMP_MOE_V2_MODELS=qwen3-30b,mixtral-8x22b \
  RAMP_MOE_TOKENS=300 v2 wide $(( $(left) - 10 ))
export RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r24.w256.s4,r64.w256.s4 RAMP_MOE_TOKENS=12 RAMP_MOE_V2_NO_V1=1
[ $(left) -gt 40 ] && v2 memcheck $(( $(left) / 2 )) compute-sanitizer --tool memcheck --error-exitcode 3
[ $(left) -gt 30 ] && RAMP_MOE_CONFIGS=r24.w256.s4 v2 racecheck $(( $(left) - 5 )) \
  compute-sanitizer --tool racecheck --error-exitcode 3
tar czf $O/s28-run1.tgz -C /tmp s28r1
grep -E "tests passed|Failed|Test +#" $W/ctest.txt | head -12
for f in $W/v2-*.txt; do echo "== $(basename $f)"; tail -3 $f | cut -c1-160; done
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $W/v2-*check.txt
for n in q6-fast q6-exact m6-fast m6-exact; do
  echo "== $n"; grep -E "^[0-9]+ +(uniform|skewed)|^  r[0-9]+\." $W/$n/log.txt | cut -c1-78 | head -12
done
