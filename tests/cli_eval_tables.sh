#!/usr/bin/env bash
# `ramp dataset build --balanced-on-others` and the evaluation's Tables 8
# (balanced placement) and 11 (every GPU holding every expert) from the
# command line, on simulated datasets: usage errors, the placement recorded
# in the dataset, the same batches under both placements, the tables printed
# (and written to DIR/report.txt) only when their datasets are given.
# Args: path of the ramp binary, source dir.
set -u
source "$(dirname "$0")/lib_cli.sh" "$1"

for d in chat math code; do
  expect 0 "wrote" -- "$ramp" trace gen --model qwen3-30b --domain $d --rate 48 --steps 48 --layers 1 \
    --seed 3 -o "$tmp/$d.safetensors"
done
expect 0 "wrote" -- "$ramp" trace gen --model qwen3-30b --vllm-sizes 1 --seed 3 -o "$tmp/uniform.safetensors"
traces=("$tmp/chat.safetensors" "$tmp/math.safetensors" "$tmp/code.safetensors" "$tmp/uniform.safetensors")

# Usage errors: what and where.
expect 2 "give --balanced-on or --balanced-on-others, not both" -- "$ramp" dataset build --model qwen3-30b \
  --layout EP8 --balanced-on "$tmp/chat.safetensors" --balanced-on-others -o "$tmp/x" "${traces[@]}"
expect 2 "layout TP2 holds every expert on every GPU" -- "$ramp" dataset build --model qwen3-30b \
  --layout TP2 --balanced-on-others -o "$tmp/x" "${traces[@]}"
expect 2 "needs two or more traces" -- "$ramp" dataset build --model qwen3-30b --layout EP8 \
  --balanced-on-others -o "$tmp/x" "$tmp/chat.safetensors"
expect 2 "chat.safetensors has no other non-uniform trace" -- "$ramp" dataset build --model qwen3-30b \
  --layout EP8 --balanced-on-others -o "$tmp/x" "$tmp/chat.safetensors" "$tmp/uniform.safetensors"
[ -e "$tmp/x" ] && fail "a refused build left its output"
expect 0 "balanced-on-others" -- "$ramp" dataset build --help

# Contiguous and balanced EP8, and TP2: loads, then simulated times.
for v in con bal tp; do
  args=(--layout EP8); [ $v = bal ] && args+=(--balanced-on-others); [ $v = tp ] && args=(--layout TP2)
  expect 0 "wrote" -- "$ramp" dataset build --model qwen3-30b "${args[@]}" --max-batches 6 \
    -o "$tmp/$v-loads.safetensors" "${traces[@]}"
  expect 0 "wrote" -- "$ramp" bench "$tmp/$v-loads.safetensors" -o "$tmp/$v.safetensors" --backend sim \
    --stride 9 --max-seconds 0
done
expect 0 "placement: contiguous" -- "$ramp" dataset info "$tmp/con.safetensors"
expect 0 "placement: balanced:others" -- "$ramp" dataset info "$tmp/bal.safetensors"

# Without a balanced or TP dataset: neither table.
out=$("$ramp" eval "$tmp/con.safetensors" --bootstrap 50 2>&1) || fail "eval con: $out"
echo "$out" | grep -q "Table 8\|Table 11" && fail "Table 8 or 11 without their datasets: $out"

# All three: Table 8 pairs con and bal on all their >= 128 batches; Table 11 has TP2.
expect 0 "Table 8: RaMP on balanced expert placement" -- "$ramp" eval "$tmp/con.safetensors" \
  "$tmp/bal.safetensors" "$tmp/tp.safetensors" --bootstrap 50 --out "$tmp/ev"
