#!/usr/bin/env python3
# ===- bench/speculative.py - speculative decoding against plain decode ----===#
# Batch 1, greedy, one run: the target generates each prompt plainly, with a
# draft model and with prompt lookup (adaptive draft length, and a fixed
# one), rounds interleaving the modes. Two workloads:
# - held-out text: prompts cut from the trained fixture's held-out verses,
#   whose continuations are new text (prompt lookup has little to copy);
# - quoting: a verse, a newline and the verse's first words again, so the
#   output copies the prompt (what code edits and answers from retrieved
#   text look like);
# - sampled: the held-out prompts sampled at temperature 0.8 (seeded), new
#   text that rarely repeats itself (greedy decoding of a small model
#   falls into loops, which prompt lookup then copies).
# Decode speed is generated tokens after the first over the time between
# the first and the last (TPOT), summed over the prompts; the speedup is
# against plain decode in the same round, its median over the rounds
# reported. Also reported: what the calls cost (target decode, verify of n
# tokens, draft decode; strata-run --repeat medians), which decides where
# drafting pays.
#
# Usage: bench/speculative.py [--target-dir DIR] [--draft-dir DIR]
#        [--draft-flags FLAGS] [--threads 2] [--rounds 3] [--prompts 20]
#        [--new-tokens 128] [--out FILE.json]
# The directories hold prefill.onnx and decode.onnx (default: the trained
# fixtures bytegpt and bytegpt_draft); prompts are bytes of the fixture's
# held-out text (valid ids of any vocabulary of 256 or more).
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generation import cpu_isa  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "test", "models", "fixtures")


def compile_pair(bin_dir, model_dir, out, max_seq, extra=()):
    subprocess.run([os.path.join(bin_dir, "strata-compile"),
                    os.path.join(model_dir, "prefill.onnx"),
                    os.path.join(model_dir, "decode.onnx"), "-o", out,
                    "--quiet", "--max-batch", "1", "--max-seq", str(max_seq),
                    *extra], check=True)


