//===- NormPatterns.h - Pieces of decomposed normalizations -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// The parts LayerNorm and RMSNorm chains share: a mean over trailing axes,
// a square, `+ epsilon`, a division by the square root, a trailing scale.

#ifndef STRATA_PASSES_NORMPATTERNS_H_
#define STRATA_PASSES_NORMPATTERNS_H_

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace strata {

/// A matched norm chain: operands (|bias| only for a layer norm),
/// attributes, the final op and every op it replaces (in chain order, for
/// the fused location).
struct NormMatch {
  mlir::Value input, scale, bias;
  int64_t axis = 0;
  double epsilon = 0.0;
  mlir::Operation *root = nullptr;
  llvm::SmallVector<mlir::Operation *> ops;
};

/// The axes |mean| reduces, non-negative and sorted, if they are the
/// trailing dims of a ranked input and the dims are kept.
std::optional<llvm::SmallVector<int64_t>>
trailingReducedAxes(ir::ReduceMeanOp mean);

/// The f16 or bf16 value |v| widens to f32 by a strata.cast (the fp32
/// island exporters compute norms in), or null.
mlir::Value widenedFrom(mlir::Value v);

/// The value |op| squares (`d * d` or `pow(d, 2)`), or null.
mlir::Value squaredValue(mlir::Operation *op);

/// `var + epsilon`, the only user of |var|, of |var|'s type, with a
/// non-negative scalar constant epsilon (either operand order).
struct EpsilonAdd {
  ir::AddOp add;
  double epsilon;
};
std::optional<EpsilonAdd> matchPlusEpsilon(mlir::Value var);

/// Matches |n| / sqrt(|v|) built from |v|'s single-use chain:
/// Div(n, Sqrt(v)), Mul(n, Reciprocal(Sqrt(v))), Mul(n, Div(1, Sqrt(v))) or
/// Mul(n, Rsqrt(v)), multiplications in either operand order. Appends the
/// matched ops to |ops| and returns the result, or a null value.
mlir::Value matchDivideBySqrt(mlir::Value v, mlir::Value n,
                              llvm::SmallVectorImpl<mlir::Operation *> &ops);

/// Extends |match| by the only user of its root's value, an |OpTy| (mul
/// for a scale, add for a bias) of that value and a value of the static
/// |shape| and the element type of |type| (either order) whose result has
/// |type|: returns that value, or null with |match| unchanged.
template <typename OpTy>
mlir::Value extendByTrailing(NormMatch &match, mlir::RankedTensorType type,
                             llvm::ArrayRef<int64_t> shape);

/// |match| if every intermediate value of its chain is used only inside
/// it (the chain can be replaced), else std::nullopt with |reason| set.
std::optional<NormMatch> replaceableNorm(const NormMatch &match,
                                         std::string &reason);

/// |scale| or, when it is null, a constant of ones with the dims of |type|
/// from |axis| on (the scale of a norm written without one).
mlir::Value scaleOrOnes(mlir::OpBuilder &builder, mlir::Location loc,
                        mlir::Value scale, mlir::RankedTensorType type,
                        int64_t axis);

/// The |NormOp| (strata.layer_norm or strata.rms_norm) that computes
/// |match|, at |loc|.
template <typename NormOp>
mlir::Value buildNorm(mlir::OpBuilder &builder, mlir::Location loc,
                      const NormMatch &match) {
  auto xType = llvm::cast<mlir::RankedTensorType>(match.input.getType());
  mlir::Value scale = scaleOrOnes(builder, loc, match.scale, xType, match.axis);
  mlir::IntegerAttr axis = builder.getI64IntegerAttr(match.axis);
  mlir::FloatAttr epsilon =
      builder.getF32FloatAttr(static_cast<float>(match.epsilon));
  if constexpr (std::is_same_v<NormOp, ir::LayerNormOp>)
    return NormOp::create(builder, loc, xType, match.input, scale, match.bias,
                          axis, epsilon);
  else
    return NormOp::create(builder, loc, xType, match.input, scale, axis,
                          epsilon);
}

} // namespace strata

#endif // STRATA_PASSES_NORMPATTERNS_H_
