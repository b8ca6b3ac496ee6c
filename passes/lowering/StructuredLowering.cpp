//===- StructuredLowering.cpp - strata contractions/reductions -> linalg --===//
// SPDX-License-Identifier: Apache-2.0
// matmul, linear, reductions, softmax, the norms, attention and cumsum as
// linalg.generic ops on tensors. Norms accumulate in fp32; attention is
// spelled out as two contractions around a masked softmax (the tiled
// flash-style kernel replaces this in the fusion/codegen work).

#include "passes/lowering/GlobalBlocks.h"
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/RuntimeChecks.h"

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

// A zero-filled (or |init|-filled) tensor of |type| with |dynamic| sizes.
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   ValueRange dynamic, double init) {
  Value empty = emptyTensor(b, loc, type, dynamic);
  Value v = scalarConstant(b, loc, type.getElementType(), init);
  return linalg::FillOp::create(b, loc, ValueRange{v}, ValueRange{empty})
      .getResult(0);
}

SmallVector<utils::IteratorType> iterators(int64_t parallel,
                                           int64_t reduction) {
  SmallVector<utils::IteratorType> it(parallel, utils::IteratorType::parallel);
  it.append(reduction, utils::IteratorType::reduction);
  return it;
}

// acc + a * b, in the accumulator's type.
// Contractions and sums may be reassociated and contracted to FMAs: LLVM
// then vectorizes their loops. The order change is far inside the fp32
// tolerance (docs/architecture.md).
arith::FastMathFlags reductionFlags() {
  return arith::FastMathFlags::reassoc | arith::FastMathFlags::contract;
}

Value fma(OpBuilder &b, Location l, Value x, Value y, Value acc) {
  if (!isa<FloatType>(x.getType()))
    return addScalar(b, l, acc, mulScalar(b, l, x, y));
  Value p = arith::MulFOp::create(b, l, x, y, reductionFlags());
  return arith::AddFOp::create(b, l, acc, p, reductionFlags());
}

Value sumScalar(OpBuilder &b, Location l, Value x, Value y) {
  if (!isa<FloatType>(x.getType()))
    return addScalar(b, l, x, y);
  return arith::AddFOp::create(b, l, x, y, reductionFlags());
}

// A contraction: a generic over |maps| (inputs, then the output) that
// accumulates the product of its two |inputs| into |init| (of |type|),
// summing over loop |reductionDim| (every other loop is parallel).
Value buildContraction(OpBuilder &b, Location loc, RankedTensorType type,
                       ValueRange inputs, Value init, ArrayRef<AffineMap> maps,
                       int64_t reductionDim) {
  SmallVector<utils::IteratorType> its(maps.front().getNumDims(),
                                       utils::IteratorType::parallel);
  its[reductionDim] = utils::IteratorType::reduction;
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, inputs, ValueRange{init}, maps, its,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               linalg::YieldOp::create(nb, l, fma(nb, l, a[0], a[1], a[2]));
             })
      .getResult(0);
}

//===----------------------------------------------------------------------===//
// matmul / linear
//===----------------------------------------------------------------------===//

// numpy.matmul as one generic over [batch..., m?, n?, k].
// The contraction made for |source| keeps its licence to compute in a
// narrower type (strata.compute_type), for the back end's kernel choice.
Value keepComputeType(Operation *source, Value contraction) {
  if (Attribute type = source->getAttr(kComputeTypeAttr))
    if (Operation *def = contraction.getDefiningOp())
      def->setAttr(kComputeTypeAttr, type);
  return contraction;
}

