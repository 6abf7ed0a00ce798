#!/usr/bin/env bash
# The benchmark programs (bench/bench_*.c, built beside ramp) answer --help
# and refuse unknown options and bad numbers before touching a GPU, so this
# runs the same on CPU-only CI and on the GPU machine. Args: path of the
# ramp binary (the benchmarks sit beside it), source dir. Also
# bench/v1_vs_v2.py and bench/row_tile_fit.py (CPU, numpy) on shipped datasets,
# bench/bf16_predict.py, bench/targets.py and bench/layer_table.py on shipped
# layer results, bench/v2_roofline.py and bench/split_gain.py on shipped datasets,
# bench/timeline_plot.py and bench/timeline_balance.py on shipped stamps,
# bench/stack_ab.py on shipped bench_stack folders,
# bench/inflow_plot.py on a shipped
# bench_inflow CSV, bench/ncu_source.py on shipped
# Nsight Compute source counters, bench/power_join.py on samples made here,
# bench/power_roofline.py on a shipped bench_wgmma CSV; bench_stack's refusals;
# bench/costmodel_forms.py's base form against `ramp eval`'s own gaps;
# bench/device_run.sh's dry run.
set -u
source "$(dirname "$0")/lib_cli.sh" "$1"
bin=$(dirname "$ramp")

for b in bench_layer bench_wgmma bench_moe bench_moe_v2 bench_select bench_inflow bench_stack; do
  [ -x "$bin/$b" ] || { fail "$bin/$b is missing"; continue; }
  expect 0 "^usage: $b" -- "$bin/$b" --help
  expect 2 "$b: unknown option --frobnicate" -- "$bin/$b" --frobnicate
done
expect 2 "bench_moe: reps 'abc': expected a whole number >= 1" -- "$bin/bench_moe" out abc
expect 2 "bench_moe_v2: 3 argument\(s\), expected 1 to 2" -- "$bin/bench_moe_v2" a 3 c
expect 2 "bench_moe_v2: 0 argument\(s\), expected 1 to 2" -- "$bin/bench_moe_v2"
expect 2 "bench_select: replays '5x': expected a whole number >= 1" -- "$bin/bench_select" x.csv 5x
expect 2 "bench_inflow: reps .0.: expected a whole number >= 1" -- "$bin/bench_inflow" x.csv 0
expect 2 "bench_inflow: 3 argument\(s\), expected 0 to 2" -- "$bin/bench_inflow" a 3 c
expect 2 "bench_inflow: reps 65: at most 64" -- "$bin/bench_inflow" x.csv 65
expect 2 "bench_inflow: RAMP_INFLOW_MIB 65: at most 64" -- env RAMP_INFLOW_MIB=65 "$bin/bench_inflow"
expect 2 "bench_wgmma: --warmup-s 11: expected seconds 0..10" -- "$bin/bench_wgmma" --warmup-s 11
expect 2 "bench_wgmma: --hbm-pieces 5: expected a comma list of distinct 1..4" -- "$bin/bench_wgmma" --hbm-pieces 5
expect 2 "bench_wgmma: --hbm-pieces 2,2: expected a comma list of distinct 1..4" -- "$bin/bench_wgmma" --hbm-pieces 2,2
expect 2 "bench_wgmma: --forms ss.a2.x: unknown or repeated form 'ss.a2.x'" -- "$bin/bench_wgmma" --forms ss.a2.x
expect 2 "bench_stack: --layers 0: an integer in 1..256" -- "$bin/bench_stack" --layers 0
expect 2 "bench_stack: --sets 1: an integer in 2..64" -- "$bin/bench_stack" --sets 1
expect 2 "bench_stack: --units 2: an integer in 0..1" -- "$bin/bench_stack" --units 2
expect 2 "bench_stack: --seed -3: a non-negative integer" -- "$bin/bench_stack" --seed -3
expect 2 "bench_stack: --select-pdl 3: an integer in 0..1" -- "$bin/bench_stack" --select-pdl 3
expect 2 "bench_stack: --tokens 64,x: up to 32 counts" -- "$bin/bench_stack" --tokens 64,x --plan p --out-dir o
expect 2 "bench_stack: --plan and --out-dir are required" -- "$bin/bench_stack" --plan p
expect 2 "bench_stack: --reps needs a value" -- "$bin/bench_stack" --reps
expect 1 "bench_stack: reading /nonexistent/plan.json" -- "$bin/bench_stack" --plan /nonexistent/plan.json --out-dir /tmp
expect 2 "bench_layer: --red4 1 needs --kernel v2" -- "$bin/bench_layer" --red4 1 --plan p
expect 2 "bench_layer: --red4 2: 0 or 1" -- "$bin/bench_layer" --red4 2 --kernel v2
expect 2 "bench_layer: --kernel v3: v1 or v2" -- "$bin/bench_layer" --kernel v3
expect 2 "bench_layer: --reps needs a value" -- "$bin/bench_layer" --reps
expect 2 "bench_layer: --plan, --dataset and --out-dir are required" -- "$bin/bench_layer" --plan p
expect 0 "--red4 1 \(with --kernel v2\)" -- "$bin/bench_layer" --help
expect 0 "ramp-units-jit\), timed in alternation with ramp-units" -- "$bin/bench_layer" --help
expect 2 "bench_layer: --bf16 2: 0 or 1" -- "$bin/bench_layer" --bf16 2 --kernel v2
expect 2 "bench_layer: --red4 1 is for FP8 layers" -- "$bin/bench_layer" --red4 1 --kernel v2 --bf16 1
expect 0 "--bf16 1: every path on a BF16 layer" -- "$bin/bench_layer" --help
expect 2 "bench_layer: --l2pf 0: MB, 1..1024" -- "$bin/bench_layer" --l2pf 0 --kernel v2
expect 2 "bench_layer: --l2pf 8x: MB, 1..1024" -- "$bin/bench_layer" --l2pf 8x --kernel v2
expect 2 "bench_layer: --l2pf needs --kernel v2" -- "$bin/bench_layer" --l2pf 8
expect 0 "--l2pf MB \(with --kernel v2\)" -- "$bin/bench_layer" --help
expect 2 "bench_layer: --bf16-pipe 2: 0 or 1" -- "$bin/bench_layer" --bf16-pipe 2
expect 2 "bench_layer: --bf16-pipe 1 needs --kernel v2 --bf16 1" -- "$bin/bench_layer" --bf16-pipe 1 --kernel v2
expect 0 "--bf16-pipe 1 \(with --kernel v2 --bf16 1\)" -- "$bin/bench_layer" --help
# BF16 variants: v2 reads BF16 weights row-major or in stage units, unpermuted (refused before a GPU is looked for)
for x in q:r8.w128.s4.v1 q:r8.w128.s4.t1; do
  expect 2 "variant $x: v2 runs BF16 layers on row-major or stage-unit, unpermuted weights" -- \
    env RAMP_MV2_BENCH_BF16=1 RAMP_MV2_BENCH_VARIANTS="$x" "$bin/bench_moe_v2" out
