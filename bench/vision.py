#!/usr/bin/env python3
# ===- bench/vision.py - CNN and ViT inference vs onnxruntime -------------===#
# Single-run latency of the ImageNet-shaped vision models, side by side in
# one run, rounds interleaved, medians:
#   resnet50   ResNet-50 (bottleneck blocks [3, 4, 6, 3], BatchNorm, 224x224),
#              at batch 1 and 8
#   vit_b16    ViT-B/16 (16x16 Conv patch embedding, 12 pre-LN blocks of
#              width 768 with 12 heads, exact GELU), at batch 1
# Random weights (the architecture, not the weights, sets the time), built in
# torch here and exported by torch.onnx.export (dynamo=False, opset 17, a
# dynamic batch dim) into ~/.cache/strata/models/vision/ (cached). Engines:
#   strata  `strata-compile` with defaults, `strata-run --repeat R --threads T
#           --json` (the first run of each round is a warm-up, not counted)
#   ort     onnxruntime from the bench virtualenv, ORT_ENABLE_ALL, intra-op T
#           threads, inter-op 1, CPU provider, same inputs
# Outputs are compared (max |strata - ort| / max(1, max|ort|)) on the first
# round. Also reported: each model's FLOPs (2 per multiply-accumulate of its
# convolutions and matmuls, as direct products) over each engine's time: an
# effective rate, which Strata's Winograd convolutions (fewer
# multiplications than the direct product) can lift past the FMA peak.
#
# Usage: ~/.cache/strata/bench-venv/bin/python bench/vision.py
#        [--models resnet50,vit_b16] [--batches 1,8] [--threads 2]
#        [--rounds 5] [--repeat 5] [--out FILE.json]
import argparse
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.expanduser("~/.cache/strata/models/vision")
BIN = os.environ.get("STRATA_BIN", os.path.join(ROOT, "build", "bin"))


def resnet50():
    import torch
    from torch import nn

    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride):
            super().__init__()
            cout = width * 4
            self.body = nn.Sequential(
                nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width),
                nn.ReLU(inplace=True),
                nn.Conv2d(width, width, 3, stride, 1, bias=False),
                nn.BatchNorm2d(width), nn.ReLU(inplace=True),
                nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout))
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False),
                    nn.BatchNorm2d(cout))

        def forward(self, x):
            skip = x if self.down is None else self.down(x)
            return torch.relu(self.body(x) + skip)

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
              nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for width, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2),
                                  (512, 3, 2)]:
        for i in range(blocks):
            layers.append(Bottleneck(cin, width, stride if i == 0 else 1))
            cin = width * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, 1000)]
    return nn.Sequential(*layers)


def vit_b16():
    import torch
    from torch import nn

    # The fixtures' pre-LN transformer block, at ViT-B/16's width.
    sys.path.insert(0, os.path.join(ROOT, "test", "models"))
    from gen_vision_fixtures import Block

    class ViT(nn.Module):
        def __init__(self, d=768, heads=12, depth=12, patch=16, image=224):
            super().__init__()
            self.embed = nn.Conv2d(3, d, patch, patch)
            self.cls = nn.Parameter(torch.zeros(1, 1, d))
            self.pos = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, d) * 0.02)
            self.blocks = nn.ModuleList([Block(d, heads) for _ in range(depth)])
            self.norm = nn.LayerNorm(d)
            self.head = nn.Linear(d, 1000)

        def forward(self, x):
            x = self.embed(x).flatten(2).transpose(1, 2)
            x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.norm(x)[:, 0])

    return ViT()


MODELS = {"resnet50": resnet50, "vit_b16": vit_b16}


def export(name):
    path = os.path.join(CACHE, name + ".onnx")
    if os.path.exists(path):
        return path
    import torch
    torch.manual_seed(0)
    model = MODELS[name]().eval()
    with torch.no_grad():  # BN statistics away from the identity
        for mod in model.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.running_mean.normal_(0, 0.1)
                mod.running_var.uniform_(0.5, 1.5)
    os.makedirs(CACHE, exist_ok=True)
    x = torch.randn(1, 3, 224, 224)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), buf, opset_version=17,
                          input_names=["pixel_values"], output_names=["logits"],
                          dynamic_axes={"pixel_values": {0: "batch"},
                                        "logits": {0: "batch"}},
                          do_constant_folding=True, dynamo=False)
    with open(path + ".tmp", "wb") as f:
        f.write(buf.getvalue())
    os.replace(path + ".tmp", path)
    return path


