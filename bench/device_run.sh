# bench/device_run.sh - what every device call's script (bench/results/*/run*.sh)
# needs before its own steps, in one place. Sourced from the repo root on
# the device machine:
#
#   source bench/device_run.sh TAG
#
# prints the GPU's name, builds with tools/gpu-check (env, deps, build; exits
# with the log's tail on failure), exports the library path and RAMP_CACHE_DIR,
# RAMP_KERNEL_DIR, RAMP_DATA_DIR, RAMP_TEST_TMP, sets W=/tmp/TAG (the call's
# files; archived to $OUT/TAG.tgz on exit) and leaves the shell in
# build-gpucheck. Then:
#
#   ramp_check TAG SECONDS [VAR=VALUE...] COMMAND...
#       runs COMMAND with the variables (and RAMP_JIT_DEFINES="$DEFINES", the
#       script's experiment switch, empty by default) under a time limit into
#       $W/TAG.txt; prints its exit status, the seconds so far and the
#       lines that say pass or fail (sanitizer summaries, test verdicts)
#   ramp_fit_plans DATASET...
#       $W/plan-DATASET.json from data/timing/DATASET.safetensors
#   ramp_stack TAG PLAN TOKENS DEFINES TIMELINE REPS [SECONDS [UNITS]]
#       bench_stack (8-layer stacks, selection without PDL) on $W/plan-PLAN.json
#       at the token counts (comma list) with RAMP_JIT_DEFINES=DEFINES and
#       --timeline TIMELINE (0 or 1), REPS repetitions, into $W/TAG/ (its
#       output in out.txt); limit SECONDS (default 60); UNITS 1: weights in
#       stage units (--units 1; a plan fit on a -units dataset), default 0.
#       (s52-run1's scripts spell this out as `su`; since then, this.)
#
# RAMP_DEVICE_DRY=1 (session 50) checks a script here, with no GPU, before
# device time is spent on it: no build (it uses ${RAMP_DRY_BUILD:-build-rel},
# built already), ramp_check runs test_gpu_moe_v2 with RAMP_MOE_V2_LIST=1
# (the configuration lists checked, no kernel run; a sanitizer in front of
# it left out) and only names the other checks, ramp_stack checks its plan
# exists, ramp_fit_plans and the script's own CPU steps run as they will
# there. W is then /tmp/TAG-dry and nothing is archived.
#
# Run scripts before session 48 spell these steps out; they stay as they ran.
set -u
[ $# -eq 1 ] || { echo "device_run.sh: source it with one TAG" >&2; return 2 2>/dev/null || exit 2; }
O=${OUT:-/tmp/out}
DRY=${RAMP_DEVICE_DRY:-0}
if [ "$DRY" = 1 ]; then
  W=/tmp/$1-dry
  rm -rf "$W" && mkdir -p "$W" || exit 1
  export RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
  cd "${RAMP_DRY_BUILD:-build-rel}" || exit 1
  [ -x ./test_gpu_moe_v2 ] && [ -x ./ramp ] || { echo "dry run: build $PWD first" >&2; exit 1; }
  echo "dry run in $PWD, files in $W"
else
  W=/tmp/$1
  rm -rf "$W" && mkdir -p "$W" || exit 1
  trap "tar czf '$O/$1.tgz' -C /tmp '$1'" EXIT
  nvidia-smi --query-gpu=name --format=csv,noheader
  tools/gpu-check env deps build > "$W/build.txt" 2>&1 || { tail -20 "$W/build.txt"; exit 1; }
  export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
  cd build-gpucheck || exit 1
fi
export RAMP_TEST_TMP=$PWD/test-tmp
mkdir -p "$RAMP_TEST_TMP"
DEFINES=${DEFINES:-}

ramp_check() {
  local tag=$1 to=$2
  shift 2
  if [ "$DRY" = 1 ]; then
    local vars=()
    while [ $# -gt 0 ] && [[ $1 == *=* ]]; do vars+=("$1"); shift; done
    if [[ " $* " == *" ./test_gpu_moe_v2 "* ]]; then
      env "${vars[@]}" RAMP_MOE_V2_LIST=1 ./test_gpu_moe_v2 > "$W/$tag.txt" 2>&1
      echo "$tag: lists exit $?"
      grep -vE "^seed|^test_gpu_moe_v2: all" "$W/$tag.txt"
    else
      echo "$tag: not checked in a dry run: $*"
    fi
    return 0
  fi
  timeout "$to" env RAMP_JIT_DEFINES="$DEFINES" "$@" > "$W/$tag.txt" 2>&1
  echo "$tag exit $? ($SECONDS s)"
  grep -E "ERROR SUMMARY|^test_gpu|failed|differ" "$W/$tag.txt" | tail -3
}

ramp_fit_plans() {
  local ds
  for ds in "$@"; do
    ./ramp fit "../data/timing/$ds.safetensors" -o "$W/plan-$ds.json" > /dev/null || exit 1
  done
}

ramp_stack() {
  local d=$W/$1
  mkdir -p "$d"
  if [ "$DRY" = 1 ]; then
    [ -f "$W/plan-$2.json" ] && echo "$1: plan $2 ok" || echo "$1: NO PLAN $W/plan-$2.json"
    return 0
  fi
  RAMP_JIT_DEFINES="$4" timeout "${7:-60}" ./bench_stack --plan "$W/plan-$2.json" --out-dir "$d" \
    --tokens "$3" --layers 8 --reps "$6" --units "${8:-0}" --select-pdl 0 --timeline "$5" \
    > "$d/out.txt" 2>&1
  echo "$1 exit $? ($SECONDS s)"
}
