#!/usr/bin/env bash
# s49-run1 call 2 (repo root, carry [".debs"]). RAMP_MV2_DYN's claim moved
# from the current tile's top to the end of the producer's requests for it
# (the claim's horizon the ring's depth, not a whole tile): call 1 showed
# the top-of-tile claim balancing DeepSeek-V3 r8.w128.s4 at 64 tokens
# uniform (end spread 45 -> 11 us, layer 435 -> 405 us) but not at 16,
# where every block claimed its second tile at the start (spread 33 ->
# 43 us, layer 207 -> 220 us).
# And the block's done count moved from its exit to its failed claim
# (call 1: DYN cost Qwen3/OLMoE 0.3-1.1 us a layer, where no claim succeeds).
# (a) correct with both switches on (EARLY_HEAD and the new DYN): call 1's
# checks, with its three script slips fixed (DeepSeek-V3's configuration
# list and memcheck's two-phase entry need RAMP_MOE_V2_SPLIT=1; the grouped
# order runs no split-K entry, so its list leaves them out).
# (b) DYN A/B/A/B on DeepSeek-V3 EP8 r8.w128.s4 (timelines on the first
# pair), r8.w512.s4 and the shipped plan (call 1's r8.w512.s4 16 uniform
# 209 -> 243 us with DYN, where no block claims a second tile: noise or
# a cost?); Qwen3/OLMoE's shipped plans (the claims' cost).
# Predicted: (a) every check holds; (b) r8.w128.s4 with DYN: the end's
# spread at 16 uniform ~10 us (from 33), the layer 10-30 us faster at 16
# and 64 uniform, ~0 on skewed 16 (80 tiles, none claimed); r8.w512.s4
# and Qwen3/OLMoE within the A/A spread.
DEFINES="RAMP_MV2_EARLY_HEAD=1 RAMP_MV2_DYN=1"
source bench/device_run.sh s49-run2
t() { ramp_check "$@"; }
t moe-v2 170 RAMP_MOE_V2_MODELS=qwen3-30b,olmoe ./test_gpu_moe_v2
t moe-v2-dsv3 90 RAMP_MOE_V2_MODELS=deepseek-v3 \
  RAMP_MOE_CONFIGS=r8.w128.s4,r8.w512.s4,r16.w256.s4,r128.w256.s3,r8.w128.s2 ./test_gpu_moe_v2
t moe-v2-dsv3-split 90 RAMP_MOE_V2_MODELS=deepseek-v3 RAMP_MOE_V2_SPLIT=1 \
  RAMP_MOE_CONFIGS=r8.w128.s4,r128.w512.s3.ph2.dk2,r16.w128.s4.ph2.dk4 ./test_gpu_moe_v2
t moe-v2-split 90 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_V2_SPLIT=1 ./test_gpu_moe_v2
t moe-v2-group 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_V2_GROUP=4 \
  RAMP_MOE_CONFIGS=r4.w128.s2,r8.w128.s4,r16.w256.s4,r32.w128.s4,r64.w256.s3,r128.w128.s4 ./test_gpu_moe_v2
t moe-v2-gg 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_V2_GGATHER=2 ./test_gpu_moe_v2
TX=r4.w128.s4,r128.w256.s3.tx,r16.w256.s4,r128.w128.s4.ph2.tx,r128.w256.s3.ph2.mc.tx,r16.w128.s4.k2
t layer-default 60 RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=20 ./test_gpu_layer
t layer-tx 60 RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=20 RAMP_LAYER_MENU=$TX ./test_gpu_layer
t memcheck 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r8.w128.s4,r16.w128.s4.k2 \
  RAMP_MOE_TOKENS=12 RAMP_MOE_V2_NO_V1=1 compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_moe_v2
t memcheck-split 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r128.w128.s4.ph2 RAMP_MOE_V2_SPLIT=1 \
  RAMP_MOE_TOKENS=12 RAMP_MOE_V2_NO_V1=1 compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_moe_v2
t racecheck 90 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r8.w128.s4 RAMP_MOE_TOKENS=12 \
  RAMP_MOE_V2_NO_V1=1 compute-sanitizer --tool racecheck --error-exitcode 3 ./test_gpu_moe_v2
ramp_fit_plans qwen3-30b-ep8-v2 olmoe-ep8-v2 deepseek-v3-ep8-v2
for c in r8.w128.s4 r8.w512.s4; do
  ./ramp fit ../data/timing/deepseek-v3-ep8-v2.safetensors -o $W/plan-dsv3-$c.json --menu 1 \
    --include $c > /dev/null || exit 1
done
st() { ramp_stack "$1" "$2" "$3" "$4" "$5" "$6" 150; } # tag plan tokens defines timeline reps
for ab in a b; do
  tl=$([ $ab = a ] && echo 1 || echo 0)
  st dsv3-r8.w128.s4-y0-$ab dsv3-r8.w128.s4 16,64,256 RAMP_MV2_DYN=0 $tl 5
  st dsv3-r8.w128.s4-y1-$ab dsv3-r8.w128.s4 16,64,256 RAMP_MV2_DYN=1 $tl 5
  st dsv3-r8.w512.s4-y0-$ab dsv3-r8.w512.s4 16,64 RAMP_MV2_DYN=0 0 5
  st dsv3-r8.w512.s4-y1-$ab dsv3-r8.w512.s4 16,64 RAMP_MV2_DYN=1 0 5
  st dsv3-plan-y0-$ab deepseek-v3-ep8-v2 16,64,256 RAMP_MV2_DYN=0 0 5
  st dsv3-plan-y1-$ab deepseek-v3-ep8-v2 16,64,256 RAMP_MV2_DYN=1 0 5
done
st qwen3-y0 qwen3-30b-ep8-v2 16,64,256,512 RAMP_MV2_DYN=0 0 10
st qwen3-y1 qwen3-30b-ep8-v2 16,64,256,512 RAMP_MV2_DYN=1 0 10
st olmoe-y0 olmoe-ep8-v2 16,64,256 RAMP_MV2_DYN=0 0 10
st olmoe-y1 olmoe-ep8-v2 16,64,256 RAMP_MV2_DYN=1 0 10
for f in $W/*/out.txt; do echo "== $f"; grep -E "^ *[0-9]+ +(uniform|skewed)" $f | cut -c1-90; done
python3 ../bench/timeline_balance.py $W > $W/balance.txt 2>&1
grep -E " stack " $W/balance.txt | cut -c1-150
