//===- ConstantValues.cpp - Values known at compile time ------------------===//
// SPDX-License-Identifier: Apache-2.0
// See ConstantValues.h.

#include "dialects/strata/IR/ConstantValues.h"

#include "dialects/strata/IR/StrataOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

namespace strata::ir {

namespace {

// Binary ops double the work per level: 8 levels bound one evaluation to
// 255 ops however a hostile graph fans in, and exporters' constant
// expressions (`1 / sqrt(float(64))`) take 3 or 4.
constexpr int kMaxDepth = 8;

/// |x| converted as strata.cast converts to the element type |to|.
std::optional<double> castTo(double x, Type to) {
  if (isa<FloatType>(to))
    return x;
  auto integer = dyn_cast<IntegerType>(to);
  if (!integer)
    return std::nullopt;
  if (integer.getWidth() == 1)
    return x != 0.0 ? 1.0 : 0.0;
  if (std::isnan(x) || integer.getWidth() > 64)
    return std::nullopt;
  double t = std::trunc(x);
  unsigned width = integer.getWidth();
  double lo = integer.isUnsigned() ? 0.0 : -std::ldexp(1.0, width - 1);
  double hi = integer.isUnsigned() ? std::ldexp(1.0, width)
                                   : std::ldexp(1.0, width - 1);
  if (t < lo || t >= hi)
    return std::nullopt;
  return t;
}

std::optional<double> evaluate(Value v, int depth) {
  Operation *op = v.getDefiningOp();
  if (!op || depth >= kMaxDepth)
    return std::nullopt;
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense || !dense.isSplat())
      return std::nullopt;
    return getNumber(dense.getSplatValue<Attribute>());
  }
  if (auto fill = dyn_cast<ConstantOfShapeOp>(op))
    return getNumber(fill.getValue());
  // A broadcast or reshape of a splat is the same splat.
  if (isa<ExpandOp, ReshapeOp>(op))
    return evaluate(op->getOperand(0), depth + 1);
  if (auto cast = dyn_cast<CastOp>(op)) {
    std::optional<double> x = evaluate(cast.getInput(), depth + 1);
    if (!x)
      return std::nullopt;
    return castTo(*x, getElementTypeOrSelf(cast.getType()));
  }
  if (!isFloatElementwiseOp(op))
    return std::nullopt;
  SmallVector<double, 2> operands;
  for (Value operand : op->getOperands()) {
    std::optional<double> x = evaluate(operand, depth + 1);
    if (!x)
      return std::nullopt;
    operands.push_back(*x);
  }
  return applyFloatElementwise(op, operands);
}

} // namespace

std::optional<double> getNumber(Attribute attr) {
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  auto i = dyn_cast<IntegerAttr>(attr);
  if (!i || i.getValue().getBitWidth() > 64)
    return std::nullopt;
  if (i.getType().isInteger(1))
    return i.getValue().getBoolValue() ? 1.0 : 0.0;
  if (i.getType().isUnsignedInteger())
    return static_cast<double>(i.getValue().getZExtValue());
  return static_cast<double>(i.getValue().getSExtValue());
}

bool isFloatElementwiseOp(Operation *op) {
  if (!isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, NegOp, AbsOp,
           SqrtOp, RsqrtOp, ReciprocalOp, ExpOp, LogOp, ErfOp, TanhOp,
           SigmoidOp, ReluOp>(op) ||
      op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && isa<FloatType>(type.getElementType());
}

double applyFloatElementwise(Operation *op, ArrayRef<double> a) {
  return llvm::TypeSwitch<Operation *, double>(op)
      .Case([&](AddOp) { return a[0] + a[1]; })
      .Case([&](SubOp) { return a[0] - a[1]; })
      .Case([&](MulOp) { return a[0] * a[1]; })
      .Case([&](DivOp) { return a[0] / a[1]; })
      .Case([&](PowOp) { return std::pow(a[0], a[1]); })
      .Case([&](MaxOp) {
        return std::isnan(a[0]) || std::isnan(a[1]) ? NAN
                                                    : std::fmax(a[0], a[1]);
      })
      .Case([&](MinOp) {
        return std::isnan(a[0]) || std::isnan(a[1]) ? NAN
                                                    : std::fmin(a[0], a[1]);
      })
      .Case([&](NegOp) { return -a[0]; })
      .Case([&](AbsOp) { return std::fabs(a[0]); })
      .Case([&](SqrtOp) { return std::sqrt(a[0]); })
      .Case([&](RsqrtOp) { return 1.0 / std::sqrt(a[0]); })
      .Case([&](ReciprocalOp) { return 1.0 / a[0]; })
      .Case([&](ExpOp) { return std::exp(a[0]); })
      .Case([&](LogOp) { return std::log(a[0]); })
      .Case([&](ErfOp) { return std::erf(a[0]); })
      .Case([&](TanhOp) { return std::tanh(a[0]); })
      .Case([&](SigmoidOp) { return 1.0 / (1.0 + std::exp(-a[0])); })
      .Case([&](ReluOp) { return a[0] > 0.0 ? a[0] : 0.0; })
      .Default([](Operation *) { return NAN; });
}

std::optional<double> evaluateScalarConstant(Value v) { return evaluate(v, 0); }

} // namespace strata::ir
