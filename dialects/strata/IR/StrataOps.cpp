//===- StrataOps.cpp - Verifiers of the strata dialect ops ----------------===//
// SPDX-License-Identifier: Apache-2.0
// Op verifiers: local shape/attribute invariants only (STYLE.md §7). Shape
// arithmetic goes through ShapeRules so the importer and codegen agree.

#include "dialects/strata/IR/StrataOps.h"

#include "dialects/strata/IR/EinsumEquation.h"
#include "dialects/strata/IR/ShapeRules.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringMap.h"

#include <limits>

using namespace mlir;

namespace strata::ir {

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}
static ArrayRef<int64_t> shapeOf(Value v) { return tensorType(v).getShape(); }

// Static length of a 1-D shape operand, or std::nullopt when dynamic.
static std::optional<int64_t> staticLength(Value shapeOperand) {
  int64_t n = shapeOf(shapeOperand)[0];
  if (ShapedType::isDynamic(n))
    return std::nullopt;
  return n;
}

static LogicalResult verifyResultShape(Operation *op,
                                       ArrayRef<int64_t> expected,
                                       Value result) {
  if (isCompatibleShape(expected, shapeOf(result)))
    return success();
  return op->emitOpError() << "expected result shape "
                           << formatShape(expected) << ", got "
                           << formatShape(shapeOf(result));
}

// Checks |axis| against |rank| and returns the normalized axis.
static FailureOr<int64_t> verifyAxis(Operation *op, StringRef name,
                                     int64_t axis, int64_t rank) {
  std::optional<int64_t> normalized = normalizeAxis(axis, rank);
  if (!normalized)
    return op->emitOpError() << "'" << name << "' " << axis
                             << " is out of range for rank " << rank;
  return *normalized;
}

//===----------------------------------------------------------------------===//
// Broadcasting binary ops
//===----------------------------------------------------------------------===//

static LogicalResult verifyBroadcastBinary(Operation *op) {
  ArrayRef<int64_t> lhs = shapeOf(op->getOperand(0));
  ArrayRef<int64_t> rhs = shapeOf(op->getOperand(1));
  std::optional<SmallVector<int64_t>> expected = broadcastShapes(lhs, rhs);
  if (!expected)
    return op->emitOpError() << "operand shapes " << formatShape(lhs)
                             << " and " << formatShape(rhs)
                             << " are not broadcast-compatible";
  return verifyResultShape(op, *expected, op->getResult(0));
}

#define STRATA_BROADCAST_VERIFIER(OP)                                          \
  LogicalResult OP::verify() { return verifyBroadcastBinary(*this); }
STRATA_BROADCAST_VERIFIER(AddOp)
STRATA_BROADCAST_VERIFIER(SubOp)
STRATA_BROADCAST_VERIFIER(MulOp)
STRATA_BROADCAST_VERIFIER(DivOp)
STRATA_BROADCAST_VERIFIER(PowOp)
STRATA_BROADCAST_VERIFIER(ModOp)
STRATA_BROADCAST_VERIFIER(MaxOp)
STRATA_BROADCAST_VERIFIER(MinOp)
STRATA_BROADCAST_VERIFIER(EqualOp)
STRATA_BROADCAST_VERIFIER(LessOp)
STRATA_BROADCAST_VERIFIER(LessEqualOp)
STRATA_BROADCAST_VERIFIER(GreaterOp)
STRATA_BROADCAST_VERIFIER(GreaterEqualOp)
STRATA_BROADCAST_VERIFIER(AndOp)
STRATA_BROADCAST_VERIFIER(OrOp)
STRATA_BROADCAST_VERIFIER(BitwiseAndOp)
STRATA_BROADCAST_VERIFIER(BitwiseOrOp)
STRATA_BROADCAST_VERIFIER(BitwiseXorOp)
STRATA_BROADCAST_VERIFIER(ShiftLeftOp)
STRATA_BROADCAST_VERIFIER(ShiftRightOp)
#undef STRATA_BROADCAST_VERIFIER

//===----------------------------------------------------------------------===//
// WhereOp
//===----------------------------------------------------------------------===//

LogicalResult WhereOp::verify() {
  ArrayRef<int64_t> c = shapeOf(getCondition()), t = shapeOf(getTrueValue()),
                    f = shapeOf(getFalseValue());
  std::optional<SmallVector<int64_t>> expected = broadcastShapes(c, t);
  if (expected)
    expected = broadcastShapes(*expected, f);
  if (!expected)
    return emitOpError() << "operand shapes " << formatShape(c) << ", "
                         << formatShape(t) << " and " << formatShape(f)
                         << " are not broadcast-compatible";
  return verifyResultShape(*this, *expected, getResult());
}

//===----------------------------------------------------------------------===//
// MatmulOp / LinearOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  ArrayRef<int64_t> lhs = shapeOf(getLhs()), rhs = shapeOf(getRhs());
  std::optional<SmallVector<int64_t>> expected = inferMatmulShape(lhs, rhs);
  if (!expected)
    return emitOpError() << "operand shapes " << formatShape(lhs) << " and "
                         << formatShape(rhs)
                         << " are not compatible for matmul";
  return verifyResultShape(*this, *expected, getResult());
}

LogicalResult LinearOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), w = shapeOf(getWeight());
  if (in.empty())
    return emitOpError() << "expected 'input' of rank >= 1";
  if (w.size() != 2)
    return emitOpError() << "expected 2-D 'weight', got rank " << w.size();
  if (!isCompatibleShape({in.back()}, {w[0]}))
    return emitOpError() << "expected the inner dim of 'input' ("
                         << formatShape(in.back()) << ") to match dim 0 of "
                         << "'weight' (" << formatShape(w[0]) << ")";
  if (Value bias = getBias()) {
    if (!isCompatibleShape({w[1]}, shapeOf(bias)))
      return emitOpError() << "expected 'bias' of shape " << formatShape(w[1])
                           << ", got " << formatShape(shapeOf(bias));
  }
  SmallVector<int64_t> expected(in.drop_back());
  expected.push_back(w[1]);
  return verifyResultShape(*this, expected, getResult());
}

