#!/usr/bin/env python3
"""Does the best configuration depend on the GPU? Two timing datasets of the
same loads measured on two GPUs (or twice on one, as the noise control):
what each load loses on GPU B when it runs the configuration that was best
on GPU A, and what a plan fit on A's timings loses on B against the plan
fit on B's own (each plan's picks by its cost model, libramp's
ramp_plan_pick through python/ramp.py; timed on B). Losses are per load
(B's time of the pick over B's best) and per batch (the paper's: a batch
takes its slowest GPU's time).

    bench/cross_gpu.py data/timing/qwen3-30b-ep8-v2.safetensors \\
        data/timing/qwen3-30b-ep8-v2-h100.safetensors \\
        --plans plan-h200.json plan-h100.json --label-a H200 --label-b H100

--svg OUT: the per-load losses as a plot (x: the load's pairs, log; y: B's
time of A's best over B's best), with --control DATASET's (another run of
the same loads on B's GPU: what run-to-run noise alone loses) beside them.

--plans A_PLAN B_PLAN: plans fit on A and on B (`ramp fit`); both are scored
on B, or with --score on another measurement of the same loads on B's GPU
(so that B's plan is not scored on the very times it was fit on). Prints
Markdown. Needs numpy and libramp.so (RAMP_LIBRARY, or a build in
build-rel).
"""
import argparse
import importlib.util
import math
import os
import sys
from xml.sax.saxutils import escape

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("v1_vs_v2", os.path.join(HERE, "v1_vs_v2.py"))
_v = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_v)

BANDS = ((1, 16), (17, 64), (65, 128), (129, 256), (257, 512), (513, 2048), (2049, 1 << 30))


def read(path):
    """(meta, loads, times, config names, batch ids); exits on a cell not measured."""
    meta, d = _v.read_v2_timing(path, "cross_gpu")
    t = d["times_us"].astype(np.float64)
    if not (t > 0).all():
        sys.exit(f"cross_gpu: {path}: {(t <= 0).sum()} cells not measured (complete it first)")
    return meta, d["loads"], t, meta["configs"].split(","), d["batch"]


def bands(pairs):
    """(name, mask) of each pair band holding loads, then "all" (pairs >= 1)"""
    for lo, hi in BANDS + ((1, 1 << 30),):
        m = (pairs >= lo) & (pairs <= hi)
        if m.any():
            yield ("all" if (lo, hi) == (1, 1 << 30)
                   else f"{lo}-{hi}" if hi < (1 << 30) else f">= {lo}"), m


def same_loads(path, meta, loads, ref_path, ref_meta, ref_loads):
    """exits naming what differs when path's dataset is not of ref_path's loads"""
    for k in ("model", "layout"):
        if meta.get(k) != ref_meta.get(k):
            sys.exit(f"cross_gpu: {path}: {k} {meta.get(k)}, {ref_path}'s is {ref_meta.get(k)}")
    if loads.shape != ref_loads.shape or not (loads == ref_loads).all():
        sys.exit(f"cross_gpu: {path} holds other loads than {ref_path}")


def batch_total(times_per_load, batch):
    """sum over batches of the slowest GPU's time"""
    return sum(times_per_load[batch == b].max() for b in np.unique(batch))


