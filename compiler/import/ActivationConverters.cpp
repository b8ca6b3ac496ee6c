//===- ActivationConverters.cpp - ONNX ops defined by a formula ------------===//
// SPDX-License-Identifier: Apache-2.0
// The activations and elementwise functions the ONNX spec defines by a
// formula over other ops (LeakyRelu, Elu, Selu, Celu, HardSigmoid,
// HardSwish, Softplus, Softsign, Mish, ThresholdedRelu, PRelu, Shrink,
// Sign), IsNaN, IsInf, Xor, Mean and Clip, built at import from strata's
// elementwise ops: fusion and codegen see them as any other elementwise
// chain, and each node's ops keep its name as their location.

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "compiler/import/Formula.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <limits>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

namespace {

bool isFloatTensor(Value v) {
  return isa<FloatType>(typeOf(v).getElementType());
}

} // namespace

LogicalResult convertActivation(ImportContext &ctx) {
  StringRef op = ctx.node().op_type();
  const bool twoInputs = op == "PRelu" || op == "Xor";
  if (failed(ctx.requireInputs(twoInputs ? 2 : 1)))
    return failure();
  Value x = ctx.input(0);
  Type element = typeOf(x).getElementType();
  Formula f(ctx, element);
  // The ops defined on integers too; the rest take floats only.
  const bool anyNumeric = op == "Sign" || op == "PRelu" || op == "Shrink" ||
                          op == "Xor";
  if (!anyNumeric && !isFloatTensor(x))
    return ctx.error() << "expected a float input, got " << element;
  auto attr = [&](StringRef name, float dflt) -> FailureOr<double> {
    FailureOr<float> v = ctx.floatAttr(name, dflt);
    if (failed(v))
      return failure();
    return static_cast<double>(*v);
  };
  Value y;
  if (op == "LeakyRelu") {
    FailureOr<double> alpha = attr("alpha", 0.01f);
    if (failed(alpha))
      return failure();
    y = f.where(f.compare<LessOp>(x, f.c(0)), f.mul(x, f.c(*alpha)), x);
  } else if (op == "Elu") {
    FailureOr<double> alpha = attr("alpha", 1.0f);
    if (failed(alpha))
      return failure();
    y = f.where(f.compare<LessOp>(x, f.c(0)),
                f.mul(f.c(*alpha), f.sub(f.exp(x), f.c(1))), x);
  } else if (op == "Selu") {
    FailureOr<double> alpha = attr("alpha", 1.67326319217681884765625f);
    FailureOr<double> gamma = attr("gamma", 1.05070102214813232421875f);
    if (failed(alpha) || failed(gamma))
      return failure();
    y = f.mul(f.c(*gamma),
              f.where(f.compare<GreaterOp>(x, f.c(0)), x,
                      f.sub(f.mul(f.c(*alpha), f.exp(x)), f.c(*alpha))));
  } else if (op == "Celu") {
    FailureOr<double> alpha = attr("alpha", 1.0f);
    if (failed(alpha))
      return failure();
    y = f.add(f.max(f.c(0), x),
              f.min(f.c(0), f.mul(f.c(*alpha),
                                  f.sub(f.exp(f.div(x, f.c(*alpha))),
                                        f.c(1)))));
  } else if (op == "HardSigmoid" || op == "HardSwish") {
    const bool swish = op == "HardSwish";
    FailureOr<double> alpha = swish ? 1.0 / 6 : attr("alpha", 0.2f);
    FailureOr<double> beta = swish ? 0.5 : attr("beta", 0.5f);
    if (failed(alpha) || failed(beta))
      return failure();
    y = f.max(f.c(0),
              f.min(f.c(1), f.add(f.mul(x, f.c(*alpha)), f.c(*beta))));
    if (swish)
      y = f.mul(x, y);
  } else if (op == "Softplus") {
    y = f.softplus(x);
  } else if (op == "Softsign") {
    y = f.div(x, f.add(f.c(1), f.abs(x)));
  } else if (op == "Mish") {
    y = f.mul(x, f.unary<TanhOp>(f.softplus(x)));
  } else if (op == "ThresholdedRelu") {
    FailureOr<double> alpha = attr("alpha", 1.0f);
    if (failed(alpha))
      return failure();
    y = f.where(f.compare<GreaterOp>(x, f.c(*alpha)), x, f.c(0));
  } else if (op == "PRelu") {
    // The slope broadcasts to x's shape (unidirectionally).
    y = f.where(f.compare<LessOp>(x, f.c(0)), f.mul(x, ctx.input(1)), x);
  } else if (op == "Shrink") {
    FailureOr<double> bias = attr("bias", 0.0f);
    FailureOr<double> lambd = attr("lambd", 0.5f);
    if (failed(bias) || failed(lambd))
      return failure();
    y = f.where(f.compare<LessOp>(x, f.c(-*lambd)), f.add(x, f.c(*bias)),
                f.where(f.compare<GreaterOp>(x, f.c(*lambd)),
                        f.sub(x, f.c(*bias)), f.c(0)));
  } else if (op == "Sign") {
    // Zero and NaN are their own sign.
    y = f.where(f.compare<GreaterOp>(x, f.c(0)), f.c(1),
                f.where(f.compare<LessOp>(x, f.c(0)), f.c(-1), x));
  } else if (op == "IsNaN") {
    y = f.unary<NotOp>(f.compare<EqualOp>(x, x));
  } else if (op == "IsInf") {
    FailureOr<int64_t> negative = ctx.intAttr("detect_negative", 1);
    FailureOr<int64_t> positive = ctx.intAttr("detect_positive", 1);
    if (failed(negative) || failed(positive))
      return failure();
    const double inf = std::numeric_limits<double>::infinity();
    Value pos = f.compare<EqualOp>(x, f.c(inf));
    Value neg = f.compare<EqualOp>(x, f.c(-inf));
    if (*positive && *negative)
      y = f.binary<OrOp>(pos, neg);
    else if (*positive)
      y = pos;
    else if (*negative)
      y = neg;
    else
      y = f.compare<LessOp>(x, x); // never: detects nothing
  } else if (op == "Xor") {
    if (!typeOf(x).getElementType().isInteger(1))
      return ctx.error() << "expected bool inputs, got " << element;
    Value other = ctx.input(1);
    y = f.binary<AndOp>(f.binary<OrOp>(x, other),
                        f.unary<NotOp>(f.binary<AndOp>(x, other)));
  } else if (op == "Mean") {
    int64_t count = 0;
    for (int i = 0; i < ctx.node().input_size(); ++i) {
      if (!ctx.hasInput(i))
        continue;
      y = count == 0 ? ctx.input(i) : f.add(y, ctx.input(i));
      ++count;
    }
    y = f.div(y, f.c(static_cast<double>(count)));
  } else {
    return ctx.error() << "no formula for this op";
  }
  if (!y)
    return failure();
  ctx.setOutput(0, y);
  return success();
}

