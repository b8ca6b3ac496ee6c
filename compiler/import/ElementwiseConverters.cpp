//===- ElementwiseConverters.cpp - ONNX elementwise ops -------------------===//
// SPDX-License-Identifier: Apache-2.0
// Binary ops with broadcasting, unary math, Where, Cast, Identity, Dropout.
// Integer shape arithmetic on known values is folded as it is imported.

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "compiler/import/TensorConversion.h"
#include "dialects/strata/IR/StrataOps.h"
#include "llvm/Support/MathExtras.h"

#include <onnx/onnx_pb.h>

#include <cmath>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {


// Elementwise fold of two known integer vectors with 0-D/1-D broadcasting.
static std::optional<KnownInts>
foldKnown(const std::optional<KnownInts> &a, const std::optional<KnownInts> &b,
          llvm::function_ref<std::optional<int64_t>(int64_t, int64_t)> fn) {
  if (!a || !b)
    return std::nullopt;
  size_t n = std::max(a->size(), b->size());
  if ((a->size() != n && a->size() != 1) || (b->size() != n && b->size() != 1))
    return std::nullopt;
  KnownInts result;
  for (size_t i = 0; i < n; ++i) {
    const std::optional<int64_t> &x = (*a)[a->size() == 1 ? 0 : i];
    const std::optional<int64_t> &y = (*b)[b->size() == 1 ? 0 : i];
    result.push_back(x && y ? fn(*x, *y) : std::nullopt);
  }
  return result;
}

// The integer fold of a binary op, if it has one.
static std::optional<int64_t> foldIntBinary(StringRef op, int64_t x,
                                            int64_t y) {
  int64_t r;
  if (op == "Add")
    return llvm::AddOverflow(x, y, r) ? std::nullopt : std::optional(r);
  if (op == "Sub")
    return llvm::SubOverflow(x, y, r) ? std::nullopt : std::optional(r);
  if (op == "Mul")
    return llvm::MulOverflow(x, y, r) ? std::nullopt : std::optional(r);
  if (op == "Div") // C-style truncation, as onnxruntime's integer Div
    return y == 0 || (x == INT64_MIN && y == -1) ? std::nullopt
                                                 : std::optional(x / y);
  if (op == "Equal")
    return x == y;
  if (op == "Less")
    return x < y;
  if (op == "LessOrEqual")
    return x <= y;
  if (op == "Greater")
    return x > y;
  if (op == "GreaterOrEqual")
    return x >= y;
  if (op == "And")
    return (x != 0) && (y != 0);
  if (op == "Or")
    return (x != 0) || (y != 0);
  if (op == "Mod") { // integer Mod (fmod=0): the sign of the divisor
    if (y == 0 || (x == INT64_MIN && y == -1))
      return std::nullopt;
    int64_t m = x % y;
    return m != 0 && ((m < 0) != (y < 0)) ? m + y : m;
  }
  if (op == "Max" || op == "Sum")
    return op == "Sum" ? (llvm::AddOverflow(x, y, r) ? std::nullopt
                                                     : std::optional(r))
                       : std::optional(std::max(x, y));
  if (op == "Min")
    return std::min(x, y);
  return std::nullopt;
}

template <typename OpT>
static Value createBinary(ImportContext &ctx, RankedTensorType type, Value a,
                          Value b) {
  return OpT::create(ctx.b(), ctx.loc(), type, a, b);
}

