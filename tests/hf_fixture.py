"""The fixtures of tests/gpt2_check.py and tests/llama_check.py: a model directory in Hugging Face's
layout (config.json, model.safetensors) and logits.txt (the token ids, then the logits to 9 digits)."""
import json
import os

from safetensors.numpy import save_file


def write(d, cfg, w, tokens, forward):
    """Writes cfg, the weights w and forward(w, tokens)'s logits into directory d; returns w."""
    os.makedirs(d, exist_ok=True)
    save_file(w, os.path.join(d, "model.safetensors"), metadata={"format": "pt"})
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"), indent=2)
    with open(os.path.join(d, "logits.txt"), "w") as f:
        f.write(" ".join(map(str, tokens)) + "\n")
        for row in forward(w, tokens):
            f.write(" ".join("%.9g" % v for v in row) + "\n")
    return w
