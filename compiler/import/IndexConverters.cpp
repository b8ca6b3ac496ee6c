//===- IndexConverters.cpp - ONNX ops defined by element positions -------===//
// SPDX-License-Identifier: Apache-2.0
// Gather (rows selected by index), Trilu (a triangle of the last two dims)
// and CumSum (a running sum along an axis).

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
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
    return ctx.error() << "'axis' " << *axisAttr
                       << " is out of range for rank " << data.getRank();
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
                                    ctx.input(0), (*axis)[0],
                                    *exclusive != 0, *reverse != 0));
  return success();
}

} // namespace strata::import
