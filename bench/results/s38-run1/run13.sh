#!/usr/bin/env bash
# s38-run1 call 13: call 12 found v2's promotion rhythm 88.6% busy in v2's
# block (.t: a third warpgroup writing 48 KB a stage by TMA, setmaxnreg)
# against 71.9% in a two-warpgroup block. The .i forms keep that warpgroup
# and setmaxnreg but copy nothing: the block's shape without its writes.
# Predicted: .pr.i as .pr.t (the shape, not the writes), .pp.i a few points
# above .pp.t (the writes cost the pipelined form 5.5).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s38r13; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s38-run1-call13.tgz -C /tmp s38r13' EXIT
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
for r in a b; do
  (cd $B && timeout 200 ./bench_wgmma --forms ss.a2.pr,ss.a2.pr.i,ss.a2.pr.t,ss.a2.pp,ss.a2.pp.i,ss.a2.pp.t \
    --n 64,128 --w 2 --grids 1 --reps 10 --csv $W/wgmma-$r.csv) > $W/wgmma-$r.txt 2>&1
  echo "bench_wgmma $r exit $?"; grep -E "^ss\." $W/wgmma-$r.txt
done
