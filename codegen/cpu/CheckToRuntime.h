//===- CheckToRuntime.h - strata.check -> the runtime's check import -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0

#ifndef STRATA_CODEGEN_CPU_CHECKTORUNTIME_H_
#define STRATA_CODEGEN_CPU_CHECKTORUNTIME_H_

#include "mlir/IR/BuiltinOps.h"

namespace strata::codegen::cpu {

/// Replaces every strata.check by `scf.if %failed` around a call of the
/// runtime's `strata_rt_check_failed` (codegen/abi/strata_kernel_abi.h),
/// with the node and input names as NUL-terminated constants. Runs after
/// kernels are outlined: the checks stay in the entry function, on the
/// thread that called it. Returns the number of checks.
unsigned lowerChecksToRuntime(mlir::ModuleOp module);

} // namespace strata::codegen::cpu

#endif // STRATA_CODEGEN_CPU_CHECKTORUNTIME_H_
