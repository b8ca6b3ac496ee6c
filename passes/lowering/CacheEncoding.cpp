//===- CacheEncoding.cpp - fp32 KV cache rows to and from compressed forms -===//
// SPDX-License-Identifier: Apache-2.0
// The element forms strata.cache_write stores: bf16 (rounded to nearest
// even), or int8 rows of D values followed by their fp32 scale as 4 bytes
// (little-endian), so the runtime attention kernel finds each scale beside
// its row and a cache stays one state tensor. The generic lowering of the
// cache ops uses these; the runtime kernel (strata_rt_attention_kv) reads
// the same layout in place.

#include "passes/lowering/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;

namespace strata::lowering {
namespace {

Value f32Constant(OpBuilder &b, Location loc, float v) {
  return scalarConstant(b, loc, b.getF32Type(), v);
}

Value indexValue(OpBuilder &b, Location loc, int64_t v) {
  return scalarConstant(b, loc, b.getIndexType(), double(v));
}

SmallVector<Value> dynamicOf(OpBuilder &b, Location loc, Value like,
                             RankedTensorType type) {
  return dynamicExtents(type,
                        [&](int64_t d) { return dimValue(b, loc, like, d); });
}

} // namespace

Value encodeCacheRows(OpBuilder &b, Location loc, Value rows, Type element) {
  RankedTensorType in = typeOf(rows);
  if (element == in.getElementType())
    return rows;
  SmallVector<int64_t> shape(in.getShape());
  if (element.isBF16()) {
    auto type = RankedTensorType::get(shape, element);
    return buildElementwise(
        b, loc, type, {rows}, [&](OpBuilder &nb, Location l, ValueRange a) {
          return arith::TruncFOp::create(nb, l, nb.getBF16Type(), a[0])
              .getResult();
        });
  }
  // int8: per row (the last dim), the absolute maximum (a NaN is skipped
  // by the comparison) and whether a value is not finite.
  const int64_t dim = shape[3];
  Value zero = f32Constant(b, loc, 0.0f);
  Value amax = buildReduction(
      b, loc, rows, {3}, /*keepDims=*/false, zero,
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value x = math::AbsFOp::create(nb, l, a[0]);
        Value larger =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, x, a[1]);
        return arith::SelectOp::create(nb, l, larger, x, a[1]).getResult();
      });
  // 1 where the row holds a non-finite value (a float reduction: its
  // accumulator has the input's element type).
  Value nonFinite = buildReduction(
      b, loc, rows, {3}, /*keepDims=*/false, zero,
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value x = math::AbsFOp::create(nb, l, a[0]);
        // Not (x <= largest float): an infinity or a NaN.
        Value bad = arith::CmpFOp::create(
            nb, l, arith::CmpFPredicate::UGT, x,
            f32Constant(nb, l, std::numeric_limits<float>::max()));
        return arith::SelectOp::create(nb, l, bad, f32Constant(nb, l, 1.0f),
                                       a[1])
            .getResult();
      });
  shape[3] = dim + 4;
  auto type = RankedTensorType::get(shape, b.getI8Type());
  return buildIndexedGeneric(
      b, loc, type, dynamicOf(b, loc, rows, type),
      [&](OpBuilder &nb, Location l, ValueRange idx) -> Value {
        auto f = [&](float v) { return f32Constant(nb, l, v); };
        auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) {
          return arith::CmpFOp::create(nb, l, p, x, y).getResult();
        };
        auto select = [&](Value c, Value x, Value y) {
          return arith::SelectOp::create(nb, l, c, x, y).getResult();
        };
        ValueRange row = idx.take_front(3);
        Value m = tensor::ExtractOp::create(nb, l, amax, row);
        Value bad = cmp(arith::CmpFPredicate::OGT,
                        tensor::ExtractOp::create(nb, l, nonFinite, row),
                        f(0.0f));
        Value positive = cmp(arith::CmpFPredicate::OGT, m, f(0.0f));
        Value inv = select(positive,
                           arith::DivFOp::create(nb, l, f(127.0f), m), f(0.0f));
        Value scale =
            select(bad, f(std::numeric_limits<float>::infinity()),
                   arith::DivFOp::create(nb, l, m, f(127.0f)));
        // The value at min(j, D - 1): a scale byte's lane reads a valid
        // element and discards it.
        Value j = idx[3];
        Value last = indexValue(nb, l, dim - 1);
        Value jc = arith::MinSIOp::create(nb, l, j, last);
        Value x = tensor::ExtractOp::create(
            nb, l, rows, ValueRange{idx[0], idx[1], idx[2], jc});
        // Clamped, a NaN to 0, rounded half away from zero: always finite
        // before the conversion.
        Value y = arith::MulFOp::create(nb, l, x, inv);
        y = select(cmp(arith::CmpFPredicate::OGT, y, f(127.0f)), f(127.0f), y);
        y = select(cmp(arith::CmpFPredicate::OLT, y, f(-127.0f)), f(-127.0f),
                   y);
        y = select(cmp(arith::CmpFPredicate::ORD, y, y), y, f(0.0f));
        Value half = select(cmp(arith::CmpFPredicate::OGE, y, f(0.0f)),
                            f(0.5f), f(-0.5f));
        Value rounded = arith::AddFOp::create(nb, l, y, half);
        Value q32 = arith::FPToSIOp::create(nb, l, nb.getI32Type(), rounded);
        Value q = arith::TruncIOp::create(nb, l, nb.getI8Type(), q32);
        // Scale byte j - D (little-endian).
        Value bits = arith::BitcastOp::create(nb, l, nb.getI32Type(), scale);
        Value byteIndex = arith::MaxSIOp::create(
            nb, l, arith::SubIOp::create(nb, l, j, indexValue(nb, l, dim)),
            indexValue(nb, l, 0));
        Value shift = arith::IndexCastOp::create(
            nb, l, nb.getI32Type(),
            arith::MulIOp::create(nb, l, byteIndex, indexValue(nb, l, 8)));
        Value byte = arith::TruncIOp::create(
            nb, l, nb.getI8Type(),
            arith::ShRUIOp::create(nb, l, bits, shift));
        Value isValue = arith::CmpIOp::create(
            nb, l, arith::CmpIPredicate::slt, j, indexValue(nb, l, dim));
        return select(isValue, q, byte);
      });
}

