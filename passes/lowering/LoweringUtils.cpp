//===- LoweringUtils.cpp - Builders shared by the strata lowering ---------===//
// SPDX-License-Identifier: Apache-2.0
// See LoweringUtils.h.

#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace strata::lowering {

Value dimValue(OpBuilder &b, Location loc, Value tensor, int64_t d) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(d))
    return arith::ConstantIndexOp::create(b, loc, type.getDimSize(d));
  return tensor::DimOp::create(b, loc, tensor, d);
}

Value broadcastExtent(OpBuilder &b, Location loc, RankedTensorType type,
                      int64_t d, ValueRange sources) {
  int64_t rank = type.getRank();
  for (Value source : sources) {
    auto st = cast<RankedTensorType>(source.getType());
    int64_t sd = d - (rank - st.getRank());
    if (sd >= 0 && st.getDimSize(sd) != 1)
      return dimValue(b, loc, source, sd);
  }
  return {};
}

SmallVector<Value> dynamicExtents(RankedTensorType type,
                                  llvm::function_ref<Value(int64_t)> extentOf) {
  SmallVector<Value> dynamic;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamic.push_back(extentOf(d));
  return dynamic;
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                  ValueRange dynamic) {
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(),
                                 dynamic);
}

Value emptyLike(OpBuilder &b, Location loc, RankedTensorType type,
                ValueRange sources) {
  SmallVector<Value> dynamic = dynamicExtents(type, [&](int64_t d) {
    Value extent = broadcastExtent(b, loc, type, d, sources);
    // Every source broadcasts here: the extent is 1.
    return extent ? extent : arith::ConstantIndexOp::create(b, loc, 1);
  });
  return emptyTensor(b, loc, type, dynamic);
}

Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType type,
                       ValueRange operands, ScalarFn body) {
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value operand : operands) {
    auto ot = cast<RankedTensorType>(operand.getType());
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < ot.getRank(); ++i) {
      int64_t d = i + rank - ot.getRank();
      bool broadcast = ot.getDimSize(i) == 1 && type.getDimSize(d) != 1;
      exprs.push_back(broadcast ? getAffineConstantExpr(0, ctx)
                                : getAffineDimExpr(d, ctx));
    }
    maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  Value init = emptyLike(b, loc, type, operands);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, operands, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value result = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, result);
      });
  return generic.getResult(0);
}

Value buildIndexedGeneric(
    OpBuilder &b, Location loc, RankedTensorType type, ValueRange dynamic,
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  Value empty = emptyTensor(b, loc, type, dynamic);
  int64_t rank = type.getRank();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{}, ValueRange{empty},
      {b.getMultiDimIdentityMap(rank)}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange) {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d)
          idx.push_back(linalg::IndexOp::create(nb, l, d));
        linalg::YieldOp::create(nb, l, body(nb, l, idx));
      });
  return generic.getResult(0);
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(f, value));
  if (type.isIndex())
    return arith::ConstantIndexOp::create(b, loc, (int64_t)value);
  return arith::ConstantOp::create(b, loc,
                                   b.getIntegerAttr(type, (int64_t)value));
}

Value buildReduction(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> axes, bool keepDims, Value init,
                     ScalarFn combine) {
  auto in = cast<RankedTensorType>(input.getType());
  int64_t rank = in.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> outShape;
  SmallVector<Value> dynamic;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    iterators.push_back(reduced ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
    if (reduced) {
      if (keepDims) {
        outShape.push_back(1);
        outExprs.push_back(getAffineConstantExpr(0, ctx));
      }
      continue;
    }
    outShape.push_back(in.getDimSize(d));
    if (in.isDynamicDim(d))
      dynamic.push_back(tensor::DimOp::create(b, loc, input, d));
    outExprs.push_back(getAffineDimExpr(d, ctx));
  }
  auto outType = RankedTensorType::get(outShape, in.getElementType());
  Value empty = tensor::EmptyOp::create(b, loc, outShape, in.getElementType(),
                                        dynamic);
  Value filled =
      linalg::FillOp::create(b, loc, ValueRange{init}, ValueRange{empty})
          .getResult(0);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 AffineMap::get(rank, 0, outExprs, ctx)};
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{outType}, ValueRange{input}, ValueRange{filled}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, combine(nb, nloc, args));
      });
  return generic.getResult(0);
}

