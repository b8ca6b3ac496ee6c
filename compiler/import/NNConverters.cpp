//===- NNConverters.cpp - ONNX matmul, softmax, reduce, norm, attention ---===//
// SPDX-License-Identifier: Apache-2.0
// Contractions, reductions and the ops that map onto strata's fused ops
// (LayerNormalization-17, RMSNormalization-23, Gelu-20).

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "compiler/import/QuantizedConstants.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

static constexpr int64_t kDyn = ShapedType::kDynamic;


static Value transposeLast2(ImportContext &ctx, Value v) {
  RankedTensorType t = typeOf(v);
  SmallVector<int64_t> perm, dims;
  for (int64_t d = 0; d < t.getRank(); ++d)
    perm.push_back(d);
  std::swap(perm[t.getRank() - 1], perm[t.getRank() - 2]);
  for (int64_t p : perm)
    dims.push_back(t.getDimSize(p));
  return TransposeOp::create(ctx.b(), ctx.loc(),
                             RankedTensorType::get(dims, t.getElementType()), v,
                             perm);
}

static Value scaleBy(ImportContext &ctx, Value v, double factor) {
  Value c = ctx.constScalar(typeOf(v).getElementType(), factor);
  return MulOp::create(ctx.b(), ctx.loc(), v.getType(), v, c);
}

LogicalResult convertMatMul(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType a = ctx.inputType(0), b = ctx.inputType(1);
  // A DequantizeLinear'd int8 weight keeps its integers.
  if (std::optional<QuantizedWeight> w =
          matchDequantizedWeight(ctx.input(1), /*transposed=*/false);
      w && a.getElementType().isF32() && a.getRank() >= 1 &&
      isCompatibleShape({a.getShape().back()}, {w->k})) {
    ctx.setOutput(0, buildQuantizedLinear(ctx, ctx.input(0), *w, Value(),
                                          ctx.node().input(1)));
    return success();
  }
  std::optional<SmallVector<int64_t>> dims =
      inferMatmulShape(a.getShape(), b.getShape());
  if (!dims)
    return ctx.error() << "input shapes " << formatShape(a.getShape())
                       << " and " << formatShape(b.getShape())
                       << " are not compatible for MatMul";
  auto type = RankedTensorType::get(*dims, a.getElementType());
  ctx.setOutput(0, MatmulOp::create(ctx.b(), ctx.loc(), type, ctx.input(0),
                                    ctx.input(1)));
  return success();
}

