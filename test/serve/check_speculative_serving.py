#!/usr/bin/env python3
# ===- test/serve/check_speculative_serving.py - drafts inside batching --===#
# strata-serve with speculative decoding on the trained fixtures (the
# byte-level target and its 2-layer draft): concurrent greedy requests,
# more than the slots, so sequences join and leave the verify batches, get
# exactly the text plain decoding gives them, with a draft model and with
# prompt lookup; /metrics counts the drafts, the kept ones and the target
# steps, and its acceptance rate and tokens per target step agree with
# them; a seeded sampled request completes; both draft sources at once is
# a usage error.
#
# Usage: check_speculative_serving.py FIXTURES_DIR BIN_DIR
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_harness import (Server, compile_bytegpt, metric_value,  # noqa: E402
                           post_all)

MAX_BATCH = 4


def completions(server, bodies):
    """Each request's text (or "FAILED: why"), all sent at once."""
    return [a["choices"][0]["text"] if isinstance(a, dict) else "FAILED: " + a
            for a in post_all(server, bodies)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fixtures_dir")
    ap.add_argument("bin_dir")
    a = ap.parse_args()
    fixtures = os.path.dirname(os.path.abspath(a.fixtures_dir.rstrip("/")))
    with open(os.path.join(a.fixtures_dir, "heldout.txt"), "rb") as f:
        verses = [v.decode() for v in f.read().split(b"\n")
                  if 60 <= len(v) <= 90][:10]
    bodies = [{"prompt": v[:40], "max_tokens": 24 + 8 * (i % 4),
               "temperature": 0} for i, v in enumerate(verses)]
    # A verse and its opening again: drafts from the prompt get kept.
    bodies.append({"prompt": verses[0] + "\n" + verses[0][:12],
                   "max_tokens": 48, "temperature": 0})
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        target = os.path.join(tmp, "target.strata")
        draft = os.path.join(tmp, "draft.strata")
        compile_bytegpt(a.bin_dir, a.fixtures_dir, target, max_batch=MAX_BATCH)
        compile_bytegpt(a.bin_dir, os.path.join(fixtures, "bytegpt_draft"),
                        draft, max_batch=MAX_BATCH)
        plain = Server(a.bin_dir, target)
        try:
            want = completions(plain, bodies)
        finally:
            plain.stop()
        for label, flags in (("draft model", ["--draft", draft]),
                             ("prompt lookup", ["--prompt-lookup"])):
            server = Server(a.bin_dir, target, *flags)
            try:
                got = completions(server, bodies)
                for i, (g, w) in enumerate(zip(got, want)):
                    if g != w:
                        problems.append(f"{label}: request {i}: {g!r} != "
                                        f"plain {w!r}")
                sampled = completions(server, [{
                    "prompt": verses[1][:30], "max_tokens": 32,
                    "temperature": 0.8, "seed": 5}])[0]
                if sampled.startswith("FAILED"):
                    problems.append(f"{label}: sampled request: {sampled}")
                page = server.metrics()
                drafted = metric_value(page, "strata_speculative_draft_tokens_total")
                kept = metric_value(page, "strata_speculative_accepted_tokens_total")
                steps = metric_value(page, "strata_speculative_target_steps_total")
                rate = metric_value(page, "strata_speculative_acceptance_rate")
                per_step = metric_value(
                    page, "strata_speculative_tokens_per_target_step")
                if not (drafted > 0 and 0 < kept <= drafted and steps > 0):
                    problems.append(f"{label}: counters drafted {drafted}, "
                                    f"kept {kept}, steps {steps}")
                elif (abs(rate - kept / drafted) > 1e-9 or
                      abs(per_step - (1 + kept / steps)) > 1e-9):
                    problems.append(f"{label}: rate {rate} or tokens per "
                                    f"step {per_step} disagree with the "
                                    f"counters")
                print(f"{label}: {len(bodies) + 1} requests, {int(drafted)} "
                      f"drafted, {int(kept)} kept ({100 * rate:.0f}%), "
                      f"{per_step:.2f} tokens per target step")
            finally:
                code = server.stop()
            if code != 0:
                problems.append(f"{label}: SIGTERM exit code {code}")
        both = subprocess.run([os.path.join(a.bin_dir, "strata-serve"), target,
                               "--draft", draft, "--prompt-lookup"],
                              capture_output=True, text=True, timeout=60)
        if both.returncode != 2 or "give one" not in both.stderr:
            problems.append(f"--draft with --prompt-lookup: exit "
                            f"{both.returncode}, {both.stderr.strip()!r}")
    for p in problems:
        print("FAIL " + p)
    if not problems:
        print("ok   speculative decoding inside continuous batching")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
