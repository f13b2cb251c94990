"""BERT in Hugging Face's layout (sentence-transformers' all-MiniLM-L6-v2 and its family) against an
independent numpy implementation of the model.

    python3 tests/bert_check.py fixture DIR       writes a tiny random BERT (config.json, model.safetensors
                                                  with the position_ids buffer of the real exports) and
                                                  embeddings.txt: the token ids of a padded batch and
                                                  their mean-pooled, L2-normalised embeddings
    python3 tests/bert_check.py check HF_TOOL     the fixture again in a temporary directory: attn.h's
                                                  embeddings (HF_TOOL embed) against numpy's
    python3 tests/bert_check.py model DIR HF_TOOL the same on a real model directory (all-MiniLM-L6-v2:
                                                  model.safetensors, config.json) for fixed token ids
    python3 tests/bert_check.py torch DIR ATTNLAB the same lines against PyTorch's float32 forward
                                                  (bench/torch_minilm.py --embed, run by TORCH_PYTHON,
                                                  default /usr/bin/python3: Debian's python3-torch)
    python3 tests/bert_check.py text DIR ATTNLAB  end to end: `ATTNLAB embed DIR` (batches of 8, padded)
                                                  on the lines of tests/data/wordpiece_corpus.txt against
                                                  numpy's embeddings of each line alone, from Hugging
                                                  Face's tokenizers' ids (skipped without tokenizers)

The numpy model follows transformers' BertModel: embeddings word + position + token type 0, then
LayerNorm; per layer post-LN blocks x = LN(x + Attn(x)), x = LN(x + W2 gelu(W1 x)) with GELU's erf
form; a padding mask (attention_mask 0 for [PAD] = 0 after the sentence); then sentence-transformers'
mean over the sentence's tokens and L2 normalisation. Needs numpy and safetensors (no torch)."""
import json
import math
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small products: threads only contend (5x slower)
import numpy as np  # noqa: E402
from safetensors.numpy import load_file, save_file  # noqa: E402

CFG = {"model_type": "bert", "architectures": ["BertModel"], "vocab_size": 47, "hidden_size": 24,
       "intermediate_size": 40, "num_hidden_layers": 2, "num_attention_heads": 4, "max_position_embeddings": 20,
       "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu", "pad_token_id": 0,
       "position_embedding_type": "absolute"}
# a padded batch: [CLS] = 2 ... [SEP] = 3, then [PAD] = 0
BATCH = [[2, 17, 46, 9, 33, 12, 3, 0, 0, 0], [2, 5, 5, 40, 3, 0, 0, 0, 0, 0], [2, 8, 21, 30, 44, 1, 19, 7, 11, 3]]


def weights(seed=9):
    r = np.random.default_rng(seed)
    d, V, L, F, P = (CFG[k] for k in ("hidden_size", "vocab_size", "num_hidden_layers", "intermediate_size",
                                       "max_position_embeddings"))
    f = lambda *s: (0.3 * r.standard_normal(s)).astype(np.float32)
    w = {"embeddings.word_embeddings.weight": f(V, d), "embeddings.position_embeddings.weight": f(P, d),
         "embeddings.token_type_embeddings.weight": f(2, d), "embeddings.LayerNorm.weight": 1 + f(d),
         "embeddings.LayerNorm.bias": f(d), "embeddings.position_ids": np.arange(P, dtype=np.int64)[None]}
    for l in range(L):
        p = "encoder.layer.%d." % l
        for n in ("query", "key", "value"):
            w[p + "attention.self.%s.weight" % n], w[p + "attention.self.%s.bias" % n] = f(d, d), f(d)
        w.update({p + "attention.output.dense.weight": f(d, d), p + "attention.output.dense.bias": f(d),
                  p + "attention.output.LayerNorm.weight": 1 + f(d), p + "attention.output.LayerNorm.bias": f(d),
                  p + "intermediate.dense.weight": f(F, d), p + "intermediate.dense.bias": f(F),
                  p + "output.dense.weight": f(d, F), p + "output.dense.bias": f(d),
                  p + "output.LayerNorm.weight": 1 + f(d), p + "output.LayerNorm.bias": f(d)})
    return w


