#!/usr/bin/env bash
# s37-run1 call 1: two cheap levers on Mixtral-8x22B EP8's small loads in the
# layer (stage units, L2 emptied by a read), each against session 34's plan:
#  pf:  phase 2's blocks, started by programmatic dependent launch as phase
#       1's blocks finish, also ask L2 for their first tile's next 384 KB of
#       W2 units before they wait (RAMP_MV2_P2_L2PF, new; one define for the
#       whole process, so every layer of the run has it).
#       Predicted: 1-3 us off the 64-128-token loads (the timeline of s36
#       call 7 has phase 1's blocks ending over ~5 us while the HBM stream
#       thins out, and phase 2's last block ending ~6 us after its median).
#  dk5: the plan's three one-row-tile two-phase entries with phase 2 in 5 K
#       parts instead of 4 (120 phase-2 tiles on 132 SMs instead of 96; same
#       coefficients). Kernel alone (s35) 1.2-2.3 us faster; never timed as a
#       swap in the layer. Predicted: 1-2 us off the same loads.
# Runs alternate base, pf, dk5, base, pf, dk5 (separate processes on one
# machine; the A/A spread of base is the noise).
set -u
O=${OUT:-/tmp/out}; W=$O/s37r1; mkdir -p $W
T0=$(date +%s)
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
echo "build $(( $(date +%s) - T0 )) s"
B=$PWD/build-gpucheck; R=$PWD
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
git log --oneline -1 >> $W/env.txt
DS=$R/data/timing/mixtral-8x22b-ep8-v2-units.safetensors
BASE=$R/bench/results/s34-run2/layer/plan-mixtral-8x22b-ep8-v2-units.json
DK5=$R/bench/results/s37-run1/plan-mixtral-units-dk5.json
for run in base1 pf1 dk51 base2 pf2 dk52; do
  [ $(( $(date +%s) - T0 )) -gt 500 ] && { echo "stop before $run: time"; break; }
  P=$BASE; DEF=""
  case $run in pf*) DEF="RAMP_MV2_P2_L2PF=393216";; dk5*) P=$DK5;; esac
  mkdir -p $W/$run
  (cd $B && RAMP_JIT_DEFINES="$DEF" timeout 120 ./bench_layer --plan $P --dataset $DS --out-dir $W/$run \
    --reps 30 --kernel v2 --units 1 --flush read --tokens 64,128) > $W/$run/bench_layer.log 2>&1
  echo "bench_layer $run exit $? at $(( $(date +%s) - T0 )) s"
done
for run in base1 pf1 dk51 base2 pf2 dk52; do
  [ -d $W/$run ] || continue
  echo "== $run"; grep -h -E ',ramp-units,' $W/$run/*.csv 2>/dev/null | cut -d, -f3-5,7,9,10
done
