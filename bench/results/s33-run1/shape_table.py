#!/usr/bin/env python3
"""The selection-shape A/B of s33-run1 as a markdown table: per load, the
layer (ramp@ramp-oneshape: timed in alternation with the variant) against
ramp-oneshape (the selection in max_tokens' shape). Usage: shape_table.py
MAX_TOKENS layer-*.csv"""
import csv, sys

K = {'Qwen3-30B-A3B': 8, 'OLMoE-1B-7B': 8, 'DeepSeek-V3': 8, 'Mixtral-8x22B': 2}


def shape(pairs):  # src/select_gpu.c, ramp_select_shape_for
    w = 16 if pairs <= 4096 else 32
    n = 1
    while n < 8 and n * w * 32 < pairs:
        n *= 2
    return f'{n}x{w}'


max_tokens = int(sys.argv[1])
print('| model | tokens | routing | ids | blocks x warps: new / one shape | `ramp` (us) '
      '| `ramp-oneshape` (us) | one shape - new (us) |')
print('|---|---|---|---|---|---|---|---|')
sums = {}
for f in sys.argv[2:]:
    rows = [r for r in csv.DictReader(l for l in open(f) if not l.startswith('#'))]
    by = {}
    for r in rows:
        by.setdefault((int(r['tokens']), r['routing']), {})[r['impl']] = float(r['us_median'])
    m = rows[0]['model']
    k = K[m]
    for (t, rt), v in sorted(by.items()):
        a, b = v['ramp@ramp-oneshape'], v['ramp-oneshape']
        new, old = shape(t * k), shape(max_tokens * k)
        print(f'| {m} | {t} | {rt} | {t * k} | {new} / {old} | {a:.2f} | {b:.2f} | {b - a:+.2f} |')
        sums.setdefault((m, new == old), []).append(b - a)
print()
for (m, same), d in sorted(sums.items()):
    print(f'- {m}, {"same shape (A/A)" if same else "smaller shape"}: {len(d)} loads, '
          f'one shape - new {sum(d) / len(d):+.2f} us on average ({min(d):+.2f} .. {max(d):+.2f})')
