#!/usr/bin/env bash
# s51-h200 (prepared in session 51, for the next session that is lent an
# H200; not run): issue #5's memory-bound targets re-measured as a forward
# pass sees them, on today's default kernel. The last H200 stacks are
# session 42's (s40-run1 parts 1-2); since then the layer reads the choice
# once (session 46) and the selection's shapes changed nothing on the
# default path, so the figures should move by under 1 us a layer.
#   bash bench/results/s51-h200/run.sh 1   # ceilings; stacks of Qwen3-30B, OLMoE EP8
#   bash bench/results/s51-h200/run.sh 2   # stacks of DeepSeek-V3, Mixtral-8x22B EP8 (stage units)
# (repo root, carry [".debs"]; each part one call of <= 560 s; the models and
# token counts of s40-run1 parts 1-2, so the figures compare). On any GPU
# but an H200 it stops after the build: the targets are the H200's.
# Predicted (s40-run1/part1 and part2, H200): Qwen3 layer 1.6-2.7x the copy
# floor, OLMoE 2.3-3.8x, DeepSeek-V3 1.00-1.24x, Mixtral 64 tokens ~1.18x;
# every figure within ~1 us a layer of session 42's. Since session 52 the
# default kernel adds its output as float4s (RAMP_MV2_OUT4; s52-run1 on an
# H100: -1.1 to -1.9 us a layer at 240-478 pairs, +1.1-1.2 at Qwen3 16
# skewed and OLMoE 512 skewed): expect that much lower, or higher, there.
# Then, on the CPU (the peer CSV and loads of s30-run3, as session 42 did):
#   python3 bench/targets.py --stack --ceilings <part 1>/ceilings.csv \
#     --peer bench/results/s30-run3/fp8/peer.csv \
#     --loads bench/results/s30-run3/fp8/layer-loads-<model>-v2.json ... <parts>/stack-*.csv
#   python3 bench/results/s51-cpu/select_first_bound.py  (pointed at the new table)
set -u
part=${1:-1}
source bench/device_run.sh s51-h200-$part
gpu=$([ "$DRY" = 1 ] && echo "NVIDIA H200 (dry run)" || nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$gpu" in *H200*) ;; *) echo "not an H200 ($gpu): stopping; the targets are the H200's"; exit 0 ;; esac
if [ "$part" = 1 ]; then
  models="qwen3-30b-ep8-v2|0|64,128,256,512 olmoe-ep8-v2|0|64,128,256,512"
  steps="ceilings stack"
else
  models="deepseek-v3-ep8-v2-units|1|64,128,256,512 mixtral-8x22b-ep8-v2-units|1|64,128,256,512,1024,2048"
  steps="stack"
fi
if [ "$DRY" = 1 ]; then
  for spec in $models; do
    IFS='|' read -r ds un tok <<< "$spec"
    ./ramp fit "../data/timing/$ds.safetensors" -o "$W/plan-$ds.json" > /dev/null &&
      echo "$ds: plan fits (units $un, tokens $tok)" || echo "$ds: NO PLAN"
  done
  exit 0
fi
cd ..
STACK_MODELS=$models STACK_TIMEOUT=200 timeout 540 tools/gpu-check $steps > "$W/gpu-check.txt" 2>&1
echo "gpu-check $steps exit $?"
cp build-gpucheck-logs/stack-* build-gpucheck-logs/plan-stack-* build-gpucheck-logs/ceilings.* \
  build-gpucheck-logs/tables.txt "$W/" 2>/dev/null
grep -A3 "^ceilings" "$W/tables.txt" 2>/dev/null
ls "$W"
