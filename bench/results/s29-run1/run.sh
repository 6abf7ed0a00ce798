#!/usr/bin/env bash
# s29-run1: where Mixtral-8x22B EP8's one-expert stream loses (session 29).
# Phase 1 streams W13 (201 MB) at ~3.35 TB/s where a plain read of the same
# bytes runs at ~4.4; is that the load side (the TMA boxes' pattern: 128
# rows x 128 B, rows 6 KB apart; the ring's depth; the blocks pulling) or
# the consumers? The kernel alone (bench_moe_v2, L2 emptied by a read,
# median of 20) on 16 and 64 pairs: phase 1 full / d1 (no math) / d2 (TMA
# weights only) / d3 (no loads), 5 stages, a grid of 66, width 256; phase
# 2 full and d2; the fused tile and the split-K tile row-major and
# pre-tiled (.t1), full and d2.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s29r1; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
git log -1 --format='commit %H' >> $W/env.txt 2>/dev/null
V=m:r32.w128.s4.u1.k4
V=$V,m:r32.w128.s4.u2,m:r32.w128.s4.u2.d1,m:r32.w128.s4.u2.d2,m:r32.w128.s4.u2.d3
V=$V,m:r32.w128.s5.u2,m:r32.w128.s5.u2.d2,m:r32.w128.s4.u2.d2.g66,m:r32.w128.s4.u2.g66
V=$V,m:r32.w256.s4.u2,m:r32.w256.s4.u2.d2
V=$V,m:r32.w128.s4.u3.k4,m:r32.w128.s4.u3.k4.d2
V=$V,m:r32.w128.s4,m:r32.w128.s4.d2,m:r32.w128.s4.t1,m:r32.w128.s4.t1.d2
V=$V,m:r4.w256.s4.c2,m:r4.w256.s4.c2.d2,m:r4.w256.s4.c2.t1,m:r4.w256.s4.c2.t1.d2
cd build-gpucheck
RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=mixtral-stream RAMP_MV2_BENCH_VARIANTS=$V \
  RAMP_MV2_BENCH_LOADS=m16,m64 timeout 400 ./bench_moe_v2 $W 20 > $W/bench.txt 2>&1
echo "bench exit $?"
cd ..
tar czf $O/s29-run1.tgz -C /tmp s29r1
tail -5 $W/bench.txt
grep -E "^\| mixtral" $W/moe-v2-*-mixtral-stream.md | cut -d'|' -f3,5-9
