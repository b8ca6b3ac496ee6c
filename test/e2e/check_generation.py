#!/usr/bin/env python3
# ===- test/e2e/check_generation.py - prefill/decode match onnxruntime -----===#
# For every decoder fixture (a graph without past, one with past/present,
# and the pair of them compiled together), compiles with default options
# (the artifact gets the prefill and decode entries) and replays on one
# session, with `strata-run --steps`:
# - prefill of a prompt, then decode steps teacher-forced with the rest of
#   the token sequence: each step's logits against onnxruntime's logits of
#   the original graph over the whole sequence at once (no past);
# - the same prompt prefilled in chunks of 3 tokens: the last logits again;
# - four sequences with different prompt lengths in four slots, decoded in
#   one batch (rows at different positions): each row against its own
#   sequence's reference.
# - the verify entry (speculative decoding): four tokens of each of the
#   four sequences in one call, every position's logits against the
#   reference; then wrong tokens verified over three of those positions and
#   rolled back by a decode step of the true token at the first of them.
# - hostile calls (a slot outside the cache, a position at the context, a
#   prefill chunk running past it): INVALID_ARGUMENT naming the cache.
# fp32 tolerance as test/e2e/check_fixtures.py: max|y - ref| <= 1e-4 *
# max(1, max|ref|) (the cached form sums the same products in another
# order; a wrong position, slot or mask moves logits by >= 1e-2).
#
# Usage: check_generation.py MODELS_DIR BIN_DIR [--filter REGEX]
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

TOLERANCE = 1e-4
SEQUENCE = 12      # tokens per sequence
PROMPTS = [5, 3, 7, 4]  # prompt lengths of the four batched sequences
MAX_SEQ = 32


def ort_logits(model, ids):
    """Logits [1, L, V] of |ids| [1, L] through the original graph, from an
    empty past, all-ones mask and positions 0..L-1."""
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    feeds = {}
    length = ids.shape[1]
    for i in session.get_inputs():
        if i.name == "input_ids":
            feeds[i.name] = ids
        elif i.name == "attention_mask":
            feeds[i.name] = np.ones((1, length), np.int64)
        elif i.name == "position_ids":
            feeds[i.name] = np.arange(length, dtype=np.int64)[None]
        elif "past" in i.name:
            shape = [1 if d == 0 else 0 if isinstance(d, str) or d is None
                     else d for d in i.shape]
            shape[0] = 1
            feeds[i.name] = np.zeros(shape, np.float32)
        else:
            raise RuntimeError(f"unexpected input {i.name}")
    return session.run(["logits"], feeds)[0]


def save(tmp, name, array):
    path = os.path.join(tmp, name + ".npy")
    np.save(path, array)
    return path


def compare(got, want, what):
    tol = TOLERANCE * max(1.0, float(np.abs(want).max()))
    err = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max())
    if not err <= tol:  # NaN fails too
        return f"{what}: max abs error {err:.3g} > {tol:.3g}"
    return None


def replay(bin_dir, artifact, steps, tmp, tag):
    steps_file = os.path.join(tmp, tag + ".steps")
    with open(steps_file, "w") as f:
        for entry, inputs in steps:
            f.write(entry + " " + " ".join(f"{k}={v}" for k, v in
                                           inputs.items()) + "\n")
    out = os.path.join(tmp, tag + ".out")
    proc = subprocess.run([os.path.join(bin_dir, "strata-run"), artifact,
                           "--steps", steps_file, "--output-dir", out],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip())
    return [np.load(os.path.join(out, str(k), "logits.npy"))
            for k in range(len(steps))]


def prefill_steps(tmp, tag, ids, slot, chunk, first=0):
    """Prefill calls for |ids| in chunks, the first token at position
    |first|."""
    steps = []
    for start in range(0, ids.shape[1], chunk):
        part = ids[:, start:start + chunk]
        steps.append(("prefill", {
            "input_ids": save(tmp, f"{tag}_ids{start}", part),
            "slot": save(tmp, f"{tag}_slot", np.array(slot, np.int64)),
            "start": save(tmp, f"{tag}_start{start}",
                          np.array(first + start, np.int64))}))
    return steps


