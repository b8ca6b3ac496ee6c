#!/usr/bin/env python3
# ===- test/models/gen_helper_models.py - onnx.helper-built fixtures ---------===#
# Models built op by op with onnx.helper in spellings torch 1.13 cannot export:
#   opset20_gelu_mlp    LayerNormalization + two MLPs using opset-20 Gelu
#                       (approximate="none", then approximate="tanh").
#   opset23_llama_prefill / opset23_llama_past
#                       a 2-layer Llama-style decoder using opset-23
#                       RMSNormalization, RotaryEmbedding and Attention (GQA:
#                       4 query heads, 2 KV heads). Prefill uses is_causal=1 and
#                       no mask; with-past builds a bool mask from
#                       attention_mask and Trilu(k = past length).
# Run with the venv python (onnx 1.19). Seeded and deterministic.
#
# Usage: .venv/bin/python test/models/gen_helper_models.py [FIXTURES_DIR]
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
HID, HEADS, KV, HD, VOCAB, LAYERS, INTER, MAXPOS = 64, 4, 2, 16, 256, 2, 176, 128


class Graph:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def weight(self, name, shape, std=HID ** -0.5, mean=0.0):
        a = (mean + std * self.rng.standard_normal(shape)).astype(np.float32)
        self.inits.append(numpy_helper.from_array(a, name))
        return name

    def const(self, name, value):
        if any(i.name == name for i in self.inits):
            return name
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, op_type, inputs, outputs=1, domain="", **attrs):
        self.n += 1
        if isinstance(outputs, int):
            outputs = ["%s_%d%s" % (op_type.lower(), self.n, "" if i == 0 else "_%d" % i)
                       for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, outputs,
                                           name="%s_%d" % (op_type, self.n),
                                           domain=domain, **attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    def model(self, name, inputs, outputs, opset):
        g = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="strata gen_helper_models.py")
        m.ir_version = 10
        onnx.checker.check_model(m, full_check=True)
        return m


def tensor(name, elem, dims):
    return helper.make_tensor_value_info(name, elem, dims)


def gelu_mlp():
    g = Graph(2020)
    x = g.op("LayerNormalization", ["X", g.weight("ln.weight", [HID], 0.1, 1.0),
                                    g.weight("ln.bias", [HID], 0.02)], epsilon=1e-5, axis=-1)
    h = x
    for i, approx in enumerate(("none", "tanh")):
        u = g.op("Add", [g.op("MatMul", [h, g.weight("fc%d.weight" % i, [HID, 4 * HID])]),
                         g.weight("fc%d.bias" % i, [4 * HID], 0.02)])
        u = g.op("Gelu", [u], approximate=approx)
        d = g.op("Add", [g.op("MatMul", [u, g.weight("proj%d.weight" % i, [4 * HID, HID],
                                                     (4 * HID) ** -0.5)]),
                         g.weight("proj%d.bias" % i, [HID], 0.02)])
        h = g.op("Add", [h, d], outputs=["Y"] if i == 1 else 1)
    m = g.model("opset20_gelu_mlp", [tensor("X", TensorProto.FLOAT, ["batch", "sequence", HID])],
                [tensor("Y", TensorProto.FLOAT, ["batch", "sequence", HID])], 20)
    meta = dict(family="mlp", kind="block", layers=2, heads=0, kv_heads=0, hidden=HID,
                intermediate=4 * HID, vocab=0, gelu_approximate=["none", "tanh"],
                expected_after_fusion={"layer_norm": 1, "rms_norm": 0, "gelu": 2, "attention": 0})
    return m, meta


