#!/usr/bin/env python3
# ===- bench/serve/prefix_cache.py - TTFT with and without prefix reuse -----===#
# 32 requests that share a 256-token prefix (a system prompt) and differ in
# 16 tokens of their own, 8 new tokens each, sent by 4 clients at a time
# (fewer than the 8 sequence slots, so no request waits for a slot and the
# TTFT is the prompt's cost) to strata-serve with prefix caching on (the
# default) and off (--no-prefix-caching). Reported: p50 and p99 TTFT
# measured at the client, and the prompt tokens /metrics counts as reused.
# Model: the Llama-shaped checkpoint of bench/genai.py (context 512),
# prompts as token ids.
#
#   ~/.cache/strata/bench-venv/bin/python bench/serve/prefix_cache.py \
#       [--threads 2] [--out FILE.json]
import argparse
import concurrent.futures
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "serve"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import serve_harness as h  # noqa: E402


def ttft(server, prompt):
    start = time.perf_counter()
    conn, resp = h.open_stream(server.host, server.port,
                               {"prompt": prompt, "max_tokens": 8,
                                "temperature": 0, "stream": True})
    first = None
    try:
        while True:
            chunk = resp.read1(65536)
            if not chunk:
                break
            if first is None and b"token_ids" in chunk:
                first = time.perf_counter() - start
    finally:
        conn.close()
    return first


def run(server, prompts, clients):
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        times = list(pool.map(lambda p: ttft(server, p), prompts))
    times.sort()
    return {"ttft_p50_ms": 1000 * statistics.median(times),
            "ttft_p99_ms": 1000 * times[min(len(times) - 1,
                                            int(0.99 * len(times)))]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--out")
    args = parser.parse_args()
    from genai import checkpoint, strata_onnx
    rng = random.Random(1)
    prefix = [rng.randrange(3, 32000) for _ in range(256)]
    prompts = [prefix + [rng.randrange(3, 32000) for _ in range(16)]
               for _ in range(args.requests)]
    report = {"model": "llama-124m (bench/genai.py)", "prefix_tokens": 256,
              "own_tokens": 16, "requests": args.requests,
              "clients": args.clients, "threads": args.threads}
    with tempfile.TemporaryDirectory() as work:
        artifact = os.path.join(work, "llama.strata")
        subprocess.run([os.path.join(args.bin_dir, "strata-compile"),
                        strata_onnx(checkpoint()), "-o", artifact, "--quiet",
                        "--max-batch", "8", "--max-seq", "512"], check=True)
        for name, flags in (("off", ["--no-prefix-caching"]), ("on", [])):
            server = h.Server(args.bin_dir, artifact, "--tokenizer", "none",
                              "--threads", str(args.threads), *flags)
            try:
                # Warm-up with other tokens: nothing of the prefix is cached.
                run(server, [[5] * 40] * 4, args.clients)
                report[name] = run(server, prompts, args.clients)
                report[name]["reused_prompt_tokens"] = h.metric_value(
                    server.metrics(), "strata_prefix_cache_hit_tokens_total")
            finally:
                server.stop()
            print(f"prefix caching {name}: TTFT p50 "
                  f"{report[name]['ttft_p50_ms']:.1f} ms, p99 "
                  f"{report[name]['ttft_p99_ms']:.1f} ms, reused "
                  f"{report[name]['reused_prompt_tokens']:.0f} tokens", flush=True)
    report["p50_ratio"] = report["off"]["ttft_p50_ms"] / report["on"]["ttft_p50_ms"]
    print(f"p50 TTFT without / with prefix caching: {report['p50_ratio']:.2f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
