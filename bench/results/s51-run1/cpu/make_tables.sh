#!/usr/bin/env bash
# Remakes s51-run1's CPU tables from the shipped files (repo root, a build in
# build-rel for libramp.so and ramp): cross-gpu.md, cpu/uniform-only.md, the
# plots. bash bench/results/s51-run1/cpu/make_tables.sh
set -euo pipefail
R=bench/results/s51-run1 P=bench/results/s51-run1/call4 RUN2=bench/results/s51-run1/call2/qwen3-30b-ep8-v2-h100-run2.safetensors
export RAMP_LIBRARY=${RAMP_LIBRARY:-$PWD/build-rel/libramp.so}
cg() { python3 bench/cross_gpu.py "$@"; }
ds() { echo "data/timing/$1-ep8-v2${2:-}.safetensors"; }
{
  echo "# H200 and H100 timings of the same loads, by bench/cross_gpu.py (session 51)"
  echo
  echo "Made by \`bash $R/cpu/make_tables.sh\` (plans as call 4 fit them on the device, \`ramp fit\` defaults)."
  echo
  for m in qwen3-30b olmoe deepseek-v3; do
    cg "$(ds $m)" "$(ds $m -h100)" --plans $P/plan-$m-ep8-v2.json $P/plan-$m-ep8-v2-h100.json \
      --label-a H200 --label-b H100
  done
  echo "## Qwen3-30B EP8 plans scored on the second H100 run (neither plan was fit on it)"
  echo
  cg "$(ds qwen3-30b)" "$(ds qwen3-30b -h100)" --plans $P/plan-qwen3-30b-ep8-v2.json \
    $P/plan-qwen3-30b-ep8-v2-h100.json --label-a H200 --label-b H100 --score $RUN2 | sed -n '/### Plans/,$p'
  echo "## The noise control: two H100 runs of Qwen3-30B EP8 (calls 1 and 2, one machine)"
  echo
  cg $RUN2 "$(ds qwen3-30b -h100)" --label-a "H100 run 2" --label-b "H100 run 1" | sed 1,4d
} > $R/cross-gpu.md
{
  echo "# H100 plans fit on the uniform loads only (session 51, CPU)"
  echo
  echo "What an offline tuning sweep on a new GPU would time (uniformly random routing, vLLM's 18"
  echo "batch sizes: 144 of 720 loads, 64 of 320 for DeepSeek-V3), against the plan fit on every"
  echo "H100 load. Made by \`bash $R/cpu/make_tables.sh\`; the plans by"
  echo
  echo "    ramp fit data/timing/MODEL-ep8-v2-h100.safetensors -o $R/cpu/plan-MODEL-ep8-v2-h100-uniform.json \\"
  echo "        --exclude-domain chat --exclude-domain math --exclude-domain code --exclude-domain knowledge"
  echo
  for m in qwen3-30b olmoe deepseek-v3; do
    cg "$(ds $m)" "$(ds $m -h100)" --plans $R/cpu/plan-$m-ep8-v2-h100-uniform.json \
      $P/plan-$m-ep8-v2-h100.json --label-a H100-uniform --label-b H100 |
      sed -n '/### Plans/,$p' | sed "s/^### Plans/### $m: plans/"
  done
  echo "### qwen3-30b, scored on the second H100 run"
  echo
  cg "$(ds qwen3-30b)" "$(ds qwen3-30b -h100)" --plans $R/cpu/plan-qwen3-30b-ep8-v2-h100-uniform.json \
    $P/plan-qwen3-30b-ep8-v2-h100.json --label-a H100-uniform --label-b H100 --score $RUN2 |
    sed -n '/^| pairs | loads | H100-uniform/,$p'
} > $R/cpu/uniform-only.md
cg "$(ds qwen3-30b)" "$(ds qwen3-30b -h100)" --label-a H200 --label-b H100 \
  --svg $R/plots/qwen3-30b-ep8.svg --control $RUN2 > /dev/null
for m in olmoe deepseek-v3; do
  cg "$(ds $m)" "$(ds $m -h100)" --label-a H200 --label-b H100 --svg $R/plots/$m-ep8.svg > /dev/null
done
echo "wrote $R/cross-gpu.md, $R/cpu/uniform-only.md, $R/plots/*.svg"
