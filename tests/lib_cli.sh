# lib_cli.sh - what the CLI test scripts (tests/cli_*.sh) share; sourced,
# not run, and outside CMake's cli_*.sh test glob. Sets ramp=$1 and a scratch folder $tmp removed at exit;
# fail counts failures; expect checks an exit code and an output pattern.
ramp=$1
tmp=${RAMP_TEST_TMP:-/tmp}/$(basename "$0" .sh).$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# expect CODE PATTERN -- command...: exit code and a pattern in stdout+stderr.
expect() {
  local code=$1 pattern=$2; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  [ "$rc" = "$code" ] || fail "'$*' exited $rc, expected $code; output: $out"
  echo "$out" | grep -qE -- "$pattern" || fail "'$*' output lacks /$pattern/: $out"
}

# finish NAME: the script's verdict.
finish() {
  if [ "$fails" -ne 0 ]; then echo "$1: $fails failure(s)" >&2; exit 1; fi
  echo "$1: all checks passed"
}
