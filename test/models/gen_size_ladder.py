#!/usr/bin/env python3
# ===- test/models/gen_size_ladder.py - GPT-2 size ladder, never committed ---===#
# Generates random-weight GPT-2-shaped models for performance and scaling
# curves into a cache outside the repository:
#   ${STRATA_MODEL_CACHE:-~/.cache/strata/models}/<size>/
#     prefill.onnx, decode.onnx, weights.data (shared external data), meta.json
# Sizes: gpt2-small (124M: 12 x 768, 12 heads, vocab 50257, 1024 positions)
# and gpt2-medium (355M: 24 x 1024, 16 heads). Same HF names and dims as the
# fixtures (see gen_torch_fixtures.py). A size already in the cache with a
# matching meta.json is skipped. Run with /usr/bin/python3 (torch 1.13).
#
# Usage: /usr/bin/python3 test/models/gen_size_ladder.py [gpt2-small|gpt2-medium|gpt2-small-2k|gpt2-small-16k ...]
import json
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "trained"))
import arch  # noqa: E402
import export_bytegpt  # noqa: E402

SIZES = {
    "gpt2-small": dict(vocab=50257, n_positions=1024, hidden=768, layers=12, heads=12),
    "gpt2-medium": dict(vocab=50257, n_positions=1024, hidden=1024, layers=24, heads=16),
    # GPT-2-small with 2048 positions: long generations (bench/generation.py).
    "gpt2-small-2k": dict(vocab=50257, n_positions=2048, hidden=768, layers=12, heads=12),
    # GPT-2-small with 16,640 positions: sliding-window decode at 16K
    # context (bench/long_context.py).
    "gpt2-small-16k": dict(vocab=50257, n_positions=16640, hidden=768, layers=12, heads=12),
}
VERSION = 1  # bump when the generated graphs change


def cache_dir():
    return os.environ.get("STRATA_MODEL_CACHE",
                          os.path.join(os.path.expanduser("~"), ".cache", "strata", "models"))


def generate(size):
    out = os.path.join(cache_dir(), size)
    meta_path = os.path.join(out, "meta.json")
    cfg_dict = SIZES[size]
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            old = json.load(f)
        if old.get("version") == VERSION and old.get("config") == cfg_dict:
            print("%s: cached in %s" % (size, out))
            return out
    t0 = time.time()
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    cfg = arch.GPT2Config(act="new_gelu", **cfg_dict)
    model = arch.GPT2LMHeadModel(cfg)
    arch.randomize_(model, std=0.02, seed=124 if size == "gpt2-small" else 355)
    model.eval()
    export_bytegpt.DATA = "weights.data"
    pre, dec = export_bytegpt.export(model, cfg, False), export_bytegpt.export(model, cfg, True)
    nbytes = export_bytegpt.externalize([pre, dec], out)
    for m, name in ((pre, "prefill.onnx"), (dec, "decode.onnx")):
        with open(os.path.join(out, name), "wb") as f:
            f.write(m.SerializeToString())
    params = sum(p.numel() for p in model.parameters())
    meta = {"name": size, "version": VERSION, "config": cfg_dict, "params": params,
            "layers": cfg.layers, "heads": cfg.heads, "kv_heads": cfg.heads,
            "hidden": cfg.hidden, "vocab": cfg.vocab, "max_positions": cfg.n_positions,
            "gelu_approximate": "tanh", "weights_bytes": nbytes, "opset": 17,
            "prefill": "prefill.onnx", "decode": "decode.onnx",
            "generator": "test/models/gen_size_ladder.py",
            "generate_seconds": round(time.time() - t0, 1)}
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print("%s: %d params, %.0f MB weights, %.0fs -> %s"
          % (size, params, nbytes / 1e6, time.time() - t0, out))
    return out


def main():
    torch.set_num_threads(2)
    for size in sys.argv[1:] or ["gpt2-small"]:
        if size not in SIZES:
            sys.exit("unknown size %r (known: %s)" % (size, ", ".join(SIZES)))
        generate(size)


if __name__ == "__main__":
    main()
