#!/usr/bin/env bash
# s39-run1 call 1: what the tensor cores and HBM give together. DeepSeek-V3's
# 1,000 TFLOP/s at 4,096 pairs asks for ~3.9 TB/s of weights (256 FLOP a
# weight byte on full 128-token tiles) while the tensor cores run at 1,000
# TFLOP/s, on one power budget. bench_wgmma's new .h forms run v2's wide
# stage rhythm (two consumer warpgroups, gate and up, a TMA warpgroup) with
# the weights streamed from a 2 GiB buffer (HBM) instead of L2; nvidia-smi
# samples power, clocks and the reasons the clock is held beside the run;
# then v2 itself on DeepSeek-V3 4,096 (whole, up launch, its math alone, its
# loads alone), launches back to back, sampled the same way.
# Predicted: .pr.h N128 ~1,000-1,100 TFLOP/s at 3.9-4.3 TB/s, the clock
# 1,300-1,450 MHz under the power cap (reason 0x4), below .pr.t's
# 1,465-1,528; v2's up launch at the power cap too.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s39r1; rm -rf $W; mkdir -p $W/moe
trap 'tar czf $O/s39-run1-call1.tgz -C /tmp s39r1' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,enforced.power.limit,power.max_limit \
  --format=csv > $W/env.txt 2>&1; date -u >> $W/env.txt
nvidia-smi --help-query-gpu > $W/smi-fields.txt 2>&1
Q=timestamp,power.draw.instant,power.draw,clocks.sm,clocks.mem,clocks_event_reasons.active,temperature.gpu
TZ=UTC nvidia-smi --query-gpu=$Q --format=csv,nounits > /dev/null 2>&1 || \
  Q=timestamp,power.draw,clocks.sm,clocks.mem,clocks_throttle_reasons.active,temperature.gpu
echo "sampling $Q" | tee -a $W/env.txt
TZ=UTC nvidia-smi --query-gpu=$Q --format=csv,nounits -lms 20 > $W/smi.csv 2>$W/smi.err &
SMI=$!
t0=$(date +%s.%N); sleep 2; t1=$(date +%s.%N); echo "idle $t0 $t1" > $W/windows.txt
export WGMMA_BENCH_ARGS="--forms ss.a2.t,ss.a2.h,ss.a2.pr.t,ss.a2.pr.h,ss.a2.pp.t,ss.a2.pp.h --n 64,128 --w 2 --grids 1 --reps 40 --target-ms 25"
tools/gpu-check env deps build wgmma_bench > $W/gpu-check.txt 2>&1
echo "gpu-check exit $?"; cp -r build-gpucheck-logs $W/gpu-check-logs
grep -E "^(ss|form)" $W/gpu-check-logs/wgmma-bench.txt
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck
timeout 120 ./bench_wgmma $WGMMA_BENCH_ARGS --csv $W/wgmma-b.csv > $W/wgmma-b.txt 2>&1
echo "bench_wgmma b exit $?"; grep -E "^ss" $W/wgmma-b.txt
D=d:r128.w128.s3.t3.u1.y1
RAMP_MV2_BENCH_FLUSH=none RAMP_MV2_BENCH_NAME=power RAMP_MV2_BENCH_VARIANTS=$D,$D.u2,$D.u2.d6,$D.u3,$D.u2.d2 \
  RAMP_MV2_BENCH_LOADS=4096b,4096u timeout 200 ./bench_moe_v2 $W/moe 3000 > $W/moe/bench.txt 2>&1
echo "bench_moe_v2 exit $?"; grep wall $W/moe/bench.txt | awk '{print $1, $3, $4, $5}'
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 ./bench_wgmma --forms ss.a2.pr.h,ss.a2.h \
  --n 64,128 --w 2 --grids 1 --reps 1 --target-ms 0.1 > $W/memcheck.txt 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY" $W/memcheck.txt
kill $SMI; sleep 0.2
cd ..
python3 bench/power_join.py $W/smi.csv --window idle $t0 $t1 --wgmma $W/gpu-check-logs/wgmma_bench.csv \
  --wgmma $W/wgmma-b.csv --moe $W/moe/bench.txt --out $W/power.md
echo "power_join exit $?"
