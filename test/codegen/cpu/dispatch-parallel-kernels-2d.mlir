// RUN: strata-opt %s --strata-cpu-dispatch-parallel-kernels | FileCheck %s

// A 2-D parallel kernel (begin0, end0, begin1, end1, work): the caller's
// slots hold both loops' extents before the kernel's own arguments, and
// the pool splits loop 0 when it has 16 iterations or more or at least as
// many as loop 1, else loop 1; the task decides the same way from the
// slots and runs the other loop whole.
// CHECK-LABEL: llvm.func @main
//  CHECK-SAME:   (%[[P:.+]]: !llvm.ptr, %[[N0:.+]]: i64, %[[N1:.+]]: i64, %[[W:.+]]: i64)
//       CHECK:   %[[SLOTS:.+]] = llvm.alloca %{{.+}} x i64
//       CHECK:   llvm.store %[[N0]], %{{.+}} : i64, !llvm.ptr
//       CHECK:   llvm.store %[[N1]], %{{.+}} : i64, !llvm.ptr
//       CHECK:   llvm.store %[[P]], %{{.+}} : !llvm.ptr, !llvm.ptr
//       CHECK:   %[[SIXTEEN:.+]] = llvm.mlir.constant(16 : i64) : i64
//       CHECK:   %[[MANY:.+]] = llvm.icmp "sge" %[[N0]], %[[SIXTEEN]] : i64
//       CHECK:   %[[LONGER:.+]] = llvm.icmp "sge" %[[N0]], %[[N1]] : i64
//       CHECK:   %[[FIRST:.+]] = llvm.or %[[MANY]], %[[LONGER]] : i1
//       CHECK:   %[[BEGIN:.+]] = llvm.select %[[FIRST]]
//       CHECK:   %[[END:.+]] = llvm.select %[[FIRST]], %[[N0]], %[[N1]] : i1, i64
//       CHECK:   llvm.call @strata_rt_parallel_for(%{{.+}}, %[[SLOTS]], %[[BEGIN]], %[[END]], %[[W]])
//       CHECK: llvm.func internal @kernel.task(%{{.+}}: !llvm.ptr, %[[C:.+]]: !llvm.ptr, %[[B:.+]]: i64, %[[E:.+]]: i64)
//       CHECK:   %[[Z:.+]] = llvm.mlir.constant(0 : i64) : i64
//       CHECK:   %[[T0:.+]] = llvm.load %{{.+}} : !llvm.ptr -> i64
//       CHECK:   %[[T1:.+]] = llvm.load %{{.+}} : !llvm.ptr -> i64
//       CHECK:   %[[F:.+]] = llvm.or
//       CHECK:   %[[B0:.+]] = llvm.select %[[F]], %[[B]], %[[Z]]
//       CHECK:   %[[E0:.+]] = llvm.select %[[F]], %[[E]], %[[T0]]
//       CHECK:   %[[B1:.+]] = llvm.select %[[F]], %[[Z]], %[[B]]
//       CHECK:   %[[E1:.+]] = llvm.select %[[F]], %[[T1]], %[[E]]
//       CHECK:   %[[PTR:.+]] = llvm.load %{{.+}} : !llvm.ptr -> !llvm.ptr
//       CHECK:   llvm.call @kernel(%[[B0]], %[[E0]], %[[B1]], %[[E1]], %[[Z]], %[[PTR]])
module {
  llvm.func @kernel(%b0: i64, %e0: i64, %b1: i64, %e1: i64, %w: i64, %p: !llvm.ptr) attributes {strata.parallel_kernel, strata.parallel_kernel_2d, passthrough = ["noinline"]} {
    llvm.return
  }
  llvm.func @main(%p: !llvm.ptr, %n0: i64, %n1: i64, %work: i64) {
    %zero = llvm.mlir.constant(0 : i64) : i64
    llvm.call @kernel(%zero, %n0, %zero, %n1, %work, %p) : (i64, i64, i64, i64, i64, !llvm.ptr) -> ()
    llvm.return
  }
}
