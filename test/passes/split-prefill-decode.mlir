// RUN: strata-opt %s --split-input-file --verify-diagnostics \
// RUN:   --strata-split-prefill-decode="slots=4 context=32" | FileCheck %s

// A one-layer decoder with past/present (the HF with-past form): the past
// concatenations become cache writes, the attention reads the cache, the
// present outputs go; `main` stays as it was.
// CHECK-LABEL: func.func @main(
//       CHECK:   strata.concat
//       CHECK:   strata.attention
// CHECK-LABEL: func.func @prefill(
//  CHECK-SAME:     tensor<1x?xi64> {strata.dims = ["", "prefill_length"], strata.name = "input_ids"}
//  CHECK-SAME:     %[[SLOT:.+]]: tensor<i64> {strata.dims = [], strata.name = "slot"}
//  CHECK-SAME:     %[[START:.+]]: tensor<i64> {strata.dims = [], strata.name = "start"}
//  CHECK-SAME:     %[[KC:.+]]: tensor<4x1x32x4xf32> {strata.dims = ["slots", "", "context", ""], strata.state = "kv_cache.0.key"}
//  CHECK-SAME:     %[[VC:.+]]: tensor<4x1x32x4xf32> {strata.dims = ["slots", "", "context", ""], strata.state = "kv_cache.0.value"}
//  CHECK-SAME:   -> (tensor<1x8xf32> {strata.dims = ["", ""], strata.name = "logits"}, tensor<4x1x32x4xf32> {strata.state = "kv_cache.0.key"}, tensor<4x1x32x4xf32> {strata.state = "kv_cache.0.value"})
//  CHECK-SAME:   attributes {strata.entry_kind = "prefill"}
//   CHECK-NOT:   strata.concat
//       CHECK:   %[[K:.+]] = strata.cache_write %[[KC]]
//       CHECK:   %[[V:.+]] = strata.cache_write %[[VC]]
//       CHECK:   strata.cache_attention %{{.+}}, %[[K]], %[[V]]
// The LM head runs on the last position only.
//       CHECK:   strata.slice {{.+}} -> tensor<?x1x4xf32>
//       CHECK:   strata.matmul
//       CHECK:   return %{{.+}}, %[[K]], %[[V]]
// CHECK-LABEL: func.func @decode(
//  CHECK-SAME:     tensor<?x1xi64> {strata.dims = ["batch", ""], strata.name = "input_ids"}
//  CHECK-SAME:     %[[SLOTS:.+]]: tensor<?xi64> {strata.dims = ["batch"], strata.name = "slots"}
//  CHECK-SAME:     %[[POS:.+]]: tensor<?xi64> {strata.dims = ["batch"], strata.name = "positions"}
//  CHECK-SAME:   -> (tensor<?x8xf32> {strata.dims = ["batch", ""], strata.name = "logits"}
//  CHECK-SAME:   attributes {strata.entry_kind = "decode"}
//       CHECK:   %[[LEN:.+]] = strata.add %[[POS]]
//       CHECK:   %[[K2:.+]] = strata.cache_write %{{.+}}, %{{.+}}, %[[SLOTS]], %[[POS]]
//       CHECK:   %[[V2:.+]] = strata.cache_write %{{.+}}, %{{.+}}, %[[SLOTS]], %[[POS]]
//       CHECK:   strata.cache_attention %{{.+}}, %[[K2]], %[[V2]], %[[SLOTS]], %[[LEN]]
func.func @main(%ids: tensor<?x?xi64> {strata.name = "input_ids", strata.dims = ["batch", "sequence"]},
                %pk: tensor<?x1x?x4xf32> {strata.name = "past_key_values.0.key", strata.dims = ["batch", "", "past_sequence", ""]},
                %pv: tensor<?x1x?x4xf32> {strata.name = "past_key_values.0.value", strata.dims = ["batch", "", "past_sequence", ""]})
    -> (tensor<?x?x8xf32> {strata.name = "logits"}, tensor<?x1x?x4xf32> {strata.name = "present.0.key"},
        tensor<?x1x?x4xf32> {strata.name = "present.0.value"}) {
  %emb = strata.constant dense<0.5> : tensor<8x4xf32>
  %head = strata.constant dense<0.25> : tensor<4x8xf32>
  %s4 = strata.constant dense<[0, 1, -1, 4]> : tensor<4xi64>
  %s3 = strata.constant dense<[0, -1, 4]> : tensor<3xi64>
  %x = strata.gather %emb, %ids : (tensor<8x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %q = strata.reshape %x, %s4 : (tensor<?x?x4xf32>, tensor<4xi64>) -> tensor<?x1x?x4xf32>
  %k = strata.concat %pk, %q {axis = 2 : i64} : (tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>) -> tensor<?x1x?x4xf32>
  %v = strata.concat %pv, %q {axis = 2 : i64} : (tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>) -> tensor<?x1x?x4xf32>
  %o = strata.attention %q, %k, %v {causal} : (tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>) -> tensor<?x1x?x4xf32>
  %h = strata.reshape %o, %s3 : (tensor<?x1x?x4xf32>, tensor<3xi64>) -> tensor<?x?x4xf32>
  %logits = strata.matmul %h, %head : (tensor<?x?x4xf32>, tensor<4x8xf32>) -> tensor<?x?x8xf32>
  return %logits, %k, %v : tensor<?x?x8xf32>, tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>
}

// -----

// An attention that is not causal: not a decoder, nothing added.
// CHECK-LABEL: func.func @main(
//   CHECK-NOT: func.func @prefill
func.func @main(%ids: tensor<?x?xi64> {strata.name = "input_ids"}) -> (tensor<?x?x8xf32> {strata.name = "logits"}) {
  %emb = strata.constant dense<0.5> : tensor<8x4xf32>
  %head = strata.constant dense<0.25> : tensor<4x8xf32>
  %s4 = strata.constant dense<[0, 1, -1, 4]> : tensor<4xi64>
  %s3 = strata.constant dense<[0, -1, 4]> : tensor<3xi64>
  %x = strata.gather %emb, %ids : (tensor<8x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %q = strata.reshape %x, %s4 : (tensor<?x?x4xf32>, tensor<4xi64>) -> tensor<?x1x?x4xf32>
  %o = strata.attention %q, %q, %q : (tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>) -> tensor<?x1x?x4xf32>
  %h = strata.reshape %o, %s3 : (tensor<?x1x?x4xf32>, tensor<3xi64>) -> tensor<?x?x4xf32>
  %logits = strata.matmul %h, %head : (tensor<?x?x4xf32>, tensor<4x8xf32>) -> tensor<?x?x8xf32>
  return %logits : tensor<?x?x8xf32>
}

// -----

// A mask computed from another input than attention_mask (a bias the split
// would drop): `main` only, with a warning.
// CHECK-LABEL: func.func @main(
//   CHECK-NOT: func.func @prefill
func.func @main(%ids: tensor<?x?xi64> {strata.name = "input_ids"},
                %bias: tensor<?x1x?x?xf32> {strata.name = "bias"}) -> (tensor<?x?x8xf32> {strata.name = "logits"}) {
  %emb = strata.constant dense<0.5> : tensor<8x4xf32>
  %head = strata.constant dense<0.25> : tensor<4x8xf32>
  %s4 = strata.constant dense<[0, 1, -1, 4]> : tensor<4xi64>
  %s3 = strata.constant dense<[0, -1, 4]> : tensor<3xi64>
  %x = strata.gather %emb, %ids : (tensor<8x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %q = strata.reshape %x, %s4 : (tensor<?x?x4xf32>, tensor<4xi64>) -> tensor<?x1x?x4xf32>
  // expected-warning @+1 {{no prefill/decode entries (the artifact keeps 'main' only): an attention's mask is not computed from the attention_mask input alone}}
  %o = strata.attention %q, %q, %q mask %bias {causal} : (tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>, tensor<?x1x?x?xf32>) -> tensor<?x1x?x4xf32>
  %h = strata.reshape %o, %s3 : (tensor<?x1x?x4xf32>, tensor<3xi64>) -> tensor<?x?x4xf32>
  %logits = strata.matmul %h, %head : (tensor<?x?x4xf32>, tensor<4x8xf32>) -> tensor<?x?x8xf32>
  return %logits : tensor<?x?x8xf32>
}
