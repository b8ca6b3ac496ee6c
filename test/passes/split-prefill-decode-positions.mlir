// RUN: strata-opt %s --split-input-file --verify-diagnostics \
// RUN:   --strata-split-prefill-decode="slots=4 context=32" | FileCheck %s

// Positions counted from the attention mask (OPT's learned position table:
// cumsum(mask) * mask - 1 + 2): in the entries, whose rows have no
// padding, the count is the rows' own positions + 1.
// CHECK-LABEL: func.func @main(
//       CHECK:   strata.cumsum
// CHECK-LABEL: func.func @decode(
//  CHECK-SAME:     %[[POS:[^:]+]]: tensor<?xi64> {strata.dims = ["batch"], strata.name = "positions"}
//   CHECK-NOT:   strata.cumsum
//       CHECK:   %[[ROWS:.+]] = strata.reshape %[[POS]]{{.*}} -> tensor<?x1xi64>
//       CHECK:   %[[COUNT:.+]] = strata.add %[[ROWS]], %{{.+}} : (tensor<?x1xi64>, tensor<i64>) -> tensor<?x1xi64>
//       CHECK:   %[[AS:.+]] = tensor.cast %[[COUNT]] : tensor<?x1xi64> to tensor<?x?xi64>
//       CHECK:   %[[P:.+]] = strata.sub %[[AS]]
//       CHECK:   %[[P2:.+]] = strata.add %[[P]]
//       CHECK:   strata.gather %{{.+}}, %[[P2]] : (tensor<34x4xf32>, tensor<?x?xi64>)
//   CHECK-NOT:   strata.cumsum
func.func @main(%ids: tensor<?x?xi64> {strata.name = "input_ids"},
                %mask: tensor<?x?xi64> {strata.name = "attention_mask"})
    -> (tensor<?x?x8xf32> {strata.name = "logits"}) {
  %emb = strata.constant dense<0.5> : tensor<8x4xf32>
  %table = strata.constant dense<0.125> : tensor<34x4xf32>
  %head = strata.constant dense<0.25> : tensor<4x8xf32>
  %s4 = strata.constant dense<[0, 1, -1, 4]> : tensor<4xi64>
  %s3 = strata.constant dense<[0, -1, 4]> : tensor<3xi64>
  %one = strata.constant dense<1> : tensor<i64>
  %two = strata.constant dense<2> : tensor<i64>
  %x = strata.gather %emb, %ids : (tensor<8x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %count = strata.cumsum %mask {axis = 1 : i64} : tensor<?x?xi64>
  %kept = strata.mul %count, %mask : (tensor<?x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
  %p = strata.sub %kept, %one : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
  %p2 = strata.add %p, %two : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
  %pe = strata.gather %table, %p2 : (tensor<34x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %h0 = strata.add %x, %pe : (tensor<?x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  %q = strata.reshape %h0, %s4 : (tensor<?x?x4xf32>, tensor<4xi64>) -> tensor<?x1x?x4xf32>
  %o = strata.attention %q, %q, %q {causal} : (tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>) -> tensor<?x1x?x4xf32>
  %h = strata.reshape %o, %s3 : (tensor<?x1x?x4xf32>, tensor<3xi64>) -> tensor<?x?x4xf32>
  %logits = strata.matmul %h, %head : (tensor<?x?x4xf32>, tensor<4x8xf32>) -> tensor<?x?x8xf32>
  return %logits : tensor<?x?x8xf32>
}

// -----

// Rotary angles from a range over the token count shared by the batch (a
// transformers export without position_ids: cache_position viewed as
// [1, S, 1], then unsqueezed with the tracer's constant batch of 1): the
// view becomes the rows' positions [B, S, 1], the types after it take the
// batch, and the unsqueeze takes its batch from its input.
// CHECK-LABEL: func.func @decode(
//  CHECK-SAME:     %[[POS:[^:]+]]: tensor<?xi64> {strata.dims = ["batch"], strata.name = "positions"}
//   CHECK-NOT:   strata.range
//       CHECK:   %[[ROWS:.+]] = strata.reshape %[[POS]]{{.*}} -> tensor<?x1xi64>
//       CHECK:   %[[VIEW:.+]] = strata.reshape %[[ROWS]], %{{.+}} : (tensor<?x1xi64>, tensor<3xi64>) -> tensor<?x?x1xi64>
//       CHECK:   strata.cast %[[VIEW]] : tensor<?x?x1xi64> -> tensor<?x?x1xf32>
//       CHECK:   %[[COS:.+]] = strata.cos %{{.+}} : tensor<?x?x4xf32>
//       CHECK:   %[[BATCH:.+]] = strata.shape %[[COS]] {end = 1 : i64} : tensor<?x?x4xf32> -> tensor<1xi64>
//       CHECK:   %[[REST:.+]] = strata.slice
//       CHECK:   %[[TARGET:.+]] = strata.concat %[[BATCH]], %[[REST]]
//       CHECK:   strata.reshape %[[COS]], %[[TARGET]] {allow_zero} : (tensor<?x?x4xf32>, tensor<4xi64>) -> tensor<?x1x1x4xf32>
func.func @main(%ids: tensor<?x?xi64> {strata.name = "input_ids"})
    -> (tensor<?x?x8xf32> {strata.name = "logits"}) {
  %emb = strata.constant dense<0.5> : tensor<8x4xf32>
  %head = strata.constant dense<0.25> : tensor<4x8xf32>
  %freq = strata.constant dense<[1.0, 0.5, 0.25, 0.125]> : tensor<4xf32>
  %s4 = strata.constant dense<[0, 1, -1, 4]> : tensor<4xi64>
  %s3 = strata.constant dense<[0, -1, 4]> : tensor<3xi64>
  %seqView = strata.constant dense<[1, -1, 1]> : tensor<3xi64>
  %ones = strata.constant dense<[1, 1]> : tensor<2xi64>
  %four = strata.constant dense<[4]> : tensor<1xi64>
  %zero = strata.constant dense<0> : tensor<i64>
  %one = strata.constant dense<1> : tensor<i64>
  %at1 = strata.constant dense<[1]> : tensor<1xi64>
  %at2 = strata.constant dense<[2]> : tensor<1xi64>
  %x = strata.gather %emb, %ids : (tensor<8x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %xs = strata.shape %x : tensor<?x?x4xf32> -> tensor<3xi64>
  %n = strata.gather %xs, %one : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %r = strata.range %zero, %n, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %view = strata.reshape %r, %seqView : (tensor<?xi64>, tensor<3xi64>) -> tensor<1x?x1xi64>
  %f = strata.cast %view : tensor<1x?x1xi64> -> tensor<1x?x1xf32>
  %angles = strata.mul %f, %freq : (tensor<1x?x1xf32>, tensor<4xf32>) -> tensor<1x?x4xf32>
  %cos = strata.cos %angles : tensor<1x?x4xf32>
  %cs = strata.shape %cos : tensor<1x?x4xf32> -> tensor<3xi64>
  %mid = strata.slice %cs, %at1, %at2, %at1 {axes = array<i64: 0>} : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %us = strata.concat %ones, %mid, %four {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %u = strata.reshape %cos, %us {allow_zero} : (tensor<1x?x4xf32>, tensor<4xi64>) -> tensor<1x1x?x4xf32>
  %q = strata.reshape %x, %s4 : (tensor<?x?x4xf32>, tensor<4xi64>) -> tensor<?x1x?x4xf32>
  %qr = strata.mul %q, %u : (tensor<?x1x?x4xf32>, tensor<1x1x?x4xf32>) -> tensor<?x1x?x4xf32>
  %o = strata.attention %qr, %qr, %q {causal} : (tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>) -> tensor<?x1x?x4xf32>
  %h = strata.reshape %o, %s3 : (tensor<?x1x?x4xf32>, tensor<3xi64>) -> tensor<?x?x4xf32>
  %logits = strata.matmul %h, %head : (tensor<?x?x4xf32>, tensor<4x8xf32>) -> tensor<?x?x8xf32>
  return %logits : tensor<?x?x8xf32>
}

// -----

// A length read from the attention mask whose dims carry the ids' names
// (torch.export may measure the sequence on either): in the entries it is
// read from the ids, since the mask goes.
// CHECK-LABEL: func.func @decode(
//  CHECK-SAME:     %[[IDS:[^:]+]]: tensor<?x1xi64> {strata.dims = ["batch", ""], strata.name = "input_ids"}
//       CHECK:   %[[CAST:.+]] = tensor.cast %[[IDS]] : tensor<?x1xi64> to tensor<?x?xi64>
//       CHECK:   strata.shape %[[CAST]] {end = 2 : i64, start = 1 : i64}
func.func @main(%ids: tensor<?x?xi64> {strata.name = "input_ids", strata.dims = ["batch", "seq"]},
                %mask: tensor<?x?xi64> {strata.name = "attention_mask", strata.dims = ["batch", "seq"]})
    -> (tensor<?x?x8xf32> {strata.name = "logits"}) {
  %emb = strata.constant dense<0.5> : tensor<8x4xf32>
  %head = strata.constant dense<0.25> : tensor<4x8xf32>
  %m1 = strata.constant dense<-1> : tensor<1xi64>
  %one = strata.constant dense<1> : tensor<1xi64>
  %four = strata.constant dense<4> : tensor<1xi64>
  %s3 = strata.constant dense<[0, -1, 4]> : tensor<3xi64>
  %x = strata.gather %emb, %ids : (tensor<8x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %n = strata.shape %mask {start = 1 : i64, end = 2 : i64} : tensor<?x?xi64> -> tensor<1xi64>
  %view = strata.concat %m1, %one, %n, %four {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %q = strata.reshape %x, %view : (tensor<?x?x4xf32>, tensor<4xi64>) -> tensor<?x1x?x4xf32>
  %o = strata.attention %q, %q, %q {causal} : (tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>) -> tensor<?x1x?x4xf32>
  %h = strata.reshape %o, %s3 : (tensor<?x1x?x4xf32>, tensor<3xi64>) -> tensor<?x?x4xf32>
  %logits = strata.matmul %h, %head : (tensor<?x?x4xf32>, tensor<4x8xf32>) -> tensor<?x?x8xf32>
  return %logits : tensor<?x?x8xf32>
}
