#!/usr/bin/env bash
# s27-run3 (session 27): s27-run2 showed the polymorphic overhead is
# instruction fetch (Nsight source counters, r64.w256.s4 at 2,048 uniform:
# "no instruction" stall samples 1,032 in the shipped six-entry kernel
# against 145 in a one-entry menu and 141 in its own kernel; all samples
# 8,157 / 6,696 / 6,651) and that it moves with the entries' order in the
# code (r64 last 1.058x its own kernel, first 1.002x). Here every rotation
# of Qwen3-30B's and Mixtral-8x22B's shipped menus (each entry first once;
# the selection picks by cost, so the order changes the code layout and
# nothing else), each entry's polymorphic / alone ratio per rotation; and
# the source counters for r64 first, to see the stall samples follow.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s27r3; rm -rf $W; mkdir -p $W
t0=$(date +%s)
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
cp build-gpucheck-logs/env.log $W/ 2>/dev/null
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
H=bench/results/s27-run3; S=bench/results/s26-run1/fp8
QD=qwen3-30b-ep8-v2; MD=mixtral-8x22b-ep8-v2
bl() { # name, timeout, plan, dataset, tokens
  mkdir -p $W/$1
  timeout $2 ./build-gpucheck/bench_layer --plan $3 --dataset data/timing/$4.safetensors \
    --tokens $5 --out-dir $W/$1 --reps 30 --kernel v2 > $W/$1/log.txt 2>&1
  echo "bench $1 exit $? ($(( $(date +%s) - t0 )) s)"
}
bl qwen3-rot0 60 $S/plan-$QD.json $QD 256,2048
for k in 1 2 3 4 5; do bl qwen3-rot$k 60 $H/plan-qwen3-rot$k.json $QD 256,2048; done
bl mixtral-rot0 80 $S/plan-$MD.json $MD 64,256
for k in 1 2 3 4 5; do bl mixtral-rot$k 80 $H/plan-mixtral-rot$k.json $MD 64,256; done
tar czf $O/s27-run3.tgz -C /tmp s27r3
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
left=$(( ${BUDGET:-400} - ($(date +%s) - t0) ))
if [ $left -gt 60 ]; then
  mkdir -p $W/ncu-q6-r64first/out
  timeout $(( left - 20 )) $NCU --clock-control none -k 'regex:^ramp_moe_poly_v2$' --launch-count 1 \
    --section WarpStateStats --section SourceCounters --section InstructionStats --section LaunchStats \
    -o $W/ncu-q6-r64first/prof -f ./build-gpucheck/bench_layer --plan $H/plan-qwen3-rot5.json \
    --dataset data/timing/$QD.safetensors --out-dir $W/ncu-q6-r64first/out --reps 1 --kernel v2 --tokens 2048 \
    > $W/ncu-q6-r64first/log.txt 2>&1
  echo "prof exit $?"
  $NCU -i $W/ncu-q6-r64first/prof.ncu-rep --csv --page source --print-source sass > $W/ncu-q6-r64first/source.csv 2>&1
  gzip -f $W/ncu-q6-r64first/source.csv; rm -rf $W/ncu-q6-r64first/prof.ncu-rep $W/ncu-q6-r64first/out
fi
tar czf $O/s27-run3.tgz -C /tmp s27r3
for n in qwen3-rot0 qwen3-rot1 qwen3-rot2 qwen3-rot3 qwen3-rot4 qwen3-rot5 mixtral-rot0 mixtral-rot1 mixtral-rot2 mixtral-rot3 mixtral-rot4 mixtral-rot5; do
  echo "== $n"; grep -E "^[0-9]+ +(uniform|skewed)|^  r[0-9]+\." $W/$n/log.txt | cut -c1-78 | head -12
done
