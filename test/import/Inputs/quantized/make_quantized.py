#!/usr/bin/env python3
# ===- make_quantized.py - pre-quantized ONNX fixtures ----------------------===#
# SPDX-License-Identifier: Apache-2.0
"""Writes the small pre-quantized models that test/import/quantized.test
imports and test/e2e/check_quantized_import.py runs against onnxruntime,
plus the malformed ones of test/import/hostile/quantized-ops.test.

Run: .venv/bin/python test/import/Inputs/quantized/make_quantized.py

Most fixtures are fp32 models quantized by onnxruntime's own tools
(MatMulNBitsQuantizer, quantize_static in QDQ format, quantize_dynamic),
so they have the exact shape real exports have. Weights and calibration
data come from seeded generators; rerunning rewrites identical bytes.
"""

import logging
import os
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                      QuantType, quantize_dynamic,
                                      quantize_static)
from onnxruntime.quantization.matmul_nbits_quantizer import (
    DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer)

HERE = os.path.dirname(os.path.abspath(__file__))
HOSTILE = os.path.join(HERE, "..", "..", "hostile", "Inputs")
F = TensorProto.FLOAT
MS = "com.microsoft"


def save(model, path, check=True):
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx"):
            opset.version = max(opset.version, 13)
    model.ir_version = 8
    del model.metadata_props[:]
    model.producer_name = "strata-quantized-fixtures"
    model.producer_version = ""
    if check:
        onnx.checker.check_model(model)
    with open(path, "wb") as f:
        f.write(model.SerializeToString(deterministic=True))


def fp32_mlp(seed, k, n, hidden=None, batch=("batch", "seq")):
    """x [batch, seq, k] -> MatMul(W1) (-> Add b -> Relu -> MatMul W2)."""
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((k, hidden or n)).astype(np.float32) * 0.2
    inits = [numpy_helper.from_array(w1, "w1")]
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1")]
    out = "h"
    if hidden:
        b1 = rng.standard_normal(hidden).astype(np.float32) * 0.1
        w2 = rng.standard_normal((hidden, n)).astype(np.float32) * 0.2
        inits += [numpy_helper.from_array(b1, "b1"),
                  numpy_helper.from_array(w2, "w2")]
        nodes += [helper.make_node("Add", ["h", "b1"], ["hb"], name="bias1"),
                  helper.make_node("Relu", ["hb"], ["r"], name="act"),
                  helper.make_node("MatMul", ["r", "w2"], ["y"], name="fc2")]
        out = "y"
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", F, list(batch) + [k])],
        [helper.make_tensor_value_info(out, F, list(batch) + [n])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def nbits(name, seed, k, n, bits=4, block=32, symmetric=True):
    config = DefaultWeightOnlyQuantConfig(block_size=block,
                                          is_symmetric=symmetric, bits=bits)
    quantizer = MatMulNBitsQuantizer(fp32_mlp(seed, k, n), block_size=block,
                                     is_symmetric=symmetric,
                                     algo_config=config)
    quantizer.process()
    model = quantizer.model.model
    assert [x.op_type for x in model.graph.node] == ["MatMulNBits"], name
    save(model, os.path.join(HERE, name + ".onnx"))


def pack4(codes):
    """[n, k] codes in [0, 16) -> bytes, low nibble first along k."""
    return (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)


def nbits_manual(seed, k, n, block, bias=False, zero_points=None,
                 bits=4, a_shape=None):
    """A hand-built MatMulNBits: what the quantizer does not write (a bias,
    zero points of one value). Returns (nodes, inputs, inits)."""
    rng = np.random.default_rng(seed)
    blocks = (k + block - 1) // block
    codes = rng.integers(0, 1 << bits, (n, blocks * block), dtype=np.uint8)
    codes[:, k:] = 0  # padding past K
    packed = pack4(codes) if bits == 4 else codes
    b = packed.reshape(n, blocks, block * bits // 8)
    scales = (rng.random(n * blocks) * 0.05 + 0.01).astype(np.float32)
    inits = [numpy_helper.from_array(b, "B"),
             numpy_helper.from_array(scales, "scales")]
    ins = ["A", "B", "scales"]
    if zero_points is not None:
        inits.append(numpy_helper.from_array(zero_points, "zp"))
        ins.append("zp")
    if bias:
        ins += [""] * (5 - len(ins)) + ["bias"]
        inits.append(numpy_helper.from_array(
            rng.standard_normal(n).astype(np.float32), "bias"))
    node = helper.make_node("MatMulNBits", ins, ["Y"], name="proj",
                            domain=MS, K=k, N=n, bits=bits, block_size=block)
    return node, inits


def nbits_model(node, inits, k, n, inputs=None):
    graph = helper.make_graph(
        [node], "nbits",
        inputs or [helper.make_tensor_value_info("A", F, ["rows", k])],
        [helper.make_tensor_value_info("Y", F, ["rows", n])], inits)
    return helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])


