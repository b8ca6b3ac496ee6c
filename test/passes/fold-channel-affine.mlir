// RUN: strata-opt %s --split-input-file --mlir-print-elementsattrs-with-hex-if-larger=100 \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fold-channel-affine,canonicalize))' | FileCheck %s

// An inference BatchNormalization as imported ((y - mean) / sqrt(var +
// eps) * scale + bias, the per-channel constants reshaped and computed
// from constants) folds into the convolution before it: weight rows
// [0.5, 2, 6] (1 / 2, 2 / 1, 3 / 0.5) and bias [-0.25, -1, 4]; the ReLU
// stays.
// CHECK-LABEL: func.func @conv_batch_norm
//   CHECK-DAG:   %[[B:.+]] = strata.constant dense_resource<[[BN:folded_channels_[0-9]+_bias]]> : tensor<3xf32>
//   CHECK-DAG:   %[[W:.+]] = strata.constant dense_resource<[[WN:folded_channels_[0-9]+_weight]]> : tensor<3x2x1x1xf32>
//       CHECK:   %[[Y:.+]] = strata.conv %{{.+}}, %[[W]], %[[B]] {{.*}}strata.folded_channel_ops = 4 : i64
//  CHECK-NEXT:   strata.relu %[[Y]]
//   CHECK-NOT:   strata.sub
//       CHECK: [[BN]]: "0x04000000000080BE000080BF00008040"
//       CHECK: [[WN]]: "0x040000000000003F0000003F00000040000000400000C0400000C040"
func.func @conv_batch_norm(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %w = strata.constant dense<1.0> : tensor<3x2x1x1xf32>
  %mean = strata.constant dense<[0.5, 1.0, -1.0]> : tensor<3xf32>
  %var = strata.constant dense<[4.0, 1.0, 0.25]> : tensor<3xf32>
  %eps = strata.constant dense<0.0> : tensor<f32>
  %s = strata.constant dense<[[[1.0]], [[2.0]], [[3.0]]]> : tensor<3x1x1xf32>
  %t = strata.constant dense<[[[0.0]], [[1.0]], [[-2.0]]]> : tensor<3x1x1xf32>
  %m = strata.reshape %mean : (tensor<3xf32>) -> tensor<3x1x1xf32>
  %v = strata.reshape %var : (tensor<3xf32>) -> tensor<3x1x1xf32>
  %ve = strata.add %v, %eps : (tensor<3x1x1xf32>, tensor<f32>) -> tensor<3x1x1xf32>
  %sd = strata.sqrt %ve : tensor<3x1x1xf32>
  %y = strata.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %c = strata.sub %y, %m : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
  %n = strata.div %c, %sd : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
  %a = strata.mul %n, %s : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
  %b = strata.add %a, %t : (tensor<1x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<1x3x4x4xf32>
  %r = strata.relu %b : tensor<1x3x4x4xf32>
  return %r : tensor<1x3x4x4xf32>
}

// -----

// A linear layer's columns scale (a per-column multiply, then a scalar
// add): weight columns [2, 3], bias [2 * 1 + 1, 3 * 2 + 1].
// CHECK-LABEL: func.func @linear_scale
//       CHECK:   strata.linear %{{.+}}, %{{.+}}, %{{.+}} {strata.folded_channel_ops = 2 : i64}
//   CHECK-NOT:   strata.mul
//   CHECK-NOT:   strata.add
func.func @linear_scale(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w = strata.constant dense<1.0> : tensor<2x2xf32>
  %b = strata.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %s = strata.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %one = strata.constant dense<1.0> : tensor<f32>
  %y = strata.linear %x, %w, %b : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %m = strata.mul %y, %s : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %a = strata.add %m, %one : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  return %a : tensor<4x2xf32>
}

// -----

// Not folded: a constant varying along a spatial dim, a divisor that is
// the layer's output, and a layer with a second use.
// CHECK-LABEL: func.func @not_per_channel
//       CHECK:   strata.conv
//   CHECK-NOT:   strata.folded_channel_ops
//       CHECK:   strata.mul
//       CHECK:   strata.div
func.func @not_per_channel(%x: tensor<1x2x4x4xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) {
  %w = strata.constant dense<1.0> : tensor<3x2x1x1xf32>
  %s = strata.constant dense<2.0> : tensor<1x4xf32>
  %y = strata.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %m = strata.mul %y, %s : (tensor<1x3x4x4xf32>, tensor<1x4xf32>) -> tensor<1x3x4x4xf32>
  %two = strata.constant dense<2.0> : tensor<f32>
  %d = strata.div %two, %m : (tensor<f32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  return %m, %d : tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>
}
