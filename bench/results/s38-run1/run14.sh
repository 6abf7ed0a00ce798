#!/usr/bin/env bash
# s38-run1 call 14: tools/gpu-check's wgmma_bench step on the final bench
# (every form old and new, each N and W: compile report, SASS check, timing),
# so the restructured kernel is checked beyond the forms calls 12-13 ran.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s38r14; rm -rf $W; mkdir -p $W
trap 'tar czf $O/s38-run1-call14.tgz -C /tmp s38r14' EXIT
tools/gpu-check env deps build wgmma_bench > $W/gpu-check.txt 2>&1; echo "gpu-check exit $?"
cp build-gpucheck-logs/wgmma_bench.csv build-gpucheck-logs/wgmma-bench.txt build-gpucheck-logs/wgmma-bench-compile.txt $W/ 2>/dev/null
tail -12 $W/gpu-check.txt
grep -cE "^(ss|rs)\." $W/wgmma-bench.txt
