//===- FuseGelu.cpp - Fuse erf-GELU into strata.gelu -----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Recognizes the exact (erf) GELU in every spelling torch/Keras/TF exports
// produce and replaces it with one strata.gelu {approximate = "none"}.

#include "passes/Passes.h"

#include "dialects/strata/IR/StrataOps.h"
#include "passes/PatternUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace strata {
#define GEN_PASS_DEF_FUSEGELUPASS
#include "passes/Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace strata {
namespace {

/// A matched GELU: the input x, the final op, and every op it replaces.
struct GeluMatch {
  Value input;
  Operation *root = nullptr;
  SmallVector<Operation *> ops;
};


// erf's operand is x / sqrt(2), spelled Div(x, 1.4142), Div(x, Sqrt(2)) or
// Mul(x, 0.7071). Returns x.
Value matchScaledInput(Value u, SmallVectorImpl<Operation *> &ops) {
  if (auto div = u.getDefiningOp<DivOp>()) {
    Value divisor = div.getRhs();
    bool isSqrt2 = isFloatConstant(divisor, M_SQRT2);
    if (auto sqrt = divisor.getDefiningOp<SqrtOp>())
      isSqrt2 |= isFloatConstant(sqrt.getInput(), 2.0);
    if (!isSqrt2)
      return {};
    ops.push_back(div);
    return div.getLhs();
  }
  if (auto mul = u.getDefiningOp<MulOp>()) {
    Value x;
    if (!matchEitherOrder(mul.getLhs(), mul.getRhs(), /*commutative=*/true,
                          [&](Value a, Value c) {
                            if (!isFloatConstant(c, M_SQRT1_2))
                              return false;
                            x = a;
                            return true;
                          }))
      return {};
    ops.push_back(mul);
    return x;
  }
  return {};
}

// Matches the multiply tail around a = 1 + erf(...):
//   (x * a) * 0.5,  (0.5 * x) * a,  x * (0.5 * a)  in any operand order.
Operation *matchHalfProduct(Value a, Value x, SmallVectorImpl<Operation *> &ops) {
  auto first = dyn_cast_if_present<MulOp>(soleUser(a));
  if (!first)
    return nullptr;
  Value other = first.getLhs() == a ? first.getRhs() : first.getLhs();
  // x * (0.5 * a) and (x * a) * 0.5 both go through a second Mul.
  bool otherIsX = other == x, otherIsHalf = isFloatConstant(other, 0.5);
  auto halfX = other.getDefiningOp<MulOp>();
  if (halfX && matchEitherOrder(halfX.getLhs(), halfX.getRhs(), true,
                                [&](Value v, Value c) {
                                  return v == x && isFloatConstant(c, 0.5);
                                })) {
    // (0.5 * x) * a: the 0.5 was applied to x first.
    if (!halfX->hasOneUse())
      return nullptr;
    ops.append({halfX, first});
    return first;
  }
  if (!otherIsX && !otherIsHalf)
    return nullptr;
  auto second = dyn_cast_if_present<MulOp>(soleUser(first.getResult()));
  if (!second)
    return nullptr;
  Value last = second.getLhs() == first.getResult() ? second.getRhs()
                                                    : second.getLhs();
  bool ok = otherIsX ? isFloatConstant(last, 0.5) : last == x;
  if (!ok)
    return nullptr;
  ops.append({first, second});
  return second;
}

/// Tries to match a GELU around |erf|; on failure |reason| says why.
std::optional<GeluMatch> matchGelu(ErfOp erf, std::string &reason) {
  GeluMatch match;
  match.input = matchScaledInput(erf.getInput(), match.ops);
  if (!match.input) {
    reason = "its input is not x / sqrt(2) or x * (1 / sqrt(2))";
    return std::nullopt;
  }
  if (!erf.getInput().hasOneUse()) {
    reason = "the scaled input has other uses";
    return std::nullopt;
  }
  match.ops.push_back(erf);
  auto add = dyn_cast_if_present<AddOp>(soleUser(erf.getResult()));
  if (!add || !matchEitherOrder(add.getLhs(), add.getRhs(), true,
                                [&](Value e, Value c) {
                                  return e == erf.getResult() &&
                                         isFloatConstant(c, 1.0);
                                })) {
    reason = "its single user is not '1 + erf(...)'";
    return std::nullopt;
  }
  match.ops.push_back(add);
  match.root = matchHalfProduct(add.getResult(), match.input, match.ops);
  if (!match.root) {
    reason = "'1 + erf(...)' is not multiplied by x and 0.5 (with single uses)";
    return std::nullopt;
  }
  if (match.root->getResult(0).getType() != match.input.getType()) {
    reason = "the product broadcasts x to a different type";
    return std::nullopt;
  }
  return match;
}

// x * 0.5 * (1 + erf(x / sqrt(2))) -> strata.gelu(x)
struct FuseErfGelu : OpRewritePattern<ErfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ErfOp erf,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    std::optional<GeluMatch> match = matchGelu(erf, reason);
    if (!match)
      return rewriter.notifyMatchFailure(erf, reason);
    SmallVector<Location> locs;
    for (Operation *op : match->ops)
      locs.push_back(op->getLoc());
    rewriter.setInsertionPoint(match->root);
    auto gelu = GeluOp::create(rewriter, rewriter.getFusedLoc(locs),
                               match->input.getType(), match->input,
                               rewriter.getStringAttr("none"));
    rewriter.replaceOp(match->root, gelu.getResult());
    return success();
  }
};

struct FuseGeluPass : impl::FuseGeluPassBase<FuseGeluPass> {
  using FuseGeluPassBase::FuseGeluPassBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseGeluPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (!reportMissed)
      return;
    // Remarks are emitted once, after the rewrite reached a fixpoint.
    getOperation()->walk([](ErfOp erf) {
      std::string reason;
      if (!matchGelu(erf, reason))
        erf.emitRemark() << "erf did not fuse into strata.gelu: " << reason;
    });
  }
};

} // namespace

void populateFuseGeluPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseErfGelu>(patterns.getContext());
}

} // namespace strata
