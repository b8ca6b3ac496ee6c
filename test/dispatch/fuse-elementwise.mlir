// RUN: strata-opt %s --strata-fuse-elementwise | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// A rotate-half chain: the second half of x read by index (a slice
// lowered to a gather-style copy), negated, scaled and added to x: four
// elementwise generics with one user each become one.
// CHECK-LABEL: func.func @chain
//       CHECK:   linalg.generic
//       CHECK:     tensor.extract
//       CHECK:     arith.negf
//       CHECK:     arith.mulf
//       CHECK:     arith.addf
//   CHECK-NOT:   linalg.generic
//       CHECK:   return
func.func @chain(%x: tensor<4x8xf32>, %s: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %half = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %jj = arith.addi %j, %c4 : index
    %k = arith.remui %jj, %c8 : index
    %v = tensor.extract %x[%i, %k] : tensor<4x8xf32>
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%half : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %v = arith.negf %i : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %mul = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%neg, %s : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %v = arith.mulf %i, %j : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %add = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %mul : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %v = arith.addf %i, %j : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %add : tensor<4x8xf32>
}

// A producer with two users stays (fusing would compute it twice); an
// elementwise producer of a reduction, and a contraction, keep their own
// generics (the runtime kernels recognize a contraction by its shape).
// CHECK-LABEL: func.func @kept
//       CHECK:   %[[EXP:.+]] = linalg.generic
//       CHECK:     math.exp
//       CHECK:   linalg.generic {{.*}}ins(%[[EXP]]
//       CHECK:   linalg.generic {{.*}}ins(%[[EXP]]
//       CHECK:   %[[NEG:.+]] = linalg.generic
//       CHECK:     arith.negf
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}}ins(%[[NEG]]
//       CHECK:   %[[SCALED:.+]] = linalg.generic
//       CHECK:     arith.mulf
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}}ins(%[[SCALED]]
func.func @kept(%x: tensor<4x8xf32>, %w: tensor<8x4xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %v = math.exp %i : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %twice = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%exp : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %v = arith.addf %i, %i : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %square = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%exp : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %v = arith.mulf %i, %i : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %v = arith.negf %i : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%neg : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %v = arith.addf %i, %o : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %c = arith.constant 2.0 : f32
    %v = arith.mulf %i, %c : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %ec = tensor.empty() : tensor<4x4xf32>
  %initc = linalg.fill ins(%zero : f32) outs(%ec : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%scaled, %w : tensor<4x8xf32>, tensor<8x4xf32>) outs(%initc : tensor<4x4xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %v = arith.addf %o, %p : f32
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  return %twice, %square, %sum, %mm : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4x4xf32>
}
