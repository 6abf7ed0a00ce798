#!/usr/bin/env bash
# s35-run1 call 2: call 1 showed clusters of 4 or 8 CTAs resident on only
# 120 of the 132 SMs (30 of 4, 15 of 8: the GPCs), so Mixtral's 128 slices
# of w 128 in clusters of 4 or 8 run a second round. Here the slices of w
# 256 (64 CTAs, which stream the fused tile's weights as fast as 128 did
# for phase 1 in session 29) in clusters of 8 (8-way output adds), 4 and 5
# stages, with the bounds without output (.d4), beside the layer's
# two-phase entries.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s35r1b; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
git log -1 --format=%H >> $W/env.txt
cd build-gpucheck
V=m:r16.w128.s4.t3.u1.k4,m:r32.w128.s4.t3.u1.k4,m:r64.w128.s4.t3.u1.k4,m:r32.w128.s4.t3.a2.d4
V=$V,m:r16.w256.s4.t3,m:r16.w256.s4.t3.d4,m:r16.w256.s4.t3.a8,m:r16.w256.s4.t3.a8.d4
V=$V,m:r16.w256.s5.t3.a8,m:r8.w256.s4.t3.a8,m:r8.w256.s5.t3.a8,m:r32.w256.s4.t3.a8
V=$V,m:r32.w256.s4.t3.a4,m:r64.w256.s3.t3.a4
RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=cgather2 RAMP_MV2_BENCH_VARIANTS=$V \
  RAMP_MV2_BENCH_LOADS=m4,m8,m16,m32,m64,m128 timeout 300 ./bench_moe_v2 $W 20 > $W/bench.txt 2>&1
echo "bench exit $?"
cd ..
tar czf $O/s35-run1-call2.tgz -C /tmp s35r1b
grep -E "grid" $W/bench.txt | sort -k2,2 -k3n | awk '{print $1, $3, $5, $9}' | column -t