Value lowerMatmul(MatmulOp op, MatmulOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
  RankedTensorType lt = typeOf(lhs), rt = typeOf(rhs);
  auto out = cast<RankedTensorType>(op.getType());
  bool hasM = lt.getRank() >= 2, hasN = rt.getRank() >= 2;
  int64_t batch = out.getRank() - hasM - hasN;
  // Iteration order [batch..., m?, k, n?]: the innermost loop walks
  // contiguous rows of rhs and of the result, which LLVM vectorizes.
  int64_t mDim = batch, kDim = batch + hasM, nDim = kDim + 1;
  int64_t loops = kDim + 1 + hasN;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  auto batchExprs = [&](RankedTensorType t, int64_t matrixDims) {
    SmallVector<AffineExpr> exprs;
    int64_t tb = t.getRank() - matrixDims;
    for (int64_t i = 0; i < tb; ++i) {
      int64_t od = i + batch - tb;
      bool broadcast = t.getDimSize(i) == 1 && out.getDimSize(od) != 1;
      exprs.push_back(broadcast ? getAffineConstantExpr(0, ctx) : d(od));
    }
    return exprs;
  };
  SmallVector<AffineExpr> le = batchExprs(lt, hasM ? 2 : 1);
  if (hasM)
    le.push_back(d(mDim));
  le.push_back(d(kDim));
  SmallVector<AffineExpr> re = batchExprs(rt, hasN ? 2 : 1);
  re.push_back(d(kDim));
  if (hasN)
    re.push_back(d(nDim));
  SmallVector<AffineExpr> oe;
  for (int64_t i = 0; i < batch; ++i)
    oe.push_back(d(i));
  if (hasM)
    oe.push_back(d(mDim));
  if (hasN)
    oe.push_back(d(nDim));
  // Dynamic result extents: batch from a non-broadcast operand, m from
  // lhs, n from rhs.
  SmallVector<Value> dynamic;
  for (int64_t i = 0; i < out.getRank(); ++i) {
    if (!out.isDynamicDim(i))
      continue;
    Value extent;
    if (hasM && i == batch)
      extent = dimValue(rewriter, loc, lhs, lt.getRank() - 2);
    else if (hasN && i == batch + hasM)
      extent = dimValue(rewriter, loc, rhs, rt.getRank() - 1);
    else {
      for (auto [v, t, md] : {std::tuple(lhs, lt, hasM ? 2 : 1),
                              std::tuple(rhs, rt, hasN ? 2 : 1)}) {
        int64_t tb = t.getRank() - md, ti = i - (batch - tb);
        if (ti >= 0 && ti < tb && t.getDimSize(ti) != 1) {
          extent = dimValue(rewriter, loc, v, ti);
          break;
        }
      }
      if (!extent)
        extent = arith::ConstantIndexOp::create(rewriter, loc, 1);
    }
    dynamic.push_back(extent);
  }
  // Extents the compiler could not compare: the contraction dim, and
  // batch dims that do not broadcast statically.
  checkExtentsEqual(rewriter, loc,
                    dimValue(rewriter, loc, rhs, rt.getRank() - 1 - hasN),
                    dimValue(rewriter, loc, lhs, lt.getRank() - 1), kDim,
                    STRATA_CHECK_EXTENT_MISMATCH, rhs);
  for (int64_t i = 0, next = 0; i < batch; ++i) {
    Value extent =
        out.isDynamicDim(i)
            ? dynamic[next++]
            : arith::ConstantIndexOp::create(rewriter, loc, out.getDimSize(i));
    for (auto [v, t, md] : {std::tuple(lhs, lt, hasM ? 2 : 1),
                            std::tuple(rhs, rt, hasN ? 2 : 1)}) {
      int64_t tb = t.getRank() - md, ti = i - (batch - tb);
      if (ti < 0 || (t.getDimSize(ti) == 1 && out.getDimSize(i) != 1) ||
          (!t.isDynamicDim(ti) && !out.isDynamicDim(i)))
        continue;
      checkExtentsEqual(rewriter, loc, dimValue(rewriter, loc, v, ti), extent,
                        i, STRATA_CHECK_BROADCAST, v);
    }
  }
  Value init = filledTensor(rewriter, loc, out, dynamic, 0.0);
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, le, ctx),
                                 AffineMap::get(loops, 0, re, ctx),
                                 AffineMap::get(loops, 0, oe, ctx)};
  return keepComputeType(
      op, buildContraction(rewriter, loc, out, {lhs, rhs}, init, maps, kDim));
}

