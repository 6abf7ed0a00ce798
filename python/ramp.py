"""ramp: a thin Python binding of libramp's MoE layer, for Python serving engines.

libramp is C; this module calls it through ctypes (no compiler, no build
step) and adds only what Python needs: argument checks that name the
argument, errors as exceptions, and tensors (PyTorch's, or any object with
``data_ptr()``, ``shape``, ``dtype``) in place of device pointers.

    import torch, ramp
    plan = ramp.Plan.read("plan.json")               # `ramp fit` writes it
    layer = ramp.Layer(plan, w13, w13_scale, w2, w2_scale,
                       experts=128, first_expert=16 * rank, max_tokens=4096)
    out.zero_()
    layer(x, topk_ids, topk_weights, out, x_scale=x_scale)   # adds into out

The layer runs on PyTorch's current stream (its default stream too) and can
be captured in a CUDA graph (``torch.cuda.graph``) like any kernel: two
launches, no host synchronisation, no allocation. Everything else (plan
fitting, datasets, evaluation) is the ``ramp`` command line's.

The library is found at $RAMP_LIBRARY, else in this checkout's build
directories (build/release, build-rel, build), else beside an installed copy
(`cmake --install`: P/share/ramp/python/ramp.py finds P/lib/libramp.so),
else on the loader's path.
Struct layouts are read from the library (ramp_struct_fields), not copied
here, so this file cannot drift from the C header.
"""

import ctypes
import ctypes.util
import glob
import math
import os
import struct
import threading

__all__ = ["RampError", "Plan", "Gpu", "Layer", "gpu_count", "check_layer",
           "weights_to_units", "w2_to_red4", "library_path", "version"]

CU_STREAM_LEGACY = 1  # the driver's name for the legacy default stream
_KERNELS = {"v1": 0, "v2": 1}


class RampError(RuntimeError):
    """A libramp call failed: ``status`` is its status name
    ("RAMP_ERR_INVALID_ARGUMENT"), the message says what and where."""

    def __init__(self, status, message):
        super().__init__("%s: %s" % (status, message))
        self.status = status
        self.message = message

    def __reduce__(self):  # pickle and copy (process pools pass errors on)
        return (RampError, (self.status, self.message))


# ---------------------------------------------------------------- the library

