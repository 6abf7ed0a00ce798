# s18-run2: the layer with token rows by TMA / multicast on its wide entries (bench_layer
# --wide tx,mc,mctx: same plan, same choices), Mixtral-8x22B and DeepSeek-V3 EP8 FP8, then
# Mixtral BF16; L2 emptied by a read before each timing; median of 20.
set -u
LAYER_KERNEL=v2 LAYER_MODELS="mixtral-8x22b-ep8-v2 deepseek-v3-ep8-v2" LAYER_WIDE=tx,mc,mctx \
  LAYER_FLUSH=read LAYER_TOKENS=1024,2048,4096 LAYER_REPS=20 \
  tools/gpu-check env deps build bench_layer > $OUT/gc-fp8.txt 2>&1
echo "fp8 exit $?"
mkdir -p $OUT/fp8 && cp build-gpucheck-logs/tables.txt build-gpucheck-logs/bench_layer.log \
  build-gpucheck-logs/layer-*.csv build-gpucheck-logs/plan-*.json $OUT/fp8/ 2>/dev/null
LAYER_KERNEL=v2 LAYER_BF16=1 LAYER_MODELS=mixtral-8x22b-ep8-v2-bf16 LAYER_WIDE=tx,mc,mctx \
  LAYER_FLUSH=read LAYER_TOKENS=1024,2048,4096 LAYER_REPS=20 \
  tools/gpu-check bench_layer > $OUT/gc-bf16.txt 2>&1
echo "bf16 exit $?"
mkdir -p $OUT/bf16 && cp build-gpucheck-logs/tables.txt build-gpucheck-logs/bench_layer.log \
  build-gpucheck-logs/layer-*bf16*.csv build-gpucheck-logs/plan-*.json $OUT/bf16/ 2>/dev/null
tar czf $OUT/res.tgz -C $OUT fp8 bf16
grep -E "^ +[0-9]+ +(uniform|skewed)|ramp-(tx|mc|mctx)|^ +ramp " $OUT/fp8/bench_layer.log | head -60
