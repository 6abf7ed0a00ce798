# s18-run4: Mixtral-8x22B and DeepSeek-V3 EP8 FP8 v2 datasets re-measured over the space with
# .tx and .mc.tx wide tiles (same traces, seeds, batches: the same 320 loads each).
set -u
DATASETS="mixtral-8x22b:EP8:8:v2 deepseek-v3:EP8:8:v2" DATASETS_SECONDS=440 \
  tools/gpu-check env deps build datasets > $OUT/gc-ds.txt 2>&1
echo "datasets exit $?"
mkdir -p $OUT/ds && cp build-gpucheck-logs/tables.txt build-gpucheck-logs/env.log $OUT/ds/
cp build-gpucheck-logs/datasets/*.safetensors $OUT/ds/ 2>/dev/null
ls -la $OUT/ds; tail -n 8 $OUT/ds/tables.txt
