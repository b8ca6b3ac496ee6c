#!/usr/bin/env python3
# ===- bench/long_context.py - sliding-window decode at long contexts -----===#
# GPT-2-small with 16,640 positions (random weights), compiled twice from
# its with-past export with the same 512-token prefill chunks:
# - dense: every layer's KV cache spans the context (16,640 rows);
# - windowed: --attention-window 256 --attention-sinks 4, each layer's
#   cache a ring of 4 + 256 + 512 - 1 = 771 rows.
# Measured, in one run (medians over --rounds; strata-run generate, greedy):
# - decode step (TPOT of --steps tokens) after a prompt of 256 and of
#   16,384 tokens, both artifacts: the windowed step should not grow with
#   the context, the dense one grows by its attention's share;
# - whole-model prefill (TTFT) of a 4096-token prompt, dense vs windowed;
# - the windowed artifact's resident set while it generates --long tokens
#   after a 16-token prompt (sampled every 20 ms): after 1,000 tokens and
#   at the end, whole and anonymous (without the file pages of the mapped
#   weights, resident from the load on). --rounds 0 measures the resident
#   set alone.
#
# Usage: bench/long_context.py [--model-dir DIR] [--threads 2] [--rounds 3]
#        [--steps 32] [--long 16000] [--out FILE.json]
# The model: /usr/bin/python3 test/models/gen_size_ladder.py gpt2-small-16k
import argparse
import json
import os
import platform
import statistics
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generation  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WINDOW, SINKS, CHUNK = 256, 4, 512
SHORT, LONG_PROMPT, PREFILL = 256, 16384, 4096


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", default=os.path.expanduser(
        "~/.cache/strata/models/gpt2-small-16k"))
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--long", type=int, default=16000)
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    model = os.path.join(a.model_dir, "decode.onnx")
    if not os.path.exists(model):
        sys.exit(f"no model at {model} (/usr/bin/python3 "
                 "test/models/gen_size_ladder.py gpt2-small-16k)")
    with open(os.path.join(a.model_dir, "meta.json")) as f:
        context = json.load(f)["config"]["n_positions"]
    rng = np.random.default_rng(0)
    vocab = 50257
    result = {"machine": generation.cpu_isa(), "threads": a.threads,
              "model": a.model_dir, "context": context, "window": WINDOW,
              "sinks": SINKS, "prefill_chunk": CHUNK,
              "python": platform.python_version()}
    base = ["--max-batch", "1", "--max-seq", str(context), "--prefill-chunk",
            str(CHUNK)]
    flags = {"dense": base,
             "windowed": base + ["--attention-window", str(WINDOW),
                                 "--attention-sinks", str(SINKS)]}
    with tempfile.TemporaryDirectory() as tmp:
        artifacts = {}
        for name, extra in flags.items():
            artifacts[name] = os.path.join(tmp, name + ".strata")
            result[f"{name}_compile_s"] = generation.compile_artifact(
                a.bin_dir, model, artifacts[name], extra)

        def generate(name, length, new_tokens, rss=False):
            prompt = rng.integers(0, vocab, length).tolist()
            return generation.strata_generate(a.bin_dir, artifacts[name],
                                              [prompt], new_tokens, a.threads,
                                              tmp, rss=rss)

        # --rounds 0: the resident set alone.
        steps = {name: {SHORT: [], LONG_PROMPT: []} for name in flags}
        ttft = {name: [] for name in flags}
        for r in range(a.rounds):
            for name in flags:
                for length in (SHORT, LONG_PROMPT):
                    rec, _ = generate(name, length, a.steps)
                    steps[name][length].append(rec[0]["tpot_ms"])
                rec, _ = generate(name, PREFILL, 1)
                ttft[name].append(rec[0]["ttft_ms"])
                print(f"round {r} {name}: step {steps[name][SHORT][-1]:.2f} "
                      f"ms at {SHORT}, {steps[name][LONG_PROMPT][-1]:.2f} ms "
                      f"at {LONG_PROMPT}; prefill {PREFILL} "
                      f"{ttft[name][-1]:.0f} ms", flush=True)
        for name in flags if a.rounds > 0 else []:
            short = statistics.median(steps[name][SHORT])
            long = statistics.median(steps[name][LONG_PROMPT])
            result[name] = {
                "decode_step_ms": {str(SHORT): short, str(LONG_PROMPT): long},
                "decode_step_ratio": long / short,
                "decode_step_ms_per_round": {
                    str(k): v for k, v in steps[name].items()},
                f"prefill_{PREFILL}_ms": statistics.median(ttft[name]),
                f"prefill_{PREFILL}_ms_per_round": ttft[name]}
        if a.rounds > 0:
            result[f"prefill_{PREFILL}_dense_over_windowed"] = (
                result["dense"][f"prefill_{PREFILL}_ms"] /
                result["windowed"][f"prefill_{PREFILL}_ms"])

        # Resident set over a long windowed generation.
        rec, samples = generate("windowed", 16, a.long, rss=True)
        tpot_s = rec[0]["tpot_ms"] / 1e3
        t0 = samples[0][0] + rec[0]["ttft_ms"] / 1e3

        def rss_after(tokens, field):
            after = [s[field] for s in samples
                     if s[0] >= t0 + tokens * tpot_s]
            return after[0] / 1024 if after else None
        # Anonymous memory (heap, caches, scratch) apart from file pages:
        # the mapped weights page in as positions and token ids first
        # touch their embedding rows.
        result["windowed_rss"] = {
            "tokens": len(rec[0]["tokens"]),
            "after_1000_tokens_mb": rss_after(1000, 1),
            "end_mb": samples[-1][1] / 1024,
            "max_mb": max(s[1] for s in samples) / 1024,
            "anon_after_1000_tokens_mb": rss_after(1000, 2),
            "anon_end_mb": samples[-1][2] / 1024,
            "anon_max_mb": max(s[2] for s in samples) / 1024,
            "tpot_ms": rec[0]["tpot_ms"]}
    generation.report(result, a.out)


if __name__ == "__main__":
    main()
