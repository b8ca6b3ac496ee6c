// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-lower-to-linalg))' | FileCheck %s

// A grouped convolution: the input padded with zeros, one generic whose
// input channel is (m floordiv M/G) * C/G + c and whose taps are strided
// reduction dims, then the bias along the channel dim.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 floordiv 3) * 2 + d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-LABEL: func.func @grouped_conv
//       CHECK:   %[[P:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
//       CHECK:   linalg.generic {indexing_maps = [#[[IN]], #[[W]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[P]], %{{.+}} : tensor<?x4x11x11xf32>, tensor<6x2x3x3xf32>)
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
//       CHECK:   linalg.generic
//       CHECK:     arith.addf
func.func @grouped_conv(%x: tensor<?x4x9x9xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> tensor<?x6x5x5xf32> {
  %0 = strata.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x4x9x9xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<?x6x5x5xf32>
  return %0 : tensor<?x6x5x5xf32>
}

// -----

// Average pooling without count_include_pad divides each window's sum by
// the taps inside the input: a constant of per-window counts (corners 4,
// edges 6, inside 9 for a 3x3 window with one pad).
// CHECK-LABEL: func.func @average_counts
//       CHECK:   tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
//       CHECK:   arith.constant dense<{{\[}}[4.000000e+00, 6.000000e+00, 4.000000e+00], [6.000000e+00, 9.000000e+00, 6.000000e+00], [4.000000e+00, 6.000000e+00, 4.000000e+00]]> : tensor<3x3xf32>
//       CHECK:   arith.divf
func.func @average_counts(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %0 = strata.pool %x {dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, kind = "avg", pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : tensor<1x2x3x3xf32> -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// Max pooling pads with -inf, so padding never wins.
// CHECK-LABEL: func.func @max_pads_lowest
//       CHECK:   %[[NINF:.+]] = arith.constant 0xFF800000 : f32
//       CHECK:   tensor.pad %{{.+}} low[0, 0, 1] high[0, 0, 1]
//       CHECK:     tensor.yield %[[NINF]]
//       CHECK:   arith.maximumf
func.func @max_pads_lowest(%x: tensor<1x2x5xf32>) -> tensor<1x2x3xf32> {
  %0 = strata.pool %x {dilations = array<i64: 1>, kernel = array<i64: 3>, kind = "max", pads = array<i64: 1, 1>, strides = array<i64: 2>} : tensor<1x2x5xf32> -> tensor<1x2x3xf32>
  return %0 : tensor<1x2x3xf32>
}

// -----

// A transposed convolution's input: its elements `input_dilations` apart
// inside zeros (an insert at stride), a negative pad cropping.
// CHECK-LABEL: func.func @input_dilations
//       CHECK:   %[[Z:.+]] = linalg.fill
//       CHECK:   %[[K:.+]] = tensor.extract_slice %{{.+}}[0, 0, 1] [1, 1, 2] [1, 1, 1] : tensor<1x1x3xf32> to tensor<1x1x2xf32>
//       CHECK:   tensor.insert_slice %[[K]] into %[[Z]][0, 0, 1] [1, 1, 2] [1, 1, 3] : tensor<1x1x2xf32> into tensor<1x1x6xf32>
//       CHECK:   linalg.generic
func.func @input_dilations(%x: tensor<1x1x3xf32>, %w: tensor<2x1x2xf32>) -> tensor<1x2x5xf32> {
  %0 = strata.conv %x, %w {dilations = array<i64: 1>, group = 1 : i64, input_dilations = array<i64: 3>, pads = array<i64: -2, 1>, strides = array<i64: 1>} : (tensor<1x1x3xf32>, tensor<2x1x2xf32>) -> tensor<1x2x5xf32>
  return %0 : tensor<1x2x5xf32>
}
