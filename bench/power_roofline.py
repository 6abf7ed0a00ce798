#!/usr/bin/env python3
"""power_roofline.py - the roofline this GPU keeps under its power cap,
measured: bench_wgmma's .h rows (FP8 wgmma in kernel v2's block with the
weights streamed from HBM, at the FLOP per weight byte in the CSV's
flop_per_hbm_byte) against the same wgmmas fed from L2 (.t rows) and the
HBM rate, as a table and an SVG. Standard library only.

    bench/power_roofline.py WGMMA.csv [WGMMA.csv ...] [--svg OUT.svg]
        [--point NAME:FLOP_PER_BYTE:TFLOPS ...]

Rows are grouped by form and warpgroups (N 128 only: v2's wide tile); a
group's ceiling at an intensity is its best rate there over the CSVs given.
A --point is a target: the rate a load needs at its intensity (e.g. a
1.2x-of-the-copy-floor mark, or 1,000 TFLOP/s); each is judged against
every .h group at that intensity, measured ("at") or linearly interpolated
between the two measured intensities around it ("~"), or "outside" the
measured range. Exit 0; 2 on a bad argument or input (the message names
the file and line).
"""
import argparse
import csv
import math
import os
import sys
from xml.sax.saxutils import escape

NEED = {"form", "n", "w", "tflops", "hbm_tb_s"}
COLORS = {"ss.a2.h": "#1f77b4", "ss.a2.pr.h": "#d62728", "ss.a2.pp.h": "#2ca02c"}


class InputError(Exception):
    pass


def read(paths):
    """{(form, w): {intensity: (tflops, tb_s)}} for .h rows, {(form, w): tflops} for .t."""
    h, t = {}, {}
    for path in paths:
        try:
            f = open(path, newline="")
        except OSError as e:
            raise InputError(f"{path}: {e.strerror}")
        with f:
            rd = csv.DictReader(f)
            if not rd.fieldnames or not NEED <= set(rd.fieldnames):
                raise InputError(f"{path}:1: not a bench_wgmma CSV (columns {sorted(NEED)})")
            has_i = "flop_per_hbm_byte" in rd.fieldnames
            for ln, r in enumerate(rd, start=2):
                if r["n"] != "128":
                    continue
                try:
                    tf, tb = float(r["tflops"]), float(r["hbm_tb_s"] or 0)
                    intensity = float(r["flop_per_hbm_byte"]) if has_i else 0.0
                except ValueError:
                    raise InputError(f"{path}:{ln}: a number column is not a number")
                key = (r["form"], int(r["w"]))
                if r["form"].endswith(".h"):
                    if not has_i:  # calls before --hbm-pieces: the form's own pieces
                        intensity = 128.0 * int(r["w"])
                    cur = h.setdefault(key, {}).get(round(intensity))
                    if cur is None or tf > cur[0]:
                        h[key][round(intensity)] = (tf, tb)
                elif r["form"].endswith(".t"):
                    t[key] = max(t.get(key, 0.0), tf)
    if not h:
        raise InputError("no .h rows at N 128 in " + ", ".join(paths))
    return h, t


def ceiling_at(curve, x):
    """(rate, how): measured at x, interpolated between neighbours, or None."""
    xs = sorted(curve)
    if round(x) in curve:
        return curve[round(x)][0], "at"
    lo = [v for v in xs if v < x]
    hi = [v for v in xs if v > x]
    if not lo or not hi:
        return None, "outside"
    a, b = lo[-1], hi[0]
    ra, rb = curve[a][0], curve[b][0]
    return ra + (rb - ra) * (x - a) / (b - a), "~"


def parse_point(text):
    parts = text.rsplit(":", 2)
    if len(parts) != 3 or not parts[0]:
        raise InputError(f"--point {text}: expected NAME:FLOP_PER_BYTE:TFLOPS")
    try:
        x, need = float(parts[1]), float(parts[2])
    except ValueError:
        raise InputError(f"--point {text}: FLOP_PER_BYTE and TFLOPS must be numbers")
    if not (x > 0 and need > 0):
        raise InputError(f"--point {text}: both numbers must be > 0")
    return parts[0], x, need


