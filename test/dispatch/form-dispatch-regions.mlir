// RUN: strata-opt %s --strata-form-dispatch-regions | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>

// One region per structured op and per runtime call, numbered in program
// order; a fill that only initializes a reduction's or a contraction's
// output joins that op's region (ids 1 and 2 below); a transpose is data
// movement.
// CHECK-LABEL: func.func @regions
//       CHECK:   linalg.generic {{.*}}strata.dispatch = {id = 0 : i64, kind = "elementwise"}
//       CHECK:   linalg.fill {{.*}}strata.dispatch = {id = 1 : i64, kind = "reduction"}
//       CHECK:   linalg.generic {{.*}}strata.dispatch = {id = 1 : i64, kind = "reduction"}
//       CHECK:   linalg.transpose {{.*}}strata.dispatch = {id = 2 : i64, kind = "data_movement"}
//       CHECK:   linalg.fill {{.*}}strata.dispatch = {id = 3 : i64, kind = "contraction"}
//       CHECK:   linalg.matmul {{.*}}strata.dispatch = {id = 3 : i64, kind = "contraction"}
//       CHECK:   call @strata_rt_kernel({{.*}}) {strata.dispatch = {id = 4 : i64, kind = "runtime"}}
//       CHECK:   call @not_a_kernel
//   CHECK-NOT:   strata.dispatch
//       CHECK:   return
func.func private @strata_rt_kernel(index) attributes {strata.runtime_import}
func.func private @not_a_kernel(index)
func.func @regions(%x: tensor<4x8xf32>, %w: tensor<8x4xf32>, %p: index) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %v = math.exp %i : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %v = arith.addf %i, %o : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%e2 : tensor<8x4xf32>) permutation = [1, 0]
  %e3 = tensor.empty() : tensor<4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  call @strata_rt_kernel(%p) : (index) -> ()
  call @not_a_kernel(%p) : (index) -> ()
  return %exp, %sum, %t, %mm : tensor<4x8xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<4x4xf32>
}
