// RUN: strata-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-test-mask-analysis))' \
// RUN:   -o /dev/null

// The band MaskAnalysis reads from each returned mask: row i sees key j iff
// j <= i + diagonal and (j >= i + left edge or j < sinks). A bool mask is
// read as keeping (true = visible) and as dropping (true = hidden) keys.

func.func @causal_comparison() -> tensor<1x1x4x4xi1> {
  %c0 = strata.constant dense<0> : tensor<i64>
  %c1 = strata.constant dense<1> : tensor<i64>
  %c4 = strata.constant dense<4> : tensor<i64>
  %shape_q = strata.constant dense<[1, 1, 4, 1]> : tensor<4xi64>
  %shape_k = strata.constant dense<[1, 1, 1, 4]> : tensor<4xi64>
  %pos = strata.range %c0, %c4, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  %q = strata.reshape %pos, %shape_q : (tensor<4xi64>, tensor<4xi64>) -> tensor<1x1x4x1xi64>
  %k = strata.reshape %pos, %shape_k : (tensor<4xi64>, tensor<4xi64>) -> tensor<1x1x1x4xi64>
  // expected-remark @below {{keep: rows 4, cols 4, diagonal 0, left edge none, window none, sinks 0}}
  // expected-remark @below {{drop: rows 4, cols 4, diagonal none, left edge 1, window none, sinks 0}}
  %m = strata.less_equal %k, %q : (tensor<1x1x1x4xi64>, tensor<1x1x4x1xi64>) -> tensor<1x1x4x4xi1>
  return %m : tensor<1x1x4x4xi1>
}

// -----

// Sliding window as HF spells it: causal and (q - k < 3).
func.func @sliding_window_comparisons() -> tensor<1x1x4x4xi1> {
  %c0 = strata.constant dense<0> : tensor<i64>
  %c1 = strata.constant dense<1> : tensor<i64>
  %c3 = strata.constant dense<3> : tensor<i64>
  %c4 = strata.constant dense<4> : tensor<i64>
  %shape_q = strata.constant dense<[1, 1, 4, 1]> : tensor<4xi64>
  %shape_k = strata.constant dense<[1, 1, 1, 4]> : tensor<4xi64>
  %pos = strata.range %c0, %c4, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  %q = strata.reshape %pos, %shape_q : (tensor<4xi64>, tensor<4xi64>) -> tensor<1x1x4x1xi64>
  %k = strata.reshape %pos, %shape_k : (tensor<4xi64>, tensor<4xi64>) -> tensor<1x1x1x4xi64>
  %causal = strata.less_equal %k, %q : (tensor<1x1x1x4xi64>, tensor<1x1x4x1xi64>) -> tensor<1x1x4x4xi1>
  %diff = strata.sub %q, %k : (tensor<1x1x4x1xi64>, tensor<1x1x1x4xi64>) -> tensor<1x1x4x4xi64>
  %near = strata.less %diff, %c3 : (tensor<1x1x4x4xi64>, tensor<i64>) -> tensor<1x1x4x4xi1>
  // expected-remark @below {{keep: rows 4, cols 4, diagonal 0, left edge -2, window 3, sinks 0}}
  // expected-remark @below {{drop: no band}}
  %m = strata.and %causal, %near : (tensor<1x1x4x4xi1>, tensor<1x1x4x4xi1>) -> tensor<1x1x4x4xi1>
  return %m : tensor<1x1x4x4xi1>
}

// -----

// The same window from two Trilus, and its hidden keys as an or of their
// complements.
func.func @sliding_window_trilu() -> (tensor<4x4xi1>, tensor<4x4xi1>) {
  %ones = strata.constant dense<true> : tensor<4x4xi1>
  %k0 = strata.constant dense<0> : tensor<i64>
  %km2 = strata.constant dense<-2> : tensor<i64>
  %tril = strata.trilu %ones, %k0 {upper = false} : (tensor<4x4xi1>, tensor<i64>) -> tensor<4x4xi1>
  %triu = strata.trilu %ones, %km2 : (tensor<4x4xi1>, tensor<i64>) -> tensor<4x4xi1>
  // expected-remark @below {{keep: rows 4, cols 4, diagonal 0, left edge -2, window 3, sinks 0}}
  // expected-remark @below {{drop: no band}}
  %keep = strata.and %tril, %triu : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  %after = strata.not %tril : tensor<4x4xi1>
  %before = strata.not %triu : tensor<4x4xi1>
  // expected-remark @below {{keep: no band}}
  // expected-remark @below {{drop: rows 4, cols 4, diagonal 0, left edge -2, window 3, sinks 0}}
  %drop = strata.or %after, %before : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  return %keep, %drop : tensor<4x4xi1>, tensor<4x4xi1>
}

