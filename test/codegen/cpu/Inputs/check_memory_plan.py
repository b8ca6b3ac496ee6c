#!/usr/bin/env python3
# Runs memory_plan.onnxtext's artifact at two row counts (the arena is
# sized for the maximum, each run uses part of it) and compares y with
# numpy in float64 (fp32 tolerance 1e-5 * max(1, max|ref|): 5 chained
# products of 32-64 terms of values in [-0.5, 0.5)).
import os
import sys

import numpy as np

import npcheck

model, artifact, work = sys.argv[1:4]
rng = np.random.default_rng(2)
w1 = rng.uniform(-0.5, 0.5, (64, 32)).astype(np.float32)
w2 = rng.uniform(-0.5, 0.5, (32, 64)).astype(np.float32)
for rows in (7, 100):
    out = os.path.join(work, str(rows))
    x = rng.uniform(-0.5, 0.5, (rows, 64)).astype(np.float32)
    npcheck.run(artifact, out, {"x": x, "w1": w1, "w2": w2}, threads=1,
                extra=("--repeat", "2"))
    y = x.astype(np.float64)
    for w in (w1, w2, w1, w2, w1):
        y = y @ w
    npcheck.compare(out, {"y": y})
