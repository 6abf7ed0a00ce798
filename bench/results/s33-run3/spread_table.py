#!/usr/bin/env python3
"""s33-run3's A/B as markdown: per load, the layer with the tile spread
(ramp@ramp-jit, timed in alternation with the variant) and without it
(ramp-jit: compiled with RAMP_MV2_SPREAD=0), for each run folder given.
Usage: spread_table.py DIR..."""
import csv, glob, os, sys

runs = sys.argv[1:]
data = {}
for d in runs:
    for f in glob.glob(os.path.join(d, 'layer-*.csv')):
        for r in csv.DictReader(l for l in open(f) if not l.startswith('#')):
            if r['impl'] in ('ramp@ramp-jit', 'ramp-jit'):
                key = (r['model'], int(r['tokens']), r['routing'])
                data.setdefault(key, {})[(d, r['impl'])] = float(r['us_median'])
hdr = ' | '.join(f'{os.path.basename(d.rstrip("/"))}: spread / none' for d in runs)
print(f'| model | tokens | routing | {hdr} |')
print('|---|---|---|' + '---|' * len(runs))
sums = {}
for key in sorted(data):
    v = data[key]
    cells = []
    for d in runs:
        a, b = v.get((d, 'ramp@ramp-jit')), v.get((d, 'ramp-jit'))
        if a is None or b is None:
            cells.append('-')
            continue
        cells.append(f'{a:.1f} / {b:.1f} ({b - a:+.1f})')
        sums.setdefault((key[0], d), []).append(b - a)
    print(f'| {key[0]} | {key[1]} | {key[2]} | ' + ' | '.join(cells) + ' |')
print()
for (m, d), x in sorted(sums.items()):
    print(f'- {m}, {os.path.basename(d.rstrip("/"))}: none - spread {sum(x):+.1f} us over {len(x)} '
          f'loads, spread faster on {sum(1 for y in x if y > 0)}')
