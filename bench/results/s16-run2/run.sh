# s16-run2: the BF16 wide tiles with one stage's wgmmas in flight (ping-pong, session 15), without
# multicast (s16-run1: multicast is slower): correctness on Mixtral (fused, two-phase) and the
# four other models; the kernel alone, plain beside .x1 (Mixtral 512 / 1,024); then, if both
# pass, the BF16 Mixtral layer plain and pipelined (rows ramp / ramp-pipe) beside torch._grouped_mm.
MC_PARTS="test bench" MC_MCAST=0 MC_MODES="mx-bf16pipe mx-bf16pipesplit bf16pipe" V2_TIMEOUT=120 \
  MC_BENCH_KINDS=1 V2_BENCH_TIMEOUT=150 MC_LOADS=m512,m1024 \
  MC_VARIANTS=m:r128.w256.s3.u1.k2,m:r128.w256.s3.u1.k2.x1,m:r128.w128.s4.u1.k2,m:r128.w128.s4.u1.k2.x1,m:r128.w256.s3,m:r128.w256.s3.x1 \
  tools/gpu-check env deps build mcast > /dev/null 2>&1
r=$?
echo "gpu-check mcast exit $r"
mkdir -p $OUT/kernel && cp build-gpucheck-logs/tables.txt build-gpucheck-logs/env.log build-gpucheck-logs/mcast-test-*.txt \
  build-gpucheck-logs/mcast-bench-*.txt build-gpucheck-logs/*mcast*.md $OUT/kernel/ 2>/dev/null
grep -E "exit|passed|failed|^[qmd]:r|total" $OUT/kernel/tables.txt | head -40
if [ $r = 0 ]; then
  LAYER_KERNEL=v2 LAYER_BF16=1 LAYER_BF16_PIPE=1 LAYER_MODELS=mixtral-8x22b-ep8-v2-bf16 PEER_TIMEOUT=120 \
    tools/gpu-check bench_layer peer > /dev/null 2>&1
  echo "gpu-check layer exit $?"
  cp build-gpucheck-logs/tables.txt build-gpucheck-logs/*.csv build-gpucheck-logs/bench_layer.log $OUT/ 2>/dev/null
  grep -v "^#" $OUT/layer-*.csv 2>/dev/null | awk -F, '$7 ~ /^ramp(-pipe)?$/ {print $3,$4,$5,$7,$9,$10}' | head -40
fi
