// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-lower-to-linalg))' | FileCheck %s

// An embedding row dequantized where it is read: the ids are range-checked
// (a run with an id outside the table ends with an error) and clamped;
// int4 columns c come from byte c / 2, shifted by 4 * (c % 2), masked and
// offset by 8; each value is scaled by its row's scale of group c / 2.
// CHECK-LABEL: func.func @nibbles
//       CHECK:   strata.check
//       CHECK:   linalg.generic {{.+}} outs(%{{.+}} : tensor<1x?x4xf32>)
//       CHECK:     %[[C:.+]] = linalg.index 2 : index
//       CHECK:     %[[ID:.+]] = tensor.extract %arg2
//       CHECK:     arith.maxsi
//       CHECK:     %[[ROW:.+]] = arith.minsi
//       CHECK:     %[[BYTE:.+]] = arith.divui %[[C]], %c2
//       CHECK:     %[[B:.+]] = tensor.extract %arg0[%[[ROW]], %[[BYTE]]] : tensor<5x2xi8>
//       CHECK:     %[[WIDE:.+]] = arith.extui %[[B]] : i8 to i32
//       CHECK:     arith.remui %[[C]]
//       CHECK:     %[[SHIFTED:.+]] = arith.shrui %[[WIDE]]
//       CHECK:     %[[NIBBLE:.+]] = arith.andi %[[SHIFTED]], %c15_i32
//       CHECK:     %[[V:.+]] = arith.subi %[[NIBBLE]], %c8_i32
//       CHECK:     %[[G:.+]] = arith.divui %[[C]], %c2
//       CHECK:     %[[S:.+]] = tensor.extract %arg1[%[[ROW]], %[[G]]] : tensor<5x2xf32>
//       CHECK:     %[[F:.+]] = arith.sitofp %[[V]] : i32 to f32
//       CHECK:     arith.mulf %[[F]], %[[S]] : f32
func.func @nibbles(%t: tensor<5x2xi8>, %s: tensor<5x2xf32>, %ids: tensor<1x?xi64>) -> tensor<1x?x4xf32> {
  %0 = strata.quantized_gather %t, %s, %ids {bits = 4 : i64, group_size = 2 : i64} : (tensor<5x2xi8>, tensor<5x2xf32>, tensor<1x?xi64>) -> tensor<1x?x4xf32>
  return %0 : tensor<1x?x4xf32>
}

// -----

// int8: the byte itself, sign-extended, one scale per row.
// CHECK-LABEL: func.func @bytes
//       CHECK:     %[[C:.+]] = linalg.index 1 : index
//       CHECK:     %[[B:.+]] = tensor.extract %arg0[%{{.+}}, %[[C]]] : tensor<5x4xi8>
//       CHECK:     arith.extsi %[[B]] : i8 to i32
//       CHECK:     arith.divui %[[C]], %c4
//   CHECK-NOT:     arith.shrui
//       CHECK:     arith.mulf
func.func @bytes(%t: tensor<5x4xi8>, %s: tensor<5x1xf32>, %ids: tensor<3xi64>) -> tensor<3x4xf32> {
  %0 = strata.quantized_gather %t, %s, %ids {bits = 8 : i64, group_size = 4 : i64} : (tensor<5x4xi8>, tensor<5x1xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
