#!/usr/bin/env bash
# s39-run1 call 3: the .h forms with a ring of 10 pieces: two iterations (64 KB
# of weights at N = 128) in flight beside the one computed, as v2's three-stage
# ring (call 2's 8-piece ring, 2 iterations ahead, had one: too shallow).
# Predicted: ss.a2.h N128 up from call 2's 966 TFLOP/s (3.77 TB/s) to
# 1,050-1,150 sustained, ss.a2.pr.h from 870 to 950-1,050; the N = 64 forms
# (5 iterations ahead now) up most; power at the 700 W cap throughout.
# DeepSeek-V3's kernel again beside them (back to back and read flush).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s39r3; rm -rf $W; mkdir -p $W/moe $W/moeflush
trap 'tar czf $O/s39-run1-call3.tgz -C /tmp s39r3' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,enforced.power.limit --format=csv > $W/env.txt 2>&1
date -u >> $W/env.txt
Q=timestamp,power.draw.instant,power.draw,clocks.sm,clocks.mem,clocks_event_reasons.active,temperature.gpu
TZ=UTC nvidia-smi --query-gpu=$Q --format=csv,nounits -lms 20 > $W/smi.csv 2>$W/smi.err &
SMI=$!
t0=$(date +%s.%N); sleep 2; t1=$(date +%s.%N)
export WGMMA_BENCH_ARGS="--forms ss.a2.t,ss.a2.h,ss.a2.pr.t,ss.a2.pr.h,ss.a2.pp.t,ss.a2.pp.h --n 64,128 --w 2 --grids 1 --reps 40 --target-ms 25"
tools/gpu-check env deps build wgmma_bench > $W/gpu-check.txt 2>&1
echo "gpu-check exit $?"; cp -r build-gpucheck-logs $W/gpu-check-logs
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck
timeout 120 ./bench_wgmma $WGMMA_BENCH_ARGS --csv $W/wgmma-b.csv > $W/wgmma-b.txt 2>&1
echo "bench_wgmma b exit $?"
# the .h forms at the defaults of earlier calls (2 ms launches, 10 reps): a short burst
timeout 120 ./bench_wgmma --forms ss.a2.h,ss.a2.pr.h,ss.a2.pp.h,ss.a2.pr.t --n 64,128 --w 2 --grids 1 \
  --reps 10 --csv $W/wgmma-short.csv > $W/wgmma-short.txt 2>&1
echo "bench_wgmma short exit $?"
D=d:r128.w128.s3.t3.u1.y1
RAMP_MV2_BENCH_FLUSH=none RAMP_MV2_BENCH_NAME=power RAMP_MV2_BENCH_VARIANTS=$D,$D.u2,$D.u3 \
  RAMP_MV2_BENCH_LOADS=4096b timeout 150 ./bench_moe_v2 $W/moe 3000 > $W/moe/bench.txt 2>&1
echo "bench_moe_v2 none exit $?"
RAMP_MV2_BENCH_FLUSH=read RAMP_MV2_BENCH_NAME=readflush RAMP_MV2_BENCH_VARIANTS=$D,$D.u2,$D.u3 \
  RAMP_MV2_BENCH_LOADS=4096b timeout 150 ./bench_moe_v2 $W/moeflush 300 > $W/moeflush/bench.txt 2>&1
echo "bench_moe_v2 read exit $?"
kill $SMI; sleep 0.2
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 ./bench_wgmma --forms ss.a2.h,ss.a2.pr.h,ss.a2.pp.h \
  --n 64,128 --w 1,2 --grids 1 --reps 1 --target-ms 0.1 > $W/memcheck.txt 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY|^ss" $W/memcheck.txt
cd ..
python3 bench/power_join.py $W/smi.csv --window idle $t0 $t1 --wgmma $W/gpu-check-logs/wgmma_bench.csv \
  --wgmma $W/wgmma-b.csv --wgmma $W/wgmma-short.csv --moe $W/moe/bench.txt --moe $W/moeflush/bench.txt \
  --out $W/power.md
echo "power_join exit $?"
