# ===- bench/engines.py - engines the benchmark compares -----------------===#
# One class per engine, all with the same interface, so bench.py runs the same
# workloads on each:
#   OrtEngine     onnxruntime, graph optimizations on (ORT_ENABLE_ALL),
#                 intra-op threads = N, inter-op 1, in this process. With
#                 variant="ortopt" it runs the transformers-optimizer output.
#   StrataEngine  Strata: compile_strata() compiles prefill.onnx and decode.onnx
#                 once with build/bin/strata-compile (one artifact each, for every
#                 length), and each round's plan runs in one build/bin/strata-bench
#                 process. If a tool is missing or fails, the columns read
#                 "pending" and the run says why.
#
# Workloads (batch b; all ids random but seeded):
#   prefill(seq, b)        one prefill call                   -> seconds
#   decode(ctx, b)         one decode step, past = ctx - 1    -> seconds (mean of 4)
#   generate(b, p, g)      prompt p, g greedy tokens          -> (seconds, ttft)
import json
import os
import subprocess
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class OrtEngine:
    def __init__(self, model_dir, threads, variant="ort"):
        import onnxruntime as ort
        self.name = variant
        self.threads = threads
        sub = "ortopt" if variant == "ortopt" else ""
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        t0 = time.perf_counter()
        self.pre = ort.InferenceSession(os.path.join(model_dir, sub, "prefill.onnx"), so,
                                        providers=["CPUExecutionProvider"])
        self.dec = ort.InferenceSession(os.path.join(model_dir, sub, "decode.onnx"), so,
                                        providers=["CPUExecutionProvider"])
        self.load_seconds = time.perf_counter() - t0
        self.compile_seconds = None  # onnxruntime optimizes inside load
        self.out_names = [o.name for o in self.pre.get_outputs()]
        past = [i for i in self.dec.get_inputs() if i.name.startswith("past_key_values.")]
        self.past_names = [i.name for i in past]
        self.kv_heads, self.head_dim = past[0].shape[1], past[0].shape[3]
        self.vocab = None
        self._cache = {}

    # -- helpers ------------------------------------------------------------
    def _ids(self, b, s, seed):
        rng = np.random.default_rng(seed)
        return rng.integers(0, 256, size=(b, s)).astype(np.int64)

    def _past(self, b, n):
        key = (b, n)
        if key not in self._cache:
            rng = np.random.default_rng(n)
            self._cache = {key: {name: rng.standard_normal(
                (b, self.kv_heads, n, self.head_dim), dtype=np.float32)
                for name in self.past_names}}
        return self._cache[key]

    # -- workloads ----------------------------------------------------------
    def prefill(self, seq, b=1):
        feeds = {"input_ids": self._ids(b, seq, seq), "attention_mask": np.ones((b, seq), np.int64)}
        t0 = time.perf_counter()
        self.pre.run(["logits"], feeds)
        return time.perf_counter() - t0

    def decode(self, ctx, b=1, reps=4):
        feeds = dict(self._past(b, ctx - 1))
        feeds["input_ids"] = self._ids(b, 1, ctx)
        feeds["attention_mask"] = np.ones((b, ctx), np.int64)
        self.dec.run(["logits"], feeds)  # warm the shapes
        t0 = time.perf_counter()
        for _ in range(reps):
            self.dec.run(None, feeds)
        return (time.perf_counter() - t0) / reps

    def generate(self, b, prompt, gen):
        ids = self._ids(b, prompt, b)
        t0 = time.perf_counter()
        outs = self.pre.run(None, {"input_ids": ids, "attention_mask": np.ones((b, prompt), np.int64)})
        nxt = outs[0][:, -1, :].argmax(-1)[:, None]
        ttft = time.perf_counter() - t0
        total = prompt
        dnames = [o.name for o in self.dec.get_outputs()]
        names = self.out_names
        for _ in range(gen - 1):
            total += 1
            feeds = {"input_ids": nxt.astype(np.int64), "attention_mask": np.ones((b, total), np.int64)}
            for n, v in zip(names, outs):
                if n.startswith("present."):
                    feeds["past_key_values." + n[8:]] = v
            outs = self.dec.run(None, feeds)
            names = dnames
            nxt = outs[0][:, -1, :].argmax(-1)[:, None]
        return time.perf_counter() - t0, ttft


class StrataError(RuntimeError):
    """A Strata tool failed; the message is its last error line."""


def strata_bin():
    return os.environ.get("STRATA_BIN", os.path.join(ROOT, "build", "bin"))


def _last_line(r):
    lines = (r.stderr or "").strip().splitlines()
    return lines[-1][:300] if lines else "exit %d" % r.returncode


