//===- QdqConverters.cpp - ONNX quantize/dequantize and integer matmul ----===//
// SPDX-License-Identifier: Apache-2.0
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and MatMulInteger
// as exact elementwise math over existing strata ops. A DequantizeLinear of
// a constant int8 weight feeding MatMul/Gemm becomes
// strata.quantized_linear there (matchDequantizedWeight).

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "compiler/import/QuantizedConstants.h"
#include "compiler/import/TensorConversion.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

#include <onnx/onnx_pb.h>

#include <cmath>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

static Value castTo(ImportContext &ctx, Value v, Type elementType) {
  RankedTensorType t = typeOf(v);
  if (t.getElementType() == elementType)
    return v;
  return CastOp::create(ctx.b(), ctx.loc(),
                        RankedTensorType::get(t.getShape(), elementType), v);
}

static Value toF32(ImportContext &ctx, Value v) {
  return castTo(ctx, v, ctx.b().getF32Type());
}

template <typename OpT>
static Value binary(ImportContext &ctx, Value a, Value b) {
  Value r = broadcastOp<OpT>(ctx, a, b);
  assert(r && "operands built to broadcast");
  return r;
}

static Value select(ImportContext &ctx, Value cond, Value t, Value f) {
  std::optional<SmallVector<int64_t>> dims =
      broadcastShapes(typeOf(cond).getShape(), typeOf(t).getShape());
  if (dims)
    dims = broadcastShapes(*dims, typeOf(f).getShape());
  assert(dims && "operands built to broadcast");
  return WhereOp::create(
      ctx.b(), ctx.loc(),
      RankedTensorType::get(*dims, typeOf(t).getElementType()), cond, t, f);
}

// Rounds f32 |v| to the nearest integer, ties to even (ONNX's rounding for
// quantization). |v| must already be clamped well inside int32: truncation
// through i32 gives t, and |v - t| (exact) decides the step.
static Value roundHalfEven(ImportContext &ctx, Value v) {
  Type f32 = ctx.b().getF32Type();
  Value t = toF32(ctx, castTo(ctx, v, ctx.b().getI32Type()));
  Value d = binary<SubOp>(ctx, v, t);
  Value ad = AbsOp::create(ctx.b(), ctx.loc(), d.getType(), d);
  Value half = ctx.constScalar(f32, 0.5), zero = ctx.constScalar(f32, 0);
  Value rem = ModOp::create(ctx.b(), ctx.loc(), t.getType(), t,
                            ctx.constScalar(f32, 2), /*fmod=*/true);
  Value even = broadcastCompare<EqualOp>(ctx, rem, zero);
  Value odd = NotOp::create(ctx.b(), ctx.loc(), even.getType(), even);
  Value tie = binary<AndOp>(ctx, broadcastCompare<EqualOp>(ctx, ad, half), odd);
  Value up = binary<OrOp>(ctx, broadcastCompare<GreaterOp>(ctx, ad, half), tie);
  Value step = select(ctx, broadcastCompare<LessOp>(ctx, d, zero),
                      ctx.constScalar(f32, -1), ctx.constScalar(f32, 1));
  return binary<AddOp>(ctx, t, select(ctx, up, step, zero));
}

namespace {
/// A (de)quantization's scale and zero point, shaped to broadcast against
/// the quantized tensor (per-axis ones reshaped to [C, 1, ..., 1]).
struct QuantParams {
  Value scale;
  Value zeroPoint; // null when absent
};
} // namespace

