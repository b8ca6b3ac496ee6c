# ===- bench/cluster/costs.py - The calibrated cost of one instance --------===#
# SPDX-License-Identifier: Apache-2.0
# Reads the JSON that calibrate.py writes: the time of a prefill call, of a
# decode step and of a KV-cache hand-off, as fitted on a real compiled model.
import json


class Network:
    """A link between a prefill and a decode instance."""

    def __init__(self, name, latency_s, bandwidth_bytes_per_s):
        self.name = name
        self.latency_s = latency_s
        self.bandwidth = bandwidth_bytes_per_s

    def seconds(self, nbytes):
        if self.bandwidth == float("inf"):
            return self.latency_s
        return self.latency_s + nbytes / self.bandwidth


INFINITE = Network("infinite", 0.0, float("inf"))


class Costs:
    def __init__(self, data, network="measured"):
        self.data = data
        self.prefill_coef = data["prefill"]["coef"]
        self.decode_table = {}
        for p in data["decode"]["points"]:
            self.decode_table.setdefault(p["batch"], []).append(
                (p["context"], p["seconds"]))
        for row in self.decode_table.values():
            row.sort()
        self.decode_batches = sorted(self.decode_table)
        self.kv_bytes_per_token = data["kv_bytes_per_token"]
        self.max_seqs = data["instance"]["max_seqs"]
        self.max_seq = data["instance"]["max_seq"]
        self.network = self.link(network)
        # How much a prefill and a decode instance on one host slow each
        # other (interference.py); absent until measured.
        self.shared_host = data.get("shared_host")

    @classmethod
    def load(cls, path, network="measured"):
        with open(path) as f:
            return cls(json.load(f), network)

    def link(self, name):
        if name == "infinite":
            return INFINITE
        spec = self.data["networks"][name]
        return Network(name, spec["latency_s"], spec["bandwidth_bytes_per_s"])

    def prefill(self, tokens, offset=0):
        """One prefill call of |tokens| prompt tokens after |offset| cached
        ones: the fixed cost once, the linear part per token, and the
        attention's quadratic part for the new rows only."""
        a, b, c = self.prefill_coef
        end = offset + tokens
        return max(0.0, a + b * tokens + c * (end * end - offset * offset))

    def decode_step(self, batch, total_context):
        """One decode step over |batch| rows whose contexts sum to
        |total_context|: the measured points interpolated linearly in the
        mean context, then in the batch (extrapolated past the ends)."""
        mean = total_context / batch
        batches = self.decode_batches
        if batch in self.decode_table or len(batches) == 1:
            return self._at_batch(batch if batch in self.decode_table
                                  else batches[0], mean)
        lo = max([b for b in batches if b < batch] or batches[:1])
        hi = min([b for b in batches if b > batch] or batches[-1:])
        if lo == hi:
            lo, hi = (batches[-2], batches[-1]) if batch > hi else (
                batches[0], batches[1])
        t_lo, t_hi = self._at_batch(lo, mean), self._at_batch(hi, mean)
        return max(0.0, t_lo + (t_hi - t_lo) * (batch - lo) / (hi - lo))

    def _at_batch(self, batch, context):
        row = self.decode_table[batch]
        if len(row) == 1:
            return row[0][1]
        i = 1
        while i < len(row) - 1 and row[i][0] < context:
            i += 1
        (c0, t0), (c1, t1) = row[i - 1], row[i]
        return max(0.0, t0 + (t1 - t0) * (context - c0) / (c1 - c0))

    def kv_transfer(self, tokens, network=None):
        return (network or self.network).seconds(tokens * self.kv_bytes_per_token)
