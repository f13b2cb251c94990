#!/usr/bin/env python3
"""PyTorch decoding throughput with a key-value cache: the competitor of bench_decode.c, the same
Cogformer (257 byte tokens, 4 RMSNorm pre-norm blocks of width 128, 4 heads of 32 with RoPE and
softmax attention, SwiGLU MLP of 344, no biases, untied head) with random weights. A prompt of
ctx - steps tokens fills the cache (not timed); then `steps` tokens go through one at a time, each
step appending its keys and values to preallocated caches. Prints "ctx tokens_per_second" (the
median of the repeats). Run with /usr/bin/python3 (Debian's python3-torch).
Usage: torch_decode.py --ctx 512 [--steps 32] [--threads 1] [--repeats 5]"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--ctx", type=int, default=512)
p.add_argument("--steps", type=int, default=32)
p.add_argument("--threads", type=int, default=1)
p.add_argument("--repeats", type=int, default=5)
a = p.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)
V, E, L, H, DH, M = 257, 128, 4, 4, 32, 344


def rms(x, g):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * g


def rope(x, pos):
    """x [T, H, DH] at positions pos [T]: pairs (2i, 2i+1) rotated by pos * 10000^(-2i/DH)."""
    i = torch.arange(DH // 2, dtype=torch.float32)
    ang = pos[:, None].float() * torch.pow(10000.0, -2 * i / DH)[None, :]
    c, s = torch.cos(ang)[:, None, :], torch.sin(ang)[:, None, :]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).flatten(-2)


def lin(o, i):
    return torch.randn(o, i) / i ** 0.5


emb = torch.randn(V, E)
layers = [dict(g1=torch.ones(E), wq=lin(H * DH, E), wk=lin(H * DH, E), wv=lin(H * DH, E), wo=lin(E, H * DH),
               g2=torch.ones(E), w1=lin(M, E), w3=lin(M, E), w2=lin(E, M)) for _ in range(L)]
gf, wout = torch.ones(E), lin(V, E)


def step(tok, pos, kc, vc):
    """tok [T] at positions pos .. pos + T - 1; the caches kc, vc [L, H, ctx, DH] gain their rows."""
    T = tok.shape[0]
    x = emb[tok]
    ps = torch.arange(pos, pos + T)
    for l, w in enumerate(layers):
        h = rms(x, w["g1"])
        q = rope((h @ w["wq"].T).view(T, H, DH), ps).transpose(0, 1)
        k = rope((h @ w["wk"].T).view(T, H, DH), ps).transpose(0, 1)
        kc[l, :, pos:pos + T] = k
        vc[l, :, pos:pos + T] = (h @ w["wv"].T).view(T, H, DH).transpose(0, 1)
        s = (q @ kc[l, :, :pos + T].transpose(1, 2)) / DH ** 0.5  # [H, T, pos + T], causal below
        if T > 1:
            s = s.masked_fill(~torch.ones(T, pos + T, dtype=torch.bool).tril(pos), float("-inf"))
        o = torch.softmax(s, -1) @ vc[l, :, :pos + T]
        x = x + o.transpose(0, 1).reshape(T, H * DH) @ w["wo"].T
        h = rms(x, w["g2"])
        x = x + (F.silu(h @ w["w3"].T) * (h @ w["w1"].T)) @ w["w2"].T
    return rms(x, gf) @ wout.T


tok = torch.randint(0, 256, (a.ctx,))
P = a.ctx - a.steps
rates = []
with torch.inference_mode():
    for _ in range(a.repeats):
        kc, vc = torch.zeros(L, H, a.ctx, DH), torch.zeros(L, H, a.ctx, DH)
        step(tok[:P], 0, kc, vc)
        t0 = time.perf_counter()
        for s in range(a.steps):
            step(tok[P + s:P + s + 1], P + s, kc, vc)
        rates.append(a.steps / (time.perf_counter() - t0))
print(a.ctx, statistics.median(rates))