// Reads 'scale' (input |scaleIndex|), the optional zero point after it, and
// 'axis'/'block_size' for a tensor of type |x|.
static FailureOr<QuantParams>
readQuantParams(ImportContext &ctx, RankedTensorType x, unsigned scaleIndex) {
  FailureOr<int64_t> axisAttr = ctx.intAttr("axis", 1);
  FailureOr<int64_t> blockSize = ctx.intAttr("block_size", 0);
  if (failed(axisAttr) || failed(blockSize))
    return failure();
  if (*blockSize != 0)
    return ctx.error() << "blocked quantization ('block_size' " << *blockSize
                       << ") is not supported";
  RankedTensorType s = ctx.inputType(scaleIndex);
  if (!s.getElementType().isF32())
    return ctx.error() << "only a float32 scale is supported, got " << s;
  QuantParams p{ctx.input(scaleIndex), Value()};
  if (ctx.hasInput(scaleIndex + 1)) {
    p.zeroPoint = ctx.input(scaleIndex + 1);
    RankedTensorType z = typeOf(p.zeroPoint);
    bool bothScalar = z.hasStaticShape() && s.hasStaticShape() &&
                      z.getNumElements() == 1 && s.getNumElements() == 1;
    if (z.getShape() != s.getShape() && !bothScalar)
      return ctx.error() << "expected the zero point's shape "
                         << formatShape(z.getShape())
                         << " to equal the scale's "
                         << formatShape(s.getShape());
  }
  if (s.getRank() <= 1 && s.hasStaticShape() && s.getNumElements() == 1) {
    // Per-tensor, maybe as [1]: a scalar, so a 0-D input stays 0-D.
    p.scale = ctx.reshapeTo(p.scale, {}, {});
    if (p.zeroPoint)
      p.zeroPoint = ctx.reshapeTo(p.zeroPoint, {}, {});
    return p;
  }
  if (s.getRank() != 1)
    return ctx.error() << "a scale of rank " << s.getRank()
                       << " (blocked quantization) is not supported";
  std::optional<int64_t> axis = normalizeAxis(*axisAttr, x.getRank());
  if (!axis)
    return ctx.error() << "'axis' " << *axisAttr << " is out of range for rank "
                       << x.getRank();
  if (!isCompatibleShape({x.getDimSize(*axis)}, {s.getDimSize(0)}))
    return ctx.error() << "expected " << formatShape(x.getDimSize(*axis))
                       << " per-axis scales along axis " << *axis << ", got "
                       << formatShape(s.getDimSize(0));
  // [C] broadcasts along the last axis as is; other axes need trailing 1s.
  SmallVector<int64_t> dims = {s.getDimSize(0)};
  dims.append(x.getRank() - 1 - *axis, 1);
  SmallVector<DimSource> src = {s.isDynamicDim(0)
                                    ? DimSource::fromInput(0)
                                    : DimSource::fixed(s.getDimSize(0))};
  src.append(x.getRank() - 1 - *axis, DimSource::fixed(1));
  p.scale = ctx.reshapeTo(p.scale, dims, src);
  if (p.zeroPoint)
    p.zeroPoint = ctx.reshapeTo(p.zeroPoint, dims, src);
  return p;
}

// True if |zp| is absent or a constant of zeros.
static bool isZero(Value zp) {
  if (!zp)
    return true;
  std::optional<std::vector<int64_t>> values = constantInts(zp);
  return values && llvm::all_of(*values, [](int64_t v) { return v == 0; });
}

static bool isQuantizedStorage(Type t) {
  return t.isSignlessInteger(8) || t.isUnsignedInteger(8) ||
         t.isSignlessInteger(16) || t.isUnsignedInteger(16) ||
         t.isSignlessInteger(32);
}

// y = (float(x) - float(zero_point)) * scale: exact in fp32 for 8- and
// 16-bit x (int32 x rounds as onnxruntime's float conversion does).
LogicalResult convertDequantizeLinear(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType x = ctx.inputType(0);
  if (!isQuantizedStorage(x.getElementType()))
    return ctx.error() << "only int8, uint8, int16, uint16 and int32 inputs "
                          "are supported, got "
                       << x;
  FailureOr<int64_t> outputType = ctx.intAttr("output_dtype", 0);
  if (failed(outputType))
    return failure();
  if (*outputType != 0 && *outputType != onnx::TensorProto::FLOAT)
    return ctx.error() << "only a float32 'output_dtype' is supported";
  FailureOr<QuantParams> p = readQuantParams(ctx, x, 1);
  if (failed(p))
    return failure();
  if (p->zeroPoint &&
      typeOf(p->zeroPoint).getElementType() != x.getElementType())
    return ctx.error() << "expected the zero point's element type to be "
                       << x.getElementType();
  Value y = toF32(ctx, ctx.input(0));
  // A zero zero point is left out, so a weight stays mul(cast(q), scale)
  // for matchDequantizedWeight.
  if (!isZero(p->zeroPoint))
    y = binary<SubOp>(ctx, y, toF32(ctx, p->zeroPoint));
  ctx.setOutput(0, binary<MulOp>(ctx, y, p->scale));
  return success();
}

