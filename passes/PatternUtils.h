//===- PatternUtils.h - Helpers shared by the fusion patterns --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Constant matching with tolerance, commutative operand matching and the
// bookkeeping every fusion rewrite does (single uses, the fused location).

#ifndef STRATA_PASSES_PATTERNUTILS_H_
#define STRATA_PASSES_PATTERNUTILS_H_

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace strata {

/// True if |v| holds a scalar constant (ir::evaluateScalarConstant) within
/// relative tolerance |relTol| of |expected|.
bool isFloatConstant(mlir::Value v, double expected, double relTol = 1e-3);

/// For a binary op with operands (a, b), tries |match|(a, b) then, if the op
/// is commutative, |match|(b, a). Returns true on the first success.
bool matchEitherOrder(mlir::Value a, mlir::Value b, bool commutative,
                      llvm::function_ref<bool(mlir::Value, mlir::Value)> match);

/// The only user of |v| if it has exactly one use, else nullptr.
mlir::Operation *soleUser(mlir::Value v);

/// True if every user of every op in |ops| but |root| is in |ops| (the
/// chain can be replaced at |root|), users for which |exempt|(op, user)
/// holds aside.
bool usedOnlyInside(
    llvm::ArrayRef<mlir::Operation *> ops, mlir::Operation *root,
    llvm::function_ref<bool(mlir::Operation *, mlir::Operation *)> exempt =
        nullptr);

/// The location of an op that replaces |ops|: every one's location fused,
/// so a later diagnostic names every source node.
mlir::Location fusedLocOf(mlir::Builder &builder,
                          llvm::ArrayRef<mlir::Operation *> ops);

} // namespace strata

#endif // STRATA_PASSES_PATTERNUTILS_H_