done
# variant mode: the split's values, p2k's (8 K parts: narrow tiles only) and the tile order group's are checked
for x in d:r128.w512.s3.u1.k8 d:r128.w512.s3.u4 d:r128.w512.s3.u1.k6 q:r8.w128.s4.z1 m:r128.w128.s4.o65 m:r128.w128.s4.o-1; do
  expect 2 "bench_moe_v2: bad or too many variants at '$x'" -- \
    env RAMP_MV2_BENCH_VARIANTS="$x" "$bin/bench_moe_v2" out
done

# bench/v1_vs_v2.py: usage errors, the wrong kernel order, then Qwen3-30B EP8's
# pair: every load matched, no cell with tokens slower on v2 (the shipped
# measurements), one CSV row per configuration
cmp=$2/bench/v1_vs_v2.py
T=$2/data/timing
expect 0 "usage: v1_vs_v2.py" -- python3 "$cmp" --help
expect 2 "datasets come in pairs" -- python3 "$cmp" "$T/qwen3-30b-ep8.safetensors"
expect 2 "$tmp/nope.safetensors: no such file" -- python3 "$cmp" "$tmp/nope.safetensors" "$T/qwen3-30b-ep8.safetensors"
expect 1 "expected a v1 then a v2 dataset, got v2" -- \
  python3 "$cmp" "$T/qwen3-30b-ep8-v2.safetensors" "$T/qwen3-30b-ep8.safetensors"
expect 0 "^\| qwen3-30b-ep8 \| 60 \| 720 \(4\) \| 42960 \| 0\.530 \| 0\.954 .* \| 0 \| 60 of 60 \|" -- \
  python3 "$cmp" --csv "$tmp/v.csv" "$T/qwen3-30b-ep8.safetensors" "$T/qwen3-30b-ep8-v2.safetensors"
[ "$(wc -l < "$tmp/v.csv")" = 61 ] || fail "v1_vs_v2 CSV: $(wc -l < "$tmp/v.csv") lines, expected 61"
grep -q '^qwen3-30b-ep8,r64.w256.s4,716,' "$tmp/v.csv" || fail "v1_vs_v2 CSV lacks r64.w256.s4: $(head -3 "$tmp/v.csv")"
# bench/costmodel_forms.py: its "base" form reimplements libramp's fit and
# pick; on two shipped datasets its gaps must equal `ramp eval`'s Table 3
# gaps (a change to either side makes them differ), and a bad form is refused
forms=$2/bench/costmodel_forms.py
expect 2 "--forms: unknown eq9" -- python3 "$forms" --forms base,eq9
for ds in qwen3-30b-ep8-v2 deepseek-v3-ep8-v2; do
  want=$("$ramp" eval "$2/data/timing/$ds.safetensors" --bootstrap 0 --menu 0 2>/dev/null |
         sed -n '/^Table 3/,/^Gap: /p' | grep -E ' EP8 ' | awk '{print $NF}')
  got=$(python3 "$forms" --forms base "$2/data/timing/$ds.safetensors" 2>/dev/null |
        grep "^| $ds " | awk -F'|' '{gsub(/ /, "", $3); print $3}')
  [ -n "$want" ] && [ "$want" = "$got" ] || fail "costmodel_forms.py base on $ds: $got, ramp eval: $want"
done

# bench/row_tile_fit.py: refusals, then the fit behind the grouped order's
# prediction on Mixtral's shipped dataset (bench/results/row-tile-fit-2026-12-01.md)
fit=$2/bench/row_tile_fit.py
M=$T/mixtral-8x22b-ep8-v2.safetensors
expect 0 "usage: row_tile_fit.py" -- python3 "$fit" --help
expect 2 "$tmp/nope.safetensors: no such file" -- python3 "$fit" "$tmp/nope.safetensors" r128.w128.s4
expect 1 "r999.w128.s4 is not a configuration of" -- python3 "$fit" "$M" r999.w128.s4
expect 2 "name at least one configuration, or --best" -- python3 "$fit" "$M"
# --best on OLMoE EP8's dataset of 2026-12-01 (bench/results/s40-run1 part 4; kept in
# s43-run1 when the re-measured one replaced it): the 52 loads of 257-512 pairs take
# 37.6 us at the median, their best configuration 25 row tiles
OLDO=$2/bench/results/s43-run1/olmoe-ep8-v2-2026-12-01.safetensors
expect 0 "\| 257-512 \| 52 \| 37.6 \| 25 \| 8 \|" -- python3 "$fit" "$OLDO" --best
expect 1 "only [0-9]+ loads with >= 5000 pairs" -- python3 "$fit" "$M" r128.w128.s4 --min-pairs 5000
# (the dataset re-measured in session 14, bench/results/s14-run2: the report's
# 109.1 + 74.86 x row tiles became 111.8 + 74.03; in session 18, s18-run4,
# 110.4 + 73.97)
expect 0 "r128.w128.s4.ph2.dk2: 23 loads, t = 110.4 \+ 73.97 x row tiles \+ 0.0788 x pairs us .median error 1.3%.; a row tile streams 302 MB at 4.08 TB/s" -- \
  python3 "$fit" "$M" r128.w128.s4.ph2.dk2 --min-pairs 256 --loads 512
