#!/usr/bin/env bash
# s43-run1 call 4 (repo root, carry [".debs"]): the last stale datasets over
# the whole space on their shipped loads: DeepSeek-V3 EP8 balanced (106 of
# 154; 8 batches a domain) and Qwen3-30B EP32 (79 of 97; 6). DeepSeek-V3 EP32
# (90 of 154, 960 loads) needs two calls: DATASETS="deepseek-v3:EP32:6:v2"
# with DATASETS_RESUME set to a carried folder holding the first call's
# .partial file (data/timing/README.md).
# Predicted: complete in ~250 + ~150 s; DeepSeek-V3 balanced's best per load
# lower at its largest loads (wide tiles, as the unbalanced file's), Qwen3
# EP32's the same except where a wide tile wins (>= 2,049 pairs: few loads).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s43r4; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s43-run4.tgz -C /tmp s43r4' EXIT
DATASETS="deepseek-v3:EP8:balanced:8:v2 qwen3-30b:EP32:6:v2" DATASETS_SECONDS=500 timeout 570 \
  tools/gpu-check env deps build datasets > $W/gpu-check.txt 2>&1
echo "gpu-check datasets exit $?"
cp -r build-gpucheck-logs/datasets build-gpucheck-logs/tables.txt $W/ 2>/dev/null
grep -A5 "^datasets" build-gpucheck-logs/tables.txt
