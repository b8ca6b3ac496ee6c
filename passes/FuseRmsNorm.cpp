//===- FuseRmsNorm.cpp - Fuse decomposed RMSNorm ---------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Recognizes x * rsqrt(mean(x^2) + eps) * weight in the spellings Llama-style
// exports produce and replaces it with one strata.rms_norm. The spellings:
// ../shared/docs/EXPORT-PATTERNS.md §4.2 (from the project root).

#include "passes/Passes.h"

#include "dialects/strata/IR/StrataOps.h"
#include "passes/FusionPass.h"
#include "passes/NormPatterns.h"
#include "passes/PatternUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace strata {
#define GEN_PASS_DEF_FUSERMSNORMPASS
#include "passes/Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace strata {
namespace {

/// Tries to match an RMS norm around the mean of squares |var|; on failure
/// |reason| says why and |candidate| says whether |var| averages a square.
std::optional<NormMatch> matchRmsNorm(ReduceMeanOp var, std::string &reason,
                                      bool &candidate) {
  NormMatch match;
  Value xs = squaredValue(var.getInput().getDefiningOp());
  candidate = static_cast<bool>(xs);
  if (!xs)
    return std::nullopt;
  if (auto sub = xs.getDefiningOp<SubOp>()) {
    auto mean = sub.getRhs().getDefiningOp<ReduceMeanOp>();
    if (mean && mean.getInput() == sub.getLhs()) {
      reason = "the squared value is 'x - mean(x)', a layer norm";
      return std::nullopt;
    }
  }
  auto xsType = dyn_cast<RankedTensorType>(xs.getType());
  if (!xsType || !isa<FloatType>(xsType.getElementType())) {
    reason = "the input is not a ranked float tensor";
    return std::nullopt;
  }
  std::optional<SmallVector<int64_t>> axes = trailingReducedAxes(var);
  if (!axes) {
    reason = "the mean is not over trailing contiguous axes with keepdims";
    return std::nullopt;
  }
  match.axis = axes->front();
  // Optional fp32 island: x (f16/bf16) is widened first and cast back after.
  match.input = xs;
  Operation *castIn = nullptr;
  if (Value narrow = widenedFrom(xs)) {
    castIn = xs.getDefiningOp();
    match.input = narrow;
    match.ops.push_back(castIn);
  }
  match.ops.append({var.getInput().getDefiningOp(), var});
  std::optional<EpsilonAdd> addEps = matchPlusEpsilon(var.getResult());
  if (!addEps) {
    reason = "the mean of squares is not followed by '+ epsilon' with a "
             "constant non-negative scalar epsilon";
    return std::nullopt;
  }
  match.ops.push_back(addEps->add);
  match.epsilon = addEps->epsilon;
  Value y = matchDivideBySqrt(addEps->add.getResult(), xs, match.ops);
  if (!y) {
    reason = "'mean(x^2) + epsilon' is not turned into x / sqrt(...) or "
             "x * rsqrt(...)";
    return std::nullopt;
  }
  if (y.getType() != xsType) {
    reason = "the normalization broadcasts x to a different type";
    return std::nullopt;
  }
  auto xType = cast<RankedTensorType>(match.input.getType());
  if (castIn) {
    // Without the cast back, the norm runs on the widened value.
    auto back = dyn_cast_if_present<CastOp>(soleUser(y));
    if (back && back.getResult().getType() == xType) {
      match.ops.push_back(back);
      y = back.getResult();
    } else {
      match.input = xs;
      match.ops.erase(match.ops.begin());
      xType = xsType;
    }
  }
  match.root = y.getDefiningOp();
  ArrayRef<int64_t> normShape = xType.getShape().drop_front(match.axis);
  bool staticNorm = !ShapedType::isDynamicShape(normShape);
  // Weight: y * weight in either order, weight of the normalized shape.
  if (staticNorm)
    match.scale = extendByTrailing<MulOp>(match, xType, normShape);
  if (!match.scale && !staticNorm) {
    reason = "there is no weight and the normalized shape is dynamic";
    return std::nullopt;
  }
  return replaceableNorm(match, reason);
}

// x * rsqrt(mean(x^2) + eps) * w -> strata.rms_norm
using FuseDecomposedRmsNorm =
    FuseMatchedChain<ReduceMeanOp, matchRmsNorm, buildNorm<RmsNormOp>>;

struct FuseRmsNormPass : impl::FuseRmsNormPassBase<FuseRmsNormPass> {
  using FuseRmsNormPassBase::FuseRmsNormPassBase;
  void runOnOperation() override {
    // Remarks only at means of a square.
    if (failed(
            runFusion(getOperation(), populateFuseRmsNormPatterns, reportMissed,
                      missedAt<ReduceMeanOp>(
                          matchRmsNorm,
                          "reduce_mean did not fuse into strata.rms_norm: "))))
      signalPassFailure();
  }
};

} // namespace

void populateFuseRmsNormPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseDecomposedRmsNorm>(patterns.getContext());
}

} // namespace strata