expect 0 "512 pairs .4 row tiles.: 447 us now; grouped 380 us .1.18x. at 5.85 TB/s, 338 us .1.32x. at 8 TB/s" -- \
  python3 "$fit" "$M" r128.w128.s4.ph2.dk2 --min-pairs 256 --loads 512

# bench/bf16_predict.py: the BF16 layer predicted from the FP8 one on the
# session-4 loads; its arithmetic on one row (Qwen3-30B 64 uniform: FP8 32.9 us
# -> 9 + 1.6 x 23.9 = 47 .. 9 + 2.0 x 23.9 = 57; torch bf16 94.0 us) and the count
pred=$2/bench/bf16_predict.py
L4=$2/bench/results/layer-2026-11-30-v4
expect 0 "usage: bf16_predict.py" -- python3 "$pred" --help
expect 2 "usage: bf16_predict.py" -- python3 "$pred" "$L4/peer.csv"
expect 0 "\| 64 uniform \| 55 \| 32.9 \| 47-57 \| 94.0 \| 1.66-1.99x \|" -- \
  python3 "$pred" "$L4/layer-Qwen3-30B-A3B-EP8-v2.csv" "$L4/peer.csv"
expect 0 "slower than torch bf16: 4 of 14" -- \
  python3 "$pred" "$L4/layer-Qwen3-30B-A3B-EP8-v2.csv" "$L4/peer.csv"
expect 1 "no 'ramp' rows" -- python3 "$pred" "$L4/peer.csv" "$L4/peer.csv"

# bench/targets.py: the issue's targets from one run's files
# (bench/results/targets-2026-12-01.md); the floor on one row is
# 27 experts x (3 x 2048 x 7168 + 4 x 2688) bytes / 4.246 TB/s = 280.1 us
tg=$2/bench/targets.py
TD=$2/bench/results/targets-2026-12-01
expect 0 "usage: targets.py" -- python3 "$tg" --help
grep -v '^dense-bf16' "$TD/ceilings.csv" > "$tmp/ceil.csv"
expect 1 "no measured 'dense-bf16' row" -- python3 "$tg" --ceilings "$tmp/ceil.csv" --peer "$TD/peer.csv" \
  --loads "$TD/layer-loads-deepseek-v3-ep8-v2.json" "$TD/layer-DeepSeek-V3-EP8-v2.csv"
expect 1 "model DeepSeek-V3 is in none of the --loads files" -- python3 "$tg" --ceilings "$TD/ceilings.csv" \
  --peer "$TD/peer.csv" --loads "$TD/layer-loads-qwen3-30b-ep8-v2.json" "$TD/layer-DeepSeek-V3-EP8-v2.csv"
for want in "copy 4.25 TB/s, dense FP8 1540 TFLOP/s" "\| 64 \| uniform \| 57 \| 27 \| 307.0 \| 280.1 \| 1.10x \|" \
            "target 1.2x: met on 7 of 9" "slower than torch FP8 on 0 of 14"; do
  expect 0 "$want" -- python3 "$tg" --ceilings "$TD/ceilings.csv" --peer "$TD/peer.csv" \
    --loads "$TD/layer-loads-deepseek-v3-ep8-v2.json" "$TD/layer-DeepSeek-V3-EP8-v2.csv"
done
# a load with no local pair (one token missing every local expert): a row without a floor
{ cat "$TD/layer-DeepSeek-V3-EP8-v2.csv"
  echo "DeepSeek-V3,EP8,1,uniform,0,0,ramp,0,r8.w128.s4,9.500,9.400,9.600"; } > "$tmp/zero.csv"
expect 0 "\| 1 \| uniform \| 0 \| 0 \| 9.5 \| - \|" -- python3 "$tg" --ceilings "$TD/ceilings.csv" \
  --peer "$TD/peer.csv" --loads "$TD/layer-loads-deepseek-v3-ep8-v2.json" "$tmp/zero.csv"
# the measured floor (select+read rows, bench_layer since session 13) on one load, the
# faster of its two kernels: 300.0 us is 300.0 / 280.1 = 1.07x the copy-rate floor, and
# the layer 307.0 / 300.0 = 1.02x it
{ cat "$TD/layer-DeepSeek-V3-EP8-v2.csv"
  echo "DeepSeek-V3,EP8,64,uniform,57,27,select+read-bulk,-1,r8.w128.s4,310.000,309.000,311.000"
  echo "DeepSeek-V3,EP8,64,uniform,57,27,select+read,-1,r8.w128.s4,300.000,299.000,301.000"; } > "$tmp/read.csv"
for want in "\| 64 \| uniform \| 57 \| 27 \| 307.0 \| 280.1 \| 1.10x \|.* \| 300.0 \| 1.02x \| 1.07x \|" \
            "measured floor on those loads .*: 1.07-1.07x the copy-rate floor \(over 1.2x on 0 of 1\); the layer 1.02-1.02x"; do
  expect 0 "$want" -- python3 "$tg" --ceilings "$TD/ceilings.csv" --peer "$TD/peer.csv" \
    --loads "$TD/layer-loads-deepseek-v3-ep8-v2.json" "$tmp/read.csv"
done
# the read alone (read / read-bulk rows, no selection before it): 290.0 / 280.1 = 1.04x
echo "DeepSeek-V3,EP8,64,uniform,57,27,read,-1,r8.w128.s4,290.000,289.000,291.000" >> "$tmp/read.csv"
expect 0 "only reads the active weights, alone in its graph .*: 1.04-1.04x the copy-rate floor \(over 1.2x on 0 of 1\)" \
  -- python3 "$tg" --ceilings "$TD/ceilings.csv" --peer "$TD/peer.csv" \
  --loads "$TD/layer-loads-deepseek-v3-ep8-v2.json" "$tmp/read.csv"
