//===- DataMovementLowering.cpp - strata data-movement ops -> tensor ----===//
// SPDX-License-Identifier: Apache-2.0
// reshape, transpose, concat, slice, split, gather, expand, tile, trilu,
// range, shape and constant_of_shape on tensors. Run-time extents are
// computed with index arithmetic from the operands (ONNX semantics).

#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/RuntimeChecks.h"

#include "dialects/strata/IR/StrataOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace strata::ir;

namespace strata::lowering {
namespace {

// Element |i| of a 1-D integer tensor as an index value.
Value extractIndex(OpBuilder &b, Location loc, Value vec, int64_t i) {
  Value idx = arith::ConstantIndexOp::create(b, loc, i);
  Value e = tensor::ExtractOp::create(b, loc, vec, ValueRange{idx});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), e);
}

Value cIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

// |v| + |extent| if |v| is negative (an index counting from the end).
Value wrapNegative(OpBuilder &b, Location loc, Value v, Value extent,
                   Value zero) {
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, zero);
  return arith::SelectOp::create(b, loc, neg,
                                 arith::AddIOp::create(b, loc, v, extent), v);
}

// |v| clamped into [lo, hi].
Value clampIndex(OpBuilder &b, Location loc, Value v, Value lo, Value hi) {
  return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, v, lo),
                                hi);
}

// A generic over |outType| whose body reads |input| at indices computed
// from the output indices by |indexFn| (a gather-style copy).
Value buildGatherCopy(
    OpBuilder &b, Location loc, RankedTensorType outType, ValueRange dynamic,
    Value input,
    llvm::function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>
        indexFn) {
  return buildIndexedGeneric(
      b, loc, outType, dynamic, [&](OpBuilder &nb, Location l, ValueRange idx) {
        SmallVector<Value> inIdx = indexFn(nb, l, idx);
        return Value(tensor::ExtractOp::create(nb, l, input, inIdx));
      });
}

//===----------------------------------------------------------------------===//
// reshape
//===----------------------------------------------------------------------===//

// ONNX Reshape: entry 0 copies the input dim, one -1 is inferred.
Value lowerReshape(ReshapeOp op, ReshapeOp::Adaptor adaptor,
                   ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value in = adaptor.getInput();
  auto out = cast<RankedTensorType>(op.getType());
  int64_t r = out.getRank();
  SmallVector<Value> extents;
  if (!adaptor.getShape()) {
    for (int64_t d = 0; d < r; ++d)
      extents.push_back(cIndex(rewriter, loc, out.getDimSize(d)));
  } else {
    Value shape = adaptor.getShape();
    Value total = cIndex(rewriter, loc, 1);
    for (int64_t d = 0; d < typeOf(in).getRank(); ++d)
      total = arith::MulIOp::create(rewriter, loc, total,
                                    dimValue(rewriter, loc, in, d));
    Value zero = cIndex(rewriter, loc, 0), minus1 = cIndex(rewriter, loc, -1);
    Value known = cIndex(rewriter, loc, 1);
    SmallVector<Value> raw;
    for (int64_t d = 0; d < r; ++d) {
      Value e = out.isDynamicDim(d) ? extractIndex(rewriter, loc, shape, d)
                                    : cIndex(rewriter, loc, out.getDimSize(d));
      if (out.isDynamicDim(d) && d < typeOf(in).getRank() &&
          !op.getAllowZero()) {
        Value isZero = arith::CmpIOp::create(rewriter, loc,
                                             arith::CmpIPredicate::eq, e, zero);
        e = arith::SelectOp::create(rewriter, loc, isZero,
                                    dimValue(rewriter, loc, in, d), e);
      }
      raw.push_back(e);
      Value isInfer = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, e, minus1);
      known = arith::MulIOp::create(
          rewriter, loc, known,
          arith::SelectOp::create(rewriter, loc, isInfer,
                                  cIndex(rewriter, loc, 1), e));
    }
    // A zero-sized input makes the product 0; never divide by it.
    Value divisor =
        arith::MaxSIOp::create(rewriter, loc, known, cIndex(rewriter, loc, 1));
    Value inferred = arith::DivSIOp::create(rewriter, loc, total, divisor);
    Value product = cIndex(rewriter, loc, 1);
    // The same product in f64, which cannot wrap around to the input's
    // count the way an int64 product of huge entries can.
    Type f64 = rewriter.getF64Type();
    Value wide =
        arith::ConstantOp::create(rewriter, loc, rewriter.getF64FloatAttr(1.0));
    for (Value e : raw) {
      Value isInfer = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, e, minus1);
      Value extent =
          arith::SelectOp::create(rewriter, loc, isInfer, inferred, e);
      // Shape entries come from data: each within [0, the maximum extent],
      // all of them together exactly the input's elements.
      extent = checkDataExtent(rewriter, loc, extent, shape);
      product = arith::MulIOp::create(rewriter, loc, product, extent);
      wide = arith::MulFOp::create(
          rewriter, loc, wide,
          arith::SIToFPOp::create(
              rewriter, loc, f64,
              arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(),
                                         extent)));
      extents.push_back(extent);
    }
    Value huge = arith::CmpFOp::create(
        rewriter, loc, arith::CmpFPredicate::OGT, wide,
        arith::ConstantOp::create(rewriter, loc,
                                  rewriter.getF64FloatAttr(0x1p52)));
    Value mismatch = arith::OrIOp::create(
        rewriter, loc, huge,
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne, product,
                              total));
    emitCheck(rewriter, loc, mismatch, STRATA_CHECK_RESHAPE, total, product,
              zero, in);
  }
  // tensor.reshape wants the target shape as a 1-D index tensor.
  SmallVector<Value> asI64;
  for (Value e : extents)
    asI64.push_back(
        arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(), e));
  Value shapeTensor = tensor::FromElementsOp::create(
      rewriter, loc, RankedTensorType::get({r}, rewriter.getI64Type()), asI64);
  return Value(tensor::ReshapeOp::create(rewriter, loc, out, in, shapeTensor));
}

