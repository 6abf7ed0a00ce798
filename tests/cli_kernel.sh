#!/usr/bin/env bash
# Kernel v2 datasets from the command line (no GPU: the sim backend stands in
# for the timing): `dataset build --kernel v2` keeps v2's space (Qwen3-30B EP8
# 60 of 180 plus its 9 wide and 10 split-K ones, DeepSeek-V3 EP8 90 of 378 plus
# 16 and 10) and records it, `dataset info` prints
# it, `bench --kernel v2` narrows a v1 dataset with no times and counts what
# it leaves out (a BF16 one too), refuses another
# kernel's times and resuming an OUT of the other kernel; `fit` writes the kernel into the plan and
# `eval` refuses to mix kernels. Every error says what and where. Args: path
# of the ramp binary, source dir.
set -u
source "$(dirname "$0")/lib_cli.sh" "$1"

expect 0 "--kernel K +v1 or v2" -- "$ramp" bench --help
expect 0 "--kernel v2: the space of the Hopper kernel v2" -- "$ramp" dataset build --help
expect 0 "\"kernel\": \"v2\"" -- "$ramp" fit --help
expect 2 "--kernel 'v3': expected v1 or v2" -- "$ramp" bench x -o y --kernel v3
expect 2 "--kernel 'V2': expected v1 or v2" -- "$ramp" bench x -o y --kernel V2
expect 2 "--kernel 'v3': expected v1 or v2" -- \
  "$ramp" dataset build --model qwen3-30b --layout EP8 --kernel v3 -o y x

for d in chat code; do
  expect 0 "wrote" -- "$ramp" trace gen --model qwen3-30b --domain $d --steps 20 --layers 1 --seed 5 \
    -o "$tmp/$d.safetensors"
done
expect 0 "wrote" -- "$ramp" trace gen --model deepseek-v3 --domain chat --steps 4 --layers 1 --seed 5 \
  -o "$tmp/ds.safetensors"
expect 0 "wrote 8 loads x 154 configurations .kernel v2." -- "$ramp" dataset build --model deepseek-v3 \
  --layout EP8 --kernel v2 --max-batches 1 -o "$tmp/ds2.safetensors" "$tmp/ds.safetensors"
expect 0 "wrote 8 loads x 378 configurations .kernel v1." -- "$ramp" dataset build --model deepseek-v3 \
  --layout EP8 --max-batches 1 -o "$tmp/ds1.safetensors" "$tmp/ds.safetensors"
L1=$tmp/l1.safetensors L2=$tmp/l2.safetensors LB=$tmp/lb.safetensors
expect 0 "wrote 32 loads x 180 configurations .kernel v1." -- "$ramp" dataset build --model qwen3-30b \
  --layout EP8 --max-batches 2 -o "$L1" "$tmp/chat.safetensors" "$tmp/code.safetensors"
expect 0 "wrote 32 loads x 97 configurations .kernel v2." -- "$ramp" dataset build --model qwen3-30b \
  --layout EP8 --max-batches 2 --kernel v2 -o "$L2" "$tmp/chat.safetensors" "$tmp/code.safetensors"
expect 0 "kernel: v2" -- "$ramp" dataset info "$L2"
expect 0 "kernel: v1" -- "$ramp" dataset info "$L1"
expect 0 "wrote 32 loads x 180" -- "$ramp" dataset build --model qwen3-30b --layout EP8 --max-batches 2 \
  --bf16 -o "$LB" "$tmp/chat.safetensors" "$tmp/code.safetensors"
expect 0 "precision: bf16" -- "$ramp" dataset info "$LB"
expect 0 "precision: fp8" -- "$ramp" dataset info "$L2"
# A BF16 v2 space: Qwen3's 97 (every one fits in BF16), and its times by the simulator
LB2=$tmp/lb2.safetensors
expect 0 "wrote 32 loads x 97 configurations .kernel v2." -- "$ramp" dataset build --model qwen3-30b \
  --layout EP8 --max-batches 2 --bf16 --kernel v2 -o "$LB2" "$tmp/chat.safetensors" "$tmp/code.safetensors"
expect 0 "3104 of 3104 filled" -- "$ramp" bench "$LB2" -o "$tmp/tb2.safetensors" --backend sim
expect 0 "precision: bf16" -- "$ramp" dataset info "$tmp/tb2.safetensors"

# A v2 dataset: bench takes its kernel (no --kernel needed); every cell filled.
T2=$tmp/t2.safetensors
expect 3 "timing 32 loads x 97 configurations .sim backend, kernel v2." -- \
  "$ramp" bench "$L2" -o "$T2" --backend sim --max-cells 100