# --read-sweep: bulk rows on the line 5 us + B at 5 TB/s (the plain loads' rows and the
# sizes under 64 MiB are not fitted); 1.2x the 4.246 TB/s copy floor needs
# 5 us / (1.2 / 4.246 - 1 / 5) us a MB = 60.8 MB; every DeepSeek-V3 load holds more
sweep() { # FIXED_US: bulk rows on FIXED_US + B at 5 TB/s, and rows the fit must skip
  echo "kernel,mib,us_median,us_p10,us_p90,tb_s"
  echo "bulk,0,2.800,2.7,2.9,0"
  echo "bulk,16,30.000,1,1,0"
  echo "loads,128,99.000,1,1,0"
  for m in 64 128 256; do python3 -c "print(f'bulk,$m,{$1 + $m * 1048576 * 2e-7:.4f},1,1,0')"; done
}
sweep 5 > "$tmp/sweep.csv"
for want in "one graph replay reading B bytes takes 5.0 us \+ B at 5.00 TB/s \(the empty kernel's replay: 2.8 us\)" \
            "meets 1.2x the copy floor only from 61 MB read" "less than 61 MB .*: 0 of the 9 memory-bound loads"; do
  expect 0 "$want" -- python3 "$tg" --ceilings "$TD/ceilings.csv" --peer "$TD/peer.csv" --read-sweep "$tmp/sweep.csv" \
    --loads "$TD/layer-loads-deepseek-v3-ep8-v2.json" "$tmp/read.csv"
done
# a fixed cost of 500 us puts the line at 6.1 GB: every load below it
sweep 500 > "$tmp/sweep5.csv"
expect 0 "5.00 TB/s.* only from 6[0-9]{3} MB read" -- python3 "$tg" --ceilings "$TD/ceilings.csv" --peer "$TD/peer.csv" \
  --read-sweep "$tmp/sweep5.csv" --loads "$TD/layer-loads-deepseek-v3-ep8-v2.json" "$tmp/read.csv"
expect 0 "less than 6[0-9]{3} MB .*: 9 of the 9 memory-bound loads" -- python3 "$tg" --ceilings "$TD/ceilings.csv" \
  --peer "$TD/peer.csv" --read-sweep "$tmp/sweep5.csv" --loads "$TD/layer-loads-deepseek-v3-ep8-v2.json" "$tmp/read.csv"
grep -v '^bulk,\(128\|256\)' "$tmp/sweep.csv" > "$tmp/sweep1.csv"
expect 1 "fewer than two bulk rows of >= 64 MiB" -- python3 "$tg" --ceilings "$TD/ceilings.csv" --peer "$TD/peer.csv" \
  --read-sweep "$tmp/sweep1.csv" --loads "$TD/layer-loads-deepseek-v3-ep8-v2.json" "$tmp/read.csv"
# --stack: bench_stack's rows (what one more layer adds to a stack in one graph); 290.0 /
# 280.1 = 1.04x, the stacked floor 281.0 (1.00x) and read 270.0 (0.96x); each kind of CSV
# refused without (with) the flag
{ echo "# bench_stack plan=p layers=8,16 sets=8 reps=20 units=0 seed=1 copy_tb_s=4.246 gpu=\"x\""
  echo "model,layout,tokens,routing,local_pairs,active,impl,entry,config,us_median,us_p10,us_p90"
  echo "DeepSeek-V3,EP8,64,uniform,57,27,ramp,0,r8.w128.s4,307.000,306.000,308.000"
  echo "DeepSeek-V3,EP8,64,uniform,57,27,ramp-stack,0,r8.w128.s4,290.000,289.000,291.000"
  echo "DeepSeek-V3,EP8,64,uniform,57,27,select+read-bulk,-1,r8.w128.s4,300.000,299.000,301.000"
  echo "DeepSeek-V3,EP8,64,uniform,57,27,select+read-bulk-stack,-1,r8.w128.s4,281.000,280.000,282.000"
  echo "DeepSeek-V3,EP8,64,uniform,57,27,read-bulk-stack,-1,r8.w128.s4,270.000,269.000,271.000"; } > "$tmp/stack.csv"
for want in "\| 64 \| uniform \| 57 \| 27 \| 290.0 \| 280.1 \| 1.04x \|.* \| 281.0 \| 1.03x \| 1.00x \|" \
            "each in a stack of such reads .*: 0.96-0.96x the copy-rate floor"; do
  expect 0 "$want" -- python3 "$tg" --stack --ceilings "$TD/ceilings.csv" --peer "$TD/peer.csv" \
    --loads "$TD/layer-loads-deepseek-v3-ep8-v2.json" "$tmp/stack.csv"
done
expect 1 "stack.csv: a bench_stack CSV: pass --stack" -- python3 "$tg" --ceilings "$TD/ceilings.csv" \
  --peer "$TD/peer.csv" --loads "$TD/layer-loads-deepseek-v3-ep8-v2.json" "$tmp/stack.csv"
expect 1 "read.csv: not a bench_stack CSV \(--stack\)" -- python3 "$tg" --stack --ceilings "$TD/ceilings.csv" \
  --peer "$TD/peer.csv" --loads "$TD/layer-loads-deepseek-v3-ep8-v2.json" "$tmp/read.csv"
# the roofline's own verdict: Mixtral's 224- and 459-pair loads need 2 x pairs x 3 x 6144 x
# 16384 FLOP, 87.9 and 180.0 us at 1,540 TFLOP/s, past 1.2x its 71.1 us floor (85.3); DeepSeek-V3's
# 3,995 pairs (351.9 GFLOP) over its 332.2 us floor allow at most 1,060 TFLOP/s
expect 0 "roofline itself puts 2 of those 11 loads above 1.2x .*: 224, 459 pairs\); target met on 0 of the 9" \
  -- python3 "$tg" --ceilings "$TD/ceilings.csv" --peer "$TD/peer.csv" \
  --loads "$TD/layer-loads-mixtral-8x22b-ep8-v2.json" "$TD/layer-Mixtral-8x22B-EP8-v2.csv"
