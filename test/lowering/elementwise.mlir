// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-lower-to-linalg))' | FileCheck %s

// Integer pow is square-and-multiply in the generic's body: math.ipowi has
// no CPU lowering. Regression test (conformance: test_pow_types_int32_int32
// failed with "failed to legalize operation 'math.ipowi'").
// CHECK-LABEL: func.func @pow_int
//       CHECK:   linalg.generic
//       CHECK:     arith.shrui
//       CHECK:     arith.muli
//       CHECK:     arith.select
//   CHECK-NOT:   math.ipowi
func.func @pow_int(%x: tensor<3xi32>, %y: tensor<3xi32>) -> tensor<3xi32> {
  %0 = strata.pow %x, %y : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// CHECK-LABEL: func.func @pow_float
//       CHECK:   math.powf
func.func @pow_float(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = strata.pow %x, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
