#!/usr/bin/env python3
"""timeline_plot.py - bench_layer --timeline's CSV as one SVG per case: every
block of every kernel as a horizontal bar from its start to its end, the
part before it passes griddepcontrol.wait (the selection: before its
choice) drawn lighter, on one time axis
(us after the run's first stamp). Standard library only.

    bench/timeline_plot.py OUTDIR/timeline.csv --out DIR [--run 0]   (or timeline.csv.gz)

One plot per (what, tokens, routing) of the chosen run, named
timeline-<what>-<tokens>-<routing>.svg: "ramp" is the layer (kernel 0 the
selection, 1.. the polymorphic chain), "select" the selection alone, "poly"
the chosen entry forced in the polymorphic kernel, "alone" the entry's own
kernel (4, its phase 2 5), "k1+sel" / "a+sel" those followed by the
selection.
"""
import argparse
import csv
import gzip
import os
import sys
from xml.sax.saxutils import escape

COLORS = {0: "#d62728", 1: "#1f77b4", 2: "#2ca02c", 3: "#9467bd", 4: "#ff7f0e", 5: "#8c564b"}
NAMES = {0: "selection", 1: "MoE kernel 1", 2: "MoE kernel 2", 3: "MoE kernel 3",
         4: "entry alone", 5: "entry alone, phase 2"}


def read(path):
    # bench/results stores the large timeline CSVs gzipped (session 51)
    with (gzip.open(path, "rt", newline="") if path.endswith(".gz") else open(path, newline="")) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    need = {"what", "tokens", "routing", "config", "run", "kernel", "block", "e0", "e1", "e2",
            "e3", "e4", "e5"}
    if not rows or not need <= set(rows[0]):
        sys.exit(f"{path}: not a bench_layer --timeline CSV (columns {sorted(need)})")
    return rows


def plot(path, title, rows):
    """rows: one case's blocks; bars sorted by kernel, then start."""
    bars = []
    for r in rows:
        ev = [int(r[f"e{j}"]) for j in range(6)]
        end = max(ev[2:])
        if ev[0] < 0 or end < 0:
            continue
        wait = ev[1] if ev[1] >= 0 else ev[0]
        bars.append((int(r["kernel"]), ev[0], wait, end))
    if not bars:
        return False
    bars.sort()
    W, L, R, T, B, bh = 760, 60, 170, 40, 40, 2
    H = T + B + bh * len(bars) + 4 * len({b[0] for b in bars})
    t1 = max(b[3] for b in bars) / 1e3 * 1.02 or 1.0

    def px(ns):
        return L + ns / 1e3 / t1 * (W - L - R)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{(W - R) / 2:.0f}" y="20" text-anchor="middle" font-size="13">'
           f'{escape(title)}</text>']
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000) if t1 / s <= 10)
    for k in range(0, int(t1 / step) + 1):
        X = px(k * step * 1e3)
        out.append(f'<line x1="{X:.1f}" y1="{T}" x2="{X:.1f}" y2="{H - B}" stroke="#eee"/>')
        out.append(f'<text x="{X:.1f}" y="{H - B + 14}" text-anchor="middle">{k * step:g}</text>')
    out.append(f'<text x="{(W - R) / 2:.0f}" y="{H - 8}" text-anchor="middle">'
               f'us after the first stamp</text>')
    y, last = T, None
    for k, s, w, e in bars:
        if last is not None and k != last:
            y += 4
        last = k
        c = COLORS.get(k, "#7f7f7f")
        if w > s:
            out.append(f'<rect x="{px(s):.1f}" y="{y}" width="{max(px(w) - px(s), 0.5):.1f}" '
                       f'height="{bh}" fill="{c}" opacity="0.3"/>')
        out.append(f'<rect x="{px(w):.1f}" y="{y}" width="{max(px(e) - px(w), 0.5):.1f}" '
                   f'height="{bh}" fill="{c}"/>')
        y += bh
    ly = T
    for k in sorted({b[0] for b in bars}):
        n = sum(1 for b in bars if b[0] == k)
        out.append(f'<rect x="{W - R + 10}" y="{ly}" width="12" height="8" fill="{COLORS.get(k, "#7f7f7f")}"/>')
        out.append(f'<text x="{W - R + 28}" y="{ly + 8}">{escape(NAMES.get(k, f"kernel {k}"))} ({n})</text>')
        ly += 16
    out.append(f'<text x="{W - R + 10}" y="{ly + 12}" fill="#555">light: before the wait (selection: its choice)</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="bench_layer --timeline's timeline.csv")
    ap.add_argument("--out", required=True, help="folder for the SVGs (made if missing)")
    ap.add_argument("--run", default="0", help="which of the three runs (default 0)")
    a = ap.parse_args()
    rows = read(a.csv)
    cases = {}
    for r in rows:
        if r["run"] == a.run:
            cases.setdefault((r["what"], int(r["tokens"]), r["routing"], r["config"]), []).append(r)
    if not cases:
        sys.exit(f"{a.csv}: no rows of run {a.run}")
    os.makedirs(a.out, exist_ok=True)
    n = 0
    for (what, tokens, routing, cfg), rs in sorted(cases.items()):
        name = f"timeline-{what.replace('+', '-')}-{tokens}-{routing}.svg"
        if plot(os.path.join(a.out, name), f"{what}: {tokens} tokens {routing}, {cfg}", rs):
            n += 1
    print(f"{n} plots in {a.out}")


if __name__ == "__main__":
    main()
