#!/usr/bin/env python3
"""layer_table.py - markdown table of the MoE layer against its peers, from
bench_layer's CSV (layer-<model>.csv), peer_torch's (peer.csv) and, when
given, an earlier bench_layer CSV of the same loads (--before) to show the
change. A BF16 layer's CSV (bench_layer --bf16 1, "bf16=1" in its header)
is compared with torch's BF16 MoE only: against FP8 it would not be like for
like. Standard library only.

  bench/layer_table.py LAYER_CSV PEER_CSV [--before OLD_LAYER_CSV]
"""
import argparse
import csv
import sys


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("layer_csv")
    ap.add_argument("peer_csv")
    ap.add_argument("--before", help="an earlier bench_layer CSV of the same loads")
    a = ap.parse_args()
    layer = rows(a.layer_csv)
    with open(a.layer_csv) as f:
        bf16 = " bf16=1 " in f.readline()
    if not layer:
        sys.exit(f"{a.layer_csv}: no rows")
    model = layer[0]["model"]
    peer = {}
    for r in rows(a.peer_csv):
        if model.lower() in r["note"].lower():
            peer[(int(r["tokens"]), r["name"].split("-")[-1], r["impl"])] = float(r["us_median"])
    before = {}
    if a.before:
        for r in rows(a.before):
            if r["impl"] == "ramp":
                before[(int(r["tokens"]), r["routing"])] = (float(r["us_median"]), r["config"])
    by = {}
    for r in layer:
        by[(int(r["tokens"]), r["routing"], r["impl"])] = r
    keys = sorted({(int(r["tokens"]), r["routing"]) for r in layer if r["impl"] == "ramp"},
                  key=lambda k: (k[0], k[1] != "uniform"))
    hb = " before (chosen) | change |" if before else ""
    f8h = "" if bf16 else " torch FP8 |"
    f8o = "" if bf16 else " over FP8 |"
    kind = "BF16 " if bf16 else ""
    print(f"| tokens | routing | pairs | RaMP {kind}(chosen) |{hb} vLLM-style |{f8h} torch BF16 "
          f"| over vLLM |{f8o} over BF16 |")
    print("|---" * (10 + (2 if before else 0) - (2 if bf16 else 0)) + "|")
    worst = {"fp8": 1e9, "bf16": 1e9}
    for t, rt in keys:
        r = by[(t, rt, "ramp")]
        us = float(r["us_median"])
        v = float(by[(t, rt, "vllm")]["us_median"])
        f8 = None if bf16 else peer.get((t, rt, "torch-fp8-rowwise"))
        b16 = peer.get((t, rt, "torch-bf16"))
        cells = [str(t), rt, r["local_pairs"], f"{us:.1f} ({r['config']})"]
        if before:
            b = before.get((t, rt))
            cells += [f"{b[0]:.1f} ({b[1]})", f"{b[0] / us:.2f}x"] if b else ["-", "-"]
        cells += [f"{v:.1f}"] + ([] if bf16 else [f"{f8:.1f}" if f8 else "-"])
        cells += [f"{b16:.1f}" if b16 else "-", f"{v / us:.2f}x"]
        cells += ([] if bf16 else [f"{f8 / us:.2f}x" if f8 else "-"])
        cells += [f"{b16 / us:.2f}x" if b16 else "-"]
        if f8:
            worst["fp8"] = min(worst["fp8"], f8 / us)
        if b16:
            worst["bf16"] = min(worst["bf16"], b16 / us)
        print("| " + " | ".join(cells) + " |")
    if bf16:
        slower = sum(1 for t, rt in keys if peer.get((t, rt, "torch-bf16"))
                     and peer[(t, rt, "torch-bf16")] < float(by[(t, rt, "ramp")]["us_median"]))
        print(f"\nslowest against torch BF16: {worst['bf16']:.2f}x; "
              f"slower than torch BF16 on {slower} of {len(keys)} loads")
    else:
        print(f"\nslowest against torch: FP8 {worst['fp8']:.2f}x, BF16 {worst['bf16']:.2f}x")

if __name__ == "__main__":
    main()
