// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-attention))' | FileCheck %s
// RUN: strata-opt %s --split-input-file --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-attention))' \
// RUN:   | FileCheck %s --check-prefix=LOC
// RUN: strata-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-attention{report-missed=true}))' \
// RUN:   -o /dev/null
// Where the scale sits, clamps of the scores, and how grouped K/V heads are
// repeated.

// The scale on K before its transpose: transpose(K * c) is K^T * c.
// CHECK-LABEL: func.func @fuse_attention_scale_on_key
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>)
//       CHECK:   %[[O:.+]] = strata.attention %[[Q]], %[[K]], %[[V]] :
//   CHECK-NOT:   strata.mul
//       CHECK:   return %[[O]]
// LOC-LABEL: func.func @fuse_attention_scale_on_key
//       LOC:   strata.attention {{.*}} loc(fused["ks", "kt", "qk", "softmax", "pv"])
func.func @fuse_attention_scale_on_key(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %c = strata.constant dense<0.353553385> : tensor<f32>
  %ks = strata.mul %k, %c : (tensor<1x2x4x8xf32>, tensor<f32>) -> tensor<1x2x4x8xf32> loc("ks")
  %kt = strata.transpose %ks, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32> loc("kt")
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32> loc("qk")
  %p = strata.softmax %s {axis = -1 : i64} : tensor<1x2x4x4xf32> loc("softmax")
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> loc("pv")
  return %o : tensor<1x2x4x8xf32>
}

// -----