// The accumulator a linear layer starts from: its bias broadcast over the
// rows, or zeros.
Value linearInit(OpBuilder &b, Location loc, RankedTensorType out,
                 ValueRange dynamic, Value bias) {
  if (!bias)
    return filledTensor(b, loc, out, dynamic, 0.0);
  int64_t r = out.getRank();
  Value empty = emptyTensor(b, loc, out, dynamic);
  SmallVector<AffineMap> maps = {
      AffineMap::get(r, 0, {getAffineDimExpr(r - 1, b.getContext())},
                     b.getContext()),
      b.getMultiDimIdentityMap(r)};
  return linalg::GenericOp::create(
             b, loc, TypeRange{out}, ValueRange{bias}, ValueRange{empty},
             maps, iterators(r, 0),
             [&](OpBuilder &nb, Location l, ValueRange a) {
               linalg::YieldOp::create(nb, l, a[0]);
             })
      .getResult(0);
}

// A linear layer's maps over loops [rows..., k, n] (k = rank - 1): the
// innermost loop walks a contiguous weight row and output row (vectorized
// by LLVM).
struct LinearMaps {
  AffineMap input, weight, output;
};
LinearMaps linearMaps(MLIRContext *ctx, int64_t rank) {
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  int64_t loops = rank + 1, kDim = rank - 1, nDim = rank;
  SmallVector<AffineExpr> ie, oe;
  for (int64_t i = 0; i + 1 < rank; ++i) {
    ie.push_back(d(i));
    oe.push_back(d(i));
  }
  ie.push_back(d(kDim));
  oe.push_back(d(nDim));
  return {AffineMap::get(loops, 0, ie, ctx),
          AffineMap::get(loops, 0, {d(kDim), d(nDim)}, ctx),
          AffineMap::get(loops, 0, oe, ctx)};
}

// out[..., n] = bias[n] + sum_k in[..., k] * w[k, n]
Value lowerLinear(LinearOp op, LinearOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Value in = adaptor.getInput(), w = adaptor.getWeight();
  auto out = cast<RankedTensorType>(op.getType());
  int64_t r = out.getRank();
  // Rows from the input, the last dim from the weight.
  SmallVector<Value> dynamic = dynamicExtents(out, [&](int64_t i) {
    return i + 1 < r ? dimValue(rewriter, loc, in, i)
                     : dimValue(rewriter, loc, w, 1);
  });
  Value init = linearInit(rewriter, loc, out, dynamic, adaptor.getBias());
  LinearMaps m = linearMaps(ctx, r);
  return keepComputeType(op, buildContraction(rewriter, loc, out, {in, w},
                                              init,
                                              {m.input, m.weight, m.output},
                                              r - 1));
}

// out[..., n] = bias[n] + sum_k in[..., k] * (q[k, n] * scales[k / G, n]):
// one contraction of three inputs. Back ends recognize it by its body (a
// runtime kernel widens the weight in registers); as loops it dequantizes
// each weight where it is read.
Value lowerQuantizedLinear(QuantizedLinearOp op,
                           QuantizedLinearOp::Adaptor adaptor,
                           ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Value in = adaptor.getInput(), q = adaptor.getWeight(),
        scales = adaptor.getScales();
  auto out = cast<RankedTensorType>(op.getType());
  int64_t r = out.getRank(), loops = r + 1;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  // The weight is static: only rows are dynamic.
  SmallVector<Value> dynamic = dynamicExtents(out, [&](int64_t i) {
    return dimValue(rewriter, loc, in, i);
  });
  Value init = linearInit(rewriter, loc, out, dynamic, adaptor.getBias());
  int64_t kDim = r - 1, nDim = r;
  LinearMaps m = linearMaps(ctx, r);
  AffineExpr group = d(kDim).floorDiv(op.getGroupSize());
  SmallVector<AffineMap> maps = {
      m.input, m.weight, AffineMap::get(loops, 0, {group, d(nDim)}, ctx),
      m.output};
  SmallVector<utils::IteratorType> its(loops, utils::IteratorType::parallel);
  its[kDim] = utils::IteratorType::reduction;
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{out}, ValueRange{in, q, scales},
      ValueRange{init}, maps, its,
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value w = arith::SIToFPOp::create(b, l, b.getF32Type(), a[1]);
        Value scaled = arith::MulFOp::create(b, l, w, a[2]);
        linalg::YieldOp::create(b, l, fma(b, l, a[0], scaled, a[3]));
      });
  // The values' width, which the body (i8 storage) does not say: a back end
  // may store 4-bit weights two a byte.
  generic->setAttr(kWeightBitsAttr, rewriter.getI64IntegerAttr(op.getBits()));
  // Run-time activation quantization is a back end's kernel choice; the
  // loops (fp32 activations) compute the same product more exactly.
  if (op.getActivationBits() != 0)
    generic->setAttr(kActivationBitsAttr,
                     rewriter.getI64IntegerAttr(op.getActivationBits()));
  if (op.getActivationBlock() != 0)
    generic->setAttr(kActivationBlockAttr,
                     rewriter.getI64IntegerAttr(op.getActivationBlock()));
  return generic.getResult(0);
}