// Y = alpha * A' B' + beta * C with A' = transA ? A^T : A (2-D operands).
LogicalResult convertGemm(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  FailureOr<int64_t> transA = ctx.intAttr("transA", 0),
                     transB = ctx.intAttr("transB", 0);
  FailureOr<float> alpha = ctx.floatAttr("alpha", 1.0f),
                   beta = ctx.floatAttr("beta", 1.0f);
  if (failed(transA) || failed(transB) || failed(alpha) || failed(beta))
    return failure();
  Value a = ctx.input(0), b = ctx.input(1);
  std::optional<QuantizedWeight> qw = matchDequantizedWeight(b, *transB != 0);
  if (typeOf(a).getRank() != 2 || typeOf(b).getRank() != 2)
    return ctx.error() << "expected 2-D 'A' and 'B'";
  if (*transA)
    a = transposeLast2(ctx, a);
  if (*transB)
    b = transposeLast2(ctx, b);
  if (*alpha != 1.0f)
    a = scaleBy(ctx, a, *alpha);
  RankedTensorType ta = typeOf(a), tb = typeOf(b);
  if (!isCompatibleShape({ta.getDimSize(1)}, {tb.getDimSize(0)}))
    return ctx.error() << "inner dims of " << formatShape(ta.getShape())
                       << " and " << formatShape(tb.getShape()) << " differ";
  auto type = RankedTensorType::get({ta.getDimSize(0), tb.getDimSize(1)},
                                    ta.getElementType());
  Value c = ctx.hasInput(2) ? ctx.input(2) : Value();
  if (c && *beta != 1.0f)
    c = scaleBy(ctx, c, *beta);
  // A bias of shape [N] or [1, N] becomes linear's bias; other broadcasts
  // of C are added after the product.
  Value bias;
  if (c) {
    ArrayRef<int64_t> cs = typeOf(c).getShape();
    int64_t n = tb.getDimSize(1);
    if (cs.size() == 1 && isCompatibleShape({n}, cs))
      bias = c;
    else if (cs.size() == 2 && cs[0] == 1 && isCompatibleShape({n}, {cs[1]}))
      bias = ReshapeOp::create(
          ctx.b(), ctx.loc(),
          RankedTensorType::get({cs[1]}, typeOf(c).getElementType()), c,
          ShapedType::isDynamic(cs[1]) ? ctx.constI64({-1}) : Value());
  }
  bool quantized = qw && ta.getElementType().isF32() &&
                   isCompatibleShape({ta.getDimSize(1)}, {qw->k}) &&
                   (!bias || typeOf(bias).getElementType().isF32());
  Value y =
      quantized
          ? buildQuantizedLinear(ctx, a, *qw, bias, ctx.node().input(1))
          : LinearOp::create(ctx.b(), ctx.loc(), type, a, b, bias).getResult();
  if (c && !bias) {
    std::optional<SmallVector<int64_t>> dims =
        broadcastShapes(type.getShape(), typeOf(c).getShape());
    if (!dims)
      return ctx.error() << "'C' of shape " << formatShape(typeOf(c).getShape())
                         << " does not broadcast to "
                         << formatShape(type.getShape());
    y = AddOp::create(ctx.b(), ctx.loc(),
                      RankedTensorType::get(*dims, type.getElementType()), y,
                      c);
  }
  ctx.setOutput(0, y);
  return success();
}

LogicalResult convertSoftmax(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  bool log = ctx.node().op_type() == "LogSoftmax";
  RankedTensorType in = ctx.inputType(0);
  int64_t rank = in.getRank();
  FailureOr<int64_t> axisAttr = ctx.intAttr("axis", ctx.opset() < 13 ? 1 : -1);
  if (failed(axisAttr))
    return failure();
  std::optional<int64_t> axis = normalizeAxis(*axisAttr, rank);
  if (!axis)
    return ctx.error() << "'axis' " << *axisAttr
                       << " is out of range for rank " << rank;
  auto build = [&](Value x) -> Value {
    if (log)
      return LogSoftmaxOp::create(ctx.b(), ctx.loc(), x.getType(), x, -1);
    return SoftmaxOp::create(ctx.b(), ctx.loc(), x.getType(), x, -1);
  };
  if (ctx.opset() >= 13 || *axis == rank - 1) {
    Value x = ctx.input(0);
    Value y = log ? Value(LogSoftmaxOp::create(ctx.b(), ctx.loc(), in, x,
                                               *axis))
                  : Value(SoftmaxOp::create(ctx.b(), ctx.loc(), in, x, *axis));
    ctx.setOutput(0, y);
    return success();
  }
  // Before opset 13 the input is coerced to 2-D [prod(d[:axis]),
  // prod(d[axis:])] and normalized over the second dim.
  std::optional<int64_t> outer =
      staticElementCount(in.getShape().take_front(*axis));
  std::optional<int64_t> inner =
      staticElementCount(in.getShape().drop_front(*axis));
  if (!outer || !inner)
    return ctx.error() << "opset < 13 softmax over several dims needs a "
                          "static shape";
  Value flat = ctx.reshapeTo(ctx.input(0), {*outer, *inner}, {});
  Value y = build(flat);
  ctx.setOutput(0, ctx.reshapeTo(y, in.getShape(), {}));
  return success();
}