expect 0 "most the roofline allows on the largest load \(3995 pairs\): 1060 TFLOP/s" \
  -- python3 "$tg" --ceilings "$TD/ceilings.csv" --peer "$TD/peer.csv" \
  --loads "$TD/layer-loads-deepseek-v3-ep8-v2.json" "$TD/layer-DeepSeek-V3-EP8-v2.csv"
# its plot: well-formed SVG, one layer point and one PyTorch point per load
expect 0 "plot: targets-DeepSeek-V3-EP8-fp8.svg" -- python3 "$tg" --ceilings "$TD/ceilings.csv" --peer "$TD/peer.csv" \
  --loads "$TD/layer-loads-deepseek-v3-ep8-v2.json" "$TD/layer-DeepSeek-V3-EP8-v2.csv" --svg "$tmp/svg"
expect 0 "^14 14$" -- python3 -c "
import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
print(sum(e.get('class') == 'layer' for e in r.iter()), sum(e.get('class') == 'torch' for e in r.iter()))" \
  "$tmp/svg/targets-DeepSeek-V3-EP8-fp8.svg"
# bench/v2_roofline.py: refusals, then one row (the OLMoE EP8 file re-measured with split-K in
# session 12: bench/results/v2-roofline-2026-12-01.md has the first file's 2.10 / 2.18 / 35)
rf=$2/bench/v2_roofline.py
expect 0 "usage: v2_roofline.py" -- python3 "$rf" --help
expect 1 "olmoe-ep16.safetensors was measured on kernel v1, not v2" -- python3 "$rf" "$T/olmoe-ep16.safetensors"
expect 1 "$tmp/nope.safetensors: no such file" -- python3 "$rf" "$OLDO" "$tmp/nope.safetensors"
expect 2 "--sms >= 1" -- python3 "$rf" "$OLDO" --sms 0
expect 0 "\| olmoe-ep8-v2-2026-12-01 \| 1-64 \| 97 \| 2.17 \| 2.23 \| 0.02 \| 56 \(42%\) \| 34 \|" -- python3 "$rf" "$OLDO"
# bench/split_gain.py: refusals (a v1 file, a v2 file from before split-K), then the
# smallest loads of Qwen3-30B EP32 (bench/results/s12-run10) and EP8 (re-measured
# in s40-run1 part 3: split-K wins 80 of its 331 loads of <= 64 pairs)
sg=$2/bench/split_gain.py
expect 0 "usage: split_gain.py" -- python3 "$sg" --help
expect 1 "olmoe-ep16.safetensors was measured on kernel v1, not v2" -- python3 "$sg" "$T/olmoe-ep16.safetensors"
expect 1 "qwen3-30b-tp2-v2.safetensors holds no split-K configuration" -- python3 "$sg" "$T/qwen3-30b-tp2-v2.safetensors"
expect 2 "--sms must be >= 1" -- python3 "$sg" "$T/qwen3-30b-ep8-v2.safetensors" --sms 0
expect 0 "\| qwen3-30b-ep32-v2 \| 1-64 \| 666 \| 1.11 \| 1.25 \| 666 \| 0.18 \|" -- python3 "$sg" "$T/qwen3-30b-ep32-v2.safetensors"
expect 0 "\| qwen3-30b-ep8-v2 \| 1-64 \| 331 \| 0.91 \| 1.28 \| 80 \| 0.59 \|" -- python3 "$sg" "$T/qwen3-30b-ep8-v2.safetensors"
# bench/dataset_remeasure.py: refusals, then Qwen3-30B EP8's dataset against its
# re-measurement over the whole space (bench/results/s40-run1/README.md, part 3)
rm_=$2/bench/dataset_remeasure.py
OLDQ=$2/bench/results/s40-run1/part3/qwen3-30b-ep8-v2-2026-11-30.safetensors
expect 0 "usage: dataset_remeasure.py" -- python3 "$rm_" --help
expect 1 "$tmp/nope.safetensors: no such file" -- python3 "$rm_" "$tmp/nope.safetensors" "$OLDQ"
expect 1 "hold different loads \(240 and 720" -- python3 "$rm_" "$OLDO" "$T/qwen3-30b-ep8-v2.safetensors"
expect 1 "lacks 37 of .*qwen3-30b-ep8-v2.safetensors's configurations" -- python3 "$rm_" "$T/qwen3-30b-ep8-v2.safetensors" "$OLDQ"
expect 0 "^\| >= 2049 \| 30 \| 113\.1 \| 107\.7 \| 73\.3 \| 0\.688 \(0\.626\) \| 30 \| .r128\.w256\.s3\.ph2\.tx. \(21\) \|" -- \
  python3 "$rm_" "$OLDQ" "$T/qwen3-30b-ep8-v2.safetensors"
expect 0 "median 1\.000, p10 1\.000, p90 1\.000 over 43200 cells" -- python3 "$rm_" "$OLDQ" "$OLDQ"
# bench/layer_table.py: a BF16 layer is compared with torch's BF16 MoE only
LB=$2/bench/results/layer-2026-12-01-bf16
expect 0 "slower than torch BF16 on 6 of 14 loads" -- python3 "$2/bench/layer_table.py" \
  "$LB/layer-Mixtral-8x22B-EP8-v2-bf16.csv" "$LB/peer.csv"
