//===- WindowLowering.cpp - strata.conv and strata.pool to linalg ---------===//
// SPDX-License-Identifier: Apache-2.0
// Sliding windows as one linalg.generic each over a padded input: the
// input is padded (tensor.pad) with the window's neutral value (0 for
// sums, -inf for max), so every tap is an affine read o * stride + k *
// dilation, the taps are reduction dims of the generic, and the group of
// an output channel is an affine floordiv. Average pooling divides by a
// constant tensor of per-window counts computed here (spatial dims are
// static). Direct loops: correct for every shape, not yet GEMM speed.

#include "passes/lowering/ConvAsGemm.h"
#include "passes/lowering/LoweringUtils.h"

#include "dialects/strata/IR/ShapeRules.h"
#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace strata::ir;

namespace strata::lowering {
namespace {

/// |x| [N, C, S...] (or [N, S..., C]: |first| = 1, the first spatial
/// dim) padded by |pads| (begins, then ends) on the spatial dims with
/// |value|; |extraEnd| more at each dim's end.
Value padSpatial(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> pads,
                 ArrayRef<int64_t> extraEnd, double value, int64_t first = 2) {
  auto t = cast<RankedTensorType>(x.getType());
  const int64_t spatial = t.getRank() - 2;
  SmallVector<int64_t> low(t.getRank(), 0), high(t.getRank(), 0);
  SmallVector<int64_t> shape(t.getShape());
  bool any = false;
  for (int64_t d = 0; d < spatial; ++d) {
    const int64_t dim = first + d;
    low[dim] = pads[d];
    high[dim] = pads[spatial + d] + extraEnd[d];
    any |= low[dim] != 0 || high[dim] != 0;
    if (!t.isDynamicDim(dim))
      shape[dim] += low[dim] + high[dim];
  }
  if (!any)
    return x;
  auto type = RankedTensorType::get(shape, t.getElementType());
  SmallVector<OpFoldResult> lo, hi;
  for (int64_t d = 0; d < t.getRank(); ++d) {
    lo.push_back(b.getIndexAttr(low[d]));
    hi.push_back(b.getIndexAttr(high[d]));
  }
  return tensor::PadOp::create(b, loc, type, x, lo, hi,
                               scalarConstant(b, loc, t.getElementType(), value));
}

/// |x| [N, C, S...] with its spatial elements |dilations| apart (zeros
/// between) and padded by |pads| with zeros, a negative pad cropping: a
/// zero tensor with the kept input elements inserted at stride.
Value placeInput(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> pads,
                 ArrayRef<int64_t> dilations) {
  auto t = cast<RankedTensorType>(x.getType());
  const int64_t rank = t.getRank(), spatial = rank - 2;
  const bool plain = llvm::all_of(dilations, [](int64_t i) { return i == 1; }) &&
                     llvm::all_of(pads, [](int64_t p) { return p >= 0; });
  if (plain)
    return padSpatial(b, loc, x, pads, SmallVector<int64_t>(spatial, 0), 0.0);
  Type et = t.getElementType();
  SmallVector<int64_t> shape(t.getShape());
  SmallVector<OpFoldResult> srcOffsets(rank, b.getIndexAttr(0)),
      dstOffsets(rank, b.getIndexAttr(0)), sizes, dstStrides(rank, b.getIndexAttr(1));
  for (int64_t d = 0; d < 2; ++d)
    sizes.push_back(t.isDynamicDim(d) ? OpFoldResult(dimValue(b, loc, x, d))
                                      : OpFoldResult(b.getIndexAttr(t.getDimSize(d))));
  bool empty = false;
  for (int64_t d = 0; d < spatial; ++d) {
    const int64_t s = t.getDimSize(d + 2), i = dilations[d];
    const int64_t begin = pads[d], end = pads[spatial + d];
    const int64_t extent = std::max<int64_t>(0, (s - 1) * i + 1 + begin + end);
    shape[d + 2] = extent;
    // Input elements j land at j * i + begin; keep those inside [0, extent).
    const int64_t j0 = begin < 0 ? (-begin + i - 1) / i : 0;
    const int64_t j1 =
        extent - 1 - begin < 0 ? 0
                               : std::min<int64_t>(s, (extent - 1 - begin) / i + 1);
    const int64_t count = std::max<int64_t>(0, j1 - j0);
    empty |= count == 0;
    srcOffsets[d + 2] = b.getIndexAttr(j0);
    dstOffsets[d + 2] = b.getIndexAttr(j0 * i + begin);
    sizes.push_back(b.getIndexAttr(count));
    dstStrides[d + 2] = b.getIndexAttr(i);
  }
  auto type = RankedTensorType::get(shape, et);
  SmallVector<Value> dynamic;
  for (int64_t d = 0; d < rank; ++d)
    if (type.isDynamicDim(d))
      dynamic.push_back(dimValue(b, loc, x, d));
  Value zeros =
      linalg::FillOp::create(b, loc,
                             ValueRange{scalarConstant(b, loc, et, 0)},
                             ValueRange{emptyTensor(b, loc, type, dynamic)})
          .getResult(0);
  if (empty)
    return zeros;
  SmallVector<OpFoldResult> unit(rank, b.getIndexAttr(1));
  Value kept = tensor::ExtractSliceOp::create(b, loc, x, srcOffsets, sizes, unit);
  return tensor::InsertSliceOp::create(b, loc, kept, zeros, dstOffsets, sizes,
                                       dstStrides);
}

/// The output [N, C', O...] filled with |init|, N read from |like|.
Value filledOutput(OpBuilder &b, Location loc, RankedTensorType type,
                   Value like, Value init) {
  SmallVector<Value> dynamic;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamic.push_back(dimValue(b, loc, like, d));
  Value empty = emptyTensor(b, loc, type, dynamic);
  return linalg::FillOp::create(b, loc, ValueRange{init}, ValueRange{empty})
      .getResult(0);
}

/// A parallel linalg.generic over |out| (a dynamic N read from |like|)
/// that only writes its output: |operands| read through |maps|.
Value pointwise(OpBuilder &b, Location loc, RankedTensorType out, Value like,
                ValueRange operands, ArrayRef<AffineMap> maps, ScalarFn body) {
  SmallVector<Value> dynamic;
  for (int64_t d = 0; d < out.getRank(); ++d)
    if (out.isDynamicDim(d))
      dynamic.push_back(dimValue(b, loc, like, d));
  SmallVector<AffineMap> all(maps);
  all.push_back(b.getMultiDimIdentityMap(out.getRank()));
  return linalg::GenericOp::create(
             b, loc, TypeRange{out}, operands,
             ValueRange{emptyTensor(b, loc, out, dynamic)}, all,
             SmallVector<utils::IteratorType>(out.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange a) {
               linalg::YieldOp::create(nb, l, body(nb, l, a));
             })
      .getResult(0);
}

/// Affine read positions o_i * stride_i + k_i * dilation_i of a generic
/// whose dims are (n, c, o_1..o_D, [extra], k_1..k_D).
SmallVector<AffineExpr> tapPositions(MLIRContext *ctx, int64_t spatial,
                                     int64_t firstTap,
                                     ArrayRef<int64_t> strides,
                                     ArrayRef<int64_t> dilations) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < spatial; ++d)
    exprs.push_back(getAffineDimExpr(2 + d, ctx) * strides[d] +
                    getAffineDimExpr(firstTap + d, ctx) * dilations[d]);
  return exprs;
}

