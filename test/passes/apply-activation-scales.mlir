// RUN: strata-opt %s --pass-pipeline='builtin.module(strata-apply-activation-scales{statistics=%S/Inputs/activation-scales.json functions=fold,multiply,residual,flat bits=4 group-size=0})' \
// RUN:   | FileCheck %s
// RUN: strata-opt %s --pass-pipeline='builtin.module(strata-apply-activation-scales{statistics=%S/Inputs/activation-scales.json functions=fold,multiply,residual,flat method=smooth})' \
// RUN:   | FileCheck %s --check-prefix=SMOOTH

// Channel 0 carries activations 20x the others (Inputs/activation-scales.json)
// but weights 10x smaller: int4 absmax per column rounds them coarsely,
// so the search scales that row up. q and k read one layer norm and
// nothing else reads its values (strata.shape reads its shape): one s for
// both, and 1/s goes into the norm's scale and bias instead of an extra op.
// CHECK-LABEL: func.func @fold
//  CHECK-SAME:   (%[[X:.+]]: tensor<?x4xf32>)
//   CHECK-DAG:   %[[G:.+]] = strata.constant dense<[{{.+}}]> : tensor<4xf32>
//   CHECK-DAG:   %[[B:.+]] = strata.constant dense<[{{.+}}]> : tensor<4xf32>
//       CHECK:   %[[N:.+]] = strata.layer_norm %[[X]], %[[G]], %[[B]]
//       CHECK:   %[[WQ:.+]] = strata.constant dense_resource<[[R:.+]]> : tensor<4x2xf32>
//       CHECK:   strata.linear %[[N]], %[[WQ]]
//       CHECK:   %[[WK:.+]] = strata.constant dense_resource<[[R]]> : tensor<4x2xf32>
//       CHECK:   strata.matmul %[[N]], %[[WK]]
//   CHECK-NOT:   strata.mul
//       CHECK:   return
func.func @fold(%x: tensor<?x4xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<2xi64>) {
  %g = strata.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = strata.constant dense<[0.5, 0.5, 0.5, 0.5]> : tensor<4xf32>
  %w = strata.constant dense<[[0.1, -0.1], [1.0, -1.0], [0.7, 0.3], [-0.5, 0.9]]> : tensor<4x2xf32>
  %c = strata.constant dense<0.0> : tensor<2xf32>
  %n = strata.layer_norm %x, %g, %b : (tensor<?x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %q = strata.linear %n, %w, %c : (tensor<?x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<?x2xf32> loc("fold_q")
  %k = strata.matmul %n, %w : (tensor<?x4xf32>, tensor<4x2xf32>) -> tensor<?x2xf32> loc("fold_k")
  %shape = strata.shape %n : tensor<?x4xf32> -> tensor<2xi64>
  return %q, %k, %shape : tensor<?x2xf32>, tensor<?x2xf32>, tensor<2xi64>
}

// The input is a GELU's output: no norm to fold into, so the input is
// multiplied by 1/s right before the contraction.
// CHECK-LABEL: func.func @multiply
//       CHECK:   %[[H:.+]] = strata.gelu
//       CHECK:   %[[INV:.+]] = strata.constant dense<[{{.+}}]> : tensor<4xf32>
//       CHECK:   %[[XS:.+]] = strata.mul %[[H]], %[[INV]]
//       CHECK:   strata.linear %[[XS]]
func.func @multiply(%x: tensor<?x4xf32>) -> tensor<?x2xf32> {
  %w = strata.constant dense<[[0.1, -0.1], [1.0, -1.0], [0.7, 0.3], [-0.5, 0.9]]> : tensor<4x2xf32>
  %c = strata.constant dense<0.0> : tensor<2xf32>
  %h = strata.gelu %x {approximate = "none"} : tensor<?x4xf32>
  %y = strata.linear %h, %w, %c : (tensor<?x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<?x2xf32> loc("fc2")
  return %y : tensor<?x2xf32>
}

// The norm also feeds the residual add, which must see it unscaled: its
// scale stays and the contraction gets an explicit multiply.
// CHECK-LABEL: func.func @residual
//       CHECK:   %[[G:.+]] = strata.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]>
//       CHECK:   %[[N:.+]] = strata.rms_norm %{{.+}}, %[[G]]
//       CHECK:   %[[XS:.+]] = strata.mul %[[N]], %{{.+}}
//       CHECK:   strata.linear %[[XS]]
//       CHECK:   strata.add %[[N]]
func.func @residual(%x: tensor<?x4xf32>) -> (tensor<?x2xf32>, tensor<?x4xf32>) {
  %g = strata.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %w = strata.constant dense<[[0.1, -0.1], [1.0, -1.0], [0.7, 0.3], [-0.5, 0.9]]> : tensor<4x2xf32>
  %c = strata.constant dense<0.0> : tensor<2xf32>
  %n = strata.rms_norm %x, %g : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %y = strata.linear %n, %w, %c : (tensor<?x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<?x2xf32> loc("residual_q")
  %r = strata.add %n, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %y, %r : tensor<?x2xf32>, tensor<?x4xf32>
}

// Equal activations on every channel: the search keeps alpha 0, plain
// absmax, and the function is left as it was (SmoothQuant still moves
// the weights' range, which differs per row).
// CHECK-LABEL: func.func @flat
//   CHECK-NOT:   strata.mul
//   CHECK-NOT:   dense_resource
//       CHECK:   return
// SMOOTH-LABEL: func.func @flat
//       SMOOTH:   strata.mul
func.func @flat(%x: tensor<?x4xf32>) -> tensor<?x2xf32> {
  %w = strata.constant dense<[[0.1, -0.1], [1.0, -1.0], [0.7, 0.3], [-0.5, 0.9]]> : tensor<4x2xf32>
  %c = strata.constant dense<0.0> : tensor<2xf32>
  %h = strata.relu %x : tensor<?x4xf32>
  %y = strata.linear %h, %w, %c : (tensor<?x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<?x2xf32> loc("flat_activations")
  return %y : tensor<?x2xf32>
}
