// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-sibling-linears))' | FileCheck %s
// RUN: strata-opt %s --split-input-file --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-fuse-sibling-linears))' \
// RUN:   | FileCheck %s --check-prefix=LOC

// Queries, keys and values of one input: one linear over [K, 2 + 1 + 1]
// columns side by side, split back on the last axis; each original's users
// read its piece.
// CHECK-LABEL: func.func @fuse_qkv
//  CHECK-SAME:   (%[[X:.+]]: tensor<?x3x2xf32>)
//       CHECK:   %[[W:.+]] = strata.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 5.000000e+00, 7.000000e+00], [3.000000e+00, 4.000000e+00, 6.000000e+00, 8.000000e+00]]> : tensor<2x4xf32>
//       CHECK:   %[[QKV:.+]] = strata.linear %[[X]], %[[W]] : (tensor<?x3x2xf32>, tensor<2x4xf32>) -> tensor<?x3x4xf32>
//       CHECK:   %[[S:.+]]:3 = strata.split %[[QKV]] {axis = 2 : i64, sizes = array<i64: 2, 1, 1>} : tensor<?x3x4xf32> -> tensor<?x3x2xf32>, tensor<?x3x1xf32>, tensor<?x3x1xf32>
//   CHECK-NOT:   strata.linear
//       CHECK:   strata.relu %[[S]]#0
//       CHECK:   strata.relu %[[S]]#1
//       CHECK:   return %{{.+}}, %{{.+}}, %[[S]]#2
// LOC-LABEL: func.func @fuse_qkv
//       LOC:   strata.constant {{.*}} loc(fused["wq", "wk", "wv"])
//       LOC:   strata.linear {{.*}} loc(fused["q_proj", "k_proj", "v_proj"])
//       LOC:   strata.split {{.*}} loc(fused["q_proj", "k_proj", "v_proj"])
func.func @fuse_qkv(%x: tensor<?x3x2xf32>) -> (tensor<?x3x2xf32>, tensor<?x3x1xf32>, tensor<?x3x1xf32>) {
  %wq = strata.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32> loc("wq")
  %q = strata.linear %x, %wq : (tensor<?x3x2xf32>, tensor<2x2xf32>) -> tensor<?x3x2xf32> loc("q_proj")
  %rq = strata.relu %q : tensor<?x3x2xf32>
  %wk = strata.constant dense<[[5.0], [6.0]]> : tensor<2x1xf32> loc("wk")
  %k = strata.linear %x, %wk : (tensor<?x3x2xf32>, tensor<2x1xf32>) -> tensor<?x3x1xf32> loc("k_proj")
  %rk = strata.relu %k : tensor<?x3x1xf32>
  %wv = strata.constant dense<[[7.0], [8.0]]> : tensor<2x1xf32> loc("wv")
  %v = strata.linear %x, %wv : (tensor<?x3x2xf32>, tensor<2x1xf32>) -> tensor<?x3x1xf32> loc("v_proj")
  return %rq, %rk, %v : tensor<?x3x2xf32>, tensor<?x3x1xf32>, tensor<?x3x1xf32>
}

// -----

// Biased siblings: the biases are concatenated too, a splat expanded.
// CHECK-LABEL: func.func @fuse_biased
//   CHECK-DAG:   %[[W:.+]] = strata.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00]]> : tensor<1x3xf32>
//   CHECK-DAG:   %[[B:.+]] = strata.constant dense<[5.000000e-01, 5.000000e-01, -1.000000e+00]> : tensor<3xf32>
//       CHECK:   %[[Y:.+]] = strata.linear %{{.+}}, %[[W]], %[[B]] : (tensor<4x1xf32>, tensor<1x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
//       CHECK:   %[[S:.+]]:2 = strata.split %[[Y]] {axis = 1 : i64, sizes = array<i64: 2, 1>}
//       CHECK:   return %[[S]]#0, %[[S]]#1
func.func @fuse_biased(%x: tensor<4x1xf32>) -> (tensor<4x2xf32>, tensor<4x1xf32>) {
  %w1 = strata.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>
  %b1 = strata.constant dense<0.5> : tensor<2xf32>
  %y1 = strata.linear %x, %w1, %b1 : (tensor<4x1xf32>, tensor<1x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %w2 = strata.constant dense<[[3.0]]> : tensor<1x1xf32>
  %b2 = strata.constant dense<[-1.0]> : tensor<1xf32>
  %y2 = strata.linear %x, %w2, %b2 : (tensor<4x1xf32>, tensor<1x1xf32>, tensor<1xf32>) -> tensor<4x1xf32>
  return %y1, %y2 : tensor<4x2xf32>, tensor<4x1xf32>
}

// -----

// Weights held in resource blobs (the importer's form) give a resource: each
// row is the gate's columns, then the up's.
// CHECK-LABEL: func.func @fuse_resources
//       CHECK:   %[[W:.+]] = strata.constant dense_resource<gate.fused> : tensor<2x3xf32>
//       CHECK:   strata.linear %{{.+}}, %[[W]] : (tensor<1x2xf32>, tensor<2x3xf32>) -> tensor<1x3xf32>
//       CHECK:   strata.split {{.+}} {axis = 1 : i64, sizes = array<i64: 1, 2>}
//   CHECK-NOT:   strata.linear
//       CHECK:   gate.fused: "0x{{[0-9A-F]+}}0000803F0000004000008040000040400000A0400000C040"
func.func @fuse_resources(%x: tensor<1x2xf32>) -> (tensor<1x1xf32>, tensor<1x2xf32>) {
  %wg = strata.constant dense_resource<gate> : tensor<2x1xf32>
  %wu = strata.constant dense_resource<up> : tensor<2x2xf32>
  %g = strata.linear %x, %wg : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  %u = strata.linear %x, %wu : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  return %g, %u : tensor<1x1xf32>, tensor<1x2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      gate: "0x040000000000803F00004040",
      up: "0x0400000000000040000080400000A0400000C040"
    }
  }
