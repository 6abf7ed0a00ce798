# s16-run4: four short calls on the machine s16-run3 left warm (same tree, commit a65d8b1).
# 1. BF16 multicast: correctness (Mixtral two-phase, 200 tokens) and the kernel alone, plain beside .m1
MC_PARTS="test bench" MC_MODES="mx-bf16split" V2_TIMEOUT=80 MC_BENCH_KINDS=1 V2_BENCH_TIMEOUT=100 \
  MC_LOADS=m512,m1024 \
  MC_VARIANTS=m:r128.w256.s3.u1.k2,m:r128.w256.s3.u1.k2.m1,m:r128.w128.s4.u1.k2,m:r128.w128.s4.u1.k2.m1 \
  tools/gpu-check env deps build mcast > /dev/null 2>&1
echo "gpu-check exit $?"
cp build-gpucheck-logs/tables.txt build-gpucheck-logs/mcast-test-*.txt build-gpucheck-logs/mcast-bench-*.txt \
  build-gpucheck-logs/*mcast*.md $OUT/ 2>/dev/null
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
cd build-gpucheck
export LD_LIBRARY_PATH=$L:${LD_LIBRARY_PATH:-} RAMP_KERNEL_DIR=$PWD/../kernels RAMP_DATA_DIR=$PWD/../data \
  RAMP_CACHE_DIR=$PWD/jit-cache RAMP_TEST_TMP=$PWD/test-tmp
M=r8.w256.s3,r16.w256.s4,r128.w256.s3.mc,r128.w256.s3.ph2.mc,r128.w128.s4.ph2.dk2.mc,r32.w256.s4
# 2. the polymorphic layer on a menu with multicast entries: every entry forced, 100 graph replays
RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_MENU=$M RAMP_LAYER_ROUTINGS=100 timeout 130 \
  ./test_gpu_layer > $OUT/layer-mc.txt 2>&1
echo "layer exit $?"
# 3. the same under memcheck and racecheck, the three multicast entries forced
for tool in memcheck racecheck; do
  RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_MENU=$M RAMP_LAYER_ROUTINGS=1 RAMP_LAYER_SHAPES=1 \
    RAMP_LAYER_ENTRIES=2,3,4 timeout 75 compute-sanitizer --tool $tool --error-exitcode 3 ./test_gpu_layer \
    > $OUT/layer-mc-$tool.txt 2>&1
  echo "$tool exit $?"
done
# 4. racecheck on Mixtral's shared pairs (two-phase, 140 tokens): timed out at 110 s (exit 124)
RAMP_MOE_V2_MCAST=1 RAMP_MOE_V2_NO_V1=1 RAMP_MOE_V2_MODELS=mixtral-8x22b RAMP_MOE_CONFIGS=r128.w128.s4 \
  RAMP_MOE_TOKENS=140 RAMP_MOE_V2_SPLIT=1 timeout 110 \
  compute-sanitizer --tool racecheck --error-exitcode 3 ./test_gpu_moe_v2 > $OUT/sanitize-racecheck-mixtral.txt 2>&1
echo "racecheck mixtral exit $?"
