#!/usr/bin/env bash
# s49-run1 call 2' (repo root, carry [".debs"]): run2.sh cut to what fits
# the ~300 s of device time left after three more failed loans: the new
# DYN (claim after a tile's last request; done count at the failed claim)
# with EARLY_HEAD checked (Qwen3/OLMoE every configuration incl. 7-block
# grids, DeepSeek-V3 five, two-phase, memcheck, racecheck), then
# DeepSeek-V3 r8.w128.s4 A/B/A/B with timelines and Qwen3's plan A/B (the
# claims' cost). Predictions: run2.sh's header.
DEFINES="RAMP_MV2_EARLY_HEAD=1 RAMP_MV2_DYN=1"
source bench/device_run.sh s49-run3
t() { ramp_check "$@"; }
t moe-v2 120 RAMP_MOE_V2_MODELS=qwen3-30b,olmoe ./test_gpu_moe_v2
t moe-v2-dsv3 60 RAMP_MOE_V2_MODELS=deepseek-v3 \
  RAMP_MOE_CONFIGS=r8.w128.s4,r8.w512.s4,r16.w256.s4,r128.w256.s3,r8.w128.s2 ./test_gpu_moe_v2
t moe-v2-split 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_V2_SPLIT=1 ./test_gpu_moe_v2
t memcheck 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r8.w128.s4,r16.w128.s4.k2 \
  RAMP_MOE_TOKENS=12 RAMP_MOE_V2_NO_V1=1 compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_moe_v2
t racecheck 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r8.w128.s4 RAMP_MOE_TOKENS=12 \
  RAMP_MOE_V2_NO_V1=1 compute-sanitizer --tool racecheck --error-exitcode 3 ./test_gpu_moe_v2
ramp_fit_plans qwen3-30b-ep8-v2
./ramp fit ../data/timing/deepseek-v3-ep8-v2.safetensors -o $W/plan-dsv3-r8.w128.s4.json --menu 1 \
  --include r8.w128.s4 > /dev/null || exit 1
st() { ramp_stack "$1" "$2" "$3" "$4" "$5" "$6" 90; } # tag plan tokens defines timeline reps
for ab in a b; do
  st dsv3-y0-$ab dsv3-r8.w128.s4 16,64 RAMP_MV2_DYN=0 1 5
  st dsv3-y1-$ab dsv3-r8.w128.s4 16,64 RAMP_MV2_DYN=1 1 5
done
st qwen3-y0 qwen3-30b-ep8-v2 16,64,256,512 RAMP_MV2_DYN=0 0 10
st qwen3-y1 qwen3-30b-ep8-v2 16,64,256,512 RAMP_MV2_DYN=1 0 10
for f in $W/*/out.txt; do echo "== $f"; grep -E "^ *[0-9]+ +(uniform|skewed)" $f | cut -c1-90; done
python3 ../bench/timeline_balance.py $W > $W/balance.txt 2>&1
grep -E " stack " $W/balance.txt | cut -c1-150
