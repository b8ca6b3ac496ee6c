//===- ElementwiseChain.cpp - Single-input elementwise chains -------------===//
// SPDX-License-Identifier: Apache-2.0
// See ElementwiseChain.h.

#include "passes/ElementwiseChain.h"

#include "dialects/strata/IR/ConstantValues.h"
#include "dialects/strata/IR/StrataOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>

using namespace mlir;
using namespace strata::ir;

namespace strata {

namespace {

// Bounds that keep the search linear in practice: activations take 2-12
// ops, and a root more than a few users away from the anchor is never one.
constexpr unsigned kMaxRoots = 16;
constexpr unsigned kMaxOps = 48;

/// The chain ops |root| is computed from (|root| included), within
/// |block|; the non-constant values they read from outside go to |leaves|.
void collectOperandOps(Operation *root, Block *block,
                       llvm::SetVector<Operation *> &ops,
                       llvm::SetVector<Value> &leaves) {
  SmallVector<Operation *> pending = {root};
  ops.insert(root);
  while (!pending.empty()) {
    Operation *op = pending.pop_back_val();
    for (Value v : op->getOperands()) {
      if (evaluateScalarConstant(v))
        continue;
      Operation *def = v.getDefiningOp();
      if (def && isFloatElementwiseOp(def) && def->getBlock() == block &&
          ops.size() < kMaxOps) {
        if (ops.insert(def))
          pending.push_back(def);
        continue;
      }
      leaves.insert(v);
    }
  }
}

/// The ops between |root| and |input| if every non-constant value they
/// read from outside is |input|, else std::nullopt. |ops| bounds the
/// search: the chain ops |root| is computed from.
std::optional<SmallVector<Operation *, 8>>
opsAbove(Operation *root, Value input, const llvm::SetVector<Operation *> &ops) {
  SmallVector<Operation *, 8> above = {root};
  llvm::SmallPtrSet<Operation *, 16> seen = {root};
  for (unsigned i = 0; i < above.size(); ++i) {
    for (Value v : above[i]->getOperands()) {
      if (v == input || evaluateScalarConstant(v))
        continue;
      Operation *def = v.getDefiningOp();
      if (!def || !ops.contains(def))
        return std::nullopt;
      if (seen.insert(def).second)
        above.push_back(def);
    }
  }
  return above;
}

} // namespace

SmallVector<ElementwiseChain> chainsThrough(Operation *anchor) {
  SmallVector<ElementwiseChain> chains;
  if (!isFloatElementwiseOp(anchor) ||
      evaluateScalarConstant(anchor->getResult(0)))
    return chains;
  Block *block = anchor->getBlock();
  // Roots: the anchor and the chain ops its value flows into.
  llvm::SetVector<Operation *> roots;
  roots.insert(anchor);
  for (unsigned i = 0; i < roots.size() && roots.size() < kMaxRoots; ++i)
    for (Operation *user : roots[i]->getResult(0).getUsers())
      if (isFloatElementwiseOp(user) && user->getBlock() == block &&
          roots.size() < kMaxRoots)
        roots.insert(user);
  for (Operation *root : roots) {
    llvm::SetVector<Operation *> ops;
    llvm::SetVector<Value> leaves;
    collectOperandOps(root, block, ops, leaves);
    // Cuts: the one leaf, or any intermediate value all leaves lie behind.
    SmallVector<Value> inputs;
    if (leaves.size() == 1)
      inputs.push_back(leaves.front());
    for (Operation *op : ops)
      if (op != root)
        inputs.push_back(op->getResult(0));
    for (Value input : inputs) {
      std::optional<SmallVector<Operation *, 8>> above =
          opsAbove(root, input, ops);
      if (!above || !llvm::is_contained(*above, anchor))
        continue;
      llvm::sort(*above, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
      chains.push_back({input, root, std::move(*above)});
    }
  }
  llvm::stable_sort(chains, [](const ElementwiseChain &a,
                               const ElementwiseChain &b) {
    return a.ops.size() > b.ops.size();
  });
  return chains;
}

SmallVector<double> evaluateChain(const ElementwiseChain &chain,
                                  ArrayRef<double> points) {
  // Operand i of op k: the input, the result of op j < k, or a constant.
  struct Operand {
    int producer = -1; // index into chain.ops, -1 for input or constant
    bool isInput = false;
    double constant = 0.0;
  };
  llvm::DenseMap<Operation *, int> index;
  for (auto [i, op] : llvm::enumerate(chain.ops))
    index[op] = static_cast<int>(i);
  SmallVector<SmallVector<Operand, 2>> operands;
  for (Operation *op : chain.ops) {
    SmallVector<Operand, 2> row;
    for (Value v : op->getOperands()) {
      Operand o;
      if (v == chain.input) {
        o.isInput = true;
      } else if (Operation *def = v.getDefiningOp();
                 def && index.count(def)) {
        o.producer = index[def];
      } else {
        // Not the input and not a chain value: a constant by construction.
        o.constant = evaluateScalarConstant(v).value_or(NAN);
      }
      row.push_back(o);
    }
    operands.push_back(std::move(row));
  }
  int rootIndex = index.lookup(chain.root);
  SmallVector<double> results;
  SmallVector<double> values(chain.ops.size());
  for (double x : points) {
    for (auto [k, op] : llvm::enumerate(chain.ops)) {
      SmallVector<double, 2> args;
      for (const Operand &o : operands[k])
        args.push_back(o.isInput         ? x
                       : o.producer >= 0 ? values[o.producer]
                                         : o.constant);
      values[k] = applyFloatElementwise(op, args);
    }
    results.push_back(values[rootIndex]);
  }
  return results;
}

std::optional<std::string> replacementObstacle(const ElementwiseChain &chain) {
  llvm::SmallPtrSet<Operation *, 16> inChain(chain.ops.begin(),
                                             chain.ops.end());
  for (Operation *op : chain.ops) {
    if (op->getResult(0).getType() != chain.input.getType())
      return std::string("the chain broadcasts its input to another type");
    if (op == chain.root)
      continue;
    for (Operation *user : op->getUsers())
      if (!inChain.contains(user))
        return std::string("an intermediate value of the chain has uses "
                           "outside it");
  }
  return std::nullopt;
}

} // namespace strata
