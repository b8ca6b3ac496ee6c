//===- FoldChannelAffine.cpp - Per-channel scale/shift into conv/linear ---===//
// SPDX-License-Identifier: Apache-2.0
// An inference BatchNormalization after a convolution imports as
// elementwise ops with per-channel constants ((y - mean) / sqrt(var + eps)
// * scale + bias); any such op on a convolution's or linear layer's only
// use is an affine map of each output channel, y' = s y + t, which the
// layer computes for free with its weight rows scaled by s and its bias
// s b + t. Folded one op at a time (mul, div by a constant, add, sub of a
// constant) until none is left; the constants may be computed from
// constants (reshapes, broadcasts, elementwise arithmetic), evaluated here
// per channel in double precision. The layer records how many ops it
// absorbed (kFoldedChannelOpsAttr) for the compile report.

#include "passes/Passes.h"
#include "passes/WeightContractions.h"

#include "dialects/strata/IR/ConstantValues.h"
#include "dialects/strata/IR/StrataOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

namespace strata {

#define GEN_PASS_DEF_FOLDCHANNELAFFINEPASS
#include "passes/Passes.h.inc"

using namespace mlir;
using namespace strata::ir;

namespace {

/// Per-channel values of a constant-computed tensor: one per channel, or
/// one for all (a scalar or a splat).
using Channels = std::vector<double>;

/// |v|'s value per channel when |v| is computed from constants only and
/// varies along dim |axis| of a rank-|rank| result at most (its other dims,
/// right-aligned, are 1); std::nullopt otherwise.
std::optional<Channels> channelValues(Value v, int64_t axis, int64_t rank,
                                      int64_t channels, int depth = 0) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape() || type.getRank() > rank || depth > 16)
    return std::nullopt;
  // Only the channel dim (aligned from the back) may exceed 1.
  const int64_t offset = rank - type.getRank();
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.getDimSize(d) != 1 &&
        (d + offset != axis || type.getDimSize(d) != channels))
      return std::nullopt;
  if (std::optional<double> splat = evaluateScalarConstant(v))
    return Channels{*splat};
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    std::optional<std::vector<float>> values =
        constantF32Elements(constant.getValue());
    if (!values)
      return std::nullopt;
    return Channels(values->begin(), values->end());
  }
  if (isa<ReshapeOp, ExpandOp>(op)) {
    // The source holds the channel's values in the same order.
    Value source = op->getOperand(0);
    auto st = dyn_cast<RankedTensorType>(source.getType());
    if (!st || !st.hasStaticShape() ||
        (st.getNumElements() != 1 && st.getNumElements() != channels))
      return std::nullopt;
    // The channels' values in the source's own layout.
    return channelValues(source, st.getRank() - 1, st.getRank(),
                         st.getNumElements(), depth + 1);
  }
  if (!isFloatElementwiseOp(op))
    return std::nullopt;
  SmallVector<Channels> operands;
  for (Value operand : op->getOperands()) {
    std::optional<Channels> c =
        channelValues(operand, axis, rank, channels, depth + 1);
    if (!c)
      return std::nullopt;
    operands.push_back(*c);
  }
  size_t n = 1;
  for (const Channels &c : operands)
    n = std::max(n, c.size());
  Channels out(n);
  for (size_t i = 0; i < n; ++i) {
    SmallVector<double> args;
    for (const Channels &c : operands)
      args.push_back(c.size() == 1 ? c[0] : c[i]);
    out[i] = applyFloatElementwise(op, args);
  }
  return out;
}

/// A resource constant of |values| shaped |type| named |name|.
Value constantOf(OpBuilder &b, Location loc, RankedTensorType type,
                 StringRef name, const std::vector<float> &values) {
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
      values.size() * sizeof(float), alignof(float), /*dataIsMutable=*/true);
  std::memcpy(blob.getMutableData().data(), values.data(),
              values.size() * sizeof(float));
  return ConstantOp::create(
      b, loc, DenseResourceElementsAttr::get(type, name, std::move(blob)));
}

/// The layer's weight and bias as numbers, with the layout of its output
/// channels: conv [M, C/G, K...] rows m; linear [K, N] columns n.
struct Layer {
  Operation *op;
  int64_t channels, axis, rank;
  std::vector<float> weight, bias;
  RankedTensorType weightType;

