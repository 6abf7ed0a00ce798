#!/usr/bin/env python3
"""timeline_head.py - the polymorphic kernel's head, step by step, from
bench_stack/bench_layer --timeline CSVs (kernels/timeline.cuh's events).

    python3 bench/timeline_head.py DIR_OR_CSV...

(a folder: every timeline-*.csv under it, or its gzipped .csv.gz where only
that is there, as bench/results stores the large ones since session 51)

One line per stamped run (what, tokens, routing, config): microseconds after
the run's selection kernel starts, median over the MoE kernel's blocks (the
first kernel of the chain, kernel 1) of each step on the way to its first
weights: the selection's end, the block's start, past its wait, the choice
arrived (e8), the entry set up (e9), past the block barrier (e10), the
producer past setmaxnreg (e11), the first weights requested (e6) and landed
(e7); then over the blocks that ran a tile, when their producer finished
(mean / latest) and when they ended (mean / latest, and latest - mean: what
the layer would save if every block ended together; session 47). '-' where
a step was not stamped (CSVs written before session 47 have no e8-e11)."""
import csv
import glob
import gzip
import os
import statistics
import sys

STEPS = [("start", "e0"), ("wait", "e1"), ("choice", "e8"), ("setup", "e9"), ("bar", "e10"),
         ("maxnreg", "e11"), ("asked", "e6"), ("landed", "e7")]


def csvs(args):
    """the timeline CSVs of each argument: a file as given; under a folder
    every timeline-*.csv, and every timeline-*.csv.gz without a plain twin
    (so a run is never read twice)"""
    for a in args:
        if os.path.isdir(a):
            plain = glob.glob(os.path.join(a, "**", "timeline-*.csv"), recursive=True)
            gz = [g for g in glob.glob(os.path.join(a, "**", "timeline-*.csv.gz"), recursive=True)
                  if g[:-3] not in plain]
            yield from sorted(plain + gz)
        else:
            yield a


def open_csv(path):
    """a timeline CSV as text; bench/results stores the large ones gzipped
    (session 51: the device's 64 MiB limit on the working tree)"""
    if path.endswith(".gz"):
        return gzip.open(path, "rt", newline="")
    return open(path, newline="")


def rows_of(path):
    with open_csv(path) as f:
        return list(csv.DictReader(l for l in f if not l.startswith("#")))


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    print(f"{'file':28s} {'what':6s} {'tok':>4s} {'routing':8s} {'config':22s} | sel end | " +
          " | ".join(f"{n:>7s}" for n, _ in STEPS) + " | prod mean/max |  end mean/max | late")
    for path in csvs(argv[1:]):
        runs = {}
        for r in rows_of(path):
            runs.setdefault((r["what"], r["tokens"], r["routing"], r["config"], r["run"]), []).append(r)
        tag = os.path.basename(os.path.dirname(path)) or os.path.basename(path)
        for key, rs in runs.items():
            sel = [r for r in rs if r["kernel"] == "0" and int(r["e0"]) >= 0]
            if not sel:
                continue
            t0 = min(int(r["e0"]) for r in sel)
            sel_end = max(int(r["e3"]) for r in sel) - t0
            ker = [r for r in rs if r["kernel"] == "1" and int(r["e0"]) >= 0]

            def med(col):
                v = [int(r[col]) - t0 for r in ker if col in r and int(r[col]) >= 0]
                return f"{statistics.median(v) / 1e3:7.2f}" if v else f"{'-':>7s}"

            tiled = [r for r in ker if int(r["e5"]) < 0 and int(r["e2"]) >= 0]

            def span(v):
                return f"{statistics.mean(v) / 1e3:6.1f}/{max(v) / 1e3:6.1f}" if v else f"{'-':>13s}"

            prod = [int(r["e2"]) - t0 for r in tiled]
            ends = [max(int(r["e3"]), int(r["e4"])) - t0 for r in tiled]
            late = f"{(max(ends) - statistics.mean(ends)) / 1e3:4.1f}" if ends else "   -"
            print(f"{tag[:28]:28s} {key[0][:6]:6s} {key[1]:>4s} {key[2][:8]:8s} {key[3][:22]:22s} | "
                  f"{sel_end / 1e3:7.2f} | " + " | ".join(med(c) for _, c in STEPS) +
                  f" | {span(prod)} | {span(ends)} | {late}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
