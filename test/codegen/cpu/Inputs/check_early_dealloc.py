#!/usr/bin/env python3
# Runs early_dealloc.onnxtext's artifact and compares its outputs with numpy
# (fp32 tolerance 1e-5 * max(1, max|ref|): sums of 9 terms).
import os
import subprocess
import sys

import numpy as np

model, artifact, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(1)
inputs = {
    "q": rng.uniform(-1, 1, (2, 4, 9, 16)),
    "k": rng.uniform(-1, 1, (2, 2, 9, 16)),
    "v": rng.uniform(-1, 1, (2, 2, 9, 16)),
    "m0": np.zeros((2, 1, 1, 9)),
    "q1": rng.uniform(-1, 1, (2, 4, 1, 16)),
}
inputs["m0"][1, ..., 5:] = -1e4  # padding: overwritten by -m0 it would dominate
cmd = [os.environ.get("STRATA_RUN", "strata-run"), artifact, "--output-dir",
       work, "--threads", "1"]
for name, value in inputs.items():
    inputs[name] = value.astype(np.float32)
    np.save(os.path.join(work, name + ".npy"), inputs[name])
    cmd += ["--input", f"{name}={os.path.join(work, name + '.npy')}"]
subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def attention(q, k, v, mask, causal):
    k = np.repeat(k.astype(np.float64), q.shape[1] // k.shape[1], axis=1)
    v = np.repeat(v.astype(np.float64), q.shape[1] // v.shape[1], axis=1)
    s = q.astype(np.float64) @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[3]) + mask
    if causal:
        s = np.where(np.tril(np.ones(s.shape[2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


i = inputs
mask = 2 * i["m0"]
refs = {"prefill": attention(i["q"], i["k"], i["v"], mask, True),
        "flipped": -i["m0"],
        "decode": attention(i["q1"], i["k"], i["v"], mask, False)}
for name, ref in refs.items():
    got = np.load(os.path.join(work, name + ".npy"))
    err = np.abs(got - ref).max()
    tol = 1e-5 * max(1.0, np.abs(ref).max())
    print(f"{name}: max err {err:.2e} (tolerance {tol:.1e})")
    if got.shape != ref.shape or not err <= tol:
        sys.exit(f"{name} does not match numpy")
