// RUN: strata-opt %s --strata-split-prefill-decode="slots=4 context=32 verify-length=5" | FileCheck %s
// RUN: strata-opt %s --strata-split-prefill-decode="slots=4 context=32" | FileCheck %s --check-prefix=NONE

// A one-layer decoder with past whose position embedding is indexed by
// range(past_length, past_length + n) (GPT-2's spelling). The verify entry
// takes n tokens of each of several sequences at their own positions: row
// b's tokens sit at positions[b] + 0 .. n - 1, each row writes its n cache
// rows there and attends over its first positions[b] + n keys, and every
// position's logits come back.
// CHECK-LABEL: func.func @verify(
//  CHECK-SAME:     %[[IDS:.+]]: tensor<?x?xi64> {strata.dims = ["batch", "verify_length"], strata.name = "input_ids"}
//  CHECK-SAME:     %[[SLOTS:.+]]: tensor<?xi64> {strata.dims = ["batch"], strata.name = "slots"}
//  CHECK-SAME:     %[[POS:.+]]: tensor<?xi64> {strata.dims = ["batch"], strata.name = "positions"}
//  CHECK-SAME:     %[[KC:.+]]: tensor<4x1x32x4xf32> {strata.dims = ["slots", "", "context", ""], strata.state = "kv_cache.0.key"}
//  CHECK-SAME:   -> (tensor<?x?x8xf32> {strata.dims = ["batch", "verify_length", ""], strata.name = "logits"}, tensor<4x1x32x4xf32> {strata.state = "kv_cache.0.key"}, tensor<4x1x32x4xf32> {strata.state = "kv_cache.0.value"})
//  CHECK-SAME:   attributes {strata.entry_kind = "verify"}
//       CHECK:   %[[N1:.+]] = strata.shape %[[IDS]] {end = 2 : i64, start = 1 : i64}
//       CHECK:   %[[N:.+]] = strata.reshape %[[N1]]
//       CHECK:   %[[OFFSETS:.+]] = strata.range %{{.+}}, %[[N]], %{{.+}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
//       CHECK:   %[[ROWS:.+]] = strata.reshape %[[OFFSETS]]
//       CHECK:   %[[STARTS:.+]] = strata.reshape %[[POS]]
//       CHECK:   %[[TOKPOS:.+]] = strata.add %[[STARTS]], %[[ROWS]] : (tensor<?x1xi64>, tensor<1x?xi64>) -> tensor<?x?xi64>
//       CHECK:   %[[LEN:.+]] = strata.add %[[POS]], %[[N1]] : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
// The position table is gathered by each token's own position.
//       CHECK:   strata.gather %{{.+}}, %[[TOKPOS]] : (tensor<32x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
//       CHECK:   %[[K:.+]] = strata.cache_write %[[KC]], %{{.+}}, %[[SLOTS]], %[[POS]]
//       CHECK:   %[[V:.+]] = strata.cache_write %{{.+}}, %{{.+}}, %[[SLOTS]], %[[POS]]
//       CHECK:   strata.cache_attention %{{.+}}, %[[K]], %[[V]], %[[SLOTS]], %[[LEN]]
//   CHECK-NOT:   strata.slice
//       CHECK:   %[[LOGITS:.+]] = strata.matmul {{.+}} -> tensor<?x?x8xf32>
//       CHECK:   return %[[LOGITS]], %[[K]], %[[V]]

// Without verify-length, prefill and decode only.
// NONE: func.func @prefill(
// NONE: func.func @decode(
// NONE-NOT: func.func @verify(
func.func @main(%ids: tensor<?x?xi64> {strata.name = "input_ids", strata.dims = ["batch", "sequence"]},
                %pk: tensor<?x1x?x4xf32> {strata.name = "past_key_values.0.key", strata.dims = ["batch", "", "past_sequence", ""]},
                %pv: tensor<?x1x?x4xf32> {strata.name = "past_key_values.0.value", strata.dims = ["batch", "", "past_sequence", ""]})
    -> (tensor<?x?x8xf32> {strata.name = "logits"}, tensor<?x1x?x4xf32> {strata.name = "present.0.key"},
        tensor<?x1x?x4xf32> {strata.name = "present.0.value"}) {
  %emb = strata.constant dense<0.5> : tensor<8x4xf32>
  %wpe = strata.constant dense<0.125> : tensor<32x4xf32>
  %head = strata.constant dense<0.25> : tensor<4x8xf32>
  %s4 = strata.constant dense<[0, 1, -1, 4]> : tensor<4xi64>
  %s3 = strata.constant dense<[0, -1, 4]> : tensor<3xi64>
  %c1 = strata.constant dense<1> : tensor<i64>
  %c2 = strata.constant dense<2> : tensor<i64>
  %ps = strata.shape %pk : tensor<?x1x?x4xf32> -> tensor<4xi64>
  %np = strata.gather %ps, %c2 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %is = strata.shape %ids : tensor<?x?xi64> -> tensor<2xi64>
  %n = strata.gather %is, %c1 : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %end = strata.add %np, %n : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %pos = strata.range %np, %end, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %pe = strata.gather %wpe, %pos : (tensor<32x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
  %te = strata.gather %emb, %ids : (tensor<8x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %x = strata.add %te, %pe : (tensor<?x?x4xf32>, tensor<?x4xf32>) -> tensor<?x?x4xf32>
  %q = strata.reshape %x, %s4 : (tensor<?x?x4xf32>, tensor<4xi64>) -> tensor<?x1x?x4xf32>
  %k = strata.concat %pk, %q {axis = 2 : i64} : (tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>) -> tensor<?x1x?x4xf32>
  %v = strata.concat %pv, %q {axis = 2 : i64} : (tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>) -> tensor<?x1x?x4xf32>
  %o = strata.attention %q, %k, %v {causal} : (tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>) -> tensor<?x1x?x4xf32>
  %h = strata.reshape %o, %s3 : (tensor<?x1x?x4xf32>, tensor<3xi64>) -> tensor<?x?x4xf32>
  %logits = strata.matmul %h, %head : (tensor<?x?x4xf32>, tensor<4x8xf32>) -> tensor<?x?x8xf32>
  return %logits, %k, %v : tensor<?x?x8xf32>, tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>
}
