#!/usr/bin/env bash
# s48-run1 call 2 (repo root, carry [".debs"]; written in session 48, which
# had no device; run after call 1 has shown RAMP_MV2_DYN=1 correct).
# RAMP_MV2_DYN=1 (new, off by default): tiles after a block's first are
# claimed from a counter instead of taken by stride. Session 47's DeepSeek-V3
# EP8 timelines (bench/results/s48-cpu): the blocks end in groups by SM
# (64 tokens uniform, one 11 MB tile each: 315-322, 356-365, 398-406 us),
# and bench/timeline_balance.py puts the end 13-42 us earlier were the tiles
# shared out by each block's own rate. A claim can only move tiles where an
# entry has more than the grid, so the finer entries are what to time:
# one-entry plans r8.w128.s4 (416 tiles at 64 uniform, 208 at 16),
# r8.w256.s4 and r8.w512.s4 (the shipped plan's choice at 64 tokens), each
# with DYN 0 and 1, and the shipped plan with DYN 0 and 1; timelines on
# r8.w128.s4. Then Qwen3-30B and OLMoE's shipped plans with DYN 0 and 1
# (their entries have at most about one tile a block at these loads: the
# claims' cost, which should be ~0).
# Predicted: DeepSeek-V3 r8.w128.s4 with DYN 10-35 us faster at 16 and 64
# tokens (of 208 and ~400: the fluid gain less the claims and the finer
# tiles' extra output adds) and then faster than r8.w512.s4 without it at
# 64 tokens; r8.w512.s4 unchanged (tiles <= grid); the timeline's groups
# by SM gone for r8.w128 with DYN (blocks on fast SMs run more tiles, the
# latest end within ~one tile's time of the mean); Qwen3/OLMoE within the
# A/A spread (~0.5 us).
source bench/device_run.sh s48-run2
ramp_fit_plans qwen3-30b-ep8-v2 olmoe-ep8-v2 deepseek-v3-ep8-v2
for c in r8.w128.s4 r8.w256.s4 r8.w512.s4; do
  ./ramp fit ../data/timing/deepseek-v3-ep8-v2.safetensors -o $W/plan-dsv3-$c.json --menu 1 \
    --include $c > /dev/null || exit 1
done
run() { ramp_stack "$1" "$2" "$3" "RAMP_MV2_DYN=$4" "$5" "$6" 150; } # tag plan tokens dyn timeline reps
for c in r8.w128.s4 r8.w512.s4 r8.w256.s4; do
  run dsv3-$c-y0 dsv3-$c 16,64,256 0 $([ $c = r8.w128.s4 ] && echo 1 || echo 0) 5
  run dsv3-$c-y1 dsv3-$c 16,64,256 1 $([ $c = r8.w128.s4 ] && echo 1 || echo 0) 5
done
run dsv3-plan-y0 deepseek-v3-ep8-v2 16,64,256 0 0 5; run dsv3-plan-y1 deepseek-v3-ep8-v2 16,64,256 1 0 5
run qwen3-y0 qwen3-30b-ep8-v2 16,64,256,512 0 0 10; run qwen3-y1 qwen3-30b-ep8-v2 16,64,256,512 1 0 10
run olmoe-y0 olmoe-ep8-v2 16,64,256 0 0 10; run olmoe-y1 olmoe-ep8-v2 16,64,256 1 0 10
for f in $W/*-y[01]/out.txt; do echo "== $f"; grep -E "^ *[0-9]+ +(uniform|skewed)" $f; done
python3 ../bench/timeline_balance.py $W > $W/balance.txt
grep -E " stack " $W/balance.txt | cut -c1-150
