// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-lower-to-linalg))' | FileCheck %s

// A weight-only quantized linear is one contraction over three inputs: the
// activation, the integer weight and its scales, read at group k / 4. The
// bias initializes the accumulator; each weight is widened and scaled
// where it is read (the form strata-cpu-matmul-to-runtime recognizes), and
// the values' width rides along as strata.weight_bits.
// CHECK-DAG: #[[X:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[Q:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[S:.+]] = affine_map<(d0, d1, d2) -> (d1 floordiv 4, d2)>
// CHECK-DAG: #[[O:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @grouped
//       CHECK:   %[[INIT:.+]] = linalg.generic {{.+}} ins(%arg3 : tensor<3xf32>)
//       CHECK:   linalg.generic {indexing_maps = [#[[X]], #[[Q]], #[[S]], #[[O]]], iterator_types = ["parallel", "reduction", "parallel"]}
//  CHECK-SAME:     ins(%arg0, %arg1, %arg2 : tensor<?x8xf32>, tensor<8x3xi8>, tensor<2x3xf32>) outs(%[[INIT]] : tensor<?x3xf32>)
//  CHECK-SAME:     attrs = {strata.weight_bits = 4 : i64}
//       CHECK:   ^bb0(%[[IN:.+]]: f32, %[[QV:.+]]: i8, %[[SV:.+]]: f32, %[[ACC:.+]]: f32):
//       CHECK:     %[[W:.+]] = arith.sitofp %[[QV]] : i8 to f32
//       CHECK:     %[[WS:.+]] = arith.mulf %[[W]], %[[SV]] : f32
//       CHECK:     %[[P:.+]] = arith.mulf %[[IN]], %[[WS]]
//       CHECK:     arith.addf %[[ACC]], %[[P]]
func.func @grouped(%x: tensor<?x8xf32>, %q: tensor<8x3xi8>, %s: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
  %y = strata.quantized_linear %x, %q, %s, %b {bits = 4 : i64, group_size = 4 : i64} : (tensor<?x8xf32>, tensor<8x3xi8>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// Without a bias the accumulator starts at zero; rows keep their rank.
// CHECK-LABEL: func.func @per_column
//       CHECK:   linalg.fill
//       CHECK:   linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]
func.func @per_column(%x: tensor<2x?x8xf32>, %q: tensor<8x3xi8>, %s: tensor<1x3xf32>) -> tensor<2x?x3xf32> {
  %y = strata.quantized_linear %x, %q, %s {bits = 8 : i64, group_size = 8 : i64} : (tensor<2x?x8xf32>, tensor<8x3xi8>, tensor<1x3xf32>) -> tensor<2x?x3xf32>
  return %y : tensor<2x?x3xf32>
}

// Activations quantized per row at run time (W8A8): the same contraction,
// marked strata.activation_bits for the back end's integer kernel.
// CHECK-LABEL: func.func @int8_activations
//       CHECK:   linalg.generic
//  CHECK-SAME:     attrs = {strata.activation_bits = 8 : i64, strata.weight_bits = 8 : i64}
func.func @int8_activations(%x: tensor<?x8xf32>, %q: tensor<8x3xi8>, %s: tensor<1x3xf32>) -> tensor<?x3xf32> {
  %y = strata.quantized_linear %x, %q, %s {activation_bits = 8 : i64, bits = 8 : i64, group_size = 8 : i64} : (tensor<?x8xf32>, tensor<8x3xi8>, tensor<1x3xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// Per block of 32 k (the int8 decode policy): the block rides along too.
// CHECK-LABEL: func.func @int8_activation_blocks
//       CHECK:   linalg.generic
//  CHECK-SAME:     attrs = {strata.activation_bits = 8 : i64, strata.activation_block = 32 : i64, strata.weight_bits = 8 : i64}
func.func @int8_activation_blocks(%x: tensor<?x8xf32>, %q: tensor<8x3xi8>, %s: tensor<1x3xf32>) -> tensor<?x3xf32> {
  %y = strata.quantized_linear %x, %q, %s {activation_bits = 8 : i64, activation_block = 32 : i64, bits = 8 : i64, group_size = 8 : i64} : (tensor<?x8xf32>, tensor<8x3xi8>, tensor<1x3xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}