def svg(path, h, t, points, hbm):
    W, H, L, B, T, R = 880, 470, 70, 50, 40, 320
    xs = sorted({x for c in h.values() for x in c} | {p[1] for p in points})
    xmin, xmax = min(xs) / 1.5, max(xs) * 1.5
    ymax = max([v[0] for c in h.values() for v in c.values()] + list(t.values()) +
               [p[2] for p in points]) * 1.15
    pw, ph = W - L - R, H - T - B

    def px(x):
        return L + (math.log(x) - math.log(xmin)) / (math.log(xmax) - math.log(xmin)) * pw

    def py(y):
        return T + ph - y / ymax * ph

    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
         f'font-family="sans-serif" font-size="11">', f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{L + pw / 2}" y="18" text-anchor="middle" font-size="13">FP8 wgmma with the '
         f'weights streamed from HBM, at the power cap (measured)</text>']
    step = next(s for s in (100, 200, 250, 500) if ymax / s <= 10)
    for k in range(0, int(ymax / step) + 1):
        Y = py(k * step)
        o.append(f'<line x1="{L}" y1="{Y:.1f}" x2="{L + pw}" y2="{Y:.1f}" stroke="#eee"/>')
        o.append(f'<text x="{L - 5}" y="{Y + 4:.1f}" text-anchor="end">{k * step}</text>')
    for x in (32, 64, 128, 256, 512, 1024, 2048):
        if xmin <= x <= xmax:
            X = px(x)
            o.append(f'<line x1="{X:.1f}" y1="{T}" x2="{X:.1f}" y2="{T + ph}" stroke="#eee"/>')
            o.append(f'<text x="{X:.1f}" y="{T + ph + 15}" text-anchor="middle">{x}</text>')
    o.append(f'<text x="{L + pw / 2}" y="{H - 12}" text-anchor="middle">FLOP per weight byte '
             f'(log)</text>')
    o.append(f'<text x="16" y="{T + ph / 2}" transform="rotate(-90 16 {T + ph / 2})" '
             f'text-anchor="middle">TFLOP/s</text>')
    # the HBM line: the best stream rate measured, times the intensity
    pts = []
    for i in range(0, 61):
        x = xmin * (xmax / xmin) ** (i / 60)
        if hbm * x <= ymax:
            pts.append(f"{px(x):.1f},{py(hbm * x):.1f}")
    o.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="#777" stroke-dasharray="5,3"/>')
    legend = [("#777", f"HBM {hbm:.2f} TB/s x intensity", "5,3")]
    for (form, w), rate in sorted(t.items()):
        if (form.replace(".t", ".h"), w) not in h:
            continue
        c = COLORS.get(form.replace(".t", ".h"), "#555")
        Y = py(rate)
        dash = "2,2" if w == 1 else "8,3"
        o.append(f'<line x1="{L}" y1="{Y:.1f}" x2="{L + pw}" y2="{Y:.1f}" stroke="{c}" '
                 f'stroke-dasharray="{dash}" stroke-width="1"/>')
        legend.append((c, f"{form} W{w} from L2: {rate:.0f}", dash))
    for (form, w), curve in sorted(h.items()):
        c = COLORS.get(form, "#555")
        xs_ = sorted(curve)
        line = " ".join(f"{px(x):.1f},{py(curve[x][0]):.1f}" for x in xs_)
        o.append(f'<polyline points="{line}" fill="none" stroke="{c}" stroke-width="{2 if w == 2 else 1}"/>')
        for x in xs_:
            o.append(f'<circle cx="{px(x):.1f}" cy="{py(curve[x][0]):.1f}" r="3" fill="{c}"/>')
        legend.append((c, f"{form} W{w} from HBM", None))
    for i, (name, x, need) in enumerate(points):  # numbered; named in the legend
        X, Y = px(x), py(need)
        o.append(f'<path d="M{X - 5:.1f},{Y:.1f} L{X:.1f},{Y - 5:.1f} L{X + 5:.1f},{Y:.1f} '
                 f'L{X:.1f},{Y + 5:.1f} Z" fill="none" stroke="black"/>')
        o.append(f'<text x="{X - 7:.1f}" y="{Y + 4:.1f}" text-anchor="end" font-size="10">'
                 f'{i + 1}</text>')
    o.append(f'<rect x="{L}" y="{T}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
    for i, (c, text, dash) in enumerate(legend):
        y = T + 10 + 16 * i
        d = f' stroke-dasharray="{dash}"' if dash else ""
        o.append(f'<line x1="{L + pw + 10}" y1="{y}" x2="{L + pw + 30}" y2="{y}" stroke="{c}" '
                 f'stroke-width="2"{d}/>')
        o.append(f'<text x="{L + pw + 34}" y="{y + 4}" font-size="10">{escape(text)}</text>')
    y0 = T + 26 + 16 * len(legend)
    o.append(f'<text x="{L + pw + 10}" y="{y0}" font-size="10">diamonds: what a target needs</text>')
    for i, (name, x, need) in enumerate(points):
        o.append(f'<text x="{L + pw + 10}" y="{y0 + 14 * (i + 1)}" font-size="9">'
                 f'{i + 1}: {escape(name)} ({need:.0f} at {x:.0f})</text>')
    o.append("</svg>")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(o) + "\n")
    os.replace(tmp, path)


