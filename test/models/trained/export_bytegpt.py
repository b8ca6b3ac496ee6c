#!/usr/bin/env python3
# ===- test/models/trained/export_bytegpt.py - export the trained byte GPT ---===#
# Exports the checkpoint written by train_bytegpt.py with torch.onnx.export
# (opset 17, HF/Optimum names) as a prefill model and a decoder-with-past model
# that share one external weight file, so the pair costs the weights once:
#   OUT/prefill.onnx  input_ids, attention_mask -> logits, present.*
#   OUT/decode.onnx   input_ids, attention_mask, past_key_values.* -> same
#   OUT/bytegpt.data  initializers >= 1 KiB, deduplicated by content
# Run with /usr/bin/python3 (torch 1.13, onnx 1.12). Deterministic for a given
# checkpoint.
#
# Usage: python3 export_bytegpt.py CHECKPOINT OUT_DIR [NAME]  (default bytegpt)
import hashlib
import io
import json
import os
import sys
import warnings

import onnx
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from arch import GPT2Config, GPT2LMHeadModel  # noqa: E402

DATA = "bytegpt.data"
THRESHOLD = 1024


def export(model, cfg, past):
    b, s, p = 2, 7, 5
    hd = cfg.hidden // cfg.heads
    ids = torch.randint(0, 256, (b, s), generator=torch.Generator().manual_seed(0))
    args = [ids, torch.ones(b, s + (p if past else 0), dtype=torch.long)]
    names = ["input_ids", "attention_mask"]
    total = "total_sequence" if past else "sequence"
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: total},
            "logits": {0: "batch", 1: "sequence"}}
    outputs = ["logits"]
    for i in range(cfg.layers):
        for t in ("key", "value"):
            outputs.append("present.%d.%s" % (i, t))
            axes[outputs[-1]] = {0: "batch", 2: total}
            if past:
                names.append("past_key_values.%d.%s" % (i, t))
                axes[names[-1]] = {0: "batch", 2: "past_sequence"}
                args.append(torch.zeros(b, cfg.heads, p, hd))
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(args), buf, opset_version=17, input_names=names,
                          output_names=outputs, dynamic_axes=axes, do_constant_folding=True)
    return onnx.load_from_string(buf.getvalue())


def externalize(models, out_dir):
    """Moves big initializers of all models into one shared, deduplicated file."""
    offsets, blob = {}, bytearray()
    for m in models:
        for t in m.graph.initializer:
            if not t.HasField("raw_data") or len(t.raw_data) < THRESHOLD:
                continue
            key = hashlib.sha256(t.raw_data).hexdigest()
            if key not in offsets:
                align = 4096 if len(t.raw_data) >= 65536 else 64
                blob.extend(b"\0" * (-len(blob) % align))
                offsets[key] = len(blob)
                blob.extend(t.raw_data)
            n = len(t.raw_data)
            t.ClearField("raw_data")
            t.data_location = onnx.TensorProto.EXTERNAL
            for k, v in (("location", DATA), ("offset", str(offsets[key])), ("length", str(n))):
                e = t.external_data.add()
                e.key, e.value = k, v
    with open(os.path.join(out_dir, DATA), "wb") as f:
        f.write(bytes(blob))
    return len(blob)


def main():
    ckpt, out_dir = sys.argv[1], sys.argv[2]
    name = sys.argv[3] if len(sys.argv) > 3 else "bytegpt"
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    state = torch.load(ckpt, map_location="cpu")
    cfg = GPT2Config(**state["config"])
    model = GPT2LMHeadModel(cfg)
    model.load_state_dict(state["state_dict"])
    model.eval()
    pre, dec = export(model, cfg, False), export(model, cfg, True)
    size = externalize([pre, dec], out_dir)
    for m, name in ((pre, "prefill.onnx"), (dec, "decode.onnx")):
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(m.SerializeToString())
    n_params = sum(p.numel() for p in model.parameters())
    print("exported %d params, shared weights %.1f MB" % (n_params, size / 1e6))
    log_path = os.path.join(os.path.dirname(os.path.abspath(ckpt)), "train_log.json")
    training = {}
    if os.path.exists(log_path):
        with open(log_path) as f:
            training = {k: v for k, v in json.load(f).items() if k != "log"}
    L = cfg.layers
    meta = {
        "name": name, "family": "gpt2", "kind": "trained", "opset": 17,
        "exporter": "torch.onnx.export (torch %s)" % torch.__version__.split("+")[0],
        "generator": "test/models/trained/export_bytegpt.py",
        "prefill": "prefill.onnx", "decode": "decode.onnx", "external_data": DATA,
        "params": n_params, "layers": L, "heads": cfg.heads, "kv_heads": cfg.heads,
        "head_dim": cfg.hidden // cfg.heads, "hidden": cfg.hidden,
        "intermediate": 4 * cfg.hidden, "vocab": cfg.vocab, "max_positions": cfg.n_positions,
        "gelu_approximate": "none", "has_attention_mask": True, "causal": True,
        "position": "learned", "norm": "pre-LN", "tokenizer": "bytes (UTF-8), vocab 256",
        "inputs": ["input_ids", "attention_mask"], "outputs": ["logits"] + [
            "present.%d.%s" % (i, t) for i in range(L) for t in ("key", "value")],
        "dim_relations": {"total_sequence": "past_sequence + sequence"},
        "expected_after_fusion": {"layer_norm": 2 * L + 1, "rms_norm": 0, "gelu": L,
                                  "attention": L},
        "corpus": "World English Bible (engWEB2015eb, public domain), Debian packages "
                  "sword-text-web + diatheke; see trained/prepare_corpus.py",
        "training": training,
    }
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    return n_params


if __name__ == "__main__":
    main()
