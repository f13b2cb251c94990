#!/usr/bin/env python3
"""PyTorch's all-MiniLM-L6-v2 sentence embeddings per second: the competitor of bench_minilm.c, on the
same weights (model.safetensors, read here) as a BertModel-shaped forward written here (embeddings + position +
token type 0, LayerNorm; post-LN blocks with GELU's erf form; mean pooling and L2 normalisation), in
inference mode. Batches of 1 and 32 sentences of 16 and 128 tokens; prints "B T sentences_per_second"
(the median of the repeats after a warm-up). Run with /usr/bin/python3 (Debian's python3-torch).
With --embed it is a reference instead (tests/bert_check.py torch): each line of standard input is
a sentence's token ids, and each output line its embedding (%.9g, space-separated).
With --onnx FILE it writes the same forward as an ONNX graph (input_ids [batch, tokens] int64 to
embedding [batch, d]; opset 14), the model bench/ort_minilm.py and the browser benchmark give ONNX Runtime.
Usage: torch_minilm.py --model DIR [--threads 1] [--repeats 5] [--embed | --onnx FILE]"""
import argparse
import json
import os
import statistics
import sys
import time

import struct

import torch
import torch.nn.functional as F


def load_file(path):
    """The F32 tensors of a safetensors file (8-byte header length, JSON header, data)."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    out = {}
    for name, t in json.loads(raw[8:8 + n]).items():
        if name != "__metadata__" and t["dtype"] == "F32":
            a, b = t["data_offsets"]
            out[name] = torch.frombuffer(bytearray(raw[8 + n + a:8 + n + b]), dtype=torch.float32).reshape(t["shape"])
    return out

p = argparse.ArgumentParser()
p.add_argument("--model", required=True)
p.add_argument("--threads", type=int, default=1)
p.add_argument("--repeats", type=int, default=5)
p.add_argument("--embed", action="store_true")
p.add_argument("--onnx")
a = p.parse_args()
torch.set_num_threads(a.threads)
cfg = json.load(open(os.path.join(a.model, "config.json")))
w = load_file(os.path.join(a.model, "model.safetensors"))
d, H, L, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"], cfg["layer_norm_eps"]


def embed(ids):
    B, T = ids.shape
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:T] + \
        w["embeddings.token_type_embeddings.weight"][0]
    x = F.layer_norm(x, (d,), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    for l in range(L):
        p = "encoder.layer.%d." % l
        lin = lambda z, n: F.linear(z, w[p + n + ".weight"], w[p + n + ".bias"])
        q, k, v = (lin(x, "attention.self." + n).view(B, T, H, d // H).transpose(1, 2) for n in ("query", "key", "value"))
        a = torch.softmax(q @ k.transpose(-1, -2) / (d // H) ** 0.5, dim=-1)  # Debian's torch: no SDPA
        o = (a @ v).transpose(1, 2).reshape(B, T, d)
        x = F.layer_norm(x + lin(o, "attention.output.dense"), (d,), w[p + "attention.output.LayerNorm.weight"],
                         w[p + "attention.output.LayerNorm.bias"], eps)
        x = F.layer_norm(x + lin(F.gelu(lin(x, "intermediate.dense")), "output.dense"), (d,),
                         w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    return F.normalize(x.mean(1), dim=-1)


if a.onnx:
    class Embed(torch.nn.Module):
        def forward(self, ids):
            return embed(ids)
    torch.onnx.export(Embed(), (torch.tensor([[101, 2000, 2001, 102]]),), a.onnx, input_names=["input_ids"],
                      output_names=["embedding"], opset_version=14,
                      dynamic_axes={"input_ids": {0: "batch", 1: "tokens"}, "embedding": {0: "batch"}})
    sys.exit(0)
if a.embed:
    with torch.inference_mode():
        for line in sys.stdin:
            e = embed(torch.tensor([[int(t) for t in line.split()]]))[0]
            print(" ".join("%.9g" % v for v in e.tolist()), flush=True)
    sys.exit(0)
g = torch.Generator().manual_seed(3)
with torch.inference_mode():
    for B, T in ((1, 16), (1, 128), (32, 16), (32, 128)):
        ids = torch.randint(1000, 21000, (B, T), generator=g)
        ids[:, 0], ids[:, -1] = 101, 102
        embed(ids)  # warm-up
        t = []
        for _ in range(a.repeats):
            t0 = time.perf_counter()
            embed(ids)
            t.append(time.perf_counter() - t0)
        print(B, T, B / statistics.median(t), flush=True)
