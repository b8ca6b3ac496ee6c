#!/usr/bin/env python3
# ===- test/e2e/check_conv_layouts.py - Channels-last runs vs onnxruntime --===#
# SPDX-License-Identifier: Apache-2.0
# The compiler runs fp32 convolutions channels last (strata-conv-channels-
# last) and most of them on the runtime's convolution kernel, which fuses
# a residual add and a ReLU; the ONNX node tests hold one op each, so
# they never reach a run of convolutions. This builds small graphs that
# do: a residual block with max and average pooling (ceil mode, pads not
# counted) between convolutions, strided and dilated convolutions, a
# global average pooling at the end; a 1-D and a 3-D stack; a convolution
# reading a slice (a view, left to the generic lowering) and a weight two
# convolutions share; a residual that broadcasts. Each is compiled with
# strata-compile (a dynamic batch), run with strata-run at batch 1 and 3
# on seeded inputs and compared with onnxruntime: fp32, max|y - ref| <=
# 1e-4 * max(1, max|ref|) (sums of up to a few hundred products per
# output, each rounded once in fp32, in a different order).
# Usage: check_conv_layouts.py BIN_DIR [-v]
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


class Graph:
    """A graph under construction: nodes, seeded initializers."""

    def __init__(self, name, seed):
        self.name, self.nodes, self.inits = name, [], []
        self.rng = np.random.default_rng(seed)
        self.count = 0

    def fresh(self, stem):
        self.count += 1
        return f"{stem}{self.count}"

    def const(self, array):
        name = self.fresh("c")
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type, inputs, **attrs):
        out = self.fresh(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out

    def conv(self, x, cin, cout, kernel, bias=True, **attrs):
        w = (self.rng.standard_normal((cout, cin, *kernel)) /
             np.sqrt(cin * np.prod(kernel))).astype(np.float32)
        inputs = [x, self.const(w)]
        if bias:
            inputs.append(self.const(
                self.rng.standard_normal(cout).astype(np.float32) * 0.1))
        return self.op("Conv", inputs, kernel_shape=list(kernel), **attrs)

    def model(self, x_dims, y):
        graph = helper.make_graph(
            self.nodes, self.name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)],
            [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)],
            self.inits)
        return helper.make_model(graph,
                                 opset_imports=[helper.make_opsetid("", 17)])


def residual_block():
    g = Graph("residual_block", 1)
    s = g.op("Relu", [g.conv("x", 3, 16, (3, 3), pads=[1, 1, 1, 1],
                             strides=[2, 2])])
    p = g.op("MaxPool", [s], kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1])
    a = g.op("Relu", [g.conv(p, 16, 8, (1, 1), bias=False)])
    b = g.op("Relu", [g.conv(a, 8, 8, (3, 3), pads=[1, 1, 1, 1])])
    c = g.conv(b, 8, 16, (1, 1))
    r = g.op("Relu", [g.op("Add", [c, p])])
    q = g.op("AveragePool", [r], kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 0, 1, 1], ceil_mode=1, count_include_pad=0)
    d = g.op("Relu", [g.conv(q, 16, 24, (3, 3), pads=[2, 2, 2, 2],
                             dilations=[2, 2])])
    e = g.conv(d, 24, 24, (3, 2), strides=[2, 1], pads=[1, 0, 1, 1])
    down = g.conv(d, 24, 24, (1, 1), strides=[2, 1], pads=[0, 0, 0, 0])
    f = g.op("Relu", [g.op("Add", [down, e])])
    return g.model(["batch", 3, 29, 27], g.op("GlobalAveragePool", [f]))


def one_and_three_d():
    g = Graph("one_and_three_d", 2)
    a = g.op("Relu", [g.conv("x", 4, 12, (5,), pads=[2, 2], strides=[2])])
    b = g.conv(a, 12, 12, (3,), pads=[1, 1], dilations=[1])
    c = g.op("Relu", [g.op("Add", [a, b])])
    d = g.op("Unsqueeze", [c, g.const(np.array([3], np.int64))])
    e = g.op("Unsqueeze", [d, g.const(np.array([4], np.int64))])
    f = g.op("Relu", [g.conv(e, 12, 6, (3, 1, 1), pads=[1, 0, 0, 1, 0, 0])])
    return g.model(["batch", 4, 40], g.conv(f, 6, 5, (2, 1, 1)))


def views_shared_weights_broadcasts():
    g = Graph("views_shared_weights_broadcasts", 3)
    a = g.op("Relu", [g.conv("x", 6, 8, (3, 3), pads=[1, 1, 1, 1])])
    cut = g.op("Slice", [a, g.const(np.array([1], np.int64)),
                         g.const(np.array([7], np.int64)),
                         g.const(np.array([3], np.int64))])
    w = g.const((g.rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32))
    b = g.op("Conv", [cut, w], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    c = g.op("Conv", [a, w], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    c = g.op("Slice", [c, g.const(np.array([1], np.int64)),
                       g.const(np.array([7], np.int64)),
                       g.const(np.array([3], np.int64))])
    scale = g.const(g.rng.standard_normal((8, 1, 1)).astype(np.float32))
    d = g.op("Relu", [g.op("Add", [g.op("Mul", [b, scale]), c])])
    return g.model(["batch", 6, 9, 10], g.conv(d, 8, 4, (1, 1)))


MODELS = {"residual_block": residual_block,
          "one_and_three_d": one_and_three_d,
          "views_shared_weights_broadcasts": views_shared_weights_broadcasts}


def check(bin_dir, name, model, tmp):
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(model, path)
    artifact = os.path.join(tmp, name + ".strata")
    proc = subprocess.run([os.path.join(bin_dir, "strata-compile"), path, "-o",
                           artifact, "--quiet", "--dim=batch=4"],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode:
        return False, "compile: " + proc.stderr.strip()[-400:]
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    notes = []
    for batch in (1, 3):
        x = np.random.default_rng(batch).standard_normal(
            [batch] + dims[1:]).astype(np.float32)
        ref = sess.run(None, {"x": x})[0]
        out_dir = tempfile.mkdtemp(dir=tmp)
        npy = os.path.join(out_dir, "x.in.npy")
        np.save(npy, x)
        proc = subprocess.run(
            [os.path.join(bin_dir, "strata-run"), artifact, "--output-dir",
             out_dir, "--input", f"x={npy}"],
            capture_output=True, text=True, timeout=600)
        if proc.returncode:
            return False, "run: " + proc.stderr.strip()[-400:]
        output = model.graph.output[0].name
        got = np.load(os.path.join(out_dir, output + ".npy"))
        if got.shape != ref.shape:
            return False, f"batch {batch}: shape {got.shape} != {ref.shape}"
        err = float(np.abs(got - ref).max()) / max(1.0, float(np.abs(ref).max()))
        if not err <= 1e-4:  # NaN fails too
            return False, f"batch {batch}: error {err:.3g} > 1e-4"
        notes.append(f"batch {batch} {err:.2g}")
    return True, ", ".join(notes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin_dir")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory(prefix="strata-conv-layouts-") as tmp:
        for name, build in MODELS.items():
            ok, msg = check(a.bin_dir, name, build(), tmp)
            failed += not ok
            if a.verbose or not ok:
                print(("PASS " if ok else "FAIL ") + name + ": " + msg)
    print(f"{len(MODELS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
