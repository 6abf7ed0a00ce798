# s18-run3: .tx entries with the copy of x inside the first polymorphic kernel (grid barrier
# in pp.sched): correctness (test_gpu_layer, .tx entries forced, FP8 and BF16, graph replays;
# memcheck and racecheck), then the layer A/B (bench_layer --wide tx,mctx) on Mixtral-8x22B
# and DeepSeek-V3 EP8 FP8, L2 emptied by a read, median of 20.
set -u
M=r8.w256.s3,r16.w256.s4,r128.w256.s3.tx,r128.w256.s3.ph2.mc.tx,r128.w128.s4.ph2.dk2.tx,r32.w256.s4
RAMP_LAYER_ROUTINGS=200 MC_PARTS=layer MC_LAYER_MENU=$M MC_LAYER_KINDS=fp8,bf16 \
  tools/gpu-check env deps build mcast > $OUT/gc-layer.txt 2>&1
echo "layer gpu-check exit $?"
cp build-gpucheck-logs/tables.txt $OUT/tables-layer.txt
mkdir -p $OUT/r && cp build-gpucheck-logs/mcast-layer*.txt build-gpucheck-logs/env.log $OUT/r/ 2>/dev/null
LAYER_KERNEL=v2 LAYER_MODELS="mixtral-8x22b-ep8-v2 deepseek-v3-ep8-v2" LAYER_WIDE=tx,mctx \
  LAYER_FLUSH=read LAYER_TOKENS=256,1024,2048,4096 LAYER_REPS=20 \
  tools/gpu-check bench_layer > $OUT/gc-fp8.txt 2>&1
echo "fp8 exit $?"
cp build-gpucheck-logs/tables.txt build-gpucheck-logs/bench_layer.log \
  build-gpucheck-logs/layer-*.csv build-gpucheck-logs/plan-*.json $OUT/r/ 2>/dev/null
tar czf $OUT/res.tgz -C $OUT r
tail -n 12 $OUT/tables-layer.txt
grep -E "^[0-9]+ +(uniform|skewed)|ramp-(tx|mc|mctx)" $OUT/r/bench_layer.log | cut -c1-110
