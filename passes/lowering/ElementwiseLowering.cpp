//===- ElementwiseLowering.cpp - strata elementwise ops -> linalg ---------===//
// SPDX-License-Identifier: Apache-2.0
// Every elementwise strata op becomes one broadcasting linalg.generic whose
// body is the scalar arith/math computation; constants become
// arith.constant (weights stay dense_resource blobs).

#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/RuntimeChecks.h"

#include "dialects/strata/IR/StrataOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>
#include <type_traits>

using namespace mlir;
using namespace strata::ir;

namespace strata::lowering {
namespace {

bool isFloat(Value v) { return isa<FloatType>(v.getType()); }

// True if |op| computes on unsigned integers. The bodies see signless
// scalars (ElementwisePattern casts them), so signedness comes from the op.
bool isUnsignedOp(Operation *op) {
  return llvm::any_of(op->getOperandTypes(), [](Type t) {
    return getElementTypeOrSelf(t).isUnsignedInteger();
  });
}

Value cmp(OpBuilder &b, Location loc, arith::CmpFPredicate f,
          arith::CmpIPredicate i, arith::CmpIPredicate u, Value x, Value y,
          Operation *op) {
  if (isFloat(x))
    return arith::CmpFOp::create(b, loc, f, x, y);
  return arith::CmpIOp::create(b, loc, isUnsignedOp(op) ? u : i, x, y);
}

// Scalar bodies, one per op. Integers are signless scalars; an op on
// unsigned tensors (isUnsignedOp) picks the unsigned arith op.
Value addBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return addScalar(b, l, a[0], a[1]);
}
Value subBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return subScalar(b, l, a[0], a[1]);
}
Value mulBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return mulScalar(b, l, a[0], a[1]);
}
// An integer divisor that cannot trap: 0 (which a check before the op
// refuses) and -1 (INT_MIN / -1 overflows) become 1; the callers fix up the
// -1 case.
Value safeDivisor(OpBuilder &b, Location l, Value d, bool isUnsigned) {
  Type t = d.getType();
  Value one = scalarConstant(b, l, t, 1);
  Value bad = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, d,
                                    scalarConstant(b, l, t, 0));
  if (!isUnsigned)
    bad = arith::OrIOp::create(
        b, l, bad,
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, d,
                              scalarConstant(b, l, t, -1)));
  return arith::SelectOp::create(b, l, bad, one, d);
}
Value divBody(OpBuilder &b, Location l, ValueRange a, Operation *op) {
  if (isFloat(a[0]))
    return arith::DivFOp::create(b, l, a[0], a[1]);
  if (isUnsignedOp(op))
    return arith::DivUIOp::create(b, l, a[0],
                                  safeDivisor(b, l, a[1], true));
  // x / -1 is -x (wrapping for INT_MIN, as two's complement hardware does).
  Value q = arith::DivSIOp::create(b, l, a[0], safeDivisor(b, l, a[1], false));
  Type t = a[0].getType();
  Value minusOne = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, a[1],
                                         scalarConstant(b, l, t, -1));
  return arith::SelectOp::create(
      b, l, minusOne,
      arith::SubIOp::create(b, l, scalarConstant(b, l, t, 0), a[0]), q);
}
// Integer x^y by square-and-multiply over every exponent bit, without
// branches (math.ipowi has no CPU lowering). Wraps like repeated
// multiplication; a negative exponent gives 1/x^|y| truncated: 1 for x = 1,
// +-1 for x = -1, else 0.
Value intPow(OpBuilder &b, Location l, Value x, Value y, bool isUnsigned) {
  Type t = x.getType();
  unsigned width = t.getIntOrFloatBitWidth();
  Value zero = scalarConstant(b, l, t, 0), one = scalarConstant(b, l, t, 1);
  Value result = one, base = x, e = y;
  for (unsigned bit = 0; bit + 1 < width; ++bit) {
    Value odd = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne,
                                      arith::AndIOp::create(b, l, e, one),
                                      zero);
    result = arith::SelectOp::create(
        b, l, odd, arith::MulIOp::create(b, l, result, base), result);
    base = arith::MulIOp::create(b, l, base, base);
    e = arith::ShRUIOp::create(b, l, e, one);
  }
  if (isUnsigned)
    return result;
  Value negative =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, y, zero);
  Value minusOne = scalarConstant(b, l, t, -1);
  Value yOdd = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne,
                                     arith::AndIOp::create(b, l, y, one), zero);
  Value reciprocal = arith::SelectOp::create(
      b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, one), one,
      arith::SelectOp::create(
          b, l,
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, minusOne),
          arith::SelectOp::create(b, l, yOdd, minusOne, one), zero));
  return arith::SelectOp::create(b, l, negative, reciprocal, result);
}
Value powBody(OpBuilder &b, Location l, ValueRange a, Operation *op) {
  if (isFloat(a[0]))
    return math::PowFOp::create(b, l, a[0], a[1]);
  return intPow(b, l, a[0], a[1], isUnsignedOp(op));
}
Value maxBody(OpBuilder &b, Location l, ValueRange a, Operation *op) {
  if (!isFloat(a[0]) && isUnsignedOp(op))
    return arith::MaxUIOp::create(b, l, a[0], a[1]);
  return maxScalar(b, l, a[0], a[1]);
}
Value minBody(OpBuilder &b, Location l, ValueRange a, Operation *op) {
  if (isFloat(a[0]))
    return arith::MinimumFOp::create(b, l, a[0], a[1]);
  if (isUnsignedOp(op))
    return arith::MinUIOp::create(b, l, a[0], a[1]);
  return arith::MinSIOp::create(b, l, a[0], a[1]);
}
Value modBody(OpBuilder &b, Location l, ValueRange a, Operation *op) {
  if (isFloat(a[0]))
    return arith::RemFOp::create(b, l, a[0], a[1]);
  // Unsigned: the remainder is never negative, both conventions agree.
  if (isUnsignedOp(op))
    return arith::RemUIOp::create(b, l, a[0], safeDivisor(b, l, a[1], true));
  // x % 1 is 0, as x % -1 is.
  Value r = arith::RemSIOp::create(b, l, a[0], safeDivisor(b, l, a[1], false));
  if (cast<ModOp>(op).getFmod())
    return r;
  // Python semantics: a non-zero remainder takes the divisor's sign.
  Value zero = scalarConstant(b, l, r.getType(), 0);
  Value nonZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, r, zero);
  Value rNeg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, r, zero);
  Value dNeg =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, a[1], zero);
  Value differ = arith::XOrIOp::create(b, l, rNeg, dNeg);
  Value fix = arith::AndIOp::create(b, l, nonZero, differ);
  return arith::SelectOp::create(b, l, fix, arith::AddIOp::create(b, l, r, a[1]),
                                 r);
}
// A comparison: |F| on floats, |S| or |U| on signed or unsigned integers.
template <arith::CmpFPredicate F, arith::CmpIPredicate S,
          arith::CmpIPredicate U>
