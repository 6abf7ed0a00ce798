#!/usr/bin/env bash
# s47-run1 call 2 (repo root, carry [".debs"]): the head's two levers, checked
# and measured. Call 1 split the head (past the wait -> first weights
# requested, 2.3-3.6 us): the choice 0.8 us, the entry's set-up 0.5-1.0
# (its first tile's reads wait for the choice), barrier + setmaxnreg
# 0.35-0.6, the producer to its first request 0.7-1.1 (0.35-0.7 with no
# loads: the first TMA ~0.5). New (moe_poly_v2.cuh, default on):
# RAMP_POLY_V2_EARLY_FIRST, every entry's first-tile reads issued beside
# the choice's; RAMP_POLY_V2_EARLY_MAPS, the tensor maps prefetched before
# the wait. (a) correct: test_gpu_layer kernel v2 on four menus (default
# FP8+BF16; narrow two-phase; multicast; .tx with k2), then memcheck on two
# of them and racecheck on the default; (b) A/B/C in one process each:
# both off (before), maps only, both on, bench_stack on Qwen3-30B and OLMoE
# EP8 (timeline and plain) and Mixtral-8x22B and DeepSeek-V3 EP8 (plain).
# Predicted: (a) every check holds, 0 sanitizer errors; (b) set-up step
# 0.5-1.0 -> <= 0.3 us with EARLY_FIRST; producer -> request 0.7-1.1 ->
# 0.3-0.6 with EARLY_MAPS if the first TMA waited for its descriptor; the
# layer in a stack 0.4-1.2 us faster on every load, by the head's change.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s47r2; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s47-run2.tgz -C /tmp s47r2' EXIT
nvidia-smi --query-gpu=name --format=csv,noheader
tools/gpu-check env deps build > $W/build.txt 2>&1 || { tail -20 $W/build.txt; exit 1; }
L=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH=$L${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck || exit 1
export RAMP_TEST_TMP=$PWD/test-tmp; mkdir -p $RAMP_TEST_TMP
NS=r16.w128.s4.ph2.dk2,r8.w256.s3,r32.w128.s4.ph2,r64.w128.s3.ph2.dk2,r128.w256.s3.ph2,r16.w128.s4.k2
MC=r8.w256.s3,r16.w256.s4,r128.w256.s3.mc,r128.w256.s3.ph2.mc,r128.w128.s4.ph2.dk2.mc,r32.w256.s4
TX=r4.w128.s4,r128.w256.s3.tx,r16.w256.s4,r128.w128.s4.ph2.tx,r128.w256.s3.ph2.mc.tx,r16.w128.s4.k2
layer() { # tag kinds menu(empty: default) timeout [sanitizer args...]
  local tag=$1 kinds=$2 menu=$3 t=$4; shift 4
  RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=$kinds ${menu:+RAMP_LAYER_MENU=$menu} \
    RAMP_LAYER_ROUTINGS=${ROUTINGS:-30} timeout $t "$@" ./test_gpu_layer > $W/layer-$tag.txt 2>&1
  echo "test_gpu_layer $tag exit $? ($SECONDS s)"; grep -E "ERROR SUMMARY|^test_gpu_layer|failed" $W/layer-$tag.txt | tail -3
}
layer default fp8,bf16 "" 240
layer narrow2ph fp8 "$NS" 180
layer mcast fp8 "$MC" 180
layer tx fp8 "$TX" 180
ROUTINGS=2 RAMP_LAYER_SHAPES=2 layer tx-memcheck fp8 "$TX" 200 compute-sanitizer --tool memcheck --error-exitcode 3
ROUTINGS=1 RAMP_LAYER_SHAPES=1 RAMP_LAYER_ENTRIES=2,3,4 layer mcast-memcheck fp8 "$MC" 150 \
  compute-sanitizer --tool memcheck --error-exitcode 3
ROUTINGS=1 RAMP_LAYER_SHAPES=1 RAMP_LAYER_ENTRIES=0,5 layer default-racecheck fp8 "" 150 \
  compute-sanitizer --tool racecheck --error-exitcode 3
for ds in qwen3-30b-ep8-v2 olmoe-ep8-v2 mixtral-8x22b-ep8-v2 deepseek-v3-ep8-v2; do
  ./ramp fit ../data/timing/$ds.safetensors -o $W/plan-$ds.json > /dev/null || exit 1
done
V0="RAMP_POLY_V2_EARLY_MAPS=0 RAMP_POLY_V2_EARLY_FIRST=0"; V1="RAMP_POLY_V2_EARLY_FIRST=0"; V2=""
run() { # dataset tokens timeline
  for v in 0 1 2; do
    local d=$W/$1-v$v-tl$3 defs; mkdir -p $d; eval defs=\$V$v
    RAMP_JIT_DEFINES="$defs" timeout 120 ./bench_stack --plan $W/plan-$1.json --out-dir $d \
      --tokens $2 --layers 8 --reps 10 --select-pdl 0 --timeline $3 > $d/out.txt 2>&1
    echo "$1 v$v tl$3 exit $? ($SECONDS s)"
  done
}
run qwen3-30b-ep8-v2 16,64,256,512 1; run olmoe-ep8-v2 16,64,256 1
run qwen3-30b-ep8-v2 16,64,256,512 0; run olmoe-ep8-v2 16,64,256 0
run mixtral-8x22b-ep8-v2 16,64,256 0; run deepseek-v3-ep8-v2 16,64,256 0
for f in $W/*-tl0/out.txt; do echo "== $f"; grep -E "^ *[0-9]+ +(uniform|skewed)" $f; done
python3 ../bench/timeline_head.py $W | tee $W/head.txt