//===----------------------------------------------------------------------===//
// Reductions and softmax
//===----------------------------------------------------------------------===//

SmallVector<int64_t> normalizedAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t a : axes)
    out.push_back(a < 0 ? a + rank : a);
  llvm::sort(out);
  return out;
}

double lowest(Type t) {
  if (isa<FloatType>(t))
    return -std::numeric_limits<double>::infinity();
  return -std::pow(2.0, t.getIntOrFloatBitWidth() - 1);
}

template <typename OpT>
Value lowerReduce(OpT op, typename OpT::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value in = adaptor.getInput();
  Type et = typeOf(in).getElementType();
  SmallVector<int64_t> axes =
      normalizedAxes(op.getAxes(), typeOf(in).getRank());
  bool isMax = std::is_same_v<OpT, ReduceMaxOp>;
  bool isProd = std::is_same_v<OpT, ReduceProdOp>;
  Value init = scalarConstant(rewriter, loc, et,
                              isMax ? lowest(et) : isProd ? 1.0 : 0.0);
  Value r = buildReduction(rewriter, loc, in, axes, op.getKeepdims(), init,
                           [&](OpBuilder &b, Location l, ValueRange a) {
                             if (isMax)
                               return maxScalar(b, l, a[0], a[1]);
                             if (isProd)
                               return mulScalar(b, l, a[0], a[1]);
                             return sumScalar(b, l, a[0], a[1]);
                           });
  if (std::is_same_v<OpT, ReduceMeanOp>) {
    Value count = countOf(rewriter, loc, in, axes, et);
    r = buildElementwise(
        rewriter, loc, typeOf(r), r,
        [&](OpBuilder &b, Location l, ValueRange a) {
          if (isa<FloatType>(et))
            return Value(arith::DivFOp::create(b, l, a[0], count));
          return Value(arith::DivSIOp::create(b, l, a[0], count));
        });
  }
  return r;
}

// Softmax / log-softmax along one axis, stabilized by the maximum.
template <typename OpT, bool Log>
Value lowerSoftmax(OpT op, typename OpT::Adaptor adaptor,
                   ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value x = adaptor.getInput();
  RankedTensorType t = typeOf(x);
  int64_t axis = normalizedAxis(op.getAxis(), t.getRank());
  Type et = t.getElementType();
  Value m = buildReduction(rewriter, loc, x, {axis}, true,
                           scalarConstant(rewriter, loc, et, lowest(et)),
                           [](OpBuilder &b, Location l, ValueRange a) {
                             return maxScalar(b, l, a[0], a[1]);
                           });
  Value shifted = buildElementwise(
      rewriter, loc, t, {x, m}, [](OpBuilder &b, Location l, ValueRange a) {
        return arith::SubFOp::create(b, l, a[0], a[1]);
      });
  Value e = buildElementwise(rewriter, loc, t, shifted,
                             [](OpBuilder &b, Location l, ValueRange a) {
                               return math::ExpOp::create(b, l, a[0]);
                             });
  Value s = buildReduction(rewriter, loc, e, {axis}, true,
                           scalarConstant(rewriter, loc, et, 0),
                           [](OpBuilder &b, Location l, ValueRange a) {
                             return sumScalar(b, l, a[0], a[1]);
                           });
  Value y;
  if (Log)
    y = buildElementwise(rewriter, loc, t, {shifted, s},
                         [](OpBuilder &b, Location l, ValueRange a) {
                           return arith::SubFOp::create(
                               b, l, a[0], math::LogOp::create(b, l, a[1]));
                         });
  else
    y = buildElementwise(rewriter, loc, t, {e, s},
                         [](OpBuilder &b, Location l, ValueRange a) {
                           return arith::DivFOp::create(b, l, a[0], a[1]);
                         });
  return y;
}

