#!/usr/bin/env python3
"""The Python package's attention (attn.torch.attention, attn.h's fused kernels behind ctypes) against
PyTorch's own in the same process: causal forward + backward, B = 1, H heads of dh, one thread by
default; then the cost of a call, a tiny one (B = H = 1, T = 4, d = 4) where the work is nothing.
PyTorch's side is the faster of its two forms: the plain ops (q k^T, masked_fill, softmax, @ v, as a
user writes them and as bench/torch_attention.py times them) and, for softmax, torch 1.13's
F._scaled_dot_product_attention(is_causal=True). % peak counts 7 T^2 dh H flops (as bench_attention:
the quadratic products over half the scores) against the FMA peak of one core, read from
build/bench_attention --peak (make build/bench_attention first; or pass --peak GFLOPS).
Run from the repository root after `make python`, with Debian's python3-torch:

    /usr/bin/python3 bench/python_attention.py [--T 1024] [--H 8] [--dh 64] [--threads 1] [--repeats 7]
                                               [--kinds softmax,ea,cog] [--peak GFLOPS]"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import attn  # noqa: E402
import attn.torch as at  # noqa: E402

p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
p.add_argument("--T", type=int, default=1024)
p.add_argument("--H", type=int, default=8)
p.add_argument("--dh", type=int, default=64)
p.add_argument("--threads", type=int, default=1)
p.add_argument("--repeats", type=int, default=7)
p.add_argument("--kinds", default="softmax,ea,cog")
p.add_argument("--peak", type=float, default=0.0)
a = p.parse_args()
if a.T < 1 or a.H < 1 or a.dh < 1 or a.threads < 1 or a.repeats < 1:
    p.error("--T, --H, --dh, --threads and --repeats must be positive")

torch.set_num_threads(a.threads)
attn.set_threads(a.threads)
peak = a.peak
if not peak:
    try:
        peak = float(subprocess.run(["build/bench_attention", "--peak"], capture_output=True, text=True,
                                    check=True).stdout)
    except (OSError, ValueError, subprocess.CalledProcessError):
        print("note: no build/bench_attention --peak (make build/bench_attention): no % peak column")


def plain(kind, q, k, v):
    """PyTorch's attention as a user writes it."""
    T = q.shape[2]
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if kind == "softmax":
        w = torch.softmax(s.masked_fill(~mask, float("-inf")), -1)
    elif kind == "ea":  # g = s^2 / (1 + s^2), row-normalised over the visible keys
        g = (s * s / (1 + s * s)).masked_fill(~mask, 0)
        w = g / g.sum(-1, keepdim=True)
    elif kind == "cog":  # sign(s) softmax(|s|)
        w = torch.sign(s) * torch.softmax(s.abs().masked_fill(~mask, float("-inf")), -1)
    else:
        raise SystemExit(f"python_attention.py: no PyTorch form of {kind}")
    return w @ v


def sdpa(q, k, v):
    return torch.nn.functional._scaled_dot_product_attention(q, k, v, is_causal=True)[0]


def median_ms(f, q, k, v, repeats, warm=2):
    """Median wall time of forward + backward (with a fixed upstream gradient), ms."""
    ts = []
    for i in range(warm + repeats):
        qq, kk, vv = (t.detach().requires_grad_() for t in (q, k, v))
        t0 = time.perf_counter()
        o = f(qq, kk, vv)
        o.backward(torch.ones_like(o))
        if i >= warm:
            ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


print(f"attn {attn.version()} ({attn.simd()} kernels) from Python, torch {torch.__version__}; causal forward + "
      f"backward, B = 1, H = {a.H}, dh = {a.dh}, {a.threads} thread(s), median of {a.repeats}")
if peak:
    print(f"FMA peak (one core): {peak:.1f} GFLOP/s")
print(f"{'kind':10} {'T':>6} {'attn ms':>9} {'torch ms':>9} {'sdpa ms':>9} {'speed-up':>9} {'% peak':>7}")
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(1, a.H, a.T, a.dh, generator=g) for _ in range(3))
for kind in a.kinds.split(","):
    ours = median_ms(lambda q, k, v: at.attention(q, k, v, kind, causal=True), q, k, v, a.repeats)
    theirs = median_ms(lambda q, k, v: plain(kind, q, k, v), q, k, v, a.repeats)
    fused = median_ms(sdpa, q, k, v, a.repeats) if kind == "softmax" else float("nan")
    best = min(theirs, fused) if kind == "softmax" else theirs
    pct = 7.0 * a.T * a.T * a.dh * a.H / (ours * 1e-3) / (peak * 1e9 * a.threads) * 100 if peak else float("nan")
    print(f"{kind:10} {a.T:6d} {ours:9.1f} {theirs:9.1f} {fused:9.1f} {best / ours:8.2f}x {pct:6.0f}%")

# The cost of a call: a tiny shape, medians of 2,000 calls (after 200).
tq = torch.randn(1, 1, 4, 4)
nq = tq.numpy()


def per_call_us(f, n=2000, warm=200):
    for _ in range(warm):
        f()
    ts = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        ts.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(ts)


def fwd_bwd(f):
    x = tq.detach().requires_grad_()
    f(x, x, x).sum().backward()


print("a call of B = H = 1, T = 4, d = 4 (median of 5 x 2,000), us:")
rows = (("attn.attention (numpy) forward", lambda: attn.attention(nq, nq, nq, causal=True)),
        ("attn.torch.attention forward", lambda: at.attention(tq, tq, tq, causal=True)),
        ("torch plain forward", lambda: plain("softmax", tq, tq, tq)),
        ("attn.torch.attention forward + backward",
         lambda: fwd_bwd(lambda q, k, v: at.attention(q, k, v, causal=True))),
        ("torch plain forward + backward", lambda: fwd_bwd(lambda q, k, v: plain("softmax", q, k, v))))
for name, f in rows:
    print(f"  {name:42} {per_call_us(f):7.1f}")
