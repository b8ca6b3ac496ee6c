// RUN: strata-opt %s --split-input-file --verify-diagnostics
// Verifier errors of reductions, softmax, cumsum and the norms.

func.func @reduce_no_axes(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'strata.reduce_sum' op expected at least one axis in 'axes'}}
  %0 = strata.reduce_sum %x {axes = array<i64>} : tensor<2x8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @reduce_axis_out_of_range(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'strata.reduce_mean' op 'axes' 2 is out of range for rank 2}}
  %0 = strata.reduce_mean %x {axes = array<i64: 2>} : tensor<2x8xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @reduce_duplicate_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'strata.reduce_max' op axis -1 appears twice in 'axes'}}
  %0 = strata.reduce_max %x {axes = array<i64: 1, -1>} : tensor<2x8xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @reduce_wrong_result(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'strata.reduce_mean' op expected result shape 2, got 2x1}}
  %0 = strata.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : tensor<2x8xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'strata.softmax' op 'axis' -3 is out of range for rank 2}}
  %0 = strata.softmax %x {axis = -3 : i64} : tensor<2x8xf32>
  return
}

// -----

func.func @log_softmax_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'strata.log_softmax' op 'axis' -1 is out of range for rank 0}}
  %0 = strata.log_softmax %x : tensor<f32>
  return
}

// -----

func.func @cumsum_axis(%x: tensor<2x8xi64>) {
  // expected-error @+1 {{'strata.cumsum' op 'axis' 2 is out of range for rank 2}}
  %0 = strata.cumsum %x {axis = 2 : i64} : tensor<2x8xi64>
  return
}

// -----

func.func @layer_norm_axis(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'strata.layer_norm' op 'axis' 2 is out of range for rank 2}}
  %0 = strata.layer_norm %x, %g {axis = 2 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_scale_shape(%x: tensor<2x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'strata.layer_norm' op expected 'scale' of shape 8, got 4}}
  %0 = strata.layer_norm %x, %g : (tensor<2x8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_bias_shape(%x: tensor<2x8xf32>, %g: tensor<2x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{'strata.layer_norm' op expected 'bias' of shape 2x8, got 8}}
  %0 = strata.layer_norm %x, %g, %b {axis = 0 : i64} : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_negative_epsilon(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'strata.layer_norm' op expected non-negative 'epsilon', got -1.000000e+00}}
  %0 = strata.layer_norm %x, %g {epsilon = -1.0 : f32} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_result_type(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'strata.layer_norm' op failed to verify that all of {input, result} have same type}}
  %0 = strata.layer_norm %x, %g : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf16>
  return
}

// -----

func.func @rms_norm_scale_shape(%x: tensor<2x8xf32>, %g: tensor<2x8xf32>) {
  // expected-error @+1 {{'strata.rms_norm' op expected 'scale' of shape 8, got 2x8}}
  %0 = strata.rms_norm %x, %g : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}
