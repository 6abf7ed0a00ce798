#!/usr/bin/env python3
"""Kernel v2's measured times against the roofline, from timing datasets
measured on the GPU (the kernel alone, each load's best configuration).

Per load: stream = the active experts' FP8 weights (3 h d bytes plus the
128 x 128 block scales) at the copy rate; compute = 2 x pairs x 3 h d at the
dense FP8 rate. A kernel that overlaps the two runs in max(stream, compute);
one that does them one after the other in their sum. Also the blocks a
small load can keep busy: v2 gives one block to each (row tile, 128-column
slice of h), so with one row tile per active expert there are
active x h / 128 blocks for the GPU's SMs, and each block's weight stream
is its SM's: with fewer busy blocks than SMs the weights stream at the
busy blocks' rate, shown per block (the copy rate's fair share per SM is
copy / SMs, 32 GB/s on the H200).

    bench/v2_roofline.py data/timing/olmoe-ep8-v2.safetensors [...] \\
        --copy-tbs 4.246 --dense-tflops 1540 --sms 132

The rates default to those measured in bench/results/targets-2026-12-01.md.
Needs numpy only (the reader is docs/formats.md's, from bench/v1_vs_v2.py).
"""
import argparse
import importlib.util
import os

import numpy as np

_spec = importlib.util.spec_from_file_location(
    "v1_vs_v2", os.path.join(os.path.dirname(os.path.abspath(__file__)), "v1_vs_v2.py"))
_v = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_v)

BANDS = ((1, 64), (65, 512), (513, 2048), (2049, 1 << 30))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", nargs="+", help="v2 timing datasets (.safetensors)")
    ap.add_argument("--copy-tbs", type=float, default=4.246, help="copy rate, TB/s (default 4.246)")
    ap.add_argument("--dense-tflops", type=float, default=1540.0,
                    help="dense FP8 rate, TFLOP/s (default 1540)")
    ap.add_argument("--sms", type=int, default=132, help="SMs of the GPU (default 132)")
    a = ap.parse_args()
    if a.copy_tbs <= 0 or a.dense_tflops <= 0 or a.sms < 1:
        ap.error("--copy-tbs and --dense-tflops must be > 0, --sms >= 1")
    table = []      # printed once every dataset has been read: no partial table on an error
    for path in a.dataset:
        meta, d = _v.read_v2_timing(path, "v2_roofline")
        h, dm = int(meta["inter"]), int(meta["hidden"])
        loads = d["loads"].astype(np.int64)
        times = d["times_us"].astype(float)
        times = np.where(times > 0, times, np.inf)       # 0: not measured
        best = times.min(axis=1)
        pairs = loads.sum(axis=1)
        active = (loads > 0).sum(axis=1)
        ebytes = 3 * h * dm + 4 * (3 * h * dm) // (128 * 128)
        stream = active * ebytes / (a.copy_tbs * 1e12) * 1e6
        compute = 2.0 * pairs * 3 * h * dm / (a.dense_tflops * 1e12) * 1e6
        ok = (pairs > 0) & np.isfinite(best)
        name = os.path.basename(path).replace(".safetensors", "")
        for lo, hi in BANDS:
            m = ok & (pairs >= lo) & (pairs <= hi)
            if m.sum() < 3:
                continue
            add = np.median(best[m] / (stream[m] + compute[m]))
            mx = np.median(best[m] / np.maximum(stream[m], compute[m]))
            share = np.median(compute[m] / (stream[m] + compute[m]))
            blocks = int(np.median(active[m])) * (h // 128)
            busy = np.minimum(active[m] * (h // 128), a.sms)
            per_block = np.median(active[m] * ebytes / (best[m] * 1e-6) / busy / 1e9)
            band = f"{lo}-{hi}" if hi < (1 << 30) else f">= {lo}"
            table.append(f"| {name} | {band} | {int(m.sum())} | {add:.2f} | {mx:.2f} | {share:.2f} "
                         f"| {blocks} ({min(blocks, a.sms) / a.sms:.0%}) | {per_block:.0f} |")
    print("| dataset | pairs | loads | best / (stream + compute) | best / max(stream, compute) "
          "| compute share | blocks at one row tile per expert (of SMs) | weight stream per busy block (GB/s) |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(table))


if __name__ == "__main__":
    main()
