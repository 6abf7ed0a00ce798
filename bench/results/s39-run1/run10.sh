#!/usr/bin/env bash
# s39-run1 call 10: the shipped steps end to end. gpu-check `wgmma_bench`
# (every form compiled, the two .h intensities at the ring's ends too, the
# SASS check; a short bench of the .h forms), `power` with its defaults (the
# curve at 64-512 FLOP a weight byte, v2 on DeepSeek-V3 back to back, the
# join, both plots), and compute-sanitizer memcheck on the .h forms at 1
# and 4 pieces an iteration.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s39r10; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s39-run1-call10.tgz -C /tmp s39r10' EXIT
WGMMA_BENCH_ARGS="--forms ss.a2.h,ss.a2.pr.h --n 128 --w 2 --grids 1 --reps 10 --hbm-pieces 1,4" \
  tools/gpu-check env deps build wgmma_bench power > $W/gpu-check.txt 2>&1
echo "gpu-check exit $?"; cp -r build-gpucheck-logs $W/logs; tail -4 $W/gpu-check.txt
grep -E "sass|SASS|programs|checks" $W/logs/tables.txt | head
sed -n '/^power roofline/,$p' $W/logs/tables.txt
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 ./bench_wgmma --forms ss.a2.h,ss.a2.pr.h \
  --n 128 --w 1,2 --grids 1 --reps 1 --target-ms 0.1 --hbm-pieces 1,4 > $W/memcheck.txt 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" $W/memcheck.txt
