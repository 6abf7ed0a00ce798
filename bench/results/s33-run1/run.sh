#!/usr/bin/env bash
# s33-run1 (session 33), one device call:
# (a) the selection kernel's launch shapes (a launch with a host token count
#     runs the smallest shape covering it): test_gpu_select (every shape
#     against the CPU twin), test_gpu_layer on kernel v2 (a quarter of the
#     routings run with the count on the host), compute-sanitizer memcheck,
#     racecheck and synccheck on test_gpu_select;
# (b) kernel v1 against kernel v2, same configuration, same loads, one
#     process each, in the same call: DeepSeek-V3 EP8's v1-dataset loads
#     (80), the narrow w128 configurations with v2 / v1 above 0.93 in the
#     shipped files (bench/v1_vs_v2.py), timed v1, v2, v2, v1;
# (c) bench_layer --one-shape 1 (rows ramp and ramp-oneshape: same plan, same
#     choices, the selection in the smallest shape or in max_tokens' shape)
#     on the four EP8 FP8 v2 plans, 64-512 tokens.
# Two calls on one warm machine: PART=1 bash run.sh (build, a, b), then
# PART=2 bash run.sh (c; reuses the build). PART=3: build, then (c) again
# with each variant timed in alternation with the layer (bench_layer's
# time_pair, added after PART=2 showed the later-timed graph of a pair
# reading faster) and 60 reps. PART=4: as 3 with max_tokens 4,096 (the
# old shape 8 blocks of 32 warps, as a layer built for large batches has)
# on Qwen3-30B, OLMoE and Mixtral-8x22B (DeepSeek-V3's small loads vary by
# +-20 us between graphs, beyond this effect).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s33r1-$PART; rm -rf $W; mkdir -p $W/test $W/v1v2 $W/layer
pack() { tar czf $O/s33-run1-$PART.tgz -C /tmp s33r1-$PART; }
B=$PWD/build-gpucheck
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu RAMP_CACHE_DIR=$B/jit-cache \
  RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
if [ "$PART" = 1 ]; then
timeout 240 tools/gpu-check env deps build > $W/build.txt 2>&1; echo "build exit $?"
cp -r build-gpucheck-logs/* $W/ 2>/dev/null
mkdir -p $B/test-tmp
(cd $B && RAMP_TEST_TMP=$B/test-tmp timeout 150 ./test_gpu_select) > $W/test/select.txt 2>&1
echo "test_gpu_select exit $?: $(tail -n 1 $W/test/select.txt)"
(cd $B && RAMP_TEST_TMP=$B/test-tmp RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=200 \
  timeout 200 ./test_gpu_layer) > $W/test/layer-v2.txt 2>&1
echo "test_gpu_layer v2 exit $?: $(tail -n 1 $W/test/layer-v2.txt)"
pack
for tool in memcheck racecheck; do
  (cd $B && RAMP_TEST_ITERS=2 RAMP_TEST_TMP=$B/test-tmp RAMP_SANITIZER=1 timeout 75 \
    compute-sanitizer --tool $tool --error-exitcode 3 ./test_gpu_select) > $W/test/sanitize-$tool.txt 2>&1
  echo "sanitize $tool exit $?: $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/test/sanitize-$tool.txt)"
done
pack

# (b) v1 against v2
python3 bench/results/s33-run1/empty_copy.py data/timing/deepseek-v3-ep8.safetensors $W/v1v2/e0.st &&
  $B/ramp dataset seal $W/v1v2/e0.st -o $W/v1v2/loads.safetensors
C=r2.w128.s2,r4.w128.s2,r6.w128.s2,r8.w128.s2,r8.w128.s3,r8.w128.s4,r2.w128.s4,r4.w128.s4
for run in v1a v2a v2b v1b; do
  k=${run:0:2}
  timeout 120 $B/ramp bench $W/v1v2/loads.safetensors -o $W/v1v2/$run.safetensors --kernel $k \
    --configs $C --max-seconds 110 > $W/v1v2/$run.log 2>&1
  echo "bench $run exit $?: $(tail -n 1 $W/v1v2/$run.log)"
done
for p in a b; do
  python3 bench/v1_vs_v2.py --csv $W/v1v2/v1-vs-v2-$p.csv $W/v1v2/v1$p.safetensors $W/v1v2/v2$p.safetensors \
    > $W/v1v2/v1-vs-v2-$p.md 2>&1; tail -n 3 $W/v1v2/v1-vs-v2-$p.md
done
pack
fi

# (c) the selection's shape in the layer
if [ "$PART" = 3 ] || [ "$PART" = 4 ]; then
timeout 240 tools/gpu-check env deps build > $W/build.txt 2>&1; echo "build exit $?"
fi
if [ "$PART" != 1 ]; then
rm -f $B/layer-loads*.json
models="qwen3-30b-ep8-v2 olmoe-ep8-v2 deepseek-v3-ep8-v2 mixtral-8x22b-ep8-v2" tokens=64,128,256,512
[ "$PART" = 4 ] && models="qwen3-30b-ep8-v2 olmoe-ep8-v2 mixtral-8x22b-ep8-v2" tokens=64,128,256,4096
LAYER_REPS=$([ "$PART" = 2 ] && echo 30 || echo 60) \
LAYER_KERNEL=v2 LAYER_ONE_SHAPE=1 LAYER_TOKENS=$tokens LAYER_MODELS="$models" \
  timeout 330 tools/gpu-check bench_layer > $W/layer/gpu-check.txt 2>&1
echo "bench_layer exit $?"
cp -r build-gpucheck-logs/* $W/layer/ 2>/dev/null
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
pack
grep -h -E '^ +ramp-oneshape' $W/layer/bench_layer.log | head -40
fi
