// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-lower-to-linalg))' | FileCheck %s

// A linear layer or matmul licensed to compute in bf16 hands the licence
// to its contraction, not to the bias broadcast that starts it.
// CHECK-LABEL: func.func @bf16_linear
//       CHECK:   linalg.generic
//   CHECK-NOT:     strata.compute_type
//       CHECK:   linalg.generic {{.+}} attrs = {strata.compute_type = bf16}
// CHECK-LABEL: func.func @bf16_matmul
//       CHECK:   linalg.generic {{.+}} attrs = {strata.compute_type = bf16}
func.func @bf16_linear(%x: tensor<?x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
  %y = strata.linear %x, %w, %b {strata.compute_type = bf16} : (tensor<?x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}
func.func @bf16_matmul(%x: tensor<2x?x8xf32>, %w: tensor<8x3xf32>) -> tensor<2x?x3xf32> {
  %y = strata.matmul %x, %w {strata.compute_type = bf16} : (tensor<2x?x8xf32>, tensor<8x3xf32>) -> tensor<2x?x3xf32>
  return %y : tensor<2x?x3xf32>
}