Value directConv(OpBuilder &rewriter, Location loc, ConvOp op, Value x,
                 Value padded, Value w);

Value lowerConv(ConvOp op, ConvOp::Adaptor adaptor,
                ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Value x = adaptor.getInput(), w = adaptor.getWeight();
  auto wt = cast<RankedTensorType>(w.getType());
  auto out = cast<RankedTensorType>(op.getType());
  const int64_t spatial = wt.getRank() - 2;
  if (op.getChannelsLast())
    return convChannelsLastAsGemm(rewriter, loc, op, x, w, adaptor.getBias());
  Value padded = placeInput(
      rewriter, loc, x, op.getPads(),
      op.getInputDilations().value_or(SmallVector<int64_t>(spatial, 1)));
  if (Value y = convAsGemm(rewriter, loc, op, padded, w, adaptor.getBias()))
    return y;
  Value y = directConv(rewriter, loc, op, x, padded, w);
  if (Value bias = adaptor.getBias()) {
    const int64_t rank = out.getRank();
    y = pointwise(rewriter, loc, out, x, {y, bias},
                  {rewriter.getMultiDimIdentityMap(rank),
                   AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx)},
                  [](OpBuilder &b, Location l, ValueRange a) -> Value {
                    return arith::AddFOp::create(b, l, a[0], a[1]);
                  });
  }
  return y;
}

