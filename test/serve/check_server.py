"""strata-serve end to end on the trained byte-level model (bytegpt).

1. The official openai client completes, streams (usage in the last chunk)
   and gets a 400 (BadRequestError naming the field) for a bad parameter.
2. /metrics parses with prometheus_client and has every metric the Grafana
   dashboard (docs/serving-dashboard.json) queries.
3. Load: 200 concurrent streaming clients on loopback, each answered exactly
   once ([DONE] once), no 5xx, greedy text byte-identical to the same prompt
   run alone; meanwhile a corpus of hostile requests (malformed, oversized,
   slow, wrong types, auth missing or wrong) each gets its 4xx.
4. Clients killed mid-stream: within a second of the last one, /metrics
   shows no running sequence and no KV-cache block used.
5. A full queue answers 429 with Retry-After; SIGTERM drains (every
   accepted stream gets a final event) and the server exits 0.
Usage: check_server.py FIXTURE_DIR BIN_DIR [--clients N]"""
import argparse
import concurrent.futures
import json
import os
import random
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_harness as h  # noqa: E402
from hostile_requests import hostile_cases  # noqa: E402

API_KEY = "test-key-0123456789"
AUTH = {"Authorization": "Bearer " + API_KEY}
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what, flush=True)


def prompts(count, seed=7):
    """Varied prompts: Bible-like openings of several lengths."""
    words = ("And God said Let there be light and there was light In the "
             "beginning the earth was without form and void darkness upon "
             "the face of the deep Spirit moved waters").split()
    rng = random.Random(seed)
    out = []
    for i in range(count):
        n = rng.randint(1, 24)
        # The index first: no two prompts share a start that prefix reuse
        # (16 tokens at least) would find cached.
        out.append(f"{i}: " + " ".join(rng.choice(words) for _ in range(n)))
    return out


def openai_checks(server):
    import openai
    client = openai.OpenAI(base_url=server.url(), api_key=API_KEY, max_retries=0)
    models = client.models.list()
    check([m.id for m in models.data] == ["bytegpt"], f"models: {models}")
    done = client.completions.create(model="bytegpt", prompt="In the beginning",
                                     max_tokens=24, temperature=0)
    text = done.choices[0].text
    check(len(text) > 0 and done.choices[0].finish_reason == "length",
          f"completion: {done}")
    check(done.usage.completion_tokens == 24 and
          done.usage.prompt_tokens == len("In the beginning"),
          f"usage: {done.usage}")
    streamed, reason, usage = "", None, None
    for chunk in client.completions.create(model="bytegpt",
                                           prompt="In the beginning",
                                           max_tokens=24, temperature=0,
                                           stream=True):
        if chunk.choices:
            streamed += chunk.choices[0].text
            reason = chunk.choices[0].finish_reason or reason
        if chunk.usage:
            usage = chunk.usage
    check(streamed == text, f"stream {streamed!r} != {text!r}")
    check(reason == "length" and usage and usage.completion_tokens == 24,
          f"stream end: {reason} {usage}")
    stop = client.completions.create(model="bytegpt", prompt="In the beginning",
                                     max_tokens=24, temperature=0,
                                     stop=[text[5:8]])
    check(stop.choices[0].text == text[:text.find(text[5:8])] and
          stop.choices[0].finish_reason == "stop", f"stop string: {stop}")
    seeded = [client.completions.create(model="bytegpt", prompt="And", seed=11,
                                        max_tokens=16, temperature=0.9,
                                        top_p=0.95).choices[0].text
              for _ in range(2)]
    check(seeded[0] == seeded[1], f"a seed repeats its draws: {seeded}")
    try:
        client.completions.create(model="bytegpt", prompt="x", max_tokens=4,
                                  temperature=7)
        check(False, "temperature 7 accepted")
    except openai.BadRequestError as error:
        check(error.status_code == 400 and error.body and
              error.body.get("param") == "temperature",
              f"400 body: {error.body}")
    try:
        openai.OpenAI(base_url=server.url(), api_key="wrong",
                      max_retries=0).completions.create(
            model="bytegpt", prompt="x", max_tokens=2)
        check(False, "wrong API key accepted")
    except openai.AuthenticationError:
        pass