def flops(path, batch):
    """2 x the multiply-accumulates of the Conv, MatMul and Gemm nodes,
    from onnxruntime-free shape inference at |batch|."""
    import onnx
    from onnx import shape_inference
    model = onnx.load(path)
    for inp in model.graph.input:
        dim = inp.type.tensor_type.shape.dim[0]
        dim.Clear()
        dim.dim_value = batch
    model = shape_inference.infer_shapes(model, data_prop=True)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in list(model.graph.value_info) + list(model.graph.input)
              + list(model.graph.output)}
    for init in model.graph.initializer:
        shapes[init.name] = list(init.dims)
    total = 0
    for node in model.graph.node:
        if node.op_type == "Conv":
            w, y = shapes[node.input[1]], shapes[node.output[0]]
            total += 2 * int(np.prod(y)) * int(np.prod(w[1:]))
        elif node.op_type in ("MatMul", "Gemm"):
            a, y = shapes[node.input[0]], shapes[node.output[0]]
            total += 2 * int(np.prod(y)) * a[-1]
    return total


def ort_session(path, threads):
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def time_ort(sess, feeds, repeat):
    sess.run(None, feeds)  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def time_strata(artifact, npy, threads, repeat, out_dir=None):
    cmd = [os.path.join(BIN, "strata-run"), artifact, "--input",
           "pixel_values=" + npy, "--repeat", str(repeat + 1), "--threads",
           str(threads), "--json"]
    if out_dir:
        cmd += ["--output-dir", out_dir]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    report = json.loads(proc.stdout[proc.stdout.index("{"):])
    runs = report["entries"][0]["runs_ms"] if "entries" in report else report["runs_ms"]
    return statistics.median(runs[1:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="resnet50,vit_b16")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench", "vision.json"))
    a = ap.parse_args()
    import onnxruntime as ort
    workloads = []
    for name in a.models.split(","):
        for batch in map(int, a.batches.split(",")):
            if name == "vit_b16" and batch != 1:
                continue  # the acceptance's ViT workload is batch 1
            workloads.append((name, batch))
    tmp = tempfile.mkdtemp(prefix="strata-vision-")
    setup = {}
    for name in {n for n, _ in workloads}:
        path = export(name)
        artifact = os.path.join(tmp, name + ".strata")
        t0 = time.perf_counter()
        subprocess.run([os.path.join(BIN, "strata-compile"), path, "-o",
                        artifact, "--quiet"], check=True)
        setup[name] = (path, artifact, time.perf_counter() - t0,
                       ort_session(path, a.threads))
    inputs = {}
    for name, batch in workloads:
        x = np.random.default_rng(batch).standard_normal(
            (batch, 3, 224, 224)).astype(np.float32)
        npy = os.path.join(tmp, "x%d.npy" % batch)
        np.save(npy, x)
        inputs[(name, batch)] = (x, npy)
    samples = {w: {"strata": [], "ort": []} for w in workloads}
    errors = {}
    for r in range(a.rounds):
        for w in workloads:
            name, batch = w
            path, artifact, _, sess = setup[name]
            x, npy = inputs[w]
            out_dir = tempfile.mkdtemp(dir=tmp) if r == 0 else None
            samples[w]["strata"].append(time_strata(artifact, npy, a.threads,
                                                    a.repeat, out_dir))
            samples[w]["ort"].append(time_ort(sess, {"pixel_values": x}, a.repeat))
            if out_dir:
                ref = sess.run(None, {"pixel_values": x})[0]
                got = np.load(os.path.join(out_dir, "logits.npy"))
                errors[w] = float(np.abs(got - ref).max() / max(1.0, np.abs(ref).max()))
        print("round %d done" % (r + 1), file=sys.stderr)
    rows = []
    for w in workloads:
        name, batch = w
        s = statistics.median(samples[w]["strata"])
        o = statistics.median(samples[w]["ort"])
        per_round = [x / y for x, y in zip(samples[w]["strata"], samples[w]["ort"])]
        f = flops(setup[name][0], batch)
        rows.append({"model": name, "batch": batch, "strata_ms": s, "ort_ms": o,
                     "ratio_of_medians": s / o,
                     "median_round_ratio": statistics.median(per_round),
                     "strata_gflops": f / s / 1e6, "ort_gflops": f / o / 1e6,
                     "gflop": f / 1e9, "max_rel_error": errors[w],
                     "strata_rounds_ms": samples[w]["strata"],
                     "ort_rounds_ms": samples[w]["ort"]})
    print("| model | batch | Strata ms | ORT ms | Strata / ORT | Strata GFLOP/s | ORT GFLOP/s | max rel. error |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print("| %s | %d | %.1f | %.1f | %.2fx | %.0f | %.0f | %.1e |" % (
            row["model"], row["batch"], row["strata_ms"], row["ort_ms"],
            row["median_round_ratio"], row["strata_gflops"], row["ort_gflops"],
            row["max_rel_error"]))
    for name in sorted(setup):
        print("compile %s: %.1f s" % (name, setup[name][2]))
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump({"threads": a.threads, "rounds": a.rounds, "repeat": a.repeat,
                   "onnxruntime": ort.__version__, "machine": platform.machine(),
                   "cpu_flags_avx512": "avx512f" in open("/proc/cpuinfo").read(),
                   "compile_s": {n: setup[n][2] for n in setup}, "rows": rows},
                  f, indent=1)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
