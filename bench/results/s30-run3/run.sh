#!/usr/bin/env bash
# s30-run3: issue #5's FP8 targets with the layer also on weights in stage
# units (ramp_layer_desc.weight_units = 1, multicast entries included since
# s30-run1): s26-run1's fp8 measurement (gpu-check ceilings, bench_layer on
# the four EP8 models, PyTorch's two-GEMM MoE on the same loads) with
# LAYER_UNITS=1, so each load has the shipped layer (impl ramp) and the
# units layer (ramp-units, default launch; ramp-units-pdl2) side by side in
# one call. Tables: bench/targets.py, once per impl (--layer-impl).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s30r3; rm -rf $W; mkdir -p $W
rm -f build-gpucheck/layer-loads*.json
LAYER_KERNEL=v2 LAYER_UNITS=1 PEER_ARGS="--impl torch-fp8-rowwise" PEER_TIMEOUT=200 \
  LAYER_MODELS="qwen3-30b-ep8-v2 olmoe-ep8-v2 deepseek-v3-ep8-v2 mixtral-8x22b-ep8-v2" \
  timeout 480 tools/gpu-check env deps build ceilings bench_layer peer > $W/gpu-check.txt 2>&1
echo "gpu-check exit $?"
cp build-gpucheck-logs/* $W/
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
tar czf $O/s30-run3.tgz -C /tmp s30r3
tail -8 $W/gpu-check.txt
set -- $W/layer-*.csv
for impl in ramp ramp-units; do
  echo "### $impl"
  python3 bench/targets.py --layer-impl $impl --ceilings $W/ceilings.csv --peer $W/peer.csv \
    $(for f in $W/layer-loads-*.json; do echo --loads $f; done) "$@" | grep -E '^ceilings|^## |^- (memory|highest|slower|measured)'
done
