//===- LoweringUtils.h - Builders shared by the strata lowering -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
// Small builders for lowering strata ops to linalg/tensor/arith/math on
// tensors: dynamic sizes, broadcasting elementwise generics, reductions,
// scalar constants.

#ifndef STRATA_PASSES_LOWERING_LOWERINGUTILS_H_
#define STRATA_PASSES_LOWERING_LOWERINGUTILS_H_

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <string>

namespace strata::lowering {

/// Body of an elementwise generic: scalar inputs -> scalar result.
using ScalarFn = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// The ranked tensor type of |v|.
inline mlir::RankedTensorType typeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}

/// The extent of dim |d| of |tensor| as an index value (constant if static).
mlir::Value dimValue(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tensor,
                     int64_t d);

/// The run-time extent of dynamic dim |d| of |type|, the result of
/// broadcasting |sources|: the first source's whose trailing-aligned dim at
/// that position is not a broadcast 1 (numpy alignment); null if every
/// source broadcasts there (the extent is 1).
mlir::Value broadcastExtent(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::RankedTensorType type, int64_t d,
                            mlir::ValueRange sources);

/// The extents of the dynamic dims of |type|, in order: |extentOf|(d) for
/// each dynamic dim d.
llvm::SmallVector<mlir::Value>
dynamicExtents(mlir::RankedTensorType type,
               llvm::function_ref<mlir::Value(int64_t)> extentOf);

/// tensor.empty of |type| with |dynamic| the extents of its dynamic dims.
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type, mlir::ValueRange dynamic);

/// tensor.empty of |type|, taking each dynamic extent from the first of
/// |sources| whose trailing-aligned dim at that position is not a
/// broadcast 1 (numpy alignment).
mlir::Value emptyLike(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::RankedTensorType type, mlir::ValueRange sources);

/// An elementwise linalg.generic producing |type| from |operands| broadcast
/// numpy-style to it (a static 1 against a larger result dim broadcasts;
/// other dims are assumed equal, as the verifier checked).
mlir::Value buildElementwise(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::RankedTensorType type,
                             mlir::ValueRange operands, ScalarFn body);

/// A linalg.generic over |type| (|dynamic| its dynamic extents) without
/// inputs whose element at output indices |idx| is |body|(idx).
mlir::Value buildIndexedGeneric(
    mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
    mlir::ValueRange dynamic,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::ValueRange)>
        body);

/// A scalar constant of |type| (float or integer) equal to |value|.
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Type type, double value);

/// Reduces |input| over |axes| (sorted, non-negative) with |combine|,
/// starting from |init|; keeps reduced dims as 1 when |keepDims|.
mlir::Value buildReduction(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value input, llvm::ArrayRef<int64_t> axes,
                           bool keepDims, mlir::Value init, ScalarFn combine);

/// Product of the extents of |axes| of |tensor| as a scalar of |type|.
mlir::Value countOf(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tensor,
                    llvm::ArrayRef<int64_t> axes, mlir::Type type);

/// Scalar arithmetic that picks the float or integer arith op.
mlir::Value addScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value y);
mlir::Value subScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value y);
mlir::Value mulScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value y);
mlir::Value maxScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value y);
mlir::Value minScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                      mlir::Value y);

/// The index |raw| (an integer scalar) of an access along a dim of |extent|
/// (an index): negative values count from the end. The range check
/// (checkIndicesInRange) ends a run with an index out of range; the clamp
/// into the dim keeps every access inside the tensor all the same.
mlir::Value gatheredIndex(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value raw, mlir::Value extent);

