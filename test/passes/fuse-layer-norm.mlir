// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-layer-norm))' | FileCheck %s
// RUN: strata-opt %s --split-input-file --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-layer-norm))' \
// RUN:   | FileCheck %s --check-prefix=LOC
// RUN: strata-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-layer-norm{report-missed=true}))' \
// RUN:   -o /dev/null

// torch.onnx (opset < 17): ReduceMean -> Sub -> Pow(2) -> ReduceMean -> Add(eps)
// -> Sqrt -> Div -> Mul(weight) -> Add(bias).
// CHECK-LABEL: func.func @fuse_layer_norm_torch
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x8x64xf32>, %[[G:.+]]: tensor<64xf32>, %[[B:.+]]: tensor<64xf32>)
//       CHECK:   %[[Y:.+]] = strata.layer_norm %[[X]], %[[G]], %[[B]] {axis = 2 : i64}
//   CHECK-NOT:   strata.reduce_mean
//   CHECK-NOT:   strata.sqrt
//       CHECK:   return %[[Y]]
// LOC-LABEL: func.func @fuse_layer_norm_torch
//       LOC:   strata.layer_norm {{.*}} loc(fused["mean", "sub", "pow", "var", "add_eps", "sqrt", "div", "mul_scale", "add_bias"])
func.func @fuse_layer_norm_torch(%x: tensor<2x8x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<2x8x64xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-5> : tensor<f32>
  %0 = strata.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : tensor<2x8x64xf32> -> tensor<2x8x1xf32> loc("mean")
  %1 = strata.sub %x, %0 : (tensor<2x8x64xf32>, tensor<2x8x1xf32>) -> tensor<2x8x64xf32> loc("sub")
  %2 = strata.pow %1, %two : (tensor<2x8x64xf32>, tensor<f32>) -> tensor<2x8x64xf32> loc("pow")
  %3 = strata.reduce_mean %2 {axes = array<i64: 2>, keepdims = true} : tensor<2x8x64xf32> -> tensor<2x8x1xf32> loc("var")
  %4 = strata.add %3, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32> loc("add_eps")
  %5 = strata.sqrt %4 : tensor<2x8x1xf32> loc("sqrt")
  %6 = strata.div %1, %5 : (tensor<2x8x64xf32>, tensor<2x8x1xf32>) -> tensor<2x8x64xf32> loc("div")
  %7 = strata.mul %6, %g : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32> loc("mul_scale")
  %8 = strata.add %7, %b : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32> loc("add_bias")
  return %8 : tensor<2x8x64xf32>
}

// -----

