"""Checks the outputs of aliasing.onnxtext against numpy."""
import os
import sys

import numpy as np

x = np.load(sys.argv[1])
out = sys.argv[2]
want = {"same": x, "c": np.array([1.5, -2.0], np.float32), "t": x.T,
        "r": x.reshape(-1, 2, 2)}
for name, value in want.items():
    got = np.load(os.path.join(out, name + ".npy"))
    print(name, "ok" if np.array_equal(got, value) else f"WRONG {got}")
