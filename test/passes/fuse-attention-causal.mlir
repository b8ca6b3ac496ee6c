// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-attention))' | FileCheck %s
// RUN: strata-opt %s --split-input-file --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-attention))' \
// RUN:   | FileCheck %s --check-prefix=LOC
// RUN: strata-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-attention{report-missed=true}))' \
// RUN:   -o /dev/null

// Causal masks recognized as the `causal` attribute (query i sees key
// j <= i + Sk - Sq), next to an additive padding mask.

// HF GPT-2 (with past): the lower-triangular bias buffer sliced to rows
// [Sk - Sq, Sk) and columns [0, Sk), with Sq and Sk read from the shapes of
// Q and K in the graph, in Where(C, scores, lowest), then + padding.
// CHECK-LABEL: func.func @fuse_causal_bias_slice_with_padding
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x2x?x8xf32>, %[[K:.+]]: tensor<1x2x?x8xf32>, %[[V:.+]]: tensor<1x2x?x8xf32>, %[[PAD:.+]]: tensor<1x1x1x?xf32>)
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] mask %[[PAD]] {causal, mask_hidden} :
//   CHECK-NOT:   strata.where
// LOC-LABEL: func.func @fuse_causal_bias_slice_with_padding
//       LOC:   strata.attention {{.*}} loc(fused["kt", "qk", "div", "where", "pad", "softmax", "pv"])
func.func @fuse_causal_bias_slice_with_padding(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>, %pad: tensor<1x1x1x?xf32>) -> tensor<1x2x?x8xf32> {
  %bias = strata.constant dense<[[[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]]]> : tensor<1x1x4x4xi1>
  %m2 = strata.constant dense<-2> : tensor<1xi64>
  %m1 = strata.constant dense<-1> : tensor<1xi64>
  %zero = strata.constant dense<0> : tensor<1xi64>
  %one = strata.constant dense<1> : tensor<1xi64>
  %lowest = strata.constant dense<-3.40282347E+38> : tensor<f32>
  %c = strata.constant dense<2.82842712> : tensor<f32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x?x8xf32> -> tensor<1x2x8x?xf32> loc("kt")
  %s = strata.matmul %q, %kt : (tensor<1x2x?x8xf32>, tensor<1x2x8x?xf32>) -> tensor<1x2x?x?xf32> loc("qk")
  %d = strata.div %s, %c : (tensor<1x2x?x?xf32>, tensor<f32>) -> tensor<1x2x?x?xf32> loc("div")
  %qs = strata.shape %q : tensor<1x2x?x8xf32> -> tensor<4xi64>
  %sq = strata.slice %qs, %m2, %m1, %one {axes = array<i64: 0>} : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %ks = strata.shape %k : tensor<1x2x?x8xf32> -> tensor<4xi64>
  %sk = strata.slice %ks, %m2, %m1, %one {axes = array<i64: 0>} : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %first = strata.sub %sk, %sq : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %rows = strata.slice %bias, %first, %sk, %one {axes = array<i64: 2>} : (tensor<1x1x4x4xi1>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x1x?x4xi1>
  %cm = strata.slice %rows, %zero, %sk, %one {axes = array<i64: 3>} : (tensor<1x1x?x4xi1>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x1x?x?xi1>
  %w = strata.where %cm, %d, %lowest : (tensor<1x1x?x?xi1>, tensor<1x2x?x?xf32>, tensor<f32>) -> tensor<1x2x?x?xf32> loc("where")
  %a = strata.add %w, %pad : (tensor<1x2x?x?xf32>, tensor<1x1x1x?xf32>) -> tensor<1x2x?x?xf32> loc("pad")
  %p = strata.softmax %a {axis = -1 : i64} : tensor<1x2x?x?xf32> loc("softmax")
  %o = strata.matmul %p, %v : (tensor<1x2x?x?xf32>, tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> loc("pv")
  return %o : tensor<1x2x?x8xf32>
}

// -----

// masked_fill(bias == 0, lowest): Where(Equal(Cast(C), 0), lowest, scores)
// marks the hidden keys instead of the visible ones.
// CHECK-LABEL: func.func @fuse_causal_masked_fill
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>)
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] {causal, scale = 1.000000e+00 : f32} :
func.func @fuse_causal_masked_fill(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %bias = strata.constant dense<[[[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]]]> : tensor<1x1x4x4xi1>
  %zero = strata.constant dense<0> : tensor<i64>
  %ninf = strata.constant dense<0xFF800000> : tensor<f32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %ci = strata.cast %bias : tensor<1x1x4x4xi1> -> tensor<1x1x4x4xi64>
  %hidden = strata.equal %ci, %zero : (tensor<1x1x4x4xi64>, tensor<i64>) -> tensor<1x1x4x4xi1>
  %w = strata.where %hidden, %ninf, %s : (tensor<1x1x4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = strata.softmax %w {axis = -1 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// torch.triu(full((Sq, Sk), -inf), diagonal=1) added to the scores, then
// padding. The mask is aligned to the top left, which is the causal mask
// because Q and K are split from one tensor, so Sq == Sk.
// CHECK-LABEL: func.func @fuse_causal_triu_add_same_length
//  CHECK-SAME:   (%[[X:.+]]: tensor<1x?x2x16xf32>, %[[V:.+]]: tensor<1x2x?x8xf32>, %[[PAD:.+]]: tensor<1x1x1x?xf32>)
//       CHECK:   %[[QK:.+]]:2 = strata.split %[[X]]
//       CHECK:   %[[Q:.+]] = strata.transpose %[[QK]]#0, [0, 2, 1, 3]
//       CHECK:   %[[K:.+]] = strata.transpose %[[QK]]#1, [0, 2, 1, 3]
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] mask %[[PAD]] {causal, scale = 1.000000e+00 : f32} :
func.func @fuse_causal_triu_add_same_length(%x: tensor<1x?x2x16xf32>, %v: tensor<1x2x?x8xf32>, %pad: tensor<1x1x1x?xf32>) -> tensor<1x2x?x8xf32> {
  %m2 = strata.constant dense<-2> : tensor<1xi64>
  %m1 = strata.constant dense<-1> : tensor<1xi64>
  %one = strata.constant dense<1> : tensor<1xi64>
  %end = strata.constant dense<9223372036854775807> : tensor<1xi64>
  %diag = strata.constant dense<1> : tensor<i64>
  %qk:2 = strata.split %x {axis = 3 : i64, sizes = array<i64: 8, 8>} : tensor<1x?x2x16xf32> -> tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>
  %q = strata.transpose %qk#0, [0, 2, 1, 3] : tensor<1x?x2x8xf32> -> tensor<1x2x?x8xf32>
  %kt = strata.transpose %qk#1, [0, 2, 3, 1] : tensor<1x?x2x8xf32> -> tensor<1x2x8x?xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x?x8xf32>, tensor<1x2x8x?xf32>) -> tensor<1x2x?x?xf32>
  %qs = strata.shape %q : tensor<1x2x?x8xf32> -> tensor<4xi64>
  %sq = strata.slice %qs, %m2, %m1, %one {axes = array<i64: 0>} : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %kts = strata.shape %kt : tensor<1x2x8x?xf32> -> tensor<4xi64>
  %sk = strata.slice %kts, %m1, %end, %one {axes = array<i64: 0>} : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %dims = strata.concat %sq, %sk {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %full = strata.constant_of_shape %dims {value = 0xFF800000 : f32} : (tensor<2xi64>) -> tensor<?x?xf32>
  %triu = strata.trilu %full, %diag : (tensor<?x?xf32>, tensor<i64>) -> tensor<?x?xf32>
  %a0 = strata.add %triu, %s : (tensor<?x?xf32>, tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  %a1 = strata.add %pad, %a0 : (tensor<1x1x1x?xf32>, tensor<1x2x?x?xf32>) -> tensor<1x2x?x?xf32>
  %p = strata.softmax %a1 {axis = -1 : i64} : tensor<1x2x?x?xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x?x?xf32>, tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}

// -----

// torch SDPA export: Where(Trilu(ones, upper=0, k), 0, -inf) added to the
// scores; with 2 queries over 4 keys, k = Sk - Sq = 2 is the causal mask.
// CHECK-LABEL: func.func @fuse_causal_sdpa_lower_trilu
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x2x2x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>)
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] {causal, scale = 1.000000e+00 : f32} :
func.func @fuse_causal_sdpa_lower_trilu(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x2x8xf32> {
  %ones = strata.constant dense<true> : tensor<2x4xi1>
  %diag = strata.constant dense<2> : tensor<i64>
  %zero = strata.constant dense<0.0> : tensor<f32>
  %ninf = strata.constant dense<0xFF800000> : tensor<f32>
  %tril = strata.trilu %ones, %diag {upper = false} : (tensor<2x4xi1>, tensor<i64>) -> tensor<2x4xi1>
  %mask = strata.where %tril, %zero, %ninf : (tensor<2x4xi1>, tensor<f32>, tensor<f32>) -> tensor<2x4xf32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x2x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x2x4xf32>
  %a = strata.add %s, %mask : (tensor<1x2x2x4xf32>, tensor<2x4xf32>) -> tensor<1x2x2x4xf32>
  %p = strata.softmax %a {axis = -1 : i64} : tensor<1x2x2x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x2x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x2x8xf32>
  return %o : tensor<1x2x2x8xf32>
}

// -----

// A top-left triangle with 2 queries over 4 keys (query i sees j <= i) is
// not the end-aligned causal mask: it stays a mask, summed with the padding
// mask into the op's one mask operand.
// CHECK-LABEL: func.func @fuse_top_left_triangle_is_not_causal
//  CHECK-SAME:   (%[[Q:.+]]: tensor<1x2x2x8xf32>, %[[K:.+]]: tensor<1x2x4x8xf32>, %[[V:.+]]: tensor<1x2x4x8xf32>, %[[PAD:.+]]: tensor<1x1x1x4xf32>)
//       CHECK:   %[[T:.+]] = strata.trilu
//       CHECK:   %[[M:.+]] = strata.add %[[PAD]], %[[T]] : (tensor<1x1x1x4xf32>, tensor<2x4xf32>) -> tensor<1x1x2x4xf32>
//       CHECK:   strata.attention %[[Q]], %[[K]], %[[V]] mask %[[M]] {scale = 1.000000e+00 : f32} :
//   CHECK-NOT:   causal
func.func @fuse_top_left_triangle_is_not_causal(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %pad: tensor<1x1x1x4xf32>) -> tensor<1x2x2x8xf32> {
  %full = strata.constant dense<0xFF800000> : tensor<2x4xf32>
  %diag = strata.constant dense<1> : tensor<i64>
  %triu = strata.trilu %full, %diag : (tensor<2x4xf32>, tensor<i64>) -> tensor<2x4xf32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x2x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x2x4xf32>
  %a0 = strata.add %s, %triu : (tensor<1x2x2x4xf32>, tensor<2x4xf32>) -> tensor<1x2x2x4xf32>
  %a1 = strata.add %a0, %pad : (tensor<1x2x2x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x2x4xf32>
  %p = strata.softmax %a1 {axis = -1 : i64} : tensor<1x2x2x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x2x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x2x8xf32>
  return %o : tensor<1x2x2x8xf32>
}

// -----

// Near miss: the bias rows are sliced from 0 instead of Sk - Sq, so with a
// past the mask is not causal; with padding too it cannot fuse.
// CHECK-LABEL: func.func @negative_causal_bias_slice_from_zero
//   CHECK-NOT:   strata.attention
func.func @negative_causal_bias_slice_from_zero(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>, %pad: tensor<1x1x1x?xf32>) -> tensor<1x2x?x8xf32> {
  %bias = strata.constant dense<[[[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]]]> : tensor<1x1x4x4xi1>
  %m2 = strata.constant dense<-2> : tensor<1xi64>
  %m1 = strata.constant dense<-1> : tensor<1xi64>
  %zero = strata.constant dense<0> : tensor<1xi64>
  %one = strata.constant dense<1> : tensor<1xi64>
  %lowest = strata.constant dense<-3.40282347E+38> : tensor<f32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x?x8xf32> -> tensor<1x2x8x?xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x?x8xf32>, tensor<1x2x8x?xf32>) -> tensor<1x2x?x?xf32>
  %qs = strata.shape %q : tensor<1x2x?x8xf32> -> tensor<4xi64>
  %sq = strata.slice %qs, %m2, %m1, %one {axes = array<i64: 0>} : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %ks = strata.shape %k : tensor<1x2x?x8xf32> -> tensor<4xi64>
  %sk = strata.slice %ks, %m2, %m1, %one {axes = array<i64: 0>} : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %rows = strata.slice %bias, %zero, %sq, %one {axes = array<i64: 2>} : (tensor<1x1x4x4xi1>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x1x?x4xi1>
  %cm = strata.slice %rows, %zero, %sk, %one {axes = array<i64: 3>} : (tensor<1x1x?x4xi1>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x1x?x?xi1>
  %w = strata.where %cm, %s, %lowest : (tensor<1x1x?x?xi1>, tensor<1x2x?x?xf32>, tensor<f32>) -> tensor<1x2x?x?xf32>
  %a = strata.add %w, %pad : (tensor<1x2x?x?xf32>, tensor<1x1x1x?xf32>) -> tensor<1x2x?x?xf32>
  // expected-remark @+1 {{softmax did not fuse into strata.attention: the scores have a 'where' mask that is not causal and another mask}}
  %p = strata.softmax %a {axis = -1 : i64} : tensor<1x2x?x?xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x?x?xf32>, tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}

// -----

// Near miss: a bias buffer with one element off the triangle.
// CHECK-LABEL: func.func @negative_causal_not_triangular
//   CHECK-NOT:   strata.attention
func.func @negative_causal_not_triangular(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %pad: tensor<1x1x1x4xf32>) -> tensor<1x2x4x8xf32> {
  %bias = strata.constant dense<[[[[true, false, false, false], [true, true, false, false], [true, false, true, false], [true, true, true, true]]]]> : tensor<1x1x4x4xi1>
  %lowest = strata.constant dense<-3.40282347E+38> : tensor<f32>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %w = strata.where %bias, %s, %lowest : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %a = strata.add %w, %pad : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32>
  // expected-remark @+1 {{softmax did not fuse into strata.attention: the scores have a 'where' mask that is not causal and another mask}}
  %p = strata.softmax %a {axis = -1 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A sliding window as transformers spells it (Mistral-style exports):
// causal and (q - k < 3) over position ranges, then a key block every
// query sees in front: window 3 with 1 sink. It becomes `causal`, `window`
// and `sinks`, the attributes the attention kernel and the ring caches use.
// CHECK-LABEL: func.func @fuse_sliding_window_mask
//       CHECK:   strata.attention %{{.+}}, %{{.+}}, %{{.+}} {causal, scale = {{.+}}, sinks = 1 : i64, window = 3 : i64} :
//   CHECK-NOT:   strata.where
func.func @fuse_sliding_window_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>) -> tensor<1x2x4x8xf32> {
  %c0 = strata.constant dense<0> : tensor<i64>
  %c1 = strata.constant dense<1> : tensor<i64>
  %c3 = strata.constant dense<3> : tensor<i64>
  %c4 = strata.constant dense<4> : tensor<i64>
  %block = strata.constant dense<true> : tensor<1x1x4x1xi1>
  %shape_q = strata.constant dense<[1, 1, 4, 1]> : tensor<4xi64>
  %shape_k = strata.constant dense<[1, 1, 1, 4]> : tensor<4xi64>
  %lowest = strata.constant dense<-3.40282347E+38> : tensor<f32>
  %pos = strata.range %c0, %c4, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  %qp = strata.reshape %pos, %shape_q : (tensor<4xi64>, tensor<4xi64>) -> tensor<1x1x4x1xi64>
  %kp = strata.reshape %pos, %shape_k : (tensor<4xi64>, tensor<4xi64>) -> tensor<1x1x1x4xi64>
  %causal = strata.less_equal %kp, %qp : (tensor<1x1x1x4xi64>, tensor<1x1x4x1xi64>) -> tensor<1x1x4x4xi1>
  %diff = strata.sub %qp, %kp : (tensor<1x1x4x1xi64>, tensor<1x1x1x4xi64>) -> tensor<1x1x4x4xi64>
  %near = strata.less %diff, %c3 : (tensor<1x1x4x4xi64>, tensor<i64>) -> tensor<1x1x4x4xi1>
  %window = strata.and %causal, %near : (tensor<1x1x4x4xi1>, tensor<1x1x4x4xi1>) -> tensor<1x1x4x4xi1>
  %m = strata.concat %block, %window {axis = 3 : i64} : (tensor<1x1x4x1xi1>, tensor<1x1x4x4xi1>) -> tensor<1x1x4x5xi1>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x5x8xf32> -> tensor<1x2x8x5xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x5xf32>) -> tensor<1x2x4x5xf32>
  %w = strata.where %m, %s, %lowest : (tensor<1x1x4x5xi1>, tensor<1x2x4x5xf32>, tensor<f32>) -> tensor<1x2x4x5xf32>
  %p = strata.softmax %w {axis = -1 : i64} : tensor<1x2x4x5xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x5xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The sliding window and a padding mask in one condition, as transformers
// builds them for a Mistral-style export with an attention mask:
// and(causal and (q - k < 3), padding). The window becomes `causal` and
// `window`, the padding stays the mask.
// CHECK-LABEL: func.func @fuse_sliding_window_and_padding
//       CHECK:   strata.attention %{{.+}}, %{{.+}}, %{{.+}} mask %{{.+}} {causal, scale = {{.+}}, window = 3 : i64} :
func.func @fuse_sliding_window_and_padding(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %pad: tensor<1x1x1x4xi1>) -> tensor<1x2x4x8xf32> {
  %c0 = strata.constant dense<0> : tensor<i64>
  %c1 = strata.constant dense<1> : tensor<i64>
  %c3 = strata.constant dense<3> : tensor<i64>
  %c4 = strata.constant dense<4> : tensor<i64>
  %shape_q = strata.constant dense<[1, 1, 4, 1]> : tensor<4xi64>
  %shape_k = strata.constant dense<[1, 1, 1, 4]> : tensor<4xi64>
  %lowest = strata.constant dense<-3.40282347E+38> : tensor<f32>
  %pos = strata.range %c0, %c4, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  %qp = strata.reshape %pos, %shape_q : (tensor<4xi64>, tensor<4xi64>) -> tensor<1x1x4x1xi64>
  %kp = strata.reshape %pos, %shape_k : (tensor<4xi64>, tensor<4xi64>) -> tensor<1x1x1x4xi64>
  %causal = strata.less_equal %kp, %qp : (tensor<1x1x1x4xi64>, tensor<1x1x4x1xi64>) -> tensor<1x1x4x4xi1>
  %diff = strata.sub %qp, %kp : (tensor<1x1x4x1xi64>, tensor<1x1x1x4xi64>) -> tensor<1x1x4x4xi64>
  %near = strata.less %diff, %c3 : (tensor<1x1x4x4xi64>, tensor<i64>) -> tensor<1x1x4x4xi1>
  %window = strata.and %causal, %near : (tensor<1x1x4x4xi1>, tensor<1x1x4x4xi1>) -> tensor<1x1x4x4xi1>
  %m = strata.and %window, %pad : (tensor<1x1x4x4xi1>, tensor<1x1x1x4xi1>) -> tensor<1x1x4x4xi1>
  %kt = strata.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = strata.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %w = strata.where %m, %s, %lowest : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = strata.softmax %w {axis = -1 : i64} : tensor<1x2x4x4xf32>
  %o = strata.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