out=$(cat "$tmp/ev/report.txt")
# loads.csv: every GPU's choice per policy; a batch's time in batches.csv is
# the slowest of its GPUs' in loads.csv, for every policy, every batch
for d in "$tmp"/ev/*/; do
  python3 - "$d" <<'PY' || fail "loads.csv of $d disagrees with batches.csv"
import csv, sys
d = sys.argv[1]
loads = list(csv.DictReader(open(d + "loads.csv")))
batches = list(csv.DictReader(open(d + "batches.csv")))
policies = [k[:-3] for k in batches[0] if k.endswith("_us")]
assert loads and policies and "ramp" in policies, (len(loads), policies)
n = 0
for b in batches:
    rows = [r for r in loads if (r["domain"], r["batch"]) == (b["domain"], b["batch"])]
    assert len(rows) == int(b["gpus"]), (b, len(rows))
    for p in policies:
        want = float(b[p + "_us"])
        got = max(float(r[p + "_us"]) for r in rows)
        assert abs(got - want) <= 1e-3 * want, (b["domain"], b["batch"], p, got, want)
        assert all(r[p + "_config"].startswith("r") for r in rows)
        n += 1
assert sum(int(b["gpus"]) for b in batches) == len(loads)
print("loads.csv: %d batch x policy times agree" % n)
PY
done
row8=$(echo "$out" | sed -n '/^Table 8/,/^Imbalance/p' | grep '^Qwen3-30B-A3B')
[ -n "$row8" ] || fail "no Table 8 row: $out"
# c/b/pair: the same count three times
echo "$row8" | grep -qE ' ([0-9]+)/\1/\1 \|' || fail "Table 8 batches not paired: $row8"
echo "$out" | grep -qE '^Qwen3-30B-A3B +TP2 +[0-9]+ +- ' || fail "no Table 11 row for TP2: $out"
echo "$out" | sed -n '/^Table 11/,/^Kernel/p' | grep -q 'EP8' && fail "an EP row in Table 11: $out"
echo "$out" | grep -q 'EP8 bal' || fail "no 'EP8 bal' label in Table 3: $out"
for d in Qwen3-30B-A3B-EP8 Qwen3-30B-A3B-EP8-balanced Qwen3-30B-A3B-TP2; do
  [ -f "$tmp/ev/$d/batches.csv" ] || fail "no $d/batches.csv"
done
head -1 "$tmp/ev/Qwen3-30B-A3B-EP8-balanced/batches.csv" | grep -q ',imbalance$' || fail "no imbalance column"
ls "$tmp/ev" | grep -q '\.tmp\.' && fail "temporary files left in $tmp/ev"

# Datasets of other batches under the two placements: refused, naming the batch.
expect 0 "wrote" -- "$ramp" dataset build --model qwen3-30b --layout EP8 --balanced-on-others \
  --max-batches 5 -o "$tmp/bal5-loads.safetensors" "${traces[@]}"
expect 0 "wrote" -- "$ramp" bench "$tmp/bal5-loads.safetensors" -o "$tmp/bal5.safetensors" --backend sim \
  --stride 9 --max-seconds 0
expect 1 "batch [0-9]+ has [0-9]+ tokens under one placement and [0-9]+ under the other" -- \
  "$ramp" eval "$tmp/con.safetensors" "$tmp/bal5.safetensors" --bootstrap 0

# --cost-model: Equation 3 + pairs (the default) or the paper's Equation 3,
# each named in the report; anything else refused. `ramp fit` writes a
# five-term plan by default (the library's tests check that its entries
# predict as the model); --cost-model eq3 the four-term one.
expect 0 "^Cost model: eq3, " -- "$ramp" eval "$tmp/con.safetensors" --bootstrap 0 --cost-model eq3
expect 0 "^Cost model: eq3\+pairs" -- "$ramp" eval "$tmp/con.safetensors" --bootstrap 0 --cost-model eq3+pairs
expect 0 "^Cost model: eq3\+pairs" -- "$ramp" eval "$tmp/con.safetensors" --bootstrap 0
expect 0 "^Training: the other traffic domains \(the paper's" -- "$ramp" eval "$tmp/con.safetensors" --bootstrap 0
expect 0 "^Training: the other traffic domains and the uniform loads" -- \
  "$ramp" eval "$tmp/con.safetensors" --bootstrap 0 --train-uniform
expect 2 "--cost-model tilecount: expected eq3 or eq3\+pairs" -- "$ramp" eval "$tmp/con.safetensors" \
  --cost-model tilecount
expect 2 "--cost-model eq4: expected eq3 or eq3\+pairs" -- "$ramp" eval "$tmp/con.safetensors" --cost-model eq4
expect 0 "--cost-model eq3\|eq3\+pairs" -- "$ramp" eval --help
expect 0 "theta = \[[^],]*(, [^],]*){4}\]" -- "$ramp" fit "$tmp/con.safetensors" -o "$tmp/p5.json" \
  --cost-model eq3+pairs
grep -q '"cost_terms":.\["1", "waves", "tiles", "active", "pairs"\]' "$tmp/p5.json" ||
  fail "ramp fit --cost-model eq3+pairs: no five-term cost_terms in $(cat "$tmp/p5.json")"
n5=$(grep -cE '"theta":.\[[^],]*(, [^],]*){4}\]' "$tmp/p5.json")
ne=$(grep -c '"config":' "$tmp/p5.json")
[ "$n5" -ge 1 ] && [ "$n5" = "$ne" ] || fail "five-term plan: $n5 five-theta entries of $ne"
"$ramp" fit "$tmp/con.safetensors" -o "$tmp/p5b.json" >/dev/null 2>&1 || fail "ramp fit (default)"
cmp -s "$tmp/p5.json" "$tmp/p5b.json" || fail "ramp fit's default differs from --cost-model eq3+pairs"
"$ramp" fit "$tmp/con.safetensors" -o "$tmp/p4.json" --cost-model eq3 >/dev/null 2>&1 || fail "ramp fit --cost-model eq3"
grep -q '"pairs"' "$tmp/p4.json" && fail "the eq3 plan names pairs"
grep -q '"cost_terms":.\["1", "waves", "tiles", "active"\]' "$tmp/p4.json" ||
  fail "ramp fit --cost-model eq3: no four-term cost_terms in $(cat "$tmp/p4.json")"
expect 2 "--cost-model tilecount: expected eq3 or eq3\+pairs" -- "$ramp" fit "$tmp/con.safetensors" \
  -o "$tmp/p.json" --cost-model tilecount
[ -e "$tmp/p.json" ] && fail "ramp fit --cost-model tilecount wrote a plan"
expect 0 "--cost-model eq3\|eq3\+pairs" -- "$ramp" fit --help
expect 0 "eq3\+pairs \(the default\)" -- "$ramp" fit --help

finish cli_eval_tables
