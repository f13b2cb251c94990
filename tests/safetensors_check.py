"""attn.h's safetensors against Hugging Face's own library (safetensors, numpy): a file the library
writes (F32, F16, F64 and a BF16 tensor given as raw bytes, shapes from a scalar to 4-D, metadata)
is read by attn.h value for value, and a file attn.h writes is read by the library, values, shapes
and metadata exact. Usage: python3 tests/safetensors_check.py ST_TOOL (tests/st_tool.c, built)."""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
from safetensors import safe_open
from safetensors.numpy import save_file

tool = sys.argv[1]
rng = np.random.default_rng(7)
tensors = {
    "model.embed.weight": rng.standard_normal((5, 3)).astype(np.float32),
    "h.0.attn.c_attn.bias": rng.standard_normal(7).astype(np.float16),
    "x.f64": rng.standard_normal((2, 1, 2, 2)),
    "scalar": np.array(-0.75, dtype=np.float32),
}
bad = 0
with tempfile.TemporaryDirectory() as d:
    base, path = os.path.join(d, "base.safetensors"), os.path.join(d, "mixed.safetensors")
    save_file(tensors, base, metadata={"format": "pt"})
    raw = open(base, "rb").read()  # one BF16 tensor appended by hand (numpy has no bfloat16)
    n = struct.unpack("<Q", raw[:8])[0]
    header, data = json.loads(raw[8:8 + n]), raw[8 + n:]
    bf16_bits = np.array([0x3F80, 0xBE00, 0x4049, 0x0001], dtype=np.uint16)
    header["bf"] = {"dtype": "BF16", "shape": [2, 2], "data_offsets": [len(data), len(data) + 8]}
    text = json.dumps(header).encode()
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + data + bf16_bits.tobytes())
    want = {k: v.astype(np.float32).ravel() for k, v in tensors.items()}
    want["bf"] = (bf16_bits.astype(np.uint32) << 16).view(np.float32)
    got = {}
    for line in subprocess.run([tool, "read", path], check=True, capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        nd = int(f[1])
        got[f[0]] = np.array([float(x) for x in f[2 + nd:]], dtype=np.float32)
    for k, v in want.items():
        if k not in got or not np.array_equal(got[k], v):
            print(f"attn.h read {k} as {got.get(k)}, the library wrote {v}")
            bad += 1
    out = os.path.join(d, "attn.safetensors")
    subprocess.run([tool, "write", out], check=True)
    with safe_open(out, "np") as f:
        a, b, meta = f.get_tensor("a"), f.get_tensor("b.c"), f.metadata()
    if not (a.dtype == np.float32 and a.shape == (2, 3) and np.array_equal(a.ravel(), np.arange(6) / 4 - 1)
            and np.array_equal(b, (1 / np.arange(1, 6)).astype(np.float32)) and meta == {"who": "attn.h"}):
        print("the library read attn.h's file differently:", a, b, meta)
        bad += 1
print("safetensors_check:", "ok" if bad == 0 else f"{bad} mismatches")
sys.exit(1 if bad else 0)
