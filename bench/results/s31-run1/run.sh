#!/usr/bin/env bash
# s31-run1: (a) gpu-check `units` on the H200 in full for the first time
# (session 30 wrote test_gpu_layer RAMP_LAYER_UNITS=1 but ran out of device
# time): kernel smoke on stage units (FP8, BF16, Mixtral multicast) and
# test_gpu_layer with the weights in units, every entry forced and graph
# replays, on the default menu and TX_LAYER_MENU, FP8 and BF16.
# (b) issue #5's BF16 targets with the units layer beside the shipped one
# (s26-run1 bf16's measurement with LAYER_UNITS=1: ceilings, bench_layer on
# the four EP8 models, PyTorch's two-GEMM torch._grouped_mm MoE).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s31r1; rm -rf $W; mkdir -p $W/units $W/bf16
UNITS_SMOKE_ONLY="fp8 bf16 mx-mcast" UNITS_ROUTINGS=8 LAYER_V2_TIMEOUT=100 UNITS_LAYER="" \
  timeout 230 tools/gpu-check env deps build units > $W/units/gpu-check.txt 2>&1
echo "units exit $?"
cp build-gpucheck-logs/* $W/units/
tar czf $O/s31-run1.tgz -C /tmp s31r1
tail -8 $W/units/gpu-check.txt
rm -f build-gpucheck/layer-loads*.json
LAYER_KERNEL=v2 LAYER_UNITS=1 LAYER_BF16=1 PEER_ARGS="--impl torch-bf16" PEER_TIMEOUT=150 \
  LAYER_MODELS="qwen3-30b-ep8-v2 olmoe-ep8-v2 deepseek-v3-ep8-v2 mixtral-8x22b-ep8-v2-bf16" \
  timeout 320 tools/gpu-check ceilings bench_layer peer > $W/bf16/gpu-check.txt 2>&1
echo "bf16 targets exit $?"
cp build-gpucheck-logs/* $W/bf16/
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
tar czf $O/s31-run1.tgz -C /tmp s31r1
tail -8 $W/bf16/gpu-check.txt
set -- $W/bf16/layer-*.csv
for impl in ramp ramp-units; do
  echo "### $impl"
  python3 bench/targets.py --layer-impl $impl --ceilings $W/bf16/ceilings.csv --peer $W/bf16/peer.csv \
    $(for f in $W/bf16/layer-loads-*.json; do echo --loads $f; done) "$@" | grep -E '^ceilings|^## |^- (memory|highest|slower|measured|faster)'
done
