#!/usr/bin/env bash
# s38-run1 call 8: what phase 2's output reductions cost, by load: the down
# launch alone (.u3) against the same without its output adds (.d4) and its
# math alone (.d6), Mixtral-8x22B EP8's wide (.k4.y1) and narrow (r32, r16)
# two-phase entries on stage units at 16-128 pairs, DeepSeek-V3 4,096
# balanced. Kernel alone, read flush, two runs.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s38r8; rm -rf $W; mkdir -p $W/a $W/b
trap 'tar czf $O/s38-run1-call8.tgz -C /tmp s38r8' EXIT
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
cd build-gpucheck
M=m:r128.w128.s3.t3.u1.k4.y1 N=m:r32.w128.s4.t3.u1.k4 R=m:r16.w128.s4.t3.u1.k4 D=d:r128.w128.s3.t3.u1.y1
V=$M.u3,$M.u3.d4,$M.u3.d6,$N.u3,$N.u3.d4,$N.u3.d6,$R.u3,$R.u3.d4,$D.u3,$D.u3.d4,$D.u3.d6
for run in a b; do
  RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=p2red$run RAMP_MV2_BENCH_VARIANTS=$V \
    RAMP_MV2_BENCH_LOADS=m16,m32,m64,m128,4096b timeout 200 ./bench_moe_v2 $W/$run 20 > $W/$run/bench.txt 2>&1
  echo "bench $run exit $?"
done
for run in a b; do echo "== $run"; grep grid $W/$run/bench.txt | awk '{print $1, $3, $5}'; done
