# ===- bench/engines.py - engines the benchmark compares -----------------===#
# One class per engine, all with the same interface, so bench.py runs the same
# workloads on each:
#   OrtEngine     onnxruntime, graph optimizations on (ORT_ENABLE_ALL),
#                 intra-op threads = N, inter-op 1, in this process. With
#                 variant="ortopt" it runs the transformers-optimizer output.
#   StrataEngine  the slot for Strata: compiles once with build/bin/strata-compile
#                 (one artifact for every length) and runs a whole round's plan in
#                 build/bin/strata-bench. Until the CPU backend lands, the tools are
#                 missing or refuse the model, and the engine reports "pending".
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


class StrataEngine:
    """Slot for Strata. The harness needs from the tools (contract for the CPU
    backend issue, see bench/README.md):
      strata-compile PREFILL.onnx --decode DECODE.onnx -o ARTIFACT
      strata-bench ARTIFACT --threads N --plan PLAN.json --json
    where PLAN.json is {"workloads": [{"kind": "prefill", "seq": 128, "batch": 1}, ...]}
    and strata-bench prints {"load_seconds": s, "peak_rss_bytes": n,
    "results": [{"seconds": s, "ttft_seconds": s?}, ...]} in plan order."""

    name = "strata"

    def __init__(self, model_dir, threads, bin_dir=None):
        self.model_dir, self.threads = model_dir, threads
        self.bin = bin_dir or os.environ.get("STRATA_BIN", os.path.join(ROOT, "build", "bin"))
        self.compile_seconds = self.load_seconds = None
        self.reason = None
        self.artifact = None

    def available(self):
        for tool in ("strata-compile", "strata-bench"):
            if not os.access(os.path.join(self.bin, tool), os.X_OK):
                self.reason = "%s not built (CPU backend pending)" % tool
                return False
        return True

    def compile(self, workdir):
        self.artifact = os.path.join(workdir, "model.strata")
        cmd = [os.path.join(self.bin, "strata-compile"),
               os.path.join(self.model_dir, "prefill.onnx"),
               "--decode", os.path.join(self.model_dir, "decode.onnx"), "-o", self.artifact]
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        self.compile_seconds = time.perf_counter() - t0
        if r.returncode != 0:
            self.reason = "strata-compile failed (CPU backend pending): %s" % (
                (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1][:120])
            return False
        return True

    def run_plan(self, workloads):
        """Runs one round; returns a list of result dicts in plan order."""
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"workloads": workloads}, f)
            plan = f.name
        try:
            r = subprocess.run([os.path.join(self.bin, "strata-bench"), self.artifact,
                                "--threads", str(self.threads), "--plan", plan, "--json"],
                               capture_output=True, text=True, check=True)
        finally:
            os.unlink(plan)
        out = json.loads(r.stdout)
        self.load_seconds = out.get("load_seconds")
        self.peak_rss = out.get("peak_rss_bytes")
        return out["results"]