// saturate(round_half_even(|v|) + zp) into the range of |target| (8 or 16
// bits), as |target|: clamping
// to [lo - zp, hi - zp] first is the same (the bounds are integers) and
// keeps the rounding inside int32.
static Value quantizeScaled(ImportContext &ctx, Value v, Value zpF32,
                            Type target) {
  Type f32 = ctx.b().getF32Type();
  bool isSigned = target.isSignlessInteger();
  unsigned bits = target.getIntOrFloatBitWidth();
  double lo = isSigned ? -std::ldexp(1.0, bits - 1) : 0;
  double hi =
      isSigned ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
  Value loV = ctx.constScalar(f32, lo), hiV = ctx.constScalar(f32, hi);
  if (zpF32) {
    loV = binary<SubOp>(ctx, loV, zpF32);
    hiV = binary<SubOp>(ctx, hiV, zpF32);
  }
  v = binary<MinOp>(ctx, binary<MaxOp>(ctx, v, loV), hiV);
  Value r = roundHalfEven(ctx, v);
  if (zpF32)
    r = binary<AddOp>(ctx, r, zpF32);
  return castTo(ctx, r, target);
}

// y = saturate(round_half_even(x / y_scale) + y_zero_point), 8 or 16 bits.
LogicalResult convertQuantizeLinear(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType x = ctx.inputType(0);
  if (!x.getElementType().isF32())
    return ctx.error() << "only a float32 input is supported, got " << x;
  FailureOr<QuantParams> p = readQuantParams(ctx, x, 1);
  FailureOr<int64_t> outputType = ctx.intAttr("output_dtype", 0);
  if (failed(p) || failed(outputType))
    return failure();
  Type target = ctx.b().getIntegerType(8, /*isSigned=*/false);
  if (p->zeroPoint)
    target = typeOf(p->zeroPoint).getElementType();
  else if (*outputType != 0)
    target = convertElementType(int32_t(*outputType), ctx.context());
  if (!target || !isQuantizedStorage(target) || target.isSignlessInteger(32))
    return ctx.error() << "only int8, uint8, int16 and uint16 outputs are "
                          "supported";
  Value v = binary<DivOp>(ctx, ctx.input(0), p->scale);
  Value zp = isZero(p->zeroPoint) ? Value() : toF32(ctx, p->zeroPoint);
  ctx.setOutput(0, quantizeScaled(ctx, v, zp, target));
  return success();
}

