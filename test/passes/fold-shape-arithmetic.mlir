// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fold-shape-arithmetic))' | FileCheck %s
// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fold-shape-arithmetic,canonicalize))' \
// RUN:   | FileCheck %s --check-prefix=CANON

// The head split of a transformers Llama export: view(B, S, -1, head_dim)
// with B and S read from the input's shape. The -1 is 64 / 16 because B and
// S of the target are B and S of the input; the transpose and the rotary
// multiply then know the head count too.
// CHECK-LABEL: func.func @infer_heads_from_reshape
//  CHECK-SAME:   (%[[X:.+]]: tensor<?x?x64xf32>
//       CHECK:   %[[R:.+]] = strata.reshape %[[X]], %{{.+}} : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
//       CHECK:   %[[T:.+]] = strata.transpose %[[R]], [0, 2, 1, 3] : tensor<?x?x4x16xf32> -> tensor<?x4x?x16xf32>
//       CHECK:   strata.mul %[[T]], %{{.+}} : (tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32>) -> tensor<?x4x?x16xf32>
func.func @infer_heads_from_reshape(%x: tensor<?x?x64xf32>, %cos: tensor<?x1x?x16xf32>) -> tensor<?x?x?x16xf32> {
  %c0 = strata.constant dense<0> : tensor<i64>
  %c1 = strata.constant dense<1> : tensor<i64>
  %m1 = strata.constant dense<-1> : tensor<1xi64>
  %c16 = strata.constant dense<16> : tensor<1xi64>
  %s = strata.shape %x : tensor<?x?x64xf32> -> tensor<3xi64>
  %b = strata.gather %s, %c0 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %n = strata.gather %s, %c1 : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %b1 = strata.reshape %b : (tensor<i64>) -> tensor<1xi64>
  %n1 = strata.reshape %n : (tensor<i64>) -> tensor<1xi64>
  %shape = strata.concat %b1, %n1, %m1, %c16 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %r = strata.reshape %x, %shape : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x?x16xf32>
  %t = strata.transpose %r, [0, 2, 1, 3] : tensor<?x?x?x16xf32> -> tensor<?x?x?x16xf32>
  %y = strata.mul %t, %cos : (tensor<?x?x?x16xf32>, tensor<?x1x?x16xf32>) -> tensor<?x?x?x16xf32>
  return %y : tensor<?x?x?x16xf32>
}

// -----

// The refined value is returned: the function keeps its signature through
// a tensor.cast.
// CHECK-LABEL: func.func @return_keeps_signature
//       CHECK:   %[[R:.+]] = strata.reshape {{.*}} -> tensor<?x2x16xf32>
//       CHECK:   %[[C:.+]] = tensor.cast %[[R]] : tensor<?x2x16xf32> to tensor<?x?x16xf32>
//       CHECK:   return %[[C]]
func.func @return_keeps_signature(%x: tensor<?x32xf32>) -> tensor<?x?x16xf32> {
  %c0 = strata.constant dense<0> : tensor<1xi64>
  %c16 = strata.constant dense<16> : tensor<1xi64>
  %m1 = strata.constant dense<-1> : tensor<1xi64>
  %shape = strata.concat %c0, %m1, %c16 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %r = strata.reshape %x, %shape : (tensor<?x32xf32>, tensor<3xi64>) -> tensor<?x?x16xf32>
  return %r : tensor<?x?x16xf32>
}

// -----

