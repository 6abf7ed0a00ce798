#!/usr/bin/env bash
# s41-run1: the Python binding (python/ramp.py) on the H200 with PyTorch.
# Device call (repo root, carry [".debs"]):  bash bench/results/s41-run1/run.sh
# One call, ~3-5 minutes: build, ctest's python_binding (the CPU test, on the
# GPU machine's Python), gpu-check step `python` (tests/python/gpu_layer_torch.py:
# the layer from Python on the default stream, a side stream and a captured
# torch.cuda.graph with tokens_dev, every element against a PyTorch float64
# reference; then once under compute-sanitizer memcheck).
# Predicted: every form passes (8/8, 8/8, 8/8, refusals 4/4), memcheck 0
# errors. The risks, each a test that fails: PyTorch's default stream passed
# as CU_STREAM_LEGACY with programmatic dependent launch; the primary
# context shared with PyTorch; graph capture through ctypes.
set -u
O=${OUT:-/tmp/out}; W=/tmp/s41r1; rm -rf $W; mkdir -p $W
trap 'cp -r build-gpucheck-logs/* $W/ 2>/dev/null; tar czf $O/s41-run1.tgz -C /tmp s41r1' EXIT
python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)' > $W/torch.txt 2>&1
timeout 300 tools/gpu-check env deps build > $W/build.txt 2>&1
echo "build exit $?"
(cd build-gpucheck && LD_LIBRARY_PATH=$PWD/../build-gpucheck-deps/usr/lib/x86_64-linux-gnu \
  ctest --output-on-failure -R '^python_binding$') > $W/ctest-python.txt 2>&1
echo "ctest python_binding exit $?"; tail -n 3 $W/ctest-python.txt
PY_ITERS=8 SAN_TIMEOUT=200 timeout 280 tools/gpu-check python > $W/gpu-check.txt 2>&1
echo "gpu-check python exit $?"
rm -f $O/*.csv $O/summary.txt $O/gpu-check-logs.tgz
tail -20 build-gpucheck-logs/tables.txt