/// Where the element of |indices| at loop indices ivs addresses |data| in
/// GatherElements/ScatterElements: ivs with coordinate |axis| replaced by
/// that index (gatheredIndex) and the other coordinates clamped into
/// |data| where the verifier could not prove the indices no wider (dynamic
/// dims): no access leaves the tensor. Builds the range check of the
/// indices and the clamp bounds where constructed.
class AxisPositions {
public:
  AxisPositions(mlir::OpBuilder &b, mlir::Location loc, mlir::Value data,
                mlir::Value indices, int64_t axis);
  llvm::SmallVector<mlir::Value> at(mlir::OpBuilder &b, mlir::Location loc,
                                    mlir::ValueRange ivs) const;

private:
  mlir::Value indices_, extent_;
  int64_t axis_;
  llvm::SmallVector<mlir::Value> clampTo_;
};

/// fp32 KV rows |rows| [B, H, T, D] in a cache's |element| type, as
/// strata.cache_write stores them: bf16 rounded to nearest even, or int8
/// rows [B, H, T, D + 4] (the values, then the row's fp32 scale as 4
/// little-endian bytes); f32 rows come back unchanged (CacheEncoding.cpp).
mlir::Value encodeCacheRows(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value rows, mlir::Type element);

/// The fp32 values of cache rows in any of those forms.
mlir::Value decodeCacheRows(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value rows);

/// True for the fp8 and fp4 element types ONNX Cast converts to and from.
bool isNarrowFloat(mlir::Type t);

/// The f32 value of fp8/fp4 scalar |x| (exact), built from integer
/// operations (NarrowFloatConversion.cpp).
mlir::Value extendNarrowFloat(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value x);

/// f32 scalar |x| as fp8/fp4 type |to| with ONNX Cast (saturate=1)
/// semantics: round to nearest even, out of range values and infinities to
/// the largest finite value of their sign, NaN to NaN (+max for fp4).
mlir::Value truncateToNarrowFloat(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::Value x, mlir::Type to);

/// f32 scalar |x| as a 4-bit integer (signless i4): saturated to
/// [-8, 7] or [0, 15], rounded to nearest even, NaN to 0.
mlir::Value truncateToInt4(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value x, bool isUnsigned);

/// |axis| (an I64Attr value, which ODS hands out as uint64_t) normalized
/// into [0, rank).
inline int64_t normalizedAxis(uint64_t axis, int64_t rank) {
  int64_t a = static_cast<int64_t>(axis);
  return a < 0 ? a + rank : a;
}

/// The ONNX nodes |loc| names (NameLocs, also inside fused locations) for
/// a diagnostic: "; ONNX node 'a'" or "; ONNX nodes 'a', 'b' and 3 more";
/// "" when it names none.
std::string describeOnnxNodes(mlir::Location loc);

/// The conversion pattern of an |OpT| with one result: |lower|(op, adaptor,
/// rewriter) returns the value that replaces it, or failure (after
/// notifying the rewriter why) to leave the op to fail the conversion.
template <typename OpT, auto lower>
struct OneResultLowering : mlir::OpConversionPattern<OpT> {
  using mlir::OpConversionPattern<OpT>::OpConversionPattern;
  mlir::LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  mlir::ConversionPatternRewriter &rewriter) const override {
    mlir::FailureOr<mlir::Value> result = lower(op, adaptor, rewriter);
    if (mlir::failed(result))
      return mlir::failure();
    rewriter.replaceOp(op, *result);
    return mlir::success();
  }
};

/// Adds the lowering patterns of each op family.
void populateElementwiseLoweringPatterns(mlir::RewritePatternSet &patterns);
void populateStructuredLoweringPatterns(mlir::RewritePatternSet &patterns);
void populateDataMovementLoweringPatterns(mlir::RewritePatternSet &patterns);
void populateCacheLoweringPatterns(mlir::RewritePatternSet &patterns);
void populateWindowLoweringPatterns(mlir::RewritePatternSet &patterns);
void populateScatterLoweringPatterns(mlir::RewritePatternSet &patterns);
void populateTopKLoweringPatterns(mlir::RewritePatternSet &patterns);
void populateEinsumLoweringPatterns(mlir::RewritePatternSet &patterns);

} // namespace strata::lowering

#endif // STRATA_PASSES_LOWERING_LOWERINGUTILS_H_
