# Writes the .npy inputs of checked-inputs.test into DIR: one good set and
# one set per hazard (the planted value in the last element).
import os
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(name, **arrays):
    for key, value in arrays.items():
        np.save(os.path.join(out, f"{name}-{key}.npy"), value)


good = dict(ids=np.array([0, 9, -1, -10], np.int64),
            num=np.array([7, -7, np.iinfo(np.int64).min, 9], np.int64),
            den=np.array([2, 2, -1, -3], np.int64),
            x=np.arange(6, dtype=np.float32),
            shape=np.array([2, 3], np.int64),
            pos=np.array([0.0, 1.5, 9.9, -1.0], np.float32))
save("good", **good)
save("id10", **{**good, "ids": np.array([0, 1, 2, 10], np.int64)})
save("idneg", **{**good, "ids": np.array([0, 1, 2, -11], np.int64)})
save("id2pow40", **{**good, "ids": np.array([0, 1, 2, 2**40], np.int64)})
save("den0", **{**good, "den": np.array([2, 2, 1, 0], np.int64)})
save("shape", **{**good, "shape": np.array([4, 3], np.int64)})
save("huge", **{**good, "shape": np.array([2**40, 0], np.int64)})
save("nan", **{**good, "pos": np.array([0, 1, 2, np.nan], np.float32)})
save("inf", **{**good, "pos": np.array([0, 1, 2, np.inf], np.float32)})
save("empty", ids=np.zeros(0, np.int64), num=np.zeros(0, np.int64),
     den=np.zeros(0, np.int64), x=np.zeros(0, np.float32),
     shape=np.array([0, 3], np.int64), pos=np.zeros(0, np.float32))
