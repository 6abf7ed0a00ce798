#!/usr/bin/env bash
# s52-run1 call 1 (repo root, carry [".debs"]): RAMP_MV2_OUT4, narrow
# tiles' output as float4s on row-major W2 or stage units (a 4x4 lane
# transpose, no W2 permutation; kernels/moe_v2.cuh), checked and timed.
# (a) correct with the switch on: every Qwen3-30B + OLMoE EP8 configuration
# against v1 and the CPU reference (7-block grids too), stage units, BF16,
# two launches (phase 2's `part` rows), DeepSeek-V3, the layer (default,
# deterministic: st.global.v4 into the per-pair rows, stage units),
# memcheck (plain and split-K), racecheck.
# (b) A/B/A/B in 8-layer stacks, the shipped plans (fit here on the H200
# datasets, as every earlier stack): Qwen3-30B and OLMoE EP8 row-major,
# DeepSeek-V3 and Mixtral-8x22B EP8 in stage units.
# Predicted: (a) every check holds (the transpose simulated on the CPU
# first); (b) faster where the output's reductions weigh (sessions 45-46:
# d0 - d4 = 4.3-10.5 us a layer at 240-478 pairs): Qwen3 256/512 uniform
# and OLMoE 256 by 2-6 us; within the A/A spread (~0.5 us) at <= 93
# pairs; DeepSeek-V3/Mixtral small loads (narrow entries, many slices) a
# few us faster, their wide entries unchanged.
DEFINES="RAMP_MV2_OUT4=1"
source bench/device_run.sh s52-run1
t() { ramp_check "$@"; }
t moe-v2 170 RAMP_MOE_V2_MODELS=qwen3-30b,olmoe ./test_gpu_moe_v2
t moe-v2-units 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_V2_TILED=3 ./test_gpu_moe_v2
t moe-v2-bf16 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_V2_BF16=1 ./test_gpu_moe_v2
t moe-v2-split 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_V2_SPLIT=1 ./test_gpu_moe_v2
t moe-v2-dsv3 90 RAMP_MOE_V2_MODELS=deepseek-v3 \
  RAMP_MOE_CONFIGS=r8.w128.s4,r8.w512.s4,r16.w256.s4,r128.w256.s3,r8.w256.s4.k2 ./test_gpu_moe_v2
t layer-default 60 RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=20 ./test_gpu_layer
DM=r16.w128.s4.ph2.dk2,r32.w128.s4.ph2,r64.w128.s3.ph2.dk2,r128.w256.s3.ph2,r128.w128.s4.ph2.dk2.mc.tx,r128.w256.s3.ph2.tx
t layer-det 60 RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=20 RAMP_LAYER_DET=1 \
  RAMP_LAYER_MENU=$DM ./test_gpu_layer
t layer-units 60 RAMP_LAYER_KERNEL=v2 RAMP_LAYER_ROUTINGS=20 RAMP_LAYER_UNITS=1 ./test_gpu_layer
t memcheck 60 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r8.w128.s4,r16.w128.s4.k2 \
  RAMP_MOE_TOKENS=12 RAMP_MOE_V2_NO_V1=1 compute-sanitizer --tool memcheck --error-exitcode 3 ./test_gpu_moe_v2
t racecheck 90 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r8.w128.s4 RAMP_MOE_TOKENS=12 \
  RAMP_MOE_V2_NO_V1=1 compute-sanitizer --tool racecheck --error-exitcode 3 ./test_gpu_moe_v2
ramp_fit_plans qwen3-30b-ep8-v2 olmoe-ep8-v2 deepseek-v3-ep8-v2-units mixtral-8x22b-ep8-v2-units
# one stack run: tag plan tokens out4 reps units
su() {
  local d=$W/$1
  mkdir -p "$d"
  if [ "$DRY" = 1 ]; then
    [ -f "$W/plan-$2.json" ] && echo "$1: plan $2 ok" || echo "$1: NO PLAN"
    return 0
  fi
  RAMP_JIT_DEFINES="RAMP_MV2_OUT4=$4" timeout 120 ./bench_stack --plan "$W/plan-$2.json" \
    --out-dir "$d" --tokens "$3" --layers 8 --reps "$5" --units "$6" --select-pdl 0 > "$d/out.txt" 2>&1
  echo "$1 exit $? ($SECONDS s)"
}
for ab in a b; do
  for o in 0 1; do
    su qwen3-o$o-$ab qwen3-30b-ep8-v2 16,64,256,512 $o 10 0
    su olmoe-o$o-$ab olmoe-ep8-v2 16,64,256,512 $o 10 0
  done
done
for o in 0 1; do
  su dsv3-o$o deepseek-v3-ep8-v2-units 16,64,256 $o 5 1
  su mixtral-o$o mixtral-8x22b-ep8-v2-units 64,256,1024 $o 5 1
done
[ "$DRY" = 1 ] && exit 0
cd ..
for m in qwen3 olmoe; do
  python3 bench/stack_ab.py scalar=$W/$m-o0-a,$W/$m-o0-b out4=$W/$m-o1-a,$W/$m-o1-b > $W/ab-$m.md 2>&1
done
for m in dsv3 mixtral; do
  python3 bench/stack_ab.py scalar=$W/$m-o0 out4=$W/$m-o1 > $W/ab-$m.md 2>&1
done
cat $W/ab-*.md | cut -c1-150
