#!/usr/bin/env python3
# Runs early_dealloc.onnxtext's artifact and compares its outputs with numpy
# (fp32 tolerance 1e-5 * max(1, max|ref|): sums of 9 terms).
import sys

import numpy as np

import npcheck

model, artifact, work = sys.argv[1:4]
rng = np.random.default_rng(1)
i = {
    "q": rng.uniform(-1, 1, (2, 4, 9, 16)),
    "k": rng.uniform(-1, 1, (2, 2, 9, 16)),
    "v": rng.uniform(-1, 1, (2, 2, 9, 16)),
    "m0": np.zeros((2, 1, 1, 9)),
    "q1": rng.uniform(-1, 1, (2, 4, 1, 16)),
}
i["m0"][1, ..., 5:] = -1e4  # padding: overwritten by -m0 it would dominate
i = {name: value.astype(np.float32) for name, value in i.items()}
npcheck.run(artifact, work, i, threads=1)
mask = 2 * i["m0"]
npcheck.compare(work, {
    "prefill": npcheck.attention(i["q"], i["k"], i["v"], mask, True),
    "flipped": -i["m0"],
    "decode": npcheck.attention(i["q1"], i["k"], i["v"], mask, False)})
