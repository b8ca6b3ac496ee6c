#!/usr/bin/env python3
# ===- make_corpus.py - seed corpus of the importer fuzzer ------------------===#
# SPDX-License-Identifier: Apache-2.0
"""Writes test/fuzz/corpus/: tiny valid models the fuzzer mutates.

    .venv/bin/python test/fuzz/make_corpus.py

Two kinds of seeds, all under 4 KB:
  node_<test>.onnx  the model.onnx of one ONNX backend node test per
                    supported op, copied from the pinned onnx pip package
  hand_<name>.onnx  hand-made models for what the node tests miss:
                    contrib ops, a constant-condition If, shape arithmetic
The hostile models of test/import/hostile/Inputs/ are a second seed folder
(scripts/fuzz.sh passes both). Deterministic: rerunning leaves git clean.
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
NODE_TESTS = os.path.join(os.path.dirname(onnx.__file__),
                          "backend", "test", "data", "node")
MAX_BYTES = 4096

# One backend node test per op the importer converts (first match wins).
NODE_TEST_PREFIXES = [
    "test_add_bcast", "test_sub_bcast", "test_mul_bcast", "test_div_bcast",
    "test_pow_bcast_array", "test_sqrt_example", "test_reciprocal_example",
    "test_neg_example", "test_exp_example", "test_log_example", "test_erf",
    "test_tanh_example", "test_sigmoid_example", "test_relu", "test_abs",
    "test_max_example", "test_min_example", "test_where_example",
    "test_equal_bcast", "test_less_bcast", "test_greater_equal_bcast",
    "test_not_2d", "test_and_bcast3v1d", "test_or_bcast3v1d",
    "test_cast_FLOAT_to_FLOAT16", "test_castlike_FLOAT_to_DOUBLE",
    "test_matmul_3d", "test_gemm_all_attributes", "test_softmax_axis_1",
    "test_logsoftmax_axis_0", "test_reduce_mean_keepdims_example",
    "test_reduce_sum_keepdims_example", "test_reduce_max_keepdims_example",
    "test_layer_normalization_3d_axis1_epsilon", "test_rms_normalization_3d",
    "test_gelu_tanh_1", "test_attention_3d_gqa_causal",
    "test_rotary_embedding_3d_input", "test_gather_negative_indices",
    "test_reshape_negative_extended_dims", "test_transpose_all_permutations_1",
    "test_concat_2d_axis_negative_1", "test_slice_negative_axes",
    "test_split_variable_parts_2d_opset18", "test_squeeze_negative_axes",
    "test_unsqueeze_unsorted_axes", "test_expand_dim_changed",
    "test_shape_start_negative_1", "test_size_example",
    "test_constantofshape_int_shape_zero", "test_range_int32_type_negative_delta",
    "test_tril_neg", "test_cumsum_1d_reverse_exclusive", "test_identity",
    "test_dropout_default_mask_ratio", "test_flatten_negative_axis1",
    "test_tile_precomputed", "test_sin_example", "test_cos_example",
    "test_if", "test_constant",
]


def copy_node_tests():
    names = sorted(os.listdir(NODE_TESTS))
    for prefix in NODE_TEST_PREFIXES:
        match = next((n for n in names if n.startswith(prefix)), None)
        if match is None:
            raise SystemExit(f"no ONNX node test starts with '{prefix}'")
        m = onnx.load(os.path.join(NODE_TESTS, match, "model.onnx"))
        inline_int_inputs(m, os.path.join(NODE_TESTS, match,
                                          "test_data_set_0"))
        for opset in m.opset_import:  # newer than the importer's range
            if opset.domain in ("", "ai.onnx") and opset.version > 23:
                opset.version = 23
        data = m.SerializeToString(deterministic=True)
        if len(data) > MAX_BYTES:
            raise SystemExit(f"{match} is over {MAX_BYTES} bytes")
        with open(os.path.join(CORPUS, f"node_{match[5:]}.onnx"), "wb") as f:
            f.write(data)


def inline_int_inputs(m, data_dir):
    """Node tests feed axes, shapes and conditions as graph inputs; the
    importer wants them constant, so integer and bool inputs become
    initializers holding the test's own input data."""
    keep = []
    for i, inp in enumerate(m.graph.input):
        t = TensorProto()
        with open(os.path.join(data_dir, f"input_{i}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        if t.data_type in (TensorProto.INT64, TensorProto.INT32,
                           TensorProto.BOOL):
            t.name = inp.name
            m.graph.initializer.append(t)
        else:
            keep.append(inp)
    del m.graph.input[:]
    m.graph.input.extend(keep)


def vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, values, dtype=np.int64):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def save(name, nodes, inputs, outputs, inits=(), opsets=(("", 17),)):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              initializer=list(inits))
    m = helper.make_model(
        graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
        producer_name="strata-fuzz-seed")
    m.ir_version = 8
    data = m.SerializeToString(deterministic=True)
    assert len(data) <= MAX_BYTES, name
    with open(os.path.join(CORPUS, f"hand_{name}.onnx"), "wb") as f:
        f.write(data)


