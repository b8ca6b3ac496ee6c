// RUN: strata-opt %s --split-input-file --verify-diagnostics --strata-shard-tensor-parallel="ranks=2 rank=0"

// A projection read by a softmax over its columns cannot stay split: it
// stays whole on every rank, with a remark saying why.
func.func @softmax_reads_split(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %w = strata.constant dense<0.5> : tensor<4x4xf32>
  // expected-remark @+1 {{tensor parallelism: a contraction stays whole: 'strata.softmax' reads a split value}}
  %h = strata.matmul %x, %w : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  %n = strata.softmax %h {axis = 1 : i64} : tensor<?x4xf32>
  return %n : tensor<?x4xf32>
}

// -----

// Columns the ranks do not divide stay whole (unless an output: padded).
func.func @odd_columns(%x: tensor<?x4xf32>) -> tensor<?x5xf32> {
  %w = strata.constant dense<0.5> : tensor<4x5xf32>
  %g = strata.constant dense<1.0> : tensor<5xf32>
  // expected-remark @+1 {{a contraction of 5 output columns stays whole (2 ranks do not divide them)}}
  %y = strata.matmul %x, %w : (tensor<?x4xf32>, tensor<4x5xf32>) -> tensor<?x5xf32>
  %n = strata.rms_norm %y, %g {axis = 1 : i64} : (tensor<?x5xf32>, tensor<5xf32>) -> tensor<?x5xf32>
  return %n : tensor<?x5xf32>
}

// -----

// Three heads do not split over two ranks: an error, since every rank
// would hold every head's keys and values.
func.func @three_heads(%x: tensor<?x?x6xf32>) -> tensor<?x3x?x2xf32> {
  %wq = strata.constant dense<0.5> : tensor<6x6xf32>
  %s = strata.constant dense<[0, 0, 3, 2]> : tensor<4xi64>
  // expected-remark @+1 {{a contraction stays whole: a reshape that does not keep the split whole}}
  %q = strata.matmul %x, %wq : (tensor<?x?x6xf32>, tensor<6x6xf32>) -> tensor<?x?x6xf32>
  %qh = strata.reshape %q, %s : (tensor<?x?x6xf32>, tensor<4xi64>) -> tensor<?x?x3x2xf32>
  %qt = strata.transpose %qh, [0, 2, 1, 3] : tensor<?x?x3x2xf32> -> tensor<?x3x?x2xf32>
  // expected-error @+1 {{tensor parallelism over 2 ranks cannot split this attention: its 3 heads and 3 key/value heads must both be multiples of the rank count}}
  %o = strata.attention %qt, %qt, %qt {causal} : (tensor<?x3x?x2xf32>, tensor<?x3x?x2xf32>, tensor<?x3x?x2xf32>) -> tensor<?x3x?x2xf32>
  return %o : tensor<?x3x?x2xf32>
}