// ReduceMean, ReduceSum, ReduceProd, ReduceMax and ReduceMin map onto strata's
// reductions (ReduceMin as the negated maximum of the negated input); the
// rest are those with elementwise ops around them, as the spec defines
// them: ReduceL1 = sum |x|, ReduceL2 = sqrt(sum x^2), ReduceSumSquare =
// sum x^2, ReduceLogSum = log(sum x), ReduceLogSumExp = log(sum exp(x -
// max)) + max.
LogicalResult convertReduce(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  StringRef op = ctx.node().op_type();
  RankedTensorType in = ctx.inputType(0);
  int64_t rank = in.getRank();
  // Axes moved from attribute to input in opset 13 (ReduceSum) / 18 (others).
  int64_t inputOpset = op == "ReduceSum" ? 13 : 18;
  FailureOr<int64_t> keepDims = ctx.intAttr("keepdims", 1);
  FailureOr<int64_t> noop = ctx.intAttr("noop_with_empty_axes", 0);
  if (failed(keepDims) || failed(noop))
    return failure();
  auto axesOrNone = ctx.intsAttrOrInput("axes", inputOpset);
  if (failed(axesOrNone))
    return failure();
  const bool isFloat = isa<FloatType>(in.getElementType());
  const bool isBool = in.getElementType().isInteger(1);
  const bool floatOnly = op == "ReduceL2" || op == "ReduceLogSum" ||
                         op == "ReduceLogSumExp";
  if (floatOnly && !isFloat)
    return ctx.error() << "expected a float input, got "
                       << in.getElementType();
  if (isBool && op != "ReduceMax" && op != "ReduceMin")
    return ctx.error() << "bool inputs are supported by ReduceMax and "
                          "ReduceMin only";
  OpBuilder &b = ctx.b();
  Location loc = ctx.loc();
  auto unary = [&](auto opTag, Value v) -> Value {
    using OpT = decltype(opTag);
    return OpT::create(b, loc, v.getType(), v);
  };
  auto constLike = [&](Value v, double c) {
    return ctx.constScalar(typeOf(v).getElementType(), c);
  };
  auto binary = [&](auto opTag, Value x, Value y) -> Value {
    using OpT = decltype(opTag);
    return broadcastOp<OpT>(ctx, x, y);
  };
  Value x = ctx.input(0);
  SmallVector<int64_t> axes = axesOrNone->value_or(SmallVector<int64_t>());
  if (axes.empty()) {
    if (*noop) {
      // Nothing reduced; ReduceSumSquare still squares.
      ctx.setOutput(0, op == "ReduceSumSquare" ? binary(MulOp(), x, x) : x);
      return success();
    }
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  FailureOr<SmallVector<int64_t>> valid = ctx.normalizedAxes(axes, rank);
  if (failed(valid))
    return failure();
  SmallVector<int64_t> normalized = *valid;
  llvm::sort(normalized);
  DenseI64ArrayAttr axesAttr = b.getDenseI64ArrayAttr(normalized);
  // One strata reduction of |v| over the axes.
  auto reduce = [&](auto opTag, Value v, bool keep) -> Value {
    using OpT = decltype(opTag);
    RankedTensorType t = typeOf(v);
    auto type = RankedTensorType::get(
        inferReduceShape(t.getShape(), normalized, keep), t.getElementType());
    return OpT::create(b, loc, type, v, axesAttr, b.getBoolAttr(keep));
  };
  const bool keep = *keepDims != 0;
  // The largest element, or (negated around it) the smallest: floats by
  // negation, integers by -1 - x (no overflow, order reversed), bools as
  // i8 0/1 ("any" and "all").
  auto extreme = [&](Value v, bool smallest) -> Value {
    RankedTensorType t = typeOf(v);
    if (isBool)
      v = CastOp::create(b, loc,
                         RankedTensorType::get(t.getShape(), b.getI8Type()),
                         v);
    auto flip = [&](Value w) -> Value {
      if (isFloat)
        return unary(NegOp(), w);
      return binary(SubOp(), constLike(w, -1), w);
    };
    Value r = smallest ? flip(reduce(ReduceMaxOp(), flip(v), keep))
                       : reduce(ReduceMaxOp(), v, keep);
    if (isBool)
      r = CastOp::create(
          b, loc,
          RankedTensorType::get(typeOf(r).getShape(), b.getI1Type()), r);
    return r;
  };
  Value y;
  if (op == "ReduceMean")
    y = reduce(ReduceMeanOp(), x, keep);
  else if (op == "ReduceSum")
    y = reduce(ReduceSumOp(), x, keep);
  else if (op == "ReduceMax" || op == "ReduceMin")
    y = extreme(x, op == "ReduceMin");
  else if (op == "ReduceProd")
    y = reduce(ReduceProdOp(), x, keep);
  else if (op == "ReduceL1")
    y = reduce(ReduceSumOp(), unary(AbsOp(), x), keep);
  else if (op == "ReduceSumSquare")
    y = reduce(ReduceSumOp(), binary(MulOp(), x, x), keep);
  else if (op == "ReduceL2")
    y = unary(SqrtOp(), reduce(ReduceSumOp(), binary(MulOp(), x, x), keep));
  else if (op == "ReduceLogSum")
    y = unary(LogOp(), reduce(ReduceSumOp(), x, keep));
  else if (op == "ReduceLogSumExp") {
    Value m = reduce(ReduceMaxOp(), x, /*keep=*/true);
    Value sum = reduce(ReduceSumOp(), unary(ExpOp(), binary(SubOp(), x, m)),
                       keep);
    y = binary(AddOp(), unary(LogOp(), sum),
               keep ? m : reduce(ReduceMaxOp(), x, /*keep=*/false));
  } else {
    return ctx.error() << "no reduction for this op";
  }
  ctx.setOutput(0, y);
  return success();
}

// GlobalAveragePool and GlobalMaxPool: the mean or maximum over the
// spatial dims of [N, C, spatial...], kept as 1s.
LogicalResult convertGlobalPool(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  if (in.getRank() < 3 || !isa<FloatType>(in.getElementType()))
    return ctx.error() << "expected a float input [N, C, spatial...], got "
                       << in;
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < in.getRank(); ++d)
    axes.push_back(d);
  auto type = RankedTensorType::get(
      inferReduceShape(in.getShape(), axes, /*keepDims=*/true),
      in.getElementType());
  OpBuilder &b = ctx.b();
  DenseI64ArrayAttr axesAttr = b.getDenseI64ArrayAttr(axes);
  BoolAttr keep = b.getBoolAttr(true);
  Value y = ctx.node().op_type() == "GlobalMaxPool"
                ? Value(ReduceMaxOp::create(b, ctx.loc(), type, ctx.input(0),
                                            axesAttr, keep))
                : Value(ReduceMeanOp::create(b, ctx.loc(), type, ctx.input(0),
                                             axesAttr, keep));
  ctx.setOutput(0, y);
  return success();
}

