// RUN: strata-opt %s --split-input-file --verify-diagnostics

func.func @one_rank(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{needs at least 2 ranks, got 1}}
  %0 = strata.all_reduce %x {ranks = 1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_extent(%x: tensor<2x3xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{result dim 1 is 5, expected 6}}
  %0 = strata.all_gather %x {axis = 1 : i64, ranks = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @gather_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis 2 is outside [0, 2)}}
  %0 = strata.all_gather %x {axis = 2 : i64, ranks = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
