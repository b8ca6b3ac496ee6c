#!/usr/bin/env python3
# ===- scripts/generate.py - greedy text generation through strata-run -----===#
# Greedy generation with a compiled decoder pair (prefill + decoder-with-past
# artifacts, HF input/output names): one prefill over the prompt, then one
# decode step per new token, feeding present.* back as past_key_values.*.
# Each step is one strata-run process (the in-process generation loop with
# sampling and batching is the runtime's next feature), so this measures
# correctness, not speed. Byte-level models only (token id = byte).
#
# Usage: generate.py PREFILL.strata DECODE.strata --prompt TEXT [--steps N]
#        generate.py ... --check-reference DIR   (prompt_ids.npy and
#        generated_ids.npy from test/models; exits 1 on any difference)
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def run(strata_run, artifact, feeds, work):
    """Runs |artifact| on |feeds| (name -> array); returns name -> array."""
    in_dir = tempfile.mkdtemp(dir=work)
    out_dir = tempfile.mkdtemp(dir=work)
    cmd = [strata_run, artifact, "--output-dir", out_dir]
    for name, value in feeds.items():
        path = os.path.join(in_dir, re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".npy")
        np.save(path, value)
        cmd += ["--input", f"{name}={path}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"generate.py: strata-run failed: {proc.stderr.strip()}")
    return {f[:-4]: np.load(os.path.join(out_dir, f))
            for f in os.listdir(out_dir) if f.endswith(".npy")}


def greedy(strata_run, prefill, decode, prompt, steps, work):
    """prompt: int64 [B, L] -> generated int64 [B, steps]."""
    b, n = prompt.shape
    outs = run(strata_run, prefill, {"input_ids": prompt,
                                      "attention_mask": np.ones((b, n), np.int64)},
               work)
    generated = []
    total = n
    while True:
        nxt = outs["logits"][:, -1, :].argmax(-1).astype(np.int64)
        generated.append(nxt)
        if len(generated) == steps:
            break
        total += 1
        feeds = {"input_ids": nxt[:, None],
                 "attention_mask": np.ones((b, total), np.int64)}
        for name, value in outs.items():
            if name.startswith("present."):
                feeds["past_key_values." + name[len("present."):]] = value
        outs = run(strata_run, decode, feeds, work)
    return np.stack(generated, axis=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("prefill")
    ap.add_argument("decode")
    ap.add_argument("--prompt", default="In the beginning")
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--check-reference")
    ap.add_argument("--bin-dir", default=os.path.join(os.path.dirname(HERE),
                                                      "build", "bin"))
    a = ap.parse_args()
    strata_run = os.path.join(a.bin_dir, "strata-run")
    with tempfile.TemporaryDirectory(prefix="strata-gen-") as work:
        if a.check_reference:
            prompt = np.load(os.path.join(a.check_reference, "prompt_ids.npy"))
            want = np.load(os.path.join(a.check_reference, "generated_ids.npy"))
            got = greedy(strata_run, a.prefill, a.decode, prompt.astype(np.int64),
                         want.shape[1], work)
            same = int((got == want).all(axis=1).sum())
            print(f"{same} passed, {got.shape[0] - same} failed")
            return 0 if same == got.shape[0] else 1
        prompt = np.frombuffer(a.prompt.encode(), np.uint8).astype(np.int64)[None]
        ids = greedy(strata_run, a.prefill, a.decode, prompt, a.steps, work)
        text = bytes(ids[0].astype(np.uint8)).decode("utf-8", errors="replace")
        print(a.prompt + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
