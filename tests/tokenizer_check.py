#!/usr/bin/env python3
"""tokenizer_check.py: attn.h's WordPiece tokenizer against Hugging Face's tokenizers (PyPI).

    python3 tests/tokenizer_check.py MODEL_DIR HF_TOOL [--quick]

MODEL_DIR holds vocab.txt, tokenizer.json and the configs (all-MiniLM-L6-v2's); HF_TOOL is
build/hf_tool. The texts: every line of tests/data/wordpiece_corpus.txt (55 lines in 30 scripts,
with combining marks, control and zero-width characters, special tokens, words over 100
characters), 400 seeded random texts (vocabulary words in mixed case with accents added, random
code points from every plane, white space, punctuation, special tokens), 8 texts long enough to be
cut at the model's max_seq_length, and, unless --quick, every code point alone and between two
letters (2.2 million texts). Every text's ids must equal the reference's. Exit 0 when they all do.
"""
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def texts_of(vocab):
    lines = open(os.path.join(HERE, "data", "wordpiece_corpus.txt"), "rb").read().decode("utf-8")
    corpus = [x for x in lines.split("\n") if x]
    r = random.Random(1)
    words = [w for w in vocab if w.isalpha() and not w.startswith("##")]
    accents = "\u0300\u0301\u0302\u0303\u0308\u030a\u0327"
    planes = [(0x20, 0x7F), (0x80, 0x800), (0x800, 0x10000), (0x10000, 0x110000)]
    extras = [" ", "  ", "\t", "\n", "\u00a0", "\u3000", ",", ".", "!", "[MASK]", "[SEP]", "[UNK]", "-", "'"]

    def code_point():
        lo, hi = r.choice(planes)
        c = r.randrange(lo, hi)
        return chr(c) if not 0xD800 <= c <= 0xDFFF else "?"

    random_texts = []
    for _ in range(400):
        parts = []
        for _ in range(r.randrange(1, 40)):
            k = r.random()
            if k < 0.5:
                w = r.choice(words)
                w = w.upper() if r.random() < 0.2 else w.capitalize() if r.random() < 0.3 else w
                if r.random() < 0.2:
                    i = r.randrange(len(w))
                    w = w[:i + 1] + r.choice(accents) + w[i + 1:]
                parts.append(w)
            elif k < 0.8:
                parts.append("".join(code_point() for _ in range(r.randrange(1, 6))))
            else:
                parts.append(r.choice(extras))
            parts.append(" " if r.random() < 0.8 else "")
        random_texts.append("".join(parts))
    long_texts = [" ".join(r.choice(words) for _ in range(n)) for n in (200, 254, 255, 256, 300, 600, 1000, 5000)]
    return corpus, random_texts, long_texts


def run_tool(tool, model, texts):
    """attn.h's ids of each text (NUL-separated records; texts hold no NUL)."""
    data = b"".join(t.encode("utf-8") + b"\0" for t in texts)
    p = subprocess.run([tool, "tokenize", model, "-0"], input=data, capture_output=True)
    if p.returncode:
        sys.exit("tokenizer_check: %s failed: %s" % (tool, p.stderr.decode()))
    return [[int(x) for x in line.split()] for line in p.stdout.decode().split("\n")[:len(texts)]]


def main():
    a = [x for x in sys.argv[1:] if x != "--quick"]
    if len(a) != 2:
        print(__doc__)
        return 0 if sys.argv[1:2] in (["-h"], ["--help"]) else 2
    model, tool = a
    try:
        from tokenizers import Tokenizer
    except ImportError:
        print("skip: Hugging Face's tokenizers not installed (pip install tokenizers): tokenizer check")
        return 0
    ref = Tokenizer.from_file(os.path.join(model, "tokenizer.json"))
    ref.no_padding()
    st = os.path.join(model, "sentence_bert_config.json")
    max_len = json.load(open(st))["max_seq_length"] if os.path.exists(st) else 512
    ref.enable_truncation(max_len)
    vocab = open(os.path.join(model, "vocab.txt"), encoding="utf-8").read().split("\n")
    corpus, random_texts, long_texts = texts_of(vocab)
    sets = [("corpus lines", corpus), ("random texts", random_texts),
            ("texts cut at %d tokens" % max_len, long_texts)]
    if "--quick" not in sys.argv:
        cps = [chr(c) for c in range(1, 0x110000) if not 0xD800 <= c <= 0xDFFF]
        sets.append(("code points alone and between letters", cps + ["a" + c + "b" for c in cps]))
    failed = 0
    for name, texts in sets:
        t0 = time.time()
        got = run_tool(tool, model, texts)
        want = [e.ids for e in ref.encode_batch(texts)]
        bad = [i for i in range(len(texts)) if got[i] != want[i]]
        print("%-40s %8d texts, %9d ids: %d differ (%.1f s)" % (name, len(texts), sum(map(len, want)), len(bad),
                                                           time.time() - t0))
        for i in bad[:5]:
            print("  text %r\n  attn.h    %s\n  reference %s" % (texts[i][:200], got[i][:40], want[i][:40]))
        failed += len(bad)
    cut = sum(1 for t in long_texts if len(ref.encode(t).ids) == max_len)
    print("tokenizer_check: %s (%d of the long texts cut)" % ("ok" if not failed else "FAILED", cut))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
