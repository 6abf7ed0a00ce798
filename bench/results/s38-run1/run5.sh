#!/usr/bin/env bash
# s38-run1 call 5 (and 6, CALL=6, after the fix below): bench_inflow made self-checking (the window holds its word
# indices; the copies check their last piece, the loads every word, a
# mismatch fails the run) through tools/gpu-check's inflow step, which also
# runs it on a zeroed window (RAMP_INFLOW_BREAK=1: every kind must fail);
# then compute-sanitizer memcheck on the checking kernels.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s38r5; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s38-run1-call${CALL:-5}.tgz -C /tmp s38r5' EXIT
tools/gpu-check env deps build inflow > $W/gpu-check.txt 2>&1; echo "gpu-check exit $?"
cp build-gpucheck-logs/inflow.csv build-gpucheck-logs/inflow.log build-gpucheck-logs/inflow-break.txt $W/ 2>/dev/null
tail -14 $W/gpu-check.txt
B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
(cd $B && RAMP_INFLOW_MIB=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 \
  ./bench_inflow $W/inflow-memcheck.csv 1) > $W/memcheck.txt 2>&1
echo "memcheck exit $?"; grep -E "landed|ERROR SUMMARY" $W/memcheck.txt | tail -9