LogicalResult convertClip(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value x = ctx.input(0);
  Type element = typeOf(x).getElementType();
  Formula f(ctx, element);
  Value low, high;
  if (ctx.opset() < 11) {
    // Bounds as attributes, the float range when absent.
    const float big = std::numeric_limits<float>::max();
    FailureOr<float> lo = ctx.floatAttr("min", -big);
    FailureOr<float> hi = ctx.floatAttr("max", big);
    if (failed(lo) || failed(hi))
      return failure();
    if (!isa<FloatType>(element))
      return ctx.error() << "expected a float input, got " << element;
    low = f.c(*lo);
    high = f.c(*hi);
  } else {
    // Optional scalar inputs; min then max, so min > max gives max.
    if (ctx.hasInput(1))
      low = ctx.input(1);
    if (ctx.hasInput(2))
      high = ctx.input(2);
    for (Value bound : {low, high})
      if (bound && typeOf(bound).getElementType() != element)
        return ctx.error() << "bound of type " << typeOf(bound).getElementType()
                           << " for an input of type " << element;
  }
  Value y = x;
  if (low)
    y = f.max(y, low);
  if (high)
    y = f.min(y, high);
  if (!y)
    return failure();
  ctx.setOutput(0, y);
  return success();
}

} // namespace strata::import