def plot(path, title, series):
    """Per-load losses as points (x: pairs, log; y: loss in %), one colour a
    series, with each series' median by pair band as a line. Written whole
    or not at all."""
    W, H, x0, y0, w, h = 760, 420, 70, 40, 640, 310
    pts = [(p, (v - 1) * 100) for _, _, ps, vs in series for p, v in zip(ps, vs) if p >= 1]
    xmax = max(p for p, _ in pts)
    ymax = max(5.0, math.ceil(max(v for _, v in pts) / 5) * 5)
    hi = math.log10(max(xmax, 10))

    def px(p):
        return x0 + math.log10(p) / hi * w

    def py(v):
        return y0 + h - v / ymax * h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="11">',
           f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="13">{escape(title)}</text>']
    for k in range(0, int(ymax) + 1, 5):
        out.append(f'<line x1="{x0}" y1="{py(k):.1f}" x2="{x0 + w}" y2="{py(k):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{x0 - 6}" y="{py(k) + 4:.1f}" text-anchor="end">{k}%</text>')
    for e in range(0, int(hi) + 1):
        out.append(f'<text x="{px(10 ** e):.1f}" y="{y0 + h + 16}" text-anchor="middle">{10 ** e}</text>')
    out.append(f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#999"/>')
    out.append(f'<text x="{x0 + w / 2}" y="{H - 12}" text-anchor="middle">token-expert pairs '
               'on the GPU (log)</text>')
    out.append(f'<text x="16" y="{y0 + h / 2}" transform="rotate(-90 16 {y0 + h / 2})" '
               'text-anchor="middle">time over that GPU\'s best</text>')
    for i, (name, colour, ps, vs) in enumerate(series):
        for p, v in zip(ps, vs):
            if p >= 1:
                out.append(f'<circle cx="{px(p):.1f}" cy="{py((v - 1) * 100):.1f}" r="2" '
                           f'fill="{colour}" fill-opacity="0.35"/>')
        line = []
        for lo, hi_ in BANDS:
            m = (ps >= lo) & (ps <= hi_)
            if m.any():
                line.append(f"{px(math.sqrt(lo * min(hi_, ps[m].max()))):.1f},"
                            f"{py((np.median(vs[m]) - 1) * 100):.1f}")
        out.append(f'<polyline points="{" ".join(line)}" fill="none" stroke="{colour}" '
                   'stroke-width="2"/>')
        out.append(f'<rect x="{x0 + 10}" y="{y0 + 8 + 16 * i}" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{x0 + 26}" y="{y0 + 17 + 16 * i}">{escape(name)} (line: median '
                   'by pair band)</text>')
    out.append("</svg>\n")
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w") as f:
            f.write("\n".join(out))
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        sys.exit(f"cross_gpu: {path}: {e.strerror}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="timing dataset measured on GPU A")
    ap.add_argument("b", help="timing dataset of the same loads measured on GPU B")
    ap.add_argument("--plans", nargs=2, metavar=("A_PLAN", "B_PLAN"),
                    help="plans fit on A and on B, both scored on B")
    ap.add_argument("--score", metavar="DATASET",
                    help="score the plans on this dataset (the same loads, measured again on "
                         "B's GPU) instead of B")
    ap.add_argument("--svg", metavar="OUT", help="write the per-load losses as an SVG plot")
    ap.add_argument("--control", metavar="DATASET",
                    help="with --svg: another run of the same loads on B's GPU, plotted beside")
    ap.add_argument("--label-a", default="A")
    ap.add_argument("--label-b", default="B")
    args = ap.parse_args()
    if args.control and not args.svg:
        ap.error("--control is what --svg plots beside the transfer: give --svg OUT too")
    if args.label_a == args.label_b:
        ap.error(f"--label-a and --label-b are both '{args.label_a}': the tables could not tell "
                 "A from B")

    ma, la, ta, ca, _ = read(args.a)
    mb, lb, tb, cb, batch = read(args.b)
    for k in ("model", "layout", "hidden", "inter", "experts"):
        if ma.get(k) != mb.get(k):
            sys.exit(f"cross_gpu: {k} differs: {ma.get(k)} ({args.a}) and {mb.get(k)} ({args.b})")
    if la.shape != lb.shape or not (la == lb).all():
        sys.exit(f"cross_gpu: {args.a} and {args.b} hold different loads (rebuild both from the "
                 "same traces: tools/gpu-check datasets)")
    st, sc = tb, cb
    if args.score:
        ms, sl, st, sc, _ = read(args.score)
        same_loads(args.score, ms, sl, args.b, mb, lb)
    common = [c for c in ca if c in cb]
    if not common:
        sys.exit(f"cross_gpu: {args.a} and {args.b} time no configuration in common")
    pairs = lb.sum(axis=1)
    rows = np.arange(len(lb))
    best_b = tb.min(axis=1)  # over every configuration B timed
    # A's best among the configurations both timed, as B's column
    pick_a = np.array([cb.index(c) for c in common])[ta[:, [ca.index(c) for c in common]]
                                                      .argmin(axis=1)]
    lost = tb[rows, pick_a] / best_b
    A, B = args.label_a, args.label_b
    print(f"## {mb['model']} {mb['layout']}: {len(lb)} loads, {len(common)} configurations "
          f"timed on both\n")
    print(f"A: {args.a} ({ma.get('device')}, {ma.get('date')}); "
          f"B: {args.b} ({mb.get('device')}, {mb.get('date')})\n")
    print(f"### The best configuration per load: {A}'s best, run on {B}\n")
    print(f"| pairs | loads | same best | {B}'s time of {A}'s best over {B}'s best (of all "
          f"{len(cb)}): median | p90 | max |")
    print("|---|---|---|---|---|---|")
    for name, m in bands(pairs):
        same = (pick_a[m] == tb[m].argmin(axis=1)).mean()
        print(f"| {name} | {int(m.sum())} | {same:.0%} | {np.median(lost[m]):.3f} "
              f"| {np.percentile(lost[m], 90):.3f} | {lost[m].max():.3f} |")
    tot = batch_total(tb[rows, pick_a], batch) / batch_total(best_b, batch)
    print(f"\nBatches (slowest GPU): {A}'s per-load best on {B} takes {tot:.4f}x {B}'s own best.\n")
    if args.svg:
        series = [(f"{A}'s best on {B}", "#d62728", pairs, lost)]
        if args.control:
            mc, lc, tc, cc, _ = read(args.control)
            same_loads(args.control, mc, lc, args.b, mb, lb)
            both = [c for c in cc if c in cb]
            pc = np.array([cb.index(c) for c in both])[tc[:, [cc.index(c) for c in both]]
                                                        .argmin(axis=1)]
            series.append((f"another {B} run's best on {B}", "#1f77b4", pairs,
                           tb[rows, pc] / best_b))
        plot(args.svg, f"{mb['model']} {mb['layout']}: a load's best from another measurement, "
             f"run on {B}", series)
        print(f"wrote {args.svg}\n")

    if not args.plans:
        return
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
    import ramp  # noqa: E402 (python/ramp.py, the binding)
    scored = args.score or args.b
    print(f"### Plans: fit on {A} and on {B}, both run on {B} (times of {scored})\n")
    best_s = st.min(axis=1)
    res = []
    for label, path in ((A, args.plans[0]), (B, args.plans[1])):
        p = ramp.Plan.read(path)
        want = (mb["model"], mb["layout"], int(mb["experts"]))
        if (p.model, p.layout, p.geometry["experts"]) != want or p.kernel != "v2":
            sys.exit(f"cross_gpu: {path}: a plan for {p.model} {p.layout}, {p.geometry['experts']} "
                     f"experts a GPU, kernel {p.kernel}; the datasets are {want[0]} {want[1]}, "
                     f"{want[2]} experts a GPU, kernel v2")
        menu = p.configs
        missing = [c for c in menu if c not in sc]
        if missing:
            sys.exit(f"cross_gpu: {path}: menu entries not timed in {scored}: {missing}")
        col = np.array([sc.index(c) for c in menu])
        picks = np.array([col[p.pick([int(x) for x in load])] for load in lb])
        res.append(st[rows, picks])
        print(f"- plan fit on {label} ({path}): {', '.join(menu)}")
    print(f"\n| pairs | loads | {A} plan over {B}'s best (sum) | {B} plan over {B}'s best (sum) "
          f"| {A} plan / {B} plan |")
    print("|---|---|---|---|---|")
    for name, m in bands(pairs):
        sa, sb, so = res[0][m].sum(), res[1][m].sum(), best_s[m].sum()
        print(f"| {name} | {int(m.sum())} | {sa / so:.4f} | {sb / so:.4f} | {sa / sb:.4f} |")
    ba, bb, bo = (batch_total(res[0], batch), batch_total(res[1], batch),
                  batch_total(best_s, batch))
    own = not args.score or os.path.samefile(args.score, args.b)
    print(f"\nBatches (slowest GPU): {A} plan {ba / bo:.4f}x of {B}'s oracle, {B} plan "
          f"{bb / bo:.4f}x; {A} plan / {B} plan = {ba / bb:.4f}." +
          (f" Scored on {args.b}: a {B} plan fit on it is scored in sample (--score: on another "
           "run).\n" if own else f" Scored on {scored}, another run than {args.b}.\n"))


if __name__ == "__main__":
    main()