def metrics_checks(server, docs_dir):
    from prometheus_client.parser import text_string_to_metric_families
    page = server.metrics(headers=AUTH)
    names = set()
    for family in text_string_to_metric_families(page):
        names.add(family.name)
        for sample in family.samples:
            names.add(sample.name)
    with open(os.path.join(docs_dir, "serving-dashboard.json")) as f:
        dashboard = json.load(f)
    wanted = set()
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            for token in target["expr"].replace("(", " ").replace(")", " ") \
                    .replace("[", " ").replace("{", " ").replace(",", " ").split():
                if token.startswith("strata_"):
                    wanted.add(token)
    check(len(wanted) >= 10, f"the dashboard queries {sorted(wanted)}")
    missing = sorted(wanted - names)
    check(not missing, f"dashboard metrics missing from /metrics: {missing}")


def alone_texts(server, texts, max_tokens):
    """Greedy text of each prompt run by itself (one request at a time)."""
    out = []
    for text, n in zip(texts, max_tokens):
        status, _, body = server.request(
            "POST", "/v1/completions",
            {"prompt": text, "max_tokens": n, "temperature": 0}, headers=AUTH)
        check(status == 200, f"alone: {status} {body[:200]}")
        out.append(json.loads(body)["choices"][0]["text"])
    return out


def stream_one(server, text, n):
    conn, resp = h.open_stream(server.host, server.port,
                               {"prompt": text, "max_tokens": n,
                                "temperature": 0, "stream": True},
                               headers=AUTH)
    try:
        if resp.status != 200:
            return resp.status, None
        return 200, h.read_stream(resp)
    finally:
        conn.close()


def run_hostile(server, results):
    for name, expected, send in hostile_cases(server, AUTH):
        try:
            got = send()
        except Exception as error:  # noqa: BLE001 - reported as a failure
            got = f"exception {error!r}"
        results.append((name, expected, got))


def burst_checks(server, clients):
    """|clients| connections opened at the same instant: each gets an answer
    (a stream, or 429 past the queue), none a reset connection (the accept
    queue must hold the burst)."""
    barrier = threading.Barrier(clients)
    outcomes = []

    def one():
        barrier.wait()
        try:
            conn, resp = h.open_stream(server.host, server.port,
                                       {"prompt": "ab", "max_tokens": 2,
                                        "temperature": 0, "stream": True},
                                       headers=AUTH)
            if resp.status == 200:
                done = h.read_stream(resp)[3]
                outcomes.append("stream" if done == 1 else "no [DONE]")
            else:
                resp.read()
                outcomes.append(resp.status)
            conn.close()
        except OSError as error:
            outcomes.append(repr(error))

    threads = [threading.Thread(target=one) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bad = [o for o in outcomes if o not in ("stream", 429)]
    check(len(outcomes) == clients and not bad,
          f"burst of {clients}: {len(bad)} bad outcomes, e.g. {bad[:3]}")
    print(f"  burst of {clients} connections at once: "
          f"{outcomes.count('stream')} streams, {outcomes.count(429)} 429s",
          flush=True)


def load_checks(server, clients):
    texts = prompts(clients)
    rng = random.Random(3)
    max_tokens = [rng.randint(8, 48) for _ in texts]
    started = time.time()
    expected = alone_texts(server, texts, max_tokens)
    print(f"  {clients} prompts alone: {time.time() - started:.1f} s", flush=True)
    hostile = []
    hostile_thread = threading.Thread(target=run_hostile, args=(server, hostile))
    started = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=clients) as pool:
        futures = [pool.submit(stream_one, server, t, n)
                   for t, n in zip(texts, max_tokens)]
        hostile_thread.start()
        results = [f.result() for f in futures]
        elapsed = time.time() - started
    hostile_thread.join()
    print(f"  {clients} concurrent streams: {elapsed:.1f} s", flush=True)
    mismatched = 0
    for i, (status, result) in enumerate(results):
        check(status == 200, f"stream {i}: status {status}")
        if status != 200:
            continue
        text, reason, usage, done, error = result
        check(done == 1 and error is None and reason == "length",
              f"stream {i}: done {done}, error {error}, reason {reason}")
        check(usage and usage["completion_tokens"] == max_tokens[i],
              f"stream {i}: usage {usage}")
        if text != expected[i]:
            mismatched += 1
            if mismatched <= 3:
                check(False, f"stream {i}: {text!r} != alone {expected[i]!r}")
    check(mismatched == 0, f"{mismatched} of {clients} streams differ from alone")
    check(len(hostile) >= 30, f"only {len(hostile)} hostile requests")
    for name, want, got in hostile:
        check(got == want, f"hostile {name}: got {got}, want {want}")
    print(f"  {len(hostile)} hostile requests answered as expected meanwhile",
          flush=True)


