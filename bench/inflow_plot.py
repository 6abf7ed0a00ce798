#!/usr/bin/env python3
"""inflow_plot.py - bench_inflow's CSV as one SVG: bytes per SM clock each
kind takes in against the number of blocks streaming at once (log scale),
one panel per window (L2-resident, HBM), one line per kind, with the
HBM's share of one SM at every SM (the 132-block HBM rate over 132) drawn
for reference. Standard library only.

    bench/inflow_plot.py OUTDIR/inflow.csv --out inflow.svg [--kinds bulk32k-s4,loads]

Prints, per window, the best kind at the full grid and at one block.
"""
import argparse
import csv
import math
import sys
from xml.sax.saxutils import escape

NEED = {"kind", "window_mib", "grid", "in_tb_s", "read_tb_s", "per_sm_bytes_per_clk"}
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939"]


def read(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    except OSError as e:
        sys.exit(f"{path}: {e.strerror}")
    if not rows or not NEED <= set(rows[0]):
        sys.exit(f"{path}: not a bench_inflow CSV (columns {sorted(NEED)})")
    try:
        return [{"kind": r["kind"], "window": int(r["window_mib"]), "grid": int(r["grid"]),
                 "tb": float(r["in_tb_s"]), "rd": float(r["read_tb_s"]),
                 "clk": float(r["per_sm_bytes_per_clk"])} for r in rows]
    except ValueError as e:
        sys.exit(f"{path}: a row that is not numbers where numbers belong ({e})")


def panel(out, x0, y0, w, h, title, series, grids, ymax, ref):
    """One panel: series {kind: {grid: clk}} at (x0, y0), w x h."""
    lo, hi = math.log(min(grids)), math.log(max(grids))

    def px(g):
        return x0 + (math.log(g) - lo) / ((hi - lo) or 1.0) * w

    def py(v):
        return y0 + h - v / ymax * h

    out.append(f'<text x="{x0 + w / 2:.0f}" y="{y0 - 8}" text-anchor="middle" '
               f'font-size="12">{escape(title)}</text>')
    step = next(s for s in (10, 20, 25, 50, 100) if ymax / s <= 8)
    for k in range(0, int(ymax / step) + 1):
        Y = py(k * step)
        out.append(f'<line x1="{x0}" y1="{Y:.1f}" x2="{x0 + w}" y2="{Y:.1f}" stroke="#eee"/>')
        out.append(f'<text x="{x0 - 4}" y="{Y + 4:.1f}" text-anchor="end">{k * step}</text>')
    for g in grids:
        X = px(g)
        out.append(f'<line x1="{X:.1f}" y1="{y0}" x2="{X:.1f}" y2="{y0 + h}" stroke="#eee"/>')
        out.append(f'<text x="{X:.1f}" y="{y0 + h + 14}" text-anchor="middle">{g}</text>')
    out.append(f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#999"/>')
    if ref:
        Y = py(ref)
        out.append(f'<line x1="{x0}" y1="{Y:.1f}" x2="{x0 + w}" y2="{Y:.1f}" stroke="#000" '
                   f'stroke-dasharray="4 3"/>')
    for i, (kind, pts) in enumerate(series.items()):
        c = PALETTE[i % len(PALETTE)]
        xy = [(px(g), py(v)) for g, v in sorted(pts.items())]
        out.append('<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>'
                   % (c, " ".join(f"{X:.1f},{Y:.1f}" for X, Y in xy)))
        for X, Y in xy:
            out.append(f'<circle cx="{X:.1f}" cy="{Y:.1f}" r="2.2" fill="{c}"/>')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="bench_inflow's CSV")
    ap.add_argument("--out", required=True, help="the SVG to write")
    ap.add_argument("--kinds", help="comma list of kinds to draw (default: all)")
    a = ap.parse_args()
    rows = read(a.csv)
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    if a.kinds:
        want = [k for k in a.kinds.split(",") if k]
        unknown = [k for k in want if k not in kinds]
        if unknown:
            sys.exit(f"--kinds: {', '.join(unknown)} not in {a.csv} (it has {', '.join(kinds)})")
        kinds = want
    windows = sorted({r["window"] for r in rows})
    l2 = [w for w in windows if w < 1024] or windows[:1]
    shown = [l2[0], max(windows)] if max(windows) != l2[0] else [l2[0]]
    grids = sorted({r["grid"] for r in rows})
    full = max(grids)
    ymax = max(r["clk"] for r in rows if r["kind"] in kinds) * 1.08 or 1.0
    # the HBM's share of one SM when every SM streams: the largest window's
    # best full-grid read rate, per SM (multicast lands twice what it reads)
    hbm = [r for r in rows if r["window"] == max(windows) and r["grid"] == full and r["tb"] > 0]
    ref = max((r["clk"] * r["rd"] / r["tb"] for r in hbm), default=0) if max(windows) >= 1024 else 0

    W, PW, PH, L, T = 900, 330, 260, 60, 50
    H = T + PH + 60 + 16 * ((len(kinds) + 2) // 3)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2:.0f}" y="18" text-anchor="middle" font-size="13">bytes into each SM '
           f'per clock against the blocks streaming at once (bench_inflow)</text>']
    for i, w in enumerate(shown):
        series = {}
        for r in rows:
            if r["window"] == w and r["kind"] in kinds:
                series.setdefault(r["kind"], {})[r["grid"]] = r["clk"]
        series = {k: series[k] for k in kinds if k in series}
        where = "HBM" if w >= 1024 else "L2"
        panel(out, L + i * (PW + 90), T, PW, PH, f"{where}: {w} MiB window", series, grids,
              ymax, ref if w >= 1024 else 0)
        best_full = max((r for r in rows if r["window"] == w and r["grid"] == full and r["kind"] in kinds),
                        key=lambda r: r["clk"], default=None)
        best_one = max((r for r in rows if r["window"] == w and r["grid"] == min(grids) and r["kind"] in kinds),
                       key=lambda r: r["clk"], default=None)
        if best_full:
            print(f"{where} {w} MiB: best at {full} blocks {best_full['kind']} {best_full['clk']:.1f} "
                  f"B/clk per SM ({best_full['tb']:.2f} TB/s in all)"
                  + (f"; at {min(grids)} {best_one['kind']} {best_one['clk']:.1f}" if best_one else ""))
    out.append(f'<text x="{L + PW / 2:.0f}" y="{T + PH + 30}" text-anchor="middle">blocks '
               f'(clusters of two count as two)</text>')
    out.append(f'<text x="16" y="{T + PH / 2:.0f}" transform="rotate(-90 16 {T + PH / 2:.0f})" '
               f'text-anchor="middle">bytes per SM clock</text>')
    ly = T + PH + 46
    for i, k in enumerate(kinds):
        X = L + (i % 3) * 260
        Y = ly + 16 * (i // 3)
        out.append(f'<rect x="{X}" y="{Y - 8}" width="12" height="8" fill="{PALETTE[i % len(PALETTE)]}"/>')
        out.append(f'<text x="{X + 18}" y="{Y}">{escape(k)}</text>')
    if ref:
        out.append(f'<text x="{W - 12}" y="{T + PH + 30}" text-anchor="end" fill="#333">dashed: '
                   f'HBM\'s share of one SM with all {full} streaming ({ref:.1f})</text>')
    out.append("</svg>")
    try:
        with open(a.out, "w") as f:
            f.write("\n".join(out) + "\n")
    except OSError as e:
        sys.exit(f"{a.out}: {e.strerror}")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
