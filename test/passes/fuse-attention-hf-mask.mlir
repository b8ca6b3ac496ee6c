// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-attention))' | FileCheck %s
// RUN: strata-opt %s --split-input-file --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-attention))' \
// RUN:   | FileCheck %s --check-prefix=LOC

// The masks of transformers' masking utilities (eager attention): the
// causal part compares key positions with query positions built with
// Range (kv_idx <= q_idx, query positions shifted by the past length) and
// is and-ed with a padding mask; the float mask is where(mask, 0, lowest).
// The causal part becomes the attribute, the padding part stays a mask.

// With past: query positions past + [0, Sq), key positions [0, past + Sq),
// K = concat(past, new keys).
// CHECK-LABEL: func.func @fuse_hf_causal_and_padding_with_past
//  CHECK-SAME:   (%[[Q:[^:]+]]: tensor<?x4x?x16xf32>{{.*}}, %[[PAST:[^:]+]]: tensor<?x4x?x16xf32>{{.*}}, %[[NEW:[^:]+]]: tensor<?x4x?x16xf32>{{.*}}, %[[V:[^:]+]]: tensor<?x4x?x16xf32>, %[[PAD:[^:]+]]: tensor<?x1x1x?xi1>)
//       CHECK:   %[[K:.+]] = strata.concat %[[PAST]], %[[NEW]]
//       CHECK:   %[[M:.+]] = strata.where %[[PAD]], %{{.+}}, %{{.+}} : (tensor<?x1x1x?xi1>, tensor<f32>, tensor<f32>) -> tensor<?x1x1x?xf32>
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] mask %[[M]] {causal} :
//   CHECK-NOT:   strata.softmax
// LOC-LABEL: func.func @fuse_hf_causal_and_padding_with_past
//       LOC:   strata.where {{.*}} loc(fused["kt", "qk", "scale", "mask", "softmax", "pv"])
//       LOC:   strata.attention {{.*}} loc(fused["kt", "qk", "scale", "mask", "softmax", "pv"])
func.func @fuse_hf_causal_and_padding_with_past(
    %q: tensor<?x4x?x16xf32> {strata.dims = ["batch_size", "", "sequence_length", ""]},
    %past: tensor<?x4x?x16xf32> {strata.dims = ["batch_size", "", "past_sequence_length", ""]},
    %new: tensor<?x4x?x16xf32> {strata.dims = ["batch_size", "", "sequence_length", ""]},
    %v: tensor<?x4x?x16xf32>, %pad: tensor<?x1x1x?xi1>) -> tensor<?x4x?x16xf32> {
  %c0 = strata.constant dense<0> : tensor<i64>
  %c1 = strata.constant dense<1> : tensor<i64>
  %c2 = strata.constant dense<2> : tensor<i64>
  %one = strata.constant dense<1> : tensor<1xi64>
  %true = strata.constant dense<true> : tensor<i1>
  %zero = strata.constant dense<0.000000e+00> : tensor<f32>
  %lowest = strata.constant dense<-3.40282347E+38> : tensor<f32>
  %scale = strata.constant dense<2.500000e-01> : tensor<f32>
  %k = strata.concat %past, %new {axis = 2 : i64} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  %qs = strata.shape %q : tensor<?x4x?x16xf32> -> tensor<4xi64>
  %sq = strata.gather %qs, %c2 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %ps = strata.shape %past : tensor<?x4x?x16xf32> -> tensor<4xi64>
  %np = strata.gather %ps, %c2 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %total = strata.add %np, %sq : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %qr = strata.range %c0, %sq, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %qpos = strata.add %qr, %np : (tensor<?xi64>, tensor<i64>) -> tensor<?xi64>
  %kpos = strata.range %c0, %total, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %qn = strata.shape %qpos : tensor<?xi64> -> tensor<1xi64>
  %qshape = strata.concat %one, %one, %qn, %one {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %qcol = strata.reshape %qpos, %qshape {allow_zero} : (tensor<?xi64>, tensor<4xi64>) -> tensor<1x1x?x1xi64>
  %kn = strata.shape %kpos : tensor<?xi64> -> tensor<1xi64>
  %kshape = strata.concat %one, %one, %one, %kn {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %krow = strata.reshape %kpos, %kshape {allow_zero} : (tensor<?xi64>, tensor<4xi64>) -> tensor<1x1x1x?xi64>
  %causal = strata.less_equal %krow, %qcol : (tensor<1x1x1x?xi64>, tensor<1x1x?x1xi64>) -> tensor<1x1x?x?xi1>
  %c = strata.and %causal, %true : (tensor<1x1x?x?xi1>, tensor<i1>) -> tensor<1x1x?x?xi1>
  %both = strata.and %c, %pad : (tensor<1x1x?x?xi1>, tensor<?x1x1x?xi1>) -> tensor<?x1x?x?xi1>
  %mask = strata.where %both, %zero, %lowest : (tensor<?x1x?x?xi1>, tensor<f32>, tensor<f32>) -> tensor<?x1x?x?xf32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<?x4x?x16xf32> -> tensor<?x4x16x?xf32> loc("kt")
  %s = strata.matmul %q, %kt : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32> loc("qk")
  %d = strata.mul %s, %scale : (tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32> loc("scale")
  %a = strata.add %d, %mask : (tensor<?x4x?x?xf32>, tensor<?x1x?x?xf32>) -> tensor<?x4x?x?xf32> loc("mask")
  %p = strata.softmax %a {axis = -1 : i64} : tensor<?x4x?x?xf32> loc("softmax")
  %o = strata.matmul %p, %v : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32> loc("pv")
  return %o : tensor<?x4x?x16xf32>
}

// -----

// Prefill, written as q_idx >= kv_idx over one position range, with the
// bool mask in where(mask, scores, lowest): the padding stays an i1 mask.
// CHECK-LABEL: func.func @fuse_hf_causal_and_padding_bool_prefill
//  CHECK-SAME:   (%[[Q:[^:]+]]: tensor<1x4x?x16xf32> {{.*}}, %[[K:[^:]+]]: tensor<1x4x?x16xf32> {{.*}}, %[[V:[^:]+]]: tensor<1x4x?x16xf32>, %[[PAD:[^:]+]]: tensor<1x1x1x?xi1>)
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] mask %[[PAD]] {causal, scale = 1.000000e+00 : f32} :
//   CHECK-NOT:   strata.where
func.func @fuse_hf_causal_and_padding_bool_prefill(%q: tensor<1x4x?x16xf32> {strata.dims = ["", "", "sequence_length", ""]}, %k: tensor<1x4x?x16xf32> {strata.dims = ["", "", "sequence_length", ""]}, %v: tensor<1x4x?x16xf32>, %pad: tensor<1x1x1x?xi1>) -> tensor<1x4x?x16xf32> {
  %c0 = strata.constant dense<0> : tensor<i64>
  %c1 = strata.constant dense<1> : tensor<i64>
  %c2 = strata.constant dense<2> : tensor<i64>
  %shape_q = strata.constant dense<[1, 1, -1, 1]> : tensor<4xi64>
  %shape_k = strata.constant dense<[1, 1, 1, -1]> : tensor<4xi64>
  %lowest = strata.constant dense<-3.40282347E+38> : tensor<f32>
  %ks = strata.shape %k : tensor<1x4x?x16xf32> -> tensor<4xi64>
  %n = strata.gather %ks, %c2 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %pos = strata.range %c0, %n, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %qcol = strata.reshape %pos, %shape_q : (tensor<?xi64>, tensor<4xi64>) -> tensor<1x1x?x1xi64>
  %krow = strata.reshape %pos, %shape_k : (tensor<?xi64>, tensor<4xi64>) -> tensor<1x1x1x?xi64>
  %causal = strata.greater_equal %qcol, %krow : (tensor<1x1x?x1xi64>, tensor<1x1x1x?xi64>) -> tensor<1x1x?x?xi1>
  %both = strata.and %pad, %causal : (tensor<1x1x1x?xi1>, tensor<1x1x?x?xi1>) -> tensor<1x1x?x?xi1>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x4x?x16xf32> -> tensor<1x4x16x?xf32>
  %s = strata.matmul %q, %kt : (tensor<1x4x?x16xf32>, tensor<1x4x16x?xf32>) -> tensor<1x4x?x?xf32>
  %w = strata.where %both, %s, %lowest : (tensor<1x1x?x?xi1>, tensor<1x4x?x?xf32>, tensor<f32>) -> tensor<1x4x?x?xf32>
  %p = strata.softmax %w {axis = -1 : i64} : tensor<1x4x?x?xf32>
  %o = strata.matmul %p, %v : (tensor<1x4x?x?xf32>, tensor<1x4x?x16xf32>) -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// -----

// Key positions one ahead of the query positions: query i sees key i + 1,
// which is not the causal mask. The whole mask stays an additive mask.
// CHECK-LABEL: func.func @negative_hf_mask_shifted_diagonal
//       CHECK:   strata.attention
//   CHECK-NOT:   causal
//  CHECK-SAME:   -> tensor<1x4x?x16xf32>
func.func @negative_hf_mask_shifted_diagonal(%q: tensor<1x4x?x16xf32>, %k: tensor<1x4x?x16xf32>, %v: tensor<1x4x?x16xf32>, %pad: tensor<1x1x1x?xi1>) -> tensor<1x4x?x16xf32> {
  %c0 = strata.constant dense<0> : tensor<i64>
  %c1 = strata.constant dense<1> : tensor<i64>
  %c2 = strata.constant dense<2> : tensor<i64>
  %shape_q = strata.constant dense<[1, 1, -1, 1]> : tensor<4xi64>
  %shape_k = strata.constant dense<[1, 1, 1, -1]> : tensor<4xi64>
  %zero = strata.constant dense<0.000000e+00> : tensor<f32>
  %lowest = strata.constant dense<-3.40282347E+38> : tensor<f32>
  %ks = strata.shape %k : tensor<1x4x?x16xf32> -> tensor<4xi64>
  %n = strata.gather %ks, %c2 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %pos = strata.range %c0, %n, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %ahead = strata.add %pos, %c1 : (tensor<?xi64>, tensor<i64>) -> tensor<?xi64>
  %qcol = strata.reshape %ahead, %shape_q : (tensor<?xi64>, tensor<4xi64>) -> tensor<1x1x?x1xi64>
  %krow = strata.reshape %pos, %shape_k : (tensor<?xi64>, tensor<4xi64>) -> tensor<1x1x1x?xi64>
  %causal = strata.less_equal %krow, %qcol : (tensor<1x1x1x?xi64>, tensor<1x1x?x1xi64>) -> tensor<1x1x?x?xi1>
  %both = strata.and %causal, %pad : (tensor<1x1x?x?xi1>, tensor<1x1x1x?xi1>) -> tensor<1x1x?x?xi1>
  %mask = strata.where %both, %zero, %lowest : (tensor<1x1x?x?xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x?x?xf32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x4x?x16xf32> -> tensor<1x4x16x?xf32>
  %s = strata.matmul %q, %kt : (tensor<1x4x?x16xf32>, tensor<1x4x16x?xf32>) -> tensor<1x4x?x?xf32>
  %a = strata.add %s, %mask : (tensor<1x4x?x?xf32>, tensor<1x1x?x?xf32>) -> tensor<1x4x?x?xf32>
  %p = strata.softmax %a {axis = -1 : i64} : tensor<1x4x?x?xf32>
  %o = strata.matmul %p, %v : (tensor<1x4x?x?xf32>, tensor<1x4x?x16xf32>) -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// -----

// Query positions compared the other way (kv_idx >= q_idx) keep the keys
// after each query: an anti-causal mask, left as it is.
// CHECK-LABEL: func.func @negative_hf_mask_anti_causal
//       CHECK:   strata.attention
//   CHECK-NOT:   causal
//  CHECK-SAME:   -> tensor<1x4x?x16xf32>
func.func @negative_hf_mask_anti_causal(%q: tensor<1x4x?x16xf32>, %k: tensor<1x4x?x16xf32>, %v: tensor<1x4x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %c0 = strata.constant dense<0> : tensor<i64>
  %c1 = strata.constant dense<1> : tensor<i64>
  %c2 = strata.constant dense<2> : tensor<i64>
  %shape_q = strata.constant dense<[1, 1, -1, 1]> : tensor<4xi64>
  %shape_k = strata.constant dense<[1, 1, 1, -1]> : tensor<4xi64>
  %zero = strata.constant dense<0.000000e+00> : tensor<f32>
  %lowest = strata.constant dense<-3.40282347E+38> : tensor<f32>
  %ks = strata.shape %k : tensor<1x4x?x16xf32> -> tensor<4xi64>
  %n = strata.gather %ks, %c2 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %pos = strata.range %c0, %n, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %qcol = strata.reshape %pos, %shape_q : (tensor<?xi64>, tensor<4xi64>) -> tensor<1x1x?x1xi64>
  %krow = strata.reshape %pos, %shape_k : (tensor<?xi64>, tensor<4xi64>) -> tensor<1x1x1x?xi64>
  %after = strata.greater_equal %krow, %qcol : (tensor<1x1x1x?xi64>, tensor<1x1x?x1xi64>) -> tensor<1x1x?x?xi1>
  %mask = strata.where %after, %zero, %lowest : (tensor<1x1x?x?xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x?x?xf32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x4x?x16xf32> -> tensor<1x4x16x?xf32>
  %s = strata.matmul %q, %kt : (tensor<1x4x?x16xf32>, tensor<1x4x16x?xf32>) -> tensor<1x4x?x?xf32>
  %a = strata.add %s, %mask : (tensor<1x4x?x?xf32>, tensor<1x1x?x?xf32>) -> tensor<1x4x?x?xf32>
  %p = strata.softmax %a {axis = -1 : i64} : tensor<1x4x?x?xf32>
  %o = strata.matmul %p, %v : (tensor<1x4x?x?xf32>, tensor<1x4x?x16xf32>) -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}

// -----

// Older releases (_make_causal_mask): full(lowest) zeroed where
// kv_idx < q_idx + 1, the past's columns prepended as zeros, and the
// padding mask added to it: hidden keys score the fill plus the padding.
// CHECK-LABEL: func.func @fuse_hf_legacy_causal_plus_padding
//  CHECK-SAME:   (%[[Q:[^:]+]]: tensor<1x4x?x16xf32>{{.*}}, %[[PAST:[^:]+]]: tensor<1x4x?x16xf32>{{.*}}, %[[NEW:[^:]+]]: tensor<1x4x?x16xf32>{{.*}}, %[[V:[^:]+]]: tensor<1x4x?x16xf32>, %[[PAD:[^:]+]]: tensor<1x1x1x?xf32>)
//       CHECK:   %[[K:.+]] = strata.concat %[[PAST]], %[[NEW]]
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] mask %[[PAD]] {causal, mask_hidden, scale = 1.000000e+00 : f32} :
func.func @fuse_hf_legacy_causal_plus_padding(
    %q: tensor<1x4x?x16xf32> {strata.dims = ["", "", "sequence_length", ""]},
    %past: tensor<1x4x?x16xf32> {strata.dims = ["", "", "past_sequence_length", ""]},
    %new: tensor<1x4x?x16xf32> {strata.dims = ["", "", "sequence_length", ""]},
    %v: tensor<1x4x?x16xf32>, %pad: tensor<1x1x1x?xf32>) -> tensor<1x4x?x16xf32> {
  %c0 = strata.constant dense<0> : tensor<i64>
  %c1 = strata.constant dense<1> : tensor<i64>
  %c2 = strata.constant dense<2> : tensor<i64>
  %one = strata.constant dense<1> : tensor<1xi64>
  %zero = strata.constant dense<0.000000e+00> : tensor<f32>
  %k = strata.concat %past, %new {axis = 2 : i64} : (tensor<1x4x?x16xf32>, tensor<1x4x?x16xf32>) -> tensor<1x4x?x16xf32>
  %qs = strata.shape %q : tensor<1x4x?x16xf32> -> tensor<4xi64>
  %sq = strata.gather %qs, %c2 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %sq1 = strata.reshape %sq : (tensor<i64>) -> tensor<1xi64>
  %ps = strata.shape %past : tensor<1x4x?x16xf32> -> tensor<4xi64>
  %np = strata.gather %ps, %c2 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %np1 = strata.reshape %np : (tensor<i64>) -> tensor<1xi64>
  %square = strata.concat %sq1, %sq1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %full = strata.constant_of_shape %square {value = -3.40282347E+38 : f32} : (tensor<2xi64>) -> tensor<?x?xf32>
  %r = strata.range %c0, %sq, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %r1 = strata.add %r, %c1 : (tensor<?xi64>, tensor<i64>) -> tensor<?xi64>
  %colshape = strata.concat %sq1, %one {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %col = strata.reshape %r1, %colshape : (tensor<?xi64>, tensor<2xi64>) -> tensor<?x1xi64>
  %cond = strata.less %r, %col : (tensor<?xi64>, tensor<?x1xi64>) -> tensor<?x?xi1>
  %tri = strata.where %cond, %zero, %full : (tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %zshape = strata.concat %sq1, %np1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %zeros = strata.constant_of_shape %zshape {value = 0.000000e+00 : f32} : (tensor<2xi64>) -> tensor<?x?xf32>
  %withpast = strata.concat %zeros, %tri {axis = 1 : i64} : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %total = strata.add %np1, %sq1 : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %m4shape = strata.concat %one, %one, %sq1, %total {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %m4 = strata.reshape %withpast, %m4shape {allow_zero} : (tensor<?x?xf32>, tensor<4xi64>) -> tensor<1x1x?x?xf32>
  %mask = strata.add %pad, %m4 : (tensor<1x1x1x?xf32>, tensor<1x1x?x?xf32>) -> tensor<1x1x?x?xf32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x4x?x16xf32> -> tensor<1x4x16x?xf32>
  %s = strata.matmul %q, %kt : (tensor<1x4x?x16xf32>, tensor<1x4x16x?xf32>) -> tensor<1x4x?x?xf32>
  %a = strata.add %s, %mask : (tensor<1x4x?x?xf32>, tensor<1x1x?x?xf32>) -> tensor<1x4x?x?xf32>
  %p = strata.softmax %a {axis = -1 : i64} : tensor<1x4x?x?xf32>
  %o = strata.matmul %p, %v : (tensor<1x4x?x?xf32>, tensor<1x4x?x16xf32>) -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}
