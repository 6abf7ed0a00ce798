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
the layer's (above 1: the layer is faster).
"""
import argparse
import csv
import json
import sys


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def expert_bytes(h, d, bf16):
    return 6 * h * d if bf16 else 3 * h * d + 4 * (3 * h * d) // (128 * 128)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("layer_csv", nargs="+", help="bench_layer CSVs (FP8 or --bf16 1)")
    ap.add_argument("--ceilings", required=True, help="peer_torch.py --ceilings CSV")
    ap.add_argument("--peer", required=True, help="peer_torch.py CSV on the same loads")
    ap.add_argument("--loads", action="append", required=True,
                    help="bench_layer --loads-json files (model shapes)")
    ap.add_argument("--memory-bound", type=int, default=512,
                    help="pairs up to which a load counts as memory-bound (default 512)")
    a = ap.parse_args()

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
        shapes[j["model"]] = (j["inter"], j["hidden"])
    peer = {}
    for r in rows(a.peer):
        if r.get("us_median"):
            model = r["note"].split(" d=")[0]
            peer[(model, int(r["tokens"]), r["name"].split("-")[-1], r["impl"])] = float(r["us_median"])

    print(f"ceilings in this run: copy {ceil['copy']:.2f} TB/s, dense FP8 "
          f"{ceil['dense-fp8']:.0f} TFLOP/s, dense BF16 {ceil['dense-bf16']:.0f} TFLOP/s\n")
    for path in a.layer_csv:
        with open(path) as f:
            bf16 = " bf16=1 " in f.readline()
        layer = [r for r in rows(path) if r["impl"] == "ramp"]
        if not layer:
            sys.exit(f"{path}: no ramp rows")
        model = layer[0]["model"]
        if model not in shapes:
            sys.exit(f"{path}: model {model} is in none of the --loads files")
        h, d = shapes[model]
        kind, impl = ("BF16", "torch-bf16") if bf16 else ("FP8", "torch-fp8-rowwise")
        dense = ceil["dense-bf16" if bf16 else "dense-fp8"]
        print(f"## {model} {layer[0]['layout']}, {kind} (h={h}, d={d})\n")
        print(f"| tokens | routing | pairs | active | layer (us) | floor (us) | over floor "
              f"| roof (us) | over roof | TFLOP/s | of dense {kind} | torch {kind} (us) | torch / layer |")
        print("|---" * 13 + "|")
        mem, roofs, slower, n = [], [], 0, 0
        best_tf = 0.0
        for r in sorted(layer, key=lambda r: (int(r["tokens"]), r["routing"] != "uniform")):
            t, rt, pairs, act = int(r["tokens"]), r["routing"], int(r["local_pairs"]), int(r["active"])
            us = float(r["us_median"])
            floor = act * expert_bytes(h, d, bf16) / (ceil["copy"] * 1e12) * 1e6
            flop = 2.0 * pairs * 3 * h * d
            tf = flop / (us * 1e-6) / 1e12
            roof = max(floor, flop / (dense * 1e12) * 1e6)
            roofs.append(us / roof)
            best_tf = max(best_tf, tf)
            pt = peer.get((model, t, rt, impl))
            if pairs <= a.memory_bound:
                mem.append(us / floor)
            if pt:
                n += 1
                slower += pt < us
            print(f"| {t} | {rt} | {pairs} | {act} | {us:.1f} | {floor:.1f} | {us / floor:.2f}x "
                  f"| {roof:.1f} | {us / roof:.2f}x | {tf:.0f} | {100 * tf / dense:.0f}% | {f'{pt:.1f}' if pt else '-'} "
                  f"| {f'{pt / us:.2f}x' if pt else '-'} |")
        print()
        if mem:
            print(f"- memory-bound loads (<= {a.memory_bound} pairs): {min(mem):.2f}-{max(mem):.2f}x "
                  f"the floor (target 1.2x: met on {sum(m <= 1.2 for m in mem)} of {len(mem)})")
        print(f"- over the roofline (the larger of the floor and the FLOPs at the dense rate): "
              f"{min(roofs):.2f}-{max(roofs):.2f}x")
        print(f"- highest rate: {best_tf:.0f} TFLOP/s ({100 * best_tf / dense:.0f}% of the dense {kind} "
              f"rate measured in this run)")
        print(f"- slower than torch {kind} on {slower} of {n} loads\n")


if __name__ == "__main__":
    main()
