"""Hostile requests for strata-serve, each with the answer it must get.

hostile_cases(server, auth) yields (name, expected, send): send() returns
the HTTP status the server answered, or "closed" when it closed the
connection without an answer (a client too slow to send its request)."""
import json

import serve_harness as h

LONG_PROMPT = "x" * 300  # over the test artifact's 256-token context


def hostile_cases(server, auth):
    def post(body, headers=None, raw=False):
        def send():
            data = body if raw else json.dumps(body).encode()
            status, _, _ = server.request("POST", "/v1/completions", data,
                                          headers=auth if headers is None else headers)
            return status
        return send

    def raw(data, pause_after=None, timeout=4):
        def send():
            answer = h.raw_exchange(server.host, server.port, data,
                                    timeout=timeout, pause_after=pause_after)
            status = h.status_of(answer)
            return "closed" if status is None else status
        return send

    key = auth["Authorization"].split(" ", 1)[1]
    auth_line = b"Authorization: Bearer " + key.encode() + b"\r\n"
    ok_body = {"prompt": "x", "max_tokens": 2}

    # Malformed and wrongly shaped bodies.
    yield "not json", 400, post(b"{", raw=True)
    yield "json array", 400, post([1, 2])
    yield "json string", 400, post("prompt")
    yield "empty body", 400, post(b"", raw=True)
    yield "invalid utf-8", 400, post(b'{"prompt": "\xff\xfe"}', raw=True)
    yield "deep nesting", 400, post(b"[" * 100000, raw=True)
    # Fields of the wrong type or out of range.
    yield "prompt missing", 400, post({"max_tokens": 2})
    yield "prompt number", 400, post({"prompt": 5})
    yield "prompt null", 400, post({"prompt": None})
    yield "two prompts", 400, post({"prompt": ["a", "b"]})
    yield "token id too big", 400, post({"prompt": [1, 300]})
    yield "token id negative", 400, post({"prompt": [-1]})
    yield "prompt too long", 400, post({"prompt": LONG_PROMPT})
    yield "max_tokens string", 400, post({"prompt": "x", "max_tokens": "9"})
    yield "max_tokens negative", 400, post({"prompt": "x", "max_tokens": -3})
    yield "max_tokens zero", 400, post({"prompt": "x", "max_tokens": 0})
    yield "max_tokens absurd", 400, post({"prompt": "x", "max_tokens": 10**12})
    yield "max_tokens fraction", 400, post({"prompt": "x", "max_tokens": 3.5})
    yield "temperature negative", 400, post({"prompt": "x", "temperature": -1})
    yield "temperature text", 400, post({"prompt": "x", "temperature": "hot"})
    yield "top_p zero", 400, post({"prompt": "x", "top_p": 0})
    yield "top_p above one", 400, post({"prompt": "x", "top_p": 5})
    yield "top_k negative", 400, post({"prompt": "x", "top_k": -3})
    yield "seed text", 400, post({"prompt": "x", "seed": "abc"})
    yield "stop number", 400, post({"prompt": "x", "stop": 42})
    yield "five stops", 400, post({"prompt": "x", "stop": list("abcde")})
    yield "stream text", 400, post({"prompt": "x", "stream": "yes"})
    yield "n three", 400, post({"prompt": "x", "n": 3})
    yield "logprobs", 400, post({"prompt": "x", "logprobs": 5})
    yield "unknown model", 400, post({"prompt": "x", "model": "gpt-9"})
    yield "model number", 400, post({"prompt": "x", "model": 7})
    # Sizes.
    yield "body over the limit", 413, post(
        {"prompt": "x" * (2 << 20)})
    yield "header over the limit", 400, raw(
        b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000 +
        b"\r\nContent-Length: 2\r\n\r\n{}")
    # httplib reads a negative length as an enormous one.
    yield "bad content-length", 413, raw(
        b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n" + auth_line +
        b"Content-Length: -5\r\n\r\n{}")
    # Access.
    yield "no api key", 401, post(ok_body, headers={})
    yield "wrong api key", 401, post(ok_body, headers={"Authorization": "Bearer nope"})
    yield "key without bearer", 401, post(ok_body, headers={"Authorization": key})
    yield "metrics without key", 401, lambda: server.request("GET", "/metrics")[0]
    # Routes.
    yield "unknown route", 404, lambda: server.request("GET", "/v2/none",
                                                       headers=auth)[0]
    yield "get completions", 404, lambda: server.request(
        "GET", "/v1/completions", headers=auth)[0]
    # Slow clients: the read timeout (2 s in the test) closes a connection
    # that has not sent its headers, and answers 400 to a body cut short.
    yield "slow headers", "closed", raw(
        b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n", pause_after=30)
    yield "slow body", 400, raw(
        b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n" + auth_line +
        b"Content-Length: 100\r\n\r\n{\"prompt\"", pause_after=58)
