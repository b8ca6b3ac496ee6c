#!/usr/bin/env python3
# ===- make_dim_models.py - models for the symbolic dim rule --------------===#
# Writes small ONNX models to DIR, each named after what it tests:
#   exporter_names.onnx  Optimum's names: ids[batch_size, sequence_length],
#                        mask[batch_size, "past_sequence_length + 1"],
#                        past[batch_size, past_sequence_length] -> ids,
#                        total = Concat(past, ids) declared [batch_size,
#                        "total"], mask
#   auto_names.onnx      x[s0, 4] (torch.export's Dim.AUTO name) -> x + 1
#   unnamed_dim.onnx     x[2, ?] (no dim_param) -> x + 1
#
# Usage: make_dim_models.py DIR
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save


def model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    vi = helper.make_tensor_value_info
    save(model(
        [helper.make_node("Identity", ["ids"], ["ids_out"]),
         helper.make_node("Concat", ["past", "new"], ["total"], axis=1),
         helper.make_node("Identity", ["mask"], ["mask_out"])],
        [vi("ids", i64, ["batch_size", "sequence_length"]),
         vi("mask", i64, ["batch_size", "past_sequence_length + 1"]),
         vi("past", f32, ["batch_size", "past_sequence_length"]),
         vi("new", f32, ["batch_size", "sequence_length"])],
        [vi("ids_out", i64, ["batch_size", "sequence_length"]),
         vi("total", f32, ["batch_size", "total"]),
         vi("mask_out", i64, ["batch_size", "past_sequence_length + 1"])]),
        os.path.join(out, "exporter_names.onnx"))
    one = numpy_helper.from_array(np.array(1, np.float32), "one")
    save(model([helper.make_node("Add", ["x", "one"], ["y"])],
               [vi("x", f32, ["s0", 4])], [vi("y", f32, ["s0", 4])], [one]),
         os.path.join(out, "auto_names.onnx"))
    x = vi("x", f32, [2, 3])
    x.type.tensor_type.shape.dim[1].Clear()  # dynamic, no dim_param
    save(model([helper.make_node("Add", ["x", "one"], ["y"])],
               [x], [vi("y", f32, [2, None])], [one]),
         os.path.join(out, "unnamed_dim.onnx"))


if __name__ == "__main__":
    main()