Value compareBody(OpBuilder &b, Location l, ValueRange a, Operation *op) {
  return cmp(b, l, F, S, U, a[0], a[1], op);
}
using FPred = arith::CmpFPredicate;
using IPred = arith::CmpIPredicate;
constexpr auto equalBody = compareBody<FPred::OEQ, IPred::eq, IPred::eq>;
constexpr auto lessBody = compareBody<FPred::OLT, IPred::slt, IPred::ult>;
constexpr auto lessEqualBody = compareBody<FPred::OLE, IPred::sle, IPred::ule>;
constexpr auto greaterBody = compareBody<FPred::OGT, IPred::sgt, IPred::ugt>;
constexpr auto greaterEqualBody =
    compareBody<FPred::OGE, IPred::sge, IPred::uge>;
Value andBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return arith::AndIOp::create(b, l, a[0], a[1]);
}
Value orBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return arith::OrIOp::create(b, l, a[0], a[1]);
}
Value sqrtBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return math::SqrtOp::create(b, l, a[0]);
}
Value rsqrtBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return math::RsqrtOp::create(b, l, a[0]);
}
Value reciprocalBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return arith::DivFOp::create(b, l, scalarConstant(b, l, a[0].getType(), 1),
                               a[0]);
}
Value expBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return math::ExpOp::create(b, l, a[0]);
}
Value logBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return math::LogOp::create(b, l, a[0]);
}
Value erfBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return math::ErfOp::create(b, l, a[0]);
}
Value tanhBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return math::TanhOp::create(b, l, a[0]);
}
Value sigmoid(OpBuilder &b, Location l, Value x) {
  Type t = x.getType();
  Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, x));
  Value one = scalarConstant(b, l, t, 1);
  return arith::DivFOp::create(b, l, one, arith::AddFOp::create(b, l, one, e));
}
Value sigmoidBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return sigmoid(b, l, a[0]);
}
Value siluBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return arith::MulFOp::create(b, l, a[0], sigmoid(b, l, a[0]));
}
Value sinBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return math::SinOp::create(b, l, a[0]);
}
Value cosBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return math::CosOp::create(b, l, a[0]);
}
template <typename MathOp>
Value mathBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return MathOp::create(b, l, a[0]);
}
Value negBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  if (isFloat(a[0]))
    return arith::NegFOp::create(b, l, a[0]);
  return arith::SubIOp::create(b, l, scalarConstant(b, l, a[0].getType(), 0),
                               a[0]);
}
Value absBody(OpBuilder &b, Location l, ValueRange a, Operation *op) {
  if (isFloat(a[0]))
    return math::AbsFOp::create(b, l, a[0]);
  if (isUnsignedOp(op))
    return a[0];
  return math::AbsIOp::create(b, l, a[0]);
}
Value reluBody(OpBuilder &b, Location l, ValueRange a, Operation *op) {
  if (!isFloat(a[0]) && isUnsignedOp(op))
    return a[0];
  return maxScalar(b, l, a[0], scalarConstant(b, l, a[0].getType(), 0));
}
Value bitwiseAndBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return arith::AndIOp::create(b, l, a[0], a[1]);
}
Value bitwiseOrBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return arith::OrIOp::create(b, l, a[0], a[1]);
}
Value bitwiseXorBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return arith::XOrIOp::create(b, l, a[0], a[1]);
}
Value bitwiseNotBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return arith::XOrIOp::create(b, l, a[0],
                               scalarConstant(b, l, a[0].getType(), -1));
}
// Shifts by the bit width or more (or by a negative amount) are poison in
// LLVM; they give what shifting one bit at a time would: 0, or the sign
// for an arithmetic right shift.
template <bool Left>
Value shiftBody(OpBuilder &b, Location l, ValueRange a, Operation *op) {
  Value x = a[0], n = a[1];
  Type t = x.getType();
  const bool logical = Left || isUnsignedOp(op);
  Value width = scalarConstant(b, l, t, t.getIntOrFloatBitWidth());
  Value tooFar = arith::CmpIOp::create(
      b, l, logical ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge, n,
      width);
  if (!logical)
    tooFar = arith::OrIOp::create(
        b, l, tooFar,
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, n,
                              scalarConstant(b, l, t, 0)));
  Value safe = arith::SelectOp::create(b, l, tooFar,
                                       scalarConstant(b, l, t, 0), n);
  Value shifted =
      Left ? Value(arith::ShLIOp::create(b, l, x, safe))
           : logical ? Value(arith::ShRUIOp::create(b, l, x, safe))
                     : Value(arith::ShRSIOp::create(b, l, x, safe));
  Value beyond =
      logical ? scalarConstant(b, l, t, 0)
              : Value(arith::ShRSIOp::create(
                    b, l, x, scalarConstant(b, l, t, t.getIntOrFloatBitWidth() - 1)));
  return arith::SelectOp::create(b, l, tooFar, beyond, shifted);
}
Value notBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return arith::XOrIOp::create(b, l, a[0],
                               arith::ConstantIntOp::create(b, l, 1, 1));
}
Value whereBody(OpBuilder &b, Location l, ValueRange a, Operation *) {
  return arith::SelectOp::create(b, l, a[0], a[1], a[2]);
}
// 0.5 x (1 + erf(x / sqrt 2)), or the tanh approximation.
Value geluBody(OpBuilder &b, Location l, ValueRange a, Operation *op) {
  Value x = a[0];
  Type t = x.getType();
  Value half = scalarConstant(b, l, t, 0.5), one = scalarConstant(b, l, t, 1);
  Value inner;
  if (cast<GeluOp>(op).getApproximate() == "tanh") {
    Value x3 = arith::MulFOp::create(b, l, x, arith::MulFOp::create(b, l, x, x));
    Value poly = arith::AddFOp::create(
        b, l, x,
        arith::MulFOp::create(b, l, scalarConstant(b, l, t, 0.044715), x3));
    inner = math::TanhOp::create(
        b, l,
        arith::MulFOp::create(b, l, scalarConstant(b, l, t, 0.7978845608028654),
                              poly));
  } else {
    inner = math::ErfOp::create(
        b, l,
        arith::MulFOp::create(b, l, x,
                              scalarConstant(b, l, t, 0.7071067811865476)));
  }
  Value y = arith::MulFOp::create(b, l, half, x);
  return arith::MulFOp::create(b, l, y, arith::AddFOp::create(b, l, one, inner));
}

