#!/usr/bin/env python3
# ===- make_input_corpus.py - seed corpus of the input fuzzer ---------------===#
# SPDX-License-Identifier: Apache-2.0
"""Writes test/fuzz/input-corpus/<fixture>/: seeds for strata-input-fuzzer.

    /usr/bin/python3 test/fuzz/make_input_corpus.py

Each seed is one input in the fuzzer's byte layout (input_fuzzer.cpp): two
bytes per symbolic dim, one fill mode per input, then the payload, read
cyclically. The dim order (first use by the inputs) and the input order come
from the fixture's meta.json, which lists them as the manifest does. Seeds
cover valid prefill/decode shapes and the edges the fuzzer should start
from: zero-size dims, the maxima, dims that break a relation (past +
sequence != total), out-of-range ids, NaN/Inf caches. Deterministic:
rerunning leaves git clean. Standard library only.
"""

import json
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(ROOT, "test", "models", "fixtures")
OUT = os.path.join(HERE, "input-corpus")

# Fill modes (input_fuzzer.cpp FillMode).
SMALL, MIXED, WIDE, RAW = 0, 1, 2, 3
# kMixed selectors: 0xF0 + index into kEdges (integers) / kSpecials (floats).
EDGE = {-1: 0xF0, "int64_min": 0xF2, "int64_max": 0xF3, 256: 0xF9,
        128: 0xF8}
NAN, POS_INF, NEG_INF, FLT_MAX = 0xF0, 0xF2, 0xF3, 0xF4


def signature(fixture):
    """(dim names in the fuzzer's order, input names) of a fixture."""
    meta = json.load(open(os.path.join(FIXTURES, fixture, "meta.json")))
    dims = []
    for name in meta["inputs"]:
        named = meta["dim_names"].get(name, {})
        for index in sorted(named, key=int):
            if named[index] not in dims:
                dims.append(named[index])
    return dims, meta["inputs"]


def literal(value):
    return ((value >> 8) << 2, value & 0xFF)


MAXIMUM = (1, 0)


def sum_of(dims, a, b):
    return (3, dims.index(a) | dims.index(b) << 4)


def raw64(value):
    """A kMixed element holding raw 64 bits."""
    return bytes([0xFF]) + struct.pack("<q", value)


def seed(dims, inputs, dim_values, modes, payload):
    """Encodes one seed; |dim_values| maps names to literal() pairs or
    ints, |modes| input names to fill modes (default SMALL)."""
    header = bytearray()
    for name in dims:
        how = dim_values[name]
        header += bytes(literal(how) if isinstance(how, int) else how)
    header += bytes(modes.get(name, SMALL) for name in inputs)
    return bytes(header) + bytes(payload)


def gpt2_past(fixture):
    dims, inputs = signature(fixture)
    kv = {name: MIXED for name in inputs if name.startswith("past_")}

    def s(b, q, t, p, payload, modes=None):
        values = {"batch": b, "sequence": q, "total_sequence": t,
                  "past_sequence": p}
        return seed(dims, inputs, values, modes or {}, payload)

    # Payload per seed: input_ids (one byte each), attention_mask (ones),
    # then a few cache bytes the rest of the cache repeats.
    cache = bytes([0x08, 0xF8, 0x10, 0x04, 0x20, 0xE0])
    total = sum_of(dims, "past_sequence", "sequence")
    return {
        # Valid: a decode step, a batched decode, a prefill, a chunk.
        "decode_b1_p7": s(1, 1, total, 7, [17] + [1] * 8 + list(cache)),
        "decode_b2_p15": s(2, 1, 16, 15, [3, 200] + [1] * 32 + list(cache)),
        "prefill_b1_s8": s(1, 8, 8, 0, list(range(0, 104, 13)) + [1] * 8),
        "chunk_b2_s4_p4_leftpad": s(
            2, 4, 8, 4, [5, 6, 7, 8, 9, 10, 11, 12] + [0, 0] + [1] * 14 +
            list(cache)),
        # Every dim at its maximum; one payload byte fills everything.
        "all_maxima": s(MAXIMUM, MAXIMUM, MAXIMUM, MAXIMUM, [1]),
        "decode_b4_p127": s(4, 1, MAXIMUM, 127, [1]),
        # Zero-size dims.
        "batch_0": s(0, 4, 8, 4, [1]),
        "sequence_0": s(1, 0, 8, 8, [1]),
        "total_0": s(1, 1, 0, 0, [1]),
        # past + sequence != total, and past + sequence past the positions.
        "total_mismatch": s(1, 4, 5, 4, [1, 2, 3, 4] + [1] * 5),
        "positions_past_table": s(1, 64, MAXIMUM, 100, [1]),
        # Out-of-range token ids: -1, the vocabulary size, extremes.
        "ids_out_of_range": s(
            1, 4, 8, 4,
            [EDGE[-1], EDGE[256]] + list(raw64(-(1 << 62))) + [EDGE["int64_max"]]
            + [1] * 8 + list(cache), {"input_ids": MIXED, **kv}),
        # Masks other than 0/1.
        "mask_values": s(1, 2, 4, 2, [1, 2] + [2, 255, 0, 7] + list(cache),
                         {"attention_mask": SMALL}),
        # NaN / Inf / FLT_MAX in the cache.
        "cache_specials": s(1, 1, 4, 3, [9] + [1] * 4 +
                            [NAN, POS_INF, NEG_INF, FLT_MAX, 0x10],
                            {**kv}),
        "cache_raw_bits": s(1, 1, 3, 2, [9, 1, 1, 1, 0x00, 0x00, 0xC0, 0x7F,
                                         0xFF, 0xFF, 0x7F, 0x7F],
                            {name: RAW for name in kv}),
    }


def bert(fixture):
    dims, inputs = signature(fixture)

    def s(b, q, ids, mask, types, modes=None):
        return seed(dims, inputs, {"batch": b, "sequence": q}, modes or {},
                    list(ids) + list(mask) + list(types))

    return {
        "b1_s8": s(1, 8, range(1, 9), [1] * 8, [0] * 8),
        "b2_s16_pairs": s(2, 16, range(30, 62), [1] * 28 + [0] * 4,
                          [0] * 8 + [1] * 8 + [0] * 16),
        "all_maxima": s(MAXIMUM, MAXIMUM, [1], [], []),
        "batch_0": s(0, 8, [1], [], []),
        "sequence_0": s(2, 0, [1], [], []),
        "mask_all_zero": s(1, 4, [1, 2, 3, 4], [0] * 4, [0] * 4),
        "token_types_out_of_range": s(
            1, 4, [1, 2, 3, 4], [1] * 4,
            [2, EDGE[-1], EDGE[128]] + list(raw64(1 << 40)),
            {"token_type_ids": MIXED}),
        "ids_out_of_range": s(
            1, 4, [EDGE[256], EDGE[-1], EDGE["int64_min"]] + list(raw64(300)),
            [1] * 4, [0] * 4, {"input_ids": MIXED}),
    }


GENERATORS = {"gpt2_op17_past": gpt2_past, "bert_op17": bert}


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    count = total = 0
    for fixture, generate in GENERATORS.items():
        folder = os.path.join(OUT, fixture)
        os.makedirs(folder)
        for name, data in sorted(generate(fixture).items()):
            with open(os.path.join(folder, name + ".bin"), "wb") as f:
                f.write(data)
            count += 1
            total += len(data)
    print(f"wrote {count} seeds, {total} bytes, to "
          f"{os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
