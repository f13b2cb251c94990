"""The shared libraries behind the package (attn_py.c built twice: float and float64), their
functions' signatures, the C structs the package fills, and attn.h's errors as exceptions.
Nothing here needs numpy or torch."""
import ctypes
import glob
import importlib.machinery
import os

c_int, c_size_t, c_void_p, c_char_p = ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_char_p
c_uint64 = ctypes.c_uint64

STATUS = ("ok", "invalid argument", "bad shape", "size overflow", "out of memory", "i/o error", "bad format")


class Error(Exception):
    """An attn.h call failed: the message is attn_last_error()'s, status the attn_status number."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


class ArgumentError(Error, ValueError):
    """attn.h refused an argument or a shape (ATTN_ERR_ARG, _SHAPE, _OVERFLOW)."""


class FileError(Error, OSError):
    """A file could not be read or written, or is not what it claims to be (ATTN_ERR_IO, _FORMAT)."""


def _find(stem):
    """The path of the shared library `stem` in ATTN_LIBRARY_DIR or beside this file."""
    where = os.environ.get("ATTN_LIBRARY_DIR") or os.path.dirname(os.path.abspath(__file__))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES + [".so", ".dll", ".dylib"]:
        path = os.path.join(where, stem + suffix)
        if os.path.exists(path):
            return path
    found = sorted(glob.glob(os.path.join(where, stem + ".*")))
    if not found:
        raise ImportError(f"attn: no {stem} library in {where}: build it with `make python` in the "
                          f"repository, or install the package with `pip install ./python`")
    return found[0]


class Lib:
    """One build of attn.h (float or float64) with its structs declared to match it."""

    def __init__(self, stem):
        self.path = _find(stem)
        self.c = ctypes.CDLL(self.path)  # a CDLL releases the GIL during every call
        self.c.attnpy_layout.restype, self.c.attnpy_layout.argtypes = c_size_t, [c_int]
        F = {4: ctypes.c_float, 8: ctypes.c_double}.get(self.c.attnpy_layout(1))
        if F is None:
            raise ImportError(f"attn: {self.path} has an attn_float of {self.c.attnpy_layout(1)} bytes")
        self.F, self.float_bytes = F, ctypes.sizeof(F)
        self._declare_structs(F)
        self._check_layout()
        self._declare_functions(F)
        self.kinds = {}  # name -> (id, name as the library spells it), filled as kinds are asked for
        self.lambda_init0 = self.c.attn_diff_lambda_init(0)

    def _declare_structs(self, F):
        P = c_void_p

        class Desc(ctypes.Structure):
            _fields_ = [("kind", c_int), ("B", c_int), ("H", c_int), ("Tq", c_int), ("Tk", c_int), ("dk", c_int),
                        ("dv", c_int), ("causal", c_int), ("scale", F), ("key_mask", P), ("segment", P), ("bias", P),
                        ("window", c_int), ("dilation", P), ("global_", P), ("block", c_int), ("layout", P),
                        ("centered_literal", c_int), ("kv_heads", c_int), ("dropout", F), ("dropout_seed", c_uint64),
                        ("dropout_mask", P), ("lambda_", P), ("gain", P), ("w2", P), ("lambda_init", F), ("mod", P),
                        ("kv_rows", c_int)]

        class Grads(ctypes.Structure):
            _fields_ = [(n, P) for n in ("dQ", "dK", "dV", "dbias", "dlambda", "dgain", "dw2")]

        class ModConfig(ctypes.Structure):
            _fields_ = [("kind", c_int), ("H", c_int), ("cap", F), ("buckets", c_int), ("max_distance", c_int),
                        ("bidirectional", c_int), ("mask", c_int), ("span", c_int)]

        class KindInfo(ctypes.Structure):
            _fields_ = [("kind", c_int), ("name", c_char_p), ("code_name", c_char_p), ("formula", c_char_p),
                        ("forward", P), ("backward", P), ("workspace", P), ("flags", ctypes.c_uint)]

        self.Desc, self.Grads, self.ModConfig, self.KindInfo = Desc, Grads, ModConfig, KindInfo

    def _check_layout(self):
        """Refuses a library whose structs differ from the declarations above (another header)."""
        def entries(S):
            return [ctypes.sizeof(S)] + [getattr(S, f[0]).offset for f in S._fields_]
        ours = [self.float_bytes] + entries(self.Desc) + entries(self.Grads) + entries(self.ModConfig)
        n = self.c.attnpy_layout(0)
        theirs = [self.c.attnpy_layout(i + 1) for i in range(n)]
        mod_at = len(ours)  # then sizeof(attn_mod), offsetof(attn_mod, fn), then attn_kind_info's size
        ours_tail = entries(self.KindInfo)[1:]  # and offsets (of which KindInfo declares a prefix)
        if n != len(ours) + 3 + len(ours_tail) or theirs[:mod_at] != ours or theirs[mod_at + 1] != 0 \
                or theirs[mod_at + 3:] != ours_tail:
            raise ImportError(f"attn: {self.path} was built from another attn.h (struct layouts differ): "
                              f"rebuild it with `make python`")
        self.mod_bytes = theirs[mod_at]

    def _declare_functions(self, F):
        c, P = self.c, c_void_p
        sig = {
            "attn_last_error": (c_char_p, []), "attn_last_status": (c_int, []), "attn_clear_error": (None, []),
            "attn_simd_name": (c_char_p, []), "attn_simd_set": (c_int, [c_char_p]),
            "attn_set_threads": (None, [c_int]), "attn_get_threads": (c_int, []),
            "attn_kind_get": (ctypes.POINTER(self.KindInfo), [c_int]), "attn_kind_from_name": (c_int, [c_char_p]),
            "attn_mask_from_name": (c_int, [c_char_p]),
            "attn_diff_lambda_init": (F, [c_int]),
            "attnpy_attention_stats": (c_size_t, [P]), "attnpy_attention_forward": (c_int, [P] * 7),
            "attnpy_attention_backward": (c_int, [P] * 8),
            "attn_mod_params": (c_size_t, [P]), "attn_mod_init": (c_int, [P, P, P, P]),
            "attn_mod_from_name": (c_int, [c_char_p]),
            "attnpy_model_load": (P, [c_char_p]), "attnpy_model_free": (None, [P]),
            "attnpy_model_save": (c_int, [P, c_char_p, c_int]),
            "attnpy_model_pack": (c_int, [P, c_int]),
            "attnpy_model_info": (c_int, [P, ctypes.POINTER(c_int), c_int]),
            "attnpy_model_forward": (c_int, [P, P, P, P, c_int, c_int]),
            "attnpy_model_generate": (c_int, [P, P, P, c_int, c_int, ctypes.c_double, c_int, ctypes.c_double,
                                              c_uint64]),
        }
        for name, (res, args) in sig.items():
            f = getattr(c, name)
            f.restype, f.argtypes = res, args

    def error(self, status=None):
        """The exception for the last failure of this thread's calls into the library."""
        status = self.c.attn_last_status() if status is None else status
        msg = (self.c.attn_last_error() or b"").decode("utf-8", "replace") or STATUS[status]
        cls = ArgumentError if status in (1, 2, 3) else FileError if status in (5, 6) else \
            MemoryError if status == 4 else Error
        return MemoryError(msg) if cls is MemoryError else cls(msg, status)

    def check(self, status):
        if status != 0:
            raise self.error(status)


_libs = {}


def lib(double=False):
    """The float (default) or float64 build, loaded once."""
    key = "_libattn64" if double else "_libattn"
    if key not in _libs:
        _libs[key] = Lib(key)
    return _libs[key]
