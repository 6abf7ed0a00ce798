#!/usr/bin/env python3
"""power_join.py - the GPU's power and clocks during timed runs.

Joins samples that `nvidia-smi --query-gpu=... -lms 20` took beside a run
with the wall-clock windows of the run's timed launches, and prints one
Markdown row per window: how many samples fell in it, the power drawn
(median and largest), the SM and memory clocks (median, least) and how
often the driver said why the clock was held down (clocks_event_reasons:
SW power cap 0x4, HW slowdown 0x8, SW thermal 0x20, HW thermal 0x40, HW
power brake 0x80).

Windows come from
  --wgmma CSV     bench_wgmma's CSV (columns form, n, w, grid, tflops,
                  hbm_tb_s, t_start, t_end): one window per row
  --moe TXT       bench_moe_v2's variant-mode output (lines ending in
                  "wall START END"): one window per line
  --window NAME START END   a window by hand (Unix seconds)

The samples' CSV must have a header row naming at least `timestamp` and
one of `power.draw.instant [W]` / `power.draw [W]`; the SM and memory clocks
(`clocks.current.sm [MHz]`, `clocks.current.memory [MHz]`: what nvidia-smi
writes for clocks.sm, clocks.mem) and `clocks_event_reasons.active` are used
when there.
Its timestamps ("2026/12/04 20:15:01.234") are read as UTC: run nvidia-smi
with TZ=UTC. A window's last 50 ms are left out (the samples there may be of
what follows it), and its first --settle seconds (default 0.05): after an
idle gap nvidia-smi's power reading climbs over ~1 s while the clock and its
event reasons answer at once (s39-run1 call 5), so give windows that follow
a gap --settle 0.5 and make them last longer than that.

Usage: power_join.py SAMPLES.csv (--wgmma CSV | --moe TXT | --window N S E)...
        [--out FILE.md] [--svg FILE.svg [--limit W]]
--svg draws the samples' power and SM clock over time, the windows shaded
and numbered, their names listed below (standard library only).
Exit 0, 2 on a bad argument or an unreadable input (the message says which
file and line), 1 when a window holds no sample.
"""
import argparse
import csv
import os
import datetime
import gzip
import statistics
import sys
from xml.sax.saxutils import escape

REASONS = ((0x4, "power cap"), (0x8, "HW slowdown"), (0x20, "SW thermal"),
           (0x40, "HW thermal"), (0x80, "power brake"))
EDGE_S = 0.05


class InputError(Exception):
    pass


def parse_time(text, where):
    try:
        t = datetime.datetime.strptime(text.strip(), "%Y/%m/%d %H:%M:%S.%f")
    except ValueError:
        raise InputError(f"{where}: timestamp '{text.strip()}' is not YYYY/MM/DD HH:MM:SS.fff")
    return t.replace(tzinfo=datetime.timezone.utc).timestamp()


def number(text, where, what):
    text = text.strip()
    if text in ("[N/A]", "N/A", "[Not Supported]"):
        return None
    try:
        return float(text.split()[0])
    except (ValueError, IndexError):
        raise InputError(f"{where}: {what} '{text}' is not a number")


def read_samples(path):
    try:
        f = gzip.open(path, "rt", newline="") if path.endswith(".gz") else open(path, newline="")
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}")
    with f:
        rows = list(csv.reader(f))
    if not rows:
        raise InputError(f"{path}: empty")
    head = [h.strip() for h in rows[0]]

    def col(*names):
        for n in names:
            if n in head:
                return head.index(n)
        return None

    it = col("timestamp")
    ip = col("power.draw.instant [W]", "power.draw.instant", "power.draw [W]", "power.draw")
    if it is None or ip is None:
        raise InputError(f"{path}:1: the header names no timestamp or power.draw column "
                         f"(got: {', '.join(head)})")
    # nvidia-smi's header names clocks.sm / clocks.mem by their long names
    isc = col("clocks.current.sm [MHz]", "clocks.current.sm", "clocks.sm [MHz]", "clocks.sm")
    imc = col("clocks.current.memory [MHz]", "clocks.current.memory", "clocks.mem [MHz]",
              "clocks.mem")
    ir = col("clocks_event_reasons.active", "clocks_throttle_reasons.active")
    out = []
    for ln, r in enumerate(rows[1:], start=2):
        if not r or all(not c.strip() for c in r):
            continue
        where = f"{path}:{ln}"
        if len(r) != len(head):
            raise InputError(f"{where}: {len(r)} fields, the header has {len(head)}")
        reasons = 0
        if ir is not None and r[ir].strip().startswith("0x"):
            try:
                reasons = int(r[ir].strip(), 16)
            except ValueError:
                raise InputError(f"{where}: event reasons '{r[ir].strip()}' are not hex")
        out.append({
            "t": parse_time(r[it], where),
            "w": number(r[ip], where, "power"),
            "sm": number(r[isc], where, "SM clock") if isc is not None else None,
            "mem": number(r[imc], where, "memory clock") if imc is not None else None,
            "why": reasons,
        })
    if not out:
        raise InputError(f"{path}: no samples after the header")
    return out


