// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-attention))' | FileCheck %s
// RUN: strata-opt %s --split-input-file --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-attention))' \
// RUN:   | FileCheck %s --check-prefix=LOC
// RUN: strata-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-attention{report-missed=true}))' \
// RUN:   -o /dev/null

// Eager HF export: MatMul(Q, K^T) -> Div(sqrt(d)) -> Softmax -> MatMul(V).
// The scale is the default 1/sqrt(8), so it is omitted.
// CHECK-LABEL: func.func @fuse_attention_div_scale
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>)
//       CHECK:   %[[O:.+]] = strata.attention %[[Q]], %[[K]], %[[V]] :
//   CHECK-NOT:   strata.softmax
//       CHECK:   return %[[O]]
// LOC-LABEL: func.func @fuse_attention_div_scale
//       LOC:   strata.attention {{.*}} loc(fused["kt", "qk", "div", "softmax", "pv"])
func.func @fuse_attention_div_scale(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %c = strata.constant dense<2.82842712> : tensor<f32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32> loc("kt")
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32> loc("qk")
  %d = strata.div %s, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32> loc("div")
  %p = strata.softmax %d {axis = -1 : i64} : tensor<1x2x4x4xf32> loc("softmax")
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> loc("pv")
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Mul by a constant that is not 1/sqrt(d), constant first: the scale is set.
// CHECK-LABEL: func.func @fuse_attention_mul_scale_constant_first
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>)
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f32}
//   CHECK-NOT:   strata.softmax
func.func @fuse_attention_mul_scale_constant_first(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %c = strata.constant dense<0.125> : tensor<f32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %m = strata.mul %c, %s : (tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = strata.softmax %m {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The scale applied to Q before the matmul.
// CHECK-LABEL: func.func @fuse_attention_prescaled_q
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>)
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] :
//   CHECK-NOT:   strata.mul
func.func @fuse_attention_prescaled_q(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %c = strata.constant dense<0.353553385> : tensor<f32>
  %qs = strata.mul %q, %c : (tensor<1x2x4x8xf32>, tensor<f32>) -> tensor<1x2x4x8xf32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %qs, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = strata.softmax %s {axis = -1 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// torch SDPA export: Mul(Q, sqrt(scale)) and Mul(K^T, sqrt(scale)), with a
// bool mask turned into an additive one by Where(mask, 0, -inf) + Add.
// CHECK-LABEL: func.func @fuse_attention_split_sqrt_scale
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>, %[[C:.+]]: tensor<1x1x4x4xi1>)
//       CHECK:   %[[M:.+]] = strata.where %[[C]]
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] mask %[[M]] :
//   CHECK-NOT:   strata.softmax
func.func @fuse_attention_split_sqrt_scale(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %c: tensor<1x1x4x4xi1>) -> tensor<1x2x4x8xf32> {
  %r = strata.constant dense<0.594603539> : tensor<f32>
  %zero = strata.constant dense<0.0> : tensor<f32>
  %ninf = strata.constant dense<0xFF800000> : tensor<f32>
  %mask = strata.where %c, %zero, %ninf : (tensor<1x1x4x4xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x4x4xf32>
  %qs = strata.mul %q, %r : (tensor<1x2x4x8xf32>, tensor<f32>) -> tensor<1x2x4x8xf32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %kts = strata.mul %kt, %r : (tensor<1x2x8x4xf32>, tensor<f32>) -> tensor<1x2x8x4xf32>
  %s = strata.matmul %qs, %kts : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %a = strata.add %mask, %s : (tensor<1x1x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = strata.softmax %a {axis = -1 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// BERT: Div(sqrt(d)) then Add of a [B, 1, 1, Sk] padding mask.
// CHECK-LABEL: func.func @fuse_attention_additive_mask
//  CHECK-SAME:   (%[[Q:.+]]: tensor<?x2x?x8xf32>, %[[K:.+]]: tensor<?x2x?x8xf32>, %[[V:.+]]: tensor<?x2x?x8xf32>, %[[M:.+]]: tensor<?x1x1x?xf32>)
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] mask %[[M]] :
//   CHECK-NOT:   strata.softmax
func.func @fuse_attention_additive_mask(%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x8xf32>, %m: tensor<?x1x1x?xf32>) -> tensor<?x2x?x8xf32> {
  %c = strata.constant dense<2.82842712> : tensor<f32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<?x2x?x8xf32> -> tensor<?x2x8x?xf32>
  %s = strata.matmul %q, %kt : (tensor<?x2x?x8xf32>, tensor<?x2x8x?xf32>) -> tensor<?x2x?x?xf32>
  %d = strata.div %s, %c : (tensor<?x2x?x?xf32>, tensor<f32>) -> tensor<?x2x?x?xf32>
  %a = strata.add %d, %m : (tensor<?x2x?x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x2x?x?xf32>
  %p = strata.softmax %a {axis = -1 : i64} : tensor<?x2x?x?xf32>
  %o = strata.matmul %p, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  return %o : tensor<?x2x?x8xf32>
}

// -----

// DistilBERT / GPT-2 without padding: Where(C, scores, lowest) keeps `true`,
// so C becomes an i1 mask. The divisor is computed in the graph as
// sqrt(float(8)) + 0, as GPT-2 exports do.
// CHECK-LABEL: func.func @fuse_attention_where_bool_mask
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>, %[[C:.+]]: tensor<1x1x4x4xi1>)
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] mask %[[C]] :
//   CHECK-NOT:   strata.where
func.func @fuse_attention_where_bool_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %c: tensor<1x1x4x4xi1>) -> tensor<1x2x4x8xf32> {
  %eight = strata.constant dense<8> : tensor<i64>
  %half = strata.constant dense<0.5> : tensor<f32>
  %zero = strata.constant dense<0.0> : tensor<f32>
  %lowest = strata.constant dense<-3.40282347E+38> : tensor<f32>
  %f = strata.cast %eight : tensor<i64> -> tensor<f32>
  %r = strata.pow %f, %half : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %div = strata.add %r, %zero : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %d = strata.div %s, %div : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %w = strata.where %c, %d, %lowest : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = strata.softmax %w {axis = -1 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// No scale and no mask; K^T transposes a [B, S, H, D] tensor in one step
// ([0, 2, 3, 1], as canonicalization composes GPT-2's two transposes), so K
// is that tensor transposed by [0, 2, 1, 3]. The scale 1 is set.
// CHECK-LABEL: func.func @fuse_attention_no_mask_composed_transpose
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[X:.+]]: tensor<1x4x2x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>)
//       CHECK:   %[[K:.+]] = strata.transpose %[[X]], [0, 2, 1, 3] : tensor<1x4x2x8xf32> -> tensor<1x2x4x8xf32>
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] {scale = 1.000000e+00 : f32}
//   CHECK-NOT:   strata.softmax
func.func @fuse_attention_no_mask_composed_transpose(%q: tensor<1x2x4x8xf32>, %x: tensor<1x4x2x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %kt = strata.transpose %x, [0, 2, 3, 1] : tensor<1x4x2x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = strata.softmax %s {axis = -1 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A softmax over the heads axis is not attention.
// CHECK-LABEL: func.func @negative_attention_softmax_axis
//   CHECK-NOT:   strata.attention
func.func @negative_attention_softmax_axis(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{softmax did not fuse into strata.attention: the softmax is not over the last axis}}
  %p = strata.softmax %s {axis = 1 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The scores are also returned, so they must stay materialized.
// CHECK-LABEL: func.func @negative_attention_scores_extra_user
//   CHECK-NOT:   strata.attention
func.func @negative_attention_scores_extra_user(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %c = strata.constant dense<2.82842712> : tensor<f32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %d = strata.div %s, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{softmax did not fuse into strata.attention: an intermediate value of the chain has other uses}}
  %p = strata.softmax %d {axis = -1 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %s : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// A run-time divisor is not a known scale.
// CHECK-LABEL: func.func @negative_attention_non_constant_scale
//   CHECK-NOT:   strata.attention
func.func @negative_attention_non_constant_scale(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %c: tensor<f32>) -> tensor<1x2x4x8xf32> {
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %d = strata.div %s, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{softmax did not fuse into strata.attention: the scores are scaled by a value that is not a constant scalar}}
  %p = strata.softmax %d {axis = -1 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The rhs of the scores matmul is not a transpose, so K is unknown.
// CHECK-LABEL: func.func @negative_attention_key_not_transposed
//   CHECK-NOT:   strata.attention
func.func @negative_attention_key_not_transposed(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{softmax did not fuse into strata.attention: the rhs of the scores matmul is not a rank-4 'strata.transpose'}}
  %p = strata.softmax %s {axis = -1 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A Where with a run-time condition (not a causal mask) and an additive
// padding mask: the op takes one mask, so the two are left unfused.
// CHECK-LABEL: func.func @negative_attention_both_masks
//   CHECK-NOT:   strata.attention
func.func @negative_attention_both_masks(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %c: tensor<1x1x4x4xi1>, %m: tensor<1x1x1x4xf32>) -> tensor<1x2x4x8xf32> {
  %lowest = strata.constant dense<-3.40282347E+38> : tensor<f32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %w = strata.where %c, %s, %lowest : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %a = strata.add %w, %m : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{softmax did not fuse into strata.attention: the scores have a 'where' mask that is not causal and another mask}}
  %p = strata.softmax %a {axis = -1 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Grouped-query attention, HF repeat_kv: K and V of 2 KV heads unsqueezed,
// expanded to 2 copies and merged into 4 heads; the op takes the 2-head
// tensors (query head h uses KV head h / 2).
// CHECK-LABEL: func.func @fuse_attention_repeat_kv
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x4x4x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>)
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] : (tensor<1x4x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32>
func.func @fuse_attention_repeat_kv(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %c = strata.constant dense<2.82842712> : tensor<f32>
  %shape = strata.constant dense<[1, 2, 2, 4, 8]> : tensor<5xi64>
  %k1 = strata.reshape %k : (tensor<1x2x4x8xf32>) -> tensor<1x2x1x4x8xf32>
  %k2 = strata.expand %k1, %shape : (tensor<1x2x1x4x8xf32>, tensor<5xi64>) -> tensor<1x2x2x4x8xf32>
  %k3 = strata.reshape %k2 : (tensor<1x2x2x4x8xf32>) -> tensor<1x4x4x8xf32>
  %v1 = strata.reshape %v : (tensor<1x2x4x8xf32>) -> tensor<1x2x1x4x8xf32>
  %v2 = strata.expand %v1, %shape : (tensor<1x2x1x4x8xf32>, tensor<5xi64>) -> tensor<1x2x2x4x8xf32>
  %v3 = strata.reshape %v2 : (tensor<1x2x2x4x8xf32>) -> tensor<1x4x4x8xf32>
  %kt = strata.transpose %k3, [0, 1, 3, 2] : tensor<1x4x4x8xf32> -> tensor<1x4x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x4x4xf32>
  %d = strata.div %s, %c : (tensor<1x4x4x4xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
  %p = strata.softmax %d {axis = -1 : i64} : tensor<1x4x4x4xf32>
  %o = strata.matmul %p, %v3 : (tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %o : tensor<1x4x4x8xf32>
}

// -----

// Repeating the whole head block ([B, n, Hkv, S, D], query head h uses KV
// head h % 2) is not the grouping of strata.attention: K and V stay
// repeated.
// CHECK-LABEL: func.func @fuse_attention_tiled_kv_stays_repeated
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x4x4x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>)
//       CHECK:   %[[K3:.+]] = strata.reshape {{.*}} -> tensor<1x4x4x8xf32>
//       CHECK:   %[[V3:.+]] = strata.reshape {{.*}} -> tensor<1x4x4x8xf32>
//       CHECK:   strata.attention %[[Q]], %[[K3]], %[[V3]] :
func.func @fuse_attention_tiled_kv_stays_repeated(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %c = strata.constant dense<2.82842712> : tensor<f32>
  %shape = strata.constant dense<[1, 2, 2, 4, 8]> : tensor<5xi64>
  %k1 = strata.reshape %k : (tensor<1x2x4x8xf32>) -> tensor<1x1x2x4x8xf32>
  %k2 = strata.expand %k1, %shape : (tensor<1x1x2x4x8xf32>, tensor<5xi64>) -> tensor<1x2x2x4x8xf32>
  %k3 = strata.reshape %k2 : (tensor<1x2x2x4x8xf32>) -> tensor<1x4x4x8xf32>
  %v1 = strata.reshape %v : (tensor<1x2x4x8xf32>) -> tensor<1x1x2x4x8xf32>
  %v2 = strata.expand %v1, %shape : (tensor<1x1x2x4x8xf32>, tensor<5xi64>) -> tensor<1x2x2x4x8xf32>
  %v3 = strata.reshape %v2 : (tensor<1x2x2x4x8xf32>) -> tensor<1x4x4x8xf32>
  %kt = strata.transpose %k3, [0, 1, 3, 2] : tensor<1x4x4x8xf32> -> tensor<1x4x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x4x4xf32>
  %d = strata.div %s, %c : (tensor<1x4x4x4xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
  %p = strata.softmax %d {axis = -1 : i64} : tensor<1x4x4x4xf32>
  %o = strata.matmul %p, %v3 : (tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %o : tensor<1x4x4x8xf32>
}
