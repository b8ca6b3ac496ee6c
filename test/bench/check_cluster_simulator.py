#!/usr/bin/env python3
# ===- test/bench/check_cluster_simulator.py - The cluster simulator's laws -===#
# SPDX-License-Identifier: Apache-2.0
# A few seconds of bench/cluster's simulator on small clusters with made-up
# costs of the calibrated form (so the test needs no measurement), checking
# what must hold whatever the costs: Little's law, TTFT at least the
# prefill, goodput that never falls as the SLO loosens, disaggregation over
# an infinitely fast network decoding faster than colocated instances,
# instances sharing a host slowed by at most the measured factors, and the
# same seed giving the same run.
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "cluster"))

import simulate  # noqa: E402
from costs import Costs  # noqa: E402

COSTS = {
    "instance": {"threads": 1, "max_seqs": 8, "max_seq": 512},
    "kv_bytes_per_token": 73728,
    "prefill": {"coef": [0.003, 0.0018, 4e-9]},
    "decode": {"points": [
        {"batch": b, "context": c, "seconds": 0.017 + 0.002 * b + 2e-6 * b * c}
        for b in (1, 2, 4, 8) for c in (40, 136, 264, 456)]},
    "networks": {"measured": {"latency_s": 1e-6,
                              "bandwidth_bytes_per_s": 3e9}},
}
PROMPT, OUTPUT = (32, 256), (8, 48)

failures = []


def check(ok, what):
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        failures.append(what)


def trace(count, rate, seed=3):
    return simulate.trace(count, rate, PROMPT, OUTPUT, seed)


def little():
    costs = Costs(COSTS)
    for cluster in (simulate.Cluster(colocated=2, budget=520),
                    simulate.Cluster(prefill=1, decode=1)):
        requests = trace(300, 1.5)
        rows, in_system, end = simulate.run(costs, cluster, requests,
                                            sample_every=0.005)
        # L = lambda W over the whole run, the system empty at both ends.
        w = sum(x["e2e"] for x in rows) / len(rows)
        predicted = len(rows) / end * w
        check(abs(in_system / predicted - 1) < 0.05,
              "%s: Little's law, L %.3f against lambda*W %.3f"
              % (cluster.label(), in_system, predicted))


def ttft_covers_prefill():
    costs = Costs(COSTS)
    for cluster in (simulate.Cluster(colocated=1),
                    simulate.Cluster(colocated=2, budget=64),
                    simulate.Cluster(prefill=1, decode=2, first_token="decode")):
        requests = trace(200, 2.0)
        rows, _, _ = simulate.run(costs, cluster, requests)
        worst = min(x["ttft"] - costs.prefill(r.prompt)
                    for r, x in zip(requests, rows))
        # With the first token from the decode side, TTFT also holds the
        # transfer and the first step.
        extra = ("kv_transfer", "first_decode") if cluster.first_token == "decode" else ()
        parts = max(abs(sum(x[k] for k in ("queue", "prefill") + extra) - x["ttft"])
                    for x in rows)
        check(worst >= -1e-9 and parts < 1e-9,
              "%s: TTFT >= the prompt's prefill (margin %.4f s) and is the "
              "sum of its parts" % (cluster.label(), worst))


def goodput_monotone():
    costs = Costs(COSTS)
    cluster = simulate.Cluster(prefill=1, decode=1)
    last = -1.0
    monotone = True
    for ttft, tpot in ((0.5, 0.03), (1.0, 0.04), (2.0, 0.05), (4.0, 0.08)):
        g = simulate.goodput(costs, cluster, simulate.Slo(ttft, tpot), PROMPT,
                             OUTPUT, 150, seed=5, start=0.5, tolerance=0.05)
        print("  goodput at TTFT %.1f s, TPOT %.0f ms: %.3f req/s"
              % (ttft, tpot * 1e3, g))
        monotone &= g >= last * (1 - 0.05)
        last = g
    check(monotone and last > 0, "goodput grows as the SLO loosens")


def disaggregation_decodes_faster():
    costs = Costs(COSTS, network="infinite")
    mean = {}
    for cluster in (simulate.Cluster(colocated=2, budget=520),
                    simulate.Cluster(prefill=1, decode=1)):
        rows, _, _ = simulate.run(costs, cluster, trace(300, 1.5))
        mean[cluster.label()] = sum(x["tpot"] for x in rows) / len(rows)
    co, dis = mean["colocated x2"], mean["1P:1D"]
    check(dis < co, "infinite network: disaggregated TPOT %.1f ms < colocated "
          "%.1f ms" % (dis * 1e3, co * 1e3))


def deterministic():
    costs = Costs(COSTS)
    runs = [simulate.run(costs, simulate.Cluster(prefill=2, decode=1),
                         trace(100, 3.0, seed=9))[0] for _ in range(2)]
    check(runs[0] == runs[1], "the same seed gives the same run")


def shared_host_slows_both_phases():
    """Instances on one host: each phase at most its slowdown slower, and
    costs without measured slowdowns refused."""
    shared = dict(COSTS, shared_host={"decode_slowdown": 1.3,
                                      "prefill_slowdown": 1.2})
    mean = {}
    for on_one_host in (False, True):
        rows, _, _ = simulate.run(
            Costs(shared), simulate.Cluster(prefill=1, decode=1,
                                            shared_host=on_one_host),
            trace(200, 1.5))
        mean[on_one_host] = [sum(x[k] for x in rows) / len(rows)
                             for k in ("tpot", "prefill")]
    (tpot, prefill), (tpot1, prefill1) = mean[False], mean[True]
    check(tpot < tpot1 <= 1.3 * tpot + 1e-9,
          "shared host: TPOT %.2f ms within (%.2f, 1.3 x %.2f]"
          % (tpot1 * 1e3, tpot * 1e3, tpot * 1e3))
    check(prefill < prefill1 <= 1.2 * prefill + 1e-9,
          "shared host: prefill %.2f ms within (%.2f, 1.2 x %.2f]"
          % (prefill1 * 1e3, prefill * 1e3, prefill * 1e3))
    try:
        simulate.run(Costs(COSTS), simulate.Cluster(prefill=1, decode=1,
                                                    shared_host=True),
                     trace(10, 1.0))
        check(False, "shared host without measured slowdowns refused")
    except ValueError:
        check(True, "shared host without measured slowdowns refused")


little()
ttft_covers_prefill()
shared_host_slows_both_phases()
goodput_monotone()
disaggregation_decodes_faster()
deterministic()
sys.exit(1 if failures else 0)
