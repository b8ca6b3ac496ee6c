//===- FuseLayerNorm.cpp - Fuse decomposed LayerNorm -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Recognizes the mean/variance chain torch (opset < 17), Keras and ORT-style
// exports produce for layer normalization and replaces it with one
// strata.layer_norm. The spellings: ../shared/docs/EXPORT-PATTERNS.md §4.1
// (from the project root).

#include "passes/Passes.h"

#include "dialects/strata/IR/StrataOps.h"
#include "passes/PatternUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>

namespace strata {
#define GEN_PASS_DEF_FUSELAYERNORMPASS
#include "passes/Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace strata {
namespace {

/// A matched layer norm: operands, attributes, the final op and every op it
/// replaces (in chain order, for the fused location).
struct LayerNormMatch {
  Value input, scale, bias;
  int64_t axis = 0;
  double epsilon = 0.0;
  Operation *root = nullptr;
  SmallVector<Operation *> ops;
};


/// The reduced axes of |mean|, non-negative and sorted, if they form the
/// trailing contiguous range of a ranked input and the dims are kept.
std::optional<SmallVector<int64_t>> trailingAxes(ReduceMeanOp mean) {
  auto type = dyn_cast<RankedTensorType>(mean.getInput().getType());
  if (!type || !mean.getKeepdims() || mean.getAxes().empty())
    return std::nullopt;
  int64_t rank = type.getRank();
  SmallVector<int64_t> axes;
  for (int64_t a : mean.getAxes())
    axes.push_back(a < 0 ? a + rank : a);
  llvm::sort(axes);
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - static_cast<int64_t>(axes.size() - i))
      return std::nullopt;
  return axes;
}

/// True if |v| is a 16-bit float widened to f32 by a strata.cast; |src| is
/// set to the cast's input.
bool isWideningCast(Value v, Value &src) {
  auto cast = v.getDefiningOp<CastOp>();
  if (!cast)
    return false;
  Type from = getElementTypeOrSelf(cast.getInput().getType());
  Type to = getElementTypeOrSelf(cast.getResult().getType());
  if (!(from.isF16() || from.isBF16()) || !to.isF32())
    return false;
  src = cast.getInput();
  return true;
}

/// |op| computes d*d or pow(d, 2).
bool isSquareOf(Operation *op, Value d) {
  if (auto mul = dyn_cast<MulOp>(op))
    return mul.getLhs() == d && mul.getRhs() == d;
  if (auto pow = dyn_cast<PowOp>(op))
    return pow.getLhs() == d && isFloatConstant(pow.getRhs(), 2.0, 0.0);
  return false;
}


/// The trailing dims of |type| from |axis| if they are all static.
std::optional<SmallVector<int64_t>> normalizedShape(RankedTensorType type,
                                                    int64_t axis) {
  ArrayRef<int64_t> shape = type.getShape().drop_front(axis);
  if (ShapedType::isDynamicShape(shape))
    return std::nullopt;
  return SmallVector<int64_t>(shape);
}

/// True if |v| is a ranked tensor of |elem| with exactly shape |shape|.
bool hasShape(Value v, ArrayRef<int64_t> shape, Type elem) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getShape() == shape && type.getElementType() == elem;
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
                        RankedTensorType xType, LayerNormMatch &match,
                        std::string &reason) {
  // Optional fp32 island: d is widened once, the widened value feeds both
  // the square and the numerator, and the result is cast back.
  Value nv = dv.getResult(), nn = dn.getResult(), src;
  if (auto cast = dyn_cast_if_present<CastOp>(soleUser(nv));
      cast && isWideningCast(cast.getResult(), src)) {
    match.ops.push_back(cast);
    nv = cast.getResult();
  }
  if (dn != dv) {
    if (auto cast = dyn_cast_if_present<CastOp>(soleUser(nn));
        cast && isWideningCast(cast.getResult(), src)) {
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
    if (isSquareOf(user, nv))
      square = user;
  if (!square) {
    reason = "'x - mean' is not squared by mul(d, d) or pow(d, 2)";
    return {};
  }
  match.ops.push_back(square);
  auto var = dyn_cast_if_present<ReduceMeanOp>(soleUser(square->getResult(0)));
  std::optional<SmallVector<int64_t>> varAxes;
  if (var)
    varAxes = trailingAxes(var);
  if (!var || !varAxes || *varAxes != axes) {
    reason = "the square is not averaged over the same axes";
    return {};
  }
  match.ops.push_back(var);
  auto addEps = dyn_cast_if_present<AddOp>(soleUser(var.getResult()));
  std::optional<double> eps;
  if (addEps)
    matchEitherOrder(addEps.getLhs(), addEps.getRhs(), true,
                     [&](Value v, Value c) {
                       if (v != var.getResult())
                         return false;
                       eps = getSplatFloatConstant(c);
                       return eps.has_value();
                     });
  if (!addEps || !eps || *eps < 0.0 ||
      addEps.getResult().getType() != var.getResult().getType()) {
    reason = "the variance is not followed by '+ epsilon' with a constant "
             "non-negative scalar epsilon";
    return {};
  }
  match.ops.push_back(addEps);
  match.epsilon = *eps;
  Value y = matchDivideBySqrt(addEps.getResult(), nn, match.ops);
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
std::optional<LayerNormMatch> matchLayerNorm(ReduceMeanOp mean,
                                             std::string &reason,
                                             bool &candidate) {
  candidate = false;
  LayerNormMatch match;
  match.input = mean.getInput();
  SmallVector<SubOp> subs = centeringSubs(mean, candidate);
  if (!candidate)
    return std::nullopt;
  auto xType = dyn_cast<RankedTensorType>(match.input.getType());
  if (!xType || !isa<FloatType>(xType.getElementType())) {
    reason = "the input is not a ranked float tensor";
    return std::nullopt;
  }
  std::optional<SmallVector<int64_t>> axes = trailingAxes(mean);
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
  Type elem = xType.getElementType();
  // Scale: y * scale in either order, scale of the normalized shape.
  if (auto mul = dyn_cast_if_present<MulOp>(soleUser(y));
      mul && normShape && mul.getResult().getType() == xType) {
    matchEitherOrder(mul.getLhs(), mul.getRhs(), true, [&](Value a, Value s) {
      if (a != y || !hasShape(s, *normShape, elem))
        return false;
      match.scale = s;
      return true;
    });
    if (match.scale) {
      match.ops.push_back(mul);
      match.root = mul;
    }
  }
  if (!match.scale && !normShape) {
    reason = "there is no scale and the normalized shape is dynamic";
    return std::nullopt;
  }
  // Bias: only after a scale, + bias in either order.
  if (match.scale) {
    Value scaled = match.root->getResult(0);
    if (auto add = dyn_cast_if_present<AddOp>(soleUser(scaled));
        add && add.getResult().getType() == xType) {
      matchEitherOrder(add.getLhs(), add.getRhs(), true, [&](Value a, Value b) {
        if (a != scaled || !hasShape(b, *normShape, elem))
          return false;
        match.bias = b;
        return true;
      });
      if (match.bias) {
        match.ops.push_back(add);
        match.root = add;
      }
    }
  }
  // Every intermediate value is used only inside the chain.
  llvm::SmallPtrSet<Operation *, 16> inChain(match.ops.begin(),
                                             match.ops.end());
  for (Operation *op : match.ops) {
    if (op == match.root)
      continue;
    for (Operation *user : op->getUsers())
      if (!inChain.contains(user)) {
        reason = "an intermediate value of the chain has other uses";
        return std::nullopt;
      }
  }
  return match;
}

// mean/sub/square/mean/add/sqrt/div/mul/add -> strata.layer_norm
struct FuseDecomposedLayerNorm : OpRewritePattern<ReduceMeanOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceMeanOp mean,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    bool candidate;
    std::optional<LayerNormMatch> match =
        matchLayerNorm(mean, reason, candidate);
    if (!match)
      return rewriter.notifyMatchFailure(mean, reason);
    SmallVector<Location> locs;
    for (Operation *op : match->ops)
      locs.push_back(op->getLoc());
    Location loc = rewriter.getFusedLoc(locs);
    rewriter.setInsertionPoint(match->root);
    auto xType = cast<RankedTensorType>(match->input.getType());
    Value scale = match->scale;
    if (!scale) {
      auto type = RankedTensorType::get(xType.getShape().drop_front(match->axis),
                                        xType.getElementType());
      auto one = DenseElementsAttr::get(
          type, rewriter.getFloatAttr(xType.getElementType(), 1.0));
      scale = ConstantOp::create(rewriter, loc, type, one).getResult();
    }
    auto norm = LayerNormOp::create(
        rewriter, loc, xType, match->input, scale, match->bias,
        rewriter.getI64IntegerAttr(match->axis),
        rewriter.getF32FloatAttr(static_cast<float>(match->epsilon)));
    rewriter.replaceOp(match->root, norm.getResult());
    return success();
  }
};

struct FuseLayerNormPass : impl::FuseLayerNormPassBase<FuseLayerNormPass> {
  using FuseLayerNormPassBase::FuseLayerNormPassBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseLayerNormPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (!reportMissed)
      return;
    // Remarks are emitted once, after the rewrite reached a fixpoint, and
    // only at means that are subtracted from their input.
    remarkMissedFusions<ReduceMeanOp>(
        getOperation(), matchLayerNorm,
        "reduce_mean did not fuse into strata.layer_norm: ");
  }
};

} // namespace

void populateFuseLayerNormPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseDecomposedLayerNorm>(patterns.getContext());
}

} // namespace strata