/// The convolution as one generic over (n, m, o_1..o_D, c, k_1..k_D),
/// without the bias: every form, at loop speed.
Value directConv(OpBuilder &rewriter, Location loc, ConvOp op, Value x,
                 Value padded, Value w) {
  MLIRContext *ctx = rewriter.getContext();
  auto wt = cast<RankedTensorType>(w.getType());
  auto out = cast<RankedTensorType>(op.getType());
  const int64_t spatial = wt.getRank() - 2;
  const int64_t m = wt.getDimSize(0), cg = wt.getDimSize(1);
  const int64_t mg = m / op.getGroup();
  Type et = out.getElementType();
  // Dims: n, m, o_1..o_D, c, k_1..k_D.
  const int64_t dims = 2 + spatial + 1 + spatial;
  const int64_t cDim = 2 + spatial, firstTap = cDim + 1;
  AffineExpr n = getAffineDimExpr(0, ctx), mo = getAffineDimExpr(1, ctx),
             c = getAffineDimExpr(cDim, ctx);
  SmallVector<AffineExpr> inExprs{n, mo.floorDiv(mg) * cg + c};
  llvm::append_range(inExprs, tapPositions(ctx, spatial, firstTap,
                                           op.getStrides(), op.getDilations()));
  SmallVector<AffineExpr> wExprs{mo, c}, outExprs{n, mo};
  for (int64_t d = 0; d < spatial; ++d) {
    wExprs.push_back(getAffineDimExpr(firstTap + d, ctx));
    outExprs.push_back(getAffineDimExpr(2 + d, ctx));
  }
  SmallVector<utils::IteratorType> iterators(2 + spatial,
                                             utils::IteratorType::parallel);
  iterators.append(1 + spatial, utils::IteratorType::reduction);
  Value init = filledOutput(rewriter, loc, out, x,
                            scalarConstant(rewriter, loc, et, 0));
  Value y =
      linalg::GenericOp::create(
          rewriter, loc, TypeRange{out}, ValueRange{padded, w},
          ValueRange{init},
          SmallVector<AffineMap>{AffineMap::get(dims, 0, inExprs, ctx),
                                 AffineMap::get(dims, 0, wExprs, ctx),
                                 AffineMap::get(dims, 0, outExprs, ctx)},
          iterators,
          [&](OpBuilder &b, Location l, ValueRange a) {
            Value p = arith::MulFOp::create(b, l, a[0], a[1]);
            linalg::YieldOp::create(b, l,
                                    Value(arith::AddFOp::create(b, l, a[2], p)));
          })
          .getResult(0);
  return y;
}

/// How many taps of each output window an average divides by: those
/// inside [lo, hi) of the unpadded coordinates, per spatial dim, then
/// multiplied over the dims: a constant [O...] tensor (|inSizes| and
/// |outSizes| the spatial extents).
DenseElementsAttr windowCounts(PoolOp op, ArrayRef<int64_t> inSizes,
                               ArrayRef<int64_t> outSizes, Type et) {
  const int64_t spatial = inSizes.size();
  ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                    dilations = op.getDilations(), pads = op.getPads();
  SmallVector<SmallVector<int64_t>> perDim(spatial);
  for (int64_t d = 0; d < spatial; ++d) {
    const int64_t size = inSizes[d];
    const int64_t lo = op.getCountIncludePad() ? -pads[d] : 0;
    const int64_t hi =
        op.getCountIncludePad() ? size + pads[spatial + d] : size;
    for (int64_t o = 0; o < outSizes[d]; ++o) {
      int64_t count = 0;
      for (int64_t k = 0; k < kernel[d]; ++k) {
        const int64_t at = o * strides[d] + k * dilations[d] - pads[d];
        count += at >= lo && at < hi;
      }
      perDim[d].push_back(std::max<int64_t>(count, 1));
    }
  }
  SmallVector<int64_t> shape(outSizes);
  const int64_t total = *staticElementCount(shape);
  SmallVector<APFloat> values;
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat, count = 1;
    for (int64_t d = spatial - 1; d >= 0; --d) {
      count *= perDim[d][rest % shape[d]];
      rest /= shape[d];
    }
    APFloat v(static_cast<double>(count));
    bool lost;
    v.convert(cast<FloatType>(et).getFloatSemantics(),
              APFloat::rmNearestTiesToEven, &lost);
    values.push_back(v);
  }
  return DenseElementsAttr::get(RankedTensorType::get(shape, et), values);
}

