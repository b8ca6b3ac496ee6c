//===- WeightContractions.h - Contractions by constant weights --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// What the precision passes (strata-quantize-weights,
// strata-bf16-contractions, strata-apply-activation-scales) rewrite: the
// linear layers of an entry, which of them is its LM head, and their
// weights' values (also read by the passes that rewrite constant weights).

#ifndef STRATA_PASSES_WEIGHTCONTRACTIONS_H_
#define STRATA_PASSES_WEIGHTCONTRACTIONS_H_

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <vector>

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

/// The elements of a static-shaped fp32 constant (dense or resource),
/// row-major, or nothing if |attr| holds something else.
std::optional<std::vector<float>> constantF32Elements(mlir::ElementsAttr attr);

/// The row-major bytes of a static-shaped constant's elements (dense,
/// splat or resource; elements of whole bytes), or nothing for a form this
/// cannot read (an elided or unloaded resource, a sparse attribute).
std::optional<std::vector<char>> constantRawBytes(mlir::ElementsAttr attr);

} // namespace strata

#endif // STRATA_PASSES_WEIGHTCONTRACTIONS_H_
