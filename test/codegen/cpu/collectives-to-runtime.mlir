// RUN: strata-opt %s --strata-cpu-collectives-to-runtime | FileCheck %s

// A tensor-parallel rank's collectives become calls of the runtime's
// imports on the input's buffer (read-only, tagged per call) and a fresh
// contiguous result; a rank-3 tensor is viewed as rank 4 with a leading 1,
// so an all-gather along dim 2 names dim 3 of the view, and the gathered
// dim of a dynamic result is the input's times the ranks.
// CHECK-DAG:   func.func private @strata_rt_all_reduce_f32(index) attributes {strata.runtime_import}
// CHECK-DAG:   func.func private @strata_rt_all_gather_f32(index) attributes {strata.runtime_import}
// CHECK-DAG:   func.func private @strata_rt_send_f32(index) attributes {strata.runtime_import}
// CHECK-DAG:   func.func private @strata_rt_recv_extents_f32(index) attributes {strata.runtime_import}
// CHECK-DAG:   func.func private @strata_rt_recv_f32(index) attributes {strata.runtime_import}
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

// A pipeline stage's hand-overs: the send reads the input's buffer as it
// lies (rank 4 with a leading 1); the receive takes the message's extents
// first into a stack buffer that holds the ones the code fixes (1 for the
// padding, 64 for the static dim, -1 where the message decides), then
// allocates the result from them and takes the elements into it.
// CHECK-LABEL: func.func @hand_over
//       CHECK:   %[[EXTENTS:.+]] = memref.alloca() : memref<4xi64>
//       CHECK:   %[[PAD:.+]] = arith.constant 1 : i64
//       CHECK:   memref.store %[[PAD]], %[[EXTENTS]]
//       CHECK:   %[[ANY:.+]] = arith.constant -1 : i64
//       CHECK:   memref.store %[[ANY]], %[[EXTENTS]]
//       CHECK:   %[[FIXED:.+]] = arith.constant 64 : i64
//       CHECK:   memref.store %[[FIXED]], %[[EXTENTS]]
//       CHECK:   call @strata_rt_recv_extents_f32(
//       CHECK:   %[[B:.+]] = memref.load %[[EXTENTS]]
//       CHECK:   %[[BI:.+]] = arith.index_cast %[[B]] : i64 to index
//       CHECK:   %[[S:.+]] = memref.load %[[EXTENTS]]
//       CHECK:   %[[SI:.+]] = arith.index_cast %[[S]] : i64 to index
//       CHECK:   %[[BUF:.+]] = memref.alloc(%[[BI]], %[[SI]]) : memref<?x?x64xf32>
//       CHECK:   call @strata_rt_recv_f32(
//       CHECK:   %[[IN:.+]] = bufferization.to_tensor %[[BUF]] restrict writable
//       CHECK:   %[[Y:.+]] = strata.add %[[IN]], %[[IN]]
//       CHECK:   bufferization.to_buffer %[[Y]] read_only
//       CHECK:   call @strata_rt_send_f32(
//   CHECK-NOT:   strata.send
func.func @hand_over() {
  %h = strata.recv {stage = 0 : i64} : () -> tensor<?x?x64xf32>
  %y = strata.add %h, %h : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  strata.send %y {stage = 2 : i64} : tensor<?x?x64xf32>
  return
}

// With a shape operand the buffer's extents are the ones the code
// computes (the message must have them), not the message's.
// CHECK-LABEL: func.func @received_output
//       CHECK:   %[[B:.+]] = tensor.extract %arg0
//       CHECK:   memref.store %[[B]], %{{.+}}
//       CHECK:   call @strata_rt_recv_extents_f32(
//   CHECK-NOT:   memref.load
//       CHECK:   %[[BI:.+]] = arith.index_cast %[[B]] : i64 to index
//       CHECK:   memref.alloc(%[[BI]]) : memref<?x256xf32>
//       CHECK:   call @strata_rt_recv_f32(
func.func @received_output(%shape: tensor<2xi64>) -> tensor<?x256xf32> {
  %l = strata.recv %shape {stage = 1 : i64} : (tensor<2xi64>) -> tensor<?x256xf32>
  return %l : tensor<?x256xf32>
}