// Float to a (signless) integer of 8 or more bits, defined for every input:
// values that fit convert by truncation toward zero; NaN, infinities and
// values out of range give the integer minimum (signed; what x86's
// conversion instructions, and so onnxruntime on x86, give) or 0
// (unsigned), never LLVM's poison.
Value floatToInteger(OpBuilder &b, Location l, Value x, Type to,
                     bool toUnsigned) {
  Type from = x.getType();
  unsigned width = to.getIntOrFloatBitWidth();
  double low = toUnsigned ? -1.0 : -std::ldexp(1.0, width - 1);
  double high = std::ldexp(1.0, toUnsigned ? width : width - 1);
  // Ordered compares: false for NaN.
  Value fits = arith::AndIOp::create(
      b, l,
      arith::CmpFOp::create(b, l,
                            toUnsigned ? arith::CmpFPredicate::OGT
                                       : arith::CmpFPredicate::OGE,
                            x, scalarConstant(b, l, from, low)),
      arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x,
                            scalarConstant(b, l, from, high)));
  Value safe =
      arith::SelectOp::create(b, l, fits, x, scalarConstant(b, l, from, 0));
  Value converted =
      toUnsigned ? Value(arith::FPToUIOp::create(b, l, to, safe))
                 : Value(arith::FPToSIOp::create(b, l, to, safe));
  Value fallback = arith::ConstantOp::create(
      b, l,
      b.getIntegerAttr(to, toUnsigned ? llvm::APInt::getZero(width)
                                      : llvm::APInt::getSignedMinValue(width)));
  return arith::SelectOp::create(b, l, fits, converted, fallback);
}