//===----------------------------------------------------------------------===//
// transpose, concat, split
//===----------------------------------------------------------------------===//

Value lowerTranspose(TransposeOp op, TransposeOp::Adaptor adaptor,
                     ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value in = adaptor.getInput();
  auto out = cast<RankedTensorType>(op.getType());
  ArrayRef<int64_t> perm = op.getPermutation();
  Value empty =
      emptyTensor(rewriter, loc, out, dynamicExtents(out, [&](int64_t d) {
                    return dimValue(rewriter, loc, in, perm[d]);
                  }));
  return linalg::TransposeOp::create(rewriter, loc, in, empty, perm)
      ->getResult(0);
}

Value lowerConcat(ConcatOp op, ConcatOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) {
  int64_t axis = normalizedAxis(op.getAxis(),
                                cast<RankedTensorType>(op.getType()).getRank());
  // Inputs statically empty along the axis add nothing; tensor.concat's
  // decomposition would insert them at an offset equal to the extent,
  // which insert_slice rejects.
  SmallVector<Value> inputs;
  for (Value v : adaptor.getInputs())
    if (typeOf(v).getDimSize(axis) != 0)
      inputs.push_back(v);
  if (inputs.empty())
    inputs.push_back(adaptor.getInputs().front());
  // Every dim but the axis must agree (insert_slice trusts it).
  int64_t rank = typeOf(inputs.front()).getRank();
  for (Value v : llvm::drop_begin(inputs))
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis)
        checkExtentsEqual(rewriter, op.getLoc(),
                          dimValue(rewriter, op.getLoc(), v, d),
                          dimValue(rewriter, op.getLoc(), inputs.front(), d), d,
                          STRATA_CHECK_EXTENT_MISMATCH, v);
  if (inputs.size() == 1) {
    Value only = inputs.front();
    if (only.getType() != op.getType())
      only = tensor::CastOp::create(rewriter, op.getLoc(), op.getType(), only);
    return only;
  }
  return Value(tensor::ConcatOp::create(rewriter, op.getLoc(), op.getType(),
                                        axis, inputs));
}

