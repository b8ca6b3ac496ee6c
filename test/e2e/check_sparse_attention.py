#!/usr/bin/env python3
# ===- check_sparse_attention.py - windowed attention on the trained model -===#
# The trained byte-level GPT (its decode export, 256 positions) compiled
# with --attention-window and scored on the held-out stretches of
# check_precision.py (8 x 257 bytes: the first prefilled, 256 predicted):
# - a window as long as the context gives the dense artifact's logits
#   (within 1e-5: the same kernels, only the attributes differ);
# - a window of 64 keys with 4 sinks, through decode steps and through one
#   prefill call scored on every position: the runtime attention kernel's
#   logits match the generic lowering's (--no-runtime-attention), two
#   independent implementations of the same band + sink mask, within 1e-4
#   (fp32 sums in another order); that mask applied to a reference is
#   strata_rt_attention_f32's own kernel test;
# - the windowed model's bits per byte against dense (reported, and it
#   must differ: the stretches are longer than the window).
#
# Usage: check_sparse_attention.py MODELS_DIR BIN_DIR [--json OUT]
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_precision as cp  # noqa: E402

WINDOW, SINKS = 64, 4
VARIANTS = {
    "dense": [],
    "window-context": ["--attention-window", str(cp.LENGTH)],
    "window": ["--attention-window", str(WINDOW), "--attention-sinks",
               str(SINKS)],
    "window-generic": ["--attention-window", str(WINDOW), "--attention-sinks",
                       str(SINKS), "--no-runtime-attention"],
}
PREFILL = {"window-prefill": VARIANTS["window"],
           "window-prefill-generic": VARIANTS["window-generic"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models_dir")
    ap.add_argument("bin_dir")
    ap.add_argument("--json")
    args = ap.parse_args()
    fixture = os.path.join(args.models_dir, "fixtures", "bytegpt")
    seqs = cp.stretches(os.path.join(fixture, "heldout.txt"))
    logits, problems = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags in list(VARIANTS.items()) + list(PREFILL.items()):
            prefill = name in PREFILL
            artifact = os.path.join(tmp, name + ".strata")
            subprocess.run([os.path.join(args.bin_dir, "strata-compile"),
                            os.path.join(fixture, "decode.onnx"), "-o",
                            artifact, "--quiet", "--max-batch",
                            str(cp.SLOTS), "--max-seq", str(cp.LENGTH)] +
                           (["--prefill-logits", "all"] if prefill else []) +
                           flags, check=True, timeout=900)
            score = cp.strata_prefill_logits if prefill else cp.strata_logits
            logits[name] = score(args.bin_dir, artifact, seqs, tmp, name)

    def apart(a, b):
        return float(np.abs(logits[a] - logits[b]).max())

    results = {"window": WINDOW, "sinks": SINKS,
               "scored_bytes": int(cp.SLOTS * (cp.LENGTH - 1))}
    for name in logits:
        results[name] = {"bpb": cp.bits_per_byte(logits[name], seqs)}
    checks = [("window-context", "dense", 1e-5),
              ("window", "window-generic", 1e-4),
              ("window-prefill", "window-prefill-generic", 1e-4)]
    for a, b, bound in checks:
        d = apart(a, b)
        results[f"{a}_vs_{b}_max_abs"] = d
        print(f"{a} vs {b}: max |logit difference| {d:.2e} (bound {bound})")
        if not d <= bound:
            problems.append(f"{a} vs {b}: {d:.2e} > {bound}")
    dense, windowed = results["dense"]["bpb"], results["window"]["bpb"]
    print(f"bits per byte: dense {dense:.4f}, window {WINDOW} + {SINKS} "
          f"sinks {windowed:.4f} ({windowed / dense:.4f}x), prefill-scored "
          f"{results['window-prefill']['bpb']:.4f}")
    if apart("window", "dense") < 1e-3:
        problems.append("the window changed nothing on stretches longer "
                        "than it")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
