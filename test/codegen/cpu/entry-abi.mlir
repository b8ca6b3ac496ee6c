// RUN: strata-opt %s --strata-cpu-entry-abi | FileCheck %s

// Inputs are read-only to the generated code. Public functions get MLIR's
// C interface, are marked as entries (the
// run context is added to them later) and lose the manifest's
// attributes; results that would alias an argument (directly or through a
// reshape) are copied into fresh tensors, a computed result is not.
// CHECK-LABEL: func.func @main
//  CHECK-SAME:   (%[[X:.+]]: tensor<4x8xf32> {bufferization.writable = false}) -> (tensor<32xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
//  CHECK-SAME:   attributes {llvm.emit_c_interface, strata.entry, strata.state_results = 0 : i64}
//       CHECK:   %[[FLAT:.+]] = tensor.collapse_shape %[[X]]
//       CHECK:   %[[FILL:.+]] = linalg.fill
//       CHECK:   %[[COPY1:.+]] = linalg.copy ins(%[[FLAT]] : tensor<32xf32>)
//       CHECK:   %[[COPY2:.+]] = linalg.copy ins(%[[X]] : tensor<4x8xf32>)
//       CHECK:   return %[[COPY1]], %[[COPY2]], %[[FILL]]
func.func @main(%x: tensor<4x8xf32> {strata.name = "x"}) -> (tensor<32xf32> {strata.name = "flat"}, tensor<4x8xf32>, tensor<4x8xf32>) {
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %c = arith.constant 1.0 : f32
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %flat, %x, %f : tensor<32xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// A computed result reshaped on its way out (the logits from the LM head's
// rows) hands over the computation's buffer; a second result on that same
// buffer is copied, so that the caller frees each buffer once.
// CHECK-LABEL: func.func @logits
//       CHECK:   %[[ADD:.+]] = linalg.add
//       CHECK:   %[[LOGITS:.+]] = tensor.expand_shape %[[ADD]]
//       CHECK:   %[[SECOND:.+]] = linalg.copy ins(%[[ADD]] : tensor<4x8xf32>)
//       CHECK:   return %[[LOGITS]], %[[SECOND]]
func.func @logits(%x: tensor<4x8xf32> {strata.name = "x"}) -> (tensor<2x2x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.add ins(%x, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = tensor.expand_shape %f [[0, 1], [2]] output_shape [2, 2, 8] : tensor<4x8xf32> into tensor<2x2x8xf32>
  return %r, %f : tensor<2x2x8xf32>, tensor<4x8xf32>
}

// Private functions are not entries.
// CHECK-LABEL: func.func private @helper
//   CHECK-NOT:   linalg.copy
//   CHECK-NOT:   llvm.emit_c_interface
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// A state argument is written in place: it is writable, and the result
// carrying its new value is materialized into it (never copied out as an
// output); the input stays read-only and the output is still a fresh
// tensor.
// CHECK-LABEL: func.func @step
//  CHECK-SAME:   (%[[IN:.+]]: tensor<4xf32> {bufferization.writable = false}, %[[S:.+]]: tensor<2x4xf32> {bufferization.writable = true})
//       CHECK:   %[[NEW:.+]] = linalg.fill
//       CHECK:   %[[OUT:.+]] = linalg.copy ins(%[[IN]] : tensor<4xf32>)
//       CHECK:   %[[W:.+]] = bufferization.materialize_in_destination %[[NEW]] in %[[S]]
//       CHECK:   return %[[OUT]], %[[W]]
func.func @step(%x: tensor<4xf32> {strata.name = "x"}, %s: tensor<2x4xf32> {strata.state = "s"}) -> (tensor<4xf32>, tensor<2x4xf32> {strata.state = "s"}) {
  %c = arith.constant 2.0 : f32
  %f = linalg.fill ins(%c : f32) outs(%s : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %x, %f : tensor<4xf32>, tensor<2x4xf32>
}
