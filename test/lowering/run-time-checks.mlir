// RUN: strata-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(strata-lower-to-linalg))' | FileCheck %s

// Indices from data: their min and max, reduced in one pass, are checked
// against [-n, n-1] before the gather, naming the node and the input.
// CHECK-LABEL: func.func @gather_indices
//       CHECK:   %[[R:.+]]:2 = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]
//       CHECK:     arith.minsi
//       CHECK:     arith.maxsi
//       CHECK:   %[[LO:.+]] = tensor.extract %[[R]]#0[]
//       CHECK:   %[[HI:.+]] = tensor.extract %[[R]]#1[]
//       CHECK:   %[[LOW:.+]] = arith.cmpi slt, %[[LO]], %{{.+}}
//       CHECK:   %[[HIGH:.+]] = arith.cmpi sgt, %[[HI]], %{{.+}}
//       CHECK:   %[[BAD:.+]] = arith.ori %[[LOW]], %[[HIGH]]
//       CHECK:   %[[V:.+]] = arith.select %[[LOW]], %[[LO]], %[[HI]]
//       CHECK:   strata.check %[[BAD]], %[[V]], %{{.+}}, %{{.+}} {input = "input_ids", kind = 1 : i64, node = "wte"}
//       CHECK:   linalg.generic
func.func @gather_indices(%ids: tensor<?x?xi64> {strata.name = "input_ids"}) -> tensor<?x?x4xf32> {
  %table = strata.constant dense<1.0> : tensor<10x4xf32>
  %0 = strata.gather %table, %ids {axis = 0 : i64} : (tensor<10x4xf32>, tensor<?x?xi64>) -> tensor<?x?x4xf32> loc("wte")
  return %0 : tensor<?x?x4xf32>
}

// -----

// Constant indices in range need no check.
// CHECK-LABEL: func.func @gather_constant_indices
//   CHECK-NOT:   strata.check
func.func @gather_constant_indices(%x: tensor<3xi64>) -> tensor<i64> {
  %i = strata.constant dense<-1> : tensor<i64>
  %0 = strata.gather %x, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Two dynamic extents that must agree are compared at run time.
// CHECK-LABEL: func.func @broadcast_dynamic
//       CHECK:   %[[A:.+]] = tensor.dim %arg0
//       CHECK:   %[[B:.+]] = tensor.dim %arg1
//       CHECK:   %[[NE:.+]] = arith.cmpi ne, %[[B]], %[[A]]
//       CHECK:   strata.check %[[NE]], {{.*}} {input = "b", kind = 2 : i64, node = "add"}
func.func @broadcast_dynamic(%a: tensor<?xf32> {strata.name = "a"}, %b: tensor<?xf32> {strata.name = "b"}) -> tensor<?xf32> {
  %0 = strata.add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> loc("add")
  return %0 : tensor<?xf32>
}

// -----

// Integer division: a zero divisor is refused before the op, and the
// divisor the body divides by is never 0 or -1.
// CHECK-LABEL: func.func @integer_division
//       CHECK:   linalg.generic {{.*}}iterator_types = ["reduction"]
//       CHECK:   strata.check {{.*}} {kind = 4 : i64, node = "div"}
//       CHECK:   linalg.generic
//       CHECK:     arith.select
//       CHECK:     arith.divsi
func.func @integer_division(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  %0 = strata.div %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64> loc("div")
  return %0 : tensor<4xi64>
}

// -----

// A range's count is bounded before it sizes a buffer.
// CHECK-LABEL: func.func @range_count
//       CHECK:   arith.divui
//       CHECK:   strata.check {{.*}} {kind = 5 : i64, node = "range"}
//       CHECK:   tensor.empty(%{{.+}}) : tensor<?xi64>
func.func @range_count(%s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>) -> tensor<?xi64> {
  %0 = strata.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64> loc("range")
  return %0 : tensor<?xi64>
}

// -----

// Reshape by a run-time shape: every entry bounded, the product equal to
// the input's element count.
// CHECK-LABEL: func.func @reshape_count
//       CHECK:   strata.check {{.*}} {input = "shape", kind = 5 : i64, node = "reshape"}
//       CHECK:   strata.check {{.*}} {input = "shape", kind = 5 : i64, node = "reshape"}
//       CHECK:   strata.check {{.*}} {input = "x", kind = 3 : i64, node = "reshape"}
//       CHECK:   tensor.reshape
func.func @reshape_count(%x: tensor<?xf32> {strata.name = "x"}, %s: tensor<2xi64> {strata.name = "shape"}) -> tensor<?x?xf32> {
  %0 = strata.reshape %x, %s : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32> loc("reshape")
  return %0 : tensor<?x?xf32>
}

// -----

// An attention mask of lower rank aligns with the scores' last dims, as
// numpy broadcasts; static extents need no check. (Comparing the mask's
// dim 0 with the batch refused every run of a [Sq, Sk] mask.)
// CHECK-LABEL: func.func @attention_rank2_mask
//   CHECK-NOT:   strata.check
//       CHECK:   return
func.func @attention_rank2_mask(%q: tensor<2x3x4x8xf32>, %k: tensor<2x3x6x8xf32>, %v: tensor<2x3x6x8xf32>, %m: tensor<4x6xf32>) -> tensor<2x3x4x8xf32> {
  %0 = strata.attention %q, %k, %v mask %m : (tensor<2x3x4x8xf32>, tensor<2x3x6x8xf32>, tensor<2x3x6x8xf32>, tensor<4x6xf32>) -> tensor<2x3x4x8xf32>
  return %0 : tensor<2x3x4x8xf32>
}

// -----

// A dynamic mask dim is checked against the scores' dim it aligns with:
// the mask's last dim against the key sequence.
// CHECK-LABEL: func.func @attention_dynamic_mask
//       CHECK:   %[[SK:.+]] = tensor.dim %arg1, %{{.+}}
//       CHECK:   %[[M:.+]] = tensor.dim %arg3, %{{.+}}
//       CHECK:   arith.cmpi ne, %[[M]], %[[SK]]
//       CHECK:   strata.check {{.*}} {input = "mask", kind = 2 : i64, node = "attn"}
func.func @attention_dynamic_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>, %m: tensor<1x1x1x?xf32> {strata.name = "mask"}) -> tensor<1x2x4x8xf32> {
  %0 = strata.attention %q, %k, %v mask %m : (tensor<1x2x4x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x1x1x?xf32>) -> tensor<1x2x4x8xf32> loc("attn")
  return %0 : tensor<1x2x4x8xf32>
}
