//===- RotaryConverter.cpp - ONNX RotaryEmbedding (opset 23) --------------===//
// SPDX-License-Identifier: Apache-2.0
// Decomposes RotaryEmbedding into slices, multiplies and a concat
// (the split-half, non-interleaved form Llama uses). A rotary op that
// fusion recognizes from the same arithmetic does not exist yet.

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

using namespace mlir;
using namespace strata::ir;

namespace strata::import {


// x[..., begin:end:step] along the last axis (static bounds).
static Value sliceLast(ImportContext &ctx, Value x, int64_t begin,
                       int64_t end, int64_t step = 1) {
  RankedTensorType t = typeOf(x);
  SmallVector<int64_t> dims(t.getShape());
  dims.back() = (end - begin + step - 1) / step;
  return SliceOp::create(ctx.b(), ctx.loc(),
                         RankedTensorType::get(dims, t.getElementType()), x,
                         ctx.constI64({begin}), ctx.constI64({end}),
                         ctx.constI64({step}),
                         ctx.b().getDenseI64ArrayAttr({t.getRank() - 1}));
}


LogicalResult convertRotaryEmbedding(ImportContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  FailureOr<int64_t> interleaved = ctx.intAttr("interleaved", 0);
  FailureOr<int64_t> heads = ctx.intAttr("num_heads", 0);
  FailureOr<int64_t> rotaryDimAttr = ctx.intAttr("rotary_embedding_dim", 0);
  if (failed(interleaved) || failed(heads) || failed(rotaryDimAttr))
    return failure();
  Value x = ctx.input(0);
  RankedTensorType tx = typeOf(x);
  bool packed = tx.getRank() == 3;
  if (!packed && tx.getRank() != 4)
    return ctx.error() << "expected a 3-D or 4-D input";
  // Work in [B, S, H, D] (3-D input) or [B, H, S, D] (4-D input).
  if (packed) {
    if (*heads <= 0 || tx.isDynamicDim(2) || tx.getDimSize(2) % *heads)
      return ctx.error() << "a 3-D input needs 'num_heads' dividing its "
                            "static hidden size";
    int64_t d = tx.getDimSize(2) / *heads;
    SmallVector<DimSource> src = {
        tx.isDynamicDim(0) ? DimSource::fromInput(0)
                           : DimSource::fixed(tx.getDimSize(0)),
        tx.isDynamicDim(1) ? DimSource::fromInput(1)
                           : DimSource::fixed(tx.getDimSize(1)),
        DimSource::fixed(*heads), DimSource::fixed(d)};
    x = ctx.reshapeTo(x, {tx.getDimSize(0), tx.getDimSize(1), *heads, d}, src);
  }
  RankedTensorType t = typeOf(x);
  int64_t headDim = t.getDimSize(3);
  if (ShapedType::isDynamic(headDim))
    return ctx.error() << "the head dim must be static";
  int64_t rotaryDim = *rotaryDimAttr ? *rotaryDimAttr : headDim;
  if (rotaryDim % 2 || rotaryDim > headDim)
    return ctx.error() << "invalid rotary_embedding_dim " << rotaryDim;
  int64_t half = rotaryDim / 2;

  // cos/sin: [max_pos, half] gathered by position_ids [B, S], or [B, S, half].
  Value cos = ctx.input(1), sin = ctx.input(2);
  if (typeOf(cos) != typeOf(sin))
    return ctx.error() << "expected cos and sin caches of one type";
  if (ctx.hasInput(3)) {
    RankedTensorType tc = typeOf(cos), tp = ctx.inputType(3);
    if (tc.getRank() != 2 || tp.getRank() != 2 ||
        !tp.getElementType().isInteger())
      return ctx.error() << "with position_ids, expected 2-D cos/sin caches "
                            "and 2-D integer position ids";
    auto gathered = RankedTensorType::get(
        {tp.getDimSize(0), tp.getDimSize(1), tc.getDimSize(1)},
        tc.getElementType());
    cos = GatherOp::create(ctx.b(), ctx.loc(), gathered, cos, ctx.input(3),
                           ctx.b().getI64IntegerAttr(0));
    sin = GatherOp::create(ctx.b(), ctx.loc(), gathered, sin, ctx.input(3),
                           ctx.b().getI64IntegerAttr(0));
  }
  RankedTensorType tc = typeOf(cos);
  if (tc.getRank() != 3 || tc.isDynamicDim(2) || tc.getDimSize(2) < half)
    return ctx.error() << "expected cos/sin caches of static last dim >= "
                       << half;
  // Caches may cover the whole head (head_dim / 2); use the rotated part.
  if (tc.getDimSize(2) > half) {
    cos = sliceLast(ctx, cos, 0, half);
    sin = sliceLast(ctx, sin, 0, half);
    tc = typeOf(cos);
  }
  // [B, S, half] -> [B, S, 1, half] or [B, 1, S, half].
  SmallVector<int64_t> cdims =
      packed ? SmallVector<int64_t>{tc.getDimSize(0), tc.getDimSize(1), 1, half}
             : SmallVector<int64_t>{tc.getDimSize(0), 1, tc.getDimSize(1), half};
  auto dimOf = [&](int64_t d) {
    return tc.isDynamicDim(d) ? DimSource::fromInput(d)
                              : DimSource::fixed(tc.getDimSize(d));
  };
  SmallVector<DimSource> csrc =
      packed ? SmallVector<DimSource>{dimOf(0), dimOf(1), DimSource::fixed(1),
                                      DimSource::fixed(half)}
             : SmallVector<DimSource>{dimOf(0), DimSource::fixed(1), dimOf(1),
                                      DimSource::fixed(half)};
  cos = ctx.reshapeTo(cos, cdims, csrc);
  sin = ctx.reshapeTo(sin, cdims, csrc);

  // [x1, x2] -> [x1 cos - x2 sin, x2 cos + x1 sin], where x1/x2 are the two
  // halves (split form) or the even/odd elements (interleaved form).
  Value x1 = *interleaved ? sliceLast(ctx, x, 0, rotaryDim, 2)
                          : sliceLast(ctx, x, 0, half);
  Value x2 = *interleaved ? sliceLast(ctx, x, 1, rotaryDim, 2)
                          : sliceLast(ctx, x, half, rotaryDim);
  Value a = broadcastOp<MulOp>(ctx, x1, cos);
  Value b = broadcastOp<MulOp>(ctx, x2, sin);
  Value c = broadcastOp<MulOp>(ctx, x2, cos);
  Value d = broadcastOp<MulOp>(ctx, x1, sin);
  if (!a || !b || !c || !d)
    return ctx.error() << "cos/sin caches do not broadcast to the input";
  Value o1 = SubOp::create(ctx.b(), ctx.loc(), x1.getType(), a, b);
  Value o2 = AddOp::create(ctx.b(), ctx.loc(), x2.getType(), c, d);
  SmallVector<Value> parts = {o1, o2};
  if (*interleaved) {
    // Re-interleave: [..., half] x2 -> [..., half, 2] -> [..., rotaryDim].
    SmallVector<int64_t> pairDims(t.getShape());
    pairDims.back() = half;
    pairDims.push_back(1);
    SmallVector<DimSource> src;
    for (int64_t d = 0; d < t.getRank(); ++d)
      src.push_back(t.isDynamicDim(d) ? DimSource::fromInput(d)
                                      : DimSource::fixed(pairDims[d]));
    src.push_back(DimSource::fixed(1));
    Value r1 = ctx.reshapeTo(o1, pairDims, src);
    Value r2 = ctx.reshapeTo(o2, pairDims, src);
    SmallVector<int64_t> joined = pairDims;
    joined.back() = 2;
    Value pairs = ConcatOp::create(
        ctx.b(), ctx.loc(), RankedTensorType::get(joined, t.getElementType()),
        ValueRange{r1, r2}, ctx.b().getI64IntegerAttr(t.getRank()));
    SmallVector<int64_t> rotated(t.getShape());
    rotated.back() = rotaryDim;
    SmallVector<DimSource> back(src.begin(), src.end() - 1);
    back.back() = DimSource::fixed(rotaryDim);
    parts = {ctx.reshapeTo(pairs, rotated, back)};
  }
  if (rotaryDim < headDim)
    parts.push_back(sliceLast(ctx, x, rotaryDim, headDim));
  Value y = ConcatOp::create(ctx.b(), ctx.loc(), t, parts,
                             ctx.b().getI64IntegerAttr(3));
  if (packed) {
    SmallVector<DimSource> src = {
        tx.isDynamicDim(0) ? DimSource::fromInput(0)
                           : DimSource::fixed(tx.getDimSize(0)),
        tx.isDynamicDim(1) ? DimSource::fromInput(1)
                           : DimSource::fixed(tx.getDimSize(1)),
        DimSource::fixed(tx.getDimSize(2))};
    y = ctx.reshapeTo(y, tx.getShape(), src);
  }
  ctx.setOutput(0, y);
  return success();
}

} // namespace strata::import
