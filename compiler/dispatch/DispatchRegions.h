//===- DispatchRegions.h - Dispatch-region formation and queries -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// A dispatch region is the unit of work a back end launches: one or more
// ops of a public function with the same `strata.dispatch` id, marked on
// tensors by strata-form-dispatch-regions (Passes.td) and kept on their
// memref forms through bufferization.

#ifndef STRATA_COMPILER_DISPATCH_DISPATCHREGIONS_H_
#define STRATA_COMPILER_DISPATCH_DISPATCHREGIONS_H_

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace strata::dispatch {

/// The attribute on every member op: `{id = N : i64, kind = "..."}`.
inline constexpr llvm::StringLiteral kDispatchAttr = "strata.dispatch";

/// The region |op| belongs to, if any.
std::optional<int64_t> dispatchId(mlir::Operation *op);

/// The kind of |op|'s region ("" if none).
llvm::StringRef dispatchKind(mlir::Operation *op);

/// Marks |op| a member of region |id| of |kind|.
void setDispatch(mlir::Operation *op, int64_t id, llvm::StringRef kind);

/// Regions per public function, by kind, for `strata-compile --report`.
struct EntryDispatches {
  std::string entry;
  std::map<std::string, unsigned> byKind;
  unsigned total = 0;
  /// Calls of each runtime kernel (the per-phase kernel choices: decode's
  /// weight-only int8 matmul beside prefill's fp32 one).
  std::map<std::string, unsigned> runtimeCalls;
};

/// The product p of a structured op with one output whose body is
/// yield(acc + p) (either order), acc the output's block argument, when p
/// is an arith.mulf (a multiply-accumulate, whatever its inputs); null
/// otherwise.
mlir::arith::MulFOp accumulatedProduct(mlir::linalg::LinalgOp op);

/// Counts the regions of every public function of |module|.
std::vector<EntryDispatches> countDispatches(mlir::ModuleOp module);

#define GEN_PASS_DECL
#include "compiler/dispatch/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/dispatch/Passes.h.inc"

} // namespace strata::dispatch

#endif // STRATA_COMPILER_DISPATCH_DISPATCHREGIONS_H_
