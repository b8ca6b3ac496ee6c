#!/usr/bin/env python3
# ===- bench/gemm/ort_matmul.py - onnxruntime MatMul on the GEMM shapes ----===#
# SPDX-License-Identifier: Apache-2.0
# The onnxruntime side of docs/design/cpu-matmul.md: one MatMul node with
# the weight as an initializer (what MLAS pre-packs), timed like
# strata-gemm-bench (2 warm-up runs, median of 9). Prints the same columns.
# Usage: .venv/bin/python bench/gemm/ort_matmul.py [--threads N]
import argparse
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

SHAPES = [(512, 768, 768), (512, 768, 3072), (512, 3072, 768),
          (128, 768, 2304), (512, 768, 50257), (1, 768, 3072),
          (1, 3072, 768), (1, 768, 50257)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--peak", type=float, default=117.3)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    print(f"onnxruntime {ort.__version__}, threads {args.threads}")
    print(f"{'MxKxN':18s} {'median ms':>10s} {'GFLOP/s':>10s} {'% peak':>8s}")
    for m, k, n in SHAPES:
        w = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["a", "w"], ["c"])], "mm",
            [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])],
            [helper.make_tensor_value_info("c", TensorProto.FLOAT, [m, n])],
            [numpy_helper.from_array(w, "w")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(model.SerializeToString(), so,
                                    providers=["CPUExecutionProvider"])
        times = []
        for r in range(11):
            t0 = time.perf_counter()
            sess.run(None, {"a": a})
            if r >= 2:
                times.append((time.perf_counter() - t0) * 1e3)
        med = sorted(times)[len(times) // 2]
        gflops = 2.0 * m * n * k / (med * 1e6)
        print(f"{m}x{k}x{n:<10d} {med:10.3f} {gflops:10.1f} "
              f"{100 * gflops / (args.peak * args.threads):7.1f}%")


if __name__ == "__main__":
    main()