def decode_step(tmp, tag, ids, slots, positions):
    return ("decode", {
        "input_ids": save(tmp, tag + "_ids", np.array(ids, np.int64)[:, None]),
        "slots": save(tmp, tag + "_slots", np.array(slots, np.int64)),
        "positions": save(tmp, tag + "_pos", np.array(positions, np.int64))})


def verify_step(tmp, tag, ids, slots, positions):
    return ("verify", {
        "input_ids": save(tmp, tag + "_ids", np.array(ids, np.int64)),
        "slots": save(tmp, tag + "_slots", np.array(slots, np.int64)),
        "positions": save(tmp, tag + "_pos", np.array(positions, np.int64))})


def check_model(bin_dir, model, vocab, tmp, tag, compile_inputs=None):
    """|compile_inputs|: what strata-compile gets (default |model|; a
    decoder and its with-past export for the pair form)."""
    artifact = os.path.join(tmp, tag + ".strata")
    proc = subprocess.run([os.path.join(bin_dir, "strata-compile")] +
                          (compile_inputs or [model]) +
                          ["-o", artifact, "--quiet", "--max-seq",
                           str(MAX_SEQ), "--max-batch", "4"],
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        return f"compile: {proc.stderr.strip()}"
    rng = np.random.default_rng(7)
    seqs = [rng.integers(0, vocab, (1, SEQUENCE), dtype=np.int64)
            for _ in PROMPTS]
    refs = [ort_logits(model, s)[0] for s in seqs]
    problems = []

    # One sequence: prefill, then teacher-forced decode steps.
    p = PROMPTS[0]
    steps = prefill_steps(tmp, tag + "_a", seqs[0][:, :p], 2, p)
    for t in range(p, SEQUENCE):
        steps.append(decode_step(tmp, f"{tag}_a{t}", [seqs[0][0, t]], [2],
                                 [t]))
    got = replay(bin_dir, artifact, steps, tmp, tag + "_single")
    problems.append(compare(got[0][0], refs[0][p - 1], "prefill"))
    for t in range(p, SEQUENCE):
        problems.append(compare(got[t - p + 1][0], refs[0][t], f"decode {t}"))

    # Chunked prefill.
    got = replay(bin_dir, artifact,
                 prefill_steps(tmp, tag + "_c", seqs[0][:, :p], 1, 3), tmp,
                 tag + "_chunked")
    problems.append(compare(got[-1][0], refs[0][p - 1], "chunked prefill"))

    # Four sequences in four slots, decoded together.
    steps = []
    for b, (s, p) in enumerate(zip(seqs, PROMPTS)):
        steps += prefill_steps(tmp, f"{tag}_b{b}", s[:, :p], 3 - b, p)
    positions = list(PROMPTS)
    while max(positions) < SEQUENCE:
        rows = [b for b in range(4) if positions[b] < SEQUENCE]
        steps.append(decode_step(
            tmp, f"{tag}_bd{len(steps)}", [seqs[b][0, positions[b]]
                                          for b in rows],
            [3 - b for b in rows], [positions[b] for b in rows]))
        positions = [q + 1 if q < SEQUENCE else q for q in positions]
    got = replay(bin_dir, artifact, steps, tmp, tag + "_batch")
    positions = list(PROMPTS)
    for k, logits in enumerate(got[4:]):
        rows = [b for b in range(4) if positions[b] < SEQUENCE]
        for r, b in enumerate(rows):
            problems.append(compare(logits[r], refs[b][positions[b]],
                                    f"batched row {b} at {positions[b]}"))
        positions = [q + 1 if q < SEQUENCE else q for q in positions]

    # Verify: n tokens per row at the rows' own positions, then a rejected
    # draft rolled back.
    n = 4
    slots = [3 - b for b in range(4)]
    steps = []
    for b, (s, p) in enumerate(zip(seqs, PROMPTS)):
        steps += prefill_steps(tmp, f"{tag}_v{b}", s[:, :p], slots[b], p)
    ids = np.stack([s[0, p:p + n] for s, p in zip(seqs, PROMPTS)])
    steps.append(verify_step(tmp, tag + "_vv", ids, slots, PROMPTS))
    steps.append(verify_step(tmp, tag + "_vw", (ids[:, 1:] + 1) % vocab, slots,
                             [p + 1 for p in PROMPTS]))
    steps.append(decode_step(tmp, tag + "_vd", ids[:, 1], slots,
                             [p + 1 for p in PROMPTS]))
    got = replay(bin_dir, artifact, steps, tmp, tag + "_verify")
    for b, p in enumerate(PROMPTS):
        for t in range(n):
            problems.append(compare(got[4][b, t], refs[b][p + t],
                                    f"verify row {b} at {p + t}"))
        problems.append(compare(got[6][b], refs[b][p + 1],
                                f"decode of row {b} after a rejected draft"))

    # Hostile calls: a clear INVALID_ARGUMENT naming the cache, no crash.
    tok = seqs[0][0, :1]
    hostile = [
        ("slot 99", [decode_step(tmp, tag + "_h1", tok, [99], [0])],
         "KV cache slot 99 is outside [0, 4)"),
        ("slot -1", [decode_step(tmp, tag + "_h2", tok, [-1], [0])],
         "KV cache slot -1 is outside [0, 4)"),
        ("position at context",
         [decode_step(tmp, tag + "_h3", tok, [0], [MAX_SEQ])],
         f"KV cache positions [{MAX_SEQ}, {MAX_SEQ + 1}) fall outside the "
         f"context [0, {MAX_SEQ})"),
        ("prefill past the context",
         prefill_steps(tmp, tag + "_h4", seqs[0][:, :3], 0, 3,
                       first=MAX_SEQ - 2),
         f"KV cache positions [{MAX_SEQ - 2}, {MAX_SEQ + 1}) fall "
         f"outside the context [0, {MAX_SEQ})")]
    for what, steps, message in hostile:
        try:
            replay(bin_dir, artifact, steps, tmp, tag + "_hostile")
            problems.append(f"{what}: accepted")
        except RuntimeError as e:
            if "INVALID_ARGUMENT" not in str(e) or message not in str(e):
                problems.append(f"{what}: {e}")
    problems = [x for x in problems if x]
    return "; ".join(problems[:3]) if problems else None


def run_case(label, check):
    """Prints one PASS/FAIL line for |check|() (None or the problem);
    returns whether it passed."""
    try:
        problem = check()
    except RuntimeError as e:
        problem = str(e)
    print(("PASS " if not problem else "FAIL ") + label +
          ("" if not problem else f": {problem}"), flush=True)
    return not problem


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models_dir")
    ap.add_argument("bin_dir")
    ap.add_argument("--filter", default="")
    a = ap.parse_args()
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="strata-gen-") as tmp:
        for meta_path in sorted(glob.glob(os.path.join(
                a.models_dir, "fixtures", "*", "meta.json"))):
            fixture = os.path.dirname(meta_path)
            meta = json.load(open(meta_path))
            if not meta.get("causal"):
                continue
            models = sorted(glob.glob(os.path.join(fixture, "*.onnx")))
            for model in models:
                label = os.path.relpath(model, a.models_dir)
                if a.filter and not re.search(a.filter, label):
                    continue
                vocab = meta.get("vocab")
                if vocab is None:
                    vocab = onnx.load(model, load_external_data=False) \
                        .graph.output[0].type.tensor_type.shape.dim[2] \
                        .dim_value
                tag = re.sub(r"[^A-Za-z0-9]", "_", label)
                ok = run_case(label, lambda: check_model(
                    a.bin_dir, model, vocab, tmp, tag))
                passed += ok
                failed += not ok
            # The pair form: the export without past and its with-past twin
            # (same weights) compiled together.
            pair = None
            if os.path.basename(fixture).endswith("_prefill"):
                twin = fixture[:-len("_prefill")] + "_past"
                if os.path.isfile(os.path.join(twin, "model.onnx")):
                    pair = [os.path.join(fixture, "model.onnx"),
                            os.path.join(twin, "model.onnx")]
            elif "prefill" in meta and "decode" in meta:
                pair = [os.path.join(fixture, meta["prefill"]),
                        os.path.join(fixture, meta["decode"])]
            if pair:
                label = os.path.relpath(pair[0], a.models_dir) + " + " + \
                    os.path.basename(os.path.dirname(pair[1])) + "/" + \
                    os.path.basename(pair[1])
                if a.filter and not re.search(a.filter, label):
                    continue
                tag = re.sub(r"[^A-Za-z0-9]", "_", label)
                ok = run_case(label, lambda: check_model(
                    a.bin_dir, pair[1], meta.get("vocab"), tmp, tag,
                    compile_inputs=pair))
                passed += ok
                failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
