#!/usr/bin/env bash
# s47-run1 call 5 (repo root, carry [".debs"]): the up passes' K order
# rotated by tile group (RAMP_MV2_KROT=1, new, off by default). Call 4: the
# weights' stream alone (d2) leaves the latest block 0.6-2.6 us after the
# mean (Qwen3-30B/OLMoE EP8, 64-256 tokens uniform), every block having
# asked and landed together; the blocks stream their W13 boxes (128 rows
# of one 128-byte column block, rows `hidden` bytes apart) in the same K
# order, so at any moment all ask for the same column bits; the read floor
# (64 KB contiguous pieces, interleaved over blocks) and stage units (one
# contiguous 32 KB copy a stage; session 46: 0-1.9 us faster) do not.
# (a) correct with KROT=1: test_gpu_moe_v2 (Qwen3-30B and OLMoE, every
# configuration, against the CPU reference and v1), its split-K, .gg and
# multicast variants on Qwen3; test_gpu_layer (default and .tx menus);
# memcheck on two narrow configurations. (b) A/B/A/B in stacks (KROT 0 and
# 1), Qwen3/OLMoE (with a timeline each), Mixtral-8x22B and DeepSeek-V3.
# Predicted: (a) every check holds; (b) if the column bits are what makes
# the stream uneven, the late spread falls toward 0.5 us and the layer
# gains about the spread's fall (0.5-2 us) at Qwen3/OLMoE 64-256 uniform;
# if not, within +-0.5 us everywhere.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s47r5; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s47-run5.tgz -C /tmp s47r5' EXIT
nvidia-smi --query-gpu=name --format=csv,noheader
tools/gpu-check env deps build > $W/build.txt 2>&1 || { tail -20 $W/build.txt; exit 1; }
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck || exit 1
export RAMP_TEST_TMP=$PWD/test-tmp; mkdir -p $RAMP_TEST_TMP
K1="RAMP_MV2_KROT=1"
t() { # tag timeout env... -- command...
  local tag=$1 to=$2; shift 2
  timeout $to env RAMP_JIT_DEFINES="$K1" "$@" > $W/$tag.txt 2>&1
  echo "$tag exit $? ($SECONDS s)"; grep -E "ERROR SUMMARY|^test_gpu|failed|differ" $W/$tag.txt | tail -3
}
t moe-v2 170 RAMP_MOE_V2_MODELS=qwen3-30b,olmoe ./test_gpu_moe_v2
t moe-v2-k2gg 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_V2_GGATHER=2 ./test_gpu_moe_v2
t moe-v2-mc 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_V2_MCAST=1 ./test_gpu_moe_v2
TX=r4.w128.s4,r128.w256.s3.tx,r16.w256.s4,r128.w128.s4.ph2.tx,r128.w256.s3.ph2.mc.tx,r16.w128.s4.k2
t layer-default 60 RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=20 ./test_gpu_layer
t layer-tx 60 RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=20 RAMP_LAYER_MENU=$TX ./test_gpu_layer
t memcheck 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r8.w128.s4,r16.w128.s4.k2 RAMP_MOE_TOKENS=12 \
  RAMP_MOE_V2_NO_V1=1 compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_moe_v2
for ds in qwen3-30b-ep8-v2 olmoe-ep8-v2 mixtral-8x22b-ep8-v2 deepseek-v3-ep8-v2; do
  ./ramp fit ../data/timing/$ds.safetensors -o $W/plan-$ds.json > /dev/null || exit 1
done
run() { # tag dataset tokens krot timeline
  local d=$W/$1; mkdir -p $d
  RAMP_JIT_DEFINES="RAMP_MV2_KROT=$4" timeout 60 ./bench_stack --plan $W/plan-$2.json --out-dir $d \
    --tokens $3 --layers 8 --reps 10 --select-pdl 0 --timeline $5 > $d/out.txt 2>&1
  echo "$1 exit $? ($SECONDS s)"
}
for ab in a b; do
  run qwen3-k0-$ab qwen3-30b-ep8-v2 16,64,256,512 0 0; run qwen3-k1-$ab qwen3-30b-ep8-v2 16,64,256,512 1 0
  run olmoe-k0-$ab olmoe-ep8-v2 16,64,256 0 0; run olmoe-k1-$ab olmoe-ep8-v2 16,64,256 1 0
done
run qwen3-k0-tl qwen3-30b-ep8-v2 64,256 0 1; run qwen3-k1-tl qwen3-30b-ep8-v2 64,256 1 1
run olmoe-k0-tl olmoe-ep8-v2 64,256 0 1; run olmoe-k1-tl olmoe-ep8-v2 64,256 1 1
run mixtral-k0 mixtral-8x22b-ep8-v2 16,64,256 0 0; run mixtral-k1 mixtral-8x22b-ep8-v2 16,64,256 1 0
run dsv3-k0 deepseek-v3-ep8-v2 16,64,256 0 0; run dsv3-k1 deepseek-v3-ep8-v2 16,64,256 1 0
for f in $W/*-k[01]*/out.txt; do echo "== $f"; grep -E "^ *[0-9]+ +(uniform|skewed)" $f; done
python3 ../bench/timeline_head.py $W > $W/head.txt
grep -E " stack .* uniform" $W/head.txt | cut -c1-29,36-70,168-