// Extents of arguments with the same ONNX dim name are one extent: the
// sequence length read from position_ids cancels the one of the hidden
// states.
// CHECK-LABEL: func.func @same_dim_name_is_one_extent
//       CHECK:   strata.reshape {{.*}} -> tensor<2x?x4x8xf32>
func.func @same_dim_name_is_one_extent(%h: tensor<2x?x32xf32> {strata.dims = ["", "sequence_length", ""]}, %pos: tensor<2x?xi64> {strata.dims = ["", "sequence_length"]}) -> tensor<2x?x?x8xf32> {
  %c1 = strata.constant dense<1> : tensor<i64>
  %c2 = strata.constant dense<2> : tensor<1xi64>
  %m1 = strata.constant dense<-1> : tensor<1xi64>
  %c8 = strata.constant dense<8> : tensor<1xi64>
  %s = strata.shape %pos : tensor<2x?xi64> -> tensor<2xi64>
  %n = strata.gather %s, %c1 : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %n1 = strata.reshape %n : (tensor<i64>) -> tensor<1xi64>
  %shape = strata.concat %c2, %n1, %m1, %c8 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %r = strata.reshape %h, %shape : (tensor<2x?x32xf32>, tensor<4xi64>) -> tensor<2x?x?x8xf32>
  return %r : tensor<2x?x?x8xf32>
}

// -----