def embed(w, cfg, ids, keep=None):
    """Mean-pooled, L2-normalised embeddings [B, d] of the padded batch ids [B, T]: keep [B, T] the
    tokens that are not padding (None: those other than [PAD] = 0)."""
    g = lambda k: np.asarray(w[k], dtype=np.float64)
    ids = np.array(ids)
    B, T = ids.shape
    d, H, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    hd = d // H
    keep = ids != 0 if keep is None else np.array(keep, dtype=bool)
    ln = lambda x, p: ((x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)) * g(p + "weight") + g(p + "bias")
    erf = lambda z: np.array([math.erf(v) for v in z.ravel().tolist()]).reshape(z.shape)
    gelu = lambda z: 0.5 * z * (1 + erf(z / math.sqrt(2)))
    x = g("embeddings.word_embeddings.weight")[ids] + g("embeddings.position_embeddings.weight")[:T][None] + \
        g("embeddings.token_type_embeddings.weight")[0]
    x = ln(x, "embeddings.LayerNorm.")
    for l in range(cfg["num_hidden_layers"]):
        p = "encoder.layer.%d." % l
        lin = lambda z, n: z @ g(p + n + ".weight").T + g(p + n + ".bias")
        q, k, v = (lin(x, "attention.self." + n).reshape(B, T, H, hd) for n in ("query", "key", "value"))
        s = np.einsum("bthd,bshd->bhts", q, k) / np.sqrt(hd) + np.where(keep, 0, -np.inf)[:, None, None, :]
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        o = np.einsum("bhts,bshd->bthd", a, v).reshape(B, T, d)
        x = ln(x + lin(o, "attention.output.dense"), p + "attention.output.LayerNorm.")
        x = ln(x + lin(gelu(lin(x, "intermediate.dense")), "output.dense"), p + "output.LayerNorm.")
    e = (x * keep[..., None]).sum(1) / keep.sum(1, keepdims=True)
    return e / np.linalg.norm(e, axis=-1, keepdims=True)


def run_tool(tool, d, batch):
    out = subprocess.run([tool, "embed", d, str(len(batch[0]))] + [str(t) for row in batch for t in row], check=True,
                         capture_output=True, text=True).stdout.split()
    return np.array([float(v) for v in out]).reshape(len(batch), -1)


def compare(got, want, what):
    cos = 1 - (got * want).sum(-1) / (np.linalg.norm(got, axis=-1) * np.linalg.norm(want, axis=-1))
    err = np.abs(got - want).max()  # both unit vectors: float32's rounding through the layers, ~1e-6
    ok = cos.max() < 1e-8 and err < 1e-5
    print("bert_check (%s): %s (cosine distance at most %.1g, largest difference %.1g; limits 1e-8, 1e-5)"
          % (what, "ok" if ok else "FAILED", cos.max(), err))
    return 0 if ok else 1