def wgmma_windows(path):
    try:
        f = open(path, newline="")
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}")
    with f:
        rd = csv.DictReader(f)
        need = {"form", "n", "w", "grid", "tflops", "t_start", "t_end"}
        if not rd.fieldnames or not need <= set(rd.fieldnames):
            raise InputError(f"{path}:1: not a bench_wgmma CSV with t_start/t_end "
                             f"(missing: {', '.join(sorted(need - set(rd.fieldnames or [])))})")
        out = []
        for ln, r in enumerate(rd, start=2):
            where = f"{path}:{ln}"
            hbm = r.get("hbm_tb_s") or "0"
            rate = f"{float(r['tflops']):.0f} TFLOP/s"
            if float(hbm) > 0:
                rate += f", {float(hbm):.2f} TB/s"
            name = f"{r['form']} N{r['n']} W{r['w']}"
            if float(r.get("flop_per_hbm_byte") or 0) > 0:  # .h: its intensity
                name += f" {float(r['flop_per_hbm_byte']):.0f} FLOP/B"
            out.append((name, number(r["t_start"], where, "t_start"),
                        number(r["t_end"], where, "t_end"), rate))
    return out


def moe_windows(path):
    try:
        f = open(path)
    except OSError as e:
        raise InputError(f"{path}: {e.strerror}")
    out = []
    with f:
        for ln, line in enumerate(f, start=1):
            parts = line.split()
            if len(parts) < 3 or parts[-3] != "wall":
                continue
            where = f"{path}:{ln}"
            name = " ".join(parts[0:4])  # variant, model, pairs, routing
            us = parts[4] if len(parts) > 4 else "?"
            out.append((name, number(parts[-2], where, "wall start"),
                        number(parts[-1], where, "wall end"), f"{us} us"))
    if not out:
        raise InputError(f"{path}: no line ending in 'wall START END' (bench_moe_v2's variant mode)")
    return out


def summarise(samples, name, t0, t1, rate, settle):
    inside = [s for s in samples if t0 + settle <= s["t"] <= t1 - EDGE_S]
    if not inside:
        return None
    w = [s["w"] for s in inside if s["w"] is not None]
    sm = [s["sm"] for s in inside if s["sm"] is not None]
    mem = [s["mem"] for s in inside if s["mem"] is not None]

    def med(v, fmt):
        return fmt % statistics.median(v) if v else "-"

    why = []
    for bit, label in REASONS:
        k = sum(1 for s in inside if s["why"] & bit)
        if k:
            why.append(f"{label} {100.0 * k / len(inside):.0f}%")
    return (f"| {name} | {rate} | {len(inside)} | {med(w, '%.0f')} | "
            f"{'%.0f' % max(w) if w else '-'} | {med(sm, '%.0f')} | "
            f"{'%.0f' % min(sm) if sm else '-'} | {med(mem, '%.0f')} | "
            f"{', '.join(why) or 'none'} |")