expect 0 "over FP8" -- python3 "$2/bench/layer_table.py" "$TD/layer-Mixtral-8x22B-EP8-v2.csv" "$TD/peer.csv"
# bench_layer --timeline: refusals before a GPU is looked for
expect 2 "bench_layer: --timeline 2: 0 or 1" -- "$bin/bench_layer" --timeline 2 --kernel v2
expect 2 "bench_layer: --timeline needs --kernel v2" -- "$bin/bench_layer" --timeline 1 --plan p
expect 0 "--timeline 1 \(with --kernel v2\)" -- "$bin/bench_layer" --help
# bench/timeline_plot.py on s26-run2's Mixtral stamps: a refusal, then the
# layer at 64 tokens: one bar per block that ran (1 selection block, 128 +
# 96 MoE blocks with a tile, 4 + 36 that returned at once), as well-formed SVG
tp=$2/bench/timeline_plot.py
TL=$2/bench/results/s26-run2/mixtral/timeline.csv.gz
expect 0 "usage: timeline_plot.py" -- python3 "$tp" --help
expect 1 "not a bench_layer --timeline CSV" -- python3 "$tp" "$TD/peer.csv" --out "$tmp/tl"
expect 1 "no rows of run 7" -- python3 "$tp" "$TL" --out "$tmp/tl" --run 7
expect 0 "^12 plots in" -- python3 "$tp" "$TL" --out "$tmp/tl"
expect 0 "^265 1 128 96$" -- python3 -c "
import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
ns = '{http://www.w3.org/2000/svg}'
solid = [e for e in r.iter(ns + 'rect') if e.get('height') == '2' and e.get('opacity') is None]
col = lambda c: sum(e.get('fill') == c for e in solid)
print(len(solid), col('#d62728'), sum(float(e.get('width')) > 50 for e in solid if e.get('fill') == '#1f77b4'),
      sum(float(e.get('width')) > 50 for e in solid if e.get('fill') == '#2ca02c'))" \
  "$tmp/tl/timeline-ramp-64-uniform.svg"
# bench/inflow_plot.py on s38-run1's call-7 bench_inflow CSV: refusals (another
# tool's CSV, an unknown kind: no SVG left), then the plot: two panels (L2,
# HBM) of one line per kind, six grids each, and the HBM's per-SM read share
# as the dashed reference; --kinds keeps only the kinds named
ip=$2/bench/inflow_plot.py
IC=$2/bench/results/s38-run1/call7/inflow.csv
expect 0 "usage: inflow_plot.py" -- python3 "$ip" --help
expect 1 "not a bench_inflow CSV" -- python3 "$ip" "$TD/peer.csv" --out "$tmp/in.svg"
expect 1 "kinds: nope not in" -- python3 "$ip" "$IC" --out "$tmp/in.svg" --kinds nope,loads
[ -e "$tmp/in.svg" ] && fail "a refused inflow plot left its SVG"
expect 0 "^HBM 1024 MiB: best at 132 blocks mc32k-s4 33.0 B/clk per SM" -- python3 "$ip" "$IC" --out "$tmp/in.svg"
svgcount='import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
dashed = [t.text for t in r.iter(ns + "text") if t.text and t.text.startswith("dashed")]
print(len(list(r.iter(ns + "polyline"))), len(list(r.iter(ns + "circle"))), dashed[0].split("(")[-1] if dashed else "-")'
expect 0 "^20 116 17.9\)$" -- python3 -c "$svgcount" "$tmp/in.svg"
expect 0 "^L2 8 MiB: best at 132 blocks loads 77.5" -- python3 "$ip" "$IC" --out "$tmp/in2.svg" --kinds bulk32k-s2,loads
expect 0 "^4 24 17.9\)$" -- python3 -c "$svgcount" "$tmp/in2.svg"
# bench/ncu_source.py on s27-run2's source counters (r64.w256.s4, Qwen3-30B
# 2,048 uniform): refusals, then the no-instruction samples of the six-entry
# kernel against the entry's own kernel, the footprint and its span, and
# the CSV other tools read
ns=$2/bench/ncu_source.py
NC=$2/bench/results/s27-run2
expect 0 "usage: ncu_source.py" -- python3 "$ns" --help
expect 1 "expected NAME=SOURCE.csv" -- python3 "$ns" nosign
expect 1 "not an ncu source-page CSV" -- python3 "$ns" "t=$TL"
expect 0 "no_inst 1032" -- python3 "$ns" "poly=$NC/ncu-q6-poly/source.csv.gz"
expect 0 "footprint 57.8 KB over a span of 60.5 KB" -- python3 "$ns" "alone=$NC/ncu-q1-alone/source.csv.gz"
expect 0 "0x0fa20..0x1b240  2829 instructions, samples  5330, no_inst  818" -- \
  python3 "$ns" "poly=$NC/ncu-q6-poly/source.csv.gz" --runs
expect 0 "^alone,6651,20200243,57.75,60.46875,534," -- sh -c \
  "python3 '$ns' 'alone=$NC/ncu-q1-alone/source.csv.gz' --csv '$tmp/ns.csv' > /dev/null && cat '$tmp/ns.csv'"
# bench/power_join.py on samples made here: refusals (no power column, a bad
# timestamp with its line, no window), then the medians, largest, least and
# the share of power-capped samples of each window, the edges' 50 ms left out
pj=$2/bench/power_join.py
expect 0 "usage: power_join.py" -- python3 "$pj" --help
printf 'timestamp, clocks.sm [MHz]\n2026/12/04 20:00:00.000, 1980\n' > "$tmp/pj-bad.csv"
expect 2 "pj-bad.csv:1: the header names no timestamp or power.draw column" -- \
  python3 "$pj" "$tmp/pj-bad.csv" --window a 0 1
{ echo 'timestamp, power.draw.instant [W], clocks.current.sm [MHz], clocks.current.memory [MHz], clocks_event_reasons.active'
  echo '2026/12/04 20:00:00.000, 100.0, 345, 3201, 0x0000000000000001'
  echo '2026/12/04 20:00:00.010, 690.0, 1200, 3201, 0x0000000000000004'  # edge: left out
  echo '2026/12/04 20:00:00.100, 650.0, 1500, 3201, 0x0000000000000004'
  echo '2026/12/04 20:00:00.200, 700.0, 1400, 3201, 0x0000000000000004'
  echo '2026/12/04 20:00:00.300, 500.0, 1980, 3201, 0x0000000000000000'
  echo '2026/12/04 20:00:01.000, 300.0, 1980, 3201, 0x0000000000000000'
} > "$tmp/pj.csv"
T0=$(python3 -c "import datetime as d; print(d.datetime(2026,12,4,20,0,0,tzinfo=d.timezone.utc).timestamp())")
sed 's/00:00.100,/00:00.1x0,/' "$tmp/pj.csv" > "$tmp/pj-badtime.csv"
expect 2 "pj-badtime.csv:4: timestamp '2026/12/04 20:00:00.1x0'" -- \
  python3 "$pj" "$tmp/pj-badtime.csv" --window a 0 1
