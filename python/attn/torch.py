"""attn.h's attention as a torch.autograd.Function: attn.torch.attention(q, k, v, kind, **options)
takes CPU tensors [B, H, Tq, dk], [B, KH, Tk, dk], [B, KH, Tk, dv] (float32, or float64 for
torch.autograd.gradcheck) and returns O [B, H, Tq, dv]; gradients flow to q, k, v and to the
float options that require them (bias, lambda_, gain, w2, mod_weight). The options are those of
attn.attention (docs/python.md)."""
import torch

from ._attention import FLOAT_OPTIONS, Call, options
from ._lib import ArgumentError


class _Torch:
    """The framework adapter of the autograd function."""

    def is_double(self, x):
        return x.dtype == torch.float64

    def dtype(self, kind):
        return {True: torch.float64, False: torch.float32, "u8": torch.uint8, "i32": torch.int32}[kind]

    def floats(self, x, double):
        dt = torch.float64 if double else torch.float32
        if type(x) is torch.Tensor and x.dtype == dt and x.device.type == "cpu" and x.is_contiguous():
            return x
        x = torch.as_tensor(x)
        if x.device.type != "cpu":
            raise ArgumentError(f"attn runs on the CPU: a tensor is on {x.device}", 1)
        return x.detach().to(self.dtype(double)).contiguous()

    def ints(self, x, kind):
        x = torch.as_tensor(x)
        if kind == "u8":
            return (x != 0).to(torch.uint8).contiguous()
        y = x.to(torch.int32).contiguous()
        if not torch.equal(y.to(x.dtype), x):
            raise ArgumentError("an integer option does not fit in 32 bits", 1)
        return y

    def empty(self, shape, kind):
        return torch.empty(shape, dtype=self.dtype(kind))

    def zeros(self, shape, kind):
        return torch.zeros(shape, dtype=self.dtype(kind))

    def ptr(self, x):
        return None if x is None else x.data_ptr()


_FW = _Torch()


class AttentionFunction(torch.autograd.Function):
    """forward(ctx, opts, q, k, v, *float_options): O; the float options in FLOAT_OPTIONS' order."""

    @staticmethod
    def forward(ctx, opts, q, k, v, *floats):
        double = _FW.is_double(q)
        o = dict(opts, **dict(zip(FLOAT_OPTIONS, floats)))
        call = Call(_FW, _FW.floats(q, double), _FW.floats(k, double), _FW.floats(v, double), o)
        O, stats, _ = call.forward()
        ctx.call, ctx.stats = call, stats
        ctx.save_for_backward(O)
        return O

    @staticmethod
    def backward(ctx, dO):
        call = ctx.call
        (O,) = ctx.saved_tensors
        want = [n for n, need in zip(FLOAT_OPTIONS, ctx.needs_input_grad[4:]) if need]
        g = call.backward(_FW.floats(dO, call.double), O, ctx.stats, want)
        return (None, g["q"], g["k"], g["v"]) + tuple(g.get(n) for n in FLOAT_OPTIONS)


def attention(q, k, v, kind="softmax", **kw):
    """O [B, H, Tq, dv] of attention `kind`, differentiable (see attn.attention for the options)."""
    o = options(kind=kind, **kw)
    # the float options travel as the function's own inputs, so that autograd gives them gradients
    dtype = q.dtype if q.dtype in (torch.float32, torch.float64) else torch.float32
    floats = [o.pop(n) for n in FLOAT_OPTIONS]
    floats = [None if x is None else torch.as_tensor(x, dtype=dtype) for x in floats]
    return AttentionFunction.apply(o, q, k, v, *floats)
