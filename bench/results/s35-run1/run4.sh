#!/usr/bin/env bash
# s35-run1 call 4: where Mixtral-8x22B's one-row-tile wide entry loses (the
# dataset's 100-128-pair loads: 111-114 us alone, against ~75 if each phase
# took the longer of its stream and its math). Each launch of the layer's
# r128.w128.s3.ph2.dk4.tx (units) alone and under the timing diagnostics
# (.d1 the consumers only wait and release: the weights and token rows
# alone; .d2 the weights alone; .d6 the math alone, no loads), at 128 and
# 256 pairs; the multicast entry r128.w128.s4.ph2.dk2.mc.tx at 256.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s35r1d; mkdir -p $W
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
cd build-gpucheck
B=m:r128.w128.s3.t3
V=$B.u1.k4.y1,$B.u2.k4.y1,$B.u2.k4.y1.d1,$B.u2.k4.y1.d2,$B.u2.k4.y1.d6
V=$V,$B.u3.k4.y1,$B.u3.k4.y1.d1,$B.u3.k4.y1.d2,$B.u3.k4.y1.d6
M=m:r128.w128.s4.t3
V=$V,$M.u1.k2.m1.y1,$M.u2.k2.m1.y1,$M.u3.k2.m1.y1,$M.u2.k2.m1.y1.d1,$M.u2.k2.m1.y1.d6
RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=wide-phases RAMP_MV2_BENCH_VARIANTS=$V \
  RAMP_MV2_BENCH_LOADS=m128,m256 timeout 240 ./bench_moe_v2 $W 20 > $W/bench.txt 2>&1
echo "bench exit $?"
cd ..
tar czf $O/s35-run1-call4.tgz -C /tmp s35r1d
grep grid $W/bench.txt | awk '{print $1, $3, $5, $11}'