// Older torch duplicated the Sub; Keras squares with Mul(d, d) and uses
// Reciprocal. Every commutative op has its operands swapped, eps is first and
// the axis is negative (not yet canonicalized).
// CHECK-LABEL: func.func @fuse_layer_norm_two_subs_mul_square_reciprocal_swapped
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x8x64xf32>, %[[G:.+]]: tensor<64xf32>, %[[B:.+]]: tensor<64xf32>)
//       CHECK:   %[[Y:.+]] = strata.layer_norm %[[X]], %[[G]], %[[B]] {axis = 2 : i64, epsilon = 9.99999996E-13 : f32}
//   CHECK-NOT:   strata.sub
//       CHECK:   return %[[Y]]
func.func @fuse_layer_norm_two_subs_mul_square_reciprocal_swapped(%x: tensor<2x8x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<2x8x64xf32> {
  %eps = strata.constant dense<1.0e-12> : tensor<1xf32>
  %0 = strata.reduce_mean %x {axes = array<i64: -1>, keepdims = true} : tensor<2x8x64xf32> -> tensor<2x8x1xf32>
  %1 = strata.sub %x, %0 : (tensor<2x8x64xf32>, tensor<2x8x1xf32>) -> tensor<2x8x64xf32>
  %2 = strata.sub %x, %0 : (tensor<2x8x64xf32>, tensor<2x8x1xf32>) -> tensor<2x8x64xf32>
  %3 = strata.mul %2, %2 : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %4 = strata.reduce_mean %3 {axes = array<i64: -1>, keepdims = true} : tensor<2x8x64xf32> -> tensor<2x8x1xf32>
  %5 = strata.add %eps, %4 : (tensor<1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %6 = strata.sqrt %5 : tensor<2x8x1xf32>
  %7 = strata.reciprocal %6 : tensor<2x8x1xf32>
  %8 = strata.mul %7, %1 : (tensor<2x8x1xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %9 = strata.mul %g, %8 : (tensor<64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %10 = strata.add %b, %9 : (tensor<64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  return %10 : tensor<2x8x64xf32>
}

// -----

// rsqrt spelling, scale but no bias.
// CHECK-LABEL: func.func @fuse_layer_norm_rsqrt_no_bias
//  CHECK-SAME:   (%[[X:.+]]: tensor<4x32xf32>, %[[G:.+]]: tensor<32xf32>)
//       CHECK:   %[[Y:.+]] = strata.layer_norm %[[X]], %[[G]] {axis = 1 : i64, epsilon = 9.99999997E-7 : f32}
//   CHECK-NOT:   strata.rsqrt
//       CHECK:   return %[[Y]]
func.func @fuse_layer_norm_rsqrt_no_bias(%x: tensor<4x32xf32>, %g: tensor<32xf32>) -> tensor<4x32xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-6> : tensor<f32>
  %0 = strata.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %1 = strata.sub %x, %0 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %2 = strata.pow %1, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %3 = strata.reduce_mean %2 {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %4 = strata.add %3, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %5 = strata.rsqrt %4 : tensor<4x1xf32>
  %6 = strata.mul %1, %5 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %7 = strata.mul %6, %g : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %7 : tensor<4x32xf32>
}

// -----

// Div(1, Sqrt) then Mul, normalized over the last two dims.
// CHECK-LABEL: func.func @fuse_layer_norm_div_one_two_axes
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x8x64xf32>, %[[G:.+]]: tensor<8x64xf32>, %[[B:.+]]: tensor<8x64xf32>)
//       CHECK:   %[[Y:.+]] = strata.layer_norm %[[X]], %[[G]], %[[B]] {axis = 1 : i64
//       CHECK:   return %[[Y]]
func.func @fuse_layer_norm_div_one_two_axes(%x: tensor<2x8x64xf32>, %g: tensor<8x64xf32>, %b: tensor<8x64xf32>) -> tensor<2x8x64xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-5> : tensor<f32>
  %0 = strata.reduce_mean %x {axes = array<i64: 1, 2>, keepdims = true} : tensor<2x8x64xf32> -> tensor<2x1x1xf32>
  %1 = strata.sub %x, %0 : (tensor<2x8x64xf32>, tensor<2x1x1xf32>) -> tensor<2x8x64xf32>
  %2 = strata.pow %1, %two : (tensor<2x8x64xf32>, tensor<f32>) -> tensor<2x8x64xf32>
  %3 = strata.reduce_mean %2 {axes = array<i64: 1, 2>, keepdims = true} : tensor<2x8x64xf32> -> tensor<2x1x1xf32>
  %4 = strata.add %3, %eps : (tensor<2x1x1xf32>, tensor<f32>) -> tensor<2x1x1xf32>
  %5 = strata.sqrt %4 : tensor<2x1x1xf32>
  %6 = strata.div %one, %5 : (tensor<f32>, tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %7 = strata.mul %1, %6 : (tensor<2x8x64xf32>, tensor<2x1x1xf32>) -> tensor<2x8x64xf32>
  %8 = strata.mul %7, %g : (tensor<2x8x64xf32>, tensor<8x64xf32>) -> tensor<2x8x64xf32>
  %9 = strata.add %8, %b : (tensor<2x8x64xf32>, tensor<8x64xf32>) -> tensor<2x8x64xf32>
  return %9 : tensor<2x8x64xf32>
}

// -----

// torch fp16 export: the centered value is cast to f32 for the variance and
// the quotient, and the quotient is cast back before the scale.
// CHECK-LABEL: func.func @fuse_layer_norm_f16_cast_island
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x64xf16>, %[[G:.+]]: tensor<64xf16>, %[[B:.+]]: tensor<64xf16>)
//       CHECK:   %[[Y:.+]] = strata.layer_norm %[[X]], %[[G]], %[[B]] {axis = 1 : i64
//   CHECK-NOT:   strata.cast
//       CHECK:   return %[[Y]]
func.func @fuse_layer_norm_f16_cast_island(%x: tensor<2x64xf16>, %g: tensor<64xf16>, %b: tensor<64xf16>) -> tensor<2x64xf16> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-5> : tensor<f32>
  %0 = strata.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<2x64xf16> -> tensor<2x1xf16>
  %1 = strata.sub %x, %0 : (tensor<2x64xf16>, tensor<2x1xf16>) -> tensor<2x64xf16>
  %2 = strata.cast %1 : tensor<2x64xf16> -> tensor<2x64xf32>
  %3 = strata.pow %2, %two : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %4 = strata.reduce_mean %3 {axes = array<i64: 1>, keepdims = true} : tensor<2x64xf32> -> tensor<2x1xf32>
  %5 = strata.add %4, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %6 = strata.sqrt %5 : tensor<2x1xf32>
  %7 = strata.div %2, %6 : (tensor<2x64xf32>, tensor<2x1xf32>) -> tensor<2x64xf32>
  %8 = strata.cast %7 : tensor<2x64xf32> -> tensor<2x64xf16>
  %9 = strata.mul %8, %g : (tensor<2x64xf16>, tensor<64xf16>) -> tensor<2x64xf16>
  %10 = strata.add %9, %b : (tensor<2x64xf16>, tensor<64xf16>) -> tensor<2x64xf16>
  return %10 : tensor<2x64xf16>
}

// -----

// Without a scale multiply, the fused op gets a ones scale.
// CHECK-LABEL: func.func @fuse_layer_norm_no_scale
//  CHECK-SAME:   (%[[X:.+]]: tensor<4x32xf32>)
//       CHECK:   %[[ONES:.+]] = strata.constant dense<1.000000e+00> : tensor<32xf32>
//       CHECK:   %[[Y:.+]] = strata.layer_norm %[[X]], %[[ONES]] {axis = 1 : i64
//       CHECK:   return %[[Y]]
func.func @fuse_layer_norm_no_scale(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-5> : tensor<f32>
  %0 = strata.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %1 = strata.sub %x, %0 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %2 = strata.pow %1, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %3 = strata.reduce_mean %2 {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %4 = strata.add %3, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %5 = strata.sqrt %4 : tensor<4x1xf32>
  %6 = strata.div %1, %5 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  return %6 : tensor<4x32xf32>
}

// -----

// A scale that broadcasts along a non-normalized dim is not a layer-norm
// scale: the norm fuses with a ones scale and the multiply stays.
// CHECK-LABEL: func.func @fuse_layer_norm_scale_wrong_shape_kept
//  CHECK-SAME:   (%[[X:.+]]: tensor<4x32xf32>, %[[S:.+]]: tensor<4x1xf32>)
//       CHECK:   %[[N:.+]] = strata.layer_norm %[[X]]
//       CHECK:   %[[Y:.+]] = strata.mul %[[N]], %[[S]]
//       CHECK:   return %[[Y]]
func.func @fuse_layer_norm_scale_wrong_shape_kept(%x: tensor<4x32xf32>, %s: tensor<4x1xf32>) -> tensor<4x32xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-5> : tensor<f32>
  %0 = strata.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %1 = strata.sub %x, %0 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %2 = strata.pow %1, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %3 = strata.reduce_mean %2 {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %4 = strata.add %3, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %5 = strata.sqrt %4 : tensor<4x1xf32>
  %6 = strata.div %1, %5 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %7 = strata.mul %6, %s : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  return %7 : tensor<4x32xf32>
}

// -----

// The mean over a leading axis is not a layer norm over trailing dims.
// CHECK-LABEL: func.func @negative_fuse_layer_norm_leading_axis
//   CHECK-NOT:   strata.layer_norm
func.func @negative_fuse_layer_norm_leading_axis(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-5> : tensor<f32>
  // expected-remark @+1 {{reduce_mean did not fuse into strata.layer_norm: the mean is not over trailing contiguous axes with keepdims}}
  %0 = strata.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : tensor<4x32xf32> -> tensor<1x32xf32>
  %1 = strata.sub %x, %0 : (tensor<4x32xf32>, tensor<1x32xf32>) -> tensor<4x32xf32>
  %2 = strata.pow %1, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %3 = strata.reduce_mean %2 {axes = array<i64: 0>, keepdims = true} : tensor<4x32xf32> -> tensor<1x32xf32>
  %4 = strata.add %3, %eps : (tensor<1x32xf32>, tensor<f32>) -> tensor<1x32xf32>
  %5 = strata.sqrt %4 : tensor<1x32xf32>
  %6 = strata.div %1, %5 : (tensor<4x32xf32>, tensor<1x32xf32>) -> tensor<4x32xf32>
  return %6 : tensor<4x32xf32>
}

// -----

// pow(d, 3) is not a variance.
// CHECK-LABEL: func.func @negative_fuse_layer_norm_cube
//   CHECK-NOT:   strata.layer_norm
func.func @negative_fuse_layer_norm_cube(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %three = strata.constant dense<3.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-5> : tensor<f32>
  // expected-remark @+1 {{reduce_mean did not fuse into strata.layer_norm: 'x - mean' is not squared by mul(d, d) or pow(d, 2)}}
  %0 = strata.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %1 = strata.sub %x, %0 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %2 = strata.pow %1, %three : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %3 = strata.reduce_mean %2 {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %4 = strata.add %3, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %5 = strata.sqrt %4 : tensor<4x1xf32>
  %6 = strata.div %1, %5 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  return %6 : tensor<4x32xf32>
}

// -----

// The variance is averaged over more axes than the mean.
// CHECK-LABEL: func.func @negative_fuse_layer_norm_variance_axes_differ
//   CHECK-NOT:   strata.layer_norm
func.func @negative_fuse_layer_norm_variance_axes_differ(%x: tensor<2x8x64xf32>) -> tensor<2x8x64xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-5> : tensor<f32>
  // expected-remark @+1 {{reduce_mean did not fuse into strata.layer_norm: the square is not averaged over the same axes}}
  %0 = strata.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : tensor<2x8x64xf32> -> tensor<2x8x1xf32>
  %1 = strata.sub %x, %0 : (tensor<2x8x64xf32>, tensor<2x8x1xf32>) -> tensor<2x8x64xf32>
  %2 = strata.pow %1, %two : (tensor<2x8x64xf32>, tensor<f32>) -> tensor<2x8x64xf32>
  %3 = strata.reduce_mean %2 {axes = array<i64: 1, 2>, keepdims = true} : tensor<2x8x64xf32> -> tensor<2x1x1xf32>
  %4 = strata.add %3, %eps : (tensor<2x1x1xf32>, tensor<f32>) -> tensor<2x1x1xf32>
  %5 = strata.sqrt %4 : tensor<2x1x1xf32>
  %6 = strata.div %1, %5 : (tensor<2x8x64xf32>, tensor<2x1x1xf32>) -> tensor<2x8x64xf32>
  return %6 : tensor<2x8x64xf32>
}

// -----

// An epsilon that is not a constant cannot become the 'epsilon' attribute.
// CHECK-LABEL: func.func @negative_fuse_layer_norm_eps_not_constant
//   CHECK-NOT:   strata.layer_norm
func.func @negative_fuse_layer_norm_eps_not_constant(%x: tensor<4x32xf32>, %eps: tensor<f32>) -> tensor<4x32xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  // expected-remark @+1 {{reduce_mean did not fuse into strata.layer_norm: the variance is not followed by '+ epsilon' with a constant non-negative scalar epsilon}}
  %0 = strata.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %1 = strata.sub %x, %0 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %2 = strata.pow %1, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %3 = strata.reduce_mean %2 {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %4 = strata.add %3, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %5 = strata.sqrt %4 : tensor<4x1xf32>
  %6 = strata.div %1, %5 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  return %6 : tensor<4x32xf32>
}

// -----

// Dividing by the variance instead of the standard deviation.
// CHECK-LABEL: func.func @negative_fuse_layer_norm_missing_sqrt
//   CHECK-NOT:   strata.layer_norm
func.func @negative_fuse_layer_norm_missing_sqrt(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-5> : tensor<f32>
  // expected-remark @+1 {{reduce_mean did not fuse into strata.layer_norm: 'variance + epsilon' is not turned into (x - mean) / sqrt(...) or (x - mean) * rsqrt(...)}}
  %0 = strata.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %1 = strata.sub %x, %0 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %2 = strata.pow %1, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %3 = strata.reduce_mean %2 {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %4 = strata.add %3, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %5 = strata.div %1, %4 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  return %5 : tensor<4x32xf32>
}

// -----

// 'x - mean' is also returned, so the chain cannot be removed.
// CHECK-LABEL: func.func @negative_fuse_layer_norm_centered_reused
//   CHECK-NOT:   strata.layer_norm
func.func @negative_fuse_layer_norm_centered_reused(%x: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-5> : tensor<f32>
  // expected-remark @+1 {{reduce_mean did not fuse into strata.layer_norm: an intermediate value of the chain has other uses}}
  %0 = strata.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %1 = strata.sub %x, %0 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %2 = strata.pow %1, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %3 = strata.reduce_mean %2 {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %4 = strata.add %3, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %5 = strata.sqrt %4 : tensor<4x1xf32>
  %6 = strata.div %1, %5 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  return %6, %1 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// The mean is also used on its own.
// CHECK-LABEL: func.func @negative_fuse_layer_norm_mean_reused
//   CHECK-NOT:   strata.layer_norm
func.func @negative_fuse_layer_norm_mean_reused(%x: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x1xf32>) {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-5> : tensor<f32>
  // expected-remark @+1 {{reduce_mean did not fuse into strata.layer_norm: the mean has users other than one or two 'x - mean'}}
  %0 = strata.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %1 = strata.sub %x, %0 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %2 = strata.pow %1, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %3 = strata.reduce_mean %2 {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %4 = strata.add %3, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %5 = strata.sqrt %4 : tensor<4x1xf32>
  %6 = strata.div %1, %5 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  return %6, %0 : tensor<4x32xf32>, tensor<4x1xf32>
}
