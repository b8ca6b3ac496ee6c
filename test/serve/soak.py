"""strata-serve under a steady mixed load for a while: memory stays flat and
nothing leaks.

A client pool keeps the server busy for --seconds with streamed and plain
completions, greedy and sampled, some with stop strings, some disconnected
mid-stream and some malformed; the server's resident set (VmRSS) is
sampled every second. Before the clock starts, every sequence slot
generates until its context is full and 280 short completions arrive at
once (as many as the server has connection threads), so the lazily touched
pages of the KV cache and of the threads' stacks are resident and what
follows measures the server, not them filling up (heaptrack on a similar
30-second load: a heap peak of 6.4 MB and nothing leaked but OpenSSL's
start-up tables). After a warm-up (the first quarter, at least 10 s), the
median RSS of the last tenth of the run must be within 5% of the median of
the tenth after the warm-up (medians: single samples move by a few percent
as allocator arenas grow and shrink; the peak is reported too), and at the
end /metrics must show nothing running, waiting or holding cache blocks,
with every request counted once.

Usage: soak.py FIXTURE_DIR BIN_DIR [--seconds 60] [--out FILE.json]
(scripts/test.sh runs 60 s; the committed 10-minute run is --seconds 600.)"""
import argparse
import concurrent.futures
import json
import os
import random
import socket
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_harness as h  # noqa: E402


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def client(server, deadline, seed, counts, lock):
    rng = random.Random(seed)
    while time.time() < deadline:
        kind = rng.random()
        body = {"prompt": "And God said " * rng.randint(1, 8),
                "max_tokens": rng.randint(4, 120),
                "temperature": rng.choice([0, 0.8]), "seed": rng.randint(0, 99)}
        if rng.random() < 0.2:
            body["stop"] = [rng.choice(["\n", "the", "Lord"])]
        try:
            if kind < 0.15:
                # A client that vanishes after the first bytes of its stream.
                sock = socket.create_connection((server.host, server.port), timeout=30)
                data = json.dumps(dict(body, stream=True)).encode()
                sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
                             b"Content-Length: " + str(len(data)).encode() +
                             b"\r\n\r\n" + data)
                sock.recv(1024)
                sock.close()
                what = "disconnected"
            elif kind < 0.6:
                conn, resp = h.open_stream(server.host, server.port,
                                           dict(body, stream=True))
                text, reason, usage, done, error = h.read_stream(resp)
                conn.close()
                what = "streamed" if done == 1 and error is None else "bad stream"
            elif kind < 0.95:
                status, _, _ = server.request("POST", "/v1/completions", body)
                what = "plain" if status == 200 else f"status {status}"
            else:
                status, _, _ = server.request("POST", "/v1/completions",
                                              {"prompt": 5})
                what = "rejected" if status == 400 else f"status {status}"
        except OSError as error:
            what = f"error {error!r}"
        with lock:
            counts[what] = counts.get(what, 0) + 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("fixture_dir")
    parser.add_argument("bin_dir")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--clients", type=int, default=24)
    parser.add_argument("--out")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        artifact = os.path.join(work, "bytegpt.strata")
        h.compile_bytegpt(args.bin_dir, args.fixture_dir, artifact)
        server = h.Server(args.bin_dir, artifact)
        fill = [{"prompt": f"{i}", "max_tokens": 250, "temperature": 0}
                for i in range(16)]
        # 8 slots + 256 queued + 16: the server's connection threads.
        touch = [{"prompt": "x", "max_tokens": 1}] * 280
        with concurrent.futures.ThreadPoolExecutor(280) as pool:
            list(pool.map(lambda body: server.request(
                "POST", "/v1/completions", body), fill))
            touched = list(pool.map(lambda body: server.request(
                "POST", "/v1/completions", body)[0], touch))
        counts = {"plain": len(fill) + touched.count(200),
                  "queue full": touched.count(429)}
        lock = threading.Lock()
        start = time.time()
        deadline = start + args.seconds
        warmup = max(10.0, args.seconds / 4)
        samples = []
        with concurrent.futures.ThreadPoolExecutor(args.clients) as pool:
            futures = [pool.submit(client, server, deadline, i, counts, lock)
                       for i in range(args.clients)]
            while time.time() < deadline:
                samples.append((time.time() - start, rss_kib(server.proc.pid)))
                time.sleep(1.0)
            for future in futures:
                future.result()
        # Let the disconnected ones be noticed, then read the books.
        settled = None
        for _ in range(50):
            page = server.metrics()
            gauges = [h.metric_value(page, name) for name in (
                "strata_requests_running", "strata_requests_waiting",
                "strata_kv_cache_blocks_used")]
            if gauges == [0, 0, 0]:
                settled = page
                break
            time.sleep(0.1)
        code = server.stop()
    failures = []
    if settled is None:
        failures.append(f"still busy after the load: {gauges}")
        settled = page
    finished = sum(h.metric_value(settled, "strata_requests_total", {"outcome": o})
                   for o in ("stop", "length", "cancelled", "failed"))
    accepted = sum(v for k, v in counts.items()
                   if k not in ("rejected", "queue full"))
    if finished != accepted:
        failures.append(f"{finished} requests finished, {accepted} accepted")
    if h.metric_value(settled, "strata_requests_total", {"outcome": "failed"}):
        failures.append("failed requests")
    bad = {k: v for k, v in counts.items()
           if k not in ("streamed", "plain", "disconnected", "rejected",
                        "queue full")}
    if bad:
        failures.append(f"unexpected answers: {bad}")
    after = [kib for t, kib in samples if t >= warmup]
    tenth = max(1, len(after) // 10)
    base = statistics.median(after[:tenth])
    end = statistics.median(after[-tenth:])
    peak = max(after)
    if end > base * 1.05:
        failures.append(f"RSS grew from {base} KiB (median after warm-up) to "
                        f"{end} KiB (median at the end)")
    if code != 0:
        failures.append(f"exit code {code} after SIGTERM")
    report = {"seconds": args.seconds, "clients": args.clients, "counts": counts,
              "rss_kib_after_warmup": base, "rss_kib_at_end": end,
              "rss_kib_peak_after_warmup": peak, "rss_growth": end / base - 1,
              "generated_tokens": h.metric_value(settled,
                                                 "strata_generation_tokens_total"),
              "samples": samples, "failures": failures}
    print(json.dumps({k: v for k, v in report.items() if k != "samples"}))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
