// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-gelu))' | FileCheck %s
// RUN: strata-opt %s --split-input-file --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-gelu))' \
// RUN:   | FileCheck %s --check-prefix=LOC
// RUN: strata-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-gelu{report-missed=true}))' \
// RUN:   -o /dev/null

// The tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).

// HF gelu_new: Pow(x, 3), Mul(0.044715), Add(x), Mul(sqrt(2/pi)), Tanh,
// Add(1), and the 0.5 applied to x first.
// CHECK-LABEL: func.func @fuse_gelu_tanh_pow
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x64xf32>)
//       CHECK:   %[[Y:.+]] = strata.gelu %[[X]] {approximate = "tanh"} : tensor<2x64xf32>
//   CHECK-NOT:   strata.tanh
//       CHECK:   return %[[Y]]
// LOC-LABEL: func.func @fuse_gelu_tanh_pow
//       LOC:   strata.gelu {{.*}} loc(fused["half_x", "pow", "mul_kappa", "add_x", "mul_beta", "tanh", "add_one", "mul"])
func.func @fuse_gelu_tanh_pow(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %three = strata.constant dense<3.0> : tensor<f32>
  %kappa = strata.constant dense<0.044715> : tensor<f32>
  %beta = strata.constant dense<0.797884583> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<f32>
  %half = strata.constant dense<0.5> : tensor<f32>
  %0 = strata.mul %x, %half : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32> loc("half_x")
  %1 = strata.pow %x, %three : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32> loc("pow")
  %2 = strata.mul %1, %kappa : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32> loc("mul_kappa")
  %3 = strata.add %x, %2 : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32> loc("add_x")
  %4 = strata.mul %3, %beta : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32> loc("mul_beta")
  %5 = strata.tanh %4 : tensor<2x64xf32> loc("tanh")
  %6 = strata.add %5, %one : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32> loc("add_one")
  %7 = strata.mul %0, %6 : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32> loc("mul")
  return %7 : tensor<2x64xf32>
}

// -----

