#!/usr/bin/env python3
"""timeline_balance.py - what balancing the MoE kernel's blocks could win,
from bench_stack/bench_layer --timeline CSVs (kernels/timeline.cuh's
events; session 48).

    python3 bench/timeline_balance.py DIR_OR_CSV...   (CSVs may be gzipped: .csv.gz)

One line per stamped run of the first MoE kernel (kernel 1) whose blocks ran
a tile (producer-done stamp e2 and first-request stamp e6 set), times in us
after the run's selection starts:
  blocks     blocks that ran a tile
  tiles      the tiles they ran: the CSV's `tiles` column where the kernel
             stamped it (session 48 on); for older CSVs inferred: a block
             whose request-to-end time is over 1.45x the shortest, in a run
             whose longest is over 1.6x it, ran two (the static stride's
             second wave), else one
  end        the blocks' mean and latest end (max of the consumers' stamps)
  left       latest producer done - mean block end: > 0 when some block still
             had stages to ask for as the mean block ended; <= 0 when every
             stage of every block was in flight or done by then, so moving
             unissued work from late blocks to idle ones could win nothing
  fluid      the end if every block kept its own measured rate (tiles per
             us from its first request to its end) and the tiles were shared
             out in proportion (median first request + tiles / sum of rates)
  gain       latest end - fluid: what dynamic balancing at tile
             granularity could take off the layer, at most, were the rates
             fixed (they are not: a block that stops frees bandwidth)
  latest on, groups
             the latest end's SM and, when the blocks' ends fall in groups
             (gaps over 10% of the spread between sorted ends), their sizes
With RAMP_MV2_DYN (tiles claimed, not strided) a block runs as many tiles as
it claims; only the stamped count says how many.
Exit status 0; 1 when a file is not a timeline CSV or none is found; 2 on
usage errors.
"""
import csv
import os
import statistics
import sys

from timeline_head import csvs, open_csv  # (the same files: timeline-*.csv[.gz] under each folder)


NEEDED = ("what", "tokens", "routing", "config", "run", "kernel", "block", "e0", "e2", "e3",
          "e4", "e6")


def rows_of(path):
    """the CSV's rows; None (with a message) when it is not a timeline CSV"""
    with open_csv(path) as f:
        r = csv.DictReader(l for l in f if not l.startswith("#"))
        missing = [c for c in NEEDED if c not in (r.fieldnames or [])]
        if missing:
            print(f"timeline_balance.py: {path}: not a --timeline CSV (no column "
                  f"{missing[0]})", file=sys.stderr)
            return None
        return list(r)


def groups(ends):
    """sizes of the groups of sorted ends split at gaps > 10% of the spread"""
    e = sorted(ends)
    spread = e[-1] - e[0]
    if spread <= 0:
        return [len(e)]
    out, n = [], 1
    for a, b in zip(e, e[1:]):
        if b - a > 0.1 * spread:
            out.append(n)
            n = 0
        n += 1
    out.append(n)
    return out


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    paths = list(csvs(argv[1:]))
    for p in argv[1:]:
        if not os.path.exists(p):
            print(f"timeline_balance.py: {p}: no such file or folder", file=sys.stderr)
            return 2
    if not paths:
        print("timeline_balance.py: no timeline-*.csv[.gz] under " + " ".join(argv[1:]), file=sys.stderr)
        return 1
    bad = 0
    print(f"{'file':18s} {'what':5s} {'tok':>4s} {'routing':8s} {'config':26s} | blocks tiles |"
          f"  end mean/max | left |  fluid |  gain | latest on, groups")
    for path in paths:
        rows = rows_of(path)
        if rows is None:
            bad = 1
            continue
        runs = {}
        for r in rows:
            runs.setdefault((r["what"], r["tokens"], r["routing"], r["config"], r["run"]), []).append(r)
        tag = os.path.basename(os.path.dirname(path)) or os.path.basename(path)
        for key, rs in runs.items():
            sel = [r for r in rs if r["kernel"] == "0" and int(r["e0"]) >= 0]
            ker = [r for r in rs if r["kernel"] == "1" and int(r["e0"]) >= 0 and
                   int(r["e2"]) >= 0 and int(r["e6"]) >= 0]
            if not sel or len(ker) < 2:
                continue
            t0 = min(int(r["e0"]) for r in sel)
            us = lambda v: (int(v) - t0) / 1e3
            req = [us(r["e6"]) for r in ker]
            end = [max(us(r["e3"]), us(r["e4"])) for r in ker]
            prod = [us(r["e2"]) for r in ker]
            dur = [e - q for e, q in zip(end, req)]
            if min(dur) <= 0:
                continue
            lo = min(dur)
            two = max(dur) > 1.6 * lo
            stamped = [int(r.get("tiles") or -1) for r in ker]
            if all(n > 0 for n in stamped):
                tiles = stamped
            else:
                tiles = [2 if two and d > 1.45 * lo else 1 for d in dur]
            rate = sum(t / d for t, d in zip(tiles, dur))
            fluid = statistics.median(req) + sum(tiles) / rate
            mean_end = statistics.mean(end)
            late = max(range(len(end)), key=lambda i: end[i])
            sm = ker[late].get("sm", "")
            sm = f"sm {int(sm) - 1}" if sm not in ("", "-1", "0") else "-"
            g = groups(end)
            print(f"{tag:18s} {key[0]:5s} {key[1]:>4s} {key[2]:8s} {key[3]:26s} | {len(ker):6d} "
                  f"{sum(tiles):5d} | {mean_end:6.1f}/{max(end):6.1f} | {max(prod) - mean_end:4.1f} |"
                  f" {fluid:6.1f} | {max(end) - fluid:5.1f} | {sm}, "
                  + ("/".join(str(n) for n in g) if len(g) > 1 else "one"))
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