// DynamicQuantizeLinear(x) -> (y uint8, y_scale, y_zero_point) over the
// range of x extended to include 0: scale = (max - min) / 255 (1 when the
// range is empty, as onnxruntime does), zero_point =
// round_half_even(clamp(-min / scale, 0, 255)).
LogicalResult convertDynamicQuantizeLinear(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType x = ctx.inputType(0);
  if (!x.getElementType().isF32())
    return ctx.error() << "only a float32 input is supported, got " << x;
  OpBuilder &b = ctx.b();
  Type f32 = b.getF32Type();
  Value xv = ctx.input(0);
  Value xmax = xv, xmin = xv;
  if (x.getRank() > 0) {
    SmallVector<int64_t> axes;
    for (int64_t d = 0; d < x.getRank(); ++d)
      axes.push_back(d);
    auto scalar = RankedTensorType::get({}, f32);
    DenseI64ArrayAttr axesAttr = b.getDenseI64ArrayAttr(axes);
    BoolAttr keep = b.getBoolAttr(false);
    xmax = ReduceMaxOp::create(b, ctx.loc(), scalar, xv, axesAttr, keep);
    // min(x) = -max(-x): there is no reduce_min.
    Value neg = NegOp::create(b, ctx.loc(), x, xv);
    xmin = NegOp::create(
        b, ctx.loc(), scalar,
        ReduceMaxOp::create(b, ctx.loc(), scalar, neg, axesAttr, keep));
  }
  Value zero = ctx.constScalar(f32, 0);
  xmax = binary<MaxOp>(ctx, xmax, zero);
  xmin = binary<MinOp>(ctx, xmin, zero);
  Value range = binary<SubOp>(ctx, xmax, xmin);
  Value scale =
      select(ctx, broadcastCompare<EqualOp>(ctx, range, zero), ctx.constScalar(f32, 1),
             binary<DivOp>(ctx, range, ctx.constScalar(f32, 255)));
  Value zpRaw = binary<SubOp>(ctx, zero, binary<DivOp>(ctx, xmin, scale));
  zpRaw = binary<MinOp>(ctx, binary<MaxOp>(ctx, zpRaw, zero),
                        ctx.constScalar(f32, 255));
  Value zp = roundHalfEven(ctx, zpRaw);
  Type u8 = b.getIntegerType(8, /*isSigned=*/false);
  Value v = binary<DivOp>(ctx, xv, scale);
  ctx.setOutput(0, quantizeScaled(ctx, v, zp, u8));
  ctx.setOutput(1, scale);
  ctx.setOutput(2, castTo(ctx, zp, u8));
  return success();
}

// (x - zero_point) in fp32 for one MatMulInteger or QLinearMatMul operand
// (its zero point two inputs later); a 1-D zero point
// of A is per row ([M] -> [M, 1]).
static FailureOr<Value> shiftedOperand(ImportContext &ctx, unsigned index,
                                       bool perRow) {
  Value x = ctx.input(index);
  Type t = typeOf(x).getElementType();
  if (!t.isSignlessInteger(8) && !t.isUnsignedInteger(8))
    return ctx.error() << "only int8 and uint8 operands are supported, got "
                       << typeOf(x);
  Value y = toF32(ctx, x);
  if (!ctx.hasInput(index + 2))
    return y;
  Value zp = ctx.input(index + 2);
  RankedTensorType z = typeOf(zp);
  if (z.getElementType() != t)
    return ctx.error() << "expected the zero point of input " << index
                       << " to be " << t << ", got " << z;
  if (isZero(zp))
    return y;
  if (perRow && z.getRank() == 1 && typeOf(x).getRank() >= 2)
    zp = ctx.reshapeTo(zp, {z.getDimSize(0), 1},
                       {z.isDynamicDim(0) ? DimSource::fromInput(0)
                                          : DimSource::fixed(z.getDimSize(0)),
                        DimSource::fixed(1)});
  Value shifted = broadcastOp<SubOp>(ctx, y, toF32(ctx, zp));
  if (!shifted)
    return ctx.error() << "zero point of shape " << formatShape(z.getShape())
                       << " does not broadcast to input " << index;
  return shifted;
}

