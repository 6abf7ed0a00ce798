#!/usr/bin/env bash
# s27-run2 (session 27): s27-run1 showed the polymorphic overhead follows the
# menu, not one entry: Qwen3-30B's r64.w256.s4 forced in a one-entry menu
# runs 1.04x its own kernel, in the shipped six-entry menu 1.09x, and the
# layer at 2,048 uniform takes 84.5 against 95.0 us (same choice). On the
# CPU: the six-entry kernel's SASS for r64 is scheduled differently, and
# every mbarrier wait's retry loop is placed at the end of the function
# (0x36440, 150 KB from the r64 loop at 0x10740; 55 KB in the one-entry
# kernel). What this call separates:
#  - position: the shipped menu reversed (r64 first);
#  - composition: r64 with one small (r8.w128) or one large (r48.w256) entry;
#  - Mixtral: the shipped menu without its .mc entry (no cluster launch);
#  - the retry loop: every kernel with try_wait's suspend-time hint at 1 ms
#    (hopper.cuh HOP_MBAR_SUSPEND_NS through RAMP_JIT_DEFINES), so that a
#    waiting warp sleeps in the barrier instead of leaving for the stub;
#  - Nsight Compute source counters (per SASS instruction: executions,
#    stall samples) for r64 in the six-entry kernel, the one-entry kernel
#    and its own kernel, as far as the call's time allows.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s27r2; rm -rf $W; mkdir -p $W
t0=$(date +%s)
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
cp build-gpucheck-logs/env.log $W/ 2>/dev/null
echo "built ($(( $(date +%s) - t0 )) s)"
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
H=bench/results/s27-run2; P=bench/results/s27-run1; S=bench/results/s26-run1/fp8
QD=qwen3-30b-ep8-v2; MD=mixtral-8x22b-ep8-v2
bl() { # name, timeout, plan, dataset, tokens [, RAMP_JIT_DEFINES]
  mkdir -p $W/$1
  RAMP_JIT_DEFINES=${6:-} timeout $2 ./build-gpucheck/bench_layer --plan $3 --dataset data/timing/$4.safetensors \
    --tokens $5 --out-dir $W/$1 --reps 30 --kernel v2 > $W/$1/log.txt 2>&1
  echo "bench $1 exit $? ($(( $(date +%s) - t0 )) s)"
}
HINT=HOP_MBAR_SUSPEND_NS=1000000
bl q6 60 $S/plan-$QD.json $QD 256,2048
bl q6-hint 80 $S/plan-$QD.json $QD 256,2048 $HINT
bl q6-rev 80 $H/plan-qwen3-reversed.json $QD 256,2048
bl q1 60 $P/plan-qwen3-menu1.json $QD 256,2048
bl q1-hint 60 $P/plan-qwen3-menu1.json $QD 256,2048 $HINT
bl q2-r8 60 $H/plan-qwen3-r64-r8.json $QD 256,2048
bl q2-r48 60 $H/plan-qwen3-r64-r48.json $QD 256,2048
bl m6 60 $S/plan-$MD.json $MD 64,256
bl m6-hint 90 $S/plan-$MD.json $MD 64,256 $HINT
bl m5-nomc 90 $H/plan-mixtral-no-mc.json $MD 64,256
tar czf $O/s27-run2.tgz -C /tmp s27r2
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
prof() { # name, plan, kernel regex
  local left=$(( ${BUDGET:-500} - ($(date +%s) - t0) ))
  [ $left -gt 50 ] || { echo "prof $1 skipped ($left s left)"; return; }
  mkdir -p $W/ncu-$1/out
  timeout $(( left - 20 )) $NCU --clock-control none -k "regex:$3" --launch-count 1 \
    --section WarpStateStats --section SourceCounters --section InstructionStats --section LaunchStats \
    -o $W/ncu-$1/prof -f ./build-gpucheck/bench_layer --plan $2 --dataset data/timing/$QD.safetensors \
    --out-dir $W/ncu-$1/out --reps 1 --kernel v2 --tokens 2048 > $W/ncu-$1/log.txt 2>&1
  echo "prof $1 exit $? ($(( $(date +%s) - t0 )) s)"
  $NCU -i $W/ncu-$1/prof.ncu-rep --csv --page raw > $W/ncu-$1/raw.csv 2> $W/ncu-$1/raw.err
  $NCU -i $W/ncu-$1/prof.ncu-rep --csv --page source --print-source sass > $W/ncu-$1/source.csv 2> $W/ncu-$1/source.err
  echo "  source exit $? $(wc -l < $W/ncu-$1/source.csv) lines"
  gzip -f $W/ncu-$1/source.csv; rm -f $W/ncu-$1/prof.ncu-rep; rm -rf $W/ncu-$1/out
}
prof q6-poly $S/plan-$QD.json '^ramp_moe_poly_v2$'
prof q1-poly $P/plan-qwen3-menu1.json '^ramp_moe_poly_v2$'
prof q1-alone $P/plan-qwen3-menu1.json '^ramp_moe_v2$'
tar czf $O/s27-run2.tgz -C /tmp s27r2
for n in q6 q6-hint q6-rev q1 q1-hint q2-r8 q2-r48 m6 m6-hint m5-nomc; do
  echo "== $n"; grep -E "^[0-9]+ +(uniform|skewed)|^  r[0-9]+\." $W/$n/log.txt | cut -c1-100 | head -12
done