Value lowerPool(PoolOp op, PoolOp::Adaptor adaptor,
                ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Value x = adaptor.getInput();
  auto in = cast<RankedTensorType>(x.getType());
  auto out = cast<RankedTensorType>(op.getType());
  const int64_t spatial = in.getRank() - 2;
  // [N, C, S...], or [N, S..., C] channels last.
  const bool channelsLast = op.getChannelsLast();
  const int64_t first = channelsLast ? 1 : 2;
  SmallVector<int64_t> inSizes, outSizes;
  for (int64_t d = 0; d < spatial; ++d) {
    inSizes.push_back(in.getDimSize(first + d));
    outSizes.push_back(out.getDimSize(first + d));
  }
  Type et = out.getElementType();
  const StringRef kind = op.getKind();
  const bool isMax = kind == "max", isLp = kind == "lp";
  const double neutral = isMax ? -std::numeric_limits<double>::infinity() : 0;
  // ceil_mode's last windows may reach past the end padding: pad those
  // taps too (neutral, so they count nothing).
  SmallVector<int64_t> extra(spatial, 0);
  ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                    dilations = op.getDilations(), pads = op.getPads();
  for (int64_t d = 0; d < spatial; ++d) {
    const int64_t reach = (outSizes[d] - 1) * strides[d] +
                          (kernel[d] - 1) * dilations[d] + 1;
    extra[d] = std::max<int64_t>(
        0, reach - (inSizes[d] + pads[d] + pads[spatial + d]));
  }
  Value padded = padSpatial(rewriter, loc, x, pads, extra, neutral, first);
  // Dims: n, c, o_1..o_D, k_1..k_D (channels last: n, o_1..o_D, c,
  // k_1..k_D), the result's dims first, in its order.
  const int64_t dims = 2 + 2 * spatial, firstTap = 2 + spatial;
  SmallVector<AffineExpr> inExprs{getAffineDimExpr(0, ctx)};
  if (!channelsLast)
    inExprs.push_back(getAffineDimExpr(1, ctx));
  for (int64_t d = 0; d < spatial; ++d)
    inExprs.push_back(getAffineDimExpr(first + d, ctx) * strides[d] +
                      getAffineDimExpr(firstTap + d, ctx) * dilations[d]);
  if (channelsLast)
    inExprs.push_back(getAffineDimExpr(1 + spatial, ctx));
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < 2 + spatial; ++d)
    outExprs.push_back(getAffineDimExpr(d, ctx));
  // The taps' extents come from a tensor.empty of the kernel's shape.
  Value taps = tensor::EmptyOp::create(rewriter, loc, kernel, et);
  SmallVector<AffineExpr> tapExprs;
  for (int64_t d = 0; d < spatial; ++d)
    tapExprs.push_back(getAffineDimExpr(firstTap + d, ctx));
  SmallVector<utils::IteratorType> iterators(2 + spatial,
                                             utils::IteratorType::parallel);
  iterators.append(spatial, utils::IteratorType::reduction);
  Value init = filledOutput(rewriter, loc, out, x,
                            scalarConstant(rewriter, loc, et, neutral));
  const double p = static_cast<double>(op.getP());
  Value y =
      linalg::GenericOp::create(
          rewriter, loc, TypeRange{out}, ValueRange{padded, taps},
          ValueRange{init},
          SmallVector<AffineMap>{AffineMap::get(dims, 0, inExprs, ctx),
                                 AffineMap::get(dims, 0, tapExprs, ctx),
                                 AffineMap::get(dims, 0, outExprs, ctx)},
          iterators,
          [&](OpBuilder &b, Location l, ValueRange a) {
            Value v = a[0];
            if (isMax) {
              linalg::YieldOp::create(b, l, maxScalar(b, l, a[2], v));
              return;
            }
            if (isLp) {
              Value mag = math::AbsFOp::create(b, l, v);
              v = p == 2 ? Value(arith::MulFOp::create(b, l, mag, mag))
                         : Value(math::PowFOp::create(
                               b, l, mag, scalarConstant(b, l, et, p)));
            }
            linalg::YieldOp::create(b, l,
                                    Value(arith::AddFOp::create(b, l, a[2], v)));
          })
          .getResult(0);
  if (isMax)
    return y;
  const int64_t rank = out.getRank();
  SmallVector<AffineMap> maps{rewriter.getMultiDimIdentityMap(rank)};
  SmallVector<Value> operands{y};
  if (!isLp) {
    operands.push_back(arith::ConstantOp::create(
        rewriter, loc, windowCounts(op, inSizes, outSizes, et)));
    SmallVector<AffineExpr> spatialExprs;
    for (int64_t d = 0; d < spatial; ++d)
      spatialExprs.push_back(getAffineDimExpr(first + d, ctx));
    maps.push_back(AffineMap::get(rank, 0, spatialExprs, ctx));
  }
  return pointwise(rewriter, loc, out, x, operands, maps,
                   [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                     if (!isLp)
                       return arith::DivFOp::create(b, l, a[0], a[1]);
                     if (p == 2)
                       return math::SqrtOp::create(b, l, a[0]);
                     return math::PowFOp::create(
                         b, l, a[0], scalarConstant(b, l, et, 1.0 / p));
                   });
}

} // namespace

void populateWindowLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<OneResultLowering<ConvOp, lowerConv>,
               OneResultLowering<PoolOp, lowerPool>>(patterns.getContext());
}

} // namespace strata::lowering