expect 0 "3104 of 3104 filled" -- "$ramp" bench "$L2" -o "$T2" --backend sim --kernel v2
expect 0 "kernel: v2" -- "$ramp" dataset info "$T2"
# ... resumed as a v1 sweep of the same cells: refused, naming both kernels.
expect 2 "--kernel v1: .*t2.safetensors holds 3104 times of kernel v2" -- \
  "$ramp" bench "$T2" -o "$tmp/x.safetensors" --backend sim --kernel v1
"$ramp" bench "$L2" -o "$tmp/l2v1.safetensors" --backend sim --kernel v1 --max-cells 1 >/dev/null 2>&1
expect 1 "its times are of kernel v1, the sweep's kernel v2" -- \
  "$ramp" bench "$L2" -o "$tmp/l2v1.safetensors" --backend sim
# A v1 dataset with no times, narrowed to v2's 60: the count left out printed.
T3=$tmp/t3.safetensors
expect 0 "kernel v2: 60 of .*l1.safetensors's 180 configurations .kernel v1. kept, 120 left out" -- \
  "$ramp" bench "$L1" -o "$T3" --backend sim --kernel v2
expect 0 "kernel: v2" -- "$ramp" dataset info "$T3"
expect 0 "1920 of 1920 times filled" -- "$ramp" dataset info "$T3"
# ... and a v1 sweep onto that v2 output: refused, the file kept.
expect 1 "its times are of kernel v2, the sweep's kernel v1" -- \
  "$ramp" bench "$L1" -o "$T3" --backend sim --stride 3
expect 0 "kernel: v2" -- "$ramp" dataset info "$T3"
# --configs naming one v2 does not run.
expect 2 "--kernel v2: 1 of the configurations named in --configs are not ones kernel v2 runs" -- \
  "$ramp" bench "$L1" -o "$tmp/c.safetensors" --backend sim --kernel v2 --configs r2.w128.s2,r16.w256.s4.persist
# A BF16 dataset: v2's whole space (wide and two-phase tiles included),
# built directly or narrowed from v1's.
expect 0 "wrote 32 loads x 97 configurations .kernel v2." -- "$ramp" dataset build --model qwen3-30b \
  --layout EP8 --max-batches 2 --bf16 --kernel v2 -o "$tmp/lb2.safetensors" \
  "$tmp/chat.safetensors" "$tmp/code.safetensors"
expect 0 "kernel v2: 60 of .*lb.safetensors's 180 configurations .kernel v1. kept, 120 left out" -- \
  "$ramp" bench "$LB" -o "$tmp/b.safetensors" --backend sim --kernel v2
expect 0 "1920 of 1920 times filled" -- "$ramp" dataset info "$tmp/b.safetensors"
expect 0 "r128.w256.s3.ph2.dk2 " -- "$ramp" configs --model qwen3-30b --layout EP8 --kernel v2 --bf16
# A v1 dataset with times: never relabelled.
"$ramp" bench "$L1" -o "$tmp/t1.safetensors" --backend sim --stride 9 >/dev/null 2>&1
expect 2 "holds 640 times of kernel v1" -- \
  "$ramp" bench "$tmp/t1.safetensors" -o "$tmp/t1b.safetensors" --backend sim --kernel v2
# A v2 DeepSeek-V3 dataset, narrowed from v1's 378: 114 kept (90 plain ones and 24 of v1's
# split-K ones, those of widths 128 and 256 that v2 runs over a cluster of two).
expect 3 "114 of .*ds1.safetensors's 378 configurations .kernel v1. kept, 264 left out" -- \
  "$ramp" bench "$tmp/ds1.safetensors" -o "$tmp/ds.out" --backend sim --kernel v2 --max-cells 1

# fit: the plan says v2; eval runs on v2 and refuses to mix kernels.
expect 0 "Qwen3-30B-A3B EP8 .kernel v2.: menu of" -- "$ramp" fit "$T2" -o "$tmp/plan2.json"
grep -qE '"kernel":[[:space:]]*"v2"' "$tmp/plan2.json" || fail "plan2.json lacks \"kernel\": \"v2\""
"$ramp" bench "$L1" -o "$tmp/t1full.safetensors" --backend sim >/dev/null 2>&1
expect 0 "kernel v1" -- "$ramp" fit "$tmp/t1full.safetensors" -o "$tmp/plan1.json"
grep -q '"kernel"' "$tmp/plan1.json" && fail "a v1 plan carries \"kernel\""
# fit --deterministic: a menu of two-phase entries only (what a deterministic
# layer serves); a dataset with none is refused, naming it, and no plan written
expect 0 "two-phase configurations only" -- "$ramp" fit "$T2" --deterministic -o "$tmp/pdet.json"
n=$(grep -c '"config"' "$tmp/pdet.json")
[ "$n" -ge 1 ] && [ "$(grep '"config"' "$tmp/pdet.json" | grep -c '\.ph2')" = "$n" ] ||
  fail "fit --deterministic: a menu entry without .ph2 in $(grep '"config"' "$tmp/pdet.json")"
