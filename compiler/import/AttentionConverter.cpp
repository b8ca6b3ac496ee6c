//===- AttentionConverter.cpp - ONNX Attention (opset 23) -----------------===//
// SPDX-License-Identifier: Apache-2.0
// Attention-23 maps onto strata.attention; the features the fused op does
// not model (softcap, the qk_matmul_output output, top-left causal masks of
// unequal lengths) take a decomposed matmul/softmax path instead.

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <limits>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

static constexpr int64_t kDyn = ShapedType::kDynamic;


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


// Repeats each of the Hkv heads of [B, Hkv, S, D] |times| times in place
// ([h0, h0, h1, h1, ...]), as grouped-query attention shares them.
static Value repeatHeads(ImportContext &ctx, Value x, int64_t times) {
  RankedTensorType t = typeOf(x);
  auto dim = [&](int64_t d) {
    return t.isDynamicDim(d) ? DimSource::fromInput(d)
                             : DimSource::fixed(t.getDimSize(d));
  };
  SmallVector<int64_t> five = {t.getDimSize(0), t.getDimSize(1), 1,
                               t.getDimSize(2), t.getDimSize(3)};
  Value r = ctx.reshapeTo(x, five,
                          {dim(0), dim(1), DimSource::fixed(1), dim(2), dim(3)});
  SmallVector<int64_t> expanded = five;
  expanded[2] = times;
  SmallVector<int64_t> target = {1, 1, times, 1, 1};
  Value e = ExpandOp::create(ctx.b(), ctx.loc(),
                             RankedTensorType::get(expanded, t.getElementType()),
                             r, ctx.constI64(target));
  int64_t heads = t.isDynamicDim(1) ? kDyn : t.getDimSize(1) * times;
  SmallVector<DimSource> src = {
      dim(0), DimSource::fixed(ShapedType::isDynamic(heads) ? -1 : heads),
      t.isDynamicDim(2) ? DimSource::fromInput(3)
                        : DimSource::fixed(t.getDimSize(2)),
      dim(3)};
  if (t.isDynamicDim(3))
    src[3] = DimSource::fromInput(4);
  return ctx.reshapeTo(
      e, {t.getDimSize(0), heads, t.getDimSize(2), t.getDimSize(3)}, src);
}

