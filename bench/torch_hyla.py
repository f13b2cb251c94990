#!/usr/bin/env python3
"""PyTorch training throughput of the HYLA paper's transformer (Schug et al. 2025) and of a small Cogformer
(Lv et al. 2024), the competitor of
bench_transformer.c: the same model (dense input projection, pre-LN blocks with LayerNorm eps 1e-6,
multi-head attention with q scaled by 1/sqrt(dh), a T5 relative-position bias table per layer added
to the scores, dropout 0.1 on the normalised weights, GELU (tanh) MLP, final LN, output head at the
last R positions), the same batch, AdamW (lr 1e-3, wd 0.1), and the same loss (squared error of the
query's scalar for the fuzzy preset, cross-entropy over the 4 query tokens for SRAVEN), on random
inputs of the task's shape. Attention kinds:

  softmax  a = softmax_k(s)                          o = a v
  hyla     a = s / sqrt(mean_h s^2 + 1e-6) (RMSHead)  u_qk = ReLU(sum_h a_hqk v_kh), o_qh = sum_k a_hqk u_qk

  cog      a = sign(s) softmax_k(|s|)                   o = a v   (Cog attention)

The cogformer preset: byte tokens (257), 4 RMSNorm pre-norm blocks of width 128 with RoPE, 4 heads
of 32, SwiGLU MLP of 344, no biases, untied head, causal, 16 windows of 128 tokens, cross-entropy
at every position, AdamW (0.9, 0.95, wd 0.1), gradient clipping at 1.0, no dropout.

With --prune (fuzzy and sraven), the last block computes only what the head reads, as attn.h does:
the last R positions' queries over all T keys, and its MLP over those R rows; the same function
and gradients, written by hand.

With --chunk N, a step accumulates the gradient over chunks of N sequences (as attn_transformer_grad
does); the default is one pass over the batch, which was the faster on the project's machine.

Prints "kind preset threads tokens_per_second" (the median of the repeats). Run with
/usr/bin/python3 (Debian's python3-torch) and OPENBLAS_CORETYPE unset.
Usage: torch_hyla.py --preset fuzzy|sraven|cogformer --kind softmax|hyla|cog [--prune] [--threads 1] [--repeats 3] [--seconds 2] [--chunk 0]"""
import argparse
import math
import statistics
import time

import torch
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--preset", default="fuzzy")
p.add_argument("--kind", default="softmax")
p.add_argument("--prune", action="store_true", help="the last block computes only the read-out rows")
p.add_argument("--threads", type=int, default=1)
p.add_argument("--repeats", type=int, default=3)
p.add_argument("--seconds", type=float, default=2.0, help="minimum time per repeat")
p.add_argument("--chunk", type=int, default=0,
               help="gradient accumulation over chunks of this many sequences (0: the whole batch at once)")
a = p.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)

if a.preset == "fuzzy":  # L 4 variables: tokens of width 5, T = 32, read out at the last position
    IN, E, L, H, DH, M, T, OUT, R = 5, 128, 2, 8, 2, 256, 32, 1, 1
elif a.preset == "sraven":  # SRAVEN K 4, F 8, width 1, 4 layers: 36 one-hot tokens of width 8, 4 queries
    IN, E, L, H, DH, M, T, OUT, R = 8, 128, 4, 16, 4, 256, 36, 8, 4
else:  # the cogformer: 257 byte tokens, 4 layers, 4 heads of 32, SwiGLU 344, 128 tokens, every position
    IN, E, L, H, DH, M, T, OUT, R = 257, 128, 4, 4, 32, 344, 128, 257, 128
B = 16 if a.preset == "cogformer" else 128


def t5_buckets(n):
    """Unidirectional T5 buckets with num_buckets = max_distance = n (Raffel et al. 2020)."""
    me = n // 2
    idx = torch.zeros(n, n, dtype=torch.long)
    for i in range(n):
        for j in range(n):
            d = max(i - j, 0)
            if d < me:
                idx[i, j] = d
            else:
                v = me + int(math.log(d / me + 1.1920929e-07) / math.log(n / me) * (n - me))
                idx[i, j] = min(v, n - 1)
    return idx


BUCKETS = t5_buckets(T)


def rope(x):
    """Rotates the pairs (x[2i], x[2i+1]) of x [B, T, H, DH] by t * 10000^(-2i/DH)."""
    i = torch.arange(DH // 2, dtype=torch.float32)
    ang = torch.arange(T, dtype=torch.float32)[:, None] * torch.pow(10000.0, -2 * i / DH)[None, :]
    c, s = torch.cos(ang)[None, :, None, :], torch.sin(ang)[None, :, None, :]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).flatten(-2)


class CogBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.n1 = torch.nn.Parameter(torch.ones(E))
        self.n2 = torch.nn.Parameter(torch.ones(E))
        self.q = torch.nn.Linear(E, H * DH, bias=False)
        self.k = torch.nn.Linear(E, H * DH, bias=False)
        self.v = torch.nn.Linear(E, H * DH, bias=False)
        self.o = torch.nn.Linear(H * DH, E, bias=False)
        self.wg = torch.nn.Linear(E, M, bias=False)
        self.wp = torch.nn.Linear(E, M, bias=False)
        self.w2 = torch.nn.Linear(M, E, bias=False)

    @staticmethod
    def rms(x, g):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6) * g

    def forward(self, x):
        a = self.rms(x, self.n1)
        q, k = rope(self.q(a).view(-1, T, H, DH)), rope(self.k(a).view(-1, T, H, DH))
        v = self.v(a).view(-1, T, H, DH)
        s = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(DH)
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        if a_kind == "cog":
            w = torch.softmax(s.abs().masked_fill(~causal, float("-inf")), dim=-1) * torch.sign(s)
        else:
            w = torch.softmax(s.masked_fill(~causal, float("-inf")), dim=-1)
        x = x + self.o(torch.einsum("bhqk,bkhd->bqhd", w, v).reshape(-1, T, H * DH))
        b = self.rms(x, self.n2)
        return x + self.w2(self.wg(b) * F.silu(self.wp(b)))


class Cogformer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(IN, E)
        self.blocks = torch.nn.ModuleList([CogBlock() for _ in range(L)])
        self.nf = torch.nn.Parameter(torch.ones(E))
        self.head = torch.nn.Linear(E, OUT, bias=False)

    def forward(self, tok):
        x = self.emb(tok)
        for b in self.blocks:
            x = b(x)
        return self.head(CogBlock.rms(x, self.nf))


a_kind = a.kind


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(E, eps=1e-6)
        self.q = torch.nn.Linear(E, H * DH)
        self.k = torch.nn.Linear(E, H * DH)
        self.v = torch.nn.Linear(E, H * DH)
        self.o = torch.nn.Linear(H * DH, E)
        self.t5 = torch.nn.Parameter(torch.randn(H, T) / math.sqrt(T))
        self.ln2 = torch.nn.LayerNorm(E, eps=1e-6)
        self.w1 = torch.nn.Linear(E, M)
        self.w2 = torch.nn.Linear(M, E)

    def attn(self, x, rq):
        """The attention of the last rq positions' queries over all T keys."""
        q = self.q(x[:, T - rq:]).view(-1, rq, H, DH)
        k = self.k(x).view(-1, T, H, DH)
        v = self.v(x).view(-1, T, H, DH)
        s = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(DH) + self.t5[:, BUCKETS[T - rq:]]
        if a.kind == "softmax":
            w = F.dropout(torch.softmax(s, dim=-1), 0.1, self.training)
            z = torch.einsum("bhqk,bkhd->bqhd", w, v)
        else:
            w = s / torch.sqrt((s * s).mean(dim=1, keepdim=True) + 1e-6)
            w = F.dropout(w, 0.1, self.training)
            u = torch.relu(torch.einsum("bhqk,bkhd->bqkd", w, v))
            z = torch.einsum("bhqk,bqkd->bqhd", w, u)
        return self.o(z.reshape(-1, rq, H * DH))

    def forward(self, x, rq=T):
        x = x[:, T - rq:] + self.attn(self.ln1(x), rq)
        return x + self.w2(F.gelu(self.w1(self.ln2(x)), approximate="tanh"))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(IN, E)
        self.blocks = torch.nn.ModuleList([Block() for _ in range(L)])
        self.lnf = torch.nn.LayerNorm(E, eps=1e-6)
        self.head = torch.nn.Linear(E, OUT)

    def forward(self, x):
        x = self.inp(x)
        for i, b in enumerate(self.blocks):
            x = b(x, R if a.prune and i == L - 1 else T)
        return self.head(self.lnf(x[:, x.shape[1] - R:]))


cog = a.preset == "cogformer"
model = Cogformer() if cog else Model()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1, eps=1e-8, betas=(0.9, 0.95) if cog else (0.9, 0.999))
x = torch.randint(0, IN, (B, T)) if cog else torch.rand(B, T, IN)
if a.preset == "fuzzy":
    y = torch.rand(B, 1, 1)
else:
    y = torch.randint(0, OUT, (B * R,))


def step():
    if not 0 < a.chunk < B:
        out = model(x)
        loss = F.mse_loss(out, y) if a.preset == "fuzzy" else F.cross_entropy(out.reshape(B * R, OUT), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
    else:
        chunked_backward(a.chunk)
    if cog:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()


def chunked_backward(n):
    """The gradient of the batch's loss accumulated over chunks of n sequences."""
    opt.zero_grad(set_to_none=True)
    for b0 in range(0, B, n):
        nb = min(n, B - b0)
        out = model(x[b0:b0 + nb])
        if a.preset == "fuzzy":
            loss = F.mse_loss(out, y[b0:b0 + nb], reduction="sum") / B
        else:
            loss = F.cross_entropy(out.reshape(nb * R, OUT), y[b0 * R:(b0 + nb) * R], reduction="sum") / (B * R)
        loss.backward()


for _ in range(2):
    step()
rates = []
for _ in range(a.repeats):
    n, t0 = 0, time.perf_counter()
    while True:
        step()
        n += 1
        el = time.perf_counter() - t0
        if el >= a.seconds:
            break
    rates.append(n * B * T / el)
print(a.kind, a.preset, a.threads, round(statistics.median(rates)))
