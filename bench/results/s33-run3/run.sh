#!/usr/bin/env bash
# s33-run3 (session 33): tiles spread over the grid when a launch has fewer
# tiles than blocks (RAMP_MV2_SPREAD, kernels/moe_v2.cuh at commits c6e2525-
# c4f9f44; reverted after PART=5). Two calls on one
# warm machine, repository root, .debs carried:
#   PART=1: build; bench_layer on the four EP8 FP8 v2 plans, 64-1,024 tokens,
#           with --jit-ab RAMP_MV2_SPREAD=0 (rows ramp-jit: the same layer
#           with tile t on block t, as before; timed in alternation with the
#           layer, outputs checked equal), 60 reps
#   PART=2: correctness: gpu-check smoke (test_gpu_moe_v2 on narrow, wide,
#           split-K, two-phase and Mixtral multicast tiles against the CPU
#           reference and v1, memcheck and racecheck, the layer) and
#           test_gpu_layer on kernel v2 (every entry forced on the default
#           grid, where small loads leave blocks idle, and on 7 blocks)
#   PART=3 (the final form: spread over the first wave, the first tile in
#           shared memory): build; test_gpu_moe_v2 (FP8, narrow, split-K,
#           wide, two-phase; Mixtral multicast two-phase), test_gpu_layer
#           on kernel v2, memcheck and racecheck on Qwen3-30B narrow and
#           wide tiles; then PART=1's A/B at 64-512 tokens
#   PART=4: PART=3's first test again (its configuration list named one that
#           is not in the test's space, so it ran nothing): build, then
#           test_gpu_moe_v2 on Qwen3-30B and DeepSeek-V3
#   PART=5: build; the A/B of PART=3 on Mixtral-8x22B (which PART=3 left
#           out for time, and on which spreading over the whole grid cost
#           2-4 us on every load)
set -u
O=${OUT:-/tmp/out}; W=/tmp/s33r3-$PART; rm -rf $W; mkdir -p $W
pack() { tar czf $O/s33-run3-$PART.tgz -C /tmp s33r3-$PART; }
B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
if [ "$PART" = 3 ] || [ "$PART" = 4 ]; then
  timeout 240 tools/gpu-check env deps build > $W/build.txt 2>&1; echo "build exit $?"
  cp build-gpucheck-logs/env.log $W/ 2>/dev/null
  mkdir -p $B/test-tmp
  t() { local name=$1; shift
    (cd $B && env RAMP_TEST_TMP=$B/test-tmp "$@") > $W/$name.txt 2>&1
    echo "$name exit $?: $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/$name.txt) $(tail -n 1 $W/$name.txt)"; }
  t moe-v2 RAMP_MOE_V2_MODELS=qwen3-30b,deepseek-v3 \
    RAMP_MOE_CONFIGS=r8.w128.s4,r16.w256.s4,r64.w128.s4,r16.w128.s4.k2,r128.w256.s3,r128.w128.s4 \
    timeout 80 ./test_gpu_moe_v2
  if [ "$PART" = 3 ]; then
  t moe-v2-split RAMP_MOE_V2_MODELS=qwen3-30b,deepseek-v3 RAMP_MOE_CONFIGS=r32.w128.s4,r128.w256.s3 \
    RAMP_MOE_V2_SPLIT=1 timeout 50 ./test_gpu_moe_v2
  t moe-v2-mx-mcast RAMP_MOE_V2_MODELS=mixtral-8x22b RAMP_MOE_CONFIGS=r128.w128.s4 RAMP_MOE_V2_SPLIT=1 \
    RAMP_MOE_V2_P2K=2 RAMP_MOE_V2_MCAST=1 RAMP_MOE_TOKENS=130 RAMP_MOE_V2_NO_V1=1 timeout 50 ./test_gpu_moe_v2
  t layer-v2 RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=200 timeout 70 ./test_gpu_layer
  for tool in memcheck racecheck; do
    t san-$tool RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r16.w256.s4,r128.w256.s3 RAMP_MOE_TOKENS=40 \
      RAMP_MOE_V2_NO_V1=1 timeout 75 compute-sanitizer --tool $tool --error-exitcode 3 ./test_gpu_moe_v2
  done
  fi
  pack
fi
if [ "$PART" = 1 ] || [ "$PART" = 3 ] || [ "$PART" = 5 ]; then
  [ "$PART" != 3 ] && { timeout 240 tools/gpu-check env deps build > $W/build.txt 2>&1; echo "build exit $?"; }
  cp build-gpucheck-logs/env.log $W/ 2>/dev/null
  rm -f $B/layer-loads*.json
  LAYER_REPS=60 LAYER_KERNEL=v2 LAYER_JIT_AB=RAMP_MV2_SPREAD=0 \
    LAYER_TOKENS=$([ "$PART" = 1 ] && echo 64,128,256,512,1024 || echo 64,128,256,512) \
    LAYER_MODELS=$(case $PART in 1) echo "deepseek-v3-ep8-v2 qwen3-30b-ep8-v2 olmoe-ep8-v2 mixtral-8x22b-ep8-v2";;
                   3) echo "deepseek-v3-ep8-v2 qwen3-30b-ep8-v2 olmoe-ep8-v2";; *) echo mixtral-8x22b-ep8-v2;; esac) \
    timeout $([ "$PART" = 1 ] && echo 420 || echo 200) tools/gpu-check bench_layer > $W/gpu-check.txt 2>&1
  echo "bench_layer exit $?"
  cp build-gpucheck-logs/{bench_layer.log,layer-*.csv,plan-*.json,layer-loads-*.json} $W/ 2>/dev/null
  grep -h -E '^ +ramp-jit|jit check|agree' $W/bench_layer.log | head -50
fi
if [ "$PART" = 2 ]; then
  mkdir -p $B/test-tmp
  V2_SAN_TIMEOUT=150 timeout 400 tools/gpu-check smoke > $W/smoke.txt 2>&1; echo "smoke exit $?"
  grep -E '^smoke' build-gpucheck-logs/tables.txt | tail -n 12
  cp build-gpucheck-logs/smoke-*.txt $W/ 2>/dev/null
  pack
  (cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8,bf16 RAMP_LAYER_ROUTINGS=200 \
    timeout 150 ./test_gpu_layer) > $W/layer-v2.txt 2>&1
  echo "test_gpu_layer v2 exit $?: $(tail -n 1 $W/layer-v2.txt)"
fi
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
pack