LogicalResult QuantizedLinearOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), w = shapeOf(getWeight()),
                    s = shapeOf(getScales());
  if (in.empty())
    return emitOpError() << "expected 'input' of rank >= 1";
  if (w.size() != 2 || ShapedType::isDynamicShape(w))
    return emitOpError() << "expected a static 2-D 'weight'";
  if (getBits() != 8 && getBits() != 4)
    return emitOpError() << "expected 'bits' 8 or 4, got " << getBits();
  if (getGroupSize() < 1)
    return emitOpError() << "expected 'group_size' >= 1, got "
                         << getGroupSize();
  if (getActivationBits() != 0 && getActivationBits() != 8)
    return emitOpError() << "expected 'activation_bits' 0 or 8, got "
                         << getActivationBits();
  if (getActivationBlock() < 0 ||
      (getActivationBlock() > 0 && getActivationBits() != 8))
    return emitOpError() << "expected 'activation_block' 0, or > 0 with "
                            "activation_bits 8, got "
                         << getActivationBlock();
  if (getActivationBits() == 8 && (getBits() != 8 || getGroupSize() != w[0]))
    return emitOpError() << "expected int8 activations with 8-bit weights "
                            "and one scale per column (group_size "
                         << w[0] << "), got bits " << getBits()
                         << " and group_size " << getGroupSize();
  if (!isCompatibleShape({in.back()}, {w[0]}))
    return emitOpError() << "expected the inner dim of 'input' ("
                         << formatShape(in.back()) << ") to match dim 0 of "
                         << "'weight' (" << formatShape(w[0]) << ")";
  const int64_t groups = (w[0] + getGroupSize() - 1) / getGroupSize();
  if (s.size() != 2 || s[0] != groups || s[1] != w[1])
    return emitOpError() << "expected 'scales' of shape " << groups << "x"
                         << w[1] << ", got " << formatShape(s);
  if (Value bias = getBias()) {
    if (!isCompatibleShape({w[1]}, shapeOf(bias)))
      return emitOpError() << "expected 'bias' of shape " << formatShape(w[1])
                           << ", got " << formatShape(shapeOf(bias));
  }
  SmallVector<int64_t> expected(in.drop_back());
  expected.push_back(w[1]);
  return verifyResultShape(*this, expected, getResult());
}

//===----------------------------------------------------------------------===//
// Reductions, softmax, cumsum
//===----------------------------------------------------------------------===//

// Verifies a reduction's axes and result shape; shared by every ReduceOp.
static LogicalResult verifyReduce(Operation *op, Value input,
                                  ArrayRef<int64_t> axes, bool keepDims,
                                  Value result) {
  int64_t rank = shapeOf(input).size();
  if (axes.empty())
    return op->emitOpError() << "expected at least one axis in 'axes'";
  SmallVector<int64_t> normalized;
  for (int64_t axis : axes) {
    FailureOr<int64_t> n = verifyAxis(op, "axes", axis, rank);
    if (failed(n))
      return failure();
    if (llvm::is_contained(normalized, *n))
      return op->emitOpError() << "axis " << axis << " appears twice in 'axes'";
    normalized.push_back(*n);
  }
  return verifyResultShape(
      op, inferReduceShape(shapeOf(input), normalized, keepDims), result);
}

LogicalResult ReduceSumOp::verify() {
  return verifyReduce(*this, getInput(), getAxes(), getKeepdims(), getResult());
}
LogicalResult ReduceMeanOp::verify() {
  return verifyReduce(*this, getInput(), getAxes(), getKeepdims(), getResult());
}
LogicalResult ReduceMaxOp::verify() {
  return verifyReduce(*this, getInput(), getAxes(), getKeepdims(), getResult());
}
LogicalResult ReduceProdOp::verify() {
  return verifyReduce(*this, getInput(), getAxes(), getKeepdims(), getResult());
}

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, "axis", getAxis(), shapeOf(getInput()).size());
}
LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, "axis", getAxis(), shapeOf(getInput()).size());
}
LogicalResult CumsumOp::verify() {
  return verifyAxis(*this, "axis", getAxis(), shapeOf(getInput()).size());
}

//===----------------------------------------------------------------------===//
// AllReduceOp / AllGatherOp
//===----------------------------------------------------------------------===//

LogicalResult AllReduceOp::verify() {
  if (getRanks() < 2)
    return emitOpError("needs at least 2 ranks, got ") << getRanks();
  return success();
}

