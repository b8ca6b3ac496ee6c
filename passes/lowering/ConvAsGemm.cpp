//===- ConvAsGemm.cpp - Convolutions as im2col + contraction ---------------===//
// SPDX-License-Identifier: Apache-2.0
// A convolution of G groups is, per image and group, the product of the
// weight [M/G, C/G * K] (K taps) and the columns [C/G * K, P] (P output
// positions; row (c, k) holds tap k of channel c at every position), which
// is the output [M/G, P] in NCHW order as it stands. The product is a
// generic with loops (n, [g,] m, p, k) that MatmulToRuntime hands to the
// runtime's matmul: A the weight (a constant read in place), B the
// columns, C the output. The columns are one copy generic from the padded
// input whose rows are contiguous runs of positions, split over threads by
// channel; a 1x1 convolution with unit strides and no padding needs none
// (the input [C, P] is the columns). The bias is one elementwise generic
// after, which the back end fuses with the activation and residual adds
// that follow. Depthwise convolutions (C/G = 1) keep the direct generic:
// their per-group products would be 1-row matmuls.

#include "passes/lowering/ConvAsGemm.h"

#include "passes/lowering/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace strata::ir;

namespace strata::lowering {

namespace {


// |x| with the dim groups |groups| merged (collapse) or split (expand).
Value collapse(OpBuilder &b, Location loc, Value x,
               ArrayRef<ReassociationIndices> groups) {
  return tensor::CollapseShapeOp::create(b, loc, x, groups);
}
Value expand(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> shape,
             ArrayRef<ReassociationIndices> groups) {
  auto type = RankedTensorType::get(shape, typeOf(x).getElementType());
  return tensor::ExpandShapeOp::create(b, loc, type, x, groups);
}

// Dim groups [[0..a), [a..b), ...] from group ends.
SmallVector<ReassociationIndices> groupsEndingAt(ArrayRef<int64_t> ends) {
  SmallVector<ReassociationIndices> groups;
  int64_t start = 0;
  for (int64_t end : ends) {
    ReassociationIndices g;
    for (int64_t d = start; d < end; ++d)
      g.push_back(d);
    groups.push_back(g);
    start = end;
  }
  return groups;
}

/// A parallel generic writing |init| (|dims| loops, |write|) from |src|
/// (|read|): the columns' copy.
Value copyThrough(OpBuilder &b, Location loc, Value src, Value init,
                  int64_t dims, ArrayRef<AffineExpr> read,
                  ArrayRef<AffineExpr> write) {
  MLIRContext *ctx = b.getContext();
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{src},
             ValueRange{init},
             SmallVector<AffineMap>{AffineMap::get(dims, 0, read, ctx),
                                    AffineMap::get(dims, 0, write, ctx)},
             SmallVector<utils::IteratorType>(dims,
                                              utils::IteratorType::parallel),
             [](OpBuilder &nb, Location l, ValueRange a) {
               linalg::YieldOp::create(nb, l, a[0]);
             })
      .getResult(0);
}

/// init += lhs * rhs over |loops| loops, the last the reduction: the
/// contraction MatmulToRuntime hands to the runtime's matmul.
Value multiplyAccumulate(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         Value init, int64_t loops,
                         ArrayRef<AffineExpr> lhsRead,
                         ArrayRef<AffineExpr> rhsRead,
                         ArrayRef<AffineExpr> write) {
  MLIRContext *ctx = b.getContext();
  SmallVector<utils::IteratorType> iterators(loops - 1,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{lhs, rhs},
             ValueRange{init},
             SmallVector<AffineMap>{AffineMap::get(loops, 0, lhsRead, ctx),
                                    AffineMap::get(loops, 0, rhsRead, ctx),
                                    AffineMap::get(loops, 0, write, ctx)},
             iterators,
             [](OpBuilder &nb, Location l, ValueRange a) {
               Value t = arith::MulFOp::create(nb, l, a[0], a[1]);
               linalg::YieldOp::create(
                   nb, l, Value(arith::AddFOp::create(nb, l, a[2], t)));
             })
      .getResult(0);
}

/// |x| + |bias| along dim |channel| of |x|, into |init|.
Value addChannelBias(OpBuilder &b, Location loc, Value x, Value bias,
                     Value init, int64_t channel) {
  MLIRContext *ctx = b.getContext();
  const int64_t rank = typeOf(x).getRank();
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{x, bias},
             ValueRange{init},
             SmallVector<AffineMap>{
                 b.getMultiDimIdentityMap(rank),
                 AffineMap::get(rank, 0, {getAffineDimExpr(channel, ctx)},
                                ctx),
                 b.getMultiDimIdentityMap(rank)},
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange a) {
               linalg::YieldOp::create(
                   nb, l, Value(arith::AddFOp::create(nb, l, a[0], a[1])));
             })
      .getResult(0);
}

} // namespace