struct SplitPattern : OpConversionPattern<SplitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value in = adaptor.getInput();
    int64_t r = typeOf(in).getRank();
    int64_t axis = normalizedAxis(op.getAxis(), r);
    int64_t total = 0;
    for (int64_t size : op.getSizes())
      total += size;
    checkExtentsEqual(rewriter, loc, dimValue(rewriter, loc, in, axis),
                      cIndex(rewriter, loc, total), axis,
                      STRATA_CHECK_EXTENT_MISMATCH, in);
    SmallVector<Value> results;
    int64_t start = 0;
    for (auto [size, result] :
         llvm::zip_equal(op.getSizes(), op.getResults())) {
      auto type = cast<RankedTensorType>(result.getType());
      // Static extents stay attributes so that the slice's inferred type is
      // the result type (an SSA constant would make the dim dynamic).
      SmallVector<OpFoldResult> offsets(r, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes, strides(r, rewriter.getIndexAttr(1));
      for (int64_t d = 0; d < r; ++d) {
        if (d == axis || !typeOf(in).isDynamicDim(d)) {
          sizes.push_back(rewriter.getIndexAttr(
              d == axis ? size : typeOf(in).getDimSize(d)));
          continue;
        }
        sizes.push_back(dimValue(rewriter, loc, in, d));
      }
      offsets[axis] = rewriter.getIndexAttr(start);
      start += size;
      // A zero-size piece reads nothing; its offset may equal the extent,
      // which extract_slice rejects.
      if (size == 0) {
        results.push_back(tensor::EmptyOp::create(rewriter, loc, sizes,
                                                  type.getElementType()));
        if (results.back().getType() != type)
          results.back() =
              tensor::CastOp::create(rewriter, loc, type, results.back());
        continue;
      }
      Value piece = tensor::ExtractSliceOp::create(rewriter, loc, in, offsets,
                                                   sizes, strides);
      if (piece.getType() != type)
        piece = tensor::CastOp::create(rewriter, loc, type, piece);
      results.push_back(piece);
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// slice (ONNX clamping, any step sign) and gather
//===----------------------------------------------------------------------===//

Value lowerSlice(SliceOp op, SliceOp::Adaptor adaptor,
                 ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value in = adaptor.getInput();
  RankedTensorType it = typeOf(in);
  auto out = cast<RankedTensorType>(op.getType());
  int64_t r = it.getRank();
  // Per sliced axis: clamped start and step; extent = count.
  SmallVector<Value> starts(r), steps(r), counts(r);
  for (auto [i, axisAttr] : llvm::enumerate(op.getAxes())) {
    int64_t axis = axisAttr < 0 ? axisAttr + r : axisAttr;
    OpBuilder &b = rewriter;
    Value dim = dimValue(b, loc, in, axis);
    Value start = extractIndex(b, loc, adaptor.getStarts(), i),
          end = extractIndex(b, loc, adaptor.getEnds(), i),
          step = extractIndex(b, loc, adaptor.getSteps(), i);
    Value zero = cIndex(b, loc, 0), one = cIndex(b, loc, 1);
    // ONNX forbids step 0; a run-time 0 must not become a division trap,
    // so it is treated as 1.
    Value stepIsZero =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, step, zero);
    step = arith::SelectOp::create(b, loc, stepIsZero, one, step);
    Value dimM1 = arith::SubIOp::create(b, loc, dim, one);
    Value positive =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, step, zero);
    // Negative bounds count from the end; then clamp into range.
    Value s = wrapNegative(b, loc, start, dim, zero),
          e = wrapNegative(b, loc, end, dim, zero);
    Value sPos = clampIndex(b, loc, s, zero, dim),
          ePos = clampIndex(b, loc, e, zero, dim);
    Value minus1 = cIndex(b, loc, -1);
    Value sNeg = clampIndex(b, loc, s, minus1, dimM1),
          eNeg = clampIndex(b, loc, e, minus1, dimM1);
    Value s2 = arith::SelectOp::create(b, loc, positive, sPos, sNeg);
    Value e2 = arith::SelectOp::create(b, loc, positive, ePos, eNeg);
    // count = ceil((e - s) / step), at least 0.
    Value diff = arith::SubIOp::create(b, loc, e2, s2);
    Value adj = arith::SelectOp::create(
        b, loc, positive, arith::SubIOp::create(b, loc, step, one),
        arith::AddIOp::create(b, loc, step, one));
    Value count = arith::DivSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, diff, adj), step);
    count = arith::MaxSIOp::create(b, loc, count, zero);
    starts[axis] = s2;
    steps[axis] = step;
    counts[axis] = count;
  }
  SmallVector<Value> dynamic = dynamicExtents(out, [&](int64_t d) {
    return counts[d] ? counts[d] : dimValue(rewriter, loc, in, d);
  });
  return buildGatherCopy(
      rewriter, loc, out, dynamic, in,
      [&](OpBuilder &b, Location l, ValueRange idx) {
        SmallVector<Value> inIdx(idx.begin(), idx.end());
        for (int64_t d = 0; d < r; ++d)
          if (starts[d])
            inIdx[d] = arith::AddIOp::create(
                b, l, starts[d], arith::MulIOp::create(b, l, idx[d], steps[d]));
        return inIdx;
      });
}