// sqrt(scale) on Q and on K before repeat_kv (2 KV heads for 4 query
// heads), scores clamped to the lowest float after the mask: the scale is
// the product, K and V are passed unrepeated, and the mask, whose values
// are bounded ((1 - m) * lowest of a 0/1 m), needs no clamp of its own.
// CHECK-LABEL: func.func @fuse_attention_split_scale_repeat_kv_clamped
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x4x4x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>, %[[M:.+]]: tensor<1x1x1x4xi1>)
//       CHECK:   %[[A:.+]] = strata.mul {{.*}} -> tensor<1x1x1x4xf32>
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] mask %[[A]] {scale = 2.500000e-01 : f32} : (tensor<1x4x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x1x1x4xf32>)
//   CHECK-NOT:   strata.max
func.func @fuse_attention_split_scale_repeat_kv_clamped(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x1x1x4xi1>) -> tensor<1x4x4x8xf32> {
  %c = strata.constant dense<0.5> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<f32>
  %lowest = strata.constant dense<-3.40282347E+38> : tensor<f32>
  %shape = strata.constant dense<[1, 2, 2, 4, 8]> : tensor<5xi64>
  %mf = strata.cast %m : tensor<1x1x1x4xi1> -> tensor<1x1x1x4xf32>
  %inv = strata.sub %one, %mf : (tensor<f32>, tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32>
  %add = strata.mul %inv, %lowest : (tensor<1x1x1x4xf32>, tensor<f32>) -> tensor<1x1x1x4xf32>
  %qs = strata.mul %q, %c : (tensor<1x4x4x8xf32>, tensor<f32>) -> tensor<1x4x4x8xf32>
  %ks = strata.mul %k, %c : (tensor<1x2x4x8xf32>, tensor<f32>) -> tensor<1x2x4x8xf32>
  %k1 = strata.reshape %ks : (tensor<1x2x4x8xf32>) -> tensor<1x2x1x4x8xf32>
  %k2 = strata.expand %k1, %shape : (tensor<1x2x1x4x8xf32>, tensor<5xi64>) -> tensor<1x2x2x4x8xf32>
  %k3 = strata.reshape %k2 : (tensor<1x2x2x4x8xf32>) -> tensor<1x4x4x8xf32>
  %v1 = strata.reshape %v : (tensor<1x2x4x8xf32>) -> tensor<1x2x1x4x8xf32>
  %v2 = strata.expand %v1, %shape : (tensor<1x2x1x4x8xf32>, tensor<5xi64>) -> tensor<1x2x2x4x8xf32>
  %v3 = strata.reshape %v2 : (tensor<1x2x2x4x8xf32>) -> tensor<1x4x4x8xf32>
  %kt = strata.transpose %k3, [0, 1, 3, 2] : tensor<1x4x4x8xf32> -> tensor<1x4x8x4xf32>
  %s = strata.matmul %qs, %kt : (tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x4x4xf32>
  %a = strata.add %s, %add : (tensor<1x4x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x4x4x4xf32>
  %cl = strata.max %a, %lowest : (tensor<1x4x4x4xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
  %p = strata.softmax %cl {axis = -1 : i64} : tensor<1x4x4x4xf32>
  %o = strata.matmul %p, %v3 : (tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %o : tensor<1x4x4x8xf32>
}

// -----

// A clamp over an additive mask that may hold -inf: the clamp moves onto
// the mask, max(s + M, lowest) = s + max(M, lowest).
// CHECK-LABEL: func.func @fuse_attention_clamp_moves_to_mask
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>, %[[M:.+]]: tensor<1x1x4x4xf32>)
//       CHECK:   %[[L:.+]] = strata.constant dense<-3.40282347E+38> : tensor<f32>
//       CHECK:   %[[CM:.+]] = strata.max %[[M]], %[[L]]
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] mask %[[CM]] :
func.func @fuse_attention_clamp_moves_to_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x1x4x4xf32>) -> tensor<1x2x4x8xf32> {
  %c = strata.constant dense<2.82842712> : tensor<f32>
  %lowest = strata.constant dense<-3.40282347E+38> : tensor<f32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %d = strata.div %s, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %a = strata.add %d, %m : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %cl = strata.max %lowest, %a : (tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = strata.softmax %cl {axis = -1 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Older Llama releases: a causal triangle of lowest plus a padding mask,
// then clamped. Without the clamp a hidden, padded key scores lowest +
// lowest = -inf (mask_hidden); with it every hidden key scores the lowest
// float, which is the `causal` attribute alone.
// CHECK-LABEL: func.func @fuse_attention_clamped_causal_plus_padding
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x2x2x8xf32>, %[[K:.+]]: tensor<1x2x2x8xf32>, %[[V:.+]]: tensor<1x2x2x8xf32>, %[[PAD:.+]]: tensor<1x1x1x2xf32>)
//       CHECK:   %[[CP:.+]] = strata.max %[[PAD]]
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] mask %[[CP]] {causal} :
func.func @fuse_attention_clamped_causal_plus_padding(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x2x8xf32>, %v: tensor<1x2x2x8xf32>, %pad: tensor<1x1x1x2xf32>) -> tensor<1x2x2x8xf32> {
  %c = strata.constant dense<2.82842712> : tensor<f32>
  %lowest = strata.constant dense<-3.40282347E+38> : tensor<f32>
  %tri = strata.constant dense<[[[[0.0, -3.40282347E+38], [0.0, 0.0]]]]> : tensor<1x1x2x2xf32>
  %mask = strata.add %pad, %tri : (tensor<1x1x1x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x2x8xf32> -> tensor<1x2x8x2xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x2x8xf32>, tensor<1x2x8x2xf32>) -> tensor<1x2x2x2xf32>
  %d = strata.div %s, %c : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %a = strata.add %d, %mask : (tensor<1x2x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32>
  %cl = strata.max %a, %lowest : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %p = strata.softmax %cl {axis = -1 : i64} : tensor<1x2x2x2xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x2x2xf32>, tensor<1x2x2x8xf32>) -> tensor<1x2x2x8xf32>
  return %o : tensor<1x2x2x8xf32>
}

// -----

// A clamp at -1e4 is not the lowest float: it changes scores a softmax
// still sees, so the chain stays.
// CHECK-LABEL: func.func @negative_attention_clamp_not_lowest
//   CHECK-NOT:   strata.attention
func.func @negative_attention_clamp_not_lowest(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %floor = strata.constant dense<-1.0e+04> : tensor<f32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %cl = strata.max %s, %floor : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{softmax did not fuse into strata.attention: the softmax input is not built from 'strata.matmul(Q, K^T)'}}
  %p = strata.softmax %cl {axis = -1 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Soft-capped scores (Gemma 2: c * tanh(s / c) before the mask): the
// attention op has no cap, so the chain stays and the remark says why.
// CHECK-LABEL: func.func @negative_attention_soft_cap
//   CHECK-NOT:   strata.attention
func.func @negative_attention_soft_cap(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %cap = strata.constant dense<5.0e+01> : tensor<f32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %d = strata.div %s, %cap : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %t = strata.tanh %d : tensor<1x2x4x4xf32>
  %c = strata.mul %t, %cap : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{softmax did not fuse into strata.attention: the scores are soft-capped (c * tanh(s / c), as Gemma 2 spells it), which strata.attention does not take}}
  %p = strata.softmax %c {axis = -1 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Heads the shape folds could not prove static: strata.attention takes
// static head counts and head dims only, so the chain stays.
// CHECK-LABEL: func.func @negative_attention_dynamic_heads
//   CHECK-NOT:   strata.attention
func.func @negative_attention_dynamic_heads(%q: tensor<1x?x4x8xf32>, %k: tensor<1x?x4x8xf32>, %v: tensor<1x?x4x8xf32>) -> tensor<1x?x4x8xf32> {
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x?x4x8xf32> -> tensor<1x?x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x?x4x8xf32>, tensor<1x?x8x4xf32>) -> tensor<1x?x4x4xf32>
  // expected-remark @+1 {{softmax did not fuse into strata.attention: the head counts or head dims of Q, K or V are not static (the shapes that split the heads did not fold)}}
  %p = strata.softmax %s {axis = -1 : i64} : tensor<1x?x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x?x4x4xf32>, tensor<1x?x4x8xf32>) -> tensor<1x?x4x8xf32>
  return %o : tensor<1x?x4x8xf32>
}

// -----

// The scale on Q before its heads are transposed into place: the scale is
// folded and Q is the transposed unscaled tensor.
// CHECK-LABEL: func.func @fuse_attention_scale_before_query_transpose
//  CHECK-SAME:   (%[[X:.+]]: tensor<1x4x2x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>)
//       CHECK:   %[[Q:.+]] = strata.transpose %[[X]], [0, 2, 1, 3]
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] :
//   CHECK-NOT:   strata.mul
func.func @fuse_attention_scale_before_query_transpose(%x: tensor<1x4x2x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %c = strata.constant dense<0.353553385> : tensor<f32>
  %xs = strata.mul %c, %x : (tensor<f32>, tensor<1x4x2x8xf32>) -> tensor<1x4x2x8xf32>
  %q = strata.transpose %xs, [0, 2, 1, 3] : tensor<1x4x2x8xf32> -> tensor<1x2x4x8xf32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = strata.softmax %s {axis = -1 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// repeat_interleave exported as Tile: [B, 2, 1, S, D] tiled [1, 1, 2, 1, 1]
// and merged; V as concat of two copies along the new dim.
// CHECK-LABEL: func.func @fuse_attention_repeat_kv_tile_and_concat
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x4x4x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>)
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] : (tensor<1x4x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32>
func.func @fuse_attention_repeat_kv_tile_and_concat(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %c = strata.constant dense<2.82842712> : tensor<f32>
  %reps = strata.constant dense<[1, 1, 2, 1, 1]> : tensor<5xi64>
  %k1 = strata.reshape %k : (tensor<1x2x4x8xf32>) -> tensor<1x2x1x4x8xf32>
  %k2 = strata.tile %k1, %reps : (tensor<1x2x1x4x8xf32>, tensor<5xi64>) -> tensor<1x2x2x4x8xf32>
  %k3 = strata.reshape %k2 : (tensor<1x2x2x4x8xf32>) -> tensor<1x4x4x8xf32>
  %v1 = strata.reshape %v : (tensor<1x2x4x8xf32>) -> tensor<1x2x1x4x8xf32>
  %v2 = strata.concat %v1, %v1 {axis = 2 : i64} : (tensor<1x2x1x4x8xf32>, tensor<1x2x1x4x8xf32>) -> tensor<1x2x2x4x8xf32>
  %v3 = strata.reshape %v2 : (tensor<1x2x2x4x8xf32>) -> tensor<1x4x4x8xf32>
  %kt = strata.transpose %k3, [0, 1, 3, 2] : tensor<1x4x4x8xf32> -> tensor<1x4x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x4x4xf32>
  %d = strata.div %s, %c : (tensor<1x4x4x4xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
  %p = strata.softmax %d {axis = -1 : i64} : tensor<1x4x4x4xf32>
  %o = strata.matmul %p, %v3 : (tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %o : tensor<1x4x4x8xf32>
}

// -----

// One KV head (multi-query attention) copied to 4 heads by Tile [1, 4, 1, 1]
// for K and Concat for V; K^T is transposed before it is repeated.
// CHECK-LABEL: func.func @fuse_attention_one_kv_head_tiled_after_transpose
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x4x4x8xf32>, %[[K:.+]]: tensor<1x1x4x8xf32>, %[[V:.+]]: tensor<1x1x4x8xf32>)
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] : (tensor<1x4x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x4x4x8xf32>
func.func @fuse_attention_one_kv_head_tiled_after_transpose(%q: tensor<1x4x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %c = strata.constant dense<2.82842712> : tensor<f32>
  %reps = strata.constant dense<[1, 4, 1, 1]> : tensor<4xi64>
  %kt1 = strata.transpose %k, [0, 1, 3, 2] : tensor<1x1x4x8xf32> -> tensor<1x1x8x4xf32>
  %kt = strata.tile %kt1, %reps : (tensor<1x1x8x4xf32>, tensor<4xi64>) -> tensor<1x4x8x4xf32>
  %v4 = strata.concat %v, %v, %v, %v {axis = 1 : i64} : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x4x4x8xf32>
  %s = strata.matmul %q, %kt : (tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x4x4xf32>
  %d = strata.div %s, %c : (tensor<1x4x4x4xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
  %p = strata.softmax %d {axis = -1 : i64} : tensor<1x4x4x4xf32>
  %o = strata.matmul %p, %v4 : (tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %o : tensor<1x4x4x8xf32>
}

// -----

// K repeated by repeat_kv but V by tiling the head block: the groupings
// differ, so both stay repeated.
// CHECK-LABEL: func.func @fuse_attention_mixed_repeats_stay_repeated
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x4x4x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>)
//       CHECK:   %[[K3:.+]] = strata.reshape {{.*}} -> tensor<1x4x4x8xf32>
//       CHECK:   %[[V4:.+]] = strata.tile %[[V]]
//       CHECK:   strata.attention %[[Q]], %[[K3]], %[[V4]] :
func.func @fuse_attention_mixed_repeats_stay_repeated(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %c = strata.constant dense<2.82842712> : tensor<f32>
  %shape = strata.constant dense<[1, 2, 2, 4, 8]> : tensor<5xi64>
  %reps = strata.constant dense<[1, 2, 1, 1]> : tensor<4xi64>
  %k1 = strata.reshape %k : (tensor<1x2x4x8xf32>) -> tensor<1x2x1x4x8xf32>
  %k2 = strata.expand %k1, %shape : (tensor<1x2x1x4x8xf32>, tensor<5xi64>) -> tensor<1x2x2x4x8xf32>
  %k3 = strata.reshape %k2 : (tensor<1x2x2x4x8xf32>) -> tensor<1x4x4x8xf32>
  %v4 = strata.tile %v, %reps : (tensor<1x2x4x8xf32>, tensor<4xi64>) -> tensor<1x4x4x8xf32>
  %kt = strata.transpose %k3, [0, 1, 3, 2] : tensor<1x4x4x8xf32> -> tensor<1x4x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x4x4x8xf32>, tensor<1x4x8x4xf32>) -> tensor<1x4x4x4xf32>
  %d = strata.div %s, %c : (tensor<1x4x4x4xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
  %p = strata.softmax %d {axis = -1 : i64} : tensor<1x4x4x4xf32>
  %o = strata.matmul %p, %v4 : (tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %o : tensor<1x4x4x8xf32>
}

// -----

// torch's export of `k[:, :, None].repeat(1, 1, 2, 1, 1)` with run-time
// batch and sequence: an expand to ones (a no-op) before the tile, whose
// extents are the input's times the repeats. K's sizes shape V too: the
// dim names make them one extent.
// CHECK-LABEL: func.func @fuse_attention_repeat_kv_tile_dynamic
//  CHECK-SAME:   (%[[Q:[^:]+]]: tensor<?x4x?x8xf32>, %[[K:[^:]+]]: tensor<?x2x?x8xf32> {{.*}}, %[[V:[^:]+]]: tensor<?x2x?x8xf32> {{.*}})
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32>
func.func @fuse_attention_repeat_kv_tile_dynamic(
    %q: tensor<?x4x?x8xf32>,
    %k: tensor<?x2x?x8xf32> {strata.dims = ["batch", "", "sequence", ""]},
    %v: tensor<?x2x?x8xf32> {strata.dims = ["batch", "", "sequence", ""]}) -> tensor<?x4x?x8xf32> {
  %c = strata.constant dense<2.82842712> : tensor<f32>
  %c0 = strata.constant dense<0> : tensor<i64>
  %c2 = strata.constant dense<2> : tensor<i64>
  %two = strata.constant dense<2> : tensor<1xi64>
  %four = strata.constant dense<4> : tensor<1xi64>
  %one = strata.constant dense<1> : tensor<1xi64>
  %eight = strata.constant dense<8> : tensor<1xi64>
  %ones = strata.constant dense<1> : tensor<5xi64>
  %reps = strata.constant dense<[1, 1, 2, 1, 1]> : tensor<5xi64>
  %ks = strata.shape %k : tensor<?x2x?x8xf32> -> tensor<4xi64>
  %b = strata.gather %ks, %c0 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %s = strata.gather %ks, %c2 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %b1 = strata.reshape %b : (tensor<i64>) -> tensor<1xi64>
  %s1 = strata.reshape %s : (tensor<i64>) -> tensor<1xi64>
  %wide = strata.concat %b1, %two, %one, %s1, %eight {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5xi64>
  %merged = strata.concat %b1, %four, %s1, %eight {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %k1 = strata.reshape %k, %wide {allow_zero} : (tensor<?x2x?x8xf32>, tensor<5xi64>) -> tensor<?x2x1x?x8xf32>
  %k2 = strata.expand %k1, %ones : (tensor<?x2x1x?x8xf32>, tensor<5xi64>) -> tensor<?x2x1x?x8xf32>
  %k3 = strata.tile %k2, %reps : (tensor<?x2x1x?x8xf32>, tensor<5xi64>) -> tensor<?x2x2x?x8xf32>
  %k4 = strata.reshape %k3, %merged {allow_zero} : (tensor<?x2x2x?x8xf32>, tensor<4xi64>) -> tensor<?x4x?x8xf32>
  %v1 = strata.reshape %v, %wide {allow_zero} : (tensor<?x2x?x8xf32>, tensor<5xi64>) -> tensor<?x2x1x?x8xf32>
  %v2 = strata.concat %v1, %v1 {axis = 2 : i64} : (tensor<?x2x1x?x8xf32>, tensor<?x2x1x?x8xf32>) -> tensor<?x2x2x?x8xf32>
  %v4 = strata.reshape %v2, %merged {allow_zero} : (tensor<?x2x2x?x8xf32>, tensor<4xi64>) -> tensor<?x4x?x8xf32>
  %kt = strata.transpose %k4, [0, 1, 3, 2] : tensor<?x4x?x8xf32> -> tensor<?x4x8x?xf32>
  %sc = strata.matmul %q, %kt : (tensor<?x4x?x8xf32>, tensor<?x4x8x?xf32>) -> tensor<?x4x?x?xf32>
  %d = strata.div %sc, %c : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
  %p = strata.softmax %d {axis = -1 : i64} : tensor<?x4x?x?xf32>
  %o = strata.matmul %p, %v4 : (tensor<?x4x?x?xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32>
  return %o : tensor<?x4x?x8xf32>
}
