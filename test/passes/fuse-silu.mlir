// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-silu))' | FileCheck %s
// RUN: strata-opt %s --split-input-file --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-silu))' \
// RUN:   | FileCheck %s --check-prefix=LOC
// RUN: strata-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-silu{report-missed=true}))' \
// RUN:   -o /dev/null

// torch.onnx's spelling: Mul(x, Sigmoid(x)).
// CHECK-LABEL: func.func @fuse_silu
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x64xf32>)
//       CHECK:   %[[Y:.+]] = strata.silu %[[X]] : tensor<2x64xf32>
//   CHECK-NOT:   strata.sigmoid
//       CHECK:   return %[[Y]]
// LOC-LABEL: func.func @fuse_silu
//       LOC:   strata.silu {{.*}} loc(fused["sigmoid", "mul"])
func.func @fuse_silu(%x: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %0 = strata.sigmoid %x : tensor<2x64xf32> loc("sigmoid")
  %1 = strata.mul %x, %0 : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32> loc("mul")
  return %1 : tensor<2x64xf32>
}

// -----

// Mul(Sigmoid(x), x), f16.
// CHECK-LABEL: func.func @fuse_silu_swapped_f16
//  CHECK-SAME:   (%[[X:.+]]: tensor<4x8xf16>)
//       CHECK:   %[[Y:.+]] = strata.silu %[[X]] : tensor<4x8xf16>
//       CHECK:   return %[[Y]]
func.func @fuse_silu_swapped_f16(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = strata.sigmoid %x : tensor<4x8xf16>
  %1 = strata.mul %0, %x : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  return %1 : tensor<4x8xf16>
}

// -----

// The SwiGLU gate: silu(gate) * up keeps the outer multiply.
// CHECK-LABEL: func.func @fuse_silu_swiglu_gate
//  CHECK-SAME:   (%[[G:.+]]: tensor<2x128xf32>, %[[U:.+]]: tensor<2x128xf32>)
//       CHECK:   %[[S:.+]] = strata.silu %[[G]]
//       CHECK:   %[[Y:.+]] = strata.mul %[[S]], %[[U]]
//       CHECK:   return %[[Y]]
func.func @fuse_silu_swiglu_gate(%g: tensor<2x128xf32>, %u: tensor<2x128xf32>) -> tensor<2x128xf32> {
  %0 = strata.sigmoid %g : tensor<2x128xf32>
  %1 = strata.mul %g, %0 : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
  %2 = strata.mul %1, %u : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
  return %2 : tensor<2x128xf32>
}

// -----

// sigmoid(x) gating a different value is a GLU, not SiLU.
// CHECK-LABEL: func.func @negative_fuse_silu_other_operand
//   CHECK-NOT:   strata.silu
func.func @negative_fuse_silu_other_operand(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @+1 {{sigmoid did not fuse into strata.silu: no chain through it computes gelu, gelu-tanh or silu (nearest: silu, error 9.7e-01)}}
  %0 = strata.sigmoid %x : tensor<4xf32>
  %1 = strata.mul %y, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// sigmoid(x) is also returned, so it must stay.
// CHECK-LABEL: func.func @negative_fuse_silu_sigmoid_reused
//   CHECK-NOT:   strata.silu
func.func @negative_fuse_silu_sigmoid_reused(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-remark @+1 {{sigmoid did not fuse into strata.silu: an intermediate value of the chain has uses outside it (it computes silu)}}
  %0 = strata.sigmoid %x : tensor<4xf32>
  %1 = strata.mul %x, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1, %0 : tensor<4xf32>, tensor<4xf32>
}

// -----

// x / (1 + exp(-x)): no sigmoid op in it.
// CHECK-LABEL: func.func @fuse_silu_exp_quotient
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x16xf32>)
//       CHECK:   %[[Y:.+]] = strata.silu %[[X]] : tensor<2x16xf32>
//   CHECK-NOT:   strata.exp
//       CHECK:   return %[[Y]]
func.func @fuse_silu_exp_quotient(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %one = strata.constant dense<1.0> : tensor<f32>
  %0 = strata.neg %x : tensor<2x16xf32>
  %1 = strata.exp %0 : tensor<2x16xf32>
  %2 = strata.add %one, %1 : (tensor<f32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  %3 = strata.div %x, %2 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  return %3 : tensor<2x16xf32>
}

// -----

// x * 0.5 * (1 + tanh(x / 2)): sigmoid written with tanh.
// CHECK-LABEL: func.func @fuse_silu_tanh_half
//  CHECK-SAME:   (%[[X:.+]]: tensor<8xf32>)
//       CHECK:   %[[Y:.+]] = strata.silu %[[X]] : tensor<8xf32>
//   CHECK-NOT:   strata.tanh
//       CHECK:   return %[[Y]]
func.func @fuse_silu_tanh_half(%x: tensor<8xf32>) -> tensor<8xf32> {
  %one = strata.constant dense<1.0> : tensor<f32>
  %half = strata.constant dense<0.5> : tensor<f32>
  %0 = strata.mul %x, %half : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %1 = strata.tanh %0 : tensor<8xf32>
  %2 = strata.add %1, %one : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = strata.mul %0, %2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %3 : tensor<8xf32>
}

// -----

// Swish with beta = 1.1, x * sigmoid(1.1 x), is not SiLU (4e-2 away).
// CHECK-LABEL: func.func @negative_fuse_silu_swish_beta
//   CHECK-NOT:   strata.silu
func.func @negative_fuse_silu_swish_beta(%x: tensor<4xf32>) -> tensor<4xf32> {
  %beta = strata.constant dense<1.1> : tensor<f32>
  %0 = strata.mul %x, %beta : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  // expected-remark @+1 {{sigmoid did not fuse into strata.silu: no chain through it computes gelu, gelu-tanh or silu (nearest: silu, error 4.0e-02)}}
  %1 = strata.sigmoid %0 : tensor<4xf32>
  %2 = strata.mul %x, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// quick-GELU, x * sigmoid(1.702 x), has no fused op: it stays.
// CHECK-LABEL: func.func @negative_fuse_silu_quick_gelu
//   CHECK-NOT:   strata.silu
func.func @negative_fuse_silu_quick_gelu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %alpha = strata.constant dense<1.702> : tensor<f32>
  %0 = strata.mul %alpha, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @+1 {{sigmoid did not fuse into strata.silu: no chain through it computes gelu, gelu-tanh or silu (nearest: gelu, error 2.0e-02)}}
  %1 = strata.sigmoid %0 : tensor<4xf32>
  %2 = strata.mul %1, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// A sigmoid-spelled tanh GELU is strata-fuse-gelu's: no silu, no remark.
// CHECK-LABEL: func.func @negative_fuse_silu_gelu_as_sigmoid
//       CHECK:   strata.sigmoid
//   CHECK-NOT:   strata.silu
func.func @negative_fuse_silu_gelu_as_sigmoid(%x: tensor<8xf32>) -> tensor<8xf32> {
  %kappa = strata.constant dense<0.044715> : tensor<f32>
  %beta2 = strata.constant dense<1.59576917> : tensor<f32>
  %0 = strata.mul %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = strata.mul %0, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = strata.mul %1, %kappa : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %3 = strata.add %x, %2 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %4 = strata.mul %beta2, %3 : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %5 = strata.sigmoid %4 : tensor<8xf32>
  %6 = strata.mul %x, %5 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %6 : tensor<8xf32>
}
