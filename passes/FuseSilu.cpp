//===- FuseSilu.cpp - Fuse x * sigmoid(x) into strata.silu -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Replaces every elementwise chain that computes SiLU (swish), whatever its
// spelling (x * sigmoid(x), x / (1 + exp(-x)), ...), with one strata.silu.

#include "passes/Passes.h"

#include "dialects/strata/IR/StrataOps.h"
#include "passes/Activations.h"
#include "passes/FusionPass.h"
#include "mlir/IR/PatternMatch.h"

namespace strata {
#define GEN_PASS_DEF_FUSESILUPASS
#include "passes/Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace strata {
namespace {

/// The SiLU a chain through |anchor| computes, or std::nullopt with
/// |reason| set; a chain that computes a GELU is no candidate.
std::optional<ActivationMatch> matchSilu(Operation *anchor, std::string &reason,
                                         bool &candidate) {
  return matchFusedActivation(
      anchor, [](Activation kind) { return kind == Activation::Silu; }, reason,
      candidate);
}

Value buildSilu(PatternRewriter &rewriter, Location loc,
                const ActivationMatch &match) {
  return SiluOp::create(rewriter, loc, match.input.getType(), match.input);
}

// Any chain computing x * sigmoid(x) -> strata.silu(x); anchored on the
// sigmoid, exp or tanh (sigmoid(x) = 0.5 (1 + tanh(x / 2))) every spelling
// has.
template <typename AnchorOp>
using FuseSiluChain = FuseMatchedChain<AnchorOp, matchSilu, buildSilu>;

struct FuseSiluPass : impl::FuseSiluPassBase<FuseSiluPass> {
  using FuseSiluPassBase::FuseSiluPassBase;
  void runOnOperation() override {
    // A sigmoid in a GELU spelling is left to strata-fuse-gelu.
    if (failed(runFusion(
            getOperation(), populateFuseSiluPatterns, reportMissed,
            missedAt<SigmoidOp>(matchSilu,
                                "sigmoid did not fuse into strata.silu: "))))
      signalPassFailure();
  }
};

} // namespace

void populateFuseSiluPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseSiluChain<SigmoidOp>, FuseSiluChain<ExpOp>,
               FuseSiluChain<TanhOp>>(
      patterns.getContext());
}

} // namespace strata
