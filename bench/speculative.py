#!/usr/bin/env python3
# ===- bench/speculative.py - speculative decoding against plain decode ----===#
# Batch 1, greedy, one run: the target generates each prompt plainly, with a
# draft model and with prompt lookup (adaptive draft length, and a fixed
# one), each prompt in every mode before the next. Five workloads:
# - held-out text: prompts cut from the trained fixture's held-out verses,
#   whose continuations are new text (prompt lookup has little to copy);
# - quoting: a verse, a newline and the verse's first words again, so the
#   output copies the prompt (what code edits and answers from retrieved
#   text look like) until the verse ends (some 80 of its 128 tokens);
# - rewriting: 112 bytes of held-out text (a verse and the start of the
#   next), a newline and their first 12 bytes again: the output can copy
#   100 of its 128 tokens, as an edited file or a reworded passage does;
# - regenerating: the verse's first 16 bytes, the target's own 80-token
#   greedy continuation of them, a newline and the 16 bytes again: the
#   output comes back to the text the prompt holds (a model asked to
#   redo an answer or a file it wrote earlier in the conversation). The
#   small target copies the quoted verses above only in part (it was not
#   trained to copy); here what it copies is its own text;
# - sampled: the held-out prompts sampled at temperature 0.8 (seeded), new
#   text that rarely repeats itself (greedy decoding of a small model
#   falls into loops, which prompt lookup then copies).
# Per mode: the share of drafts kept and of the output's tokens that were
# drafts kept (for prompt lookup: copied from earlier in the sequence).
# Decode speed is generated tokens after the first over the time between
# the first and the last (TPOT), summed over the prompts; the speedup is
# against plain decode in the same round, its median over the rounds
# reported. Also reported: what the calls cost (target decode, verify of n
# tokens, draft decode; strata-run --repeat medians), which decides where
# drafting pays.
#
# Usage: bench/speculative.py [--target-dir DIR] [--draft-dir DIR]
#        [--draft-flags FLAGS] [--threads 2] [--rounds 3] [--prompts 20]
#        [--new-tokens 128] [--workloads NAME,...] [--out FILE.json]
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
    ap.add_argument("--workloads",
                    help="comma-separated names (default: all)")
    ap.add_argument("--out")
    a = ap.parse_args()

    with open(os.path.join(FIXTURES, "bytegpt", "heldout.txt"), "rb") as f:
        text = f.read()
    # The model has 256 positions: a quoting prompt (a verse, a newline and
    # 12 bytes) and the new tokens must fit.
    verses = [v for v in text.split(b"\n") if 80 <= len(v) <= 100]
    step = len(verses) // a.prompts
    chosen = [verses[i * step] for i in range(a.prompts)]
    # Passages of 112 bytes from the start of a chosen verse on (into the
    # verses after it), and their opening again: the output can copy the
    # remaining 100 bytes. 125 bytes of prompt leave room for 128 new tokens.
    passages = [text[text.index(v):text.index(v) + 112] for v in chosen]
    assert all(len(p) == 112 for p in passages)
    workloads = {
        "held-out text": ([list(v[:48]) for v in chosen], []),
        "quoting": ([list(v) + [10] + list(v[:12]) for v in chosen], []),
        "rewriting": ([list(p) + [10] + list(p[:12]) for p in passages], []),
        # Built once the target is compiled (its own continuations).
        "regenerating": (None, []),
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

        names = list(modes)
        chosen_names = a.workloads.split(",") if a.workloads else list(workloads)
        for wname in chosen_names:
            prompts, sampling = workloads[wname]
            if prompts is None:
                # 16 + 80 + 1 + 16 prompt bytes and the new tokens fit in
                # the 256 positions.
                prompts = []
                for v in chosen:
                    seed = list(v[:16])
                    again = generate(a.bin_dir, target, seed, a.threads, 80,
                                     [])["tokens"]
                    prompts.append(seed + again + [10] + seed)
            per_round = {m: [] for m in modes}
            stats = {m: {} for m in modes}
            for r in range(a.rounds):
                # Each prompt runs in every mode before the next prompt, the
                # modes' order turning with the prompt: the host's memory
                # bandwidth moves within seconds, and a mode run all at once
                # could sit in another state than plain decode.
                sums = {m: [0, 0.0, 0, 0, 0] for m in modes}
                outputs = {m: [] for m in modes}
                for i, p in enumerate(prompts):
                    for j in range(len(names)):
                        mname = names[(i + j) % len(names)]
                        flags = [draft if f == "DRAFT" else f
                                 for f in modes[mname]] + sampling
                        g = generate(a.bin_dir, target, p, a.threads,
                                     a.new_tokens, flags)
                        n = len(g["tokens"]) - 1
                        acc = sums[mname]
                        acc[0] += n
                        acc[1] += n * g["tpot_ms"]
                        acc[2] += g["draft_tokens"]
                        acc[3] += g["accepted_draft_tokens"]
                        acc[4] += g["target_steps"]
                        outputs[mname].append(g["tokens"])
                for mname in modes:
                    tokens, ms, drafted, accepted, steps = sums[mname]
                    per_round[mname].append(1000.0 * tokens / ms)
                    stats[mname] = {
                        "acceptance_rate": accepted / drafted if drafted else None,
                        "tokens_per_target_step": tokens / steps if steps else None,
                        "drafted": drafted, "accepted": accepted,
                        "output_from_drafts": accepted / tokens if tokens else None}
                    if (mname != "plain" and not sampling and
                            outputs[mname] != outputs["plain"]):
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
                             f"target step, "
                             f"{100 * s['output_from_drafts']:.0f}% of the "
                             f"output from drafts")
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
