// RUN: strata-opt %s --split-input-file --verify-diagnostics
// Verifier errors of gather_nd, scatter_elements, scatter_nd, top_k and
// einsum.

func.func @gather_nd_tuple(%d: tensor<2x3xf32>, %i: tensor<4x3xi64>) {
  // expected-error @+1 {{'strata.gather_nd' op expected 'indices' with a static last dim in [1, 2], got 4x3}}
  %0 = strata.gather_nd %d, %i : (tensor<2x3xf32>, tensor<4x3xi64>) -> tensor<4xf32>
  return
}

// -----

func.func @gather_nd_result(%d: tensor<2x3x5xf32>, %i: tensor<4x2xi64>) {
  // expected-error @+1 {{'strata.gather_nd' op expected result shape 4x5, got 4x3}}
  %0 = strata.gather_nd %d, %i : (tensor<2x3x5xf32>, tensor<4x2xi64>) -> tensor<4x3xf32>
  return
}

// -----

func.func @scatter_reduction(%d: tensor<4xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) {
  // expected-error @+1 {{'strata.scatter_elements' op unknown reduction 'mean' (expected none, add, mul, max or min)}}
  %0 = strata.scatter_elements %d, %i, %u {reduction = "mean"} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @scatter_updates(%d: tensor<4x4xf32>, %i: tensor<2x4xi64>, %u: tensor<2x3xf32>) {
  // expected-error @+1 {{'strata.scatter_elements' op expected 'indices' and 'updates' of one shape of rank 2, got 2x4 and 2x3}}
  %0 = strata.scatter_elements %d, %i, %u : (tensor<4x4xf32>, tensor<2x4xi64>, tensor<2x3xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @scatter_nd_updates(%d: tensor<4x5xf32>, %i: tensor<3x1xi64>, %u: tensor<3x4xf32>) {
  // expected-error @+1 {{'strata.scatter_nd' op expected 'updates' of shape 3x5, got 3x4}}
  %0 = strata.scatter_nd %d, %i, %u : (tensor<4x5xf32>, tensor<3x1xi64>, tensor<3x4xf32>) -> tensor<4x5xf32>
  return
}

// -----

func.func @top_k_too_many(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'strata.top_k' op 'k' 4 must lie in [0, 3], the extent of the axis}}
  %v, %i = strata.top_k %x {k = 4 : i64} : tensor<2x3xf32> -> (tensor<2x4xf32>, tensor<2x4xi64>)
  return
}

// -----

func.func @einsum_extents(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'strata.einsum' op dim 'j' has extents 3 and 4}}
  %0 = strata.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @einsum_result_letter(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'strata.einsum' op invalid equation 'ij->k': result letter 'k' names no operand dim}}
  %0 = strata.einsum %a {equation = "ij->k"} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}