LogicalResult AllGatherOp::verify() {
  if (getRanks() < 2)
    return emitOpError("needs at least 2 ranks, got ") << getRanks();
  ArrayRef<int64_t> in = shapeOf(getInput());
  ArrayRef<int64_t> out = shapeOf(getResult());
  if (in.size() != out.size())
    return emitOpError("result rank ") << out.size() << " differs from input rank " << in.size();
  if (getAxis() < 0 || getAxis() >= int64_t(in.size()))
    return emitOpError("axis ") << getAxis() << " is outside [0, " << in.size() << ")";
  for (size_t d = 0; d < in.size(); ++d) {
    if (ShapedType::isDynamic(in[d]) || ShapedType::isDynamic(out[d]))
      continue;
    int64_t expected = int64_t(d) == getAxis() ? in[d] * getRanks() : in[d];
    if (out[d] != expected)
      return emitOpError("result dim ") << d << " is " << out[d] << ", expected " << expected;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// SendOp / RecvOp
//===----------------------------------------------------------------------===//

LogicalResult SendOp::verify() {
  if (getStage() < 0)
    return emitOpError("stage ") << getStage() << " is negative";
  return success();
}

LogicalResult RecvOp::verify() {
  if (getStage() < 0)
    return emitOpError("stage ") << getStage() << " is negative";
  if (Value shape = getShape()) {
    const int64_t n = shapeOf(shape)[0];
    const int64_t rank = int64_t(shapeOf(getResult()).size());
    if (!ShapedType::isDynamic(n) && n != rank)
      return emitOpError("shape has ") << n << " extents for a result of rank " << rank;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// LayerNormOp / RmsNormOp
//===----------------------------------------------------------------------===//

// The normalized shape is input.shape[axis:]; scale and bias must have it.
static LogicalResult verifyNorm(Operation *op, Value input, Value scale,
                                Value bias, int64_t axis, float epsilon) {
  ArrayRef<int64_t> in = shapeOf(input);
  FailureOr<int64_t> normalized = verifyAxis(op, "axis", axis, in.size());
  if (failed(normalized))
    return failure();
  if (!(epsilon >= 0.0f))
    return op->emitOpError() << "expected non-negative 'epsilon', got "
                             << epsilon;
  ArrayRef<int64_t> normShape = in.drop_front(*normalized);
  for (auto [name, v] : {std::pair<StringRef, Value>{"scale", scale},
                         std::pair<StringRef, Value>{"bias", bias}}) {
    if (v && !isCompatibleShape(normShape, shapeOf(v)))
      return op->emitOpError()
             << "expected '" << name << "' of shape " << formatShape(normShape)
             << ", got " << formatShape(shapeOf(v));
  }
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyNorm(*this, getInput(), getScale(), getBias(), getAxis(),
                    getEpsilon().convertToFloat());
}

LogicalResult RmsNormOp::verify() {
  return verifyNorm(*this, getInput(), getScale(), Value(), getAxis(),
                    getEpsilon().convertToFloat());
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

/// The global-block attributes of the attention ops: both or neither, each
/// >= 1, on causal windowed attention (the blocks are added to a window).
static LogicalResult verifyGlobalBlocks(Operation *op,
                                        std::optional<int64_t> topk,
                                        std::optional<int64_t> block,
                                        bool windowed, bool causal) {
  if (topk.has_value() != block.has_value())
    return op->emitOpError() << "expected 'global_topk' and 'global_block' "
                             << "together";
  if (!topk)
    return success();
  if (*topk < 1 || *block < 1)
    return op->emitOpError() << "expected 'global_topk' and 'global_block' "
                             << ">= 1, got " << *topk << " and " << *block;
  if (!windowed || !causal)
    return op->emitOpError() << "global blocks require causal attention "
                             << "with a 'window'";
  return success();
}

LogicalResult AttentionOp::verify() {
  ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKey()),
                    v = shapeOf(getValue());
  if (q.size() != 4 || k.size() != 4 || v.size() != 4)
    return emitOpError() << "expected 'query', 'key' and 'value' of rank 4 "
                         << "([batch, heads, seq, head_dim]), got ranks "
                         << q.size() << ", " << k.size() << " and " << v.size();
  auto mismatch = [](int64_t a, int64_t b) {
    return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
  };
  if (mismatch(q[0], k[0]) || mismatch(q[0], v[0]))
    return emitOpError() << "expected equal batch sizes, got "
                         << formatShape(q[0]) << ", " << formatShape(k[0])
                         << " and " << formatShape(v[0]);
  if (mismatch(k[1], v[1]))
    return emitOpError() << "expected 'key' and 'value' head counts to match, "
                         << "got " << k[1] << " and " << v[1];
  if (!ShapedType::isDynamic(q[1]) && !ShapedType::isDynamic(k[1]) &&
      (k[1] == 0 || q[1] % k[1] != 0))
    return emitOpError() << "expected query heads (" << q[1]
                         << ") to be a multiple of key/value heads (" << k[1]
                         << ")";
  if (mismatch(k[2], v[2]))
    return emitOpError() << "expected 'key' and 'value' sequence lengths to "
                         << "match, got " << k[2] << " and " << v[2];
  if (mismatch(q[3], k[3]))
    return emitOpError() << "expected 'query' and 'key' head dims to match, "
                         << "got " << q[3] << " and " << k[3];
  if (Value mask = getMask()) {
    SmallVector<int64_t> scores = {q[0], q[1], q[2], k[2]};
    if (!isBroadcastableTo(shapeOf(mask), scores))
      return emitOpError() << "mask shape " << formatShape(shapeOf(mask))
                           << " does not broadcast to the scores shape "
                           << formatShape(scores);
  }
  if (std::optional<int64_t> window = getWindow(); window && *window <= 0)
    return emitOpError() << "expected 'window' > 0, got " << *window;
  if (std::optional<int64_t> sinks = getSinks()) {
    if (*sinks < 0)
      return emitOpError() << "expected 'sinks' >= 0, got " << *sinks;
    if (!getWindow())
      return emitOpError() << "'sinks' requires 'window'";
  }
  if (failed(verifyGlobalBlocks(*this, getGlobalTopk(), getGlobalBlock(),
                                getWindow().has_value(), getCausal())))
    return failure();
  return verifyResultShape(*this, {q[0], q[1], q[2], v[3]}, getResult());
}

//===----------------------------------------------------------------------===//
// KV cache
//===----------------------------------------------------------------------===//

/// Static cache extents the row tensors must agree with.
static bool extentsMismatch(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

/// The head dim a cache of |cacheType| stores rows of, given its last dim:
/// an i8 cache's rows carry a 4-byte scale after their D values.
static int64_t cachedHeadDim(RankedTensorType cacheType) {
  const int64_t last = cacheType.getShape().back();
  return cacheType.getElementType().isInteger(8) ? last - 4 : last;
}

/// Checks a compressed cache's element type against the fp32 values it
/// holds and, for int8, its rows' layout (D values then a 4-byte scale).
static LogicalResult verifyCacheElements(Operation *op, llvm::StringRef name,
                                         RankedTensorType cache,
                                         Type valueType) {
  Type element = cache.getElementType();
  if (element == valueType)
    return success();
  if (!valueType.isF32() || !(element.isBF16() || element.isInteger(8)))
    return op->emitOpError()
           << "expected '" << name << "' of " << valueType
           << " elements, or bf16 or i8 holding f32 values, got " << element;
  if (element.isInteger(8)) {
    const int64_t last = cache.getShape().back();
    if (last < 8 || last % 4 != 0)
      return op->emitOpError()
             << "expected the i8 '" << name << "' rows to hold a multiple of 4 "
             << "values and a 4-byte scale (last dim D + 4), got " << last;
  }
  return success();
}

/// The ring attributes of the cache ops: both or neither, 0 <= kept <
/// rows <= context.
static LogicalResult verifyRing(Operation *op, std::optional<int64_t> kept,
                                std::optional<int64_t> context, int64_t rows) {
  if (kept.has_value() != context.has_value())
    return op->emitOpError() << "expected 'ring_kept' and 'ring_context' "
                             << "together";
  if (kept && (*kept < 0 || *kept >= rows || *context < rows))
    return op->emitOpError()
           << "expected 0 <= ring_kept (" << *kept << ") < cache rows ("
           << rows << ") <= ring_context (" << *context << ")";
  return success();
}

/// A paged cache's block table and block size against the cache's rows
/// ([blocks, H, block_size, D]); without one, |slots| is [B].
static LogicalResult verifyPaging(Operation *op, Value slots,
                                  std::optional<int64_t> blockSize,
                                  int64_t cacheRows, bool ring) {
  ArrayRef<int64_t> table = shapeOf(slots);
  if (!blockSize) {
    if (table.size() != 1)
      return op->emitOpError() << "expected 'slots' of rank 1 without "
                               << "'block_size', got " << formatShape(table);
    return success();
  }
  if (table.size() != 2 || ShapedType::isDynamic(table[1]) || table[1] < 1)
    return op->emitOpError() << "expected a block table [rows, blocks] with "
                             << "a static block count, got "
                             << formatShape(table);
  if (*blockSize < 1 || *blockSize != cacheRows)
    return op->emitOpError() << "expected 'block_size' (" << *blockSize
                             << ") to be the cache's rows per block ("
                             << cacheRows << ")";
  if (ring)
    return op->emitOpError() << "a paged cache is not a ring";
  return success();
}

/// Positions per row: a ring's context, a paged row's blocks, else the
/// cache's rows.
static int64_t positionCapacity(Value cache, Value slots,
                                std::optional<int64_t> ringContext,
                                std::optional<int64_t> blockSize) {
  if (ringContext)
    return *ringContext;
  if (blockSize)
    return shapeOf(slots)[1] * *blockSize;
  return shapeOf(cache)[2];
}

int64_t CacheWriteOp::getPositionCapacity() {
  return positionCapacity(getCache(), getSlots(), getRingContext(),
                          getBlockSize());
}

int64_t CacheAttentionOp::getPositionCapacity() {
  return positionCapacity(getKeyCache(), getSlots(), getRingContext(),
                          getBlockSize());
}

LogicalResult CacheWriteOp::verify() {
  ArrayRef<int64_t> cache = shapeOf(getCache()), update = shapeOf(getUpdate());
  if (cache.size() != 4 || update.size() != 4)
    return emitOpError() << "expected 'cache' and 'update' of rank 4 "
                         << "([slots, heads, context, head_dim] and [batch, "
                         << "heads, new, head_dim]), got ranks " << cache.size()
                         << " and " << update.size();
  if (!tensorType(getCache()).hasStaticShape())
    return emitOpError() << "expected a static cache shape, got "
                         << formatShape(cache);
  if (failed(verifyCacheElements(*this, "cache", tensorType(getCache()),
                                 tensorType(getUpdate()).getElementType())))
    return failure();
  if (extentsMismatch(cache[1], update[1]) ||
      extentsMismatch(cachedHeadDim(tensorType(getCache())), update[3]))
    return emitOpError() << "update " << formatShape(update)
                         << " does not match the heads and head dim of cache "
                         << formatShape(cache);
  int64_t rows = update[0];
  if (extentsMismatch(rows, shapeOf(getSlots())[0]) ||
      extentsMismatch(rows, shapeOf(getPositions())[0]))
    return emitOpError() << "expected one slot and one position per update "
                         << "row (" << formatShape(rows) << ")";
  if (failed(verifyRing(*this, getRingKept(), getRingContext(), cache[2])) ||
      failed(verifyPaging(*this, getSlots(), getBlockSize(), cache[2],
                          getRingKept().has_value())))
    return failure();
  if (getRingKept() && !ShapedType::isDynamic(update[2]) &&
      update[2] > cache[2] - *getRingKept())
    return emitOpError() << "writes " << update[2] << " rows into a ring of "
                         << cache[2] - *getRingKept();
  return success();
}

LogicalResult CacheAttentionOp::verify() {
  ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKeyCache()),
                    v = shapeOf(getValueCache());
  if (q.size() != 4 || k.size() != 4 || v.size() != 4)
    return emitOpError() << "expected 'query', 'key_cache' and 'value_cache' "
                         << "of rank 4, got ranks " << q.size() << ", "
                         << k.size() << " and " << v.size();
  if (!tensorType(getKeyCache()).hasStaticShape() ||
      !tensorType(getValueCache()).hasStaticShape())
    return emitOpError() << "expected static cache shapes";
  Type valueType = tensorType(getQuery()).getElementType();
  if (failed(verifyCacheElements(*this, "key_cache", tensorType(getKeyCache()),
                                 valueType)) ||
      failed(verifyCacheElements(*this, "value_cache",
                                 tensorType(getValueCache()), valueType)))
    return failure();
  if (k[0] != v[0] || k[1] != v[1] || k[2] != v[2])
    return emitOpError() << "expected key and value caches of the same slots, "
                         << "heads and context, got " << formatShape(k)
                         << " and " << formatShape(v);
  if (ShapedType::isDynamic(q[1]) || k[1] == 0 || q[1] % k[1] != 0)
    return emitOpError() << "expected query heads (" << formatShape(q[1])
                         << ") to be a static multiple of the cache's heads ("
                         << k[1] << ")";
  const int64_t keyDim = cachedHeadDim(tensorType(getKeyCache()));
  const int64_t valueDim = cachedHeadDim(tensorType(getValueCache()));
  if (extentsMismatch(q[3], keyDim))
    return emitOpError() << "expected 'query' and 'key_cache' head dims to "
                         << "match, got " << formatShape(q[3]) << " and "
                         << keyDim;
  if (extentsMismatch(q[0], shapeOf(getSlots())[0]) ||
      extentsMismatch(q[0], shapeOf(getLengths())[0]))
    return emitOpError() << "expected one slot and one length per query row";
  if (std::optional<int64_t> window = getWindow(); window && *window <= 0)
    return emitOpError() << "expected 'window' > 0, got " << *window;
  if (std::optional<int64_t> sinks = getSinks()) {
    if (*sinks < 0)
      return emitOpError() << "expected 'sinks' >= 0, got " << *sinks;
    if (!getWindow())
      return emitOpError() << "'sinks' requires 'window'";
  }
  if (failed(verifyRing(*this, getRingKept(), getRingContext(), k[2])) ||
      failed(verifyPaging(*this, getSlots(), getBlockSize(), k[2],
                          getRingKept().has_value())))
    return failure();
  if (getBlockSize() && getGlobalTopk())
    return emitOpError() << "global blocks need a contiguous cache, not a "
                         << "paged one";
  if (failed(verifyGlobalBlocks(*this, getGlobalTopk(), getGlobalBlock(),
                                getWindow().has_value(), /*causal=*/true)))
    return failure();
  if (getGlobalTopk() && getRingKept())
    return emitOpError() << "global blocks need the whole cache, not a ring";
  if (std::optional<int64_t> kept = getRingKept()) {
    std::optional<int64_t> window = getWindow();
    if (!window)
      return emitOpError() << "a ring cache requires 'window'";
    if (getSinks().value_or(0) > *kept)
      return emitOpError() << "expected 'sinks' <= ring_kept (" << *kept
                           << ")";
    const int64_t newRows = ShapedType::isDynamic(q[2]) ? 1 : q[2];
    // Without forming newRows + window, which a huge window overflows.
    if (*window > k[2] - *kept || newRows - 1 > k[2] - *kept - *window)
      return emitOpError() << "a ring of " << k[2] - *kept
                           << " rows cannot hold a window of " << *window
                           << " and " << newRows << " new rows";
  }
  return verifyResultShape(*this, {q[0], q[1], q[2], valueDim}, getResult());
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::verify() {
  ArrayRef<int64_t> data = shapeOf(getData());
  FailureOr<int64_t> axis = verifyAxis(*this, "axis", getAxis(), data.size());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> expected(data.take_front(*axis));
  llvm::append_range(expected, shapeOf(getIndices()));
  llvm::append_range(expected, data.drop_front(*axis + 1));
  return verifyResultShape(*this, expected, getResult());
}

// The window attributes of conv and pool over D spatial dims: strides and
// dilations >= 1, pads >= 0 (2 D of them), kernel >= 1.
static LogicalResult verifyWindow(Operation *op, int64_t spatial,
                                  ArrayRef<int64_t> kernel,
                                  ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> dilations,
                                  ArrayRef<int64_t> pads,
                                  bool negativePads = false) {
  auto check = [&](StringRef name, ArrayRef<int64_t> v, int64_t size,
                   int64_t least) -> LogicalResult {
    if (static_cast<int64_t>(v.size()) != size)
      return op->emitOpError() << "expected " << size << " '" << name
                               << "' for " << spatial << " spatial dims, got "
                               << v.size();
    // Bounded so that the extent arithmetic cannot overflow.
    constexpr int64_t kMost = int64_t{1} << 30;
    for (int64_t x : v)
      if (x < std::max(least, -kMost) || x > kMost)
        return op->emitOpError() << "expected '" << name << "' in ["
                                 << std::max(least, -kMost) << ", " << kMost
                                 << "], got " << x;
    return success();
  };
  if (spatial < 1)
    return op->emitOpError() << "expected an input [N, C, spatial...]";
  if (failed(check("kernel", kernel, spatial, 1)) ||
      failed(check("strides", strides, spatial, 1)) ||
      failed(check("dilations", dilations, spatial, 1)) ||
      failed(check("pads", pads, 2 * spatial,
                   negativePads ? std::numeric_limits<int64_t>::min() : 0)))
    return failure();
  return success();
}

// [N, C, O...] over input [N, _, S...] with |channels| output channels.
static SmallVector<int64_t>
windowResultShape(ArrayRef<int64_t> in, int64_t channels,
                  ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> dilations, ArrayRef<int64_t> pads,
                  bool ceil) {
  const int64_t spatial = in.size() - 2;
  SmallVector<int64_t> shape{in[0], channels};
  for (int64_t d = 0; d < spatial; ++d)
    shape.push_back(windowExtent(in[d + 2], kernel[d], strides[d],
                                 dilations[d], pads[d], pads[spatial + d],
                                 ceil));
  return shape;
}

LogicalResult ConvOp::verify() {
  ArrayRef<int64_t> inShape = shapeOf(getInput()), wShape = shapeOf(getWeight());
  const int64_t spatial = static_cast<int64_t>(inShape.size()) - 2;
  if (wShape.size() != inShape.size())
    return emitOpError() << "expected a weight of rank " << inShape.size()
                         << ", got " << formatShape(wShape);
  // channels_last ([N, S..., C], [K..., C, M]) is checked in the NCHW
  // spelling: input [N, C, S...], weight [M, C, K...].
  SmallVector<int64_t> in(inShape), w(wShape);
  const bool channelsLast = getChannelsLast();
  if (channelsLast && spatial >= 1) {
    if (getGroup() != 1 || getInputDilations() ||
        llvm::any_of(getPads(), [](int64_t p) { return p < 0; }))
      return emitOpError()
             << "expected one group, no input dilations and no negative "
                "pads with 'channels_last'";
    const int64_t rank = in.size();
    in = {inShape[0], inShape[rank - 1]};
    llvm::append_range(in, inShape.slice(1, spatial));
    w = {wShape[rank - 1], wShape[rank - 2]};
    llvm::append_range(w, wShape.take_front(spatial));
  }
  if (spatial < 1)
    return emitOpError() << "expected an input of rank >= 3, got "
                         << formatShape(inShape);
  if (llvm::any_of(ArrayRef<int64_t>(w).drop_front(2), ShapedType::isDynamic) ||
      ShapedType::isDynamic(w[0]) || ShapedType::isDynamic(w[1]))
    return emitOpError() << "expected a static weight, got " << formatShape(w);
  if (failed(verifyWindow(*this, spatial, ArrayRef<int64_t>(w).drop_front(2),
                          getStrides(), getDilations(), getPads(),
                          /*negativePads=*/true)))
    return failure();
  SmallVector<int64_t> dilated(in);
  if (std::optional<ArrayRef<int64_t>> id = getInputDilations()) {
    if (static_cast<int64_t>(id->size()) != spatial ||
        llvm::any_of(*id, [](int64_t x) { return x < 1; }))
      return emitOpError() << "expected " << spatial
                           << " 'input_dilations' >= 1";
    for (int64_t d = 0; d < spatial; ++d)
      if (!ShapedType::isDynamic(in[d + 2]))
        dilated[d + 2] = in[d + 2] == 0 ? 0 : (in[d + 2] - 1) * (*id)[d] + 1;
  }
  const int64_t group = getGroup();
  if (group < 1 || w[0] % group != 0)
    return emitOpError() << "'group' " << group << " must divide the "
                         << w[0] << " output channels";
  if (!ShapedType::isDynamic(in[1]) && in[1] != w[1] * group)
    return emitOpError() << "expected " << w[1] * group
                         << " input channels (weight [M, C / group, ...] with "
                         << "group " << group << "), got " << in[1];
  if (getBias() && shapeOf(getBias()) != ArrayRef<int64_t>{w[0]})
    return emitOpError() << "expected a bias of shape [" << w[0] << "], got "
                         << formatShape(shapeOf(getBias()));
  SmallVector<int64_t> expected =
      windowResultShape(dilated, w[0], ArrayRef<int64_t>(w).drop_front(2),
                        getStrides(), getDilations(), getPads(), false);
  if (llvm::any_of(expected, [](int64_t e) { return e < 0 && !ShapedType::isDynamic(e); }))
    return emitOpError() << "the kernel does not fit the padded input "
                         << formatShape(inShape);
  if (channelsLast)
    std::rotate(expected.begin() + 1, expected.begin() + 2, expected.end());
  return verifyResultShape(*this, expected, getResult());
}

LogicalResult PoolOp::verify() {
  ArrayRef<int64_t> inShape = shapeOf(getInput());
  const int64_t spatial = static_cast<int64_t>(inShape.size()) - 2;
  // channels_last ([N, S..., C]) is checked in the NCHW spelling.
  SmallVector<int64_t> in(inShape);
  if (getChannelsLast() && spatial >= 1) {
    in = {inShape[0], inShape.back()};
    llvm::append_range(in, inShape.slice(1, spatial));
  }
  if (getKind() != "max" && getKind() != "avg" && getKind() != "lp")
    return emitOpError() << "expected 'kind' max, avg or lp, got '"
                         << getKind() << "'";
  if (getP() < 1)
    return emitOpError() << "expected 'p' >= 1, got " << getP();
  if (failed(verifyWindow(*this, spatial, getKernel(), getStrides(),
                          getDilations(), getPads())))
    return failure();
  SmallVector<int64_t> expected =
      windowResultShape(in, in[1], getKernel(), getStrides(), getDilations(),
                        getPads(), getCeilMode());
  if (llvm::any_of(expected, [](int64_t e) { return e < 0 && !ShapedType::isDynamic(e); }))
    return emitOpError() << "the window does not fit the padded input "
                         << formatShape(inShape);
  if (getChannelsLast())
    std::rotate(expected.begin() + 1, expected.begin() + 2, expected.end());
  return verifyResultShape(*this, expected, getResult());
}

LogicalResult PadOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  ArrayRef<int64_t> pads = getPads();
  const int64_t rank = in.size();
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return emitOpError() << "expected " << 2 * rank << " 'pads', got "
                         << pads.size();
  StringRef mode = getMode();
  if (mode != "constant" && mode != "reflect" && mode != "edge" &&
      mode != "wrap")
    return emitOpError() << "expected 'mode' constant, reflect, edge or "
                            "wrap, got '" << mode << "'";
  if (getValue() && !shapeOf(getValue()).empty())
    return emitOpError() << "expected a 0-D 'value'";
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < rank; ++d) {
    if (ShapedType::isDynamic(in[d])) {
      expected.push_back(ShapedType::kDynamic);
      continue;
    }
    const int64_t size = in[d] + pads[d] + pads[rank + d];
    if (size < 0)
      return emitOpError() << "the pads of dim " << d << " remove more than its "
                           << in[d] << " elements";
    if (mode != "constant" && size > 0 && in[d] == 0)
      return emitOpError() << "mode '" << mode << "' cannot pad the empty dim "
                           << d;
    expected.push_back(size);
  }
  return verifyResultShape(*this, expected, getResult());
}

LogicalResult GatherElementsOp::verify() {
  ArrayRef<int64_t> data = shapeOf(getData()), indices = shapeOf(getIndices());
  FailureOr<int64_t> axis = verifyAxis(*this, "axis", getAxis(), data.size());
  if (failed(axis))
    return failure();
  if (indices.size() != data.size())
    return emitOpError() << "expected 'indices' of rank " << data.size()
                         << ", got " << formatShape(indices);
  for (size_t d = 0; d < data.size(); ++d)
    if (static_cast<int64_t>(d) != *axis && !ShapedType::isDynamic(data[d]) &&
        !ShapedType::isDynamic(indices[d]) && indices[d] > data[d])
      return emitOpError() << "'indices' dim " << d << " (" << indices[d]
                           << ") exceeds the data's (" << data[d] << ")";
  return verifyResultShape(*this, indices, getResult());
}

// Static extents that differ (dynamic ones are checked at run time).
static bool extentsConflict(int64_t a, int64_t b) {
  return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
}

static LogicalResult verifyReduction(Operation *op, StringRef reduction) {
  if (reduction == "none" || reduction == "add" || reduction == "mul" ||
      reduction == "max" || reduction == "min")
    return success();
  return op->emitOpError() << "unknown reduction '" << reduction
                           << "' (expected none, add, mul, max or min)";
}

// The tuple width K of |indices| ([..., K], K static and in [1, |limit|]).
static FailureOr<int64_t> verifyTupleWidth(Operation *op,
                                           ArrayRef<int64_t> indices,
                                           int64_t limit) {
  if (indices.empty() || ShapedType::isDynamic(indices.back()) ||
      indices.back() < 1 || indices.back() > limit)
    return op->emitOpError()
           << "expected 'indices' with a static last dim in [1, " << limit
           << "], got " << formatShape(indices);
  return indices.back();
}

LogicalResult GatherNDOp::verify() {
  ArrayRef<int64_t> data = shapeOf(getData()), indices = shapeOf(getIndices());
  const int64_t batch = getBatchDims();
  const int64_t r = data.size(), q = indices.size();
  if (batch < 0 || batch >= std::min(r, q))
    return emitOpError() << "'batch_dims' " << batch
                         << " must be below the ranks of 'data' and 'indices'";
  FailureOr<int64_t> k = verifyTupleWidth(*this, indices, r - batch);
  if (failed(k))
    return failure();
  for (int64_t d = 0; d < batch; ++d)
    if (extentsConflict(data[d], indices[d]))
      return emitOpError() << "batch dim " << d << " differs: " << data[d]
                           << " vs " << indices[d];
  SmallVector<int64_t> expected(indices.drop_back());
  llvm::append_range(expected, data.drop_front(batch + *k));
  return verifyResultShape(*this, expected, getResult());
}

LogicalResult ScatterElementsOp::verify() {
  ArrayRef<int64_t> data = shapeOf(getData()), indices = shapeOf(getIndices()),
                    updates = shapeOf(getUpdates());
  if (failed(verifyReduction(*this, getReduction())))
    return failure();
  FailureOr<int64_t> axis = verifyAxis(*this, "axis", getAxis(), data.size());
  if (failed(axis))
    return failure();
  if (indices.size() != data.size() || !isCompatibleShape(indices, updates))
    return emitOpError() << "expected 'indices' and 'updates' of one shape of "
                         << "rank " << data.size() << ", got "
                         << formatShape(indices) << " and "
                         << formatShape(updates);
  for (size_t d = 0; d < data.size(); ++d)
    if (static_cast<int64_t>(d) != *axis && !ShapedType::isDynamic(data[d]) &&
        !ShapedType::isDynamic(indices[d]) && indices[d] > data[d])
      return emitOpError() << "'indices' dim " << d << " (" << indices[d]
                           << ") exceeds the data's (" << data[d] << ")";
  return success();
}

LogicalResult ScatterNDOp::verify() {
  ArrayRef<int64_t> data = shapeOf(getData()), indices = shapeOf(getIndices()),
                    updates = shapeOf(getUpdates());
  if (failed(verifyReduction(*this, getReduction())))
    return failure();
  FailureOr<int64_t> k = verifyTupleWidth(*this, indices, data.size());
  if (failed(k))
    return failure();
  SmallVector<int64_t> expected(indices.drop_back());
  llvm::append_range(expected, data.drop_front(*k));
  if (!isCompatibleShape(expected, updates))
    return emitOpError() << "expected 'updates' of shape "
                         << formatShape(expected) << ", got "
                         << formatShape(updates);
  return success();
}

LogicalResult TopKOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  FailureOr<int64_t> axis = verifyAxis(*this, "axis", getAxis(), in.size());
  if (failed(axis))
    return failure();
  if (getK() < 0 ||
      (!ShapedType::isDynamic(in[*axis]) && getK() > in[*axis]))
    return emitOpError() << "'k' " << getK() << " must lie in [0, "
                         << in[*axis] << "], the extent of the axis";
  SmallVector<int64_t> expected(in);
  expected[*axis] = getK();
  if (!isCompatibleShape(expected, shapeOf(getIndices())))
    return emitOpError() << "expected indices of shape "
                         << formatShape(expected) << ", got "
                         << formatShape(shapeOf(getIndices()));
  return verifyResultShape(*this, expected, getValues());
}

LogicalResult EinsumOp::verify() {
  EinsumEquation eq;
  std::string error;
  if (!parseEinsumEquation(getEquation(), eq, error))
    return emitOpError() << "invalid equation '" << getEquation()
                         << "': " << error;
  if (eq.operands.size() != getInputs().size())
    return emitOpError() << "equation names " << eq.operands.size()
                         << " operands, got " << getInputs().size();
  Type element = getResult().getType().getElementType();
  llvm::StringMap<int64_t> extents; // the largest static extent seen
  for (auto [letters, input] : llvm::zip(eq.operands, getInputs())) {
    auto type = tensorType(input);
    if (type.getElementType() != element)
      return emitOpError() << "expected operands of the result's element type";
    if (static_cast<int64_t>(letters.size()) != type.getRank())
      return emitOpError() << "equation operand '" << letters << "' names "
                           << letters.size() << " dims, the operand has "
                           << type.getRank();
    for (auto [c, extent] : llvm::zip(letters, type.getShape())) {
      if (ShapedType::isDynamic(extent) || extent == 1)
        continue;
      int64_t &seen = extents[StringRef(&c, 1)];
      if (seen > 1 && seen != extent)
        return emitOpError() << "dim '" << c << "' has extents " << seen
                             << " and " << extent;
      seen = extent;
    }
  }
  auto out = cast<RankedTensorType>(getResult().getType());
  if (static_cast<int64_t>(eq.result.size()) != out.getRank())
    return emitOpError() << "equation result names " << eq.result.size()
                         << " dims, the result has " << out.getRank();
  for (auto [c, extent] : llvm::zip(eq.result, out.getShape())) {
    auto it = extents.find(StringRef(&c, 1));
    if (it != extents.end() && extentsConflict(it->second, extent))
      return emitOpError() << "result dim '" << c << "' is " << extent
                           << ", the operands give " << it->second;
  }
  return success();
}

LogicalResult QuantizedGatherOp::verify() {
  ArrayRef<int64_t> table = shapeOf(getTable()), scales = shapeOf(getScales());
  ArrayRef<int64_t> indices = shapeOf(getIndices()),
                    out = shapeOf(getResult());
  if (getBits() != 8 && getBits() != 4)
    return emitOpError() << "expected 'bits' 8 or 4, got " << getBits();
  if (getGroupSize() < 1)
    return emitOpError() << "expected 'group_size' >= 1, got "
                         << getGroupSize();
  if (table.size() != 2 || ShapedType::isDynamicShape(table))
    return emitOpError() << "expected a static 2-D 'table'";
  if (out.size() != indices.size() + 1 || ShapedType::isDynamic(out.back()))
    return emitOpError() << "expected a result of rank " << indices.size() + 1
                         << " with a static last dim (the row width), got "
                         << formatShape(out);
  const int64_t width = out.back();
  const int64_t bytes = getBits() == 8 ? width : (width + 1) / 2;
  if (table[1] != bytes)
    return emitOpError() << "expected 'table' rows of " << bytes
                         << " bytes for " << width << " columns of "
                         << getBits() << " bits, got " << table[1];
  const int64_t groups = (width + getGroupSize() - 1) / getGroupSize();
  if (scales.size() != 2 || scales[0] != table[0] || scales[1] != groups)
    return emitOpError() << "expected 'scales' of shape " << table[0] << "x"
                         << groups << ", got " << formatShape(scales);
  SmallVector<int64_t> expected(indices);
  expected.push_back(width);
  return verifyResultShape(*this, expected, getResult());
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = tensorType(getInput()), out = tensorType(getResult());
  if (Value shape = getShape()) {
    std::optional<int64_t> n = staticLength(shape);
    if (n && *n != out.getRank())
      return emitOpError() << "expected 'shape' with " << out.getRank()
                           << " entries, got " << *n;
  } else if (!out.hasStaticShape()) {
    return emitOpError()
           << "expected a 'shape' operand when the result has dynamic dims";
  }
  std::optional<int64_t> inCount = staticElementCount(in.getShape());
  std::optional<int64_t> outCount = staticElementCount(out.getShape());
  if (inCount && outCount && *inCount != *outCount)
    return emitOpError() << "expected the same number of elements, got "
                         << *inCount << " in and " << *outCount << " out";
  return success();
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  ArrayRef<int64_t> perm = getPermutation();
  if (perm.size() != in.size())
    return emitOpError() << "expected 'permutation' of size " << in.size()
                         << ", got " << perm.size();
  SmallVector<bool> seen(in.size(), false);
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)in.size() || seen[p])
      return emitOpError() << "'permutation' is not a permutation of [0, "
                           << in.size() << ")";
    seen[p] = true;
    expected.push_back(in[p]);
  }
  return verifyResultShape(*this, expected, getResult());
}

