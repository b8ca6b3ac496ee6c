//===- ScatterLowering.cpp - strata scatter ops -> scf loops ---------------===//
// SPDX-License-Identifier: Apache-2.0
// scatter_elements and scatter_nd: a loop nest over the updates that
// carries the result tensor and writes (or combines) one element per
// iteration, in row-major order, so duplicate indices behave as the op
// defines (the last write wins; reductions see every update). In-place
// after bufferization: the only copy is of `data` into the result.

#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/RuntimeChecks.h"

#include "dialects/strata/IR/StrataOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace strata::ir;

namespace strata::lowering {
namespace {

// |update| combined with the element |old| it lands on, per |reduction|.
Value combine(OpBuilder &b, Location l, StringRef reduction, Value old,
              Value update) {
  if (reduction == "add")
    return addScalar(b, l, old, update);
  if (reduction == "mul")
    return mulScalar(b, l, old, update);
  if (reduction == "max")
    return maxScalar(b, l, old, update);
  if (reduction == "min")
    return minScalar(b, l, old, update);
  return update;
}

// A loop nest over |extents| carrying |into|; |position|(ivs) is where the
// update at ivs lands in it.
Value scatterLoops(
    OpBuilder &b, Location loc, ValueRange extents, Value into, Value updates,
    StringRef reduction,
    llvm::function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>
        position) {
  SmallVector<Value> lower(extents.size(),
                           arith::ConstantIndexOp::create(b, loc, 0));
  SmallVector<Value> steps(extents.size(),
                           arith::ConstantIndexOp::create(b, loc, 1));
  scf::LoopNest nest = scf::buildLoopNest(
      b, loc, lower, extents, steps, ValueRange{into},
      [&](OpBuilder &nb, Location l, ValueRange ivs, ValueRange carried) {
        SmallVector<Value> at = position(nb, l, ivs);
        Value update = tensor::ExtractOp::create(nb, l, updates, ivs);
        if (reduction != "none")
          update = combine(nb, l, reduction,
                           tensor::ExtractOp::create(nb, l, carried[0], at),
                           update);
        return scf::ValueVector{
            tensor::InsertOp::create(nb, l, update, carried[0], at)};
      });
  return nest.results.empty() ? into : nest.results[0];
}

// Dynamic dims of |updates| must match |expected| (the verifier compared
// the static ones): the loops run over |expected| and read |updates| there.
void checkUpdateExtents(OpBuilder &b, Location loc, Value updates,
                        ArrayRef<Value> expected) {
  for (auto [d, extent] : llvm::enumerate(expected))
    checkExtentsEqual(b, loc, dimValue(b, loc, updates, d), extent, d,
                      STRATA_CHECK_EXTENT_MISMATCH);
}

Value lowerScatterElements(ScatterElementsOp op,
                           ScatterElementsOp::Adaptor adaptor,
                           ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value data = adaptor.getData(), indices = adaptor.getIndices(),
        updates = adaptor.getUpdates();
  const int64_t r = typeOf(data).getRank();
  const int64_t axis = normalizedAxis(op.getAxis(), r);
  AxisPositions positions(rewriter, loc, data, indices, axis);
  SmallVector<Value> extents;
  for (int64_t d = 0; d < r; ++d)
    extents.push_back(dimValue(rewriter, loc, indices, d));
  checkUpdateExtents(rewriter, loc, updates, extents);
  return scatterLoops(rewriter, loc, extents, data, updates,
                      op.getReduction(),
                      [&](OpBuilder &b, Location l, ValueRange ivs) {
                        return positions.at(b, l, ivs);
                      });
}

Value lowerScatterND(ScatterNDOp op, ScatterNDOp::Adaptor adaptor,
                     ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value data = adaptor.getData(), indices = adaptor.getIndices(),
        updates = adaptor.getUpdates();
  const int64_t r = typeOf(data).getRank(), q = typeOf(indices).getRank();
  const int64_t width = typeOf(indices).getDimSize(q - 1);
  checkIndexTuplesInRange(rewriter, loc, indices, data, 0);
  SmallVector<Value> extents;
  for (int64_t d = 0; d + 1 < q; ++d)
    extents.push_back(dimValue(rewriter, loc, indices, d));
  for (int64_t d = width; d < r; ++d)
    extents.push_back(dimValue(rewriter, loc, data, d));
  checkUpdateExtents(rewriter, loc, updates, extents);
  SmallVector<Value> addressed;
  for (int64_t j = 0; j < width; ++j)
    addressed.push_back(dimValue(rewriter, loc, data, j));
  return scatterLoops(
      rewriter, loc, extents, data, updates, op.getReduction(),
      [&](OpBuilder &b, Location l, ValueRange ivs) {
        SmallVector<Value> tuple(ivs.take_front(q - 1)), at;
        tuple.push_back(Value());
        for (int64_t j = 0; j < width; ++j) {
          tuple.back() = arith::ConstantIndexOp::create(b, l, j);
          at.push_back(gatheredIndex(
              b, l, tensor::ExtractOp::create(b, l, indices, tuple),
              addressed[j]));
        }
        llvm::append_range(at, ivs.drop_front(q - 1));
        return at;
      });
}

} // namespace

void populateScatterLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<OneResultLowering<ScatterElementsOp, lowerScatterElements>,
               OneResultLowering<ScatterNDOp, lowerScatterND>>(
      patterns.getContext());
}

} // namespace strata::lowering
