//===- ConvAsGemm.cpp - Convolutions as im2col + contraction ---------------===//
// SPDX-License-Identifier: Apache-2.0
// A convolution of G groups is, per image and group, the product of the
// columns [P, C/G * K] (P output positions, K taps; row p holds the taps
// of output p, channel by channel) and the transposed weight [C/G * K,
// M/G]. The columns are one copy generic from the padded input; the
// product is a generic with loops (n, g, p, m, k) that MatmulToRuntime
// hands to the runtime's matmul: A the columns (rows read in place), B the
// weight (one group: a constant viewed [M, C/G * K], packed at compile
// time into the kernel's panels), C [N, G, P, M/G] (rows contiguous); one
// more generic writes it transposed to [N, M, O...], adding the bias.
// Depthwise
// convolutions (C/G = 1) keep the direct generic: their per-group
// products would be 1-column matmuls.

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
  for (int64_t d = 0; d < spatial; ++d) {
    taps *= wt.getDimSize(d + 2);
    positions *= out.getDimSize(d + 2);
  }
  const int64_t batch = pt.getDimSize(0);
  auto withBatch = [&](RankedTensorType type) {
    SmallVector<Value> dynamic;
    if (type.isDynamicDim(0))
      dynamic.push_back(dimValue(b, loc, padded, 0));
    return emptyTensor(b, loc, type, dynamic);
  };

  // Columns [N, G, O_1..O_D, C/G, K_1..K_D], collapsed to [N, G, P,
  // C/G * K]: a copy generic writing them in order. (Its first loop, the
  // images, is what the back end splits over threads; a channel-first
  // order that would split a single image scatters the writes and
  // measured 20-30% slower on ResNet-50.)
  const bool grouped = groups > 1;
  const int64_t dims = 3 + 2 * spatial, channelDim = 2 + spatial;
  auto loop = [&](int64_t d) { return getAffineDimExpr(d, ctx); };
  SmallVector<int64_t> shape{batch, groups};
  for (int64_t d = 0; d < spatial; ++d)
    shape.push_back(out.getDimSize(d + 2));
  shape.push_back(cg);
  for (int64_t d = 0; d < spatial; ++d)
    shape.push_back(wt.getDimSize(d + 2));
  SmallVector<AffineExpr> read{loop(0), loop(1) * cg + loop(channelDim)};
  for (int64_t d = 0; d < spatial; ++d)
    read.push_back(loop(2 + d) * op.getStrides()[d] +
                   loop(channelDim + 1 + d) * op.getDilations()[d]);
  auto columnType = RankedTensorType::get(shape, et);
  Value columns =
      linalg::GenericOp::create(
          b, loc, TypeRange{columnType}, ValueRange{padded},
          ValueRange{withBatch(columnType)},
          SmallVector<AffineMap>{AffineMap::get(dims, 0, read, ctx),
                                 b.getMultiDimIdentityMap(dims)},
          SmallVector<utils::IteratorType>(dims,
                                           utils::IteratorType::parallel),
          [](OpBuilder &nb, Location l, ValueRange a) {
            linalg::YieldOp::create(nb, l, a[0]);
          })
          .getResult(0);
  columns = collapse(b, loc, columns,
                     groupsEndingAt({1, 2, channelDim, dims}));

  // Weight [M, C/G, K...] as [M, C/G * K] (one group: the constant the
  // back end packs at compile time) or [G, M/G, C/G * K].
  Value weight = collapse(b, loc, w, groupsEndingAt({1, 2 + spatial}));
  if (groups > 1)
    weight = expand(b, loc, weight, {groups, mg, cg * taps},
                    groupsEndingAt({2, 3}));

  // product[n, g, p, m] = sum_k columns[n, g, p, k] * weight[g, m, k].
  auto productType = RankedTensorType::get({batch, groups, positions, mg}, et);
  Value init = linalg::FillOp::create(b, loc,
                                      ValueRange{scalarConstant(b, loc, et, 0)},
                                      ValueRange{withBatch(productType)})
                   .getResult(0);
  AffineExpr n = getAffineDimExpr(0, ctx), g = getAffineDimExpr(1, ctx),
             p = getAffineDimExpr(2, ctx), mo = getAffineDimExpr(3, ctx),
             k = getAffineDimExpr(4, ctx);
  SmallVector<AffineExpr> weightRead{mo, k};
  if (groups > 1)
    weightRead.insert(weightRead.begin(), g);
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value product =
      linalg::GenericOp::create(
          b, loc, TypeRange{productType}, ValueRange{columns, weight},
          ValueRange{init},
          SmallVector<AffineMap>{AffineMap::get(5, 0, {n, g, p, k}, ctx),
                                 AffineMap::get(5, 0, weightRead, ctx),
                                 AffineMap::get(5, 0, {n, g, p, mo}, ctx)},
          iterators,
          [](OpBuilder &nb, Location l, ValueRange a) {
            Value t = arith::MulFOp::create(nb, l, a[0], a[1]);
            linalg::YieldOp::create(
                nb, l, Value(arith::AddFOp::create(nb, l, a[2], t)));
          })
          .getResult(0);

  // The output [N, M, O...] reads the product transposed (plus the bias):
  // one pass, where a strided C would cost the matmul a scatter and a
  // gather of every tile per k block. Loops (m, n, o...): with one group
  // the channel loop indexes every operand bare (threads take channels).
  const int64_t rank = out.getRank();
  AffineExpr channel = getAffineDimExpr(0, ctx),
             image = getAffineDimExpr(1, ctx),
             position = getAffineConstantExpr(0, ctx);
  for (int64_t d = 0; d < spatial; ++d)
    position = position * out.getDimSize(d + 2) + getAffineDimExpr(2 + d, ctx);
  SmallVector<Value> operands{product};
  SmallVector<AffineMap> maps{AffineMap::get(
      rank, 0,
      grouped ? SmallVector<AffineExpr>{image, channel.floorDiv(mg), position,
                                        channel % mg}
              : SmallVector<AffineExpr>{image, getAffineConstantExpr(0, ctx),
                                        position, channel},
      ctx)};
  if (bias) {
    operands.push_back(bias);
    maps.push_back(AffineMap::get(rank, 0, {channel}, ctx));
  }
  SmallVector<AffineExpr> outExprs{image, channel};
  for (int64_t d = 0; d < spatial; ++d)
    outExprs.push_back(getAffineDimExpr(2 + d, ctx));
  maps.push_back(AffineMap::get(rank, 0, outExprs, ctx));
  return linalg::GenericOp::create(
             b, loc, TypeRange{out}, operands, ValueRange{withBatch(out)},
             maps,
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value v = a[0];
               if (bias)
                 v = arith::AddFOp::create(nb, l, v, a[1]);
               linalg::YieldOp::create(nb, l, v);
             })
      .getResult(0);
}

} // namespace strata::lowering
