//===- NNConverters.cpp - ONNX matmul, softmax, reduce, norm, attention ---===//
// SPDX-License-Identifier: Apache-2.0
// Contractions, reductions and the ops that map onto strata's fused ops
// (LayerNormalization-17, RMSNormalization-23, Gelu-20, Attention-23).

#include "compiler/import/OnnxOpConverters.h"

#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

static constexpr int64_t kDyn = ShapedType::kDynamic;

static RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

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
  Value y = LinearOp::create(ctx.b(), ctx.loc(), type, a, b, bias);
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
  SmallVector<int64_t> axes;
  if (ctx.opset() < inputOpset) {
    auto a = ctx.intsAttr("axes");
    if (failed(a))
      return failure();
    if (*a)
      axes = **a;
  } else if (ctx.hasInput(1)) {
    std::optional<SmallVector<int64_t>> a = ctx.inputConstInts(1);
    if (!a)
      return ctx.error() << "'axes' must be a constant";
    axes = *a;
  }
  if (axes.empty()) {
    if (*noop) {
      ctx.setOutput(0, ctx.input(0));
      return success();
    }
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  SmallVector<int64_t> normalized;
  for (int64_t a : axes) {
    std::optional<int64_t> n = normalizeAxis(a, rank);
    if (!n || llvm::is_contained(normalized, *n))
      return ctx.error() << "invalid or repeated axis " << a << " for rank "
                         << rank;
    normalized.push_back(*n);
  }
  llvm::sort(normalized);
  auto type = RankedTensorType::get(
      inferReduceShape(in.getShape(), normalized, *keepDims != 0),
      in.getElementType());
  OpBuilder &b = ctx.b();
  DenseI64ArrayAttr axesAttr = b.getDenseI64ArrayAttr(normalized);
  BoolAttr keep = b.getBoolAttr(*keepDims != 0);
  Value y;
  if (op == "ReduceMean")
    y = ReduceMeanOp::create(b, ctx.loc(), type, ctx.input(0), axesAttr, keep);
  else if (op == "ReduceSum")
    y = ReduceSumOp::create(b, ctx.loc(), type, ctx.input(0), axesAttr, keep);
  else
    y = ReduceMaxOp::create(b, ctx.loc(), type, ctx.input(0), axesAttr, keep);
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

LogicalResult convertLayerNormalization(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  FailureOr<int64_t> axisAttr = ctx.intAttr("axis", -1);
  FailureOr<float> epsilon = ctx.floatAttr("epsilon", 1e-5f);
  if (failed(axisAttr) || failed(epsilon))
    return failure();
  if (ctx.outputUsed(1) || ctx.outputUsed(2))
    return ctx.error() << "the 'Mean' and 'InvStdDev' outputs are not "
                          "supported";
  std::optional<int64_t> axis = normalizeAxis(*axisAttr, in.getRank());
  if (!axis)
    return ctx.error() << "'axis' " << *axisAttr
                       << " is out of range for rank " << in.getRank();
  ArrayRef<int64_t> normShape = in.getShape().drop_front(*axis);
  Value scale = fitToNormalizedShape(ctx, ctx.input(1), normShape);
  Value bias = ctx.hasInput(2)
                   ? fitToNormalizedShape(ctx, ctx.input(2), normShape)
                   : Value();
  ctx.setOutput(0, LayerNormOp::create(ctx.b(), ctx.loc(), in, ctx.input(0),
                                       scale, bias, ctx.b().getI64IntegerAttr(*axis),
                                       ctx.b().getF32FloatAttr(*epsilon)));
  return success();
}

LogicalResult convertRMSNormalization(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType in = ctx.inputType(0);
  FailureOr<int64_t> axisAttr = ctx.intAttr("axis", -1);
  FailureOr<float> epsilon = ctx.floatAttr("epsilon", 1e-5f);
  if (failed(axisAttr) || failed(epsilon))
    return failure();
  std::optional<int64_t> axis = normalizeAxis(*axisAttr, in.getRank());
  if (!axis)
    return ctx.error() << "'axis' " << *axisAttr
                       << " is out of range for rank " << in.getRank();
  Value scale =
      fitToNormalizedShape(ctx, ctx.input(1), in.getShape().drop_front(*axis));
  ctx.setOutput(0, RmsNormOp::create(ctx.b(), ctx.loc(), in, ctx.input(0),
                                     scale, ctx.b().getI64IntegerAttr(*axis),
                                     ctx.b().getF32FloatAttr(*epsilon)));
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

//===----------------------------------------------------------------------===//
// Attention (opset 23)
//===----------------------------------------------------------------------===//

// [B, S, H*D] -> [B, H, S, D]
Value splitHeads(ImportContext &ctx, Value x, int64_t heads) {
  RankedTensorType t = typeOf(x);
  int64_t hidden = t.getDimSize(2);
  int64_t headDim = ShapedType::isDynamic(hidden) ? kDyn : hidden / heads;
  SmallVector<int64_t> dims = {t.getDimSize(0), t.getDimSize(1), heads,
                               headDim};
  SmallVector<DimSource> src = {
      t.isDynamicDim(0) ? DimSource::fromInput(0)
                        : DimSource::fixed(t.getDimSize(0)),
      t.isDynamicDim(1) ? DimSource::fromInput(1)
                        : DimSource::fixed(t.getDimSize(1)),
      DimSource::fixed(heads), DimSource::fixed(-1)};
  Value r = ctx.reshapeTo(x, dims, src);
  return TransposeOp::create(
      ctx.b(), ctx.loc(),
      RankedTensorType::get({dims[0], heads, dims[1], headDim},
                            t.getElementType()),
      r, ArrayRef<int64_t>{0, 2, 1, 3});
}

// [B, H, S, D] -> [B, S, H*D]
Value mergeHeads(ImportContext &ctx, Value x) {
  RankedTensorType t = typeOf(x);
  Value tr = TransposeOp::create(
      ctx.b(), ctx.loc(),
      RankedTensorType::get({t.getDimSize(0), t.getDimSize(2),
                             t.getDimSize(1), t.getDimSize(3)},
                            t.getElementType()),
      x, ArrayRef<int64_t>{0, 2, 1, 3});
  int64_t hidden = t.isDynamicDim(1) || t.isDynamicDim(3)
                       ? kDyn
                       : t.getDimSize(1) * t.getDimSize(3);
  SmallVector<int64_t> dims = {t.getDimSize(0), t.getDimSize(2), hidden};
  SmallVector<DimSource> src = {
      t.isDynamicDim(0) ? DimSource::fromInput(0)
                        : DimSource::fixed(t.getDimSize(0)),
      t.isDynamicDim(2) ? DimSource::fromInput(1)
                        : DimSource::fixed(t.getDimSize(2)),
      DimSource::fixed(ShapedType::isDynamic(hidden) ? -1 : hidden)};
  return ctx.reshapeTo(tr, dims, src);
}

// Concatenates a past K/V [B, H, P, D] with the new one along the sequence.
static Value appendPast(ImportContext &ctx, Value past, Value now) {
  RankedTensorType p = typeOf(past), n = typeOf(now);
  SmallVector<int64_t> dims(n.getShape());
  dims[2] = p.isDynamicDim(2) || n.isDynamicDim(2)
                ? kDyn
                : p.getDimSize(2) + n.getDimSize(2);
  for (int d : {0, 1, 3})
    if (ShapedType::isDynamic(dims[d]))
      dims[d] = p.getDimSize(d);
  return ConcatOp::create(ctx.b(), ctx.loc(),
                          RankedTensorType::get(dims, n.getElementType()),
                          ValueRange{past, now}, ctx.b().getI64IntegerAttr(2));
}

LogicalResult convertAttention(ImportContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  FailureOr<int64_t> causal = ctx.intAttr("is_causal", 0);
  FailureOr<int64_t> qHeads = ctx.intAttr("q_num_heads", 0);
  FailureOr<int64_t> kvHeads = ctx.intAttr("kv_num_heads", 0);
  FailureOr<float> softcap = ctx.floatAttr("softcap", 0.0f);
  if (failed(causal) || failed(qHeads) || failed(kvHeads) || failed(softcap))
    return failure();
  if (*softcap != 0.0f)
    return ctx.error() << "'softcap' is not supported";
  if (ctx.outputUsed(3))
    return ctx.error() << "the 'qk_matmul_output' output is not supported";
  if (ctx.hasInput(6))
    return ctx.error() << "'nonpad_kv_seqlen' is not supported";
  Value q = ctx.input(0), k = ctx.input(1), v = ctx.input(2);
  bool packed = typeOf(q).getRank() == 3;
  if (packed) {
    if (*qHeads <= 0 || *kvHeads <= 0)
      return ctx.error() << "3-D inputs need 'q_num_heads' and 'kv_num_heads'";
    q = splitHeads(ctx, q, *qHeads);
    k = splitHeads(ctx, k, *kvHeads);
    v = splitHeads(ctx, v, *kvHeads);
  } else if (typeOf(q).getRank() != 4) {
    return ctx.error() << "expected 3-D or 4-D 'Q'";
  }
  bool hasPast = ctx.hasInput(4) && ctx.hasInput(5);
  if (hasPast) {
    k = appendPast(ctx, ctx.input(4), k);
    v = appendPast(ctx, ctx.input(5), v);
  }
  // ONNX aligns the causal mask to the top-left when there is no past; ours
  // aligns it to the end. They agree when query and key lengths match, which
  // is self-attention; causal cross-attention of different static lengths is
  // refused. (Dynamic lengths are assumed equal: docs/importer.md.)
  int64_t sq = typeOf(q).getDimSize(2), sk = typeOf(k).getDimSize(2);
  if (*causal && !hasPast && !ShapedType::isDynamic(sq) &&
      !ShapedType::isDynamic(sk) && sq != sk)
    return ctx.error() << "is_causal without past needs equal query and key "
                          "lengths, got "
                       << sq << " and " << sk;
  Value mask = ctx.hasInput(3) ? ctx.input(3) : Value();
  FloatAttr scale;
  if (const onnx::AttributeProto *a = ctx.attr("scale")) {
    FailureOr<float> s = ctx.floatAttr("scale", 0.0f);
    if (failed(s))
      return failure();
    (void)a;
    scale = ctx.b().getF32FloatAttr(*s);
  }
  RankedTensorType tq = typeOf(q), tv = typeOf(v);
  auto type = RankedTensorType::get({tq.getDimSize(0), tq.getDimSize(1),
                                     tq.getDimSize(2), tv.getDimSize(3)},
                                    tq.getElementType());
  Value y = AttentionOp::create(ctx.b(), ctx.loc(), type, q, k, v, mask, scale,
                                *causal != 0, IntegerAttr(), IntegerAttr());
  ctx.setOutput(0, packed ? mergeHeads(ctx, y) : y);
  ctx.setOutput(1, k);
  ctx.setOutput(2, v);
  return success();
}

} // namespace strata::import
