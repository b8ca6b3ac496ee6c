# ===- bench/cluster/disaggregated.py - Prefill and decode apart -----------===#
# SPDX-License-Identifier: Apache-2.0
# DistServe-style disaggregation: N prefill instances take prompts from one
# queue, first come first served, and sample the first token; the request
# then waits for a slot on the least loaded of M decode instances (the
# decode side pulls, so a full decode side holds caches back instead of
# dropping them), its KV cache crosses the network (sends from one prefill
# instance go one at a time), and it joins that instance's decode batch at
# the next step. A prefill instance goes on with the next prompt while its
# last cache is sent. On a shared host a decode step that starts while a
# prompt is prefilled takes the measured slowdown, and so does a prefill
# that starts while a decode instance has rows.
from collections import deque

import simpy


class DecodeInstance:
    def __init__(self, env, costs, finish, max_seqs, on_free, slowdown):
        self.env = env
        self.costs = costs
        self.finish = finish
        self.max_seqs = max_seqs
        self.on_free = on_free
        self.slowdown = slowdown
        self.reserved = 0
        self.arrived = []
        self.rows = []
        self.wake = env.event()
        env.process(self.run())

    def load(self):
        return self.reserved + len(self.rows)

    def join(self, request):
        self.arrived.append(request)
        if not self.wake.triggered:
            self.wake.succeed()

    def run(self):
        env, costs = self.env, self.costs
        while True:
            if not self.arrived and not self.rows:
                # A wake-up left over from a busy step returns at once.
                yield self.wake
                self.wake = env.event()
                continue
            # Caches that arrived during the last step join now.
            self.reserved -= len(self.arrived)
            self.rows.extend(self.arrived)
            self.arrived = []
            rows = self.rows
            yield env.timeout(self.slowdown() * costs.decode_step(
                len(rows), sum(r.context() for r in rows)))
            for r in rows:
                r.tokens += 1
                r.last_token = env.now
                if r.tokens == 2:
                    r.second_token = env.now
            ended = [r for r in rows if r.tokens >= r.output]
            for r in ended:
                rows.remove(r)
                self.finish(r)
            if ended:
                self.on_free()


class DisaggregatedCluster:
    def __init__(self, env, costs, finish, prefill, decode, max_seqs=None,
                 shared_host=False):
        self.env = env
        self.costs = costs
        self.finish = finish
        self.queue = deque()
        self.ready = deque()
        self.idle = []
        self.prefilling = 0
        shared = costs.shared_host if shared_host else None
        if shared_host and not shared:
            raise ValueError("the costs have no shared_host slowdowns: run "
                             "bench/cluster/interference.py")
        self.decode_slowdown = shared["decode_slowdown"] if shared else 1.0
        self.prefill_slowdown = shared["prefill_slowdown"] if shared else 1.0
        self.links = [simpy.Resource(env, 1) for _ in range(prefill)]
        self.decoders = [DecodeInstance(env, costs, finish,
                                        max_seqs or costs.max_seqs,
                                        self.place, self.decoding_slowdown)
                         for _ in range(decode)]
        for i in range(prefill):
            env.process(self.prefill_worker(i))

    def decoding_slowdown(self):
        return self.decode_slowdown if self.prefilling else 1.0

    def submit(self, request):
        self.queue.append(request)
        if self.idle:
            self.idle.pop().succeed()

    def prefill_worker(self, index):
        env, costs = self.env, self.costs
        while True:
            if not self.queue:
                wake = env.event()
                self.idle.append(wake)
                yield wake
                continue
            r = self.queue.popleft()
            r.admitted = r.prefill_start = env.now
            spent, done = 0.0, 0
            while done < r.prompt:
                n = min(r.prompt - done, costs.max_seq)
                spent += costs.prefill(n, done)
                done += n
            if any(d.rows for d in self.decoders):
                spent *= self.prefill_slowdown
            self.prefilling += 1
            yield env.timeout(spent)
            self.prefilling -= 1
            r.prefilled = r.prompt
            r.first_token = r.prefill_end = r.last_token = env.now
            r.tokens = 1
            if r.output <= 1:
                r.transfer_end = env.now
                self.finish(r)
                continue
            self.ready.append((r, index))
            self.place()

    def place(self):
        """Sends waiting caches to decode instances with a free slot, the
        least loaded first."""
        while self.ready:
            target = min(self.decoders, key=DecodeInstance.load)
            if target.load() >= target.max_seqs:
                return
            r, index = self.ready.popleft()
            target.reserved += 1
            self.env.process(self.transfer(r, index, target))

    def transfer(self, r, index, target):
        with self.links[index].request() as link:
            yield link
            yield self.env.timeout(self.costs.kv_transfer(r.prompt))
        r.transfer_end = self.env.now
        target.join(r)
