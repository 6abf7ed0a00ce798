#!/usr/bin/env bash
# The README's main job (`tools/run-main` = `ramp demo`) on the shipped H200
# datasets, CPU only: by default it evaluates Qwen3-30B EP8 on kernel v2's
# measured dataset (contiguous placement, not the balanced twin), prints the
# Table 3 row and writes the plan, CSVs and plots, with nothing left behind
# on failure; --kernel picks the other dataset (or, with none shipped, the
# stand-in over that kernel's configurations); bad input is refused.
# Args: path of the ramp binary, source dir.
set -u
source "$(dirname "$0")/lib_cli.sh" "$1"
export RAMP_DATA_DIR=$2/data

out=$tmp/demo
expect 0 "kernel v2 measured on NVIDIA H200" -- "$ramp" demo --out "$out"
expect 0 "qwen3-30b-ep8-v2.safetensors" -- "$ramp" demo --out "$out"
expect 0 "Qwen3-30B-A3B +EP8 +[0-9.]+x +[0-9.]+x" -- "$ramp" demo --out "$out"
for f in plan.json eval; do [ -e "$out/$f" ] || fail "demo wrote no $out/$f"; done
for f in batches.csv summary.csv speedup.svg predicted_vs_measured.svg; do
  [ -s "$out/eval/$f" ] || fail "demo wrote no eval/$f"
done
grep -qE '"kernel":[[:space:]]*"v2"' "$out/plan.json" || fail "demo's plan is not a v2 plan"
expect 0 "kernel v1 measured on NVIDIA H200" -- "$ramp" demo --out "$out" --kernel v1
expect 0 "qwen3-30b-ep8.safetensors" -- "$ramp" demo --out "$out" --kernel v1
# the FP8 row-major file, not the BF16 or stage-units one that sorts before it
expect 0 "using measured dataset .*/mixtral-8x22b-ep8-v2.safetensors" -- \
  "$ramp" demo --out "$out" --model mixtral-8x22b --layout EP8
expect 0 "using measured dataset .*/deepseek-v3-ep8-v2.safetensors" -- \
  "$ramp" demo --out "$out" --model deepseek-v3 --layout EP8
expect 0 "no shipped v1 dataset for DeepSeek-V3 EP32: using kernel v2's" -- \
  "$ramp" demo --out "$out" --model deepseek-v3 --layout EP32 --kernel v1
# no shipped dataset: the stand-in over the asked kernel's space (OLMoE: v2 90 + 48 wide + 10
# split-K + 6 narrow two-phase, v1 270)
expect 0 "x 154 configurations" -- "$ramp" demo --out "$out" --model olmoe --layout EP2 --steps 8
expect 0 "x 270 configurations" -- "$ramp" demo --out "$out" --model olmoe --layout EP2 --steps 8 \
  --kernel v1
expect 2 "--kernel v3: expected v1 or v2" -- "$ramp" demo --out "$out" --kernel v3
expect 1 "" -- "$ramp" demo --out "$tmp/bad" --dataset "$tmp/none.safetensors"
[ -e "$tmp/bad" ] && fail "a failed demo left $tmp/bad behind"
ls "$tmp" | grep -q '^bad\.tmp' && fail "a failed demo left its temporary folder"
finish cli_demo
