# ===- bench/cluster/workload.py - Requests arriving at a cluster ----------===#
# SPDX-License-Identifier: Apache-2.0
# Poisson arrivals with prompt and output lengths drawn from seeded
# distributions. The gaps are drawn once at rate 1 and scaled by 1/rate, so
# that the same seed at a higher rate gives the same requests, only closer:
# a goodput search then compares like with like.
import random


class Request:
    __slots__ = ("id", "arrival", "prompt", "output", "admitted",
                 "prefill_start", "first_token", "prefill_end",
                 "transfer_end", "second_token", "last_token", "tokens",
                 "prefilled", "done", "first_release")

    def __init__(self, rid, arrival, prompt, output):
        self.id = rid
        self.arrival = arrival
        self.prompt = prompt
        self.output = output
        self.admitted = None
        self.prefill_start = None
        self.prefill_end = None
        self.first_token = None
        self.transfer_end = None
        self.second_token = None
        self.last_token = None
        self.first_release = None
        self.tokens = 0
        self.prefilled = 0
        self.done = None

    def context(self):
        return self.prompt + self.tokens


def lengths(spec, rng):
    """|spec|: an int, (lo, hi) uniform, or ("lognormal", median, sigma, lo,
    hi) clipped."""
    if isinstance(spec, int):
        return lambda: spec
    if spec[0] == "lognormal":
        _, median, sigma, lo, hi = spec
        import math
        return lambda: min(hi, max(lo, int(round(
            rng.lognormvariate(math.log(median), sigma)))))
    lo, hi = spec
    return lambda: rng.randint(lo, hi)


def poisson(count, rate, prompt, output, seed=0):
    rng = random.Random(seed)
    draw_prompt, draw_output = lengths(prompt, rng), lengths(output, rng)
    t, out = 0.0, []
    for i in range(count):
        t += rng.expovariate(1.0)
        out.append(Request(i, t / rate, draw_prompt(), draw_output()))
    return out


def at_once(prompts, output):
    """Every prompt arriving at time 0, as strata-run generate takes them."""
    return [Request(i, 0.0, p, output) for i, p in enumerate(prompts)]
