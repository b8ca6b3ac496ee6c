//===- ConvChannelsLast.cpp - Convolutions over channels-last tensors -----===//
// SPDX-License-Identifier: Apache-2.0
// ONNX convolutions are NCHW: a position's input channels lie a whole
// plane apart, so the matmul a convolution lowers to either gathers its
// columns across planes or runs with the weight as A against unpacked
// columns (65-91% of the peak on ResNet-50's shapes, 43% where K = 64,
// 65% where a plane is 7 x 7). Channels last, every tap of a position is a
// contiguous run of channels, a 1x1 convolution is the matmul of the
// input as it stands, positions (of every image) are the rows and the
// weight is B, packed at compile time: 94-98% of the peak on the same
// shapes (docs/design/cpu-conv.md).
//
// Each fp32 convolution with one group becomes transpose -> channels-last
// conv -> transpose, its weight transposed to [K..., C, M] (a constant:
// strata-fold-constant-transposes folds it). The transposes back to NCHW
// then move below the elementwise ops after them (the ReLUs and residual
// adds between convolutions) until they meet the next convolution's
// transpose to channels last, where the pair cancels (the transpose
// canonicalization); a pooling takes the channels-last form too. What
// remains are the transposes at the edges of each run of convolutions: the
// model's input, a reduction, a reshape.

#include "passes/Passes.h"

#include "dialects/strata/IR/ConstantValues.h"
#include "dialects/strata/IR/StrataOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata {
#define GEN_PASS_DEF_CONVCHANNELSLASTPASS
#include "passes/Passes.h.inc"
} // namespace strata

using namespace mlir;
using namespace strata::ir;

namespace strata {
namespace {

/// [N, C, S...] -> [N, S..., C] for a tensor of rank |rank|.
SmallVector<int64_t> toChannelsLast(int64_t rank) {
  SmallVector<int64_t> perm{0};
  for (int64_t d = 2; d < rank; ++d)
    perm.push_back(d);
  perm.push_back(1);
  return perm;
}

/// [N, S..., C] -> [N, C, S...].
SmallVector<int64_t> toChannelsFirst(int64_t rank) {
  SmallVector<int64_t> perm{0, rank - 1};
  for (int64_t d = 1; d < rank - 1; ++d)
    perm.push_back(d);
  return perm;
}

/// |type| with its dims permuted: dim i of the result is dim perm[i].
RankedTensorType permuted(RankedTensorType type, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  return RankedTensorType::get(shape, type.getElementType());
}

Value transpose(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> perm) {
  auto type = permuted(cast<RankedTensorType>(x.getType()), perm);
  return TransposeOp::create(b, loc, type, x, b.getDenseI64ArrayAttr(perm));
}

/// Whether |conv| runs faster channels last: fp32, one group, no input
/// dilations (transposed convolutions) nor negative pads, a constant
/// weight (packed at compile time) and static channels and spatial dims.
bool wantsChannelsLast(ConvOp conv) {
  auto in = cast<RankedTensorType>(conv.getInput().getType());
  return !conv.getChannelsLast() && conv.getGroup() == 1 &&
         !conv.getInputDilations() && in.getElementType().isF32() &&
         llvm::none_of(conv.getPads(), [](int64_t p) { return p < 0; }) &&
         conv.getWeight().getDefiningOp<ConstantOp>() &&
         llvm::none_of(in.getShape().drop_front(1), ShapedType::isDynamic);
}

void rewriteChannelsLast(ConvOp conv) {
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  const int64_t rank = cast<RankedTensorType>(conv.getType()).getRank();
  SmallVector<int64_t> weightPerm;  // [M, C, K...] -> [K..., C, M]
  for (int64_t d = 2; d < rank; ++d)
    weightPerm.push_back(d);
  weightPerm.append({1, 0});
  Value x = transpose(b, loc, conv.getInput(), toChannelsLast(rank));
  Value w = transpose(b, loc, conv.getWeight(), weightPerm);
  auto type = permuted(cast<RankedTensorType>(conv.getType()),
                       toChannelsLast(rank));
  auto last = ConvOp::create(b, loc, type, x, w, conv.getBias(),
                             conv.getStridesAttr(), conv.getDilationsAttr(),
                             conv.getPadsAttr(), conv.getGroupAttr(),
                             DenseI64ArrayAttr());
  // Keep the discardable attributes (folded channel ops for the report).
  for (NamedAttribute attr : conv->getDiscardableAttrs())
    last->setAttr(attr.getName(), attr.getValue());
  last.setChannelsLast(true);
  conv.getResult().replaceAllUsesWith(
      transpose(b, loc, last.getResult(), toChannelsFirst(rank)));
  conv->erase();
}

/// A value that broadcasts the same way in every layout: one element.
bool isOneElement(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() && type.getNumElements() == 1;
}

/// Whether a transpose is sunk through |op|: an elementwise float op whose
/// operands are all transposes by one permutation (not broadcast) or
/// single elements.
bool isSinkable(Operation *op) { return isFloatElementwiseOp(op); }

/// A transpose of |v| by |perm| that exists already before |op| in its
/// block (the channels-last input of a convolution that also reads |v|),
/// or null.
TransposeOp existingTranspose(Value v, ArrayRef<int64_t> perm, Operation *op) {
  for (Operation *user : v.getUsers())
    if (auto t = dyn_cast<TransposeOp>(user);
        t && t.getPermutation() == perm && t->getBlock() == op->getBlock() &&
        t->isBeforeInBlock(op))
      return t;
  return {};
}

/// elementwise(transpose(a, p), transpose(b, p), s) -> transpose(
/// elementwise(a, b, s), p), when each transpose's other users are
/// transposes (which compose with it) or ops it sinks through as well, so
/// that it ends up unused. An operand c that is no transpose takes part as
/// the transpose of c by p's inverse that the graph already has (a
/// residual add of a block's input, which the block's convolution reads
/// channels last).
struct SinkTransposeThroughElementwise : RewritePattern {
  SinkTransposeThroughElementwise(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isSinkable(op))
      return failure();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    std::optional<SmallVector<int64_t>> perm;
    auto isSmall = [&](Value operand) {
      return isOneElement(operand) &&
             cast<RankedTensorType>(operand.getType()).getRank() <=
                 resultType.getRank();
    };
    for (Value operand : op->getOperands()) {
      auto t = operand.getDefiningOp<TransposeOp>();
      if (isSmall(operand) || !t)
        continue;
      if (perm && ArrayRef<int64_t>(*perm) != t.getPermutation())
        return failure();
      perm = SmallVector<int64_t>(t.getPermutation());
    }
    if (!perm)
      return failure();
    SmallVector<int64_t> inverse(perm->size());
    for (auto [i, p] : llvm::enumerate(*perm))
      inverse[p] = i;
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      if (isSmall(operand)) {
        operands.push_back(operand);
        continue;
      }
      if (operand.getType() != resultType)
        return failure();  // broadcast
      auto t = operand.getDefiningOp<TransposeOp>();
      if (t && t.getPermutation() == ArrayRef<int64_t>(*perm)) {
        for (Operation *user : t->getUsers())
          if (!isa<TransposeOp, PoolOp>(user) && !isSinkable(user))
            return failure();
        operands.push_back(t.getInput());
        continue;
      }
      TransposeOp existing = existingTranspose(operand, inverse, op);
      if (!existing)
        return failure();
      operands.push_back(existing.getResult());
    }
    // The result in the transposes' input layout: dim perm[i] of it is
    // dim i of the current result.
    OperationState state(op->getLoc(), op->getName(), operands,
                         TypeRange{permuted(resultType, inverse)},
                         op->getAttrs());
    Operation *moved = rewriter.create(state);
    rewriter.replaceOpWithNewOp<TransposeOp>(
        op, resultType, moved->getResult(0),
        rewriter.getDenseI64ArrayAttr(*perm));
    return success();
  }
};