// Converts one scalar between (signless) element types with ONNX Cast
// semantics; |fromUnsigned| and |toUnsigned| give the integers' signedness.
Value castScalar(OpBuilder &b, Location l, Value x, Type to,
                 bool fromUnsigned = false, bool toUnsigned = false) {
  Type from = x.getType();
  if (from == to)
    return x;
  // fp8 and fp4 go through f32 in integer arithmetic
  // (NarrowFloatConversion.cpp).
  Type f32 = b.getF32Type();
  if (isNarrowFloat(from))
    return castScalar(b, l, extendNarrowFloat(b, l, x), to, false,
                      toUnsigned);
  if (isNarrowFloat(to))
    return truncateToNarrowFloat(b, l, castScalar(b, l, x, f32, fromUnsigned),
                                 to);
  bool fromF = isa<FloatType>(from), toF = isa<FloatType>(to);
  // Floats to int4/uint4 saturate and round (ONNX), unlike wider integers.
  if (fromF && to.isInteger(4))
    return truncateToInt4(b, l, castScalar(b, l, x, f32), toUnsigned);
  if (to.isInteger(1)) {
    Value zero = scalarConstant(b, l, from, 0);
    return fromF ? Value(arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNE,
                                               x, zero))
                 : Value(arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne,
                                               x, zero));
  }
  if (fromF && toF) {
    if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
      return arith::ExtFOp::create(b, l, to, x);
    return arith::TruncFOp::create(b, l, to, x);
  }
  if (fromF)
    return floatToInteger(b, l, x, to, toUnsigned);
  if (toF) {
    if (from.isInteger(1) || fromUnsigned)
      return arith::UIToFPOp::create(b, l, to, x);
    return arith::SIToFPOp::create(b, l, to, x);
  }
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw < tw)
    return from.isInteger(1) || fromUnsigned
               ? Value(arith::ExtUIOp::create(b, l, to, x))
               : Value(arith::ExtSIOp::create(b, l, to, x));
  return arith::TruncIOp::create(b, l, to, x);
}

