#!/usr/bin/env python3
"""bench/cross_gpu.py on the shipped H200 and H100 datasets of the same
loads: its per-load figures against numpy's own reading of the files, its
plan scoring against a one-entry plan's column sums, and its refusals.
Needs RAMP_LIBRARY (a non-sanitized libramp.so, for python/ramp.py's
Plan.pick) and RAMP_CLI (`ramp`, to fit the plans); CTest sets both."""
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "bench", "cross_gpu.py")
DATA = os.path.join(ROOT, "data", "timing")
RAMP = os.environ.get("RAMP_CLI", "ramp")
_spec = importlib.util.spec_from_file_location("v", os.path.join(ROOT, "bench", "v1_vs_v2.py"))
_v = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_v)
failures = 0


def check(ok, what):
    global failures
    if not ok:
        failures += 1
        print("FAIL:", what)


def run(*args):
    p = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def fit(ds, out, *extra):
    subprocess.run([RAMP, "fit", ds, "-o", out, *extra], check=True, capture_output=True)


def times(path):
    meta, d = _v.read_safetensors(path)
    return meta["configs"].split(","), d["loads"], d["times_us"].astype(np.float64), d["batch"]


def main():
    h200 = os.path.join(DATA, "qwen3-30b-ep8-v2.safetensors")
    h100 = os.path.join(DATA, "qwen3-30b-ep8-v2-h100.safetensors")
    with tempfile.TemporaryDirectory(dir=os.environ.get("RAMP_TEST_TMP")) as tmp:
        # the per-load transfer, recomputed here from the files
        ca, loads, ta, _ = times(h200)
        cb, _, tb, batch = times(h100)
        ib = [cb.index(c) for c in ca]
        tb_c = tb[:, ib]
        rows = np.arange(len(loads))
        lost = tb_c[rows, ta.argmin(axis=1)] / tb_c.min(axis=1)
        m = loads.sum(axis=1) >= 1
        same = (ta.argmin(axis=1) == tb_c.argmin(axis=1))[m].mean()
        want = (f"| all | {int(m.sum())} | {same:.0%} | {np.median(lost[m]):.3f} "
                f"| {np.percentile(lost[m], 90):.3f} | {lost[m].max():.3f} |")
        rc, out = run(h200, h100, "--label-a", "H200", "--label-b", "H100")
        check(rc == 0 and want in out, f"transfer row {want!r} not in:\n{out}")
        check(same < 0.9, f"the shipped H200 and H100 files agree on {same:.0%} of the bests")

        # a file against itself: every best the same, every loss 1
        rc, out = run(h100, h100)
        for line in out.splitlines():
            if line.startswith("| ") and line[2].isdigit() or line.startswith("| all"):
                check(re.search(r"\| 100% \| 1\.000 \| 1\.000 \| 1\.000 \|$", line),
                      f"self-comparison row {line!r}")
        check("takes 1.0000x" in out, f"self-comparison batch line:\n{out}")

        # plans: a one-entry plan's time is its column; the same plan twice ties
        one = os.path.join(tmp, "one.json")
        fit(h100, one, "--menu", "1", "--include", "r16.w256.s4")
        full = os.path.join(tmp, "full.json")
        fit(h100, full)
        col = tb[:, cb.index("r16.w256.s4")]
        ratio = col[m].sum() / tb.min(axis=1)[m].sum()
        rc, out = run(h200, h100, "--plans", one, full)
        check(rc == 0 and re.search(r"^\| all \| %d \| %.4f \|" % (m.sum(), ratio), out, re.M),
              f"one-entry plan's all-loads ratio {ratio:.4f} not in:\n{out}")
        check("scored in sample" in out, "in-sample note missing")
        rc, out = run(h200, h100, "--plans", full, full, "--score", h100)
        check(rc == 0 and re.search(r"^\| all \| \d+ \| [0-9.]+ \| [0-9.]+ \| 1\.0000 \|$", out, re.M)
              and "a measurement neither was fit on" in out, f"a plan against itself:\n{out}")

        # the plot: every load once a series, a median line a series, written whole
        svg = os.path.join(tmp, "x.svg")
        rc, out = run(h200, h100, "--svg", svg, "--control", h100)
        import xml.etree.ElementTree as ET
        root = ET.parse(svg).getroot() if rc == 0 and os.path.exists(svg) else None
        ns = "{http://www.w3.org/2000/svg}"
        check(root is not None and len(list(root.iter(ns + "circle"))) == 2 * int(m.sum())
              and len(list(root.iter(ns + "polyline"))) == 2, f"svg: {rc} {out}")
        if root is not None:  # the control is B itself: every one of its points at 0%
            ys = [float(c.get("cy")) for c in root.iter(ns + "circle") if c.get("fill") == "#1f77b4"]
            check(len(set(ys)) == 1, "a dataset against itself plotted off the 0% line")
        bad = os.path.join(tmp, "bad.svg")
        rc, out = run(h200, h100, "--svg", bad, "--control",
                      os.path.join(DATA, "olmoe-ep8-v2-h100.safetensors"))
        check(rc == 1 and "holds other loads" in out and not os.path.exists(bad)
              and not [f for f in os.listdir(tmp) if f.endswith(".tmp")],
              f"a control of other loads: {rc} {out}")

        # refusals, each with exit 1 and what is wrong
        rc, out = run(h200, os.path.join(DATA, "olmoe-ep8-v2-h100.safetensors"))
        check(rc == 1 and "cross_gpu: model differs" in out, f"other model: {rc} {out}")
        rc, out = run(h200, os.path.join(tmp, "nope.safetensors"))
        check(rc == 1 and "no such file" in out, f"missing file: {rc} {out}")
        tr, ld = os.path.join(tmp, "tr.safetensors"), os.path.join(tmp, "ld.safetensors")
        subprocess.run([RAMP, "trace", "gen", "--model", "qwen3-30b", "--domain", "chat", "--rate",
                        "12", "--steps", "4", "--layers", "1", "--seed", "7", "-o", tr],
                       check=True, capture_output=True)
        subprocess.run([RAMP, "dataset", "build", "--model", "qwen3-30b", "--layout", "EP8",
                        "--kernel", "v2", "-o", ld, tr], check=True, capture_output=True)
        rc, out = run(h200, ld)
        check(rc == 1 and "cells not measured" in out, f"unmeasured: {rc} {out}")
        d3, d3h = (os.path.join(DATA, f"deepseek-v3-ep8-v2{s}.safetensors") for s in ("", "-h100"))
        p3 = os.path.join(tmp, "p3.json")
        fit(d3h, p3)
        rc, out = run(d3h, d3, "--plans", p3, p3)
        check(rc == 1 and "menu entries not timed in" in out, f"untimed menu entry: {rc} {out}")
    print("test_cross_gpu:", "all checks passed" if not failures else f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
