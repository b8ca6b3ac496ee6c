// RUN: strata-opt %s --strata-cpu-outline-kernels | FileCheck %s

// A dispatch region of a fill and the reduction it initializes is one
// kernel: the fill moves down to its user and both run per slice of the
// reduction's parallel loop 0 (the fill writes the sliced output). The
// kernel keeps the region's attribute.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @main
//       CHECK:   call @[[K:strata_pkernel_0]](
//   CHECK-NOT:   call @strata_
//   CHECK-NOT:   linalg.
//       CHECK:   return
//       CHECK: func.func private @[[K]](%[[B:.+]]: index, %[[E:.+]]: index, %{{.+}}: index, %[[ZERO:.+]]: f32, %[[OUT:.+]]: memref<16xf32>, %{{.+}}: memref<16x8xf32>)
//  CHECK-SAME:   strata.dispatch = {id = 7 : i64, kind = "reduction"}, strata.parallel_kernel
//       CHECK:   %[[SLICE:.+]] = memref.subview %[[OUT]][%[[B]]]
//       CHECK:   linalg.fill {{.*}}ins(%[[ZERO]] : f32) outs(%[[SLICE]] :
//       CHECK:   linalg.generic {{.*}}outs(%[[SLICE]] :
func.func @main(%x: memref<16x8xf32>, %out: memref<16xf32>, %zero: f32) {
  linalg.fill {strata.dispatch = {id = 7 : i64, kind = "reduction"}} ins(%zero : f32) outs(%out : memref<16xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x8xf32>) outs(%out : memref<16xf32>) attrs = {strata.dispatch = {id = 7 : i64, kind = "reduction"}} {
  ^bb0(%i: f32, %o: f32):
    %v = arith.addf %i, %o : f32
    linalg.yield %v : f32
  }
  return
}
