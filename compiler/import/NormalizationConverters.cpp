//===- NormalizationConverters.cpp - Batch/instance/group normalizations --===//
// SPDX-License-Identifier: Apache-2.0
// The per-channel normalizations of vision models, built from reductions
// and elementwise ops as the spec writes them: (x - mean) / sqrt(var + eps)
// with the population variance, then the per-channel (or per-group) scale
// and bias. BatchNormalization uses the given statistics (inference) or,
// with training_mode, the batch's own and returns the updated running ones;
// InstanceNormalization and GroupNormalization normalize over the spatial
// dims of each (sample, channel) or (sample, group);
// MeanVarianceNormalization divides by the standard deviation plus 1e-9;
// LRN divides by a power of the mean square over neighbouring channels,
// an average pool of x^2 whose window runs over the channels.

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "compiler/import/Formula.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

namespace {

Value reduceMean(ImportContext &ctx, Value x, ArrayRef<int64_t> axes,
                 bool keep) {
  RankedTensorType t = typeOf(x);
  auto type = RankedTensorType::get(inferReduceShape(t.getShape(), axes, keep),
                                    t.getElementType());
  OpBuilder &b = ctx.b();
  return ReduceMeanOp::create(b, ctx.loc(), type, x,
                              b.getDenseI64ArrayAttr(axes), b.getBoolAttr(keep));
}

/// The mean over |axes| (kept) and the population variance around it.
std::pair<Value, Value> moments(ImportContext &ctx, Value x,
                                ArrayRef<int64_t> axes) {
  Value mean = reduceMean(ctx, x, axes, /*keep=*/true);
  Value centered = broadcastOp<SubOp>(ctx, x, mean);
  Value var = reduceMean(ctx, broadcastOp<MulOp>(ctx, centered, centered),
                         axes, /*keep=*/true);
  return {mean, var};
}

/// (x - mean) / sqrt(var + eps).
Value standardize(ImportContext &ctx, Value x, Value mean, Value var,
                  double epsilon) {
  Type e = typeOf(x).getElementType();
  Value spread = broadcastOp<AddOp>(ctx, var, ctx.constScalar(e, epsilon));
  spread = SqrtOp::create(ctx.b(), ctx.loc(), spread.getType(), spread);
  return broadcastOp<DivOp>(ctx, broadcastOp<SubOp>(ctx, x, mean), spread);
}

/// A per-channel vector [C] as [C, 1, ...] against a rank-|rank| [N, C,
/// ...] input; null (reported) unless it is a static 1-D [channels].
Value perChannel(ImportContext &ctx, Value v, int64_t rank, int64_t channels,
                 StringRef what) {
  RankedTensorType t = typeOf(v);
  if (t.getRank() != 1 || t.isDynamicDim(0) ||
      (channels != ShapedType::kDynamic && t.getDimSize(0) != channels)) {
    ctx.error() << "expected '" << what << "' of shape [" << channels
                << "], got " << formatShape(t.getShape());
    return {};
  }
  SmallVector<int64_t> dims(rank - 1, 1);
  dims[0] = t.getDimSize(0);
  return ctx.reshapeTo(v, dims, {});
}

/// scale * x + bias.
Value scaleAndShift(ImportContext &ctx, Value x, Value scale, Value bias) {
  return broadcastOp<AddOp>(ctx, broadcastOp<MulOp>(ctx, scale, x), bias);
}

/// Every dim of a rank-|rank| tensor but 1 (|from| = 0) or from |from| on.
SmallVector<int64_t> axesFrom(int64_t from, int64_t rank, bool skipChannel) {
  SmallVector<int64_t> axes;
  for (int64_t d = from; d < rank; ++d)
    if (!(skipChannel && d == 1))
      axes.push_back(d);
  return axes;
}

/// Inputs |first| and |first| + 1 (named |names|) as per-channel vectors;
/// nulls (reported) when either is not a static [channels].
std::pair<Value, Value> channelPair(ImportContext &ctx, unsigned first,
                                    int64_t rank, int64_t channels,
                                    std::pair<StringRef, StringRef> names) {
  Value a = perChannel(ctx, ctx.input(first), rank, channels, names.first);
  if (!a)
    return {};
  return {a, perChannel(ctx, ctx.input(first + 1), rank, channels,
                        names.second)};
}

LogicalResult requireFloatNC(ImportContext &ctx, RankedTensorType in) {
  if (!isa<FloatType>(in.getElementType()))
    return ctx.error() << "expected a float input, got " << in.getElementType();
  if (in.getRank() < 2)
    return ctx.error() << "expected an input [N, C, ...], got "
                       << formatShape(in.getShape());
  return success();
}

} // namespace

