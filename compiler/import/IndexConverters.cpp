//===- IndexConverters.cpp - ONNX ops defined by element positions -------===//
// SPDX-License-Identifier: Apache-2.0
// Gather, GatherElements and GatherND (reads at indices), ScatterElements,
// Scatter and ScatterND (writes at indices), TopK (the best k along an
// axis), ReverseSequence (a gather of reversed prefixes), Trilu (a triangle of the last two dims) and CumSum (a running sum
// along an axis).

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "compiler/import/Formula.h"
#include "dialects/strata/IR/StrataOps.h"

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

LogicalResult convertGather(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType data = ctx.inputType(0), indices = ctx.inputType(1);
  FailureOr<int64_t> axisAttr = ctx.intAttr("axis", 0);
  if (failed(axisAttr))
    return failure();
  std::optional<int64_t> axis = normalizeAxis(*axisAttr, data.getRank());
  if (!axis)
    return ctx.error() << "'axis' " << *axisAttr << " is out of range for rank "
                       << data.getRank();
  SmallVector<int64_t> dims(data.getShape().take_front(*axis));
  llvm::append_range(dims, indices.getShape());
  llvm::append_range(dims, data.getShape().drop_front(*axis + 1));
  auto type = RankedTensorType::get(dims, data.getElementType());
  // Gathering from a known shape vector with constant indices folds.
  std::optional<KnownInts> known;
  const std::optional<KnownInts> &kd = ctx.inputKnown(0);
  std::optional<SmallVector<int64_t>> ki = ctx.inputConstInts(1);
  if (kd && ki && data.getRank() == 1) {
    known.emplace();
    int64_t n = kd->size();
    for (int64_t i : *ki) {
      int64_t j = i < 0 ? i + n : i;
      if (j < 0 || j >= n)
        return ctx.error() << "index " << i << " is out of range for size "
                           << n;
      known->push_back((*kd)[j]);
    }
  }
  ctx.setOutput(0,
                GatherOp::create(ctx.b(), ctx.loc(), type, ctx.input(0),
                                 ctx.input(1),
                                 ctx.b().getI64IntegerAttr(*axis)),
                known);
  return success();
}

LogicalResult convertGatherElements(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType data = ctx.inputType(0), indices = ctx.inputType(1);
  FailureOr<int64_t> axis = ctx.axisAttr("axis", 0, data.getRank());
  if (failed(axis))
    return failure();
  auto type = RankedTensorType::get(indices.getShape(), data.getElementType());
  ctx.setOutput(0, GatherElementsOp::create(ctx.b(), ctx.loc(), type,
                                            ctx.input(0), ctx.input(1),
                                            ctx.b().getI64IntegerAttr(*axis)));
  return success();
}

LogicalResult convertGatherND(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType data = ctx.inputType(0), indices = ctx.inputType(1);
  FailureOr<int64_t> batch = ctx.intAttr("batch_dims", 0);
  if (failed(batch))
    return failure();
  const int64_t r = data.getRank(), q = indices.getRank();
  if (*batch < 0 || *batch >= std::min(r, q))
    return ctx.error() << "'batch_dims' " << *batch
                       << " must be below the ranks of data (" << r
                       << ") and indices (" << q << ")";
  const int64_t width = indices.getDimSize(q - 1);
  if (ShapedType::isDynamic(width) || width < 1 || width > r - *batch)
    return ctx.error() << "expected indices whose last dim is static and in "
                       << "[1, " << r - *batch << "], got "
                       << formatShape(indices.getShape());
  SmallVector<int64_t> dims(indices.getShape().drop_back());
  llvm::append_range(dims, data.getShape().drop_front(*batch + width));
  ctx.setOutput(
      0, GatherNDOp::create(ctx.b(), ctx.loc(),
                            RankedTensorType::get(dims, data.getElementType()),
                            ctx.input(0), ctx.input(1),
                            ctx.b().getI64IntegerAttr(*batch)));
  return success();
}

// ScatterElements' and ScatterND's `reduction` (opset 16; max/min 18).
static FailureOr<std::string> scatterReduction(ImportContext &ctx) {
  FailureOr<std::string> reduction = ctx.stringAttr("reduction", "none");
  if (failed(reduction))
    return failure();
  if (*reduction != "none" && *reduction != "add" && *reduction != "mul" &&
      *reduction != "max" && *reduction != "min")
    return ctx.error() << "unknown reduction '" << *reduction << "'";
  return reduction;
}

