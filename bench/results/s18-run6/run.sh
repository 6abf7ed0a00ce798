# s18-run6: the BF16 Mixtral-8x22B EP8 layer (its shipped BF16 dataset's plan, which predates
# .tx) with the option on its wide entries (bench_layer --wide tx,mctx), and PyTorch's BF16
# two-GEMM MoE (torch._grouped_mm) on the same 14 loads; L2 emptied by a read.
set -u
LAYER_KERNEL=v2 LAYER_BF16=1 LAYER_MODELS=mixtral-8x22b-ep8-v2-bf16 LAYER_WIDE=tx,mctx \
  LAYER_FLUSH=read LAYER_REPS=20 PEER_TIMEOUT=200 PEER_REPS=20 \
  tools/gpu-check env deps build bench_layer peer > $OUT/gc-bf16.txt 2>&1
echo "bf16 exit $?"
mkdir -p $OUT/r && cp build-gpucheck-logs/tables.txt build-gpucheck-logs/bench_layer.log \
  build-gpucheck-logs/layer-*.csv build-gpucheck-logs/peer.csv build-gpucheck-logs/peer.log \
  build-gpucheck-logs/env.log $OUT/r/ 2>/dev/null
tar czf $OUT/res.tgz -C $OUT r
grep -E "^[0-9]+ +(uniform|skewed)|ramp-(tx|mctx)" $OUT/r/bench_layer.log | cut -c1-100
tail -n 20 $OUT/r/peer.log
