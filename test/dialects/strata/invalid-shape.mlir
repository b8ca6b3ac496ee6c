// RUN: strata-opt %s --split-input-file --verify-diagnostics
// Verifier errors of the shape-computation ops.

func.func @shape_wrong_length(%x: tensor<?x8x768xf32>) {
  // expected-error @+1 {{'strata.shape' op expected a result with 2 entries, got 3}}
  %0 = strata.shape %x {start = 1 : i64} : tensor<?x8x768xf32> -> tensor<3xi64>
  return
}

// -----

func.func @shape_result_type(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'strata.shape' op result #0 must be 1D tensor of 64-bit signless integer values, but got 'tensor<2xi32>'}}
  %0 = strata.shape %x : tensor<2x8xf32> -> tensor<2xi32>
  return
}

// -----

func.func @constant_of_shape_value_type(%s: tensor<2xi64>) {
  // expected-error @+1 {{'strata.constant_of_shape' op expected 'value' of type 'f32', got 'i64'}}
  %0 = strata.constant_of_shape %s {value = 0 : i64} : (tensor<2xi64>) -> tensor<?x?xf32>
  return
}

// -----

func.func @constant_of_shape_rank(%s: tensor<3xi64>) {
  // expected-error @+1 {{'strata.constant_of_shape' op expected 'shape' with 2 entries, got 3}}
  %0 = strata.constant_of_shape %s {value = 0.0 : f32} : (tensor<3xi64>) -> tensor<?x?xf32>
  return
}

// -----

func.func @range_mixed_types(%a: tensor<i64>, %b: tensor<i32>) {
  // expected-error @+1 {{'strata.range' op failed to verify that all of {start, limit, delta, result} have same element type}}
  %0 = strata.range %a, %b, %a : (tensor<i64>, tensor<i32>, tensor<i64>) -> tensor<?xi64>
  return
}
