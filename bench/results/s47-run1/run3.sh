#!/usr/bin/env bash
# s47-run1 call 3 (repo root, carry [".debs"]). Call 2's correctness part
# did not run (its env prefix was not an assignment); its A/B showed neither
# head lever moving the first request or the layer, so both are now off by
# default. (a) correct: test_gpu_layer kernel v2 with both levers on
# (RAMP_JIT_DEFINES) on three menus (default FP8: narrow and k2; multicast;
# .tx with two-phase and k2) and memcheck on the .tx menu; the default
# build (levers off) on the default menu. (b) where the late blocks run:
# call 2's timeline had the MoE kernel's blocks end in two groups (Qwen3 64
# uniform: a quarter at ~32.5 us, the rest at 35.3-36.8) in contiguous
# ranges of block index that differ from run to run; the stamps now record
# each block's SM (%smid). Three processes of the same Qwen3 stacks, one of
# OLMoE.
# Predicted: (a) every check holds, memcheck 0 errors. (b) if the split is
# spatial (a GPC's share of the bandwidth, its SMs crowded with streaming
# blocks), the early group's SMs are the same set in every process and
# form contiguous runs of %smid; if not, they differ.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s47r3; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s47-run3.tgz -C /tmp s47r3' EXIT
nvidia-smi --query-gpu=name --format=csv,noheader
tools/gpu-check env deps build > $W/build.txt 2>&1 || { tail -20 $W/build.txt; exit 1; }
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck || exit 1
export RAMP_TEST_TMP=$PWD/test-tmp; mkdir -p $RAMP_TEST_TMP
MC=r8.w256.s3,r16.w256.s4,r128.w256.s3.mc,r128.w256.s3.ph2.mc,r128.w128.s4.ph2.dk2.mc,r32.w256.s4
TX=r4.w128.s4,r128.w256.s3.tx,r16.w256.s4,r128.w128.s4.ph2.tx,r128.w256.s3.ph2.mc.tx,r16.w128.s4.k2
ON="RAMP_POLY_V2_EARLY_MAPS=1 RAMP_POLY_V2_EARLY_FIRST=1"
layer() { # tag defines menu(- : default) timeout [sanitizer args...]
  local tag=$1 defs=$2 menu=$3 t=$4; shift 4
  local m=(); [ "$menu" != - ] && m=(RAMP_LAYER_MENU=$menu)
  env RAMP_JIT_DEFINES="$defs" RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 "${m[@]}" \
    RAMP_LAYER_ROUTINGS=${ROUTINGS:-20} ${SHAPES:+RAMP_LAYER_SHAPES=$SHAPES} \
    timeout $t "$@" ./test_gpu_layer > $W/layer-$tag.txt 2>&1
  echo "test_gpu_layer $tag exit $? ($SECONDS s)"
  grep -E "ERROR SUMMARY|^test_gpu_layer|failed" $W/layer-$tag.txt | tail -3
}
layer on-default "$ON" - 150
layer on-mcast "$ON" "$MC" 150
layer on-tx "$ON" "$TX" 150
layer off-default "" - 150
ROUTINGS=2 SHAPES=2 layer on-tx-memcheck "$ON" "$TX" 200 compute-sanitizer --tool memcheck --error-exitcode 3
for ds in qwen3-30b-ep8-v2 olmoe-ep8-v2; do
  ./ramp fit ../data/timing/$ds.safetensors -o $W/plan-$ds.json > /dev/null || exit 1
done
run() { # tag dataset tokens
  local d=$W/$1; mkdir -p $d
  timeout 120 ./bench_stack --plan $W/plan-$2.json --out-dir $d --tokens $3 --layers 8 --reps 10 \
    --select-pdl 0 --timeline 1 > $d/out.txt 2>&1
  echo "$1 exit $? ($SECONDS s)"
}
run qwen3-a qwen3-30b-ep8-v2 16,64,256,512; run qwen3-b qwen3-30b-ep8-v2 64,256
run qwen3-c qwen3-30b-ep8-v2 64,256; run olmoe-a olmoe-ep8-v2 16,64,256
grep -hE "^ *[0-9]+ +(uniform|skewed)" $W/*/out.txt
python3 ../bench/timeline_head.py $W > $W/head.txt
