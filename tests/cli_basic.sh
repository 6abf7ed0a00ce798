#!/usr/bin/env bash
# CLI behaviour users rely on: --help everywhere, clear errors with exit codes
# (2 usage, 1 library error) that name the bad input, and no partial output
# files on failure. Args: path of the ramp binary, source dir.
set -u
source "$(dirname "$0")/lib_cli.sh" "$1"

expect 0 "usage: ramp <command>" -- "$ramp" --help
expect 2 "usage: ramp <command>" -- "$ramp"
expect 2 "unknown command 'frobnicate'" -- "$ramp" frobnicate
for c in models configs "trace gen" "trace stats" "trace import-sglang" "trace info" loads \
         "dataset build" "dataset simulate" "dataset info" fit eval demo; do
  # shellcheck disable=SC2086
  expect 0 "usage: ramp" -- "$ramp" $c --help
done
expect 0 "Qwen3-30B-A3B +128 +8 +768 +2048" -- "$ramp" models
expect 1 "unknown model 'gpt5'" -- "$ramp" configs --model gpt5 --layout EP8
expect 1 "layout 'EP99'" -- "$ramp" configs --model olmoe --layout EP99
expect 2 "--layout is required" -- "$ramp" configs --model olmoe
expect 2 "expected an integer" -- "$ramp" configs --experts 12x --topk 2 --inter 1024 --hidden 2048 --layout EP2
expect 0 "valid configurations" -- "$ramp" configs --model qwen3-30b --layout EP8
# kernel v2's space: 60 of v1's plus 9 wide tiles (test_timing counts them), v2's own layout
expect 0 "^97 valid configurations" -- "$ramp" configs --model qwen3-30b --layout EP8 --kernel v2
# the valid count is the space's (dataset info's 154): v1's split-K at 2-3 stages, which v2 could
# run, is listed as outside it, not as valid
expect 0 "^154 valid configurations" -- "$ramp" configs --model deepseek-v3 --layout EP8 --kernel v2
expect 0 "r2.w128.s2.k2 +no .*not in v2's space" -- "$ramp" configs --model deepseek-v3 --layout EP8 --kernel v2 --all
expect 0 "r128.w128.s4.ph2.dk2 +yes +220224 +384 +168" -- "$ramp" configs --model qwen3-30b --layout EP8 --kernel v2
expect 0 "r2.w128.s2.persist +no .*persistent launch" -- "$ramp" configs --model qwen3-30b --layout EP8 --kernel v2 --all
expect 2 "--kernel v3: expected v1 or v2" -- "$ramp" configs --model qwen3-30b --layout EP8 --kernel v3
expect 1 "not a multiple of 128" -- "$ramp" configs --model qwen3-30b --layout TP8

# A trace round trip through the CLI; stats and loads read it back.
t=$tmp/chat.safetensors
expect 0 "wrote" -- "$ramp" trace gen --model qwen3-30b --domain chat --steps 40 --layers 2 --seed 3 -o "$t"
[ -s "$t" ] || fail "trace gen wrote no file"
expect 0 "median most-loaded GPU / mean" -- "$ramp" trace stats "$t" --layout EP8 --layout EP16
expect 0 "GPU  7:" -- "$ramp" loads "$t" --layout EP8 --record 0
expect 2 "has [0-9]+ records" -- "$ramp" loads "$t" --layout EP8 --record 999999
expect 0 "model Qwen3-30B-A3B, domain chat" -- "$ramp" trace info "$t"

# Bad input: nothing half-written is left behind.
expect 1 "" -- "$ramp" trace gen --model qwen3-30b --steps 5 -o "$tmp/no/such/dir/x.safetensors"
[ -e "$tmp/no" ] && fail "a failed write left $tmp/no behind"
expect 1 "unknown domain|domain 'poetry'" -- "$ramp" trace gen --model qwen3-30b --domain poetry --steps 5 -o "$tmp/p.safetensors"
[ -e "$tmp/p.safetensors" ] && fail "a failed gen left its output file"
ls "$tmp" | grep -q '\.tmp' && fail "temporary files left in $tmp: $(ls "$tmp")"
printf 'not a trace' > "$tmp/garbage.safetensors"
expect 1 "garbage.safetensors" -- "$ramp" trace stats "$tmp/garbage.safetensors"
expect 1 "RAMP_ERR_IO|No such file" -- "$ramp" trace info "$tmp/missing.safetensors"

finish cli_basic
