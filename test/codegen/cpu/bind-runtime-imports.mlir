// RUN: strata-opt %s --strata-cpu-bind-runtime-imports | FileCheck %s

// Every declaration marked as a runtime import gets an internal body
// calling through an exported pointer slot the runtime fills after
// loading; the count of slots is exported too. Other declarations (libm,
// here @not_an_import) are left to the dynamic loader.
// CHECK:      llvm.func internal @strata_rt_alloc(%[[C:.+]]: !llvm.ptr, %[[N:.+]]: i64) -> !llvm.ptr attributes {strata.runtime_import} {
// CHECK-NEXT:   %[[SLOT:.+]] = llvm.mlir.addressof @__strata_import_strata_rt_alloc : !llvm.ptr
// CHECK-NEXT:   %[[F:.+]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT:   %[[R:.+]] = llvm.call %[[F]](%[[C]], %[[N]]) : !llvm.ptr, (!llvm.ptr, i64) -> !llvm.ptr
// CHECK-NEXT:   llvm.return %[[R]] : !llvm.ptr
// CHECK:      llvm.func internal @strata_rt_free(
// CHECK:      llvm.func internal @strata_rt_matmul_f32(
// CHECK:      llvm.func @not_an_import(i64)
// CHECK-LABEL: llvm.func @main
// CHECK:        llvm.call @strata_rt_alloc(
// CHECK:        llvm.call @strata_rt_matmul_f32(
// CHECK:        llvm.call @strata_rt_free(
// CHECK:      llvm.mlir.global external @__strata_import_strata_rt_alloc() {{.*}} : !llvm.ptr {
// CHECK-NEXT:   llvm.mlir.zero : !llvm.ptr
// CHECK:      llvm.mlir.global external @__strata_import_strata_rt_free()
// CHECK:      llvm.mlir.global external @__strata_import_strata_rt_matmul_f32()
// CHECK:      llvm.mlir.global external constant @__strata_import_count(3 : i32)
module {
  llvm.func @strata_rt_alloc(!llvm.ptr, i64) -> !llvm.ptr attributes {strata.runtime_import}
  llvm.func @strata_rt_free(!llvm.ptr, !llvm.ptr) attributes {strata.runtime_import}
  llvm.func @strata_rt_matmul_f32(!llvm.ptr, i64) attributes {strata.runtime_import, sym_visibility = "private"}
  llvm.func @not_an_import(i64)
  llvm.func @main(%ctx: !llvm.ptr, %n: i64) {
    %p = llvm.call @strata_rt_alloc(%ctx, %n) : (!llvm.ptr, i64) -> !llvm.ptr
    llvm.call @strata_rt_matmul_f32(%ctx, %n) : (!llvm.ptr, i64) -> ()
    llvm.call @strata_rt_free(%ctx, %p) : (!llvm.ptr, !llvm.ptr) -> ()
    llvm.return
  }
}
