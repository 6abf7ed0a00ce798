#!/usr/bin/env python3
"""targets.py - issue #5's targets from one GPU run: the layer's time per load
(bench_layer CSVs) against the two ceilings measured in the same run
(peer_torch.py --ceilings: the copy rate and dense FP8 / BF16 products) and
against PyTorch's MoE on the same loads (peer_torch.py). Standard library only.

  bench/targets.py --ceilings ceilings.csv --peer peer.csv \\
      --loads layer-loads-<model>.json [...] LAYER_CSV [...]

Per load: the floor (the active experts' weights streamed once at the copy
rate: 3 h d bytes per FP8 expert plus one f32 scale per 128 x 128 block, 6 h d
per BF16 expert), the layer over the floor (the memory-bound target, 1.2x,
for loads of at most --memory-bound pairs), the roofline (the larger of the
floor and the load's FLOPs at the dense rate) and the layer over it, TFLOP/s (2 x pairs x 3 h d / time)
and its share of the dense rate, and PyTorch's time in the same precision over
the layer's (above 1: the layer is faster). Below each table: how many
memory-bound loads the roofline itself puts above 1.2x (their FLOPs at the
dense rate take longer than 1.2x the floor, so no kernel meets the target
there) and the rate the roofline allows on the largest load (its FLOPs over
the roof time: the ceiling for the 1,000 TFLOP/s target). With --svg DIR,
one plot per table (targets-<model>-<layout>-<kind>.svg): time against
pairs, log-log, the layer, PyTorch and the roofline.

CSVs from bench_layer since session 13 also hold the measured floor
(impl select+read and select+read-bulk: the selection kernel, then a kernel
that only reads the load's active weights with plain loads or with the TMA
unit's bulk copies, kernels/read_floor.cuh; the faster counts): three more
columns, that time
and the layer over it, and a line for the memory-bound loads: how far the
measured floor itself is from the copy-rate floor (what no kernel design
removes: launches, ramp-up, the selection before the weights can be read)
and the layer over it; with the read rows alone (impl read, read-bulk: no
selection before them), the same for the read alone. --read-sweep fits
bench_layer's read-sweep.csv (the bulk read of 64 MiB and more, one graph
replay each) as a fixed cost plus a rate and says how many memory-bound loads
hold less active weight than that line needs to meet 1.2x the copy floor:
loads that no layer timed as one graph replay can meet. --stack reads
bench_stack's CSVs instead: the layer, the floor and the read as what one
more of each adds to a stack of them in one graph (a forward pass).
"""
import argparse
import csv
import json
import math
import os
import re
import sys
from xml.sax.saxutils import escape


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def expert_bytes(h, d, bf16):
    return 6 * h * d if bf16 else 3 * h * d + 4 * (3 * h * d) // (128 * 128)


