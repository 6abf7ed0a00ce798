#!/usr/bin/env bash
# s40-run1 call 1 (for the next session with a GPU: none was lent in session
# 40): the layer as a forward pass runs it (bench/bench_stack.c, gpu-check
# step stack), with issue #5's ceilings measured in the same call.
# bench_layer's single-graph time holds the graph launch and its events
# (3-4 us with no kernel running, session 26) and the flush's aftermath: one
# replay that only reads B bytes takes 4.2 us + B at 4.62 TB/s after a read
# flush, 11.6 us + B at 4.59 after the write flush (session 40, part 1), so
# Qwen3-30B's and OLMoE's 33-75 MB loads cannot meet 1.2x as one replay.
# Predicted here, per layer in a stack of 8/16 layers (each on its own weight
# copy, cold in L2): the read alone at or under the copy floor (reads beat
# the 4.24 TB/s copy rate); the selection + read 1.1-1.3x; the layer 3-5 us
# under its one-replay read-flush time: Qwen3-30B and OLMoE still over 1.2x
# (their kernels are 1.2-2.4x their measured floor), Mixtral-8x22B's 64 tokens
# 81-83 us (1.14-1.17x, under the 85.4 us mark it misses by 0-0.3 us as one
# replay), DeepSeek-V3 a few percent under its read-flush figures.
# Then (no device): python3 bench/targets.py --stack --ceilings
#   s40r1/ceilings.csv --peer bench/results/s30-run3/fp8/peer.csv --loads
#   bench/results/s30-run3/fp8/layer-loads-<model>-v2.json s40r1/stack-*.csv
set -u
O=${OUT:-/tmp/out}; W=/tmp/s40r1; rm -rf $W; mkdir -p $W
trap 'cp -r build-gpucheck-logs/* $W/ 2>/dev/null; tar czf $O/s40-run1-call1.tgz -C /tmp s40r1' EXIT
STACK_TIMEOUT=${STACK_TIMEOUT:-150} timeout 570 tools/gpu-check env deps build ceilings stack > $W/gpu-check.txt 2>&1
echo "gpu-check exit $?"
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
tail -60 build-gpucheck-logs/tables.txt
