#!/usr/bin/env python3
"""The Python package (python/attn) against PyTorch: make test-python runs it after `make python`.

    python3 tests/python_check.py [--quick]

Every attention kind through attn.torch.attention: its output and gradients in float32 against
PyTorch autograd in float64 on the papers' definitions (tests/golden_attention.py, independent of
attn.h), and torch.autograd.gradcheck through the float64 build (finite differences of attn.h's own
forward against its backward); options (key masks, bias, grouped-query heads, differential and HYLA+
parameters, the score modifiers with their learned weights); the same bits for 1 and 2 threads; the
GIL released during a call; errors as exceptions; the numpy functions without torch; transformers
(GPT-2 and Llama shapes written by PyTorch as safetensors): logits and greedy continuations against
PyTorch implementations of the two models, and an attn.h checkpoint's export read back. Without torch
or numpy the parts that need them are skipped with a message. Ends with "N passed, M failed"."""
import json
import math
import os
import struct
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
import attn  # noqa: E402

QUICK = "--quick" in sys.argv
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name} {detail}")


def rel_err(a, b):
    """max |a - b| / max(|b|, 1e-3) over all entries."""
    d = (a.double() - b.double()).abs().max().item()
    return d / max(b.double().abs().max().item(), 1e-3)


try:
    import numpy as np
except ImportError:
    np = None
try:
    import torch
    import attn.torch as at
    import golden_attention as G
except ImportError:
    torch = None

MIXING = ("linear_rmshead", "hyla", "hyla_no_rmshead", "hyla_linear", "hyla_linear_no_rmshead", "softmax_hyla",
          "linear_rmshead_relu_v", "hyla_plus")
LINEAR_TIME = ("kernel", "taylor")


def reference(kind, q, k, v, mask, bias, causal, scale, lam, gain, lambda_init, w2):
    """O by the papers' definitions in float64 (tests/golden_attention.py)."""
    B, H, Tq, _ = q.shape
    Tk = k.shape[2]
    if kind in ("softmax", "ea", "cog", "diff") or kind in MIXING:
        vis = G.visible(B, H, Tq, Tk, mask, causal)
        return G.attention2(kind, q, k, v, vis, bias, scale, lam, gain, lambda_init, w2)[0]
    return G.attention(kind, q, k, v, mask, bias, causal, scale)


