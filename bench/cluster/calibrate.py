#!/usr/bin/env python3
# ===- bench/cluster/calibrate.py - the simulator's costs, measured --------===#
# SPDX-License-Identifier: Apache-2.0
# Measures one Strata instance on this machine and writes the cost model the
# cluster simulator reads (costs.json):
#   - prefill time against prompt length: strata-run generate, one prompt at a
#     time (the generator prefills prompts one after another, so a batch of
#     prompts costs the sum of their times);
#   - decode step time against batch and context: B prompts of one length,
#     16 steps; the last prompt added sees only decode steps of batch B;
#   - the KV-cache hand-off: strata-kv-pingpong (libstrata_mpi send/recv)
#     between two MPI processes on this host.
# Each point is the fastest of --rounds (on a shared machine other work only
# ever adds time); the raw points are kept beside the least-squares fits.
#
#   python3 bench/cluster/calibrate.py [--model-dir DIR] [--threads 1]
#       [--out bench/results/cluster/costs-gpt2-small.json]
import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL_CACHE = os.environ.get("STRATA_MODEL_CACHE",
                             os.path.expanduser("~/.cache/strata/models"))

PREFILL_LENGTHS = (16, 32, 64, 128, 192, 256, 384, 511)
DECODE_BATCHES = (1, 2, 4, 8)
DECODE_CONTEXTS = (32, 128, 256, 448)
DECODE_STEPS = 16


def cpu_name():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return platform.processor()
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    return "%s, %s CPUs" % (fields.get("Model name", "?").strip(),
                            fields.get("CPU(s)", "?").strip())


def ids_line(rng, vocab, length):
    return ",".join(str(rng.randrange(3, vocab)) for _ in range(length))


