#!/usr/bin/env python3
"""s21-run6: a partial timing dataset to resume from, so that `ramp bench`
measures only the configurations a grown space added.

  seed_partial.py NEW_LOADS OLD_TIMES OUT

NEW_LOADS: `ramp dataset build` over the grown space (no times); OLD_TIMES: a
measured dataset of the same loads (same traces, seeds and batches) over the
old space. OUT: NEW_LOADS with every cell of a configuration OLD_TIMES has
copied from it, NaN for the others, no checksum (seal it with `ramp dataset
seal`). Refuses loads that differ in any tensor, or configurations in
OLD_TIMES that the new space lacks."""
import json, struct, sys

import numpy as np

KINDS = {"I32": "<i4", "F32": "<f4"}


def read(path):
    buf = open(path, "rb").read()
    n = struct.unpack("<Q", buf[:8])[0]
    header = json.loads(buf[8:8 + n])
    meta = header.pop("__metadata__", {})
    arrays = {name: np.frombuffer(buf, KINDS[t["dtype"]], offset=8 + n + t["data_offsets"][0],
                                  count=int(np.prod(t["shape"]))).reshape(t["shape"]).copy()
              for name, t in header.items()}
    dtypes = {name: t["dtype"] for name, t in header.items()}
    return meta, arrays, dtypes


def write(path, meta, arrays, dtypes):
    header, blobs, off = {}, [], 0
    for name in sorted(arrays):
        b = arrays[name].astype(KINDS[dtypes[name]]).tobytes()
        header[name] = {"dtype": dtypes[name], "shape": list(arrays[name].shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = meta
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    new_meta, new, new_types = read(sys.argv[1])
    old_meta, old, _ = read(sys.argv[2])
    for name in ("loads", "nexp", "batch", "gpu", "domain", "batch_tokens"):
        if name not in new or name not in old or not np.array_equal(new[name], old[name]):
            sys.exit(f"seed_partial.py: tensor {name} differs: not the same loads")
    for key in ("model", "layout", "experts", "topk", "inter", "hidden", "bf16", "kernel", "domains"):
        if new_meta.get(key) != old_meta.get(key):
            sys.exit(f"seed_partial.py: metadata {key} differs ({new_meta.get(key)} / {old_meta.get(key)})")
    new_cfg, old_cfg = new_meta["configs"].split(","), old_meta["configs"].split(",")
    missing = sorted(set(old_cfg) - set(new_cfg))
    if missing:
        sys.exit(f"seed_partial.py: {len(missing)} configurations of OLD_TIMES not in NEW_LOADS: {missing[:4]}")
    times = np.full((new["loads"].shape[0], len(new_cfg)), np.nan, dtype=np.float32)
    for j, c in enumerate(new_cfg):
        if c in old_cfg:
            times[:, j] = old["times_us"][:, old_cfg.index(c)]
    new["times_us"] = times
    new_types["times_us"] = "F32"
    meta = {k: v for k, v in new_meta.items() if k != "sha256"}
    for key in ("device", "sms", "date", "command"):
        if key in old_meta:
            meta[key] = old_meta[key]
    write(sys.argv[3], meta, new, new_types)
    added = [c for c in new_cfg if c not in old_cfg]
    print(f"{sys.argv[3]}: {len(new_cfg)} configurations, {len(old_cfg)} copied, "
          f"{len(added)} to measure: {','.join(added)}")


main()
