// RUN: strata-opt %s --split-input-file --verify-diagnostics --strata-cpu-pass-run-context | FileCheck %s

// malloc/free become the runtime's allocator imports. The entry gets the
// run context as a new first parameter and passes it to every import and
// to @helper, which calls an import through @leaf; @pure calls none and
// keeps its type. The task already has the context first: it passes it to
// the kernel it runs, which allocates. The parallel_for import gets it too.
// CHECK-LABEL: llvm.func @strata_rt_alloc(!llvm.ptr, i64) -> !llvm.ptr attributes {strata.runtime_import}
// CHECK-LABEL: llvm.func @strata_rt_free(!llvm.ptr, !llvm.ptr) attributes {strata.runtime_import}
// CHECK-LABEL: llvm.func @strata_rt_parallel_for(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64) attributes {strata.runtime_import}
// CHECK-LABEL: llvm.func @leaf(%{{.+}}: !llvm.ptr, %{{.+}}: i64)
// CHECK:         llvm.call @strata_rt_alloc(%{{.+}}, %{{.+}}) : (!llvm.ptr, i64) -> !llvm.ptr
// CHECK:       llvm.func @helper(%[[HC:.+]]: !llvm.ptr, %[[HN:.+]]: i64)
// CHECK:         llvm.call @leaf(%[[HC]], %[[HN]])
// CHECK-LABEL: llvm.func @pure(%{{.+}}: i64) -> i64
// CHECK:       llvm.func @kernel(%[[KC:.+]]: !llvm.ptr, %{{.+}}: i64, %{{.+}}: i64)
// CHECK:         llvm.call @strata_rt_alloc(%[[KC]],
// CHECK:       llvm.func internal @kernel.task(%[[TC:.+]]: !llvm.ptr, %{{.+}}: !llvm.ptr, %[[B:.+]]: i64, %[[E:.+]]: i64)
// CHECK:         llvm.call @kernel(%[[TC]], %[[B]], %[[E]])
// CHECK:       llvm.func @main(%[[C:.+]]: !llvm.ptr, %[[N:.+]]: i64) attributes {strata.entry}
// CHECK:         %[[P:.+]] = llvm.call @strata_rt_alloc(%[[C]], %[[N]])
// CHECK:         llvm.call @helper(%[[C]], %[[N]])
// CHECK:         llvm.call @pure(%[[N]])
// CHECK:         llvm.call @strata_rt_parallel_for(%[[C]], %{{.+}}, %{{.+}}, %{{.+}}, %[[N]], %[[N]])
// CHECK:         llvm.call @strata_rt_free(%[[C]], %[[P]])
// CHECK-LABEL: llvm.func @no_imports(%{{.+}}: !llvm.ptr) attributes {strata.entry}
module {
  llvm.func @malloc(i64) -> !llvm.ptr
  llvm.func @free(!llvm.ptr)
  llvm.func @strata_rt_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64) attributes {strata.runtime_import}
  llvm.func @leaf(%n: i64) {
    %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
    llvm.return
  }
  llvm.func @helper(%n: i64) {
    llvm.call @leaf(%n) : (i64) -> ()
    llvm.return
  }
  llvm.func @pure(%n: i64) -> i64 {
    llvm.return %n : i64
  }
  llvm.func @kernel(%b: i64, %e: i64) {
    %p = llvm.call @malloc(%e) : (i64) -> !llvm.ptr
    llvm.return
  }
  llvm.func internal @kernel.task(%ctx: !llvm.ptr, %slots: !llvm.ptr, %b: i64, %e: i64) attributes {strata.parallel_task} {
    llvm.call @kernel(%b, %e) : (i64, i64) -> ()
    llvm.return
  }
  llvm.func @main(%n: i64) attributes {strata.entry} {
    %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
    llvm.call @helper(%n) : (i64) -> ()
    %m = llvm.call @pure(%n) : (i64) -> i64
    %task = llvm.mlir.addressof @kernel.task : !llvm.ptr
    %zero = llvm.mlir.constant(0 : i64) : i64
    llvm.call @strata_rt_parallel_for(%task, %p, %zero, %n, %n) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
    llvm.call @free(%p) : (!llvm.ptr) -> ()
    llvm.return
  }
  // An entry takes the context even when it calls no import (the ABI).
  llvm.func @no_imports() attributes {strata.entry} {
    llvm.return
  }
}

// -----

// A function that needs the context cannot be called through its address.
module {
  llvm.func @malloc(i64) -> !llvm.ptr
  llvm.func @allocates(%n: i64) {
    %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
    llvm.return
  }
  llvm.func @main() attributes {strata.entry} {
    // expected-error @below {{the address of 'allocates' is taken, but it needs the run context}}
    %f = llvm.mlir.addressof @allocates : !llvm.ptr
    llvm.return
  }
}