class Reader(CalibrationDataReader):
    def __init__(self, k, seed):
        rng = np.random.default_rng(seed)
        self.data = iter([{"x": rng.standard_normal((1, 4, k)).astype(
            np.float32)} for _ in range(8)])

    def get_next(self):
        return next(self.data, None)


def qdq(name, seed, per_channel):
    """quantize_static, QDQ format: int8 weights (per output channel or per
    tensor) and uint8 activation Q/DQ pairs around every MatMul."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "fp32.onnx"), os.path.join(tmp, "q.onnx")
        onnx.save(fp32_mlp(seed, 64, 24, hidden=40), src)
        quantize_static(src, dst, Reader(64, seed), quant_format=QuantFormat.QDQ,
                        per_channel=per_channel,
                        activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8)
        save(onnx.load(dst), os.path.join(HERE, name + ".onnx"))


def gemm_qdq(name, seed):
    """Gemm(transB=1) with a per-output-channel int8 weight [N, K] (axis 0)
    and a bias, activations uint8 Q/DQ: the hand-written QDQ form."""
    rng = np.random.default_rng(seed)
    k, n = 32, 16
    w = rng.standard_normal((n, k)).astype(np.float32) * 0.3
    ws = (np.abs(w).max(axis=1) / 127).astype(np.float32)
    wq = np.clip(np.rint(w / ws[:, None]), -127, 127).astype(np.int8)
    inits = [numpy_helper.from_array(wq, "wq"),
             numpy_helper.from_array(ws, "ws"),
             numpy_helper.from_array(np.zeros(n, np.int8), "wzp"),
             numpy_helper.from_array(np.float32(0.02), "xs"),
             numpy_helper.from_array(np.uint8(128), "xzp"),
             numpy_helper.from_array(
                 rng.standard_normal(n).astype(np.float32), "c")]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xzp"], ["xq"],
                         name="x_q"),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xzp"], ["xd"],
                         name="x_dq"),
        helper.make_node("DequantizeLinear", ["wq", "ws", "wzp"], ["wd"],
                         name="w_dq", axis=0),
        helper.make_node("Gemm", ["xd", "wd", "c"], ["y"], name="gemm",
                         transB=1),
    ]
    graph = helper.make_graph(
        nodes, "gemm_qdq", [helper.make_tensor_value_info("x", F, ["m", k])],
        [helper.make_tensor_value_info("y", F, ["m", n])], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(HERE, name + ".onnx"))


def qdq_rounding(name):
    """Activation Q/DQ alone: int8 per-axis with non-zero zero points
    (saturating at both ends) and uint8 per-tensor. Scales are powers of 2,
    so inputs on a 1/128 grid land exactly on rounding ties."""
    c = 8
    scale = np.array([1 / 64, 1 / 32, 1 / 64, 1 / 16, 1 / 64, 1 / 128,
                      1 / 8, 1 / 64], np.float32)
    zp = np.array([-3, 0, 5, -128, 127, 1, -1, 2], np.int8)
    inits = [numpy_helper.from_array(scale, "s"),
             numpy_helper.from_array(zp, "zp"),
             numpy_helper.from_array(np.float32(1 / 32), "s2"),
             numpy_helper.from_array(np.uint8(100), "zp2")]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], name="q",
                         axis=1),
        helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"],
                         name="dq", axis=1),
        helper.make_node("QuantizeLinear", ["x", "s2", "zp2"], ["q2"],
                         name="q2"),
        helper.make_node("DequantizeLinear", ["q2", "s2", "zp2"], ["y2"],
                         name="dq2"),
    ]
    graph = helper.make_graph(
        nodes, "rounding", [helper.make_tensor_value_info("x", F, ["m", c])],
        [helper.make_tensor_value_info("y", F, ["m", c]),
         helper.make_tensor_value_info("q", TensorProto.INT8, ["m", c]),
         helper.make_tensor_value_info("y2", F, ["m", c])], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(HERE, name + ".onnx"))


def dynamic(name, seed):
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "fp32.onnx"), os.path.join(tmp, "q.onnx")
        onnx.save(fp32_mlp(seed, 64, 24, hidden=40), src)
        quantize_dynamic(src, dst, weight_type=QuantType.QInt8)
        save(onnx.load(dst), os.path.join(HERE, name + ".onnx"))


def hostile():
    """Malformed quantized models: each must give one clear error."""
    k, n = 64, 8
    cases = {}

    def variant(case, dynamic_k=False, **attrs):
        node, inits = nbits_manual(7, k, n, 32)
        for key, value in attrs.items():
            for a in node.attribute:
                if a.name == key:
                    a.i = value
        a_k = "k" if dynamic_k else k  # past the check of A against K
        cases[case] = nbits_model(
            node, inits, k, n,
            inputs=[helper.make_tensor_value_info("A", F, ["rows", a_k])])

    variant("nbits_bits3", bits=3)
    variant("nbits_block24", block_size=24)
    variant("nbits_a_mismatch", K=96)
    variant("nbits_k_mismatch", dynamic_k=True, K=96)
    variant("nbits_huge_kn", dynamic_k=True, K=1 << 62, N=1 << 62)
    node, inits = nbits_manual(7, k, n, 32)
    inits[1] = numpy_helper.from_array(np.ones(5, np.float32), "scales")
    cases["nbits_scales_size"] = nbits_model(node, inits, k, n)
    node, inits = nbits_manual(7, k, n, 32,
                               zero_points=np.full(3, 0x88, np.uint8))
    cases["nbits_zp_size"] = nbits_model(node, inits, k, n)
    node, inits = nbits_manual(7, k, n, 32)
    cases["nbits_b_input"] = nbits_model(
        node, inits[1:], k, n,
        inputs=[helper.make_tensor_value_info("A", F, ["rows", k]),
                helper.make_tensor_value_info("B", TensorProto.UINT8,
                                              [n, 2, 16])])
    node, inits = nbits_manual(7, k, n, 32)
    node.input.extend(["", "g_idx"])
    inits.append(numpy_helper.from_array(np.full(k, 9, np.int32), "g_idx"))
    cases["nbits_g_idx_range"] = nbits_model(node, inits, k, n)
    # DequantizeLinear: 5 per-axis scales for a dim of 4; blocked.
    for case, scale, attrs in (("dq_axis_mismatch", np.ones(5, np.float32),
                                {"axis": 1}),
                               ("dq_blocked", np.ones((4, 1), np.float32),
                                {"axis": 0, "block_size": 4})):
        graph = helper.make_graph(
            [helper.make_node("DequantizeLinear", ["q", "s"], ["y"],
                              name="dq", **attrs)], "dq",
            [helper.make_tensor_value_info("q", TensorProto.INT8, [4, 4])],
            [helper.make_tensor_value_info("y", F, [4, 4])],
            [numpy_helper.from_array(scale, "s")])
        cases[case] = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", 21)])
    for case, model in cases.items():
        model.ir_version = 8
        with open(os.path.join(HOSTILE, case + ".onnx"), "wb") as f:
            f.write(model.SerializeToString(deterministic=True))


def main():
    logging.getLogger("onnxruntime").setLevel(logging.ERROR)
    nbits("nbits4_k64_n48", 1, 64, 48)
    nbits("nbits4_k80_n32", 2, 80, 32)           # last block partial
    nbits("nbits4_asym", 3, 64, 48, symmetric=False)
    nbits("nbits8_k64_n48", 4, 64, 48, bits=8)
    node, inits = nbits_manual(5, 80, 24, 16, bias=True)
    save(nbits_model(node, inits, 80, 24), os.path.join(HERE, "nbits4_bias.onnx"))
    # Explicit zero points all equal to 8: still the symmetric form.
    node, inits = nbits_manual(6, 64, 16, 32,
                               zero_points=np.full(16, 0x88, np.uint8))
    save(nbits_model(node, inits, 64, 16), os.path.join(HERE, "nbits4_zp8.onnx"))
    qdq("qdq_per_channel", 7, per_channel=True)
    qdq("qdq_per_tensor", 8, per_channel=False)
    gemm_qdq("qdq_gemm_transb", 9)
    qdq_rounding("qdq_rounding")
    dynamic("dynamic_matmul", 10)
    hostile()


if __name__ == "__main__":
    main()
