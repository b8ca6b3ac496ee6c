// RUN: strata-opt %s --strata-split-prefill-decode="slots=4 context=30 kv-block-size=8" | FileCheck %s
// RUN: strata-opt %s --strata-split-prefill-decode="slots=4 context=30 kv-block-size=8 kv-blocks=6 kv-cache=int8" | FileCheck %s --check-prefix=POOL
// RUN: not strata-opt %s --strata-split-prefill-decode="slots=4 context=30 kv-block-size=8 kv-blocks=3" 2>&1 | FileCheck %s --check-prefix=SMALL

// A paged cache: each cache is a pool shared by every sequence (4 slots of
// 4 blocks of 8 positions, enough for the 30-token context: 16 blocks),
// and a call names each row's blocks in a block table instead of a slot:
// prefill's [1, 4] row, decode's [batch, 4] rows. The cache ops read and
// write through the table.
// CHECK-LABEL: func.func @prefill(
//  CHECK-SAME:     tensor<1x4xi64> {strata.dims = ["", ""], strata.name = "block_table"}
//  CHECK-SAME:     tensor<16x1x8x4xf32> {strata.dims = ["kv_blocks", "", "", ""], strata.state = "kv_cache.0.key", strata.state_scope = "shared"}
//       CHECK:   strata.cache_write {{.+}} {block_size = 8 : i64} : (tensor<16x1x8x4xf32>, tensor<?x1x?x4xf32>, tensor<1x4xi64>, tensor<1xi64>)
//       CHECK:   strata.cache_attention {{.+}} {block_size = 8 : i64} : (tensor<?x1x?x4xf32>, tensor<16x1x8x4xf32>, tensor<16x1x8x4xf32>, tensor<1x4xi64>, tensor<1xi64>)
// CHECK-LABEL: func.func @decode(
//  CHECK-SAME:     tensor<?x4xi64> {strata.dims = ["batch", ""], strata.name = "block_tables"}
//  CHECK-SAME:     tensor<?xi64> {strata.dims = ["batch"], strata.name = "positions"}
//       CHECK:   strata.cache_write {{.+}} {block_size = 8 : i64} : (tensor<16x1x8x4xf32>, tensor<?x1x?x4xf32>, tensor<?x4xi64>, tensor<?xi64>)
//       CHECK:   strata.cache_attention {{.+}} {block_size = 8 : i64}

// The pool's size may be set (here 6 blocks, int8 rows).
// POOL-LABEL: func.func @decode(
//  POOL-SAME:     tensor<6x1x8x8xi8> {strata.dims = ["kv_blocks", "", "", ""], strata.state = "kv_cache.0.key", strata.state_scope = "shared"}

// SMALL: 3 KV blocks of 8 cannot hold one sequence of the context (30 tokens: 4 blocks)
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
