#!/usr/bin/env python3
"""ncu_source.py - where a kernel's warps stall, by code address, from Nsight
Compute's source page (`ncu -i REPORT --csv --page source --print-source sass`,
gzipped or not; sections SourceCounters and WarpStateStats). Standard
library only.

    bench/ncu_source.py NAME=SOURCE.csv[.gz] [NAME=... ...] [--runs] [--csv FILE]

For each kernel: the stall samples by reason (the largest first), the
instructions executed, and the executed footprint (distinct 128-byte lines
holding an executed instruction; the span from the first to the last). With
--runs, each stretch of executed code (executed instructions no more than
512 bytes apart) with its samples and its "no instruction" samples: where
the instruction fetch misses are. --csv writes one row per kernel (name,
samples, instructions, footprint, every stall reason) for other tools.

Why (kernels/moe_v2.md, session 27): the polymorphic kernel runs an entry
5-14% longer than the entry's own kernel with the same instructions; the
difference is in "no instruction" samples, and it moves with the entry's
place in the code.
"""
import argparse
import csv
import gzip
import os
import sys

NEED = ("Address", "Source", "Instructions Executed", "# Samples")


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", newline="") as f:
            rows = list(csv.reader(f))
    except (OSError, EOFError, UnicodeDecodeError, csv.Error) as e:
        sys.exit(f"{path}: cannot read: {e}")
    # row 0 names the kernel, row 1 is the header (ncu 2025's source page)
    hdr_at = next((i for i, r in enumerate(rows[:3]) if "Address" in r), None)
    if hdr_at is None or not set(NEED) <= set(rows[hdr_at]):
        sys.exit(f"{path}: not an ncu source-page CSV (needs columns {', '.join(NEED)})")
    hdr = rows[hdr_at]
    stalls = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    out = []
    for n, r in enumerate(rows[hdr_at + 1:], start=hdr_at + 2):
        if len(r) != len(hdr):
            continue  # a second kernel's name row, or a footer
        d = dict(zip(hdr, r))
        try:
            rec = {"addr": int(d["Address"], 16), "src": d["Source"].strip(),
                   "exec": int(d["Instructions Executed"] or 0), "samples": int(d["# Samples"] or 0)}
            rec.update({s[6:]: int(d[s] or 0) for s in stalls})
        except ValueError as e:
            sys.exit(f"{path}: line {n}: {e}")
        out.append(rec)
    if not out:
        sys.exit(f"{path}: no instruction rows")
    return out, [s[6:] for s in stalls]


def runs_of(rows, gap=512):
    base = rows[0]["addr"]
    runs = []
    for r in rows:
        if r["exec"] <= 0:
            continue
        a = r["addr"] - base
        if runs and a - runs[-1]["end"] <= gap:
            cur = runs[-1]
        else:
            cur = {"start": a, "end": a, "n": 0, "samples": 0, "no_inst": 0}
            runs.append(cur)
        cur["end"] = a
        cur["n"] += 1
        cur["samples"] += r["samples"]
        cur["no_inst"] += r.get("no_inst", 0)
    return runs


def summary(name, rows, reasons):
    tot = {s: sum(r[s] for r in rows) for s in reasons}
    base = rows[0]["addr"]
    hot = [r["addr"] - base for r in rows if r["exec"] > 0]
    return {"name": name, "samples": sum(r["samples"] for r in rows),
            "instructions": sum(r["exec"] for r in rows),
            "footprint_kb": len({a // 128 for a in hot}) * 128 / 1024,
            "span_kb": (max(hot) - min(hot) + 16) / 1024 if hot else 0, **tot}


def main():
    ap = argparse.ArgumentParser(
        description="Stall samples by reason and by stretch of code, from ncu's source page.")
    ap.add_argument("kernels", nargs="+", metavar="NAME=SOURCE.csv[.gz]")
    ap.add_argument("--runs", action="store_true",
                    help="each stretch of executed code with its samples and no-instruction samples")
    ap.add_argument("--csv", metavar="FILE", help="one row per kernel, for other tools")
    a = ap.parse_args()
    table, reasons_all = [], []
    for spec in a.kernels:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            sys.exit(f"'{spec}': expected NAME=SOURCE.csv[.gz]")
        rows, reasons = read(path)
        s = summary(name, rows, reasons)
        table.append(s)
        reasons_all += [r for r in reasons if r not in reasons_all]
        top = sorted(reasons, key=lambda k: -s[k])[:8]
        print(f"{name}: {s['samples']} samples, {s['instructions']} instructions executed, "
              f"footprint {s['footprint_kb']:.1f} KB over a span of {s['span_kb']:.1f} KB")
        print("  " + ", ".join(f"{k} {s[k]}" for k in top))
        if a.runs:
            for r in runs_of(rows):
                if r["n"] >= 3 or r["no_inst"]:
                    print(f"  +0x{r['start']:05x}..0x{r['end']:05x} {r['n']:5} instructions, "
                          f"samples {r['samples']:5}, no_inst {r['no_inst']:4}")
    if a.csv:
        cols = ["name", "samples", "instructions", "footprint_kb", "span_kb"] + reasons_all
        tmp = a.csv + ".tmp"
        with open(tmp, "w", newline="") as f:  # no partial file on failure
            w = csv.DictWriter(f, fieldnames=cols, restval=0)
            w.writeheader()
            for s in table:
                w.writerow(s)
        os.replace(tmp, a.csv)


if __name__ == "__main__":
    main()
