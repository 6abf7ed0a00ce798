#!/usr/bin/env python3
"""bf16_predict.py - what a BF16 layer on kernel v2 should take, predicted
from the FP8 layer measured on the same loads, against PyTorch's BF16
two-GEMM MoE (torch._grouped_mm) measured in the same run. Standard library
only; no GPU.

Model (kernels/moe_v2.md, session 9): v2's BF16 program is its FP8 program
with twice the stages per tile (a 128-byte stage holds 64 bf16 instead of
128 e4m3; the wgmma of either type consumes 32 bytes of K, so a stage costs
the same instructions and the same shared-memory reads), so everything but
the layer's fixed cost (the selection kernel, launches, the first tile's
start) scales by the bytes ratio k: 2 bytes per weight over FP8's 1 + the
block scales (1/4096 of a 4-byte float per weight), k = 1.998; --k-low
gives the optimistic end (the part of the FP8 time that does not scale:
output reductions, the activation epilogue).

  bench/bf16_predict.py LAYER_CSV PEER_CSV [--fixed US] [--k-low K]

LAYER_CSV: bench_layer's CSV (impl "ramp" rows: RaMP's FP8 layer);
PEER_CSV: peer_torch.py's (impl "torch-bf16" rows of the same model).
"""
import argparse
import sys

from layer_table import rows  # the CSVs' reader (comment lines skipped), beside this file


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("layer_csv")
    ap.add_argument("peer_csv")
    ap.add_argument("--fixed", type=float, default=9.0,
                    help="us of the FP8 layer that do not scale with the weight bytes (default 9: "
                         "the selection kernel and the kernel's start, moe_v2.md session 4)")
    ap.add_argument("--k-low", type=float, default=1.6,
                    help="the optimistic bytes ratio (default 1.6)")
    a = ap.parse_args()
    k_high = 2.0 / (1.0 + 4.0 / (128 * 128))
    layer = [r for r in rows(a.layer_csv) if r["impl"] == "ramp"]
    if not layer:
        sys.exit(f"{a.layer_csv}: no 'ramp' rows")
    model = layer[0]["model"]
    peer = {}
    for r in rows(a.peer_csv):
        if r["impl"] == "torch-bf16" and model.lower() in r["note"].lower():
            peer[(int(r["tokens"]), r["name"].split("-")[-1])] = float(r["us_median"])
    print(f"{model} {layer[0]['layout']}: BF16 layer predicted = {a.fixed:g} us + k x (FP8 layer "
          f"- {a.fixed:g} us), k = {a.k_low:g} .. {k_high:.3f}\n")
    print("| tokens, routing | pairs | FP8 layer (us) | BF16 predicted (us) | torch bf16 (us) "
          "| predicted over torch bf16 |")
    print("|---|---|---|---|---|---|")
    slower = 0
    for r in layer:
        t = float(r["us_median"])
        key = (int(r["tokens"]), r["routing"])
        lo = a.fixed + a.k_low * max(t - a.fixed, 0.0)
        hi = a.fixed + k_high * max(t - a.fixed, 0.0)
        tb = peer.get(key)
        if tb is None:
            over = "-"
        else:
            over = f"{tb / hi:.2f}-{tb / lo:.2f}x"
            slower += tb / hi < 1.0
        print(f"| {key[0]} {key[1]} | {r['local_pairs']} | {t:.1f} | {lo:.0f}-{hi:.0f} | "
              f"{'-' if tb is None else f'{tb:.1f}'} | {over} |")
    print(f"\nloads where the pessimistic end is slower than torch bf16: {slower} of {len(layer)}")


if __name__ == "__main__":
    main()
