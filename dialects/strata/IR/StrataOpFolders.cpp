//===- StrataOpFolders.cpp - Folders and canonicalization patterns --------===//
// SPDX-License-Identifier: Apache-2.0
// Every folder and pattern here has a case in
// test/dialects/strata/canonicalize.mlir.

#include "dialects/strata/IR/StrataOps.h"

#include "dialects/strata/IR/ShapeRules.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace strata::ir {

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Involutions
//===----------------------------------------------------------------------===//

// neg(neg(x)) -> x
OpFoldResult NegOp::fold(FoldAdaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  return {};
}

// not(not(x)) -> x
OpFoldResult NotOp::fold(FoldAdaptor) {
  if (auto inner = getInput().getDefiningOp<NotOp>())
    return inner.getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

// cast(x : T -> T) -> x
OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// ReduceOps
//===----------------------------------------------------------------------===//

namespace {
// reduce {axes = [-1, 0]} -> reduce {axes = [0, rank-1]}: sorted,
// non-negative axes, so fusion patterns compare one spelling.
template <typename ReduceOpT>
struct NormalizeReduceAxes : OpRewritePattern<ReduceOpT> {
  using OpRewritePattern<ReduceOpT>::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceOpT op,
                                PatternRewriter &rewriter) const override {
    int64_t rank = cast<RankedTensorType>(op.getInput().getType()).getRank();
    SmallVector<int64_t> axes;
    for (int64_t axis : op.getAxes()) {
      std::optional<int64_t> n = normalizeAxis(axis, rank);
      if (!n)
        return failure(); // the verifier reports it
      axes.push_back(*n);
    }
    llvm::sort(axes);
    if (ArrayRef<int64_t>(axes) == op.getAxes())
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op.setAxes(axes); });
    return success();
  }
};
} // namespace

void ReduceSumOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<NormalizeReduceAxes<ReduceSumOp>>(context);
}
void ReduceMeanOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                               MLIRContext *context) {
  results.add<NormalizeReduceAxes<ReduceMeanOp>>(context);
}
void ReduceMaxOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<NormalizeReduceAxes<ReduceMaxOp>>(context);
}
void ReduceProdOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                               MLIRContext *context) {
  results.add<NormalizeReduceAxes<ReduceProdOp>>(context);
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

// reshape(x : T -> T) -> x for static T; reshape(constant) -> constant.
OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  auto resultType = cast<RankedTensorType>(getType());
  if (!resultType.hasStaticShape())
    return {};
  if (getInput().getType() == resultType)
    return getInput();
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput()))
    return dense.reshape(resultType);
  return {};
}

namespace {
// reshape(reshape(x)) -> reshape(x): only the outer shape matters.
struct ComposeReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ReshapeOp>();
    // A 0 in a run-time shape copies a dim of the input, which would change.
    if (!inner || (op.getShape() && !op.getAllowZero()))
      return failure();
    rewriter.modifyOpInPlace(
        op, [&] { op.getInputMutable().assign(inner.getInput()); });
    return success();
  }
};

// reshape(x, %shape) -> reshape(x) once the result type is static: the
// shape operand carries nothing the type does not.
struct DropStaticReshapeShape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getShape() ||
        !cast<RankedTensorType>(op.getType()).hasStaticShape())
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput(),
                                           Value());
    return success();
  }
};
} // namespace

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<ComposeReshapes, DropStaticReshapeShape>(context);
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

// transpose(x, identity) -> x
OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, p] : llvm::enumerate(getPermutation()))
    if ((int64_t)i != p)
      return {};
  if (getInput().getType() != getType())
    return {};
  return getInput();
}

namespace {
// transpose(transpose(x, p1), p2) -> transpose(x, p1[p2[i]])
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return failure();
    ArrayRef<int64_t> p1 = inner.getPermutation(), p2 = op.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t p : p2)
      composed.push_back(p1[p]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(), inner.getInput(),
                                             composed);
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ComposeTransposes>(context);
}

//===----------------------------------------------------------------------===//
// ShapeOp
//===----------------------------------------------------------------------===//

// shape(x) -> constant when the requested extents are static.
OpFoldResult ShapeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(getInput().getType()).getShape();
  int64_t rank = shape.size();
  auto clampBound = [&](int64_t b) {
    return std::clamp<int64_t>(b < 0 ? b + rank : b, 0, rank);
  };
  int64_t start = clampBound(getStart());
  int64_t end = clampBound(getEnd().value_or(rank));
  SmallVector<int64_t> extents;
  for (int64_t i = start; i < end; ++i) {
    if (ShapedType::isDynamic(shape[i]))
      return {};
    extents.push_back(shape[i]);
  }
  auto type = cast<RankedTensorType>(getType());
  if (!type.hasStaticShape() || type.getDimSize(0) != (int64_t)extents.size())
    return {};
  return DenseElementsAttr::get(type, ArrayRef<int64_t>(extents));
}

//===----------------------------------------------------------------------===//
// CheckOp
//===----------------------------------------------------------------------===//

// A check whose condition folded to false can never fail.
LogicalResult CheckOp::canonicalize(CheckOp op, PatternRewriter &rewriter) {
  if (!matchPattern(op.getFailed(), m_Zero()))
    return failure();
  rewriter.eraseOp(op);
  return success();
}

} // namespace strata::ir
