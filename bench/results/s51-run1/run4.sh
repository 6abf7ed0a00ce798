#!/usr/bin/env bash
# s51-run1 call 6 (repo root, carry [".debs"]): test_gpu_layer after this
# session's change to the layer's warning (ramp_plan_gpu_mismatch: another
# GPU's name warns, as another SM count did): its refusals test now sets the
# plan's device to this GPU's name for the no-warning case and checks that
# another name warns, naming both. Predicted: all pass.
source bench/device_run.sh s51-run4
ramp_check layer 120 RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=4 ./test_gpu_layer
grep -E "FAIL|warning" $W/layer.txt | head -5
