#!/usr/bin/env bash
# s44-run1 call 2 (repo root, carry [".debs"]): the Python binding's GPU test
# after session 44's binding changes (a layer keeps its weights, defers its
# Gpu's release, checks scale shapes and tokens_dev rows, uses its device's
# current stream, per-thread io), then under memcheck.
# Predicted: as in session 43 (s43-run1 call 1): 16/16 in each of the default
# stream, a side stream and a captured graph with tokens_dev, refusals 4/4,
# worst error / tolerance ~0.3, memcheck 0 errors.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s44r1; rm -rf $W; mkdir -p $W/py
trap 'tar czf $O/s44-run1.tgz -C /tmp s44r1' EXIT
PY_ITERS=16 SAN_TIMEOUT=150 timeout 280 tools/gpu-check env deps build python > $W/py/gpu-check.txt 2>&1
echo "gpu-check python exit $?"
cp -r build-gpucheck-logs/* $W/py/ 2>/dev/null
grep -A8 "python binding form" build-gpucheck-logs/tables.txt; grep -E "^worst|memcheck" build-gpucheck-logs/tables.txt
