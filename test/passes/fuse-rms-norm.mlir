// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-rms-norm))' | FileCheck %s
// RUN: strata-opt %s --split-input-file --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-rms-norm))' \
// RUN:   | FileCheck %s --check-prefix=LOC
// RUN: strata-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-rms-norm{report-missed=true}))' \
// RUN:   -o /dev/null

// torch.onnx (Llama): Pow(x, 2) -> ReduceMean -> Add(eps) -> Sqrt -> Div(1, .)
// -> Mul(x) -> Mul(weight), the weight first.
// CHECK-LABEL: func.func @fuse_rms_norm_pow_div_one
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x8x64xf32>, %[[W:.+]]: tensor<64xf32>)
//       CHECK:   %[[Y:.+]] = strata.rms_norm %[[X]], %[[W]] {axis = 2 : i64}
//   CHECK-NOT:   strata.reduce_mean
//   CHECK-NOT:   strata.sqrt
//       CHECK:   return %[[Y]]
// LOC-LABEL: func.func @fuse_rms_norm_pow_div_one
//       LOC:   strata.rms_norm {{.*}} loc(fused["pow", "mean", "add_eps", "sqrt", "div_one", "mul_x", "mul_w"])
func.func @fuse_rms_norm_pow_div_one(%x: tensor<2x8x64xf32>, %w: tensor<64xf32>) -> tensor<2x8x64xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-6> : tensor<f32>
  %0 = strata.pow %x, %two : (tensor<2x8x64xf32>, tensor<f32>) -> tensor<2x8x64xf32> loc("pow")
  %1 = strata.reduce_mean %0 {axes = array<i64: 2>, keepdims = true} : tensor<2x8x64xf32> -> tensor<2x8x1xf32> loc("mean")
  %2 = strata.add %1, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32> loc("add_eps")
  %3 = strata.sqrt %2 : tensor<2x8x1xf32> loc("sqrt")
  %4 = strata.div %one, %3 : (tensor<f32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32> loc("div_one")
  %5 = strata.mul %x, %4 : (tensor<2x8x64xf32>, tensor<2x8x1xf32>) -> tensor<2x8x64xf32> loc("mul_x")
  %6 = strata.mul %w, %5 : (tensor<64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32> loc("mul_w")
  return %6 : tensor<2x8x64xf32>
}

// -----

// Mul(x, x) square, Reciprocal(Sqrt), operands swapped, eps first, negative
// axis, epsilon 1e-5.
// CHECK-LABEL: func.func @fuse_rms_norm_mul_square_reciprocal_swapped
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x8x64xf32>, %[[W:.+]]: tensor<64xf32>)
//       CHECK:   %[[Y:.+]] = strata.rms_norm %[[X]], %[[W]] {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
//       CHECK:   return %[[Y]]
func.func @fuse_rms_norm_mul_square_reciprocal_swapped(%x: tensor<2x8x64xf32>, %w: tensor<64xf32>) -> tensor<2x8x64xf32> {
  %eps = strata.constant dense<1.0e-5> : tensor<1xf32>
  %0 = strata.mul %x, %x : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %1 = strata.reduce_mean %0 {axes = array<i64: -1>, keepdims = true} : tensor<2x8x64xf32> -> tensor<2x8x1xf32>
  %2 = strata.add %eps, %1 : (tensor<1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %3 = strata.sqrt %2 : tensor<2x8x1xf32>
  %4 = strata.reciprocal %3 : tensor<2x8x1xf32>
  %5 = strata.mul %4, %x : (tensor<2x8x1xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %6 = strata.mul %5, %w : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  return %6 : tensor<2x8x64xf32>
}

// -----

// Div(x, Sqrt(...)).
// CHECK-LABEL: func.func @fuse_rms_norm_div
//  CHECK-SAME:   (%[[X:.+]]: tensor<4x32xf32>, %[[W:.+]]: tensor<32xf32>)
//       CHECK:   %[[Y:.+]] = strata.rms_norm %[[X]], %[[W]] {axis = 1 : i64}
//   CHECK-NOT:   strata.div
//       CHECK:   return %[[Y]]
func.func @fuse_rms_norm_div(%x: tensor<4x32xf32>, %w: tensor<32xf32>) -> tensor<4x32xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-6> : tensor<f32>
  %0 = strata.pow %x, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %1 = strata.reduce_mean %0 {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %2 = strata.add %1, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %3 = strata.sqrt %2 : tensor<4x1xf32>
  %4 = strata.div %x, %3 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %5 = strata.mul %4, %w : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  return %5 : tensor<4x32xf32>
}

// -----

// Rsqrt, no weight: the fused op gets a ones weight.
// CHECK-LABEL: func.func @fuse_rms_norm_rsqrt_no_weight
//  CHECK-SAME:   (%[[X:.+]]: tensor<4x32xf32>)
//       CHECK:   %[[ONES:.+]] = strata.constant dense<1.000000e+00> : tensor<32xf32>
//       CHECK:   %[[Y:.+]] = strata.rms_norm %[[X]], %[[ONES]] {axis = 1 : i64}
//       CHECK:   return %[[Y]]
func.func @fuse_rms_norm_rsqrt_no_weight(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-6> : tensor<f32>
  %0 = strata.pow %x, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %1 = strata.reduce_mean %0 {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %2 = strata.add %1, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %3 = strata.rsqrt %2 : tensor<4x1xf32>
  %4 = strata.mul %x, %3 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  return %4 : tensor<4x32xf32>
}

// -----

// HF LlamaRMSNorm in fp16: cast to f32, normalize, cast back, weight first.
// CHECK-LABEL: func.func @fuse_rms_norm_f16_cast_island
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x64xf16>, %[[W:.+]]: tensor<64xf16>)
//       CHECK:   %[[Y:.+]] = strata.rms_norm %[[X]], %[[W]] {axis = 1 : i64}
//   CHECK-NOT:   strata.cast
//       CHECK:   return %[[Y]]
func.func @fuse_rms_norm_f16_cast_island(%x: tensor<2x64xf16>, %w: tensor<64xf16>) -> tensor<2x64xf16> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-6> : tensor<f32>
  %0 = strata.cast %x : tensor<2x64xf16> -> tensor<2x64xf32>
  %1 = strata.pow %0, %two : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %2 = strata.reduce_mean %1 {axes = array<i64: 1>, keepdims = true} : tensor<2x64xf32> -> tensor<2x1xf32>
  %3 = strata.add %2, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %4 = strata.sqrt %3 : tensor<2x1xf32>
  %5 = strata.div %one, %4 : (tensor<f32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %6 = strata.mul %0, %5 : (tensor<2x64xf32>, tensor<2x1xf32>) -> tensor<2x64xf32>
  %7 = strata.cast %6 : tensor<2x64xf32> -> tensor<2x64xf16>
  %8 = strata.mul %w, %7 : (tensor<64xf16>, tensor<2x64xf16>) -> tensor<2x64xf16>
  return %8 : tensor<2x64xf16>
}

// -----

// The square of 'x - mean(x)' is a layer norm's variance, not an RMS norm.
// CHECK-LABEL: func.func @negative_fuse_rms_norm_layer_norm_variance
//   CHECK-NOT:   strata.rms_norm
func.func @negative_fuse_rms_norm_layer_norm_variance(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-5> : tensor<f32>
  %0 = strata.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %1 = strata.sub %x, %0 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  %2 = strata.pow %1, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  // expected-remark @+1 {{reduce_mean did not fuse into strata.rms_norm: the squared value is 'x - mean(x)', a layer norm}}
  %3 = strata.reduce_mean %2 {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %4 = strata.add %3, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %5 = strata.sqrt %4 : tensor<4x1xf32>
  %6 = strata.div %1, %5 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  return %6 : tensor<4x32xf32>
}

// -----

// The mean over a leading axis.
// CHECK-LABEL: func.func @negative_fuse_rms_norm_leading_axis
//   CHECK-NOT:   strata.rms_norm
func.func @negative_fuse_rms_norm_leading_axis(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-6> : tensor<f32>
  %0 = strata.pow %x, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  // expected-remark @+1 {{reduce_mean did not fuse into strata.rms_norm: the mean is not over trailing contiguous axes with keepdims}}
  %1 = strata.reduce_mean %0 {axes = array<i64: 0>, keepdims = true} : tensor<4x32xf32> -> tensor<1x32xf32>
  %2 = strata.add %1, %eps : (tensor<1x32xf32>, tensor<f32>) -> tensor<1x32xf32>
  %3 = strata.rsqrt %2 : tensor<1x32xf32>
  %4 = strata.mul %x, %3 : (tensor<4x32xf32>, tensor<1x32xf32>) -> tensor<4x32xf32>
  return %4 : tensor<4x32xf32>
}

// -----

// An epsilon that is not a constant.
// CHECK-LABEL: func.func @negative_fuse_rms_norm_eps_not_constant
//   CHECK-NOT:   strata.rms_norm
func.func @negative_fuse_rms_norm_eps_not_constant(%x: tensor<4x32xf32>, %eps: tensor<f32>) -> tensor<4x32xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %0 = strata.pow %x, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  // expected-remark @+1 {{reduce_mean did not fuse into strata.rms_norm: the mean of squares is not followed by '+ epsilon' with a constant non-negative scalar epsilon}}
  %1 = strata.reduce_mean %0 {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %2 = strata.add %1, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %3 = strata.rsqrt %2 : tensor<4x1xf32>
  %4 = strata.mul %x, %3 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  return %4 : tensor<4x32xf32>
}

// -----

// The statistics of x normalize a different value y.
// CHECK-LABEL: func.func @negative_fuse_rms_norm_other_value
//   CHECK-NOT:   strata.rms_norm
func.func @negative_fuse_rms_norm_other_value(%x: tensor<4x32xf32>, %y: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-6> : tensor<f32>
  %0 = strata.pow %x, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  // expected-remark @+1 {{reduce_mean did not fuse into strata.rms_norm: 'mean(x^2) + epsilon' is not turned into x / sqrt(...) or x * rsqrt(...)}}
  %1 = strata.reduce_mean %0 {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %2 = strata.add %1, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %3 = strata.rsqrt %2 : tensor<4x1xf32>
  %4 = strata.mul %y, %3 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  return %4 : tensor<4x32xf32>
}

// -----

// The mean of squares is also returned.
// CHECK-LABEL: func.func @negative_fuse_rms_norm_variance_reused
//   CHECK-NOT:   strata.rms_norm
func.func @negative_fuse_rms_norm_variance_reused(%x: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-6> : tensor<f32>
  %0 = strata.pow %x, %two : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  // expected-remark @+1 {{reduce_mean did not fuse into strata.rms_norm: an intermediate value of the chain has other uses}}
  %1 = strata.reduce_mean %0 {axes = array<i64: 1>, keepdims = true} : tensor<4x32xf32> -> tensor<4x1xf32>
  %2 = strata.add %1, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %3 = strata.rsqrt %2 : tensor<4x1xf32>
  %4 = strata.mul %x, %3 : (tensor<4x32xf32>, tensor<4x1xf32>) -> tensor<4x32xf32>
  return %4, %0 : tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// An fp32 island that is never cast back: the norm runs on the widened value.
// CHECK-LABEL: func.func @fuse_rms_norm_island_not_cast_back
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x64xf16>)
//       CHECK:   %[[C:.+]] = strata.cast %[[X]]
//       CHECK:   %[[Y:.+]] = strata.rms_norm %[[C]], %{{.+}} {axis = 1 : i64}
//       CHECK:   return %[[Y]]
func.func @fuse_rms_norm_island_not_cast_back(%x: tensor<2x64xf16>) -> tensor<2x64xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %eps = strata.constant dense<1.0e-6> : tensor<f32>
  %0 = strata.cast %x : tensor<2x64xf16> -> tensor<2x64xf32>
  %1 = strata.pow %0, %two : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
  %2 = strata.reduce_mean %1 {axes = array<i64: 1>, keepdims = true} : tensor<2x64xf32> -> tensor<2x1xf32>
  %3 = strata.add %2, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %4 = strata.rsqrt %3 : tensor<2x1xf32>
  %5 = strata.mul %0, %4 : (tensor<2x64xf32>, tensor<2x1xf32>) -> tensor<2x64xf32>
  return %5 : tensor<2x64xf32>
}