//===----------------------------------------------------------------------===//
// Norms (fp32 accumulation)
//===----------------------------------------------------------------------===//

Value toF32(OpBuilder &b, Location loc, Value x) {
  RankedTensorType t = typeOf(x);
  if (t.getElementType().isF32())
    return x;
  auto type = RankedTensorType::get(t.getShape(), b.getF32Type());
  return buildElementwise(b, loc, type, x,
                          [](OpBuilder &nb, Location l, ValueRange a) {
                            return Value(arith::ExtFOp::create(
                                nb, l, nb.getF32Type(), a[0]));
                          });
}

Value meanOver(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> axes) {
  Type f32 = b.getF32Type();
  Value s = buildReduction(b, loc, x, axes, true, scalarConstant(b, loc, f32, 0),
                           [](OpBuilder &nb, Location l, ValueRange a) {
                             return sumScalar(nb, l, a[0], a[1]);
                           });
  Value count = countOf(b, loc, x, axes, f32);
  return buildElementwise(b, loc, typeOf(s), s,
                          [&](OpBuilder &nb, Location l, ValueRange a) {
                            return arith::DivFOp::create(nb, l, a[0], count);
                          });
}

// y = norm(x) * scale (+ bias), with norm = (x - mean) * rsqrt(var + eps)
// for layer_norm and x * rsqrt(mean(x^2) + eps) for rms_norm.
template <typename OpT, bool Rms>
Value lowerNorm(OpT op, typename OpT::Adaptor adaptor,
                ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value x = adaptor.getInput();
  RankedTensorType t = typeOf(x);
  int64_t rank = t.getRank();
  int64_t axis = normalizedAxis(op.getAxis(), rank);
  SmallVector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d)
    axes.push_back(d);
  Value xf = toF32(rewriter, loc, x);
  auto ft = typeOf(xf);
  Value eps = scalarConstant(rewriter, loc, rewriter.getF32Type(),
                             op.getEpsilon().convertToDouble());
  Value centered = xf;
  if (!Rms) {
    Value mean = meanOver(rewriter, loc, xf, axes);
    centered =
        buildElementwise(rewriter, loc, ft, {xf, mean},
                         [](OpBuilder &b, Location l, ValueRange a) {
                           return arith::SubFOp::create(b, l, a[0], a[1]);
                         });
  }
  Value sq = buildElementwise(rewriter, loc, ft, centered,
                              [](OpBuilder &b, Location l, ValueRange a) {
                                return arith::MulFOp::create(b, l, a[0], a[0]);
                              });
  Value var = meanOver(rewriter, loc, sq, axes);
  SmallVector<Value> operands = {centered, var, adaptor.getScale()};
  Value bias;
  if constexpr (!Rms)
    bias = adaptor.getBias();
  if (bias)
    operands.push_back(bias);
  Type et = t.getElementType();
  return buildElementwise(
      rewriter, loc, cast<RankedTensorType>(op.getType()), operands,
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value inv =
            math::RsqrtOp::create(b, l, arith::AddFOp::create(b, l, a[1], eps));
        Value n = arith::MulFOp::create(b, l, a[0], inv);
        Value scale = a[2];
        if (!et.isF32())
          scale = arith::ExtFOp::create(b, l, b.getF32Type(), scale);
        Value r = arith::MulFOp::create(b, l, n, scale);
        if (a.size() > 3) {
          Value bv = a[3];
          if (!et.isF32())
            bv = arith::ExtFOp::create(b, l, b.getF32Type(), bv);
          r = arith::AddFOp::create(b, l, r, bv);
        }
        return et.isF32() ? r : Value(arith::TruncFOp::create(b, l, et, r));
      });
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