LogicalResult convertScatterElements(ImportContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  RankedTensorType data = ctx.inputType(0), indices = ctx.inputType(1),
                   updates = ctx.inputType(2);
  FailureOr<int64_t> axis = ctx.axisAttr("axis", 0, data.getRank());
  FailureOr<std::string> reduction = scatterReduction(ctx);
  if (failed(axis) || failed(reduction))
    return failure();
  if (indices.getRank() != data.getRank() ||
      failed(verifyCompatibleShape(indices.getShape(), updates.getShape())))
    return ctx.error() << "expected indices and updates of one shape of rank "
                       << data.getRank() << ", got "
                       << formatShape(indices.getShape()) << " and "
                       << formatShape(updates.getShape());
  ctx.setOutput(0, ScatterElementsOp::create(
                       ctx.b(), ctx.loc(), data, ctx.input(0), ctx.input(1),
                       ctx.input(2), ctx.b().getI64IntegerAttr(*axis),
                       ctx.b().getStringAttr(*reduction)));
  return success();
}

LogicalResult convertScatterND(ImportContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  RankedTensorType data = ctx.inputType(0), indices = ctx.inputType(1),
                   updates = ctx.inputType(2);
  FailureOr<std::string> reduction = scatterReduction(ctx);
  if (failed(reduction))
    return failure();
  const int64_t q = indices.getRank();
  const int64_t width = q ? indices.getDimSize(q - 1) : 0;
  if (q == 0 || ShapedType::isDynamic(width) || width < 1 ||
      width > data.getRank())
    return ctx.error() << "expected indices whose last dim is static and in "
                       << "[1, " << data.getRank() << "], got "
                       << formatShape(indices.getShape());
  SmallVector<int64_t> expected(indices.getShape().drop_back());
  llvm::append_range(expected, data.getShape().drop_front(width));
  if (failed(verifyCompatibleShape(expected, updates.getShape())))
    return ctx.error() << "expected updates of shape " << formatShape(expected)
                       << ", got " << formatShape(updates.getShape());
  ctx.setOutput(0, ScatterNDOp::create(ctx.b(), ctx.loc(), data, ctx.input(0),
                                       ctx.input(1), ctx.input(2),
                                       ctx.b().getStringAttr(*reduction)));
  return success();
}

LogicalResult convertTopK(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType input = ctx.inputType(0);
  if (input.getRank() == 0)
    return ctx.error() << "expected an input of rank >= 1";
  FailureOr<int64_t> axis = ctx.axisAttr("axis", -1, input.getRank());
  FailureOr<int64_t> largest = ctx.intAttr("largest", 1);
  if (failed(axis) || failed(largest))
    return failure();
  // K: an attribute before opset 10, then a 1-element input that must be
  // known at compile time (it sizes the results).
  int64_t k;
  if (ctx.opset() < 10) {
    FailureOr<int64_t> attr = ctx.intAttr("k", -1);
    if (failed(attr))
      return failure();
    k = *attr;
  } else {
    std::optional<SmallVector<int64_t>> known;
    if (ctx.hasInput(1))
      known = ctx.inputConstInts(1);
    if (!known || known->size() != 1)
      return ctx.error() << "'K' must be a constant of one element (it sizes "
                         << "the results)";
    k = (*known)[0];
  }
  const int64_t n = input.getDimSize(*axis);
  // A K past any extent a tensor may have would only size huge results.
  if (k < 0 || k > (int64_t{1} << 31) || (!ShapedType::isDynamic(n) && k > n))
    return ctx.error() << "K " << k << " must lie in [0, " << n
                       << "], the extent of axis " << *axis;
  SmallVector<int64_t> dims(input.getShape());
  dims[*axis] = k;
  auto op = TopKOp::create(
      ctx.b(), ctx.loc(), RankedTensorType::get(dims, input.getElementType()),
      RankedTensorType::get(dims, ctx.b().getI64Type()), ctx.input(0),
      ctx.b().getI64IntegerAttr(k), ctx.b().getI64IntegerAttr(*axis),
      ctx.b().getBoolAttr(*largest != 0));
  ctx.setOutput(0, op.getValues());
  ctx.setOutput(1, op.getIndices());
  return success();
}

