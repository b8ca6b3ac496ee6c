// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-gelu))' | FileCheck %s
// RUN: strata-opt %s --split-input-file --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-gelu))' \
// RUN:   | FileCheck %s --check-prefix=LOC
// RUN: strata-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-gelu{report-missed=true}))' \
// RUN:   -o /dev/null

// torch.onnx's spelling: Div(x, 1.4142) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5).
// CHECK-LABEL: func.func @fuse_gelu_erf
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x64xf32>)
//       CHECK:   %[[Y:.+]] = strata.gelu %[[X]] : tensor<2x64xf32>
//   CHECK-NOT:   strata.erf
//       CHECK:   return %[[Y]]
// LOC-LABEL: func.func @fuse_gelu_erf
//       LOC:   strata.gelu {{.*}} loc(fused["div", "erf", "add", "mul_x", "mul_half"])
func.func @fuse_gelu_erf(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %sqrt2 = strata.constant dense<1.41421354> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<f32>
  %half = strata.constant dense<0.5> : tensor<f32>
  %0 = strata.div %x, %sqrt2 : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32> loc("div")
  %1 = strata.erf %0 : tensor<2x64xf32> loc("erf")
  %2 = strata.add %1, %one : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32> loc("add")
  %3 = strata.mul %x, %2 : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32> loc("mul_x")
  %4 = strata.mul %3, %half : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32> loc("mul_half")
  return %4 : tensor<2x64xf32>
}

// -----

// TF spelling: Mul(x, 0.7071), constants first, 0.5 applied to x first.
// CHECK-LABEL: func.func @fuse_gelu_erf_mul_inv_sqrt2_half_first
//  CHECK-SAME:   (%[[X:.+]]: tensor<4x8xf32>)
//       CHECK:   %[[Y:.+]] = strata.gelu %[[X]]
//       CHECK:   return %[[Y]]
func.func @fuse_gelu_erf_mul_inv_sqrt2_half_first(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %isq = strata.constant dense<0.707106769> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<1xf32>
  %half = strata.constant dense<0.5> : tensor<f32>
  %0 = strata.mul %isq, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = strata.erf %0 : tensor<4x8xf32>
  %2 = strata.add %one, %1 : (tensor<1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = strata.mul %half, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = strata.mul %2, %3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}

// -----

// Keras spelling: divide by Sqrt(2); 0.5 applied to (1 + erf) first.
// CHECK-LABEL: func.func @fuse_gelu_erf_sqrt_divisor_half_on_sum
//  CHECK-SAME:   (%[[X:.+]]: tensor<8xf32>)
//       CHECK:   %[[Y:.+]] = strata.gelu %[[X]]
//       CHECK:   return %[[Y]]
func.func @fuse_gelu_erf_sqrt_divisor_half_on_sum(%x: tensor<8xf32>) -> tensor<8xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<f32>
  %half = strata.constant dense<0.5> : tensor<f32>
  %s = strata.sqrt %two : tensor<f32>
  %0 = strata.div %x, %s : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = strata.erf %0 : tensor<8xf32>
  %2 = strata.add %1, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = strata.mul %half, %2 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %4 = strata.mul %x, %3 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %4 : tensor<8xf32>
}

// -----

// Constants rounded differently by another exporter still match (f16
// chains within 1e-4 of GELU).
// CHECK-LABEL: func.func @fuse_gelu_erf_f16_rounded_constants
//       CHECK:   strata.gelu %{{.*}} : tensor<16xf16>
func.func @fuse_gelu_erf_f16_rounded_constants(%x: tensor<16xf16>) -> tensor<16xf16> {
  %sqrt2 = strata.constant dense<1.414> : tensor<f16>
  %one = strata.constant dense<1.0> : tensor<f16>
  %half = strata.constant dense<0.5> : tensor<f16>
  %0 = strata.div %x, %sqrt2 : (tensor<16xf16>, tensor<f16>) -> tensor<16xf16>
  %1 = strata.erf %0 : tensor<16xf16>
  %2 = strata.add %1, %one : (tensor<16xf16>, tensor<f16>) -> tensor<16xf16>
  %3 = strata.mul %x, %2 : (tensor<16xf16>, tensor<16xf16>) -> tensor<16xf16>
  %4 = strata.mul %3, %half : (tensor<16xf16>, tensor<f16>) -> tensor<16xf16>
  return %4 : tensor<16xf16>
}

