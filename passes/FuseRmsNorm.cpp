//===- FuseRmsNorm.cpp - Fuse decomposed RMSNorm ---------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Recognizes x * rsqrt(mean(x^2) + eps) * weight in the spellings Llama-style
// exports produce and replaces it with one strata.rms_norm. The spellings:
// ../shared/docs/EXPORT-PATTERNS.md §4.2 (from the project root).

#include "passes/Passes.h"

#include "dialects/strata/IR/StrataOps.h"
#include "passes/PatternUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace strata {
#define GEN_PASS_DEF_FUSERMSNORMPASS
#include "passes/Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace strata {
namespace {

/// A matched RMS norm: operands, attributes, the final op and every op it
/// replaces (in chain order, for the fused location).
struct RmsNormMatch {
  Value input, scale;
  int64_t axis = 0;
  double epsilon = 0.0;
  Operation *root = nullptr;
  SmallVector<Operation *> ops;
};


/// The first reduced axis (non-negative) if |mean| reduces the trailing
/// contiguous dims of a ranked input and keeps them.
std::optional<int64_t> trailingAxis(ReduceMeanOp mean) {
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
  return axes.front();
}

/// The squared value if |v| is x*x or pow(x, 2), else {}.
Value matchSquare(Value v) {
  if (auto mul = v.getDefiningOp<MulOp>())
    return mul.getLhs() == mul.getRhs() ? mul.getLhs() : Value();
  if (auto pow = v.getDefiningOp<PowOp>())
    return isFloatConstant(pow.getRhs(), 2.0, 0.0) ? pow.getLhs() : Value();
  return {};
}


/// Tries to match an RMS norm around the mean of squares |var|; on failure
/// |reason| says why and |candidate| says whether |var| averages a square.
std::optional<RmsNormMatch> matchRmsNorm(ReduceMeanOp var, std::string &reason,
                                         bool &candidate) {
  RmsNormMatch match;
  Value xs = matchSquare(var.getInput());
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
  std::optional<int64_t> axis = trailingAxis(var);
  if (!axis) {
    reason = "the mean is not over trailing contiguous axes with keepdims";
    return std::nullopt;
  }
  match.axis = *axis;
  // Optional fp32 island: x (f16/bf16) is widened first and cast back after.
  match.input = xs;
  Operation *castIn = nullptr;
  if (auto cast = xs.getDefiningOp<CastOp>()) {
    Type from = getElementTypeOrSelf(cast.getInput().getType());
    if ((from.isF16() || from.isBF16()) && xsType.getElementType().isF32()) {
      castIn = cast;
      match.input = cast.getInput();
      match.ops.push_back(cast);
    }
  }
  match.ops.append({var.getInput().getDefiningOp(), var});
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
    reason = "the mean of squares is not followed by '+ epsilon' with a "
             "constant non-negative scalar epsilon";
    return std::nullopt;
  }
  match.ops.push_back(addEps);
  match.epsilon = *eps;
  Value y = matchDivideBySqrt(addEps.getResult(), xs, match.ops);
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
  if (auto mul = dyn_cast_if_present<MulOp>(soleUser(y));
      mul && staticNorm && mul.getResult().getType() == xType) {
    matchEitherOrder(mul.getLhs(), mul.getRhs(), true, [&](Value a, Value w) {
      auto wType = dyn_cast<RankedTensorType>(w.getType());
      if (a != y || !wType || wType.getShape() != normShape ||
          wType.getElementType() != xType.getElementType())
        return false;
      match.scale = w;
      return true;
    });
    if (match.scale) {
      match.ops.push_back(mul);
      match.root = mul;
    }
  }
  if (!match.scale && !staticNorm) {
    reason = "there is no weight and the normalized shape is dynamic";
    return std::nullopt;
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

// x * rsqrt(mean(x^2) + eps) * w -> strata.rms_norm
struct FuseDecomposedRmsNorm : OpRewritePattern<ReduceMeanOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceMeanOp var,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    bool candidate;
    std::optional<RmsNormMatch> match = matchRmsNorm(var, reason, candidate);
    if (!match)
      return rewriter.notifyMatchFailure(var, reason);
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
    auto norm = RmsNormOp::create(
        rewriter, loc, xType, match->input, scale,
        rewriter.getI64IntegerAttr(match->axis),
        rewriter.getF32FloatAttr(static_cast<float>(match->epsilon)));
    rewriter.replaceOp(match->root, norm.getResult());
    return success();
  }
};

struct FuseRmsNormPass : impl::FuseRmsNormPassBase<FuseRmsNormPass> {
  using FuseRmsNormPassBase::FuseRmsNormPassBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseRmsNormPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (!reportMissed)
      return;
    // Remarks are emitted once, after the rewrite reached a fixpoint, and
    // only at means of a square.
    remarkMissedFusions<ReduceMeanOp>(
        getOperation(), matchRmsNorm,
        "reduce_mean did not fuse into strata.rms_norm: ");
  }
};

} // namespace

void populateFuseRmsNormPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseDecomposedRmsNorm>(patterns.getContext());
}

} // namespace strata
