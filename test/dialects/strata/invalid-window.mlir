// RUN: strata-opt %s --split-input-file --verify-diagnostics
// Verifier errors of conv and pool.

func.func @conv_group(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{'strata.conv' op 'group' 4 must divide the 6 output channels}}
  %0 = strata.conv %x, %w {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{'strata.conv' op expected 4 input channels (weight [M, C / group, ...] with group 2), got 3}}
  %0 = strata.conv %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_result(%x: tensor<1x2x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{'strata.conv' op expected result shape 1x6x3x3, got 1x6x6x6}}
  %0 = strata.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @pool_kind(%x: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'strata.pool' op expected 'kind' max, avg or lp, got 'min'}}
  %0 = strata.pool %x {dilations = array<i64: 1>, kernel = array<i64: 2>, kind = "min", pads = array<i64: 0, 0>, strides = array<i64: 1>} : tensor<1x2x8xf32> -> tensor<1x2x7xf32>
  return
}

// -----

func.func @pool_pads(%x: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'strata.pool' op expected 2 'pads' for 1 spatial dims, got 1}}
  %0 = strata.pool %x {dilations = array<i64: 1>, kernel = array<i64: 2>, kind = "max", pads = array<i64: 0>, strides = array<i64: 1>} : tensor<1x2x8xf32> -> tensor<1x2x7xf32>
  return
}

// -----

func.func @pool_too_large(%x: tensor<1x2x3xf32>) {
  // expected-error @+1 {{'strata.pool' op the window does not fit the padded input 1x2x3}}
  %0 = strata.pool %x {dilations = array<i64: 1>, kernel = array<i64: 5>, kind = "max", pads = array<i64: 0, 0>, strides = array<i64: 1>} : tensor<1x2x3xf32> -> tensor<1x2x1xf32>
  return
}
