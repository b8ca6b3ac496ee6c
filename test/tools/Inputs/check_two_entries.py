#!/usr/bin/env python3
# ===- check_two_entries.py - both entries' outputs and the artifact size -===#
# Compares DIR/prefill/y.npy and DIR/decode/y.npy (strata-run outputs) with
# the expected outputs make_two_entries.py saved (fp32 tolerance 1e-4 *
# max(1, max|ref|)), and checks that DIR/two.strata holds the 256 KiB weight
# once: smaller than two copies. Prints one line each; exits 1 on failure.
import os
import sys

import numpy as np

WEIGHT_BYTES = 256 * 256 * 4


def main():
    d = sys.argv[1]
    ok = True
    for entry in ("prefill", "decode"):
        got = np.load(os.path.join(d, entry, "y.npy"))
        want = np.load(os.path.join(d, entry + "_y.npy"))
        tol = 1e-4 * max(1.0, float(np.abs(want).max()))
        err = float(np.abs(got.astype(np.float64) - want).max()) \
            if got.shape == want.shape else float("inf")
        print(f"{entry} {'ok' if err <= tol else 'WRONG'} {got.shape}")
        ok &= err <= tol
    size = os.path.getsize(os.path.join(d, "two.strata"))
    print(f"artifact {size} bytes for a {WEIGHT_BYTES}-byte weight: "
          f"{'one copy' if size < 2 * WEIGHT_BYTES else 'TWO COPIES'}")
    ok &= size < 2 * WEIGHT_BYTES
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
