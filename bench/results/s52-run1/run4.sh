#!/usr/bin/env bash
# s52-run1 call 4 (repo root, carry [".debs"]). Call 3 (the default build,
# OUT4 on): all 43 ctest tests pass on the GPU but cli_repo_size, whose
# `sort | head` died of SIGPIPE under pipefail (exit 141; fixed), and its
# time ran out before the v2 layer steps. Here: test_gpu_layer on kernel v2
# in the default build (its new check: an out not 16-byte aligned refused
# before any launch), the Python binding with PyTorch tensors (gpu-check's
# python step: every element against PyTorch, then memcheck), and a second
# A/B pass of DeepSeek-V3 / Mixtral-8x22B EP8 stacks (stage units; call 1
# had one; here OUT4 first).
# Predicted: both checks pass; DeepSeek-V3 64 uniform's -13 us of call 1
# does not repeat (the graphs' two modes, sessions 49-50), the rest within
# ~1.5 us.
DEFINES=""
source bench/device_run.sh s52-run4
t() { ramp_check "$@"; }
t layer-v2 90 RAMP_LAYER_KERNEL=v2 RAMP_LAYER_KINDS=fp8 RAMP_LAYER_ROUTINGS=20 ./test_gpu_layer
if [ "$DRY" != 1 ]; then
  (cd .. && timeout 120 tools/gpu-check python > "$W/python.txt" 2>&1; echo "python exit $? ($SECONDS s)")
  cp ../build-gpucheck-logs/python* "$W/" 2>/dev/null
  tail -3 "$W/python.txt"
fi
ramp_fit_plans deepseek-v3-ep8-v2-units mixtral-8x22b-ep8-v2-units
su() {
  local d=$W/$1
  mkdir -p "$d"
  if [ "$DRY" = 1 ]; then
    [ -f "$W/plan-$2.json" ] && echo "$1: plan $2 ok" || echo "$1: NO PLAN"
    return 0
  fi
  RAMP_JIT_DEFINES="RAMP_MV2_OUT4=$4" timeout 120 ./bench_stack --plan "$W/plan-$2.json" \
    --out-dir "$d" --tokens "$3" --layers 8 --reps "$5" --units 1 --select-pdl 0 > "$d/out.txt" 2>&1
  echo "$1 exit $? ($SECONDS s)"
}
for o in 1 0; do
  su dsv3-o$o deepseek-v3-ep8-v2-units 16,64,256 $o 5
  su mixtral-o$o mixtral-8x22b-ep8-v2-units 64,256,1024 $o 5
done
[ "$DRY" = 1 ] && exit 0
cd ..
for m in dsv3 mixtral; do
  python3 bench/stack_ab.py scalar=$W/$m-o0 out4=$W/$m-o1 > $W/ab-$m.md 2>&1
done
cat $W/ab-*.md | cut -c1-150