LogicalResult convertBatchNormalization(ImportContext &ctx) {
  if (failed(ctx.requireInputs(5)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  if (failed(requireFloatNC(ctx, in)))
    return failure();
  FailureOr<float> epsilon = ctx.floatAttr("epsilon", 1e-5f);
  FailureOr<float> momentum = ctx.floatAttr("momentum", 0.9f);
  FailureOr<int64_t> training = ctx.intAttr("training_mode", 0);
  if (failed(epsilon) || failed(momentum) || failed(training))
    return failure();
  const int64_t rank = in.getRank(), channels = in.getDimSize(1);
  Value x = ctx.input(0);
  auto [scale, bias] = channelPair(ctx, 1, rank, channels, {"scale", "B"});
  auto [mean, var] =
      scale && bias
          ? channelPair(ctx, 3, rank, channels, {"input_mean", "input_var"})
          : std::pair<Value, Value>();
  if (!scale || !bias || !mean || !var)
    return failure();
  if (!*training) {
    ctx.setOutput(0, scaleAndShift(ctx, standardize(ctx, x, mean, var,
                                                    *epsilon),
                                   scale, bias));
    return success();
  }
  // The batch's statistics (kept dims [1, C, 1, ...]), and the running
  // ones moved towards them.
  auto [batchMean, batchVar] = moments(ctx, x, axesFrom(0, rank, true));
  ctx.setOutput(0, scaleAndShift(ctx, standardize(ctx, x, batchMean, batchVar,
                                                  *epsilon),
                                 scale, bias));
  Type e = in.getElementType();
  auto running = [&](unsigned input, Value batch) {
    Value given = ctx.input(input);
    Value flat = ctx.reshapeTo(batch, typeOf(given).getShape(), {});
    return broadcastOp<AddOp>(
        ctx, broadcastOp<MulOp>(ctx, given, ctx.constScalar(e, *momentum)),
        broadcastOp<MulOp>(ctx, flat,
                           ctx.constScalar(e, 1.0 - double(*momentum))));
  };
  ctx.setOutput(1, running(3, batchMean));
  ctx.setOutput(2, running(4, batchVar));
  return success();
}

LogicalResult convertInstanceNormalization(ImportContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  if (failed(requireFloatNC(ctx, in)))
    return failure();
  FailureOr<float> epsilon = ctx.floatAttr("epsilon", 1e-5f);
  if (failed(epsilon))
    return failure();
  const int64_t rank = in.getRank(), channels = in.getDimSize(1);
  auto [scale, bias] = channelPair(ctx, 1, rank, channels, {"scale", "B"});
  if (!scale || !bias)
    return failure();
  Value x = ctx.input(0);
  auto [mean, var] = moments(ctx, x, axesFrom(2, rank, false));
  ctx.setOutput(0, scaleAndShift(ctx, standardize(ctx, x, mean, var, *epsilon),
                                 scale, bias));
  return success();
}

LogicalResult convertGroupNormalization(ImportContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  if (failed(requireFloatNC(ctx, in)))
    return failure();
  FailureOr<float> epsilon = ctx.floatAttr("epsilon", 1e-5f);
  FailureOr<int64_t> groups = ctx.intAttr("num_groups", 0);
  if (failed(epsilon) || failed(groups))
    return failure();
  const int64_t rank = in.getRank(), channels = in.getDimSize(1);
  if (ShapedType::isDynamic(channels) || *groups < 1 ||
      channels % *groups != 0)
    return ctx.error() << "'num_groups' " << *groups
                       << " must divide a static channel count, got "
                       << formatShape(in.getShape());
  // [N, G, C / G, spatial...], normalized over dims 2.. of each group.
  SmallVector<int64_t> grouped{in.getDimSize(0), *groups, channels / *groups};
  SmallVector<DimSource> groupedSources{DimSource::fromInput(0),
                                        DimSource::fixed(*groups),
                                        DimSource::fixed(channels / *groups)};
  SmallVector<DimSource> backSources{DimSource::fromInput(0),
                                     DimSource::fixed(channels)};
  for (int64_t d = 2; d < rank; ++d) {
    grouped.push_back(in.getDimSize(d));
    groupedSources.push_back(DimSource::fromInput(d));
    backSources.push_back(DimSource::fromInput(d + 1));
  }
  Value x = ctx.reshapeTo(ctx.input(0), grouped, groupedSources);
  auto [mean, var] = moments(ctx, x, axesFrom(2, rank + 1, false));
  Value y = standardize(ctx, x, mean, var, *epsilon);
  // Opset 21 scales each channel; 18 scaled each group.
  const bool perGroup = ctx.opset() < 21;
  Value scale = ctx.input(1), bias = ctx.input(2);
  if (perGroup) {
    scale = perChannel(ctx, scale, rank + 1, *groups, "scale");
    bias = perChannel(ctx, bias, rank + 1, *groups, "bias");
    if (!scale || !bias)
      return failure();
    y = scaleAndShift(ctx, y, scale, bias);
  }
  y = ctx.reshapeTo(y, in.getShape(), backSources);
  if (!perGroup) {
    scale = perChannel(ctx, scale, rank, channels, "scale");
    bias = perChannel(ctx, bias, rank, channels, "bias");
    if (!scale || !bias)
      return failure();
    y = scaleAndShift(ctx, y, scale, bias);
  }
  ctx.setOutput(0, y);
  return success();
}

// (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over `axes` (default 0, 2,
// 3), the reference's formula.
LogicalResult convertMeanVarianceNormalization(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  if (!isa<FloatType>(in.getElementType()))
    return ctx.error() << "expected a float input, got " << in.getElementType();
  FailureOr<std::optional<SmallVector<int64_t>>> axesAttr =
      ctx.intsAttr("axes");
  if (failed(axesAttr))
    return failure();
  SmallVector<int64_t> axes =
      axesAttr->value_or(SmallVector<int64_t>{0, 2, 3});
  FailureOr<SmallVector<int64_t>> valid = ctx.normalizedAxes(axes, in.getRank());
  if (failed(valid))
    return failure();
  SmallVector<int64_t> normalized = *valid;
  llvm::sort(normalized);
  Value x = ctx.input(0);
  Type e = in.getElementType();
  Value mean = reduceMean(ctx, x, normalized, /*keep=*/true);
  Value meanOfSquares = reduceMean(ctx, broadcastOp<MulOp>(ctx, x, x),
                                   normalized, /*keep=*/true);
  Value var = broadcastOp<SubOp>(ctx, meanOfSquares,
                                 broadcastOp<MulOp>(ctx, mean, mean));
  Value std = SqrtOp::create(ctx.b(), ctx.loc(), var.getType(), var);
  std = broadcastOp<AddOp>(ctx, std, ctx.constScalar(e, 1e-9));
  ctx.setOutput(0, broadcastOp<DivOp>(ctx, broadcastOp<SubOp>(ctx, x, mean),
                                      std));
  return success();
}

LogicalResult convertLrn(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  FailureOr<int64_t> size = ctx.intAttr("size", 0);
  FailureOr<float> alpha = ctx.floatAttr("alpha", 1e-4f);
  FailureOr<float> beta = ctx.floatAttr("beta", 0.75f);
  FailureOr<float> bias = ctx.floatAttr("bias", 1.0f);
  if (failed(size) || failed(alpha) || failed(beta) || failed(bias))
    return failure();
  if (*size < 1 || *size > (int64_t{1} << 20))
    return ctx.error() << "'size' " << *size << " is out of range";
  if (in.getRank() < 2 || !isa<FloatType>(in.getElementType()))
    return ctx.error() << "expected a float input of rank >= 2";
  // [N, C, rest...] as [N, 1, C, prod(rest)]: the pool's window of `size`
  // rows with (size - 1) / 2 zero rows before and the rest after covers
  // exactly the channels the spec sums; counting the padding, its average
  // is the sum / size.
  int64_t rest = 1;
  for (int64_t d : in.getShape().drop_front(2)) {
    if (ShapedType::isDynamic(d))
      return ctx.error() << "expected static dims after the channels, got "
                         << formatShape(in.getShape());
    rest *= d;
  }
  const int64_t channels = in.getDimSize(1);
  Formula f(ctx, in.getElementType());
  Value x = ctx.input(0);
  Value square = ctx.reshapeTo(
      f.mul(x, x), {in.getDimSize(0), 1, channels, rest},
      {DimSource::fromInput(0), DimSource::fixed(1), DimSource::fromInput(1),
       DimSource::fixed(rest)});
  RankedTensorType st = typeOf(square);
  OpBuilder &b = ctx.b();
  const int64_t before = (*size - 1) / 2, after = *size - 1 - before;
  Value mean = PoolOp::create(
      b, ctx.loc(), st, square, b.getStringAttr("avg"),
      b.getDenseI64ArrayAttr({*size, 1}), b.getDenseI64ArrayAttr({1, 1}),
      b.getDenseI64ArrayAttr({1, 1}),
      b.getDenseI64ArrayAttr({before, 0, after, 0}), b.getI64IntegerAttr(2),
      b.getUnitAttr(), UnitAttr());
  SmallVector<DimSource> back = {DimSource::fromInput(0),
                                 DimSource::fromInput(2)};
  for (int64_t d : in.getShape().drop_front(2))
    back.push_back(DimSource::fixed(d));
  mean = ctx.reshapeTo(mean, in.getShape(), back);
  Value denominator = f.pow(f.add(f.c(*bias), f.mul(f.c(*alpha), mean)),
                            f.c(*beta));
  Value y = f.div(x, denominator);
  if (!y)
    return failure();
  ctx.setOutput(0, y);
  return success();
}

} // namespace strata::import