def disconnect_checks(server):
    """Streams killed (TCP reset) right after their first bytes: each is
    cancelled, and within a second nothing is left running or waiting."""
    before = server.metrics(headers=AUTH)
    cancelled0 = h.metric_value(before, "strata_requests_total",
                                {"outcome": "cancelled"})
    gone0 = h.metric_value(before, "strata_client_disconnects_total")
    unfinished = 0
    for i in range(16):
        # One at a time: each client is reset as soon as its stream has
        # started (headers, maybe a first token), so it dies mid-stream.
        sock = socket.create_connection((server.host, server.port), timeout=30)
        body = json.dumps({"prompt": f"And {i}", "max_tokens": 240,
                           "temperature": 0, "stream": True}).encode()
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
                     b"Authorization: Bearer " + API_KEY.encode() +
                     b"\r\nContent-Type: application/json\r\nContent-Length: " +
                     str(len(body)).encode() + b"\r\n\r\n" + body)
        answer = sock.recv(65536)
        check(b" 200 " in answer.split(b"\r\n")[0],
              f"a stream did not start: {answer[:200]}")
        unfinished += b"[DONE]" not in answer
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                        b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST on close
        sock.close()
    closed = time.time()
    while True:
        page = server.metrics(headers=AUTH)
        running = h.metric_value(page, "strata_requests_running")
        waiting = h.metric_value(page, "strata_requests_waiting")
        used = h.metric_value(page, "strata_kv_cache_blocks_used")
        if running == 0 and waiting == 0 and used == 0:
            break
        if time.time() - closed > 1.0:
            check(False, f"1 s after the disconnects: running {running}, "
                         f"waiting {waiting}, blocks used {used}")
            break
        time.sleep(0.01)
    released = time.time() - closed
    cancelled = h.metric_value(page, "strata_requests_total",
                               {"outcome": "cancelled"}) - cancelled0
    gone = h.metric_value(page, "strata_client_disconnects_total") - gone0
    print(f"  16 streams killed ({unfinished} before their end): {gone:.0f} "
          f"cancelled mid-stream, all released in {released:.3f} s", flush=True)
    # A stream may end between the client's last read and its reset, so
    # fewer than |unfinished| may be cancelled, but never more, and each
    # cancel is a counted disconnect.
    check(1 <= gone <= unfinished and cancelled == gone,
          f"{gone} disconnects counted, {cancelled} requests cancelled, "
          f"{unfinished} streams killed before their end")