// Creates the strata op for binary ONNX |op| on |a| and |b|; null on a
// shape error (already reported).
static Value buildBinary(ImportContext &ctx, StringRef op, Value a, Value b) {
  RankedTensorType ta = typeOf(a), tb = typeOf(b);
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(ta.getShape(), tb.getShape());
  if (!shape) {
    ctx.error() << "input shapes " << formatShape(ta.getShape()) << " and "
                << formatShape(tb.getShape()) << " are not broadcastable";
    return {};
  }
  bool compare = op == "Equal" || op == "Less" || op == "LessOrEqual" ||
                 op == "Greater" || op == "GreaterOrEqual";
  Type element =
      compare ? ctx.b().getI1Type() : ta.getElementType();
  auto type = RankedTensorType::get(*shape, element);
  // Pow's exponent may have another type; strata.pow wants one type. An
  // integer base with a float exponent is raised in the exponent's type and
  // truncated back, as the ONNX reference does (2^0.5 is 1, not 2^0).
  if (op == "Pow" && isa<IntegerType>(ta.getElementType()) &&
      isa<FloatType>(tb.getElementType())) {
    Value fa = CastOp::create(
        ctx.b(), ctx.loc(),
        RankedTensorType::get(ta.getShape(), tb.getElementType()), a);
    Value p = createBinary<PowOp>(
        ctx, RankedTensorType::get(*shape, tb.getElementType()), fa, b);
    return CastOp::create(ctx.b(), ctx.loc(), type, p);
  }
  if (op == "Pow" && tb.getElementType() != ta.getElementType())
    b = CastOp::create(ctx.b(), ctx.loc(),
                       RankedTensorType::get(tb.getShape(), ta.getElementType()),
                       b);
  if (op == "Add") return createBinary<AddOp>(ctx, type, a, b);
  if (op == "Sub") return createBinary<SubOp>(ctx, type, a, b);
  if (op == "Mul") return createBinary<MulOp>(ctx, type, a, b);
  if (op == "Div") return createBinary<DivOp>(ctx, type, a, b);
  if (op == "Pow") return createBinary<PowOp>(ctx, type, a, b);
  if (op == "Sum") return createBinary<AddOp>(ctx, type, a, b);
  if (op == "Mod") {
    FailureOr<int64_t> fmod = ctx.intAttr("fmod", 0);
    if (failed(fmod))
      return {};
    if (!*fmod && isa<FloatType>(element)) {
      ctx.error() << "Mod of floats requires fmod=1";
      return {};
    }
    return ModOp::create(ctx.b(), ctx.loc(), type, a, b, *fmod != 0);
  }
  if (op == "Max") return createBinary<MaxOp>(ctx, type, a, b);
  if (op == "Min") return createBinary<MinOp>(ctx, type, a, b);
  if (op == "Equal") return createBinary<EqualOp>(ctx, type, a, b);
  if (op == "Less") return createBinary<LessOp>(ctx, type, a, b);
  if (op == "LessOrEqual") return createBinary<LessEqualOp>(ctx, type, a, b);
  if (op == "Greater") return createBinary<GreaterOp>(ctx, type, a, b);
  if (op == "GreaterOrEqual")
    return createBinary<GreaterEqualOp>(ctx, type, a, b);
  if (op == "BitwiseAnd") return createBinary<BitwiseAndOp>(ctx, type, a, b);
  if (op == "BitwiseOr") return createBinary<BitwiseOrOp>(ctx, type, a, b);
  if (op == "BitwiseXor") return createBinary<BitwiseXorOp>(ctx, type, a, b);
  if (op == "BitShift") {
    FailureOr<std::string> direction = ctx.stringAttr("direction", "");
    if (failed(direction))
      return {};
    if (*direction == "LEFT")
      return createBinary<ShiftLeftOp>(ctx, type, a, b);
    if (*direction == "RIGHT")
      return createBinary<ShiftRightOp>(ctx, type, a, b);
    ctx.error() << "'direction' must be LEFT or RIGHT, got '" << *direction
                << "'";
    return {};
  }
  if (op == "And") return createBinary<AndOp>(ctx, type, a, b);
  if (op == "Or") return createBinary<OrOp>(ctx, type, a, b);
  ctx.error() << "no binary lowering";
  return {};
}

LogicalResult convertBinary(ImportContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  StringRef op = ctx.node().op_type();
  // Opset < 7 broadcast attributes are outside the supported range; opset
  // 7+ is numpy broadcasting, which is what buildBinary implements.
  Value result = buildBinary(ctx, op, ctx.input(0), ctx.input(1));
  if (!result)
    return failure();
  // Integer Mod with fmod=1 has C semantics, which foldIntBinary does not
  // model; leave it to run time.
  const onnx::AttributeProto *fmod = ctx.attr("fmod");
  StringRef foldOp = op == "Mod" && fmod && fmod->i() ? StringRef() : op;
  ctx.setOutput(0, result,
                foldKnown(ctx.inputKnown(0), ctx.inputKnown(1),
                          [&](int64_t x, int64_t y) {
                            return foldIntBinary(foldOp, x, y);
                          }));
  return success();
}

LogicalResult convertVariadicMinMax(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  StringRef op = ctx.node().op_type();
  Value acc = ctx.input(0);
  std::optional<KnownInts> known = ctx.inputKnown(0);
  for (int i = 1; i < ctx.node().input_size(); ++i) {
    if (!ctx.hasInput(i))
      continue;
    acc = buildBinary(ctx, op, acc, ctx.input(i));
    if (!acc)
      return failure();
    known = foldKnown(known, ctx.inputKnown(i), [&](int64_t x, int64_t y) {
      return foldIntBinary(op, x, y);
    });
  }
  ctx.setOutput(0, acc, known);
  return success();
}

