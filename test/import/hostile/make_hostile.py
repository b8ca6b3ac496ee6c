#!/usr/bin/env python3
# ===- make_hostile.py - malformed and hostile ONNX models ------------------===#
# SPDX-License-Identifier: Apache-2.0
"""Writes the hostile-model corpus that test/import/hostile/*.test import.

Run from anywhere with the project virtualenv:

    .venv/bin/python test/import/hostile/make_hostile.py

Every model is built with onnx.helper and serialized without the checker
(most are invalid on purpose). The output is deterministic: the random
bytes come from a seeded generator and protobuf serialization of the same
message is byte-stable, so regenerating leaves `git status` clean.

Files written:
  Inputs/<case>.onnx      one model per case (see CASES below)
  Inputs/weights.bin      16 bytes of external data that really exist
  Inputs/escape_link.bin  symlink to ../outside.bin (leaves Inputs/)
  outside.bin             16 bytes next to Inputs/, the escape target
"""

import os
import random

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, "Inputs")
SEED = 20240604
PRODUCER = "strata-hostile"

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, initializers=(), opsets=(("", 17),),
          name="hostile"):
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs),
                              initializer=list(initializers))
    m = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
        producer_name=PRODUCER)
    m.ir_version = 8
    return m


def vi(name, shape=(2, 3), elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def relu_model(**kw):
    """X[2,3] -> Relu -> Y: the valid base most cases perturb."""
    return model([helper.make_node("Relu", ["X"], ["Y"], name="relu")],
                 [vi("X")], [vi("Y")], **kw)


def external_weight(location=None, offset=None, length=None, dims=(2, 2)):
    """An initializer W whose data lives in an external file."""
    t = TensorProto()
    t.name = "W"
    t.data_type = F
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", offset),
                       ("length", length)):
        if value is not None:
            entry = t.external_data.add()
            entry.key = key
            entry.value = str(value)
    return t


def add_weight_model(weight):
    """Y = X + W with X and W [2,2]."""
    return model([helper.make_node("Add", ["X", "W"], ["Y"], name="add")],
                 [vi("X", (2, 2))], [vi("Y", (2, 2))], initializers=[weight])


def raw_tensor(name, dims, raw, data_type=F):
    t = TensorProto()
    t.name = name
    t.data_type = data_type
    t.dims.extend(dims)
    t.raw_data = raw
    return t


# ----------------------------------------------------------------------------
# Cases: name -> bytes (or a ModelProto, serialized below).
# ----------------------------------------------------------------------------


def case_empty():
    return b""


def case_random_bytes():
    # Seeded; starts with an invalid wire type so it can never parse.
    rng = random.Random(SEED)
    return bytes([0xFF]) + bytes(rng.randrange(256) for _ in range(255))


