"""One attention call, forward and backward, over arrays of either framework (numpy or torch): the
descriptor from the arrays' shapes and the options, every shape checked before attn.h reads a
pointer, the outputs and the workspace allocated by the framework."""
import ctypes

from ._lib import ArgumentError, lib


def options(*, kind="softmax", causal=False, scale=None, key_mask=None, segment=None, bias=None, window=0,
            dilation=None, global_tokens=None, block=0, layout=None, centered_literal=False, dropout=0.0,
            dropout_seed=0, lambda_=None, gain=None, w2=None, lambda_init=None, mod=None, mod_weight=None):
    """The keyword arguments every attention function takes (see docs/python.md)."""
    return dict(locals())


# The options that are float arrays (and can have gradients), and the integer / boolean ones.
FLOAT_OPTIONS = ("bias", "lambda_", "gain", "w2", "mod_weight")
INT_OPTIONS = {"key_mask": "u8", "segment": "i32", "dilation": "i32", "global_tokens": "u8", "layout": "u8"}
SIZE_ERROR = ctypes.c_size_t(-1).value  # attnpy_attention_stats' failure
DESC_FIELDS = {"key_mask": "key_mask", "segment": "segment", "bias": "bias", "dilation": "dilation",
               "global_tokens": "global_", "layout": "layout", "lambda_": "lambda_", "gain": "gain", "w2": "w2"}
GRAD_NAMES = {"bias": "dbias", "lambda_": "dlambda", "gain": "dgain", "w2": "dw2"}


class Mod:
    """A provided score modifier: Mod("alibi", heads=H), Mod("softcap", cap=30.0), Mod("relbias",
    heads=H, buckets=32, max_distance=128, bidirectional=False) with mod_weight [H * buckets], or
    Mod("temperature", heads=H) with mod_weight [H]; with a provided mask beside it, or alone (kind
    "none"): mask="window" (|p - j| <= span) or mask="prefix" (j <= p or j < span). Pass it as
    mod=...; its learned weights, when it has some, go as mod_weight (they get a gradient)."""

    def __init__(self, kind, heads=1, cap=0.0, buckets=32, max_distance=128, bidirectional=False, mask=None,
                 span=0):
        self.kind, self.heads, self.cap = kind, heads, cap
        self.buckets, self.max_distance, self.bidirectional = buckets, max_distance, bidirectional
        self.mask, self.span = mask, span
        self.params(lib())  # refuses an unknown kind or an invalid configuration now

    def config(self, L):
        k = L.c.attn_mod_from_name(self.kind.encode())
        if k < 0:
            raise ArgumentError(f"unknown score modifier {self.kind!r}", 1)
        m = L.c.attn_mask_from_name(self.mask.encode()) if self.mask else 0
        if m < 0:
            raise ArgumentError(f"unknown mask {self.mask!r}", 1)
        return L.ModConfig(k, self.heads, self.cap, self.buckets, self.max_distance, int(self.bidirectional), m,
                           self.span)

    def params(self, L):
        """The number of weights (mod_weight's length) the modifier takes."""
        cfg = self.config(L)
        L.c.attn_clear_error()
        n = L.c.attn_mod_params(ctypes.byref(cfg))
        if n == 0 and L.c.attn_last_status() != 0:
            raise L.error()
        return n

    def __repr__(self):
        return f"Mod({self.kind!r}, heads={self.heads}" + (f", mask={self.mask!r}, span={self.span})" if self.mask
                                                            else ")")


def kind_id(L, kind):
    """(the kind's number, its name) for a name or number; ArgumentError for an unknown one."""
    if kind in L.kinds:
        return L.kinds[kind]
    k = kind if isinstance(kind, int) else L.c.attn_kind_from_name(str(kind).encode())
    info = L.c.attn_kind_get(k) if k >= 0 else None
    if not info:
        raise ArgumentError(f"unknown attention kind {kind!r} (attn.kinds() lists them)", 1)
    L.kinds[kind] = k, info.contents.name.decode()
    return L.kinds[kind]


def _need(name, x, shape):
    if x is not None and tuple(x.shape) != tuple(shape):
        raise ArgumentError(f"{name} has shape {tuple(x.shape)}, expected {tuple(shape)}", 2)


