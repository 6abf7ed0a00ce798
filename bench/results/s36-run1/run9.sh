#!/usr/bin/env bash
# s36-run1 call 9: the kernel alone with phase 2 by programmatic dependent
# launch (bench_moe_v2 .f1, ramp_moe_v2_opts.pdl: its producers wait for
# phase 1 after their first weights, RAMP_MV2_LATE_WAIT), as the layer
# launches a two-phase entry. Call 7's timeline read the layer's overlap as
# worth 4-7 us on Mixtral's small loads; predicted here: the two-phase
# entries 3-6 us faster at 16-64 pairs, near the gather (.j8), which has
# no second launch. Qwen3-30B's .f1 variants are checked against the CPU
# reference by the bench (512 balanced pairs).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s36r9; rm -rf $W; mkdir -p $W/a $W/b
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
cd build-gpucheck
V=
for r in r16.w128.s4.t3.u1.k5 r32.w128.s4.t3.u1.k4 r64.w128.s4.t3.u1.k4 r128.w128.s3.t3.u1.k4.y1; do
  V=$V,m:$r,m:$r.f1
done
V=${V#,},m:r32.w128.s4.t3.j8,m:r16.w128.s4.t3.j8.b1,q:r32.w128.s4.u1.k2.f1,q:r128.w128.s3.u1.k2.f1
for run in a b; do
  RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=pdl-$run RAMP_MV2_BENCH_VARIANTS=$V \
    RAMP_MV2_BENCH_LOADS=m16,m64,m128,512b timeout 200 ./bench_moe_v2 $W/$run 30 > $W/$run/bench.txt 2>&1
  echo "bench $run exit $?"
done
cd ..
tar czf $O/s36-run1-call9.tgz -C /tmp s36r9
grep -h "| qwen3" $W/a/*.md | head -4
for run in a b; do echo "== $run"; grep grid $W/$run/bench.txt | awk '{print $1, $3, $5}'; done