// The normalized shape of a norm over [axis, rank); scale/bias are reshaped
// to it when they carry extra leading 1s.
static Value fitToNormalizedShape(ImportContext &ctx, Value v,
                                  ArrayRef<int64_t> normShape) {
  RankedTensorType t = typeOf(v);
  if (isCompatibleShape(normShape, t.getShape()))
    return v;
  std::optional<int64_t> have = staticElementCount(t.getShape());
  std::optional<int64_t> want = staticElementCount(normShape);
  if (have && want && *have == *want)
    return ctx.reshapeTo(v, normShape, {});
  // A broadcast scale (e.g. [1] or trailing dims) is expanded explicitly.
  if (staticElementCount(normShape) && isBroadcastableTo(t.getShape(), normShape))
    return ExpandOp::create(
        ctx.b(), ctx.loc(), RankedTensorType::get(normShape, t.getElementType()),
        v, ctx.constI64(normShape));
  return v; // the verifier reports the mismatch at this node
}

// LayerNormalization's optional outputs Mean and InvStdDev (kept dims, in
// the fp32 stash type), computed with plain reductions; the normalized
// output still uses the fused op.
static LogicalResult layerNormStatistics(ImportContext &ctx, int64_t axis,
                                         float epsilon) {
  FailureOr<int64_t> stash = ctx.intAttr("stash_type", 1);
  if (failed(stash))
    return failure();
  if (*stash != 1)
    return ctx.error() << "only stash_type 1 (float) is supported";
  OpBuilder &b = ctx.b();
  Location loc = ctx.loc();
  Value x = ctx.input(0);
  RankedTensorType in = typeOf(x);
  auto f32 = b.getF32Type();
  if (in.getElementType() != f32)
    x = CastOp::create(b, loc, RankedTensorType::get(in.getShape(), f32), x);
  auto full = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> axes;
  for (int64_t d = axis; d < in.getRank(); ++d)
    axes.push_back(d);
  auto statType = RankedTensorType::get(
      inferReduceShape(in.getShape(), axes, /*keepDims=*/true), f32);
  DenseI64ArrayAttr axesAttr = b.getDenseI64ArrayAttr(axes);
  BoolAttr keep = b.getBoolAttr(true);
  Value mean = ReduceMeanOp::create(b, loc, statType, x, axesAttr, keep);
  Value diff = SubOp::create(b, loc, full, x, mean);
  Value square = MulOp::create(b, loc, full, diff, diff);
  Value var = ReduceMeanOp::create(b, loc, statType, square, axesAttr, keep);
  Value shifted = AddOp::create(b, loc, statType, var,
                                ctx.constScalar(f32, epsilon));
  ctx.setOutput(1, mean);
  ctx.setOutput(2, RsqrtOp::create(b, loc, statType, shifted));
  return success();
}

