#!/usr/bin/env bash
# s43-run1 call 3 (repo root, carry [".debs"]): the remaining stale datasets
# over the whole space on their shipped loads: OLMoE-1B-7B EP4 and EP16 (6
# batches a domain; call 1 asked EP4 for 30 by mistake and kept none of it),
# Qwen3-30B TP2 (12). Predicted: complete; the best time per load ~10% lower
# at <= 16 pairs where split-K was missing (EP4, TP2) and ~30% lower at
# >= 2,049 pairs (wide two-phase tiles), the same between.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s43r3; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s43-run3.tgz -C /tmp s43r3' EXIT
DATASETS="olmoe:EP4:6:v2 olmoe:EP16:6:v2 qwen3-30b:TP2:12:v2" DATASETS_SECONDS=420 timeout 540 \
  tools/gpu-check env deps build datasets > $W/gpu-check.txt 2>&1
echo "gpu-check datasets exit $?"
cp -r build-gpucheck-logs/datasets build-gpucheck-logs/tables.txt $W/ 2>/dev/null
grep -A5 "^datasets" build-gpucheck-logs/tables.txt