def generate(bin_dir, target, prompt_ids, threads, new_tokens, flags):
    out = subprocess.run(
        [os.path.join(bin_dir, "strata-run"), "generate", target,
         "--prompt-ids", ",".join(map(str, prompt_ids)), "--max-new-tokens",
         str(new_tokens), "--threads", str(threads), "--json", *flags],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def call_ms(bin_dir, artifact, entry, inputs, threads, tmp):
    args = []
    for name, array in inputs.items():
        path = os.path.join(tmp, f"{entry}_{name}.npy")
        np.save(path, array)
        args += ["--input", f"{name}={path}"]
    out = subprocess.run([os.path.join(bin_dir, "strata-run"), artifact,
                          "--entry", entry, *args, "--repeat", "300",
                          "--threads", str(threads), "--json"],
                         check=True, capture_output=True, text=True).stdout
    runs = json.loads(out)["runs_ms"][50:]  # after the warm-up
    return statistics.median(runs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target-dir", default=os.path.join(FIXTURES, "bytegpt"))
    ap.add_argument("--draft-dir", default=os.path.join(FIXTURES, "bytegpt_draft"))
    ap.add_argument("--draft-flags", default="",
                    help="strata-compile flags of the draft, e.g. "
                         "'--decode-precision int4 --prefill-weights shared' "
                         "with --draft-dir = --target-dir: the target's own "
                         "weights, quantized, as its draft")
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--prompts", type=int, default=20)
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--out")
    a = ap.parse_args()

    with open(os.path.join(FIXTURES, "bytegpt", "heldout.txt"), "rb") as f:
        # The model has 256 positions: a quoting prompt (a verse, a newline
        # and 12 bytes) and the new tokens must fit.
        verses = [v for v in f.read().split(b"\n") if 80 <= len(v) <= 100]
    step = len(verses) // a.prompts
    chosen = [verses[i * step] for i in range(a.prompts)]
    workloads = {
        "held-out text": ([list(v[:48]) for v in chosen], []),
        "quoting": ([list(v) + [10] + list(v[:12]) for v in chosen], []),
        "sampled": ([list(v[:48]) for v in chosen],
                    ["--temperature", "0.8", "--seed", "1"]),
    }
    modes = {
        "plain": [],
        "draft model": ["--draft", "DRAFT"],
        "draft model, 3 drafts": ["--draft", "DRAFT", "--fixed-draft-tokens",
                                  "--max-draft-tokens", "3"],
        "prompt lookup": ["--prompt-lookup"],
        "prompt lookup, 8 drafts": ["--prompt-lookup", "--fixed-draft-tokens",
                                    "--max-draft-tokens", "8"],
    }
    max_seq = 256
    result = {"host": cpu_isa(), "threads": a.threads, "rounds": a.rounds,
              "prompts": a.prompts, "new_tokens": a.new_tokens,
              "target": os.path.relpath(a.target_dir, ROOT),
              "draft": os.path.relpath(a.draft_dir, ROOT),
              "draft_flags": a.draft_flags, "workloads": {}}
    with tempfile.TemporaryDirectory() as tmp:
        target = os.path.join(tmp, "target.strata")
        draft = os.path.join(tmp, "draft.strata")
        compile_pair(a.bin_dir, a.target_dir, target, max_seq)
        compile_pair(a.bin_dir, a.draft_dir, draft, max_seq,
                     a.draft_flags.split())

        # What the calls cost, at position 100 of slot 0.
        slot = np.array([0], np.int64)
        pos = np.array([100], np.int64)
        costs = {"target decode": call_ms(
            a.bin_dir, target, "decode", {"input_ids": np.full((1, 1), 65, np.int64),
                                          "slots": slot, "positions": pos},
            a.threads, tmp)}
        for n in (2, 3, 5, 9):
            costs[f"target verify {n}"] = call_ms(
                a.bin_dir, target, "verify",
                {"input_ids": np.full((1, n), 65, np.int64), "slots": slot,
                 "positions": pos}, a.threads, tmp)
        costs["draft decode"] = call_ms(
            a.bin_dir, draft, "decode", {"input_ids": np.full((1, 1), 65, np.int64),
                                         "slots": slot, "positions": pos},
            a.threads, tmp)
        result["call_ms"] = costs
        print("call costs (ms): " + ", ".join(f"{k} {v:.3f}" for k, v in costs.items()))

        for wname, (prompts, sampling) in workloads.items():
            per_round = {m: [] for m in modes}
            stats = {m: {} for m in modes}
            for r in range(a.rounds):
                for mname, flags in modes.items():
                    flags = [draft if f == "DRAFT" else f for f in flags]
                    flags += sampling
                    tokens, ms, drafted, accepted, steps = 0, 0.0, 0, 0, 0
                    outputs = []
                    for p in prompts:
                        g = generate(a.bin_dir, target, p, a.threads,
                                     a.new_tokens, flags)
                        n = len(g["tokens"]) - 1
                        tokens += n
                        ms += n * g["tpot_ms"]
                        drafted += g["draft_tokens"]
                        accepted += g["accepted_draft_tokens"]
                        steps += g["target_steps"]
                        outputs.append(g["tokens"])
                    per_round[mname].append(1000.0 * tokens / ms)
                    stats[mname] = {
                        "acceptance_rate": accepted / drafted if drafted else None,
                        "tokens_per_target_step": tokens / steps if steps else None,
                        "drafted": drafted, "accepted": accepted}
                    if mname == "plain":
                        plain_outputs = outputs
                    elif outputs != plain_outputs and not sampling:
                        print(f"warning: {mname} output differs from plain")
            summary = {}
            for mname in modes:
                speedups = [x / p for x, p in zip(per_round[mname], per_round["plain"])]
                summary[mname] = {
                    "tokens_per_s": per_round[mname],
                    "speedup_median": statistics.median(speedups),
                    "speedups": speedups, **stats[mname]}
                s = summary[mname]
                extra = ""
                if s["acceptance_rate"] is not None:
                    extra = (f", {100 * s['acceptance_rate']:.1f}% of drafts kept, "
                             f"{s['tokens_per_target_step']:.2f} tokens per "
                             f"target step")
                print(f"{wname:14s} {mname:24s} "
                      f"{statistics.median(per_round[mname]):8.0f} tokens/s, "
                      f"{s['speedup_median']:.2f}x plain{extra}")
            result["workloads"][wname] = summary
    if a.out:
        with open(a.out, "w") as f:
            json.dump(result, f, indent=1)
    print(f"host: {result['host']}, {a.threads} threads")


if __name__ == "__main__":
    main()
