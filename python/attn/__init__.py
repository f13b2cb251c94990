"""attn.h from Python: every attention kind of the library, forward and backward, as numpy functions
(here) and as a torch.autograd.Function (attn.torch); transformers loaded from attn.h checkpoints or
Hugging Face directories (GPT-2, Llama, BERT), their forward pass and generation. The standard
library's ctypes over attn.h built as a shared library; numpy and torch are optional. Arrays are in
PyTorch's order: q [B, H, Tq, dk], k [B, KH, Tk, dk], v [B, KH, Tk, dv] (KH divides H: grouped-query
attention). float64 inputs run attn.h's float64 build, anything else float32. Calls release the
GIL; errors raise attn.Error (attn.ArgumentError, a ValueError, for bad arguments and shapes) with
attn.h's message. See docs/python.md."""
import ctypes
import os

from ._attention import Call, Mod, options
from ._lib import ArgumentError, Error, FileError, lib

__all__ = ["Error", "ArgumentError", "FileError", "Mod", "Transformer", "attention", "attention_forward",
           "attention_backward", "kinds", "simd", "set_simd", "set_threads", "get_threads", "version"]


def version():
    """The version of attn.h the library was built from, e.g. "0.2.0"."""
    return __version__


__version__ = "0.2.0"


def simd():
    """The SIMD kernels the library runs ("avx512", "avx2", "sse2", "neon", ...)."""
    return lib().c.attn_simd_name().decode()


def set_simd(name=None):
    """Chooses the kernels of a run-time build by name (None: the best this CPU runs)."""
    for double in (False, True):
        L = lib(double)
        L.check(L.c.attn_simd_set(None if name is None else name.encode()))


def set_threads(n):
    """Threads for attn.h's calls (0: OpenMP's default); the result does not depend on it."""
    for double in (False, True):
        lib(double).c.attn_set_threads(int(n))


def get_threads():
    return lib().c.attn_get_threads()


def kinds():
    """The attention kinds by name, in the library's order (registered kinds included)."""
    L, out = lib(), []
    for k in range(256):
        info = L.c.attn_kind_get(k)
        if info:
            out.append(info.contents.name.decode())
    return out


class _Numpy:
    """The framework adapter of the numpy functions."""

    def __init__(self):
        try:
            import numpy
        except ImportError as e:
            raise ImportError("attn's array functions need numpy (or use attn.torch)") from e
        self.np = numpy

    def is_double(self, x):
        return x.dtype == self.np.float64

    def dtype(self, kind):
        return {True: self.np.float64, False: self.np.float32, "u8": self.np.uint8, "i32": self.np.int32}[kind]

    def floats(self, x, double):
        return self.np.ascontiguousarray(x, dtype=self.dtype(double))

    def ints(self, x, kind):
        x = self.np.asarray(x)
        if kind == "u8":
            return self.np.ascontiguousarray(x != 0, dtype=self.np.uint8)
        y = self.np.ascontiguousarray(x, dtype=self.np.int32)
        if not self.np.array_equal(y, x):
            raise ArgumentError("an integer option does not fit in 32 bits", 1)
        return y

    def empty(self, shape, kind):
        return self.np.empty(shape, dtype=self.dtype(kind))

    def zeros(self, shape, kind):
        return self.np.zeros(shape, dtype=self.dtype(kind))

    def ptr(self, x):
        return None if x is None else x.ctypes.data


def _call(q, k, v, kind, kw):
    fw = _Numpy()
    q = fw.np.asarray(q)
    double = fw.is_double(q)
    return Call(fw, fw.floats(q, double), fw.floats(k, double), fw.floats(v, double), options(kind=kind, **kw))


def attention(q, k, v, kind="softmax", **kw):
    """O [B, H, Tq, dv] of attention `kind` over numpy arrays. Keywords: causal, scale (None:
    1/sqrt(dk)), key_mask [B, Tk], segment [B, Tk], bias [H, Tq, Tk], window, dilation [H],
    global_tokens [Tk], block, layout, centered_literal, dropout, dropout_seed; differential
    attention's lambda_ [4, dk/2], gain [dv], lambda_init; HYLA+'s w2 [H, dv, dv]; mod (attn.Mod) and
    mod_weight. Every shape is checked before attn.h reads an array."""
    return _call(q, k, v, kind, kw).forward()[0]


def attention_forward(q, k, v, kind="softmax", weights=False, **kw):
    """(O, stats), or (O, stats, W) with weights=True (W [B, H, Tq, Tk]: the normalised weights, or
    the latent code of the head-mixing kinds). stats is what attention_backward needs besides O."""
    O, stats, W = _call(q, k, v, kind, kw).forward(weights)
    return (O, stats, W) if weights else (O, stats)


