//===- UnshareFills.cpp - One linalg.fill per user -------------------------===//
// SPDX-License-Identifier: Apache-2.0
// See Passes.td (strata-cpu-unshare-fills).

#include "codegen/cpu/Passes.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace strata::codegen::cpu {

#define GEN_PASS_DEF_UNSHAREFILLSPASS
#include "codegen/cpu/Passes.h.inc"

namespace {

struct UnshareFillsPass : impl::UnshareFillsPassBase<UnshareFillsPass> {
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation().walk([&](linalg::FillOp fill) {
      if (fill.hasPureTensorSemantics() && !fill->getResult(0).hasOneUse())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills) {
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : fill->getResult(0).getUses())
        uses.push_back(&use);
      Operation *init = fill.getDpsInits()[0].getDefiningOp();
      for (OpOperand *use : uses) {
        OpBuilder b(use->getOwner());
        IRMapping mapping;
        if (init && isa<tensor::EmptyOp>(init))
          mapping.map(init->getResult(0), b.clone(*init)->getResult(0));
        use->set(b.clone(*fill, mapping)->getResult(0));
      }
      fill.erase();
      if (init && isa<tensor::EmptyOp>(init) && init->use_empty())
        init->erase();
    }
  }
};

} // namespace
} // namespace strata::codegen::cpu