// -----

// A block of keys every query sees in front of a window: sinks.
func.func @window_with_sinks() -> tensor<4x6xi1> {
  %ones = strata.constant dense<true> : tensor<4x4xi1>
  %block = strata.constant dense<true> : tensor<4x2xi1>
  %k0 = strata.constant dense<0> : tensor<i64>
  %km1 = strata.constant dense<-1> : tensor<i64>
  %tril = strata.trilu %ones, %k0 {upper = false} : (tensor<4x4xi1>, tensor<i64>) -> tensor<4x4xi1>
  %triu = strata.trilu %ones, %km1 : (tensor<4x4xi1>, tensor<i64>) -> tensor<4x4xi1>
  %window = strata.and %tril, %triu : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  // expected-remark @below {{keep: rows 4, cols 6, diagonal 2, left edge 1, window 2, sinks 2}}
  // expected-remark @below {{drop: no band}}
  %m = strata.concat %block, %window {axis = 1 : i64} : (tensor<4x2xi1>, tensor<4x4xi1>) -> tensor<4x6xi1>
  return %m : tensor<4x6xi1>
}

// -----

// An additive causal mask with a symbolic diagonal: queries one position
// ahead of the keys, over the key length of %k.
func.func @additive_symbolic(%k: tensor<1x4x?x16xf32>) -> tensor<1x1x?x?xf32> {
  %c0 = strata.constant dense<0> : tensor<i64>
  %c1 = strata.constant dense<1> : tensor<i64>
  %c2 = strata.constant dense<2> : tensor<i64>
  %shape_q = strata.constant dense<[1, 1, -1, 1]> : tensor<4xi64>
  %shape_k = strata.constant dense<[1, 1, 1, -1]> : tensor<4xi64>
  %zero = strata.constant dense<0.0> : tensor<f32>
  %lowest = strata.constant dense<-3.40282347E+38> : tensor<f32>
  %ks = strata.shape %k : tensor<1x4x?x16xf32> -> tensor<4xi64>
  %n = strata.gather %ks, %c2 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %pos = strata.range %c0, %n, %c1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %ahead = strata.add %pos, %c1 : (tensor<?xi64>, tensor<i64>) -> tensor<?xi64>
  %qcol = strata.reshape %ahead, %shape_q : (tensor<?xi64>, tensor<4xi64>) -> tensor<1x1x?x1xi64>
  %krow = strata.reshape %pos, %shape_k : (tensor<?xi64>, tensor<4xi64>) -> tensor<1x1x1x?xi64>
  %causal = strata.less_equal %krow, %qcol : (tensor<1x1x1x?xi64>, tensor<1x1x?x1xi64>) -> tensor<1x1x?x?xi1>
  // expected-remark @below {{additive: rows %arg0[2], cols %arg0[2], diagonal 1, left edge none, window none, sinks 0}}
  %m = strata.where %causal, %zero, %lowest : (tensor<1x1x?x?xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x?x?xf32>
  return %m : tensor<1x1x?x?xf32>
}

// -----

// A causal mask and a padding mask: no band as a whole, a band split off.
func.func @split_padding(%pad: tensor<1x1x1x4xi1>) -> tensor<1x1x4x4xi1> {
  %ones = strata.constant dense<true> : tensor<1x1x4x4xi1>
  %k0 = strata.constant dense<0> : tensor<i64>
  %tril = strata.trilu %ones, %k0 {upper = false} : (tensor<1x1x4x4xi1>, tensor<i64>) -> tensor<1x1x4x4xi1>
  // expected-remark @below {{keep: no band}}
  // expected-remark @below {{keep split: rows 4, cols 4, diagonal 0, left edge none, window none, sinks 0, rest from an argument}}
  // expected-remark @below {{drop: no band}}
  %m = strata.and %tril, %pad : (tensor<1x1x4x4xi1>, tensor<1x1x1x4xi1>) -> tensor<1x1x4x4xi1>
  return %m : tensor<1x1x4x4xi1>
}
