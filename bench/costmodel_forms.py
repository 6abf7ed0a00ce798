#!/usr/bin/env python3
"""Tries forms of the cost model on timing datasets, offline: RaMP's held-out
gap to exhaustive search (`ramp eval`'s Table 3 column "Gap", %) per dataset
under each form. Form `base` is Equation 3 + pairs as libramp fits it (NNLS
on relative error per configuration, theta_0 penalised, trained on the other
traffic domains without "uniform", v2's past-wave penalty for split-K) and
reproduces `ramp eval`'s gaps; the others add or change one term. A form
that helps here is a candidate for costmodel.c, the plan format and the
selection kernel, not a change by itself.

  python3 bench/costmodel_forms.py [--forms base,fill,...] [DATASET ...]
  (default: data/timing/*-v2.safetensors, forms base,fill,fill2,fillW)

Forms (W = ceil(T / S), T tiles, S = sms, A active experts, P pairs):
  base   1, W, T, A, P
  extra  1, W - 1, T, A, P        (fixed cost apart from extra waves)
  fill   base + min(T, S) / S     (how much of the first wave is occupied)
  last   base + the last wave's fill
  fill2  base + both fills
  fillW  base + T / S when one wave, else 0
Needs numpy only (its own NNLS).
"""
import argparse
import glob
import json
import math
import os
import re
import struct
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMS = ("base", "extra", "fill", "last", "fill2", "fillW")


def read_dataset(path):
    with open(path, "rb") as f:
        buf = f.read()
    n = struct.unpack("<Q", buf[:8])[0]
    header = json.loads(buf[8:8 + n])
    meta = header.pop("__metadata__")
    kinds = {"I32": "<i4", "I64": "<i8", "F32": "<f4", "F64": "<f8", "U8": "u1"}
    return meta, {k: np.frombuffer(buf, kinds[v["dtype"]], offset=8 + n + v["data_offsets"][0],
                                   count=int(np.prod(v["shape"]))).reshape(v["shape"])
                  for k, v in header.items()}


def nnls(A, b):
    """Lawson-Hanson non-negative least squares (a handful of columns)."""
    n = A.shape[1]
    x, P = np.zeros(n), np.zeros(n, bool)
    w = A.T @ (b - A @ x)
    for _ in range(3 * n + 10):
        if P.all() or (w[~P] <= 1e-12 * max(1.0, np.abs(w).max())).all():
            break
        P[np.argmax(np.where(~P, w, -np.inf))] = True
        while True:
            z = np.zeros(n)
            z[P] = np.linalg.lstsq(A[:, P], b, rcond=None)[0]
            if (z[P] > 0).all():
                x = z
                break
            neg = P & (z <= 0)
            x = x + np.min(x[neg] / (x[neg] - z[neg])) * (z - x)
            P &= x > 1e-15
            x[~P] = 0
        w = A.T @ (b - A @ x)
    return x


def parse_config(name):
    rows = int(re.match(r"r(\d+)", name).group(1))
    width = int(re.search(r"\.w(\d+)", name).group(1))
    ks = re.search(r"\.k(\d+)", name)
    return rows, width, int(ks.group(1)) if ks else 1, name.endswith(".mc") or ".mc." in name


def features(form, meta, T, configs):
    """Per configuration, the [loads, terms] matrix of the form."""
    inter, sms = int(meta["inter"]), int(meta["sms"])
    loads = T["loads"].astype(np.int64)
    loads = np.where(np.arange(loads.shape[1])[None, :] < T["nexp"][:, None], loads, 0)
    act = (loads > 0).sum(1).astype(float)
    pairs = loads.sum(1).astype(float)
    out = []
    for c in configs:
        rows, width, splitk, mc = parse_config(c)
        rt = ((loads + rows - 1) // rows).sum(1).astype(float)
        if mc:
            rt = np.ceil(rt / 2) * 2
        tiles = ((inter + width - 1) // width) * splitk * rt
        W = np.ceil(tiles / sms)
        one = np.ones_like(W)
        first = np.minimum(tiles, sms) / sms
        last = np.where(tiles > 0, (tiles - (W - 1) * sms) / sms, 0)
        cols = {"base": [one, W, tiles, act, pairs],
                "extra": [one, np.maximum(W - 1, 0), tiles, act, pairs],
                "fill": [one, W, tiles, act, pairs, first],
                "last": [one, W, tiles, act, pairs, last],
                "fill2": [one, W, tiles, act, pairs, first, last],
                "fillW": [one, W, tiles, act, pairs, np.where(W <= 1, tiles / sms, 0)]}[form]
        out.append((np.stack(cols, 1), W, splitk))
    return out


def fit(X, t):
    """NNLS on relative error with libramp's tiny penalty on theta_0."""
    A = np.vstack([X / t[:, None], np.eye(1, X.shape[1]) * math.sqrt(1e-6 * len(t)) * np.mean(1 / t)])
    return nnls(A, np.append(np.ones(len(t)), 0.0))


def gap(path, form):
    meta, T = read_dataset(path)
    configs, domains = meta["configs"].split(","), meta["domains"].split(",")
    times = T["times_us"].astype(float)
    feats = features(form, meta, T, configs)
    v2 = meta.get("kernel") == "v2"
    dom = T["domain"]
    uniform = domains.index("uniform") if "uniform" in domains else -1
    ratios = []
    for d in range(len(domains)):
        if d == uniform or not (dom == d).any():
            continue
        train = (dom != d) & (dom != uniform)
        pred = np.full(times.shape, np.inf)
        for c, (X, W, splitk) in enumerate(feats):
            ok = train & np.isfinite(times[:, c])
            if ok.any():
                pred[:, c] = X @ fit(X[ok], times[ok, c])
                if v2 and splitk > 1:  # libramp's past-wave penalty
                    pred[:, c] += np.where(W > 1, 1e6, 0)
        pick = np.argmin(pred, 1)
        for b in np.unique(T["batch"][dom == d]):
            rows = np.where((T["batch"] == b) & (dom == d))[0]
            ratios.append(max(times[i, pick[i]] for i in rows) / max(np.nanmin(times[i]) for i in rows))
    return 100 * (math.exp(np.mean(np.log(ratios))) - 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("datasets", nargs="*", help="timing datasets (default: data/timing/*-v2.safetensors)")
    ap.add_argument("--forms", default="base,fill,fill2,fillW",
                    help="comma-separated, of: " + ", ".join(FORMS))
    a = ap.parse_args()
    forms = a.forms.split(",")
    bad = [f for f in forms if f not in FORMS]
    if bad:
        ap.error("--forms: unknown %s (known: %s)" % (", ".join(bad), ", ".join(FORMS)))
    paths = a.datasets or sorted(glob.glob(os.path.join(ROOT, "data", "timing", "*-v2.safetensors")))
    if not paths:
        ap.error("no datasets")
    print("| dataset | " + " | ".join(forms) + " |\n|---|" + "---|" * len(forms))
    res = {f: [] for f in forms}
    for i, p in enumerate(paths):
        row = []
        for f in forms:
            res[f].append(gap(p, f))
            row.append("%.1f" % res[f][-1])
        print("| %s | %s |" % (os.path.basename(p).replace(".safetensors", ""), " | ".join(row)))
        print("(%d/%d)" % (i + 1, len(paths)), file=sys.stderr)
    print("| mean | " + " | ".join("%.2f" % np.mean(res[f]) for f in forms) + " |")
    print("| max | " + " | ".join("%.1f" % np.max(res[f]) for f in forms) + " |")


if __name__ == "__main__":
    main()
