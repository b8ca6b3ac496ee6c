#!/usr/bin/env python3
# ===- bench/cluster/interference.py - two instances on one host ----------===#
# SPDX-License-Identifier: Apache-2.0
# Measures how much a prefill instance and a decode instance that share one
# host (its cores, caches and memory bandwidth) slow each other, and adds
# the two factors to a costs JSON as "shared_host" (the simulator applies
# them to a 1:1 disaggregated cluster on one host, validate.py
# --disaggregate):
#   - decode_slowdown: the TPOT of a decode-bound run (one short prompt,
#     many new tokens) while a prefill-bound run (long prompts, one new
#     token each) keeps the other core busy, over its TPOT alone;
#   - prefill_slowdown: the mean prefill time (TTFT) of the prefill-bound
#     run while a decode-bound run keeps the other core busy, over alone.
# Both runs use the costs' thread count per instance. Medians of --rounds,
# alone and together interleaved.
#
#   python3 bench/cluster/interference.py --artifact MODEL.strata
#       [--costs bench/results/cluster/costs-gpt2-small.json] [--rounds 3]
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DECODE_PROMPT, DECODE_TOKENS = 64, 96
PREFILL_PROMPT, PREFILL_PROMPTS = 384, 6


TEMPORARY = []


def prompts_file(rng, vocab, count, length):
    f = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
    TEMPORARY.append(f.name)
    for _ in range(count):
        f.write(",".join(str(rng.randrange(3, vocab)) for _ in range(length))
                + "\n")
    f.close()
    return f.name


def command(args, prompts, new_tokens):
    return [os.path.join(args.bin_dir, "strata-run"), "generate",
            args.artifact, "--batch-prompt-ids", prompts, "--max-new-tokens",
            str(new_tokens), "--threads", str(args.threads), "--json"]


def parse(out):
    return [json.loads(line) for line in out.splitlines()
            if line.startswith("{") and "tokens" in line]


def run(cmd, background=None):
    """|cmd|'s per-prompt records; |background| (a command) runs beside it,
    repeated until |cmd| ends, then stopped."""
    others = []
    if background:
        others.append(subprocess.Popen(background, stdout=subprocess.DEVNULL))
    try:
        return parse(subprocess.run(cmd, check=True, capture_output=True,
                                    text=True).stdout)
    finally:
        for p in others:
            p.kill()
            p.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--artifact", required=True)
    parser.add_argument("--costs", default=os.path.join(
        ROOT, "bench", "results", "cluster", "costs-gpt2-small.json"))
    parser.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--vocab", type=int, default=50257)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    with open(args.costs) as f:
        costs = json.load(f)
    args.threads = costs["instance"]["threads"]
    rng = random.Random(args.seed)
    decode_ids = prompts_file(rng, args.vocab, 1, DECODE_PROMPT)
    prefill_ids = prompts_file(rng, args.vocab, PREFILL_PROMPTS, PREFILL_PROMPT)
    # The neighbours run long enough to outlast what is timed.
    busy_prefill = command(args, prompts_file(rng, args.vocab, 4 * PREFILL_PROMPTS,
                                              PREFILL_PROMPT), 1)
    busy_decode = command(args, decode_ids, 4 * DECODE_TOKENS)
    decode = command(args, decode_ids, DECODE_TOKENS)
    prefill = command(args, prefill_ids, 1)
    samples = {k: [] for k in ("decode_alone", "decode_shared",
                               "prefill_alone", "prefill_shared")}
    for _ in range(args.rounds):
        samples["decode_alone"].append(run(decode)[0]["tpot_ms"])
        samples["decode_shared"].append(run(decode, busy_prefill)[0]["tpot_ms"])
        samples["prefill_alone"].append(
            statistics.fmean(r["ttft_ms"] for r in run(prefill)))
        samples["prefill_shared"].append(
            statistics.fmean(r["ttft_ms"] for r in run(prefill, busy_decode)))
    for path in TEMPORARY:
        os.unlink(path)
    med = {k: statistics.median(v) for k, v in samples.items()}
    costs["shared_host"] = {
        "decode_slowdown": med["decode_shared"] / med["decode_alone"],
        "prefill_slowdown": med["prefill_shared"] / med["prefill_alone"],
        "ms": med,
        "how": "bench/cluster/interference.py: strata-run generate, %d "
               "thread(s) per instance; decode-bound: a %d-token prompt, %d "
               "new tokens (TPOT); prefill-bound: %d prompts of %d tokens, "
               "1 new token (mean TTFT); each alone and beside the other "
               "kind, medians of %d rounds"
               % (args.threads, DECODE_PROMPT, DECODE_TOKENS, PREFILL_PROMPTS,
                  PREFILL_PROMPT, args.rounds),
    }
    with open(args.costs, "w") as f:
        json.dump(costs, f, indent=1)
        f.write("\n")
    print(json.dumps({k: v for k, v in costs["shared_host"].items()
                      if k != "how"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
