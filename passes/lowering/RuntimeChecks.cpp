//===- RuntimeChecks.cpp - Checks on values the compiler cannot see -------===//
// SPDX-License-Identifier: Apache-2.0
// See RuntimeChecks.h. Each check costs a few scalar instructions, or one
// pass over a tensor of indices or divisors (small next to the data they
// select: a gather of 512 token ids reads 512 x 768 floats).

#include "passes/lowering/RuntimeChecks.h"

#include "passes/lowering/LoweringUtils.h"

#include "dialects/strata/IR/StrataOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <limits>

using namespace mlir;

namespace strata::lowering {
namespace {

Value toI64(OpBuilder &b, Location loc, Value v) {
  Type i64 = b.getI64Type();
  if (v.getType().isIndex())
    return arith::IndexCastOp::create(b, loc, i64, v);
  if (v.getType().getIntOrFloatBitWidth() < 64)
    return arith::ExtSIOp::create(b, loc, i64, v);
  return v;
}

Value i64Constant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
}

// The ONNX name of the model input |v| is, if it is one.
StringAttr inputNameOf(Value v) {
  auto arg = dyn_cast_or_null<BlockArgument>(v);
  if (!arg || !arg.getOwner()->isEntryBlock())
    return {};
  auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!func)
    return {};
  return func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "strata.name");
}

// Rank-0 i64 accumulators reduced over every element of |input| (widened to
// i64) by |combine|, one per entry of |inits|.
SmallVector<Value> reduceAll(
    OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> inits,
    llvm::function_ref<SmallVector<Value>(OpBuilder &, Location, Value,
                                          ValueRange)>
        combine) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  Type i64 = b.getI64Type();
  SmallVector<Value> outs;
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
  for (int64_t init : inits) {
    Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, i64);
    outs.push_back(linalg::FillOp::create(b, loc,
                                          ValueRange{i64Constant(b, loc, init)},
                                          ValueRange{empty})
                       .getResult(0));
    maps.push_back(AffineMap::get(rank, 0, {}, b.getContext()));
  }
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange(ValueRange(outs)), ValueRange{input}, outs, maps,
      iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value x = args[0];
        auto it = cast<IntegerType>(x.getType());
        // arith takes signless integers; unsigned ones widen with zeros.
        if (it.isUnsigned())
          x = UnrealizedConversionCastOp::create(
                  nb, l, nb.getIntegerType(it.getWidth()), x)
                  .getResult(0);
        if (it.getWidth() < 64)
          x = it.isUnsigned()
                  ? Value(arith::ExtUIOp::create(nb, l, nb.getI64Type(), x))
                  : Value(arith::ExtSIOp::create(nb, l, nb.getI64Type(), x));
        linalg::YieldOp::create(nb, l, combine(nb, l, x, args.drop_front()));
      });
  SmallVector<Value> scalars;
  for (Value r : generic.getResults())
    scalars.push_back(tensor::ExtractOp::create(b, loc, r, ValueRange{}));
  return scalars;
}

} // namespace

std::string nodeNameOf(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string name = nodeNameOf(inner); !name.empty())
        return name;
  return "";
}

void emitCheck(OpBuilder &b, Location loc, Value failed,
               strata_check_kind_t kind, Value a, Value bv, Value c,
               Value checked) {
  std::string node = nodeNameOf(loc);
  ir::CheckOp::create(b, loc, failed, toI64(b, loc, a), toI64(b, loc, bv),
                      toI64(b, loc, c), b.getI64IntegerAttr(kind),
                      b.getStringAttr(node.empty() ? "(unnamed)" : node),
                      inputNameOf(checked));
}

