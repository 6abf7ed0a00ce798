#!/usr/bin/env python3
"""peer_torch.py - the PyTorch peer of RaMP's MoE layer, timed on the same loads.

A two-GEMM MoE layer built from PyTorch's grouped GEMMs (torch only, plus the
standard library), timed on the per-GPU loads RaMP's layer benchmark is timed
on, so that both appear side by side in one GPU run (issue #4, item 5).
Run `python3 bench/peer_torch.py --help` for the input schema, the timed
region and the CSV columns.
"""

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import time

FP8_MAX = 448.0          # largest finite float8_e4m3fn
EPS = 1e-12              # floor of an amax before it becomes a scale
IMPLS = ("torch-fp8-rowwise", "torch-bf16")
# norm-wise relative error bounds per token: against the float32 reference
# that quantizes as the layer does (BOUND_Q), and against the exact math
# without activation quantization (BOUND_EXACT)
BOUND_Q = {"torch-fp8-rowwise": 0.06, "torch-bf16": 0.02}
BOUND_EXACT = {"torch-fp8-rowwise": 0.10, "torch-bf16": 0.03}
CSV_COLUMNS = ["load", "name", "tokens", "pairs", "impl", "us_median", "us_p10",
               "us_p90", "tflops", "note"]

DESCRIPTION = """\
Times a two-GEMM MoE layer built from PyTorch's grouped GEMMs on RaMP's per-GPU
loads (the peer of issue #4 item 5). Needs a CUDA GPU with SM 9.0 (H100/H200)
for torch._scaled_grouped_mm; torch and the standard library only.

implementations (--impl, default both):
  torch-fp8-rowwise  x (bf16 [tokens, d]) gathered per expert with the sorted
                     token ids (index_select), quantized rowwise to e4m3 (one
                     f32 scale per row), torch._scaled_grouped_mm against w13
                     (e4m3 [E, 2h, d], one scale per output row, passed as the
                     column-major view [E, d, 2h]); SiLU(gate) * up (gate = the
                     first h columns) times the router weight; quantized rowwise
                     again; torch._scaled_grouped_mm against w2 (e4m3 [E, d, h],
                     one scale per output row); the bf16 rows, as f32, are
                     scatter-added into out (f32 [tokens, d], zeroed first) with
                     index_add_. The router weight is applied once, to the
                     activation before the second GEMM (the GEMM is linear, so
                     this equals weighting the scatter).
  torch-bf16         the same with torch._grouped_mm in BF16 (no quantization).

timed region: from the sorted token ids on: gather, quantize, GEMM 1,
activation, quantize, GEMM 2, zeroing out, scatter-add. The routing itself
(top-k, sort by expert, offsets) is excluded for every implementation: the
sorted ids, the int32 cumulative row offsets per expert (offs) and the router
weight per sorted row are inputs, as they would be for an engine. The layer is
captured in a CUDA graph and replayed (note says "graph"); if capture fails it
is timed eagerly (note says "eager"). Before every timed run the L2 is flushed
by writing a --flush-mb buffer; CUDA events bracket the layer alone; the
median, 10th and 90th percentiles of --reps runs are reported. The eager time
of the same layer is given in note for reference.

groups: experts with zero rows repeat the previous offset. If --pad auto
(default), a child process first checks whether each op is correct on group
sizes that are not multiples of 16 (e.g. 5, 17, 0, 1); where it is not, every
expert's rows are padded to a multiple of 16 with rows of router weight 0
(their work is inside the timed region; note says "padded").

numerics: once per load and implementation, the graph's output on a few tokens
(--check-tokens) is compared with a float32 reference of the same math (x as
given, the layer's own weights dequantized, no activation quantization):
norm-wise relative error per token, bound 0.10 (FP8) / 0.03 (BF16); tokens with
no pair must come out exactly 0. A load that fails is written with empty times
and note FAILED, and the script exits 1 at the end.

input (--loads): JSON, one object or a list of such objects:
  {"model": "qwen3-30b", "hidden": 2048, "inter": 768, "topk": 8,
   "local_experts": 16,
   "loads": [{"name": "b512-skew", "tokens": 512, "counts": [...]}, ...]}
  hidden (d) and inter (h): multiples of 16 (the grouped GEMMs need K and N
  multiples of 16); local_experts (E): experts on this GPU; tokens: tokens of
  the batch on this GPU (rows of x and of out); counts: E non-negative ints,
  token-expert pairs per local expert (sum = pairs on this GPU; 0 allowed).
  Tokens are assigned to experts with those counts, distinct within an expert
  when counts[e] <= tokens, spreading pairs over tokens (least-loaded first),
  so no token gets more than topk local experts whenever the counts allow it.
  Optional per load: "seed" (int) for that load's inputs and assignment.

output (--out): CSV, written atomically (temporary file + rename) after every
load, columns:
  load      0-based index of the load in the file (across all objects, in
            file order; with several --loads files it runs on across them)
  name      the load's name as given
  tokens    tokens of the batch on this GPU
  pairs     sum(counts): token-expert pairs on this GPU
  impl      torch-fp8-rowwise | torch-bf16
  us_median, us_p10, us_p90   microseconds per layer call
  tflops    2 * pairs * 3 * h * d / us_median (useful work: padded rows and
            the activation step are not counted)
  note      model and shape, graph or eager, eager median, padding, the
            max relative error of the numerics check, fast accumulation
A short table is printed on stdout.
"""