FailureOr<Value> lowerAttention(AttentionOp op, AttentionOp::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Value q = adaptor.getQuery(), k = adaptor.getKey(), v = adaptor.getValue();
  RankedTensorType qt = typeOf(q), kt = typeOf(k);
  if (qt.isDynamicDim(1) || kt.isDynamicDim(1) || qt.isDynamicDim(3))
    return rewriter.notifyMatchFailure(op, "head counts and head dim must "
                                           "be static");
  checkAttentionOperands(rewriter, loc, q, k, v, adaptor.getMask());
  int64_t group = qt.getDimSize(1) / kt.getDimSize(1);
  Type et = qt.getElementType();
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  // scores[b, h, i, j] = sum_e q[b, h, i, e] * k[b, h / group, j, e]
  auto scoresType = RankedTensorType::get(
      {qt.getDimSize(0), qt.getDimSize(1), qt.getDimSize(2), kt.getDimSize(2)},
      et);
  // Batch and queries from q, the last dim from |last| (dim 1, the
  // heads, is static).
  auto attentionExtents = [&](RankedTensorType type, Value last,
                              int64_t lastDim) {
    return dynamicExtents(type, [&](int64_t i) {
      return i == 3 ? dimValue(rewriter, loc, last, lastDim)
                    : dimValue(rewriter, loc, q, i);
    });
  };
  Value zeros = filledTensor(rewriter, loc, scoresType,
                             attentionExtents(scoresType, k, 2), 0.0);
  AffineExpr kvHead = d(1).floorDiv(group);
  SmallVector<AffineMap> maps = {
      AffineMap::get(5, 0, {d(0), d(1), d(2), d(4)}, ctx),
      AffineMap::get(5, 0, {d(0), kvHead, d(3), d(4)}, ctx),
      AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx)};
  Value scores = buildContraction(rewriter, loc, scoresType, {q, k}, zeros,
                                  maps, /*reductionDim=*/4);
  double scale = op.getScale() ? op.getScale()->convertToDouble()
                               : 1.0 / std::sqrt((double)qt.getDimSize(3));
  Value mask = adaptor.getMask();
  bool causal = op.getCausal();
  std::optional<int64_t> window = op.getWindow();
  int64_t sinks = op.getSinks().value_or(0);
  SmallVector<Value> operands = {scores};
  if (mask)
    operands.push_back(mask);
  Value sq = dimValue(rewriter, loc, q, 2), sk = dimValue(rewriter, loc, k, 2);
  Value offset = arith::SubIOp::create(rewriter, loc, sk, sq);
  // Top-k global blocks: each block's rank among a query's candidates.
  std::optional<GlobalBlocks> global;
  Value ranks;
  if (std::optional<int64_t> topk = op.getGlobalTopk(); topk && window) {
    std::optional<int64_t> block = op.getGlobalBlock();
    global = GlobalBlocks{*topk, *block, *window, sinks};
    ranks = globalBlockRanks(
        rewriter, loc, q, k, *global,
        [&](OpBuilder &b, Location l, Value, Value i) -> Value {
          return arith::AddIOp::create(b, l, i, offset);
        });
  }
  // Scale, add/apply the mask, and apply causal/window/sink visibility.
  Value masked = buildElementwise(
      rewriter, loc, scoresType, operands,
      [&](OpBuilder &b, Location l, ValueRange a) {
        Value s =
            arith::MulFOp::create(b, l, a[0], scalarConstant(b, l, et, scale));
        Value ninf = scalarConstant(b, l, et, lowest(et));
        if (a.size() > 1) {
          if (a[1].getType().isInteger(1))
            s = arith::SelectOp::create(b, l, a[1], s, ninf);
          else
            s = arith::AddFOp::create(b, l, s, a[1]);
        }
        if (!causal && !window)
          return s;
        // Query i sees key j when j <= i + (Sk - Sq); a window keeps the
        // last `window` of those, plus the first `sinks` keys.
        Value i = linalg::IndexOp::create(b, l, 2);
        Value j = linalg::IndexOp::create(b, l, 3);
        Value last = arith::AddIOp::create(b, l, i, offset);
        Value visible = arith::ConstantIntOp::create(b, l, 1, 1);
        if (causal)
          visible =
              arith::CmpIOp::create(b, l, arith::CmpIPredicate::sle, j, last);
        if (window)
          visible = arith::AndIOp::create(
              b, l, visible,
              isKeptByWindow(b, l, j, last, *window, sinks, global, ranks,
                             linalg::IndexOp::create(b, l, 0),
                             linalg::IndexOp::create(b, l, 1), i));
        Value hidden = ninf;
        if (op.getMaskHidden() && a.size() > 1 && !a[1].getType().isInteger(1))
          hidden = arith::AddFOp::create(b, l, ninf, a[1]);
        return Value(arith::SelectOp::create(b, l, visible, s, hidden));
      });
  auto softmax = SoftmaxOp::create(rewriter, loc, scoresType, masked, 3);
  // out[b, h, i, e] = sum_j p[b, h, i, j] * v[b, h / group, j, e]
  auto out = cast<RankedTensorType>(op.getType());
  Value ozeros =
      filledTensor(rewriter, loc, out, attentionExtents(out, v, 3), 0.0);
  // Iteration (b, h, i, j, e): the key loop j sits outside the
  // contiguous head-dim loop e.
  SmallVector<AffineMap> omaps = {
      AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx),
      AffineMap::get(5, 0, {d(0), kvHead, d(3), d(4)}, ctx),
      AffineMap::get(5, 0, {d(0), d(1), d(2), d(4)}, ctx)};
  return buildContraction(rewriter, loc, out, {softmax.getResult(), v}, ozeros,
                          omaps, /*reductionDim=*/3);
}