def svg_plot(path, title, pts, kind):
    """Log-log time (us) against pairs: the layer, PyTorch and the roof, one
    point per load (pts: (pairs, layer_us, roof_us, torch_us or None))."""
    W, H, L, R, T, B = 640, 420, 70, 200, 40, 50
    xs = [p[0] for p in pts]
    ys = [v for p in pts for v in p[1:] if v]
    x0, x1 = math.log10(max(1, min(xs)) / 1.3), math.log10(max(xs) * 1.3)
    y0, y1 = math.log10(min(ys) / 1.3), math.log10(max(ys) * 1.3)

    def px(x):
        return L + (math.log10(max(x, 1)) - x0) / (x1 - x0) * (W - L - R)

    def py(y):
        return H - B - (math.log10(y) - y0) / (y1 - y0) * (H - T - B)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2 - R / 2:.0f}" y="20" text-anchor="middle" font-size="13">'
           f'{escape(title)}</text>',
           f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="none" stroke="#999"/>']
    for lo, hi, along in ((x0, x1, "x"), (y0, y1, "y")):
        for e in range(math.floor(lo), math.ceil(hi) + 1):
            for m in (1, 2, 5):
                v = m * 10 ** e
                if not lo <= math.log10(v) <= hi:
                    continue
                if along == "x":
                    X = px(v)
                    out.append(f'<line x1="{X:.1f}" y1="{T}" x2="{X:.1f}" y2="{H - B}" stroke="#eee"/>')
                    out.append(f'<text x="{X:.1f}" y="{H - B + 14}" text-anchor="middle">{v:g}</text>')
                else:
                    Y = py(v)
                    out.append(f'<line x1="{L}" y1="{Y:.1f}" x2="{W - R}" y2="{Y:.1f}" stroke="#eee"/>')
                    out.append(f'<text x="{L - 4}" y="{Y + 4:.1f}" text-anchor="end">{v:g}</text>')
    out.append(f'<text x="{(L + W - R) / 2:.0f}" y="{H - 12}" text-anchor="middle">'
               f'token-expert pairs on this GPU</text>')
    out.append(f'<text x="16" y="{(T + H - B) / 2:.0f}" text-anchor="middle" '
               f'transform="rotate(-90 16 {(T + H - B) / 2:.0f})">time (us), log scale</text>')
    srt = sorted(pts)
    roof = " ".join(f"{px(p[0]):.1f},{py(p[2]):.1f}" for p in srt)
    out.append(f'<polyline points="{roof}" fill="none" stroke="#444" stroke-dasharray="5,3"/>')
    for p in srt:
        out.append(f'<circle class="layer" cx="{px(p[0]):.1f}" cy="{py(p[1]):.1f}" r="4" fill="#1f77b4"/>')
        if p[3]:
            out.append(f'<rect class="torch" x="{px(p[0]) - 3.5:.1f}" y="{py(p[3]) - 3.5:.1f}" '
                       f'width="7" height="7" fill="#ff7f0e"/>')
    lx = W - R + 14
    out += [f'<circle cx="{lx}" cy="{T + 10}" r="4" fill="#1f77b4"/>',
            f'<text x="{lx + 10}" y="{T + 14}">RaMP layer ({kind})</text>',
            f'<rect x="{lx - 3.5}" y="{T + 26.5}" width="7" height="7" fill="#ff7f0e"/>',
            f'<text x="{lx + 10}" y="{T + 34}">PyTorch MoE ({kind})</text>',
            f'<line x1="{lx - 6}" y1="{T + 50}" x2="{lx + 6}" y2="{T + 50}" stroke="#444" '
            f'stroke-dasharray="5,3"/>',
            f'<text x="{lx + 10}" y="{T + 54}">roofline: weights at</text>',
            f'<text x="{lx + 10}" y="{T + 68}">the copy rate or FLOPs</text>',
            f'<text x="{lx + 10}" y="{T + 82}">at the dense rate</text>', "</svg>"]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(out) + "\n")
    os.replace(tmp, path)