def write_fixture(d):
    os.makedirs(d, exist_ok=True)
    w = weights()
    save_file(w, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
    json.dump(CFG, open(os.path.join(d, "config.json"), "w"), indent=2)
    with open(os.path.join(d, "embeddings.txt"), "w") as f:
        f.write("%d %d\n" % (len(BATCH), len(BATCH[0])))
        for row in BATCH:
            f.write(" ".join(map(str, row)) + "\n")
        for row in embed(w, CFG, BATCH):
            f.write(" ".join("%.9g" % v for v in row) + "\n")
    return w


def text_check(d, attnlab, w, cfg, torch=False):
    try:
        from tokenizers import Tokenizer
    except ImportError:
        print("skip: Hugging Face's tokenizers not installed (pip install tokenizers): the end-to-end check")
        return 0
    py = os.environ.get("TORCH_PYTHON", "/usr/bin/python3")
    if torch and subprocess.run([py, "-c", "import torch"], capture_output=True).returncode:
        print("skip: %s has no torch (Debian's python3-torch): the PyTorch check" % py)
        return 0
    tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(json.load(open(os.path.join(d, "sentence_bert_config.json")))["max_seq_length"])
    corpus = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "wordpiece_corpus.txt")
    # every line, a [PAD] written in the text included: attnlab embed pads with -1 (pad_mask 2), so
    # that, as in sentence-transformers, such a token is attended to
    lines = [x for x in open(corpus, "rb").read().decode("utf-8").split("\n") if x]
    npad = sum("[PAD]" in x for x in lines)
    out = subprocess.run([attnlab, "embed", d, "-", "--batch", "8"], input="\n".join(lines), check=True,
                         capture_output=True, text=True).stdout.split()
    got = np.array([[float(v) for v in row.split(",")] for row in out])
    ids = "".join(" ".join(map(str, tok.encode(x).ids)) + "\n" for x in lines)
    if torch:
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "torch_minilm.py")
        out = subprocess.run([py, script, "--model", d, "--embed"], input=ids, check=True, capture_output=True,
                             text=True).stdout.strip().split("\n")
        want = np.array([[float(v) for v in row.split()] for row in out])
        return compare(got, want, "attnlab embed against PyTorch's float32 on %d lines of text, %d with a written "
                       "[PAD]" % (len(lines), npad))
    w = {k: np.asarray(v, dtype=np.float64) for k, v in w.items()}
    rows = [[int(t) for t in row.split()] for row in ids.strip().split("\n")]
    want = np.concatenate([embed(w, cfg, [r], [[1] * len(r)]) for r in rows])
    rc = compare(got, want, "attnlab embed on %d lines of text, %d with a written [PAD]" % (len(lines), npad))
    # the orderings sentence-transformers' own examples show: each sentence nearer the first than the last
    pairs = [["A man is eating food.", "A man is eating a piece of bread.", "A man is riding a horse."],
             ["The new movie is awesome.", "The new movie is so great.", "The cat sits outside."],
             ["A man is playing guitar.", "A woman is playing violin.", "Do you like pizza?"]]
    out = subprocess.run([attnlab, "embed", d], input="\n".join(sum(pairs, [])), check=True, capture_output=True,
                         text=True).stdout.split()
    e = np.array([[float(v) for v in row.split(",")] for row in out])
    for i, (a, near, far) in enumerate(pairs):
        sn, sf = e[3 * i] @ e[3 * i + 1], e[3 * i] @ e[3 * i + 2]
        ok = sn > sf + 0.1
        rc |= not ok
        print("bert_check: %s %r is nearer %r (%.3f) than %r (%.3f)" % ("ok" if ok else "FAILED", a, near, sn, far, sf))
    return rc


def main():
    a = sys.argv[1:]
    if not a or a[0] not in ("fixture", "check", "model", "text", "torch") or \
            len(a) != (3 if a[0] in ("model", "text", "torch") else 2):
        print(__doc__)
        return 0 if a and a[0] in ("-h", "--help") else 2
    if a[0] == "fixture":
        write_fixture(a[1])
        print("wrote", a[1])
        return 0
    if a[0] == "check":
        with tempfile.TemporaryDirectory() as d:
            w = write_fixture(d)
            return compare(run_tool(a[1], d, BATCH), embed(w, CFG, BATCH), "a random BERT")
    cfg = json.load(open(os.path.join(a[1], "config.json")))
    w = load_file(os.path.join(a[1], "model.safetensors"))
    if a[0] in ("text", "torch"):
        return text_check(a[1], a[2], w, cfg, a[0] == "torch")
    r = np.random.default_rng(1)
    batch = [[101] + list(r.integers(1000, cfg["vocab_size"], n)) + [102] + [0] * (30 - n) for n in (5, 12, 30)]
    return compare(run_tool(a[2], a[1], batch), embed(w, cfg, batch), os.path.basename(os.path.normpath(a[1])))


if __name__ == "__main__":
    sys.exit(main())