/// pool(transpose(x, to channels first)) -> transpose(pool(x) channels
/// last, to channels first): a pooling between channels-last convolutions
/// (ResNet's max pooling after its stem) keeps their layout. Only when the
/// transpose's other users are transposes or ops it sinks through.
struct SinkTransposeThroughPool : OpRewritePattern<PoolOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PoolOp op,
                                PatternRewriter &rewriter) const override {
    auto t = op.getInput().getDefiningOp<TransposeOp>();
    auto type = cast<RankedTensorType>(op.getType());
    const int64_t rank = type.getRank();
    if (op.getChannelsLast() || !t ||
        t.getPermutation() != ArrayRef<int64_t>(toChannelsFirst(rank)))
      return failure();
    for (Operation *user : t->getUsers())
      if (!isa<TransposeOp, PoolOp>(user) && !isSinkable(user))
        return failure();
    auto pooled = PoolOp::create(
        rewriter, op.getLoc(), TypeRange{permuted(type, toChannelsLast(rank))},
        ValueRange{t.getInput()}, op->getAttrs());
    pooled.setChannelsLast(true);
    rewriter.replaceOpWithNewOp<TransposeOp>(
        op, type, pooled.getResult(),
        rewriter.getDenseI64ArrayAttr(toChannelsFirst(rank)));
    return success();
  }
};

struct ConvChannelsLastPass
    : impl::ConvChannelsLastPassBase<ConvChannelsLastPass> {
  using ConvChannelsLastPassBase::ConvChannelsLastPassBase;

  void runOnOperation() override {
    SmallVector<ConvOp> convs;
    getOperation()->walk([&](ConvOp conv) {
      if (wantsChannelsLast(conv))
        convs.push_back(conv);
    });
    if (convs.empty())
      return;
    for (ConvOp conv : convs)
      rewriteChannelsLast(conv);
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<SinkTransposeThroughElementwise, SinkTransposeThroughPool>(
        ctx);
    TransposeOp::getCanonicalizationPatterns(patterns, ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace strata
