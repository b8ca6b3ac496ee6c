//===- TrainingConverters.cpp - ONNX's optimizer update rules --------------===//
// SPDX-License-Identifier: Apache-2.0
// Adagrad, Momentum (standard and Nesterov) and Adam from the
// ai.onnx.preview.training domain: one parameter update per (X, G, state)
// group, written as the spec's formulas over strata elementwise ops, so an
// exported training step's update compiles like any elementwise chain.

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/Formula.h"

#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

LogicalResult convertTrainingOptimizer(ImportContext &ctx) {
  StringRef op = ctx.node().op_type();
  // Inputs: R, T, then per group X..., G..., and one (Adagrad: H; Momentum:
  // V) or two (Adam: V, H) state tensors.
  const int states = op == "Adam" ? 2 : 1;
  const int tensors = ctx.node().input_size() - 2;
  if (tensors <= 0 || tensors % (2 + states))
    return ctx.error() << "expected R, T and " << 2 + states
                       << " inputs per optimized tensor, got "
                       << ctx.node().input_size() << " inputs";
  const int groups = tensors / (2 + states);
  for (int i = 0; i < tensors + 2; ++i)
    if (!ctx.input(i))
      return ctx.error() << "input " << i << " is missing";
  auto attr = [&](StringRef name, float dflt) -> FailureOr<double> {
    FailureOr<float> v = ctx.floatAttr(name, dflt);
    if (failed(v))
      return failure();
    return static_cast<double>(*v);
  };
  FailureOr<double> normCoefficient = attr("norm_coefficient", 0.0f);
  if (failed(normCoefficient))
    return failure();
  for (int g = 0; g < groups; ++g) {
    Value x = ctx.input(2 + g), grad = ctx.input(2 + groups + g);
    Value state = ctx.input(2 + 2 * groups + g);
    Type element = typeOf(x).getElementType();
    if (!isa<FloatType>(element))
      return ctx.error() << "expected float tensors to optimize, got "
                         << element;
    Formula f(ctx, element);
    Value rate = f.cast(ctx.input(0)), step = f.cast(ctx.input(1));
    Value regularized = f.add(f.mul(f.c(*normCoefficient), x), grad);
    if (op == "Adagrad") {
      FailureOr<double> decay = attr("decay_factor", 0.0f);
      FailureOr<double> epsilon = attr("epsilon", 1e-6f);
      if (failed(decay) || failed(epsilon))
        return failure();
      Value adjusted =
          f.div(rate, f.add(f.c(1), f.mul(step, f.c(*decay))));
      Value h = f.add(state, f.mul(regularized, regularized));
      Value scale = f.add(f.sqrt(h), f.c(*epsilon));
      ctx.setOutput(g, f.sub(x, f.div(f.mul(adjusted, regularized), scale)));
      ctx.setOutput(groups + g, h);
    } else if (op == "Momentum") {
      FailureOr<double> alpha = attr("alpha", 0.0f);
      FailureOr<double> beta = attr("beta", 0.0f);
      FailureOr<std::string> mode = ctx.stringAttr("mode", "standard");
      if (failed(alpha) || failed(beta) || failed(mode))
        return failure();
      if (*mode != "standard" && *mode != "nesterov")
        return ctx.error() << "unknown mode '" << *mode << "'";
      // The gradient's coefficient is 1 on the first step (T = 0).
      Value betaNow = f.where(f.compare<GreaterOp>(step, f.c(0)),
                              f.c(*beta), f.c(1));
      Value v = f.add(f.mul(f.c(*alpha), state), f.mul(betaNow, regularized));
      Value direction =
          *mode == "standard"
              ? v
              : f.add(regularized, f.mul(f.c(*alpha), v));
      ctx.setOutput(g, f.sub(x, f.mul(rate, direction)));
      ctx.setOutput(groups + g, v);
    } else {
      FailureOr<double> alpha = attr("alpha", 0.9f);
      FailureOr<double> beta = attr("beta", 0.999f);
      FailureOr<double> epsilon = attr("epsilon", 1e-6f);
      FailureOr<double> post = attr("norm_coefficient_post", 0.0f);
      if (failed(alpha) || failed(beta) || failed(epsilon) || failed(post))
        return failure();
      Value h2 = ctx.input(2 + 3 * groups + g);
      Value v = f.add(f.mul(f.c(*alpha), state),
                      f.mul(f.c(1 - *alpha), regularized));
      Value h = f.add(f.mul(f.c(*beta), h2),
                      f.mul(f.c(1 - *beta), f.mul(regularized, regularized)));
      Value scale = f.add(f.sqrt(h), f.c(*epsilon));
      // Bias correction from the second step on.
      Value corrected = f.div(
          f.mul(rate, f.sqrt(f.sub(f.c(1), f.pow(f.c(*beta), step)))),
          f.sub(f.c(1), f.pow(f.c(*alpha), step)));
      Value adjusted =
          f.where(f.compare<GreaterOp>(step, f.c(0)), corrected, rate);
      Value updated = f.sub(x, f.mul(adjusted, f.div(v, scale)));
      ctx.setOutput(g, f.mul(f.c(1 - *post), updated));
      ctx.setOutput(groups + g, v);
      ctx.setOutput(2 * groups + g, h);
    }
    if (!regularized)
      return failure();
  }
  return success();
}

} // namespace strata::import
