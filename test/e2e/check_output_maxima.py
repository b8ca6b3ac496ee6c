#!/usr/bin/env python3
# ===- test/e2e/check_output_maxima.py - output maxima are exact ----------===#
# Compiles every fixture model with small dim maxima (MAXIMA below, given by
# --dim), runs onnxruntime with every input at its compiled maxima, and
# checks that every output dim the artifact records (strata-run --inspect
# --json) is exactly what onnxruntime produces there: a static dim equal, a
# symbolic dim's maximum equal. strata-run then runs the artifact on the
# same inputs: the runtime must accept its outputs and their shapes must be
# onnxruntime's. The maxima are consistent (total = past + new tokens), as a
# valid input at the maxima must be. A fixture whose meta.json lists an
# output under "loose_output_maxima" (with the reason) may record an upper
# bound there: at least onnxruntime's extent, not equal to it.
#
# Usage: check_output_maxima.py MODELS_DIR BIN_DIR [--filter REGEX]
# Prints one line per model and closes with "N passed, M failed".
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

BATCH, NEW, PAST = 2, 3, 4
# Every dim name the fixtures use; a fixture with another name fails until
# it is added here.
MAXIMA = {
    "batch": BATCH, "batch_size": BATCH,
    "sequence": NEW, "sequence_length": NEW,
    "past_sequence": PAST, "past_sequence_length": PAST,
    "total_sequence": PAST + NEW, "total_sequence_length": PAST + NEW,
}


def dim_max(name):
    """The test maximum of dim |name|: a listed name, or a sum of them and
    integers ("past_sequence_length + 1")."""
    if name in MAXIMA:
        return MAXIMA[name]
    if "+" in name:
        total = 0
        for term in (t.strip() for t in name.split("+")):
            if term.isdigit():
                total += int(term)
            elif term in MAXIMA:
                total += MAXIMA[term]
            else:
                return None
        return total
    return None


def input_dim_names(model):
    names = []
    for value in model.graph.input:
        for d in value.type.tensor_type.shape.dim:
            if d.dim_param and d.dim_param not in names:
                names.append(d.dim_param)
    return names


def at_maxima(signature):
    """{input name: array} with every dim at its compiled maximum: ones for
    integers (valid token, position and type ids, an all-ones mask), small
    normal values for floats."""
    rng = np.random.default_rng(0)
    feeds = {}
    for t in signature["inputs"]:
        shape = [d if isinstance(d, int) else d["max"] for d in t["dims"]]
        dtype = t["dtype"]
        if dtype in ("f32", "f16", "f64"):
            np_type = {"f32": np.float32, "f16": np.float16,
                       "f64": np.float64}[dtype]
            feeds[t["name"]] = (rng.standard_normal(shape) * 0.1).astype(
                np_type)
        elif dtype == "bool":
            feeds[t["name"]] = np.ones(shape, np.bool_)
        else:
            feeds[t["name"]] = np.ones(shape, np.dtype(dtype.replace(
                "i", "int").replace("u", "uint")))
    return feeds


def check(bin_dir, model_path, tmp):
    model = onnx.load(model_path)
    flags = []
    for name in input_dim_names(model):
        m = dim_max(name)
        if m is None:
            return False, f"no test maximum for dim '{name}'"
        flags += ["--dim", f"{name}={m}"]
    artifact = os.path.join(tmp, "model.strata")
    proc = subprocess.run([os.path.join(bin_dir, "strata-compile"), model_path,
                           "-o", artifact, "--quiet",
                           "--no-generation-entries"] + flags,
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return False, "compile: " + proc.stderr.strip().splitlines()[-1]
    proc = subprocess.run([os.path.join(bin_dir, "strata-run"), artifact,
                           "--inspect", "--json"], capture_output=True,
                          text=True, timeout=60)
    if proc.returncode != 0:
        return False, "inspect: " + proc.stderr.strip()
    (signature,) = json.loads(proc.stdout)["entries"]
    feeds = at_maxima(signature)

    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model_path, options,
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    ref = dict(zip(names, session.run(names, feeds)))

    meta_path = os.path.join(os.path.dirname(model_path), "meta.json")
    loose = {}
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            loose = json.load(f).get("loose_output_maxima", {})
    symbolic = 0
    for t in signature["outputs"]:
        want = ref[t["name"]].shape
        if len(want) != len(t["dims"]):
            return False, f"{t['name']}: rank {len(t['dims'])} != {len(want)}"
        for d, (dim, extent) in enumerate(zip(t["dims"], want)):
            recorded = dim if isinstance(dim, int) else dim["max"]
            symbolic += not isinstance(dim, int)
            if recorded < extent or (recorded != extent and
                                     t["name"] not in loose):
                what = "extent" if isinstance(dim, int) else \
                    f"maximum of '{dim['symbol']}'"
                return False, (f"{t['name']} dim {d}: recorded {what} "
                               f"{recorded}, onnxruntime gives {extent}")

    # The compiled code at the same maxima: accepted, same shapes.
    cmd = [os.path.join(bin_dir, "strata-run"), artifact, "--json"]
    for name, value in feeds.items():
        path = os.path.join(tmp, re.sub(r"[^A-Za-z0-9._-]", "_", name) +
                            ".npy")
        np.save(path, value)
        cmd += ["--input", f"{name}={path}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return False, "run at the maxima: " + proc.stderr.strip()
    for out in json.loads(proc.stdout)["outputs"]:
        if tuple(out["shape"]) != ref[out["name"]].shape:
            return False, (f"{out['name']}: strata-run shape {out['shape']}, "
                           f"onnxruntime {list(ref[out['name']].shape)}")
    return True, f"{symbolic} symbolic output dims"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models_dir")
    ap.add_argument("bin_dir")
    ap.add_argument("--filter", default="")
    a = ap.parse_args()
    passed = failed = 0
    for model_path in sorted(glob.glob(os.path.join(a.models_dir, "fixtures",
                                                    "*", "*.onnx"))):
        label = os.path.relpath(model_path, a.models_dir)
        if a.filter and not re.search(a.filter, label):
            continue
        with tempfile.TemporaryDirectory(prefix="strata-maxima-") as tmp:
            try:
                ok, msg = check(a.bin_dir, model_path, tmp)
            except Exception as e:  # onnxruntime or a tool failing oddly
                ok, msg = False, f"{type(e).__name__}: {e}"
        passed += ok
        failed += not ok
        print(("PASS " if ok else "FAIL ") + label + (f" ({msg})" if ok
                                                      else f": {msg}"))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
