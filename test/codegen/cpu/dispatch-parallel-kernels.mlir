// RUN: strata-opt %s --strata-cpu-dispatch-parallel-kernels | FileCheck %s

// A call of a parallel kernel becomes strata_rt_parallel_for over a task
// that loads the kernel's other arguments (a pointer and a float here)
// from 8-byte slots the caller fills; begin, end and work pass through.
// The task has the kernel ABI's task type: the run context first, then
// the slots, begin and end.
// CHECK-LABEL: llvm.func @main
//  CHECK-SAME:   (%[[P:.+]]: !llvm.ptr, %[[N:.+]]: i64)
//       CHECK:   %[[SLOTS:.+]] = llvm.mlir.constant(2 : i64) : i64
//       CHECK:   %[[CTX:.+]] = llvm.alloca %[[SLOTS]] x i64
//       CHECK:   %[[BEGIN:.+]] = llvm.mlir.constant(0 : i64) : i64
//       CHECK:   %[[X:.+]] = llvm.mlir.constant(2.000000e+00 : f32) : f32
//       CHECK:   %[[S0:.+]] = llvm.getelementptr %[[CTX]][0]
//       CHECK:   llvm.store %[[P]], %[[S0]] : !llvm.ptr, !llvm.ptr
//       CHECK:   %[[S1:.+]] = llvm.getelementptr %[[CTX]][1]
//       CHECK:   llvm.store %[[X]], %[[S1]] : f32, !llvm.ptr
//       CHECK:   %[[TASK:.+]] = llvm.mlir.addressof @kernel.task
//       CHECK:   llvm.call @strata_rt_parallel_for(%[[TASK]], %[[CTX]], %[[BEGIN]], %[[N]], %[[N]])
//   CHECK-NOT:   llvm.call @kernel(
//       CHECK: llvm.func @strata_rt_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64) attributes {strata.runtime_import}
//       CHECK: llvm.func internal @kernel.task(%{{.+}}: !llvm.ptr, %[[C:.+]]: !llvm.ptr, %[[B:.+]]: i64, %[[E:.+]]: i64) attributes {strata.parallel_task}
//       CHECK:   %[[W:.+]] = llvm.mlir.constant(0 : i64) : i64
//       CHECK:   %[[G0:.+]] = llvm.getelementptr %[[C]][0]
//       CHECK:   %[[L0:.+]] = llvm.load %[[G0]] : !llvm.ptr -> !llvm.ptr
//       CHECK:   %[[G1:.+]] = llvm.getelementptr %[[C]][1]
//       CHECK:   %[[L1:.+]] = llvm.load %[[G1]] : !llvm.ptr -> f32
//       CHECK:   llvm.call @kernel(%[[B]], %[[E]], %[[W]], %[[L0]], %[[L1]])
module {
  llvm.func @kernel(%b: i64, %e: i64, %w: i64, %p: !llvm.ptr, %x: f32) attributes {strata.parallel_kernel, passthrough = ["noinline"]} {
    llvm.return
  }
  llvm.func @main(%p: !llvm.ptr, %n: i64) {
    %zero = llvm.mlir.constant(0 : i64) : i64
    %x = llvm.mlir.constant(2.0 : f32) : f32
    llvm.call @kernel(%zero, %n, %n, %p, %x) : (i64, i64, i64, !llvm.ptr, f32) -> ()
    llvm.return
  }
}