//===----------------------------------------------------------------------===//
// CumSum
//===----------------------------------------------------------------------===//

// out[..., i, ...] = sum over k of x[..., k, ...] where k <= i (exclusive:
// k < i; reverse: k >= i or k > i), as a generic with an extra reduction dim.
Value lowerCumsum(CumsumOp op, CumsumOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Value x = adaptor.getInput();
  RankedTensorType t = typeOf(x);
  int64_t r = t.getRank();
  int64_t axis = normalizedAxis(op.getAxis(), r);
  SmallVector<AffineExpr> in, out;
  for (int64_t i = 0; i < r; ++i) {
    in.push_back(getAffineDimExpr(i == axis ? r : i, ctx));
    out.push_back(getAffineDimExpr(i, ctx));
  }
  Value zeros = filledTensor(
      rewriter, loc, t,
      dynamicExtents(t,
                     [&](int64_t i) { return dimValue(rewriter, loc, x, i); }),
      0.0);
  bool exclusive = op.getExclusive(), reverse = op.getReverse();
  auto pred =
      reverse
          ? (exclusive ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::sge)
          : (exclusive ? arith::CmpIPredicate::slt : arith::CmpIPredicate::sle);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{t}, ValueRange{x}, ValueRange{zeros},
      {AffineMap::get(r + 1, 0, in, ctx), AffineMap::get(r + 1, 0, out, ctx)},
      iterators(r, 1), [&](OpBuilder &b, Location l, ValueRange a) {
        Value i = linalg::IndexOp::create(b, l, axis);
        Value k = linalg::IndexOp::create(b, l, r);
        Value take = arith::CmpIOp::create(b, l, pred, k, i);
        Value add = addScalar(b, l, a[1], a[0]);
        linalg::YieldOp::create(
            b, l, Value(arith::SelectOp::create(b, l, take, add, a[1])));
      });
  return generic.getResult(0);
}

} // namespace

void populateStructuredLoweringPatterns(RewritePatternSet &patterns) {
  patterns
      .add<OneResultLowering<MatmulOp, lowerMatmul>,
           OneResultLowering<LinearOp, lowerLinear>,
           OneResultLowering<QuantizedLinearOp, lowerQuantizedLinear>,
           OneResultLowering<ReduceSumOp, lowerReduce<ReduceSumOp>>,
           OneResultLowering<ReduceMeanOp, lowerReduce<ReduceMeanOp>>,
           OneResultLowering<ReduceMaxOp, lowerReduce<ReduceMaxOp>>,
           OneResultLowering<ReduceProdOp, lowerReduce<ReduceProdOp>>,
           OneResultLowering<SoftmaxOp, lowerSoftmax<SoftmaxOp, false>>,
           OneResultLowering<LogSoftmaxOp, lowerSoftmax<LogSoftmaxOp, true>>,
           OneResultLowering<LayerNormOp, lowerNorm<LayerNormOp, false>>,
           OneResultLowering<RmsNormOp, lowerNorm<RmsNormOp, true>>,
           OneResultLowering<AttentionOp, lowerAttention>,
           OneResultLowering<CumsumOp, lowerCumsum>>(patterns.getContext());
}

} // namespace strata::lowering
