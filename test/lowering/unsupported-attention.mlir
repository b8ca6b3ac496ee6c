// RUN: not strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-lower-to-linalg))' 2>&1 \
// RUN:   | FileCheck %s

// Head counts the graph computes at run time: the lowering maps query head
// h to key/value head h / (H / Hkv) with a constant divisor, so it needs H
// and Hkv. The error is on the fused op and names the ONNX nodes it came
// from, never an anonymous "failed to legalize" at the model file.
// CHECK: model.onnx:0:0: error: 'strata.attention' op expected static query heads, key/value heads and head dim (the dims 1 and 3 of [B, H, S, D]), got query 1x?x8x16 and key 1x?x8x16; ONNX nodes '/layers.0/self_attn/Transpose_3', '/layers.0/self_attn/MatMul', '/layers.0/self_attn/Mul', '/layers.0/self_attn/Softmax' and 1 more
// CHECK-NOT: failed to legalize
func.func @dynamic_heads(%q: tensor<1x?x8x16xf32>, %k: tensor<1x?x8x16xf32>, %v: tensor<1x?x8x16xf32>) -> tensor<1x?x8x16xf32> {
  %o = strata.attention %q, %k, %v {causal} : (tensor<1x?x8x16xf32>, tensor<1x?x8x16xf32>, tensor<1x?x8x16xf32>) -> tensor<1x?x8x16xf32> loc(fused[
      "/layers.0/self_attn/Transpose_3"("model.onnx":0:0),
      "/layers.0/self_attn/MatMul"("model.onnx":0:0),
      "/layers.0/self_attn/Mul"("model.onnx":0:0),
      "/layers.0/self_attn/Softmax"("model.onnx":0:0),
      "/layers.0/self_attn/MatMul_1"("model.onnx":0:0)])
  return %o : tensor<1x?x8x16xf32>
}

// -----

// One node: the name alone.
// CHECK: error: 'strata.attention' op expected static query heads, key/value heads and head dim (the dims 1 and 3 of [B, H, S, D]), got query 1x4x8x? and key 1x2x8x?; ONNX node 'Attention_0'
func.func @dynamic_head_dim(%q: tensor<1x4x8x?xf32>, %k: tensor<1x2x8x?xf32>, %v: tensor<1x2x8x?xf32>) -> tensor<1x4x8x?xf32> {
  %o = strata.attention %q, %k, %v : (tensor<1x4x8x?xf32>, tensor<1x2x8x?xf32>, tensor<1x2x8x?xf32>) -> tensor<1x4x8x?xf32> loc("Attention_0"("model.onnx":0:0))
  return %o : tensor<1x4x8x?xf32>
}
