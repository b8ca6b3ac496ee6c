//===- Formula.h - Elementwise formulas built from strata ops --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// For ONNX ops the spec defines by a formula over other ops (activations,
// optimizers, normalizations): the formula is written once in C++ and
// imported as strata's elementwise ops, which fusion and codegen treat as
// any other elementwise chain.

#ifndef STRATA_COMPILER_IMPORT_FORMULA_H_
#define STRATA_COMPILER_IMPORT_FORMULA_H_

#include "compiler/import/ConverterUtils.h"
#include "compiler/import/ImportContext.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

namespace strata::import {

/// Elementwise building blocks on values of one element type, with numpy
/// broadcasting; a null Value once a shape did not broadcast (reported).
class Formula {
public:
  Formula(ImportContext &ctx, mlir::Type element)
      : ctx_(ctx), element_(element) {}

  mlir::Value c(double value) { return ctx_.constScalar(element_, value); }

  template <typename OpT> mlir::Value unary(mlir::Value x) {
    if (!x)
      return {};
    return OpT::create(ctx_.b(), ctx_.loc(), x.getType(), x);
  }
  template <typename OpT> mlir::Value binary(mlir::Value a, mlir::Value b) {
    if (!a || !b)
      return {};
    mlir::Value r = broadcastOp<OpT>(ctx_, a, b);
    if (!r)
      reportShapes(a, b);
    return r;
  }
  /// A comparison: an i1 result of the broadcast shape.
  template <typename OpT> mlir::Value compare(mlir::Value a, mlir::Value b) {
    if (!a || !b)
      return {};
    mlir::Value r = broadcastCompare<OpT>(ctx_, a, b);
    if (!r)
      reportShapes(a, b);
    return r;
  }
  mlir::Value where(mlir::Value cond, mlir::Value x, mlir::Value y) {
    if (!cond || !x || !y)
      return {};
    std::optional<llvm::SmallVector<int64_t>> dims =
        ir::broadcastShapes(typeOf(cond).getShape(), typeOf(x).getShape());
    if (dims)
      dims = ir::broadcastShapes(*dims, typeOf(y).getShape());
    if (!dims) {
      reportShapes(x, y);
      return {};
    }
    return ir::WhereOp::create(
        ctx_.b(), ctx_.loc(),
        mlir::RankedTensorType::get(*dims, typeOf(x).getElementType()), cond, x,
        y);
  }
  mlir::Value add(mlir::Value a, mlir::Value b) {
    return binary<ir::AddOp>(a, b);
  }
  mlir::Value sub(mlir::Value a, mlir::Value b) {
    return binary<ir::SubOp>(a, b);
  }
  mlir::Value mul(mlir::Value a, mlir::Value b) {
    return binary<ir::MulOp>(a, b);
  }
  mlir::Value div(mlir::Value a, mlir::Value b) {
    return binary<ir::DivOp>(a, b);
  }
  mlir::Value max(mlir::Value a, mlir::Value b) {
    return binary<ir::MaxOp>(a, b);
  }
  mlir::Value min(mlir::Value a, mlir::Value b) {
    return binary<ir::MinOp>(a, b);
  }
  mlir::Value exp(mlir::Value x) { return unary<ir::ExpOp>(x); }
  mlir::Value log(mlir::Value x) { return unary<ir::LogOp>(x); }
  mlir::Value abs(mlir::Value x) { return unary<ir::AbsOp>(x); }
  mlir::Value sqrt(mlir::Value x) { return unary<ir::SqrtOp>(x); }
  mlir::Value pow(mlir::Value a, mlir::Value b) {
    return binary<ir::PowOp>(a, b);
  }
  /// |x| converted to this formula's element type.
  mlir::Value cast(mlir::Value x) {
    if (!x || typeOf(x).getElementType() == element_)
      return x;
    return ir::CastOp::create(
        ctx_.b(), ctx_.loc(),
        mlir::RankedTensorType::get(typeOf(x).getShape(), element_), x);
  }
  mlir::Value neg(mlir::Value x) { return unary<ir::NegOp>(x); }
  /// log(1 + exp(x)) as max(x, 0) + log(1 + exp(-|x|)): the same value
  /// without exp's overflow for large x.
  mlir::Value softplus(mlir::Value x) {
    return add(max(x, c(0)), log(add(c(1), exp(neg(abs(x))))));
  }

private:
  void reportShapes(mlir::Value a, mlir::Value b) {
    ctx_.error() << "input shapes " << ir::formatShape(typeOf(a).getShape())
                 << " and " << ir::formatShape(typeOf(b).getShape())
                 << " are not broadcastable";
  }

  ImportContext &ctx_;
  mlir::Type element_;
};

} // namespace strata::import

#endif // STRATA_COMPILER_IMPORT_FORMULA_H_