# ----------------------------------------------------------------- input

class LoadsError(ValueError):
    pass


def _int(obj, key, where, minimum=0):
    v = obj.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or v < minimum:
        raise LoadsError(f"{where}: '{key}' must be an integer >= {minimum}, got {v!r}")
    return v


def parse_loads(text, source="loads", first_index=0):
    """Parses and checks a loads file; returns a list of sets (dicts) whose
    loads carry a running index 'index' from first_index. Raises LoadsError."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise LoadsError(f"{source}: not JSON: {e}") from None
    sets = doc if isinstance(doc, list) else [doc]
    if not sets:
        raise LoadsError(f"{source}: no load sets")
    out, index = [], first_index
    for si, s in enumerate(sets):
        where = f"{source}: set {si}"
        if not isinstance(s, dict):
            raise LoadsError(f"{where}: must be an object")
        model = s.get("model", f"set{si}")
        if not isinstance(model, str):
            raise LoadsError(f"{where}: 'model' must be a string")
        d = _int(s, "hidden", where, 16)
        h = _int(s, "inter", where, 16)
        topk = _int(s, "topk", where, 1)
        E = _int(s, "local_experts", where, 1)
        if d % 16 or h % 16:
            raise LoadsError(f"{where}: hidden ({d}) and inter ({h}) must be multiples of 16")
        if E >= 1024:
            raise LoadsError(f"{where}: local_experts ({E}) must be < 1024 (grouped GEMM limit)")
        loads = s.get("loads")
        if not isinstance(loads, list) or not loads:
            raise LoadsError(f"{where}: 'loads' must be a non-empty list")
        checked = []
        for li, ld in enumerate(loads):
            w = f"{where} load {li}"
            if not isinstance(ld, dict):
                raise LoadsError(f"{w}: must be an object")
            name = ld.get("name")
            if not isinstance(name, str) or not name:
                raise LoadsError(f"{w}: 'name' must be a non-empty string")
            tokens = _int(ld, "tokens", f"{w} ({name})", 1)
            counts = ld.get("counts")
            if (not isinstance(counts, list) or len(counts) != E or
                    any(not isinstance(c, int) or isinstance(c, bool) or c < 0 for c in counts)):
                raise LoadsError(f"{w} ({name}): 'counts' must be {E} non-negative integers")
            seed = ld.get("seed")
            if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
                raise LoadsError(f"{w} ({name}): 'seed' must be an integer")
            checked.append({"index": index, "name": name, "tokens": tokens,
                            "counts": list(counts), "seed": seed})
            index += 1
        out.append({"model": model, "hidden": d, "inter": h, "topk": topk,
                    "local_experts": E, "loads": checked})
    return out


# ----------------------------------------------------------------- helpers

def percentile(sorted_vals, q):
    """Linear-interpolated percentile (q in [0, 100]) of a sorted list."""
    if not sorted_vals:
        return float("nan")
    pos = (len(sorted_vals) - 1) * q / 100.0
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def write_csv_atomic(path, rows, columns=CSV_COLUMNS):
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in columns})
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def fmt(v, digits=1):
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


# ----------------------------------------------------------------- routing

def assign_tokens(torch, counts, tokens, gen):
    """Token ids per local expert with the given counts: distinct within an
    expert when counts[e] <= tokens, least-loaded tokens first (random ties),
    so no token holds more than ceil(pairs / tokens) pairs when avoidable."""
    load = torch.zeros(tokens, dtype=torch.float64)
    per_expert = [None] * len(counts)
    for e in sorted(range(len(counts)), key=lambda i: -counts[i]):
        c = counts[e]
        if c == 0:
            per_expert[e] = torch.zeros(0, dtype=torch.int64)
            continue
        if c <= tokens:
            key = load + torch.rand(tokens, generator=gen, dtype=torch.float64)
            idx = torch.topk(key, c, largest=False).indices
        else:   # more pairs than tokens: tokens repeat within the expert
            reps = -(-c // tokens)
            idx = torch.cat([torch.randperm(tokens, generator=gen) for _ in range(reps)])[:c]
        load.index_add_(0, idx, torch.ones(c, dtype=torch.float64))
        per_expert[e] = torch.sort(idx).values       # an engine's sort: by token within expert
    return per_expert


def build_layout(torch, per_expert, rw_per_expert, pad_to, min_rows_not=None):
    """Concatenates experts' rows (sorted ids, router weights, offsets).
    pad_to > 1: each expert's rows padded to a multiple with token-0 rows of
    weight 0. min_rows_not: if the total equals it, one more weight-0 row is
    appended to the last expert (avoids _scaled_grouped_mm's TensorWise/RowWise
    ambiguity when rows == groups)."""
    ids, rws, offs, total = [], [], [], 0
    E = len(per_expert)
    sizes = []
    for e in range(E):
        c = per_expert[e].numel()
        p = (-(-c // pad_to) * pad_to) if pad_to > 1 else c
        sizes.append(p)
    if min_rows_not is not None and sum(sizes) == min_rows_not:
        sizes[-1] += 1
    for e in range(E):
        c = per_expert[e].numel()
        extra = sizes[e] - c
        ids.append(per_expert[e])
        rws.append(rw_per_expert[e])
        if extra:
            ids.append(torch.zeros(extra, dtype=torch.int64))
            rws.append(torch.zeros(extra, dtype=torch.float32))
        total += sizes[e]
        offs.append(total)
    return (torch.cat(ids), torch.cat(rws), torch.tensor(offs, dtype=torch.int32), total)


# ----------------------------------------------------------------- weights

def quant_rowwise(torch, t):
    """e4m3 rowwise quantization along the last dim: (q, f32 scale), t ~= q * s."""
    s = t.abs().amax(dim=-1).float().clamp_(min=EPS).div_(FP8_MAX)
    # |t| / (amax / 448) <= 448 up to rounding, which rounds to 448 (no clamp needed)
    q = (t.float() / s.unsqueeze(-1)).to(torch.float8_e4m3fn)
    return q, s


def make_weights(torch, E, d, h, device, seed, need_fp8, need_bf16):
    g = torch.Generator(device=device)
    g.manual_seed(seed)
    W = {}
    w13 = torch.empty(E, 2 * h, d, dtype=torch.bfloat16, device=device)
    w2 = torch.empty(E, d, h, dtype=torch.bfloat16, device=device)
    for e in range(E):   # per expert: no f32 temporaries of the whole tensor
        w13[e] = (torch.randn(2 * h, d, generator=g, device=device) / math.sqrt(d)).to(torch.bfloat16)
        w2[e] = (torch.randn(d, h, generator=g, device=device) / math.sqrt(h)).to(torch.bfloat16)
    if need_fp8:
        w13q = torch.empty(E, 2 * h, d, dtype=torch.float8_e4m3fn, device=device)
        w2q = torch.empty(E, d, h, dtype=torch.float8_e4m3fn, device=device)
        s13 = torch.empty(E, 2 * h, dtype=torch.float32, device=device)
        s2 = torch.empty(E, d, dtype=torch.float32, device=device)
        for e in range(E):
            w13q[e], s13[e] = quant_rowwise(torch, w13[e])
            w2q[e], s2[e] = quant_rowwise(torch, w2[e])
        W["fp8"] = (w13q, s13, w2q, s2)
    if need_bf16:
        W["bf16"] = (w13, w2)
    return W


def dequant_expert(W, impl, e):
    if impl == "torch-fp8-rowwise":
        w13q, s13, w2q, s2 = W["fp8"]
        return (w13q[e].float() * s13[e].unsqueeze(1), w2q[e].float() * s2[e].unsqueeze(1))
    w13, w2 = W["bf16"]
    return w13[e].float(), w2[e].float()


# ----------------------------------------------------------------- the layers

def make_layer(torch, impl, W, x, ids, rw, offs, out, h, fast_accum):
    """Returns layer(): out = sum over this GPU's pairs of w * FFN_e(x[t]),
    from the sorted ids on. Every tensor it reads is static (graph-safe)."""
    F = torch.nn.functional
    if impl == "torch-fp8-rowwise":
        w13q, s13, w2q, s2 = W["fp8"]
        w13t = w13q.transpose(-2, -1)     # [E, d, 2h], column-major: mat_b of GEMM 1
        w2t = w2q.transpose(-2, -1)       # [E, h, d], column-major: mat_b of GEMM 2
        rw2 = rw.unsqueeze(1)

        def layer():
            xg = x.index_select(0, ids)                                   # gather, bf16 [R, d]
            sa = xg.abs().amax(dim=1).float().clamp_(min=EPS).div_(FP8_MAX)
            xq = (xg / sa.unsqueeze(1)).to(torch.float8_e4m3fn)
            h1 = torch._scaled_grouped_mm(xq, w13t, sa, s13, offs=offs,
                                          out_dtype=torch.bfloat16, use_fast_accum=fast_accum)
            a = F.silu(h1[:, :h]) * h1[:, h:] * rw2                       # f32 [R, h]
            sb = a.abs().amax(dim=1).clamp_(min=EPS).div_(FP8_MAX)
            aq = (a / sb.unsqueeze(1)).to(torch.float8_e4m3fn)
            y = torch._scaled_grouped_mm(aq, w2t, sb, s2, offs=offs,
                                         out_dtype=torch.bfloat16, use_fast_accum=fast_accum)
            out.zero_()
            out.index_add_(0, ids, y.float())
            return out
        return layer

    w13, w2 = W["bf16"]
    w13t = w13.transpose(-2, -1)           # [E, d, 2h]
    w2t = w2.transpose(-2, -1)             # [E, h, d]
    rwb = rw.to(torch.bfloat16).unsqueeze(1)
    gmm = getattr(torch, "_grouped_mm", None) or torch.nn.functional.grouped_mm

    def layer():
        xg = x.index_select(0, ids)
        h1 = gmm(xg, w13t, offs=offs)
        a = F.silu(h1[:, :h]) * h1[:, h:] * rwb                           # bf16 [R, h]
        y = gmm(a, w2t, offs=offs)
        out.zero_()
        out.index_add_(0, ids, y.float())
        return out
    return layer


def fake_quant_rows(torch, t):
    """float32 emulation of the layer's rowwise e4m3 quantization (same
    scale formula), dequantized."""
    s = t.abs().amax(dim=-1).clamp(min=EPS) / FP8_MAX
    return (t / s.unsqueeze(-1)).to(torch.float8_e4m3fn).float() * s.unsqueeze(-1)


def reference_check(torch, impl, W, x, per_expert, rw_per_expert, out, h, check_tokens, gen):
    """Compares out on a few tokens with two float32 references of the same
    math on the layer's own weights (FP8: dequantized): 'q' rounds where the
    layer rounds (bf16 GEMM outputs and activation; FP8: the rowwise e4m3
    quantization of x and of the activation), 'exact' rounds nowhere.
    Asserts that tokens without pairs are exactly 0. Returns (max rel err vs
    q, max rel err vs exact, tokens checked), norm-wise per token."""
    tokens = x.shape[0]
    fp8 = impl == "torch-fp8-rowwise"
    pairs_of = {}
    for e, toks in enumerate(per_expert):
        for j, t in enumerate(toks.tolist()):
            pairs_of.setdefault(t, []).append((e, float(rw_per_expert[e][j])))
    routed = sorted(pairs_of)
    if len(routed) < tokens:
        mask = torch.ones(tokens, dtype=torch.bool)
        mask[torch.tensor(routed, dtype=torch.int64)] = False
        z = out[mask.to(out.device)].abs().max().item()
        if z != 0.0:
            raise AssertionError(f"{impl}: tokens without pairs are not 0 (max |out| = {z})")
    if not routed:
        return 0.0, 0.0, 0
    perm = torch.randperm(len(routed), generator=gen)[:check_tokens].tolist()
    sample = sorted(routed[i] for i in perm)
    by_expert = {}
    for t in sample:
        for e, w in pairs_of[t]:
            by_expert.setdefault(e, []).append((t, w))
    d = x.shape[1]
    ref = {k: {t: torch.zeros(d, dtype=torch.float32, device=x.device) for t in sample}
           for k in ("q", "exact")}
    silu = torch.nn.functional.silu
    bf16 = torch.bfloat16
    for e, lst in sorted(by_expert.items()):
        w13f, w2f = dequant_expert(W, impl, e)
        ts = torch.tensor([t for t, _ in lst], dtype=torch.int64, device=x.device)
        ws = torch.tensor([w for _, w in lst], dtype=torch.float32, device=x.device)
        xs = x.index_select(0, ts).float()                      # [n, d]
        # exact: float32 throughout
        g = xs @ w13f.t()                                       # [n, 2h]
        y = (silu(g[:, :h]) * g[:, h:] * ws.unsqueeze(1)) @ w2f.t()
        # q: the layer's roundings (bf16 GEMM outputs and activation) and,
        # for FP8, its rowwise e4m3 quantization of x and of the activation
        if fp8:
            g = (fake_quant_rows(torch, xs) @ w13f.t()).to(bf16)
            a = (silu(g[:, :h]) * g[:, h:]).float() * ws.unsqueeze(1)
            yq = (fake_quant_rows(torch, a) @ w2f.t()).to(bf16).float()
        else:
            g = (xs @ w13f.t()).to(bf16)
            a = silu(g[:, :h]) * g[:, h:] * ws.to(bf16).unsqueeze(1)
            yq = (a.float() @ w2f.t()).to(bf16).float()
        for i, (t, _) in enumerate(lst):
            ref["exact"][t] += y[i]
            ref["q"][t] += yq[i]
        del w13f, w2f
    worst = {"q": 0.0, "exact": 0.0}
    for k in worst:
        for t in sample:
            r = ref[k][t]
            rel = (out[t].float() - r).norm().item() / max(r.norm().item(), 1e-30)
            worst[k] = max(worst[k], rel if math.isfinite(rel) else float("inf"))
    return worst["q"], worst["exact"], len(sample)


# ----------------------------------------------------------------- timing

class Timer:
    def __init__(self, torch, device, flush_mb):
        self.torch = torch
        self.cuda = device.type == "cuda"
        self.flush = (torch.empty(flush_mb << 20, dtype=torch.uint8, device=device)
                      if self.cuda and flush_mb > 0 else None)

    def run(self, fn, reps, warmup):
        torch = self.torch
        if not self.cuda:
            ts = []
            for i in range(warmup + reps):
                t0 = time.perf_counter()
                fn()
                if i >= warmup:
                    ts.append((time.perf_counter() - t0) * 1e6)
            return sorted(ts)
        for _ in range(warmup):
            if self.flush is not None:
                self.flush.zero_()
            fn()
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)]
        for s, e in ev:
            if self.flush is not None:
                self.flush.zero_()        # evicts the L2 (writes flush_mb MB)
            s.record()
            fn()
            e.record()
        torch.cuda.synchronize()
        return sorted(s.elapsed_time(e) * 1000.0 for s, e in ev)


def capture(torch, layer):
    """Captures layer() in a CUDA graph; returns (graph, out) or raises."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            layer()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    last = None
    for mode in ("global", "relaxed"):
        g = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(g, capture_error_mode=mode):
                o = layer()
            return g, o, mode
        except Exception as ex:     # noqa: BLE001 - report and try the next mode
            last = ex
            torch.cuda.synchronize()
    raise last


