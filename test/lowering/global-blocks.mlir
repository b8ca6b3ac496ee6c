// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-lower-to-linalg))' | FileCheck %s

// Top-k global blocks by their definition: each key block's sum (an output
// map folding keys into blocks of 3), each query's score of each block (a
// contraction over the head dim, the kv head shared by 2 query heads), each
// block's rank among the query's candidates (a reduction over the other
// blocks counting those that outscore it, ties to the lower block), and
// the visibility test reading the rank of the key's block.
//   CHECK-DAG: #[[BLOCKS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 3, d3)>
//   CHECK-DAG: #[[KVHEAD:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>
// CHECK-LABEL: func.func @attention_global
//       CHECK:   %[[SUMS:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[BLOCKS]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
//       CHECK:   } -> tensor<1x2x3x16xf32>
//       CHECK:   %[[SCORES:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[KVHEAD]], #{{.+}}]{{.+}} ins(%{{.+}}, %[[SUMS]] :
//       CHECK:   %[[RANKS:.+]] = linalg.generic {{.+}} ins(%[[SCORES]], %[[SCORES]] :
//       CHECK:     arith.cmpf ogt
//       CHECK:     arith.cmpf oeq
//       CHECK:     arith.extui {{.+}} : i1 to i32
//       CHECK:   } -> tensor<1x4x8x3xi32>
//       CHECK:   linalg.generic
//       CHECK:     %[[BLOCK:.+]] = arith.divui %{{.+}}, %{{.+}} : index
//       CHECK:     tensor.extract %[[RANKS]][%{{.+}}, %{{.+}}, %{{.+}}, %[[BLOCK]]]
//       CHECK:     arith.cmpi slt, %{{.+}}, %c1_i32
func.func @attention_global(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %o = strata.attention %q, %k, %k {causal, window = 2 : i64, sinks = 1 : i64, global_topk = 1 : i64, global_block = 3 : i64} : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// Over a cache, each query's last key comes from its row's length (read
// in the rank generic), and the mask is per head.
// CHECK-LABEL: func.func @cache_global
//       CHECK:   } -> tensor<?x4x1x4xf32>
//       CHECK:     tensor.extract %{{.+}}[%{{.+}}] : tensor<?xi64>
//       CHECK:   } -> tensor<?x4x1x4xi32>
//       CHECK:   linalg.generic {{.+}} outs(%{{.+}} : tensor<?x4x1x8xi1>)
func.func @cache_global(%q: tensor<?x4x1x4xf32>, %k: tensor<3x2x8x4xf32>, %v: tensor<3x2x8x4xf32>, %slots: tensor<?xi64>, %lengths: tensor<?xi64>) -> tensor<?x4x1x4xf32> {
  %0 = strata.cache_attention %q, %k, %v, %slots, %lengths {window = 2 : i64, global_topk = 1 : i64, global_block = 2 : i64} : (tensor<?x4x1x4xf32>, tensor<3x2x8x4xf32>, tensor<3x2x8x4xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x4x1x4xf32>
  return %0 : tensor<?x4x1x4xf32>
}
