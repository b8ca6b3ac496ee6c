//===- FuseGelu.cpp - Fuse erf and tanh GELU into strata.gelu --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Recognizes the exact (erf) GELU and the tanh approximation in every
// spelling torch/Keras/TF/HF exports produce and replaces each with one
// strata.gelu {approximate = "none"} or {approximate = "tanh"}.

#include "passes/Passes.h"

#include "dialects/strata/IR/StrataOps.h"
#include "passes/PatternUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <array>
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

/// A polynomial in one value x, degree < 8.
using Polynomial = std::array<double, 8>;

/// The polynomial in x that |v| computes through single-use add, sub, mul,
/// neg, div by a constant and pow by a small integer constant, over splat
/// constants and one non-constant leaf x (set on the first leaf met, then
/// every leaf must be it). Appends the ops to |ops|.
std::optional<Polynomial> polynomialOf(Value v, Value &x,
                                       SmallVectorImpl<Operation *> &ops,
                                       int depth = 0) {
  Polynomial p{};
  if (std::optional<double> c = getSplatFloatConstant(v)) {
    p[0] = *c;
    return p;
  }
  Operation *op = v.getDefiningOp();
  bool inner = depth == 0 || v.hasOneUse();
  if (depth > 12 || !op || !inner ||
      !isa<AddOp, SubOp, MulOp, DivOp, PowOp, NegOp>(op)) {
    if (!x)
      x = v;
    if (v != x)
      return std::nullopt;
    p[1] = 1.0;
    return p;
  }
  auto operand = [&](unsigned i) {
    return polynomialOf(op->getOperand(i), x, ops, depth + 1);
  };
  std::optional<Polynomial> a = operand(0);
  if (!a)
    return std::nullopt;
  if (isa<NegOp>(op)) {
    for (double &c : *a)
      c = -c;
    ops.push_back(op);
    return a;
  }
  if (auto pow = dyn_cast<PowOp>(op)) {
    std::optional<double> n = getSplatFloatConstant(pow.getRhs());
    if (!n || *n < 0 || *n > 7 || *n != std::floor(*n))
      return std::nullopt;
    p[0] = 1.0;
    for (int i = 0; i < static_cast<int>(*n); ++i) {
      Polynomial q{};
      for (int j = 0; j < 8; ++j)
        for (int k = 0; j + k < 8; ++k)
          q[j + k] += p[j] * (*a)[k];
      for (int j = 0; j < 8; ++j)
        for (int k = 0; k < 8; ++k)
          if (j + k >= 8 && p[j] != 0.0 && (*a)[k] != 0.0)
            return std::nullopt;
      p = q;
    }
    ops.push_back(op);
    return p;
  }
  if (auto div = dyn_cast<DivOp>(op)) {
    std::optional<double> c = getSplatFloatConstant(div.getRhs());
    if (!c || *c == 0.0)
      return std::nullopt;
    for (double &t : *a)
      t /= *c;
    ops.push_back(op);
    return a;
  }
  std::optional<Polynomial> b = operand(1);
  if (!b)
    return std::nullopt;
  if (isa<AddOp, SubOp>(op)) {
    double sign = isa<AddOp>(op) ? 1.0 : -1.0;
    for (int i = 0; i < 8; ++i)
      p[i] = (*a)[i] + sign * (*b)[i];
  } else {
    for (int j = 0; j < 8; ++j)
      for (int k = 0; k < 8; ++k) {
        if ((*a)[j] == 0.0 || (*b)[k] == 0.0)
          continue;
        if (j + k >= 8)
          return std::nullopt;
        p[j + k] += (*a)[j] * (*b)[k];
      }
  }
  ops.push_back(op);
  return p;
}

/// True if |p| is sqrt(2/pi) * (x + 0.044715 x^3), coefficients within a
/// relative 1e-3 (exporters round sqrt(2/pi) and 0.044715 differently).
bool isTanhGeluArgument(const Polynomial &p) {
  constexpr double kBeta = 0.7978845608028654; // sqrt(2 / pi)
  constexpr double kKappa = 0.044715;
  auto near = [](double a, double b) {
    return std::fabs(a - b) <= 1e-3 * std::fabs(b);
  };
  for (int i = 0; i < 8; ++i)
    if (i != 1 && i != 3 && std::fabs(p[i]) > 1e-6)
      return false;
  return near(p[1], kBeta) && near(p[3], kBeta * kKappa);
}

/// Tries to match a tanh GELU around |tanh|; on failure |reason| says why.
std::optional<GeluMatch> matchTanhGelu(TanhOp tanh, std::string &reason) {
  GeluMatch match;
  if (!tanh.getInput().hasOneUse()) {
    reason = "its input has other uses";
    return std::nullopt;
  }
  std::optional<Polynomial> p =
      polynomialOf(tanh.getInput(), match.input, match.ops);
  if (!p || !match.input || !isTanhGeluArgument(*p)) {
    reason = "its input is not sqrt(2/pi) * (x + 0.044715 * x^3) of one x";
    return std::nullopt;
  }
  match.ops.push_back(tanh);
  auto add = dyn_cast_if_present<AddOp>(soleUser(tanh.getResult()));
  if (!add || !matchEitherOrder(add.getLhs(), add.getRhs(), true,
                                [&](Value t, Value c) {
                                  return t == tanh.getResult() &&
                                         isFloatConstant(c, 1.0);
                                })) {
    reason = "its single user is not '1 + tanh(...)'";
    return std::nullopt;
  }
  match.ops.push_back(add);
  match.root = matchHalfProduct(add.getResult(), match.input, match.ops);
  if (!match.root) {
    reason =
        "'1 + tanh(...)' is not multiplied by x and 0.5 (with single uses)";
    return std::nullopt;
  }
  if (match.root->getResult(0).getType() != match.input.getType()) {
    reason = "the product broadcasts x to a different type";
    return std::nullopt;
  }
  llvm::sort(match.ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return match;
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

// x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) -> strata.gelu(x)
// {approximate = "tanh"}
struct FuseTanhGelu : OpRewritePattern<TanhOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TanhOp tanh,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    std::optional<GeluMatch> match = matchTanhGelu(tanh, reason);
    if (!match)
      return rewriter.notifyMatchFailure(tanh, reason);
    if (llvm::any_of(match->ops, [&](Operation *op) {
          return op->getBlock() != match->root->getBlock();
        }))
      return rewriter.notifyMatchFailure(tanh, "the chain spans blocks");
    SmallVector<Location> locs;
    for (Operation *op : match->ops)
      locs.push_back(op->getLoc());
    rewriter.setInsertionPoint(match->root);
    auto gelu = GeluOp::create(rewriter, rewriter.getFusedLoc(locs),
                               match->input.getType(), match->input,
                               rewriter.getStringAttr("tanh"));
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
    remarkMissedFusions<ErfOp>(
        getOperation(),
        [](ErfOp erf, std::string &reason, bool &) {
          return matchGelu(erf, reason);
        },
        "erf did not fuse into strata.gelu: ");
    remarkMissedFusions<TanhOp>(
        getOperation(),
        [](TanhOp tanh, std::string &reason, bool &) {
          return matchTanhGelu(tanh, reason);
        },
        "tanh did not fuse into strata.gelu: ");
  }
};

} // namespace

void populateFuseGeluPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseErfGelu, FuseTanhGelu>(patterns.getContext());
}

} // namespace strata
