// RUN: strata-opt %s --strata-split-prefill-decode="slots=4 context=64 prefill-length=8" | FileCheck %s
// RUN: strata-opt %s --strata-split-prefill-decode="slots=4 context=64 prefill-length=8 ring-caches=false" | FileCheck %s --check-prefix=LINEAR
// RUN: strata-opt %s --strata-split-prefill-decode="slots=4 context=14 prefill-length=8" | FileCheck %s --check-prefix=SHORT
// RUN: strata-opt %s --strata-sparse-attention="window=6 sinks=2 global-topk=1 global-block=2" --strata-split-prefill-decode="slots=4 context=64 prefill-length=8" | FileCheck %s --check-prefix=GLOBAL
// RUN: not strata-opt %s --strata-sparse-attention="window=6 sinks=2" --strata-split-prefill-decode="slots=4 context=64 kv-block-size=16" 2>&1 | FileCheck %s --check-prefix=PAGED

// A windowed attention's cache is a ring of sinks + window + prefill-length
// - 1 = 2 + 6 + 8 - 1 = 15 rows: it keeps the 2 sinks in place and the
// latest 13 positions, all any query row of a call sees. The unwindowed
// layer keeps the whole context. The module records the context, which no
// ring state has as its extent.
//       CHECK: module attributes {strata.generation_context = 64 : i64}
// CHECK-LABEL: func.func @prefill(
//  CHECK-SAME:     tensor<4x1x15x4xf32> {strata.dims = ["slots", "", "", ""], strata.state = "kv_cache.0.key"}
//  CHECK-SAME:     tensor<4x1x15x4xf32> {strata.dims = ["slots", "", "", ""], strata.state = "kv_cache.0.value"}
//  CHECK-SAME:     tensor<4x1x64x4xf32> {strata.dims = ["slots", "", "context", ""], strata.state = "kv_cache.1.key"}
//       CHECK:   strata.cache_write {{.+}} {ring_context = 64 : i64, ring_kept = 2 : i64} : (tensor<4x1x15x4xf32>
//       CHECK:   strata.cache_attention {{.+}} {ring_context = 64 : i64, ring_kept = 2 : i64, sinks = 2 : i64, window = 6 : i64}
//       CHECK:   strata.cache_write
//   CHECK-NOT:   ring_kept
//       CHECK:   strata.cache_attention
//  CHECK-SAME:     tensor<4x1x64x4xf32>
// CHECK-LABEL: func.func @decode(
//  CHECK-SAME:     tensor<4x1x15x4xf32> {strata.dims = ["slots", "", "", ""], strata.state = "kv_cache.0.key"}
//       CHECK:   strata.cache_attention {{.+}} {ring_context = 64 : i64, ring_kept = 2 : i64, sinks = 2 : i64, window = 6 : i64}

// ring-caches=false, or a ring no smaller than the context: whole caches.
// LINEAR-NOT: ring_kept
// LINEAR: tensor<4x1x64x4xf32> {strata.dims = ["slots", "", "context", ""], strata.state = "kv_cache.0.key"}
// LINEAR-NOT: ring_kept
// SHORT-NOT: ring_kept
// SHORT: tensor<4x1x14x4xf32> {strata.dims = ["slots", "", "context", ""], strata.state = "kv_cache.0.key"}
// SHORT-NOT: ring_kept

// Top-k global blocks may choose any earlier key: that layer (the second,
// windowed by the sparse-attention pass) keeps the whole context, and its
// cache attention the blocks.
// GLOBAL-LABEL: func.func @prefill(
//  GLOBAL-SAME:     tensor<4x1x15x4xf32> {strata.dims = ["slots", "", "", ""], strata.state = "kv_cache.0.key"}
//  GLOBAL-SAME:     tensor<4x1x64x4xf32> {strata.dims = ["slots", "", "context", ""], strata.state = "kv_cache.1.key"}
//       GLOBAL:   strata.cache_attention {{.+}} {ring_context = 64 : i64, ring_kept = 2 : i64, sinks = 2 : i64, window = 6 : i64}
//       GLOBAL:   strata.cache_attention {{.+}} {global_block = 2 : i64, global_topk = 1 : i64, sinks = 2 : i64, window = 6 : i64}
// GLOBAL-LABEL: func.func @decode(
//       GLOBAL:   strata.cache_attention {{.+}} {global_block = 2 : i64, global_topk = 1 : i64, sinks = 2 : i64, window = 6 : i64}
func.func @main(%ids: tensor<?x?xi64> {strata.name = "input_ids", strata.dims = ["batch", "sequence"]})
    -> (tensor<?x?x8xf32> {strata.name = "logits"}) {
  %emb = strata.constant dense<0.5> : tensor<8x4xf32>
  %head = strata.constant dense<0.25> : tensor<4x8xf32>
  %s4 = strata.constant dense<[0, 1, -1, 4]> : tensor<4xi64>
  %s3 = strata.constant dense<[0, -1, 4]> : tensor<3xi64>
  %x = strata.gather %emb, %ids : (tensor<8x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32>
  %q = strata.reshape %x, %s4 : (tensor<?x?x4xf32>, tensor<4xi64>) -> tensor<?x1x?x4xf32>
  %o = strata.attention %q, %q, %q {causal, window = 6 : i64, sinks = 2 : i64} : (tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>) -> tensor<?x1x?x4xf32>
  %o2 = strata.attention %o, %o, %o {causal} : (tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>, tensor<?x1x?x4xf32>) -> tensor<?x1x?x4xf32>
  %h = strata.reshape %o2, %s3 : (tensor<?x1x?x4xf32>, tensor<3xi64>) -> tensor<?x?x4xf32>
  %logits = strata.matmul %h, %head : (tensor<?x?x4xf32>, tensor<4x8xf32>) -> tensor<?x?x8xf32>
  return %logits : tensor<?x?x8xf32>
}

// Paged caches hold whole contexts: a windowed attention keeps its ring.
// PAGED: error: a paged KV cache (kv-block-size) does not combine with windowed or global-block attention