// Along the time axis, batch row b reads its first lens[b] steps backwards
// and the rest in place: a GatherElements with indices
// where(t < lens[b], lens[b] - 1 - t, t) expanded to the input's shape.
LogicalResult convertReverseSequence(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType in = ctx.inputType(0), lens = ctx.inputType(1);
  const int64_t r = in.getRank();
  FailureOr<int64_t> timeAxis = ctx.intAttr("time_axis", 0);
  FailureOr<int64_t> batchAxis = ctx.intAttr("batch_axis", 1);
  if (failed(timeAxis) || failed(batchAxis))
    return failure();
  if (r < 2 || *timeAxis < 0 || *timeAxis > 1 || *batchAxis < 0 ||
      *batchAxis > 1 || *timeAxis == *batchAxis)
    return ctx.error() << "expected time_axis and batch_axis 0 and 1 (either "
                       << "way round) of an input of rank >= 2";
  const int64_t steps = in.getDimSize(*timeAxis);
  if (ShapedType::isDynamic(steps))
    return ctx.error() << "expected a static time dim, got "
                       << formatShape(in.getShape());
  if (lens.getRank() != 1)
    return ctx.error() << "expected 1-D sequence_lens, got "
                       << formatShape(lens.getShape());
  OpBuilder &b = ctx.b();
  Type i64 = b.getI64Type();
  auto along = [&](int64_t axis, int64_t extent) {
    SmallVector<int64_t> dims(r, 1);
    dims[axis] = extent;
    return RankedTensorType::get(dims, i64);
  };
  SmallVector<int64_t> iota(steps);
  for (int64_t t = 0; t < steps; ++t)
    iota[t] = t;
  Value time = ReshapeOp::create(b, ctx.loc(), along(*timeAxis, steps),
                                 ctx.constI64(iota), Value());
  SmallVector<int64_t> lensDims(r, 1);
  lensDims[*batchAxis] = lens.getDimSize(0);
  SmallVector<DimSource> lensSources(r, DimSource::fixed(1));
  lensSources[*batchAxis] = DimSource::fromInput(0);
  Value length = ctx.reshapeTo(ctx.asI64Vector(ctx.input(1)), lensDims,
                               lensSources);
  Formula f(ctx, i64);
  Value reversed = f.sub(f.sub(length, f.c(1)), time);
  Value indices =
      f.where(f.compare<LessOp>(time, length), reversed, time);
  if (!indices)
    return failure();
  SmallVector<DimSource> full;
  for (int64_t d = 0; d < r; ++d)
    full.push_back(DimSource::fromInput(d));
  indices = ExpandOp::create(b, ctx.loc(), RankedTensorType::get(in.getShape(), i64),
                             indices, ctx.buildShape(ctx.input(0), full));
  ctx.setOutput(0, GatherElementsOp::create(
                       b, ctx.loc(), in, ctx.input(0), indices,
                       b.getI64IntegerAttr(*timeAxis)));
  return success();
}

LogicalResult convertTrilu(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  FailureOr<int64_t> upper = ctx.intAttr("upper", 1);
  if (failed(upper))
    return failure();
  Value k;
  if (ctx.hasInput(1)) {
    k = ctx.input(1);
    if (ctx.inputType(1).getRank() != 0)
      k = ReshapeOp::create(ctx.b(), ctx.loc(),
                            RankedTensorType::get({}, ctx.b().getI64Type()),
                            ctx.asI64Vector(k), Value());
  }
  ctx.setOutput(0, TriluOp::create(ctx.b(), ctx.loc(), ctx.inputType(0),
                                   ctx.input(0), k,
                                   ctx.b().getBoolAttr(*upper != 0)));
  return success();
}

LogicalResult convertCumSum(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  std::optional<SmallVector<int64_t>> axis = ctx.inputConstInts(1);
  if (!axis || axis->size() != 1)
    return ctx.error() << "'axis' must be a constant scalar";
  FailureOr<int64_t> exclusive = ctx.intAttr("exclusive", 0);
  FailureOr<int64_t> reverse = ctx.intAttr("reverse", 0);
  if (failed(exclusive) || failed(reverse))
    return failure();
  ctx.setOutput(0, CumsumOp::create(ctx.b(), ctx.loc(), ctx.inputType(0),
                                    ctx.input(0), (*axis)[0], *exclusive != 0,
                                    *reverse != 0));
  return success();
}

} // namespace strata::import
