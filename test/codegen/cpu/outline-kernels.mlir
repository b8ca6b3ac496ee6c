// RUN: strata-opt %s --strata-cpu-outline-kernels | FileCheck %s

// Each linalg op becomes a private noinline function, called in its place.
// The first generic's loop 0 is parallel and indexes every operand: a
// parallel kernel taking (begin, end, work) and a [begin, end) slice of
// each operand; the call passes the whole extent and the output's element
// count. The second starts with a reduction: a plain kernel. The constant
// it uses is cloned into the kernel, not passed.
// CHECK-LABEL: func.func @main
//  CHECK-SAME:   (%[[X:.+]]: memref<?x16xf32>, %[[Y:.+]]: memref<?x16xf32>, %[[S:.+]]: memref<16xf32>)
//       CHECK:   %[[N:.+]] = memref.dim %[[Y]], %{{.+}} : memref<?x16xf32>
//       CHECK:   memref.dim %[[Y]], %{{.+}} : memref<?x16xf32>
//       CHECK:   %[[WORK:.+]] = arith.muli %{{.+}}, %{{.+}} : index
//       CHECK:   %[[ZERO:.+]] = arith.constant 0 : index
//       CHECK:   call @[[PK:strata_pkernel_0]](%[[ZERO]], %[[N]], %[[WORK]], %[[X]], %[[Y]])
//       CHECK:   call @[[K:strata_kernel_1]](%[[Y]], %[[S]])
//   CHECK-NOT:   linalg.generic
//       CHECK: func.func private @[[PK]](%[[B:.+]]: index, %[[E:.+]]: index, %{{.+}}: index, %[[PX:.+]]: memref<?x16xf32>, %[[PY:.+]]: memref<?x16xf32>)
//  CHECK-SAME:   attributes {passthrough = ["noinline"], strata.parallel_kernel}
//       CHECK:   arith.constant 2.000000e+00 : f32
//       CHECK:   %[[LEN:.+]] = arith.subi %[[E]], %[[B]]
//       CHECK:   memref.subview %[[PX]][%[[B]], 0] [%[[LEN]], 16] [1, 1]
//       CHECK:   memref.subview %[[PY]][%[[B]], 0] [%[[LEN]], 16] [1, 1]
//       CHECK:   linalg.generic
//       CHECK: func.func private @[[K]](%{{.+}}: memref<?x16xf32>, %{{.+}}: memref<16xf32>)
//  CHECK-SAME:   attributes {passthrough = ["noinline"], strata.kernel}
//       CHECK:   linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>
func.func @main(%x: memref<?x16xf32>, %y: memref<?x16xf32>, %s: memref<16xf32>) {
  %c = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : memref<?x16xf32>) outs(%y : memref<?x16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.mulf %i, %c : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, #red], iterator_types = ["reduction", "parallel"]} ins(%y : memref<?x16xf32>) outs(%s : memref<16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %a = arith.addf %i, %o : f32
    linalg.yield %a : f32
  }
  return
}