def read_sweep_line(path, copy_tb_s):
    """Least-squares line through bench_layer's read sweep (kernel "bulk", the
    read-bulk rows' kernel, sizes >= 64 MiB): one graph replay that reads B bytes
    takes fixed + B / rate. Meeting 1.2x the copy floor needs fixed + B / rate <=
    1.2 B / copy, so B >= fixed / (1.2 / copy - 1 / rate)."""
    pts, empty = [], None
    for r in rows(path):
        if r["kernel"] != "bulk":
            continue
        mib, us = float(r["mib"]), float(r["us_median"])
        if mib == 0:
            empty = us
        elif mib >= 64:
            pts.append((mib * (1 << 20), us))
    if len(pts) < 2:
        sys.exit(f"{path}: fewer than two bulk rows of >= 64 MiB")
    n = len(pts)
    mx, my = sum(p[0] for p in pts) / n, sum(p[1] for p in pts) / n
    slope = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    fixed = my - slope * mx                     # us
    rate = 1e6 / slope / 1e12                   # TB/s (slope: us a byte)
    gap = 1.2 / (copy_tb_s * 1e12) - 1.0 / (rate * 1e12)  # s per byte
    min_bytes = fixed * 1e-6 / gap if gap > 0 else float("inf")
    text = (f"read sweep ({os.path.basename(path)}, bulk copies, {n} sizes of 64 MiB and up): one "
            f"graph replay reading B bytes takes {fixed:.1f} us + B at {rate:.2f} TB/s"
            + (f" (the empty kernel's replay: {empty:.1f} us)" if empty is not None else "")
            + f"; at the copy rate's {copy_tb_s:.2f} TB/s that meets 1.2x the copy floor only from "
            f"{min_bytes / 1e6:.0f} MB read")
    return {"fixed": fixed, "rate": rate, "min_bytes": min_bytes, "text": text}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("layer_csv", nargs="+", help="bench_layer CSVs (FP8 or --bf16 1)")
    ap.add_argument("--ceilings", required=True, help="peer_torch.py --ceilings CSV")
    ap.add_argument("--peer", required=True, help="peer_torch.py CSV on the same loads")
    ap.add_argument("--loads", action="append", required=True,
                    help="bench_layer --loads-json files (model shapes)")
    ap.add_argument("--svg", metavar="DIR", help="also write one plot per table into DIR")
    ap.add_argument("--layer-impl", default=None,
                    help="the rows that are the layer (default ramp, with --stack ramp-stack; e.g. "
                         "ramp-units: weights in stage units, bench_layer --units 1)")
    ap.add_argument("--stack", action="store_true",
                    help="the CSVs are bench_stack's: the layer is its ramp-stack rows (what one "
                         "more layer adds to a stack of layers in one graph) unless --layer-impl "
                         "says otherwise, and the measured floor and the read alone are the same "
                         "stacks' (select+read-bulk-stack, read-bulk-stack)")
    ap.add_argument("--read-sweep", metavar="CSV",
                    help="bench_layer's read-sweep.csv from the same run: fit its bulk rows "
                         "(>= 64 MiB) as a fixed cost plus a rate, and say below which active "
                         "weight one graph replay cannot meet 1.2x the copy floor even reading")
    ap.add_argument("--memory-bound", type=int, default=512,
                    help="pairs up to which a load counts as memory-bound (default 512)")
    a = ap.parse_args()
    if a.layer_impl is None:
        a.layer_impl = "ramp-stack" if a.stack else "ramp"
    floor_impls = ("select+read-bulk-stack",) if a.stack else ("select+read", "select+read-bulk")
    read_impls = ("read-bulk-stack",) if a.stack else ("read", "read-bulk")

    ceil = {}
    for r in rows(a.ceilings):
        if not r.get("us_median"):
            continue
        us = float(r["us_median"])
        if r["name"] == "copy":             # "N MiB", read and written once each
            rate = 2.0 * float(r["shape"].split()[0]) * (1 << 20) / (us * 1e-6) / 1e12
        else:                               # "MxNxK"
            m, n, k = (float(x) for x in r["shape"].split("x"))
            rate = 2.0 * m * n * k / (us * 1e-6) / 1e12
        ceil[r["name"]] = max(ceil.get(r["name"], 0.0), rate)
    for need in ("copy", "dense-fp8", "dense-bf16"):
        if need not in ceil:
            sys.exit(f"{a.ceilings}: no measured '{need}' row")
    shapes = {}
    for path in a.loads:
        with open(path) as f:
            j = json.load(f)
        shapes[j["model"]] = (j["inter"], j["hidden"], j["local_experts"])
    peer = {}       # by model and local experts: one file may hold several layouts
    for r in rows(a.peer):
        m = re.search(r" E=(\d+)", r["note"])
        if r.get("us_median") and m:
            key = (r["note"].split(" d=")[0], int(m.group(1)), int(r["tokens"]),
                   r["name"].split("-")[-1], r["impl"])
            peer[key] = float(r["us_median"])

    print(f"ceilings in this run: copy {ceil['copy']:.2f} TB/s, dense FP8 "
          f"{ceil['dense-fp8']:.0f} TFLOP/s, dense BF16 {ceil['dense-bf16']:.0f} TFLOP/s\n")
    sweep = read_sweep_line(a.read_sweep, ceil["copy"]) if a.read_sweep else None
    if sweep:
        print(sweep["text"] + "\n")
    for path in a.layer_csv:
        with open(path) as f:
            head = f.readline()
        bf16 = " bf16=1 " in head
        if a.stack != head.startswith("# bench_stack "):
            sys.exit(f"{path}: " + ("not a bench_stack CSV (--stack)" if a.stack else
                                    "a bench_stack CSV: pass --stack"))
        allrows = rows(path)
        layer = [r for r in allrows if r["impl"] == a.layer_impl]
        readf = {}      # the faster of the two read kernels (plain loads, bulk copies)
        read_alone = {}  # the same kernels without the selection before them
        for r in allrows:
            key, us = (int(r["tokens"]), r["routing"]), r["us_median"]
            if r["impl"] in floor_impls:
                readf[key] = min(float(us), readf.get(key, float(us)))
            if r["impl"] in read_impls:
                read_alone[key] = min(float(us), read_alone.get(key, float(us)))
        if not layer:
            sys.exit(f"{path}: no {a.layer_impl} rows")
        model = layer[0]["model"]
        if model not in shapes:
            sys.exit(f"{path}: model {model} is in none of the --loads files")
        h, d, el = shapes[model]
        kind, impl = ("BF16", "torch-bf16") if bf16 else ("FP8", "torch-fp8-rowwise")
        dense = ceil["dense-bf16" if bf16 else "dense-fp8"]
        print(f"## {model} {layer[0]['layout']}, {kind} (h={h}, d={d})\n")
        extra = " select+read (us) | layer / it | read over floor |" if readf else ""
        print(f"| tokens | routing | pairs | active | layer (us) | floor (us) | over floor "
              f"| roof (us) | over roof | TFLOP/s | of dense {kind} | torch {kind} (us) | torch / layer |"
              + extra)
        print("|---" * (16 if readf else 13) + "|")
        mem, roofs, slower, n, pts = [], [], 0, 0, []
        barred = []     # memory-bound loads whose FLOPs alone take more than 1.2x the floor
        roof_tf = (0, 0.0)  # (pairs, the rate the roofline allows) of the load with the most pairs
        rmem, lmem = [], []  # memory-bound: measured floor over copy floor, layer over it
        amem = []       # memory-bound: the read alone over the copy floor
        small = []      # memory-bound loads with less active weight than the sweep line allows
        best_tf = 0.0
        for r in sorted(layer, key=lambda r: (int(r["tokens"]), r["routing"] != "uniform")):
            t, rt, pairs, act = int(r["tokens"]), r["routing"], int(r["local_pairs"]), int(r["active"])
            us = float(r["us_median"])
            rf = readf.get((t, rt))
            if act == 0:        # no local pair: no floor to compare with
                print(f"| {t} | {rt} | 0 | 0 | {us:.1f} | - | - | - | - | - | - | - | - |"
                      + (" - | - | - |" if readf else ""))
                continue
            floor = act * expert_bytes(h, d, bf16) / (ceil["copy"] * 1e12) * 1e6
            flop = 2.0 * pairs * 3 * h * d
            tf = flop / (us * 1e-6) / 1e12
            math_us = flop / (dense * 1e12) * 1e6
            roof = max(floor, math_us)
            roofs.append(us / roof)
            if pairs > roof_tf[0]:
                roof_tf = (pairs, flop / (roof * 1e-6) / 1e12)
            best_tf = max(best_tf, tf)
            pt = peer.get((model, el, t, rt, impl))
            pts.append((pairs, us, roof, pt))
            if pairs <= a.memory_bound:
                mem.append(us / floor)
                if math_us > 1.2 * floor:
                    barred.append((pairs, us <= 1.2 * floor))
                if rf:
                    rmem.append(rf / floor)
                    lmem.append(us / rf)
                if (t, rt) in read_alone:
                    amem.append(read_alone[(t, rt)] / floor)
                if sweep and act * expert_bytes(h, d, bf16) < sweep["min_bytes"]:
                    small.append(pairs)
            if pt:
                n += 1
                slower += pt < us
            print(f"| {t} | {rt} | {pairs} | {act} | {us:.1f} | {floor:.1f} | {us / floor:.2f}x "
                  f"| {roof:.1f} | {us / roof:.2f}x | {tf:.0f} | {100 * tf / dense:.0f}% | {f'{pt:.1f}' if pt else '-'} "
                  f"| {f'{pt / us:.2f}x' if pt else '-'} |"
                  + ((f" {rf:.1f} | {us / rf:.2f}x | {rf / floor:.2f}x |" if rf else " - | - | - |")
                     if readf else ""))
        print()
        if mem:
            print(f"- memory-bound loads (<= {a.memory_bound} pairs): {min(mem):.2f}-{max(mem):.2f}x "
                  f"the floor (target 1.2x: met on {sum(m <= 1.2 for m in mem)} of {len(mem)})")
            # no schedule beats max(floor, FLOPs at the dense rate): where the FLOPs alone
            # exceed 1.2x the floor, the target is out of reach by the roofline itself
            print(f"- the roofline itself puts {len(barred)} of those {len(mem)} loads above 1.2x "
                  f"(their FLOPs at the dense {kind} rate take longer than 1.2x the floor"
                  + (f": {', '.join(str(p) for p, _ in sorted(barred))} pairs" if barred else "")
                  + f"); target met on {sum(m <= 1.2 for m in mem) - sum(ok for _, ok in barred)} "
                  f"of the {len(mem) - len(barred)} it allows")
        if rmem:
            print(f"- measured floor on those loads (selection, then only reading the active "
                  f"weights): {min(rmem):.2f}-{max(rmem):.2f}x the copy-rate floor (over 1.2x on "
                  f"{sum(m > 1.2 for m in rmem)} of {len(rmem)}); the layer {min(lmem):.2f}-"
                  f"{max(lmem):.2f}x the measured floor")
        if amem:
            where = "each in a stack of such reads" if a.stack else "alone in its graph"
            print(f"- a kernel that only reads the active weights, {where} (no "
                  f"selection, no math): {min(amem):.2f}-{max(amem):.2f}x the copy-rate floor "
                  f"(over 1.2x on {sum(m > 1.2 for m in amem)} of {len(amem)})")
        if sweep and mem:
            print(f"- below the read sweep's line (less than {sweep['min_bytes'] / 1e6:.0f} MB of "
                  f"active weights, where even one graph that only reads them takes more than "
                  f"1.2x the copy floor): {len(small)} of the {len(mem)} memory-bound loads")
        print(f"- over the roofline (the larger of the floor and the FLOPs at the dense rate): "
              f"{min(roofs):.2f}-{max(roofs):.2f}x")
        print(f"- highest rate: {best_tf:.0f} TFLOP/s ({100 * best_tf / dense:.0f}% of the dense {kind} "
              f"rate measured in this run)")
        if roof_tf[0]:
            print(f"- the most the roofline allows on the largest load ({roof_tf[0]} pairs): "
                  f"{roof_tf[1]:.0f} TFLOP/s (its FLOPs over the roof time)")
        print(f"- slower than torch {kind} on {slower} of {n} loads")
        if a.svg:
            os.makedirs(a.svg, exist_ok=True)
            name = f"targets-{model}-{layer[0]['layout']}-{kind.lower()}.svg"
            svg_plot(os.path.join(a.svg, name),
                     f"{model} {layer[0]['layout']}, {kind}: layer, PyTorch and the roofline",
                     pts, kind)
            print(f"- plot: {name}")
        print()


if __name__ == "__main__":
    main()