LogicalResult convertUnary(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  StringRef op = ctx.node().op_type();
  Value x = ctx.input(0);
  Type type = x.getType();
  OpBuilder &b = ctx.b();
  Location loc = ctx.loc();
  Value y;
  std::optional<KnownInts> known;
  if (op == "Sqrt") y = SqrtOp::create(b, loc, type, x);
  else if (op == "Reciprocal") y = ReciprocalOp::create(b, loc, type, x);
  else if (op == "Exp") y = ExpOp::create(b, loc, type, x);
  else if (op == "Log") y = LogOp::create(b, loc, type, x);
  else if (op == "Erf") y = ErfOp::create(b, loc, type, x);
  else if (op == "Tanh") y = TanhOp::create(b, loc, type, x);
  else if (op == "Sigmoid") y = SigmoidOp::create(b, loc, type, x);
  else if (op == "Relu") y = ReluOp::create(b, loc, type, x);
  else if (op == "Abs") y = AbsOp::create(b, loc, type, x);
  else if (op == "Sin") y = SinOp::create(b, loc, type, x);
  else if (op == "Cos") y = CosOp::create(b, loc, type, x);
  else if (op == "Tan") y = TanOp::create(b, loc, type, x);
  else if (op == "Asin") y = AsinOp::create(b, loc, type, x);
  else if (op == "Acos") y = AcosOp::create(b, loc, type, x);
  else if (op == "Atan") y = AtanOp::create(b, loc, type, x);
  else if (op == "Sinh") y = SinhOp::create(b, loc, type, x);
  else if (op == "Cosh") y = CoshOp::create(b, loc, type, x);
  else if (op == "Asinh") y = AsinhOp::create(b, loc, type, x);
  else if (op == "Acosh") y = AcoshOp::create(b, loc, type, x);
  else if (op == "Atanh") y = AtanhOp::create(b, loc, type, x);
  else if (op == "Floor") y = FloorOp::create(b, loc, type, x);
  else if (op == "Ceil") y = CeilOp::create(b, loc, type, x);
  else if (op == "Round") y = RoundOp::create(b, loc, type, x);
  else if (op == "BitwiseNot") y = BitwiseNotOp::create(b, loc, type, x);
  else if (op == "Neg") {
    y = NegOp::create(b, loc, type, x);
    if (const std::optional<KnownInts> &in = ctx.inputKnown(0)) {
      known.emplace();
      for (const std::optional<int64_t> &v : *in)
        known->push_back(v && *v != INT64_MIN ? std::optional(-*v)
                                              : std::nullopt);
    }
  } else if (op == "Not") {
    y = NotOp::create(b, loc, type, x);
    if (const std::optional<KnownInts> &in = ctx.inputKnown(0)) {
      known.emplace();
      for (const std::optional<int64_t> &v : *in)
        known->push_back(v ? std::optional<int64_t>(*v == 0) : std::nullopt);
    }
  } else {
    return ctx.error() << "no unary lowering";
  }
  ctx.setOutput(0, y, known);
  return success();
}

LogicalResult convertWhere(ImportContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  Value c = ctx.input(0), x = ctx.input(1), y = ctx.input(2);
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(typeOf(c).getShape(), typeOf(x).getShape());
  if (shape)
    shape = broadcastShapes(*shape, typeOf(y).getShape());
  if (!shape)
    return ctx.error() << "input shapes " << formatShape(typeOf(c).getShape())
                       << ", " << formatShape(typeOf(x).getShape()) << " and "
                       << formatShape(typeOf(y).getShape())
                       << " are not broadcastable";
  auto type = RankedTensorType::get(*shape, typeOf(x).getElementType());
  Value result = WhereOp::create(ctx.b(), ctx.loc(), type, c, x, y);
  // where(known cond, known x, known y) folds; exporters build Expand
  // shapes this way.
  std::optional<KnownInts> known;
  const auto &kc = ctx.inputKnown(0), &kx = ctx.inputKnown(1),
             &ky = ctx.inputKnown(2);
  if (kc && kx && ky) {
    auto sel = foldKnown(kc, kx, [](int64_t cond, int64_t v) {
      return std::optional<int64_t>(cond ? v : INT64_MIN);
    });
    known = foldKnown(sel, ky, [](int64_t s, int64_t v) {
      return std::optional<int64_t>(s == INT64_MIN ? v : s);
    });
    // The sentinel trick above breaks if x legitimately holds INT64_MIN;
    // such a value never appears in shape arithmetic, but be exact anyway.
    if (known && llvm::any_of(*kx, [](auto &v) { return v == INT64_MIN; }))
      known.reset();
  }
  ctx.setOutput(0, result, known);
  return success();
}