def compile_strata(model_dir, out_dir, max_seq, max_batch, bin_dir=None, reuse=False):
    """Compiles prefill.onnx and decode.onnx once into out_dir/strata/ with
    strata-compile (--max-seq/--max-batch cover every workload). Returns
    (artifacts, compile seconds per role, cached?) or raises StrataError.
    With reuse, artifacts compiled earlier from the same models, flags and
    strata-compile binary are kept and their recorded compile times reported."""
    bin_dir = bin_dir or strata_bin()
    tool = os.path.join(bin_dir, "strata-compile")
    for t in ("strata-compile", "strata-bench"):
        if not os.access(os.path.join(bin_dir, t), os.X_OK):
            raise StrataError("%s not built in %s" % (t, bin_dir))
    work = os.path.join(out_dir, "strata")
    os.makedirs(work, exist_ok=True)
    # Tuned for this host, as onnxruntime picks its kernels for it at load.
    flags = ["--max-seq", str(max_seq), "--max-batch", str(max_batch),
             "--target-cpu", "native", "--quiet"]
    arts = {r: os.path.join(work, r + ".strata") for r in ("prefill", "decode")}
    key = {"tool_mtime": os.stat(tool).st_mtime, "flags": flags, "models": {
        r: [os.path.join(model_dir, r + ".onnx"),
            os.stat(os.path.join(model_dir, r + ".onnx")).st_mtime] for r in arts}}
    record = os.path.join(work, "compile.json")
    if reuse and os.path.exists(record) and all(os.path.exists(a) for a in arts.values()):
        with open(record) as f:
            rec = json.load(f)
        if rec.get("key") == key:
            return arts, rec["seconds"], True
    seconds = {}
    for role, art in arts.items():
        cmd = [tool, os.path.join(model_dir, role + ".onnx"), "-o", art] + flags
        print("[bench] %s" % " ".join(cmd), flush=True)
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        seconds[role] = time.perf_counter() - t0
        if r.returncode != 0:
            raise StrataError("strata-compile %s.onnx failed: %s" % (role, _last_line(r)))
    with open(record, "w") as f:
        json.dump({"key": key, "seconds": seconds}, f, indent=1)
    return arts, seconds, False


class StrataEngine:
    """Strata through build/bin/strata-bench (contract in bench/README.md):
      strata-compile prefill.onnx -o P.strata --max-seq S --max-batch B
      strata-compile decode.onnx  -o D.strata --max-seq S --max-batch B
      strata-bench --prefill P.strata --decode D.strata --threads N
                   --plan PLAN.json --json
    where PLAN.json is {"workloads": [{"kind": "prefill", "seq": 128, "batch": 1}, ...]}
    and strata-bench prints {"load_seconds": s, "peak_rss_bytes": n,
    "results": [{"seconds": s, "ttft_seconds": s?, ...}, ...]} in plan order.
    One strata-bench process per round: it loads both artifacts, keeps one
    session per artifact for the whole plan and runs each workload once
    untimed (--warmup 1) before timing it, as onnxruntime's sessions are warm
    from the previous round."""

    name = "strata"

    def __init__(self, artifacts, threads, warmup=1, bin_dir=None):
        self.artifacts, self.threads, self.warmup = artifacts, threads, warmup
        self.bin = bin_dir or strata_bin()
        self.load_seconds = self.peak_rss = None
        self.round_loads = []

    def run_plan(self, workloads, warmup=None):
        """Runs one plan in a fresh strata-bench process; returns its JSON
        object (results in plan order) or raises StrataError."""
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"workloads": workloads}, f)
            plan = f.name
        cmd = [os.path.join(self.bin, "strata-bench"), "--prefill", self.artifacts["prefill"],
               "--decode", self.artifacts["decode"], "--threads", str(self.threads),
               "--warmup", str(self.warmup if warmup is None else warmup),
               "--plan", plan, "--json"]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True)
        finally:
            os.unlink(plan)
        if r.returncode != 0:
            raise StrataError("strata-bench failed: %s" % _last_line(r))
        try:
            out = json.loads(r.stdout)
            if len(out["results"]) != len(workloads):
                raise ValueError("%d results for %d workloads"
                                 % (len(out["results"]), len(workloads)))
        except (ValueError, KeyError) as e:
            raise StrataError("strata-bench printed unexpected output (%s)" % e)
        return out

    def round(self, workloads):
        out = self.run_plan(workloads)
        self.round_loads.append(out["load_seconds"])
        return out["results"]

    def rss(self, gen_prompt, gen_tokens, prefill_seq):
        """Peak RSS and load time of a fresh process that loads both
        artifacts, generates at batch 1 and runs one prefill (the same
        procedure as onnxruntime's, bench.py rss_worker)."""
        out = self.run_plan([dict(kind="generate", batch=1, prompt=gen_prompt, gen=gen_tokens),
                             dict(kind="prefill", seq=prefill_seq, batch=1)], warmup=0)
        self.peak_rss, self.load_seconds = out["peak_rss_bytes"], out["load_seconds"]
        return out
