#!/usr/bin/env python3
"""PyTorch training throughput of the expressive-attention paper's cisformer (Gros 2024), the
competitor of bench_cisformer.c: the same model (position-specific Wq, Wk, Wv, W1, W2, FFN bias
b, readout R, r; LN without affine parameters, eps 1e-5; tanh FFN; causal attention with score
scale 1), the same loss (sum of squared errors against the one-hot target), SGD with momentum 0.8
at lr 0.02 (torch.optim.SGD), on NT series. Two ways:

  loop     the straightforward way: one window at a time, forward, backward, step (one update per
           prediction), as a per-prediction training loop is usually written;
  batched  the 40 windows of an epoch in one forward/backward, one step per epoch on the mean loss.

Prints one line per mode: "mode kind N tau ncon threads predictions_per_second" (the median of
the repeats). Run with /usr/bin/python3 (Debian's python3-torch) and OPENBLAS_CORETYPE unset.
Usage: torch_cisformer.py --N 16 --tau 2 --ncon 32 [--kind softmax] [--threads 1] [--repeats 3]"""
import argparse
import statistics
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--N", type=int, default=16)
p.add_argument("--tau", type=int, default=2)
p.add_argument("--ncon", type=int, default=32)
p.add_argument("--kind", default="softmax")
p.add_argument("--threads", type=int, default=1)
p.add_argument("--repeats", type=int, default=3)
p.add_argument("--seconds", type=float, default=1.0, help="minimum time per repeat")
p.add_argument("--modes", default="loop,batched")
a = p.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)
d, n = a.N, a.ncon


class Cisformer(torch.nn.Module):
    def __init__(self):
        super().__init__()

        def u(*shape, fan):  # PyTorch's nn.Linear default, U(+-1/sqrt(fan_in))
            return torch.nn.Parameter((torch.rand(*shape) * 2 - 1) / fan ** 0.5)
        self.Wq, self.Wk, self.Wv = u(n, d, d, fan=d), u(n, d, d, fan=d), u(n, d, d, fan=d)
        self.W1, self.W2 = u(n, 4 * d, d, fan=d), u(n, d, 4 * d, fan=4 * d)
        self.b = torch.nn.Parameter(torch.zeros(n, d))
        self.R, self.r = u(d, n * d, fan=n * d), torch.nn.Parameter(torch.zeros(d))
        self.register_buffer("mask", torch.ones(n, n, dtype=torch.bool).tril())

    def forward(self, x):  # x [B, n, d] one-hot windows -> y [B, d]
        ln = torch.nn.functional.layer_norm
        xt = ln(x, (d,), eps=1e-5)
        q = torch.einsum("cij,bcj->bci", self.Wq, xt)
        k = torch.einsum("cij,bcj->bci", self.Wk, xt)
        v = torch.einsum("cij,bcj->bci", self.Wv, xt)
        s = q @ k.transpose(1, 2)  # score scale 1
        if a.kind == "softmax":
            w = torch.softmax(s.masked_fill(~self.mask, float("-inf")), dim=-1)
        else:  # expressive attention: s^2 / (1 + s^2), row-normalised over the visible keys
            g = (s * s / (1 + s * s)).masked_fill(~self.mask, 0)
            w = g / g.sum(-1, keepdim=True)
        h = x + w @ v
        f = h + torch.einsum("cij,bcj->bci", self.W2, torch.tanh(torch.einsum("cij,bcj->bci", self.W1, ln(h, (d,), eps=1e-5)))) + self.b
        return f.reshape(x.shape[0], n * d) @ self.R.t() + self.r


def series(length):  # an NT series from a random initial condition
    x = torch.randint(0, d, (length,)).tolist()
    for t in range(a.tau + 1, length):
        x[t] = (x[t - a.tau] + x[t - a.tau - 1]) % d
    return torch.tensor(x)


model = Cisformer()
opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.8)
eye = torch.eye(d)


def epoch(mode):  # one epoch: a series of ncon + 40 symbols, its 40 predictions
    s = series(n + 40)
    onehot = eye[s]
    if mode == "batched":
        x = torch.stack([onehot[j:j + n] for j in range(40)])
        loss = ((model(x) - onehot[n:n + 40]) ** 2).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return
    for j in range(40):
        loss = ((model(onehot[j:j + n].unsqueeze(0)) - onehot[n + j]) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


for mode in a.modes.split(","):
    rates = []
    epoch(mode)  # warm-up
    for _ in range(a.repeats):
        count, t0 = 0, time.perf_counter()
        while True:
            epoch(mode)
            count += 1
            el = time.perf_counter() - t0
            if el >= a.seconds:
                break
        rates.append(40 * count / el)
    print(f"{mode} {a.kind} {a.N} {a.tau} {a.ncon} {a.threads} {statistics.median(rates):.1f}", flush=True)
