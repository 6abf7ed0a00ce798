#!/usr/bin/env bash
# s38-run1 call 1 (first run: a 64-bit modulo per request in the issuing
# thread, kept in call1/; call 2 without it, 8 KB requests added): bench_inflow (kernels/inflow.cuh): how fast the SMs take
# bytes in by TMA bulk copies (16-64 KB requests; multicast in pairs) and by
# loads, from an L2-resident window (8, 24 MiB) and from HBM (1 GiB), on 132,
# 66, 32, 8, 2 and 1 blocks; then compute-sanitizer memcheck on every kernel
# of it (1 MiB a block, one launch a row).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s38r1; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s38-run1-call${CALL:-2}.tgz -C /tmp s38r1' EXIT
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
(cd $B && timeout 300 ./bench_inflow $W/inflow.csv 10) > $W/inflow.log 2>&1
echo "bench_inflow exit $?"
sed -n '/^into the SMs/,$p' $W/inflow.log
(cd $B && RAMP_INFLOW_MIB=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 \
  ./bench_inflow $W/inflow-memcheck.csv 1) > $W/memcheck.log 2>&1
echo "memcheck exit $?"; tail -3 $W/memcheck.log