def svg(path, samples, wins, limit):
    """Power and SM clock over time, two panels sharing the time axis, each
    window shaded and numbered (its name in the list below the panels)."""
    t0 = samples[0]["t"]
    t1 = max(s["t"] for s in samples)
    W, H, L, T, PH, GAP = 960, 0, 60, 30, 170, 40
    lines = [f"{i + 1}. {name} ({rate})" for i, (name, _, _, rate) in enumerate(wins)]
    H = T + 2 * PH + GAP + 40 + 14 * len(lines) + 10
    span = (t1 - t0) or 1.0

    def px(t):
        return L + (t - t0) / span * (W - L - 20)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="10">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="16" text-anchor="middle" font-size="13">GPU power and SM clock '
           f'(nvidia-smi samples); shaded: timed windows</text>']
    panels = ((T, "w", "power (W)", max([s["w"] or 0 for s in samples] + [limit or 0]) * 1.05),
              (T + PH + GAP, "sm", "SM clock (MHz)", max([s["sm"] or 0 for s in samples] + [1]) * 1.05))
    for y0, key, title, ymax in panels:
        def py(v):
            return y0 + PH - v / ymax * PH
        for i, (name, a, b, _) in enumerate(wins):
            xa, xb = px(max(a, t0)), px(min(b, t1))
            if xb <= xa:
                continue
            fill = "#dbe9f6" if i % 2 == 0 else "#fde5cc"
            out.append(f'<rect x="{xa:.1f}" y="{y0}" width="{xb - xa:.1f}" height="{PH}" fill="{fill}"/>')
            out.append(f'<text x="{(xa + xb) / 2:.1f}" y="{y0 + 10}" text-anchor="middle" '
                       f'font-size="8">{i + 1}</text>')
        step = next(st for st in (50, 100, 200, 250, 500, 1000) if ymax / st <= 8)
        for k in range(0, int(ymax / step) + 1):
            Y = py(k * step)
            out.append(f'<line x1="{L}" y1="{Y:.1f}" x2="{W - 20}" y2="{Y:.1f}" stroke="#eee"/>')
            out.append(f'<text x="{L - 4}" y="{Y + 3:.1f}" text-anchor="end">{k * step}</text>')
        if key == "w" and limit:
            Y = py(limit)
            out.append(f'<line x1="{L}" y1="{Y:.1f}" x2="{W - 20}" y2="{Y:.1f}" stroke="#d62728" '
                       f'stroke-dasharray="4,3"/>')
            out.append(f'<text x="{W - 22}" y="{Y + 12:.1f}" text-anchor="end" fill="#d62728">'
                       f'power limit {limit:.0f} W</text>')
        pts = " ".join(f"{px(s['t']):.1f},{py(s[key]):.1f}" for s in samples if s[key] is not None)
        out.append(f'<polyline points="{pts}" fill="none" stroke="#1f77b4" stroke-width="0.8"/>')
        out.append(f'<rect x="{L}" y="{y0}" width="{W - 20 - L}" height="{PH}" fill="none" stroke="#999"/>')
        out.append(f'<text x="14" y="{y0 + PH / 2}" transform="rotate(-90 14 {y0 + PH / 2})" '
                   f'text-anchor="middle">{escape(title)}</text>')
    yb = T + 2 * PH + GAP
    for k in range(0, int(span) + 1, max(1, int(span / 10))):
        X = px(t0 + k)
        out.append(f'<text x="{X:.1f}" y="{yb + 12}" text-anchor="middle">{k} s</text>')
    for i, text in enumerate(lines):
        out.append(f'<text x="{L}" y="{yb + 34 + 14 * i}">{escape(text)}</text>')
    out.append("</svg>")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(out) + "\n")
    os.replace(tmp, path)


def main(argv):
    ap = argparse.ArgumentParser(
        description="The GPU's power and clocks (nvidia-smi samples) during the timed "
                    "windows of bench_wgmma / bench_moe_v2 runs, as a Markdown table.")
    ap.add_argument("samples", help="nvidia-smi --query-gpu CSV with a header (TZ=UTC; .gz read too)")
    ap.add_argument("--wgmma", action="append", default=[], metavar="CSV",
                    help="bench_wgmma CSV: a window per row (t_start, t_end)")
    ap.add_argument("--moe", action="append", default=[], metavar="TXT",
                    help="bench_moe_v2 variant-mode output: a window per 'wall S E' line")
    ap.add_argument("--window", action="append", nargs=3, default=[],
                    metavar=("NAME", "START", "END"), help="a window in Unix seconds")
    ap.add_argument("--settle", type=float, default=EDGE_S, metavar="S",
                    help="leave out each window's first S seconds (default 0.05)")
    ap.add_argument("--out", metavar="FILE.md", help="write the table here too")
    ap.add_argument("--svg", metavar="FILE.svg",
                    help="draw power and SM clock over time, the windows shaded and numbered")
    ap.add_argument("--limit", type=float, metavar="W",
                    help="the power limit to draw (nvidia-smi's enforced.power.limit)")
    a = ap.parse_args(argv)
    try:
        samples = read_samples(a.samples)
        wins = []
        for p in a.wgmma:
            wins += wgmma_windows(p)
        for p in a.moe:
            wins += moe_windows(p)
        for n, s, e in a.window:
            wins.append((n, number(s, "--window", "start"), number(e, "--window", "end"), "-"))
    except InputError as e:
        print(f"power_join.py: {e}", file=sys.stderr)
        return 2
    if not wins:
        print("power_join.py: no window given (--wgmma, --moe or --window)", file=sys.stderr)
        return 2
    if not 0 <= a.settle < 60:
        print(f"power_join.py: --settle {a.settle}: seconds, 0 to 60", file=sys.stderr)
        return 2
    lines = ["| run | rate | samples | power W (median) | power W (max) | SM MHz (median) | "
             "SM MHz (min) | mem MHz | clock held by |",
             "|---|---|---|---|---|---|---|---|---|"]
    empty = []
    for name, t0, t1, rate in wins:
        row = summarise(samples, name, t0, t1, rate, a.settle)
        if row is None:
            empty.append(name)
            lines.append(f"| {name} | {rate} | 0 | - | - | - | - | - | - |")
        else:
            lines.append(row)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.out:
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, a.out)
    if a.svg:
        svg(a.svg, samples, wins, a.limit)
    if empty:
        print(f"power_join.py: no sample inside {len(empty)} window(s): {', '.join(empty)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
