#!/usr/bin/env python3
# Runs attention.onnxtext's artifact on random inputs and compares both
# outputs with numpy's softmax(Q K^T / sqrt(D) + mask) V (grouped-query
# heads repeated, causal rows see keys <= their own position). fp32
# tolerance 1e-5 * max(1, max|ref|): sums of 9 terms and one exp each.
import sys

import numpy as np

import npcheck

model, artifact, work = sys.argv[1:4]
rng = np.random.default_rng(0)
i = {
    "q": rng.uniform(-1, 1, (2, 4, 9, 16)),
    "k": rng.uniform(-1, 1, (2, 2, 9, 16)),
    "v": rng.uniform(-1, 1, (2, 2, 9, 16)),
    "mask": np.zeros((2, 1, 1, 9)),
    "q1": rng.uniform(-1, 1, (2, 4, 1, 16)),
}
i["mask"][1, ..., 6:] = -1e9  # batch 1: the last three keys are padding
i = {name: value.astype(np.float32) for name, value in i.items()}
npcheck.run(artifact, work, i)
npcheck.compare(work, {
    "prefill": npcheck.attention(i["q"], i["k"], i["v"], i["mask"], True),
    "decode": npcheck.attention(i["q1"], i["k"], i["v"], i["mask"], False)})
