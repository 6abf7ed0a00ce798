#!/usr/bin/env bash
# s33-run2 (session 33), one device call, repository root, .debs carried:
# (a) v2's two-stage narrow tiles with an L2 prefetch of the stages ahead
#     (RAMP_MV2_PF = 1, 2; injected with RAMP_JIT_DEFINES, which NVRTC takes
#     after the program's own -D) against v1 and plain v2, same loads as
#     s33-run1 (b), timed v1, v2, v2 pf1, v2 pf2, v1: is the prefetch what
#     makes r8.w128.s2 as fast as v1 (s33-run1: 1.01-1.02x slower)?
# (b) compute-sanitizer racecheck on Mixtral-8x22B's multicast stage-unit
#     two-phase tile as the shipped units plan runs it (r128.w128.s4, down K
#     in 2 parts, token rows by TMA), 130 tokens: session 30's did not
#     finish in 150 s.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s33r2; rm -rf $W; mkdir -p $W/pf $W/race
pack() { tar czf $O/s33-run2.tgz -C /tmp s33r2; }
B=$PWD/build-gpucheck
timeout 240 tools/gpu-check env deps build > $W/build.txt 2>&1; echo "build exit $?"
cp build-gpucheck-logs/env.log $W/ 2>/dev/null
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
mkdir -p $B/test-tmp
L=bench/results/s33-run1/part1/v1v2/loads.safetensors
C=r8.w128.s2,r4.w128.s2,r6.w128.s2,r2.w128.s2,r2.w128.s4,r8.w128.s3
for run in v1a v2 v2pf1 v2pf2 v1b; do
  k=${run:0:2}; pf=${run#v2pf}; [ "$pf" = "$run" ] && pf=
  RAMP_JIT_DEFINES=${pf:+RAMP_MV2_PF=$pf} timeout 150 $B/ramp bench $L -o $W/pf/$run.safetensors \
    --kernel $k --configs $C --max-seconds 140 > $W/pf/$run.log 2>&1
  echo "bench $run exit $?: $(tail -n 1 $W/pf/$run.log)"
done
for p in v2 v2pf1 v2pf2; do
  for v in v1a v1b; do
    python3 bench/v1_vs_v2.py --csv $W/pf/$v-$p.csv $W/pf/$v.safetensors $W/pf/$p.safetensors \
      > $W/pf/$v-$p.md 2>&1; echo "$v vs $p: $(tail -n 1 $W/pf/$v-$p.md)"
  done
done
pack
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_MOE_V2_MODELS=mixtral-8x22b RAMP_MOE_CONFIGS=r128.w128.s4 \
  RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_P2K=2 RAMP_MOE_V2_MCAST=1 RAMP_MOE_V2_TMA_X=1 RAMP_MOE_V2_TILED=3 \
  RAMP_MOE_TOKENS=130 RAMP_MOE_V2_NO_V1=1 timeout 330 \
  compute-sanitizer --tool racecheck --error-exitcode 3 ./test_gpu_moe_v2) > $W/race/racecheck.txt 2>&1
echo "racecheck exit $?: $(grep -m1 -E 'RACECHECK SUMMARY' $W/race/racecheck.txt) $(tail -n 1 $W/race/racecheck.txt)"
pack
