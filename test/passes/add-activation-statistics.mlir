// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(strata-add-activation-statistics{function=prefill})' \
// RUN:   | FileCheck %s

// Each weight contraction's input gets a per-channel sum of squares and
// max |x| over its token dims, returned after the entry's own results.
// CHECK-LABEL: func.func @prefill
//  CHECK-SAME:   (%[[X:.+]]: tensor<1x?x8xf32>
//  CHECK-SAME:   strata.name = "calibration.0.sum_sq"
//  CHECK-SAME:   strata.name = "calibration.0.max_abs"
//  CHECK-SAME:   strata.name = "calibration.1.sum_sq"
//  CHECK-SAME:   strata.name = "calibration.1.max_abs"
//  CHECK-SAME:   strata.calibration = ["q_proj", "lm_head"]
//       CHECK:   %[[N:.+]] = strata.layer_norm %[[X]]
//       CHECK:   %[[FLAT:.+]] = strata.reshape %[[N]]
//       CHECK:   %[[Y:.+]] = strata.linear %[[FLAT]]
//       CHECK:   %[[L:.+]] = strata.matmul %[[Y]]
//       CHECK:   %[[SQ0:.+]] = strata.mul %[[FLAT]], %[[FLAT]]
//       CHECK:   %[[SUM0:.+]] = strata.reduce_sum %[[SQ0]] {axes = array<i64: 0>, keepdims = false}
//       CHECK:   %[[ABS0:.+]] = strata.abs %[[FLAT]]
//       CHECK:   %[[MAX0:.+]] = strata.reduce_max %[[ABS0]] {axes = array<i64: 0>, keepdims = false}
//       CHECK:   %[[SQ1:.+]] = strata.mul %[[Y]], %[[Y]]
//       CHECK:   %[[SUM1:.+]] = strata.reduce_sum %[[SQ1]] {axes = array<i64: 0>, keepdims = false}
//       CHECK:   %[[MAX1:.+]] = strata.reduce_max
//       CHECK:   return %[[L]], %[[SUM0]], %[[MAX0]], %[[SUM1]], %[[MAX1]]
func.func @prefill(%x: tensor<1x?x8xf32>, %shape: tensor<2xi64>) -> (tensor<?x4xf32> {strata.name = "logits"}) {
  %g = strata.constant dense<1.0> : tensor<8xf32>
  %b = strata.constant dense<0.0> : tensor<8xf32>
  %w = strata.constant dense<0.5> : tensor<8x8xf32>
  %c = strata.constant dense<0.0> : tensor<8xf32>
  %h = strata.constant dense<0.25> : tensor<8x4xf32>
  %n = strata.layer_norm %x, %g, %b {axis = 2 : i64} : (tensor<1x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x?x8xf32>
  %flat = strata.reshape %n, %shape : (tensor<1x?x8xf32>, tensor<2xi64>) -> tensor<?x8xf32> loc("flatten")
  %y = strata.linear %flat, %w, %c : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32> loc("q_proj")
  %l = strata.matmul %y, %h : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x4xf32> loc("lm_head")
  return %l : tensor<?x4xf32>
}

// -----

// Unnamed contractions are told apart by their order.
// CHECK-LABEL: func.func @prefill
//  CHECK-SAME:   strata.calibration = ["up", "up#2"]
func.func @prefill(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = strata.constant dense<0.5> : tensor<8x8xf32>
  %c = strata.constant dense<0.0> : tensor<8xf32>
  %y = strata.linear %x, %w, %c : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32> loc("up")
  %z = strata.linear %y, %w, %c : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32> loc("up")
  return %z : tensor<?x8xf32>
}

// -----

// State results (the KV cache) stay last.
// CHECK-LABEL: func.func @prefill
//  CHECK-SAME:   -> (tensor<?x8xf32> {strata.name = "logits"}, tensor<8xf32> {{.+}}, tensor<8xf32> {{.+}}, tensor<4x8xf32> {strata.state = "cache"})
//       CHECK:   return %{{.+}}, %{{.+}}, %{{.+}}, %[[CACHE:.+]] :
func.func @prefill(%x: tensor<?x8xf32>, %cache: tensor<4x8xf32> {strata.state = "cache"}) -> (tensor<?x8xf32> {strata.name = "logits"}, tensor<4x8xf32> {strata.state = "cache"}) {
  %w = strata.constant dense<0.5> : tensor<8x8xf32>
  %c = strata.constant dense<0.0> : tensor<8xf32>
  %y = strata.linear %x, %w, %c : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32> loc("up")
  return %y, %cache : tensor<?x8xf32>, tensor<4x8xf32>
}
