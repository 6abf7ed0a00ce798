#!/usr/bin/env python3
"""How much weight re-reading multicast pairs of narrow row tiles could save
on the shipped datasets' memory-bound loads (session 45).

For each load of <= 512 pairs, the configuration the dataset times fastest,
if it is a narrow tile (rows <= 64): its row tiles R = sum ceil(n_e / b)
laid out expert after expert as the selection kernel lays them out, then
  - plain: every row tile streams its expert's weights (R expert-streams);
  - multicast, today's layout: pairs (2p, 2p + 1) that hold one expert share
    one stream (R - shared pairs);
  - multicast, each expert's tiles starting at an even index (a phantom tile
    where its count is odd): R' = sum roundup2(ceil(n_e / b)) tiles,
    R' / 2 streams, R' - R phantoms.
Prints the medians per band of pairs. Reads the datasets with numpy only.
Usage: pair_alignment.py DATASET.safetensors ...
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from costmodel_forms import read_dataset  # noqa: E402 (bench/)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        meta, a = read_dataset(path)
        names = meta["configs"].split(",")
        rows = np.array([int(c.split(".")[0][1:]) for c in names])
        times = a["times_us"]
        nexp = a["nexp"]
        print(f"{path}: {len(names)} configurations, {times.shape[0]} loads")
        print("| pairs | loads | best narrow | R | shared today | streams today | R' aligned "
              "| streams aligned | phantoms |")
        print("|---|---|---|---|---|---|---|---|---|")
        bands = [(1, 16), (17, 64), (65, 256), (257, 512)]
        for lo, hi in bands:
            rec = []
            for i in range(times.shape[0]):
                n = a["loads"][i, :nexp[i]].astype(int)
                P = int(n.sum())
                if not lo <= P <= hi:
                    continue
                c = int(np.argmin(times[i]))
                b = rows[c]
                if b > 64:
                    continue
                t = -(-n // b)
                R = int(t.sum())
                owner = np.repeat(np.arange(len(n)), t)
                shared = int(np.sum(owner[0:R - 1:2] == owner[1:R:2])) if R > 1 else 0
                ta = (t + 1) // 2 * 2
                Ra = int(ta.sum())
                rec.append((R, shared, R - shared, Ra, Ra // 2, Ra - R, b))
            if not rec:
                continue
            r = np.array(rec)
            med = np.median(r, 0)
            bs = np.bincount(r[:, 6]).argmax()
            print(f"| {lo}-{hi} | {len(rec)} | r{bs} (most often) | {med[0]:.0f} | {med[1]:.0f} | "
                  f"{med[2]:.0f} | {med[3]:.0f} | {med[4]:.0f} | {med[5]:.0f} |")
        print()


if __name__ == "__main__":
    main()
