// RUN: strata-opt %s --strata-cpu-matmul-to-runtime | FileCheck %s

// A linear layer's output starts from its bias: the broadcast that writes
// the bias into every row of C right before the contraction is taken into
// the call (STRATA_MM_BIAS, field 35, the bias's address; FLAGS 0, so C is
// overwritten, not added to) and erased.
// CHECK-LABEL: func.func @bias
//   CHECK-NOT:   linalg.generic
//       CHECK:   %[[PTR:.+]] = memref.extract_aligned_pointer_as_index %arg1
//       CHECK:   %[[BIAS:.+]] = arith.addi %[[PTR]]
//       CHECK:   %[[NOACC:.+]] = arith.constant 0 : index
//       CHECK:   %[[F:.+]] = arith.index_cast %[[NOACC]] : index to i64
//  CHECK-NEXT:   %[[C0:.+]] = arith.constant 0 : index
//  CHECK-NEXT:   memref.store %[[F]], %[[P:.+]][%[[C0]]]
//  CHECK-NEXT:   %[[B:.+]] = arith.index_cast %[[BIAS]] : index to i64
//  CHECK-NEXT:   %[[C35:.+]] = arith.constant 35 : index
//  CHECK-NEXT:   memref.store %[[B]], %[[P]][%[[C35]]]
//       CHECK:   call @strata_rt_matmul_f32
//   CHECK-NOT:   linalg.generic
//       CHECK:   return

// Not a bias of C's columns (a value per row), not right before the
// contraction (a store in between), or not a plain copy of the bias: the
// broadcast stays and the call adds to C (FLAGS 1).
// CHECK-LABEL: func.func @not_bias
//       CHECK:   linalg.generic
//       CHECK:   call @strata_rt_matmul_f32
//       CHECK:   linalg.generic
//       CHECK:   memref.store
//       CHECK:   call @strata_rt_matmul_f32
//       CHECK:   linalg.generic
//       CHECK:   arith.mulf
//       CHECK:   call @strata_rt_matmul_f32
//   CHECK-NOT:   linalg.generic
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#col = affine_map<(m, n) -> (n)>
#row = affine_map<(m, n) -> (m)>
#id = affine_map<(m, n) -> (m, n)>
module {
  func.func @bias(%x: memref<4x8xf32>, %bias: memref<40xf32>, %y: memref<8x40xf32>, %out: memref<4x40xf32>) {
    linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]} ins(%bias : memref<40xf32>) outs(%out : memref<4x40xf32>) {
    ^bb0(%in: f32, %o: f32):
      linalg.yield %in : f32
    }
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %y : memref<4x8xf32>, memref<8x40xf32>) outs(%out : memref<4x40xf32>) {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %p = arith.mulf %i, %j : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }
    return
  }
  func.func @not_bias(%x: memref<4x8xf32>, %rowBias: memref<4xf32>, %bias: memref<40xf32>, %y: memref<8x40xf32>, %out: memref<4x40xf32>, %flag: memref<1xf32>) {
    linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]} ins(%rowBias : memref<4xf32>) outs(%out : memref<4x40xf32>) {
    ^bb0(%in: f32, %o: f32):
      linalg.yield %in : f32
    }
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %y : memref<4x8xf32>, memref<8x40xf32>) outs(%out : memref<4x40xf32>) {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %p = arith.mulf %i, %j : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]} ins(%bias : memref<40xf32>) outs(%out : memref<4x40xf32>) {
    ^bb0(%in: f32, %o: f32):
      linalg.yield %in : f32
    }
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    memref.store %zero, %flag[%c0] : memref<1xf32>
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %y : memref<4x8xf32>, memref<8x40xf32>) outs(%out : memref<4x40xf32>) {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %p = arith.mulf %i, %j : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]} ins(%bias : memref<40xf32>) outs(%out : memref<4x40xf32>) {
    ^bb0(%in: f32, %o: f32):
      %twice = arith.mulf %in, %in : f32
      linalg.yield %twice : f32
    }
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %y : memref<4x8xf32>, memref<8x40xf32>) outs(%out : memref<4x40xf32>) {
    ^bb0(%i: f32, %j: f32, %o: f32):
      %p = arith.mulf %i, %j : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }
    return
  }
}