def attention_backward(dO, q, k, v, O, stats, kind="softmax", **kw):
    """The gradients of sum(dO * O) by name: "q", "k", "v" and, for those given, "bias", "lambda_",
    "gain", "w2", "mod_weight". Pass the forward call's arrays and keywords."""
    c = _call(q, k, v, kind, kw)
    fw = c.fw
    return c.backward(fw.floats(dO, c.double), fw.floats(O, c.double), fw.floats(stats, c.double))


class Transformer:
    """A transformer from an attn.h checkpoint file or a Hugging Face directory (config.json and
    model.safetensors: GPT-2, Llama, BERT), run in float32. Use as a context manager or close().
    pack=True packs the layers' weights once for the kernels (attn_transformer_pack: faster at few
    rows; memory about the layers' weights again); pack=False reads them in place."""

    INFO = ("vocab", "in_dim", "d", "layers", "heads", "dk", "dv", "mlp", "kv_heads", "max_T", "out", "readout",
            "causal")

    def __init__(self, path, pack=True):
        self._L = lib()
        self._h = self._L.c.attnpy_model_load(str(path).encode())
        if not self._h:
            raise self._L.error()
        if pack and self._L.c.attnpy_model_pack(self._h, 1):
            err = self._L.error()
            self.close()
            raise err
        v = (ctypes.c_int * (len(self.INFO) + 256))()
        n = self._L.c.attnpy_model_info(self._h, v, len(v))
        self.config = dict(zip(self.INFO, v[:len(self.INFO)]))
        self.config["kinds"] = [self._L.c.attn_kind_get(k).contents.name.decode() for k in v[len(self.INFO):n]]

    def close(self):
        if getattr(self, "_h", None):
            self._L.c.attnpy_model_free(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _handle(self):
        if not self._h:
            raise Error("the model is closed", 1)
        return self._h

    def save(self, path, hf=False):
        """An attn.h checkpoint at path, or (hf=True) a Hugging Face directory in the model's layout
        (made if missing; attn.h refuses a model that layout cannot hold, naming what)."""
        made = hf and not os.path.exists(path)
        if made:
            os.makedirs(path)
        status = self._L.c.attnpy_model_save(self._handle(), str(path).encode(), int(bool(hf)))
        if status and made:
            os.rmdir(path)
        self._L.check(status)

    def forward(self, tokens=None, x=None):
        """The outputs [B, R, out] (the logits of a language model) of token ids [B, T] or [T], or of
        dense inputs x [B, T, in_dim]; numpy arrays in, numpy out (torch tensors in, torch out)."""
        fw = _Numpy()
        np = fw.np
        as_torch = type(tokens if x is None else x).__module__.startswith("torch")
        if (tokens is None) == (x is None):
            raise ArgumentError("forward takes tokens or x", 1)
        if x is not None:
            x = np.ascontiguousarray(x.numpy() if as_torch else x, dtype=np.float32)
            if x.ndim == 2:
                x = x[None]
            B, T = x.shape[:2]
            if x.ndim != 3 or x.shape[2] != self.config["in_dim"]:
                raise ArgumentError(f"x has shape {x.shape}, expected [B, T, {self.config['in_dim']}]", 2)
        else:
            t = np.asarray(tokens.numpy() if as_torch else tokens)
            tokens = t.astype(np.int32)
            if not np.array_equal(tokens, t) or tokens.ndim not in (1, 2):
                raise ArgumentError("tokens must be integers [B, T] or [T]", 2)
            if tokens.ndim == 1:
                tokens = tokens[None]
            tokens = np.ascontiguousarray(tokens)
            B, T = tokens.shape
        c = self.config
        R = c["readout"] or T
        y = np.empty((B, R, c["out"] or c["d"]), dtype=np.float32)
        self._L.check(self._L.c.attnpy_model_forward(self._handle(), y.ctypes.data, fw.ptr(tokens), fw.ptr(x), B, T))
        if as_torch:
            import torch
            return torch.from_numpy(y)
        return y

    def generate(self, prompt, steps, temperature=0.0, top_k=0, top_p=1.0, seed=0):
        """The steps tokens that follow prompt (a list of ids), each drawn from the logits of all
        before it through the key-value cache: greedy at temperature 0, else sampled (top_k 0: all
        tokens; top_p 1: no nucleus), reproducible from seed. Needs no numpy."""
        prompt = [int(t) for t in prompt]
        p = (ctypes.c_int * max(len(prompt), 1))(*prompt)
        out = (ctypes.c_int * max(steps, 1))()
        self._L.check(self._L.c.attnpy_model_generate(self._handle(), out, p, len(prompt), int(steps),
                                                      float(temperature), int(top_k), float(top_p), int(seed)))
        return list(out[:steps])