LogicalResult ConcatOp::verify() {
  // SameOperandsElementType already guarantees at least one input.
  ArrayRef<int64_t> first = shapeOf(getInputs()[0]);
  FailureOr<int64_t> axis = verifyAxis(*this, "axis", getAxis(), first.size());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> expected(first);
  for (auto [i, input] : llvm::enumerate(getInputs().drop_front())) {
    ArrayRef<int64_t> shape = shapeOf(input);
    if (shape.size() != first.size())
      return emitOpError() << "expected every input to have rank "
                           << first.size() << ", input " << i + 1
                           << " has rank " << shape.size();
    for (auto [d, extent] : llvm::enumerate(shape)) {
      if ((int64_t)d == *axis) {
        expected[d] = ShapedType::isDynamic(extent) ||
                              ShapedType::isDynamic(expected[d])
                          ? ShapedType::kDynamic
                          : expected[d] + extent;
      } else if (!isCompatibleShape({expected[d]}, {extent})) {
        return emitOpError() << "input " << i + 1 << " has shape "
                             << formatShape(shape) << ", incompatible with "
                             << formatShape(first) << " outside axis "
                             << *axis;
      } else if (ShapedType::isDynamic(expected[d])) {
        expected[d] = extent;
      }
    }
  }
  return verifyResultShape(*this, expected, getResult());
}

