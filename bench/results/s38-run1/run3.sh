#!/usr/bin/env bash
# s38-run1 call 3: the ceiling of kernel v2's wide consumer rhythm with its
# FP8 block-scale promotion, from shared-memory-resident operands (no loads):
# bench_wgmma's new forms ss.a2.pr (per set: 4 wgmmas into a temporary, wait
# 0, acc += T x scale: v2's) and ss.a2.pp (two temporaries alternating, the
# next group issued before this one is promoted) beside ss.a2 (no
# promotion), N 64 and 128, one and two warpgroups, one block per SM.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s38r3; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s38-run1-call3.tgz -C /tmp s38r3' EXIT
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
(cd $B && timeout 300 ./bench_wgmma --forms ss.a2,ss.a2.pr,ss.a2.pp --n 32,64,128 --w 1,2 --grids 1 \
  --reps 20 --csv $W/wgmma.csv) > $W/wgmma.log 2>&1
echo "bench_wgmma exit $?"
grep -E "^ *ss\.|form" $W/wgmma.log | tail -30
