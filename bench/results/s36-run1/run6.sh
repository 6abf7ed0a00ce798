#!/usr/bin/env bash
# s36-run1 call 6: call 5 had `r32.w128.s4.gg8` faster than the two-phase
# `r32.w128.s4.ph2.dk4` alone (row-major weights, read flush: 83.3 against
# 85.4 us at 12 pairs) and in the row-major layer (88.1 against 89.4) but
# slower in the stage-unit layer (88.8 against 84.3): stage units took 5 us
# off the two-phase entry in the layer and nothing off gg8. Here both
# entries alone, row-major and on stage units, L2 emptied by a read and by
# a write (bench_moe_v2), to see whether units help gg8 alone.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s36r6; rm -rf $W; mkdir -p $W/read $W/write
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
cd build-gpucheck
V=m:r32.w128.s4.j8,m:r32.w128.s4.t3.j8,m:r32.w128.s4.u1.k4,m:r32.w128.s4.t3.u1.k4
V=$V,m:r16.w128.s4.j8,m:r16.w128.s4.t3.j8,m:r16.w128.s4.t3.u1.k4
for f in read write; do
  FL=; [ $f = read ] && FL=read
  RAMP_MV2_BENCH_FLUSH=$FL RAMP_MV2_BENCH_NAME=gg-$f RAMP_MV2_BENCH_VARIANTS=$V \
    RAMP_MV2_BENCH_LOADS=m16,m64 timeout 200 ./bench_moe_v2 $W/$f 30 > $W/$f/bench.txt 2>&1
  echo "bench $f exit $?"
done
cd ..
tar czf $O/s36-run1-call6.tgz -C /tmp s36r6
for f in read write; do echo "== $f"; grep grid $W/$f/bench.txt | awk '{print $1, $3, $5}'; done
