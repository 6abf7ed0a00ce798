#!/usr/bin/env bash
# s52-run1 call 3 (repo root, carry [".debs"]): the default build after
# RAMP_MV2_OUT4 became the default and kernel v2 began to require a 16-byte
# aligned out (ramp_layer_run refuses one before any launch): every GPU test
# through ctest, the v2 layer and its sanitizers, the deterministic layer,
# the Python binding with PyTorch tensors (every element against PyTorch,
# then memcheck). Calls 1-2 ran the same kernel code under the switch.
# Predicted: every step passes.
set -u
timeout 560 tools/gpu-check env deps build ctest layer_v2 det python
echo "gpu-check exit $?"
