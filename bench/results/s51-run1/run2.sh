#!/usr/bin/env bash
# s51-run1 call 2 (repo root, carry [".debs"]): on an H100, the plans fit
# on the H100 datasets of call 1 against the shipped plans (fit on the
# H200's), each in bench_stack's 8-layer stacks (what a forward pass sees),
# A/B/A/B, default build. Predicted from the datasets (bench/cross_gpu.py):
# the H100 plan faster where the two pick differently, most at Qwen3-30B
# 129-256 pairs (the H200 plan 10% over the H100 plan there, summed over the
# dataset's loads; session 46 saw r8.w256.s4 8 us faster than the H200
# plan's r32.w128.s4 at 256 tokens uniform), within the A/A spread elsewhere.
DEADLINE=${DEADLINE:-400}
source bench/device_run.sh s51-run2
ramp_fit_plans qwen3-30b-ep8-v2 qwen3-30b-ep8-v2-h100 olmoe-ep8-v2 olmoe-ep8-v2-h100 \
  deepseek-v3-ep8-v2 deepseek-v3-ep8-v2-h100
st() { # tag plan tokens reps
  [ "$DRY" != 1 ] && [ $SECONDS -gt $DEADLINE ] && { echo "$1: skipped ($SECONDS s)"; return; }
  ramp_stack "$1" "$2" "$3" "" 0 "$4" 120
}
for ab in a b; do
  st qwen3-h200-$ab qwen3-30b-ep8-v2 16,64,256,512 10
  st qwen3-h100-$ab qwen3-30b-ep8-v2-h100 16,64,256,512 10
  st olmoe-h200-$ab olmoe-ep8-v2 16,64,256,512 10
  st olmoe-h100-$ab olmoe-ep8-v2-h100 16,64,256,512 10
done
st dsv3-h200-a deepseek-v3-ep8-v2 16,64,256 5
st dsv3-h100-a deepseek-v3-ep8-v2-h100 16,64,256 5
[ "$DRY" = 1 ] && exit 0
for m in qwen3 olmoe dsv3; do
  python3 ../bench/stack_ab.py h200=$(ls -d $W/$m-h200-* | paste -sd,) h100=$(ls -d $W/$m-h100-* | paste -sd,) \
    > $W/ab-$m.md 2>&1; cat $W/ab-$m.md
done