def prefix_checks(server, bin_dir, artifact):
    """Prompts sharing a 97-byte start: the second round finds it cached in
    free slots and gives the text the server without prefix caching gives."""
    prefix = ("In the beginning God created the heavens and the earth. Now "
              "the earth was formless and empty, and ")
    plain = h.Server(bin_dir, artifact, "--no-prefix-caching")
    try:
        hits0 = h.metric_value(server.metrics(headers=AUTH),
                               "strata_prefix_cache_hit_tokens_total")
        differ = 0
        for i in range(24):
            body = {"prompt": prefix + ["darkness", "the Spirit", "God"][i % 3] +
                    f" {i}", "max_tokens": 40, "temperature": 0}
            _, _, cached = server.request("POST", "/v1/completions", body,
                                          headers=AUTH)
            _, _, whole = plain.request("POST", "/v1/completions", body)
            differ += (json.loads(cached)["choices"][0]["text"] !=
                       json.loads(whole)["choices"][0]["text"])
        page = server.metrics(headers=AUTH)
        hits = h.metric_value(page, "strata_prefix_cache_hit_tokens_total") - hits0
        check(differ == 0, f"{differ} of 24 prefix-cached texts differ")
        check(hits >= 16 * len(prefix), f"only {hits} prompt tokens reused")
        print(f"  24 prompts with a shared start: {hits:.0f} prompt tokens "
              f"reused, texts as without reuse", flush=True)
    finally:
        plain.stop()


def queue_and_drain_checks(bin_dir, artifact):
    server = h.Server(bin_dir, artifact, "--model-name", "bytegpt",
                      "--max-seqs", "1", "--max-queue", "2")
    def settled(name, value):
        """Waits (up to 20 s) for a gauge of /metrics to read |value|:
        a request joins the running set at the scheduler's next step, so the
        first stream may still wait in the queue right after its headers."""
        deadline = time.time() + 20
        while h.metric_value(server.metrics(), name) != value:
            if time.time() > deadline:
                return False
            time.sleep(0.01)
        return True

    try:
        opened = []
        for i in range(3):
            opened.append(h.open_stream(server.host, server.port,
                                        {"prompt": f"{i}", "max_tokens": 250,
                                         "temperature": 0, "stream": True}))
            if i == 0:
                check(settled("strata_requests_running", 1),
                      "the first stream never started")
        check(settled("strata_requests_waiting", 2),
              "the second and third streams are not waiting")
        status, headers, body = server.request(
            "POST", "/v1/completions", {"prompt": "x", "max_tokens": 2})
        check(status == 429 and headers.get("Retry-After") == "1" and
              json.loads(body)["error"]["code"] == "queue_full",
              f"full queue: {status} {headers} {body[:200]}")
        code = server.stop()
        for i, (conn, resp) in enumerate(opened):
            text, reason, usage, done, error = h.read_stream(resp)
            check(done == 1 and (reason == "length" or error is not None),
                  f"drained stream {i}: done {done} reason {reason} error {error}")
            conn.close()
        check(code == 0, f"exit code after SIGTERM: {code}")
    finally:
        server.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("fixture_dir")
    parser.add_argument("bin_dir")
    parser.add_argument("--clients", type=int, default=200)
    args = parser.parse_args()
    docs_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                            "..", "..", "docs")
    with tempfile.TemporaryDirectory() as work:
        artifact = os.path.join(work, "bytegpt.strata")
        h.compile_bytegpt(args.bin_dir, args.fixture_dir, artifact)
        server = h.Server(args.bin_dir, artifact, "--api-key", API_KEY,
                          "--timeout-seconds", "2")
        try:
            print("openai client", flush=True)
            openai_checks(server)
            print("metrics", flush=True)
            metrics_checks(server, docs_dir)
            print("load and hostile requests", flush=True)
            load_checks(server, args.clients)
            burst_checks(server, 300)
            print("disconnects", flush=True)
            disconnect_checks(server)
            print("prefix caching", flush=True)
            prefix_checks(server, args.bin_dir, artifact)
        finally:
            code = server.stop()
            check(code == 0, f"exit code after SIGTERM: {code}")
        print("queue and drain", flush=True)
        queue_and_drain_checks(args.bin_dir, artifact)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("strata-serve: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
