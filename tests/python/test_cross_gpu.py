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


def transfer_row(a, b):
    """the tool's "all" transfer row, recomputed here: A's best among the
    configurations both timed (matched by name), over B's best of all its own"""
    ca, loads, ta, _ = times(a)
    cb, _, tb, _ = times(b)
    both = [c for c in ca if c in cb]
    pick = [cb.index(both[i]) for i in ta[:, [ca.index(c) for c in both]].argmin(axis=1)]
    lost = tb[np.arange(len(loads)), pick] / tb.min(axis=1)
    m = loads.sum(axis=1) >= 1
    same = (np.array(pick) == tb.argmin(axis=1))[m].mean()
    return (f"| all | {int(m.sum())} | {same:.0%} | {np.median(lost[m]):.3f} "
            f"| {np.percentile(lost[m], 90):.3f} | {lost[m].max():.3f} |"), same


def main():
    h200 = os.path.join(DATA, "qwen3-30b-ep8-v2.safetensors")
    h100 = os.path.join(DATA, "qwen3-30b-ep8-v2-h100.safetensors")
    d3, d3h = (os.path.join(DATA, f"deepseek-v3-ep8-v2{s}.safetensors") for s in ("", "-h100"))
    with tempfile.TemporaryDirectory(dir=os.environ.get("RAMP_TEST_TMP")) as tmp:
        # the per-load transfer, recomputed here from the files; DeepSeek-V3's
        # H100 file holds 6 configurations its H200 file lacks, in another order
        for a, b in ((h200, h100), (d3, d3h)):
            want, same = transfer_row(a, b)
            rc, out = run(a, b, "--label-a", "H200", "--label-b", "H100")
            check(rc == 0 and want in out, f"transfer row {want!r} not in:\n{out}")
            check(same < 0.9, f"{b}: the H200 and H100 files agree on {same:.0%} of the bests")
        cb, loads, tb, _ = times(h100)
        m = loads.sum(axis=1) >= 1

        # a file against itself: every best the same, every loss 1, every band
        rc, out = run(h100, h100)
        band_rows = [l for l in out.splitlines() if re.match(r"\| (\d|>=|all)", l)]
        check(len(band_rows) == 8, f"self-comparison: {len(band_rows)} band rows, expected 8")
        for line in band_rows:
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
        check("is scored in sample" in out, "in-sample note missing")
        rc, out = run(h200, h100, "--plans", full, full, "--score", h100)
        check(rc == 0 and re.search(r"^\| all \| \d+ \| [0-9.]+ \| [0-9.]+ \| 1\.0000 \|$", out, re.M)
              and "is scored in sample" in out, f"a plan against itself, --score naming B:\n{out}")
        # DeepSeek-V3: a one-entry plan of a configuration only B timed (its
        # column past every one A holds)
        c3, l3, t3, _ = times(d3h)
        one3 = os.path.join(tmp, "one3.json")
        fit(d3h, one3, "--menu", "1", "--include", "r64.w128.s4.ph2.dk4")
        m3 = l3.sum(axis=1) >= 1
        r3 = t3[:, c3.index("r64.w128.s4.ph2.dk4")][m3].sum() / t3.min(axis=1)[m3].sum()
        rc, out = run(d3, d3h, "--plans", one3, one3)
        check(rc == 0 and re.search(r"^\| all \| %d \| %.4f \| %.4f \| 1\.0000 \|$"
                                    % (m3.sum(), r3, r3), out, re.M),
              f"DeepSeek-V3 one-entry plan's ratio {r3:.4f} not in:\n{out}")
        check("r64.w128.s4.ph2.dk4" not in times(d3)[0],
              "the H200 DeepSeek-V3 file times r64.w128.s4.ph2.dk4: the check is no check")

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
        nodir = os.path.join(tmp, "no", "x.svg")
        rc, out = run(h200, h100, "--svg", nodir)
        check(rc == 1 and f"cross_gpu: {nodir}:" in out and not os.path.exists(os.path.dirname(nodir))
              and not [f for f in os.listdir(tmp) if ".tmp" in f],
              f"an SVG into a missing folder: {rc} {out}")
        bad = os.path.join(tmp, "bad.svg")
        rc, out = run(h200, h100, "--svg", bad, "--control",
                      os.path.join(DATA, "olmoe-ep8-v2-h100.safetensors"))
        check(rc == 1 and "model OLMoE-1B-7B" in out and not os.path.exists(bad)
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
        p3 = os.path.join(tmp, "p3.json")
        fit(d3h, p3)
        rc, out = run(d3h, d3, "--plans", p3, p3)
        check(rc == 1 and "menu entries not timed in" in out, f"untimed menu entry: {rc} {out}")
        rc, out = run(d3, d3h, "--plans", full, p3)
        check(rc == 1 and "a plan for Qwen3-30B-A3B EP8" in out and "Traceback" not in out,
              f"another model's plan: {rc} {out}")
        rc, out = run(h200, h100, "--label-a", "X", "--label-b", "X")
        check(rc == 2 and "both 'X'" in out, f"equal labels: {rc} {out}")
        rc, out = run(h200, h100, "--control", h100)
        check(rc == 2 and "--control is what --svg plots" in out, f"--control alone: {rc} {out}")
    print("test_cross_gpu:", "all checks passed" if not failures else f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
