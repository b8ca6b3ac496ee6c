//===- FusionPass.h - What every fusion pass runs --------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The body the fusion passes share: their patterns applied to a fixpoint,
// then, with `report-missed`, one remark at each candidate left unfused;
// and the rewrite their patterns share once a chain is matched.

#ifndef STRATA_PASSES_FUSIONPASS_H_
#define STRATA_PASSES_FUSIONPASS_H_

#include "passes/PatternUtils.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace strata {

/// The near misses of a fusion at |RootOp|s: every op for which
/// |match|(op, reason, candidate) fails although it sets |candidate| (left
/// true by matchers without that notion) gets the remark
/// "<message><reason>".
template <typename RootOp, typename MatchFn> struct MissedFusions {
  MatchFn match;
  llvm::StringRef message;

  void remark(mlir::Operation *root) const {
    root->walk([&](RootOp op) {
      std::string reason;
      bool candidate = true;
      if (!match(op, reason, candidate) && candidate)
        op.emitRemark() << message << reason;
    });
  }
};

/// MissedFusions at |RootOp|s, with the match function's type deduced.
template <typename RootOp, typename MatchFn>
MissedFusions<RootOp, MatchFn> missedAt(MatchFn match,
                                        llvm::StringRef message) {
  return {match, message};
}

/// The fusion rewrite anchored at |AnchorOp|s: |match|(anchor, reason,
/// candidate) finds the chain (a failure is reported with |reason|), and
/// the value |fuse|(rewriter, loc, chain) builds in front of the chain's
/// `root`, at the fused location of all its `ops`, replaces the root.
template <typename AnchorOp, auto match, auto fuse>
struct FuseMatchedChain : mlir::OpRewritePattern<AnchorOp> {
  using mlir::OpRewritePattern<AnchorOp>::OpRewritePattern;
  mlir::LogicalResult
  matchAndRewrite(AnchorOp anchor,
                  mlir::PatternRewriter &rewriter) const override {
    std::string reason;
    bool candidate;
    auto chain = match(anchor, reason, candidate);
    if (!chain)
      return rewriter.notifyMatchFailure(anchor, reason);
    mlir::Location loc = fusedLocOf(rewriter, chain->ops);
    rewriter.setInsertionPoint(chain->root);
    rewriter.replaceOp(chain->root, fuse(rewriter, loc, *chain));
    return mlir::success();
  }
};

/// Applies the patterns |populate| adds to |root| greedily until nothing
/// changes; then, if |reportMissed|, emits the remarks of each of
/// |missed|. Remarks come after the fixpoint so that a candidate a later
/// rewrite fuses gets none. Fails when the rewrite driver does.
template <typename... Missed>
mlir::LogicalResult runFusion(mlir::Operation *root,
                              void (*populate)(mlir::RewritePatternSet &),
                              bool reportMissed, const Missed &...missed) {
  mlir::RewritePatternSet patterns(root->getContext());
  populate(patterns);
  if (mlir::failed(mlir::applyPatternsGreedily(root, std::move(patterns))))
    return mlir::failure();
  if (reportMissed)
    (missed.remark(root), ...);
  return mlir::success();
}

} // namespace strata

#endif // STRATA_PASSES_FUSIONPASS_H_
