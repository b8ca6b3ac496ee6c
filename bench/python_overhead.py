#!/usr/bin/env python3
# ===- bench/python_overhead.py - what the Python layer costs ---------------===#
# Two measurements of the strata package against the runtime it wraps:
#  1. session.run on one decode step, batch 1 at position --ctx: Python's
#     wall time per call against the runtime's own time inside it
#     (Session.last_run_seconds), median over --runs calls per round; for
#     the `decode` entry (the runtime owns the KV cache: 3 inputs, 1
#     output) and for the with-past `main` entry (the cache passed in and
#     out: 2 + 2L inputs, 1 + 2L outputs, as an onnxruntime user runs it);
#  2. generation: strata.Generator's tokens/s against `strata-run generate`
#     on the same artifact, prompt and length (greedy), rounds alternating.
# The default model is the trained byte-level GPT fixture, whose decode
# step (~0.3 ms) makes any per-call cost as visible as it gets; --model
# takes any with-past decoder (e.g. ~/.cache/strata/models/gpt2-small/
# decode.onnx). Run with a Python that has the package installed.
#
# Usage: bench/python_overhead.py [--model M.onnx] [--bin-dir build/bin]
#        [--threads 2] [--ctx 128] [--runs 200] [--rounds 5]
#        [--prompt 16] [--new-tokens 64] [--out FILE.json]
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import strata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def step_inputs(entry, ctx):
    """Batch 1, one new token, |ctx| cached positions, for the main entry
    of a with-past export (dims named as torch/transformers name them)."""
    sizes = {"batch": 1, "sequence": 1, "past_sequence": ctx,
             "total_sequence": ctx + 1}
    rng = np.random.default_rng(0)
    inputs = {}
    for t in entry.inputs:
        shape = [d.extent if d.symbol is None else sizes.get(d.symbol, 1)
                 for d in t.dims]
        if t.name == "input_ids":
            inputs[t.name] = rng.integers(0, 200, shape).astype(t.numpy_dtype)
        elif t.numpy_dtype.kind in "iu":
            inputs[t.name] = np.ones(shape, t.numpy_dtype)
        else:
            inputs[t.name] = rng.standard_normal(shape).astype(t.numpy_dtype)
    return inputs


def decode_inputs(ctx):
    """The decode entry's: one token of sequence slot 0 at position |ctx|."""
    return {"input_ids": np.array([[65]], np.int64),
            "slots": np.array([0], np.int64),
            "positions": np.array([ctx], np.int64)}


def run_overhead(module, entry, inputs, threads, runs):
    session = module.session(threads)
    for _ in range(10):
        session.run(inputs, entry=entry)
    wall, inner = [], []
    for _ in range(runs):
        start = time.perf_counter()
        session.run(inputs, entry=entry)
        wall.append(time.perf_counter() - start)
        inner.append(session.last_run_seconds)
    w, r = statistics.median(wall), statistics.median(inner)
    return {"step_ms": w * 1e3, "runtime_ms": r * 1e3,
            "python_us": (w - r) * 1e6, "overhead_fraction": (w - r) / w}


def python_generate(module, threads, prompt, new_tokens):
    generator = strata.Generator(module, threads=threads)
    g = generator.generate(prompt, max_new_tokens=new_tokens)
    return g.metrics


def cli_generate(bin_dir, artifact, threads, prompt, new_tokens):
    out = subprocess.run(
        [os.path.join(bin_dir, "strata-run"), "generate", artifact,
         "--prompt-ids", ",".join(map(str, prompt)), "--max-new-tokens",
         str(new_tokens), "--threads", str(threads), "--json"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(
        ROOT, "test/models/fixtures/bytegpt/decode.onnx"))
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build/bin"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ctx", type=int, default=128)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--prompt", type=int, default=16)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--out")
    a = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        artifact = strata.compile(a.model, os.path.join(tmp, "m.strata"),
                                  max_batch=1,
                                  max_seq=max(256, a.ctx + 1,
                                              a.prompt + a.new_tokens))
        module = artifact.load()
        prompt = [int(t) for t in
                  np.random.default_rng(1).integers(32, 127, a.prompt)]
        rounds = []
        for r in range(a.rounds):
            step = run_overhead(module, "decode", decode_inputs(a.ctx),
                                a.threads, a.runs)
            past = run_overhead(module, "main",
                                step_inputs(module.entries["main"], a.ctx),
                                a.threads, a.runs)
            py = python_generate(module, a.threads, prompt, a.new_tokens)
            cli = cli_generate(a.bin_dir, artifact.path, a.threads, prompt,
                               a.new_tokens)
            rounds.append({"step": step, "with_past_step": past,
                           "python_tokens_per_s":
                           py["tokens_per_second"],
                           "cli_tokens_per_s": cli["tokens_per_s"],
                           "python_tpot_ms": py["tpot_ms"],
                           "cli_tpot_ms": cli["tpot_ms"]})
            print(f"round {r}: decode step {step['step_ms']:.3f} ms, Python "
                  f"{step['python_us']:.1f} us "
                  f"({100 * step['overhead_fraction']:.2f}%); with past "
                  f"{past['step_ms']:.3f} ms, Python {past['python_us']:.1f}"
                  f" us ({100 * past['overhead_fraction']:.2f}%); generate "
                  f"{py['tokens_per_second']:.0f} vs "
                  f"{cli['tokens_per_s']:.0f} tokens/s", file=sys.stderr)

    med = lambda key, sub=None: statistics.median(  # noqa: E731
        r[sub][key] if sub else r[key] for r in rounds)
    report = {
        "machine": f"{platform.processor() or platform.machine()}, "
                   f"kernels {strata.kernel_isa()}",
        "model": (os.path.relpath(a.model, ROOT)
                  if os.path.abspath(a.model).startswith(ROOT + os.sep)
                  else a.model.replace(os.path.expanduser("~"), "~")),
        "threads": a.threads, "ctx": a.ctx, "runs": a.runs,
        "rounds": a.rounds, "prompt": a.prompt, "new_tokens": a.new_tokens,
        "step_ms": med("step_ms", "step"),
        "runtime_ms": med("runtime_ms", "step"),
        "python_overhead_us": med("python_us", "step"),
        "python_overhead_fraction": med("overhead_fraction", "step"),
        "with_past_step_ms": med("step_ms", "with_past_step"),
        "with_past_python_overhead_us": med("python_us", "with_past_step"),
        "with_past_python_overhead_fraction": med("overhead_fraction",
                                                  "with_past_step"),
        "python_tokens_per_s": med("python_tokens_per_s"),
        "cli_tokens_per_s": med("cli_tokens_per_s"),
        "python_over_cli": med("python_tokens_per_s") /
        med("cli_tokens_per_s"),
        "per_round": rounds,
    }
    text = json.dumps(report, indent=1)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