// The `axis` (normalized) and `epsilon` attributes of a norm node.
struct NormAttrs {
  int64_t axis;
  float epsilon;
};
static FailureOr<NormAttrs> normAttrs(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  int64_t rank = ctx.inputType(0).getRank();
  FailureOr<int64_t> axisAttr = ctx.intAttr("axis", -1);
  FailureOr<float> epsilon = ctx.floatAttr("epsilon", 1e-5f);
  if (failed(axisAttr) || failed(epsilon))
    return failure();
  std::optional<int64_t> axis = normalizeAxis(*axisAttr, rank);
  if (!axis)
    return ctx.error() << "'axis' " << *axisAttr
                       << " is out of range for rank " << rank;
  return NormAttrs{*axis, *epsilon};
}

LogicalResult convertLayerNormalization(ImportContext &ctx) {
  FailureOr<NormAttrs> attrs = normAttrs(ctx);
  if (failed(attrs))
    return failure();
  if ((ctx.outputUsed(1) || ctx.outputUsed(2)) &&
      failed(layerNormStatistics(ctx, attrs->axis, attrs->epsilon)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  ArrayRef<int64_t> normShape = in.getShape().drop_front(attrs->axis);
  Value scale = fitToNormalizedShape(ctx, ctx.input(1), normShape);
  Value bias = ctx.hasInput(2)
                   ? fitToNormalizedShape(ctx, ctx.input(2), normShape)
                   : Value();
  ctx.setOutput(0, LayerNormOp::create(
                       ctx.b(), ctx.loc(), in, ctx.input(0), scale, bias,
                       ctx.b().getI64IntegerAttr(attrs->axis),
                       ctx.b().getF32FloatAttr(attrs->epsilon)));
  return success();
}

LogicalResult convertRMSNormalization(ImportContext &ctx) {
  FailureOr<NormAttrs> attrs = normAttrs(ctx);
  if (failed(attrs))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  Value scale = fitToNormalizedShape(ctx, ctx.input(1),
                                     in.getShape().drop_front(attrs->axis));
  ctx.setOutput(0, RmsNormOp::create(ctx.b(), ctx.loc(), in, ctx.input(0),
                                     scale,
                                     ctx.b().getI64IntegerAttr(attrs->axis),
                                     ctx.b().getF32FloatAttr(attrs->epsilon)));
  return success();
}

LogicalResult convertGelu(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  FailureOr<std::string> approximate = ctx.stringAttr("approximate", "none");
  if (failed(approximate))
    return failure();
  if (*approximate != "none" && *approximate != "tanh")
    return ctx.error() << "'approximate' must be \"none\" or \"tanh\", got \""
                       << *approximate << "\"";
  ctx.setOutput(0, GeluOp::create(ctx.b(), ctx.loc(), ctx.inputType(0),
                                  ctx.input(0),
                                  ctx.b().getStringAttr(*approximate)));
  return success();
}

} // namespace strata::import