using BodyFn = Value (*)(OpBuilder &, Location, ValueRange, Operation *);

// The signless integer of an unsigned one (arith takes only signless), else
// |t| itself.
Type signless(Type t) {
  if (auto it = dyn_cast<IntegerType>(t); it && it.isUnsigned())
    return IntegerType::get(t.getContext(), it.getWidth());
  return t;
}

// A generic on unsigned tensors keeps their element types; its body casts
// each scalar to the signless integer of the same width and the result
// back. Both are the same LLVM integer, so the LLVM conversion reconciles
// the casts away.
Value castScalarType(OpBuilder &b, Location l, Value v, Type to) {
  if (v.getType() == to)
    return v;
  return UnrealizedConversionCastOp::create(b, l, to, v).getResult(0);
}

Value buildSignlessElementwise(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange operands,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  return buildElementwise(
      b, loc, type, operands, [&](OpBuilder &nb, Location l, ValueRange args) {
        SmallVector<Value> plain;
        for (Value a : args)
          plain.push_back(castScalarType(nb, l, a, signless(a.getType())));
        return castScalarType(nb, l, body(nb, l, plain), type.getElementType());
      });
}

template <typename OpT, BodyFn Body>
Value lowerElementwise(OpT op, typename OpT::Adaptor adaptor,
                       ConversionPatternRewriter &rewriter) {
  Operation *raw = op.getOperation();
  auto type = cast<RankedTensorType>(op.getType());
  checkBroadcastExtents(rewriter, op.getLoc(), type, adaptor.getOperands());
  if constexpr (std::is_same_v<OpT, DivOp> || std::is_same_v<OpT, ModOp>) {
    if (!isa<FloatType>(type.getElementType()))
      checkNoZeroDivisor(rewriter, op.getLoc(), adaptor.getOperands()[1]);
  }
  return buildSignlessElementwise(
      rewriter, op.getLoc(), type, adaptor.getOperands(),
      [&](OpBuilder &b, Location l, ValueRange args) {
        return Body(b, l, args, raw);
      });
}

template <typename OpT, BodyFn Body>
using ElementwisePattern = OneResultLowering<OpT, lowerElementwise<OpT, Body>>;

FailureOr<Value> lowerCast(CastOp op, CastOp::Adaptor adaptor,
                           ConversionPatternRewriter &rewriter) {
  auto type = cast<RankedTensorType>(op.getType());
  Type to = type.getElementType();
  Type from = getElementTypeOrSelf(op.getInput().getType());
  if (!to.isIntOrFloat() || !from.isIntOrFloat())
    return rewriter.notifyMatchFailure(op, "unsupported cast types");
  return buildSignlessElementwise(
      rewriter, op.getLoc(), type, adaptor.getInput(),
      [&](OpBuilder &b, Location l, ValueRange args) {
        return castScalar(b, l, args[0], signless(to), from.isUnsignedInteger(),
                          to.isUnsignedInteger());
      });
}

