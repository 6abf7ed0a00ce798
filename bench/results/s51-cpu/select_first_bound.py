#!/usr/bin/env python3
"""The least a select-then-stream layer can take on Qwen3-30B and OLMoE EP8's
memory-bound loads, from measured parts (session 51; no GPU):

  bound = select+read (s40-run1, a stack of the selection then a kernel that
          only reads the active weights, H200, session 42's call)
        + the choice's round trip (s47-run1 call 1: 0.75-0.8 us from the
          kernel's wait to the chosen entry in hand, timeline stamps, H100)

over the copy-rate floor of the same table. A fused kernel must read the
choice before it knows which weights its block streams, so its stream
starts at least that round trip after the read kernel's does, and it can
stream no faster than the read kernel. Also: the microseconds a stream
begun before the choice would have to win back for 1.2x (session 46
measured the only such lever built, the L2 prefetch under the selection, at
0.2-1.6 us a layer in stacks on an H100).

    python3 bench/results/s51-cpu/select_first_bound.py
"""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "..", "s40-run1", "part1", "targets-stack-qwen3-olmoe.md")
CHOICE_US = 0.75  # the smallest of s47-run1's 0.75-0.8


def rows():
    model = None
    for line in open(TABLE):
        if line.startswith("## "):
            model = line[3:].split(",")[0].strip()
        m = re.match(r"\| (\d+) \| (uniform|skewed) \|", line)
        if m and model:
            c = [x.strip() for x in line.strip().strip("|").split("|")]
            # tokens routing pairs active layer floor over roof over TFLOP/s of torch torch/layer s+r ...
            yield model, int(c[0]), c[1], int(c[2]), float(c[4]), float(c[5]), float(c[13])


print("| model | tokens | routing | pairs | floor (us) | select+read | layer | bound (us) | bound / floor | to win back for 1.2x (us) |")
print("|---|---|---|---|---|---|---|---|---|---|")
for model, tok, rt, pairs, layer, floor, sr in rows():
    if pairs > 512:
        continue
    bound = sr + CHOICE_US
    need = bound - 1.2 * floor
    print(f"| {model} | {tok} | {rt} | {pairs} | {floor:.1f} | {sr:.1f} | {layer:.1f} | {bound:.2f} "
          f"| {bound / floor:.2f}x | {need:.2f} |")
