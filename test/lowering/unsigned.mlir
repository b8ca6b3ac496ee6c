// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-lower-to-linalg))' \
// RUN:   --verify-diagnostics | FileCheck %s

// Unsigned tensors keep their element type; the body computes on the
// signless integer of the same width with the unsigned arith op. The
// divisor is checked for zeros first, its elements widened with zeros.
// CHECK-LABEL: func.func @div_ui8
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%{{.+}} : tensor<4xui8>) outs(%{{.+}} : tensor<i64>)
//       CHECK:     arith.extui %{{.+}} : i8 to i64
//       CHECK:   strata.check {{.*}}kind = 4
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%{{.+}}, %{{.+}} : tensor<4xui8>, tensor<4xui8>) outs(%{{.+}} : tensor<4xui8>)
//       CHECK:     %[[A:.+]] = builtin.unrealized_conversion_cast %{{.+}} : ui8 to i8
//       CHECK:     %[[B:.+]] = builtin.unrealized_conversion_cast %{{.+}} : ui8 to i8
//       CHECK:     %[[S:.+]] = arith.select %{{.+}}, %{{.+}}, %[[B]] : i8
//       CHECK:     %[[Q:.+]] = arith.divui %[[A]], %[[S]] : i8
//       CHECK:     %[[R:.+]] = builtin.unrealized_conversion_cast %[[Q]] : i8 to ui8
//       CHECK:     linalg.yield %[[R]] : ui8
func.func @div_ui8(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  %0 = strata.div %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// CHECK-LABEL: func.func @minmax_mod_compare_ui32
//       CHECK:   arith.maxui
//       CHECK:   arith.minui
//       CHECK:   arith.remui
//       CHECK:   arith.cmpi ult
//   CHECK-NOT:   arith.maxsi
//   CHECK-NOT:   arith.remsi
func.func @minmax_mod_compare_ui32(%a: tensor<4xui32>, %b: tensor<4xui32>) -> (tensor<4xui32>, tensor<4xui32>, tensor<4xui32>, tensor<4xi1>) {
  %0 = strata.max %a, %b : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  %1 = strata.min %a, %b : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  %2 = strata.mod %a, %b : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  %3 = strata.less %a, %b : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  return %0, %1, %2, %3 : tensor<4xui32>, tensor<4xui32>, tensor<4xui32>, tensor<4xi1>
}

// -----

// Casts from unsigned zero-extend and convert as unsigned.
// CHECK-LABEL: func.func @cast_from_ui16
//       CHECK:   arith.uitofp %{{.+}} : i16 to f32
//       CHECK:   arith.extui %{{.+}} : i16 to i64
func.func @cast_from_ui16(%a: tensor<4xui16>) -> (tensor<4xf32>, tensor<4xi64>) {
  %0 = strata.cast %a : tensor<4xui16> -> tensor<4xf32>
  %1 = strata.cast %a : tensor<4xui16> -> tensor<4xi64>
  return %0, %1 : tensor<4xf32>, tensor<4xi64>
}

// -----

// Ops whose lowering builds signed or typed scalar arithmetic still refuse
// unsigned tensors with one error.
func.func @reduce_ui8(%a: tensor<4x2xui8>) -> tensor<4x1xui8> {
  // expected-error @+1 {{'strata.reduce_sum' op unsigned element type 'ui8' is not supported by the CPU lowering yet}}
  %0 = strata.reduce_sum %a {axes = array<i64: 1>, keepdims = true} : tensor<4x2xui8> -> tensor<4x1xui8>
  return %0 : tensor<4x1xui8>
}
