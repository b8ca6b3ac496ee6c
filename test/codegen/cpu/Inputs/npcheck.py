# Shared by the check_*.py scripts of the codegen tests: run an artifact
# with strata-run on numpy inputs, compare its outputs with numpy
# references, and the attention reference.
import os
import subprocess
import sys

import numpy as np


def run(artifact, work, inputs, threads=2, extra=()):
    """Saves |inputs| (name -> array) as .npy in |work| and runs |artifact|
    on them with strata-run ($STRATA_RUN or the one on PATH), outputs to
    |work|."""
    os.makedirs(work, exist_ok=True)
    cmd = [os.environ.get("STRATA_RUN", "strata-run"), artifact,
           "--output-dir", work, "--threads", str(threads), *extra]
    for name, value in inputs.items():
        path = os.path.join(work, name + ".npy")
        np.save(path, value)
        cmd += ["--input", f"{name}={path}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def compare(work, refs, relative=1e-5):
    """Exits with a message unless every output |name| in |work| has the
    shape of refs[name] and max|y - ref| <= relative * max(1, max|ref|)."""
    for name, ref in refs.items():
        got = np.load(os.path.join(work, name + ".npy"))
        err = np.abs(got - ref).max()
        tol = relative * max(1.0, np.abs(ref).max())
        print(f"{name}: max err {err:.2e} (tolerance {tol:.1e})")
        if got.shape != ref.shape or not err <= tol:
            sys.exit(f"{name} does not match numpy")


def attention(q, k, v, mask, causal):
    """softmax(Q K^T / sqrt(D) + mask) V in float64, KV heads repeated for
    their query group, causal rows seeing keys <= their own position."""
    k = np.repeat(k.astype(np.float64), q.shape[1] // k.shape[1], axis=1)
    v = np.repeat(v.astype(np.float64), q.shape[1] // v.shape[1], axis=1)
    s = q.astype(np.float64) @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[3]) + mask
    if causal:
        s = np.where(np.tril(np.ones(s.shape[2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v
