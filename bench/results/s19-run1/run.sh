# s19-run1: resume the BF16 Mixtral-8x22B EP8 v2 dataset (space with .tx and .mc.tx)
# from the partial sweep of s18-run7.
set -u
DATASETS_RESUME=bench/results/s18-run7 DATASETS_BF16=1 DATASETS="mixtral-8x22b:EP8:8:v2" \
  DATASETS_SECONDS=430 tools/gpu-check env deps build datasets > $OUT/gc-ds.txt 2>&1
echo "datasets exit $?"
mkdir -p $OUT/ds && cp build-gpucheck-logs/tables.txt build-gpucheck-logs/env.log $OUT/ds/
cp build-gpucheck-logs/datasets/*.safetensors build-gpucheck-logs/datasets/*-info.txt $OUT/ds/ 2>/dev/null
ls -la $OUT/ds; tail -n 4 $OUT/ds/tables.txt
