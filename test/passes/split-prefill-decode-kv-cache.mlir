// RUN: strata-opt %s --strata-split-prefill-decode="slots=4 context=32 kv-cache=int8" | FileCheck %s --check-prefix=INT8
// RUN: strata-opt %s --strata-split-prefill-decode="slots=4 context=32 kv-cache=bf16" | FileCheck %s --check-prefix=BF16
// RUN: not strata-opt %s --strata-split-prefill-decode="kv-cache=int4" 2>&1 | FileCheck %s --check-prefix=BAD

// A compressed cache: the state tensors hold int8 rows of 4 values and 4
// scale bytes (last dim 8), or bf16 values; cache_write takes the fp32
// keys and values as before and attention reads the compressed cache.
// INT8-LABEL: func.func @prefill(
//  INT8-SAME:     tensor<4x1x32x8xi8> {strata.dims = ["slots", "", "context", ""], strata.state = "kv_cache.0.key"}
//  INT8-SAME:     tensor<4x1x32x8xi8> {strata.dims = ["slots", "", "context", ""], strata.state = "kv_cache.0.value"}
//      INT8:   strata.cache_write {{.+}} : (tensor<4x1x32x8xi8>, tensor<?x1x?x4xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x1x32x8xi8>
//      INT8:   strata.cache_attention {{.+}} : (tensor<?x1x?x4xf32>, tensor<4x1x32x8xi8>, tensor<4x1x32x8xi8>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x1x?x4xf32>
// INT8-LABEL: func.func @decode(
//  INT8-SAME:     tensor<4x1x32x8xi8> {strata.dims = ["slots", "", "context", ""], strata.state = "kv_cache.0.key"}
// BF16-LABEL: func.func @decode(
//  BF16-SAME:     tensor<4x1x32x4xbf16> {strata.dims = ["slots", "", "context", ""], strata.state = "kv_cache.0.key"}
//      BF16:   strata.cache_attention {{.+}} tensor<4x1x32x4xbf16>, tensor<4x1x32x4xbf16>
// BAD: unsupported kv-cache precision 'int4' (supported: fp32, bf16, int8)
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
