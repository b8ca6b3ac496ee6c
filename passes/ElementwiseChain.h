//===- ElementwiseChain.h - Single-input elementwise chains ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Finds the chains of elementwise strata ops that compute a function of one
// tensor (scalar constants aside) and evaluates them in double precision, so
// fusion can ask what a chain computes instead of how it is spelled.

#ifndef STRATA_PASSES_ELEMENTWISECHAIN_H_
#define STRATA_PASSES_ELEMENTWISECHAIN_H_

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace strata {

/// A function of one value built from elementwise ops: every operand of
/// every op in |ops| (float elementwise ops, isFloatElementwiseOp; casts
/// are excluded: they round) is |input|, the result of another op in |ops|,
/// or a scalar constant (evaluateScalarConstant: Keras' `sqrt(2.0)`).
struct ElementwiseChain {
  /// The one non-constant value the chain reads.
  mlir::Value input;
  /// The op whose result is the chain's value.
  mlir::Operation *root = nullptr;
  /// Every op of the chain, |root| included, in program order.
  llvm::SmallVector<mlir::Operation *, 8> ops;
};

/// Every single-input chain whose ops include |anchor|: for each root among
/// |anchor| and the chain ops its result flows into, each cut of the ops
/// the root is computed from that leaves exactly one non-constant input.
/// Largest chains first. Bounded in size, so any graph is cheap to search.
llvm::SmallVector<ElementwiseChain> chainsThrough(mlir::Operation *anchor);

/// The chain's value with its input set to each of |points|, computed in
/// double precision with the ops' real-number semantics (a NaN or infinity
/// is kept and compares unequal to any finite reference).
llvm::SmallVector<double> evaluateChain(const ElementwiseChain &chain,
                                        llvm::ArrayRef<double> points);

/// Why |chain| cannot be replaced by one op on its input, or std::nullopt:
/// an intermediate value used outside the chain, or an op whose result type
/// is not the input's (the chain broadcasts its input).
std::optional<std::string> replacementObstacle(const ElementwiseChain &chain);

} // namespace strata

#endif // STRATA_PASSES_ELEMENTWISECHAIN_H_
