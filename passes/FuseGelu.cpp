//===- FuseGelu.cpp - Fuse erf and tanh GELU into strata.gelu --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Replaces every elementwise chain that computes the exact (erf) GELU or its
// tanh approximation, whatever its spelling, with one strata.gelu
// {approximate = "none"} or {approximate = "tanh"}.

#include "passes/Passes.h"

#include "dialects/strata/IR/StrataOps.h"
#include "passes/Activations.h"
#include "passes/FusionPass.h"
#include "mlir/IR/PatternMatch.h"

namespace strata {
#define GEN_PASS_DEF_FUSEGELUPASS
#include "passes/Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace strata {
namespace {

/// The GELU a chain through |anchor| computes, or std::nullopt with
/// |reason| set; a chain that computes SiLU is no GELU and no candidate.
std::optional<ActivationMatch> matchGelu(Operation *anchor, std::string &reason,
                                         bool &candidate) {
  return matchFusedActivation(
      anchor, [](Activation kind) { return kind != Activation::Silu; }, reason,
      candidate);
}

Value buildGelu(PatternRewriter &rewriter, Location loc,
                const ActivationMatch &match) {
  StringRef approximate = match.kind == Activation::GeluTanh ? "tanh" : "none";
  return GeluOp::create(rewriter, loc, match.input.getType(), match.input,
                        rewriter.getStringAttr(approximate));
}

// Any chain computing 0.5 x (1 + erf(x / sqrt(2))) -> strata.gelu(x), and
// any chain computing 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) ->
// strata.gelu(x) {approximate = "tanh"}; anchored on the transcendental op
// every spelling has (erf, tanh, or sigmoid/exp for 0.5 (1 + tanh(z)) =
// sigmoid(2 z)).
template <typename AnchorOp>
using FuseGeluChain = FuseMatchedChain<AnchorOp, matchGelu, buildGelu>;

struct FuseGeluPass : impl::FuseGeluPassBase<FuseGeluPass> {
  using FuseGeluPassBase::FuseGeluPassBase;
  void runOnOperation() override {
    // Remarks only at the ops only a GELU spelling has.
    if (failed(runFusion(
            getOperation(), populateFuseGeluPatterns, reportMissed,
            missedAt<ErfOp>(matchGelu, "erf did not fuse into strata.gelu: "),
            missedAt<TanhOp>(matchGelu,
                             "tanh did not fuse into strata.gelu: "))))
      signalPassFailure();
  }
};

} // namespace

void populateFuseGeluPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseGeluChain<ErfOp>, FuseGeluChain<TanhOp>,
               FuseGeluChain<SigmoidOp>, FuseGeluChain<ExpOp>>(
      patterns.getContext());
}

} // namespace strata
