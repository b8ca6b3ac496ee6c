// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-lower-to-linalg))' | FileCheck %s

// top_k: per row, k scans; each picks the best element ranked after the
// previous pick (a better value, or an equal one at a higher index) and
// writes it and its index.
// CHECK-LABEL: func.func @top_k
//       CHECK:   scf.for {{.*}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<2x3xf32>, tensor<2x3xi64>)
//       CHECK:     scf.for {{.*}} -> (tensor<2x3xf32>, tensor<2x3xi64>, f32, index)
//       CHECK:       scf.for {{.*}} -> (f32, index)
//       CHECK:         tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<2x7xf32>
//       CHECK:         arith.cmpf ogt
//       CHECK:         arith.select
//       CHECK:       tensor.insert {{.*}} : tensor<2x3xf32>
//       CHECK:       arith.index_cast {{.*}} : index to i64
//       CHECK:       tensor.insert {{.*}} : tensor<2x3xi64>
func.func @top_k(%x: tensor<2x7xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>) {
  %v, %i = strata.top_k %x {axis = 1 : i64, k = 3 : i64} : tensor<2x7xf32> -> (tensor<2x3xf32>, tensor<2x3xi64>)
  return %v, %i : tensor<2x3xf32>, tensor<2x3xi64>
}

// -----

// scatter_nd: the tuples are range-checked, then a loop nest over the
// updates carries the result (starting as the data), adding each update
// to the element its tuple addresses.
// CHECK-LABEL: func.func @scatter_nd
//  CHECK-SAME:   (%[[D:.+]]: tensor<4x5xf32>, %[[I:.+]]: tensor<3x1xi64>, %[[U:.+]]: tensor<3x5xf32>)
//       CHECK:   strata.check
//       CHECK:   scf.for {{.*}} iter_args(%{{.+}} = %[[D]]) -> (tensor<4x5xf32>)
//       CHECK:     scf.for {{.*}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (tensor<4x5xf32>)
//       CHECK:       tensor.extract %[[I]]
//       CHECK:       arith.minsi
//       CHECK:       %[[NEW:.+]] = tensor.extract %[[U]]
//       CHECK:       %[[OLD:.+]] = tensor.extract %[[ACC]]
//       CHECK:       %[[SUM:.+]] = arith.addf %[[OLD]], %[[NEW]]
//       CHECK:       tensor.insert %[[SUM]] into %[[ACC]]
func.func @scatter_nd(%d: tensor<4x5xf32>, %i: tensor<3x1xi64>, %u: tensor<3x5xf32>) -> tensor<4x5xf32> {
  %0 = strata.scatter_nd %d, %i, %u {reduction = "add"} : (tensor<4x5xf32>, tensor<3x1xi64>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// scatter_elements without a reduction stores the update in place.
// CHECK-LABEL: func.func @scatter_elements
//       CHECK:   strata.check
//       CHECK:   scf.for
//       CHECK:     scf.for
//       CHECK:       %[[NEW:.+]] = tensor.extract %{{.+}} : tensor<2x2xf32>
//   CHECK-NOT:       tensor.extract
//       CHECK:       tensor.insert %[[NEW]]
func.func @scatter_elements(%d: tensor<2x5xf32>, %i: tensor<2x2xi64>, %u: tensor<2x2xf32>) -> tensor<2x5xf32> {
  %0 = strata.scatter_elements %d, %i, %u {axis = 1 : i64} : (tensor<2x5xf32>, tensor<2x2xi64>, tensor<2x2xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// gather_nd with a batch dim: each output element reads data at its batch
// index, the tuple's (clamped) index, then its own trailing index.
// CHECK-LABEL: func.func @gather_nd
//       CHECK:   strata.check
//       CHECK:   linalg.generic
//       CHECK:     %[[B:.+]] = linalg.index 0
//       CHECK:     tensor.extract %{{.+}}[%[[B]], %{{.+}}, %{{.+}}] : tensor<2x5x1xi64>
//       CHECK:     %[[T:.+]] = arith.minsi
//       CHECK:     tensor.extract %{{.+}}[%[[B]], %[[T]], %{{.+}}] : tensor<2x3x4xf32>
func.func @gather_nd(%d: tensor<2x3x4xf32>, %i: tensor<2x5x1xi64>) -> tensor<2x5x4xf32> {
  %0 = strata.gather_nd %d, %i {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x1xi64>) -> tensor<2x5x4xf32>
  return %0 : tensor<2x5x4xf32>
}

// -----

// einsum: one generic over every letter, the summed ones reductions; a
// repeated letter reads the diagonal.
// CHECK-DAG: #[[DIAG:.+]] = affine_map<(d0, d1) -> (d0, d1, d1)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @einsum_trace
//       CHECK:   linalg.fill
//       CHECK:   linalg.generic {indexing_maps = [#[[DIAG]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
//       CHECK:     arith.addf
func.func @einsum_trace(%a: tensor<2x3x3xf32>) -> tensor<2xf32> {
  %0 = strata.einsum %a {equation = "bii->b"} : (tensor<2x3x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A batched matmul as einsum: b, i, k parallel, j reduced.
// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[B:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-LABEL: func.func @einsum_matmul
//       CHECK:   linalg.generic {indexing_maps = [#[[A]], #[[B]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
func.func @einsum_matmul(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = strata.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}
