"""python/ramp.py on a host with no GPU (CTest `python_binding`, release builds).

What could be wrong in a binding, each checked against something the binding
did not compute:
  - the struct tables against include/ramp.h's text (every member the
    header declares, in its order);
  - plans: every field against the JSON file read by Python's json module,
    and Plan.pick against a Python twin of Equation 3 (+ pairs) on fresh
    random loads of two plans `ramp fit` made from shipped datasets;
  - each layer option lands in its C member: an invalid value of each is
    refused by libramp's check with a message naming that member and value;
  - arguments refused in Python name the argument.
Run: RAMP_LIBRARY=build/release/libramp.so RAMP_CLI=build/release/ramp \
     python3 tests/python/test_binding.py
"""
import atexit
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import ramp  # noqa: E402

with open(os.path.join(ROOT, "include", "ramp.h")) as _f:
    HEADER = _f.read()
CLI = os.environ.get("RAMP_CLI", os.path.join(ROOT, "build", "release", "ramp"))
SEED = int(os.environ.get("RAMP_TEST_SEED", random.SystemRandom().randrange(1 << 30)))
TMP = tempfile.mkdtemp(prefix="ramp_binding.", dir=os.environ.get("RAMP_TEST_TMP"))
atexit.register(shutil.rmtree, TMP, True)


def header_members(type_name):
    """Member names of `typedef struct {...} type_name;` in the header, in order."""
    end = HEADER.index("\n} %s;" % type_name)
    start = HEADER.rindex("typedef struct {", 0, end) + len("typedef struct {")
    body = re.sub(r"/\*.*?\*/", "", HEADER[start:end], flags=re.S)
    names = []
    for decl in body.split(";"):
        decl = decl.strip()
        if not decl:
            continue
        # "ramp_devptr w13, w13_scale" / "int64_t w13_shape[3]" / "const int32_t *local_of"
        first, *rest = decl.split(",")
        for part in [first.split()[-1]] + rest:
            names.append(re.sub(r"\[.*?\]", "", part).strip().lstrip("*"))
    return names


class FakeTensor:
    """What Layer and check_layer read of a PyTorch tensor."""

    def __init__(self, shape, dtype, ptr=0x10000, cuda=True, contiguous=True, device=None):
        self.shape, self.dtype, self._ptr = tuple(shape), "torch." + dtype, ptr
        self.is_cuda, self._contig = cuda, contiguous
        if device is not None:  # torch.device's index
            self.device = type("Device", (), {"index": device})()

    def data_ptr(self):
        return self._ptr

    def is_contiguous(self):
        return self._contig


