#!/usr/bin/env python3
"""Writes tests/golden/<case>.bin: inputs, upstream gradient, output and every gradient of one
attention call (or Linformer call, or attention layer), computed by PyTorch autograd in float64 from
the papers' definitions (an implementation independent of attn.h), and tests/golden/index.txt
listing the cases. tests/test_golden.c reads and compares them; the format is described below.
Run with Debian's python3-torch: /usr/bin/python3 tests/golden_attention.py"""
import math
import os
import struct

import torch

CASES = {  # name: B, H, Tq, Tk, dk, dv, causal, mask, bias, scale
    "causal": (2, 2, 6, 6, 3, 4, 1, 0, 0, 0.0),
    "cross": (2, 3, 5, 9, 4, 3, 1, 1, 1, 0.7),
    "full": (1, 2, 7, 4, 2, 5, 0, 1, 1, 1.0),
}

# Rows longer than a key tile (256 keys for dense attention), so that the running statistics are
# carried across tiles, the last one partial; causal: the diagonal inside the last tile.
LONG = {  # name: B, H, Tq, Tk, dk, dv, causal, mask, bias, scale
    "long_causal": (1, 1, 70, 600, 3, 2, 1, 1, 0, 0.0),
    "long_full": (1, 1, 70, 300, 2, 3, 0, 0, 0, 0.0),
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


# ---- The file format ------------------------------------------------------------------------------
# tests/golden/<case>.bin (the cases listed in tests/golden/index.txt): 8 bytes magic "ATTNGLD2", then records until the end of the file, each
# a 16-byte NUL-padded name, an int32 count and that many float64 values. Record "cfg" comes first:
#   attention:  [0, kind, B, H, Tq, Tk, dk, dv, causal, scale, window, block, lambda_init]
#   linformer:  [1, kind, B, H, Tq, T, dk, dv, kproj, n_max, scale]
#   layer:      [2, kind, B, Tq, Tk, C, Cout, H, dk, dv, causal, rope, scale, lambda_init, cross]
# then inputs, the upstream gradient dO / dy, the outputs and every gradient, by the names the C
# test (test_golden_v2 in test_attention.c) looks for.
KIND_IDS = {"softmax": 0, "ea": 1, "cog": 2, "centered": 3, "sigmoid": 4, "linear_raw": 5, "kernel": 6, "taylor": 7,
            "diff": 8, "linear_rmshead": 9, "hyla": 10, "hyla_no_rmshead": 11, "hyla_linear": 12,
            "hyla_linear_no_rmshead": 13, "softmax_hyla": 14, "linear_rmshead_relu_v": 15, "hyla_plus": 16}
MIXING = ("linear_rmshead", "hyla", "hyla_no_rmshead", "hyla_linear", "hyla_linear_no_rmshead", "softmax_hyla",
          "linear_rmshead_relu_v", "hyla_plus")
F64 = torch.float64


def visible(B, H, Tq, Tk, mask, causal, window=0, dilation=None, glob=None, block=0, layout=None):
    """[B, H, Tq, Tk] booleans (Longformer, BigBird): causal (bottom-right), key mask, the Longformer window
    {p + m d_h : |m| <= w} (causal: m <= 0) or a global query/key, a block layout."""
    vis = torch.zeros(B, H, Tq, Tk, dtype=torch.bool)
    for b in range(B):
        for h in range(H):
            for i in range(Tq):
                p = i + Tk - Tq
                for j in range(Tk):
                    ok = mask[b, j] != 0 and (not causal or j <= p)
                    if window > 0:
                        dil, off = dilation[h], j - p
                        in_win = off % dil == 0 and -window <= off // dil <= (0 if causal else window)
                        g = glob[j] or (0 <= p < Tk and glob[p])
                        ok = ok and (in_win or g)
                    if block > 0:
                        ok = ok and layout[h][i // block][j // block]
                    vis[b, h, i, j] = bool(ok)
    return vis


def softmax_masked(s, vis):
    return torch.softmax(s.masked_fill(~vis, float("-inf")), -1)


def rms_norm(x, eps, gain=None):
    y = x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)
    return y * gain if gain is not None else y


def attention2(kind, q, k, v, vis, bias, scale, lam=None, gain=None, lambda_init=0.0, w2=None):
    """O [B, H, Tq, dv] and the weights the C library reports (differential: A1 - lambda A2; the
    head-mixing kinds: the latent code a), by the papers' formulas."""
    if kind == "diff":  # Ye et al. 2024: sub-heads [q1 | q2], scale defaults to 1/sqrt(dk/2)
        w = q.shape[-1] // 2
        s = scale if scale != 0 else w ** -0.5
        a1 = softmax_masked(s * q[..., :w] @ k[..., :w].transpose(-1, -2) + bias, vis)
        a2 = softmax_masked(s * q[..., w:] @ k[..., w:].transpose(-1, -2) + bias, vis)
        lq1, lk1, lq2, lk2 = lam
        lmb = torch.exp(lq1 @ lk1) - torch.exp(lq2 @ lk2) + lambda_init
        a = a1 - lmb * a2
        return (1 - lambda_init) * rms_norm(a @ v, 1e-5, gain), a
    s = (scale if scale != 0 else q.shape[-1] ** -0.5) * q @ k.transpose(-1, -2) + bias
    if kind not in MIXING:  # the per-head kinds of the v1 files, on a general visibility
        if kind == "softmax":
            a = softmax_masked(s, vis)
        elif kind == "ea":
            g = (s * s / (1 + s * s)).masked_fill(~vis, 0)
            a = g / g.sum(-1, keepdim=True)
        elif kind == "cog":
            a = torch.sign(s) * softmax_masked(s.abs(), vis)
        else:
            raise ValueError(kind)
        return a @ v, a
    a = softmax_masked(s, vis) if kind == "softmax_hyla" else s.masked_fill(~vis, 0)
    if kind in ("linear_rmshead", "hyla", "hyla_linear", "linear_rmshead_relu_v", "hyla_plus"):  # RMSHead (Schug et al. 2025)
        a = a / torch.sqrt((a * a).mean(1, keepdim=True) + 1e-6)
    if kind == "linear_rmshead":
        return a @ v, a
    if kind == "linear_rmshead_relu_v":
        return a @ torch.relu(v), a
    u = torch.einsum("bhij,bhje->bije", a, v)  # first head sum
    if kind in ("hyla_linear", "hyla_linear_no_rmshead"):
        r = u
    else:
        r = torch.relu(u)
    if kind == "hyla_plus":  # HYLA+ (Schug et al. 2025, App. A.1): u2 = relu(sum_h a_h W2_h u1)
        r = torch.relu(torch.einsum("bhij,hfe,bije->bijf", a, w2, r))
    return torch.einsum("bhij,bije->bhie", a, r), a  # second head sum


class Writer:
    def __init__(self, path):
        self.f = open(path, "wb")
        self.f.write(b"ATTNGLD2")

    def put(self, name, t):
        t = torch.as_tensor(t, dtype=F64).detach().reshape(-1)
        self.f.write(name.encode().ljust(16, b"\0"))
        self.f.write(struct.pack("<i", t.numel()))
        self.f.write(t.contiguous().numpy().astype("<f8").tobytes())

    def close(self):
        self.f.close()


def put_mask_bias(wr, mask, bias):
    """The optional records: the key mask, the bias and its gradient (None: not used)."""
    if mask is not None:
        wr.put("mask", mask)
    if bias is not None:
        wr.put("bias", bias)
        wr.put("dbias", bias.grad)


def diff_params(kind, dk, dv, layer):
    """Differential attention's lambda vectors, gain and lambda_init for 0-based layer `layer`
    (None, None, 0 for the other kinds)."""
    if kind != "diff":
        return None, None, 0.0
    lam = [leaf(dk // 2, std=0.4) for _ in range(4)]
    gain = (1 + 0.3 * torch.randn(dv, dtype=F64)).requires_grad_(True)
    return lam, gain, 0.8 - 0.6 * math.exp(-0.3 * layer)


def put_diff_params(wr, lam, gain):
    """The records of diff_params and their gradients, if any."""
    if lam is not None:
        wr.put("lambda", torch.cat([t.detach() for t in lam]))
        wr.put("dlambda", torch.cat([t.grad for t in lam]))
        wr.put("gain", gain)
        wr.put("dgain", gain.grad)


def leaf(*shape, std=1.0):
    return (std * torch.randn(*shape, dtype=F64)).requires_grad_(True)


# name: kind, B, H, Tq, Tk, dk, dv, causal, mask, bias, scale, pattern
# pattern: None, ("window", w, dilation per head, global token list), ("block", b)
CASES2 = {
    "diff_causal": ("diff", 2, 2, 6, 6, 6, 6, 1, 1, 1, 0.0, None),
    "diff_cross": ("diff", 1, 3, 4, 7, 4, 4, 0, 1, 1, 0.6, None),
    "softmax_window": ("softmax", 2, 2, 9, 9, 3, 2, 1, 0, 1, 0.0, ("window", 2, [1, 2], [4])),
    "ea_dilated_global": ("ea", 1, 2, 8, 8, 2, 3, 0, 0, 0, 1.0, ("window", 1, [2, 1], [0, 5])),
    "cog_bigbird": ("cog", 2, 2, 8, 8, 3, 3, 0, 0, 1, 0.0, ("block", 2)),
    "hyla_window": ("hyla", 1, 3, 7, 7, 2, 3, 0, 0, 1, 0.0, ("window", 2, [1, 2, 3], [])),
}
for _k in MIXING:
    CASES2[_k + "_causal"] = (_k, 2, 3, 5, 5, 3, 4, 1, 1, 1, 0.0, None)
    CASES2[_k + "_cross"] = (_k, 1, 4, 4, 6, 2, 3, 0, 1, 1, 0.8, None)


def attention_case(out_dir, name, spec):
    kind, B, H, Tq, Tk, dk, dv, causal, has_mask, has_bias, scale, pattern = spec
    q, k, v = leaf(B, H, Tq, dk), leaf(B, H, Tk, dk), leaf(B, H, Tk, dv)
    mask = torch.ones(B, Tk, dtype=F64)
    if has_mask:  # drop some keys, never the last (with causal rows every row then sees a key)
        mask = (torch.rand(B, Tk) > 0.3).to(F64)
        mask[:, -1] = 1
        mask[:, 0] = 1
    bias = leaf(H, Tq, Tk, std=0.5) if has_bias else torch.zeros(H, Tq, Tk, dtype=F64)
    window, block, dil, glob, layout = 0, 0, None, None, None
    if pattern and pattern[0] == "window":
        window, dil = pattern[1], pattern[2]
        glob = [1 if t in pattern[3] else 0 for t in range(Tk)]
    elif pattern:  # a random block layout with the diagonal set, so no row is empty
        block = pattern[1]
        nq, nk = -(-Tq // block), -(-Tk // block)
        layout = (torch.rand(H, nq, nk) < 0.4).to(torch.int64)
        for h in range(H):
            for i in range(min(nq, nk)):
                layout[h, i, i] = 1
        layout = layout.tolist()
    vis = visible(B, H, Tq, Tk, mask, causal, window, dil, glob, block, layout)
    w2 = None
    lam, gain, lambda_init = diff_params(kind, dk, dv, 2)
    if kind == "hyla_plus":
        w2 = leaf(H, dv, dv, std=0.5)
    o, a = attention2(kind, q, k, v, vis, bias, scale, lam, gain, lambda_init, w2)
    do = torch.randn_like(o)
    o.backward(do)
    wr = Writer(os.path.join(out_dir, name + ".bin"))
    wr.put("cfg", [0, KIND_IDS[kind], B, H, Tq, Tk, dk, dv, causal, scale, window, block, lambda_init])
    for n, t in (("Q", q), ("K", k), ("V", v), ("dO", do), ("O", o), ("A", a), ("dQ", q.grad), ("dK", k.grad), ("dV", v.grad)):
        wr.put(n, t)
    put_mask_bias(wr, mask if has_mask else None, bias if has_bias else None)
    if window:
        wr.put("dilation", dil)
        wr.put("global", glob)
    if block:
        wr.put("layout", layout)
    put_diff_params(wr, lam, gain)
    if w2 is not None:
        wr.put("w2", w2)
        wr.put("dw2", w2.grad)
    wr.close()


def linformer_case(out_dir, name, kind, B, H, T, dk, dv, kproj, n_max, scale):
    """Linformer (Wang et al. 2020): K' = E[:, :T] K, V' = F[:, :T] V, then the kind over the kproj compressed keys."""
    q, k, v = leaf(B, H, T, dk), leaf(B, H, T, dk), leaf(B, H, T, dv)
    E, F = leaf(kproj, n_max, std=0.4), leaf(kproj, n_max, std=0.4)
    kc, vc = E[:, :T] @ k, F[:, :T] @ v
    vis = torch.ones(B, H, T, kproj, dtype=torch.bool)
    o, _ = attention2(kind, q, kc, vc, vis, torch.zeros(H, T, kproj, dtype=F64), scale)
    do = torch.randn_like(o)
    o.backward(do)
    wr = Writer(os.path.join(out_dir, name + ".bin"))
    wr.put("cfg", [1, KIND_IDS[kind], B, H, T, T, dk, dv, kproj, n_max, scale])
    for n, t in (("Q", q), ("K", k), ("V", v), ("E", E), ("F", F), ("dO", do), ("O", o), ("dQ", q.grad), ("dK", k.grad),
                 ("dV", v.grad), ("dE", E.grad), ("dF", F.grad)):
        wr.put(n, t)
    wr.close()


def rope(x, sub):
    """RoPE (Su et al. 2021): pairs (x_2i, x_2i+1) of each sub-head of width sub rotated by t theta^(-2i/sub)."""
    B, H, T, dk = x.shape
    y = x.reshape(B, H, T, dk // sub, sub // 2, 2)
    t = torch.arange(T, dtype=F64)[:, None]
    ang = t * 10000.0 ** (-2.0 * torch.arange(sub // 2, dtype=F64)[None, :] / sub)
    c, s = torch.cos(ang)[None, None, :, None, :], torch.sin(ang)[None, None, :, None, :]
    x0, x1 = y[..., 0], y[..., 1]
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), -1).reshape(B, H, T, dk)


# name: kind, B, H, T, dk, dv, kproj, n_max, scale
LINFORMERS = {
    "linformer_softmax": ("softmax", 2, 2, 7, 4, 3, 3, 9, 0.0),
    "linformer_ea": ("ea", 1, 3, 6, 3, 2, 4, 6, 1.0),
}


# name: kind, B, Tq, Tk, C, Cout, H, dk, dv, causal, rope, scale, cross
LAYERS = {
    "layer_softmax_rope": ("softmax", 2, 5, 5, 6, 5, 2, 4, 3, 1, 1, 0.0, 0),
    "layer_diff_rope": ("diff", 2, 5, 5, 6, 4, 2, 8, 8, 1, 1, 0.0, 0),
    "layer_hyla_cross": ("hyla", 2, 4, 6, 5, 3, 3, 2, 4, 0, 0, 0.0, 1),
}


def layer_case(out_dir, name, spec):
    """y = concat_h attention(q_h, k_h, v_h) Wo^T + bo, q = x Wq^T + bq, k, v from m (= x unless cross)."""
    kind, B, Tq, Tk, C, Cout, H, dk, dv, causal, use_rope, scale, cross = spec
    x = leaf(B, Tq, C)
    m = leaf(B, Tk, C) if cross else x
    W = {n: leaf(*shape, std=0.5) for n, shape in (("Wq", (H * dk, C)), ("bq", (H * dk,)), ("Wk", (H * dk, C)), ("bk", (H * dk,)),
                                                  ("Wv", (H * dv, C)), ("bv", (H * dv,)), ("Wo", (Cout, H * dv)), ("bo", (Cout,)))}
    bias = leaf(H, Tq, Tk, std=0.5)
    split = lambda t, w: t.reshape(B, -1, H, w).transpose(1, 2)
    q, k, v = split(x @ W["Wq"].T + W["bq"], dk), split(m @ W["Wk"].T + W["bk"], dk), split(m @ W["Wv"].T + W["bv"], dv)
    if use_rope:
        sub = dk // 2 if kind == "diff" else dk
        q, k = rope(q, sub), rope(k, sub)
    lam, gain, lambda_init = diff_params(kind, dk, dv, 1)
    vis = visible(B, H, Tq, Tk, torch.ones(B, Tk), causal)
    o, _ = attention2(kind, q, k, v, vis, bias, scale, lam, gain, lambda_init)
    y = o.transpose(1, 2).reshape(B, Tq, H * dv) @ W["Wo"].T + W["bo"]
    dy = torch.randn_like(y)
    y.backward(dy)
    wr = Writer(os.path.join(out_dir, name + ".bin"))
    wr.put("cfg", [2, KIND_IDS[kind], B, Tq, Tk, C, Cout, H, dk, dv, causal, use_rope, scale, lambda_init, cross])
    wr.put("x", x)
    wr.put("dx", x.grad)
    if cross:
        wr.put("m", m)
        wr.put("dm", m.grad)
    for n, t in W.items():
        wr.put(n, t)
        wr.put("d" + n, t.grad)
    wr.put("bias", bias)
    wr.put("dbias", bias.grad)
    wr.put("dy", dy)
    wr.put("y", y)
    put_diff_params(wr, lam, gain)
    wr.close()


def scored_case(out_dir, name, kname, spec):
    """One call of a scored or linear-time kind with every gradient; no weights."""
    B, H, Tq, Tk, dk, dv, causal, has_mask, has_bias, scale = spec
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
    wr = Writer(os.path.join(out_dir, name + ".bin"))
    wr.put("cfg", [0, KIND_IDS[kname], B, H, Tq, Tk, dk, dv, causal, scale, 0, 0, 0])
    for n, t in (("Q", q), ("K", k), ("V", v), ("dO", do), ("O", o), ("dQ", q.grad), ("dK", k.grad), ("dV", v.grad)):
        wr.put(n, t)
    put_mask_bias(wr, mask if has_mask else None, bias if has_bias else None)
    wr.close()


def main():
    torch.manual_seed(1234)
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
    os.makedirs(out_dir, exist_ok=True)
    names = []
    for kname in ("softmax", "ea", "cog", "centered", "sigmoid", "linear_raw", "kernel", "taylor"):
        for cname, spec in CASES.items():
            names.append(f"{kname}_{cname}")
            scored_case(out_dir, names[-1], kname, spec)
    return names


def main2(names):
    out_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
    torch.manual_seed(4321)
    for name, spec in CASES2.items():
        attention_case(out_dir, name, spec)
        names.append(name)
    for name, args in LINFORMERS.items():
        linformer_case(out_dir, name, *args)
        names.append(name)
    for name, spec in LAYERS.items():
        layer_case(out_dir, name, spec)
        names.append(name)
    for kname in ("softmax", "ea", "cog", "centered", "sigmoid", "linear_raw"):
        for cname, spec in LONG.items():
            names.append(f"{kname}_{cname}")
            scored_case(out_dir, names[-1], kname, spec)
    with open(os.path.join(out_dir, "index.txt"), "w") as f:
        f.write("".join(n + "\n" for n in names))
    print("%d files and index.txt in %s" % (len(names), out_dir))


if __name__ == "__main__":
    main2(main())