Value convAsGemm(OpBuilder &b, Location loc, ConvOp op, Value padded,
                 Value w, Value bias) {
  MLIRContext *ctx = b.getContext();
  auto out = cast<RankedTensorType>(op.getType());
  RankedTensorType wt = typeOf(w), pt = typeOf(padded);
  Type et = out.getElementType();
  const int64_t spatial = wt.getRank() - 2;
  const int64_t groups = op.getGroup(), m = wt.getDimSize(0),
                cg = wt.getDimSize(1), mg = m / groups;
  if (!et.isF32() || (cg == 1 && groups > 1))
    return {};
  int64_t taps = 1, positions = 1;
  bool unitStrides = true, unpadded = true;
  for (int64_t d = 0; d < spatial; ++d) {
    taps *= wt.getDimSize(d + 2);
    positions *= out.getDimSize(d + 2);
    unitStrides &= op.getStrides()[d] == 1;
    unpadded &= pt.getDimSize(d + 2) == out.getDimSize(d + 2);
  }
  const bool grouped = groups > 1;
  const int64_t batch = pt.getDimSize(0);
  auto withBatch = [&](RankedTensorType type) {
    SmallVector<Value> dynamic;
    if (type.isDynamicDim(0))
      dynamic.push_back(dimValue(b, loc, padded, 0));
    return emptyTensor(b, loc, type, dynamic);
  };
  auto loop = [&](int64_t d) { return getAffineDimExpr(d, ctx); };

  // Columns [N, (G,) C/G * K, P].
  Value columns;
  if (taps == 1 && unitStrides && unpadded) {
    // [N, C, S...] as [N, C, P] (and [N, G, C/G, P]): the same elements.
    columns = collapse(b, loc, padded, groupsEndingAt({1, 2, 2 + spatial}));
    if (grouped)
      columns = expand(b, loc, columns, {batch, groups, cg, positions},
                       groupsEndingAt({1, 3, 4}));
  } else {
    // A copy generic writing [N, (G,) C/G, K_1..K_D, O_1..O_D] in order.
    // Non-grouped, its loops run channels first (c, n, k..., o...), every
    // operand indexed by c bare, so that threads take channels and each
    // writes whole rows; grouped, images first (n, g, c, k..., o...).
    const int64_t lead = grouped ? 3 : 2;  // loops before the taps
    const int64_t dims = lead + 2 * spatial;
    AffineExpr n = grouped ? loop(0) : loop(1),
               c = grouped ? loop(2) : loop(0);
    AffineExpr channel = grouped ? loop(1) * cg + c : c;
    SmallVector<AffineExpr> read{n, channel};
    for (int64_t d = 0; d < spatial; ++d)
      read.push_back(loop(lead + spatial + d) * op.getStrides()[d] +
                     loop(lead + d) * op.getDilations()[d]);
    SmallVector<AffineExpr> write{n};
    if (grouped)
      write.push_back(loop(1));
    write.push_back(c);
    SmallVector<int64_t> shape{batch};
    if (grouped)
      shape.push_back(groups);
    shape.push_back(cg);
    for (int64_t d = 0; d < spatial; ++d) {
      write.push_back(loop(lead + d));
      shape.push_back(wt.getDimSize(d + 2));
    }
    for (int64_t d = 0; d < spatial; ++d) {
      write.push_back(loop(lead + spatial + d));
      shape.push_back(out.getDimSize(d + 2));
    }
    auto columnType = RankedTensorType::get(shape, et);
    columns = copyThrough(b, loc, padded, withBatch(columnType), dims, read,
                          write);
    const int64_t c0 = grouped ? 2 : 1;  // the channel dim
    SmallVector<int64_t> ends{1};
    if (grouped)
      ends.push_back(2);
    ends.push_back(c0 + 1 + spatial);
    ends.push_back(c0 + 1 + 2 * spatial);
    columns = collapse(b, loc, columns, groupsEndingAt(ends));
  }

  // Weight [M, C/G, K...] as [M, C/G * K] (the constant read in place) or
  // [G, M/G, C/G * K].
  Value weight = collapse(b, loc, w, groupsEndingAt({1, 2 + spatial}));
  if (grouped)
    weight = expand(b, loc, weight, {groups, mg, cg * taps},
                    groupsEndingAt({2, 3}));

  // product[n, (g,) m, p] = sum_k weight[(g,) m, k] * columns[n, (g,) k, p].
  SmallVector<int64_t> productShape{batch};
  if (grouped)
    productShape.push_back(groups);
  productShape.push_back(mg);
  productShape.push_back(positions);
  auto productType = RankedTensorType::get(productShape, et);
  Value init = linalg::FillOp::create(b, loc,
                                      ValueRange{scalarConstant(b, loc, et, 0)},
                                      ValueRange{withBatch(productType)})
                   .getResult(0);
  const int64_t loops = grouped ? 5 : 4;
  AffineExpr n = loop(0), g = loop(1), mo = loop(loops - 3),
             p = loop(loops - 2), k = loop(loops - 1);
  SmallVector<AffineExpr> weightRead{mo, k}, columnRead{n, k, p},
      productWrite{n, mo, p};
  if (grouped) {
    weightRead.insert(weightRead.begin(), g);
    columnRead.insert(columnRead.begin() + 1, g);
    productWrite.insert(productWrite.begin() + 1, g);
  }
  Value product = multiplyAccumulate(b, loc, weight, columns, init, loops,
                                     weightRead, columnRead, productWrite);

  // [N, (G,) M/G, P] is [N, M, O...] as it stands.
  if (grouped)
    product = collapse(b, loc, product, groupsEndingAt({1, 3, 4}));
  SmallVector<int64_t> outShape(out.getShape());
  outShape[0] = batch;
  product = expand(b, loc, product, outShape,
                   groupsEndingAt({1, 2, 2 + spatial}));
  if (!bias)
    return product;
  return addChannelBias(b, loc, product, bias, withBatch(out), 1);
}

