"""Writes tests/data/mixed.safetensors, the fixture of tests/test_hardening.c's safetensors checks:
F32, F16, BF16, F64, I64, I8 and U16 tensors (a scalar, a vector, a matrix, a 4-D one), a name with
a quote and a non-ASCII letter, metadata, and the JSON written by Hugging Face's own library (safetensors 0.8.0;
BF16 given as raw bytes, numpy has no bfloat16). Run from the repository root:
python3 tests/data/make_safetensors.py"""
import json
import struct

import numpy as np
from safetensors.numpy import save_file

f16 = np.array([0.5, -2.0, 65504.0, 6.1035156e-05, 5.9604645e-08, 0.0], dtype=np.float16)  # normal, max, min normal, subnormal
f32 = np.arange(12, dtype=np.float32).reshape(3, 4) / 8 - 0.5
f64 = np.array([1 / 3, -1e-3], dtype=np.float64)
t4 = (np.arange(24, dtype=np.float32) - 12).reshape(1, 2, 3, 4)
scalar = np.array(2.5, dtype=np.float32)
ints = {"ids": np.array([[0, 1, -3, 2 ** 40]], dtype=np.int64), "i8": np.array([-128, 127], dtype=np.int8),
        "u16": np.array([65535], dtype=np.uint16)}
save_file({"f16": f16, "layer.0.w": f32, "f64": f64, "t4": t4, "scalar": scalar, 'q"é': f32[0], **ints},
          "/tmp/mixed_base.safetensors", metadata={"format": "np", "note": "tab\there"})
# append a BF16 tensor by hand: the header rewritten with one more entry, its bytes at the end
raw = open("/tmp/mixed_base.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
data = raw[8 + n:]
bf16 = struct.pack("<4H", 0x3F80, 0xC040, 0x7F80, 0x0000)  # 1, -3, +Inf, 0
header["bf16"] = {"dtype": "BF16", "shape": [4], "data_offsets": [len(data), len(data) + 8]}
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
open("tests/data/mixed.safetensors", "wb").write(struct.pack("<Q", len(text)) + text + data + bf16)
print("wrote tests/data/mixed.safetensors")
