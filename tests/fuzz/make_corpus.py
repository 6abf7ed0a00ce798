#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus (tests/fuzz/corpus/<target>/) with plain
Python (struct + json, no numpy, no libramp), so the seeds double as a check
that files written outside libramp read back. Run from anywhere:
    python3 tests/fuzz/make_corpus.py
"""
import hashlib
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def safetensors(tensors, metadata):
    """tensors: list of (name, dtype, shape, struct-format, values)."""
    header = {"__metadata__": metadata}
    data = b""
    for name, dtype, shape, fmt, values in tensors:
        raw = struct.pack("<%d%s" % (len(values), fmt), *values)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def trace(E, k, records, ids=None, aggregate=False):
    """records: list of (step, layer, tokens, counts)."""
    R = len(records)
    t = [("step", "I32", [R], "i", [r[0] for r in records]),
         ("layer", "I32", [R], "i", [r[1] for r in records]),
         ("tokens", "I32", [R], "i", [r[2] for r in records]),
         ("counts", "I32", [R, E], "i", [c for r in records for c in r[3]])]
    if ids is not None:
        t.append(("topk_ids", "I32", [len(ids) // k, k], "i", ids))
    meta = {"format": "ramp-trace", "version": "1", "model": "seed",
            "experts": str(E), "topk": str(k), "domain": "chat",
            "source": "make_corpus.py", "aggregate": "1" if aggregate else "0"}
    return safetensors(t, meta)


def timing(nan):
    X, C = 4, 2
    loads = [3, 1, 0, 2, 7, 7, 0, 0, 1, 0, 0, 0]
    times = [10.5, 11.0, 12.25, float("nan") if nan else 13.0, 0.0, 15.5]
    t = [("loads", "I32", [3, X], "i", loads),
         ("nexp", "I32", [3], "i", [4, 2, 1]),
         ("batch", "I32", [3], "i", [0, 0, 1]),
         ("gpu", "I32", [3], "i", [0, 1, 3]),
         ("domain", "I32", [3], "i", [0, 1, 0]),
         ("batch_tokens", "I32", [3], "i", [6, 6, 1]),
         ("times_us", "F32", [3, C], "f", times)]
    meta = {"format": "ramp-timing", "version": "1", "model": "seed",
            "layout": "EP4", "experts": "4", "topk": "2", "inter": "256",
            "hidden": "1024", "bf16": "0", "sms": "132",
            "configs": "r8.w128.s3,r32.w256.s2.persist.grp.k2",
            "blocks_per_sm": "2,1", "domains": "chat,math",
            "device": "NVIDIA H200", "command": "make_corpus.py",
            "date": "2025-01-01"}
    return safetensors(t, meta)


def seal(data):
    """Adds the checksum (docs/formats.md): metadata "sha256" = SHA-256 of
    the whole file with its 64 digits written as '0'."""
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    header["__metadata__"]["sha256"] = "0" * 64
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    out = struct.pack("<Q", len(text)) + text + data[8 + n:]
    digest = hashlib.sha256(out).hexdigest()
    return out.replace(b"0" * 64, digest.encode(), 1)


def plan():
    """A plan with per-entry wave sizes and its checksum over the canonical
    content (docs/formats.md), written without libramp."""
    p = {"format": "ramp-plan", "version": 1, "libramp": "0.1.0",
         "model": "seed", "layout": "EP8", "device": "NVIDIA H200", "sms": 132,
         "geometry": {"experts": 16, "topk": 8, "inter": 768, "hidden": 2048,
                      "bf16": 0},
         "occupancy": 2, "cost_terms": ["1", "waves", "tiles", "active"],
         "menu": [{"config": "r16.w128.s4", "theta": [3.25, 37.5, 0.1, 0.0],
                   "slots": 132},
                  {"config": "r24.w128.s4.persist.grp",
                   "theta": [3.125, 39.0, 0.14, 0.5], "slots": 264}]}
    g = p["geometry"]
    lines = ["ramp-plan %d" % p["version"], "libramp " + p["libramp"],
             "model " + p["model"], "layout " + p["layout"],
             "device " + p["device"], "sms %d" % p["sms"],
             "geometry %d %d %d %d %d" % (g["experts"], g["topk"], g["inter"],
                                          g["hidden"], g["bf16"]),
             "occupancy %d" % p["occupancy"]]
    for e in p["menu"]:
        lines.append("entry %s %s %d" % (e["config"], " ".join("%.17g" % v for v in e["theta"]),
                                         e.get("slots", 0)))
    text = "\n".join(lines) + "\n"
    p["checksum"] = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    return json.dumps(p, indent=1).encode()


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    assert len(data) < 8192
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# Per-batch trace with ids: E=4, k=2; token rows (0,1) (1,3) | (2,3).
write("fuzz_trace", "ids.safetensors",
      trace(4, 2, [(0, 0, 2, [1, 2, 0, 1]), (0, 1, 1, [0, 0, 1, 1]),
                   (1, 0, 0, [0, 0, 0, 0])], ids=[0, 1, 1, 3, 2, 3]))
write("fuzz_trace", "noids.safetensors",
      trace(6, 3, [(0, 0, 4, [4, 2, 2, 2, 1, 1]), (3, 2, 1, [0, 1, 0, 1, 0, 1])]))
write("fuzz_trace", "aggregate.safetensors",
      trace(5, 3, [(0, 0, 333, [600, 100, 100, 100, 100]),
                   (0, 1, 334, [601, 100, 100, 100, 100])], aggregate=True))
write("fuzz_trace", "empty.safetensors", trace(3, 1, []))
write("fuzz_timing", "measured.safetensors", timing(False))
write("fuzz_timing", "missing.safetensors", timing(True))
write("fuzz_timing", "sealed.safetensors", seal(timing(False)))
write("fuzz_plan", "sealed.json", plan())
# fuzz_plan/sealed-pairs.json (five cost terms) is not written here: it is
# `ramp fit data/timing/qwen3-30b-ep8-v2.safetensors --cost-model eq3+pairs`'s
# plan, kept as libramp writes it.
write("fuzz_safetensors", "trace.safetensors",
      trace(4, 2, [(0, 0, 2, [1, 2, 0, 1])], ids=[0, 1, 1, 3]))
write("fuzz_safetensors", "mixed.safetensors",
      safetensors([("a", "F64", [2], "d", [0.5, -2.0]),
                   ("b", "U8", [3], "B", [1, 2, 3]),
                   ("c", "I64", [1, 1], "q", [-7]),
                   ("e", "F32", [0], "f", [])], {"k": "v"}))
# SGLang seeds: 3 bytes choose the model (experts-1, topk-1, layers-1).
dump = {"logical_count": [[0.0] * 4, [1.0, 2.0, 3.0, 4.0], [10, 0, 0, 1]]}
write("fuzz_sglang", "small.json", bytes([3, 1, 2]) + json.dumps(dump).encode())
dump = {"logical_count": [[float(e % 7) for e in range(16)] for _ in range(4)]}
write("fuzz_sglang", "e16.json", bytes([15, 3, 7]) + json.dumps(dump).encode())
