"""Generates the small committed .onnx inputs of test/import (seeded,
byte-identical on rerun). Run: .venv/bin/python test/import/Inputs/make_inputs.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(model, name):
    path = os.path.join(HERE, name)
    with open(path, "wb") as f:
        f.write(model.SerializeToString(deterministic=True))
    onnx.checker.check_model(path)  # by path, so external data resolves


def external_data_model():
    """A MatMul whose 64x32 weight lives in weights.bin at offset 128."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((64, 32)).astype(np.float32)
    with open(os.path.join(HERE, "weights.bin"), "wb") as f:
        f.write(b"\0" * 128)
        f.write(w.tobytes())
    tensor = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[64, 32])
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "weights.bin"), ("offset", "128"),
                       ("length", str(w.nbytes))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")],
        "external",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 32])],
        [tensor])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         "external_data.onnx")


def if_model():
    """An If whose condition is a constant: only the taken branch imports."""
    then_g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["t"], name="then_relu")], "then",
        [], [helper.make_tensor_value_info("t", TensorProto.FLOAT, [4])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"], name="else_neg")], "else",
        [], [helper.make_tensor_value_info("e", TensorProto.FLOAT, [4])])
    nodes = [
        helper.make_node("Constant", [], ["cond"], name="cond",
                         value=numpy_helper.from_array(np.array(True))),
        helper.make_node("If", ["cond"], ["y"], name="branch",
                         then_branch=then_g, else_branch=else_g),
    ]
    graph = helper.make_graph(
        nodes, "if_const",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         "if_constant.onnx")


if __name__ == "__main__":
    external_data_model()
    if_model()
