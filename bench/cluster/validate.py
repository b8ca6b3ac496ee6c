#!/usr/bin/env python3
# ===- bench/cluster/validate.py - The simulator against a real run --------===#
# SPDX-License-Identifier: Apache-2.0
# Runs a batch of prompts through strata-run generate (one colocated
# instance: prompts prefilled whole as slots free up, decode steps over
# every sequence with its first token) and the same batch through the
# simulator with the calibrated costs, and compares TTFT and TPOT per
# prompt. strata-run adds a sequence right before its prefill and times its
# TTFT from there, so the simulated TTFT is taken from the prefill's start;
# the TPOT holds the later prompts' prefills that interrupt the decoding.
# With --disaggregate the real run is `mpirun -np 2 strata-run generate
# --disaggregate` (rank 0 prefills and sends each cache, rank 1 decodes)
# and the simulated cluster 1 prefill + 1 decode instance over the
# measured link; both TTFTs then count from the run's start (every request
# arrives at once) to the first token on the decode side, and the TPOT
# from there.
#
#   python bench/cluster/validate.py --artifact MODEL.strata [--disaggregate]
#       [--costs bench/results/cluster/costs-gpt2-small.json]
#       [--prompts 12] [--new-tokens 32] [--out FILE.json]
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
ROOT = os.path.dirname(os.path.dirname(HERE))

import simulate  # noqa: E402
import workload  # noqa: E402
from costs import Costs  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--artifact", required=True)
    parser.add_argument("--costs", default=os.path.join(
        ROOT, "bench", "results", "cluster", "costs-gpt2-small.json"))
    parser.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--prompts", type=int, default=12)
    parser.add_argument("--prompt-range", default="32,320")
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--disaggregate", action="store_true",
                        help="1 prefill + 1 decode process (mpirun -np 2)")
    parser.add_argument("--out")
    args = parser.parse_args()
    costs = Costs.load(args.costs)
    rng = random.Random(args.seed)
    lo, hi = map(int, args.prompt_range.split(","))
    lengths = [rng.randint(lo, hi) for _ in range(args.prompts)]
    vocab = 50257
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        for n in lengths:
            f.write(",".join(str(rng.randrange(3, vocab)) for _ in range(n)) + "\n")
        ids = f.name
    command = [os.path.join(args.bin_dir, "strata-run"), "generate",
               args.artifact, "--batch-prompt-ids", ids, "--max-new-tokens",
               str(args.new_tokens), "--threads",
               str(costs.data["instance"]["threads"]), "--json"]
    env = None
    if args.disaggregate:
        command = ["mpirun", "-np", "2", "--bind-to", "none", "--mca",
                   "mpi_yield_when_idle", "1"] + command + ["--disaggregate"]
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1")
    out = subprocess.run(command, check=True, capture_output=True,
                         text=True, env=env).stdout
    os.unlink(ids)
    measured = [json.loads(line) for line in out.splitlines()
                if line.startswith("{") and "tokens" in line]

    requests = workload.at_once(lengths, args.new_tokens)
    # The two ranks of the real run share this host.
    cluster = (simulate.Cluster(prefill=1, decode=1,
                                shared_host=costs.shared_host is not None)
               if args.disaggregate else simulate.Cluster(colocated=1))
    simulate.run(costs, cluster, requests)
    rows = []
    for r, m in zip(requests, measured):
        if args.disaggregate:
            first = r.transfer_end
            ttft = first - r.arrival
        else:
            first = r.first_token
            ttft = first - r.prefill_start
        rows.append({"prompt_tokens": r.prompt,
                     "ttft_ms": {"measured": m["ttft_ms"],
                                 "simulated": ttft * 1e3},
                     "tpot_ms": {"measured": m["tpot_ms"],
                                 "simulated": (r.last_token - first)
                                 / (r.output - 1) * 1e3}})
    shown = command[command.index(next(c for c in command
                                       if c.endswith("strata-run"))):]
    result = {"cluster": cluster.label(),
              "command": " ".join((command[:command.index(shown[0])]
                                   if args.disaggregate else []) +
                                  ["strata-run", shown[1],
                                   os.path.basename(shown[2]),
                                   "--batch-prompt-ids", "PROMPTS"] +
                                  shown[5:]),
              "prompt_lengths": lengths, "new_tokens": args.new_tokens,
              "costs": os.path.relpath(args.costs, ROOT), "prompts": rows}
    print("%6s %22s %22s" % ("prompt", "TTFT ms meas / sim", "TPOT ms meas / sim"))
    for row in rows:
        print("%6d %10.1f / %9.1f %10.2f / %9.2f" % (
            row["prompt_tokens"], row["ttft_ms"]["measured"],
            row["ttft_ms"]["simulated"], row["tpot_ms"]["measured"],
            row["tpot_ms"]["simulated"]))
    for key in ("ttft_ms", "tpot_ms"):
        meas = statistics.fmean(r[key]["measured"] for r in rows)
        sim = statistics.fmean(r[key]["simulated"] for r in rows)
        worst = max(abs(r[key]["simulated"] / r[key]["measured"] - 1)
                    for r in rows)
        result[key] = {"measured_mean": meas, "simulated_mean": sim,
                       "error_of_mean": sim / meas - 1,
                       "worst_prompt_error": worst}
        print("%s mean: measured %.2f, simulated %.2f (%+.1f%%; worst prompt "
              "%.1f%%)" % (key, meas, sim, 100 * (sim / meas - 1), 100 * worst))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