LogicalResult SliceOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), out = shapeOf(getResult());
  ArrayRef<int64_t> axes = getAxes();
  SmallVector<int64_t> normalized;
  for (int64_t axis : axes) {
    FailureOr<int64_t> n = verifyAxis(*this, "axes", axis, in.size());
    if (failed(n))
      return failure();
    if (llvm::is_contained(normalized, *n))
      return emitOpError() << "axis " << axis << " appears twice in 'axes'";
    normalized.push_back(*n);
  }
  for (auto [name, v] : {std::pair<StringRef, Value>{"starts", getStarts()},
                         {"ends", getEnds()},
                         {"steps", getSteps()}}) {
    std::optional<int64_t> n = staticLength(v);
    if (n && *n != (int64_t)axes.size())
      return emitOpError() << "expected '" << name << "' with " << axes.size()
                           << " entries, got " << *n;
  }
  if (out.size() != in.size())
    return emitOpError() << "expected result rank " << in.size() << ", got "
                         << out.size();
  for (auto [d, extent] : llvm::enumerate(in)) {
    if (llvm::is_contained(normalized, (int64_t)d))
      continue;
    if (!isCompatibleShape({extent}, {out[d]}))
      return emitOpError() << "expected unsliced dim " << d << " to stay "
                           << formatShape(extent) << ", got "
                           << formatShape(out[d]);
  }
  return success();
}