expect 1 "--deterministic: .*t1full.safetensors has no two-phase configuration" -- \
  "$ramp" fit "$tmp/t1full.safetensors" --deterministic -o "$tmp/pdet1.json"
[ -e "$tmp/pdet1.json" ] && fail "fit --deterministic wrote a plan for a dataset without .ph2"
expect 0 "--deterministic: the menu from the dataset's two-phase" -- "$ramp" fit --help
# fit --include: the named configurations are the first entries, in order;
# an unknown name or more names than --menu is refused, and no plan written
c1=$(grep -o '"config":[[:space:]]*"[^"]*"' "$tmp/pdet.json" | head -1 | sed 's/.*"\([^"]*\)"$/\1/')
c2=$(grep -o '"config":[[:space:]]*"[^"]*"' "$tmp/plan2.json" | sed -n 2p | sed 's/.*"\([^"]*\)"$/\1/')
[ -n "$c1" ] && [ -n "$c2" ] && [ "$c1" != "$c2" ] || fail "fit --include: no two configurations to include ($c1, $c2)"
expect 0 "menu of 4" -- "$ramp" fit "$T2" --menu 4 --include "$c2,$c1" -o "$tmp/pinc.json"
got=$(grep -o '"config":[[:space:]]*"[^"]*"' "$tmp/pinc.json" | head -2 | sed 's/.*"\([^"]*\)"$/\1/' | tr '\n' ' ')
[ "$got" = "$c2 $c1 " ] || fail "fit --include $c2,$c1: the plan's first entries are $got"
expect 2 "--include r7.w99.s1: not a configuration of" -- \
  "$ramp" fit "$T2" --include r7.w99.s1 -o "$tmp/pinc2.json"
expect 2 "--include: 2 configurations, more than the menu's 1" -- \
  "$ramp" fit "$T2" --menu 1 --include "$c1" --include "$c2" -o "$tmp/pinc2.json"
[ -e "$tmp/pinc2.json" ] && fail "fit --include wrote a plan after a refusal"
expect 0 "--include: these configurations" -- "$ramp" fit --help
expect 0 "evaluating .*t2.safetensors .Qwen3-30B-A3B EP8, kernel v2" -- \
  "$ramp" eval "$T2" --summary --out "$tmp/ev"
[ -d "$tmp/ev/Qwen3-30B-A3B-EP8-v2" ] || fail "eval --out did not write Qwen3-30B-A3B-EP8-v2/"
expect 2 "t1full.safetensors holds kernel v1 times, .*t2.safetensors kernel v2: evaluate one kernel's datasets per call" -- \
  "$ramp" eval "$T2" "$tmp/t1full.safetensors" --summary

# --weights units: times of kernel v2 on weights in stage units, recorded in
# the dataset ("weights") and in a plan fit on it; one layout per dataset.
expect 0 "--weights W +rows or units" -- "$ramp" bench --help
expect 2 "--weights 'tiles': expected rows or units" -- "$ramp" bench x -o y --weights tiles
expect 2 "--weights units: stage units are read by kernel v2, and .*l1.safetensors is for kernel v1 .add --kernel v2." -- \
  "$ramp" bench "$L1" -o "$tmp/u1.safetensors" --backend sim --weights units
[ -e "$tmp/u1.safetensors" ] && fail "a refused --weights units left its output"
TU=$tmp/tu.safetensors
expect 0 "timing 32 loads x 97 configurations .sim backend, kernel v2, weights in stage units." -- \
  "$ramp" bench "$L2" -o "$TU" --backend sim --weights units
expect 0 "weights: units" -- "$ramp" dataset info "$TU"
expect 0 "weights: rows" -- "$ramp" dataset info "$T2"
expect 0 "3104 of 3104 times filled" -- "$ramp" dataset info "$TU"
# times of one layout never relabelled; an output of the other layout not resumed
expect 2 "--weights rows: .*tu.safetensors holds 3104 times of stage-unit weights" -- \
  "$ramp" bench "$TU" -o "$tmp/x.safetensors" --backend sim --weights rows
expect 2 "--weights units: .*t2.safetensors holds 3104 times of row-major weights" -- \
  "$ramp" bench "$T2" -o "$tmp/x.safetensors" --backend sim --weights units
