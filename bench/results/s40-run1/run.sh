#!/usr/bin/env bash
# s40-run1 call 1: the layer as a forward pass runs it (bench/bench_stack.c,
# gpu-check step stack). bench_layer's single-graph time holds the graph
# launch and its events (3-4 us with no kernel running, session 26) and the
# flush's aftermath; issue #5's memory-bound target compares it with a copy
# floor of 8-20 us on Qwen3-30B and OLMoE. Predicted: in a stack of 8/16
# layers (each on its own weight copy, cold in L2) the layer 3-5 us under
# its one-graph read-flush time; a pure bulk read 1.0-1.1x the copy floor
# (reads run above the copy rate); the selection + read 1.1-1.3x; Qwen3 and
# OLMoE still above 1.2x (the kernel is 1.2-2.4x its measured floor there),
# DeepSeek-V3 and Mixtral 64 tokens a few percent lower than with the flush.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s40r1; rm -rf $W; mkdir -p $W
trap 'cp -r build-gpucheck-logs/* $W/ 2>/dev/null; tar czf $O/s40-run1-call1.tgz -C /tmp s40r1' EXIT
STACK_TIMEOUT=${STACK_TIMEOUT:-200} timeout 570 tools/gpu-check env deps build stack > $W/gpu-check.txt 2>&1
echo "gpu-check exit $?"
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
tail -60 build-gpucheck-logs/tables.txt