Value lowerGather(GatherOp op, GatherOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value data = adaptor.getData(), indices = adaptor.getIndices();
  RankedTensorType dt = typeOf(data), ixt = typeOf(indices);
  auto out = cast<RankedTensorType>(op.getType());
  int64_t axis = normalizedAxis(op.getAxis(), dt.getRank());
  int64_t ir = ixt.getRank();
  SmallVector<Value> dynamic = dynamicExtents(out, [&](int64_t d) {
    if (d < axis)
      return dimValue(rewriter, loc, data, d);
    if (d < axis + ir)
      return dimValue(rewriter, loc, indices, d - axis);
    return dimValue(rewriter, loc, data, d - ir + 1);
  });
  Value extent = dimValue(rewriter, loc, data, axis);
  checkIndicesInRange(rewriter, loc, indices, extent);
  return buildGatherCopy(
      rewriter, loc, out, dynamic, data,
      [&](OpBuilder &b, Location l, ValueRange idx) {
        SmallVector<Value> ix(idx.begin() + axis, idx.begin() + axis + ir);
        Value i = gatheredIndex(
            b, l, tensor::ExtractOp::create(b, l, indices, ix), extent);
        SmallVector<Value> in(idx.begin(), idx.begin() + axis);
        in.push_back(i);
        in.append(idx.begin() + axis + ir, idx.end());
        return in;
      });
}

Value lowerGatherElements(GatherElementsOp op,
                          GatherElementsOp::Adaptor adaptor,
                          ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value data = adaptor.getData(), indices = adaptor.getIndices();
  auto out = cast<RankedTensorType>(op.getType());
  int64_t axis = normalizedAxis(op.getAxis(), typeOf(data).getRank());
  SmallVector<Value> dynamic = dynamicExtents(
      out, [&](int64_t d) { return dimValue(rewriter, loc, indices, d); });
  AxisPositions positions(rewriter, loc, data, indices, axis);
  return buildGatherCopy(rewriter, loc, out, dynamic, data,
                         [&](OpBuilder &b, Location l, ValueRange idx) {
                           return positions.at(b, l, idx);
                         });
}

Value lowerGatherND(GatherNDOp op, GatherNDOp::Adaptor adaptor,
                    ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value data = adaptor.getData(), indices = adaptor.getIndices();
  auto out = cast<RankedTensorType>(op.getType());
  const int64_t q = typeOf(indices).getRank();
  const int64_t batch = op.getBatchDims();
  const int64_t width = typeOf(indices).getDimSize(q - 1);
  checkIndexTuplesInRange(rewriter, loc, indices, data, batch);
  for (int64_t d = 0; d < batch; ++d)
    checkExtentsEqual(rewriter, loc, dimValue(rewriter, loc, indices, d),
                      dimValue(rewriter, loc, data, d), d,
                      STRATA_CHECK_EXTENT_MISMATCH);
  SmallVector<Value> addressed;
  for (int64_t j = 0; j < width; ++j)
    addressed.push_back(dimValue(rewriter, loc, data, batch + j));
  SmallVector<Value> dynamic = dynamicExtents(out, [&](int64_t d) {
    return d + 1 < q ? dimValue(rewriter, loc, indices, d)
                     : dimValue(rewriter, loc, data, d - (q - 1) + batch + width);
  });
  return buildGatherCopy(
      rewriter, loc, out, dynamic, data,
      [&](OpBuilder &b, Location l, ValueRange idx) {
        SmallVector<Value> in(idx.take_front(batch)),
            tuple(idx.take_front(q - 1));
        tuple.push_back(Value());
        for (int64_t j = 0; j < width; ++j) {
          tuple.back() = cIndex(b, l, j);
          in.push_back(gatheredIndex(
              b, l, tensor::ExtractOp::create(b, l, indices, tuple),
              addressed[j]));
        }
        llvm::append_range(in, idx.drop_front(q - 1));
        return in;
      });
}

