# ===- bench/cluster/simulate.py - One run of a cluster, and its goodput ---===#
# SPDX-License-Identifier: Apache-2.0
# Runs a request trace through a colocated or a disaggregated cluster in
# simpy and reports per-request latencies: TTFT split into queue, prefill,
# KV transfer and first decode step, and TPOT. Goodput follows DistServe:
# the highest arrival rate at which at least 90% of the requests meet both
# the TTFT and the TPOT target.
import statistics
from dataclasses import dataclass

import simpy

import workload
from colocated import ColocatedInstance
from disaggregated import DisaggregatedCluster


@dataclass
class Cluster:
    """colocated: |colocated| instances; else |prefill| + |decode|."""
    colocated: int = 0
    prefill: int = 0
    decode: int = 0
    # Colocated: prompt tokens per iteration (None: whole prompts at
    # admission, as strata-run generate).
    budget: int = None
    # Disaggregated: "prefill" (DistServe: the prefill instance streams the
    # first token) or "decode" (the first token reaches the client with the
    # decode instance's first step).
    first_token: str = "prefill"
    # Disaggregated: the prefill and decode instances share one host (its
    # cores and memory bandwidth), so each phase runs slower while the
    # other is busy, by the factors interference.py measured.
    shared_host: bool = False

    def instances(self):
        return self.colocated or self.prefill + self.decode

    def label(self):
        if self.colocated:
            return "colocated x%d" % self.colocated
        return "%dP:%dD" % (self.prefill, self.decode)


@dataclass
class Slo:
    ttft: float
    tpot: float
    attainment: float = 0.9


def latencies(r, first_token="prefill"):
    """The request's TTFT parts and TPOT, in seconds."""
    handoff = r.transfer_end > r.first_token
    parts = {
        "queue": r.prefill_start - r.arrival,
        "prefill": r.prefill_end - r.prefill_start,
        "kv_transfer": r.transfer_end - r.prefill_end,
        "first_decode": (r.second_token - r.transfer_end) if handoff else 0.0,
    }
    if handoff and first_token == "decode":
        released, gaps = r.second_token, r.output - 2
    else:
        released, gaps = r.first_token, r.output - 1
    parts["ttft"] = released - r.arrival
    parts["tpot"] = (r.last_token - released) / gaps if gaps > 0 else 0.0
    parts["e2e"] = r.done - r.arrival
    return parts


def run(costs, cluster, requests, sample_every=None):
    """Simulates |requests| to their end. Returns (per-request latencies,
    time-averaged requests in the system, the time of the last answer)."""
    env = simpy.Environment()
    in_system = [0]

    def finish(r):
        r.done = env.now
        in_system[0] -= 1

    if cluster.colocated:
        instances = [ColocatedInstance(env, costs, finish, budget=cluster.budget)
                     for _ in range(cluster.colocated)]

        def submit(r):
            # The instance with the fewest requests, waiting or running.
            min(instances, key=ColocatedInstance.load).submit(r)
    else:
        disaggregated = DisaggregatedCluster(env, costs, finish,
                                             cluster.prefill, cluster.decode,
                                             shared_host=cluster.shared_host)
        submit = disaggregated.submit

    def arrivals():
        for r in requests:
            if r.arrival > env.now:
                yield env.timeout(r.arrival - env.now)
            in_system[0] += 1
            submit(r)

    samples = []

    def monitor():
        # Counts requests in the system apart from their timestamps, for a
        # Little's-law check of the bookkeeping.
        while True:
            samples.append(in_system[0])
            yield env.timeout(sample_every)

    env.process(arrivals())
    if sample_every:
        env.process(monitor())
        while any(r.done is None for r in requests):
            env.run(until=env.now + 1000 * sample_every)
    else:
        env.run()
    end = max(r.done for r in requests)
    rows = [latencies(r, cluster.first_token) for r in requests]
    mean_in_system = statistics.fmean(samples) if samples else None
    return rows, mean_in_system, end


def attainment(rows, slo):
    good = sum(1 for x in rows if x["ttft"] <= slo.ttft and x["tpot"] <= slo.tpot)
    return good / len(rows)


def trace(count, rate, prompt, output, seed):
    return workload.poisson(count, rate, prompt, output, seed)


def goodput(costs, cluster, slo, prompt, output, count, seed=0,
            start=1.0, tolerance=0.02):
    """The highest Poisson rate (requests/s) whose attainment reaches the
    SLO's, to |tolerance| relative, by doubling then bisection."""
    def ok(rate):
        rows, _, _ = run(costs, cluster, trace(count, rate, prompt, output, seed))
        return attainment(rows, slo) >= slo.attainment

    lo, hi = 0.0, start
    while ok(hi):
        lo, hi = hi, hi * 2
    if lo == 0.0:
        lo = hi / 2
        while lo > start * 1e-4 and not ok(lo):
            hi, lo = lo, lo / 2
        if lo <= start * 1e-4:
            return 0.0
    while hi - lo > tolerance * lo:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


def summary(rows):
    def pct(key, q):
        values = sorted(x[key] for x in rows)
        return values[min(len(values) - 1, int(q * len(values)))]
    keys = ("queue", "prefill", "kv_transfer", "first_decode", "ttft", "tpot")
    return {k: {"mean": statistics.fmean(x[k] for x in rows),
                "p50": pct(k, 0.5), "p90": pct(k, 0.9)} for k in keys}