Value lowerConstant(ConstantOp op, ConstantOp::Adaptor,
                    ConversionPatternRewriter &rewriter) {
  return arith::ConstantOp::create(rewriter, op.getLoc(),
                                   cast<TypedAttr>(op.getValue()));
}

} // namespace

void populateElementwiseLoweringPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ElementwisePattern<AddOp, addBody>,
               ElementwisePattern<SubOp, subBody>,
               ElementwisePattern<MulOp, mulBody>,
               ElementwisePattern<DivOp, divBody>,
               ElementwisePattern<PowOp, powBody>,
               ElementwisePattern<MaxOp, maxBody>,
               ElementwisePattern<MinOp, minBody>,
               ElementwisePattern<ModOp, modBody>,
               ElementwisePattern<EqualOp, equalBody>,
               ElementwisePattern<LessOp, lessBody>,
               ElementwisePattern<LessEqualOp, lessEqualBody>,
               ElementwisePattern<GreaterOp, greaterBody>,
               ElementwisePattern<GreaterEqualOp, greaterEqualBody>,
               ElementwisePattern<AndOp, andBody>,
               ElementwisePattern<OrOp, orBody>,
               ElementwisePattern<SqrtOp, sqrtBody>,
               ElementwisePattern<RsqrtOp, rsqrtBody>,
               ElementwisePattern<ReciprocalOp, reciprocalBody>,
               ElementwisePattern<ExpOp, expBody>,
               ElementwisePattern<LogOp, logBody>,
               ElementwisePattern<ErfOp, erfBody>,
               ElementwisePattern<TanhOp, tanhBody>,
               ElementwisePattern<SigmoidOp, sigmoidBody>,
               ElementwisePattern<SiluOp, siluBody>,
               ElementwisePattern<SinOp, sinBody>,
               ElementwisePattern<CosOp, cosBody>,
               ElementwisePattern<TanOp, mathBody<math::TanOp>>,
               ElementwisePattern<AsinOp, mathBody<math::AsinOp>>,
               ElementwisePattern<AcosOp, mathBody<math::AcosOp>>,
               ElementwisePattern<AtanOp, mathBody<math::AtanOp>>,
               ElementwisePattern<SinhOp, mathBody<math::SinhOp>>,
               ElementwisePattern<CoshOp, mathBody<math::CoshOp>>,
               ElementwisePattern<AsinhOp, mathBody<math::AsinhOp>>,
               ElementwisePattern<AcoshOp, mathBody<math::AcoshOp>>,
               ElementwisePattern<AtanhOp, mathBody<math::AtanhOp>>,
               ElementwisePattern<FloorOp, mathBody<math::FloorOp>>,
               ElementwisePattern<CeilOp, mathBody<math::CeilOp>>,
               ElementwisePattern<RoundOp, mathBody<math::RoundEvenOp>>,
               ElementwisePattern<NegOp, negBody>,
               ElementwisePattern<AbsOp, absBody>,
               ElementwisePattern<ReluOp, reluBody>,
               ElementwisePattern<NotOp, notBody>,
               ElementwisePattern<BitwiseAndOp, bitwiseAndBody>,
               ElementwisePattern<BitwiseOrOp, bitwiseOrBody>,
               ElementwisePattern<BitwiseXorOp, bitwiseXorBody>,
               ElementwisePattern<BitwiseNotOp, bitwiseNotBody>,
               ElementwisePattern<ShiftLeftOp, shiftBody<true>>,
               ElementwisePattern<ShiftRightOp, shiftBody<false>>,
               ElementwisePattern<WhereOp, whereBody>,
               ElementwisePattern<GeluOp, geluBody>,
               OneResultLowering<CastOp, lowerCast>,
               OneResultLowering<ConstantOp, lowerConstant>>(ctx);
}

} // namespace strata::lowering
