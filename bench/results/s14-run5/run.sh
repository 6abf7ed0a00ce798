# s14-run5: test_gpu_layer (kernel v2) on a menu with narrow two-phase entries, no sanitizer (1000 layer replays: the default)
tools/gpu-check env deps build > /dev/null 2>&1
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
M="r16.w128.s4.ph2.dk2,r8.w256.s3,r32.w128.s4.ph2,r64.w128.s3.ph2.dk2,r128.w256.s3.ph2,r16.w128.s4.k2"
cd build-gpucheck
export LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-} RAMP_KERNEL_DIR=$PWD/../kernels RAMP_DATA_DIR=$PWD/../data RAMP_CACHE_DIR=$PWD/jit-cache RAMP_TEST_TMP=$PWD/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_MENU=$M
/usr/bin/time -f "%e s" timeout 400 ./test_gpu_layer > $OUT/layer-narrow2.txt 2>&1; echo "layer exit $?"
tail -12 $OUT/layer-narrow2.txt
