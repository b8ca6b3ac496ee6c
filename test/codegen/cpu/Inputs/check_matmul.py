#!/usr/bin/env python3
# Runs matmul.onnxtext's artifact on random inputs and compares every output
# with numpy (fp32 tolerance 1e-5 * max(1, max|ref|): K = 5 terms).
import re
import sys

import numpy as np

import npcheck

model, artifact, work = sys.argv[1:4]
text = open(model).read()
inits = dict(re.findall(r"float\[[\d,]+\] (\w+) = \{([^}]*)\}", text))
w = np.array([float(v) for v in inits["w"].split(",")], np.float32).reshape(5, 37)
bias = np.array([float(v) for v in inits["bias"].split(",")], np.float32)
rng = np.random.default_rng(0)
x = rng.uniform(-1, 1, (2, 3, 5)).astype(np.float32)
y = rng.uniform(-1, 1, (2, 4, 5)).astype(np.float32)
npcheck.run(artifact, work, {"x": x, "y": y})
npcheck.compare(work, {"xw": x @ w, "xyt": x @ y.transpose(0, 2, 1),
                       "gemm": x[0] @ w + bias})
