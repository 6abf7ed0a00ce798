#!/usr/bin/env bash
# s38-run1 call 7: bench_inflow with two more kinds, 32 KB requests 2 and 3
# in flight (64 and 96 KB a block): how many bytes in flight an SM needs to
# keep its share of HBM busy. Kernel v2's r8.w128.s2 (one block of 72 KB an
# SM, two 32 KB stages: 64 KB in flight) is 1-2% slower than v1's (three
# blocks of two ~16 KB stages an SM) on two DeepSeek-V3 loads (session 33).
set -u
O=${OUT:-/tmp/out}; W=/tmp/s38r7; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s38-run1-call7.tgz -C /tmp s38r7' EXIT
tools/gpu-check env deps build inflow > $W/gpu-check.txt 2>&1; echo "gpu-check exit $?"
cp build-gpucheck-logs/inflow.csv build-gpucheck-logs/inflow.log build-gpucheck-logs/inflow-break.txt $W/ 2>/dev/null
grep -E "^bulk32k|^into|^kind" $W/inflow.log; tail -8 $W/gpu-check.txt
