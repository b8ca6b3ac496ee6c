//===- DropStateResults.cpp - State results leave the entry's type --------===//
// SPDX-License-Identifier: Apache-2.0
// See Passes.td (strata-cpu-drop-state-results).

#include "codegen/cpu/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/ADT/BitVector.h"

using namespace mlir;

namespace strata::codegen::cpu {

#define GEN_PASS_DEF_DROPSTATERESULTSPASS
#include "codegen/cpu/Passes.h.inc"

namespace {

// |v| itself, or the buffer a loop that only writes into it passes through
// (a bufferized scf.for yielding its iter_arg unchanged, or through loops
// nested in it that do: a KV cache write, token by token into a ring).
Value sameBuffer(Value v) {
  while (auto loop = v.getDefiningOp<scf::ForOp>()) {
    unsigned i = cast<OpResult>(v).getResultNumber();
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    if (sameBuffer(yield.getOperand(i)) != loop.getRegionIterArg(i))
      break;
    v = loop.getInitArgs()[i];
  }
  return v;
}

struct DropStateResultsPass
    : impl::DropStateResultsPassBase<DropStateResultsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func->hasAttr(kEntryAttr) || func.isExternal())
        continue;
      SmallVector<func::ReturnOp> returns;
      func.walk([&](func::ReturnOp ret) { returns.push_back(ret); });
      llvm::BitVector drop(func.getNumResults());
      for (func::ReturnOp ret : returns)
        for (OpOperand &operand : ret->getOpOperands())
          if (auto arg = dyn_cast<BlockArgument>(sameBuffer(operand.get()));
              arg && arg.getOwner()->getParentOp() == func)
            drop.set(operand.getOperandNumber());
      // A state result that is not its argument was not updated in place:
      // the session would never see the new value, and the entry would
      // return one buffer more than the ABI has room for.
      auto states = func->getAttrOfType<IntegerAttr>(kStateResultsAttr);
      int64_t stateCount = states ? states.getInt() : 0;
      if (int64_t(drop.count()) != stateCount) {
        func.emitError() << "entry '" << func.getSymName() << "' updates "
                         << drop.count() << " of its " << stateCount
                         << " states in place; bufferization copied the "
                         << "others";
        return signalPassFailure();
      }
      func->removeAttr(kStateResultsAttr);
      if (drop.none())
        continue;
      // Every return must return the argument there.
      for (func::ReturnOp ret : returns)
        for (unsigned i : drop.set_bits())
          if (!isa<BlockArgument>(sameBuffer(ret.getOperand(i)))) {
            ret.emitError() << "entry '" << func.getSymName() << "' returns "
                            << "an argument as result " << i
                            << " on one path only";
            return signalPassFailure();
          }
      for (func::ReturnOp ret : returns)
        ret->eraseOperands(drop);
      if (failed(func.eraseResults(drop)))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace strata::codegen::cpu