// -----

// Without `+ 1` and `* 0.5` this is x * erf(x / sqrt(2)), which is not GELU.
// CHECK-LABEL: func.func @negative_fuse_gelu_missing_add
//   CHECK-NOT:   strata.gelu
func.func @negative_fuse_gelu_missing_add(%x: tensor<4xf32>) -> tensor<4xf32> {
  %sqrt2 = strata.constant dense<1.41421354> : tensor<f32>
  %0 = strata.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // expected-remark @+1 {{erf did not fuse into strata.gelu: no chain through it computes gelu, gelu-tanh or silu (nearest: silu, error 1.0e+00)}}
  %1 = strata.erf %0 : tensor<4xf32>
  %2 = strata.mul %x, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// Dividing by 2 instead of sqrt(2) changes the function.
// CHECK-LABEL: func.func @negative_fuse_gelu_wrong_scale
//   CHECK-NOT:   strata.gelu
func.func @negative_fuse_gelu_wrong_scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %two = strata.constant dense<2.0> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<f32>
  %half = strata.constant dense<0.5> : tensor<f32>
  %0 = strata.div %x, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // expected-remark @+1 {{erf did not fuse into strata.gelu: no chain through it computes gelu, gelu-tanh or silu (nearest: silu, error 9.4e-02)}}
  %1 = strata.erf %0 : tensor<4xf32>
  %2 = strata.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = strata.mul %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = strata.mul %3, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

// The intermediate x * (1 + erf) is also returned, so fusing would
// duplicate work; the chain must stay.
// CHECK-LABEL: func.func @negative_fuse_gelu_intermediate_used
//   CHECK-NOT:   strata.gelu
func.func @negative_fuse_gelu_intermediate_used(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %sqrt2 = strata.constant dense<1.41421354> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<f32>
  %half = strata.constant dense<0.5> : tensor<f32>
  %0 = strata.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // expected-remark @+1 {{erf did not fuse into strata.gelu: an intermediate value of the chain has uses outside it (it computes gelu)}}
  %1 = strata.erf %0 : tensor<4xf32>
  %2 = strata.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = strata.mul %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = strata.mul %3, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %4, %3 : tensor<4xf32>, tensor<4xf32>
}

// -----

// The scaled input feeds something else too.
// CHECK-LABEL: func.func @negative_fuse_gelu_scaled_input_used
//   CHECK-NOT:   strata.gelu
func.func @negative_fuse_gelu_scaled_input_used(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %sqrt2 = strata.constant dense<1.41421354> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<f32>
  %half = strata.constant dense<0.5> : tensor<f32>
  %0 = strata.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // expected-remark @+1 {{erf did not fuse into strata.gelu: an intermediate value of the chain has uses outside it (it computes gelu)}}
  %1 = strata.erf %0 : tensor<4xf32>
  %2 = strata.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = strata.mul %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = strata.mul %3, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %4, %0 : tensor<4xf32>, tensor<4xf32>
}

// -----

// x is broadcast against a larger tensor: the result is not gelu(x).
// CHECK-LABEL: func.func @negative_fuse_gelu_broadcast
//   CHECK-NOT:   strata.gelu
func.func @negative_fuse_gelu_broadcast(%x: tensor<4xf32>, %h: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %sqrt2 = strata.constant dense<1.41421354> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<2x4xf32>
  %half = strata.constant dense<0.5> : tensor<f32>
  %0 = strata.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // expected-remark @+1 {{erf did not fuse into strata.gelu: the chain broadcasts its input to another type (it computes gelu)}}
  %1 = strata.erf %0 : tensor<4xf32>
  %2 = strata.add %1, %one : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = strata.mul %x, %2 : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = strata.mul %3, %half : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  return %4 : tensor<2x4xf32>
}