void checkIndicesInRange(OpBuilder &b, Location loc, Value indices,
                         Value extent) {
  std::optional<int64_t> n = getConstantIntValue(extent);
  DenseIntElementsAttr constant;
  if (n && matchPattern(indices, m_Constant(&constant)) &&
      llvm::all_of(constant.getValues<APInt>(), [&](const APInt &v) {
        int64_t i = v.getSExtValue();
        return i >= -*n && i < *n;
      }))
    return;
  SmallVector<Value> range = reduceAll(
      b, loc, indices,
      {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()},
      [](OpBuilder &nb, Location l, Value x, ValueRange acc) {
        return SmallVector<Value>{arith::MinSIOp::create(nb, l, acc[0], x),
                                  arith::MaxSIOp::create(nb, l, acc[1], x)};
      });
  Value size = toI64(b, loc, extent);
  Value low = arith::SubIOp::create(b, loc, i64Constant(b, loc, 0), size);
  Value high = arith::SubIOp::create(b, loc, size, i64Constant(b, loc, 1));
  Value tooLow = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                       range[0], low);
  Value tooHigh = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                        range[1], high);
  Value failed = arith::OrIOp::create(b, loc, tooLow, tooHigh);
  Value culprit = arith::SelectOp::create(b, loc, tooLow, range[0], range[1]);
  emitCheck(b, loc, failed, STRATA_CHECK_INDEX_RANGE, culprit, low, high,
            indices);
}

void checkIndexTuplesInRange(OpBuilder &b, Location loc, Value indices,
                             Value data, int64_t firstDim) {
  auto type = cast<RankedTensorType>(indices.getType());
  const int64_t rank = type.getRank(), width = type.getDimSize(rank - 1);
  for (int64_t j = 0; j < width; ++j) {
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
        sizes = tensor::getMixedSizes(b, loc, indices),
        strides(rank, b.getIndexAttr(1));
    offsets.back() = b.getIndexAttr(j);
    sizes.back() = b.getIndexAttr(1);
    Value column = tensor::ExtractSliceOp::create(b, loc, indices, offsets,
                                                  sizes, strides);
    Value extent = dimValue(b, loc, data, firstDim + j);
    checkIndicesInRange(b, loc, column, extent);
  }
}

void checkExtentsEqual(OpBuilder &b, Location loc, Value actual,
                       Value expected, int64_t dim, strata_check_kind_t kind,
                       Value checked) {
  std::optional<int64_t> x = getConstantIntValue(actual);
  std::optional<int64_t> y = getConstantIntValue(expected);
  // Static pairs were compared by the verifiers.
  if ((x && y) || actual == expected)
    return;
  Value failed = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                       actual, expected);
  emitCheck(b, loc, failed, kind, actual, expected,
            arith::ConstantIndexOp::create(b, loc, dim), checked);
}

Value checkDataExtent(OpBuilder &b, Location loc, Value extent,
                      Value checked) {
  if (std::optional<int64_t> e = getConstantIntValue(extent);
      e && *e >= 0 && *e <= STRATA_MAX_DATA_EXTENT)
    return extent;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value max = arith::ConstantIndexOp::create(b, loc, STRATA_MAX_DATA_EXTENT);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, extent, zero);
  Value tooLarge =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, extent, max);
  Value failed = arith::OrIOp::create(b, loc, negative, tooLarge);
  emitCheck(b, loc, failed, STRATA_CHECK_EXTENT_RANGE, extent, zero, max,
            checked);
  return arith::SelectOp::create(b, loc, failed, zero, extent);
}

void checkBroadcastExtents(OpBuilder &b, Location loc, RankedTensorType type,
                           ValueRange operands) {
  if (operands.size() < 2)
    return;
  int64_t rank = type.getRank();
  for (int64_t d = 0; d < rank; ++d) {
    // The result's extent, as the result's tensor.empty takes it.
    Value extent =
        type.isDynamicDim(d)
            ? broadcastExtent(b, loc, type, d, operands)
            : arith::ConstantIndexOp::create(b, loc, type.getDimSize(d));
    if (!extent)
      continue;
    for (Value operand : operands) {
      auto ot = cast<RankedTensorType>(operand.getType());
      int64_t od = d - (rank - ot.getRank());
      if (od < 0 || (ot.getDimSize(od) == 1 && type.getDimSize(d) != 1))
        continue;
      checkExtentsEqual(b, loc, dimValue(b, loc, operand, od), extent, d,
                        STRATA_CHECK_BROADCAST, operand);
    }
  }
}