class Call:
    """The descriptor of one call. fw: the framework adapter (ptr, empty, zeros, floats, ints);
    q, k, v: float arrays of one dtype, contiguous; o: the options."""

    def __init__(self, fw, q, k, v, o):
        self.fw, self.o = fw, o
        for name, x in (("q", q), ("k", k), ("v", v)):
            if len(x.shape) != 4:
                raise ArgumentError(f"{name} must be [B, H, T, d], has shape {tuple(x.shape)}", 2)
        B, H, Tq, dk = q.shape
        KB, KH, Tk, kdk = k.shape
        if KB != B or kdk != dk or tuple(v.shape[:3]) != (B, KH, Tk):
            raise ArgumentError(f"q {tuple(q.shape)}, k {tuple(k.shape)} and v {tuple(v.shape)} do not fit "
                                f"([B, H, Tq, dk], [B, KH, Tk, dk], [B, KH, Tk, dv])", 2)
        dv = v.shape[3]
        self.double = fw.is_double(q)
        L = self.L = lib(self.double)
        self.shape = (B, H, Tq, Tk, dk, dv)
        self.q, self.k, self.v = q, k, v
        kind, self.kind_name = kind_id(L, o["kind"])
        d = self.d = L.Desc(kind, B, H, Tq, Tk, dk, dv, int(bool(o["causal"])), o["scale"] or 0.0)
        d.kv_heads, d.lambda_init = KH, L.lambda_init0 if o["lambda_init"] is None else o["lambda_init"]
        if o["window"] or o["block"] or o["centered_literal"] or o["dropout"]:
            d.window, d.block, d.centered_literal = o["window"], o["block"], int(bool(o["centered_literal"]))
            d.dropout, d.dropout_seed = o["dropout"], o["dropout_seed"]
        self.keep = {}  # the converted option arrays, alive as long as the call
        for name, ikind in INT_OPTIONS.items():
            if o[name] is not None:
                self.keep[name] = fw.ints(o[name], ikind)
        for name in FLOAT_OPTIONS:
            if o[name] is not None:
                self.keep[name] = fw.floats(o[name], self.double)
        mod = o["mod"]
        if mod is None and o["mod_weight"] is not None:
            raise ArgumentError("mod_weight without mod", 1)
        if mod is not None and mod.heads != H and mod.kind in ("alibi", "relbias", "temperature"):
            raise ArgumentError(f"the modifier has {mod.heads} heads, the call {H}", 2)
        nw = mod.params(L) if mod is not None else 0
        if nw and o["mod_weight"] is None:
            raise ArgumentError(f"the {mod.kind} modifier needs mod_weight [{nw}]", 1)
        if self.keep:
            nb = o["block"] if o["block"] > 0 else 1
            expect = {"key_mask": (B, Tk), "segment": (B, Tk), "bias": (H, Tq, Tk), "dilation": (H,),
                      "global_tokens": (Tk,), "layout": (H, -(-Tq // nb), -(-Tk // nb)), "lambda_": (4, dk // 2),
                      "gain": (dv,), "w2": (H, dv, dv), "mod_weight": (nw,)}
            for name, x in self.keep.items():
                _need(name, x, expect[name])
                if name in DESC_FIELDS:
                    setattr(d, DESC_FIELDS[name], fw.ptr(x))

    def _mod(self, dw=None):
        """Points the descriptor at a fresh attn_mod for this call (dw: its gradient, backward)."""
        mod = self.o["mod"]
        if mod is None:
            self.d.mod = None
            return
        L = self.L
        self.mod_mem = ctypes.create_string_buffer(L.mod_bytes)
        cfg = mod.config(L)
        L.check(L.c.attn_mod_init(self.mod_mem, ctypes.byref(cfg), self.fw.ptr(self.keep.get("mod_weight")),
                                  self.fw.ptr(dw)))
        self.d.mod = ctypes.addressof(self.mod_mem)

    def forward(self, weights=False):
        """(O [B, H, Tq, dv], stats, weights [B, H, Tq, Tk] or None)."""
        L, fw, (B, H, Tq, Tk, dk, dv) = self.L, self.fw, self.shape
        self._mod()
        dref = ctypes.byref(self.d)
        ns = L.c.attnpy_attention_stats(dref)
        if ns == SIZE_ERROR:
            raise L.error()
        O = fw.empty((B, H, Tq, dv), self.double)
        stats = fw.empty((max(ns, 1),), self.double)
        W = fw.empty((B, H, Tq, Tk), self.double) if weights else None
        L.check(L.c.attnpy_attention_forward(dref, fw.ptr(O), fw.ptr(stats), fw.ptr(W), fw.ptr(self.q),
                                             fw.ptr(self.k), fw.ptr(self.v)))
        return O, stats, W

    def backward(self, dO, O, stats, want=None):
        """The gradients by option name ("q", "k", "v", and each of bias, lambda_, gain, w2, mod_weight
        given), zero-initialised and accumulated by attn.h; want: the names to compute (None: all)."""
        L, fw = self.L, self.fw
        _need("dO", dO, O.shape)
        out = {"q": fw.zeros(self.q.shape, self.double), "k": fw.zeros(self.k.shape, self.double),
               "v": fw.zeros(self.v.shape, self.double)}
        for name in FLOAT_OPTIONS:
            if name in self.keep and (want is None or name in want):
                out[name] = fw.zeros(self.keep[name].shape, self.double)
        g = L.Grads(fw.ptr(out["q"]), fw.ptr(out["k"]), fw.ptr(out["v"]))
        for name, field in GRAD_NAMES.items():
            setattr(g, field, fw.ptr(out.get(name)))
        self._mod(out.get("mod_weight"))
        L.check(L.c.attnpy_attention_backward(ctypes.byref(self.d), ctypes.byref(g), fw.ptr(dO), fw.ptr(self.q),
                                              fw.ptr(self.k), fw.ptr(self.v), fw.ptr(O), fw.ptr(stats)))
        return out

