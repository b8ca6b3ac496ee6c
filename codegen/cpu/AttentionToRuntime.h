//===- AttentionToRuntime.h - strata.attention -> the runtime -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0

#ifndef STRATA_CODEGEN_CPU_ATTENTIONTORUNTIME_H_
#define STRATA_CODEGEN_CPU_ATTENTIONTORUNTIME_H_

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace strata::codegen::cpu {

/// Replaces every fp32 `strata.attention` of rank-4 operands (an absent or
/// fp32 mask, static head counts) by a call to the runtime's
/// `strata_rt_attention_f32` (kernel ABI v2, imports) on the operands'
/// buffers, before strata-lower-to-linalg: the tensors enter and leave
/// through bufferization.to_buffer / to_tensor, so one-shot bufferization
/// keeps them in place. Other attention ops are left to the generic
/// lowering. Returns how many were replaced.
unsigned lowerAttentionToRuntime(mlir::ModuleOp module);

} // namespace strata::codegen::cpu

#endif // STRATA_CODEGEN_CPU_ATTENTIONTORUNTIME_H_