def fit(dataset, name):
    path = os.path.join(TMP, name + ".json")
    r = subprocess.run([CLI, "fit", os.path.join(ROOT, "data", "timing", dataset)
                        if "/" not in dataset else os.path.join(ROOT, dataset), "-o", path],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError("ramp fit %s failed:\n%s" % (dataset, r.stderr))
    return path


def read_json(path):
    with open(path) as f:
        return json.load(f)


def twin_pick(plan_json, load):
    """Equation 3 (+ pairs) in Python, as docs/formats.md and src/costmodel.c
    define it: waves = ceil(tiles / S_c), tiles = q_c x row tiles (q_c =
    ceil(h / w) x split-K; multicast rounds row tiles up to pairs), past-wave
    penalty for v2 split-K entries beyond one wave; ties to the earlier entry."""
    g = plan_json["geometry"]
    sms, occ = plan_json["sms"], plan_json.get("occupancy", 1)
    v2 = plan_json.get("kernel") == "v2"
    best, bv = 0, math.inf
    for i, entry in enumerate(plan_json["menu"]):
        cfg = entry["config"]
        rows = int(re.match(r"r(\d+)", cfg).group(1))
        width = int(re.search(r"\.w(\d+)", cfg).group(1))
        ks = re.search(r"\.k(\d+)", cfg)
        splitk = int(ks.group(1)) if ks else 1
        active = sum(1 for n in load if n > 0)
        pairs = sum(n for n in load if n > 0)
        rt = sum((n + rows - 1) // rows for n in load if n > 0)
        if cfg.endswith(".mc") or ".mc." in cfg:
            rt = math.ceil(rt / 2) * 2
        tiles = float(((g["inter"] + width - 1) // width) * splitk * rt)
        slots = entry.get("slots") or sms * occ
        terms = [1.0, math.ceil(tiles / slots), tiles, float(active), float(pairs)]
        v = 0.0
        for t, x in zip(entry["theta"], terms):
            v += t * x
        if v2 and splitk > 1 and math.ceil(tiles / slots) > 1:
            v += 1e6
        if v < bv:
            best, bv = i, v
    return best


class Binding(unittest.TestCase):
    def test_version(self):
        want = re.search(r'#define RAMP_VERSION_STRING "([^"]+)"', HEADER).group(1)
        self.assertEqual(ramp.version(), want)

    def test_tables_cover_the_header(self):
        nested = {"geom": "ramp_geometry", "limits": "ramp_device_limits"}
        omitted = {"ramp_layer_info": {"select"}, "ramp_plan": {"theta", "slots"}}
        for t in ("ramp_layer_desc", "ramp_layer_io", "ramp_layer_info", "ramp_plan",
                  "ramp_gpu_info"):
            want = []
            for m in header_members(t):
                if m in omitted.get(t, ()):
                    continue
                if m in nested:
                    want += [m + "." + n for n in header_members(nested[m])]
                else:
                    want.append(m)
            _, fields = ramp._table(t)
            by_offset = sorted(fields, key=lambda n: fields[n][0])
            self.assertEqual(by_offset, want, t)

    def test_unknown_struct(self):
        with self.assertRaises(ramp.RampError) as e:
            ramp._table("ramp_nope")
        self.assertEqual(e.exception.status, "RAMP_ERR_NOT_FOUND")
        self.assertIn('"ramp_nope"', e.exception.message)

    def test_plan_fields_and_picks(self):
        rng = random.Random(SEED)
        for dataset in ("qwen3-30b-ep8-v2.safetensors", "mixtral-8x22b-ep8-v2-units.safetensors",
                        "deepseek-v3-ep8-v2.safetensors"):
            path = fit(dataset, dataset.split(".")[0])
            j = read_json(path)
            p = ramp.Plan.read(path)
            self.assertEqual((p.model, p.layout, p.device, p.sms, p.kernel),
                             (j["model"], j["layout"], j["device"], j["sms"], j["kernel"]))
            self.assertEqual(p.geometry, j["geometry"])
            self.assertEqual(p.configs, [m["config"] for m in j["menu"]])
            self.assertEqual(p.weight_units, 1 if j.get("weights") == "units" else 0)
            el = j["geometry"]["experts"]
            picked = set()
            for trial in range(400):
                scale = rng.choice([1, 4, 16, 64, 256, 1024])
                load = [rng.randrange(0, scale + 1) if rng.random() < 0.8 else 0
                        for _ in range(el)]
                got = p.pick(load)
                want = twin_pick(j, load)
                self.assertEqual(got, want, "%s load %s (seed %d)" % (dataset, load, SEED))
                picked.add(got)
            # the loads reach more than one entry, so a pick ignoring the
            # load (a wrong pointer or count) could not pass
            self.assertGreater(len(picked), 1, dataset)

    def test_plan_errors(self):
        missing = os.path.join(TMP, "missing.json")
        with self.assertRaises(ramp.RampError) as e:
            ramp.Plan.read(missing)
        self.assertEqual(e.exception.status, "RAMP_ERR_IO")
        self.assertIn("missing.json", e.exception.message)
        bad = os.path.join(TMP, "bad.json")
        good = read_json(fit("qwen3-30b-ep8-v2.safetensors", "q"))
        good["menu"][0]["theta"][0] += 1.0  # the checksum no longer matches
        with open(bad, "w") as f:
            json.dump(good, f)
        with self.assertRaises(ramp.RampError) as e:
            ramp.Plan.read(bad)
        self.assertEqual(e.exception.status, "RAMP_ERR_FORMAT")
        self.assertIn("checksum", e.exception.message)

    def layer_args(self, **over):
        args = dict(w13=FakeTensor((16, 1536, 2048), "float8_e4m3fn"),
                    w13_scale=FakeTensor((16, 12, 16), "float32"),
                    w2=FakeTensor((16, 2048, 768), "float8_e4m3fn"),
                    w2_scale=FakeTensor((16, 16, 6), "float32"),
                    experts=128, max_tokens=512)
        args.update(over)
        return args

    def test_check_layer(self):
        plan = ramp.Plan.read(fit("qwen3-30b-ep8-v2.safetensors", "q"))
        ramp.check_layer(plan, **self.layer_args())  # accepted
        # kernel v1 runs tiles of up to 64 rows: a plan with a wide tile is refused
        wide = [c for c in plan.configs if int(c.split(".")[0][1:]) > 64]
        if wide:
            with self.assertRaises(ramp.RampError) as e:
                ramp.check_layer(plan, **self.layer_args(kernel="v1", first_expert=32))
            self.assertEqual(e.exception.status, "RAMP_ERR_UNSUPPORTED")
            self.assertIn("config %s: rows" % wide[0], e.exception.message)
        else:
            ramp.check_layer(plan, **self.layer_args(kernel="v1", first_expert=32))
        # the EP8 dataset as shipped before session 42 timed no wide tile
        narrow = ramp.Plan.read(fit("bench/results/s40-run1/part3/"
                                    "qwen3-30b-ep8-v2-2026-11-30.safetensors", "q_old"))
        self.assertFalse([c for c in narrow.configs if int(c.split(".")[0][1:]) > 64])
        ramp.check_layer(narrow, **self.layer_args(kernel="v1", first_expert=32))

        def refused(needle, **over):
            with self.assertRaises(ramp.RampError) as e:
                ramp.check_layer(plan, **self.layer_args(**over))
            self.assertEqual(e.exception.status, "RAMP_ERR_INVALID_ARGUMENT")
            self.assertIn(needle, e.exception.message)

        refused("w13 shape [16, 1024, 2048]", w13=FakeTensor((16, 1024, 2048), "float8_e4m3fn"))
        refused("w2 shape [16, 2048, 512]", w2=FakeTensor((16, 2048, 512), "float8_e4m3fn"))
        refused("E = 64", experts=64)
        refused("local_experts = 17", local_experts=17)
        refused("max_tokens = 0", max_tokens=0)
        # every option reaches its own member: libramp names member and value
        for name, bad in [("serial_launch", 9), ("w2_red4", 3), ("l2_prefetch_mb", -1),
                          ("bf16_pipe", 2), ("deterministic", 2), ("poly_split", 9),
                          ("poly_top_wait", 2), ("weight_units", 2), ("select_one_shape", 2),
                          ("select_pdl", 2), ("one_menu", 2), ("many_expert_classes", 2)]:
            refused("%s = %d" % (name, bad), **{name: bad})

    def test_arguments_named(self):
        plan = ramp.Plan.read(fit("qwen3-30b-ep8-v2.safetensors", "q"))
        cases = [
            (TypeError, "w13: dtype bfloat16, expected float8_e4m3fn",
             dict(w13=FakeTensor((16, 1536, 2048), "bfloat16"))),
            (TypeError, "w2_scale: dtype float16", dict(w2_scale=FakeTensor((16, 16, 6), "float16"))),
            (ValueError, "w2: shape (2048, 768), expected 3",
             dict(w2=FakeTensor((2048, 768), "float8_e4m3fn"))),
            (ValueError, "w13: a CPU tensor", dict(w13=FakeTensor((16, 1536, 2048), "float8_e4m3fn",
                                                                  cuda=False))),
            (ValueError, "w2: not contiguous", dict(w2=FakeTensor((16, 2048, 768), "float8_e4m3fn",
                                                                   contiguous=False))),
            (ValueError, "an FP8 plan needs the weights' block scales", dict(w13_scale=None)),
            (ValueError, "local_of: 3 entries, expected experts = 128", dict(local_of=[0, 1, -1])),
            (ValueError, "kernel: 'v3'", dict(kernel="v3")),
            (TypeError, "unknown layer option 'fast'", dict(fast=1)),
            (TypeError, "unknown layer option 'experts_'", dict(experts_=1)),
            (TypeError, "w13: expected a tensor", dict(w13="w13")),
        ]
        for exc, needle, over in cases:
            with self.assertRaises(exc) as e:
                ramp.check_layer(plan, **self.layer_args(**over))
            self.assertIn(needle, str(e.exception))
        # the option list names what may be set
        with self.assertRaises(TypeError) as e:
            ramp.check_layer(plan, **self.layer_args(fast=1))
        self.assertIn("select_pdl", str(e.exception))
        self.assertNotIn("w13_shape", str(e.exception))

    def test_local_of(self):
        plan = ramp.Plan.read(fit("qwen3-30b-ep8-v2.safetensors", "q"))
        local_of = [-1] * 128
        for i, e in enumerate(range(5, 128, 8)):  # 16 experts, strided
            local_of[e] = i
        ramp.check_layer(plan, **self.layer_args(local_of=local_of))

    def test_weight_layouts(self):
        """weights_to_units and w2_to_red4 against numpy twins of the layouts
        include/ramp.h documents, on fresh random bytes."""
        import numpy as np
        rng = np.random.default_rng(SEED)

        def swizzled(blocks):
            # [..., rows, 128 bytes]: 16-byte chunk j of row r stored at j ^ (r % 8)
            rows = blocks.shape[-2]
            pos = np.arange(128)
            r = np.arange(rows)[:, None]
            src = (((pos[None, :] // 16) ^ (r % 8)) * 16 + pos[None, :] % 16)
            return np.take_along_axis(blocks, np.broadcast_to(src, blocks.shape), axis=-1)

        for el, h, d, dtype in ((2, 256, 512, np.uint8), (3, 384, 256, np.uint8),
                                (2, 256, 512, np.uint16)):
            eb = np.dtype(dtype).itemsize
            w13 = rng.integers(0, 1 << (8 * eb), (el, 2 * h, d), dtype=dtype)
            w2 = rng.integers(0, 1 << (8 * eb), (el, d, h), dtype=dtype)
            u13 = np.full_like(w13, 0x5A)  # poisoned: every byte must be written
            u2 = np.full_like(w2, 0x5A)
            ramp.weights_to_units(w13, w2, u13, u2)
            a = w13.view(np.uint8).reshape(el, 2 * h, d * eb)
            kb = d * eb // 128
            gate = a[:, :h].reshape(el, h // 128, 128, kb, 128).transpose(0, 1, 3, 2, 4)
            up = a[:, h:].reshape(el, h // 128, 128, kb, 128).transpose(0, 1, 3, 2, 4)
            want13 = swizzled(np.concatenate([gate, up], axis=3))  # units (e, rb, kb)
            b = w2.view(np.uint8).reshape(el, d, h * eb)
            hb = h * eb // 128
            want2 = swizzled(b.reshape(el, d // 256, 256, hb, 128).transpose(0, 1, 3, 2, 4))
            self.assertTrue(np.array_equal(u13.view(np.uint8).ravel(), want13.ravel()),
                            "w13 units, %s (seed %d)" % ((el, h, d, eb), SEED))
            self.assertTrue(np.array_equal(u2.view(np.uint8).ravel(), want2.ravel()),
                            "w2 units, %s (seed %d)" % ((el, h, d, eb), SEED))
            if eb == 1:
                r4 = np.full_like(w2, 0x5A)
                ramp.w2_to_red4(w2, r4)
                # row s = 64 t + 16 w + g + 8 hh of each 128-row block holds
                # source row 4 (8 w + g) + 2 t + hh
                src = np.empty(128, dtype=np.int64)
                for t in range(2):
                    for w in range(4):
                        for g in range(8):
                            for hh in range(2):
                                src[64 * t + 16 * w + g + 8 * hh] = 4 * (8 * w + g) + 2 * t + hh
                want = w2.reshape(el, d // 128, 128, h)[:, :, src].reshape(el, d, h)
                self.assertTrue(np.array_equal(r4, want), "red4 order (seed %d)" % SEED)
        # refusals, named
        w13 = np.zeros((2, 512, 512), np.uint8)
        w2 = np.zeros((2, 512, 256), np.uint8)
        for call, exc, needle in [
                (lambda: ramp.weights_to_units(w13, w2, np.zeros_like(w13), np.zeros((2, 512, 128), np.uint8)),
                 ValueError, "w2_out: shape (2, 512, 128)"),
                (lambda: ramp.weights_to_units(w13, w2.astype(np.uint16), w13, w2), ValueError,
                 "w2: 2-byte elements, w13 has 1"),
                (lambda: ramp.weights_to_units(w13[:, ::2], w2, w13, w2), ValueError,
                 "w13: not a C-contiguous"),
                (lambda: ramp.weights_to_units([1], w2, w13, w2), TypeError, "w13: expected a CPU tensor"),
                (lambda: ramp.w2_to_red4(w2.astype(np.uint16), w2), ValueError, "FP8 weights"),
                (lambda: ramp.weights_to_units(w13, np.zeros((2, 512, 512), np.uint8),
                                               np.zeros_like(w13), np.zeros((2, 512, 512), np.uint8)),
                 ramp.RampError, "are not W13 [EL, 2h, d] and W2 [EL, d, h]")]:
            with self.assertRaises(exc) as e:
                call()
            self.assertIn(needle, str(e.exception))

    def test_scale_shapes(self):
        """The C descriptor has no scale shapes: a wrong one would be read
        past its end on the GPU, so the binding refuses it by name."""
        plan = ramp.Plan.read(fit("qwen3-30b-ep8-v2.safetensors", "q"))
        for name, shape, want in (("w13_scale", (16, 1, 1), "(16, 12, 16)"),
                                  ("w2_scale", (16, 6, 16), "(16, 16, 6)"),
                                  ("w2_scale", (15, 16, 6), "(16, 16, 6)")):
            with self.assertRaises(ValueError) as e:
                ramp.check_layer(plan, **self.layer_args(**{name: FakeTensor(shape, "float32")}))
            self.assertIn("%s: shape %s, expected %s" % (name, shape, want), str(e.exception))

    def test_error_pickles(self):
        import copy
        import pickle
        try:
            ramp.Plan.read(os.path.join(TMP, "none.json"))
        except ramp.RampError as err:
            for back in (pickle.loads(pickle.dumps(err)), copy.copy(err)):
                self.assertIsInstance(back, ramp.RampError)
                self.assertEqual((back.status, back.message, str(back)),
                                 (err.status, err.message, str(err)))
        else:
            self.fail("no error")

    def test_pick_checks_its_load(self):
        plan = ramp.Plan.read(fit("qwen3-30b-ep8-v2.safetensors", "q"))
        el = plan.geometry["experts"]
        for load, needle in (([1] * (el - 1), "load: %d counts, expected" % (el - 1)),
                             ([1] * 128, "load: 128 counts"), ([], "load: 0 counts"),
                             ([0] * (el - 1) + [-1], "load[%d] = -1" % (el - 1)),
                             ([2 ** 32 + 3000] + [0] * (el - 1), "load[0] = 4294970296"),
                             ([0.9] * el, "load[0] = 0.9")):
            with self.assertRaises(ValueError) as e:
                plan.pick(load)
            self.assertIn(needle, str(e.exception))
        self.assertEqual(plan.pick([3.0] * el), plan.pick([3] * el))

    def test_integers_out_of_range(self):
        plan = ramp.Plan.read(fit("qwen3-30b-ep8-v2.safetensors", "q"))
        for over, needle in ((dict(experts=2 ** 31), "ramp_layer_desc.experts: 2147483648"),
                             (dict(max_tokens=2 ** 32 + 512), "ramp_layer_desc.max_tokens"),
                             (dict(deterministic=2 ** 32), "ramp_layer_desc.deterministic"),
                             (dict(local_of=[-1] * 20 + [2 ** 32 + 3] + [-1] * 107),
                              "local_of[20] = 4294967299")):
            with self.assertRaises(ValueError) as e:
                ramp.check_layer(plan, **self.layer_args(**over))
            self.assertIn(needle, str(e.exception))
        # an invalid map reaches libramp, which names it
        with self.assertRaises(ramp.RampError) as e:
            ramp.check_layer(plan, **self.layer_args(local_of=[0] * 128))
        self.assertIn("local_of[1] = 0", e.exception.message)

    def test_weight_layouts_refuse_overlap(self):
        """An output sharing bytes with an input (or the other output) would
        be read after it is written: refused, equal or partial."""
        import numpy as np
        w13 = np.zeros((2, 512, 512), np.uint8)
        w2 = np.zeros((2, 512, 256), np.uint8)
        flat = np.zeros(4 * w13.size, np.uint8)

        def view(offset, like):  # a view of `flat` from byte `offset`, shaped as `like`
            return flat[offset:offset + like.size].reshape(like.shape)
        for call, needle in [
                (lambda: ramp.weights_to_units(w13, w2, w13, np.zeros_like(w2)),
                 "w13_out: overlaps w13"),
                (lambda: ramp.weights_to_units(view(0, w13), w2, view(w13.size // 2, w13),
                                               np.zeros_like(w2)), "w13_out: overlaps w13"),
                (lambda: ramp.weights_to_units(w13, view(0, w2), np.zeros_like(w13),
                                               view(w2.size // 2, w2)), "w2_out: overlaps w2"),
                (lambda: ramp.weights_to_units(w13, w2, view(0, w13), view(w13.size - 1, w2)),
                 "w13_out: overlaps w2_out"),
                (lambda: ramp.w2_to_red4(w2, w2), "out: overlaps w2")]:
            with self.assertRaises(ValueError) as e:
                call()
            self.assertIn(needle, str(e.exception))

    def test_lifetimes_and_calls(self):
        """The layer's life and call path against a stand-in for libramp's GPU
        entry points (no GPU here; everything else is the real library): the
        layer holds its weights, a Gpu closed while its layers live is
        released after the last of them, and the call's checks, T = 0 and the
        io struct reach C as documented."""
        import gc
        import weakref
        real, calls = ramp._lib, []

        class Stub:
            handle = 0x1000

            def __getattr__(self, name):
                return getattr(real, name)

            def _new(self, out):
                Stub.handle += 0x10
                ctypes.cast(out, ctypes.POINTER(ctypes.c_void_p))[0] = Stub.handle
                return Stub.handle

            def ramp_gpu_open(self, ordinal, out):
                calls.append(("gpu_open", self._new(out)))
                return 0

            def ramp_gpu_close(self, h):
                calls.append(("gpu_close", h.value))

            def ramp_layer_create(self, gpu, plan, desc, out):
                calls.append(("layer_create", gpu.value, self._new(out)))
                return 0

            def ramp_layer_free(self, h):
                calls.append(("layer_free", h.value))

            def ramp_layer_run(self, h, io, stream):
                time.sleep(1e-5)  # as C releases the GIL: another thread's call may run
                s = ramp._Struct("ramp_layer_io")
                ctypes.memmove(s.ptr, io, len(s.buf))
                calls.append(("layer_run", h.value, {n: s[n] for n in s.fields}, stream,
                              threading.current_thread().name))
                return 0

        import ctypes
        plan = ramp.Plan.read(fit("qwen3-30b-ep8-v2.safetensors", "q"))
        ramp._lib = Stub()
        try:
            # the layer keeps its weights; a Gpu closed first is released after the layer
            w = self.layer_args()
            refs = [weakref.ref(w[n]) for n in ("w13", "w13_scale", "w2", "w2_scale")]
            with ramp.Gpu(0) as g:
                layer = ramp.Layer(plan, gpu=g, **w)
            del w
            gc.collect()
            self.assertTrue(all(r() is not None for r in refs))
            self.assertEqual([c[0] for c in calls], ["gpu_open", "layer_create"])
            gpu_h, layer_h = calls[0][1], calls[1][2]
            self.assertEqual(calls[1][1], gpu_h)

            def fp8(shape, ptr):
                return FakeTensor(shape, "float8_e4m3fn", ptr)

            def f32(shape, ptr):
                return FakeTensor(shape, "float32", ptr)

            def i32(shape, ptr):
                return FakeTensor(shape, "int32", ptr)
            T, k, d = 5, 8, 2048
            layer(fp8((T, d), 0x100), i32((T, k), 0x200), f32((T, k), 0x300), f32((T, d), 0x400),
                  x_scale=f32((T, d // 128), 0x500), stream=7)
            name, h, io, stream, _ = calls[-1]
            self.assertEqual((name, h, stream), ("layer_run", layer_h, 7))
            self.assertEqual(io, {"x": 0x100, "x_scale": 0x500, "topk_ids": 0x200,
                                  "topk_weights": 0x300, "out": 0x400, "tokens": T,
                                  "tokens_dev": 0})
            # PyTorch's default stream (0) is passed as the legacy stream, never NULL
            layer(fp8((T, d), 0x100), i32((T, k), 0x200), f32((T, k), 0x300), f32((T, d), 0x400),
                  x_scale=f32((T, d // 128), 0x500), stream=0)
            self.assertEqual(calls[-1][3], ramp.CU_STREAM_LEGACY)
            # an empty batch queues nothing (its tensors have no address)
            n = len(calls)
            layer(fp8((0, d), 0), i32((0, k), 0), f32((0, k), 0), f32((0, d), 0),
                  x_scale=f32((0, d // 128), 0), stream=7)
            self.assertEqual(len(calls), n)
            # a device count: the tensors must hold max_tokens rows, the count one int32
            M = 512
            full = (fp8((M, d), 0x100), i32((M, k), 0x200), f32((M, k), 0x300), f32((M, d), 0x400))
            layer(*full, x_scale=f32((M, d // 128), 0x500), tokens_dev=i32((1,), 0x600), stream=7)
            self.assertEqual((calls[-1][2]["tokens_dev"], calls[-1][2]["tokens"]), (0x600, M))
            for args, over, needle in [
                    (full, dict(tokens_dev=i32((2,), 0x600)), "tokens_dev: shape (2,)"),
                    ((fp8((4, d), 1), i32((4, k), 2), f32((4, k), 3), f32((4, d), 4)),
                     dict(tokens_dev=i32((1,), 0x600)), "x: 4 rows; with tokens_dev"),
                    (full[:1] + (i32((M, 2), 0x200),) + full[2:], {}, "topk_ids: shape (512, 2)"),
                    ((fp8((M + 1, d), 1),) + full[1:], {}, "x: 513 tokens"),
                    (full, dict(x_scale=None), "x_scale: FP8 hidden states need"),
                    (full[:3] + (FakeTensor((M, d), "float32", 0x400, device=1),), {},
                     "out: on cuda:1, the layer is on cuda:0")]:
                kw = dict(x_scale=f32((args[0].shape[0], d // 128), 0x500), stream=7)
                kw.update(over)
                with self.assertRaises(ValueError) as e:
                    layer(*args, **kw)
                self.assertIn(needle, str(e.exception))
            # two threads calling one layer fill their own io structs: each
            # call sees its own thread's tensors
            seen = []

            def worker(base):
                for i in range(200):
                    p = base + 0x1000 * i
                    layer(fp8((T, d), p), i32((T, k), p + 1), f32((T, k), p + 2),
                          f32((T, d), p + 3), x_scale=f32((T, d // 128), p + 4), stream=7)
            threads = [threading.Thread(target=worker, args=(b,), name=str(b))
                       for b in (1 << 32, 1 << 40)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for c in calls:
                if c[0] == "layer_run" and c[4] != threading.main_thread().name:
                    io, base = c[2], int(c[4])
                    seen.append(base <= io["x"] < base + 0x1000 * 200 and
                                io["x_scale"] - io["x"] == 4 and io["out"] - io["x"] == 3)
            self.assertEqual(len(seen), 400)
            self.assertTrue(all(seen))
            self.assertFalse([c for c in calls if c[0] == "gpu_close"])
            layer.close()
            layer.close()  # twice: nothing more
            self.assertEqual([c[0] for c in calls[-2:]], ["layer_free", "gpu_close"])
            self.assertEqual(calls[-1][1], gpu_h)
            # a layer and its Gpu collected together: the layer is freed first
            calls.clear()
            g2 = ramp.Gpu(0)
            l2 = ramp.Layer(plan, gpu=g2, **self.layer_args())
            l2.cycle, g2.cycle = g2, l2
            del l2, g2
            gc.collect()
            self.assertEqual([c[0] for c in calls],
                             ["gpu_open", "layer_create", "layer_free", "gpu_close"])
        finally:
            ramp._lib = real

    @unittest.skipIf(ramp.gpu_count() > 0, "a GPU is present")
    def test_no_gpu(self):
        self.assertEqual(ramp.gpu_count(), 0)
        with self.assertRaises(ramp.RampError) as e:
            ramp.Gpu(0)
        self.assertEqual(e.exception.status, "RAMP_ERR_NO_GPU")
        self.assertTrue(e.exception.message)


if __name__ == "__main__":
    print("test_binding.py: seed %d, library %s" % (SEED, ramp.library_path()))
    unittest.main(verbosity=1)
