#!/usr/bin/env python3
"""s21-run5: the stall table from Nsight Compute's raw metrics (ncu-raw.csv.gz).

Kernels are in launch order (bench_layer, 1,024 tokens, uniform first):
r48-tx/: 0-19 the polymorphic kernel running r48.w256.s4 (layer graphs and
forced rows), 20-23 r48 alone (exact grid); r48-r8/: 0-11 and 12-15 the
same. Usage: python3 stalls.py [DIR] (default: this script's folder)."""
import csv, gzip, os, statistics, sys

here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


def load(plan):
    with gzip.open(os.path.join(here, plan, "ncu-raw.csv.gz"), "rt") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[2:]  # header, (units row skipped), kernels


def median(rows, idx, col):
    vals = []
    for i in idx:
        try:
            vals.append(float(rows[i][col].replace(",", "")))
        except ValueError:
            pass
    return statistics.median(vals) if vals else float("nan")


h_tx, tx = load("r48-tx")
h_r8, r8 = load("r48-r8")
if h_tx != h_r8:
    sys.exit("stalls.py: the two reports have different metrics")
for rows, idx, name in ((tx, range(0, 20), "ramp_moe_poly_v2"), (tx, range(20, 24), "ramp_moe_v2"),
                        (r8, range(0, 12), "ramp_moe_poly_v2"), (r8, range(12, 16), "ramp_moe_v2")):
    got = {rows[i][h_tx.index("Kernel Name")] for i in idx}
    if got != {name}:
        sys.exit(f"stalls.py: expected {name} at kernels {idx}, found {got}")
sets = {"in .tx menu": (tx, range(0, 20)), "alone": (tx, range(20, 24)),
        "in r8 menu": (r8, range(0, 12)), "alone (2)": (r8, range(12, 16))}
metrics = ["gpu__time_duration.sum", "sm__cycles_active.avg", "smsp__inst_executed.sum",
           "launch__barrier_count"] + sorted(
    n for n in h_tx if n.startswith("smsp__average_warps_issue_stalled_")
    and n.endswith("_per_issue_active.ratio"))
print(f"{'r48.w256.s4, 1,024 uniform':44}" + "".join(f"{k:>14}" for k in sets))
for m in metrics:
    c = h_tx.index(m)
    vals = [median(r, i, c) for r, i in sets.values()]
    if all(abs(v) < 0.02 for v in vals):
        continue
    label = m.replace("smsp__average_warps_issue_stalled_", "stall ").replace(
        "_per_issue_active.ratio", " (cycles/issue)")
    print(f"{label:44}" + "".join(f"{v:14.4g}" for v in vals))