void checkAttentionOperands(OpBuilder &b, Location loc, Value query,
                            Value key, Value value, Value mask) {
  auto dim = [&](Value t, int64_t d) { return dimValue(b, loc, t, d); };
  checkExtentsEqual(b, loc, dim(key, 0), dim(query, 0), 0,
                    STRATA_CHECK_EXTENT_MISMATCH, key);
  checkExtentsEqual(b, loc, dim(value, 0), dim(query, 0), 0,
                    STRATA_CHECK_EXTENT_MISMATCH, value);
  checkExtentsEqual(b, loc, dim(key, 3), dim(query, 3), 3,
                    STRATA_CHECK_EXTENT_MISMATCH, key);
  // The kernels take the key's head count for both.
  checkExtentsEqual(b, loc, dim(value, 1), dim(key, 1), 1,
                    STRATA_CHECK_EXTENT_MISMATCH, value);
  checkExtentsEqual(b, loc, dim(value, 2), dim(key, 2), 2,
                    STRATA_CHECK_EXTENT_MISMATCH, value);
  checkAttentionMask(b, loc, query, dim(key, 2), mask);
}

void checkAttentionAppendOperands(OpBuilder &b, Location loc, Value query,
                                  Value pastKey, Value newKey, Value pastValue,
                                  Value newValue, Value mask) {
  auto dim = [&](Value t, int64_t d) { return dimValue(b, loc, t, d); };
  // The past parts as an attention's key and value: batch, heads, head
  // dim and one length for both (the kernel's PAST), so that the keys of
  // K and V line up part by part.
  checkAttentionOperands(b, loc, query, pastKey, pastValue, Value());
  // Each concatenation's parts agree outside the sequence dim.
  for (auto [past, added] :
       {std::pair{pastKey, newKey}, std::pair{pastValue, newValue}})
    for (int64_t d : {0, 1, 3})
      checkExtentsEqual(b, loc, dim(added, d), dim(past, d), d,
                        STRATA_CHECK_EXTENT_MISMATCH, added);
  checkExtentsEqual(b, loc, dim(newValue, 2), dim(newKey, 2), 2,
                    STRATA_CHECK_EXTENT_MISMATCH, newValue);
  Value keys = arith::AddIOp::create(b, loc, dim(pastKey, 2), dim(newKey, 2));
  checkAttentionMask(b, loc, query, keys, mask);
}

void checkAttentionMask(OpBuilder &b, Location loc, Value query, Value keys,
                        Value mask) {
  if (!mask)
    return;
  auto dim = [&](Value t, int64_t d) { return dimValue(b, loc, t, d); };
  // The mask broadcasts numpy-style (aligned to the last dim) to the
  // scores' [B, H, Sq, Sk]; pairs of static extents the verifier compared.
  auto maskType = cast<RankedTensorType>(mask.getType());
  Value scores[4] = {dim(query, 0), dim(query, 1), dim(query, 2), keys};
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  int64_t rank = maskType.getRank();
  for (int64_t md = 0; md < rank && rank <= 4; ++md) {
    int64_t d = 4 - rank + md;
    if (maskType.getDimSize(md) == 1)
      continue;
    Value m = dim(mask, md);
    std::optional<int64_t> x = getConstantIntValue(m);
    std::optional<int64_t> y = getConstantIntValue(scores[d]);
    if ((x && y) || m == scores[d])
      continue;
    Value failed = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, m, one),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, m, scores[d]));
    emitCheck(b, loc, failed, STRATA_CHECK_BROADCAST, m, scores[d],
              arith::ConstantIndexOp::create(b, loc, d), mask);
  }
}

