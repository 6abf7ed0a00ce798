#!/usr/bin/env bash
# s53-run1 call 3: issue #5's targets side by side on today's default
# kernel (float4 output since session 52), on the card this call gets: the
# device has lent only H100s since session 45, and its rule is to re-measure
# the baselines on the same card rather than wait for the H200. One call
# (repo root, carry [".debs"]):
#   (a) FP8: the ceilings (copy rate, dense FP8/BF16 through PyTorch),
#       bench_layer on the four EP8 models' shipped plans (Qwen3-30B and
#       OLMoE row-major, DeepSeek-V3 and Mixtral-8x22B on their stage-unit
#       plans, as s32-run2), LAYER_UNITS=1 so every load has the row-major
#       and the units layer; PyTorch's torch._scaled_grouped_mm MoE on the
#       same loads (s30-run3 + s32-run2's method);
#   (b) BF16: the same with LAYER_BF16=1 and torch._grouped_mm (s31-run1's).
# Tables on the CPU: bench/targets.py (this folder's README).
# Predicted from the last H200 runs (s30-run3, s31-run1, s32-run2) and the
# H100's 2.8 TB/s copy rate against 4.2: faster than PyTorch on every FP8
# load; memory-bound ratios to the copy floor lower than the H200's (the
# floor is 1.5x longer, the fixed costs the same): DeepSeek-V3 all 9 within
# 1.2x, Mixtral's smallest near 1.2x, Qwen3/OLMoE still over; Mixtral's
# compute-bound loads ~1,000 TFLOP/s (same SMs, same 700 W), DeepSeek-V3
# ~600; BF16 faster than PyTorch on every row-major load.
set -u
source bench/device_run.sh s53-targets
cd ..
run_part() { # NAME TIMEOUT VAR=VALUE... -- STEPS...
  local name=$1 to=$2; shift 2
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  mkdir -p "$W/$name"
  rm -f build-gpucheck/layer-loads*.json
  if [ "$DRY" = 1 ]; then echo "$name: would run gpu-check $* with ${vars[*]}"; return 0; fi
  env "${vars[@]}" OUT=/tmp/s53-gcout timeout "$to" tools/gpu-check "$@" > "$W/$name/gpu-check.txt" 2>&1
  echo "$name: gpu-check exit $? ($SECONDS s)"
  cp build-gpucheck-logs/* "$W/$name/" 2>/dev/null
  grep -E "PASS|FAIL" "$W/$name/gpu-check.txt" | tail -4
}
run_part fp8 330 LAYER_KERNEL=v2 LAYER_UNITS=1 PEER_ARGS="--impl torch-fp8-rowwise" PEER_TIMEOUT=120 \
  "LAYER_MODELS=qwen3-30b-ep8-v2 olmoe-ep8-v2 deepseek-v3-ep8-v2-units mixtral-8x22b-ep8-v2-units" \
  -- env ceilings bench_layer peer
left=$(( 570 - SECONDS ))
[ $left -lt 120 ] && { echo "bf16: not started ($SECONDS s)"; exit 0; }
run_part bf16 $left LAYER_KERNEL=v2 LAYER_BF16=1 PEER_ARGS="--impl torch-bf16" PEER_TIMEOUT=120 \
  "LAYER_MODELS=qwen3-30b-ep8-v2 olmoe-ep8-v2 deepseek-v3-ep8-v2 mixtral-8x22b-ep8-v2-bf16" \
  -- bench_layer peer
