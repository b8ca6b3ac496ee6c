//===- DropStateResults.cpp - State results leave the entry's type --------===//
// SPDX-License-Identifier: Apache-2.0
// See Passes.td (strata-cpu-drop-state-results).

#include "codegen/cpu/Passes.h"

#include "llvm/ADT/BitVector.h"

using namespace mlir;

namespace strata::codegen::cpu {

#define GEN_PASS_DEF_DROPSTATERESULTSPASS
#include "codegen/cpu/Passes.h.inc"

namespace {

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
          if (auto arg = dyn_cast<BlockArgument>(operand.get());
              arg && arg.getOwner()->getParentOp() == func)
            drop.set(operand.getOperandNumber());
      // A state result that is not its argument was not updated in place:
      // the session would never see the new value.
      for (unsigned i = 0; i < func.getNumResults(); ++i)
        if (auto name = func.getResultAttrOfType<StringAttr>(i, kStateAttr);
            name && !drop.test(i)) {
          func.emitError() << "entry '" << func.getSymName() << "' does not "
                           << "update state '" << name.getValue()
                           << "' in place";
          return signalPassFailure();
        }
      if (drop.none())
        continue;
      // Every return must return the argument there.
      for (func::ReturnOp ret : returns)
        for (unsigned i : drop.set_bits())
          if (!isa<BlockArgument>(ret.getOperand(i))) {
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
