# s19-run3: the selection kernel with pair_tiles (multicast entries' T counted in
# pairs, commit c54e50d): test_gpu_select and test_gpu_layer against the CPU twin,
# compute-sanitizer on test_gpu_select, the layer on a menu with three .mc entries;
# then the layer on plans fit with the new T (Mixtral-8x22B, DeepSeek-V3 EP8 FP8;
# Mixtral BF16) and the PyTorch peer on the same loads.
set -u
save() { mkdir -p $OUT/$1 && cp -r build-gpucheck-logs/. $OUT/$1/ 2>/dev/null; rm -rf $OUT/$1/datasets; }
CTEST_ARGS="-R test_gpu_select|test_gpu_layer" tools/gpu-check env deps build ctest sanitize > $OUT/gc-check.txt 2>&1
echo "check exit $?"; save check
MC_PARTS=layer MC_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=200 tools/gpu-check mcast > $OUT/gc-mc.txt 2>&1
echo "mcast layer exit $?"; save mc
LAYER_KERNEL=v2 LAYER_MODELS="mixtral-8x22b-ep8-v2 deepseek-v3-ep8-v2" LAYER_FLUSH=read \
  tools/gpu-check bench_layer > $OUT/gc-fp8.txt 2>&1
echo "bench_layer fp8 exit $?"; save fp8; cp build-gpucheck/plan-*.json $OUT/fp8/ 2>/dev/null
LAYER_KERNEL=v2 LAYER_BF16=1 LAYER_MODELS=mixtral-8x22b-ep8-v2-bf16 LAYER_FLUSH=read \
  tools/gpu-check bench_layer peer > $OUT/gc-bf16.txt 2>&1
echo "bench_layer bf16 + peer exit $?"; save bf16; cp build-gpucheck/plan-*.json build-gpucheck/layer-loads-*.json $OUT/bf16/ 2>/dev/null
cd $OUT && tar czf s19-run3.tgz gc-*.txt check mc fp8 bf16 && rm -rf check mc fp8 bf16
for f in gc-check gc-mc gc-fp8 gc-bf16; do echo "== $f"; grep -E "PASS|FAIL" $f.txt | tail -8; done
