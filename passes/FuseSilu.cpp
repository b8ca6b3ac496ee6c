//===- FuseSilu.cpp - Fuse x * sigmoid(x) into strata.silu -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Recognizes SiLU (swish) as exports spell it, Mul(x, Sigmoid(x)) in either
// operand order, and replaces it with one strata.silu.

#include "passes/Passes.h"

#include "dialects/strata/IR/StrataOps.h"
#include "passes/PatternUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata {
#define GEN_PASS_DEF_FUSESILUPASS
#include "passes/Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace strata {
namespace {

/// Tries to match x * sigmoid(x) around |sigmoid|; returns the mul or
/// nullptr with |reason| set.
MulOp matchSilu(SigmoidOp sigmoid, std::string &reason) {
  Value x = sigmoid.getInput(), s = sigmoid.getResult();
  MulOp mul;
  for (Operation *user : s.getUsers()) {
    auto m = dyn_cast<MulOp>(user);
    if (m && matchEitherOrder(m.getLhs(), m.getRhs(), true,
                              [&](Value a, Value b) {
                                return a == x && b == s;
                              }))
      mul = m;
  }
  if (!mul) {
    reason = "it is not multiplied by its input";
    return nullptr;
  }
  if (!s.hasOneUse()) {
    reason = "sigmoid(x) has other uses";
    return nullptr;
  }
  if (mul.getResult().getType() != x.getType()) {
    reason = "the product broadcasts x to a different type";
    return nullptr;
  }
  return mul;
}

// x * sigmoid(x) -> strata.silu(x)
struct FuseMulSigmoid : OpRewritePattern<SigmoidOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SigmoidOp sigmoid,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    MulOp mul = matchSilu(sigmoid, reason);
    if (!mul)
      return rewriter.notifyMatchFailure(sigmoid, reason);
    rewriter.setInsertionPoint(mul);
    Location loc = rewriter.getFusedLoc({sigmoid.getLoc(), mul.getLoc()});
    auto silu = SiluOp::create(rewriter, loc, sigmoid.getInput().getType(),
                               sigmoid.getInput());
    rewriter.replaceOp(mul, silu.getResult());
    return success();
  }
};

struct FuseSiluPass : impl::FuseSiluPassBase<FuseSiluPass> {
  using FuseSiluPassBase::FuseSiluPassBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseSiluPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (!reportMissed)
      return;
    // Remarks are emitted once, after the rewrite reached a fixpoint.
    remarkMissedFusions<SigmoidOp>(
        getOperation(),
        [](SigmoidOp sigmoid, std::string &reason, bool &) {
          return matchSilu(sigmoid, reason);
        },
        "sigmoid did not fuse into strata.silu: ");
  }
};

} // namespace

void populateFuseSiluPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseMulSigmoid>(patterns.getContext());
}

} // namespace strata