// MatMulInteger(A, B, a_zero_point, b_zero_point) -> int32, computed as an
// fp32 matmul of the shifted operands (or quantized_linear over int8 B). Each
// product is an integer of magnitude <= 255 * 255 and fp32 holds every integer
// up to 2^24, so the result is exact (in any summation order) while K * max|a -
// a_zp| * max|b - b_zp| <= 2^24: K <= 258 always, K <= 513 for onnxruntime's
// dynamic quantization (uint8 activations, symmetric int8 weights). Past
// that the sum has fp32's relative rounding (~6e-8).
LogicalResult convertMatMulInteger(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  FailureOr<Value> a = shiftedOperand(ctx, 0, /*perRow=*/true);
  if (failed(a))
    return failure();
  FailureOr<Value> b = shiftedOperand(ctx, 1, /*perRow=*/false);
  if (failed(b))
    return failure();
  // A constant int8 [K, N] B without zero point (onnxruntime's symmetric
  // weights) stays int8: quantized_linear with unit scales sums the same
  // integer products in fp32.
  RankedTensorType bt = ctx.inputType(1);
  if (bt.getElementType().isSignlessInteger(8) && bt.getRank() == 2 &&
      bt.hasStaticShape() && typeOf(*a).getRank() >= 1 &&
      isCompatibleShape({typeOf(*a).getShape().back()}, {bt.getDimSize(0)}) &&
      (!ctx.hasInput(3) || isZero(ctx.input(3)))) {
    if (std::optional<std::vector<int32_t>> q = constantInt8s(ctx.input(1))) {
      QuantizedWeight w;
      w.k = bt.getDimSize(0);
      w.n = bt.getDimSize(1);
      w.bits = 8;
      w.groupSize = w.k;
      w.values.assign(q->begin(), q->end());
      w.scales.assign(w.n, 1.0f);
      Value y = buildQuantizedLinear(ctx, *a, w, Value(), ctx.node().input(1));
      ctx.setOutput(0, castTo(ctx, y, ctx.b().getI32Type()));
      return success();
    }
  }
  std::optional<SmallVector<int64_t>> dims =
      inferMatmulShape(typeOf(*a).getShape(), typeOf(*b).getShape());
  if (!dims)
    return ctx.error() << "input shapes " << formatShape(typeOf(*a).getShape())
                       << " and " << formatShape(typeOf(*b).getShape())
                       << " are not compatible for MatMulInteger";
  Value y = MatmulOp::create(ctx.b(), ctx.loc(),
                             RankedTensorType::get(*dims, ctx.b().getF32Type()),
                             *a, *b);
  ctx.setOutput(0, castTo(ctx, y, ctx.b().getI32Type()));
  return success();
}

// QLinearMatMul: the int32 product of the shifted operands (an exact fp32
// matmul, as MatMulInteger) times a_scale * b_scale / y_scale (formed in the
// scales' own type, as the reference), quantized to y_zero_point's type.
LogicalResult convertQLinearMatMul(ImportContext &ctx) {
  if (failed(ctx.requireInputs(8)))
    return failure();
  // The operands at 0 and 3 have their zero points 2 inputs later, as
  // MatMulInteger's.
  FailureOr<Value> a = shiftedOperand(ctx, 0, /*perRow=*/true);
  FailureOr<Value> b = shiftedOperand(ctx, 3, /*perRow=*/false);
  if (failed(a) || failed(b))
    return failure();
  std::optional<SmallVector<int64_t>> dims =
      inferMatmulShape(typeOf(*a).getShape(), typeOf(*b).getShape());
  if (!dims)
    return ctx.error() << "input shapes are not compatible for QLinearMatMul";
  Type f32 = ctx.b().getF32Type();
  Value c = MatmulOp::create(ctx.b(), ctx.loc(),
                             RankedTensorType::get(*dims, f32), *a, *b);
  Value as = ctx.input(1), bs = ctx.input(4), ys = ctx.input(6);
  for (Value s : {as, bs, ys})
    if (!isa<FloatType>(typeOf(s).getElementType()) ||
        typeOf(s).getElementType() != typeOf(as).getElementType())
      return ctx.error() << "expected float scales of one type";
  if (typeOf(as).getRank() == 1 && typeOf(as).getDimSize(0) != 1)
    as = ctx.reshapeTo(as, {typeOf(as).getDimSize(0), 1}, {});
  Value scale = broadcastOp<DivOp>(ctx, broadcastOp<MulOp>(ctx, as, bs), ys);
  if (!scale)
    return ctx.error() << "the scales do not broadcast";
  Value v = binary<MulOp>(ctx, c, toF32(ctx, scale));
  Value yzp = ctx.input(7);
  Type target = typeOf(yzp).getElementType();
  if (!target.isSignlessInteger(8) && !target.isUnsignedInteger(8))
    return ctx.error() << "only int8 and uint8 outputs are supported";
  ctx.setOutput(0, quantizeScaled(ctx, v,
                                  isZero(yzp) ? Value() : toF32(ctx, yzp),
                                  target));
  return success();
}

} // namespace strata::import