  static std::optional<Layer> of(Operation *op) {
    Value weight, bias;
    Layer layer;
    layer.op = op;
    auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!out || !out.getElementType().isF32())
      return std::nullopt;
    layer.rank = out.getRank();
    if (auto conv = dyn_cast<ConvOp>(op)) {
      weight = conv.getWeight();
      bias = conv.getBias();
      layer.axis = 1;
    } else if (auto linear = dyn_cast<LinearOp>(op)) {
      weight = linear.getWeight();
      bias = linear.getBias();
      layer.axis = layer.rank - 1;
    } else {
      return std::nullopt;
    }
    // A weight other ops read too would be stored twice.
    auto w = weight.getDefiningOp<ConstantOp>();
    if (!w || !weight.hasOneUse())
      return std::nullopt;
    std::optional<std::vector<float>> values = constantF32Elements(w.getValue());
    if (!values)
      return std::nullopt;
    layer.weight = std::move(*values);
    layer.weightType = cast<RankedTensorType>(weight.getType());
    layer.channels = isa<ConvOp>(op) ? layer.weightType.getDimSize(0)
                                     : layer.weightType.getDimSize(1);
    if (bias) {
      auto bc = bias.getDefiningOp<ConstantOp>();
      std::optional<std::vector<float>> b =
          bc && bias.hasOneUse() ? constantF32Elements(bc.getValue())
                                 : std::nullopt;
      if (!b || static_cast<int64_t>(b->size()) != layer.channels)
        return std::nullopt;
      layer.bias = std::move(*b);
    } else {
      layer.bias.assign(layer.channels, 0.0f);
    }
    return layer;
  }

  /// y' = scale * y + shift per channel.
  void apply(const Channels &scale, const Channels &shift) {
    auto at = [](const Channels &c, int64_t i) {
      return c.size() == 1 ? c[0] : c[i];
    };
    const int64_t n = static_cast<int64_t>(weight.size());
    const bool rows = isa<ConvOp>(op);
    const int64_t perRow = n / channels;
    for (int64_t i = 0; i < n; ++i) {
      int64_t channel = rows ? i / perRow : i % channels;
      weight[i] = static_cast<float>(weight[i] * at(scale, channel));
    }
    for (int64_t c = 0; c < channels; ++c)
      bias[c] = static_cast<float>(bias[c] * at(scale, c) + at(shift, c));
  }
};

/// Folds the op on |layer|'s only use into it; false when that op is not a
/// per-channel affine one.
bool foldOne(Operation *layerOp, OpBuilder &b, int &folds) {
  Value y = layerOp->getResult(0);
  if (!y.hasOneUse())
    return false;
  Operation *user = *y.getUsers().begin();
  if (!isa<AddOp, SubOp, MulOp, DivOp>(user) ||
      user->getResult(0).getType() != y.getType())
    return false;
  const bool first = user->getOperand(0) == y;
  Value other = user->getOperand(first ? 1 : 0);
  std::optional<Layer> layer = Layer::of(layerOp);
  if (!layer)
    return false;
  std::optional<Channels> c =
      channelValues(other, layer->axis, layer->rank, layer->channels);
  if (!c)
    return false;
  Channels zero{0.0}, one{1.0}, negated(*c), inverse(*c);
  for (double &v : negated)
    v = -v;
  for (double &v : inverse)
    v = 1.0 / v;
  if (isa<AddOp>(user))
    layer->apply(one, *c);
  else if (isa<SubOp>(user) && first)
    layer->apply(one, negated);
  else if (isa<MulOp>(user))
    layer->apply(*c, zero);
  else if (isa<DivOp>(user) && first)
    layer->apply(inverse, zero);
  else
    return false;

  b.setInsertionPoint(user);
  Location loc = b.getFusedLoc({layerOp->getLoc(), user->getLoc()});
  // Deterministic names (the resource manager uniques repeats).
  std::string name = "folded_channels_" + std::to_string(folds++);
  Value weight =
      constantOf(b, loc, layer->weightType, name + "_weight", layer->weight);
  Value bias = constantOf(
      b, loc,
      RankedTensorType::get({layer->channels}, b.getF32Type()),
      name + "_bias", layer->bias);
  Operation *folded = b.clone(*layerOp);
  folded->setLoc(loc);
  folded->setOperand(1, weight);
  if (folded->getNumOperands() > 2) {
    folded->setOperand(2, bias);
  } else if (auto conv = dyn_cast<ConvOp>(folded)) {
    conv.getBiasMutable().assign(bias);
  } else {
    cast<LinearOp>(folded).getBiasMutable().assign(bias);
  }
  auto count = layerOp->getAttrOfType<IntegerAttr>(kFoldedChannelOpsAttr);
  folded->setAttr(kFoldedChannelOpsAttr,
                  b.getI64IntegerAttr((count ? count.getInt() : 0) + 1));
  user->getResult(0).replaceAllUsesWith(folded->getResult(0));
  user->erase();
  layerOp->erase();
  return true;
}

struct FoldChannelAffinePass
    : impl::FoldChannelAffinePassBase<FoldChannelAffinePass> {
  void runOnOperation() override {
    OpBuilder b(&getContext());
    int folds = 0;
    bool changed = true;
    while (changed) {
      changed = false;
      SmallVector<Operation *> layers;
      getOperation()->walk([&](Operation *op) {
        if (isa<ConvOp, LinearOp>(op))
          layers.push_back(op);
      });
      for (Operation *op : layers)
        changed |= foldOne(op, b, folds);
    }
  }
};

} // namespace
} // namespace strata