LogicalResult SplitOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput());
  FailureOr<int64_t> axis = verifyAxis(*this, "axis", getAxis(), in.size());
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> sizes = getSizes();
  if (sizes.size() != getNumResults())
    return emitOpError() << "expected " << getNumResults()
                         << " entries in 'sizes' (one per result), got "
                         << sizes.size();
  int64_t total = 0;
  for (auto [size, result] : llvm::zip_equal(sizes, getResults())) {
    if (size < 0)
      return emitOpError() << "expected non-negative 'sizes', got " << size;
    if (llvm::AddOverflow(total, size, total))
      return emitOpError() << "expected 'sizes' to sum within int64";
    SmallVector<int64_t> expected(in);
    expected[*axis] = size;
    if (failed(verifyResultShape(*this, expected, result)))
      return failure();
  }
  if (!ShapedType::isDynamic(in[*axis]) && total != in[*axis])
    return emitOpError() << "expected 'sizes' to sum to " << in[*axis]
                         << ", got " << total;
  return success();
}

LogicalResult ExpandOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), out = shapeOf(getResult());
  std::optional<int64_t> n = staticLength(getShape());
  int64_t expectedRank = n ? std::max<int64_t>(*n, in.size()) : out.size();
  if ((int64_t)out.size() != expectedRank)
    return emitOpError() << "expected result rank " << expectedRank << ", got "
                         << out.size();
  if (!isBroadcastableTo(in, out))
    return emitOpError() << "input shape " << formatShape(in)
                         << " does not broadcast to result shape "
                         << formatShape(out);
  return success();
}

