#!/usr/bin/env python3
"""ONNX Runtime's all-MiniLM-L6-v2 sentence embeddings per second: a competitor of bench_minilm.c on the
same weights, as the ONNX graph bench/torch_minilm.py --onnx writes (the same forward and pooling), run by
an InferenceSession with its default graph optimisations (all levels: ONNX Runtime fuses the BERT
attention, LayerNorm and GELU patterns it recognises) on the given threads. Batches of 1 and 32 sentences
of 16 and 128 tokens; prints "B T sentences_per_second" (the median of the repeats after a warm-up),
then "check" and the embedding of the ids given with --check (so the caller can compare the outputs).
Needs numpy and onnxruntime (pip install onnxruntime).
Usage: ort_minilm.py --onnx FILE [--threads 1] [--repeats 5] [--check "101 ... 102"]"""
import argparse
import statistics
import time

import numpy as np
import onnxruntime as ort

p = argparse.ArgumentParser()
p.add_argument("--onnx", required=True)
p.add_argument("--threads", type=int, default=1)
p.add_argument("--repeats", type=int, default=5)
p.add_argument("--check")
a = p.parse_args()
o = ort.SessionOptions()
o.intra_op_num_threads = a.threads
o.inter_op_num_threads = 1
o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
s = ort.InferenceSession(a.onnx, o, providers=["CPUExecutionProvider"])
rng = np.random.default_rng(3)
for B, T in ((1, 16), (1, 128), (32, 16), (32, 128)):
    ids = rng.integers(1000, 21000, (B, T), dtype=np.int64)
    ids[:, 0], ids[:, -1] = 101, 102
    s.run(None, {"input_ids": ids})  # warm-up
    t = []
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        s.run(None, {"input_ids": ids})
        t.append(time.perf_counter() - t0)
    print(B, T, B / statistics.median(t), flush=True)
if a.check:
    e = s.run(None, {"input_ids": np.array([[int(x) for x in a.check.split()]], dtype=np.int64)})[0][0]
    print("check", " ".join("%.9g" % v for v in e), flush=True)