def hand_made():
    N = helper.make_node
    ms = ("com.microsoft", 1)
    # The shape arithmetic exporters emit: Shape -> Gather -> Unsqueeze ->
    # Concat -> Reshape, with a symbolic batch dim.
    save("shape_arith",
         [N("Shape", ["X"], ["s"]),
          N("Gather", ["s", "zero"], ["b"], axis=0),
          N("Unsqueeze", ["b", "zero1"], ["b1"]),
          N("Concat", ["b1", "rest"], ["t"], axis=0),
          N("Reshape", ["X", "t"], ["Y"])],
         [vi("X", ("batch", 2, 3))], [vi("Y", ("batch", 6))],
         [const("zero", 0), const("zero1", [0]), const("rest", [6])])
    save("if_const",
         [N("If", ["c"], ["Y"],
            then_branch=helper.make_graph(
                [N("Relu", ["X"], ["t"])], "then", [], [vi("t", (2, 3))]),
            else_branch=helper.make_graph(
                [N("Neg", ["X"], ["e"])], "else", [], [vi("e", (2, 3))]))],
         [vi("X", (2, 3))], [vi("Y", (2, 3))],
         [const("c", True, np.bool_)])
    save("contrib_attention",
         [N("Attention", ["X", "W", "B"], ["Y"], domain="com.microsoft",
            num_heads=2, unidirectional=1)],
         [vi("X", (1, 4, 8))], [vi("Y", (1, 4, 8))],
         [const("W", np.zeros((8, 24)), np.float32),
          const("B", np.zeros(24), np.float32)],
         opsets=(("", 17), ms))
    save("contrib_mha",
         [N("MultiHeadAttention", ["Q", "K", "V"], ["Y"],
            domain="com.microsoft", num_heads=2)],
         [vi("Q", (1, 4, 8)), vi("K", (1, 4, 8)), vi("V", (1, 4, 8))],
         [vi("Y", (1, 4, 8))], opsets=(("", 17), ms))
    save("contrib_skip_ln_gelu",
         [N("SkipLayerNormalization", ["X", "S", "G", "Bt"], ["L"],
            domain="com.microsoft", epsilon=1e-5),
          N("BiasGelu", ["L", "Bt"], ["G1"], domain="com.microsoft"),
          N("FastGelu", ["G1"], ["G2"], domain="com.microsoft"),
          N("Gelu", ["G2"], ["G3"], domain="com.microsoft"),
          N("SimplifiedLayerNormalization", ["G3", "G"], ["Y"], axis=-1)],
         [vi("X", (2, 4, 8)), vi("S", (2, 4, 8))], [vi("Y", (2, 4, 8))],
         [const("G", np.ones(8), np.float32),
          const("Bt", np.zeros(8), np.float32)],
         opsets=(("", 17), ms))
    save("causal_mask",
         [N("Range", ["r0", "n", "r1"], ["idx"]),
          N("Unsqueeze", ["idx", "ax0"], ["row"]),
          N("Unsqueeze", ["idx", "ax1"], ["col"]),
          N("LessOrEqual", ["row", "col"], ["m"]),
          N("Where", ["m", "X", "ninf"], ["Y"])],
         [vi("X", (4, 4))], [vi("Y", (4, 4))],
         [const("r0", 0), const("n", 4), const("r1", 1),
          const("ax0", [0]), const("ax1", [1]),
          const("ninf", -1e9, np.float32)])
    save("constant_of_shape_expand",
         [N("ConstantOfShape", ["s"], ["z"],
            value=numpy_helper.from_array(np.array([1], np.int64))),
          N("Expand", ["X", "s"], ["e"]),
          N("Tile", ["e", "rep"], ["t"]),
          N("Split", ["t", "sp"], ["a", "b"], axis=1),
          N("Add", ["a", "b"], ["Y"])],
         [vi("X", (1, 3))], [vi("Y", (2, 3)), vi("z", (2, 3), TensorProto.INT64)],
         [const("s", [2, 3]), const("rep", [1, 2]), const("sp", [3, 3])])


def main():
    os.makedirs(CORPUS, exist_ok=True)
    copy_node_tests()
    hand_made()
    print(f"wrote {len(os.listdir(CORPUS))} seeds to {CORPUS}")


if __name__ == "__main__":
    main()