Value decodeCacheRows(OpBuilder &b, Location loc, Value rows) {
  RankedTensorType in = typeOf(rows);
  Type element = in.getElementType();
  if (element.isF32())
    return rows;
  SmallVector<int64_t> shape(in.getShape());
  if (!element.isInteger(8)) {
    auto type = RankedTensorType::get(shape, b.getF32Type());
    return buildElementwise(
        b, loc, type, {rows}, [&](OpBuilder &nb, Location l, ValueRange a) {
          return arith::ExtFOp::create(nb, l, nb.getF32Type(), a[0])
              .getResult();
        });
  }
  const int64_t dim = shape[3] - 4;
  shape[3] = dim;
  auto type = RankedTensorType::get(shape, b.getF32Type());
  return buildIndexedGeneric(
      b, loc, type, dynamicOf(b, loc, rows, type),
      [&](OpBuilder &nb, Location l, ValueRange idx) -> Value {
        auto at = [&](Value j) {
          return tensor::ExtractOp::create(
                     nb, l, rows, ValueRange{idx[0], idx[1], idx[2], j})
              .getResult();
        };
        Value bits = scalarConstant(nb, l, nb.getI32Type(), 0);
        for (int64_t k = 0; k < 4; ++k) {
          Value byte = arith::ExtUIOp::create(
              nb, l, nb.getI32Type(), at(indexValue(nb, l, dim + k)));
          Value shifted = arith::ShLIOp::create(
              nb, l, byte, scalarConstant(nb, l, nb.getI32Type(), 8 * k));
          bits = arith::OrIOp::create(nb, l, bits, shifted);
        }
        Value scale = arith::BitcastOp::create(nb, l, nb.getF32Type(), bits);
        Value q = arith::SIToFPOp::create(nb, l, nb.getF32Type(), at(idx[3]));
        return arith::MulFOp::create(nb, l, q, scale).getResult();
      });
}

} // namespace strata::lowering