// Each output element reads the input at its own index less the begin pad,
// mapped back inside by the mode. Constant mode reads a copy of the input
// with one more slab of the value at the end of every dim, an index outside
// the input pointing into that slab: no read leaves the copy, even from an
// empty input.
Value lowerPad(PadOp op, PadOp::Adaptor adaptor,
               ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value in = adaptor.getInput();
  RankedTensorType it = typeOf(in);
  auto out = cast<RankedTensorType>(op.getType());
  const int64_t r = it.getRank();
  ArrayRef<int64_t> pads = op.getPads();
  const StringRef mode = op.getMode();
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < r; ++d)
    sizes.push_back(dimValue(rewriter, loc, in, d));
  SmallVector<Value> dynamic = dynamicExtents(out, [&](int64_t d) {
    return arith::AddIOp::create(
        rewriter, loc, sizes[d], cIndex(rewriter, loc, pads[d] + pads[r + d]));
  });
  Value source = in;
  if (mode == "constant") {
    Value fill = adaptor.getValue()
                     ? Value(tensor::ExtractOp::create(rewriter, loc,
                                                       adaptor.getValue(),
                                                       ValueRange{}))
                     : scalarConstant(rewriter, loc, it.getElementType(), 0);
    SmallVector<int64_t> shape(it.getShape());
    for (int64_t &s : shape)
      if (!ShapedType::isDynamic(s))
        ++s;
    SmallVector<OpFoldResult> lo(r, rewriter.getIndexAttr(0)),
        hi(r, rewriter.getIndexAttr(1));
    source = tensor::PadOp::create(
        rewriter, loc, RankedTensorType::get(shape, it.getElementType()), in,
        lo, hi, fill);
  }
  return buildIndexedGeneric(
      rewriter, loc, out, dynamic,
      [&](OpBuilder &b, Location l, ValueRange idx) -> Value {
        Value zero = cIndex(b, l, 0), one = cIndex(b, l, 1);
        SmallVector<Value> src;
        for (int64_t d = 0; d < r; ++d) {
          Value s = arith::SubIOp::create(b, l, idx[d], cIndex(b, l, pads[d]));
          Value size = sizes[d];
          Value last = arith::SubIOp::create(b, l, size, one);
          if (mode == "wrap" || mode == "reflect") {
            // A non-negative remainder of the period.
            Value period =
                mode == "wrap"
                    ? size
                    : arith::MaxSIOp::create(
                          b, l, arith::MulIOp::create(b, l, last, cIndex(b, l, 2)),
                          one);
            Value rem = arith::RemSIOp::create(b, l, s, period);
            Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                              rem, zero);
            s = arith::SelectOp::create(
                b, l, neg, arith::AddIOp::create(b, l, rem, period), rem);
            if (mode == "reflect") {
              Value past = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::sgt, s, last);
              s = arith::SelectOp::create(
                  b, l, past, arith::SubIOp::create(b, l, period, s), s);
            }
          }
          if (mode == "constant") {
            Value ok = arith::AndIOp::create(
                b, l,
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge, s, zero),
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, s,
                                      size));
            src.push_back(arith::SelectOp::create(b, l, ok, s, size));
            continue;
          }
          // Edge mode, and the other modes' reads: clamped inside.
          s = arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, s, zero),
                                     last);
          src.push_back(s);
        }
        return tensor::ExtractOp::create(b, l, source, src);
      });
}

//===----------------------------------------------------------------------===//
// expand, tile, trilu
//===----------------------------------------------------------------------===//

Value lowerExpand(ExpandOp op, ExpandOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value in = adaptor.getInput();
  auto out = cast<RankedTensorType>(op.getType());
  int64_t r = out.getRank(), ir = typeOf(in).getRank();
  // Dynamic extents broadcast as numpy does: an input dim of 1 takes the
  // shape entry (0 included), a shape entry of 1 keeps the input dim, and
  // otherwise the two must agree.
  SmallVector<Value> dynamic = dynamicExtents(out, [&](int64_t d) {
    Value e = extractIndex(rewriter, loc, adaptor.getShape(), d);
    int64_t id = d - (r - ir);
    if (id < 0)
      return checkDataExtent(rewriter, loc, e);
    Value one = cIndex(rewriter, loc, 1);
    Value x = dimValue(rewriter, loc, in, id);
    Value inIsOne =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, x, one);
    Value entryIsOne =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, e, one);
    Value same =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, e, x);
    Value ok = arith::OrIOp::create(
        rewriter, loc, inIsOne,
        arith::OrIOp::create(rewriter, loc, entryIsOne, same));
    Value failed = arith::XOrIOp::create(
        rewriter, loc, ok, arith::ConstantIntOp::create(rewriter, loc, 1, 1));
    emitCheck(rewriter, loc, failed, STRATA_CHECK_EXPAND, x, e,
              cIndex(rewriter, loc, d), in);
    Value extent = arith::SelectOp::create(rewriter, loc, inIsOne, e, x);
    return checkDataExtent(rewriter, loc, extent);
  });
  return buildGatherCopy(
      rewriter, loc, out, dynamic, in,
      [&](OpBuilder &b, Location l, ValueRange idx) {
        SmallVector<Value> inIdx;
        for (int64_t i = 0; i < ir; ++i) {
          int64_t d = i + r - ir;
          // A size-1 input dim is read at 0 whatever the output index.
          Value one = cIndex(b, l, 1);
          Value isOne = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                              dimValue(b, l, in, i), one);
          inIdx.push_back(
              arith::SelectOp::create(b, l, isOne, cIndex(b, l, 0), idx[d]));
        }
        return inIdx;
      });
}

