#!/usr/bin/env bash
# s52-run1 call 5 (repo root, carry [".debs"]): what call 3 lost to its time
# limit, on the default build (OUT4 on): gpu-check layer_v2 (test_gpu_layer
# on kernel v2, FP8 and BF16, then memcheck and racecheck on the layer) and
# det (the deterministic layer, FP8 and BF16 menus, and its sanitizers),
# with fewer routings to fit what is left of the device budget.
# Predicted: every step passes, 0 sanitizer errors or hazards.
set -u
LAYER_V2_ROUTINGS=40 DET_PARTS="test sanitize" DET_ROUTINGS=40 \
  timeout 370 tools/gpu-check env deps build layer_v2 det
echo "gpu-check exit $?"
