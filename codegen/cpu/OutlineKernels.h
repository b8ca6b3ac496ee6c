//===- OutlineKernels.h - One function per linalg op -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0

#ifndef STRATA_CODEGEN_CPU_OUTLINEKERNELS_H_
#define STRATA_CODEGEN_CPU_OUTLINEKERNELS_H_

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace strata::codegen::cpu {

/// Prefix of the outlined kernel functions; codegen marks them noinline.
inline constexpr llvm::StringLiteral kKernelPrefix = "strata_kernel_";
/// Prefix of the kernels that take (begin, end, work) first: a slice of
/// their first loop (see OutlineKernels.cpp).
inline constexpr llvm::StringLiteral kParallelKernelPrefix =
    "strata_pkernel_";

/// Moves every linalg op on memrefs in a public function into a private
/// function of its own (`strata_kernel_<n>`, or `strata_pkernel_<n>` when it
/// can run in slices of its first loop), called in its place. Keeps
/// each LLVM function small: optimizing one entry with every loop nest of a
/// model inline costs superlinear time (dominator-tree updates), and each
/// kernel is the unit the thread pool will split. Returns the count.
unsigned outlineKernels(mlir::ModuleOp module);

} // namespace strata::codegen::cpu

#endif // STRATA_CODEGEN_CPU_OUTLINEKERNELS_H_
