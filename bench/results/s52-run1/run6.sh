#!/usr/bin/env bash
# s52-run1 call 6 (prepared in session 52, not run: the device budget was
# spent; the next session's first call when no H200 comes, ~300 s).
# What session 52 left unchecked on a GPU (repo root, carry [".debs"]):
# (a) test_gpu_layer on kernel v1 (its default): the alignment refusal now
#     covers v1 layers too (v1 always added float4s, unchecked);
# (b) the deterministic layer's st.global.v4 path under memcheck and
#     racecheck (gpu-check det's sanitizer part, cut off in call 5);
# (c) memcheck and racecheck on narrow entries with N = 16..64 under the
#     float4 output (the layer sanitizers' routings chose r4/r8 only), fused
#     and in two launches (phase 2's narrow output).
# Predicted: every check passes, 0 errors, 0 hazards.
DEFINES=""
source bench/device_run.sh s52-run6
t() { ramp_check "$@"; }
t layer-v1 120 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=20 ./test_gpu_layer
if [ "$DRY" != 1 ]; then
  (cd .. && DET_PARTS=sanitize timeout 200 tools/gpu-check det > "$W/det-sanitize.txt" 2>&1
   echo "det sanitize exit $? ($SECONDS s)")
  cp ../build-gpucheck-logs/det* "$W/" 2>/dev/null
  grep -E "SUMMARY|exit" "$W/det-sanitize.txt" | tail -6
fi
t memcheck-wide-n 90 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r16.w128.s4,r32.w256.s4,r64.w128.s4,r24.w128.s4 \
  RAMP_MOE_TOKENS=48 RAMP_MOE_V2_NO_V1=1 compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_moe_v2
t racecheck-wide-n 120 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r32.w128.s4 RAMP_MOE_TOKENS=48 \
  RAMP_MOE_V2_NO_V1=1 compute-sanitizer --tool racecheck --error-exitcode 3 ./test_gpu_moe_v2
t memcheck-split 90 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r32.w128.s4 RAMP_MOE_V2_SPLIT=1 \
  RAMP_MOE_TOKENS=48 RAMP_MOE_V2_NO_V1=1 compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_moe_v2
