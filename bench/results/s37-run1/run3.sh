#!/usr/bin/env bash
# s37-run1 call 3 (run3.sh, from run2.sh): call 2's skip tested the slot in
# every stage and cost the math-bound multicast tiles up to 8 us (Mixtral
# 2,048 uniform); now the slot is read once per pass and picks the K loop,
# so the busy loop is the plain one. Same checks (no racecheck: 60 s were not
# enough in call 2), the A/B alternated twice on Mixtral (1,024-2,048 tokens)
# and once on DeepSeek-V3 (2,048). Predicted: Mixtral within the A/A spread,
# DeepSeek-V3 2,048 skewed ~12 us faster as in call 2.
#
# s37-run1 call 2: the idle consumer's skip in FP8 phase 1 (RAMP_MV2_IDLE_SKIP,
# kernels/moe_v2_wide.cuh; session 19's skip, which read the slot from global
# memory and cost Mixtral 5-10 us, now read from the tile's slots in shared
# memory). (1) correct: test_gpu_moe_v2 on the wide two-phase tiles of five
# models (stage units; the single-token routing leaves consumer 1 idle),
# multicast with token rows by TMA (the layer's .mc.tx), memcheck and
# racecheck, test_gpu_layer on a menu with wide two-phase entries;
# (2) the layer with the skip (default) against RAMP_MV2_IDLE_SKIP=0, separate
# processes alternated, stage units, read flush: Mixtral-8x22B EP8 512-2048
# tokens (132 and 180 pairs leave a tail of 4 and 52 tokens; 678 pairs a
# tail of 38) and DeepSeek-V3 EP8 2,048-4,096 tokens (experts just past 128
# pairs). Predicted: Mixtral's loads on .mc entries unchanged (a multicast
# pair runs at its full tile's pace); DeepSeek-V3 4,096 3-19 us faster
# (s19-run7, kernel alone), others unchanged.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s37r3; rm -rf $W; mkdir -p $W/test
trap 'tar czf $O/s37-run1-call3.tgz -C /tmp s37r3' EXIT
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
tools/gpu-check env deps build > $W/build.log 2>&1 || { tail -20 $W/build.log; exit 1; }
echo "build $(el) s"
B=$PWD/build-gpucheck; R=$PWD
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $W/env.txt; date -u >> $W/env.txt
mkdir -p $B/test-tmp
cd $B
env RAMP_TEST_TMP=$B/test-tmp RAMP_MOE_CONFIGS=r128.w128.s4,r128.w256.s3 RAMP_MOE_V2_SPLIT=1 \
  RAMP_MOE_V2_P2K=4 RAMP_MOE_V2_TILED=3 timeout 150 ./test_gpu_moe_v2 > $W/test/wide-units.txt 2>&1
echo "test wide units exit $? ($(tail -n 1 $W/test/wide-units.txt)) at $(el) s"
env RAMP_TEST_TMP=$B/test-tmp RAMP_MOE_CONFIGS=r128.w128.s4 RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_P2K=2 \
  RAMP_MOE_V2_MCAST=1 RAMP_MOE_V2_TMA_X=1 RAMP_MOE_V2_MODELS=mixtral-8x22b,deepseek-v3 timeout 120 \
  ./test_gpu_moe_v2 > $W/test/wide-mctx.txt 2>&1
echo "test wide mc.tx exit $? ($(tail -n 1 $W/test/wide-mctx.txt)) at $(el) s"
cd $R
DSM=$R/data/timing/mixtral-8x22b-ep8-v2-units.safetensors
DSD=$R/data/timing/deepseek-v3-ep8-v2-units.safetensors
PM=$R/bench/results/s34-run2/layer/plan-mixtral-8x22b-ep8-v2-units.json
PD=$R/bench/results/s32-run2/units/plan-deepseek-v3-ep8-v2-units.json
for run in m-on1 m-off1 m-on2 m-off2 d-on1 d-off1; do
  [ $(el) -gt 420 ] && { echo "stop before $run: time"; break; }
  DEF=""; case $run in *off*) DEF="RAMP_MV2_IDLE_SKIP=0";; esac
  P=$PM DS=$DSM TOK=1024,2048; case $run in d-*) P=$PD DS=$DSD TOK=2048;; esac
  mkdir -p $W/$run
  (cd $B && RAMP_JIT_DEFINES="$DEF" timeout 110 ./bench_layer --plan $P --dataset $DS --out-dir $W/$run \
    --reps 20 --kernel v2 --units 1 --flush read --tokens $TOK) > $W/$run/bench_layer.log 2>&1
  echo "bench_layer $run exit $? at $(el) s"
done
cd $B
for tool in memcheck; do
  [ $(el) -gt 520 ] && { echo "stop before $tool: time"; break; }
  env RAMP_MOE_V2_SPLIT=1 RAMP_MOE_V2_P2K=4 RAMP_MOE_V2_TILED=3 RAMP_MOE_V2_MODELS=mixtral-8x22b \
    RAMP_MOE_CONFIGS=r128.w128.s4 RAMP_MOE_TOKENS=40 RAMP_MOE_V2_NO_V1=1 timeout 60 \
    compute-sanitizer --tool $tool --error-exitcode 3 ./test_gpu_moe_v2 > $W/test/$tool.txt 2>&1
  echo "$tool exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/test/$tool.txt)) at $(el) s"
done
M=r16.w128.s4,r8.w128.s4,r32.w128.s4,r64.w128.s4,r128.w128.s3.ph2.dk2,r128.w128.s4.ph2.dk4
[ $(el) -lt 540 ] && { env RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 \
  RAMP_LAYER_MENU=$M RAMP_LAYER_UNITS=1 RAMP_LAYER_ROUTINGS=50 timeout 50 ./test_gpu_layer \
  > $W/test/layer-units.txt 2>&1; echo "test_gpu_layer units exit $? ($(tail -n 1 $W/test/layer-units.txt)) at $(el) s"; }
cd $R
for run in m-on1 m-off1 m-on2 m-off2 d-on1 d-off1; do
  [ -d $W/$run ] || continue
  echo "== $run"; grep -h -E ',ramp-units,' $W/$run/*.csv 2>/dev/null | cut -d, -f3-5,7,9,10
done
