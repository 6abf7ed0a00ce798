#!/usr/bin/env python3
"""What one row tile costs a kernel v2 configuration, from a timing dataset
measured on the GPU: fits t = a + b x row tiles + c x pairs (least squares)
to the configuration's times on the loads with at least --min-pairs pairs,
row tiles = sum over experts of ceil(count / rows). b over the expert's FP8
weight bytes (3 x h x d) is the rate at which each row tile streams them:
near the HBM copy rate means every row tile reads its expert from memory
again. Then the grouped tile order's prediction (kernels/moe_v2.md, session
8): a's and c's terms kept, the first row tile of each expert at b, the
others reading from L2 at --l2-rate TB/s.

    bench/row_tile_fit.py data/timing/mixtral-8x22b-ep8-v2.safetensors r128.w128.s4.ph2.dk2 \\
        --min-pairs 128 --loads 256,512,1024
    bench/row_tile_fit.py data/timing/olmoe-ep8-v2.safetensors --best

--best: by pair band, the loads' best time against the row tiles their best
configuration runs (session 40: once every expert is active, Qwen3-30B's and
OLMoE's time grows ~0.6-0.9 us a row tile).

Needs numpy only (the reader is docs/formats.md's, from bench/v1_vs_v2.py).
"""
import argparse
import importlib.util
import os
import re
import sys

import numpy as np

_spec = importlib.util.spec_from_file_location(
    "v1_vs_v2", os.path.join(os.path.dirname(os.path.abspath(__file__)), "v1_vs_v2.py"))
_v = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_v)


def best_table(configs, loads, times, pairs):
    """Per pair band: the loads' best times, the row tiles their best
    configuration runs and their active experts (medians)."""
    t = np.where(times > 0, times, np.inf)   # 0: not measured
    best = t.min(axis=1)
    rows = np.array([int(re.match(r"r(\d+)\.", c).group(1)) for c in configs])[t.argmin(axis=1)]
    tiles = np.ceil(loads / rows[:, None]).sum(axis=1)
    active = (loads > 0).sum(axis=1)
    print("| pairs | loads | best (median, us) | its row tiles (median) | active experts (median) |")
    print("|---|---|---|---|---|")
    for lo, hi in ((1, 16), (17, 64), (65, 128), (129, 256), (257, 512), (513, 2048), (2049, 1 << 30)):
        m = (pairs >= lo) & (pairs <= hi) & np.isfinite(best)
        if m.any():
            band = f"{lo}-{hi}" if hi < (1 << 30) else f">= {lo}"
            print(f"| {band} | {int(m.sum())} | {np.median(best[m]):.1f} | {np.median(tiles[m]):.0f} "
                  f"| {np.median(active[m]):.0f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset")
    ap.add_argument("config", nargs="*", help="configuration names, e.g. r128.w128.s4.ph2")
    ap.add_argument("--best", action="store_true",
                    help="also a Markdown table by pair band: the best configuration's median "
                         "time, its row tiles (sum over experts of ceil(count / rows)) and the "
                         "active experts (what makes a load's time grow once all are active)")
    ap.add_argument("--min-pairs", type=int, default=256, help="loads fitted: at least this many pairs")
    ap.add_argument("--loads", default="", help="comma list of pair counts to predict the grouped order at")
    ap.add_argument("--l2-rate", default="5.85,8", help="TB/s of a row tile's re-read from L2 (comma list)")
    a = ap.parse_intermixed_args()  # (--best may come before the configurations)
    if not a.config and not a.best:
        ap.error("name at least one configuration, or --best")
    if not os.path.isfile(a.dataset):
        ap.error(f"{a.dataset}: no such file")
    meta, d = _v.read_safetensors(a.dataset)
    if meta.get("format") != "ramp-timing":
        sys.exit(f"row_tile_fit: {a.dataset} is not a timing dataset")
    configs = meta["configs"].split(",")
    loads = d["loads"].astype(np.int64)
    times = d["times_us"].astype(float)
    pairs = loads.sum(axis=1)
    expert_mb = 3 * int(meta["inter"]) * int(meta["hidden"]) / 1e6
    rates = [float(x) for x in a.l2_rate.split(",")]
    want = [int(x) for x in a.loads.split(",") if x]
    print(f"{meta['model']} {meta['layout']} ({meta.get('kernel', 'v1')}, measured {meta.get('date', '?')} "
          f"on {meta.get('device', '?')}): {meta['experts']} experts/GPU of {expert_mb:.0f} MB; "
          f"loads with >= {a.min_pairs} pairs")
    if a.best:
        best_table(configs, loads, times, pairs)
    for name in a.config:
        if name not in configs:
            sys.exit(f"row_tile_fit: {name} is not a configuration of {a.dataset}")
        k = configs.index(name)
        m = re.match(r"r(\d+)\.", name)
        rows = int(m.group(1))
        tiles = np.ceil(loads / rows).sum(axis=1)
        sel = (pairs >= a.min_pairs) & np.isfinite(times[:, k])
        if sel.sum() < 4:
            sys.exit(f"row_tile_fit: {name}: only {int(sel.sum())} loads with >= {a.min_pairs} pairs")
        A = np.stack([np.ones(sel.sum()), tiles[sel], pairs[sel]], axis=1)
        (ca, cb, cc), *_ = np.linalg.lstsq(A, times[sel, k], rcond=None)
        err = np.median(np.abs(A @ [ca, cb, cc] / times[sel, k] - 1))
        rate = f"{expert_mb / cb:.2f} TB/s" if cb > 0 else "-"
        print(f"  {name}: {int(sel.sum())} loads, t = {ca:.1f} + {cb:.2f} x row tiles + {cc:.4f} x pairs us "
              f"(median error {100 * err:.1f}%); a row tile streams {expert_mb:.0f} MB at {rate}")
        for p in want:
            if int(meta["experts"]) != 1:
                print("    (the grouped prediction is for one expert per GPU: skipped)")
                break
            nt = -(-p // rows)
            now = ca + cb * nt + cc * p
            preds = [ca + cb + (nt - 1) * expert_mb / r + cc * p for r in rates]  # MB / (TB/s) = us
            print(f"    {p} pairs ({nt} row tiles): {now:.0f} us now; grouped "
                  + ", ".join(f"{q:.0f} us ({now / q:.2f}x) at {r:g} TB/s" for q, r in zip(preds, rates)))


if __name__ == "__main__":
    main()
