# s15-run4 (after s15-run2 shows the BF16 ping-pong correct and faster): the BF16 Mixtral layer on
# its BF16 plan, plain and pipelined (rows ramp / ramp-pipe), beside torch._grouped_mm (step peer)
LAYER_KERNEL=v2 LAYER_BF16=1 LAYER_BF16_PIPE=1 LAYER_MODELS=mixtral-8x22b-ep8-v2-bf16 PEER_TIMEOUT=120 \
  tools/gpu-check env deps build bench_layer peer > /dev/null 2>&1
echo "gpu-check exit $?"
cp build-gpucheck-logs/tables.txt build-gpucheck-logs/env.log build-gpucheck-logs/*.csv $OUT/ 2>/dev/null
grep -v "^#" $OUT/layer-*.csv | awk -F, '$7 ~ /^ramp(-pipe)?$/ {print $3,$4,$5,$7,$9,$10}' | head -60
