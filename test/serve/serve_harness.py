"""Starting strata-serve and talking to it, for the server tests.

Raw HTTP goes through http.client and plain sockets (the hostile requests
need byte-level control); the OpenAI client is used by the tests that check
compatibility."""
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import time


def compile_bytegpt(bin_dir, fixture_dir, out, max_batch=8, max_seq=256):
    """The trained byte-level model as a prefill/decode artifact."""
    subprocess.run([os.path.join(bin_dir, "strata-compile"),
                    os.path.join(fixture_dir, "prefill.onnx"),
                    os.path.join(fixture_dir, "decode.onnx"), "-o", out,
                    "--quiet", "--max-batch", str(max_batch),
                    "--max-seq", str(max_seq)], check=True, timeout=900)


class Server:
    """strata-serve on a free loopback port; stop() sends SIGTERM."""

    def __init__(self, bin_dir, artifact, *extra):
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir, "strata-serve"), artifact, "--port", "0",
             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        match = re.search(r"http://([^:]+):(\d+)", line)
        if not match:
            err = self.proc.stderr.read()
            raise RuntimeError(f"strata-serve did not start: {line!r} {err!r}")
        self.host, self.port = match.group(1), int(match.group(2))

    def url(self):
        return f"http://{self.host}:{self.port}/v1"

    def request(self, method, path, body=None, headers=None, timeout=60):
        """(status, headers dict, body bytes) of one request."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            data = body if isinstance(body, (bytes, type(None))) else \
                json.dumps(body).encode()
            conn.request(method, path, body=data, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, dict(resp.getheaders()), resp.read()
        finally:
            conn.close()

    def metrics(self, headers=None):
        status, _, body = self.request("GET", "/metrics", headers=headers)
        assert status == 200, status
        return body.decode()

    def stop(self, timeout=60):
        """SIGTERM; the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None


def post_all(server, bodies, path="/v1/completions"):
    """Sends every body at once (one thread each); per body, its parsed
    JSON answer, or a string saying why there is none."""
    import threading
    results = [None] * len(bodies)

    def one(i):
        try:
            status, _, raw = server.request(
                "POST", path, bodies[i], {"Content-Type": "application/json"})
            results[i] = (json.loads(raw) if status == 200 else
                          f"HTTP {status}: {raw!r}")
        except Exception as e:  # noqa: BLE001 (the caller reports it)
            results[i] = repr(e)

    threads = [threading.Thread(target=one, args=(i,))
               for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def metric_value(page, name, labels=None):
    """A sample's value from a Prometheus page, parsed by prometheus_client."""
    from prometheus_client.parser import text_string_to_metric_families
    for family in text_string_to_metric_families(page):
        for sample in family.samples:
            if sample.name == name and (labels is None or sample.labels == labels):
                return sample.value
    raise KeyError(name)


def stream_events(sock_file):
    """Yields the data payloads of a server-sent event stream."""
    for raw in sock_file:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if line.startswith("data: "):
            yield line[len("data: "):]


def open_stream(host, port, body, headers=None, timeout=120):
    """A raw streaming POST: (socket, file of the chunked body decoded)."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    conn.request("POST", "/v1/completions", body=json.dumps(body).encode(),
                 headers={"Content-Type": "application/json", **(headers or {})})
    resp = conn.getresponse()
    return conn, resp


def read_stream(resp):
    """(text, finish_reason, usage, done_count, error) of a whole stream."""
    text, reason, usage, done, error = "", None, None, 0, None
    buffer = b""
    while True:
        chunk = resp.read1(65536) if hasattr(resp, "read1") else resp.read(65536)
        if not chunk:
            break
        buffer += chunk
    for block in buffer.split(b"\n\n"):
        line = block.decode("utf-8", "replace").strip()
        if not line.startswith("data: "):
            continue
        payload = line[len("data: "):]
        if payload == "[DONE]":
            done += 1
            continue
        event = json.loads(payload)
        if "error" in event:
            error = event["error"]
            continue
        choice = event["choices"][0]
        text += choice["text"]
        if choice["finish_reason"]:
            reason = choice["finish_reason"]
            usage = event.get("usage")
    return text, reason, usage, done, error


def raw_exchange(host, port, data, timeout=10, pause_after=None):
    """Sends raw bytes (optionally stopping before the end for a pause) and
    returns what the server answered before closing or the timeout."""
    sock = socket.create_connection((host, port), timeout=timeout)
    try:
        if pause_after is not None:
            sock.sendall(data[:pause_after])
            time.sleep(timeout)  # never send the rest
        else:
            sock.sendall(data)
        received = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not chunk:
                break
            received += chunk
            if b"\r\n\r\n" in received and b"Content-Length" in received:
                head, _, rest = received.partition(b"\r\n\r\n")
                length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
                if len(rest) >= length:
                    break
        return received
    finally:
        sock.close()


def status_of(raw):
    """The status code of a raw HTTP response, or None if there was none."""
    match = re.match(rb"HTTP/1\.[01] (\d{3})", raw)
    return int(match.group(1)) if match else None
