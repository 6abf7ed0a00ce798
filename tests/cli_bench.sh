#!/usr/bin/env bash
# `ramp bench` from the command line: help, usage errors (exit 2), a sweep in
# chunks that exits 3 until done and resumes from its output, a tiny deadline,
# a configuration subset, no GPU (exit 1, no file), and a file of another
# sweep refused. Args: path of the ramp binary, source dir.
set -u
source "$(dirname "$0")/lib_cli.sh" "$1"

expect 0 "usage: ramp bench DATASET -o OUT" -- "$ramp" bench --help
expect 0 "bench +time a dataset" -- "$ramp" --help
expect 2 "give one input dataset and -o OUT" -- "$ramp" bench
expect 2 "--max-seconds '-5': expected a number" -- "$ramp" bench x -o y --max-seconds -5
expect 2 "--checkpoint '-1'" -- "$ramp" bench x -o y --checkpoint -1
expect 2 "--backend 'cuda': expected gpu or sim" -- "$ramp" bench x -o y --backend cuda
expect 2 "--configs or --stride, not both" -- "$ramp" bench x -o y --stride 2 --configs r2.w128.s2
expect 1 "RAMP_ERR_IO" -- "$ramp" bench "$tmp/missing.safetensors" -o "$tmp/y" --backend sim

# A small dataset: two domains, Qwen3-30B, EP8.
for d in chat code; do
  expect 0 "wrote" -- "$ramp" trace gen --model qwen3-30b --domain $d --steps 20 --layers 2 --seed 5 -o "$tmp/$d.safetensors"
done
expect 0 "wrote 48 loads x 180" -- "$ramp" dataset build --model qwen3-30b --layout EP8 --max-batches 3 \
  -o "$tmp/loads.safetensors" "$tmp/chat.safetensors" "$tmp/code.safetensors"

# Chunks of 200 cells of 48 x 18 = 864: exit 3 four times, then 0.
out=$tmp/sweep.safetensors
for i in 1 2 3 4; do
  expect 3 "incomplete .--max-cells reached.: run the same command again" -- \
    "$ramp" bench "$tmp/loads.safetensors" -o "$out" --backend sim --stride 10 --max-cells 200
done
expect 0 "resuming from .*: 800 of 864 times filled" -- \
  "$ramp" bench "$tmp/loads.safetensors" -o "$out" --backend sim --stride 10 --max-cells 200
expect 0 "864 of 864 times filled" -- "$ramp" dataset info "$out"
expect 0 "device simulated" -- "$ramp" dataset info "$out"
expect 0 "command: ramp bench .*loads.safetensors -o .*--max-cells 200" -- "$ramp" dataset info "$out"
# Complete: nothing more to do.
expect 0 "measured 0 cells" -- \
  "$ramp" bench "$tmp/loads.safetensors" -o "$out" --backend sim --stride 10 --max-cells 200
# Another selection against that file: refused, the file kept.
expect 1 "not an earlier output of this sweep" -- \
  "$ramp" bench "$tmp/loads.safetensors" -o "$out" --backend sim --stride 7
expect 0 "864 of 864 times filled" -- "$ramp" dataset info "$out"

# A tiny deadline: one cell, exit 3.
expect 3 "incomplete .deadline." -- \
  "$ramp" bench "$tmp/loads.safetensors" -o "$tmp/dl.safetensors" --backend sim --max-seconds 0.000001
expect 0 "1 of 8640 times filled" -- "$ramp" dataset info "$tmp/dl.safetensors"

# Named configurations.
expect 0 "48 loads x 2 configurations" -- \
  "$ramp" bench "$tmp/loads.safetensors" -o "$tmp/two.safetensors" --backend sim --configs r16.w256.s4,r2.w128.s2
