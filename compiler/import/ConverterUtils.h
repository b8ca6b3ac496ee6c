//===- ConverterUtils.h - Small helpers shared by the converters -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Type access, broadcasting binary ops and the optional `scale` attribute,
// used by several op-family converters.

#ifndef STRATA_COMPILER_IMPORT_CONVERTERUTILS_H_
#define STRATA_COMPILER_IMPORT_CONVERTERUTILS_H_

#include "compiler/import/ImportContext.h"
#include "dialects/strata/IR/ShapeRules.h"

namespace strata::import {

/// The ranked tensor type of |v| (every importer value is one).
inline mlir::RankedTensorType typeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}

/// OpT(a, b) with the numpy-broadcast result type; null if the shapes do not
/// broadcast (the caller reports it).
template <typename OpT>
mlir::Value broadcastOp(ImportContext &ctx, mlir::Value a, mlir::Value b) {
  std::optional<llvm::SmallVector<int64_t>> dims =
      ir::broadcastShapes(typeOf(a).getShape(), typeOf(b).getShape());
  if (!dims)
    return {};
  return OpT::create(
      ctx.b(), ctx.loc(),
      mlir::RankedTensorType::get(*dims, typeOf(a).getElementType()), a, b);
}

/// A comparison OpT(a, b): an i1 tensor of the numpy-broadcast shape; null
/// if the shapes do not broadcast (the caller reports it).
template <typename OpT>
mlir::Value broadcastCompare(ImportContext &ctx, mlir::Value a, mlir::Value b) {
  std::optional<llvm::SmallVector<int64_t>> dims =
      ir::broadcastShapes(typeOf(a).getShape(), typeOf(b).getShape());
  if (!dims)
    return {};
  return OpT::create(
      ctx.b(), ctx.loc(),
      mlir::RankedTensorType::get(*dims, ctx.b().getI1Type()), a, b);
}

/// The node's float attribute `scale` as an F32Attr; a null attribute when
/// it is absent or 0 (contrib ops use 0 for "1/sqrt(head_dim)").
inline mlir::FailureOr<mlir::FloatAttr> optionalScale(ImportContext &ctx) {
  if (!ctx.attr("scale"))
    return mlir::FloatAttr();
  mlir::FailureOr<float> s = ctx.floatAttr("scale", 0.0f);
  if (mlir::failed(s))
    return mlir::failure();
  return *s == 0.0f ? mlir::FloatAttr() : ctx.b().getF32FloatAttr(*s);
}

/// [B, S, H*D] -> [B, H, S, D] (reshape + transpose).
mlir::Value splitHeads(ImportContext &ctx, mlir::Value x, int64_t heads);

/// [B, H, S, D] -> [B, S, H*D] (transpose + reshape).
mlir::Value mergeHeads(ImportContext &ctx, mlir::Value x);

} // namespace strata::import

#endif // STRATA_COMPILER_IMPORT_CONVERTERUTILS_H_
