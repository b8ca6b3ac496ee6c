//===- ContribConverters.cpp - onnxruntime com.microsoft ops --------------===//
// SPDX-License-Identifier: Apache-2.0
// The contrib ops onnxruntime's transformers optimizer emits, mapped onto
// strata's fused ops so optimized exports import as well as raw ones.

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

#include <onnx/onnx_pb.h>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

// Gelu(X) / BiasGelu(A, B) / FastGelu(X, bias?): optional bias add, then
// exact (Gelu, BiasGelu) or tanh-approximated (FastGelu) GELU.
LogicalResult convertContribGelu(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  StringRef op = ctx.node().op_type();
  Value x = ctx.input(0);
  if (ctx.hasInput(1)) {
    x = broadcastOp<AddOp>(ctx, x, ctx.input(1));
    if (!x)
      return ctx.error() << "bias does not broadcast to the input";
  }
  StringRef approximate = op == "FastGelu" ? "tanh" : "none";
  ctx.setOutput(0, GeluOp::create(ctx.b(), ctx.loc(), x.getType(), x,
                                  ctx.b().getStringAttr(approximate)));
  return success();
}

// Skip(Simplified)LayerNormalization(input, skip, gamma, [beta], [bias]):
// sum = input + skip (+ bias); output 0 = norm(sum), output 3 = sum.
LogicalResult convertContribSkipLayerNorm(ImportContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  bool simplified =
      ctx.node().op_type() == "SkipSimplifiedLayerNormalization";
  FailureOr<float> epsilon = ctx.floatAttr("epsilon", 1e-12f);
  if (failed(epsilon))
    return failure();
  if (ctx.outputUsed(1) || ctx.outputUsed(2))
    return ctx.error() << "the mean and inverse-std outputs are not supported";
  Value sum = broadcastOp<AddOp>(ctx, ctx.input(0), ctx.input(1));
  // Skip: [input, skip, gamma, beta, bias]; simplified: [.., gamma, bias].
  unsigned biasIndex = simplified ? 3 : 4;
  if (sum && ctx.hasInput(biasIndex))
    sum = broadcastOp<AddOp>(ctx, sum, ctx.input(biasIndex));
  if (!sum)
    return ctx.error() << "'skip' or 'bias' does not broadcast to the input";
  OpBuilder &b = ctx.b();
  Value y;
  if (simplified)
    y = RmsNormOp::create(b, ctx.loc(), sum.getType(), sum, ctx.input(2),
                          b.getI64IntegerAttr(-1), b.getF32FloatAttr(*epsilon));
  else
    y = LayerNormOp::create(b, ctx.loc(), sum.getType(), sum, ctx.input(2),
                            ctx.hasInput(3) ? ctx.input(3) : Value(),
                            b.getI64IntegerAttr(-1),
                            b.getF32FloatAttr(*epsilon));
  ctx.setOutput(0, y);
  ctx.setOutput(3, sum);
  return success();
}

LogicalResult convertContribSimplifiedLayerNorm(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  FailureOr<int64_t> axis = ctx.intAttr("axis", -1);
  FailureOr<float> epsilon = ctx.floatAttr("epsilon", 1e-5f);
  if (failed(axis) || failed(epsilon))
    return failure();
  if (ctx.outputUsed(1))
    return ctx.error() << "the inverse-std output is not supported";
  ctx.setOutput(0, RmsNormOp::create(ctx.b(), ctx.loc(), ctx.inputType(0),
                                     ctx.input(0), ctx.input(1),
                                     ctx.b().getI64IntegerAttr(*axis),
                                     ctx.b().getF32FloatAttr(*epsilon)));
  return success();
}

// A [B, T] 0/1 key padding mask as a boolean [B, 1, 1, T] attention mask.
static Value keyPaddingMask(ImportContext &ctx, Value mask) {
  RankedTensorType t = typeOf(mask);
  if (t.getRank() != 2)
    return {};
  Value zero = ctx.constScalar(t.getElementType(), 0);
  auto boolType = RankedTensorType::get(t.getShape(), ctx.b().getI1Type());
  Value keep =
      GreaterOp::create(ctx.b(), ctx.loc(), boolType, mask, zero).getResult();
  SmallVector<int64_t> dims = {t.getDimSize(0), 1, 1, t.getDimSize(1)};
  SmallVector<DimSource> src = {
      t.isDynamicDim(0) ? DimSource::fromInput(0)
                        : DimSource::fixed(t.getDimSize(0)),
      DimSource::fixed(1), DimSource::fixed(1),
      t.isDynamicDim(1) ? DimSource::fromInput(1)
                        : DimSource::fixed(t.getDimSize(1))};
  // buildShape reads dynamic extents from |keep|, which has mask's shape.
  return ctx.reshapeTo(keep, dims, src);
}

