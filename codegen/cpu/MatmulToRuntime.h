//===- MatmulToRuntime.h - Contractions -> the runtime's matmul -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0

#ifndef STRATA_CODEGEN_CPU_MATMULTORUNTIME_H_
#define STRATA_CODEGEN_CPU_MATMULTORUNTIME_H_

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace strata::codegen::cpu {

/// Replaces every fp32 contraction (a linalg.generic on memrefs computing
/// C[b.., m, n] += A[b.., m, k] * B[b.., k, n] with any strides) by a call
/// to the runtime's `strata_rt_matmul_f32` (kernel ABI v2, imports). A B
/// operand that is a weight is packed at compile time into the panel layout
/// of the ABI header, in a new weight global; a zero fill of C right before
/// the contraction is dropped (the call overwrites C).
struct MatmulLoweringStats {
  unsigned calls = 0;         // contractions replaced
  unsigned packedCalls = 0;   // of which read a pre-packed weight
  unsigned packedWeights = 0; // distinct packed weights
};
mlir::FailureOr<MatmulLoweringStats>
lowerMatmulsToRuntime(mlir::ModuleOp module);

} // namespace strata::codegen::cpu

#endif // STRATA_CODEGEN_CPU_MATMULTORUNTIME_H_
