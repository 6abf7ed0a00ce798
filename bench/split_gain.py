#!/usr/bin/env python3
"""What kernel v2's split-K configurations (names ending in .k2: a tile's up
projection split in K over a cluster of two CTAs) gain, from v2 timing
datasets measured on the GPU: per load, the best split-K time against the
best unsplit one (the kernel alone, the oracle choice in each set), by band
of the load's pairs, beside the share of the SMs that one block per active
expert and 128-column slice would keep busy (bench/v2_roofline.py's
measure of a small load; larger loads have more row tiles).

    bench/split_gain.py data/timing/olmoe-ep8-v2.safetensors [...] [--sms 132]

gain = best unsplit / best split-K (> 1: split-K faster). Prints one
markdown table (nothing on an error). Needs numpy only (the reader is
docs/formats.md's, from bench/v1_vs_v2.py).
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

BANDS = ((1, 64), (65, 256), (257, 1024), (1025, 1 << 30))


def gains(path, sms):
    """Rows (name, band, loads, median gain, best gain, loads split-K wins,
    median busy share) of one dataset; exits with a message on a bad file."""
    meta, d = _v.read_v2_timing(path, "split_gain")
    names = meta["configs"].split(",")
    ks = np.array([n.endswith(".k2") for n in names])
    if not ks.any():
        sys.exit(f"split_gain: {path} holds no split-K configuration (.k2): measured before "
                 "session 12?")
    h = int(meta["inter"])
    loads = d["loads"].astype(np.int64)
    t = d["times_us"].astype(float)
    t = np.where(t > 0, t, np.inf)  # 0: not measured
    best_ks, best_un = t[:, ks].min(axis=1), t[:, ~ks].min(axis=1)
    pairs, active = loads.sum(axis=1), (loads > 0).sum(axis=1)
    busy = np.minimum(active * (h // 128), sms) / sms
    ok = (pairs > 0) & np.isfinite(best_ks) & np.isfinite(best_un)
    g = np.where(ok, best_un / np.where(ok, best_ks, 1.0), np.nan)
    name = os.path.basename(path).replace(".safetensors", "")
    rows = []
    for lo, hi in BANDS:
        m = ok & (pairs >= lo) & (pairs <= hi)
        if not m.any():
            continue
        band = f"{lo}-{hi}" if hi < (1 << 30) else f">= {lo}"
        rows.append(f"| {name} | {band} | {int(m.sum())} | {np.median(g[m]):.2f} | "
                    f"{np.max(g[m]):.2f} | {int((g[m] > 1).sum())} | {np.median(busy[m]):.2f} |")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", nargs="+", help="v2 timing datasets (.safetensors)")
    ap.add_argument("--sms", type=int, default=132, help="SMs of the GPU (default 132)")
    a = ap.parse_args()
    if a.sms < 1:
        ap.error("--sms must be >= 1")
    rows = [r for p in a.dataset for r in gains(p, a.sms)]
    print("| dataset | pairs | loads | gain, median | gain, best | loads split-K wins "
          "| SMs busy at one block per active expert and 128-column slice (median share) |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