// A 1-D [B] mask_index of valid key counts (right padding) as a boolean
// [B, 1, 1, T] mask: keep[b, t] = t < lengths[b]. |keys| is [B, H, T, D].
static Value lengthMask(ImportContext &ctx, Value lengths, Value keys) {
  RankedTensorType tk = typeOf(keys);
  OpBuilder &b = ctx.b();
  auto i64 = b.getI64Type();
  int64_t t = tk.getDimSize(2);
  Value limit;
  if (ShapedType::isDynamic(t))
    limit = ReshapeOp::create(b, ctx.loc(), RankedTensorType::get({}, i64),
                              ctx.buildShape(keys, {DimSource::fromInput(2)}),
                              Value());
  else
    limit = ctx.constI64({t}, /*scalar=*/true);
  Value positions = RangeOp::create(
      b, ctx.loc(), RankedTensorType::get({t}, i64),
      ctx.constI64({0}, true), limit, ctx.constI64({1}, true));
  Value len = ctx.asI64Vector(lengths);
  int64_t batch = typeOf(len).getDimSize(0);
  len = ctx.reshapeTo(len, {batch, 1},
                      {ShapedType::isDynamic(batch) ? DimSource::fromInput(0)
                                                    : DimSource::fixed(batch),
                       DimSource::fixed(1)});
  Value keep = LessOp::create(
      b, ctx.loc(), RankedTensorType::get({batch, t}, b.getI1Type()),
      positions, len);
  SmallVector<DimSource> src = {
      ShapedType::isDynamic(batch) ? DimSource::fromInput(0)
                                   : DimSource::fixed(batch),
      DimSource::fixed(1), DimSource::fixed(1),
      ShapedType::isDynamic(t) ? DimSource::fromInput(1)
                               : DimSource::fixed(t)};
  return ctx.reshapeTo(keep, {batch, 1, 1, t}, src);
}

// A boolean keep-mask as onnxruntime's contrib attention applies it: an
// additive float mask of 0 (kept) and 'mask_filter_value' (default
// -10000), so that a fully padded row is a softmax over equally low
// scores, not over nothing.
static FailureOr<Value> filterMask(ImportContext &ctx, Value keep,
                                   Type elementType) {
  FailureOr<float> filter = ctx.floatAttr("mask_filter_value", -10000.0f);
  if (failed(filter))
    return failure();
  auto type = RankedTensorType::get(typeOf(keep).getShape(), elementType);
  return WhereOp::create(ctx.b(), ctx.loc(), type, keep,
                         ctx.constScalar(elementType, 0),
                         ctx.constScalar(elementType, *filter))
      .getResult();
}

namespace {
// The attributes both contrib attention ops read.
struct ContribHeads {
  int64_t count;       // num_heads
  bool unidirectional; // causal
};
} // namespace

static FailureOr<ContribHeads> readContribHeads(ImportContext &ctx) {
  FailureOr<int64_t> heads = ctx.intAttr("num_heads", 0);
  FailureOr<int64_t> unidirectional = ctx.intAttr("unidirectional", 0);
  if (failed(heads) || failed(unidirectional))
    return failure();
  if (*heads <= 0)
    return ctx.error() << "'num_heads' must be positive";
  return ContribHeads{*heads, *unidirectional != 0};
}

// Output 0 = strata.attention over the [B, H, S, D] |q|, |k|, |v| with the
// optional additive |mask|, heads merged back into [B, S, H * D].
static LogicalResult setMergedAttention(ImportContext &ctx,
                                        const ContribHeads &heads, Value q,
                                        Value k, Value v, Value mask) {
  FailureOr<FloatAttr> scale = optionalScale(ctx);
  if (failed(scale))
    return failure();
  Value y = AttentionOp::create(ctx.b(), ctx.loc(), q.getType(), q, k, v, mask,
                                *scale, heads.unidirectional, IntegerAttr(),
                                IntegerAttr(), /*mask_hidden=*/false,
                                IntegerAttr(), IntegerAttr());
  ctx.setOutput(0, mergeHeads(ctx, y));
  return success();
}