"$ramp" bench "$L2" -o "$tmp/tu2.safetensors" --backend sim --weights units --max-cells 1 >/dev/null 2>&1
expect 1 "its times are of weights in stage units, the sweep's row-major" -- \
  "$ramp" bench "$L2" -o "$tmp/tu2.safetensors" --backend sim
expect 1 "its times are of weights row-major, the sweep's in stage units" -- \
  "$ramp" bench "$L2" -o "$T2" --backend sim --weights units
# with --kernel v2 on v1 loads: narrowed first, then units; DeepSeek-V3's v2
# space (split-K, wide, two-phase) all runs on units
expect 3 "kernel v2, weights in stage units" -- \
  "$ramp" bench "$L1" -o "$tmp/tu3.safetensors" --backend sim --kernel v2 --weights units --max-cells 5
expect 3 "timing 8 loads x 154 configurations .sim backend, kernel v2, weights in stage units." -- \
  "$ramp" bench "$tmp/ds2.safetensors" -o "$tmp/dsu.safetensors" --backend sim --weights units --max-cells 5
# the plan says so (a row-major plan has no key); eval takes one layout per call
expect 0 "Qwen3-30B-A3B EP8 .kernel v2, weights in stage units.: menu of" -- "$ramp" fit "$TU" -o "$tmp/planu.json"
grep -qE '"weights":[[:space:]]*"units"' "$tmp/planu.json" || fail "planu.json lacks \"weights\": \"units\""
grep -q '"weights"' "$tmp/plan2.json" && fail "a row-major plan carries \"weights\""
expect 2 "tu.safetensors holds times of stage-unit weights, .*t2.safetensors of row-major: evaluate one weight layout's datasets per call" -- \
  "$ramp" eval "$T2" "$TU" --summary
# `ramp configs --ptxas --units`: the programs reading stage units (kernel v2 only)
expect 0 "--units .kernel v2.: the programs that read" -- "$ramp" configs --help
expect 2 "--units goes with --ptxas and --kernel v2" -- "$ramp" configs --model qwen3-30b --layout EP8 --units
expect 2 "--units goes with --ptxas and --kernel v2" -- \
  "$ramp" configs --model qwen3-30b --layout EP8 --ptxas --units
expect 2 "--plan replaces .*--units" -- "$ramp" configs --plan "$tmp/planu.json" --ptxas --units
# `ramp configs --plan` alone: the menu and the size classes a layer makes
# (ramp_plan_size_classes), no compile: for Mixtral-8x22B EP8 (one expert a
# GPU) nested classes, the first holding one entry; none for 16 experts
expect 0 "wrote" -- "$ramp" fit "$2/data/timing/mixtral-8x22b-ep8-v2-units.safetensors" -o "$tmp/mx.json"
expect 0 "size classes \(a kernel v2 layer of up to 4096 tokens, the count on the host\): <= [0-9]+ tokens \{r[0-9a-z.]+\}; <= [0-9]+ tokens \{.*; the whole menu above" -- \
  "$ramp" configs --plan "$tmp/mx.json"
expect 0 "Mixtral-8x22B EP8, plan .*: kernel v2, weights in stage units, 1 expert a GPU, menu: r" -- \
  "$ramp" configs --plan "$tmp/mx.json"
# several experts a GPU (session 43): every count vector searched up to the cap;
# Qwen3-30B EP8's shipped dataset leaves its two wide two-phase entries out of
# batches of <= 64 tokens (the cap: 96 tokens would take 3 x 10^7 histograms)
expect 0 "wrote" -- "$ramp" fit "$2/data/timing/qwen3-30b-ep8-v2.safetensors" -o "$tmp/q8.json"
expect 0 "size classes \(a kernel v2 layer of up to 4096 tokens, the count on the host, ramp_layer_desc.many_expert_classes 1\): <= 8 tokens \{r8.w128.s4 r24.w256.s4\}; <= 32 tokens \{r32.w128.s4 r8.w128.s4 r24.w256.s4\}; <= 64 tokens \{r32.w128.s4 r8.w128.s4 r16.w256.s4 r24.w256.s4\}; the whole menu above" -- \
  "$ramp" configs --plan "$tmp/q8.json"
expect 0 "size classes" -- "$ramp" configs --plan "$tmp/planu.json"
expect 2 "--red4, --csv and --cubin-dir with --plan go with --ptxas" -- \
  "$ramp" configs --plan "$tmp/mx.json" --csv
expect 1 "nope.json" -- "$ramp" configs --plan "$tmp/nope.json"

finish cli_kernel