def case_truncated():
    w = raw_tensor("W", (2, 2), np.arange(4, dtype=np.float32).tobytes())
    full = add_weight_model(w).SerializeToString(deterministic=True)
    # Cut inside the graph's length-delimited field: the parser runs out.
    return full[: len(full) * 2 // 3]


def case_cycle():
    # a = Relu(b), b = Relu(a): neither can go first.
    return model([helper.make_node("Relu", ["B"], ["A"], name="relu_a"),
                  helper.make_node("Relu", ["A"], ["B"], name="relu_b"),
                  helper.make_node("Add", ["X", "B"], ["Y"], name="add")],
                 [vi("X")], [vi("Y")])


def case_undefined_input():
    return model([helper.make_node("Add", ["X", "ghost"], ["Y"], name="add")],
                 [vi("X")], [vi("Y")])


def case_extdata_dotdot():
    # ../outside.bin exists: only the escape is wrong.
    return add_weight_model(external_weight("../outside.bin"))


def case_extdata_absolute():
    return add_weight_model(external_weight("/etc/passwd"))


def case_extdata_symlink():
    # escape_link.bin looks local but is a symlink to ../outside.bin.
    return add_weight_model(external_weight("escape_link.bin"))


def case_extdata_offset_past_end():
    return add_weight_model(external_weight("weights.bin", offset=4096,
                                            length=16))


def case_extdata_length_past_end():
    return add_weight_model(external_weight("weights.bin", offset=8,
                                            length=16))


def case_extdata_missing():
    return add_weight_model(external_weight("no_such_weights.bin"))


def case_extdata_bad_offset():
    return add_weight_model(external_weight("weights.bin", offset="-16"))


def case_huge_dims():
    # 2^80 elements claimed, 4 bytes present.
    return add_weight_model(raw_tensor("W", (1 << 40, 1 << 40),
                                       b"\0\0\0\0"))


def case_raw_data_mismatch():
    # [2,2] float needs 16 bytes; 12 are given.
    return add_weight_model(raw_tensor("W", (2, 2), b"\0" * 12))


def case_unknown_domain():
    return model([helper.make_node("Frobnicate", ["X"], ["Y"], name="frob",
                                   domain="com.example")],
                 [vi("X")], [vi("Y")])


def case_nonexistent_op():
    return model([helper.make_node("NoSuchOp", ["X"], ["Y"], name="bogus")],
                 [vi("X")], [vi("Y")])


def case_several_unsupported():
    # Three ops without a converter (one unnamed) plus a supported one:
    # every unsupported op is listed in one run.
    return model([helper.make_node("NoSuchOp", ["X"], ["A"], name="first"),
                  helper.make_node("Relu", ["A"], ["B"], name="fine"),
                  helper.make_node("AlsoMissing", ["B"], ["C"]),
                  helper.make_node("Frobnicate", ["C"], ["Y"], name="third",
                                   domain="com.example")],
                 [vi("X")], [vi("Y")])


def case_wrong_attribute_type():
    n = helper.make_node("Softmax", ["X"], ["Y"], name="softmax")
    n.attribute.append(helper.make_attribute("axis", 1.0))  # FLOAT, not INT
    return model([n], [vi("X")], [vi("Y")])


def case_missing_opset_import():
    return relu_model(opsets=())


def case_opset_out_of_range():
    return relu_model(opsets=(("", 99),))


def case_duplicate_value():
    # Two nodes both produce Y.
    return model([helper.make_node("Relu", ["X"], ["Y"], name="relu"),
                  helper.make_node("Neg", ["X"], ["Y"], name="neg")],
                 [vi("X")], [vi("Y")])


def case_duplicate_initializer():
    w = np.ones((2, 2), np.float32).tobytes()
    return model([helper.make_node("Add", ["X", "W"], ["Y"], name="add")],
                 [vi("X", (2, 2))], [vi("Y", (2, 2))],
                 initializers=[raw_tensor("W", (2, 2), w),
                               raw_tensor("W", (2, 2), w)])


def case_input_no_shape():
    return model([helper.make_node("Relu", ["X"], ["Y"], name="relu")],
                 [vi("X", None)], [vi("Y")])


def case_string_input():
    return model([helper.make_node("Identity", ["X"], ["Y"], name="id")],
                 [vi("X", (2,), TensorProto.STRING)],
                 [vi("Y", (2,), TensorProto.STRING)])


def case_negative_dim():
    return relu_model_with_input(vi("X", (2, -3)))


def case_huge_input_dim():
    return relu_model_with_input(vi("X", (2, 1 << 41)))


def relu_model_with_input(x):
    return model([helper.make_node("Relu", ["X"], ["Y"], name="relu")],
                 [x], [vi("Y")])


def case_output_never_produced():
    return model([helper.make_node("Relu", ["X"], ["Y"], name="relu")],
                 [vi("X")], [vi("Y"), vi("Z")])


def case_no_graph():
    m = onnx.ModelProto()
    m.ir_version = 8
    m.producer_name = PRODUCER
    m.opset_import.append(helper.make_opsetid("", 17))
    return m


# ---- Cases the importer gets wrong today (their tests are XFAIL) ----------


def i64(name, values):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.INT64
    values = np.array(values, dtype=np.int64)
    t.dims.extend(values.shape)
    t.raw_data = values.tobytes()
    return t


def case_constant_of_shape_huge_int():
    # An int64 splat of 2^40 elements: legal, but the importer tries to
    # list every element as a known int.
    value = i64("value", [1])
    return model([helper.make_node("ConstantOfShape", ["shape"], ["Y"],
                                   name="fill", value=value)],
                 [], [vi("Y", None, TensorProto.INT64)],
                 initializers=[i64("shape", [1 << 40])])


def case_constant_of_shape_negative():
    return model([helper.make_node("ConstantOfShape", ["shape"], ["Y"],
                                   name="fill")],
                 [], [vi("Y", None)], initializers=[i64("shape", [-5])])


def case_tile_negative_repeats():
    return model([helper.make_node("Tile", ["X", "repeats"], ["Y"],
                                   name="tile")],
                 [vi("X")], [vi("Y", None)],
                 initializers=[i64("repeats", [-1, 2])])


def case_reshape_overflow():
    # 2x3 to 2^40 x 2^40: the element count overflows int64.
    return model([helper.make_node("Reshape", ["X", "shape"], ["Y"],
                                   name="reshape")],
                 [vi("X")], [vi("Y", None)],
                 initializers=[i64("shape", [1 << 40, 1 << 40])])


def case_reshape_infer_overflow():
    # The -1 dim is inferred from a product of the others that overflows.
    return model([helper.make_node("Reshape", ["X", "shape"], ["Y"],
                                   name="reshape")],
                 [vi("X")], [vi("Y", None)],
                 initializers=[i64("shape", [-1, 1 << 40, 1 << 40])])


def case_range_int64_overflow():
    # limit - start overflows int64; ONNX says 0 elements (delta < 0).
    return model([helper.make_node("Range", ["start", "limit", "delta"],
                                   ["Y"], name="range")],
                 [], [vi("Y", None, TensorProto.INT64)],
                 initializers=[i64("start", -(1 << 63)),
                               i64("limit", (1 << 63) - 1),
                               i64("delta", -1)])


def case_range_int64_extremes():
    # Four elements from INT64_MIN by 2^62: the last, 2^62, is start + 3 *
    # delta, and 3 * delta alone does not fit in int64.
    return model([helper.make_node("Range", ["start", "limit", "delta"],
                                   ["Y"], name="range")],
                 [], [vi("Y", None, TensorProto.INT64)],
                 initializers=[i64("start", -(1 << 63)),
                               i64("limit", (1 << 63) - 1),
                               i64("delta", 1 << 62)])


def case_range_infinite():
    f32 = lambda n, v: numpy_scalar(n, v)  # noqa: E731
    return model([helper.make_node("Range", ["start", "limit", "delta"],
                                   ["Y"], name="range")],
                 [], [vi("Y", None)],
                 initializers=[f32("start", 0.0), f32("limit", np.inf),
                               f32("delta", 1.0)])


def numpy_scalar(name, value):
    return raw_tensor(name, (), np.array(value, np.float32).tobytes())


def case_slice_int64_min_step():
    # step = INT64_MIN: ONNX keeps exactly one element (index 2).
    return model([helper.make_node("Slice",
                                   ["X", "starts", "ends", "axes", "steps"],
                                   ["Y"], name="slice")],
                 [vi("X")], [vi("Y", None)],
                 initializers=[i64("starts", [(1 << 63) - 1]),
                               i64("ends", [-(1 << 63)]),
                               i64("axes", [1]),
                               i64("steps", [-(1 << 63)])])


def case_tile_overflow():
    # 2 * 2^62 overflows int64 (found by the fuzzer, UBSan in convertTile).
    return model([helper.make_node("Tile", ["X", "repeats"], ["Y"],
                                   name="tile")],
                 [vi("X")], [vi("Y", None)],
                 initializers=[i64("repeats", [1 << 62, 1])])


def case_duplicate_graph_input():
    return model([helper.make_node("Relu", ["X"], ["Y"], name="relu")],
                 [vi("X"), vi("X")], [vi("Y")])


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items())
         if name.startswith("case_")}


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    os.makedirs(INPUTS, exist_ok=True)
    write(os.path.join(INPUTS, "weights.bin"),
          np.arange(4, dtype=np.float32).tobytes())
    write(os.path.join(HERE, "outside.bin"),
          np.full(4, 7, dtype=np.float32).tobytes())
    link = os.path.join(INPUTS, "escape_link.bin")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.join("..", "outside.bin"), link)
    for name, fn in CASES.items():
        data = fn()
        if isinstance(data, onnx.ModelProto):
            data = data.SerializeToString(deterministic=True)
        write(os.path.join(INPUTS, name + ".onnx"), data)
    print(f"wrote {len(CASES)} models to {INPUTS}")


if __name__ == "__main__":
    main()
