# ===- bench/cluster/colocated.py - An instance that prefills and decodes --===#
# SPDX-License-Identifier: Apache-2.0
# Continuous batching as Strata's scheduler runs it (docs/serving.md): each
# iteration admits waiting requests into free slots, runs prompt chunks in
# admission order until the token budget is spent, then one decode step for
# every sequence that has its first token. The prefill calls and the decode
# step run one after the other, so a prompt delays every running decode:
# the interference disaggregation removes. budget=None runs admitted
# prompts whole, as strata-run generate does.
from collections import deque


class ColocatedInstance:
    def __init__(self, env, costs, finish, max_seqs=None, budget=None,
                 chunk=None):
        self.env = env
        self.costs = costs
        self.finish = finish
        self.max_seqs = max_seqs or costs.max_seqs
        self.budget = budget
        self.chunk = chunk or costs.max_seq
        self.waiting = deque()
        self.running = []
        self.wake = env.event()
        env.process(self.run())

    def load(self):
        return len(self.waiting) + len(self.running)

    def submit(self, request):
        self.waiting.append(request)
        if not self.wake.triggered:
            self.wake.succeed()

    def run(self):
        env, costs = self.env, self.costs
        while True:
            if not self.waiting and not self.running:
                # A wake-up left over from a busy step returns at once.
                yield self.wake
                self.wake = env.event()
                continue
            while self.waiting and len(self.running) < self.max_seqs:
                request = self.waiting.popleft()
                request.admitted = env.now
                self.running.append(request)
            decoding = sum(1 for r in self.running if r.tokens > 0)
            # The budget leaves a token per decoding sequence, yet at least
            # one prompt token runs, so prompts always advance.
            left = (float("inf") if self.budget is None
                    else max(1, self.budget - decoding))
            spent = 0.0
            for r in self.running:
                if left <= 0:
                    break
                while r.prefilled < r.prompt and left > 0:
                    n = int(min(r.prompt - r.prefilled, self.chunk, left))
                    if r.prefill_start is None:
                        r.prefill_start = env.now + spent
                    spent += costs.prefill(n, r.prefilled)
                    r.prefilled += n
                    left -= n
                if r.prefilled == r.prompt and r.tokens == 0:
                    r.first_token = r.prefill_end = env.now + spent
                    r.transfer_end = r.first_token
                    r.first_release = r.first_token
                    r.last_token = r.first_token
                    r.tokens = 1
            rows = [r for r in self.running if 0 < r.tokens < r.output]
            if rows:
                spent += costs.decode_step(len(rows),
                                           sum(r.context() for r in rows))
            yield env.timeout(spent)
            for r in rows:
                r.tokens += 1
                r.last_token = env.now
                if r.tokens == 2:
                    r.second_token = env.now
            ended = [r for r in self.running if r.tokens >= r.output]
            for r in ended:
                self.running.remove(r)
                self.finish(r)
