#!/usr/bin/env bash
# s45-run1 call 3 (repo root, carry [".debs"]): what a narrow row tile costs,
# by part. Call 1 found multicast (L2's weight reads halved) changes nothing,
# so the candidates left are each CTA's weight stream, its token gather, the
# consumers' math and the output's f32 reductions. Qwen3-30B EP8, stage
# units, r16.w128 / r16.w256 / r32.w128 at 64-1,024 balanced pairs and 512
# skewed, each whole (d0) and with timing diagnostics (moe_v2.cuh): d1 loads
# and gather only (no math), d2 weights only, d4 no output reductions, d6
# the math alone (no loads).
# Predicted: d2 within 10% of d0 on every load (the weight stream per CTA
# is the cost, as multicast's null result suggests); d4 2-6 us under d0 at
# 512-1,024 pairs; d6 well under d2.
set -u
fits() { [ $((SECONDS + $1)) -le 570 ] || { echo "skipped (${SECONDS} s used): $2"; return 1; }; }
O=${OUT:-/tmp/out}; W=/tmp/s45r2; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s45-run2.tgz -C /tmp s45r2' EXIT
tools/gpu-check env deps build > $W/build.txt 2>&1 || { tail -20 $W/build.txt; exit 1; }
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck || exit 1
V=""
for c in r16.w128.s4 r16.w256.s4 r32.w128.s4; do
  for d in 0 1 2 4 6; do V="$V,q:$c.t3.d$d"; done
done
fits 200 bench && RAMP_MV2_BENCH_NAME=parts RAMP_MV2_BENCH_VARIANTS=${V#,} RAMP_MV2_BENCH_LOADS=64b,256b,512b,1024b,512s \
  timeout 200 ./bench_moe_v2 $W 60 > $W/bench.txt 2>&1
echo "bench_moe_v2 exit $?"
grep -E "^q:" $W/bench.txt | awk '{print $1, $3, $4, $5}'
