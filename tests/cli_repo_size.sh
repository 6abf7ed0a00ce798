#!/usr/bin/env bash
# tools/repo-size: the tracked files stay under 60 MiB, so that the device
# tool (64 MiB with untracked files) takes the working tree; its verdicts
# over a limit, on bad usage and outside a git checkout. Args: path of the
# ramp binary (unused), source dir.
set -u
source "$(dirname "$0")/lib_cli.sh" "$1"
rs=$2/tools/repo-size
if git -C "$2" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  expect 0 "^repo-size: tracked files [0-9.]+ MiB, within 60 MiB$" -- "$rs"
  expect 1 "over 1 MiB: the device tool refuses" -- "$rs" 1
  expect 1 "MiB  bench/results/" -- "$rs" 1
else
  echo "cli_repo_size: $2 is not a git checkout: the size check is skipped"
fi
expect 2 "limit '0': expected MiB" -- "$rs" 0
expect 2 "limit '1x': expected MiB" -- "$rs" 1x
mkdir -p "$tmp/plain/tools"
cp "$rs" "$tmp/plain/tools/"
expect 2 "is not a git checkout" -- env GIT_CEILING_DIRECTORIES="$tmp" "$tmp/plain/tools/repo-size"
finish cli_repo_size
