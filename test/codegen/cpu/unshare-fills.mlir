// RUN: strata-opt %s --strata-cpu-unshare-fills | FileCheck %s

// One zero fill shared by two matmul-like users (as CSE leaves it) becomes
// one fill, with its own tensor.empty, right before each user.
// CHECK-LABEL: func.func @shared_fill
//       CHECK:   %[[E1:.+]] = tensor.empty() : tensor<4x4xf32>
//  CHECK-NEXT:   %[[F1:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E1]] : tensor<4x4xf32>)
//  CHECK-NEXT:   linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[F1]] : tensor<4x4xf32>)
//       CHECK:   %[[E2:.+]] = tensor.empty() : tensor<4x4xf32>
//  CHECK-NEXT:   %[[F2:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E2]] : tensor<4x4xf32>)
//  CHECK-NEXT:   linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[F2]] : tensor<4x4xf32>)
//   CHECK-NOT:   linalg.fill
func.func @shared_fill(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = linalg.matmul ins(%b, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0, %1 : tensor<4x4xf32>, tensor<4x4xf32>
}
