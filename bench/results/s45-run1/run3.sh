#!/usr/bin/env bash
# s45-run1 call 4 (repo root, carry [".debs"]): call 3 found a narrow row
# tile's growing cost is mostly the output's f32 reductions (d0 - d4: 10 us
# of 54.5 at 512 balanced pairs, 19 of 70 at 1,024, r16.w128) and the math,
# not the weight stream (d2 flat at 38-44 us). The two built levers on the
# reductions, timed beside the plain tiles: bulk reductions (.b1, session
# 13: one cp.reduce.async.bulk per token and chunk) and the cluster gather
# (.a2, session 35: two CTAs share their intermediates, each output element
# added once per two slices). Qwen3-30B EP8, stage units.
# Predicted: .a2.b1 removes half of d0 - d4 at 512-1,024 pairs (5-10 us on
# r16.w128), .b1 alone 2-4 us; at 64-256 pairs within +-1 us.
set -u
fits() { [ $((SECONDS + $1)) -le 570 ] || { echo "skipped (${SECONDS} s used): $2"; return 1; }; }
O=${OUT:-/tmp/out}; W=/tmp/s45r3; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s45-run3.tgz -C /tmp s45r3' EXIT
tools/gpu-check env deps build > $W/build.txt 2>&1 || { tail -20 $W/build.txt; exit 1; }
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck || exit 1
V=q:r16.w128.s4.t3,q:r16.w128.s4.t3.b1,q:r16.w128.s4.t3.a2,q:r16.w128.s4.t3.a2.b1
V=$V,q:r16.w256.s4.t3,q:r16.w256.s4.t3.b1,q:r8.w128.s4.t3,q:r8.w128.s4.t3.b1,q:r8.w128.s4.t3.a2.b1
V=$V,q:r32.w128.s4.t3,q:r32.w128.s4.t3.b1,q:r32.w128.s4.t3.a2.b1
fits 200 bench && RAMP_MV2_BENCH_NAME=reductions RAMP_MV2_BENCH_VARIANTS=$V RAMP_MV2_BENCH_LOADS=64b,256b,512b,1024b,256s,512s \
  timeout 200 ./bench_moe_v2 $W 60 > $W/bench.txt 2>&1
echo "bench_moe_v2 exit $?"
grep -E "^q:" $W/bench.txt | awk '{print $1, $3, $4, $5, $10}'
grep -iE "error|refus|fail" $W/bench.txt | head