// com.microsoft Attention(input, weights, bias, [mask_index]): packed QKV
// projection, multi-head attention, heads merged back.
LogicalResult convertContribAttention(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  FailureOr<ContribHeads> heads = readContribHeads(ctx);
  if (failed(heads))
    return failure();
  if (ctx.hasInput(4) || ctx.outputUsed(1))
    return ctx.error() << "'past'/'present' are not supported; use the "
                          "un-optimized with-past export";
  if (ctx.attr("qkv_hidden_sizes"))
    return ctx.error() << "'qkv_hidden_sizes' is not supported";
  Value x = ctx.input(0), w = ctx.input(1);
  RankedTensorType tx = typeOf(x), tw = typeOf(w);
  if (tx.getRank() != 3 || tw.getRank() != 2 || tw.isDynamicDim(1) ||
      tw.getDimSize(1) % 3 != 0)
    return ctx.error() << "expected 3-D input and [hidden, 3*hidden] weights";
  int64_t hidden = tw.getDimSize(1) / 3;
  auto qkvType = RankedTensorType::get(
      {tx.getDimSize(0), tx.getDimSize(1), 3 * hidden}, tx.getElementType());
  Value qkv = LinearOp::create(ctx.b(), ctx.loc(), qkvType, x, w,
                               ctx.hasInput(2) ? ctx.input(2) : Value());
  auto partType = RankedTensorType::get(
      {tx.getDimSize(0), tx.getDimSize(1), hidden}, tx.getElementType());
  auto split = SplitOp::create(
      ctx.b(), ctx.loc(), SmallVector<Type>(3, partType), qkv,
      ctx.b().getI64IntegerAttr(2),
      ctx.b().getDenseI64ArrayAttr({hidden, hidden, hidden}));
  Value q = splitHeads(ctx, split.getResult(0), heads->count);
  Value k = splitHeads(ctx, split.getResult(1), heads->count);
  Value v = splitHeads(ctx, split.getResult(2), heads->count);
  Value mask;
  if (ctx.hasInput(3)) {
    RankedTensorType tm = ctx.inputType(3);
    mask = tm.getRank() == 1 ? lengthMask(ctx, ctx.input(3), k)
                             : keyPaddingMask(ctx, ctx.input(3));
    if (!mask)
      return ctx.error() << "only a 1-D [batch] or 2-D [batch, "
                            "total_sequence] 'mask_index' is supported";
    FailureOr<Value> additive = filterMask(ctx, mask, tx.getElementType());
    if (failed(additive))
      return failure();
    mask = *additive;
  }
  return setMergedAttention(ctx, *heads, q, k, v, mask);
}

// com.microsoft MultiHeadAttention(query, key, value, [bias],
// [key_padding_mask], [attention_bias]) with 3-D query/key/value.
LogicalResult convertContribMultiHeadAttention(ImportContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  FailureOr<ContribHeads> heads = readContribHeads(ctx);
  if (failed(heads))
    return failure();
  if (ctx.hasInput(3) || ctx.hasInput(6) || ctx.hasInput(7) ||
      ctx.outputUsed(1))
    return ctx.error() << "packed bias and past/present are not supported";
  if (typeOf(ctx.input(0)).getRank() != 3 ||
      typeOf(ctx.input(1)).getRank() != 3 ||
      typeOf(ctx.input(2)).getRank() != 3)
    return ctx.error() << "expected 3-D query, key and value";
  Value q = splitHeads(ctx, ctx.input(0), heads->count);
  Value k = splitHeads(ctx, ctx.input(1), heads->count);
  Value v = splitHeads(ctx, ctx.input(2), heads->count);
  Value mask;
  if (ctx.hasInput(4)) {
    mask = keyPaddingMask(ctx, ctx.input(4));
    if (!mask)
      return ctx.error() << "only a 2-D 'key_padding_mask' is supported";
    FailureOr<Value> additive =
        filterMask(ctx, mask, typeOf(ctx.input(0)).getElementType());
    if (failed(additive))
      return failure();
    mask = *additive;
  }
  if (ctx.hasInput(5)) {
    if (mask)
      return ctx.error() << "'key_padding_mask' together with "
                            "'attention_bias' is not supported";
    mask = ctx.input(5);
  }
  return setMergedAttention(ctx, *heads, q, k, v, mask);
}

} // namespace strata::import
