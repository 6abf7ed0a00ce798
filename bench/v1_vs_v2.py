#!/usr/bin/env python3
"""Kernel v2 against kernel v1, configuration by configuration, from two
timing datasets of one layout measured on the GPU (data/timing/<layout>.
safetensors and <layout>-v2.safetensors): issue #5's "no configuration
slower than the v1 kernel's same configuration", over every (load,
configuration) cell both datasets measured. Loads are matched by their
per-expert counts (the datasets may hold different subsets of the traces);
configurations by name. Empty loads (no token on the GPU: both kernels
only launch and exit) are reported apart.

    bench/v1_vs_v2.py data/timing/qwen3-30b-ep8.safetensors data/timing/qwen3-30b-ep8-v2.safetensors [...]
    bench/v1_vs_v2.py --csv per-config.csv V1 V2 ...     # one row per (layout, configuration)

Arguments come in pairs (v1 dataset, v2 dataset). Prints a markdown table.
Needs numpy only (the reader is docs/formats.md's).
"""
import argparse
import json
import os
import sys

import numpy as np


def read_safetensors(path):
    buf = open(path, "rb").read()
    n = int(np.frombuffer(buf[:8], "<u8")[0])
    header = json.loads(buf[8:8 + n])
    meta = header.pop("__metadata__", {})
    kinds = {"I32": "<i4", "I64": "<i8", "F32": "<f4", "F64": "<f8", "U8": "u1"}
    return meta, {name: np.frombuffer(buf, kinds[t["dtype"]], offset=8 + n + t["data_offsets"][0],
                                      count=int(np.prod(t["shape"]))).reshape(t["shape"])
                  for name, t in header.items()}


def read_v2_timing(path, tool):
    """A v2 timing dataset's metadata and tensors; exits with "tool: ..." when
    path is missing, is not a timing dataset or holds another kernel's times."""
    if not os.path.isfile(path):
        sys.exit(f"{tool}: {path}: no such file")
    meta, d = read_safetensors(path)
    if meta.get("format") != "ramp-timing":
        sys.exit(f"{tool}: {path} is not a timing dataset (format ramp-timing)")
    if meta.get("kernel", "v1") != "v2":
        sys.exit(f"{tool}: {path} was measured on kernel {meta.get('kernel', 'v1')}, not v2")
    return meta, d


def compare(p1, p2):
    m1, d1 = read_safetensors(p1)
    m2, d2 = read_safetensors(p2)
    if m1.get("format") != "ramp-timing" or m2.get("format") != "ramp-timing":
        sys.exit(f"v1_vs_v2: {p1} or {p2} is not a timing dataset (format ramp-timing)")
    if m1.get("kernel", "v1") != "v1" or m2.get("kernel") != "v2":
        sys.exit(f"v1_vs_v2: expected a v1 then a v2 dataset, got {m1.get('kernel', 'v1')} "
                 f"({p1}) and {m2.get('kernel', 'v1')} ({p2})")
    if d1["loads"].shape[1] != d2["loads"].shape[1]:
        sys.exit(f"v1_vs_v2: {p1} and {p2} have different experts per GPU")
    c1 = m1["configs"].split(",")
    c2 = m2["configs"].split(",")
    common = [c for c in c2 if c in c1]
    # loads matched by their counts: row of v1 for each v2 row, or -1
    where = {}
    for i, row in enumerate(d1["loads"]):
        where.setdefault(row.tobytes(), i)
    rows2 = [j for j, row in enumerate(d2["loads"]) if row.tobytes() in where]
    rows1 = [where[d2["loads"][j].tobytes()] for j in rows2]
    t1 = d1["times_us"][np.ix_(rows1, [c1.index(c) for c in common])].astype(float)
    t2 = d2["times_us"][np.ix_(rows2, [c2.index(c) for c in common])].astype(float)
    pairs = d2["loads"][rows2].sum(axis=1)
    return common, t1, t2, pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("datasets", nargs="+", help="pairs: V1 V2 [V1 V2 ...]")
    ap.add_argument("--csv", help="write one row per (layout, configuration) here")
    a = ap.parse_args()
    if len(a.datasets) % 2:
        ap.error("datasets come in pairs (v1, v2)")
    for p in a.datasets:
        if not os.path.isfile(p):
            ap.error(f"{p}: no such file")
    print("| layout | configurations | loads (empty) | cells, non-empty loads | v2 / v1 median | v2 / v1 worst "
          "| cells v2 slower | configurations never slower | empty loads: v1 / v2 (us, median) |")
    print("|---|---|---|---|---|---|---|---|---|")
    out = []
    for p1, p2 in zip(a.datasets[::2], a.datasets[1::2]):
        name = os.path.basename(p2).replace("-v2.safetensors", "")
        common, t1, t2, pairs = compare(p1, p2)
        ok = np.isfinite(t1) & np.isfinite(t2)
        full = ok & (pairs > 0)[:, None]
        empty = ok & (pairs == 0)[:, None]
        r = np.where(full, t2 / np.where(ok, t1, 1), np.nan)
        worst_cfg = np.nanmax(r, axis=0)
        w = np.unravel_index(np.nanargmax(r), r.shape)
        e1 = np.median(t1[empty]) if empty.any() else float("nan")
        e2 = np.median(t2[empty]) if empty.any() else float("nan")
        print(f"| {name} | {len(common)} | {len(pairs)} ({int((pairs == 0).sum())}) | {int(full.sum())} "
              f"| {np.nanmedian(r):.3f} | {np.nanmax(r):.3f} ({common[w[1]]}, {int(pairs[w[0]])} pairs: "
              f"{t1[w]:.1f} -> {t2[w]:.1f} us) | {int((r > 1).sum())} "
              f"| {int((worst_cfg < 1).sum())} of {len(common)} | {e1:.1f} / {e2:.1f} |")
        for k, c in enumerate(common):
            col = r[:, k]
            out.append((name, c, int(np.isfinite(col).sum()), np.nanmedian(col), np.nanmax(col)))
    if a.csv:
        tmp = a.csv + ".tmp"
        with open(tmp, "w") as f:
            f.write("layout,config,cells,v2_over_v1_median,v2_over_v1_worst\n")
            for row in out:
                f.write(f"{row[0]},{row[1]},{row[2]},{row[3]:.4f},{row[4]:.4f}\n")
        os.replace(tmp, a.csv)


if __name__ == "__main__":
    main()
