#!/usr/bin/env bash
# s51-run1 call 1 (repo root, carry [".debs"]): the shipped H200 timing
# datasets' loads re-timed on the GPU this call gets (the device lends H100s
# far more often than H200s), to see whether the best configuration of a
# load, and the plan fit on the timings, depend on the GPU as well as on
# the routing. Qwen3-30B EP8 and OLMoE EP8 (all configurations), then
# DeepSeek-V3 EP8 until the deadline (its partial comes back; a later call
# resumes it from bench/results/s51-run1/partial/). The loads are rebuilt
# here from the same trace recipe as tools/gpu-check's datasets step (checked
# on the CPU: equal to the shipped files' loads, element for element).
# Predicted: Qwen3 ~95 s, OLMoE ~190 s (H200 figures; an H100 has 2/3 of
# the bandwidth, so memory-bound cells take ~1.3-1.5x but the 0.8 ms a cell
# of flushes dominates); the best configuration per load the same as the
# H200's on most loads, differing where two were within a few per cent.
DEADLINE=${DEADLINE:-530}
source bench/device_run.sh s51-run1
gpu=$([ "$DRY" = 1 ] || nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$gpu" in *H100*) tag=h100 ;; *H200*) tag=h200 ;; *) tag=gpu ;; esac
T=$W/traces
for model in qwen3-30b olmoe deepseek-v3; do
  mkdir -p "$T/$model"
  for dom in chat math code knowledge; do
    ./ramp trace gen --model $model --domain $dom --rate 12 --steps 192 --layers 1 --seed 7 \
      -o "$T/$model/$dom.safetensors" > /dev/null 2>&1 &&
    ./ramp trace gen --model $model --domain $dom --rate 48 --steps 192 --layers 1 --seed 8 \
      --append -o "$T/$model/$dom.safetensors" > /dev/null 2>&1 || exit 1
  done
  ./ramp trace gen --model $model --vllm-sizes 1 --seed 7 -o "$T/$model/uniform.safetensors" > /dev/null 2>&1 || exit 1
done
for spec in qwen3-30b:18 olmoe:30 deepseek-v3:8; do
  IFS=: read -r model nb <<< "$spec"
  ./ramp dataset build --model $model --layout EP8 --max-batches $nb --kernel v2 \
    -o "$T/$model-loads.safetensors" "$T/$model"/{chat,math,code,knowledge,uniform}.safetensors > /dev/null || exit 1
  python3 - "$T/$model-loads.safetensors" "../data/timing/$model-ep8-v2.safetensors" <<'PY' || exit 1
import importlib.util, sys, numpy as np
s = importlib.util.spec_from_file_location("v", "../bench/v1_vs_v2.py"); v = importlib.util.module_from_spec(s)
s.loader.exec_module(v)
a, b = v.read_safetensors(sys.argv[1])[1]["loads"], v.read_safetensors(sys.argv[2])[1]["loads"]
print(sys.argv[1].split("/")[-1], "loads equal to the shipped file's:", a.shape == b.shape and bool((a == b).all()))
sys.exit(0 if a.shape == b.shape and (a == b).all() else 1)
PY
done
[ "$DRY" = 1 ] && { echo "dry run: loads built and compared; the benches are not run"; exit 0; }
for model in qwen3-30b olmoe deepseek-v3; do
  out=$W/$model-ep8-v2-$tag.safetensors
  part=../bench/results/s51-run1/partial/$model-ep8-v2-$tag.safetensors
  [ -f "$part" ] && cp "$part" "$out" && echo "$model: resuming from $part"
  left=$(( DEADLINE - SECONDS ))
  [ $left -lt 30 ] && { echo "$model: not started ($SECONDS s)"; continue; }
  RAMP_PROGRESS=0 timeout $((left + 30)) ./ramp bench "$T/$model-loads.safetensors" -o "$out" --backend gpu \
    --kernel v2 --max-seconds $left --checkpoint 30 > "$W/bench-$model.txt" 2>&1
  r=$?
  [ $r -eq 0 ] && ./ramp dataset seal "$out" -o "$out.sealed" && mv "$out.sealed" "$out"
  echo "$model: bench exit $r ($SECONDS s); $(./ramp dataset info "$out" 2>&1 | grep -oE '[0-9]+ of [0-9]+ times filled')"
done
