#!/usr/bin/env python3
# ===- test/e2e/check_quantized_import.py - pre-quantized models vs ORT ----===#
# SPDX-License-Identifier: Apache-2.0
# Compiles every pre-quantized fixture of test/import/Inputs/quantized with
# strata-compile, runs it with strata-run on seeded inputs and compares with
# onnxruntime on the same inputs. Tolerances, as max|y - ref| <= tol *
# max(1, max|ref|) (measured maxima in docs/design/precision.md):
#   nbits4_*   (quantized_linear bits 4): 2e-2. Strata's int4 kernel
#              quantizes each activation row to int8 per group (absmax/127)
#              at run time; onnxruntime's default accuracy level computes in
#              fp32. That rounding is ~0.4% of each group's absmax per term.
#   nbits4_asym (dequantized at import, strata.linear): 1e-4, fp32 math.
#   nbits8_*   (quantized_linear bits 8, weight-only): 1e-4: the same
#              products as ORT's up to fp32 summation order.
#   qdq_*      (int8 weights on quantized_linear, activation Q/DQ exact;
#              qdq_rounding feeds rounding ties and saturating values and
#              also compares the int8 tensor):
#              1e-4, against ORT with graph optimizations off, which runs
#              the Q/DQ ops as written (with them on it fuses QLinear
#              kernels that requantize differently).
#   dynamic_*  (DynamicQuantizeLinear + MatMulInteger, exact integers): 1e-4,
#              ORT optimizations off for the same reason.
# Usage: check_quantized_import.py FIXTURE_DIR BIN_DIR [-v]
# Prints one line per model (with its error) and "N passed, M failed".
import argparse
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

# Symbolic dims of the fixtures and the extents they run at.
DIMS = {"batch": 2, "seq": 5, "rows": 3, "m": 4}


def tolerance(name):
    if name.startswith("nbits4_") and name != "nbits4_asym":
        return 2e-2
    return 1e-4


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fixture_dir")
    ap.add_argument("bin_dir")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="strata-quant-") as tmp:
        for path in sorted(glob.glob(os.path.join(a.fixture_dir, "*.onnx"))):
            name = os.path.splitext(os.path.basename(path))[0]
            ok, msg = check(a.bin_dir, path, name, tmp)
            passed += ok
            failed += not ok
            print(("PASS " if ok else "FAIL ") + name +
                  (f": {msg}" if msg and (a.verbose or not ok) else ""))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


def check(bin_dir, path, name, tmp):
    model = onnx.load(path)
    rng = np.random.default_rng(sum(map(ord, name)))  # seeded per model
    feeds = {}
    for inp in model.graph.input:
        dims = [d.dim_value if d.HasField("dim_value") else DIMS[d.dim_param]
                for d in inp.type.tensor_type.shape.dim]
        x = rng.standard_normal(dims) * 2
        if "rounding" in name:  # a 1/128 grid: ties for power-of-2 scales
            x = np.round(x * 128) / 128
        feeds[inp.name] = x.astype(np.float32)
    opts = ort.SessionOptions()
    if not name.startswith("nbits"):
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    refs = dict(zip([o.name for o in sess.get_outputs()],
                    sess.run(None, feeds)))
    artifact = os.path.join(tmp, name + ".strata")
    cmd = [os.path.join(bin_dir, "strata-compile"), path, "-o", artifact,
           "--quiet", "--no-generation-entries"]
    cmd += [f"--dim={k}={v}" for k, v in DIMS.items()
            if any(d.dim_param == k for i in model.graph.input
                   for d in i.type.tensor_type.shape.dim)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode:
        return False, "compile: " + proc.stderr.strip()[-300:]
    out_dir = tempfile.mkdtemp(dir=tmp)
    cmd = [os.path.join(bin_dir, "strata-run"), artifact, "--output-dir",
           out_dir]
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
        scale = max(1.0, float(np.abs(ref).max()))
        err = float(np.abs(got.astype(np.float64) - ref.astype(np.float64))
                    .max()) / scale
        if not err <= tolerance(name):  # NaN fails too
            return False, f"{key}: error {err:.3g} > {tolerance(name):.0e}"
        notes.append(f"{key} max error {err:.2g} (tol {tolerance(name):.0e})")
    return True, ", ".join(notes)


if __name__ == "__main__":
    sys.exit(main())
