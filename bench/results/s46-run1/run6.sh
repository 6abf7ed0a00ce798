#!/usr/bin/env bash
# s46-run1 call 7 (repo root, carry [".debs"]): call 6's timeline put 3.1-4.6
# us between the MoE kernel passing its wait and its first weights being
# requested, the first bytes landing 4-5 us after that. On that path, in a
# menu holding a ".tx" entry (Qwen3-30B's and OLMoE's both do), the x copy
# read the choice and the tile count before the kernel read them again: one
# more L2 round trip before anything else. Now both are read once
# (moe_poly_v2.cuh). (a) correct: test_gpu_layer kernel v2 FP8 with a menu
# of .tx entries (part 1 forces each; the others take the early return) and
# with the default menu, then memcheck on the .tx menu; (b) call 6's
# timeline stacks again (d0).
# Predicted: (a) every check holds, memcheck 0 errors; (b) past wait ->
# first weights requested 0.3-0.8 us shorter than call 6's (Qwen3 64
# uniform 3.4 -> ~2.8), the layer in a stack faster by about as much.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s46r6; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s46-run6.tgz -C /tmp s46r6' EXIT
nvidia-smi --query-gpu=name --format=csv,noheader
tools/gpu-check env deps build > $W/build.txt 2>&1 || { tail -20 $W/build.txt; exit 1; }
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck || exit 1
export RAMP_TEST_TMP=$PWD/test-tmp; mkdir -p $RAMP_TEST_TMP
TXMENU=r4.w128.s4,r128.w256.s3.tx,r16.w256.s4,r128.w128.s4.ph2.tx,r128.w256.s3.ph2.mc.tx,r16.w128.s4.k2
RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_MENU=$TXMENU timeout 200 ./test_gpu_layer > $W/layer-tx.txt 2>&1
echo "test_gpu_layer .tx menu exit $?"; grep -E "^test_gpu_layer|failed" $W/layer-tx.txt | tail -3
RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 timeout 150 ./test_gpu_layer > $W/layer.txt 2>&1
echo "test_gpu_layer default menu exit $?"; grep -E "^test_gpu_layer|failed" $W/layer.txt | tail -3
RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_MENU=$TXMENU RAMP_LAYER_ROUTINGS=3 RAMP_LAYER_SHAPES=2 \
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_layer > $W/memcheck-tx.txt 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY|^test_gpu_layer" $W/memcheck-tx.txt | tail -2
for ds in qwen3-30b-ep8-v2 olmoe-ep8-v2; do
  ./ramp fit ../data/timing/$ds.safetensors -o $W/plan-$ds.json > /dev/null || exit 1
done
mkdir -p $W/qwen3-30b-ep8-v2-d0 $W/olmoe-ep8-v2-d0
timeout 120 ./bench_stack --plan $W/plan-qwen3-30b-ep8-v2.json --out-dir $W/qwen3-30b-ep8-v2-d0 --tokens 16,64,256,512 \
  --layers 8 --reps 10 --select-pdl 0 --timeline 1 > $W/qwen3-30b-ep8-v2-d0/out.txt 2>&1; echo "qwen3 exit $?"
timeout 120 ./bench_stack --plan $W/plan-olmoe-ep8-v2.json --out-dir $W/olmoe-ep8-v2-d0 --tokens 16,64,256 \
  --layers 8 --reps 10 --select-pdl 0 --timeline 1 > $W/olmoe-ep8-v2-d0/out.txt 2>&1; echo "olmoe exit $?"
grep -hE "^[0-9]+ +(uniform|skewed)" $W/*-d0/out.txt
sed -n '/^python3 - \$W <<.PY.$/,/^PY$/p' ../bench/results/s46-run1/run5.sh | sed '1d;$d' > $W/summarise.py
python3 $W/summarise.py $W
