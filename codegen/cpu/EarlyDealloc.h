//===- EarlyDealloc.h - Free buffers after their last use -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0

#ifndef STRATA_CODEGEN_CPU_EARLYDEALLOC_H_
#define STRATA_CODEGEN_CPU_EARLYDEALLOC_H_

#include "mlir/IR/BuiltinOps.h"

namespace strata::codegen::cpu {

/// Moves every `memref.dealloc` of a `memref.alloc` in the same block to
/// just after the last op of that block that uses the buffer or any view of
/// it (a raw address taken from it stays live up to the next call, which is
/// how the runtime imports receive it). MLIR's deallocation pipeline frees
/// at the end of the block, which keeps every intermediate of a model alive
/// for the whole run; freed early, the runtime's buffer cache hands the
/// block to the next allocation of its size. Returns how many moved.
unsigned freeBuffersEarly(mlir::ModuleOp module);

} // namespace strata::codegen::cpu

#endif // STRATA_CODEGEN_CPU_EARLYDEALLOC_H_
