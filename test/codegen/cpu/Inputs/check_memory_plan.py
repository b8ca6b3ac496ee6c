#!/usr/bin/env python3
# Runs memory_plan.onnxtext's artifact at two row counts (the arena is
# sized for the maximum, each run uses part of it) and compares y with
# numpy in float64 (fp32 tolerance 1e-5 * max(1, max|ref|): 5 chained
# products of 32-64 terms of values in [-0.5, 0.5)).
import os
import subprocess
import sys

import numpy as np

model, artifact, work = sys.argv[1:4]
rng = np.random.default_rng(2)
w1 = rng.uniform(-0.5, 0.5, (64, 32)).astype(np.float32)
w2 = rng.uniform(-0.5, 0.5, (32, 64)).astype(np.float32)
for rows in (7, 100):
    out = os.path.join(work, str(rows))
    os.makedirs(out, exist_ok=True)
    x = rng.uniform(-0.5, 0.5, (rows, 64)).astype(np.float32)
    cmd = [os.environ.get("STRATA_RUN", "strata-run"), artifact,
           "--output-dir", out, "--repeat", "2"]
    for name, value in (("x", x), ("w1", w1), ("w2", w2)):
        np.save(os.path.join(out, name + ".npy"), value)
        cmd += ["--input", f"{name}={os.path.join(out, name + '.npy')}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    d = x.astype(np.float64)
    for w in (w1, w2, w1, w2, w1):
        d = d @ w
    got = np.load(os.path.join(out, "y.npy"))
    err = np.abs(got - d).max()
    tol = 1e-5 * max(1.0, np.abs(d).max())
    print(f"rows {rows}: max err {err:.2e} (tolerance {tol:.1e})")
    if got.shape != d.shape or not err <= tol:
        sys.exit(f"rows {rows}: y does not match numpy")
