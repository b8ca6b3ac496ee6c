#!/usr/bin/env python3
# ===- make_npy_corpus.py - seed corpus of the .npy fuzzer -----------------===#
# SPDX-License-Identifier: Apache-2.0
"""Writes test/fuzz/npy-corpus/: seeds for strata-npy-fuzzer.

    .venv/bin/python test/fuzz/make_npy_corpus.py

Arrays as NumPy itself saves them (np.save): every dtype the reader takes,
scalars, empty and rank-8 shapes, Fortran-order arrays of rank 1 (read)
and 2 (refused), a bool array, and the version 2.0 and 3.0 headers
(np.lib.format with an explicit version). Each file is at most a few
hundred bytes. Deterministic: rerunning leaves git clean.
"""

import io
import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "npy-corpus")


def save(name, array, version=None):
    buffer = io.BytesIO()
    if version is None:
        np.save(buffer, array, allow_pickle=False)
    else:
        np.lib.format.write_array(buffer, array, version=version,
                                  allow_pickle=False)
    with open(os.path.join(OUT, name + ".npy"), "wb") as f:
        f.write(buffer.getvalue())


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    save("f32_2x3", np.arange(6, dtype="<f4").reshape(2, 3))
    save("f16_4", np.array([0.5, -1, np.inf, np.nan], dtype="<f2"))
    save("f64_scalar", np.array(3.25, dtype="<f8"))
    save("i64_ids", np.array([[1, 50256, 0, 7]], dtype="<i8"))
    save("i32_empty", np.zeros((0, 3), dtype="<i4"))
    save("i16_rank8", np.arange(2, dtype="<i2").reshape(1, 1, 1, 1, 1, 1, 1, 2))
    save("i8_values", np.array([-8, 7, 0, -1], dtype="i1"))
    save("u8_codes", np.array([0, 15, 255], dtype="u1"))
    save("u16_bf16_bits", np.array([0x3F80, 0xC000], dtype="<u2"))
    save("u32_u64", np.array([1, 2**32 - 1], dtype="<u4"))
    save("u64_big", np.array([2**63], dtype="<u8"))
    save("bool_mask", np.array([[True, False, True]]))
    # np.save marks 1-D arrays C-order; this header says Fortran, as older
    # writers did, which the reader accepts for rank <= 1.
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": "<f4", "fortran_order": True, "shape": (3,)})
    buffer.write(np.arange(3, dtype="<f4").tobytes())
    with open(os.path.join(OUT, "fortran_1d.npy"), "wb") as f:
        f.write(buffer.getvalue())
    save("fortran_2x2",
         np.asfortranarray(np.arange(4, dtype="<f4").reshape(2, 2)))
    save("v2_header", np.arange(4, dtype="<i8"), version=(2, 0))
    save("v3_header", np.arange(2, dtype="<f4"), version=(3, 0))


if __name__ == "__main__":
    main()
