//===- PatternUtils.cpp - Helpers shared by the fusion patterns -----------===//
// SPDX-License-Identifier: Apache-2.0
// See PatternUtils.h.

#include "passes/PatternUtils.h"

#include "dialects/strata/IR/ConstantValues.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>

using namespace mlir;

namespace strata {

bool isFloatConstant(Value v, double expected, double relTol) {
  std::optional<double> value = ir::evaluateScalarConstant(v);
  return value && std::fabs(*value - expected) <= relTol * std::fabs(expected);
}

bool matchEitherOrder(Value a, Value b, bool commutative,
                      llvm::function_ref<bool(Value, Value)> match) {
  return match(a, b) || (commutative && match(b, a));
}

Operation *soleUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

bool usedOnlyInside(ArrayRef<Operation *> ops, Operation *root,
                    llvm::function_ref<bool(Operation *, Operation *)> exempt) {
  llvm::SmallPtrSet<Operation *, 16> inChain(ops.begin(), ops.end());
  for (Operation *op : ops) {
    if (op == root)
      continue;
    for (Operation *user : op->getUsers())
      if (!inChain.contains(user) && !(exempt && exempt(op, user)))
        return false;
  }
  return true;
}

Location fusedLocOf(Builder &builder, ArrayRef<Operation *> ops) {
  SmallVector<Location> locs;
  for (Operation *op : ops)
    locs.push_back(op->getLoc());
  return builder.getFusedLoc(locs);
}

} // namespace strata
