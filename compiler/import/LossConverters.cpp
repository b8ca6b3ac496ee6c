//===- LossConverters.cpp - ONNX NegativeLogLikelihoodLoss, SoftmaxCE -----===//
// SPDX-License-Identifier: Apache-2.0
// The two losses as the spec defines them, built from strata ops:
// loss[n, d...] = -input[n, target[n, d...], d...] * weight[target[n, d...]]
// (strata.gather_elements picks the target class, strata.gather its
// weight), 0 where the target is the ignore index; reduced by "none",
// "sum" or "mean" (the sum over the sum of the weights used, which is the
// count of the targets not ignored when there are no weights).
// SoftmaxCrossEntropyLoss is that loss of the log-softmax over the class
// axis, which is its optional second output.

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "dialects/strata/IR/StrataOps.h"

#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

namespace {

/// The node's `reduction` attribute, checked.
FailureOr<std::string> reductionOf(ImportContext &ctx) {
  FailureOr<std::string> reduction = ctx.stringAttr("reduction", "mean");
  if (failed(reduction))
    return failure();
  if (*reduction != "none" && *reduction != "sum" && *reduction != "mean") {
    ctx.error() << "'reduction' must be none, sum or mean, got '"
                << *reduction << "'";
    return failure();
  }
  return reduction;
}

/// A reduction of |x| over all of its dims to a 0-D tensor.
template <typename OpT> Value reduceAll(ImportContext &ctx, Value x) {
  RankedTensorType t = typeOf(x);
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < t.getRank(); ++d)
    axes.push_back(d);
  OpBuilder &b = ctx.b();
  return OpT::create(b, ctx.loc(),
                     RankedTensorType::get({}, t.getElementType()), x,
                     b.getDenseI64ArrayAttr(axes), b.getBoolAttr(false));
}

/// The negative log-likelihood of |input| [N, C, d...] at |target|
/// [N, d...], weighted by |weight| [C] when given; null after an error.
Value negativeLogLikelihood(ImportContext &ctx, Value input, Value target,
                            Value weight, StringRef reduction) {
  RankedTensorType in = typeOf(input), tt = typeOf(target);
  if (in.getRank() < 2 || tt.getRank() != in.getRank() - 1) {
    ctx.error() << "expected input [N, C, d...] and target [N, d...], got "
                << formatShape(in.getShape()) << " and "
                << formatShape(tt.getShape());
    return {};
  }
  if (!isa<FloatType>(in.getElementType())) {
    ctx.error() << "expected a float input, got " << in.getElementType();
    return {};
  }
  if (weight && (typeOf(weight).getRank() != 1 ||
                 typeOf(weight).getElementType() != in.getElementType())) {
    ctx.error() << "expected a 1-D weight of the input's type, got "
                << typeOf(weight);
    return {};
  }
  OpBuilder &b = ctx.b();
  Location loc = ctx.loc();
  Type fp = in.getElementType();
  // Ignored targets read class 0 and weigh 0.
  Value keep;
  Value safeTarget = target;
  if (const onnx::AttributeProto *ignore = ctx.attr("ignore_index")) {
    if (ignore->type() != onnx::AttributeProto::INT) {
      ctx.error() << "expected INT attribute 'ignore_index'";
      return {};
    }
    Type it = tt.getElementType();
    Value ignored =
        broadcastCompare<EqualOp>(ctx, target,
                                  ctx.constScalar(it, ignore->i()));
    safeTarget = WhereOp::create(b, loc, tt, ignored, ctx.constScalar(it, 0),
                                 target);
    Value kept = NotOp::create(b, loc, ignored.getType(), ignored);
    keep = CastOp::create(b, loc, RankedTensorType::get(tt.getShape(), fp),
                          kept);
  }
  // input[n, target[n, d...], d...] through a class axis of extent 1.
  SmallVector<int64_t> pickedDims{tt.getDimSize(0), 1};
  SmallVector<DimSource> pickedSources{DimSource::fromInput(0),
                                       DimSource::fixed(1)};
  for (int64_t d = 1; d < tt.getRank(); ++d) {
    pickedDims.push_back(tt.getDimSize(d));
    pickedSources.push_back(DimSource::fromInput(d));
  }
  Value index = ctx.reshapeTo(safeTarget, pickedDims, pickedSources);
  Value picked = GatherElementsOp::create(
      b, loc, RankedTensorType::get(pickedDims, fp), input, index,
      b.getI64IntegerAttr(1));
  SmallVector<DimSource> backSources{DimSource::fromInput(0)};
  for (int64_t d = 1; d < tt.getRank(); ++d)
    backSources.push_back(DimSource::fromInput(d + 1));
  picked = ctx.reshapeTo(picked, tt.getShape(), backSources);
  auto lossType = RankedTensorType::get(tt.getShape(), fp);
  Value loss = NegOp::create(b, loc, lossType, picked);
  Value weights;
  if (weight)
    weights = GatherOp::create(b, loc, lossType, weight, safeTarget,
                               b.getI64IntegerAttr(0));
  if (keep)
    weights = weights ? broadcastOp<MulOp>(ctx, weights, keep) : keep;
  if (weights)
    loss = broadcastOp<MulOp>(ctx, loss, weights);
  if (reduction == "none")
    return loss;
  if (reduction == "sum")
    return reduceAll<ReduceSumOp>(ctx, loss);
  if (!weights)
    return reduceAll<ReduceMeanOp>(ctx, loss);
  return broadcastOp<DivOp>(ctx, reduceAll<ReduceSumOp>(ctx, loss),
                            reduceAll<ReduceSumOp>(ctx, weights));
}

} // namespace

LogicalResult convertNegativeLogLikelihoodLoss(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  FailureOr<std::string> reduction = reductionOf(ctx);
  if (failed(reduction))
    return failure();
  Value loss = negativeLogLikelihood(
      ctx, ctx.input(0), ctx.input(1), ctx.hasInput(2) ? ctx.input(2) : Value(),
      *reduction);
  if (!loss)
    return failure();
  ctx.setOutput(0, loss);
  return success();
}

LogicalResult convertSoftmaxCrossEntropyLoss(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  FailureOr<std::string> reduction = reductionOf(ctx);
  if (failed(reduction))
    return failure();
  RankedTensorType scores = ctx.inputType(0);
  if (scores.getRank() < 2)
    return ctx.error() << "expected scores [N, C, d...], got "
                       << formatShape(scores.getShape());
  Value logProb = LogSoftmaxOp::create(ctx.b(), ctx.loc(), scores,
                                       ctx.input(0), 1);
  Value loss = negativeLogLikelihood(
      ctx, logProb, ctx.input(1), ctx.hasInput(2) ? ctx.input(2) : Value(),
      *reduction);
  if (!loss)
    return failure();
  ctx.setOutput(0, loss);
  if (ctx.node().output_size() > 1)
    ctx.setOutput(1, logProb);
  return success();
}

} // namespace strata::import