Value convChannelsLastAsGemm(OpBuilder &b, Location loc, ConvOp op, Value x,
                             Value w, Value bias) {
  MLIRContext *ctx = b.getContext();
  auto out = cast<RankedTensorType>(op.getType());
  RankedTensorType wt = typeOf(w), xt = typeOf(x);
  Type et = out.getElementType();
  const int64_t rank = out.getRank(), spatial = rank - 2;
  const int64_t c = xt.getDimSize(rank - 1), m = wt.getDimSize(rank - 1);
  ArrayRef<int64_t> pads = op.getPads(), strides = op.getStrides(),
                    dilations = op.getDilations();
  int64_t taps = 1;
  bool direct = true;  // the input is the columns
  for (int64_t d = 0; d < spatial; ++d) {
    taps *= wt.getDimSize(d);
    direct &= strides[d] == 1 && pads[d] == 0 && pads[spatial + d] == 0;
  }
  direct &= taps == 1;
  auto loop = [&](int64_t d) { return getAffineDimExpr(d, ctx); };
  auto emptyLike = [&](RankedTensorType type, Value like) {
    SmallVector<Value> dynamic;
    if (type.isDynamicDim(0))
      dynamic.push_back(dimValue(b, loc, like, 0));
    return emptyTensor(b, loc, type, dynamic);
  };

  // Columns [N * P, K * C]: row (n, o...) holds tap k's C channels at
  // k * C, each a contiguous run of the padded input.
  Value columns;
  if (direct) {
    columns = collapse(b, loc, x, groupsEndingAt({1 + spatial, rank}));
  } else {
    Value padded = x;
    if (llvm::any_of(pads, [](int64_t p) { return p != 0; })) {
      SmallVector<OpFoldResult> lo(rank, b.getIndexAttr(0)),
          hi(rank, b.getIndexAttr(0));
      SmallVector<int64_t> shape(xt.getShape());
      for (int64_t d = 0; d < spatial; ++d) {
        lo[d + 1] = b.getIndexAttr(pads[d]);
        hi[d + 1] = b.getIndexAttr(pads[spatial + d]);
        shape[d + 1] += pads[d] + pads[spatial + d];
      }
      padded = tensor::PadOp::create(b, loc, RankedTensorType::get(shape, et),
                                     x, lo, hi, scalarConstant(b, loc, et, 0));
    }
    // Loops (n, o_1..o_D, k_1..k_D, c) write [N, O..., K..., C] in order.
    const int64_t dims = 2 + 2 * spatial;
    SmallVector<AffineExpr> read{loop(0)}, write;
    SmallVector<int64_t> shape{xt.getDimSize(0)};
    for (int64_t d = 0; d < spatial; ++d) {
      read.push_back(loop(1 + d) * strides[d] +
                     loop(1 + spatial + d) * dilations[d]);
      shape.push_back(out.getDimSize(d + 1));
    }
    for (int64_t d = 0; d < spatial; ++d)
      shape.push_back(wt.getDimSize(d));
    shape.push_back(c);
    read.push_back(loop(dims - 1));
    for (int64_t d = 0; d < dims; ++d)
      write.push_back(loop(d));
    auto columnType = RankedTensorType::get(shape, et);
    columns = copyThrough(b, loc, padded, emptyLike(columnType, x), dims,
                          read, write);
    columns = collapse(b, loc, columns,
                       groupsEndingAt({1 + spatial, 1 + 2 * spatial + 1}));
  }

  // Weight [K..., C, M] as [K * C, M]: the B the back end packs at
  // compile time.
  Value weight = collapse(b, loc, w, groupsEndingAt({spatial + 1, rank}));

  // product[r, m] = sum_k columns[r, k] * weight[k, m].
  RankedTensorType columnsType = typeOf(columns);
  auto productType =
      RankedTensorType::get({columnsType.getDimSize(0), m}, et);
  Value init = linalg::FillOp::create(
                   b, loc, ValueRange{scalarConstant(b, loc, et, 0)},
                   ValueRange{emptyLike(productType, columns)})
                   .getResult(0);
  AffineExpr r = loop(0), mo = loop(1), k = loop(2);
  Value product = multiplyAccumulate(b, loc, columns, weight, init, 3, {r, k},
                                     {k, mo}, {r, mo});

  // [N * P, M] is [N, O..., M] as it stands.
  SmallVector<int64_t> outShape(out.getShape());
  outShape[0] = xt.getDimSize(0);
  product = expand(b, loc, product, outShape,
                   groupsEndingAt({1 + spatial, rank}));
  if (!bias)
    return product;
  return addChannelBias(b, loc, product, bias, emptyLike(out, x), rank - 1);
}

} // namespace strata::lowering
