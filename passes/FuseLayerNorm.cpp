//===- FuseLayerNorm.cpp - Fuse decomposed LayerNorm -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Recognizes the mean/variance chain torch (opset < 17), Keras and ORT-style
// exports produce for layer normalization and replaces it with one
// strata.layer_norm. The spellings: ../shared/docs/EXPORT-PATTERNS.md §4.1
// (from the project root).

#include "passes/Passes.h"

#include "dialects/strata/IR/StrataOps.h"
#include "passes/FusionPass.h"
#include "passes/NormPatterns.h"
#include "passes/PatternUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace strata {
#define GEN_PASS_DEF_FUSELAYERNORMPASS
#include "passes/Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace strata {
namespace {

/// The trailing dims of |type| from |axis| if they are all static.
std::optional<SmallVector<int64_t>> normalizedShape(RankedTensorType type,
                                                    int64_t axis) {
  ArrayRef<int64_t> shape = type.getShape().drop_front(axis);
  if (ShapedType::isDynamicShape(shape))
    return std::nullopt;
  return SmallVector<int64_t>(shape);
}

/// The sub ops computing x - mean, or an empty list if |mean| has any other
/// user.
SmallVector<SubOp> centeringSubs(ReduceMeanOp mean, bool &candidate) {
  SmallVector<SubOp> subs;
  bool other = false;
  for (Operation *user : mean->getUsers()) {
    auto sub = dyn_cast<SubOp>(user);
    if (sub && sub.getLhs() == mean.getInput() &&
        sub.getRhs() == mean.getResult()) {
      if (!llvm::is_contained(subs, sub))
        subs.push_back(sub);
    } else {
      other = true;
    }
  }
  candidate = !subs.empty();
  if (other)
    subs.clear();
  return subs;
}

/// Matches the variance and normalization given the sub feeding the square
/// (|dv|) and the sub feeding the numerator (|dn|). Returns the normalized
/// value (of x's type) or {} with |reason| set.
Value matchFromCentered(SubOp dv, SubOp dn, ArrayRef<int64_t> axes,
                        RankedTensorType xType, NormMatch &match,
                        std::string &reason) {
  // Optional fp32 island: d is widened once, the widened value feeds both
  // the square and the numerator, and the result is cast back.
  Value nv = dv.getResult(), nn = dn.getResult();
  if (auto cast = dyn_cast_if_present<CastOp>(soleUser(nv));
      cast && widenedFrom(cast.getResult())) {
    match.ops.push_back(cast);
    nv = cast.getResult();
  }
  if (dn != dv) {
    if (auto cast = dyn_cast_if_present<CastOp>(soleUser(nn));
        cast && widenedFrom(cast.getResult())) {
      match.ops.push_back(cast);
      nn = cast.getResult();
    }
  } else {
    nn = nv;
  }
  if (nv.getType() != nn.getType()) {
    reason = "the centered values are cast differently";
    return {};
  }
  Operation *square = nullptr;
  for (Operation *user : nv.getUsers())
    if (squaredValue(user) == nv)
      square = user;
  if (!square) {
    reason = "'x - mean' is not squared by mul(d, d) or pow(d, 2)";
    return {};
  }
  match.ops.push_back(square);
  auto var = dyn_cast_if_present<ReduceMeanOp>(soleUser(square->getResult(0)));
  std::optional<SmallVector<int64_t>> varAxes;
  if (var)
    varAxes = trailingReducedAxes(var);
  if (!var || !varAxes || *varAxes != axes) {
    reason = "the square is not averaged over the same axes";
    return {};
  }
  match.ops.push_back(var);
  std::optional<EpsilonAdd> addEps = matchPlusEpsilon(var.getResult());
  if (!addEps) {
    reason = "the variance is not followed by '+ epsilon' with a constant "
             "non-negative scalar epsilon";
    return {};
  }
  match.ops.push_back(addEps->add);
  match.epsilon = addEps->epsilon;
  Value y = matchDivideBySqrt(addEps->add.getResult(), nn, match.ops);
  if (!y) {
    reason = "'variance + epsilon' is not turned into (x - mean) / "
             "sqrt(...) or (x - mean) * rsqrt(...)";
    return {};
  }
  if (y.getType() != nn.getType()) {
    reason = "the normalization broadcasts to a different type";
    return {};
  }
  if (nn != dn.getResult()) {
    auto back = dyn_cast_if_present<CastOp>(soleUser(y));
    if (!back || back.getResult().getType() != xType) {
      reason = "the fp32 island is not cast back to the input type";
      return {};
    }
    match.ops.push_back(back);
    y = back.getResult();
  }
  return y;
}

/// Tries to match a layer norm starting at |mean|; on failure |reason| says
/// why and |candidate| says whether |mean| looked like a layer norm's mean
/// (it is subtracted from its input).
std::optional<NormMatch> matchLayerNorm(ReduceMeanOp mean, std::string &reason,
                                        bool &candidate) {
  candidate = false;
  NormMatch match;
  match.input = mean.getInput();
  SmallVector<SubOp> subs = centeringSubs(mean, candidate);
  if (!candidate)
    return std::nullopt;
  auto xType = dyn_cast<RankedTensorType>(match.input.getType());
  if (!xType || !isa<FloatType>(xType.getElementType())) {
    reason = "the input is not a ranked float tensor";
    return std::nullopt;
  }
  std::optional<SmallVector<int64_t>> axes = trailingReducedAxes(mean);
  if (!axes) {
    reason = "the mean is not over trailing contiguous axes with keepdims";
    return std::nullopt;
  }
  if (subs.empty() || subs.size() > 2) {
    reason = "the mean has users other than one or two 'x - mean'";
    return std::nullopt;
  }
  for (SubOp sub : subs)
    if (sub.getResult().getType() != xType) {
      reason = "'x - mean' broadcasts to a different type";
      return std::nullopt;
    }
  match.axis = axes->front();
  // With two subs, either may feed the variance.
  SmallVector<std::pair<SubOp, SubOp>> orders = {{subs.front(), subs.back()}};
  if (subs.size() == 2)
    orders.push_back({subs.back(), subs.front()});
  Value y;
  for (auto [dv, dn] : orders) {
    match.ops.assign({mean});
    for (SubOp sub : subs)
      match.ops.push_back(sub);
    y = matchFromCentered(dv, dn, *axes, xType, match, reason);
    if (y)
      break;
  }
  if (!y)
    return std::nullopt;
  if (y.getType() != xType) {
    reason = "the normalized value does not have the input type";
    return std::nullopt;
  }
  match.root = y.getDefiningOp();
  std::optional<SmallVector<int64_t>> normShape =
      normalizedShape(xType, match.axis);
  // Scale: y * scale in either order, scale of the normalized shape.
  if (normShape)
    match.scale = extendByTrailing<MulOp>(match, xType, *normShape);
  if (!match.scale && !normShape) {
    reason = "there is no scale and the normalized shape is dynamic";
    return std::nullopt;
  }
  // Bias: only after a scale, + bias in either order.
  if (match.scale)
    match.bias = extendByTrailing<AddOp>(match, xType, *normShape);
  return replaceableNorm(match, reason);
}

// mean/sub/square/mean/add/sqrt/div/mul/add -> strata.layer_norm
using FuseDecomposedLayerNorm =
    FuseMatchedChain<ReduceMeanOp, matchLayerNorm, buildNorm<LayerNormOp>>;

struct FuseLayerNormPass : impl::FuseLayerNormPassBase<FuseLayerNormPass> {
  using FuseLayerNormPassBase::FuseLayerNormPassBase;
  void runOnOperation() override {
    // Remarks only at means that are subtracted from their input.
    if (failed(runFusion(
            getOperation(), populateFuseLayerNormPatterns, reportMissed,
            missedAt<ReduceMeanOp>(
                matchLayerNorm,
                "reduce_mean did not fuse into strata.layer_norm: "))))
      signalPassFailure();
  }
};

} // namespace

void populateFuseLayerNormPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseDecomposedLayerNorm>(patterns.getContext());
}

} // namespace strata
