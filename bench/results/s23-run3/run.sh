#!/usr/bin/env bash
# s23-run3: is it the shared-memory carve-out that slows Mixtral-8x22B's
# narrow two-phase entries inside the polymorphic kernel (s22-run3)? The same
# entries alone, with the driver's carve-out (the smallest that fits, 168 KB)
# and with RAMP_SMEM_CARVEOUT=100 (the largest, 228 KB, as a wide tile's
# layout forces on the polymorphic kernel): bench_layer on the shipped plan
# at 64 and 256 tokens, then Nsight Compute on every ramp_moe_v2 launch at
# 64 tokens for both (one rep a row, clocks left alone), memory sections.
# Then Mixtral at 4,096 tokens with the SM clock sampled; last,
# test_gpu_layer with poly_split 5 (the switch not reset per launch).
set -u
tools/gpu-check env deps build > /tmp/gc-build.log 2>&1 || { tail -20 /tmp/gc-build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
O=${OUT:-/tmp/out}; R=bench/results/s23-run3; DS=data/timing/mixtral-8x22b-ep8-v2.safetensors
P=$R/plan-mixtral-8x22b-ep8.json
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for cv in default 100; do
  mkdir -p /tmp/r3/$cv
  (if [ $cv != default ]; then export RAMP_SMEM_CARVEOUT=$cv; fi
   ./build-gpucheck/bench_layer --plan $P --dataset $DS --out-dir /tmp/r3/$cv --reps 20 --kernel v2 \
     --flush read --tokens 64,256 > /tmp/r3/$cv/log.txt 2>&1)
  echo "$cv bench exit $?"
done
for cv in default 100; do
  mkdir -p /tmp/r3/$cv/ncu-out
  (if [ $cv != default ]; then export RAMP_SMEM_CARVEOUT=$cv; fi
   timeout 150 $NCU --clock-control none -k 'regex:^ramp_moe_v2$' --launch-count 80 \
     --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
     --section WarpStateStats --section LaunchStats --section Occupancy \
     -o /tmp/r3/$cv/prof -f \
     ./build-gpucheck/bench_layer --plan $P --dataset $DS --out-dir /tmp/r3/$cv/ncu-out \
     --reps 1 --kernel v2 --flush read --tokens 64 > /tmp/r3/$cv/ncu-log.txt 2>&1)
  echo "$cv ncu exit $?"
  $NCU -i /tmp/r3/$cv/prof.ncu-rep --csv --page raw 2>/tmp/r3/$cv/raw.err | gzip > /tmp/r3/$cv/ncu-raw.csv.gz
  echo "$cv raw exit $?"
  rm -rf /tmp/r3/$cv/prof.ncu-rep /tmp/r3/$cv/ncu-out
done
# Mixtral's 4,096-token loads (2,774 pairs on one expert when skewed: the
# same entry ran 1,620 us in one run, 1,882 in another) with the SM clock
# and power sampled every 20 ms: does the GPU slow its clock there?
mkdir -p /tmp/r3/clock
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 20 > /tmp/r3/clock/smi.csv 2>&1 &
SMI=$!
./build-gpucheck/bench_layer --plan $P --dataset $DS --out-dir /tmp/r3/clock --reps 20 --kernel v2 \
  --flush read --tokens 4096 > /tmp/r3/clock/log.txt 2>&1
echo "clock bench exit $?"
kill $SMI 2>/dev/null
# poly_split 5 with the switch no longer reset at each launch (the new
# default, s23-run2): test_gpu_layer FP8 and BF16, forced runs and replays
SPLIT_PARTS=test SPLIT_MODES=5 SPLIT_ROUTINGS=50 OUT=$O tools/gpu-check split > /tmp/r3/split-test.log 2>&1
echo "split 5 test exit $?"
cp build-gpucheck-logs/tables.txt build-gpucheck-logs/split5-layer-*.txt /tmp/r3/
tar czf $O/s23-run3.tgz -C /tmp r3