Value countOf(OpBuilder &b, Location loc, Value tensor, ArrayRef<int64_t> axes,
              Type type) {
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d : axes)
    count = arith::MulIOp::create(b, loc, count, dimValue(b, loc, tensor, d));
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
  if (isa<FloatType>(type))
    return arith::SIToFPOp::create(b, loc, type, asInt);
  if (type.getIntOrFloatBitWidth() < 64)
    return arith::TruncIOp::create(b, loc, type, asInt);
  return asInt;
}

// |FloatOp| on float scalars, |IntOp| on integers.
template <typename FloatOp, typename IntOp>
static Value floatOrIntOp(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return FloatOp::create(b, loc, x, y);
  return IntOp::create(b, loc, x, y);
}

Value addScalar(OpBuilder &b, Location loc, Value x, Value y) {
  return floatOrIntOp<arith::AddFOp, arith::AddIOp>(b, loc, x, y);
}
Value subScalar(OpBuilder &b, Location loc, Value x, Value y) {
  return floatOrIntOp<arith::SubFOp, arith::SubIOp>(b, loc, x, y);
}
Value mulScalar(OpBuilder &b, Location loc, Value x, Value y) {
  return floatOrIntOp<arith::MulFOp, arith::MulIOp>(b, loc, x, y);
}
Value maxScalar(OpBuilder &b, Location loc, Value x, Value y) {
  return floatOrIntOp<arith::MaximumFOp, arith::MaxSIOp>(b, loc, x, y);
}

Value minScalar(OpBuilder &b, Location loc, Value x, Value y) {
  return floatOrIntOp<arith::MinimumFOp, arith::MinSIOp>(b, loc, x, y);
}

Value gatheredIndex(OpBuilder &b, Location loc, Value raw, Value extent) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  Value negative =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, zero);
  i = arith::SelectOp::create(b, loc, negative,
                              arith::AddIOp::create(b, loc, i, extent), i);
  i = arith::MaxSIOp::create(b, loc, i, zero);
  Value last = arith::SubIOp::create(
      b, loc, extent, arith::ConstantIndexOp::create(b, loc, 1));
  return arith::MinSIOp::create(b, loc, i, last);
}

AxisPositions::AxisPositions(OpBuilder &b, Location loc, Value data,
                             Value indices, int64_t axis)
    : indices_(indices), axis_(axis) {
  RankedTensorType dt = typeOf(data), ixt = typeOf(indices);
  extent_ = dimValue(b, loc, data, axis);
  checkIndicesInRange(b, loc, indices, extent_);
  clampTo_.resize(dt.getRank());
  for (int64_t d = 0; d < dt.getRank(); ++d)
    if (d != axis && (dt.isDynamicDim(d) || ixt.isDynamicDim(d)))
      clampTo_[d] = arith::SubIOp::create(
          b, loc, dimValue(b, loc, data, d),
          arith::ConstantIndexOp::create(b, loc, 1));
}

SmallVector<Value> AxisPositions::at(OpBuilder &b, Location loc,
                                     ValueRange ivs) const {
  SmallVector<Value> position(ivs.begin(), ivs.end());
  position[axis_] = gatheredIndex(
      b, loc, tensor::ExtractOp::create(b, loc, indices_, ivs), extent_);
  for (auto [d, bound] : llvm::enumerate(clampTo_))
    if (bound)
      position[d] = arith::MinSIOp::create(b, loc, position[d], bound);
  return position;
}

std::string describeOnnxNodes(Location loc) {
  SmallVector<StringRef> names;
  loc->walk([&](Location l) {
    if (auto name = dyn_cast<NameLoc>(l))
      if (!llvm::is_contained(names, name.getName().getValue()))
        names.push_back(name.getName().getValue());
    return WalkResult::advance();
  });
  if (names.empty())
    return "";
  // Enough names to find the subgraph; a fused op may replace dozens.
  constexpr size_t kShown = 4;
  std::string text = names.size() == 1 ? "; ONNX node " : "; ONNX nodes ";
  for (size_t i = 0; i < names.size() && i < kShown; ++i)
    text += (i ? ", '" : "'") + names[i].str() + "'";
  if (names.size() > kShown)
    text += " and " + std::to_string(names.size() - kShown) + " more";
  return text;
}

} // namespace strata::lowering
