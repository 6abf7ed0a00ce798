#!/usr/bin/env bash
# s38-run1 call 9: bench_inflow after its last edit (rows kept in memory and
# the CSV written once every kind checked out; reps at most 64), through
# tools/gpu-check's inflow step (the zeroed window must fail every kind),
# and the wgmma bench's promotion forms once more (one warpgroup pair, N 64
# and 128) from the committed code.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s38r9; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s38-run1-call9.tgz -C /tmp s38r9' EXIT
tools/gpu-check env deps build inflow > $W/gpu-check.txt 2>&1; echo "gpu-check exit $?"
cp build-gpucheck-logs/inflow.csv build-gpucheck-logs/inflow.log build-gpucheck-logs/inflow-break.txt $W/ 2>/dev/null
ls build-gpucheck-logs/ | grep -c "inflow-break.csv"
tail -9 $W/gpu-check.txt
B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
(cd $B && timeout 200 ./bench_wgmma --forms ss.a2.pr,ss.a2.pp --n 64,128 --w 2 --grids 1 --reps 10 \
  --csv $W/wgmma.csv) > $W/wgmma.txt 2>&1; echo "bench_wgmma exit $?"
grep -E "^ss\." $W/wgmma.txt