LogicalResult TileOp::verify() {
  ArrayRef<int64_t> in = shapeOf(getInput()), out = shapeOf(getResult());
  if (in.size() != out.size())
    return emitOpError() << "expected result rank " << in.size() << ", got "
                         << out.size();
  std::optional<int64_t> n = staticLength(getRepeats());
  if (n && *n != (int64_t)in.size())
    return emitOpError() << "expected 'repeats' with " << in.size()
                         << " entries, got " << *n;
  return success();
}

LogicalResult TriluOp::verify() {
  if (tensorType(getInput()).getRank() < 2)
    return emitOpError() << "expected 'input' of rank >= 2, got rank "
                         << tensorType(getInput()).getRank();
  return success();
}

//===----------------------------------------------------------------------===//
// Shape computation
//===----------------------------------------------------------------------===//

// ONNX Shape clamps start/end into [0, rank] after adding rank to negatives.
static int64_t clampShapeBound(int64_t bound, int64_t rank) {
  if (bound < 0)
    bound += rank;
  return std::clamp<int64_t>(bound, 0, rank);
}

LogicalResult ShapeOp::verify() {
  int64_t rank = tensorType(getInput()).getRank();
  int64_t start = clampShapeBound(getStart(), rank);
  int64_t end = clampShapeBound(getEnd().value_or(rank), rank);
  int64_t expected = std::max<int64_t>(end - start, 0);
  int64_t actual = shapeOf(getResult())[0];
  if (!ShapedType::isDynamic(actual) && actual != expected)
    return emitOpError() << "expected a result with " << expected
                         << " entries, got " << actual;
  return success();
}

LogicalResult ConstantOfShapeOp::verify() {
  RankedTensorType out = tensorType(getResult());
  Type valueType = getValue().getType();
  if (valueType != out.getElementType())
    return emitOpError() << "expected 'value' of type " << out.getElementType()
                         << ", got " << valueType;
  std::optional<int64_t> n = staticLength(getShape());
  if (n && *n != out.getRank())
    return emitOpError() << "expected 'shape' with " << out.getRank()
                         << " entries, got " << *n;
  return success();
}

} // namespace strata::ir

#define GET_OP_CLASSES
#include "dialects/strata/IR/StrataOps.cpp.inc"
