#!/usr/bin/env bash
# test_gpu_moe_v2's RAMP_MOE_V2_LIST=1 (session 50): the configurations a
# run would test, on any machine, so that a device script's lists are
# checked before device time is spent on them (sessions 49-50 lost four
# checks to names the test does not build). Checks: a valid list is printed
# as the test names it, a misspelt or unbuilt name fails with what and
# where, a two-launch run lists the fused names and refuses split-K, and
# every name the test builds for a model is in `ramp configs --kernel v2`'s
# space for it. Args: path of the ramp binary, source dir.
set -u
source "$(dirname "$0")/lib_cli.sh" "$1"
T=$(dirname "$ramp")/test_gpu_moe_v2
[ -x "$T" ] || { echo "cli_moe_v2_list: no test_gpu_moe_v2 beside $ramp" >&2; exit 1; }
L() { env RAMP_MOE_V2_LIST=1 "$@" "$T"; }

expect 0 "^deepseek-v3: r8.w128.s4 r8.w256.s4.k2$" -- \
  env RAMP_MOE_V2_LIST=1 RAMP_MOE_V2_MODELS=deepseek-v3 RAMP_MOE_CONFIGS=r8.w256.s4.k2,r8.w128.s4 "$T"
expect 1 "'r8.w128.s2' is no v2 configuration of the selected models .RAMP_MOE_V2_LIST=1 lists" -- \
  env RAMP_MOE_V2_LIST=1 RAMP_MOE_V2_MODELS=deepseek-v3 RAMP_MOE_CONFIGS=r8.w128.s4,r8.w128.s2 "$T"
expect 1 "'r128.w512.s3.ph2.dk2' is no v2 configuration.*a split run takes no split-K" -- \
  env RAMP_MOE_V2_LIST=1 RAMP_MOE_V2_MODELS=deepseek-v3 RAMP_MOE_V2_SPLIT=1 RAMP_MOE_CONFIGS=r128.w512.s3.ph2.dk2 "$T"
expect 0 "^deepseek-v3: r16.w128.s4 r128.w512.s3$" -- \
  env RAMP_MOE_V2_LIST=1 RAMP_MOE_V2_MODELS=deepseek-v3 RAMP_MOE_V2_SPLIT=1 RAMP_MOE_CONFIGS=r128.w512.s3,r16.w128.s4 "$T"
expect 1 "'r8.w128.s4.k2' is no v2 configuration.*a split run takes no split-K" -- \
  env RAMP_MOE_V2_LIST=1 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_V2_SPLIT=1 RAMP_MOE_CONFIGS=r8.w128.s4.k2 "$T"
expect 1 "RAMP_MOE_V2_MODELS" -- env RAMP_MOE_V2_LIST=1 RAMP_MOE_V2_MODELS=qwen3 "$T"

# the test's variants are the configuration space's, model by model
out=$(L 2>&1) || fail "the full listing exited $?: $out"
models=0
while IFS=: read -r model names; do
  case $model in seed*|test_gpu_moe_v2*) continue ;; esac
  models=$((models + 1))
  space=$("$ramp" configs --model "$model" --layout ep8 --kernel v2 | awk '{print $1}')
  n=0
  for c in $names; do
    n=$((n + 1))
    grep -qx -- "$c" <<< "$space" || fail "$model: the test builds $c, not in ramp configs' v2 space"
  done
  [ "$n" -ge 20 ] || fail "$model: the test builds only $n configurations"
done <<< "$out"
[ "$models" -eq 5 ] || fail "the full listing names $models models, expected 5: $out"
finish cli_moe_v2_list
