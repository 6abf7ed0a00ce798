#!/usr/bin/env bash
# s21-run5: Nsight Compute on r48.w256.s4 alone and inside the polymorphic
# kernel (s21-run1..3: inside it, it runs 4-7 us slower and leaves 3-6 us
# to whatever kernel comes next; r8.w128.s4 does neither). Two 2-entry menus:
# r48 + the wide .ph2.tx tile, r48 + r8. 1,024 tokens, one rep a row; every
# v2 kernel profiled (clocks left alone), the raw metrics as CSV.
set -u
tools/gpu-check env deps build > /tmp/gc-build.log 2>&1 || { tail -20 /tmp/gc-build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
O=${OUT:-/tmp/out}; R=bench/results/s21-run5; mkdir -p /tmp/r5
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
for p in r48-tx r48-r8; do
  # the timings without the profiler first (same rows, 20 reps)
  mkdir -p /tmp/r5/$p
  ./build-gpucheck/bench_layer --plan $R/plan-$p.json --dataset bench/results/s20-run5/qwen3-30b-ep8-v2.safetensors \
    --out-dir /tmp/r5/$p --reps 20 --kernel v2 --flush read --tokens 1024 > /tmp/r5/$p/log.txt 2>&1
  echo "$p bench exit $?"
  mkdir -p /tmp/r5/$p/ncu-out
  timeout 200 $NCU --clock-control none -k 'regex:^ramp_moe_(poly_v2|v2)$' --launch-count 120 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section InstructionStats --section LaunchStats --section SchedulerStats \
    -o /tmp/r5/$p/prof -f \
    ./build-gpucheck/bench_layer --plan $R/plan-$p.json --dataset bench/results/s20-run5/qwen3-30b-ep8-v2.safetensors \
    --out-dir /tmp/r5/$p/ncu-out --reps 1 --kernel v2 --flush read --tokens 1024 > /tmp/r5/$p/ncu-log.txt 2>&1
  echo "$p ncu exit $?"
  $NCU -i /tmp/r5/$p/prof.ncu-rep --csv --page raw > /tmp/r5/$p/raw.csv 2>/tmp/r5/$p/raw.err
  echo "$p raw exit $? $(wc -l < /tmp/r5/$p/raw.csv) lines"
  rm -f /tmp/r5/$p/prof.ncu-rep
done
tar czf $O/s21-run5.tgz -C /tmp r5
