//===- GlobalBlocks.cpp - A window's keys in linalg -----------------------===//
// SPDX-License-Identifier: Apache-2.0
// Three generics: each key block's sum (a reduction whose output map
// folds keys into blocks), each query's score of each block (a
// contraction over the head dim), and each block's rank among the query's
// candidates (a reduction over the other blocks). A key is in a chosen
// block when its block is a candidate ranked below topk: the top-k without
// a sort, O(blocks^2) per query, acceptable for the reference path. A
// window keeps a key in it, among its sinks or in such a block.

#include "passes/lowering/GlobalBlocks.h"

#include "passes/lowering/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <limits>

using namespace mlir;

namespace strata::lowering {
namespace {

Value index(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value zerosOf(OpBuilder &b, Location loc, RankedTensorType type,
              ValueRange dynamic) {
  Value empty = emptyTensor(b, loc, type, dynamic);
  Value zero = scalarConstant(b, loc, type.getElementType(), 0.0);
  return linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{empty})
      .getResult(0);
}

Value toF32(OpBuilder &b, Location loc, Value x) {
  return x.getType().isF32()
             ? x
             : Value(arith::ExtFOp::create(b, loc, b.getF32Type(), x));
}

// Block c is a candidate for a query whose last key is |last|: wholly
// before its window and not wholly among its sinks,
// sinks < (c + 1) * block <= last - window + 1.
Value isCandidate(OpBuilder &b, Location loc, const GlobalBlocks &spec, Value c,
                  Value last) {
  Value end = arith::MulIOp::create(
      b, loc, arith::AddIOp::create(b, loc, c, index(b, loc, 1)),
      index(b, loc, spec.block));
  Value windowStart =
      arith::SubIOp::create(b, loc, last, index(b, loc, spec.window - 1));
  Value pastSinks = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                          end, index(b, loc, spec.sinks));
  Value beforeWindow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                             end, windowStart);
  return arith::AndIOp::create(b, loc, pastSinks, beforeWindow);
}

} // namespace

