#!/usr/bin/env python3
# ===- bench/cluster/sweep.py - Goodput against N:M and cluster size ------===#
# SPDX-License-Identifier: Apache-2.0
# Sizes a deployment from the calibrated costs: the DistServe goodput
# (highest Poisson rate with >= 90% of requests meeting both the TTFT and
# the TPOT target) of every prefill:decode split of --instances instances
# against as many colocated ones, over each network; then the best split's
# goodput against cluster sizes up to --max-size. Writes sweep.json,
# goodput-vs-ratio.png and goodput-vs-size.png to --out-dir.
#
#   python bench/cluster/sweep.py [--costs FILE] [--instances 8]
#       [--max-size 256] [--slo-ttft 2.0] [--slo-tpot 0.06]
#       [--networks measured,rdma-100g] [--out-dir bench/results/cluster]
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
ROOT = os.path.dirname(os.path.dirname(HERE))

import simulate  # noqa: E402
from costs import Costs  # noqa: E402


def pair(text):
    lo, hi = map(int, text.split(","))
    return (lo, hi)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--costs", default=os.path.join(
        ROOT, "bench", "results", "cluster", "costs-gpt2-small.json"))
    parser.add_argument("--instances", type=int, default=8)
    parser.add_argument("--max-size", type=int, default=256)
    parser.add_argument("--slo-ttft", type=float, default=2.0)
    parser.add_argument("--slo-tpot", type=float, default=0.06)
    parser.add_argument("--attainment", type=float, default=0.9)
    parser.add_argument("--prompt-range", type=pair, default=(64, 448))
    parser.add_argument("--output-range", type=pair, default=(16, 128))
    parser.add_argument("--requests-per-instance", type=int, default=60)
    parser.add_argument("--networks", default="measured,rdma-100g")
    parser.add_argument("--budget", type=int, default=None,
                        help="colocated prompt tokens per iteration (default: "
                             "strata-serve's, max-seq + max-seqs)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out-dir", default=os.path.join(
        ROOT, "bench", "results", "cluster"))
    args = parser.parse_args()

    base = Costs.load(args.costs)
    budget = args.budget or base.max_seq + base.max_seqs
    slo = simulate.Slo(args.slo_ttft, args.slo_tpot, args.attainment)
    networks = args.networks.split(",")

    def goodput(cluster, network):
        costs = Costs.load(args.costs, network)
        n = cluster.instances()
        return simulate.goodput(costs, cluster, slo, args.prompt_range,
                                args.output_range,
                                max(200, args.requests_per_instance * n),
                                seed=args.seed, start=0.5 * n)

    started = time.time()
    n = args.instances
    colocated = goodput(simulate.Cluster(colocated=n, budget=budget), networks[0])
    ratio = {"colocated": colocated, "splits": {}}
    for network in networks:
        ratio["splits"][network] = []
        for p in range(1, n):
            g = goodput(simulate.Cluster(prefill=p, decode=n - p), network)
            ratio["splits"][network].append({"prefill": p, "decode": n - p,
                                             "goodput": g})
            print("%s %dP:%dD %.3f req/s" % (network, p, n - p, g), flush=True)
    print("colocated x%d %.3f req/s" % (n, colocated), flush=True)

    # Cluster sizes: the best split's prefill share, rounded, at each size.
    best = max(ratio["splits"][networks[0]], key=lambda s: s["goodput"])
    share = best["prefill"] / n
    sizes = [s for s in (2, 4, 8, 16, 32, 64, 128, 256, 512)
             if s <= args.max_size]
    scaling = []
    for size in sizes:
        p = min(size - 1, max(1, round(share * size)))
        row = {"size": size, "prefill": p, "decode": size - p,
               "colocated": goodput(simulate.Cluster(colocated=size,
                                                     budget=budget),
                                    networks[0])}
        for network in networks:
            row[network] = goodput(simulate.Cluster(prefill=p, decode=size - p),
                                   network)
        scaling.append(row)
        print(json.dumps(row), flush=True)

    result = {"costs": os.path.relpath(os.path.abspath(args.costs), ROOT),
              "machine": base.data["machine"],
              "model": base.data["model"]["name"],
              "slo": {"ttft_s": slo.ttft, "tpot_s": slo.tpot,
                      "attainment": slo.attainment},
              "workload": {"prompt_tokens": args.prompt_range,
                           "output_tokens": args.output_range,
                           "requests_per_instance": args.requests_per_instance,
                           "seed": args.seed},
              "colocated_budget": budget,
              "networks": {k: (vars(base.link(k)) if k != "infinite" else k)
                           for k in networks},
              "instances": n, "ratio": ratio, "scaling": scaling,
              "seconds": round(time.time() - started, 1)}
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "sweep.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    plot(result, args.out_dir)


def plot(result, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    slo = result["slo"]
    title = "%s, %s\nTTFT <= %.2g s, TPOT <= %.0f ms, %d%% attainment" % (
        result["model"], result["machine"], slo["ttft_s"],
        slo["tpot_s"] * 1e3, round(slo["attainment"] * 100))
    n = result["instances"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for network, rows in result["ratio"]["splits"].items():
        ax.plot(["%d:%d" % (r["prefill"], r["decode"]) for r in rows],
                [r["goodput"] / n for r in rows], marker="o",
                label="disaggregated, %s network" % label(network))
    ax.axhline(result["ratio"]["colocated"] / n, color="gray", linestyle="--",
               label="colocated, %d instances" % n)
    ax.set_xlabel("prefill : decode instances (%d in all); lines that "
                  "coincide are hidden under the last" % n)
    ax.set_ylabel("goodput per instance (requests/s)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "goodput-vs-ratio.png"), dpi=110)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    rows = result["scaling"]
    sizes = [r["size"] for r in rows]
    ax.plot(sizes, [r["colocated"] / r["size"] for r in rows], marker="s",
            color="gray", linestyle="--", label="colocated")
    for network in result["networks"]:
        ax.plot(sizes, [r[network] / r["size"] for r in rows], marker="o",
                label="disaggregated (P share %.2f), %s network" % (
                    rows[-1]["prefill"] / rows[-1]["size"], label(network)))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("instances")
    ax.set_ylabel("goodput per instance (requests/s)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "goodput-vs-size.png"), dpi=110)


def label(network):
    return {"measured": "measured (MPI, this host)",
            "rdma-100g": "assumed 100 Gb/s RDMA",
            "infinite": "infinite"}.get(network, network)


if __name__ == "__main__":
    main()
