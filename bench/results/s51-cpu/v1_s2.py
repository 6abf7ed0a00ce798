#!/usr/bin/env python3
"""Why kernel v2's r8.w128.s2 is 1-2% slower than v1's on two DeepSeek-V3 EP8
cells, from s33-run1's one-call timings (both kernels, the same 80 loads,
each timed twice; the faster of the two runs per cell) and the two
kernels' resources (`ramp configs --model deepseek-v3 --layout ep8 --kernel
v1|v2`). Session 51, no GPU.

    python3 bench/results/s51-cpu/v1_s2.py
"""
import importlib.util
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
D = os.path.join(ROOT, "bench", "results", "s33-run1", "part1", "v1v2")
_s = importlib.util.spec_from_file_location("v", os.path.join(ROOT, "bench", "v1_vs_v2.py"))
_v = importlib.util.module_from_spec(_s)
_s.loader.exec_module(_v)


def read(name):
    m, d = _v.read_safetensors(os.path.join(D, name + ".safetensors"))
    return m["configs"].split(","), d["loads"], d["times_us"].astype(np.float64)


runs = {n: read(n) for n in ("v1a", "v1b", "v2a", "v2b")}
c, loads, _ = runs["v1a"]
for n, (cn, ln, _) in runs.items():  # one list of configurations and loads in all four
    assert cn == c and np.array_equal(ln, loads), f"{n}: other configurations or loads than v1a"
v1 = np.minimum(runs["v1a"][2], runs["v1b"][2])
v2 = np.minimum(runs["v2a"][2], runs["v2b"][2])
pairs = loads.sum(axis=1)
m = pairs > 0
base = v1[:, c.index("r8.w128.s2")]
print("| v2 configuration | over v1's r8.w128.s2: median | worst | cells slower (of %d) |" % m.sum())
print("|---|---|---|---|")
for name in ("r8.w128.s2", "r8.w128.s3", "r8.w128.s4"):
    r = v2[m, c.index(name)] / base[m]
    print(f"| {name} | {np.median(r):.3f} | {r.max():.3f} | {(r > 1).sum()} |")
print()
print("| pairs | v1 r8.w128.s2 (us) | v2 r8.w128.s2 | v2 r8.w128.s3 | v2 r8.w128.s4 |")
print("|---|---|---|---|---|")
for k in np.where(m & (v2[:, c.index("r8.w128.s2")] > base))[0]:
    print(f"| {pairs[k]} | {base[k]:.1f} | " +
          " | ".join(f"{v2[k, c.index(n)]:.1f}" for n in ("r8.w128.s2", "r8.w128.s3", "r8.w128.s4")) + " |")
