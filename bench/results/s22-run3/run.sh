#!/usr/bin/env bash
# s22-run3: where Mixtral-8x22B EP8's narrow two-phase entries lose 7-16 us
# inside the polymorphic kernel (s22-run1: r32.w128.s4.ph2.dk4 at 64 tokens
# alone 87.6 us, forced in the layer's kernel 95.2; r64 at 256 tokens 94.0
# against 109.7), which no split of s22-run1/2 removed. bench_layer on the
# shipped menu and on two narrow-only menus (with and without the split-K
# entry r8.w256.s4.k2, whose cluster launch caps the grid), 64 and 256
# tokens; then Nsight Compute on every v2 kernel of the shipped and the
# narrow two-phase menu at 64 tokens (one rep a row, clocks left alone).
set -u
tools/gpu-check env deps build > /tmp/gc-build.log 2>&1 || { tail -20 /tmp/gc-build.log; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
O=${OUT:-/tmp/out}; R=bench/results/s22-run3; DS=data/timing/mixtral-8x22b-ep8-v2.safetensors
cp bench/results/s22-run1/plan-mixtral-8x22b-ep8.json $R/plan-mixtral-shipped.json
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for p in shipped narrow narrow-ph2; do
  mkdir -p /tmp/r3/$p
  ./build-gpucheck/bench_layer --plan $R/plan-mixtral-$p.json --dataset $DS --out-dir /tmp/r3/$p \
    --reps 20 --kernel v2 --flush read --tokens 64,256 > /tmp/r3/$p/log.txt 2>&1
  echo "$p bench exit $?"
done
for p in shipped narrow-ph2; do
  mkdir -p /tmp/r3/$p/ncu-out
  timeout 240 $NCU --clock-control none -k 'regex:^ramp_moe_(poly_v2|poly_v2_down|v2)$' --launch-count 400 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section LaunchStats --section Occupancy \
    -o /tmp/r3/$p/prof -f \
    ./build-gpucheck/bench_layer --plan $R/plan-mixtral-$p.json --dataset $DS --out-dir /tmp/r3/$p/ncu-out \
    --reps 1 --kernel v2 --flush read --tokens 64 > /tmp/r3/$p/ncu-log.txt 2>&1
  echo "$p ncu exit $?"
  $NCU -i /tmp/r3/$p/prof.ncu-rep --csv --page raw 2>/tmp/r3/$p/raw.err | gzip > /tmp/r3/$p/ncu-raw.csv.gz
  echo "$p raw exit $?"
  rm -rf /tmp/r3/$p/prof.ncu-rep /tmp/r3/$p/ncu-out
done
tar czf $O/s22-run3.tgz -C /tmp r3