void checkNoZeroDivisor(OpBuilder &b, Location loc, Value divisor) {
  DenseIntElementsAttr constant;
  if (matchPattern(divisor, m_Constant(&constant)) &&
      llvm::none_of(constant.getValues<APInt>(),
                    [](const APInt &v) { return v.isZero(); }))
    return;
  SmallVector<Value> zeros = reduceAll(
      b, loc, divisor, {0}, [](OpBuilder &nb, Location l, Value x,
                               ValueRange acc) {
        Value isZero = arith::CmpIOp::create(
            nb, l, arith::CmpIPredicate::eq, x,
            arith::ConstantIntOp::create(nb, l, nb.getI64Type(), 0));
        Value one = arith::ExtUIOp::create(nb, l, nb.getI64Type(), isZero);
        return SmallVector<Value>{arith::OrIOp::create(nb, l, acc[0], one)};
      });
  Value failed = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                       zeros[0], i64Constant(b, loc, 0));
  Value zero = i64Constant(b, loc, 0);
  emitCheck(b, loc, failed, STRATA_CHECK_DIVISION_BY_ZERO, zero, zero, zero,
            divisor);
}

namespace {

/// Fails the run unless every slot lies in [0, |slotCount|) and every
/// row's positions [first + |low|, first + |high|) lie in [0, |context|),
/// |first| ranging over |firsts| (i64 tensors; |low|, |high| indices).
void checkCacheRanges(OpBuilder &b, Location loc, Value slots, Value firsts,
                      Value low, Value high, int64_t slotCount,
                      int64_t context) {
  auto minMax = [&](Value values) {
    return reduceAll(
        b, loc, values,
        {std::numeric_limits<int64_t>::max(),
         std::numeric_limits<int64_t>::min()},
        [](OpBuilder &nb, Location l, Value x, ValueRange acc) {
          return SmallVector<Value>{arith::MinSIOp::create(nb, l, acc[0], x),
                                    arith::MaxSIOp::create(nb, l, acc[1], x)};
        });
  };
  auto lessThan = [&](Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
  };
  Value zero = i64Constant(b, loc, 0);
  SmallVector<Value> slotRange = minMax(slots);
  Value count = i64Constant(b, loc, slotCount);
  Value slotTooLow = lessThan(slotRange[0], zero);
  Value slotTooHigh = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                            slotRange[1], count);
  Value badSlot =
      arith::SelectOp::create(b, loc, slotTooLow, slotRange[0], slotRange[1]);
  emitCheck(b, loc, arith::OrIOp::create(b, loc, slotTooLow, slotTooHigh),
            STRATA_CHECK_CACHE_SLOT, badSlot, count, zero, slots);

  // Compared without forming first + high, which a hostile value overflows:
  // first >= -low and first <= context - high.
  SmallVector<Value> range = minMax(firsts);
  Value lo = toI64(b, loc, low), hi = toI64(b, loc, high);
  Value tooLow =
      lessThan(range[0], arith::SubIOp::create(b, loc, zero, lo));
  Value tooHigh = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::sgt, range[1],
      arith::SubIOp::create(b, loc, i64Constant(b, loc, context), hi));
  Value culprit = arith::SelectOp::create(b, loc, tooLow, range[0], range[1]);
  emitCheck(b, loc, arith::OrIOp::create(b, loc, tooLow, tooHigh),
            STRATA_CHECK_CACHE_POSITIONS,
            arith::AddIOp::create(b, loc, culprit, lo),
            arith::AddIOp::create(b, loc, culprit, hi),
            i64Constant(b, loc, context), firsts);
}

} // namespace

void checkCacheRows(OpBuilder &b, Location loc, Value slots, Value positions,
                    Value count, int64_t slotCount, int64_t context) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  checkCacheRanges(b, loc, slots, positions, zero, count, slotCount, context);
}

void checkRingWrite(OpBuilder &b, Location loc, Value count,
                    int64_t capacity) {
  Value n = toI64(b, loc, count);
  Value limit = i64Constant(b, loc, capacity);
  emitCheck(b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, n, limit),
            STRATA_CHECK_CACHE_RING, n, limit, i64Constant(b, loc, 0));
}

void checkCacheLengths(OpBuilder &b, Location loc, Value slots, Value lengths,
                       Value count, int64_t slotCount, int64_t context) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value minusCount = arith::SubIOp::create(b, loc, zero, count);
  checkCacheRanges(b, loc, slots, lengths, minusCount, zero, slotCount,
                   context);
}

} // namespace strata::lowering
