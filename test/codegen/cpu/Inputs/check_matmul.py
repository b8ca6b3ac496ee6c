#!/usr/bin/env python3
# Runs matmul.onnxtext's artifact on random inputs and compares every output
# with numpy (fp32 tolerance 1e-5 * max(1, max|ref|): K = 5 terms).
import os
import re
import subprocess
import sys

import numpy as np

model, artifact, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
text = open(model).read()
inits = dict(re.findall(r"float\[[\d,]+\] (\w+) = \{([^}]*)\}", text))
w = np.array([float(v) for v in inits["w"].split(",")], np.float32).reshape(5, 37)
bias = np.array([float(v) for v in inits["bias"].split(",")], np.float32)
rng = np.random.default_rng(0)
x = rng.uniform(-1, 1, (2, 3, 5)).astype(np.float32)
y = rng.uniform(-1, 1, (2, 4, 5)).astype(np.float32)
np.save(os.path.join(work, "x.npy"), x)
np.save(os.path.join(work, "y.npy"), y)
run = os.environ.get("STRATA_RUN", "strata-run")
subprocess.run([run, artifact, "--input", "x=" + os.path.join(work, "x.npy"),
                "--input", "y=" + os.path.join(work, "y.npy"),
                "--output-dir", work, "--threads", "2"], check=True,
               stdout=subprocess.DEVNULL)
refs = {"xw": x @ w, "xyt": x @ y.transpose(0, 2, 1), "gemm": x[0] @ w + bias}
for name, ref in refs.items():
    got = np.load(os.path.join(work, name + ".npy"))
    err = np.abs(got - ref).max()
    tol = 1e-5 * max(1.0, np.abs(ref).max())
    print(f"{name}: max err {err:.2e} (tolerance {tol:.1e})")
    if got.shape != ref.shape or not err <= tol:
        sys.exit(f"{name} does not match numpy")
