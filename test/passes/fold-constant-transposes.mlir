// RUN: strata-opt %s --split-input-file --mlir-print-elementsattrs-with-hex-if-larger=1 \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fold-constant-transposes))' | FileCheck %s

// Gemm's transB = 1 weight: [[1, 2, 3], [4, 5, 6]] ([N = 2, K = 3]) becomes
// the [K, N] constant [[1, 4], [2, 5], [3, 6]] the linear reads, and no
// transpose is left.
// CHECK-LABEL: func.func @gemm_trans_b
//       CHECK:   %[[W:.+]] = strata.constant dense_resource<[[WN:transposed[_0-9]*]]> : tensor<3x2xf32>
//       CHECK:   strata.linear %{{.+}}, %[[W]]
//   CHECK-NOT:   strata.transpose
//       CHECK: [[WN]]: "0x100000000000803F00008040000000400000A040000040400000C040"
func.func @gemm_trans_b(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = strata.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = strata.transpose %w, [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %y = strata.linear %x, %t : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Any permutation and element width: a 2x1x3 i16 tensor permuted [2, 0, 1]
// to 3x2x1 holds, at (i, j, 0), the input's (j, 0, i).
// CHECK-LABEL: func.func @rank3_i16
//       CHECK:   strata.constant dense_resource<[[N:transposed[_0-9]*]]> : tensor<3x2x1xi16>
//   CHECK-NOT:   strata.transpose
//       CHECK: [[N]]: "0x10000000010004000200050003000600"
func.func @rank3_i16() -> tensor<3x2x1xi16> {
  %w = strata.constant dense<[[[1, 2, 3]], [[4, 5, 6]]]> : tensor<2x1x3xi16>
  %t = strata.transpose %w, [2, 0, 1] : tensor<2x1x3xi16> -> tensor<3x2x1xi16>
  return %t : tensor<3x2x1xi16>
}

// -----

// A constant with another reader stays (folding would keep two copies),
// as does the transpose of an activation.
// CHECK-LABEL: func.func @shared_constant
//       CHECK:   strata.transpose %{{.+}}, [1, 0]
//       CHECK:   strata.transpose %{{.+}}, [1, 0]
func.func @shared_constant(%x: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<2x3xf32>, tensor<3x2xf32>) {
  %w = strata.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = strata.transpose %w, [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  %a = strata.transpose %x, [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %t, %w, %a : tensor<3x2xf32>, tensor<2x3xf32>, tensor<3x2xf32>
}