def main(argv):
    ap = argparse.ArgumentParser(description="The power-capped roofline bench_wgmma's .h forms "
                                             "measure, with targets judged against it.")
    ap.add_argument("csv", nargs="+", help="bench_wgmma CSVs with .h (and .t) rows")
    ap.add_argument("--svg", metavar="OUT.svg", help="draw the ceilings and the points")
    ap.add_argument("--point", action="append", default=[], metavar="NAME:FLOP_PER_BYTE:TFLOPS",
                    help="a target: the rate a load needs at its intensity")
    a = ap.parse_args(argv)
    try:
        points = [parse_point(p) for p in a.point]
        h, t = read(a.csv)
    except InputError as e:
        print(f"power_roofline.py: {e}", file=sys.stderr)
        return 2
    hbm = max(v[1] for c in h.values() for v in c.values())
    groups = sorted(h)
    xs = sorted({x for c in h.values() for x in c})
    print("| FLOP per weight byte | " + " | ".join(f"{f} W{w}" for f, w in groups) + " |")
    print("|---" * (len(groups) + 1) + "|")
    for x in xs:
        cells = []
        for g in groups:
            v = h[g].get(x)
            cells.append(f"{v[0]:.0f} TFLOP/s, {v[1]:.2f} TB/s" if v else "-")
        print(f"| {x} | " + " | ".join(cells) + " |")
    for (form, w), rate in sorted(t.items()):
        print(f"from L2 ({form} W{w}): {rate:.0f} TFLOP/s")
    print(f"best stream measured: {hbm:.2f} TB/s")
    for name, x, need in points:
        verdicts = []
        for g in groups:
            c, how = ceiling_at(h[g], x)
            if c is None:
                verdicts.append(f"{g[0]} W{g[1]}: outside the measured intensities")
            else:
                verdicts.append(f"{g[0]} W{g[1]}: {how} {c:.0f} -> "
                                f"{'within' if need <= c else 'beyond'} ({100 * need / c:.0f}%)")
        print(f"{name}: needs {need:.0f} TFLOP/s at {x:.0f} FLOP/B; " + "; ".join(verdicts))
    if a.svg:
        svg(a.svg, h, t, points, hbm)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