def _candidates():
    env = os.environ.get("RAMP_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)  # a checkout: python/ramp.py
    paths = [os.path.join(root, d, "libramp.so")
             for d in ("build/release", "build-rel", "build", "build-gpucheck")]
    # installed by `cmake --install`: P/share/ramp/python/ramp.py, P/lib*/libramp.so
    prefix = os.path.dirname(os.path.dirname(root))
    paths += sorted(glob.glob(os.path.join(prefix, "lib*", "libramp.so")) +
                    glob.glob(os.path.join(prefix, "lib", "*", "libramp.so")))
    found = ctypes.util.find_library("ramp")
    return paths + ([found] if found else [])


def _load():
    tried = []
    for path in _candidates():
        if os.path.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return path, ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError(
        "ramp: libramp.so not found (tried: %s). Build it (cmake -S . -B build/release "
        "-DCMAKE_BUILD_TYPE=Release && cmake --build build/release --target ramp_shared) "
        "or set RAMP_LIBRARY to its path" % (", ".join(tried) or "nothing"))


_path, _lib = _load()


class _Field(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("offset", ctypes.c_size_t),
                ("size", ctypes.c_size_t), ("count", ctypes.c_int), ("kind", ctypes.c_char)]


_vp, _int, _sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
for _name, _res, _args in [
        ("ramp_version", ctypes.c_char_p, []),
        ("ramp_status_name", ctypes.c_char_p, [_int]),
        ("ramp_last_error", ctypes.c_char_p, []),
        ("ramp_struct_fields", ctypes.POINTER(_Field),
         [ctypes.c_char_p, ctypes.POINTER(_sz), ctypes.POINTER(_int)]),
        ("ramp_plan_read", _int, [ctypes.c_char_p, _vp]),
        ("ramp_plan_pick", _int, [_vp, _int, ctypes.POINTER(ctypes.c_int32)]),
        ("ramp_config_name", ctypes.c_char_p, [_vp, ctypes.c_char_p, _sz]),
        ("ramp_layer_check", _int, [_vp, _vp]),
        ("ramp_gpu_count", _int, [ctypes.POINTER(_int)]),
        ("ramp_gpu_open", _int, [_int, ctypes.POINTER(_vp)]),
        ("ramp_gpu_close", None, [_vp]),
        ("ramp_gpu_get_info", _int, [_vp, _vp]),
        ("ramp_layer_create", _int, [_vp, _vp, _vp, ctypes.POINTER(_vp)]),
        ("ramp_layer_free", None, [_vp]),
        ("ramp_layer_run", _int, [_vp, _vp, _vp]),
        ("ramp_layer_get_info", _int, [_vp, _vp]),
        ("ramp_weights_to_units", _int, [ctypes.POINTER(ctypes.c_int64),
                                         ctypes.POINTER(ctypes.c_int64), _int, _vp, _vp, _vp, _vp]),
        ("ramp_w2_to_red4", _int, [ctypes.POINTER(ctypes.c_int64), _vp, _vp]),
]:
    _fn = getattr(_lib, _name)
    _fn.restype, _fn.argtypes = _res, _args


def library_path():
    """The libramp.so this module loaded."""
    return _path


def version():
    """libramp's version ("0.1.0")."""
    return _lib.ramp_version().decode()


def _check(status):
    if status != 0:
        raise RampError(_lib.ramp_status_name(status).decode(),
                        _lib.ramp_last_error().decode(errors="replace"))


# ------------------------------------------------------------------- structs

_PACK = {"i": "i", "u": "I", "q": "q", "Q": "Q", "f": "f", "d": "d", "p": "P"}
_tables = {}


def _table(type_name):
    if type_name not in _tables:
        size, count = _sz(), _int()
        f = _lib.ramp_struct_fields(type_name.encode(), ctypes.byref(size), ctypes.byref(count))
        if not f:
            _check(5)  # RAMP_ERR_NOT_FOUND, with the library's message
        fields = {}
        for i in range(count.value):
            e = f[i]
            name = e.name.decode()
            if name in fields:
                raise RampError("RAMP_ERR_INTERNAL", "%s: member %s listed twice by "
                                "ramp_struct_fields" % (type_name, name))
            fields[name] = (e.offset, e.size, e.count, e.kind.decode())
        _tables[type_name] = (size.value, fields)
    return _tables[type_name]


class _Struct:
    """One zeroed C struct, its members set and read by name."""

    def __init__(self, type_name):
        self.type = type_name
        size, self.fields = _table(type_name)
        self.buf = ctypes.create_string_buffer(size)

    @property
    def ptr(self):
        return ctypes.addressof(self.buf)

    def _field(self, name):
        try:
            return self.fields[name]
        except KeyError:
            raise KeyError("%s has no member %r" % (self.type, name)) from None

    def __setitem__(self, name, value):
        off, size, count, kind = self._field(name)
        if kind == "c":
            raw = value.encode()
            if len(raw) >= count:
                raise ValueError("%s.%s: %r is longer than %d bytes" %
                                 (self.type, name, value, count - 1))
            ctypes.memmove(self.ptr + off, raw + b"\0" * (count - len(raw)), count)
        elif kind == "b":
            raise TypeError("%s.%s: not settable from Python" % (self.type, name))
        elif count > 1:
            values = list(value)
            if len(values) != count:
                raise ValueError("%s.%s: %d values, expected %d" %
                                 (self.type, name, len(values), count))
            try:
                struct.pack_into("%d%s" % (count, _PACK[kind]), self.buf, off, *values)
            except struct.error:
                raise ValueError("%s.%s: %r out of range for its C type" %
                                 (self.type, name, values)) from None
        else:
            try:
                struct.pack_into(_PACK[kind], self.buf, off, value)
            except struct.error:
                raise ValueError("%s.%s: %r out of range for its C type" %
                                 (self.type, name, value)) from None

    def __getitem__(self, name):
        off, size, count, kind = self._field(name)
        if kind == "c":
            return self.buf.raw[off:off + count].split(b"\0", 1)[0].decode()
        if kind == "b":
            return [self.ptr + off + i * (size // count) for i in range(count)]
        v = struct.unpack_from("%d%s" % (count, _PACK[kind]), self.buf, off)
        return list(v) if count > 1 else v[0]


def _config_name(address):
    buf = ctypes.create_string_buffer(96)
    _lib.ramp_config_name(address, buf, len(buf))
    return buf.value.decode()


# --------------------------------------------------------------------- plans

class Plan:
    """A plan file (`ramp fit` writes it): the model, layout, geometry, and
    the menu with its cost model's coefficients, checked when read."""

    def __init__(self, _struct):
        self._s = _struct

    @classmethod
    def read(cls, path):
        s = _Struct("ramp_plan")
        _check(_lib.ramp_plan_read(os.fsencode(path), s.ptr))
        return cls(s)

    model = property(lambda self: self._s["model"])
    layout = property(lambda self: self._s["layout"])
    device = property(lambda self: self._s["device"])
    sms = property(lambda self: self._s["sms"])
    kernel = property(lambda self: "v2" if self._s["kernel"] == 1 else "v1")
    weight_units = property(lambda self: self._s["weight_units"])

    @property
    def geometry(self):
        """experts (on one GPU), topk, inter (h), hidden (d), bf16."""
        return {k: self._s["geom." + k] for k in ("experts", "topk", "inter", "hidden", "bf16")}

    @property
    def configs(self):
        """The menu's configuration names, in the plan's order."""
        return [_config_name(a) for a in self._s["configs"][:self._s["count"]]]

    def pick(self, load):
        """The menu index the plan's cost model picks for a per-GPU load:
        token-expert pairs of each local expert (what the selection kernel
        computes on the GPU, here in double on the host): one count for each
        of the plan's experts on a GPU (geometry["experts"])."""
        counts = list(load)
        want = self.geometry["experts"]
        if len(counts) != want:
            raise ValueError("load: %d counts, expected one for each of the plan's %d experts "
                             "on a GPU" % (len(counts), want))
        for i, n in enumerate(counts):
            if isinstance(n, float) and not n.is_integer() or not 0 <= n < 2 ** 31:
                raise ValueError("load[%d] = %r: expected a pair count, an integer in "
                                 "0 .. 2^31 - 1" % (i, n))
        arr = (ctypes.c_int32 * max(1, len(counts)))(*(int(n) for n in counts))
        return _lib.ramp_plan_pick(self._s.ptr, len(counts), arr)

    def __repr__(self):
        return "Plan(%s %s, kernel %s, menu %s)" % (self.model, self.layout, self.kernel,
                                                   " ".join(self.configs))


# ---------------------------------------------------------------------- GPUs

def gpu_count():
    """Devices the driver sees (0 with no driver or none)."""
    n = _int()
    return n.value if _lib.ramp_gpu_count(ctypes.byref(n)) == 0 else 0


class Gpu:
    """A device's primary context, the one PyTorch uses: pointers and
    streams pass both ways."""

    def __init__(self, ordinal=0):
        h = _vp()
        _check(_lib.ramp_gpu_open(int(ordinal), ctypes.byref(h)))
        self._h = h
        self.ordinal = int(ordinal)
        # layers made on it and not yet closed: the context is released only
        # after the last of them (closing or collecting a Gpu first defers it)
        self._layers = 0
        self._pending = False

    @property
    def info(self):
        s = _Struct("ramp_gpu_info")
        _check(_lib.ramp_gpu_get_info(self._h, s.ptr))
        return {name: s[name] for name in s.fields}

    def close(self):
        """Releases the context, or, while layers made on it are open, when
        the last of them is closed."""
        if getattr(self, "_layers", 0) > 0:
            self._pending = True
            return
        # (at interpreter exit the module's globals may already be gone)
        if getattr(self, "_h", None) and _lib is not None:
            _lib.ramp_gpu_close(self._h)
        self._h = None

    __del__ = close

    def _layer_closed(self):
        self._layers -= 1
        if self._layers == 0 and self._pending:
            self._pending = False
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ------------------------------------------------- weight layouts (host memory)

def _host(name, t, like=None, out=False):
    """Address and (shape, element bytes) of a host array: a CPU torch tensor
    or a numpy array, contiguous (and writeable: out); `like`: the same
    shape and element size."""
    if hasattr(t, "data_ptr"):
        if getattr(t, "is_cuda", False):
            raise ValueError("%s: a CUDA tensor; weight layouts are made in host memory, "
                             "once, before the weights are copied to the GPU" % name)
        if hasattr(t, "is_contiguous") and not t.is_contiguous():
            raise ValueError("%s: not contiguous" % name)
        ptr, eb = int(t.data_ptr()), int(t.element_size())
    elif hasattr(t, "__array_interface__"):
        ai = t.__array_interface__
        if not t.flags["C_CONTIGUOUS"] or (out and not t.flags["WRITEABLE"]):
            raise ValueError("%s: not a C-contiguous%s array" % (name, " writeable" if out else ""))
        ptr, eb = int(ai["data"][0]), int(t.itemsize)
    else:
        raise TypeError("%s: expected a CPU tensor or a numpy array, got %s" %
                        (name, type(t).__name__))
    shape = tuple(int(n) for n in t.shape)
    if len(shape) != 3:
        raise ValueError("%s: shape %s, expected 3 dimensions" % (name, shape))
    if like is not None and (shape, eb) != like:
        raise ValueError("%s: shape %s of %d-byte elements, expected %s of %d-byte elements" %
                         (name, shape, eb, like[0], like[1]))
    return ptr, (shape, eb)


def _no_overlap(outputs, inputs):
    """Refuses an output buffer sharing bytes with any other buffer:
    (name, address, (shape, element bytes)) each."""
    def span(b):
        shape, eb = b[2]
        return b[1], b[1] + eb * shape[0] * shape[1] * shape[2]
    for i, o in enumerate(outputs):
        lo, hi = span(o)
        for other in inputs + outputs[:i] + outputs[i + 1:]:
            a, b = span(other)
            if lo < b and a < hi:
                raise ValueError("%s: overlaps %s in memory; the layouts are written to a "
                                 "separate buffer" % (o[0], other[0]))


def weights_to_units(w13, w2, w13_out, w2_out):
    """w13 [EL, 2h, d] and w2 [EL, d, h] (FP8 or BF16, host memory) into
    w13_out and w2_out (same shapes and element size) in the stage units a
    layer made with weight_units=1 reads (ramp_weights_to_units; scales are
    unchanged). Once, when the weights are loaded."""
    p13, (s13, eb) = _host("w13", w13)
    p2, (s2, eb2) = _host("w2", w2)
    if eb2 != eb:
        raise ValueError("w2: %d-byte elements, w13 has %d" % (eb2, eb))
    o13, _ = _host("w13_out", w13_out, (s13, eb), out=True)
    o2, _ = _host("w2_out", w2_out, (s2, eb), out=True)
    _no_overlap([("w13_out", o13, (s13, eb)), ("w2_out", o2, (s2, eb))],
                [("w13", p13, (s13, eb)), ("w2", p2, (s2, eb))])
    _check(_lib.ramp_weights_to_units((ctypes.c_int64 * 3)(*s13), (ctypes.c_int64 * 3)(*s2),
                                      eb, p13, p2, o13, o2))


def w2_to_red4(w2, out):
    """FP8 w2 [EL, d, h] (host memory) into out in the row order of a layer
    made with w2_red4=1 (ramp_w2_to_red4; scales unchanged)."""
    p2, (s2, eb) = _host("w2", w2)
    if eb != 1:
        raise ValueError("w2: %d-byte elements; the float4 output order is for FP8 weights" % eb)
    o2, _ = _host("out", out, (s2, 1), out=True)
    _no_overlap([("out", o2, (s2, 1))], [("w2", p2, (s2, 1))])
    _check(_lib.ramp_w2_to_red4((ctypes.c_int64 * 3)(*s2), p2, o2))


# -------------------------------------------------------------------- layers

def _ptr(name, t, dtypes, ndim=None, cuda=True):
    """A tensor's device address after the checks that name `name`."""
    if isinstance(t, int):
        return t
    if not hasattr(t, "data_ptr"):
        raise TypeError("%s: expected a tensor (data_ptr(), shape, dtype) or an address, "
                        "got %s" % (name, type(t).__name__))
    dt = str(getattr(t, "dtype", "")).replace("torch.", "")
    if dtypes and dt not in dtypes:
        raise TypeError("%s: dtype %s, expected %s" % (name, dt or "?", " or ".join(dtypes)))
    if ndim is not None and len(t.shape) != ndim:
        raise ValueError("%s: shape %s, expected %d dimensions" % (name, tuple(t.shape), ndim))
    if cuda and getattr(t, "is_cuda", True) is False:
        raise ValueError("%s: a CPU tensor; the layer reads device memory" % name)
    if hasattr(t, "is_contiguous") and not t.is_contiguous():
        raise ValueError("%s: not contiguous; the layer reads it row-major" % name)
    return int(t.data_ptr())


def _shape(t):
    return [int(n) for n in t.shape] if hasattr(t, "shape") else None


# the descriptor members the constructor sets itself
_SET_HERE = {"w13", "w13_scale", "w2", "w2_scale", "w13_shape", "w2_shape", "bf16",
             "experts", "first_expert", "local_experts", "local_of", "max_tokens", "kernel"}


def _layer_desc(plan, w13, w13_scale, w2, w2_scale, experts, local_experts, first_expert,
                local_of, max_tokens, kernel, options):
    bf16 = plan.geometry["bf16"]
    wt = ("bfloat16",) if bf16 else ("float8_e4m3fn",)
    d = _Struct("ramp_layer_desc")
    d["w13"] = _ptr("w13", w13, wt, 3)
    d["w2"] = _ptr("w2", w2, wt, 3)
    if not bf16:
        if w13_scale is None or w2_scale is None:
            raise ValueError("w13_scale, w2_scale: an FP8 plan needs the weights' block scales")
        d["w13_scale"] = _ptr("w13_scale", w13_scale, ("float32",), 3)
        d["w2_scale"] = _ptr("w2_scale", w2_scale, ("float32",), 3)
    for name, t in (("w13_shape", w13), ("w2_shape", w2)):
        shape = _shape(t)
        if shape is None:
            raise ValueError("%s: an address has no shape; pass the tensor" % name[:-6])
        d[name] = shape
    local = local_experts if local_experts is not None else _shape(w13)[0]
    d["bf16"], d["experts"], d["first_expert"] = bf16, int(experts), int(first_expert)
    d["local_experts"], d["max_tokens"] = int(local), int(max_tokens)
    if kernel not in _KERNELS:
        raise ValueError("kernel: %r, expected 'v1' or 'v2'" % (kernel,))
    d["kernel"] = _KERNELS[kernel]
    keep = None
    if local_of is not None:
        ids = [int(i) for i in local_of]
        if len(ids) != int(experts):
            raise ValueError("local_of: %d entries, expected experts = %d" % (len(ids), experts))
        for e, i in enumerate(ids):
            if not -1 <= i < 2 ** 31:
                raise ValueError("local_of[%d] = %d: expected -1 or a local index" % (e, i))
        keep = (ctypes.c_int32 * len(ids))(*ids)
        d["local_of"] = ctypes.addressof(keep)
    for name, value in options.items():
        if name in _SET_HERE or name not in d.fields or d.fields[name][3] != "i":
            valid = sorted(n for n, f in d.fields.items() if f[3] == "i" and n not in _SET_HERE)
            raise TypeError("unknown layer option %r; the options are %s" %
                            (name, ", ".join(valid)))
        d[name] = int(value)
    return d, keep


def _check_scales(plan, w13, w13_scale, w2, w2_scale):
    """The C descriptor has no scale shapes: checked here (after libramp has
    checked the weights' shapes) or never."""
    if plan.geometry["bf16"]:
        return
    for name, t, w in (("w13_scale", w13_scale, w13), ("w2_scale", w2_scale, w2)):
        shape, ws = _shape(t), _shape(w)
        if shape is None:
            raise ValueError("%s: an address has no shape; pass the tensor" % name)
        want = [ws[0], -(-ws[1] // 128), -(-ws[2] // 128)]
        if shape != want:
            raise ValueError("%s: shape %s, expected %s (one float32 a 128 x 128 block of %s)" %
                             (name, tuple(shape), tuple(want), name[:-6]))


def check_layer(plan, w13, w13_scale, w2, w2_scale, *, experts, max_tokens,
                local_experts=None, first_expert=0, local_of=None, kernel="v2", **options):
    """What Layer() checks before it touches the GPU (ramp_layer_check):
    raises RampError naming the field that disagrees with the plan. Needs no
    GPU, so a wrong plan or option can be refused on any host."""
    d, keep = _layer_desc(plan, w13, w13_scale, w2, w2_scale, experts, local_experts,
                          first_expert, local_of, max_tokens, kernel, options)
    _check(_lib.ramp_layer_check(plan._s.ptr, d.ptr))
    _check_scales(plan, w13, w13_scale, w2, w2_scale)
    del keep


def _torch_stream(stream, ordinal):
    if stream is None:
        try:
            import torch
        except ImportError:
            raise ValueError("stream: required without PyTorch (a CUstream handle)") from None
        # the layer's device's current stream, whichever device is current
        stream = torch.cuda.current_stream(ordinal).cuda_stream
    elif hasattr(stream, "cuda_stream"):
        stream = stream.cuda_stream
    stream = int(stream)
    # PyTorch's default stream is the legacy one, handle 0, which libramp
    # refuses as NULL (an easy mistake in C); the driver also names it 1.
    return stream or CU_STREAM_LEGACY


class Layer:
    """One MoE layer on one GPU, served from a plan (ramp_layer_create):
    weights are this GPU's experts in local order, w13 [EL, 2h, d] (gate
    rows, then up rows) and w2 [EL, d, h], FP8 e4m3 with float32 128x128
    block scales ([EL, 2h/128, d/128], [EL, d/128, h/128]) or BF16 with
    none; the layer keeps a reference to each (C reads them by address), and
    to its Gpu, whose context outlives the layer. ``experts``
    is the router's E; this GPU holds first_expert .. first_expert + EL - 1,
    or the experts whose local_of[e] >= 0. ``options`` are
    ramp_layer_desc's int members (w2_red4, weight_units, deterministic,
    hidden_bf16, select_pdl, ...; include/ramp.h says what each does).
    Compiles its kernels on creation (NVRTC, cached on disk)."""

    def __init__(self, plan, w13, w13_scale, w2, w2_scale, *, experts, max_tokens,
                 local_experts=None, first_expert=0, local_of=None, kernel="v2", gpu=None,
                 **options):
        d, keep = _layer_desc(plan, w13, w13_scale, w2, w2_scale, experts, local_experts,
                              first_expert, local_of, max_tokens, kernel, options)
        _check(_lib.ramp_layer_check(plan._s.ptr, d.ptr))
        _check_scales(plan, w13, w13_scale, w2, w2_scale)
        if gpu is None:  # the weights' device, else PyTorch's current one
            ordinal = getattr(getattr(w13, "device", None), "index", None)
            if ordinal is None:
                try:
                    import torch
                    ordinal = torch.cuda.current_device()
                except (ImportError, RuntimeError, AssertionError):  # (no CUDA in torch)
                    ordinal = 0
            gpu = Gpu(ordinal)
        # the GPU, the plan and the weights outlive the layer's handle (C keeps
        # the weights' addresses, and TMA descriptors made from them)
        self.gpu, self.plan = gpu, plan
        self._weights = (w13, w13_scale, w2, w2_scale)
        self.bf16, self.hidden_bf16 = plan.geometry["bf16"], d["hidden_bf16"]
        self.hidden, self.topk = plan.geometry["hidden"], plan.geometry["topk"]
        self.max_tokens = int(max_tokens)
        h = _vp()
        _check(_lib.ramp_layer_create(gpu._h, plan._s.ptr, d.ptr, ctypes.byref(h)))
        del keep
        self._h = h
        gpu._layers += 1
        self._local = threading.local()  # an io struct a thread: calls may overlap

    @property
    def info(self):
        """The polymorphic kernel's shape (threads, smem_bytes, registers,
        grid, ...), the menu's configs and any warning (ramp_layer_info)."""
        s = _Struct("ramp_layer_info")
        _check(_lib.ramp_layer_get_info(self._h, s.ptr))
        out = {n: s[n] for n in s.fields if n != "configs"}
        out["configs"] = [_config_name(a) for a in s["configs"][:s["entries"]]]
        return out

    def __call__(self, x, topk_ids, topk_weights, out, x_scale=None, *, stream=None,
                 tokens_dev=None):
        """Queues the layer on `stream` (default: PyTorch's current one):
        adds this GPU's experts' outputs into out (float32 [T, d]; zero it
        first). x [T, d] FP8 e4m3 with x_scale float32 [T, d/128], or BF16
        (BF16 layers, or FP8 layers made with hidden_bf16=1); topk_ids int32
        [T, k] (other GPUs' experts and -1 skipped); topk_weights float32
        [T, k]. tokens_dev: an int32 device tensor holding T, for one graph
        that serves any batch up to max_tokens (then T is read on the GPU,
        and every tensor must hold max_tokens rows). T = 0 without tokens_dev
        queues nothing. Threads may call one layer, but its runs must not
        overlap on the GPU (one workspace): one stream, or a layer each."""
        xt = ("bfloat16",) if self.bf16 or self.hidden_bf16 else ("float8_e4m3fn",)
        io = getattr(self._local, "io", None)
        if io is None:
            io = self._local.io = _Struct("ramp_layer_io")
        io["x"] = _ptr("x", x, xt, 2)
        tokens = _shape(x)[0] if hasattr(x, "shape") else None
        if tokens is None:
            raise ValueError("x: an address has no shape; pass the tensor")
        if tokens > self.max_tokens:
            raise ValueError("x: %d tokens, the layer was made for at most %d" %
                             (tokens, self.max_tokens))
        shapes = {"x": (tokens, self.hidden), "topk_ids": (tokens, self.topk),
                  "topk_weights": (tokens, self.topk), "out": (tokens, self.hidden)}
        if xt == ("float8_e4m3fn",):
            if x_scale is None:
                raise ValueError("x_scale: FP8 hidden states need their 1x128 scales")
            io["x_scale"] = _ptr("x_scale", x_scale, ("float32",), 2)
            shapes["x_scale"] = (tokens, self.hidden // 128)
        else:
            io["x_scale"] = 0
        io["topk_ids"] = _ptr("topk_ids", topk_ids, ("int32",), 2)
        io["topk_weights"] = _ptr("topk_weights", topk_weights, ("float32",), 2)
        io["out"] = _ptr("out", out, ("float32",), 2)
        args = {"x": x, "topk_ids": topk_ids, "topk_weights": topk_weights, "out": out,
                "x_scale": x_scale, "tokens_dev": tokens_dev}
        for name, t in args.items():  # (a process may drive several GPUs)
            index = getattr(getattr(t, "device", None), "index", None)
            if index is not None and index != self.gpu.ordinal:
                raise ValueError("%s: on cuda:%d, the layer is on cuda:%d" %
                                 (name, index, self.gpu.ordinal))
        for name, want in shapes.items():
            got = tuple(_shape(args[name]) or ())
            if got and got != want:
                raise ValueError("%s: shape %s, expected %s" % (name, got, want))
        io["tokens"] = tokens
        if tokens_dev is None:
            io["tokens_dev"] = 0
            if tokens == 0:
                return  # an empty batch adds nothing (and its tensors have no address)
        else:
            io["tokens_dev"] = _ptr("tokens_dev", tokens_dev, ("int32",))
            count = _shape(tokens_dev)
            if count is not None and math.prod(count) != 1:
                raise ValueError("tokens_dev: shape %s, expected one int32 (the token count)" %
                                 (tuple(count),))
            if tokens != self.max_tokens:
                raise ValueError("x: %d rows; with tokens_dev the kernels may read up to "
                                 "max_tokens = %d rows of every tensor (the count is read on "
                                 "the GPU), so each must hold that many" %
                                 (tokens, self.max_tokens))
        _check(_lib.ramp_layer_run(self._h, io.ptr, _torch_stream(stream, self.gpu.ordinal)))

    def close(self):
        """Frees the layer's kernels and buffers (also when collected)."""
        if getattr(self, "_h", None) and _lib is not None:
            _lib.ramp_layer_free(self._h)
            self._h = None
            self.gpu._layer_closed()
        self._h = None

    __del__ = close
