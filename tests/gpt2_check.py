"""GPT-2 in Hugging Face's layout against an independent numpy implementation of the model.

    python3 tests/gpt2_check.py fixture DIR     writes a tiny random GPT-2 (config.json, model.safetensors
                                                with the "transformer." prefix and the attn.bias buffer
                                                of older exports) and logits.txt, its logits for
                                                tests/data/gpt2_tiny's token sequence
    python3 tests/gpt2_check.py check HF_TOOL   the fixture again in a temporary directory; attn.h's
                                                logits (HF_TOOL forward) against numpy's, and attn.h's
                                                export (HF_TOOL export) read back by Hugging Face's
                                                safetensors library: every tensor exact

The numpy model follows transformers' GPT2LMHeadModel: Conv1D weights [in, out], the fused c_attn,
LayerNorm eps 1e-5, gelu_new, the head tied to wte. Needs numpy and safetensors (no torch)."""
import json
import os
import subprocess
import sys
import tempfile

import hf_fixture
import numpy as np
from safetensors.numpy import load_file

CFG = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 61, "n_embd": 24, "n_layer": 2,
       "n_head": 3, "n_positions": 20, "n_ctx": 20, "n_inner": None, "layer_norm_epsilon": 1e-05,
       "activation_function": "gelu_new", "resid_pdrop": 0.1, "task_specific_params": {"text-generation": {"do_sample": True}}}
TOKENS = [3, 17, 60, 0, 42, 42, 7, 33, 12, 5, 58]


def weights(seed=11):
    r = np.random.default_rng(seed)
    d, V, P, L = CFG["n_embd"], CFG["vocab_size"], CFG["n_positions"], CFG["n_layer"]
    f = lambda *s: (0.3 * r.standard_normal(s)).astype(np.float32)
    w = {"transformer.wte.weight": f(V, d), "transformer.wpe.weight": f(P, d),
         "transformer.ln_f.weight": 1 + f(d), "transformer.ln_f.bias": f(d)}
    for l in range(L):
        p = "transformer.h.%d." % l
        w.update({p + "ln_1.weight": 1 + f(d), p + "ln_1.bias": f(d), p + "attn.c_attn.weight": f(d, 3 * d),
                  p + "attn.c_attn.bias": f(3 * d), p + "attn.c_proj.weight": f(d, d), p + "attn.c_proj.bias": f(d),
                  p + "ln_2.weight": 1 + f(d), p + "ln_2.bias": f(d), p + "mlp.c_fc.weight": f(d, 4 * d),
                  p + "mlp.c_fc.bias": f(4 * d), p + "mlp.c_proj.weight": f(4 * d, d), p + "mlp.c_proj.bias": f(d),
                  p + "attn.bias": np.tril(np.ones((P, P), dtype=np.uint8)).reshape(1, 1, P, P)})
    return w


def forward(w, tokens):
    def ln(x, g, b):
        x = x.astype(np.float64)
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + CFG["layer_norm_epsilon"]) * g + b

    def gelu_new(x):
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))

    T, d, H = len(tokens), CFG["n_embd"], CFG["n_head"]
    dh = d // H
    g = lambda k: w["transformer." + k].astype(np.float64)
    x = g("wte.weight")[tokens] + g("wpe.weight")[:T]
    for l in range(CFG["n_layer"]):
        p = "h.%d." % l
        qkv = ln(x, g(p + "ln_1.weight"), g(p + "ln_1.bias")) @ g(p + "attn.c_attn.weight") + g(p + "attn.c_attn.bias")
        q, k, v = (qkv[:, i * d:(i + 1) * d].reshape(T, H, dh).transpose(1, 0, 2) for i in range(3))
        s = q @ k.transpose(0, 2, 1) / np.sqrt(dh) + np.triu(np.full((T, T), -np.inf), 1)
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        o = (a @ v).transpose(1, 0, 2).reshape(T, d)
        x = x + o @ g(p + "attn.c_proj.weight") + g(p + "attn.c_proj.bias")
        h = gelu_new(ln(x, g(p + "ln_2.weight"), g(p + "ln_2.bias")) @ g(p + "mlp.c_fc.weight") + g(p + "mlp.c_fc.bias"))
        x = x + h @ g(p + "mlp.c_proj.weight") + g(p + "mlp.c_proj.bias")
    return ln(x, g("ln_f.weight"), g("ln_f.bias")) @ g("wte.weight").T


def write_fixture(d):
    return hf_fixture.write(d, CFG, weights(), TOKENS, forward)


def main():
    if sys.argv[1] == "fixture":
        write_fixture(sys.argv[2])
        print("wrote", sys.argv[2])
        return 0
    tool, bad = sys.argv[2], 0
    with tempfile.TemporaryDirectory() as d:
        w = write_fixture(os.path.join(d, "in"))
        want = forward(w, TOKENS)
        out = subprocess.run([tool, "forward", os.path.join(d, "in")] + [str(t) for t in TOKENS], check=True,
                             capture_output=True, text=True).stdout.split()
        got = np.array([float(v) for v in out]).reshape(want.shape)
        err = np.abs(got - want).max() / max(1.0, np.abs(want).max())
        if not err < 1e-5:
            print("attn.h's logits differ from numpy's: worst relative error %.3g" % err)
            bad += 1
        os.makedirs(os.path.join(d, "out"))
        subprocess.run([tool, "export", os.path.join(d, "in"), os.path.join(d, "out")], check=True)
        back, cfg = load_file(os.path.join(d, "out", "model.safetensors")), json.load(open(os.path.join(d, "out", "config.json")))
        for k, v in w.items():
            name = k[len("transformer."):]
            if name.endswith("attn.bias") and v.ndim == 4:
                continue  # the mask buffer is not a parameter
            if name not in back or not np.array_equal(back[name], v):
                print("export: %s differs or is missing" % name)
                bad += 1
        for k in ("vocab_size", "n_embd", "n_layer", "n_head", "n_positions", "activation_function"):
            if cfg.get(k) != CFG[k]:
                print("export: config %s is %s, wanted %s" % (k, cfg.get(k), CFG[k]))
                bad += 1
    print("gpt2_check:", "ok (logits within %.1g of numpy's)" % err if bad == 0 else "%d mismatches" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