expect 0 "96 of 96 times filled" -- "$ramp" dataset info "$tmp/two.safetensors"
# How much of the kernel's space a dataset times, and what a plan fit on it
# cannot choose (the space's size as `dataset build` reports it, not by info)
space_of() {
  "$ramp" dataset build --model qwen3-30b --layout EP8 --max-batches 1 "$@" -o "$tmp/space.safetensors" \
    "$tmp/chat.safetensors" 2>&1 | sed -n 's/.*wrote [0-9]* loads x \([0-9]*\).*/\1/p'
}
v1n=$(space_of)
expect 0 "space: 18 of the $v1n configurations of kernel v1's space .* other $((v1n - 18)):" -- \
  "$ramp" dataset info "$out"
expect 0 "space: all $v1n configurations of kernel v1's space" -- "$ramp" dataset info "$tmp/loads.safetensors"
src=$2/data/timing/qwen3-30b-ep8-v2.safetensors
v2n=$(space_of --kernel v2)
v2t=$("$ramp" dataset info "$src" | sed -n 's/.* loads in .* batches, \([0-9]*\) configurations.*/\1/p')
if [ "$v2t" -lt "$v2n" ]; then
  expect 0 "note: $v2t of the $v2n configurations of kernel v2's space .* cannot choose the other $((v2n - v2t)): .*split-K \(r" -- \
    "$ramp" fit "$src" -o "$tmp/q.json"
fi
expect 2 "r64.w512.s4 is not in the dataset's space" -- \
  "$ramp" bench "$tmp/loads.safetensors" -o "$tmp/bad.safetensors" --backend sim --configs r16.w256.s4,r64.w512.s4
expect 1 "stages 9" -- \
  "$ramp" bench "$tmp/loads.safetensors" -o "$tmp/bad.safetensors" --backend sim --configs r16.w256.s4,r64.w512.s9
[ -e "$tmp/bad.safetensors" ] && fail "a refused --configs left its output"

# Checksums: every dataset is written with one and verified on reading; one
# changed byte is refused, naming the file; `dataset seal` rewrites a file
# unchanged (byte for byte when it already has one).
expect 0 "checksum: sha256, verified" -- "$ramp" dataset info "$out"
cp "$out" "$tmp/flip.safetensors"
size=$(stat -c %s "$tmp/flip.safetensors")
at=$((size - 5))
old=$(od -An -tu1 -j "$at" -N1 "$tmp/flip.safetensors" | tr -d ' ')
printf "\\$(printf %03o $((old ^ 65)))" | dd of="$tmp/flip.safetensors" bs=1 seek="$at" conv=notrunc 2>/dev/null
cmp -s "$out" "$tmp/flip.safetensors" && fail "the byte was not changed"
expect 1 "flip.safetensors: checksum mismatch" -- "$ramp" dataset info "$tmp/flip.safetensors"
expect 1 "checksum mismatch" -- "$ramp" eval "$tmp/flip.safetensors"
expect 0 "wrote" -- "$ramp" dataset seal "$out" -o "$tmp/sealed.safetensors"
cmp -s "$out" "$tmp/sealed.safetensors" || fail "dataset seal changed a sealed file"
expect 2 "give one input dataset and -o OUT" -- "$ramp" dataset seal "$out"
expect 2 "--menu-objective x: expected load or layer" -- "$ramp" eval "$out" --menu-objective x
rm -f "$tmp/flip.safetensors" "$tmp/sealed.safetensors"

# No GPU: a clear error, exit 1, no file.
expect 1 "RAMP_ERR_NO_GPU" -- env RAMP_CUDA_DRIVER=/nonexistent/libcuda.so.1 \
  "$ramp" bench "$tmp/loads.safetensors" -o "$tmp/gpu.safetensors" --stride 10
[ -e "$tmp/gpu.safetensors" ] && fail "a failed GPU sweep left its output"
ls "$tmp" | grep -q '\.tmp' && fail "temporary files left in $tmp: $(ls "$tmp")"

finish cli_bench