def generate(bin_dir, artifact, prompts, new_tokens, threads):
    """strata-run generate over |prompts| (lists of ids); one dict each."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(prompts) + "\n")
        path = f.name
    try:
        out = subprocess.run(
            [os.path.join(bin_dir, "strata-run"), "generate", artifact,
             "--batch-prompt-ids", path, "--max-new-tokens", str(new_tokens),
             "--threads", str(threads), "--json"],
            check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def measure_prefill(args, vocab, rng):
    # One warm-up prompt, then every length once per round, rounds
    # interleaved; each prompt's TTFT is its own prefill plus sampling.
    lengths = [32] + [n for _ in range(args.rounds) for n in PREFILL_LENGTHS]
    runs = generate(args.bin_dir, args.artifact,
                    [ids_line(rng, vocab, n) for n in lengths], 1, args.threads)
    points = {}
    for n, run in zip(lengths[1:], runs[1:]):
        points.setdefault(n, []).append(run["ttft_ms"] / 1e3)
    return [{"tokens": n, "seconds": float(np.min(v))}
            for n, v in sorted(points.items())]


def measure_decode(args, vocab, rng):
    times = {}
    for _ in range(args.rounds):
        for batch in DECODE_BATCHES:
            for ctx in DECODE_CONTEXTS:
                runs = generate(args.bin_dir, args.artifact,
                                [ids_line(rng, vocab, ctx) for _ in range(batch)],
                                DECODE_STEPS + 1, args.threads)
                # The last prompt's intervals are all decode steps of
                # |batch| rows at contexts ctx+1 .. ctx+16.
                times.setdefault((batch, ctx), []).append(
                    runs[-1]["tpot_ms"] / 1e3)
    points = []
    for (batch, ctx), v in sorted(times.items()):
        points.append({"batch": batch, "context": ctx + DECODE_STEPS // 2,
                       "seconds": float(np.min(v))})
        print("decode batch %d ctx %d: %.2f ms" %
              (batch, ctx, points[-1]["seconds"] * 1e3), file=sys.stderr)
    return points


def measure_network(args):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = subprocess.run(
        ["mpirun", "-np", "2", "--oversubscribe", args.pingpong],
        check=True, capture_output=True, text=True, env=env).stdout
    results = json.loads(out)["results"]
    sizes = np.array([r["bytes"] for r in results], dtype=float)
    times = np.array([r["seconds"] for r in results])
    # Latency: the smallest message; bandwidth: the slope over messages of
    # 1 MiB and more, the sizes a KV cache has.
    big = sizes >= (1 << 20)
    slope = np.polyfit(sizes[big], times[big], 1)[0]
    return {"latency_s": float(times.min()),
            "bandwidth_bytes_per_s": float(1.0 / slope),
            "points": results,
            "how": "mpirun -np 2 strata-kv-pingpong: libstrata_mpi send/recv "
                   "between two processes on this host (Open MPI shared "
                   "memory), half the median round trip"}


def fit_prefill(points):
    # a + b*s + c*s^2: the matmuls grow with s, causal attention with s^2.
    s = np.array([p["tokens"] for p in points], dtype=float)
    t = np.array([p["seconds"] for p in points])
    coef, *_ = np.linalg.lstsq(np.stack([np.ones_like(s), s, s * s], 1), t,
                               rcond=None)
    return [float(c) for c in coef]


def fit_decode(points):
    # a + b*B + c*(B*ctx): weights are read once per step, each row adds its
    # sampling and projections, and attention reads every row's cache.
    b = np.array([p["batch"] for p in points], dtype=float)
    ctx = np.array([p["context"] for p in points], dtype=float)
    t = np.array([p["seconds"] for p in points])
    coef, *_ = np.linalg.lstsq(np.stack([np.ones_like(b), b, b * ctx], 1), t,
                               rcond=None)
    return [float(c) for c in coef]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir",
                        default=os.path.join(MODEL_CACHE, "gpt2-small"))
    parser.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--pingpong", default=None,
                        help="strata-kv-pingpong (default: --bin-dir's, "
                             "else build-rt/bin's)")
    parser.add_argument("--artifact", help="an artifact compiled already")
    parser.add_argument("--max-batch", type=int, default=8)
    parser.add_argument("--max-seq", type=int, default=512)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=os.path.join(
        ROOT, "bench", "results", "cluster", "costs-gpt2-small.json"))
    args = parser.parse_args()

    meta = json.load(open(os.path.join(args.model_dir, "meta.json")))
    if not args.artifact:
        args.artifact = os.path.join(tempfile.mkdtemp(), "model.strata")
        subprocess.run([os.path.join(args.bin_dir, "strata-compile"),
                        os.path.join(args.model_dir, meta["decode"]),
                        "-o", args.artifact, "--max-batch", str(args.max_batch),
                        "--max-seq", str(args.max_seq), "--quiet"], check=True)
    if not args.pingpong:
        for d in (args.bin_dir, os.path.join(ROOT, "build-rt", "bin")):
            if os.path.exists(os.path.join(d, "strata-kv-pingpong")):
                args.pingpong = os.path.join(d, "strata-kv-pingpong")
                break
    rng = random.Random(args.seed)
    vocab = meta["vocab"]
    prefill = measure_prefill(args, vocab, rng)
    decode = measure_decode(args, vocab, rng)
    network = measure_network(args) if args.pingpong else None
    head_dim = meta["hidden"] // meta["heads"]
    costs = {
        "machine": cpu_name(),
        "model": {"name": meta["name"], "layers": meta["layers"],
                  "kv_heads": meta["kv_heads"], "head_dim": head_dim,
                  "params": meta["params"]},
        "instance": {"threads": args.threads, "max_seqs": args.max_batch,
                     "max_seq": args.max_seq},
        # K and V, every layer, fp32.
        "kv_bytes_per_token": 2 * meta["layers"] * meta["kv_heads"] * head_dim * 4,
        "prefill": {"form": "a + b*tokens + c*tokens^2 seconds",
                    "coef": fit_prefill(prefill), "points": prefill},
        # The simulator interpolates the points (batch 1 runs other kernels
        # than larger batches: the step is not linear in the batch); the
        # fit is for reading.
        "decode": {"form": "a + b*batch + c*batch*mean_context seconds",
                   "coef": fit_decode(decode), "points": decode},
        "networks": {
            "measured": network,
            "rdma-100g": {"latency_s": 3e-6, "bandwidth_bytes_per_s": 12.5e9,
                          "how": "assumed, not measured: 100 Gb/s RDMA"},
        },
        "commands": {
            "prefill": "strata-run generate MODEL --batch-prompt-ids FILE "
                       "--max-new-tokens 1 --threads %d --json" % args.threads,
            "decode": "strata-run generate MODEL --batch-prompt-ids FILE "
                      "--max-new-tokens %d --threads %d --json"
                      % (DECODE_STEPS + 1, args.threads),
            "compile": "strata-compile %s -o MODEL --max-batch %d --max-seq %d"
                       % (meta["decode"], args.max_batch, args.max_seq),
        },
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(costs, f, indent=1)
        f.write("\n")
    print(json.dumps({k: costs[k]["coef"] for k in ("prefill", "decode")}))
    print(args.out)


if __name__ == "__main__":
    main()
