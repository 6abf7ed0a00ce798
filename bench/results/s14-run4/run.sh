LAYER_KERNEL=v2 LAYER_MODELS=mixtral-8x22b-ep8-v2 PEER_TIMEOUT=120 tools/gpu-check env deps build bench_layer peer ceilings > /dev/null 2>&1
cp build-gpucheck-logs/*.csv build-gpucheck-logs/*.json /tmp/ 2>/dev/null
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
M="r16.w128.s4.ph2.dk2,r8.w256.s3,r32.w128.s4.ph2,r64.w128.s3.ph2.dk2,r128.w256.s3.ph2,r16.w128.s4.k2"
cd build-gpucheck
export LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-} RAMP_KERNEL_DIR=$PWD/../kernels RAMP_DATA_DIR=$PWD/../data RAMP_CACHE_DIR=$PWD/jit-cache RAMP_TEST_TMP=$PWD/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_MENU=$M
timeout 150 ./test_gpu_layer > $OUT/layer-narrow2.txt 2>&1; echo "layer exit $?"
RAMP_LAYER_ROUTINGS=2 RAMP_LAYER_SHAPES=1 timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_layer > $OUT/layer-narrow2-memcheck.txt 2>&1; echo "memcheck exit $?"
RAMP_LAYER_ROUTINGS=1 RAMP_LAYER_SHAPES=1 RAMP_LAYER_ENTRIES=0,2,3 timeout 150 compute-sanitizer --tool racecheck --error-exitcode 3 ./test_gpu_layer > $OUT/layer-narrow2-racecheck.txt 2>&1; echo "racecheck exit $?"
rm -f $OUT/*.csv
tail -2 $OUT/layer-narrow2.txt; grep -m1 -E "ERROR SUMMARY" $OUT/layer-narrow2-memcheck.txt; grep -m1 "RACECHECK SUMMARY" $OUT/layer-narrow2-racecheck.txt
grep -v "^#" ../build-gpucheck-logs/layer-Mixtral-8x22B-EP8-v2.csv | awk -F, '$7 ~ /^ramp/ {print $3,$4,$5,$7,$9,$10}'