def llama(past):
    g = Graph(2323)  # same weights for the prefill and with-past pair
    inv = 1.0 / (10000.0 ** (np.arange(0, HD, 2) / HD))
    freqs = np.outer(np.arange(MAXPOS), inv)
    cos = g.const("rope.cos", np.cos(freqs).astype(np.float32))
    sin = g.const("rope.sin", np.sin(freqs).astype(np.float32))
    x = g.op("Gather", [g.weight("embed_tokens.weight", [VOCAB, HID], 1.0), "input_ids"])
    mask = None
    if past:
        # bool [batch, 1, sequence, total]: padding AND causal (Trilu k = past).
        past_len = g.op("Squeeze", [g.op("Shape", ["past_key_values.0.key"], start=2, end=3),
                                    g.const("axes0", np.array([0], np.int64))])
        seq = g.op("Shape", ["input_ids"], start=1, end=2)
        total = g.op("Shape", ["attention_mask"], start=1, end=2)
        ones = g.op("ConstantOfShape", [g.op("Concat", [seq, total], axis=0)],
                    value=numpy_helper.from_array(np.array([1], np.int64)))
        causal = g.op("Cast", [g.op("Trilu", [ones, past_len], upper=0)], to=TensorProto.BOOL)
        pad = g.op("Unsqueeze", [g.op("Cast", ["attention_mask"], to=TensorProto.BOOL),
                                 g.const("axes12", np.array([1, 2], np.int64))])
        mask = g.op("And", [pad, causal])
    presents = []
    for i in range(LAYERS):
        p = "layers.%d." % i
        h = g.op("RMSNormalization", [x, g.weight(p + "input_layernorm.weight", [HID], 0.1, 1.0)],
                 epsilon=1e-6, axis=-1)
        q = g.op("MatMul", [h, g.weight(p + "q_proj.weight", [HID, HEADS * HD])])
        k = g.op("MatMul", [h, g.weight(p + "k_proj.weight", [HID, KV * HD])])
        v = g.op("MatMul", [h, g.weight(p + "v_proj.weight", [HID, KV * HD])])
        q = g.op("RotaryEmbedding", [q, cos, sin, "position_ids"], num_heads=HEADS)
        k = g.op("RotaryEmbedding", [k, cos, sin, "position_ids"], num_heads=KV)
        pk, pv = "present.%d.key" % i, "present.%d.value" % i
        presents += [pk, pv]
        if past:
            ins = [q, k, v, mask, "past_key_values.%d.key" % i, "past_key_values.%d.value" % i]
            a = g.op("Attention", ins, outputs=["attn_%d" % i, pk, pv],
                     q_num_heads=HEADS, kv_num_heads=KV)[0]
        else:
            # onnxruntime wants present_* only together with past_*: the prefill
            # graph reshapes K and V into the present layout itself.
            a = g.op("Attention", [q, k, v], q_num_heads=HEADS, kv_num_heads=KV, is_causal=1)
            shape4 = g.const("kv_shape4", np.array([0, 0, KV, HD], np.int64))
            for src, dst in ((k, pk), (v, pv)):
                g.op("Transpose", [g.op("Reshape", [src, shape4])], outputs=[dst],
                     perm=[0, 2, 1, 3])
        x = g.op("Add", [x, g.op("MatMul", [a, g.weight(p + "o_proj.weight", [HEADS * HD, HID])])])
        h = g.op("RMSNormalization", [x, g.weight(p + "post_attention_layernorm.weight",
                                                  [HID], 0.1, 1.0)], epsilon=1e-6, axis=-1)
        gate = g.op("MatMul", [h, g.weight(p + "gate_proj.weight", [HID, INTER])])
        up = g.op("MatMul", [h, g.weight(p + "up_proj.weight", [HID, INTER])])
        act = g.op("Mul", [gate, g.op("Sigmoid", [gate])])
        x = g.op("Add", [x, g.op("MatMul", [g.op("Mul", [act, up]),
                                            g.weight(p + "down_proj.weight", [INTER, HID],
                                                     INTER ** -0.5)])])
    h = g.op("RMSNormalization", [x, g.weight("norm.weight", [HID], 0.1, 1.0)], epsilon=1e-6)
    g.op("MatMul", [h, g.weight("lm_head.weight", [HID, VOCAB])], outputs=["logits"])
    total = "total_sequence" if past else "sequence"
    ins = [tensor("input_ids", TensorProto.INT64, ["batch", "sequence"])]
    if past:
        ins.append(tensor("attention_mask", TensorProto.INT64, ["batch", total]))
    ins.append(tensor("position_ids", TensorProto.INT64, ["batch", "sequence"]))
    kvshape = lambda s: ["batch", KV, s, HD]  # noqa: E731
    if past:
        ins += [tensor("past_key_values.%d.%s" % (i, t), TensorProto.FLOAT, kvshape("past_sequence"))
                for i in range(LAYERS) for t in ("key", "value")]
    outs = [tensor("logits", TensorProto.FLOAT, ["batch", "sequence", VOCAB])]
    outs += [tensor(n, TensorProto.FLOAT, kvshape(total)) for n in presents]
    name = "opset23_llama_" + ("past" if past else "prefill")
    m = g.model(name, ins, outs, 23)
    meta = dict(family="llama", kind="past" if past else "prefill", layers=LAYERS, heads=HEADS,
                kv_heads=KV, head_dim=HD, hidden=HID, intermediate=INTER, vocab=VOCAB,
                max_positions=MAXPOS, gelu_approximate=None,
                expected_after_fusion={"layer_norm": 0, "rms_norm": 2 * LAYERS + 1, "gelu": 0,
                                       "attention": LAYERS},
                dim_relations={"total_sequence": "past_sequence + sequence"} if past else {})
    return m, meta


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "fixtures")
    for m, meta in (gelu_mlp(), llama(False), llama(True)):
        name = m.graph.name
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        onnx.save(m, os.path.join(d, "model.onnx"))
        meta.update(name=name, opset=m.opset_import[0].version,
                    exporter="onnx.helper",
                    generator="test/models/gen_helper_models.py",
                    inputs=[i.name for i in m.graph.input],
                    outputs=[o.name for o in m.graph.output],
                    dim_names={v.name: {str(a): dim.dim_param for a, dim in
                                        enumerate(v.type.tensor_type.shape.dim) if dim.dim_param}
                               for v in list(m.graph.input) + list(m.graph.output)})
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1, sort_keys=True)
            f.write("\n")
        print("%-24s opset %d, %d nodes" % (name, meta["opset"], len(m.graph.node)))


if __name__ == "__main__":
    main()