#-}

// -----

// Llama's gate and up projections without bias are matmuls by constant
// weights: they fuse into one matmul. The matmul by an activation stays.
// CHECK-LABEL: func.func @fuse_matmuls
//       CHECK:   %[[W:.+]] = strata.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00]]> : tensor<1x3xf32>
//       CHECK:   %[[Y:.+]] = strata.matmul %{{.+}}, %[[W]] : (tensor<1x?x1xf32>, tensor<1x3xf32>) -> tensor<1x?x3xf32>
//       CHECK:   %[[S:.+]]:2 = strata.split %[[Y]] {axis = 2 : i64, sizes = array<i64: 1, 2>}
//       CHECK:   strata.matmul %{{.+}}, %{{.+}} : (tensor<1x?x1xf32>, tensor<1x2xf32>)
//       CHECK:   return %[[S]]#0, %[[S]]#1
func.func @fuse_matmuls(%x: tensor<1x?x1xf32>, %a: tensor<1x2xf32>) -> (tensor<1x?x1xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>) {
  %wg = strata.constant dense<[[1.0]]> : tensor<1x1xf32>
  %g = strata.matmul %x, %wg : (tensor<1x?x1xf32>, tensor<1x1xf32>) -> tensor<1x?x1xf32>
  %wu = strata.constant dense<[[2.0, 3.0]]> : tensor<1x2xf32>
  %u = strata.matmul %x, %wu : (tensor<1x?x1xf32>, tensor<1x2xf32>) -> tensor<1x?x2xf32>
  %m = strata.matmul %x, %a : (tensor<1x?x1xf32>, tensor<1x2xf32>) -> tensor<1x?x2xf32>
  return %g, %u, %m : tensor<1x?x1xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>
}

// -----

// Not siblings: different inputs, a weight that is no constant, one member
// with a bias and one without, a weight another op also reads (its copy
// would grow the artifact), a quantized linear, and a linear beside a
// matmul (one op kind per group).
// CHECK-LABEL: func.func @no_fusion
//   CHECK-NOT:   strata.split
//       CHECK:   return
func.func @no_fusion(%x: tensor<2x2xf32>, %z: tensor<2x2xf32>, %wa: tensor<2x2xf32>,
                     %q: tensor<2x2xi8>, %s: tensor<1x2xf32>)
    -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>,
        tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %w0 = strata.constant dense<1.0> : tensor<2x2xf32>
  %w1 = strata.constant dense<2.0> : tensor<2x2xf32>
  %a0 = strata.linear %x, %w0 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %a1 = strata.linear %z, %w1 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %b0 = strata.linear %z, %wa : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %w3 = strata.constant dense<4.0> : tensor<2x2xf32>
  %bias = strata.constant dense<1.0> : tensor<2xf32>
  %c0 = strata.linear %x, %w3, %bias : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %w4 = strata.constant dense<5.0> : tensor<2x2xf32>
  %d0 = strata.linear %z, %w4 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %d1 = strata.add %w4, %z : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %e0 = strata.quantized_linear %x, %q, %s {bits = 8 : i64, group_size = 2 : i64} : (tensor<2x2xf32>, tensor<2x2xi8>, tensor<1x2xf32>) -> tensor<2x2xf32>
  %e1 = strata.quantized_linear %x, %q, %s {bits = 8 : i64, group_size = 2 : i64} : (tensor<2x2xf32>, tensor<2x2xi8>, tensor<1x2xf32>) -> tensor<2x2xf32>
  %w5 = strata.constant dense<6.0> : tensor<2x2xf32>
  %f0 = strata.matmul %x, %w5 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %a0, %a1, %b0, %c0, %d0, %d1, %e0, %e1, %f0 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}
