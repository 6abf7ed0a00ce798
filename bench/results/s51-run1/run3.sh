#!/usr/bin/env bash
# s51-run1 call 5 (repo root, carry [".debs"]): call 4's plan A/B again
# where it was thin or confounded. (1) DeepSeek-V3: call 4 ran one pass
# each, and its 64-token skewed load has two modes ~40 us apart between
# graphs (session 50), so -11.6 us may be a mode: two more passes each,
# alternating. (2) OLMoE-1B-7B at 64 tokens ran the same entry
# (r8.w128.s4) 2.8-3.0 us slower in the H100 plan's kernel than in the
# H200 plan's: the menu interaction (the H100 menu holds two two-phase
# entries, one wide w256); with size classes for several local experts
# (--many-classes 1: a small batch's kernel holds only the entries it can
# choose) both plans should run it equally fast. Qwen3-30B the same way.
# Predicted: DeepSeek-V3 differences within the passes' spread except
# where the picks differ by >3% in the dataset; with --many-classes 1 the
# OLMoE 64-token gap under 1 us.
DEADLINE=${DEADLINE:-300}
source bench/device_run.sh s51-run3
ramp_fit_plans qwen3-30b-ep8-v2 qwen3-30b-ep8-v2-h100 olmoe-ep8-v2 olmoe-ep8-v2-h100 \
  deepseek-v3-ep8-v2 deepseek-v3-ep8-v2-h100
st() { # tag plan tokens reps [extra bench_stack options]
  [ "$DRY" != 1 ] && [ $SECONDS -gt $DEADLINE ] && { echo "$1: skipped ($SECONDS s)"; return; }
  if [ $# -gt 4 ] && [ "$DRY" != 1 ]; then
    local d=$W/$1; mkdir -p "$d"
    timeout 120 ./bench_stack --plan "$W/plan-$2.json" --out-dir "$d" --tokens "$3" --layers 8 \
      --reps "$4" --select-pdl 0 "${@:5}" > "$d/out.txt" 2>&1
    echo "$1 exit $? ($SECONDS s)"
  else
    ramp_stack "$1" "$2" "$3" "" 0 "$4" 120
  fi
}
for ab in b c; do
  st dsv3-h200-$ab deepseek-v3-ep8-v2 16,64,256 5
  st dsv3-h100-$ab deepseek-v3-ep8-v2-h100 16,64,256 5
done
for ab in a b; do
  st olmoe-mc-h200-$ab olmoe-ep8-v2 16,64 10 --many-classes 1
  st olmoe-mc-h100-$ab olmoe-ep8-v2-h100 16,64 10 --many-classes 1
  st qwen3-mc-h200-$ab qwen3-30b-ep8-v2 16,64 10 --many-classes 1
  st qwen3-mc-h100-$ab qwen3-30b-ep8-v2-h100 16,64 10 --many-classes 1
done
[ "$DRY" = 1 ] && exit 0
for m in dsv3 olmoe-mc qwen3-mc; do
  python3 ../bench/stack_ab.py h200=$(ls -d $W/$m-h200-* | paste -sd,) h100=$(ls -d $W/$m-h100-* | paste -sd,) \
    > $W/ab-$m.md 2>&1; cat $W/ab-$m.md
done
