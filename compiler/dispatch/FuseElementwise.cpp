//===- FuseElementwise.cpp - Elementwise chains into one generic ----------===//
// SPDX-License-Identifier: Apache-2.0
// See Passes.td (strata-fuse-elementwise).

#include "compiler/dispatch/DispatchRegions.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace strata::dispatch {

#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "compiler/dispatch/Passes.h.inc"

namespace {

bool isElementwiseGeneric(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && generic.getNumLoops() == generic.getNumParallelLoops();
}

// An elementwise producer with one user, itself elementwise, folded into
// that user. Only this pattern: upstream's pattern set also folds
// constants, which would make arith.constant of the model's unsigned
// integer tensors (not signless, so invalid).
struct FuseIntoElementwiseUser : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp user,
                                PatternRewriter &rewriter) const override {
    if (!isElementwiseGeneric(user))
      return failure();
    for (OpOperand &operand : user->getOpOperands()) {
      Operation *producer = operand.get().getDefiningOp();
      if (!isElementwiseGeneric(producer) || !producer->hasOneUse() ||
          !linalg::areElementwiseOpsFusable(&operand))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        continue;
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceUsesWithIf(original, replacement, [&](OpOperand &use) {
          return use.getOwner() != producer;
        });
      rewriter.eraseOp(user);
      rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

struct FuseElementwisePass
    : impl::FuseElementwisePassBase<FuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseIntoElementwiseUser>(&getContext());
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)))
      signalPassFailure();
  }
};

} // namespace

} // namespace strata::dispatch
