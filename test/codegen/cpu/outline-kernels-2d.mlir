// RUN: strata-opt %s --strata-cpu-outline-kernels | FileCheck %s

// A generic of three parallel loops: a 2-D parallel kernel taking (begin0,
// end0, begin1, end1, work), each operand sliced on the dims loops 0 and 1
// index, linalg.index 1 shifted by its slice's start; the call passes both
// whole extents and the output's element count. A named transpose becomes
// a generic first and splits the same way (its input sliced on the dims
// the permutation puts loops 0 and 1 on).
// CHECK-LABEL: func.func @main
//  CHECK-SAME:   (%[[X:.+]]: memref<?x?x16xf32>, %[[Y:.+]]: memref<?x?x16xf32>, %[[T:.+]]: memref<?x16x?xf32>)
//       CHECK:   %[[N0:.+]] = memref.dim %[[Y]], %{{.+}} : memref<?x?x16xf32>
//       CHECK:   %[[N1:.+]] = memref.dim %[[Y]], %{{.+}} : memref<?x?x16xf32>
//       CHECK:   memref.dim %[[Y]], %{{.+}} : memref<?x?x16xf32>
//       CHECK:   %[[WORK:.+]] = arith.muli %{{.+}}, %{{.+}} : index
//       CHECK:   %[[ZERO:.+]] = arith.constant 0 : index
//       CHECK:   call @[[PK:strata_pkernel_0]](%[[ZERO]], %[[N0]], %[[ZERO]], %[[N1]], %[[WORK]], %[[X]], %[[Y]])
//       CHECK:   call @[[TK:strata_pkernel_1]](
//   CHECK-NOT:   linalg.
//       CHECK: func.func private @[[PK]](%[[B0:.+]]: index, %[[E0:.+]]: index, %[[B1:.+]]: index, %[[E1:.+]]: index, %{{.+}}: index, %[[PX:.+]]: memref<?x?x16xf32>, %[[PY:.+]]: memref<?x?x16xf32>)
//  CHECK-SAME:   strata.parallel_kernel, strata.parallel_kernel_2d
//       CHECK:   %[[L0:.+]] = arith.subi %[[E0]], %[[B0]]
//       CHECK:   %[[L1:.+]] = arith.subi %[[E1]], %[[B1]]
//       CHECK:   memref.subview %[[PX]][%[[B0]], %[[B1]], 0] [%[[L0]], %[[L1]], 16] [1, 1, 1]
//       CHECK:   memref.subview %[[PY]][%[[B0]], %[[B1]], 0] [%[[L0]], %[[L1]], 16] [1, 1, 1]
//       CHECK:   linalg.generic
//       CHECK:   %[[I:.+]] = linalg.index 1 : index
//       CHECK:   arith.addi %[[I]], %[[B1]] : index
//       CHECK: func.func private @[[TK]](%[[TB0:.+]]: index, %{{.+}}: index, %[[TB1:.+]]: index, %{{.+}}: index, %{{.+}}: index, %[[TX:.+]]: memref<?x?x16xf32>, %[[TT:.+]]: memref<?x16x?xf32>)
//  CHECK-SAME:   strata.parallel_kernel, strata.parallel_kernel_2d
//       CHECK:   memref.subview %[[TX]][%[[TB0]], 0, %[[TB1]]]
//       CHECK:   memref.subview %[[TT]][%[[TB0]], %[[TB1]], 0]
//       CHECK:   linalg.generic
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @main(%x: memref<?x?x16xf32>, %y: memref<?x?x16xf32>, %t: memref<?x16x?xf32>) {
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : memref<?x?x16xf32>) outs(%y : memref<?x?x16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %j = linalg.index 1 : index
    %f = arith.index_cast %j : index to i32
    %g = arith.sitofp %f : i32 to f32
    %m = arith.addf %i, %g : f32
    linalg.yield %m : f32
  }
  linalg.transpose ins(%y : memref<?x?x16xf32>) outs(%t : memref<?x16x?xf32>) permutation = [0, 2, 1]
  return
}
