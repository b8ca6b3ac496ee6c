//===- WeightContractions.cpp - Contractions by constant weights ----------===//
// SPDX-License-Identifier: Apache-2.0

#include "passes/WeightContractions.h"

#include "dialects/strata/IR/StrataOps.h"

using namespace mlir;
using namespace strata::ir;

namespace strata {

llvm::SmallPtrSet<Operation *, 4> contractionsReturned(func::FuncOp func) {
  llvm::SmallPtrSet<Operation *, 4> out;
  func.walk([&](func::ReturnOp ret) {
    for (Value v : ret.getOperands()) {
      for (int steps = 0; steps < 8 && v; ++steps) {
        Operation *def = v.getDefiningOp();
        if (!def)
          break;
        if (isa<LinearOp, MatmulOp>(def)) {
          out.insert(def);
          break;
        }
        if (!isa<ReshapeOp, SliceOp, GatherOp, TransposeOp, ExpandOp>(def))
          break;
        v = def->getOperand(0);
      }
    }
  });
  return out;
}

SmallVector<Operation *> weightContractions(func::FuncOp func,
                                            bool skipLmHead) {
  llvm::SmallPtrSet<Operation *, 4> lmHeads;
  if (skipLmHead)
    lmHeads = contractionsReturned(func);
  SmallVector<Operation *> out;
  func.walk([&](Operation *op) {
    if (lmHeads.contains(op))
      return;
    if (isa<LinearOp>(op)) {
      out.push_back(op);
      return;
    }
    auto matmul = dyn_cast<MatmulOp>(op);
    if (!matmul ||
        cast<RankedTensorType>(matmul.getLhs().getType()).getRank() < 2)
      return;
    auto constant = matmul.getRhs().getDefiningOp<ConstantOp>();
    auto type = cast<RankedTensorType>(matmul.getRhs().getType());
    if (constant && type.getRank() == 2 && type.getElementType().isF32())
      out.push_back(op);
  });
  return out;
}

} // namespace strata
