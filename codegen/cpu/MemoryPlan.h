//===- MemoryPlan.h - One arena for intermediates --------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0

#ifndef STRATA_CODEGEN_CPU_MEMORYPLAN_H_
#define STRATA_CODEGEN_CPU_MEMORYPLAN_H_

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>

namespace strata::codegen::cpu {

/// Name of the function attribute that gives, per argument, the maximum of
/// each dim (an array of DenseI64ArrayAttr; -1 where the dim is static or
/// has no maximum). Set from the manifest's symbolic dims before codegen.
inline constexpr llvm::StringLiteral kInputMaximaAttr = "strata.input_maxima";

struct MemoryPlanStats {
  unsigned planned = 0;     // intermediates placed in the arena
  unsigned unplanned = 0;   // left to the runtime's buffer cache
  uint64_t arenaBytes = 0;  // arena size at the compile-time maxima (sum over entries)
  uint64_t plannedBytes = 0; // what the planned buffers would take unshared
};

/// Places every intermediate buffer (a `memref.alloc` freed by a
/// `memref.dealloc` in the same block, after freeBuffersEarly) whose size
/// has a compile-time upper bound (static, or computed from input dims with
/// maxima by +, -, *, /, max, min, select) at a fixed offset of one arena
/// per entry function: buffers whose lifetimes overlap get disjoint ranges,
/// others share (greedy, largest first). The arena is one allocation per
/// run from the runtime (its buffer cache returns the same block every run).
/// Buffers with data-dependent sizes stay separate allocations.
MemoryPlanStats planMemory(mlir::ModuleOp module);

} // namespace strata::codegen::cpu

#endif // STRATA_CODEGEN_CPU_MEMORYPLAN_H_