def kind_case(kind, B=2, H=3, Tq=5, Tk=7, dk=4, dv=4, causal=True, seed=0):
    """float64 leaves and options of one call of `kind` (mask and bias where the kind takes them)."""
    g = torch.Generator().manual_seed(seed)
    r = lambda *s, sd=1.0: (sd * torch.randn(*s, generator=g, dtype=torch.float64)).requires_grad_()
    q, k, v = r(B, H, Tq, dk), r(B, H, Tk, dk), r(B, H, Tk, dv)
    mask = (torch.rand(B, Tk, generator=g) > 0.3).to(torch.float64)
    mask[:, -1] = 1
    x = {"q": q, "k": k, "v": v, "mask": mask, "bias": None, "lam": None, "gain": None, "w2": None,
         "lambda_init": 0.0}
    if kind not in LINEAR_TIME:
        x["bias"] = r(H, Tq, Tk, sd=0.5)
    if kind == "diff":
        x["lam"] = [r(dk // 2, sd=0.4) for _ in range(4)]
        x["gain"] = (1 + 0.3 * torch.randn(dv, generator=g, dtype=torch.float64)).requires_grad_()
        x["lambda_init"] = 0.8 - 0.6 * math.exp(-0.6)
    if kind == "hyla_plus":
        x["w2"] = r(H, dv, dv, sd=0.5)
    return x


def ours(kind, x, dtype, causal=True, scale=0.7):
    c = lambda t: None if t is None else t.detach().to(dtype).requires_grad_()
    q, k, v, bias, gain, w2 = (c(x[n]) for n in ("q", "k", "v", "bias", "gain", "w2"))
    lam = None if x["lam"] is None else torch.stack([t.detach() for t in x["lam"]]).to(dtype).requires_grad_()
    o = at.attention(q, k, v, kind, causal=causal, scale=scale, key_mask=x["mask"], bias=bias, lambda_=lam,
                     gain=gain, w2=w2, lambda_init=x["lambda_init"])
    return o, {"q": q, "k": k, "v": v, "bias": bias, "lam": lam, "gain": gain, "w2": w2}


def test_kinds_against_torch():
    """Each kind in float32 against PyTorch autograd in float64: O and every gradient."""
    for kind in attn.kinds():
        x = kind_case(kind)
        scale = 0.7 if kind not in LINEAR_TIME else 1.0
        ref = reference(kind, x["q"], x["k"], x["v"], x["mask"],
                        x["bias"] if x["bias"] is not None else 0.0, True, scale, x["lam"], x["gain"],
                        x["lambda_init"], x["w2"])
        do = torch.randn(ref.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
        ref.backward(do)
        o, ins = ours(kind, x, torch.float32, scale=scale)
        o.backward(do.float())
        check(f"{kind}: O float32 vs torch float64", rel_err(o, ref) < 1e-5, f"rel {rel_err(o, ref):.2e}")
        for n in ("q", "k", "v", "bias", "gain", "w2"):
            if ins[n] is not None:
                e = rel_err(ins[n].grad, x[n].grad)
                check(f"{kind}: d{n} float32 vs torch float64", e < 2e-5, f"rel {e:.2e}")
        if ins["lam"] is not None:
            e = rel_err(ins["lam"].grad, torch.stack([t.grad for t in x["lam"]]))
            check(f"{kind}: dlambda float32 vs torch float64", e < 2e-5, f"rel {e:.2e}")


def gradcheck(name, f, args):
    """torch.autograd.gradcheck of f at args (float64), a failure's report printed."""
    try:
        ok = torch.autograd.gradcheck(f, args, eps=1e-6, atol=1e-6, rtol=1e-4)
    except RuntimeError as e:
        ok = False
        print(str(e)[:600])
    check(name, ok)


def test_gradcheck():
    """torch.autograd.gradcheck through the float64 build for every kind, with its parameters."""
    for kind in attn.kinds():
        x = kind_case(kind, B=1, H=2, Tq=3, Tk=4, dk=4, dv=4, seed=3)
        args = [x["q"], x["k"], x["v"]]
        names = ["q", "k", "v"]
        for n in ("bias", "gain", "w2"):
            if x[n] is not None:
                args.append(x[n])
                names.append(n)
        if x["lam"] is not None:
            args.append(torch.stack([t.detach() for t in x["lam"]]).requires_grad_())
            names.append("lambda_")
        mask, li = x["mask"], x["lambda_init"]

        def f(*a):
            kw = dict(zip(names, a))
            q, k, v = kw.pop("q"), kw.pop("k"), kw.pop("v")
            return at.attention(q, k, v, kind, causal=True, scale=0.7, key_mask=mask, lambda_init=li, **kw)
        gradcheck(f"{kind}: gradcheck (float64)", f, args)


def alibi_bias(H, Tq, Tk):
    n = 2 ** math.floor(math.log2(H))
    slopes = [2 ** (-8 * (h + 1) / n) for h in range(n)]
    slopes += [2 ** (-4 * (2 * h + 1) / n) for h in range(H - n)]
    p = torch.arange(Tq)[:, None] + Tk - Tq
    j = torch.arange(Tk)[None, :]
    return torch.stack([-s * (p - j).to(torch.float64) for s in slopes])


def test_modifiers():
    """ALiBi equals its bias; the learned modifiers' weights pass gradcheck; a wrong weight count is refused."""
    g = torch.Generator().manual_seed(4)
    B, H, T, d = 1, 4, 6, 3
    q, k, v = (torch.randn(B, H, T, d, generator=g, dtype=torch.float64) for _ in range(3))
    o1 = at.attention(q, k, v, causal=True, mod=attn.Mod("alibi", heads=H))
    o2 = at.attention(q, k, v, causal=True, bias=alibi_bias(H, T, T))
    check("alibi: equals its bias [H, T, T]", rel_err(o1, o2) < 1e-12, f"rel {rel_err(o1, o2):.2e}")
    for mod, n in ((attn.Mod("relbias", heads=H, buckets=8, max_distance=16), H * 8),
                   (attn.Mod("temperature", heads=H), H), (attn.Mod("softcap", heads=H, cap=2.0), 0)):
        w = (1 + 0.3 * torch.randn(n, generator=g, dtype=torch.float64)).requires_grad_() if n else None
        qq, kk, vv = (t.clone().requires_grad_() for t in (q, k, v))
        args = (qq, kk, vv) + ((w,) if n else ())
        f = lambda qq, kk, vv, *w: at.attention(qq, kk, vv, causal=True, mod=mod, mod_weight=w[0] if w else None)
        gradcheck(f"{mod.kind}: gradcheck with its weights", f, args)
    o1 = at.attention(q, k, v, causal=True, mod=attn.Mod("none", heads=H, mask="window", span=2))
    o2 = at.attention(q, k, v, causal=True, window=2)
    check("a window mask equals the window", rel_err(o1, o2) < 1e-12, f"rel {rel_err(o1, o2):.2e}")
    mod = attn.Mod("softcap", heads=H, cap=2.0, mask="prefix", span=3)
    gradcheck("softcap with a prefix mask: gradcheck", lambda qq, kk, vv: at.attention(qq, kk, vv, mod=mod),
              tuple(t.clone().requires_grad_() for t in (q, k, v)))
    try:
        at.attention(q, k, v, mod=attn.Mod("relbias", heads=H, buckets=8, max_distance=16),
                     mod_weight=torch.zeros(5, dtype=torch.float64))
        check("relbias: a wrong weight count refused", False)
    except attn.ArgumentError as e:
        check("relbias: a wrong weight count refused", "mod_weight" in str(e), str(e))


def test_grouped_query():
    """kv_heads from k's shape: equal to the heads repeated, the key gradient summed over the group."""
    g = torch.Generator().manual_seed(5)
    q = torch.randn(2, 4, 5, 3, generator=g, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, 2, 5, 3, generator=g, dtype=torch.float64, requires_grad=True)
    v = torch.randn(2, 2, 5, 2, generator=g, dtype=torch.float64, requires_grad=True)
    o = at.attention(q, k, v, causal=True)
    k2 = k.detach().repeat_interleave(2, dim=1).requires_grad_()
    v2 = v.detach().repeat_interleave(2, dim=1).requires_grad_()
    o2 = at.attention(q.detach(), k2, v2, causal=True)
    check("grouped-query: O equals repeated heads", rel_err(o, o2) < 1e-12)
    o.sum().backward()
    o2.sum().backward()
    dk = k2.grad.view(2, 2, 2, 5, 3).sum(2)
    check("grouped-query: dK summed over the group", rel_err(k.grad, dk) < 1e-12)


def test_threads_bits():
    """The same bits for 1 and 2 threads, forward and backward (softmax, T 256)."""
    g = torch.Generator().manual_seed(6)
    q, k, v = (torch.randn(1, 4, 256, 32, generator=g).requires_grad_() for _ in range(3))
    res = []
    for n in (1, 2):
        attn.set_threads(n)
        o = at.attention(q, k, v, causal=True)
        dq, dk, dv = torch.autograd.grad(o, (q, k, v), torch.ones_like(o))
        res.append((o, dq, dk, dv))
    attn.set_threads(0)
    check("1 and 2 threads: the same bits", all(torch.equal(a, b) for a, b in zip(*res)))


def test_gil_released():
    """A Python thread keeps running while one long attention call (about 0.2 s) runs in another:
    ctypes releases the GIL (held, the counter would stop for the whole call)."""
    q = torch.randn(1, 8, 4096, 64)
    attn.set_threads(1)
    done, count = threading.Event(), 0

    def work():
        at.attention(q, q, q, causal=True)
        done.set()
    t = threading.Thread(target=work)
    t0 = time.perf_counter()
    t.start()
    while not done.is_set():
        count += 1
    t.join()
    busy = time.perf_counter() - t0
    t0, base = time.perf_counter(), 0
    while time.perf_counter() - t0 < 0.1:
        base += 1
    rate, rate_base = count / busy, base / 0.1
    attn.set_threads(0)
    check("the GIL released during calls", rate > 0.5 * rate_base,
          f"counter {rate:.0f}/s during a {busy * 1e3:.0f} ms call, {rate_base:.0f}/s alone")


def test_errors():
    q = torch.randn(1, 2, 4, 3)
    for name, f, want in (
            ("unknown kind", lambda: at.attention(q, q, q, "nope"), attn.ArgumentError),
            ("q of three dimensions", lambda: at.attention(q[0], q, q), attn.ArgumentError),
            ("k of another width", lambda: at.attention(q, q[..., :2], q), attn.ArgumentError),
            ("bias of another shape", lambda: at.attention(q, q, q, bias=torch.zeros(2, 4, 3)), attn.ArgumentError),
            ("hyla_plus without w2", lambda: at.attention(q, q, q, "hyla_plus"), attn.ArgumentError),
            ("kernel with a bias", lambda: at.attention(q, q, q, "kernel", bias=torch.zeros(2, 4, 4)), attn.Error),
            ("three heads over two key heads", lambda: at.attention(torch.randn(1, 3, 4, 3), q, q), attn.Error),
            ("an unknown keyword", lambda: at.attention(q, q, q, windw=2), TypeError)):
        try:
            f()
            check(f"error: {name}", False, "no exception")
        except want as e:
            check(f"error: {name}", len(str(e)) > 0)


def test_numpy():
    """The numpy functions: the same output and gradients as the torch function."""
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal((2, 2, 6, 4)).astype(np.float32) for _ in range(3))
    O, stats = attn.attention_forward(q, k, v, "ea", causal=True)
    dO = rng.standard_normal(O.shape).astype(np.float32)
    g = attn.attention_backward(dO, q, k, v, O, stats, "ea", causal=True)
    check("numpy: attention equals attention_forward", np.array_equal(attn.attention(q, k, v, "ea", causal=True), O))
    if torch is not None:
        tq, tk, tv = (torch.from_numpy(x).requires_grad_() for x in (q, k, v))
        o = at.attention(tq, tk, tv, "ea", causal=True)
        o.backward(torch.from_numpy(dO))
        check("numpy: O equals torch's", np.array_equal(o.detach().numpy(), O))
        check("numpy: gradients equal torch's", all(np.array_equal(g[n], t.grad.numpy())
                                                   for n, t in (("q", tq), ("k", tk), ("v", tv))))
    W = attn.attention_forward(q, k, v, "softmax", causal=True, weights=True)[2]
    check("numpy: weights rows sum to 1", np.allclose(W.sum(-1), 1, atol=1e-5))


# ---- Transformers: GPT-2 and Llama in Hugging Face's layout, written by PyTorch -------------------

def st_write(path, tensors):
    """A safetensors file (8-byte header length, JSON header, the data) of float32 tensors."""
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        b = t.detach().to(torch.float32).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)


def st_read(path):
    """The float32 tensors of a safetensors file (attn.h writes F32)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header, data = json.loads(f.read(n)), f.read()
    out = {}
    for name, e in header.items():
        if name != "__metadata__":
            a, b = e["data_offsets"]
            out[name] = torch.from_numpy(np.frombuffer(data[a:b], dtype=np.float32).copy()).reshape(e["shape"])
    return out


def gpt2_weights(c, seed):
    g = torch.Generator().manual_seed(seed)
    d, V, P, F = c["n_embd"], c["vocab_size"], c["n_positions"], 4 * c["n_embd"]
    r = lambda *s, sd=0.02: sd * torch.randn(*s, generator=g)
    w = {"transformer.wte.weight": r(V, d, sd=0.1), "transformer.wpe.weight": r(P, d, sd=0.05),
         "transformer.ln_f.weight": 1 + r(d, sd=0.1), "transformer.ln_f.bias": r(d)}
    for l in range(c["n_layer"]):
        p = f"transformer.h.{l}."
        m = lambda *s: r(*s, sd=0.06)  # wider than GPT-2's 0.02, so greedy tokens do not just repeat
        w.update({p + "ln_1.weight": 1 + r(d, sd=0.1), p + "ln_1.bias": r(d), p + "attn.c_attn.weight": m(d, 3 * d),
                  p + "attn.c_attn.bias": r(3 * d), p + "attn.c_proj.weight": m(d, d), p + "attn.c_proj.bias": r(d),
                  p + "ln_2.weight": 1 + r(d, sd=0.1), p + "ln_2.bias": r(d), p + "mlp.c_fc.weight": m(d, F),
                  p + "mlp.c_fc.bias": r(F), p + "mlp.c_proj.weight": m(F, d), p + "mlp.c_proj.bias": r(d)})
    return w


def gpt2_forward(w, c, tokens):
    """transformers' GPT2LMHeadModel in float64 torch ops: Conv1D weights [in, out], the fused c_attn,
    gelu_new, the head tied to wte. w: tensors by name (with or without the "transformer." prefix)."""
    W = {k[len("transformer."):] if k.startswith("transformer.") else k: v.double() for k, v in w.items()}
    T, d, H = len(tokens), c["n_embd"], c["n_head"]
    ln = lambda x, n: torch.nn.functional.layer_norm(x, (d,), W[n + ".weight"], W[n + ".bias"], c["layer_norm_epsilon"])
    x = W["wte.weight"][tokens] + W["wpe.weight"][:T]
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    for l in range(c["n_layer"]):
        p = f"h.{l}."
        q, k, v = (ln(x, p + "ln_1") @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"]).split(d, -1)
        q, k, v = (t.view(T, H, d // H).transpose(0, 1) for t in (q, k, v))
        a = torch.softmax((q @ k.transpose(-1, -2) / math.sqrt(d // H)).masked_fill(~causal, float("-inf")), -1)
        x = x + (a @ v).transpose(0, 1).reshape(T, d) @ W[p + "attn.c_proj.weight"] + W[p + "attn.c_proj.bias"]
        h = torch.nn.functional.gelu(ln(x, p + "ln_2") @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"],
                                     approximate="tanh")
        x = x + h @ W[p + "mlp.c_proj.weight"] + W[p + "mlp.c_proj.bias"]
    return ln(x, "ln_f") @ W["wte.weight"].T


def llama_weights(c, seed):
    g = torch.Generator().manual_seed(seed)
    d, V, F = c["hidden_size"], c["vocab_size"], c["intermediate_size"]
    H, KH = c["num_attention_heads"], c["num_key_value_heads"]
    hd = d // H
    r = lambda *s, sd=0.05: sd * torch.randn(*s, generator=g)
    w = {"model.embed_tokens.weight": r(V, d, sd=0.5), "model.norm.weight": 1 + r(d), "lm_head.weight": r(V, d, sd=0.2)}
    for l in range(c["num_hidden_layers"]):
        p = f"model.layers.{l}."
        w.update({p + "input_layernorm.weight": 1 + r(d), p + "self_attn.q_proj.weight": r(H * hd, d, sd=0.2),
                  p + "self_attn.k_proj.weight": r(KH * hd, d, sd=0.2), p + "self_attn.v_proj.weight": r(KH * hd, d),
                  p + "self_attn.o_proj.weight": r(d, H * hd), p + "post_attention_layernorm.weight": 1 + r(d),
                  p + "mlp.gate_proj.weight": r(F, d), p + "mlp.up_proj.weight": r(F, d),
                  p + "mlp.down_proj.weight": r(d, F)})
    return w


def llama_forward(w, c, tokens):
    """transformers' LlamaForCausalLM in float64 torch ops: RMSNorm, RoPE by rotate_half, key and
    value heads repeated over their query heads, down(silu(gate x) * up x), an untied head."""
    W = {k: v.double() for k, v in w.items()}
    d, H, KH = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
    hd, T = d // H, len(tokens)
    rms = lambda x, n: x * torch.rsqrt((x * x).mean(-1, keepdim=True) + c["rms_norm_eps"]) * W[n]
    inv = c["rope_theta"] ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * inv[None]
    cos, sin = torch.cat([ang.cos()] * 2, -1)[:, None], torch.cat([ang.sin()] * 2, -1)[:, None]
    rope = lambda x: x * cos + torch.cat([-x[..., hd // 2:], x[..., :hd // 2]], -1) * sin
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    x = W["model.embed_tokens.weight"][tokens]
    for l in range(c["num_hidden_layers"]):
        p = f"model.layers.{l}."
        h = rms(x, p + "input_layernorm.weight")
        q = rope((h @ W[p + "self_attn.q_proj.weight"].T).view(T, H, hd)).transpose(0, 1)
        k = rope((h @ W[p + "self_attn.k_proj.weight"].T).view(T, KH, hd)).transpose(0, 1)
        v = (h @ W[p + "self_attn.v_proj.weight"].T).view(T, KH, hd).transpose(0, 1)
        k, v = k.repeat_interleave(H // KH, 0), v.repeat_interleave(H // KH, 0)
        a = torch.softmax((q @ k.transpose(-1, -2) / math.sqrt(hd)).masked_fill(~causal, float("-inf")), -1)
        x = x + (a @ v).transpose(0, 1).reshape(T, d) @ W[p + "self_attn.o_proj.weight"].T
        h = rms(x, p + "post_attention_layernorm.weight")
        x = x + (torch.nn.functional.silu(h @ W[p + "mlp.gate_proj.weight"].T) * (h @ W[p + "mlp.up_proj.weight"].T)) \
            @ W[p + "mlp.down_proj.weight"].T
    return rms(x, "model.norm.weight") @ W["lm_head.weight"].T


GPT2_SMALL = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 50257, "n_embd": 768,
              "n_layer": 12, "n_head": 12, "n_positions": 1024, "n_ctx": 1024, "n_inner": None,
              "layer_norm_epsilon": 1e-05, "activation_function": "gelu_new"}
LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 317, "hidden_size": 96,
         "intermediate_size": 160, "num_hidden_layers": 3, "num_attention_heads": 6, "num_key_value_heads": 2,
         "max_position_embeddings": 128, "rms_norm_eps": 1e-06, "rope_theta": 500.0, "hidden_act": "silu",
         "tie_word_embeddings": False, "attention_bias": False, "rope_scaling": None, "torch_dtype": "float32"}


def greedy(forward, w, c, prompt, steps):
    toks = list(prompt)
    for _ in range(steps):
        toks.append(int(forward(w, c, toks)[-1].argmax()))
    return toks[len(prompt):]


def test_model(name, cfg, weights, forward, tmp):
    """attn.Transformer on a Hugging Face directory written by PyTorch: logits within 1e-5 of
    PyTorch's (relative to the largest), the same 32 greedy tokens; then its export (save hf=True)
    read back into the PyTorch model and its attn.h checkpoint reloaded: the same logits (and, with
    the weights not packed, the same to rounding)."""
    d = os.path.join(tmp, name)
    os.makedirs(d)
    w = weights(cfg, 1)
    st_write(os.path.join(d, "model.safetensors"), w)
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    prompt = [int(t) for t in torch.randint(0, cfg["vocab_size"], (16,), generator=torch.Generator().manual_seed(2))]
    t0 = time.perf_counter()
    with attn.Transformer(d) as m:
        load_s = time.perf_counter() - t0
        y = m.forward(np.array(prompt))[0]
        want = forward(w, cfg, prompt)
        e = rel_err(torch.from_numpy(y), want)
        check(f"{name}: logits within 1e-5 of PyTorch's", e < 1e-5, f"rel {e:.2e}")
        ours = m.generate(prompt, 32)
        theirs = greedy(forward, w, cfg, prompt, 32)
        check(f"{name}: the same 32 greedy tokens", ours == theirs, f"{ours} vs {theirs}")
        print(f"{name}: {sum(t.numel() for t in w.values()) / 1e6:.1f} M parameters, loaded in {load_s:.2f} s, "
              f"logits rel {e:.1e}, greedy {ours[:8]}...")
        out = os.path.join(tmp, name + "-export")
        m.save(out, hf=True)
        back = st_read(os.path.join(out, "model.safetensors"))
        e2 = rel_err(forward(back, json.load(open(os.path.join(out, "config.json"))), prompt), want)
        check(f"{name}: its export read back by PyTorch, the same logits", e2 < 1e-12, f"rel {e2:.2e}")
        m.save(os.path.join(tmp, name + ".ckpt"))
    with attn.Transformer(os.path.join(tmp, name + ".ckpt")) as m2:
        same = np.array_equal(m2.forward(np.array(prompt))[0], y)
        check(f"{name}: its attn.h checkpoint reloaded, the same bits", same)
        try:
            m2.forward(np.array([cfg["vocab_size"]]))
            check(f"{name}: a token outside the vocabulary refused", False)
        except attn.ArgumentError:
            check(f"{name}: a token outside the vocabulary refused", True)
    with attn.Transformer(os.path.join(tmp, name + ".ckpt"), pack=False) as m3:
        e3 = rel_err(torch.from_numpy(m3.forward(np.array(prompt))[0]), torch.from_numpy(y))
        check(f"{name}: the weights read in place (pack=False), the packed logits to rounding", e3 < 1e-5,
              f"rel {e3:.2e}")


def test_docs_example(model_dir):
    """docs/python.md's 20-line example runs (its model: model_dir, its token ids small ones)."""
    text = open(os.path.join(HERE, "..", "docs", "python.md")).read()
    code = text.split("## In 20 lines", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    code = code.replace('"gpt2-dir"', repr(model_dir)).replace("[464, 3290, 318]", "[4, 29, 31]")
    try:
        exec(compile(code, "docs/python.md", "exec"), {})
        check("docs/python.md's example runs", len(code.splitlines()) <= 20)
    except Exception as e:  # any failure of the example is the check's
        check("docs/python.md's example runs", False, repr(e))


def test_plain():
    """What needs neither numpy nor torch: the kinds, the kernels, errors, generation's list API."""
    check("17 kinds listed", attn.kinds()[:3] == ["softmax", "ea", "cog"] and len(attn.kinds()) == 17)
    for name, f, want in (("an unknown ISA", lambda: attn.set_simd("avx1024"), attn.ArgumentError),
                          ("an unknown modifier", lambda: attn.Mod("nope"), attn.ArgumentError),
                          ("a relbias of one bucket", lambda: attn.Mod("relbias", heads=2, buckets=1),
                           attn.ArgumentError),
                          ("an unknown mask", lambda: attn.Mod("none", mask="causal"), attn.ArgumentError),
                          ("a span of -1", lambda: attn.Mod("none", mask="window", span=-1), attn.ArgumentError),
                          ("a missing model", lambda: attn.Transformer("/nonexistent/model.ckpt"), attn.FileError)):
        try:
            f()
            check(f"error: {name}", False, "no exception")
        except want as e:
            check(f"error: {name}", len(str(e)) > 0, str(e))


def main():
    print(f"attn {attn.version()} ({attn.simd()} kernels)")
    test_plain()
    if np is None:
        print("skip: numpy not installed (the numpy functions and the models)")
    else:
        test_numpy()
    if torch is None:
        print("skip: torch not installed (the checks against PyTorch): apt-get install python3-torch")
    else:
        test_kinds_against_torch()
        test_gradcheck()
        test_modifiers()
        test_grouped_query()
        test_threads_bits()
        test_gil_released()
        test_errors()
        with tempfile.TemporaryDirectory() as tmp:
            test_model("llama", LLAMA, llama_weights, llama_forward, tmp)
            gpt2 = dict(GPT2_SMALL, vocab_size=1000) if QUICK else GPT2_SMALL
            test_model("gpt2-small", gpt2, gpt2_weights, gpt2_forward, tmp)
            test_docs_example(os.path.join(tmp, "gpt2-small"))
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