Value globalBlockRanks(OpBuilder &b, Location loc, Value query, Value keys,
                       const GlobalBlocks &spec, LastKeyFn lastKey) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType qt = typeOf(query), kt = typeOf(keys);
  const int64_t group = qt.getDimSize(1) / kt.getDimSize(1);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto ceilBlocks = [&](int64_t n) {
    return ShapedType::isDynamic(n) ? ShapedType::kDynamic
                                    : (n + spec.block - 1) / spec.block;
  };
  Value blocks = arith::CeilDivUIOp::create(b, loc, dimValue(b, loc, keys, 2),
                                            index(b, loc, spec.block));
  Type f32 = b.getF32Type();

  // sums[b, g, c, e] = sum over keys j of block c of keys[b, g, j, e].
  auto sumsType =
      RankedTensorType::get({kt.getDimSize(0), kt.getDimSize(1),
                             ceilBlocks(kt.getDimSize(2)), kt.getDimSize(3)},
                            f32);
  SmallVector<Value> sumsDynamic = dynamicExtents(sumsType, [&](int64_t i) {
    return i == 2 ? blocks : dimValue(b, loc, keys, i);
  });
  Value sums =
      linalg::GenericOp::create(
          b, loc, TypeRange{sumsType}, ValueRange{keys},
          ValueRange{zerosOf(b, loc, sumsType, sumsDynamic)},
          {AffineMap::getMultiDimIdentityMap(4, ctx),
           AffineMap::get(4, 0, {d(0), d(1), d(2).floorDiv(spec.block), d(3)},
                          ctx)},
          {utils::IteratorType::parallel, utils::IteratorType::parallel,
           utils::IteratorType::reduction, utils::IteratorType::parallel},
          [&](OpBuilder &nb, Location l, ValueRange a) {
            linalg::YieldOp::create(
                nb, l,
                Value(arith::AddFOp::create(nb, l, a[1], toF32(nb, l, a[0]))));
          })
          .getResult(0);

  // scores[b, h, i, c] = sum_e query[b, h, i, e] * sums[b, h / group, c, e]
  auto scoresType =
      RankedTensorType::get({qt.getDimSize(0), qt.getDimSize(1),
                             qt.getDimSize(2), ceilBlocks(kt.getDimSize(2))},
                            f32);
  auto scoresDynamic = [&](RankedTensorType type) {
    return dynamicExtents(type, [&](int64_t i) {
      return i == 3 ? blocks : dimValue(b, loc, query, i);
    });
  };
  Value scores =
      linalg::GenericOp::create(
          b, loc, TypeRange{scoresType}, ValueRange{query, sums},
          ValueRange{zerosOf(b, loc, scoresType, scoresDynamic(scoresType))},
          {AffineMap::get(5, 0, {d(0), d(1), d(2), d(4)}, ctx),
           AffineMap::get(5, 0, {d(0), d(1).floorDiv(group), d(3), d(4)}, ctx),
           AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx)},
          {utils::IteratorType::parallel, utils::IteratorType::parallel,
           utils::IteratorType::parallel, utils::IteratorType::parallel,
           utils::IteratorType::reduction},
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value p = arith::MulFOp::create(nb, l, toF32(nb, l, a[0]), a[1]);
            linalg::YieldOp::create(
                nb, l, Value(arith::AddFOp::create(nb, l, a[2], p)));
          })
          .getResult(0);

  // ranks[b, h, i, c] = #{candidates c2 : scores c2 > scores c, or equal
  // and c2 < c}.
  auto ranksType = RankedTensorType::get(scoresType.getShape(), b.getI32Type());
  return linalg::GenericOp::create(
             b, loc, TypeRange{ranksType}, ValueRange{scores, scores},
             ValueRange{zerosOf(b, loc, ranksType, scoresDynamic(ranksType))},
             {AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx),
              AffineMap::get(5, 0, {d(0), d(1), d(2), d(4)}, ctx),
              AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx)},
             {utils::IteratorType::parallel, utils::IteratorType::parallel,
              utils::IteratorType::parallel, utils::IteratorType::parallel,
              utils::IteratorType::reduction},
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value row = linalg::IndexOp::create(nb, l, 0);
               Value i = linalg::IndexOp::create(nb, l, 2);
               Value c = linalg::IndexOp::create(nb, l, 3);
               Value other = linalg::IndexOp::create(nb, l, 4);
               Value last = lastKey(nb, l, row, i);
               Value higher = arith::CmpFOp::create(
                   nb, l, arith::CmpFPredicate::OGT, a[1], a[0]);
               Value tie = arith::AndIOp::create(
                   nb, l,
                   arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, a[1],
                                         a[0]),
                   arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult,
                                         other, c));
               Value beats = arith::AndIOp::create(
                   nb, l, isCandidate(nb, l, spec, other, last),
                   arith::OrIOp::create(nb, l, higher, tie));
               Value one =
                   arith::ExtUIOp::create(nb, l, nb.getI32Type(), beats);
               linalg::YieldOp::create(
                   nb, l, Value(arith::AddIOp::create(nb, l, a[2], one)));
             })
      .getResult(0);
}

Value isInChosenBlock(OpBuilder &b, Location loc, Value ranks,
                      const GlobalBlocks &spec, Value row, Value head,
                      Value queryIndex, Value j, Value last) {
  Value c = arith::DivUIOp::create(b, loc, j, index(b, loc, spec.block));
  Value rank = tensor::ExtractOp::create(b, loc, ranks,
                                         ValueRange{row, head, queryIndex, c});
  Value ranked = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::slt, rank,
      arith::ConstantIntOp::create(
          b, loc, b.getI32Type(),
          std::min<int64_t>(spec.topk, std::numeric_limits<int32_t>::max())));
  return arith::AndIOp::create(b, loc, isCandidate(b, loc, spec, c, last),
                               ranked);
}

Value isKeptByWindow(OpBuilder &b, Location loc, Value j, Value last,
                     int64_t window, int64_t sinks,
                     const std::optional<GlobalBlocks> &global, Value ranks,
                     Value row, Value head, Value queryIndex) {
  Value first = arith::SubIOp::create(b, loc, last, index(b, loc, window - 1));
  Value inWindow =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, j, first);
  Value sink = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, j,
                                     index(b, loc, sinks));
  Value kept = arith::OrIOp::create(b, loc, inWindow, sink);
  if (!global)
    return kept;
  return arith::OrIOp::create(b, loc, kept,
                              isInChosenBlock(b, loc, ranks, *global, row,
                                              head, queryIndex, j, last));
}

} // namespace strata::lowering