// HF's repeat_kv: expand(reshape(kv, [B, Hkv, 1, S, D]), [B, Hkv, n, S, D])
// with torch's expand(-1) spelled where(shape == -1, 1, shape), then
// reshape to [B, Hkv * n, S, D]; Hkv and D come from the static dims of kv.
// CHECK-LABEL: func.func @repeat_kv_heads
//       CHECK:   strata.reshape {{.*}} -> tensor<?x2x1x?x16xf32>
//       CHECK:   strata.expand {{.*}} -> tensor<?x2x3x?x16xf32>
//       CHECK:   strata.reshape {{.*}} -> tensor<?x6x?x16xf32>
func.func @repeat_kv_heads(%kv: tensor<?x2x?x16xf32>) -> tensor<?x?x?x?xf32> {
  %c0 = strata.constant dense<0> : tensor<i64>
  %c1 = strata.constant dense<1> : tensor<i64>
  %c2 = strata.constant dense<2> : tensor<i64>
  %c3 = strata.constant dense<3> : tensor<i64>
  %one = strata.constant dense<1> : tensor<1xi64>
  %three = strata.constant dense<3> : tensor<1xi64>
  %minus = strata.constant dense<-1> : tensor<5xi64>
  %ones = strata.constant dense<1> : tensor<5xi64>
  %s = strata.shape %kv : tensor<?x2x?x16xf32> -> tensor<4xi64>
  %b = strata.gather %s, %c0 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %h = strata.gather %s, %c1 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %n = strata.gather %s, %c2 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %d = strata.gather %s, %c3 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %b1 = strata.reshape %b : (tensor<i64>) -> tensor<1xi64>
  %h1 = strata.reshape %h : (tensor<i64>) -> tensor<1xi64>
  %n1 = strata.reshape %n : (tensor<i64>) -> tensor<1xi64>
  %d1 = strata.reshape %d : (tensor<i64>) -> tensor<1xi64>
  %us = strata.concat %b1, %h1, %one, %n1, %d1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5xi64>
  %u = strata.reshape %kv, %us {allow_zero} : (tensor<?x2x?x16xf32>, tensor<5xi64>) -> tensor<?x?x1x?x?xf32>
  %es = strata.concat %b1, %h1, %three, %n1, %d1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<5xi64>
  %isneg = strata.equal %es, %minus : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi1>
  %fixed = strata.where %isneg, %ones, %es : (tensor<5xi1>, tensor<5xi64>, tensor<5xi64>) -> tensor<5xi64>
  %e = strata.expand %u, %fixed : (tensor<?x?x1x?x?xf32>, tensor<5xi64>) -> tensor<?x?x?x?x?xf32>
  %hn = strata.mul %h, %c3 : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %hn1 = strata.reshape %hn : (tensor<i64>) -> tensor<1xi64>
  %ms = strata.concat %b1, %hn1, %n1, %d1 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %m = strata.reshape %e, %ms : (tensor<?x?x?x?x?xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  return %m : tensor<?x?x?x?xf32>
}

// -----

// Rotary's rotate_half: x[..., : d / 2] with d read from the shape; the
// slice end folds to the constant 8 and the slice gets a static extent.
// CHECK-LABEL: func.func @slice_half_head_dim
//   CHECK-DAG:   %[[EIGHT:.+]] = strata.constant dense<8> : tensor<1xi64>
//       CHECK:   strata.slice %{{.+}}, %{{.+}}, %[[EIGHT]], %{{.+}} {axes = array<i64: 3>} : {{.*}} -> tensor<?x4x?x8xf32>
// CANON-LABEL: func.func @slice_half_head_dim
//   CANON-NOT:   strata.shape
//   CANON-NOT:   strata.div
func.func @slice_half_head_dim(%x: tensor<?x4x?x16xf32>) -> tensor<?x4x?x?xf32> {
  %c3 = strata.constant dense<3> : tensor<i64>
  %c2 = strata.constant dense<2> : tensor<i64>
  %zero = strata.constant dense<0> : tensor<1xi64>
  %one = strata.constant dense<1> : tensor<1xi64>
  %s = strata.shape %x : tensor<?x4x?x16xf32> -> tensor<4xi64>
  %d = strata.gather %s, %c3 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %h = strata.div %d, %c2 : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %h1 = strata.reshape %h : (tensor<i64>) -> tensor<1xi64>
  %y = strata.slice %x, %zero, %h1, %one {axes = array<i64: 3>} : (tensor<?x4x?x16xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4x?x?xf32>
  return %y : tensor<?x4x?x?xf32>
}

// -----

// Reshape to [-1, 16] merges the batch and sequence dims: the -1 is B * S,
// which no shape tensor spells, so it stays dynamic.
// CHECK-LABEL: func.func @negative_merged_symbolic_dims
// CANON-LABEL: func.func @negative_merged_symbolic_dims
//       CHECK:   strata.reshape {{.*}} -> tensor<?x16xf32>
//   CHECK-NOT:   tensor.cast
func.func @negative_merged_symbolic_dims(%x: tensor<?x?x64xf32>) -> tensor<?x16xf32> {
  %shape = strata.constant dense<[-1, 16]> : tensor<2xi64>
  %r = strata.reshape %x, %shape : (tensor<?x?x64xf32>, tensor<2xi64>) -> tensor<?x16xf32>
  return %r : tensor<?x16xf32>
}

// -----

// A sequence length taken from another argument with another dim name is
// not known to match: the -1 stays dynamic.
// CHECK-LABEL: func.func @negative_other_dim_name
//       CHECK:   strata.reshape {{.*}} -> tensor<2x?x?x8xf32>
func.func @negative_other_dim_name(%h: tensor<2x?x32xf32> {strata.dims = ["", "sequence_length", ""]}, %mask: tensor<2x?xi64> {strata.dims = ["", "total_sequence_length"]}) -> tensor<2x?x?x8xf32> {
  %c1 = strata.constant dense<1> : tensor<i64>
  %c2 = strata.constant dense<2> : tensor<1xi64>
  %m1 = strata.constant dense<-1> : tensor<1xi64>
  %c8 = strata.constant dense<8> : tensor<1xi64>
  %s = strata.shape %mask : tensor<2x?xi64> -> tensor<2xi64>
  %n = strata.gather %s, %c1 : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %n1 = strata.reshape %n : (tensor<i64>) -> tensor<1xi64>
  %shape = strata.concat %c2, %n1, %m1, %c8 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %r = strata.reshape %h, %shape : (tensor<2x?x32xf32>, tensor<4xi64>) -> tensor<2x?x?x8xf32>
  return %r : tensor<2x?x?x8xf32>
}

// -----

// Broadcasts, concats and constant-of-shape take the static extents their
// operands give.
// CHECK-LABEL: func.func @refine_elementwise_concat_fill
//       CHECK:   strata.add {{.*}} -> tensor<?x4x8xf32>
//       CHECK:   strata.concat {{.*}} -> tensor<?x4x16xf32>
//       CHECK:   strata.constant_of_shape {{.*}} -> tensor<3x4xf32>
func.func @refine_elementwise_concat_fill(%a: tensor<?x4x8xf32>, %b: tensor<?x?x?xf32>) -> (tensor<?x?x?xf32>, tensor<?x?xf32>) {
  %s = strata.add %a, %b : (tensor<?x4x8xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %c = strata.concat %s, %s {axis = 2 : i64} : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %shape = strata.constant dense<[3, 4]> : tensor<2xi64>
  %f = strata.constant_of_shape %shape {value = 0.0 : f32} : (tensor<2xi64>) -> tensor<?x?xf32>
  return %c, %f : tensor<?x?x?xf32>, tensor<?x?xf32>
}

// -----

// torch.export's view(batch, -1) of the attention mask: the -1 is
// (batch * length) / batch over the mask's batch and the ids' batch, which
// share a dim name, so it is the mask's length (here: minus the ids'
// length, which shares that name too, folds to 0).
// CHECK-LABEL: func.func @product_over_its_factor
//       CHECK:   strata.div
//  CHECK-NEXT:   %[[Z:.+]] = strata.constant dense<0> : tensor<i64>
//  CHECK-NEXT:   strata.sub
//  CHECK-NEXT:   return %[[Z]]
func.func @product_over_its_factor(
    %ids: tensor<?x?xi64> {strata.dims = ["batch", "seq"]},
    %mask: tensor<?x?xi64> {strata.dims = ["batch", "seq"]}) -> tensor<i64> {
  %c0 = strata.constant dense<0> : tensor<i64>
  %c1 = strata.constant dense<1> : tensor<i64>
  %ms = strata.shape %mask : tensor<?x?xi64> -> tensor<2xi64>
  %is = strata.shape %ids : tensor<?x?xi64> -> tensor<2xi64>
  %mb = strata.gather %ms, %c0 : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %ml = strata.gather %ms, %c1 : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %ib = strata.gather %is, %c0 : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %il = strata.gather %is, %c1 : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %all = strata.mul %mb, %ml : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %n = strata.div %all, %ib : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %d = strata.sub %n, %il : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %d : tensor<i64>
}

// -----

// BERT as torch.export spells its embeddings: the position table cut to
// the ids' length S (extent min(S, 512) <= S) and read back through
// GatherElements, added to the token embeddings [B, S, 64]; a valid
// broadcast of S and min(S, 512) is S, so the head split's -1 is 4.
// CHECK-LABEL: func.func @table_cut_to_the_length
//       CHECK:   strata.reshape {{.*}} -> tensor<?x?x4x16xf32>
func.func @table_cut_to_the_length(
    %ids: tensor<?x?xi64> {strata.dims = ["batch", "seq"]}) -> tensor<?x?x?x16xf32> {
  %words = strata.constant dense<0.5> : tensor<256x64xf32>
  %positions = strata.constant dense<0.25> : tensor<512x64xf32>
  %buffer = strata.constant dense<0> : tensor<1x512xi64>
  %c0 = strata.constant dense<0> : tensor<1xi64>
  %c1 = strata.constant dense<1> : tensor<1xi64>
  %m1 = strata.constant dense<-1> : tensor<1xi64>
  %c16 = strata.constant dense<16> : tensor<1xi64>
  %b = strata.shape %ids {end = 1 : i64} : tensor<?x?xi64> -> tensor<1xi64>
  %s = strata.shape %ids {start = 1 : i64, end = 2 : i64} : tensor<?x?xi64> -> tensor<1xi64>
  %cut = strata.slice %buffer, %c0, %s, %c1 {axes = array<i64: 1>} : (tensor<1x512xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x?xi64>
  %read = strata.gather_elements %buffer, %cut {axis = 1 : i64} : (tensor<1x512xi64>, tensor<1x?xi64>) -> tensor<1x?xi64>
  %x = strata.gather %words, %ids : (tensor<256x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
  %p = strata.gather %positions, %read : (tensor<512x64xf32>, tensor<1x?xi64>) -> tensor<1x?x64xf32>
  %h = strata.add %x, %p : (tensor<?x?x64xf32>, tensor<1x?x64xf32>) -> tensor<?x?x64xf32>
  %view = strata.concat %b, %s, %m1, %c16 {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %r = strata.reshape %h, %view : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x?x16xf32>
  return %r : tensor<?x?x?x16xf32>
}
