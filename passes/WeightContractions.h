//===- WeightContractions.h - Contractions by constant weights --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// What the precision passes (strata-quantize-weights,
// strata-bf16-contractions) rewrite: the linear layers of an entry, and
// which of them is its LM head.

#ifndef STRATA_PASSES_WEIGHTCONTRACTIONS_H_
#define STRATA_PASSES_WEIGHTCONTRACTIONS_H_

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

namespace strata {

/// The contractions whose results |func| returns, followed back through the
/// data movement between them (the LM head's reshapes and slices).
llvm::SmallPtrSet<mlir::Operation *, 4>
contractionsReturned(mlir::func::FuncOp func);

/// Every strata.linear, and every strata.matmul of an activation (rank >= 2)
/// by a constant 2-D fp32 weight, in |func|, in order; with |skipLmHead|
/// not those contractionsReturned() finds.
llvm::SmallVector<mlir::Operation *> weightContractions(mlir::func::FuncOp func,
                                                        bool skipLmHead);

} // namespace strata

#endif // STRATA_PASSES_WEIGHTCONTRACTIONS_H_