Value lowerTile(TileOp op, TileOp::Adaptor adaptor,
                ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value in = adaptor.getInput();
  auto out = cast<RankedTensorType>(op.getType());
  Value repeats = adaptor.getRepeats();
  SmallVector<Value> dynamic = dynamicExtents(out, [&](int64_t d) {
    Value count = checkDataExtent(
        rewriter, loc, extractIndex(rewriter, loc, repeats, d), repeats);
    return checkDataExtent(rewriter, loc,
                           arith::MulIOp::create(rewriter, loc,
                                                 dimValue(rewriter, loc, in, d),
                                                 count),
                           repeats);
  });
  return buildGatherCopy(rewriter, loc, out, dynamic, in,
                         [&](OpBuilder &b, Location l, ValueRange idx) {
                           SmallVector<Value> inIdx;
                           for (auto [d, i] : llvm::enumerate(idx))
                             inIdx.push_back(arith::RemSIOp::create(
                                 b, l, i, dimValue(b, l, in, d)));
                           return inIdx;
                         });
}

Value lowerTrilu(TriluOp op, TriluOp::Adaptor adaptor,
                 ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value in = adaptor.getInput();
  RankedTensorType t = typeOf(in);
  int64_t r = t.getRank();
  Value k = cIndex(rewriter, loc, 0);
  if (Value kv = adaptor.getK())
    k = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getIndexType(),
        tensor::ExtractOp::create(rewriter, loc, kv, ValueRange{}));
  bool upper = op.getUpper();
  return buildElementwise(
      rewriter, loc, t, in, [&](OpBuilder &b, Location l, ValueRange a) {
        Value i = linalg::IndexOp::create(b, l, r - 2);
        Value j = linalg::IndexOp::create(b, l, r - 1);
        // Keep j - i >= k (upper) or j - i <= k (lower).
        Value diff = arith::SubIOp::create(b, l, j, i);
        Value keep = arith::CmpIOp::create(
            b, l, upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
            diff, k);
        return Value(arith::SelectOp::create(
            b, l, keep, a[0], scalarConstant(b, l, a[0].getType(), 0)));
      });
}

//===----------------------------------------------------------------------===//
// range, shape, constant_of_shape
//===----------------------------------------------------------------------===//

// max(ceil((limit - start) / delta), 0) for integers, in unsigned
// arithmetic so that no operand (INT64_MIN, a delta of 0 or -1) can
// overflow or trap; a count that does not fit an index comes out
// negative, which checkDataExtent refuses.
Value integerCount(OpBuilder &b, Location loc, Value start, Value limit,
                   Value delta) {
  Type i64 = b.getI64Type();
  auto wide = [&](Value v) {
    return v.getType().isInteger(64)
               ? v
               : Value(arith::ExtSIOp::create(b, loc, i64, v));
  };
  start = wide(start), limit = wide(limit), delta = wide(delta);
  auto c = [&](int64_t v) {
    return Value(arith::ConstantIntOp::create(b, loc, i64, v));
  };
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return Value(arith::CmpIOp::create(b, loc, p, x, y));
  };
  Value up = cmp(arith::CmpIPredicate::sgt, delta, c(0));
  Value down = cmp(arith::CmpIPredicate::slt, delta, c(0));
  Value rising = arith::AndIOp::create(
      b, loc, up, cmp(arith::CmpIPredicate::sgt, limit, start));
  Value falling = arith::AndIOp::create(
      b, loc, down, cmp(arith::CmpIPredicate::slt, limit, start));
  Value nonEmpty = arith::OrIOp::create(b, loc, rising, falling);
  // |limit - start| and |delta| as unsigned values (exact mod 2^64).
  Value span = arith::SelectOp::create(
      b, loc, up, arith::SubIOp::create(b, loc, limit, start),
      arith::SubIOp::create(b, loc, start, limit));
  Value step = arith::SelectOp::create(
      b, loc, up, delta, arith::SubIOp::create(b, loc, c(0), delta));
  Value safeStep = arith::SelectOp::create(b, loc, nonEmpty, step, c(1));
  Value safeSpan = arith::SelectOp::create(b, loc, nonEmpty, span, c(1));
  Value count = arith::AddIOp::create(
      b, loc,
      arith::DivUIOp::create(
          b, loc, arith::SubIOp::create(b, loc, safeSpan, c(1)), safeStep),
      c(1));
  count = arith::SelectOp::create(b, loc, nonEmpty, count, c(0));
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), count);
}

