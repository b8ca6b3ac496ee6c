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

// -----

// The inverse and hyperbolic trigonometric functions and the roundings are
// math ops (libm calls or LLVM intrinsics later); ONNX Round rounds halves
// to even.
// CHECK-LABEL: func.func @math_functions
//       CHECK:   math.tan
//       CHECK:   math.asin
//       CHECK:   math.acos
//       CHECK:   math.atan
//       CHECK:   math.sinh
//       CHECK:   math.cosh
//       CHECK:   math.asinh
//       CHECK:   math.acosh
//       CHECK:   math.atanh
//       CHECK:   math.floor
//       CHECK:   math.ceil
//       CHECK:   math.roundeven
func.func @math_functions(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = strata.tan %x : tensor<3xf32>
  %1 = strata.asin %0 : tensor<3xf32>
  %2 = strata.acos %1 : tensor<3xf32>
  %3 = strata.atan %2 : tensor<3xf32>
  %4 = strata.sinh %3 : tensor<3xf32>
  %5 = strata.cosh %4 : tensor<3xf32>
  %6 = strata.asinh %5 : tensor<3xf32>
  %7 = strata.acosh %6 : tensor<3xf32>
  %8 = strata.atanh %7 : tensor<3xf32>
  %9 = strata.floor %8 : tensor<3xf32>
  %10 = strata.ceil %9 : tensor<3xf32>
  %11 = strata.round %10 : tensor<3xf32>
  return %11 : tensor<3xf32>
}

// -----

// Shifts by the bit width or more are poison in LLVM: the body selects 0
// for them (a logical shift of unsigned elements) instead.
// CHECK-LABEL: func.func @shift_guarded
//       CHECK:   linalg.generic
//       CHECK:     %[[FAR:.+]] = arith.cmpi uge, %[[N:.+]], %{{.+}} : i8
//       CHECK:     %[[SAFE:.+]] = arith.select %[[FAR]], %{{.+}}, %[[N]] : i8
//       CHECK:     %[[S:.+]] = arith.shrui %{{.+}}, %[[SAFE]] : i8
//       CHECK:     arith.select %[[FAR]], %{{.+}}, %[[S]] : i8
func.func @shift_guarded(%x: tensor<4xui8>, %n: tensor<4xui8>) -> tensor<4xui8> {
  %0 = strata.shift_right %x, %n : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// CHECK-LABEL: func.func @bitwise
//       CHECK:   arith.andi
//       CHECK:   arith.xori %{{.+}}, %{{.+}} : i32
//       CHECK:   arith.ori
//       CHECK:   arith.xori
func.func @bitwise(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = strata.bitwise_and %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = strata.bitwise_not %0 : tensor<4xi32>
  %2 = strata.bitwise_or %1, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %3 = strata.bitwise_xor %2, %a : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %3 : tensor<4xi32>
}
