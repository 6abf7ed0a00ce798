#!/usr/bin/env bash
# s45-run1 call 1 (repo root, carry [".debs"]):
# (a) the Python binding's GPU test after session 44's binding changes
#     (s44-run1/run1.sh's part), then under memcheck.
#     Predicted: 16/16 in each of the three forms, refusals 4/4, worst
#     error / tolerance ~0.3, memcheck 0 errors.
# (b) narrow fused FP8 tiles by TMA multicast (session 45, opts only):
#     test_gpu_moe_v2 RAMP_MOE_V2_MCAST=1 on Qwen3-30B and DeepSeek-V3,
#     row-major and stage units, every element against the CPU reference and
#     v1; memcheck and racecheck. Predicted: 0 failures, 0 errors, 0 hazards.
# (c) does a narrow row tile's cost come from L2's weight reads? Qwen3-30B
#     EP8, stage units, rows 8/16/32 at w128 and 16 at w256, each with and
#     without .m1, on 64-1,024 pairs balanced and 256/512 skewed. Pairs of
#     row tiles share weights only where both are one expert's: balanced
#     256 pairs (16 an expert) aligns for r8, 512 for r8 and r16, 1,024 for
#     r8, r16, r32; elsewhere a pair straddles two experts and .m1 only adds
#     the cluster. Predicted, if L2's reads are the cost: aligned .m1 loads
#     faster by 3-8 us (a share of session 40's 0.6 us a row tile, ~32 row
#     tiles at 512), straddling ones within +-1 us; if not, all within
#     +-1 us and the lever is not multicast.
set -u
# the call has 600 s: a step starts only if its timeout fits before 570 s
fits() { [ $((SECONDS + $1)) -le 570 ] || { echo "skipped (${SECONDS} s used): $2"; return 1; }; }
O=${OUT:-/tmp/out}; W=/tmp/s45r1; rm -rf $W; mkdir -p $W/py $W/mc $W/bench
trap 'tar czf $O/s45-run1.tgz -C /tmp s45r1' EXIT
PY_ITERS=16 SAN_TIMEOUT=150 timeout 200 tools/gpu-check env deps build python > $W/py/gpu-check.txt 2>&1
echo "gpu-check python exit $?"
cp -r build-gpucheck-logs/* $W/py/ 2>/dev/null
grep -A8 "python binding form" build-gpucheck-logs/tables.txt; grep -E "^worst|memcheck" build-gpucheck-logs/tables.txt
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck || exit 1
export RAMP_TEST_TMP=$PWD/test-tmp; mkdir -p $RAMP_TEST_TMP
C=r2.w128.s4,r8.w128.s4,r12.w128.s4,r16.w128.s4,r32.w256.s4,r64.w128.s4,r8.w512.s4,r48.w256.s4
for t in 0 3; do
  fits 120 "test tiled $t" || continue
  RAMP_MOE_V2_MCAST=1 RAMP_MOE_V2_TILED=$t RAMP_MOE_V2_MODELS=qwen3-30b,deepseek-v3 RAMP_MOE_CONFIGS=$C \
    timeout 120 ./test_gpu_moe_v2 > $W/mc/test-t$t.txt 2>&1
  echo "test_gpu_moe_v2 mcast tiled $t exit $?"
  grep -E '^[a-z0-9-]+: E=|^  (config|r[0-9])|graph|^test_gpu_moe_v2|differ|FAIL|fail' $W/mc/test-t$t.txt | head -30
done
V=""
for c in r8.w128.s4 r16.w128.s4 r32.w128.s4 r16.w256.s4; do V="$V,q:$c.t3,q:$c.t3.m1"; done
fits 150 bench && RAMP_MV2_BENCH_NAME=mcast RAMP_MV2_BENCH_VARIANTS=${V#,} RAMP_MV2_BENCH_LOADS=64b,256b,512b,1024b,256s,512s \
  timeout 150 ./bench_moe_v2 $W/bench 60 > $W/bench/bench.txt 2>&1
echo "bench_moe_v2 exit $?"
tail -n 60 $W/bench/bench.txt
for run in "memcheck|r16.w128.s4|40|0" "memcheck|r2.w128.s4,r64.w128.s4|24|3" "racecheck|r8.w128.s4|6|0"; do
  IFS='|' read -r tool cf tok t <<< "$run"
  fits 100 "$tool $cf" || continue
  RAMP_MOE_V2_MCAST=1 RAMP_MOE_V2_TILED=$t RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=$cf RAMP_MOE_TOKENS=$tok \
    RAMP_MOE_V2_NO_V1=1 timeout 100 compute-sanitizer --tool $tool --error-exitcode 3 ./test_gpu_moe_v2 \
    > $W/mc/san-$tool-$t-${cf%%,*}.txt 2>&1
  echo "$tool $cf t$t exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/mc/san-$tool-$t-${cf%%,*}.txt))"
done
