#!/usr/bin/env bash
# s49-run1 call 1 (repo root, carry [".debs"]). Session 48's two switches
# (RAMP_MV2_EARLY_HEAD, RAMP_MV2_DYN; off by default) in one call, ordered
# by what matters most, because this session's device loans kept failing
# (five tries, ~700 s of the budget gone before the first ran): the
# prepared bench/results/s48-run1/run1.sh and run2.sh hold the same steps
# in two calls. Run under an outer `timeout`, so that whatever finished
# comes back.
# (a) correct with both switches on: s48-run1/run1.sh's checks
# (test_gpu_moe_v2 Qwen3-30B and OLMoE incl. 7-block grids where every
# block claims, DeepSeek-V3's five configurations, SPLIT, GROUP=4, .gg;
# test_gpu_layer default and .tx; memcheck; racecheck).
# (b) DYN A/B on DeepSeek-V3 EP8 one-entry plans r8.w128.s4 (timelines)
# and r8.w512.s4, then the shipped plan.
# (c) EARLY_HEAD A/B/A/B on Qwen3-30B and OLMoE (timelines on Qwen3).
# (d) DYN's cost on Qwen3/OLMoE's shipped plans; EARLY alone checked.
# Predictions: s48-run1/run1.sh and run2.sh's headers (EARLY 0.5-1.5 us
# faster Qwen3/OLMoE 16-256; DYN r8.w128.s4 10-35 us faster on DeepSeek-V3
# 16 and 64 tokens, then faster than r8.w512.s4 static at 64; Qwen3/OLMoE
# within ~0.5 us).
DEFINES="RAMP_MV2_EARLY_HEAD=1 RAMP_MV2_DYN=1"
source bench/device_run.sh s49-run1
t() { ramp_check "$@"; }
t moe-v2 170 RAMP_MOE_V2_MODELS=qwen3-30b,olmoe ./test_gpu_moe_v2
t moe-v2-dsv3 90 RAMP_MOE_V2_MODELS=deepseek-v3 \
  RAMP_MOE_CONFIGS=r8.w128.s4,r8.w512.s4,r16.w256.s4,r128.w256.s3,r128.w512.s3.ph2.dk2 ./test_gpu_moe_v2
t moe-v2-split 90 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_V2_SPLIT=1 ./test_gpu_moe_v2
t moe-v2-group 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_V2_GROUP=4 ./test_gpu_moe_v2
t moe-v2-gg 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_V2_GGATHER=2 ./test_gpu_moe_v2
TX=r4.w128.s4,r128.w256.s3.tx,r16.w256.s4,r128.w128.s4.ph2.tx,r128.w256.s3.ph2.mc.tx,r16.w128.s4.k2
t layer-default 60 RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=20 ./test_gpu_layer
t layer-tx 60 RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=20 RAMP_LAYER_MENU=$TX ./test_gpu_layer
t memcheck 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r8.w128.s4,r16.w128.s4.k2,r128.w128.s4.ph2 \
  RAMP_MOE_TOKENS=12 RAMP_MOE_V2_NO_V1=1 compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_moe_v2
t racecheck 90 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r8.w128.s4 RAMP_MOE_TOKENS=12 \
  RAMP_MOE_V2_NO_V1=1 compute-sanitizer --tool racecheck --error-exitcode 3 ./test_gpu_moe_v2
ramp_fit_plans qwen3-30b-ep8-v2 olmoe-ep8-v2 deepseek-v3-ep8-v2
for c in r8.w128.s4 r8.w512.s4; do
  ./ramp fit ../data/timing/deepseek-v3-ep8-v2.safetensors -o $W/plan-dsv3-$c.json --menu 1 \
    --include $c > /dev/null || exit 1
done
st() { ramp_stack "$1" "$2" "$3" "$4" "$5" "$6" 150; } # tag plan tokens defines timeline reps
st dsv3-r8.w128.s4-y0 dsv3-r8.w128.s4 16,64,256 RAMP_MV2_DYN=0 1 5
st dsv3-r8.w128.s4-y1 dsv3-r8.w128.s4 16,64,256 RAMP_MV2_DYN=1 1 5
st dsv3-r8.w512.s4-y0 dsv3-r8.w512.s4 16,64,256 RAMP_MV2_DYN=0 0 5
st dsv3-r8.w512.s4-y1 dsv3-r8.w512.s4 16,64,256 RAMP_MV2_DYN=1 0 5
st dsv3-plan-y0 deepseek-v3-ep8-v2 16,64,256 RAMP_MV2_DYN=0 0 5
st dsv3-plan-y1 deepseek-v3-ep8-v2 16,64,256 RAMP_MV2_DYN=1 0 5
for ab in a b; do
  st qwen3-e0-$ab qwen3-30b-ep8-v2 16,64,256,512 RAMP_MV2_EARLY_HEAD=0 0 10
  st qwen3-e1-$ab qwen3-30b-ep8-v2 16,64,256,512 RAMP_MV2_EARLY_HEAD=1 0 10
  st olmoe-e0-$ab olmoe-ep8-v2 16,64,256 RAMP_MV2_EARLY_HEAD=0 0 10
  st olmoe-e1-$ab olmoe-ep8-v2 16,64,256 RAMP_MV2_EARLY_HEAD=1 0 10
done
st qwen3-e0-tl qwen3-30b-ep8-v2 16,64,256 RAMP_MV2_EARLY_HEAD=0 1 10
st qwen3-e1-tl qwen3-30b-ep8-v2 16,64,256 RAMP_MV2_EARLY_HEAD=1 1 10
st qwen3-y1 qwen3-30b-ep8-v2 16,64,256,512 RAMP_MV2_DYN=1 0 10
st olmoe-y1 olmoe-ep8-v2 16,64,256 RAMP_MV2_DYN=1 0 10
DEFINES="RAMP_MV2_EARLY_HEAD=1"
t moe-v2-early 90 RAMP_MOE_V2_MODELS=qwen3-30b ./test_gpu_moe_v2
for f in $W/*/out.txt; do echo "== $f"; grep -E "^ *[0-9]+ +(uniform|skewed)" $f; done
python3 ../bench/timeline_balance.py $W > $W/balance.txt 2>&1
grep -E " stack " $W/balance.txt | cut -c1-150
python3 ../bench/timeline_head.py $W > $W/head.txt 2>&1
grep -E " stack .* uniform" $W/head.txt | cut -c1-29,36-70,168-