// max(ceil((limit - start) / delta), 0) for floats; NaN, infinite or
// huge counts become -1, which checkDataExtent refuses.
Value floatCount(OpBuilder &b, Location loc, Value start, Value limit,
                 Value delta) {
  Type t = start.getType();
  Value q = arith::DivFOp::create(
      b, loc, arith::SubFOp::create(b, loc, limit, start), delta);
  Value zero = scalarConstant(b, loc, t, 0.0);
  Value max = scalarConstant(b, loc, t, double(STRATA_MAX_DATA_EXTENT));
  // Ordered compares are false for NaN.
  Value inRange = arith::AndIOp::create(
      b, loc, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, q, zero),
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, q, max));
  Value negative =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, q, zero);
  Value safe = arith::SelectOp::create(b, loc, inRange, q, zero);
  Value t64 = arith::FPToSIOp::create(b, loc, b.getI64Type(), safe);
  Value back = arith::SIToFPOp::create(b, loc, t, t64);
  Value ceil = arith::SelectOp::create(
      b, loc,
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, back, safe),
      arith::AddIOp::create(
          b, loc, t64, arith::ConstantIntOp::create(b, loc, b.getI64Type(), 1)),
      t64);
  Value count = arith::SelectOp::create(
      b, loc, inRange, ceil,
      arith::SelectOp::create(
          b, loc, negative,
          arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0),
          arith::ConstantIntOp::create(b, loc, b.getI64Type(), -1)));
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), count);
}

Value lowerRange(RangeOp op, RangeOp::Adaptor adaptor,
                 ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  auto out = cast<RankedTensorType>(op.getType());
  Type et = out.getElementType();
  auto scalar = [&](Value v) {
    return Value(tensor::ExtractOp::create(rewriter, loc, v, ValueRange{}));
  };
  Value start = scalar(adaptor.getStart()), limit = scalar(adaptor.getLimit()),
        delta = scalar(adaptor.getDelta());
  SmallVector<Value> dynamic;
  if (out.isDynamicDim(0)) {
    Value count = isa<FloatType>(et)
                      ? floatCount(rewriter, loc, start, limit, delta)
                      : integerCount(rewriter, loc, start, limit, delta);
    dynamic.push_back(checkDataExtent(rewriter, loc, count));
  }
  // Element i is start + i * delta.
  return buildIndexedGeneric(
      rewriter, loc, out, dynamic,
      [&](OpBuilder &b, Location l, ValueRange idx) {
        Value n = arith::IndexCastOp::create(b, l, b.getI64Type(), idx[0]);
        Value f = isa<FloatType>(et)
                      ? Value(arith::SIToFPOp::create(b, l, et, n))
                      : (et.isInteger(64)
                             ? n
                             : Value(arith::TruncIOp::create(b, l, et, n)));
        return addScalar(b, l, start, mulScalar(b, l, f, delta));
      });
}

