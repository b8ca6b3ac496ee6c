// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-lower-to-linalg))' | FileCheck %s

// Static extents stay static: the slices have the result types, no cast.
// Regression test (conformance: test_split_equal_parts_2d failed with
// "expected type to be 'tensor<?x3xf32>'").
// CHECK-LABEL: func.func @split_static
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x6xf32>)
//       CHECK:   %[[A:.+]] = tensor.extract_slice %[[X]][0, 0] [2, 3] [1, 1] : tensor<2x6xf32> to tensor<2x3xf32>
//       CHECK:   %[[B:.+]] = tensor.extract_slice %[[X]][0, 3] [2, 3] [1, 1] : tensor<2x6xf32> to tensor<2x3xf32>
//   CHECK-NOT:   tensor.cast
//       CHECK:   return %[[A]], %[[B]]
func.func @split_static(%x: tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0:2 = strata.split %x {axis = 1 : i64, sizes = array<i64: 3, 3>} : tensor<2x6xf32> -> tensor<2x3xf32>, tensor<2x3xf32>
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// A dynamic extent off the axis is read from the input.
// CHECK-LABEL: func.func @split_dynamic_batch
//  CHECK-SAME:   (%[[X:.+]]: tensor<?x6xf32>)
//       CHECK:   %[[N:.+]] = tensor.dim %[[X]], %{{.+}}
//       CHECK:   tensor.extract_slice %[[X]][0, 0] [%[[N]], 2] [1, 1] : tensor<?x6xf32> to tensor<?x2xf32>
//       CHECK:   tensor.extract_slice %[[X]][0, 2] [%{{.+}}, 4] [1, 1] : tensor<?x6xf32> to tensor<?x4xf32>
func.func @split_dynamic_batch(%x: tensor<?x6xf32>) -> (tensor<?x2xf32>, tensor<?x4xf32>) {
  %0:2 = strata.split %x {axis = 1 : i64, sizes = array<i64: 2, 4>} : tensor<?x6xf32> -> tensor<?x2xf32>, tensor<?x4xf32>
  return %0#0, %0#1 : tensor<?x2xf32>, tensor<?x4xf32>
}

// -----

// A zero-size piece is an empty tensor, not a slice at offset == extent.
// Regression test (conformance: test_split_zero_size_splits_opset18 failed
// with "offset 0 is out-of-bounds: 0 >= 0").
// CHECK-LABEL: func.func @split_zero_size
//       CHECK:   %[[A:.+]] = tensor.extract_slice %{{.+}}[0] [4] [1] : tensor<4xf32> to tensor<4xf32>
//       CHECK:   %[[B:.+]] = tensor.empty() : tensor<0xf32>
//       CHECK:   return %[[A]], %[[B]]
func.func @split_zero_size(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<0xf32>) {
  %0:2 = strata.split %x {axis = 0 : i64, sizes = array<i64: 4, 0>} : tensor<4xf32> -> tensor<4xf32>, tensor<0xf32>
  return %0#0, %0#1 : tensor<4xf32>, tensor<0xf32>
}

// -----

// Inputs empty along the axis are dropped (RotaryEmbedding's expanded form
// concatenates a [.., 0] pass-through half).
// CHECK-LABEL: func.func @concat_drops_empty
//  CHECK-SAME:   (%[[A:.+]]: tensor<2x4xf32>, %[[E:.+]]: tensor<2x0xf32>, %[[B:.+]]: tensor<2x4xf32>)
//       CHECK:   %[[C:.+]] = tensor.concat dim(1) %[[A]], %[[B]] : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
//       CHECK:   return %[[C]]
func.func @concat_drops_empty(%a: tensor<2x4xf32>, %e: tensor<2x0xf32>, %b: tensor<2x4xf32>) -> tensor<2x8xf32> {
  %0 = strata.concat %a, %e, %b {axis = 1 : i64} : (tensor<2x4xf32>, tensor<2x0xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// One non-empty input left: no concat at all.
// CHECK-LABEL: func.func @concat_single_non_empty
//  CHECK-SAME:   (%[[A:.+]]: tensor<2x8xf32>, %{{.+}}: tensor<2x0xf32>)
//   CHECK-NOT:   tensor.concat
//       CHECK:   return %[[A]]
func.func @concat_single_non_empty(%a: tensor<2x8xf32>, %e: tensor<2x0xf32>) -> tensor<2x8xf32> {
  %0 = strata.concat %a, %e {axis = 1 : i64} : (tensor<2x8xf32>, tensor<2x0xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// gather_elements reads data at the result's own index, with the index
// along the axis taken from `indices` (range-checked, negatives wrapped),
// and a dim the verifier could not bound (dynamic) clamped to the data's.
// CHECK-LABEL: func.func @gather_elements_dynamic
//  CHECK-SAME:   (%[[X:.+]]: tensor<?x5xf32>, %[[I:.+]]: tensor<?x2xi64>)
//       CHECK:   strata.check
//       CHECK:   %[[N:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x5xf32>
//       CHECK:   %[[LAST:.+]] = arith.subi %[[N]], %{{.+}} : index
//       CHECK:   linalg.generic
//       CHECK:     %[[R:.+]] = linalg.index 0 : index
//       CHECK:     %[[C:.+]] = linalg.index 1 : index
//       CHECK:     tensor.extract %[[I]][%[[R]], %[[C]]] : tensor<?x2xi64>
//       CHECK:     %[[ROW:.+]] = arith.minsi %[[R]], %[[LAST]] : index
//       CHECK:     tensor.extract %[[X]][%[[ROW]], %{{.+}}] : tensor<?x5xf32>
func.func @gather_elements_dynamic(%x: tensor<?x5xf32>, %i: tensor<?x2xi64>) -> tensor<?x2xf32> {
  %0 = strata.gather_elements %x, %i {axis = 1 : i64} : (tensor<?x5xf32>, tensor<?x2xi64>) -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}

// -----

// Constant padding reads a copy of the input with a slab of the value at
// the end of each dim; an index outside the input points into the slab.
// CHECK-LABEL: func.func @pad_constant
//       CHECK:   %[[EXT:.+]] = tensor.pad %{{.+}} low[0, 0] high[1, 1]
//       CHECK:   linalg.generic
//       CHECK:     arith.select
//       CHECK:     arith.select
//       CHECK:     tensor.extract %[[EXT]]
func.func @pad_constant(%x: tensor<?x4xf32>, %v: tensor<f32>) -> tensor<?x7xf32> {
  %0 = strata.pad %x, %v {mode = "constant", pads = array<i64: 1, 2, 0, 1>} : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x7xf32>
  return %0 : tensor<?x7xf32>
}

// -----

// Reflection folds the index into a period of 2 * (S - 1) and back.
// CHECK-LABEL: func.func @pad_reflect
//       CHECK:   linalg.generic
//       CHECK:     arith.remsi
//       CHECK:     arith.cmpi sgt
//       CHECK:     arith.minsi
//       CHECK:     tensor.extract
func.func @pad_reflect(%x: tensor<3xf32>) -> tensor<7xf32> {
  %0 = strata.pad %x {mode = "reflect", pads = array<i64: 2, 2>} : (tensor<3xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}