expect 2 "no window given" -- python3 "$pj" "$tmp/pj.csv"
printf 'form,n,w,grid,tflops,hbm_tb_s,t_start,t_end\nss.a2.pr.h,128,2,132,1000.4,3.91,%s,%s\n' \
  "$T0" "$(python3 -c "print($T0 + 0.35)")" > "$tmp/pj-wgmma.csv"
expect 0 '^\| ss.a2.pr.h N128 W2 \| 1000 TFLOP/s, 3.91 TB/s \| 3 \| 650 \| 700 \| 1500 \| 1400 \| 3201 \| power cap 67% \|$' -- \
  python3 "$pj" "$tmp/pj.csv" --wgmma "$tmp/pj-wgmma.csv"
printf 'd:r128.w128.s3 deepseek-v3 4096 balanced 446.0 us 1.30 x floor grid 132 check -1 wall %s %s\n' \
  "$(python3 -c "print($T0 + 0.5)")" "$(python3 -c "print($T0 + 1.2)")" > "$tmp/pj-moe.txt"
expect 0 '^\| d:r128.w128.s3 deepseek-v3 4096 balanced \| 446.0 us \| 1 \| 300 \| 300 \| 1980 \| 1980 \| 3201 \| none \|$' -- \
  python3 "$pj" "$tmp/pj.csv" --moe "$tmp/pj-moe.txt" --out "$tmp/pj.md"
[ -s "$tmp/pj.md" ] || fail "power_join.py --out wrote nothing"
expect 1 "no sample inside 1 window\(s\): empty" -- python3 "$pj" "$tmp/pj.csv" --window empty 1 2
# the samples gzipped (as shipped in bench/results): the same row
gzip -c "$tmp/pj.csv" > "$tmp/pj.csv.gz"
expect 0 '^\| ss.a2.pr.h N128 W2 \| 1000 TFLOP/s, 3.91 TB/s \| 3 \| 650 \| 700 \| 1500 \| 1400 \| 3201 \| power cap 67% \|$' -- \
  python3 "$pj" "$tmp/pj.csv.gz" --wgmma "$tmp/pj-wgmma.csv"
# --settle leaves out the window's first 0.15 s (the 100 ms sample)
expect 0 '^\| ss.a2.pr.h N128 W2 \| 1000 TFLOP/s, 3.91 TB/s \| 2 \| 600 \| 700 \| 1690 \| 1400 \| 3201 \| power cap 50% \|$' -- \
  python3 "$pj" "$tmp/pj.csv" --wgmma "$tmp/pj-wgmma.csv" --settle 0.15
expect 2 "--settle -1.0: seconds, 0 to 60" -- python3 "$pj" "$tmp/pj.csv" --window a 0 1 --settle -1
# --svg: two panels (power, SM clock) of one polyline each, both windows shaded
# in each, the limit drawn, the windows listed by number
expect 0 "ss.a2.pr.h N128 W2" -- python3 "$pj" "$tmp/pj.csv" --wgmma "$tmp/pj-wgmma.csv" \
  --moe "$tmp/pj-moe.txt" --svg "$tmp/pj.svg" --limit 700
pjsvg='import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
shaded = [e for e in r.iter(ns + "rect") if e.get("fill") in ("#dbe9f6", "#fde5cc")]
texts = [t.text or "" for t in r.iter(ns + "text")]
print(len(list(r.iter(ns + "polyline"))), len(shaded), sum("power limit 700 W" in t for t in texts),
      sum(t.startswith(("1. ss.a2.pr.h", "2. d:r128")) for t in texts))'
expect 0 "^2 4 1 2$" -- python3 -c "$pjsvg" "$tmp/pj.svg"
# bench/power_roofline.py on s39-run1's call-9 bench_wgmma CSV: refusals (a
# bad point, another tool's CSV), the measured ceilings at 256 FLOP a byte,
# a target measured at its intensity and one interpolated, and the SVG: one
# line per .h group, a point per measured intensity, a diamond per target
pr=$2/bench/power_roofline.py
PC=$2/bench/results/s39-run1/call9/power-wgmma.csv
expect 0 "usage: power_roofline.py" -- python3 "$pr" --help
expect 2 "--point x:256: expected NAME:FLOP_PER_BYTE:TFLOPS" -- python3 "$pr" "$PC" --point x:256
expect 2 "--point x:0:5: both numbers must be > 0" -- python3 "$pr" "$PC" --point x:0:5
expect 2 "inflow.csv:1: not a bench_wgmma CSV" -- python3 "$pr" "$2/bench/results/s38-run1/call7/inflow.csv"
expect 0 "^\| 256 \| 924 TFLOP/s, 3.61 TB/s \| 950 TFLOP/s, 3.71 TB/s \| 768 TFLOP/s, 3.00 TB/s \| 884 TFLOP/s, 3.45 TB/s \|$" -- \
  python3 "$pr" "$PC"
expect 0 "^d: needs 1000 TFLOP/s at 256 FLOP/B; .*ss.a2.pr.h W2: at 884 -> beyond \(113%\)$" -- \
  python3 "$pr" "$PC" --point d:256:1000
expect 0 "^m: needs 799 TFLOP/s at 226 FLOP/B; .*ss.a2.h W2: ~ 880 -> within \(91%\); .*ss.a2.pr.h W2: ~ 820 -> within \(97%\)$" -- \
  python3 "$pr" "$PC" --point m:226:799 --svg "$tmp/roof.svg"
roofsvg='import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
print(len(list(r.iter(ns + "polyline"))), len(list(r.iter(ns + "circle"))), len(list(r.iter(ns + "path"))))'
expect 0 "^5 16 1$" -- python3 -c "$roofsvg" "$tmp/roof.svg"
# bench/timeline_balance.py on s47-run1's DeepSeek-V3 and Qwen3 stamps: the
# figures bench/results/s48-cpu quotes (unissued work at the mean end, the
# rate-shared end, the groups by SM), then its refusals
tb=$2/bench/timeline_balance.py
expect 0 "timeline_balance.py - what balancing" -- python3 "$tb" --help
expect 0 "^dsv3-d0 +stack +64 uniform +r8.w512.s4 +\| +104 +104 \| +369.5/ 407.1 \| 36.5 \| +365.2 \| +41.9 \| sm 4, 38/12/54$" -- \
  python3 "$tb" "$2/bench/results/s47-run1/call6/dsv3-d0"
