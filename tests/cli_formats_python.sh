#!/usr/bin/env bash
# Files other tools can open: numpy (no libramp, no safetensors package)
# reads a trace and a timing dataset written by the CLI, following the
# reader in docs/formats.md, and checks them against what the CLI reports.
set -eu
ramp=$1
tmp=${RAMP_TEST_TMP:-/tmp}/cli_formats_python.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing: run tools/install-deps" >&2; exit 1; }
"$ramp" trace gen --model olmoe --domain code --steps 30 --layers 2 --seed 9 --ids -o "$tmp/t.safetensors" 2>/dev/null
"$ramp" dataset build --model olmoe --layout EP4 --max-batches 5 -o "$tmp/d0.safetensors" "$tmp/t.safetensors" 2>/dev/null
"$ramp" dataset simulate "$tmp/d0.safetensors" -o "$tmp/d.safetensors"
"$ramp" loads "$tmp/t.safetensors" --layout EP4 --record 3 --csv > "$tmp/loads.csv"
python3 - "$tmp" <<'PY'
import json, sys, numpy as np
tmp = sys.argv[1]
def read_safetensors(path):
    buf = open(path, "rb").read()
    n = int(np.frombuffer(buf[:8], "<u8")[0])
    header = json.loads(buf[8:8 + n])
    meta = header.pop("__metadata__", {})
    kinds = {"I32": "<i4", "I64": "<i8", "F32": "<f4", "F64": "<f8", "U8": "u1"}
    return meta, {name: np.frombuffer(buf, kinds[t["dtype"]], offset=8 + n + t["data_offsets"][0],
                                      count=int(np.prod(t["shape"]))).reshape(t["shape"])
                  for name, t in header.items()}
meta, t = read_safetensors(tmp + "/t.safetensors")
E, k = int(meta["experts"]), int(meta["topk"])
assert meta["format"] == "ramp-trace" and E == 64 and k == 8, meta
assert (t["counts"].sum(axis=1) == t["tokens"] * k).all()
# the ids reproduce the counts, record by record
ids, off = t["topk_ids"], 0
for r in range(len(t["tokens"])):
    rows = ids[off:off + t["tokens"][r]]; off += t["tokens"][r]
    assert (np.bincount(rows.ravel(), minlength=E) == t["counts"][r]).all()
# record 3's per-GPU loads as the CLI printed them
csv = np.loadtxt(tmp + "/loads.csv", delimiter=",", skiprows=1, dtype=int)
assert (csv[:, 3] == t["counts"][3][csv[:, 2]]).all()
meta, d = read_safetensors(tmp + "/d.safetensors")
configs = meta["configs"].split(",")
assert d["times_us"].shape == (len(d["nexp"]), len(configs))
assert np.isfinite(d["times_us"]).all() and (d["times_us"] > 0).all()
assert len(d["nexp"]) == 5 * 4 and (d["nexp"] == 16).all()
print("cli_formats_python: numpy read the trace and dataset; all checks passed")
PY
