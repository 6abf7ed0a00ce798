# s18-run1: token rows by TMA (.tx) in the polymorphic kernel and the layer: correctness
# (test_gpu_layer, every .tx entry forced, FP8 and BF16, graph replays; memcheck and
# racecheck), the standalone kernel's .tx paths after the map/launch refactor (smoke).
set -u
M=r8.w256.s3,r16.w256.s4,r128.w256.s3.tx,r128.w256.s3.ph2.mc.tx,r128.w128.s4.ph2.dk2.tx,r32.w256.s4
RAMP_LAYER_ROUTINGS=200 MC_PARTS=layer MC_LAYER_MENU=$M MC_LAYER_KINDS=fp8,bf16 \
  tools/gpu-check env deps build mcast > $OUT/gc-layer.txt 2>&1
echo "layer gpu-check exit $?"
cp build-gpucheck-logs/tables.txt $OUT/tables-layer.txt
SMOKE_WIDE=1 SMOKE_ENV=RAMP_MOE_V2_TMA_X=1 SMOKE_ONLY="split mx-split mx-mcast memcheck-1" \
  tools/gpu-check smoke > $OUT/gc-smoke.txt 2>&1
echo "smoke gpu-check exit $?"
cp build-gpucheck-logs/tables.txt $OUT/tables-smoke.txt
tar czf $OUT/logs.tgz -C build-gpucheck-logs .
cat $OUT/tables-layer.txt $OUT/tables-smoke.txt | tail -n 40
