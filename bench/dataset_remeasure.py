#!/usr/bin/env python3
"""A timing dataset against its re-measurement: what the new file's extra
configurations buy, per band of pairs (local token-expert pairs of a load).

    bench/dataset_remeasure.py OLD.safetensors NEW.safetensors

Both files must hold the same loads in the same order (same traces, seeds
and batch counts: `ramp dataset build` makes them so); NEW's configurations
must include OLD's. Prints a Markdown table: per band, the median best time
in OLD, in NEW over OLD's configurations only (the drift of the same
configurations between the two runs), in NEW over all its configurations,
the median and smallest ratio of the last two, how many loads a
configuration OLD lacks wins, and the one that wins most; then the same
configurations' new / old times (median, p10, p90). Session 42 used it on
Qwen3-30B EP8's dataset re-measured over kernel v2's whole space
(bench/results/s40-run1/README.md). Needs numpy (the reader is
bench/v1_vs_v2.py's).
"""
import argparse
import importlib.util
import os
import sys

import numpy as np

_spec = importlib.util.spec_from_file_location(
    "v1_vs_v2", os.path.join(os.path.dirname(os.path.abspath(__file__)), "v1_vs_v2.py"))
_v = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_v)

BANDS = ((1, 16), (17, 64), (65, 128), (129, 256), (257, 512), (513, 2048), (2049, 1 << 62))


def load(path):
    if not os.path.isfile(path):
        sys.exit(f"dataset_remeasure: {path}: no such file")
    meta, d = _v.read_safetensors(path)
    if meta.get("format") != "ramp-timing":
        sys.exit(f"dataset_remeasure: {path} is not a timing dataset")
    times = d["times_us"].astype(float)
    return meta["configs"].split(","), d["loads"].astype(np.int64), np.where(times > 0, times, np.inf)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    a = ap.parse_args()
    co, lo, to = load(a.old)
    cn, ln, tn = load(a.new)
    if lo.shape != ln.shape or not (lo == ln).all():
        sys.exit(f"dataset_remeasure: {a.old} and {a.new} hold different loads "
                 f"({lo.shape[0]} and {ln.shape[0]}, or the counts differ)")
    missing = [c for c in co if c not in cn]
    if missing:
        sys.exit(f"dataset_remeasure: {a.new} lacks {len(missing)} of {a.old}'s configurations "
                 f"({missing[0]}, ...)")
    idx = [cn.index(c) for c in co]
    pairs = lo.sum(axis=1)
    best_old = to.min(axis=1)
    best_same = tn[:, idx].min(axis=1)
    best_all = tn.min(axis=1)
    winner = np.array(cn)[tn.argmin(axis=1)]
    extra = np.array([w not in co for w in winner])
    print(f"{len(co)} configurations in {os.path.basename(a.old)}, {len(cn)} in "
          f"{os.path.basename(a.new)}, {lo.shape[0]} loads\n")
    print("| pairs | loads | old best (us) | new, old's configurations (us) | new, all (us) "
          "| all / old's configurations: median (min) | loads a new configuration wins "
          "| most frequent new winner |")
    print("|---|---|---|---|---|---|---|---|")
    for lo_p, hi_p in BANDS:
        m = (pairs >= lo_p) & (pairs <= hi_p) & np.isfinite(best_old) & np.isfinite(best_all)
        if not m.any():
            continue
        band = f"{lo_p}-{hi_p}" if hi_p < BANDS[-1][1] else f">= {lo_p}"
        ratio = best_all[m] / best_same[m]
        wins = list(winner[m & extra])
        top = max(sorted(set(wins)), key=wins.count) if wins else None
        print(f"| {band} | {int(m.sum())} | {np.median(best_old[m]):.1f} | "
              f"{np.median(best_same[m]):.1f} | {np.median(best_all[m]):.1f} | "
              f"{np.median(ratio):.3f} ({ratio.min():.3f}) | {len(wins)} | "
              + (f"`{top}` ({wins.count(top)})" if top else "-") + " |")
    r = tn[:, idx] / to
    r = r[np.isfinite(r)]
    print(f"\nthe same configuration, new / old: median {np.median(r):.3f}, "
          f"p10 {np.percentile(r, 10):.3f}, p90 {np.percentile(r, 90):.3f} over {r.size} cells")


if __name__ == "__main__":
    main()