// softmax(scale * Q K^T + bias) V spelled out, with ONNX's top-left causal
// mask (offset by the past length), softcap, and the qk_matmul_output modes.
static LogicalResult decomposedAttention(ImportContext &ctx, Value q, Value k,
                                         Value v, Value mask, double scale,
                                         bool causal, int64_t pastLength,
                                         float softcap, int64_t qkMode,
                                         Value &y, Value &qkOutput) {
  RankedTensorType tq = typeOf(q), tk = typeOf(k);
  if (tq.isDynamicDim(1) || tk.isDynamicDim(1))
    return ctx.error() << "the decomposed attention path needs static head "
                          "counts";
  int64_t heads = tq.getDimSize(1), kvHeads = tk.getDimSize(1);
  if (kvHeads == 0 || heads % kvHeads)
    return ctx.error() << "query heads (" << heads
                       << ") must be a multiple of key/value heads ("
                       << kvHeads << ")";
  if (heads != kvHeads) {
    k = repeatHeads(ctx, k, heads / kvHeads);
    v = repeatHeads(ctx, v, heads / kvHeads);
    tk = typeOf(k);
  }
  OpBuilder &b = ctx.b();
  Location loc = ctx.loc();
  Type element = tq.getElementType();
  SmallVector<int64_t> ktDims = {tk.getDimSize(0), tk.getDimSize(1),
                                 tk.getDimSize(3), tk.getDimSize(2)};
  Value kt = TransposeOp::create(b, loc, RankedTensorType::get(ktDims, element),
                                 k, ArrayRef<int64_t>{0, 1, 3, 2});
  int64_t sq = tq.getDimSize(2), sk = tk.getDimSize(2);
  auto scoresType = RankedTensorType::get(
      {tq.getDimSize(0), heads, sq, sk}, element);
  Value scores = MatmulOp::create(b, loc, scoresType, q, kt);
  scores = MulOp::create(b, loc, scoresType, scores,
                         ctx.constScalar(element, scale));
  Value raw = scores;
  double negInf = -std::numeric_limits<double>::infinity();
  if (causal) {
    if (ShapedType::isDynamic(sq) || ShapedType::isDynamic(sk))
      return ctx.error() << "a causal mask on the decomposed path needs "
                            "static query and key lengths";
    // Query i sees keys j <= i + past (ONNX: top-left, shifted by the past).
    SmallVector<float> bias;
    for (int64_t i = 0; i < sq; ++i)
      for (int64_t j = 0; j < sk; ++j)
        bias.push_back(j <= i + pastLength ? 0.0f : -INFINITY);
    auto biasType = RankedTensorType::get({sq, sk}, b.getF32Type());
    Value c = ConstantOp::create(
        b, loc, DenseElementsAttr::get(biasType, ArrayRef<float>(bias)));
    if (element != b.getF32Type())
      c = CastOp::create(b, loc, RankedTensorType::get({sq, sk}, element), c);
    scores = AddOp::create(b, loc, scoresType, scores, c);
  }
  if (mask) {
    RankedTensorType tm = typeOf(mask);
    if (tm.getElementType().isInteger(1)) {
      auto maskType = RankedTensorType::get(tm.getShape(), element);
      mask = WhereOp::create(b, loc, maskType, mask,
                             ctx.constScalar(element, 0.0),
                             ctx.constScalar(element, negInf));
    }
    Value added = broadcastOp<AddOp>(ctx, scores, mask);
    if (!added || typeOf(added) != scoresType)
      return ctx.error() << "'attn_mask' of shape "
                         << formatShape(tm.getShape())
                         << " does not broadcast to the scores "
                         << formatShape(scoresType.getShape());
    scores = added;
  }
  if (qkMode == 1)
    raw = scores;
  if (softcap > 0.0f) {
    Value capped = MulOp::create(b, loc, scoresType, scores,
                                 ctx.constScalar(element, 1.0 / softcap));
    capped = TanhOp::create(b, loc, scoresType, capped);
    scores = MulOp::create(b, loc, scoresType, capped,
                           ctx.constScalar(element, softcap));
    if (qkMode == 2)
      raw = scores;
  }
  Value probs = SoftmaxOp::create(b, loc, scoresType, scores, -1);
  if (qkMode == 3)
    raw = probs;
  RankedTensorType tv = typeOf(v);
  y = MatmulOp::create(
      b, loc,
      RankedTensorType::get({tq.getDimSize(0), heads, sq, tv.getDimSize(3)},
                            element),
      probs, v);
  qkOutput = raw;
  return success();
}

