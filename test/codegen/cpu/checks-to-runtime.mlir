// RUN: strata-opt %s --strata-cpu-checks-to-runtime | FileCheck %s

// Each check becomes a branch around a call of the runtime's check-failed
// import; node and input names are NUL-terminated constants, one per
// distinct string, numbered by first use (reproducible artifacts).
// CHECK:       func.func private @strata_rt_check_failed(!llvm.ptr, !llvm.ptr, i64, i64, i64, i64) attributes {strata.runtime_import}
// CHECK:       llvm.mlir.global internal constant @__strata_check_text_0("wte\00")
// CHECK:       llvm.mlir.global internal constant @__strata_check_text_1("input_ids\00")
// CHECK:       llvm.mlir.global internal constant @__strata_check_text_2("wpe\00")
// CHECK-LABEL: func.func @main
//  CHECK-SAME:   (%[[I:.+]]: i64, %[[N:.+]]: i64)
//       CHECK:   %[[BAD:.+]] = arith.cmpi sge, %[[I]], %[[N]]
//       CHECK:   scf.if %[[BAD]] {
//       CHECK:     %[[NODE:.+]] = llvm.mlir.addressof @__strata_check_text_0
//       CHECK:     %[[INPUT:.+]] = llvm.mlir.addressof @__strata_check_text_1
//       CHECK:     %[[KIND:.+]] = arith.constant 1 : i64
//       CHECK:     func.call @strata_rt_check_failed(%[[NODE]], %[[INPUT]], %[[KIND]], %[[I]], %[[N]], %{{.+}})
//       CHECK:   scf.if
//       CHECK:     llvm.mlir.addressof @__strata_check_text_2
//       CHECK:     llvm.mlir.addressof @__strata_check_text_1
//   CHECK-NOT:   strata.check
func.func @main(%i: i64, %n: i64) {
  %bad = arith.cmpi sge, %i, %n : i64
  %z = arith.constant 0 : i64
  strata.check %bad, %i, %n, %z {input = "input_ids", kind = 1 : i64, node = "wte"}
  %bad2 = arith.cmpi slt, %i, %z : i64
  strata.check %bad2, %i, %n, %z {input = "input_ids", kind = 1 : i64, node = "wpe"}
  return
}
