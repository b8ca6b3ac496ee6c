"""strata-serve over a paged KV cache (bytegpt compiled with --kv-block-size).

- Greedy outputs over the paged cache are the contiguous cache's, byte for
  byte, for concurrent requests of mixed prompt and output lengths.
- A pool too small for every sequence at once (one context's worth of
  blocks for 8 sequences) preempts the newest sequences and recomputes
  them: the outputs still match, /metrics counts the preemptions, and the
  blocks held go back to zero once the requests are answered.
- Prompts sharing a start reuse its blocks (the prefix-cache counter
  grows) with the same outputs.

Usage: check_paged_cache.py FIXTURE_DIR BIN_DIR"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile
import time

import serve_harness as h

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}", flush=True)


def compile_paged(bin_dir, fixture_dir, out, max_batch, max_seq, block_size,
                  blocks):
    subprocess.run([os.path.join(bin_dir, "strata-compile"),
                    os.path.join(fixture_dir, "prefill.onnx"),
                    os.path.join(fixture_dir, "decode.onnx"), "-o", out,
                    "--quiet", "--max-batch", str(max_batch),
                    "--max-seq", str(max_seq), "--kv-block-size",
                    str(block_size), "--kv-blocks", str(blocks)],
                   check=True, timeout=900)


def complete(server, prompt, max_tokens):
    status, _, body = server.request(
        "POST", "/v1/completions",
        {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0},
        timeout=300)
    if status != 200:
        return f"<status {status}: {body[:200]!r}>"
    import json
    return json.loads(body)["choices"][0]["text"]


def answers(server, jobs, workers):
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda job: complete(server, *job), jobs))


def settled_metric(server, name, want, seconds=5.0):
    deadline = time.time() + seconds
    value = None
    while time.time() < deadline:
        value = h.metric_value(server.metrics(), name)
        if value == want:
            return value
        time.sleep(0.05)
    return value


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("fixture_dir")
    parser.add_argument("bin_dir")
    args = parser.parse_args()
    max_seq = 256
    starts = ["In the beginning", "And God said", "The quick brown fox",
              "Once upon a time there was", "It was the best of times",
              "x", "Call me Ishmael. Some years ago", "A"]
    jobs = [(starts[i % len(starts)] + " " * (i // len(starts)),
             [40, 120, 200, 15][i % 4]) for i in range(24)]
    shared = "Now the serpent was more subtil than any beast of the field " * 2
    prefix_jobs = [(shared + tail, 30) for tail in ["a", "b", "c", "d"]]
    # Long distinct prompts among shared-start ones, all at once: in the
    # small pool a waiting prompt must not hold the blocks an older one
    # needs.
    mixed_jobs = [(shared + "e", 30), (starts[0] * 12, 20),
                  (shared + "f", 30), (starts[1] * 15, 20),
                  (shared + "g", 30), (starts[2] * 10, 20)]
    with tempfile.TemporaryDirectory() as work:
        contiguous = os.path.join(work, "contiguous.strata")
        paged = os.path.join(work, "paged.strata")
        small = os.path.join(work, "small.strata")
        h.compile_bytegpt(args.bin_dir, args.fixture_dir, contiguous,
                          max_batch=8, max_seq=max_seq)
        compile_paged(args.bin_dir, args.fixture_dir, paged, 8, max_seq, 16, 0)
        # One context: 16 blocks of 16 for up to 8 sequences.
        compile_paged(args.bin_dir, args.fixture_dir, small, 8, max_seq, 16,
                      max_seq // 16)
        server = h.Server(args.bin_dir, contiguous, "--max-seqs", "8")
        try:
            want = answers(server, jobs, 8)
            want_prefix = [complete(server, *job) for job in prefix_jobs]
            want_mixed = [complete(server, *job) for job in mixed_jobs]
        finally:
            server.stop()
        check(all(not w.startswith("<status") for w in want),
              f"contiguous answers: {want}")
        for name, artifact in [("paged", paged), ("small pool", small)]:
            server = h.Server(args.bin_dir, artifact, "--max-seqs", "8")
            try:
                got = answers(server, jobs, 8)
                for i, (g, w) in enumerate(zip(got, want)):
                    check(g == w, f"{name}: request {i} differs: {g!r} vs {w!r}")
                preempted = h.metric_value(server.metrics(),
                                           "strata_preemptions_total")
                used = settled_metric(server, "strata_kv_cache_blocks_used", 0)
                check(used == 0, f"{name}: {used} blocks held after the load")
                print(f"  {name}: {len(jobs)} concurrent requests as over the "
                      f"contiguous cache, {preempted:.0f} preemptions, "
                      f"blocks held after: {used:.0f}", flush=True)
                if name == "small pool":
                    check(preempted > 0, "small pool: no preemption")
                before = h.metric_value(server.metrics(),
                                        "strata_prefix_cache_hit_tokens_total")
                got_prefix = [complete(server, *job) for job in prefix_jobs]
                hits = h.metric_value(
                    server.metrics(),
                    "strata_prefix_cache_hit_tokens_total") - before
                check(got_prefix == want_prefix,
                      f"{name}: shared-start outputs differ: {got_prefix!r}")
                check(hits >= 3 * 16 * 6,
                      f"{name}: {hits} prompt tokens reused from shared blocks")
                print(f"  {name}: 4 prompts with a {len(shared)}-byte shared "
                      f"start reused {hits:.0f} prompt tokens", flush=True)
                got_mixed = answers(server, mixed_jobs, len(mixed_jobs))
                check(got_mixed == want_mixed,
                      f"{name}: mixed prompts differ: {got_mixed!r}")
            finally:
                code = server.stop()
                check(code == 0, f"{name}: exit code {code}")
    if failures:
        print(f"{len(failures)} failures", flush=True)
        return 1
    print("paged KV cache: all checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
