//===- ArgConverters.cpp - ONNX ArgMax/ArgMin, Hardmax, OneHot, EyeLike ---===//
// SPDX-License-Identifier: Apache-2.0
// Ops about positions along an axis, built from reductions and comparisons
// against the positions themselves (a constant 0, 1, ..., n - 1 laid along
// the axis): ArgMax/ArgMin (the first or last position holding the
// extreme), Hardmax (1 at ArgMax's position), OneHot and EyeLike. The axis
// needs a static extent (the positions are a constant).

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "compiler/import/TensorConversion.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

#include <onnx/onnx_pb.h>

#include <limits>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

namespace {

/// i64 positions 0..n-1 along |axis| of a rank-|rank| tensor (the other
/// dims 1).
Value positions(ImportContext &ctx, int64_t n, int64_t axis, int64_t rank) {
  SmallVector<int64_t> shape(rank, 1), values;
  shape[axis] = n;
  for (int64_t i = 0; i < n; ++i)
    values.push_back(i);
  auto type = RankedTensorType::get(shape, ctx.b().getI64Type());
  return ConstantOp::create(ctx.b(), ctx.loc(),
                            DenseElementsAttr::get(type, ArrayRef(values)));
}

/// A reduction of |x| along |axis|.
template <typename OpT>
Value reduceAlong(ImportContext &ctx, Value x, int64_t axis, bool keep) {
  RankedTensorType t = typeOf(x);
  SmallVector<int64_t> axes{axis};
  auto type = RankedTensorType::get(
      inferReduceShape(t.getShape(), axes, keep), t.getElementType());
  OpBuilder &b = ctx.b();
  return OpT::create(b, ctx.loc(), type, x, b.getDenseI64ArrayAttr(axes),
                     b.getBoolAttr(keep));
}

/// The order-reversing map of |x|'s values without overflow: -x for
/// floats, -1 - x for integers (two's complement ~x).
Value reversed(ImportContext &ctx, Value x) {
  Type e = typeOf(x).getElementType();
  if (isa<FloatType>(e))
    return NegOp::create(ctx.b(), ctx.loc(), x.getType(), x);
  return broadcastOp<SubOp>(ctx, ctx.constScalar(e, -1), x);
}

/// The first (or, with |last|, the last) position along |axis| where |x|
/// holds its largest value (with |smallest|, its smallest).
FailureOr<Value> argExtreme(ImportContext &ctx, Value x, int64_t axis,
                            bool smallest, bool last, bool keep) {
  RankedTensorType t = typeOf(x);
  if (t.isDynamicDim(axis)) {
    ctx.error() << "the axis needs a static extent, got "
                << formatShape(t.getShape());
    return failure();
  }
  if (t.getElementType().isInteger(1)) {
    ctx.error() << "bool inputs are not supported";
    return failure();
  }
  const int64_t n = t.getDimSize(axis);
  Value key = smallest ? reversed(ctx, x) : x;
  Value top = reduceAlong<ReduceMaxOp>(ctx, key, axis, /*keep=*/true);
  Value hit = broadcastCompare<EqualOp>(ctx, key, top);
  Value at = positions(ctx, n, axis, t.getRank());
  Type i64 = ctx.b().getI64Type();
  auto where = [&](Value cond, Value a, Value b) -> Value {
    return WhereOp::create(
        ctx.b(), ctx.loc(),
        RankedTensorType::get(typeOf(cond).getShape(), i64), cond, a, b);
  };
  if (last)
    return reduceAlong<ReduceMaxOp>(
        ctx, where(hit, at, ctx.constScalar(i64, -1)), axis, keep);
  // The first: the largest reversed position among the hits.
  Value firstKey = reversed(ctx, where(hit, at, ctx.constScalar(i64, n)));
  return reversed(ctx, reduceAlong<ReduceMaxOp>(ctx, firstKey, axis, keep));
}

} // namespace

LogicalResult convertArgExtreme(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  FailureOr<int64_t> axis = ctx.axisAttr("axis", 0, in.getRank());
  FailureOr<int64_t> keep = ctx.intAttr("keepdims", 1);
  FailureOr<int64_t> last = ctx.intAttr("select_last_index", 0);
  if (failed(axis) || failed(keep) || failed(last))
    return failure();
  FailureOr<Value> y =
      argExtreme(ctx, ctx.input(0), *axis, ctx.node().op_type() == "ArgMin",
                 *last != 0, *keep != 0);
  if (failed(y))
    return failure();
  ctx.setOutput(0, *y);
  return success();
}

LogicalResult convertHardmax(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  if (!isa<FloatType>(in.getElementType()))
    return ctx.error() << "expected a float input, got " << in.getElementType();
  FailureOr<int64_t> axis = ctx.axisAttr("axis", -1, in.getRank());
  if (failed(axis))
    return failure();
  FailureOr<Value> index = argExtreme(ctx, ctx.input(0), *axis,
                                      /*smallest=*/false, /*last=*/false,
                                      /*keep=*/true);
  if (failed(index))
    return failure();
  Value at = positions(ctx, in.getDimSize(*axis), *axis, in.getRank());
  Value one = broadcastCompare<EqualOp>(ctx, at, *index);
  ctx.setOutput(0, CastOp::create(ctx.b(), ctx.loc(),
                                  RankedTensorType::get(
                                      typeOf(one).getShape(),
                                      in.getElementType()),
                                  one));
  return success();
}

