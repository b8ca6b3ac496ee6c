#!/usr/bin/env python3
# ===- test/tools/check_strata_bench.py - strata-bench end to end ----------===#
# SPDX-License-Identifier: Apache-2.0
# Compiles the trained fixture's prefill and decode models, runs strata-bench
# with a plan of every workload kind and checks the JSON object of
# bench/README.md and that its greedy generation (present.* fed back as
# past_key_values.*) gives onnxruntime's tokens; then checks that bad plans, bad arguments and bad
# artifacts each end with exit status 1 and one "strata-bench: error:" line
# naming the problem (never a signal).
#
# Usage: check_strata_bench.py MODEL_DIR BIN_DIR WORK_DIR
import json
import os
import shutil
import subprocess
import sys


def ort_greedy(model_dir, prompt_ids, gen):
    """onnxruntime's greedy generation from the same prompt ids, feeding
    present.* back as past_key_values.* (bench/engines.py does the same)."""
    import numpy as np
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 3
    pre = ort.InferenceSession(os.path.join(model_dir, "prefill.onnx"), so,
                               providers=["CPUExecutionProvider"])
    dec = ort.InferenceSession(os.path.join(model_dir, "decode.onnx"), so,
                               providers=["CPUExecutionProvider"])
    ids = np.array(prompt_ids, dtype=np.int64)
    b, total = ids.shape
    outs = pre.run(None, {"input_ids": ids, "attention_mask": np.ones((b, total), np.int64)})
    names = [o.name for o in pre.get_outputs()]
    tokens = [outs[0][:, -1, :].argmax(-1)]
    for _ in range(gen - 1):
        total += 1
        feeds = {"input_ids": tokens[-1][:, None].astype(np.int64),
                 "attention_mask": np.ones((b, total), np.int64)}
        for n, v in zip(names, outs):
            if n.startswith("present."):
                feeds["past_key_values." + n[len("present."):]] = v
        outs = dec.run(None, feeds)
        names = [o.name for o in dec.get_outputs()]
        tokens.append(outs[0][:, -1, :].argmax(-1))
    return np.stack(tokens, 1).tolist()


