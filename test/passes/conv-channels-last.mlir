// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-conv-channels-last,strata-fold-constant-transposes,canonicalize))' | FileCheck %s

// A residual block: two convolutions, their ReLUs and the residual add run
// channels last; the input is transposed once on the way in and the sum
// once on the way out. The weights are folded into [K..., C, M] constants.
// CHECK-LABEL: func.func @residual_block
//  CHECK-SAME:   (%[[X:.+]]: tensor<1x8x6x6xf32>)
//   CHECK-DAG:   %[[W1:.+]] = strata.constant {{.*}} : tensor<3x3x8x8xf32>
//   CHECK-DAG:   %[[W2:.+]] = strata.constant {{.*}} : tensor<1x1x8x8xf32>
//       CHECK:   %[[XT:.+]] = strata.transpose %[[X]], [0, 2, 3, 1] : tensor<1x8x6x6xf32> -> tensor<1x6x6x8xf32>
//       CHECK:   %[[C1:.+]] = strata.conv %[[XT]], %[[W1]], %{{.+}} {channels_last, {{.*}}strata.folded_channel_ops = 2 : i64{{.*}}} : (tensor<1x6x6x8xf32>, tensor<3x3x8x8xf32>, tensor<8xf32>) -> tensor<1x6x6x8xf32>
//       CHECK:   %[[R1:.+]] = strata.relu %[[C1]] : tensor<1x6x6x8xf32>
//       CHECK:   %[[C2:.+]] = strata.conv %[[R1]], %[[W2]] {channels_last, {{.*}}} : (tensor<1x6x6x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x6x6x8xf32>
//       CHECK:   %[[S:.+]] = strata.add %[[C2]], %[[XT]] : (tensor<1x6x6x8xf32>, tensor<1x6x6x8xf32>) -> tensor<1x6x6x8xf32>
//       CHECK:   %[[Z:.+]] = strata.max %[[S]], %{{.+}} : (tensor<1x6x6x8xf32>, tensor<f32>) -> tensor<1x6x6x8xf32>
//       CHECK:   %[[OUT:.+]] = strata.transpose %[[Z]], [0, 3, 1, 2] : tensor<1x6x6x8xf32> -> tensor<1x8x6x6xf32>
//       CHECK:   return %[[OUT]]
//   CHECK-NOT:   strata.transpose
func.func @residual_block(%x: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %w1 = strata.constant dense<0.5> : tensor<8x8x3x3xf32>
  %b1 = strata.constant dense<0.25> : tensor<8xf32>
  %w2 = strata.constant dense<-0.5> : tensor<8x8x1x1xf32>
  %zero = strata.constant dense<0.0> : tensor<f32>
  %c1 = strata.conv %x, %w1, %b1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, strata.folded_channel_ops = 2 : i64} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  %r1 = strata.relu %c1 : tensor<1x8x6x6xf32>
  %c2 = strata.conv %r1, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x6x6xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x6x6xf32>
  %s = strata.add %c2, %x : (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %z = strata.max %s, %zero : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  return %z : tensor<1x8x6x6xf32>
}

// -----

// A per-channel add broadcasts differently channels last: the transpose
// stays above it. A pooling reads NCHW, so the layout changes back before
// it; a grouped and a transposed convolution keep NCHW.
// CHECK-LABEL: func.func @edges
//       CHECK:   %[[C:.+]] = strata.conv %{{.+}} {channels_last, {{.*}}} : (tensor<1x5x5x4xf32>, tensor<3x3x4x4xf32>) -> tensor<1x5x5x4xf32>
//       CHECK:   %[[T:.+]] = strata.transpose %[[C]], [0, 3, 1, 2]
//       CHECK:   %[[A:.+]] = strata.add %[[T]], %{{.+}} : (tensor<1x4x5x5xf32>, tensor<4x1x1xf32>) -> tensor<1x4x5x5xf32>
//       CHECK:   strata.pool %[[A]]
//       CHECK:   strata.conv {{.*}}group = 2 : i64
//   CHECK-NOT:   channels_last
//       CHECK:   strata.conv {{.*}}input_dilations
//   CHECK-NOT:   channels_last
func.func @edges(%x: tensor<1x4x5x5xf32>) -> (tensor<1x4x2x2xf32>, tensor<1x4x5x5xf32>, tensor<1x4x11x11xf32>) {
  %w = strata.constant dense<0.5> : tensor<4x4x3x3xf32>
  %wg = strata.constant dense<0.5> : tensor<4x2x3x3xf32>
  %t = strata.constant dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]> : tensor<4x1x1xf32>
  %c = strata.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x5x5xf32>
  %a = strata.add %c, %t : (tensor<1x4x5x5xf32>, tensor<4x1x1xf32>) -> tensor<1x4x5x5xf32>
  %p = strata.pool %a {kind = "max", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : tensor<1x4x5x5xf32> -> tensor<1x4x2x2xf32>
  %g = strata.conv %x, %wg {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x5x5xf32>
  %d = strata.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>, input_dilations = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x11x11xf32>
  return %p, %g, %d : tensor<1x4x2x2xf32>, tensor<1x4x5x5xf32>, tensor<1x4x11x11xf32>
}

// -----

// A max pooling between convolutions (ResNet's after its stem) runs
// channels last too: no transpose between the two convolutions.
// CHECK-LABEL: func.func @stem_pool
//       CHECK:   strata.transpose %arg0, [0, 2, 3, 1]
//       CHECK:   %[[C:.+]] = strata.conv {{.*}}channels_last
//       CHECK:   %[[R:.+]] = strata.relu %[[C]] : tensor<1x8x8x4xf32>
//       CHECK:   %[[P:.+]] = strata.pool %[[R]] {channels_last, {{.*}}kind = "max"{{.*}}} : tensor<1x8x8x4xf32> -> tensor<1x4x4x4xf32>
//       CHECK:   %[[C2:.+]] = strata.conv %[[P]], {{.*}}channels_last
//       CHECK:   strata.transpose %[[C2]], [0, 3, 1, 2]
//   CHECK-NOT:   strata.transpose
func.func @stem_pool(%x: tensor<1x3x16x16xf32>) -> tensor<1x4x4x4xf32> {
  %w = strata.constant dense<0.5> : tensor<4x3x3x3xf32>
  %w2 = strata.constant dense<0.25> : tensor<4x4x1x1xf32>
  %c = strata.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x16x16xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %r = strata.relu %c : tensor<1x4x8x8xf32>
  %p = strata.pool %r {kind = "max", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  %c2 = strata.conv %p, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  return %c2 : tensor<1x4x4x4xf32>
}

// -----

// A residual that the graph transposes to channels last only after the add
// (a convolution later reads it): the add cannot use that transpose, so
// the layout changes back before the add.
// CHECK-LABEL: func.func @late_transpose
//       CHECK:   %[[C:.+]] = strata.conv {{.*}}channels_last
//       CHECK:   %[[T:.+]] = strata.transpose %[[C]], [0, 3, 1, 2]
//       CHECK:   %[[S:.+]] = strata.add %[[T]], %arg1 : (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>)
//       CHECK:   strata.transpose %arg1, [0, 2, 3, 1]
func.func @late_transpose(%x: tensor<1x4x5x5xf32>, %y: tensor<1x4x5x5xf32>) -> (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) {
  %w = strata.constant dense<0.5> : tensor<4x4x3x3xf32>
  %w2 = strata.constant dense<0.25> : tensor<4x4x1x1xf32>
  %c = strata.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x5x5xf32>
  %s = strata.add %c, %y : (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %d = strata.conv %y, %w2 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x5x5xf32>
  return %s, %d : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>
}
