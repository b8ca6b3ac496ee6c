// RUN: strata-opt %s --split-input-file --canonicalize | FileCheck %s
// One case per folder and canonicalization pattern of the strata dialect.

// CHECK-LABEL: func.func @fold_double_neg
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//   CHECK-NOT:   strata.neg
//       CHECK:   return %[[X]]
func.func @fold_double_neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = strata.neg %x : tensor<4xf32>
  %1 = strata.neg %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @fold_double_not
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xi1>)
//       CHECK:   return %[[X]]
func.func @fold_double_not(%x: tensor<4xi1>) -> tensor<4xi1> {
  %0 = strata.not %x : tensor<4xi1>
  %1 = strata.not %0 : tensor<4xi1>
  return %1 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @fold_identity_cast
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>)
//   CHECK-NOT:   strata.cast
//       CHECK:   return %[[X]]
func.func @fold_identity_cast(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = strata.cast %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A real conversion must stay.
// CHECK-LABEL: func.func @negative_fold_cast
//       CHECK:   strata.cast
func.func @negative_fold_cast(%x: tensor<4xf32>) -> tensor<4xf16> {
  %0 = strata.cast %x : tensor<4xf32> -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @normalize_reduce_axes
//       CHECK:   strata.reduce_mean %{{.*}} {axes = array<i64: 0, 2>}
//       CHECK:   strata.reduce_sum %{{.*}} {axes = array<i64: 1>}
//       CHECK:   strata.reduce_max %{{.*}} {axes = array<i64: 2>}
func.func @normalize_reduce_axes(%x: tensor<2x8x64xf32>) -> (tensor<1x8x1xf32>, tensor<2x1x64xf32>, tensor<2x8x1xf32>) {
  %0 = strata.reduce_mean %x {axes = array<i64: -1, 0>} : tensor<2x8x64xf32> -> tensor<1x8x1xf32>
  %1 = strata.reduce_sum %x {axes = array<i64: -2>} : tensor<2x8x64xf32> -> tensor<2x1x64xf32>
  %2 = strata.reduce_max %x {axes = array<i64: -1>} : tensor<2x8x64xf32> -> tensor<2x8x1xf32>
  return %0, %1, %2 : tensor<1x8x1xf32>, tensor<2x1x64xf32>, tensor<2x8x1xf32>
}

// -----

// CHECK-LABEL: func.func @fold_identity_reshape
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf32>)
//       CHECK:   return %[[X]]
func.func @fold_identity_reshape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = strata.reshape %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @fold_reshape_of_constant
//       CHECK:   %[[C:.+]] = strata.constant dense<{{\[}}[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
//   CHECK-NOT:   strata.reshape
//       CHECK:   return %[[C]]
func.func @fold_reshape_of_constant() -> tensor<2x3xi64> {
  %c = strata.constant dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi64>
  %0 = strata.reshape %c : (tensor<6xi64>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

// CHECK-LABEL: func.func @compose_reshapes
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3x4xf32>)
//       CHECK:   %[[R:.+]] = strata.reshape %[[X]] : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
//       CHECK:   return %[[R]]
func.func @compose_reshapes(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %0 = strata.reshape %x : (tensor<2x3x4xf32>) -> tensor<24xf32>
  %1 = strata.reshape %0 : (tensor<24xf32>) -> tensor<6x4xf32>
  return %1 : tensor<6x4xf32>
}

// -----

// CHECK-LABEL: func.func @drop_static_reshape_shape
//       CHECK:   strata.reshape %{{.*}} : (tensor<?x4xf32>) -> tensor<2x2x4xf32>
func.func @drop_static_reshape_shape(%x: tensor<?x4xf32>, %s: tensor<3xi64>) -> tensor<2x2x4xf32> {
  %0 = strata.reshape %x, %s : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<2x2x4xf32>
  return %0 : tensor<2x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @fold_identity_transpose
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf32>)
//       CHECK:   return %[[X]]
func.func @fold_identity_transpose(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = strata.transpose %x, [0, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// [0,2,1,3] then [0,1,3,2] is [0,2,3,1].
// CHECK-LABEL: func.func @compose_transposes
//  CHECK-SAME:   (%[[X:.+]]: tensor<1x8x12x64xf32>)
//       CHECK:   %[[T:.+]] = strata.transpose %[[X]], [0, 2, 3, 1] : tensor<1x8x12x64xf32> -> tensor<1x12x64x8xf32>
//       CHECK:   return %[[T]]
func.func @compose_transposes(%x: tensor<1x8x12x64xf32>) -> tensor<1x12x64x8xf32> {
  %0 = strata.transpose %x, [0, 2, 1, 3] : tensor<1x8x12x64xf32> -> tensor<1x12x8x64xf32>
  %1 = strata.transpose %0, [0, 1, 3, 2] : tensor<1x12x8x64xf32> -> tensor<1x12x64x8xf32>
  return %1 : tensor<1x12x64x8xf32>
}

// -----

// CHECK-LABEL: func.func @fold_static_shape
//       CHECK:   %[[C:.+]] = strata.constant dense<[8, 768]> : tensor<2xi64>
//       CHECK:   return %[[C]]
func.func @fold_static_shape(%x: tensor<?x8x768xf32>) -> tensor<2xi64> {
  %0 = strata.shape %x {start = 1 : i64} : tensor<?x8x768xf32> -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// A symbolic dim is only known at run time.
// CHECK-LABEL: func.func @negative_fold_dynamic_shape
//       CHECK:   strata.shape
func.func @negative_fold_dynamic_shape(%x: tensor<?x8xf32>) -> tensor<2xi64> {
  %0 = strata.shape %x : tensor<?x8xf32> -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// A check whose condition is constant false folds away; others stay.
// CHECK-LABEL: func.func @check_constant_false
//   CHECK-NOT:   strata.check
func.func @check_constant_false(%v: i64) {
  %false = arith.constant false
  strata.check %false, %v, %v, %v {kind = 1 : i64, node = "n"}
  return
}

// -----

// CHECK-LABEL: func.func @negative_check_run_time
//       CHECK:   strata.check %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {input = "ids", kind = 1 : i64, node = "n"}
func.func @negative_check_run_time(%bad: i1, %v: i64) {
  strata.check %bad, %v, %v, %v {kind = 1 : i64, node = "n", input = "ids"}
  return
}
