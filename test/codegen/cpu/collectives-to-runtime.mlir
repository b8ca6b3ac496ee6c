// RUN: strata-opt %s --strata-cpu-collectives-to-runtime | FileCheck %s

// A tensor-parallel rank's collectives become calls of the runtime's
// imports on the input's buffer (read-only, tagged per call) and a fresh
// contiguous result; a rank-3 tensor is viewed as rank 4 with a leading 1,
// so an all-gather along dim 2 names dim 3 of the view, and the gathered
// dim of a dynamic result is the input's times the ranks.
// CHECK-DAG:   func.func private @strata_rt_all_reduce_f32(index) attributes {strata.runtime_import}
// CHECK-DAG:   func.func private @strata_rt_all_gather_f32(index) attributes {strata.runtime_import}
// CHECK-LABEL: func.func @reduce_then_gather
//       CHECK:   %[[PARAMS:.+]] = memref.alloca() : memref<12xi64>
//       CHECK:   bufferization.to_buffer %arg0 read_only {strata.runtime_call = 0 : i64}
//       CHECK:   %[[SUM:.+]] = memref.alloc(%{{.+}}) : memref<?x1x8xf32>
//       CHECK:   call @strata_rt_all_reduce_f32(
//       CHECK:   %[[T:.+]] = bufferization.to_tensor %[[SUM]] restrict writable
//       CHECK:   %[[C:.+]] = tensor.cast %[[T]]
//       CHECK:   bufferization.to_buffer %[[C]] read_only {strata.runtime_call = 1 : i64}
//       CHECK:   %[[R:.+]] = arith.constant 2 : index
//       CHECK:   %[[N:.+]] = arith.muli %{{.+}}, %[[R]] : index
//       CHECK:   memref.alloc(%{{.+}}, %[[N]]) : memref<?x1x?xf32>
//       CHECK:   arith.constant 3 : index
//       CHECK:   call @strata_rt_all_gather_f32(
//   CHECK-NOT:   strata.all_
func.func @reduce_then_gather(%x: tensor<?x1x8xf32>) -> tensor<?x1x?xf32> {
  %s = strata.all_reduce %x {ranks = 2 : i64} : tensor<?x1x8xf32>
  %c = tensor.cast %s : tensor<?x1x8xf32> to tensor<?x1x?xf32>
  %g = strata.all_gather %c {axis = 2 : i64, ranks = 2 : i64} : (tensor<?x1x?xf32>) -> tensor<?x1x?xf32>
  return %g : tensor<?x1x?xf32>
}