LogicalResult convertCast(ImportContext &ctx) {
  bool castLike = ctx.node().op_type() == "CastLike";
  if (failed(ctx.requireInputs(castLike ? 2 : 1)))
    return failure();
  Value x = ctx.input(0);
  Type target;
  if (castLike) {
    target = typeOf(ctx.input(1)).getElementType();
  } else {
    const onnx::AttributeProto *to = ctx.attr("to");
    if (!to || to->type() != onnx::AttributeProto::INT)
      return ctx.error() << "expected INT attribute 'to'";
    target = convertElementType(static_cast<int32_t>(to->i()), ctx.context());
    if (!target)
      return ctx.error() << "cannot cast to unsupported type "
                         << onnxDataTypeName(static_cast<int32_t>(to->i()));
  }
  // saturate (opset 19) only matters for fp8 targets: strata.cast
  // saturates (out-of-range values and infinities become the largest finite
  // value). Without saturation they become NaN in the formats without
  // infinity: mark those inputs NaN first, which the cast keeps NaN.
  FailureOr<int64_t> saturate = ctx.intAttr("saturate", 1);
  if (failed(saturate))
    return failure();
  if (!*saturate && isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
                        Float8E5M2FNUZType>(target)) {
    Type from = typeOf(x).getElementType();
    if (isa<Float8E5M2Type>(target) || !isa<FloatType>(from))
      return ctx.error() << "saturate=0 is supported only from a float type "
                            "to an fp8 type without infinity";
    // The smallest magnitude that rounds past the largest finite value
    // (ties to even): 448 + 16 ties down, 240 + 8 and 57344 + 4096 tie up.
    double threshold = isa<Float8E4M3FNType>(target)    ? 464.0
                       : isa<Float8E4M3FNUZType>(target) ? 248.0
                                                          : 61440.0;
    bool tieOverflows = !isa<Float8E4M3FNType>(target);
    OpBuilder &b = ctx.b();
    auto boolType = RankedTensorType::get(typeOf(x).getShape(), b.getI1Type());
    Value magnitude = AbsOp::create(b, ctx.loc(), x.getType(), x);
    Value limit = ctx.constScalar(from, threshold);
    Value overflow =
        tieOverflows
            ? Value(GreaterEqualOp::create(b, ctx.loc(), boolType, magnitude,
                                           limit))
            : Value(GreaterOp::create(b, ctx.loc(), boolType, magnitude,
                                      limit));
    x = WhereOp::create(b, ctx.loc(), x.getType(), overflow,
                        ctx.constScalar(from, std::nan("")), x);
  }
  auto type = RankedTensorType::get(typeOf(x).getShape(), target);
  Value y = type == x.getType()
                ? x
                : Value(CastOp::create(ctx.b(), ctx.loc(), type, x));
  // Integer-to-integer casts of shape values keep what is known.
  std::optional<KnownInts> known;
  if (isa<IntegerType>(target) && !target.isInteger(1) &&
      isa<IntegerType>(typeOf(x).getElementType()))
    known = ctx.inputKnown(0);
  ctx.setOutput(0, y, known);
  return success();
}

LogicalResult convertIdentity(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  ctx.setOutput(0, ctx.input(0), ctx.inputKnown(0));
  return success();
}

LogicalResult convertDropout(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  // Inference: Dropout is the identity unless training_mode is on. In
  // training mode a ratio of 0 keeps everything too (the scale is 1).
  if (ctx.hasInput(2)) {
    std::optional<SmallVector<int64_t>> training = ctx.inputConstInts(2);
    if (!training || training->size() != 1)
      return ctx.error() << "training_mode must be a constant for inference";
    if ((*training)[0] != 0) {
      std::optional<double> ratio =
          ctx.hasInput(1) ? ctx.inputConstFloat(1) : std::nullopt;
      if (!ratio || *ratio != 0.0)
        return ctx.error() << "training_mode=true needs a constant ratio of 0 "
                              "(random dropout is not supported)";
    }
  }
  ctx.setOutput(0, ctx.input(0), ctx.inputKnown(0));
  if (ctx.outputUsed(1)) {
    // In inference every element is kept: the mask is all true.
    RankedTensorType in = ctx.inputType(0);
    auto maskType = RankedTensorType::get(in.getShape(), ctx.b().getI1Type());
    if (!maskType.hasStaticShape())
      return ctx.error() << "the 'mask' output of a dynamic shape is not "
                            "supported";
    ctx.setOutput(1, ConstantOp::create(ctx.b(), ctx.loc(),
                                        DenseElementsAttr::get(maskType, true)));
  }
  return success();
}

} // namespace strata::import