Value lowerShape(ShapeOp op, ShapeOp::Adaptor adaptor,
                 ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value in = adaptor.getInput();
  int64_t rank = typeOf(in).getRank();
  auto clampBound = [&](int64_t v) {
    return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  int64_t start = clampBound(op.getStart());
  int64_t end = clampBound(op.getEnd().value_or(rank));
  SmallVector<Value> elems;
  for (int64_t d = start; d < end; ++d)
    elems.push_back(arith::IndexCastOp::create(
        rewriter, loc, rewriter.getI64Type(), dimValue(rewriter, loc, in, d)));
  return Value(
      tensor::FromElementsOp::create(rewriter, loc, op.getType(), elems));
}

Value lowerConstantOfShape(ConstantOfShapeOp op,
                           ConstantOfShapeOp::Adaptor adaptor,
                           ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  auto out = cast<RankedTensorType>(op.getType());
  Value shape = adaptor.getShape();
  Value empty = emptyTensor(
      rewriter, loc, out, dynamicExtents(out, [&](int64_t d) {
        return checkDataExtent(rewriter, loc,
                               extractIndex(rewriter, loc, shape, d), shape);
      }));
  Value v = arith::ConstantOp::create(rewriter, loc, op.getValue());
  return linalg::FillOp::create(rewriter, loc, ValueRange{v}, ValueRange{empty})
      .getResult(0);
}

// An embedding row dequantized on the fly: the table is read at its stored
// width (one byte, or half of one, per value) and each value scaled by its
// row's group scale.
Value lowerQuantizedGather(QuantizedGatherOp op,
                           QuantizedGatherOp::Adaptor adaptor,
                           ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value table = adaptor.getTable(), scales = adaptor.getScales(),
        indices = adaptor.getIndices();
  auto out = cast<RankedTensorType>(op.getType());
  const int64_t ir = typeOf(indices).getRank();
  const bool nibbles = op.getBits() == 4;
  SmallVector<Value> dynamic = dynamicExtents(
      out, [&](int64_t d) { return dimValue(rewriter, loc, indices, d); });
  Value rows = dimValue(rewriter, loc, table, 0);
  checkIndicesInRange(rewriter, loc, indices, rows);
  return buildIndexedGeneric(
      rewriter, loc, out, dynamic,
      [&](OpBuilder &b, Location l, ValueRange idx) -> Value {
        Value row = gatheredIndex(
            b, l, tensor::ExtractOp::create(b, l, indices, idx.take_front(ir)),
            rows);
        Value column = idx.back();
        Value byteIndex =
            nibbles ? arith::DivUIOp::create(b, l, column, cIndex(b, l, 2))
                          .getResult()
                    : column;
        Value byte =
            tensor::ExtractOp::create(b, l, table, ValueRange{row, byteIndex});
        Type i32 = b.getI32Type();
        Value value;
        if (nibbles) {
          // (byte >> 4 * (column % 2)) & 15, stored with +8.
          Value wide = arith::ExtUIOp::create(b, l, i32, byte);
          Value odd = arith::IndexCastOp::create(
              b, l, i32, arith::RemUIOp::create(b, l, column, cIndex(b, l, 2)));
          Value shift = arith::MulIOp::create(
              b, l, odd, arith::ConstantIntOp::create(b, l, i32, 4));
          Value nibble = arith::AndIOp::create(
              b, l, arith::ShRUIOp::create(b, l, wide, shift),
              arith::ConstantIntOp::create(b, l, i32, 15));
          value = arith::SubIOp::create(
              b, l, nibble, arith::ConstantIntOp::create(b, l, i32, 8));
        } else {
          value = arith::ExtSIOp::create(b, l, i32, byte);
        }
        Value group = arith::DivUIOp::create(b, l, column,
                                             cIndex(b, l, op.getGroupSize()));
        Value scale =
            tensor::ExtractOp::create(b, l, scales, ValueRange{row, group});
        Value real = arith::SIToFPOp::create(b, l, b.getF32Type(), value);
        return arith::MulFOp::create(b, l, real, scale);
      });
}

} // namespace

void populateDataMovementLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<OneResultLowering<ReshapeOp, lowerReshape>,
               OneResultLowering<TransposeOp, lowerTranspose>,
               OneResultLowering<ConcatOp, lowerConcat>, SplitPattern,
               OneResultLowering<SliceOp, lowerSlice>,
               OneResultLowering<GatherOp, lowerGather>,
               OneResultLowering<GatherElementsOp, lowerGatherElements>,
               OneResultLowering<GatherNDOp, lowerGatherND>,
               OneResultLowering<PadOp, lowerPad>,
               OneResultLowering<QuantizedGatherOp, lowerQuantizedGather>,
               OneResultLowering<ExpandOp, lowerExpand>,
               OneResultLowering<TileOp, lowerTile>,
               OneResultLowering<TriluOp, lowerTrilu>,
               OneResultLowering<RangeOp, lowerRange>,
               OneResultLowering<ShapeOp, lowerShape>,
               OneResultLowering<ConstantOfShapeOp, lowerConstantOfShape>>(
      patterns.getContext());
}

} // namespace strata::lowering
