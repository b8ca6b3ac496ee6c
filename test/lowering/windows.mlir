// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-lower-to-linalg))' | FileCheck %s

// A grouped convolution as im2col + contraction in NCHW order: the
// padded input copied into columns [N, G, C/G, KH, KW, OH, OW] (loops
// n, g, c, k..., o...; collapsed to [N, G, C/G * K, P]), the weight viewed
// as [G, M/G, C/G * K], one multiply-accumulate generic over (n, g, m, p,
// k) with the weight first (the matmul's A) writing [N, G, M/G, P], which
// is [N, M, OH, OW] as it stands (reshapes only), then the bias added by
// an elementwise generic.
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 * 2 + d2, d5 * 2 + d3, d6 * 2 + d4)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d4)>
// CHECK-DAG: #[[X:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG: #[[Y:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[BIAS:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @grouped_conv
//       CHECK:   %[[P:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
//       CHECK:   %[[C:.+]] = linalg.generic {indexing_maps = [#[[COL]], #{{.+}}]{{.*}} ins(%[[P]] : tensor<?x4x11x11xf32>) outs(%{{.+}} : tensor<?x2x2x3x3x5x5xf32>)
//       CHECK:   %[[CC:.+]] = tensor.collapse_shape %[[C]] {{.*}} into tensor<?x2x18x25xf32>
//       CHECK:   %[[WC:.+]] = tensor.collapse_shape %{{.+}} {{.*}} into tensor<6x18xf32>
//       CHECK:   %[[WE:.+]] = tensor.expand_shape %[[WC]] {{.*}} into tensor<2x3x18xf32>
//       CHECK:   %[[PR:.+]] = linalg.generic {indexing_maps = [#[[W]], #[[X]], #[[Y]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[WE]], %[[CC]] : tensor<2x3x18xf32>, tensor<?x2x18x25xf32>) outs(%{{.+}} : tensor<?x2x3x25xf32>)
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
//       CHECK:   %[[PC:.+]] = tensor.collapse_shape %[[PR]] {{.*}} into tensor<?x6x25xf32>
//       CHECK:   %[[PE:.+]] = tensor.expand_shape %[[PC]] {{.*}} into tensor<?x6x5x5xf32>
//       CHECK:   linalg.generic {indexing_maps = [#{{.+}}, #[[BIAS]], #{{.+}}]{{.*}} ins(%[[PE]], %{{.+}} : tensor<?x6x5x5xf32>, tensor<6xf32>) outs(%{{.+}} : tensor<?x6x5x5xf32>)
//       CHECK:     arith.addf
func.func @grouped_conv(%x: tensor<?x4x9x9xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> tensor<?x6x5x5xf32> {
  %0 = strata.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x4x9x9xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<?x6x5x5xf32>
  return %0 : tensor<?x6x5x5xf32>
}

// -----

// One group: the column copy's loops run channels first (c, n, k..., o...),
// every operand indexed by c bare, so that threads take channels and write
// whole rows; no bias, so the conv's result is the product reshaped.
// CHECK-DAG: #[[COL1:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d0, d4 * 2 + d2 * 2, d5 * 2 + d3 * 2)>
// CHECK-DAG: #[[OUT1:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d0, d2, d3, d4, d5)>
// CHECK-LABEL: func.func @dilated_conv
//       CHECK:   linalg.generic {indexing_maps = [#[[COL1]], #[[OUT1]]]{{.*}} outs(%{{.+}} : tensor<1x3x2x2x3x3xf32>)
//       CHECK:   tensor.collapse_shape {{.*}} into tensor<1x12x9xf32>
//       CHECK:   %[[PR:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}}, %{{.+}} : tensor<5x12xf32>, tensor<1x12x9xf32>) outs(%{{.+}} : tensor<1x5x9xf32>)
//       CHECK:   %[[Y:.+]] = tensor.expand_shape %[[PR]] {{.*}} into tensor<1x5x3x3xf32>
//       CHECK:   return %[[Y]]
func.func @dilated_conv(%x: tensor<1x3x8x8xf32>, %w: tensor<5x3x2x2xf32>) -> tensor<1x5x3x3xf32> {
  %0 = strata.conv %x, %w {dilations = array<i64: 2, 2>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<5x3x2x2xf32>) -> tensor<1x5x3x3xf32>
  return %0 : tensor<1x5x3x3xf32>
}

// -----

// A 1x1 convolution with one group, unit strides and no padding copies
// nothing: the input viewed as [N, C, H * W] is the columns, the weight
// viewed as [M, C] the matmul's A, and the product [N, M, H * W] viewed as
// NCHW the result.
// CHECK-DAG: #[[W2:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[X2:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-LABEL: func.func @pointwise_conv
//   CHECK-NOT:   tensor.pad
//       CHECK:   %[[X:.+]] = tensor.collapse_shape %{{.+}} {{.*}} into tensor<1x8x16xf32>
//       CHECK:   %[[W:.+]] = tensor.collapse_shape %{{.+}} {{.*}} into tensor<16x8xf32>
//       CHECK:   %[[PR:.+]] = linalg.generic {indexing_maps = [#[[W2]], #[[X2]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[W]], %[[X]] : tensor<16x8xf32>, tensor<1x8x16xf32>)
//       CHECK:   %[[Y:.+]] = tensor.expand_shape %[[PR]] {{.*}} into tensor<1x16x4x4xf32>
//       CHECK:   return %[[Y]]
func.func @pointwise_conv(%x: tensor<1x8x4x4xf32>, %w: tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32> {
  %0 = strata.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32>
  return %0 : tensor<1x16x4x4xf32>
}

// -----

// Grouped, 1x1, unit strides, no padding, a dynamic batch: still no copy,
// the input viewed as [N, G, C/G, H * W].
// CHECK-LABEL: func.func @grouped_pointwise_conv
//   CHECK-NOT:   linalg.generic
//       CHECK:   %[[XC:.+]] = tensor.collapse_shape %{{.+}} {{.*}} into tensor<?x8x16xf32>
//       CHECK:   %[[XE:.+]] = tensor.expand_shape %[[XC]] {{.*}} into tensor<?x2x4x16xf32>
//       CHECK:   linalg.generic {{.*}}ins(%{{.+}}, %[[XE]] : tensor<2x3x4xf32>, tensor<?x2x4x16xf32>) outs(%{{.+}} : tensor<?x2x3x16xf32>)
//       CHECK:   tensor.expand_shape {{.*}} into tensor<?x6x4x4xf32>
func.func @grouped_pointwise_conv(%x: tensor<?x8x4x4xf32>, %w: tensor<6x4x1x1xf32>) -> tensor<?x6x4x4xf32> {
  %0 = strata.conv %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x8x4x4xf32>, tensor<6x4x1x1xf32>) -> tensor<?x6x4x4xf32>
  return %0 : tensor<?x6x4x4xf32>
}

// -----

// A depthwise convolution (one input channel per group) keeps the direct
// generic: the input channel is (m floordiv M/G) * C/G + c and the taps
// are strided reduction dims.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-LABEL: func.func @depthwise_conv
//       CHECK:   %[[P:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
//       CHECK:   linalg.generic {indexing_maps = [#[[IN]], #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[P]], %{{.+}} : tensor<?x4x11x11xf32>, tensor<4x1x3x3xf32>)
func.func @depthwise_conv(%x: tensor<?x4x9x9xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<?x4x5x5xf32> {
  %0 = strata.conv %x, %w {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x4x9x9xf32>, tensor<4x1x3x3xf32>) -> tensor<?x4x5x5xf32>
  return %0 : tensor<?x4x5x5xf32>
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