# ----------------------------------------------------------------- probe

PROBE_COUNTS = [0, 5, 17, 0, 3, 24, 1, 14]


def probe_main(args):
    """Child process: are the grouped GEMMs right on group sizes that are not
    multiples of 16 (and on empty groups)? Prints one JSON line."""
    import torch
    dev = torch.device(args.device)
    torch.manual_seed(1)
    res = {}
    E, K, N = len(PROBE_COUNTS), 256, 384
    M = sum(PROBE_COUNTS)
    offs = torch.tensor([sum(PROBE_COUNTS[:i + 1]) for i in range(E)], dtype=torch.int32, device=dev)
    a = torch.randn(M, K, device=dev).to(torch.bfloat16)
    b = (torch.randn(E, N, K, device=dev) / math.sqrt(K)).to(torch.bfloat16)
    for impl in args.impl:
        try:
            if impl == "torch-fp8-rowwise":
                aq, sa = quant_rowwise(torch, a)
                bq, sb = quant_rowwise(torch, b)
                y = torch._scaled_grouped_mm(aq, bq.transpose(-2, -1), sa, sb, offs=offs,
                                             out_dtype=torch.bfloat16,
                                             use_fast_accum=args.fast_accum)
                af = aq.float() * sa.unsqueeze(1)
                bf = bq.float() * sb.unsqueeze(2)
                tol = 0.02
            else:
                gmm = getattr(torch, "_grouped_mm", None) or torch.nn.functional.grouped_mm
                y = gmm(a, b.transpose(-2, -1), offs=offs)
                af, bf = a.float(), b.float()
                tol = 0.02
            torch.cuda.synchronize() if dev.type == "cuda" else None
            worst, start = 0.0, 0
            for e, c in enumerate(PROBE_COUNTS):
                if c:
                    r = af[start:start + c] @ bf[e].t()
                    rel = (y[start:start + c].float() - r).norm().item() / max(r.norm().item(), 1e-30)
                    worst = max(worst, rel if math.isfinite(rel) else float("inf"))
                start += c
            res[impl] = {"ok": worst < tol, "rel": worst}
        except Exception as ex:     # noqa: BLE001
            res[impl] = {"ok": False, "error": f"{type(ex).__name__}: {str(ex)[:200]}"}
            if dev.type == "cuda":
                break               # a device fault poisons the context
    print("PROBE " + json.dumps(res), flush=True)
    return 0


