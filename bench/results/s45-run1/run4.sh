#!/usr/bin/env bash
# s45-run1 call 5 (repo root, carry [".debs"]): calls 3 and 4 (run2.sh,
# run3.sh) and call 1's multicast timing again, on an H200, so that the
# session's H100 comparisons have their H200 counterparts.
# Predicted: the same orderings as on the H100 (multicast within +-1 us
# where aligned; the reductions d0 - d4 growing with pairs x slices; .a2.b1
# ~10% at 1,024 pairs, <= 1 us on the best at <= 512), times 10-20% lower
# (the H200's faster HBM).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s45r4; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s45-run4.tgz -C /tmp s45r4' EXIT
nvidia-smi --query-gpu=name --format=csv,noheader
bash bench/results/s45-run1/run2.sh > $W/parts.txt 2>&1; echo "parts exit $?"
bash bench/results/s45-run1/run3.sh > $W/reductions.txt 2>&1; echo "reductions exit $?"
cp /tmp/s45r2/*.md /tmp/s45r2/*.csv /tmp/s45r3/*.md /tmp/s45r3/*.csv $W/ 2>/dev/null
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck || exit 1
V=""
for c in r8.w128.s4 r16.w128.s4 r32.w128.s4 r16.w256.s4; do V="$V,q:$c.t3,q:$c.t3.m1"; done
RAMP_MV2_BENCH_NAME=mcast RAMP_MV2_BENCH_VARIANTS=${V#,} RAMP_MV2_BENCH_LOADS=64b,256b,512b,1024b,256s,512s \
  timeout 150 ./bench_moe_v2 $W 60 > $W/mcast.txt 2>&1
echo "mcast exit $?"
for f in parts reductions; do echo "== $f"; grep -E "^q:" $W/$f.txt; done
echo "== mcast"; grep -E "^q:" $W/mcast.txt | awk '{print $1, $3, $4, $5}'
