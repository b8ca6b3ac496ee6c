//===- NormPatterns.cpp - Pieces of decomposed normalizations -------------===//
// SPDX-License-Identifier: Apache-2.0
// See NormPatterns.h.

#include "passes/NormPatterns.h"

#include "dialects/strata/IR/ConstantValues.h"
#include "passes/PatternUtils.h"

using namespace mlir;
using namespace strata::ir;

namespace strata {

std::optional<SmallVector<int64_t>> trailingReducedAxes(ReduceMeanOp mean) {
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

Value widenedFrom(Value v) {
  auto cast = v.getDefiningOp<CastOp>();
  if (!cast)
    return {};
  Type from = getElementTypeOrSelf(cast.getInput().getType());
  Type to = getElementTypeOrSelf(cast.getResult().getType());
  if (!(from.isF16() || from.isBF16()) || !to.isF32())
    return {};
  return cast.getInput();
}

Value squaredValue(Operation *op) {
  if (auto mul = dyn_cast_if_present<MulOp>(op))
    return mul.getLhs() == mul.getRhs() ? mul.getLhs() : Value();
  if (auto pow = dyn_cast_if_present<PowOp>(op))
    return isFloatConstant(pow.getRhs(), 2.0, 0.0) ? pow.getLhs() : Value();
  return {};
}

std::optional<EpsilonAdd> matchPlusEpsilon(Value var) {
  auto add = dyn_cast_if_present<AddOp>(soleUser(var));
  if (!add || add.getResult().getType() != var.getType())
    return std::nullopt;
  std::optional<double> eps;
  matchEitherOrder(add.getLhs(), add.getRhs(), true, [&](Value v, Value c) {
    if (v != var)
      return false;
    eps = evaluateScalarConstant(c);
    return eps.has_value();
  });
  if (!eps || *eps < 0.0)
    return std::nullopt;
  return EpsilonAdd{add, *eps};
}

Value matchDivideBySqrt(Value v, Value n, SmallVectorImpl<Operation *> &ops) {
  Operation *user = soleUser(v);
  auto mulBy = [&](Value r) -> Value {
    auto mul = dyn_cast_if_present<MulOp>(soleUser(r));
    if (!mul ||
        !matchEitherOrder(mul.getLhs(), mul.getRhs(), true,
                          [&](Value a, Value b) { return a == n && b == r; }))
      return {};
    ops.push_back(mul);
    return mul.getResult();
  };
  if (auto rsqrt = dyn_cast_if_present<RsqrtOp>(user)) {
    ops.push_back(rsqrt);
    return mulBy(rsqrt.getResult());
  }
  auto sqrt = dyn_cast_if_present<SqrtOp>(user);
  if (!sqrt)
    return {};
  ops.push_back(sqrt);
  Value s = sqrt.getResult();
  Operation *next = soleUser(s);
  if (auto recip = dyn_cast_if_present<ReciprocalOp>(next)) {
    ops.push_back(recip);
    return mulBy(recip.getResult());
  }
  auto div = dyn_cast_if_present<DivOp>(next);
  if (!div || div.getRhs() != s)
    return {};
  ops.push_back(div);
  if (div.getLhs() == n)
    return div.getResult();
  if (isFloatConstant(div.getLhs(), 1.0, 0.0))
    return mulBy(div.getResult());
  return {};
}

// The trailing op of extendByTrailing and its other operand.
template <typename OpTy>
static std::optional<std::pair<OpTy, Value>>
matchTrailingOperand(Value y, RankedTensorType type, ArrayRef<int64_t> shape) {
  auto op = dyn_cast_if_present<OpTy>(soleUser(y));
  if (!op || op.getResult().getType() != type)
    return std::nullopt;
  Value operand;
  matchEitherOrder(op.getLhs(), op.getRhs(), true, [&](Value a, Value w) {
    auto wType = dyn_cast<RankedTensorType>(w.getType());
    if (a != y || !wType || wType.getShape() != shape ||
        wType.getElementType() != type.getElementType())
      return false;
    operand = w;
    return true;
  });
  if (!operand)
    return std::nullopt;
  return std::pair(op, operand);
}

template <typename OpTy>
Value extendByTrailing(NormMatch &match, RankedTensorType type,
                       ArrayRef<int64_t> shape) {
  auto found = matchTrailingOperand<OpTy>(match.root->getResult(0), type, shape);
  if (!found)
    return {};
  match.ops.push_back(found->first);
  match.root = found->first;
  return found->second;
}

template Value extendByTrailing<MulOp>(NormMatch &, RankedTensorType,
                                       ArrayRef<int64_t>);
template Value extendByTrailing<AddOp>(NormMatch &, RankedTensorType,
                                       ArrayRef<int64_t>);

std::optional<NormMatch> replaceableNorm(const NormMatch &match,
                                         std::string &reason) {
  if (!usedOnlyInside(match.ops, match.root)) {
    reason = "an intermediate value of the chain has other uses";
    return std::nullopt;
  }
  return match;
}

Value scaleOrOnes(OpBuilder &builder, Location loc, Value scale,
                  RankedTensorType type, int64_t axis) {
  if (scale)
    return scale;
  auto onesType = RankedTensorType::get(type.getShape().drop_front(axis),
                                        type.getElementType());
  auto ones = DenseElementsAttr::get(
      onesType, builder.getFloatAttr(type.getElementType(), 1.0));
  return ConstantOp::create(builder, loc, onesType, ones).getResult();
}

} // namespace strata