LogicalResult convertAttention(ImportContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  FailureOr<int64_t> causal = ctx.intAttr("is_causal", 0);
  FailureOr<int64_t> qHeads = ctx.intAttr("q_num_heads", 0);
  FailureOr<int64_t> kvHeads = ctx.intAttr("kv_num_heads", 0);
  FailureOr<float> softcap = ctx.floatAttr("softcap", 0.0f);
  FailureOr<int64_t> qkMode = ctx.intAttr("qk_matmul_output_mode", 0);
  if (failed(causal) || failed(qHeads) || failed(kvHeads) || failed(softcap) ||
      failed(qkMode))
    return failure();
  if (*qkMode < 0 || *qkMode > 3)
    return ctx.error() << "invalid qk_matmul_output_mode " << *qkMode;
  if (ctx.hasInput(6))
    return ctx.error() << "'nonpad_kv_seqlen' is not supported";
  Value q = ctx.input(0), k = ctx.input(1), v = ctx.input(2);
  bool packed = typeOf(q).getRank() == 3;
  // Q, K and V are all 3-D ([batch, sequence, heads * head dim]) or all
  // 4-D; so are the past inputs 4-D.
  for (int i = 1; i <= 2; ++i)
    if (typeOf(ctx.input(i)).getRank() != typeOf(q).getRank())
      return ctx.error() << "expected '" << (i == 1 ? "K" : "V")
                         << "' to have the rank of 'Q' ("
                         << typeOf(q).getRank() << "), got "
                         << typeOf(ctx.input(i)).getRank();
  for (int i = 4; i <= 5; ++i)
    if (ctx.hasInput(i) && ctx.inputType(i).getRank() != 4)
      return ctx.error() << "expected a 4-D past input " << i << ", got rank "
                         << ctx.inputType(i).getRank();
  if (packed) {
    if (*qHeads <= 0 || *kvHeads <= 0)
      return ctx.error() << "3-D inputs need 'q_num_heads' and 'kv_num_heads'";
    for (auto [x, heads] : {std::pair(q, *qHeads), std::pair(k, *kvHeads),
                            std::pair(v, *kvHeads)}) {
      int64_t hidden = typeOf(x).getDimSize(2);
      if (!ShapedType::isDynamic(hidden) && hidden % heads != 0)
        return ctx.error() << "hidden size " << hidden
                           << " is not a multiple of " << heads << " heads";
    }
    q = splitHeads(ctx, q, *qHeads);
    k = splitHeads(ctx, k, *kvHeads);
    v = splitHeads(ctx, v, *kvHeads);
  } else if (typeOf(q).getRank() != 4) {
    return ctx.error() << "expected 3-D or 4-D 'Q'";
  }
  bool hasPast = ctx.hasInput(4) && ctx.hasInput(5);
  int64_t pastLength = 0;
  if (hasPast) {
    pastLength = ctx.inputType(4).getDimSize(2);
    k = appendPast(ctx, ctx.input(4), k);
    v = appendPast(ctx, ctx.input(5), v);
  }
  Value mask = ctx.hasInput(3) ? ctx.input(3) : Value();
  std::optional<float> scale;
  if (ctx.attr("scale")) {
    FailureOr<float> s = ctx.floatAttr("scale", 0.0f);
    if (failed(s))
      return failure();
    scale = *s;
  }
  RankedTensorType tq = typeOf(q), tv = typeOf(v);
  // ONNX aligns the causal mask to the top-left (shifted by the past);
  // strata.attention aligns it to the end. They agree when there is a past
  // or when query and key lengths are equal; dynamic lengths without a past
  // are self-attention in every export we know (docs/importer.md).
  int64_t sq = tq.getDimSize(2), sk = typeOf(k).getDimSize(2);
  bool alignedCausal = !*causal || hasPast || ShapedType::isDynamic(sq) ||
                       ShapedType::isDynamic(sk) || sq == sk;
  bool fused = alignedCausal && *softcap == 0.0f && !ctx.outputUsed(3);
  Value y, qkOutput;
  if (fused) {
    auto type = RankedTensorType::get({tq.getDimSize(0), tq.getDimSize(1),
                                       tq.getDimSize(2), tv.getDimSize(3)},
                                      tq.getElementType());
    y = AttentionOp::create(ctx.b(), ctx.loc(), type, q, k, v, mask,
                            scale ? ctx.b().getF32FloatAttr(*scale)
                                  : FloatAttr(),
                            *causal != 0, IntegerAttr(), IntegerAttr(),
                            /*mask_hidden=*/false, IntegerAttr(),
                            IntegerAttr());
  } else {
    if (ShapedType::isDynamic(pastLength))
      return ctx.error() << "a causal mask with a past of dynamic length "
                            "needs the fused path";
    int64_t headDim = tq.getDimSize(3);
    if (!scale && ShapedType::isDynamic(headDim))
      return ctx.error() << "the default scale needs a static head dim";
    double s = scale ? *scale : 1.0 / std::sqrt((double)headDim);
    if (failed(decomposedAttention(ctx, q, k, v, mask, s, *causal != 0,
                                   pastLength, *softcap, *qkMode, y,
                                   qkOutput)))
      return failure();
  }
  ctx.setOutput(0, packed ? mergeHeads(ctx, y) : y);
  ctx.setOutput(1, k);
  ctx.setOutput(2, v);
  if (qkOutput)
    ctx.setOutput(3, qkOutput);
  return success();
}

} // namespace strata::import
