#!/usr/bin/env bash
# s38-run1 call 12: does the producer's shared-memory writing slow the
# consumers' wgmmas? bench_wgmma's new .t forms add a warpgroup that writes
# 48 KB into shared memory by TMA per iteration (kernel v2's wide stage: 32
# KB of weights and 16 KB of token rows per K block of gate and up), paced
# by the consumers (at most two iterations ahead), with setmaxnreg as v2
# (40 + 2 x 232). Predicted: 5-10% off the .pr rhythm (v2's wgmmas read
# 80 KB of operands a stage beside the 48 KB written: ~70% of the shared
# memory's 128 B/clk at the full tensor rate).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s38r12; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s38-run1-call12.tgz -C /tmp s38r12' EXIT
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
for r in a b; do
  (cd $B && timeout 200 ./bench_wgmma --forms ss.a2,ss.a2.t,ss.a2.pr,ss.a2.pr.t,ss.a2.pp,ss.a2.pp.t \
    --n 64,128 --w 2 --grids 1 --reps 10 --csv $W/wgmma-$r.csv) > $W/wgmma-$r.txt 2>&1
  echo "bench_wgmma $r exit $?"; grep -E "^ss\." $W/wgmma-$r.txt
done
(cd $B && RAMP_WGMMA_BENCH_COMPILE_THREADS=16 ./test_wgmma_bench_compile) > $W/compile.txt 2>&1
echo "test_wgmma_bench_compile exit $?"
(cd $B && timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 ./bench_wgmma --forms ss.a2.pr.t \
  --n 128 --w 2 --grids 1 --reps 1 --target-ms 0.1) > $W/memcheck.txt 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" $W/memcheck.txt
