#!/usr/bin/env python3
"""PyTorch timings of causal attention fwd+bwd, the competitor of bench_attention.c: the same kinds
(softmax, ea, cog) written in plain torch ops as their papers define them, the same shapes
(B = 1, H = 8, dh = 64), the same thread count. Prints one line per kind: "kind T threads ms",
the median over repeats. Run with /usr/bin/python3 (Debian's python3-torch) and OPENBLAS_CORETYPE
unset, so torch's matmuls use OpenBLAS's AVX-512 kernels.
Usage: torch_attention.py --T 1024 --threads 1 [--repeats 5]"""
import argparse
import statistics
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--T", type=int, default=1024)
p.add_argument("--threads", type=int, default=1)
p.add_argument("--repeats", type=int, default=5)
p.add_argument("--kinds", default="softmax,ea,cog")
a = p.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)
B, H, T, dh = 1, 8, a.T, 64
mask = torch.ones(T, T, dtype=torch.bool).tril()
lq1, lk1, lq2, lk2 = ((0.1 * torch.randn(dh // 2)).requires_grad_() for _ in range(4))  # diff's lambda vectors
gain = torch.ones(dh, requires_grad=True)


def attention(kind, q, k, v):
    if kind in ("kernel", "taylor"):  # the usual quadratic PyTorch forms of causal linear attention
        if kind == "kernel":
            w = (torch.nn.functional.elu(q) + 1) @ (torch.nn.functional.elu(k) + 1).transpose(-1, -2)
        else:
            w = 1 + torch.nn.functional.normalize(q, dim=-1) @ torch.nn.functional.normalize(k, dim=-1).transpose(-1, -2)
        w = w.masked_fill(~mask, 0)
        return (w @ v) / (w.sum(-1, keepdim=True) + 1e-6)
    if kind == "diff":  # differential attention: sub-heads [q1 | q2], lambda_init 0.2, RMSNorm eps 1e-5
        h = dh // 2
        a = [torch.softmax((q[..., i * h:(i + 1) * h] @ k[..., i * h:(i + 1) * h].transpose(-1, -2) / h ** 0.5)
                           .masked_fill(~mask, float("-inf")), dim=-1) for i in range(2)]
        lam = torch.exp((lq1 * lk1).sum()) - torch.exp((lq2 * lk2).sum()) + 0.2
        o = (a[0] - lam * a[1]) @ v
        o = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + 1e-5) * gain
        return o * (1 - 0.2)
    s = q @ k.transpose(-1, -2) / dh ** 0.5
    if kind == "softmax":
        w = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
    elif kind == "ea":  # g = s^2 / (1 + s^2), row-normalised over the visible keys
        g = (s * s / (1 + s * s)).masked_fill(~mask, 0)
        w = g / g.sum(-1, keepdim=True)
    elif kind == "cog":  # sign(s) softmax(|s|), the official form
        w = torch.sign(s) * torch.softmax(s.abs().masked_fill(~mask, float("-inf")), dim=-1)
    elif kind == "centered":  # softmax - 1/n_i over the visible keys
        n = mask.sum(-1, keepdim=True)
        w = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1) - mask / n
    elif kind == "sigmoid":  # sigmoid(s - ln T), unnormalised
        w = torch.sigmoid(s - float(torch.log(torch.tensor(float(T))))).masked_fill(~mask, 0)
    elif kind == "linear_raw":  # the scores, unnormalised
        w = s.masked_fill(~mask, 0)
    else:
        raise SystemExit(f"torch_attention.py: unknown kind {kind}")
    return w @ v


for kind in a.kinds.split(","):
    q, k, v = (torch.randn(B, H, T, dh, requires_grad=True) for _ in range(3))
    do = torch.randn(B, H, T, dh)
    times = []
    for r in range(a.repeats + 1):
        t = time.perf_counter()
        out = attention(kind, q, k, v)
        out.backward(do)
        times.append(time.perf_counter() - t)
        q.grad = k.grad = v.grad = None
    print(f"{kind} {T} {a.threads} {1e3 * statistics.median(times[1:]):.2f}", flush=True)
