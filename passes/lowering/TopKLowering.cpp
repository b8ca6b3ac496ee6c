//===- TopKLowering.cpp - strata.top_k -> scf loops ------------------------===//
// SPDX-License-Identifier: Apache-2.0
// Selection by k scans of each row: scan j picks the best element ranked
// after the one scan j - 1 picked, in the total order "better value first,
// equal values by lower index" (NaN above every number). k scans of n
// elements and no scratch memory: right for the k of sampling and
// classification heads (k << n); a sort would pay off for k near n.

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

// Compares element values in the op's total order.
struct ValueOrder {
  bool largest;
  bool isFloat;

  // a ranks above b as a number: a > b, NaN above every number.
  Value above(OpBuilder &b, Location l, Value x, Value y) const {
    if (!isFloat)
      return arith::CmpIOp::create(b, l, arith::CmpIPredicate::sgt, x, y);
    Value greater =
        arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, y);
    Value xNaN = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x);
    Value yNumber =
        arith::CmpFOp::create(b, l, arith::CmpFPredicate::ORD, y, y);
    return arith::OrIOp::create(b, l, greater,
                                arith::AndIOp::create(b, l, xNaN, yNumber));
  }
  Value equal(OpBuilder &b, Location l, Value x, Value y) const {
    if (!isFloat)
      return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, y);
    Value same = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, y);
    Value bothNaN = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, y);
    Value xNaN = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x);
    Value yNaN = arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, y, y);
    return arith::OrIOp::create(
        b, l, same,
        arith::AndIOp::create(b, l, bothNaN,
                              arith::AndIOp::create(b, l, xNaN, yNaN)));
  }
  // Value x beats value y: comes first in the result.
  Value beats(OpBuilder &b, Location l, Value x, Value y) const {
    return largest ? above(b, l, x, y) : above(b, l, y, x);
  }
  // (x, i) comes before (y, j): a better value, or an equal one at a lower
  // index.
  Value before(OpBuilder &b, Location l, Value x, Value i, Value y,
               Value j) const {
    Value lower = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, i, j);
    return arith::OrIOp::create(
        b, l, beats(b, l, x, y),
        arith::AndIOp::create(b, l, equal(b, l, x, y), lower));
  }
};

struct TopKLowering : OpConversionPattern<TopKOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TopKOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    RankedTensorType it = typeOf(input);
    Type element = it.getElementType();
    const int64_t r = it.getRank();
    const int64_t axis = normalizedAxis(op.getAxis(), r);
    const ValueOrder order{op.getLargest(), isa<FloatType>(element)};
    auto cIdx = [&](OpBuilder &b, Location l, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, l, v);
    };
    Value n = dimValue(rewriter, loc, input, axis);
    Value k = cIdx(rewriter, loc, op.getK());
    if (it.isDynamicDim(axis)) {
      // k - 1 must be an index of the axis.
      Value tooFew =
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt, n, k);
      emitCheck(rewriter, loc, tooFew, STRATA_CHECK_INDEX_RANGE,
                cIdx(rewriter, loc, op.getK() - 1), cIdx(rewriter, loc, 0),
                arith::SubIOp::create(rewriter, loc, n,
                                      cIdx(rewriter, loc, 1)));
    }
    auto valuesType = cast<RankedTensorType>(op.getValues().getType());
    auto indicesType = cast<RankedTensorType>(op.getIndices().getType());
    SmallVector<Value> dynamic = dynamicExtents(valuesType, [&](int64_t d) {
      return dimValue(rewriter, loc, input, d);
    });
    Value values = emptyTensor(rewriter, loc, valuesType, dynamic);
    Value indices = emptyTensor(rewriter, loc, indicesType, dynamic);

    SmallVector<Value> rows, lower, steps;
    for (int64_t d = 0; d < r; ++d)
      if (d != axis) {
        rows.push_back(dimValue(rewriter, loc, input, d));
        lower.push_back(cIdx(rewriter, loc, 0));
        steps.push_back(cIdx(rewriter, loc, 1));
      }
    Value zero = cIdx(rewriter, loc, 0), one = cIdx(rewriter, loc, 1);
    Value none = cIdx(rewriter, loc, -1);
    Value anyValue = scalarConstant(rewriter, loc, element, 0);
    scf::LoopNest nest = scf::buildLoopNest(
        rewriter, loc, lower, rows, steps, ValueRange{values, indices},
        [&](OpBuilder &b, Location l, ValueRange row, ValueRange outs) {
          auto at = [&](Value i) {
            SmallVector<Value> full(row.begin(), row.end());
            full.insert(full.begin() + axis, i);
            return full;
          };
          auto picks = scf::ForOp::create(
              b, l, zero, k, one,
              ValueRange{outs[0], outs[1], anyValue, none},
              [&](OpBuilder &pb, Location pl, Value j, ValueRange state) {
                Value prevValue = state[2], prevIndex = state[3];
                auto scan = scf::ForOp::create(
                    pb, pl, zero, n, one, ValueRange{anyValue, none},
                    [&](OpBuilder &sb, Location sl, Value i,
                        ValueRange best) {
                      Value v = tensor::ExtractOp::create(sb, sl, input, at(i));
                      Value first = arith::CmpIOp::create(
                          sb, sl, arith::CmpIPredicate::slt, prevIndex, zero);
                      Value eligible = arith::OrIOp::create(
                          sb, sl, first,
                          order.before(sb, sl, prevValue, prevIndex, v, i));
                      Value empty = arith::CmpIOp::create(
                          sb, sl, arith::CmpIPredicate::slt, best[1], zero);
                      // Scanning up, an equal value never displaces the
                      // earlier index.
                      Value better = arith::OrIOp::create(
                          sb, sl, empty, order.beats(sb, sl, v, best[0]));
                      Value take =
                          arith::AndIOp::create(sb, sl, eligible, better);
                      scf::YieldOp::create(
                          sb, sl,
                          ValueRange{
                              arith::SelectOp::create(sb, sl, take, v, best[0]),
                              arith::SelectOp::create(sb, sl, take, i,
                                                      best[1])});
                    });
                Value value = scan.getResult(0), index = scan.getResult(1);
                Value written =
                    tensor::InsertOp::create(pb, pl, value, state[0], at(j));
                Value index64 = arith::IndexCastOp::create(
                    pb, pl, pb.getI64Type(), index);
                Value writtenIndex =
                    tensor::InsertOp::create(pb, pl, index64, state[1], at(j));
                scf::YieldOp::create(
                    pb, pl, ValueRange{written, writtenIndex, value, index});
              });
          return scf::ValueVector{picks.getResult(0), picks.getResult(1)};
        });
    if (nest.results.empty())
      return rewriter.notifyMatchFailure(op, "expected a loop nest");
    rewriter.replaceOp(op, nest.results);
    return success();
  }
};

} // namespace

void populateTopKLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<TopKLowering>(patterns.getContext());
}

} // namespace strata::lowering