def main():
    model_dir, bin_dir, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    compile_ = os.path.join(bin_dir, "strata-compile")
    bench = os.path.join(bin_dir, "strata-bench")
    arts = {}
    for role in ("prefill", "decode"):
        arts[role] = os.path.join(work, role + ".strata")
        subprocess.run([compile_, os.path.join(model_dir, role + ".onnx"), "-o", arts[role],
                        "--max-seq", "64", "--max-batch", "2", "--quiet"], check=True)
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL: " + what)

    def plan(name, obj):
        path = os.path.join(work, name)
        with open(path, "w") as f:
            f.write(obj if isinstance(obj, str) else json.dumps(obj))
        return path

    def bench_run(*args):
        return subprocess.run([bench] + list(args), capture_output=True, text=True)

    # --- a good plan: one workload of each kind ------------------------------
    # The decode artifact has the prefill/decode entries (compiled with
    # defaults), so `generate` runs through the runtime's generator; its
    # greedy tokens are compared with onnxruntime's below.
    workloads = [{"kind": "prefill", "seq": 16, "batch": 1},
                 {"kind": "decode", "ctx": 32, "batch": 2},
                 {"kind": "generate", "batch": 2, "prompt": 8, "gen": 4},
                 {"kind": "ttft", "seq": 12}]
    good = plan("good.json", {"workloads": workloads})
    r = bench_run("--prefill", arts["prefill"], "--decode", arts["decode"], "--threads", "2",
                  "--plan", good, "--json", "--tokens")
    check(r.returncode == 0, "good plan exits 0 (got %d: %s)" % (r.returncode, r.stderr.strip()))
    if r.returncode == 0:
        out = json.loads(r.stdout)
        for key in ("prefill_artifact", "decode_artifact", "threads", "load_seconds",
                    "prefill_load_seconds", "decode_load_seconds", "peak_rss_bytes", "results"):
            check(key in out, "top-level key '%s'" % key)
        check(out.get("threads") == 2, "threads echoed")
        check(out.get("load_seconds", 0) > 0, "load_seconds > 0")
        check(out.get("peak_rss_bytes", 0) > 0, "peak_rss_bytes > 0")
        res = out.get("results", [])
        check(len(res) == len(workloads), "one result per workload")
        for w, x in zip(workloads, res):
            for k, v in w.items():
                check(x.get(k) == v, "result echoes %s=%r of %s" % (k, v, w["kind"]))
            check(x.get("seconds", 0) > 0, "%s: seconds > 0" % w["kind"])
            if w["kind"] in ("generate", "ttft"):
                check(0 < x.get("ttft_seconds", 0) <= x["seconds"],
                      "%s: 0 < ttft_seconds <= seconds" % w["kind"])
            if w["kind"] == "generate":
                check(x.get("tokens_per_second", 0) > 0, "generate: tokens_per_second")
                expected = ort_greedy(model_dir, x["prompt_ids"], w["gen"])
                check(x.get("tokens") == expected,
                      "generate: greedy tokens %s match onnxruntime's %s"
                      % (x.get("tokens"), expected))
            if w["kind"] == "decode":
                check(x.get("steps") == 4, "decode: 4 steps by default")
    # The table form prints one line per workload.
    r = bench_run("--prefill", arts["prefill"], "--decode", arts["decode"], "--plan", good,
                  "--warmup", "0")
    check(r.returncode == 0 and r.stdout.count("\n") == len(workloads) + 1,
          "table output: one line per workload plus the summary (%r)" % r.stdout)

    # --- errors: exit 1, one line naming the problem ---------------------------
    truncated = os.path.join(work, "truncated.strata")
    with open(arts["decode"], "rb") as f:
        data = f.read()
    with open(truncated, "wb") as f:
        f.write(data[:len(data) // 2])
    both = ["--prefill", arts["prefill"], "--decode", arts["decode"]]
    cases = [
        ("plan is not JSON", both + ["--plan", plan("bad1.json", "{\"workloads\": [")],
         "invalid JSON"),
        ("unknown kind", both + ["--plan", plan("bad2.json", {"workloads": [{"kind": "train"}]})],
         "unknown kind 'train'"),
        ("typo in a key", both + ["--plan", plan("bad3.json", {"workloads": [
            {"kind": "prefill", "sequence": 8}]})], "unknown key 'sequence'"),
        ("zero length", both + ["--plan", plan("bad4.json", {"workloads": [
            {"kind": "prefill", "seq": 0}]})], "'seq' must be an integer"),
        ("empty plan", both + ["--plan", plan("bad5.json", {"workloads": []})], "is empty"),
        ("above the compiled maximum", both + ["--plan", plan("bad6.json", {"workloads": [
            {"kind": "prefill", "seq": 8}, {"kind": "decode", "ctx": 200}]})],
         "above the compiled maximum 64"),
        ("missing role", ["--prefill", arts["prefill"], "--plan", good],
         "needs a decode artifact"),
        ("missing plan file", both + ["--plan", os.path.join(work, "nope.json")],
         "cannot read the plan"),
        ("missing artifact", ["--prefill", os.path.join(work, "nope.strata"), "--plan", good],
         "NOT_FOUND"),
        ("truncated artifact", ["--prefill", arts["prefill"], "--decode", truncated,
                                "--plan", good], "DATA_LOSS"),
        ("prefill artifact as decode", ["--prefill", arts["prefill"], "--decode",
                                        arts["prefill"], "--plan", good], "past"),
        ("bad thread count", both + ["--plan", good, "--threads", "-1"], "--threads"),
        ("unknown flag", both + ["--plan", good, "--rounds", "3"], "unknown argument"),
    ]
    for name, args, needle in cases:
        r = bench_run(*args)
        first = (r.stderr.strip().splitlines() or [""])[0]
        check(r.returncode == 1 and first.startswith("strata-bench: error:") and needle in first,
              "%s: exit 1 and an error naming '%s' (got %d: %r)"
              % (name, needle, r.returncode, first))
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("strata-bench: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
