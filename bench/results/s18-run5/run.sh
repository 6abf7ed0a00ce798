# s18-run5: the layer on plans fit on s18-run4's datasets (with .tx and .mc.tx wide tiles),
# Mixtral-8x22B and DeepSeek-V3 EP8 FP8, L2 emptied by a read, median of 20.
set -u
LAYER_KERNEL=v2 LAYER_MODELS="mixtral-8x22b-ep8-v2 deepseek-v3-ep8-v2" \
  LAYER_FLUSH=read LAYER_TOKENS=64,256,1024,2048,4096 LAYER_REPS=20 \
  tools/gpu-check env deps build bench_layer > $OUT/gc-fp8.txt 2>&1
echo "fp8 exit $?"
mkdir -p $OUT/r && cp build-gpucheck-logs/tables.txt build-gpucheck-logs/bench_layer.log \
  build-gpucheck-logs/layer-*.csv build-gpucheck-logs/plan-*.json build-gpucheck-logs/env.log $OUT/r/ 2>/dev/null
tar czf $OUT/res.tgz -C $OUT r
grep -E "^[0-9]+ +(uniform|skewed)|menu of|^  r1" $OUT/r/bench_layer.log | cut -c1-120
