# s15-run3 (after s15-run1 passes): multicast under compute-sanitizer and in the layer; the BF16
# layer with its wide entries pipelined (ramp_layer_desc.bf16_pipe), every entry forced
V2_SAN_TIMEOUT=150 MC_PARTS="sanitize layer" tools/gpu-check env deps build mcast > /dev/null 2>&1
echo "gpu-check exit $?"
cp build-gpucheck-logs/tables.txt build-gpucheck-logs/env.log $OUT/ 2>/dev/null
cp build-gpucheck-logs/mcast-layer*.txt build-gpucheck-logs/mcast-sanitize-*.txt $OUT/ 2>/dev/null
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
M="r8.w256.s4,r32.w256.s3,r128.w256.s3,r128.w128.s4.ph2.dk2,r128.w256.s3.ph2,r16.w256.s3"
cd build-gpucheck
export LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-} RAMP_KERNEL_DIR=$PWD/../kernels RAMP_DATA_DIR=$PWD/../data RAMP_CACHE_DIR=$PWD/jit-cache RAMP_TEST_TMP=$PWD/test-tmp
RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=bf16 RAMP_LAYER_BF16_PIPE=1 RAMP_LAYER_MENU=$M timeout 150 ./test_gpu_layer > $OUT/layer-bf16-pipe.txt 2>&1; echo "bf16 pipe layer exit $?"
grep -E "exit|passed|failed|SUMMARY" $OUT/tables.txt | head -30; tail -2 $OUT/layer-bf16-pipe.txt
