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
#   ramp_stack TAG PLAN TOKENS DEFINES TIMELINE REPS [SECONDS]
#       bench_stack (8-layer stacks, selection without PDL) on $W/plan-PLAN.json
#       at the token counts (comma list) with RAMP_JIT_DEFINES=DEFINES and
#       --timeline TIMELINE (0 or 1), REPS repetitions, into $W/TAG/ (its
#       output in out.txt); limit SECONDS (default 60)
#
# Run scripts before session 48 spell these steps out; they stay as they ran.
set -u
[ $# -eq 1 ] || { echo "device_run.sh: source it with one TAG" >&2; return 2 2>/dev/null || exit 2; }
O=${OUT:-/tmp/out}
W=/tmp/$1
rm -rf "$W" && mkdir -p "$W" || exit 1
trap "tar czf '$O/$1.tgz' -C /tmp '$1'" EXIT
nvidia-smi --query-gpu=name --format=csv,noheader
tools/gpu-check env deps build > "$W/build.txt" 2>&1 || { tail -20 "$W/build.txt"; exit 1; }
export LD_LIBRARY_PATH=$PWD/build-gpucheck-deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export RAMP_CACHE_DIR=$PWD/build-gpucheck/jit-cache RAMP_KERNEL_DIR=$PWD/kernels RAMP_DATA_DIR=$PWD/data
cd build-gpucheck || exit 1
export RAMP_TEST_TMP=$PWD/test-tmp
mkdir -p "$RAMP_TEST_TMP"
DEFINES=${DEFINES:-}

ramp_check() {
  local tag=$1 to=$2
  shift 2
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
  RAMP_JIT_DEFINES="$4" timeout "${7:-60}" ./bench_stack --plan "$W/plan-$2.json" --out-dir "$d" \
    --tokens "$3" --layers 8 --reps "$6" --select-pdl 0 --timeline "$5" > "$d/out.txt" 2>&1
  echo "$1 exit $? ($SECONDS s)"
}
