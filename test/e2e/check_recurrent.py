#!/usr/bin/env python3
# ===- test/e2e/check_recurrent.py - RNN/GRU/LSTM variants vs onnxruntime ---===#
# SPDX-License-Identifier: Apache-2.0
# The ONNX node tests cover forward layers with default activations only.
# This builds one small model per variant the importer unrolls differently
# (reverse and bidirectional, sequence_lens with the reverse direction
# starting at each row's last step, initial states, clip, batch-first
# layout, GRU's linear_before_reset, LSTM peepholes and input_forget,
# activations with alpha/beta, a dynamic batch), compiles it with
# strata-compile, runs it with strata-run on seeded inputs and compares
# every output (Y, Y_h, Y_c) with onnxruntime's (which runs no batch-first
# layout: those are checked against the layout-0 model on transposed
# inputs, outputs transposed back): fp32,
# max|y - ref| <= 1e-4 * max(1, max|ref|) (a few fp32 roundings per step).
# Usage: check_recurrent.py BIN_DIR [-v]
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

STEPS, BATCH, INPUT, HIDDEN = 5, 3, 4, 6
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}

# name: (op, attributes, optional inputs given)
VARIANTS = {
    "rnn_reverse_lens": ("RNN", dict(direction="reverse"), {"B", "sequence_lens"}),
    "rnn_bidirectional_leaky": ("RNN", dict(direction="bidirectional",
                                            activations=["LeakyRelu", "Elu"],
                                            activation_alpha=[0.2, 0.7]),
                                {"B", "initial_h"}),
    "gru_bidirectional_lens": ("GRU", dict(direction="bidirectional"),
                               {"B", "sequence_lens", "initial_h"}),
    "gru_linear_before_reset": ("GRU", dict(linear_before_reset=1, clip=0.9),
                                {"B"}),
    "gru_batch_first": ("GRU", dict(layout=1, direction="reverse"),
                        {"B", "initial_h"}),
    "lstm_bidirectional_peepholes": ("LSTM", dict(direction="bidirectional"),
                                     {"B", "sequence_lens", "initial_h",
                                      "initial_c", "P"}),
    "lstm_input_forget_hardsigmoid": ("LSTM", dict(
        input_forget=1, activations=["HardSigmoid", "Tanh", "ScaledTanh"],
        activation_alpha=[0.3, 0.8], activation_beta=[0.4, 1.2]), {"B"}),
    "lstm_batch_first_lens": ("LSTM", dict(layout=1),
                              {"B", "sequence_lens", "initial_h", "initial_c"}),
}


def build(op, attrs, given):
    d = 2 if attrs.get("direction") == "bidirectional" else 1
    g = GATES[op]
    batch_first = attrs.get("layout", 0) == 1
    x_dims = ["batch", STEPS, INPUT] if batch_first else [STEPS, "batch", INPUT]
    state = ["batch", d, HIDDEN] if batch_first else [d, "batch", HIDDEN]
    specs = [("X", x_dims, TensorProto.FLOAT),
             ("W", [d, g * HIDDEN, INPUT], TensorProto.FLOAT),
             ("R", [d, g * HIDDEN, HIDDEN], TensorProto.FLOAT),
             ("B", [d, 2 * g * HIDDEN], TensorProto.FLOAT),
             ("sequence_lens", ["batch"], TensorProto.INT32),
             ("initial_h", state, TensorProto.FLOAT),
             ("initial_c", state, TensorProto.FLOAT),
             ("P", [d, 3 * HIDDEN], TensorProto.FLOAT)]
    if op != "LSTM":
        specs = specs[:6]
    names, inputs = [], []
    for name, dims, dtype in specs:
        if name in ("X", "W", "R") or name in given:
            names.append(name)
            inputs.append(helper.make_tensor_value_info(name, dtype, dims))
        else:
            names.append("")
    while names and not names[-1]:
        names.pop()
    y = ["batch", STEPS, d, HIDDEN] if batch_first else [STEPS, d, "batch", HIDDEN]
    outs = [("Y", y), ("Y_h", state)] + ([("Y_c", state)] if op == "LSTM" else [])
    node = helper.make_node(op, names, [n for n, _ in outs],
                            hidden_size=HIDDEN, **attrs)
    graph = helper.make_graph(
        [node], "recurrent", inputs,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, dims)
         for n, dims in outs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


def feeds_for(model, rng):
    feeds = {}
    for inp in model.graph.input:
        dims = [dim.dim_value or BATCH for dim in inp.type.tensor_type.shape.dim]
        if inp.name == "sequence_lens":
            feeds[inp.name] = np.array([STEPS, 2, 4], np.int32)
        else:
            feeds[inp.name] = (rng.standard_normal(dims) * 0.5).astype(np.float32)
    return feeds


def references(op, attrs, given, feeds, tmp):
    """onnxruntime's outputs; batch-first via the layout-0 model."""
    batch_first = attrs.get("layout", 0) == 1
    model = build(op, {**attrs, "layout": 0}, given)
    path = os.path.join(tmp, "reference.onnx")
    onnx.save(model, path)
    swap = {"X": (1, 0, 2), "initial_h": (1, 0, 2), "initial_c": (1, 0, 2)}
    inputs = {k: np.ascontiguousarray(v.transpose(swap[k]))
              if batch_first and k in swap else v for k, v in feeds.items()}
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    outs = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, inputs)))
    if batch_first:  # Y [T, D, B, H] -> [B, T, D, H]; states [D, B, H] -> [B, D, H]
        outs = {k: v.transpose((2, 0, 1, 3) if k == "Y" else (1, 0, 2))
                for k, v in outs.items()}
    return outs


def check(bin_dir, name, variant, tmp):
    model = build(*variant)
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(model, path)
    feeds = feeds_for(model, np.random.default_rng(sum(map(ord, name))))
    refs = references(*variant, feeds, tmp)
    artifact = os.path.join(tmp, name + ".strata")
    proc = subprocess.run([os.path.join(bin_dir, "strata-compile"), path, "-o",
                           artifact, "--quiet", "--dim=batch=4"],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode:
        return False, "compile: " + proc.stderr.strip()[-300:]
    out_dir = tempfile.mkdtemp(dir=tmp)
    cmd = [os.path.join(bin_dir, "strata-run"), artifact, "--output-dir", out_dir]
    for key, value in feeds.items():
        npy = os.path.join(out_dir, key + ".in.npy")
        np.save(npy, value)
        cmd += ["--input", f"{key}={npy}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode:
        return False, "run: " + proc.stderr.strip()[-300:]
    notes = []
    for key, ref in refs.items():
        got = np.load(os.path.join(out_dir, key + ".npy"))
        if got.shape != ref.shape:
            return False, f"{key}: shape {got.shape} != {ref.shape}"
        err = float(np.abs(got - ref).max()) / max(1.0, float(np.abs(ref).max()))
        if not err <= 1e-4:  # NaN fails too
            return False, f"{key}: error {err:.3g} > 1e-4"
        notes.append(f"{key} {err:.2g}")
    return True, ", ".join(notes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin_dir")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="strata-recurrent-") as tmp:
        for name, variant in VARIANTS.items():
            ok, msg = check(a.bin_dir, name, variant, tmp)
            passed += ok
            failed += not ok
            print(("PASS " if ok else "FAIL ") + name +
                  (f": {msg}" if msg and (a.verbose or not ok) else ""))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
