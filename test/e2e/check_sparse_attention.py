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
#   must differ: the stretches are longer than the window);
# - with 16-token prefill chunks the windowed layers' caches are rings of
#   4 + 64 + 16 - 1 = 83 rows (checked in the artifact's states), written
#   and read around the ring 3 times over a stretch: decode steps and
#   chunked prefill give the whole caches' logits (runtime kernel and
#   generic lowering alike) within 1e-4;
# - with 2 top-k global blocks of 16 keys beside that window, the runtime
#   kernel's logits match the generic lowering's (each spells the block
#   choice by its definition: block key sums, q . sum, the top 2) within
#   1e-4 in decode steps and in one prefill call, decode steps match the
#   prefill call and 16-token chunked prefill (the caches stay whole: the
#   blocks may be anywhere before the window), and the blocks change the
#   logits; bits per byte with and without them are reported.
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
RING_CHUNK = 16
RING_ROWS = SINKS + WINDOW + RING_CHUNK - 1
RING = ["--prefill-chunk", str(RING_CHUNK)]
VARIANTS.update({"window-ring": VARIANTS["window"] + RING,
                 "window-ring-generic": VARIANTS["window-generic"] + RING})
TOPK, BLOCK = 2, 16
GLOBAL = ["--attention-global-topk", str(TOPK), "--attention-block",
          str(BLOCK)]
VARIANTS.update({"window-topk": VARIANTS["window"] + GLOBAL,
                 "window-topk-generic": VARIANTS["window-generic"] + GLOBAL})
PREFILL = {"window-prefill": VARIANTS["window"],
           "window-prefill-generic": VARIANTS["window-generic"],
           "window-ring-prefill": VARIANTS["window"] + RING,
           "window-ring-prefill-generic": VARIANTS["window-generic"] + RING,
           "window-topk-prefill": VARIANTS["window-topk"],
           "window-topk-prefill-generic": VARIANTS["window-topk-generic"],
           "window-topk-chunked-prefill": VARIANTS["window-topk"] + RING}
# Prefill variants scored in RING_CHUNK-token calls.
CHUNKED = {"window-ring-prefill", "window-ring-prefill-generic",
           "window-topk-chunked-prefill"}


def chunked_prefill_logits(bin_dir, artifact, seqs, tmp, tag):
    """cp.strata_prefill_logits in RING_CHUNK-token prefill calls."""
    save = cp.saver(tmp, tag)
    lines, calls = [], []
    for s in range(cp.SLOTS):
        for c0 in range(0, cp.LENGTH - 1, RING_CHUNK):
            c1 = min(c0 + RING_CHUNK, cp.LENGTH - 1)
            lines.append(
                f"prefill input_ids={save(f'p{s}_{c0}', seqs[s:s + 1, c0:c1])} "
                f"slot={save(f'slot{s}', np.array(s, np.int64))} "
                f"start={save(f'start{c0}', np.array(c0, np.int64))}")
            calls.append(s)
    out = cp.run_steps(bin_dir, artifact, lines, tmp, tag)
    rows = [[] for _ in range(cp.SLOTS)]
    for step, s in enumerate(calls):
        rows[s].append(np.load(os.path.join(out, str(step),
                                            "all_logits.npy"))[0])
    return np.stack([np.concatenate(r) for r in rows])


def hostile_ring_calls(bin_dir, artifact, seqs, tmp):
    """A ring holds positions up to the context like any cache: a decode
    past it (here the position table's gather says so first), or before 0
    (the cache's check), is a clear INVALID_ARGUMENT. Returns problems."""
    save = cp.saver(tmp, "hostile")
    problems = []
    for position in (cp.LENGTH, -1):
        line = (f"decode input_ids={save('ids', seqs[:1, :1])} "
                f"slots={save('slot', np.zeros(1, np.int64))} "
                f"positions={save(f'pos{position}', np.array([position]))}")
        want = (f"index {position} is out of range" if position > 0 else
                f"KV cache positions [{position}, {position + 1}) fall "
                f"outside the context [0, {cp.LENGTH})")
        try:
            cp.run_steps(bin_dir, artifact, [line], tmp, f"hostile{position}")
            problems.append(f"ring decode at position {position} ran")
        except RuntimeError as e:
            if want not in str(e):
                problems.append(f"ring decode at {position}: {e}")
    return problems


def ring_rows(bin_dir, artifact):
    """The sequence dim of the first layer's key cache, from --inspect."""
    proc = subprocess.run([os.path.join(bin_dir, "strata-run"), artifact,
                           "--inspect"], capture_output=True, text=True,
                          check=True, timeout=120)
    for line in proc.stdout.splitlines():
        if line.startswith("state kv_cache.0.key:"):
            return line.split("[", 1)[1].split(",")[2].strip()
    return None


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
            ring = "ring" in name
            rows = ring_rows(args.bin_dir, artifact)
            if ring and rows != str(RING_ROWS):
                problems.append(f"{name}: key cache rows {rows}, expected a "
                                f"ring of {RING_ROWS}")
            if not ring and rows != f"context<={cp.LENGTH}":
                problems.append(f"{name}: key cache rows {rows}, expected "
                                f"the context")
            if name in CHUNKED:
                score = chunked_prefill_logits
            elif prefill:
                score = cp.strata_prefill_logits
            else:
                score = cp.strata_logits
            logits[name] = score(args.bin_dir, artifact, seqs, tmp, name)
            if name == "window-ring":
                problems += hostile_ring_calls(args.bin_dir, artifact, seqs,
                                               tmp)

    def apart(a, b):
        return float(np.abs(logits[a] - logits[b]).max())

    results = {"window": WINDOW, "sinks": SINKS,
               "scored_bytes": int(cp.SLOTS * (cp.LENGTH - 1))}
    for name in logits:
        results[name] = {"bpb": cp.bits_per_byte(logits[name], seqs)}
    checks = [("window-context", "dense", 1e-5),
              ("window", "window-generic", 1e-4),
              ("window-prefill", "window-prefill-generic", 1e-4),
              ("window-ring", "window", 1e-4),
              ("window-ring-generic", "window-generic", 1e-4),
              ("window-ring-prefill", "window-prefill", 1e-4),
              ("window-ring-prefill-generic", "window-prefill-generic", 1e-4),
              ("window-topk", "window-topk-generic", 1e-4),
              ("window-topk-prefill", "window-topk-prefill-generic", 1e-4),
              ("window-topk", "window-topk-prefill", 1e-4),
              ("window-topk-chunked-prefill", "window-topk-prefill", 1e-4)]
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
    topk = results["window-topk"]["bpb"]
    print(f"bits per byte with {TOPK} global blocks of {BLOCK}: {topk:.4f} "
          f"({topk / dense:.4f}x dense)")
    if apart("window", "dense") < 1e-3:
        problems.append("the window changed nothing on stretches longer "
                        "than it")
    if apart("window-topk", "window") < 1e-3:
        problems.append("the global blocks changed nothing")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
