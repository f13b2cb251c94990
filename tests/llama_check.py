"""Llama in Hugging Face's layout against an independent numpy implementation of the model.

    python3 tests/llama_check.py fixture DIR     writes a tiny random Llama (config.json with grouped-query
                                                 heads, rope_theta 500 and an untied head; model.safetensors
                                                 with the "model." prefix and the rotary_emb.inv_freq buffer
                                                 of older exports) and logits.txt, its logits for
                                                 TOKENS
    python3 tests/llama_check.py check HF_TOOL   the fixture again in a temporary directory: attn.h's logits
                                                 (HF_TOOL forward) against numpy's; then HF_TOOL export: the
                                                 same tensors, configuration and logits read back

The numpy model follows transformers' LlamaForCausalLM: RMSNorm (x / sqrt(mean x^2 + eps) g), RoPE on
the pairs (i, i + head_dim / 2) (rotate_half), key and value heads repeated over their query heads,
down(silu(gate x) * up x). Needs numpy and safetensors (no torch)."""
import json
import os
import subprocess
import sys
import tempfile

import hf_fixture
import numpy as np
from safetensors.numpy import load_file

CFG = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 53, "hidden_size": 24,
       "intermediate_size": 40, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
       "max_position_embeddings": 32, "rms_norm_eps": 1e-06, "rope_theta": 500.0, "hidden_act": "silu",
       "tie_word_embeddings": False, "attention_bias": False, "rope_scaling": None, "torch_dtype": "float32"}
TOKENS = [1, 17, 52, 0, 42, 42, 7, 33, 12, 5, 50, 3, 9]


def weights(seed=5):
    r = np.random.default_rng(seed)
    d, V, L, F = CFG["hidden_size"], CFG["vocab_size"], CFG["num_hidden_layers"], CFG["intermediate_size"]
    H, KH = CFG["num_attention_heads"], CFG["num_key_value_heads"]
    hd = d // H
    f = lambda *s: (0.3 * r.standard_normal(s)).astype(np.float32)
    w = {"model.embed_tokens.weight": f(V, d), "model.norm.weight": 1 + f(d), "lm_head.weight": f(V, d)}
    for l in range(L):
        p = "model.layers.%d." % l
        w.update({p + "input_layernorm.weight": 1 + f(d), p + "self_attn.q_proj.weight": f(H * hd, d),
                  p + "self_attn.k_proj.weight": f(KH * hd, d), p + "self_attn.v_proj.weight": f(KH * hd, d),
                  p + "self_attn.o_proj.weight": f(d, H * hd), p + "post_attention_layernorm.weight": 1 + f(d),
                  p + "mlp.gate_proj.weight": f(F, d), p + "mlp.up_proj.weight": f(F, d),
                  p + "mlp.down_proj.weight": f(d, F)})
    w["model.layers.0.self_attn.rotary_emb.inv_freq"] = np.zeros(hd // 2, dtype=np.float32)
    return w


def forward(w, tokens):
    g = lambda k: w[k].astype(np.float64)
    d, H, KH = CFG["hidden_size"], CFG["num_attention_heads"], CFG["num_key_value_heads"]
    hd, T = d // H, len(tokens)
    rms = lambda x, gain: x / np.sqrt((x * x).mean(-1, keepdims=True) + CFG["rms_norm_eps"]) * gain
    inv = CFG["rope_theta"] ** (-np.arange(0, hd, 2) / hd)
    ang = np.arange(T)[:, None] * inv[None, :]
    cos, sin = np.concatenate([np.cos(ang)] * 2, -1), np.concatenate([np.sin(ang)] * 2, -1)  # [T, hd]
    rope = lambda x: x * cos[:, None] + np.concatenate([-x[..., hd // 2:], x[..., :hd // 2]], -1) * sin[:, None]
    x = g("model.embed_tokens.weight")[tokens]
    for l in range(CFG["num_hidden_layers"]):
        p = "model.layers.%d." % l
        h = rms(x, g(p + "input_layernorm.weight"))
        q = rope((h @ g(p + "self_attn.q_proj.weight").T).reshape(T, H, hd))
        k = rope((h @ g(p + "self_attn.k_proj.weight").T).reshape(T, KH, hd))
        v = (h @ g(p + "self_attn.v_proj.weight").T).reshape(T, KH, hd)
        k, v = np.repeat(k, H // KH, axis=1), np.repeat(v, H // KH, axis=1)
        s = np.einsum("thd,shd->hts", q, k) / np.sqrt(hd) + np.triu(np.full((T, T), -np.inf), 1)
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        o = np.einsum("hts,shd->thd", a, v).reshape(T, H * hd)
        x = x + o @ g(p + "self_attn.o_proj.weight").T
        h = rms(x, g(p + "post_attention_layernorm.weight"))
        gate = h @ g(p + "mlp.gate_proj.weight").T
        x = x + (gate / (1 + np.exp(-gate)) * (h @ g(p + "mlp.up_proj.weight").T)) @ g(p + "mlp.down_proj.weight").T
    return rms(x, g("model.norm.weight")) @ g("lm_head.weight").T


def write_fixture(d):
    return hf_fixture.write(d, CFG, weights(), TOKENS, forward)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("fixture", "check"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2
    if sys.argv[1] == "fixture":
        write_fixture(sys.argv[2])
        print("wrote", sys.argv[2])
        return 0
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        w = write_fixture(os.path.join(d, "in"))
        want = forward(w, TOKENS)
        run = lambda *a: subprocess.run([sys.argv[2]] + list(a), check=True, capture_output=True, text=True).stdout
        got = np.array([float(v) for v in run("forward", os.path.join(d, "in"), *map(str, TOKENS)).split()])
        err = np.abs(got.reshape(want.shape) - want).max() / max(1.0, np.abs(want).max())
        if not err < 1e-5:
            print("attn.h's logits differ from numpy's: worst relative error %.3g" % err)
            bad += 1
        # export: the same tensors under the same names (q and k rows back in rotate_half's order), the
        # same configuration, and the same logits when attn.h and numpy read the export
        os.makedirs(os.path.join(d, "out"))
        run("export", os.path.join(d, "in"), os.path.join(d, "out"))
        back = load_file(os.path.join(d, "out", "model.safetensors"))
        cfg = json.load(open(os.path.join(d, "out", "config.json")))
        for k, v in w.items():
            if not k.endswith("inv_freq") and (k not in back or not np.array_equal(back[k], v)):
                print("export: %s differs or is missing" % k)
                bad += 1
        for k in ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                  "num_key_value_heads", "max_position_embeddings", "rope_theta", "rms_norm_eps", "tie_word_embeddings"):
            if cfg.get(k) != CFG.get(k, cfg.get(k)) or k not in cfg:
                print("export: config %s is %s, wanted %s" % (k, cfg.get(k), CFG.get(k)))
                bad += 1
        again = np.array([float(v) for v in run("forward", os.path.join(d, "out"), *map(str, TOKENS)).split()])
        if not np.array_equal(again, got) or not np.allclose(forward(back, TOKENS), want, rtol=0, atol=1e-9):
            print("export: the exported model's logits differ")
            bad += 1
    print("llama_check:", "ok (logits within %.1g of numpy's; the export reads back bit for bit)" % err if not bad
          else "%d mismatches" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
