#!/usr/bin/env bash
# s26-run1: issue #5's targets side by side, on the code as it stands after
# session 25 (the last such run of every model was session 11's,
# bench/results/targets-2026-12-01.md). One kind per device call (the two
# together pass the 10-minute limit), each call with its own ceilings:
#   bash bench/results/s26-run1/run.sh fp8    # Qwen3-30B, OLMoE, DeepSeek-V3, Mixtral-8x22B EP8
#   bash bench/results/s26-run1/run.sh bf16   # the same, BF16 (Mixtral on its BF16 plan)
# Plans: `ramp fit` (defaults) on the shipped v2 datasets, as gpu-check's
# bench_layer step fits them; the BF16 layers of Qwen3, OLMoE and DeepSeek-V3
# are served their FP8 plan (no BF16 dataset of theirs is shipped), as in
# session 11. L2 emptied by writing before each timing, as the PyTorch peer
# does. Tables, on the CPU afterwards: bench/targets.py (README here).
set -u
kind=${1:?fp8 or bf16}
O=${OUT:-/tmp/out}; W=/tmp/s26r1-$kind; rm -rf $W; mkdir -p $W
case $kind in
  fp8)  models="qwen3-30b-ep8-v2 olmoe-ep8-v2 deepseek-v3-ep8-v2 mixtral-8x22b-ep8-v2"; bf=; impl=torch-fp8-rowwise ;;
  bf16) models="qwen3-30b-ep8-v2 olmoe-ep8-v2 deepseek-v3-ep8-v2 mixtral-8x22b-ep8-v2-bf16"; bf=1; impl=torch-bf16 ;;
  *) echo "run.sh: kind must be fp8 or bf16, not '$kind'" >&2; exit 2 ;;
esac
rm -f build-gpucheck/layer-loads*.json
LAYER_KERNEL=v2 LAYER_MODELS="$models" LAYER_BF16=$bf PEER_ARGS="--impl $impl" PEER_TIMEOUT=200 \
  tools/gpu-check env deps build ceilings bench_layer peer > $W/gpu-check.txt 2>&1
echo "gpu-check exit $?"
cp build-gpucheck-logs/* $W/
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz  # the device tool returns at most 8 files
tar czf $O/s26-run1-$kind.tgz -C /tmp s26r1-$kind
tail -12 $W/gpu-check.txt
set -- $W/layer-*.csv
python3 bench/targets.py --ceilings $W/ceilings.csv --peer $W/peer.csv \
  $(for f in $W/layer-loads-*.json; do echo --loads $f; done) "$@" | grep -E '^ceilings|^## |^- (memory|highest|slower|measured)'
