#!/usr/bin/env python3
"""stack_ab.py - an A/B (or A/B/C...) of bench_stack runs, one table.

usage: stack_ab.py [--impl IMPL] [--csv] NAME=DIR[,DIR...] NAME=DIR[,DIR...] ...

Each NAME is one variant (a compile-time switch, a plan); its DIRs are
bench_stack --out-dir folders (each holding one stack-*.csv), repeats of
the same variant, ideally run in alternation with the other variants' (a
GPU's state drifts over a call). Per load (tokens, routing): each variant's
mean over its repeats of the per-layer median (IMPL, default ramp-stack),
the spread of its repeats (max - min: the A/A figure to read a difference
against), the configuration it ran, and each later variant's difference from
the first. Markdown by default, CSV with --csv. Exit 1 on a folder without
a stack CSV or a load missing from a variant, 2 on bad usage.
"""
import csv
import glob
import os
import sys


def usage(out):
    print(__doc__.strip().split("\n\n")[1], file=out)


def load(d, impl):
    paths = sorted(glob.glob(os.path.join(d, "stack-*.csv")))
    if not paths:
        raise ValueError(f"{d}: no stack-*.csv (a bench_stack --out-dir folder?)")
    rows = {}
    for p in paths:
        with open(p, newline="") as f:
            lines = [l for l in f if not l.startswith("#")]
        for r in csv.DictReader(lines):
            if r.get("impl") != impl:
                continue
            try:
                key = (int(r["tokens"]), r["routing"])
                rows[key] = (float(r["us_median"]), r["config"])
            except (KeyError, ValueError) as e:
                raise ValueError(f"{p}: not a bench_stack CSV ({e})")
    if not rows:
        raise ValueError(f"{d}: no rows of impl {impl}")
    return rows


def main(argv):
    args = argv[1:]
    if not args or args[0] in ("-h", "--help"):
        usage(sys.stdout if args else sys.stderr)
        return 0 if args else 2
    impl, as_csv, variants = "ramp-stack", False, []
    while args:
        a = args.pop(0)
        if a == "--impl" and args:
            impl = args.pop(0)
        elif a == "--csv":
            as_csv = True
        elif "=" in a and not a.startswith("-"):
            name, dirs = a.split("=", 1)
            dl = [d for d in dirs.split(",") if d]
            if not name or not dl:
                print(f"stack_ab.py: '{a}': want NAME=DIR[,DIR...]", file=sys.stderr)
                return 2
            variants.append((name, dl))
        else:
            print(f"stack_ab.py: unknown argument '{a}'", file=sys.stderr)
            usage(sys.stderr)
            return 2
    if len(variants) < 2:
        print("stack_ab.py: give at least two variants (NAME=DIR...)", file=sys.stderr)
        return 2
    data = []
    try:
        for name, dl in variants:
            data.append((name, [load(d, impl) for d in dl]))
    except (OSError, ValueError) as e:
        print(f"stack_ab.py: {e}", file=sys.stderr)
        return 1
    keys = sorted(data[0][1][0])
    head = ["tokens", "routing"]
    for name, _ in data:
        head += [f"{name}_config", f"{name}_us", f"{name}_spread"]
    head += [f"{name}-{data[0][0]}" for name, _ in data[1:]]
    out = []
    for k in keys:
        row, means = [str(k[0]), k[1]], []
        for (name, reps), (_, dirs) in zip(data, variants):
            missing = [d for d, r in zip(dirs, reps) if k not in r]
            if missing:
                print(f"stack_ab.py: {name}: load {k[0]} {k[1]} missing from {missing[0]}",
                      file=sys.stderr)
                return 1
            v = [r[k][0] for r in reps]
            m = sum(v) / len(v)
            means.append(m)
            row += [reps[0][k][1], f"{m:.2f}", f"{max(v) - min(v):.2f}"]
        row += [f"{m - means[0]:+.2f}" for m in means[1:]]
        out.append(row)
    if as_csv:
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(head)
        w.writerows(out)
    else:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in out:
            print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