def run_probe(args):
    cmd = [sys.executable, os.path.abspath(__file__), "--probe", "--device", args.device,
           "--impl", ",".join(args.impl)]
    if not args.fast_accum:
        cmd.append("--no-fast-accum")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return {}, "probe timed out"
    for line in p.stdout.splitlines():
        if line.startswith("PROBE "):
            return json.loads(line[6:]), ""
    tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
    return {}, f"probe exited {p.returncode}: {' | '.join(tail)[:300]}"


# ----------------------------------------------------------------- ceilings

CEILING_COLUMNS = ["name", "shape", "us_median", "us_p10", "us_p90", "rate", "unit", "note"]


def ceilings_main(args, torch, dev, gpu):
    """The two ceilings issue #5 measures its targets against, timed in the
    same run as the loads: the device-to-device copy rate (bytes read +
    written) and large dense products through PyTorch (FP8 rowwise-scaled
    torch._scaled_mm, BF16 torch.mm). Each product is checked on a 64 x 64
    corner against a float64 product of the same operands first."""
    timer = Timer(torch, dev, 0)      # steady-state rates: no L2 flush
    reps, warm = max(args.reps // 2, 10), 3
    rows, failed = [], 0

    def record(name, shape, fn, work, unit, note=""):
        nonlocal failed
        row = {"name": name, "shape": shape}
        try:
            ts = timer.run(fn, reps, warm)
            med = percentile(ts, 50)
            row.update(us_median=fmt(med, 2), us_p10=fmt(percentile(ts, 10), 2),
                       us_p90=fmt(percentile(ts, 90), 2),
                       rate=fmt(work / (med * 1e-6) / 1e12, 3), unit=unit, note=note)
            print(f"  {name:<10} {shape:<22} {med:>10.1f} us {float(row['rate']):>8.1f} {unit}"
                  f"{'  ' + note if note else ''}", flush=True)
        except Exception as ex:     # noqa: BLE001 - record, go on, exit 1 at the end
            failed += 1
            row["note"] = f"FAILED: {type(ex).__name__}: {str(ex)[:300]}".replace("\n", " ")
            print(f"  {name:<10} {shape:<22} {row['note']}", flush=True)
        rows.append(row)

    print(f"peer_torch --ceilings: torch {torch.__version__}, {gpu}, "
          f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}; median of {reps} (+{warm})")
    n = (1 << 30) if dev.type == "cuda" else (1 << 20)
    src = torch.ones(n, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    record("copy", f"{n >> 20} MiB", lambda: dst.copy_(src), 2.0 * n, "TB/s",
           "bytes read + written")
    del src, dst
    g = torch.Generator(device=dev)
    g.manual_seed(args.seed)
    sizes = (8192, 16384) if dev.type == "cuda" else (256,)
    for m in sizes:
        a = torch.randn(m, m, generator=g, device=dev)
        b = torch.randn(m, m, generator=g, device=dev)
        ref = a[:64].double() @ b[:64].double().t()          # corner of a @ b.T
        for kind in ("fp8", "bf16"):
            if kind == "fp8" and dev.type != "cuda":
                continue
            try:
                if kind == "fp8":
                    aq, sa = quant_rowwise(torch, a)
                    bq, sb = quant_rowwise(torch, b)
                    sa, sb = sa.unsqueeze(1), sb.unsqueeze(0)  # [m, 1], [1, m]
                    bt = bq.t()                                 # column-major mat2

                    def fn(aq=aq, bt=bt, sa=sa, sb=sb):
                        return torch._scaled_mm(aq, bt, scale_a=sa, scale_b=sb,
                                                out_dtype=torch.bfloat16,
                                                use_fast_accum=args.fast_accum)
                    bound = 0.08
                else:
                    ab, bt = a.to(torch.bfloat16), b.to(torch.bfloat16).t()

                    def fn(ab=ab, bt=bt):
                        return torch.mm(ab, bt)
                    bound = 0.02
                got = fn()[:64, :64].double()
                rel = ((got - ref).norm() / ref.norm()).item()
                if not rel <= bound:
                    raise AssertionError(f"corner rel err {rel:.4g} > {bound}")
            except Exception as ex:     # noqa: BLE001
                failed += 1
                rows.append({"name": f"dense-{kind}", "shape": f"{m}x{m}x{m}",
                             "note": f"FAILED: {type(ex).__name__}: {str(ex)[:300]}"})
                print(f"  dense-{kind} {m}x{m}x{m} FAILED: {ex}", flush=True)
                continue
            note = f"corner rel err {rel:.4f} (bound {bound})"
            if kind == "fp8":
                note += f"; rowwise scales, fast_accum={int(args.fast_accum)}"
            record(f"dense-{kind}", f"{m}x{m}x{m}", fn, 2.0 * m ** 3, "TFLOP/s", note)
            del fn
    write_csv_atomic(args.ceilings, rows, CEILING_COLUMNS)
    print(f"wrote {args.ceilings}")
    return 1 if failed else 0


# ----------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="peer_torch.py", description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loads", action="append", metavar="FILE",
                    help="loads JSON (schema above); may be given several times (one CSV, "
                         "the load index runs on across files)")
    ap.add_argument("--out", default="peer.csv", help="CSV to write (default peer.csv)")
    ap.add_argument("--reps", type=int, default=50, help="timed runs per load and impl (default 50)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed runs first (default 5)")
    ap.add_argument("--seed", type=int, default=1234,
                    help="seed of weights, inputs, router weights and assignment (default 1234)")
    ap.add_argument("--impl", default=",".join(IMPLS),
                    help=f"comma-separated subset of {','.join(IMPLS)} (default both)")
    ap.add_argument("--pad", choices=("auto", "none", "16"), default="auto",
                    help="pad each expert's rows to a multiple of 16: auto = only for an op the "
                         "probe finds wrong on other sizes (default auto)")
    ap.add_argument("--no-graph", action="store_true", help="time eagerly only, no CUDA graph")
    ap.add_argument("--no-fast-accum", dest="fast_accum", action="store_false",
                    help="FP8: use_fast_accum=False (default True, as serving engines run FP8)")
    ap.add_argument("--flush-mb", type=int, default=256,
                    help="MB written before every timed run to evict the L2 (default 256)")
    ap.add_argument("--check-tokens", type=int, default=8,
                    help="tokens compared with the float32 reference per load (default 8)")
    ap.add_argument("--device", default="cuda",
                    help="cuda (default) or cpu (cpu: a smoke test of the script, no FP8 op)")
    ap.add_argument("--check-loads", action="store_true",
                    help="only parse and check --loads, print a summary (no torch needed)")
    ap.add_argument("--ceilings", metavar="CSV",
                    help="instead of the loads: time the copy rate and dense FP8 / BF16 "
                         "products (the issue's two ceilings) and write them to CSV")
    ap.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    args.impl = [s.strip() for s in args.impl.split(",") if s.strip()]
    for i in args.impl:
        if i not in IMPLS:
            ap.error(f"unknown --impl {i!r} (choose from {', '.join(IMPLS)})")
    if args.reps < 1 or args.warmup < 0 or args.check_tokens < 1 or args.flush_mb < 0:
        ap.error("--reps and --check-tokens must be >= 1, --warmup and --flush-mb >= 0")
    if args.probe:
        return probe_main(args)
    if not args.loads and not args.ceilings:
        ap.error("--loads (or --ceilings) is required")
    sets = []
    try:
        for path in args.loads or []:
            with open(path) as f:
                first = sum(len(x["loads"]) for x in sets)
                sets += parse_loads(f.read(), path, first)
    except (OSError, LoadsError) as e:
        print(f"peer_torch: {e}", file=sys.stderr)
        return 2
    if args.check_loads:
        for s in sets:
            pairs = [sum(l["counts"]) for l in s["loads"]]
            print(f"{s['model']}: d={s['hidden']} h={s['inter']} topk={s['topk']} "
                  f"E={s['local_experts']}, {len(s['loads'])} loads, pairs {min(pairs)}..{max(pairs)}")
        return 0

    import torch
    dev = torch.device(args.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        print("peer_torch: no CUDA device (use --device cpu for a smoke test)", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False      # the reference is true float32
    torch.backends.cudnn.allow_tf32 = False

    if dev.type == "cuda":
        p = torch.cuda.get_device_properties(dev)
        gpu = f"{p.name}, {p.multi_processor_count} SMs, cc {p.major}.{p.minor}"
    else:
        gpu = "cpu"
    if args.ceilings:
        return ceilings_main(args, torch, dev, gpu)
    print(f"peer_torch: torch {torch.__version__} (CUDA {torch.version.cuda}), {gpu}, "
          f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
    print(f"  reps {args.reps} (+{args.warmup} warm-up), L2 flush {args.flush_mb} MB before each, "
          f"seed {args.seed}, fast_accum {int(args.fast_accum)}; routing/sort excluded from the "
          f"timed region")

    # padding decision
    pad = {i: 1 for i in args.impl}
    pad_why = {i: "rows unpadded" for i in args.impl}
    if args.pad == "16":
        for i in args.impl:
            pad[i], pad_why[i] = 16, "rows padded to 16 (--pad 16)"
    elif args.pad == "auto" and dev.type == "cuda":
        res, err = run_probe(args)
        for i in args.impl:
            r = res.get(i)
            if r and r.get("ok"):
                pad_why[i] = "rows unpadded (probe: sizes 0,1,3,5,14,17,24 OK)"
            else:
                why = err or (r.get("error") if r else "not run") or f"rel err {r.get('rel')}"
                pad[i], pad_why[i] = 16, f"rows padded to 16 (probe without padding failed: {why})"
        print("  probe: " + "; ".join(f"{i}: {pad_why[i]}" for i in args.impl))

    timer = Timer(torch, dev, args.flush_mb)
    rows, failed = [], 0
    for s in sets:
        d, h, E, model = s["hidden"], s["inter"], s["local_experts"], s["model"]
        t0 = time.time()
        W = make_weights(torch, E, d, h, dev, args.seed,
                         "torch-fp8-rowwise" in args.impl, "torch-bf16" in args.impl)
        print(f"\n{model}: d={d} h={h} topk={s['topk']} E/GPU={E} "
              f"(weights made in {time.time() - t0:.1f} s)")
        print(f"  {'load':<24} {'tokens':>6} {'pairs':>6} {'impl':<18} {'median':>8} "
              f"{'p10':>8} {'p90':>8} {'TFLOP/s':>8} {'eager':>8} {'err-same':>8} {'err-exact':>9}  how")
        for ld in s["loads"]:
            seed = ld["seed"] if ld["seed"] is not None else args.seed * 1000003 + ld["index"]
            gen = torch.Generator().manual_seed(seed)
            tokens, counts = ld["tokens"], ld["counts"]
            pairs = sum(counts)
            per_expert = assign_tokens(torch, counts, tokens, gen)
            rw_per_expert = [torch.rand(c, generator=gen) * 0.25 + 0.01 for c in counts]
            x = torch.randn(tokens, d, generator=gen).to(torch.bfloat16).to(dev)
            out = torch.empty(tokens, d, dtype=torch.float32, device=dev)
            shape = f"{model} d={d} h={h} E={E}"
            for impl in args.impl:
                row = {"load": ld["index"], "name": ld["name"], "tokens": tokens,
                       "pairs": pairs, "impl": impl}
                notes = [shape]
                if pairs == 0:
                    row["note"] = shape + "; no pairs on this GPU: skipped"
                    print(f"  {ld['name'][:24]:<24} {tokens:>6} {pairs:>6} {impl:<18} skipped (no pairs)")
                    rows.append(row)
                    continue
                if max(counts) > tokens:
                    notes.append("counts > tokens: tokens repeat within an expert")
                g = layer = None
                try:
                    ids, rw, offs, R = build_layout(
                        torch, per_expert, rw_per_expert, pad[impl],
                        min_rows_not=E if impl == "torch-fp8-rowwise" else None)
                    ids, rw, offs = ids.to(dev), rw.to(dev), offs.to(dev)
                    layer = make_layer(torch, impl, W, x, ids, rw, offs, out, h, args.fast_accum)
                    how = "eager"
                    if dev.type == "cuda" and not args.no_graph:
                        try:
                            g, o, mode = capture(torch, layer)
                            how = "graph" + ("" if mode == "global" else f" ({mode} capture)")
                        except Exception as ex:     # noqa: BLE001
                            g = None
                            how = f"eager (graph capture failed: {type(ex).__name__}: {str(ex)[:120]})"
                    if g is not None:
                        out.fill_(float("nan"))
                        g.replay()
                        torch.cuda.synchronize()
                    else:
                        layer()
                    relq, rele, nchk = reference_check(torch, impl, W, x, per_expert,
                                                       rw_per_expert, out, h, args.check_tokens, gen)
                    if not (relq <= BOUND_Q[impl] and rele <= BOUND_EXACT[impl]):
                        raise AssertionError(
                            f"{impl}: max relative error {relq:.4g} (same-rounding ref, bound "
                            f"{BOUND_Q[impl]}) / {rele:.4g} (exact math, bound {BOUND_EXACT[impl]}) "
                            f"on {nchk} tokens")
                    eager = timer.run(layer, args.reps, args.warmup)
                    ts = timer.run(g.replay, args.reps, args.warmup) if g is not None else eager
                    med = percentile(ts, 50)
                    row.update(us_median=fmt(med, 2), us_p10=fmt(percentile(ts, 10), 2),
                               us_p90=fmt(percentile(ts, 90), 2),
                               tflops=fmt(2.0 * pairs * 3 * h * d / (med * 1e-6) / 1e12, 2))
                    padw = pad_why[impl]
                    if R != pairs and pad[impl] == 1:
                        padw += (f"; {R - pairs} weight-0 row appended (rows = experts would make "
                                 f"_scaled_grouped_mm's scale shape ambiguous)")
                    elif R != pairs:
                        padw += f" ({R} rows computed for {pairs} pairs)"
                    notes += [how, f"eager median {percentile(eager, 50):.1f} us", padw,
                              f"max rel err {relq:.4f} vs same-rounding ref (bound {BOUND_Q[impl]}), "
                              f"{rele:.4f} vs exact math (bound {BOUND_EXACT[impl]}), on {nchk} tokens"]
                    if impl == "torch-fp8-rowwise":
                        notes.append(f"fast_accum={int(args.fast_accum)}")
                    row["note"] = "; ".join(notes)
                    print(f"  {ld['name'][:24]:<24} {tokens:>6} {pairs:>6} {impl:<18} "
                          f"{med:>8.1f} {percentile(ts, 10):>8.1f} {percentile(ts, 90):>8.1f} "
                          f"{float(row['tflops']):>8.1f} {percentile(eager, 50):>8.1f} "
                          f"{relq:>8.4f} {rele:>9.4f}  {how.split(' (')[0]}{'' if R == pairs else ', padded'}",
                          flush=True)
                except Exception as ex:     # noqa: BLE001 - record, go on, exit 1 at the end
                    failed += 1
                    msg = f"{type(ex).__name__}: {str(ex)[:300]}".replace("\n", " ")
                    row["note"] = "; ".join(notes + [f"FAILED: {msg}"])
                    print(f"  {ld['name'][:24]:<24} {tokens:>6} {pairs:>6} {impl:<18} FAILED: {msg}",
                          flush=True)
                finally:
                    del g, layer
                    if dev.type == "cuda":
                        torch.cuda.synchronize()
                        torch.cuda.empty_cache()
                rows.append(row)
                write_csv_atomic(args.out, rows)
        del W
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    write_csv_atomic(args.out, rows)
    print(f"\nwrote {args.out} ({len(rows)} rows{f', {failed} FAILED' if failed else ''})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