// torch approximate="tanh": the cube as Mul(x, Mul(x, x)), the torch
// constants 0.7978845834732056 and 0.044714998453855515, constants first,
// and the 0.5 applied last.
// CHECK-LABEL: func.func @fuse_gelu_tanh_mul_cube
//  CHECK-SAME:   (%[[X:.+]]: tensor<4x8xf32>)
//       CHECK:   %[[Y:.+]] = strata.gelu %[[X]] {approximate = "tanh"}
//       CHECK:   return %[[Y]]
func.func @fuse_gelu_tanh_mul_cube(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %kappa = strata.constant dense<0.044714998453855515> : tensor<f32>
  %beta = strata.constant dense<0.7978845834732056> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<1xf32>
  %half = strata.constant dense<0.5> : tensor<f32>
  %0 = strata.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = strata.mul %x, %0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = strata.mul %kappa, %1 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = strata.add %2, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = strata.mul %beta, %3 : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = strata.tanh %4 : tensor<4x8xf32>
  %6 = strata.add %one, %5 : (tensor<1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = strata.mul %x, %6 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = strata.mul %7, %half : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %8 : tensor<4x8xf32>
}

// -----

// OpenAI/Megatron: tanh(0.79788456 * x * (1 + 0.044715 * x * x)), the
// scale distributed differently, and (x * x) * x instead of x * (x * x)
// elsewhere; the 0.5 multiplies the sum.
// CHECK-LABEL: func.func @fuse_gelu_tanh_megatron
//  CHECK-SAME:   (%[[X:.+]]: tensor<8xf32>)
//       CHECK:   %[[Y:.+]] = strata.gelu %[[X]] {approximate = "tanh"}
//       CHECK:   return %[[Y]]
func.func @fuse_gelu_tanh_megatron(%x: tensor<8xf32>) -> tensor<8xf32> {
  %kappa = strata.constant dense<0.044715> : tensor<f32>
  %beta = strata.constant dense<0.79788456> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<f32>
  %half = strata.constant dense<0.5> : tensor<f32>
  %0 = strata.mul %beta, %x : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = strata.mul %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = strata.mul %kappa, %1 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %3 = strata.add %one, %2 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %4 = strata.mul %0, %3 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %5 = strata.tanh %4 : tensor<8xf32>
  %6 = strata.add %5, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %7 = strata.mul %half, %6 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %8 = strata.mul %x, %7 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %8 : tensor<8xf32>
}

// -----

// Near miss: 0.44715 (a misplaced decimal) is not the GELU cubic.
// CHECK-LABEL: func.func @negative_fuse_gelu_tanh_wrong_kappa
//   CHECK-NOT:   strata.gelu
func.func @negative_fuse_gelu_tanh_wrong_kappa(%x: tensor<4xf32>) -> tensor<4xf32> {
  %three = strata.constant dense<3.0> : tensor<f32>
  %kappa = strata.constant dense<0.44715> : tensor<f32>
  %beta = strata.constant dense<0.797884583> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<f32>
  %half = strata.constant dense<0.5> : tensor<f32>
  %0 = strata.mul %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = strata.pow %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = strata.mul %1, %kappa : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = strata.add %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = strata.mul %3, %beta : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // expected-remark @+1 {{tanh did not fuse into strata.gelu: no chain through it computes gelu, gelu-tanh or silu (nearest: gelu, error 8.7e-02)}}
  %5 = strata.tanh %4 : tensor<4xf32>
  %6 = strata.add %5, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %7 = strata.mul %0, %6 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %7 : tensor<4xf32>
}

// -----

// Near miss: the cube is of another value than the linear term.
// CHECK-LABEL: func.func @negative_fuse_gelu_tanh_two_inputs
//   CHECK-NOT:   strata.gelu
func.func @negative_fuse_gelu_tanh_two_inputs(%x: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %three = strata.constant dense<3.0> : tensor<f32>
  %kappa = strata.constant dense<0.044715> : tensor<f32>
  %beta = strata.constant dense<0.797884583> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<f32>
  %half = strata.constant dense<0.5> : tensor<f32>
  %0 = strata.mul %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = strata.pow %z, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = strata.mul %1, %kappa : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = strata.add %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = strata.mul %3, %beta : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // expected-remark @+1 {{tanh did not fuse into strata.gelu: no chain through it computes gelu, gelu-tanh or silu (nearest: silu, error 1.0e+00)}}
  %5 = strata.tanh %4 : tensor<4xf32>
  %6 = strata.add %5, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %7 = strata.mul %0, %6 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %7 : tensor<4xf32>
}

// -----

// Near miss: 1 - tanh(...) is not the GELU.
// CHECK-LABEL: func.func @negative_fuse_gelu_tanh_one_minus
//   CHECK-NOT:   strata.gelu
func.func @negative_fuse_gelu_tanh_one_minus(%x: tensor<4xf32>) -> tensor<4xf32> {
  %three = strata.constant dense<3.0> : tensor<f32>
  %kappa = strata.constant dense<0.044715> : tensor<f32>
  %beta = strata.constant dense<0.797884583> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<f32>
  %half = strata.constant dense<0.5> : tensor<f32>
  %0 = strata.mul %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = strata.pow %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = strata.mul %1, %kappa : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = strata.add %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = strata.mul %3, %beta : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // expected-remark @+1 {{tanh did not fuse into strata.gelu: no chain through it computes gelu, gelu-tanh or silu (nearest: silu, error 1.0e+00)}}
  %5 = strata.tanh %4 : tensor<4xf32>
  %6 = strata.sub %one, %5 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %7 = strata.mul %0, %6 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %7 : tensor<4xf32>
}

// -----

// Near miss: the cube is also returned, so the chain cannot be replaced.
// CHECK-LABEL: func.func @negative_fuse_gelu_tanh_cube_used
//   CHECK-NOT:   strata.gelu
func.func @negative_fuse_gelu_tanh_cube_used(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %three = strata.constant dense<3.0> : tensor<f32>
  %kappa = strata.constant dense<0.044715> : tensor<f32>
  %beta = strata.constant dense<0.797884583> : tensor<f32>
  %one = strata.constant dense<1.0> : tensor<f32>
  %half = strata.constant dense<0.5> : tensor<f32>
  %0 = strata.mul %x, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = strata.pow %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = strata.mul %1, %kappa : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = strata.add %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = strata.mul %3, %beta : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // expected-remark @+1 {{tanh did not fuse into strata.gelu: an intermediate value of the chain has uses outside it (it computes gelu-tanh)}}
  %5 = strata.tanh %4 : tensor<4xf32>
  %6 = strata.add %5, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %7 = strata.mul %0, %6 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %7, %1 : tensor<4xf32>, tensor<4xf32>
}