// OneHot(indices, depth, values = [off, on]): a new axis of |depth|
// positions, `on` where the position is the index (negative indices count
// from the end), `off` elsewhere.
LogicalResult convertOneHot(ImportContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  std::optional<double> depthValue = ctx.inputConstFloat(1);
  if (!depthValue)
    return ctx.error() << "'depth' must be a constant";
  if (!(*depthValue >= 1 && *depthValue <= double(int64_t{1} << 24)))
    return ctx.error() << "'depth' " << *depthValue << " is out of range";
  const int64_t depth = static_cast<int64_t>(*depthValue);
  RankedTensorType it = ctx.inputType(0), vt = ctx.inputType(2);
  if (!vt.hasStaticShape() || vt.getNumElements() != 2)
    return ctx.error() << "'values' must hold 2 elements, got "
                       << formatShape(vt.getShape());
  const int64_t rank = it.getRank() + 1;
  FailureOr<int64_t> axis = ctx.axisAttr("axis", -1, rank);
  if (failed(axis))
    return failure();
  OpBuilder &b = ctx.b();
  Location loc = ctx.loc();
  Type i64 = b.getI64Type();
  // Indices as i64 (floats truncate, as the reference's astype), the
  // negative ones wrapped, then a unit dim at the new axis.
  Value index = ctx.input(0);
  if (it.getElementType() != i64)
    index = CastOp::create(b, loc, RankedTensorType::get(it.getShape(), i64),
                           index);
  Value negative = broadcastCompare<LessOp>(ctx, index, ctx.constScalar(i64, 0));
  index = WhereOp::create(b, loc, typeOf(index), negative,
                          broadcastOp<AddOp>(ctx, index,
                                             ctx.constScalar(i64, depth)),
                          index);
  SmallVector<int64_t> dims;
  SmallVector<DimSource> sources;
  for (int64_t d = 0, src = 0; d < rank; ++d) {
    if (d == *axis) {
      dims.push_back(1);
      sources.push_back(DimSource::fixed(1));
      continue;
    }
    dims.push_back(it.getDimSize(src));
    sources.push_back(DimSource::fromInput(src++));
  }
  index = ctx.reshapeTo(index, dims, sources);
  Value hit =
      broadcastCompare<EqualOp>(ctx, index, positions(ctx, depth, *axis, rank));
  // values[0] (off) and values[1] (on) as 0-D tensors.
  Value values = ctx.reshapeTo(ctx.input(2), {2}, {});
  auto pick = [&](int64_t i) {
    Value v = SliceOp::create(
        b, loc, RankedTensorType::get({1}, vt.getElementType()), values,
        ctx.constI64({i}), ctx.constI64({i + 1}), ctx.constI64({1}),
        b.getDenseI64ArrayAttr({0}));
    return ctx.reshapeTo(v, {}, {});
  };
  Value off = pick(0), on = pick(1);
  SmallVector<int64_t> outDims(typeOf(hit).getShape());
  ctx.setOutput(0, WhereOp::create(b, loc,
                                   RankedTensorType::get(outDims,
                                                         vt.getElementType()),
                                   hit, on, off));
  return success();
}

// EyeLike: a constant of the input's static 2-D shape, ones on diagonal k.
LogicalResult convertEyeLike(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  if (in.getRank() != 2 || !in.hasStaticShape())
    return ctx.error() << "expected a static 2-D input, got "
                       << formatShape(in.getShape());
  FailureOr<int64_t> k = ctx.intAttr("k", 0);
  if (failed(k))
    return failure();
  Type element = in.getElementType();
  if (const onnx::AttributeProto *dtype = ctx.attr("dtype")) {
    element = convertElementType(static_cast<int32_t>(dtype->i()),
                                 ctx.context());
    if (!element)
      return ctx.error() << "unsupported 'dtype' " << dtype->i();
  }
  const int64_t rows = in.getDimSize(0), cols = in.getDimSize(1);
  if (rows > (int64_t{1} << 24) || cols > (int64_t{1} << 24) ||
      rows * cols > (int64_t{1} << 24))
    return ctx.error() << "the identity of " << rows << "x" << cols
                       << " elements is too large a constant";
  // Positions (i, j) with j - i == k: row positions against columns.
  Value r = positions(ctx, rows, 0, 2), c = positions(ctx, cols, 1, 2);
  Value diagonal = broadcastCompare<EqualOp>(
      ctx, broadcastOp<SubOp>(ctx, c, r), ctx.constScalar(ctx.b().getI64Type(), *k));
  ctx.setOutput(0, CastOp::create(ctx.b(), ctx.loc(),
                                  RankedTensorType::get({rows, cols}, element),
                                  diagonal));
  return success();
}

} // namespace strata::import
