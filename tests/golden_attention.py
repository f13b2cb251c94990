#!/usr/bin/env python3
"""Writes tests/golden/attention_<kind>_<case>.bin: inputs, upstream gradient, output and every
gradient of one attention call, computed by PyTorch autograd in float64 from the definitions of
SPEC §2.1-2.3, 2.5, 2.7, 2.10 and 2.11 (sigmoid: sigmoid(s - ln Tk); kernel and taylor: their quadratic forms) (an implementation independent of attn.h). test_attention.c reads and compares them.

Format (little-endian): 8 bytes magic "ATTNGLD1"; int32 kind, B, H, Tq, Tk, dk, dv, causal, has_mask,
has_bias; float64 scale; then float64 arrays Q, K, V, mask [B, Tk] (1 visible), bias [H, Tq, Tk],
dO, O, dQ, dK, dV, dbias. Run with Debian's python3-torch: /usr/bin/python3 tests/golden_attention.py"""
import os
import struct

import torch

KINDS = {"softmax": 0, "ea": 1, "cog": 2, "centered": 3, "sigmoid": 4, "linear_raw": 5, "kernel": 6, "taylor": 7}
CASES = {  # name: B, H, Tq, Tk, dk, dv, causal, mask, bias, scale
    "causal": (2, 2, 6, 6, 3, 4, 1, 0, 0, 0.0),
    "cross": (2, 3, 5, 9, 4, 3, 1, 1, 1, 0.7),
    "full": (1, 2, 7, 4, 2, 5, 0, 1, 1, 1.0),
}


def attention(kind, q, k, v, mask, bias, causal, scale):
    Tq, Tk = q.shape[2], k.shape[2]
    if kind in ("kernel", "taylor"):  # quadratic forms, eps 1e-6 in the denominator
        if kind == "kernel":  # elu + 1 features
            w = (torch.nn.functional.elu(q) + 1) @ (torch.nn.functional.elu(k) + 1).transpose(-1, -2)
        else:  # 1 + qh . kh
            w = 1 + torch.nn.functional.normalize(q, dim=-1) @ torch.nn.functional.normalize(k, dim=-1).transpose(-1, -2)
        w = w * mask[:, None, None, :]
        if causal:
            i = torch.arange(Tq)[:, None]
            j = torch.arange(Tk)[None, :]
            w = w * (j <= i + Tk - Tq)
        return (w @ v) / (w.sum(-1, keepdim=True) + 1e-6)
    s = scale * q @ k.transpose(-1, -2) + bias
    vis = mask[:, None, None, :].bool()
    if causal:
        i = torch.arange(Tq)[:, None]
        j = torch.arange(Tk)[None, :]
        vis = vis & (j <= i + Tk - Tq)
    if kind == "softmax":
        w = torch.softmax(s.masked_fill(~vis, float("-inf")), -1)
    elif kind == "ea":
        g = (s * s / (1 + s * s)).masked_fill(~vis, 0)
        w = g / g.sum(-1, keepdim=True)
    elif kind == "cog":
        w = torch.sign(s) * torch.softmax(s.abs().masked_fill(~vis, float("-inf")), -1)
    elif kind == "centered":  # softmax - 1/n_i on the visible keys
        visf = vis.to(s.dtype).expand_as(s)
        w = torch.softmax(s.masked_fill(~vis, float("-inf")), -1) - visf / visf.sum(-1, keepdim=True)
    elif kind == "sigmoid":  # sigmoid(s + b), b = -ln Tk
        w = torch.sigmoid(s - torch.log(torch.tensor(float(Tk), dtype=s.dtype))).masked_fill(~vis, 0)
    else:  # linear_raw: the scores themselves
        w = s.masked_fill(~vis, 0)
    return w @ v


def main():
    torch.manual_seed(1234)
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
    os.makedirs(out_dir, exist_ok=True)
    for kname, kid in KINDS.items():
        for cname, (B, H, Tq, Tk, dk, dv, causal, has_mask, has_bias, scale) in CASES.items():
            d = torch.float64
            q = torch.randn(B, H, Tq, dk, dtype=d, requires_grad=True)
            k = torch.randn(B, H, Tk, dk, dtype=d, requires_grad=True)
            v = torch.randn(B, H, Tk, dv, dtype=d, requires_grad=True)
            mask = torch.ones(B, Tk, dtype=d)
            if has_mask:  # drop some keys, never the first (no row may be empty here)
                mask = (torch.rand(B, Tk) > 0.3).to(d)
                mask[:, 0] = 1
            if kname in ("kernel", "taylor"):
                has_bias = 0  # the linear-time forms have no additive bias
            bias = (0.5 * torch.randn(H, Tq, Tk, dtype=d)) if has_bias else torch.zeros(H, Tq, Tk, dtype=d)
            bias.requires_grad_(True)
            s_eff = scale if scale != 0 else dk ** -0.5
            o = attention(kname, q, k, v, mask, bias, causal, s_eff)
            do = torch.randn_like(o)
            o.backward(do)
            path = os.path.join(out_dir, f"attention_{kname}_{cname}.bin")
            with open(path, "wb") as f:
                f.write(b"ATTNGLD1")
                f.write(struct.pack("<10i", kid, B, H, Tq, Tk, dk, dv, causal, has_mask, has_bias))
                f.write(struct.pack("<d", scale))
                dbias = bias.grad if bias.grad is not None else torch.zeros_like(bias)  # kernel: no bias
                for t in (q, k, v, mask, bias, do, o, q.grad, k.grad, v.grad, dbias):
                    f.write(t.detach().contiguous().numpy().astype("<f8").tobytes())
            print(path)


main()
