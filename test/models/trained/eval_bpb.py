#!/usr/bin/env python3
# ===- test/models/trained/eval_bpb.py - held-out bits per byte --------------===#
# Bits per byte of the trained byte-level GPT on the held-out text, computed
# with onnxruntime on the exported prefill model, next to `xz -9` on the same
# bytes. Windows of `ctx` bytes slide by ctx/2; after the first window every
# byte is predicted from at least ctx/2 bytes of context (the same scheme as
# train_bytegpt.py). Run with the venv python; bench/ imports heldout_bpb().
#
# Usage: .venv/bin/python eval_bpb.py MODEL_DIR [TEXT] [--threads N] [--json OUT]
import argparse
import json
import lzma
import math
import os
import subprocess

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))


def windows(n, ctx, stride):
    """(start, first scored target) pairs; chunk = data[start:start + ctx + 1]."""
    if n <= ctx + 1:
        return [(0, 1, n)]
    out, done = [(0, 1, ctx + 1)], ctx + 1
    while done < n:
        end = min(n, done + stride)
        out.append((end - ctx - 1, done, end))
        done = end
    return out


def heldout_bpb(model_path, text_path, threads=2, ctx=256, batch=32, max_bytes=None,
                session=None):
    with open(text_path, "rb") as f:
        data = np.frombuffer(f.read(), dtype=np.uint8).astype(np.int64)
    if max_bytes:
        data = data[:max_bytes]
    if session is None:
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
        session = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    ctx = min(ctx, len(data) - 1)
    wins = windows(len(data), ctx, ctx // 2)
    total, count = 0.0, 0
    for i in range(0, len(wins), batch):
        group = wins[i:i + batch]
        chunks = np.stack([data[s:s + ctx + 1] for s, _, _ in group])
        logits = session.run(["logits"], {"input_ids": chunks[:, :-1],
                                          "attention_mask": np.ones((len(group), ctx), np.int64)})[0]
        m = logits.max(-1, keepdims=True)
        logz = (m[..., 0] + np.log(np.exp(logits - m).sum(-1)))
        tgt = chunks[:, 1:]
        nll = logz - np.take_along_axis(logits, tgt[..., None], -1)[..., 0]
        for row, (s, first, end) in enumerate(group):
            total += float(nll[row, first - s - 1:end - s - 1].sum())
            count += end - first
    return total / count / math.log(2), count


def xz_bpb(text_path):
    with open(text_path, "rb") as f:
        raw = f.read()
    try:
        packed = subprocess.run(["xz", "-9", "-c"], input=raw, check=True,
                                capture_output=True).stdout
        tool = "xz -9"
    except OSError:
        packed = lzma.compress(raw, preset=9)
        tool = "python lzma preset 9"
    return 8.0 * len(packed) / len(raw), len(raw), tool


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("text", nargs="?")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json")
    a = ap.parse_args()
    text = a.text or os.path.join(a.model_dir, "heldout.txt")
    bpb, n = heldout_bpb(os.path.join(a.model_dir, "prefill.onnx"), text, a.threads)
    xz, nbytes, tool = xz_bpb(text)
    res = {"heldout_bytes": nbytes, "scored_bytes": n, "model_bpb": round(bpb, 4),
           "xz_bpb": round(xz, 4), "xz_tool": tool, "context": 256, "stride": 128}
    print(json.dumps(res))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