expect 0 "^dsv3-d0 +stack +16 uniform +r8.w128.s4 +\| +132 +208 \|" -- \
  python3 "$tb" "$2/bench/results/s47-run1/call6/dsv3-d0"
expect 0 "^qwen3-d0-1 +stack +64 uniform +r8.w128.s4 +\| +96 +96 \| +33.9/ +35.8 \| -0.7 \|" -- \
  python3 "$tb" "$2/bench/results/s47-run1/call4/qwen3-d0-1/timeline-Qwen3-30B-A3B-EP8.csv.gz"
expect 2 "timeline_balance.py: $tmp/none: no such file or folder" -- python3 "$tb" "$tmp/none"
expect 1 "not a --timeline CSV \(no column what\)" -- \
  python3 "$tb" "$2/bench/results/s47-run1/call6/dsv3-d0/stack-DeepSeek-V3-EP8.csv"
mkdir -p "$tmp/notl"
expect 1 "no timeline-\*\.csv\[\.gz\] under" -- python3 "$tb" "$tmp/notl"
# a CSV with the tile counts the kernel stamps (session 48): counted, not inferred
{ echo "what,tokens,routing,config,run,kernel,block,e0,e1,e2,e3,e4,e5,e6,e7,e8,e9,e10,e11,sm,tiles"
  echo "stack,16,uniform,r8.w128.s4,0,0,0,0,1000,-1,2000,-1,-1,-1,-1,-1,-1,-1,-1,3,-1"
  echo "stack,16,uniform,r8.w128.s4,0,1,0,1000,3000,95000,100000,100000,-1,5000,9000,-1,-1,-1,-1,4,3"
  echo "stack,16,uniform,r8.w128.s4,0,1,1,1000,3000,55000,60000,60000,-1,5000,9000,-1,-1,-1,-1,5,1"
} > "$tmp/notl/timeline-x.csv"
expect 0 "stack +16 uniform +r8.w128.s4 +\| +2 +4 \| +80.0/ 100.0 \| 15.0 \| +85.4 \| +14.6 \| sm 3, 1/1$" -- \
  python3 "$tb" "$tmp/notl"
# bench/stack_ab.py on s49-run1's stacks: the A/B figures its README quotes
# (a mean over two repeats and their spread; a difference from the first
# variant), then its refusals
sa=$2/bench/stack_ab.py
c1=$2/bench/results/s49-run1/call1
expect 0 "usage: stack_ab.py" -- python3 "$sa" --help
expect 0 "^\| 64 \| uniform \| r8.w128.s4 \| 434.82 \| 0.00 \| r8.w128.s4 \| 404.70 \| 0.00 \| -30.12 \|$" -- \
  python3 "$sa" y0="$c1/dsv3-r8.w128.s4-y0" y1="$c1/dsv3-r8.w128.s4-y1"
expect 0 "^16,uniform,r8.w128.s4,30.18,0.35,r8.w128.s4,29.50,0.46,-0.69$" -- \
  python3 "$sa" --csv e0="$c1/qwen3-e0-a,$c1/qwen3-e0-b" e1="$c1/qwen3-e1-a,$c1/qwen3-e1-b"
expect 0 "^16,uniform,r8.w128.s4,24.35,0.00,r8.w128.s4,24.35,0.00,\+0.00$" -- \
  python3 "$sa" --csv --impl select+read-bulk a="$c1/qwen3-e0-a" b="$c1/qwen3-e0-a"
expect 1 "stack_ab.py: $tmp/none: no stack-\*.csv" -- python3 "$sa" a="$c1/qwen3-e0-a" b="$tmp/none"
expect 1 "stack_ab.py: b: load 512 skewed missing from $c1/olmoe-e0-a" -- \
  python3 "$sa" a="$c1/qwen3-e0-a" b="$c1/olmoe-e0-a"
expect 2 "at least two variants" -- python3 "$sa" a="$c1/qwen3-e0-a"
expect 2 "unknown argument '--bogus'" -- python3 "$sa" --bogus a="$c1/qwen3-e0-a" b="$c1/qwen3-e0-b"

# bench/device_run.sh's dry run (RAMP_DEVICE_DRY=1): a device script's test_gpu_moe_v2
# lists checked here, a wrong name caught, a stack without its plan named
cat > "$tmp/dry.sh" <<'DRY'
source bench/device_run.sh cli-dry-$$
ramp_check good 10 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r8.w128.s4 ./test_gpu_moe_v2
ramp_check bad 10 RAMP_MOE_V2_MODELS=qwen3-30b RAMP_MOE_CONFIGS=r8.w128.s2 \
  compute-sanitizer --tool memcheck ./test_gpu_moe_v2
ramp_check layer 10 RAMP_LAYER_KINDS=fp8 ./test_gpu_layer
ramp_stack st nothing 16 "" 0 1
rm -rf "$W"
DRY
dry=$(cd "$2" && RAMP_DEVICE_DRY=1 RAMP_DRY_BUILD="$bin" bash "$tmp/dry.sh" 2>&1)
for want in "good: lists exit 0" "qwen3-30b: r8.w128.s4$" "bad: lists exit 1" \
            "'r8.w128.s2' is no v2 configuration" "layer: not checked in a dry run" \
            "st: NO PLAN"; do
  grep -qE -- "$want" <<< "$dry" || fail "device_run.sh dry run lacks /$want/: $dry"
done

# bench/peer_torch.py refuses a run with neither loads nor ceilings before importing torch
expect 2 "--loads \(or --ceilings\) is required" -- python3 "$2/bench/peer_torch.py"

finish cli_bench_tools
